//! pktgen on DPDK ports: a `Link` for setup, verification and latency, and a
//! replay loop of pre-built mbufs for line-rate generation.

use crate::link::{Link, Rx};
use prism_dataplane::dpdk::{DpdkError, Eal, Mbuf, Mempool, Port, Replayer};
use std::io;
use std::time::{Duration, Instant};

/// DPDK ports as a pktgen link: port i of the link is the i-th device named.
pub struct DpdkLink {
    ports: Vec<Port>,
    rx_queues: u16,
    tx_queues: u16,
    /// Sends that found the TX queue full and waited for room (backpressure).
    pub tx_full_waits: u64,
    /// How long a send may wait for room in a full TX queue.
    pub tx_full_timeout: Duration,
    pool: Mempool,
    rx: Vec<Mbuf>,
    tx: Vec<Mbuf>,
    pending: std::collections::VecDeque<Rx>,
    /// Buffers of frames read and given back (`recycle`), filled again by
    /// `poll_rx`: a fresh 1.5 kB allocation a frame and its free were a
    /// sixth of the AM loop's time on memif.
    spare: Vec<Vec<u8>>,
    _eal: Eal,
}

impl DpdkLink {
    /// Initialises EAL with `eal_args` and starts the named devices (one TX queue).
    pub fn open(eal_args: &[String], devices: &[String], mtu: u16) -> Result<DpdkLink, DpdkError> {
        Self::open_with(eal_args, devices, mtu, 1)
    }

    /// As `open`, with `tx_queues` TX queues on every port (one per generating core).
    pub fn open_with(eal_args: &[String], devices: &[String], mtu: u16, tx_queues: u16) -> Result<DpdkLink, DpdkError> {
        Self::open_waiting(eal_args, devices, mtu, tx_queues, LINK_UP_TIMEOUT)
    }

    /// As `open_with`, waiting up to `link_timeout` for every port's link
    /// (a NIC's autonegotiation, a memif client's connection to its server).
    pub fn open_waiting(eal_args: &[String], devices: &[String], mtu: u16, tx_queues: u16, link_timeout: Duration) -> Result<DpdkLink, DpdkError> {
        Self::open_queues(eal_args, devices, mtu, 1, tx_queues, link_timeout)
    }

    /// As `open_waiting`, with `rx_queues` RX queues on every port, all
    /// polled: a switch with several polling cores answers each operation
    /// from its owner's TX queue, which on net_memif is the client's RX
    /// queue of the same number (and a memif server refuses a client with
    /// more queues than it has, so the count is the user's to give).
    pub fn open_queues(eal_args: &[String], devices: &[String], mtu: u16, rx_queues: u16, tx_queues: u16, link_timeout: Duration) -> Result<DpdkLink, DpdkError> {
        let eal = Eal::init(eal_args)?;
        let pool = Mempool::new(&eal, "pktgen", 16383, 256, (mtu as u32 + 14 + 256).max(2176) as u16)?;
        let mut ports = Vec::new();
        for d in devices {
            let p = Port::by_name(&eal, d)?;
            p.start(&pool, rx_queues.max(1), tx_queues.max(1), 1024, mtu).map_err(|e| DpdkError::Device { device: d.clone(), source: Box::new(e) })?;
            ports.push(p);
        }
        // All ports started first, then waited for together: their links come up in parallel.
        for p in &ports {
            p.wait_link_up(link_timeout)?;
        }
        Ok(DpdkLink {
            ports,
            rx_queues: rx_queues.max(1),
            tx_queues: tx_queues.max(1),
            tx_full_waits: 0,
            tx_full_timeout: TX_FULL_TIMEOUT,
            pool,
            rx: Vec::with_capacity(64),
            tx: Vec::with_capacity(1),
            pending: Default::default(),
            spare: Vec::new(),
            _eal: eal,
        })
    }

    pub fn pool(&self) -> &Mempool {
        &self.pool
    }

    pub fn eal(&self) -> &Eal {
        &self._eal
    }

    pub fn port(&self, i: usize) -> Option<Port> {
        self.ports.get(i).copied()
    }

    /// The TX queue a frame leaves on: with one queue a switch core, each
    /// operation's queue is its owner's (`operation_owner`), which on
    /// net_memif is the switch's RX queue of the same number, polled by
    /// that core: the sender steers, and no frame crosses cores in the switch.
    fn tx_queue_of(&self, frame: &[u8]) -> u16 {
        prism_dataplane::switch::operation_owner(frame, self.tx_queues as usize).map_or(0, |q| q as u16)
    }

    /// One RX burst from every port into `pending`.
    fn poll_rx(&mut self) {
        for (i, p) in self.ports.iter().enumerate() {
            for q in 0..self.rx_queues {
                self.rx.clear();
                p.rx_burst(q, &mut self.rx, 32);
                let at = Instant::now();
                for m in self.rx.drain(..) {
                    let mut frame = self.spare.pop().unwrap_or_default();
                    frame.clear();
                    frame.extend_from_slice(m.data());
                    self.pending.push_back(Rx { port: i as u16, frame, at });
                }
            }
        }
    }
}

impl Drop for DpdkLink {
    fn drop(&mut self) {
        for p in &self.ports {
            p.stop();
        }
    }
}

/// How long `open` waits for a port's link by default.
pub const LINK_UP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a send waits for room in a full TX queue before it fails.
pub const TX_FULL_TIMEOUT: Duration = Duration::from_secs(2);

impl Link for DpdkLink {
    /// A full TX queue is backpressure, not an error: the frame is offered
    /// again until the device takes it, for up to `tx_full_timeout`, while
    /// what arrives meanwhile is kept for `recv` (a peer that cannot send
    /// either would otherwise never drain our queue).
    fn send(&mut self, port: u16, frame: &[u8]) -> io::Result<()> {
        let p = *self.ports.get(port as usize).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("no DPDK port {port}")))?;
        let mut waited: Option<Instant> = None;
        loop {
            let m = self.pool.frame(frame).ok_or_else(|| io::Error::new(io::ErrorKind::OutOfMemory, "mbuf pool exhausted"))?;
            let q = self.tx_queue_of(frame);
            self.tx.clear();
            self.tx.push(m);
            if p.tx_burst(q, &mut self.tx) == 1 {
                return Ok(());
            }
            let since = *waited.get_or_insert_with(|| {
                self.tx_full_waits += 1;
                Instant::now()
            });
            if since.elapsed() >= self.tx_full_timeout {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("TX queue of port {port} ({}) still full after {} ms: is the link up and the peer receiving?", p.name(), self.tx_full_timeout.as_millis()),
                ));
            }
            self.poll_rx();
            std::thread::sleep(Duration::from_micros(20));
        }
    }

    fn recv(&mut self, timeout: Duration) -> io::Result<Option<Rx>> {
        if let Some(r) = self.pending.pop_front() {
            return Ok(Some(r));
        }
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Ok(Some(r));
            }
            self.poll_rx();
            if self.pending.is_empty() && Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    fn tx_full_waits(&self) -> u64 {
        self.tx_full_waits
    }

    fn recycle(&mut self, frame: Vec<u8>) {
        // As many as a few bursts: more would be memory the loop never reads again.
        if self.spare.len() < 256 {
            self.spare.push(frame);
        }
    }

    fn describe(&self) -> String {
        format!("DPDK ports {}", self.ports.iter().map(|p| p.name()).collect::<Vec<_>>().join(", "))
    }
}

/// What a replay achieved.
#[derive(Debug, Clone, Copy)]
pub struct ReplayRate {
    pub packets: u64,
    pub seconds: f64,
    pub pps: f64,
    pub gbps: f64,
}

/// Why `replay` could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("no frames to replay")]
    NoFrames,
    #[error("mbuf pool too small for the pre-built frames")]
    PoolTooSmall,
    #[error("replay thread panicked")]
    Panicked,
}

/// Sends the pre-built `frames` round and round on `port`/`queue` for `duration`,
/// `burst` at a time, at most `rate_pps` (None: as fast as the device takes them).
/// Each frame is copied into an mbuf once; sending one is a reference-count
/// increment (in the C shim, next to the burst), so the loop's cost is mostly the PMD's.
pub fn replay(pool: &Mempool, port: Port, queue: u16, frames: &[Vec<u8>], duration: Duration, burst: usize, rate_pps: Option<f64>) -> Result<ReplayRate, ReplayError> {
    if frames.is_empty() {
        return Err(ReplayError::NoFrames);
    }
    let mut r = Replayer::new(pool, frames).ok_or(ReplayError::PoolTooSmall)?;
    let bytes_per: f64 = frames.iter().map(|f| f.len() as f64 + 24.0).sum::<f64>() / frames.len() as f64;
    let burst = burst.clamp(1, 64);
    let mut sent = 0u64;
    let start = Instant::now();
    let mut loops = 0u32;
    loop {
        // The clock is read every 64 bursts: cheap enough, fine enough.
        loops = loops.wrapping_add(1);
        if loops.is_multiple_of(64) || rate_pps.is_some() {
            let t = start.elapsed();
            if t >= duration {
                break;
            }
            if let Some(pps) = rate_pps {
                if sent as f64 > t.as_secs_f64() * pps {
                    continue;
                }
            }
        }
        sent += r.send(port, queue, burst) as u64;
    }
    let seconds = start.elapsed().as_secs_f64();
    let pps = sent as f64 / seconds;
    Ok(ReplayRate { packets: sent, seconds, pps, gbps: pps * bytes_per * 8.0 / 1e9 })
}

/// `replay` on `cores` threads at once, each pinned to its own CPU, registered
/// as an lcore, and sending its share of the frames on its own TX queue.
#[allow(clippy::too_many_arguments)]
pub fn replay_cores(link: &DpdkLink, port: Port, frames: &[Vec<u8>], duration: Duration, burst: usize, rate_pps: Option<f64>, cores: usize) -> Result<ReplayRate, ReplayError> {
    let cores = cores.max(1);
    let ids = prism_dataplane::dpdk::online_cpus();
    let share = frames.len().div_ceil(cores);
    let (pool, eal) = (link.pool(), link.eal());
    let results: Vec<Result<ReplayRate, ReplayError>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..cores)
            .map(|c| {
                let mine = &frames[(c * share).min(frames.len())..((c + 1) * share).min(frames.len())];
                let pin = ids.get(c % ids.len().max(1)).copied();
                let per_core_rate = rate_pps.map(|r| r / cores as f64);
                s.spawn(move || {
                    if let Some(p) = pin {
                        core_affinity::set_for_current(p);
                    }
                    let _lcore = prism_dataplane::dpdk::LcoreGuard::register(eal);
                    replay(pool, port, c as u16, mine, duration, burst, per_core_rate)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or(Err(ReplayError::Panicked))).collect()
    });
    let mut total = ReplayRate { packets: 0, seconds: 0.0, pps: 0.0, gbps: 0.0 };
    for r in results {
        let r = r?;
        total.packets += r.packets;
        total.seconds = total.seconds.max(r.seconds);
        total.pps += r.pps;
        total.gbps += r.gbps;
    }
    Ok(total)
}
