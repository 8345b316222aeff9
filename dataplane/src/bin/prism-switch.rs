//! prism-switch: the DPDK software PRISM switch.
//!
//! `prism-switch [EAL options] -- --config configs/NAME.toml [options]`

use clap::Parser;
use crossbeam::queue::ArrayQueue;
use prism_dataplane::dpdk::FlowRule;
use prism_dataplane::dpdk::{rdtsc, DpdkError, Eal, LcoreGuard, Mbuf, MbufSink, Mempool, Port, PortInfo};
use prism_dataplane::switch::config::SwitchConfig;
use prism_dataplane::switch::flows::{FlowDevice, FlowStats, OperationFlows, OperationKey};
use prism_dataplane::switch::impair::{ImpairSpec, Impairment, Verdict};
use prism_dataplane::switch::queues::plan_rx_queues;
use prism_dataplane::switch::residence::{class_of, Residence};
use prism_dataplane::switch::stats::{self, WorkerShare};
use prism_dataplane::switch::{signals, Action, L2Drop, SwitchCore};
use prism_dataplane::wire::Class;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The PRISM software switch on DPDK. EAL options come first, then `--`, then these.
#[derive(Parser, Debug)]
#[command(
    version,
    after_help = "Example (no NIC, no hugepages):\n  prism-switch --no-huge --no-pci -l 0 --vdev net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap -- --config configs/single-pcap.toml --idle-exit-ms 500"
)]
struct Args {
    /// Switch configuration (TOML).
    #[arg(long)]
    config: PathBuf,
    /// Seconds between rate lines (0: none).
    #[arg(long, default_value_t = 1)]
    stats_interval: u64,
    /// Exit after this many milliseconds without a received frame (0: run until SIGINT/SIGTERM).
    #[arg(long, default_value_t = 0)]
    idle_exit_ms: u64,
    /// Write the JSON stats here at exit and on SIGUSR1 (default: stdout at exit).
    #[arg(long)]
    stats_json: Option<PathBuf>,
    /// Polling cores (overrides dataplane.workers).
    #[arg(long)]
    workers: Option<usize>,
    /// RX queues per port (overrides dataplane.rx_queues; default one a worker,
    /// or all of an AF_PACKET device's qpairs).
    #[arg(long)]
    rx_queues: Option<u16>,
    /// Once every port is started and every worker polls, write this file
    /// (JSON: pid, ports with link state, workers). Tests and scripts wait
    /// for it instead of sleeping. A line `prism-switch: ready` goes to stderr too.
    #[arg(long)]
    ready_file: Option<PathBuf>,
    /// Write the residence-time histogram (HDR interval log, ns) here at exit
    /// and on SIGUSR1. Percentiles are in the stats JSON either way.
    #[arg(long)]
    residence_hlog: Option<PathBuf>,
    /// When queued frames go to the driver: `burst` (after each receive
    /// burst: fewer, larger TX bursts) or `result` (also right after a frame
    /// that completed a range: its RESULTs do not wait for the rest of the burst).
    #[arg(long, value_enum, default_value = "burst")]
    tx_flush: TxFlush,
    /// First retransmission timeout of streams with PROGRESS, in microseconds (overrides node.rto_us).
    #[arg(long)]
    rto_us: Option<u64>,
    /// Impair received frames, for recovery tests: `drop=P,dup=P,corrupt=P,reorder=P,seed=N`
    /// (corrupt cuts a frame short; reorder delivers it after the next one).
    #[arg(long)]
    impair: Option<ImpairSpec>,
    /// CPUs to pin the polling cores to, in order (default: 0, 1, ...).
    #[arg(long, value_delimiter = ',')]
    cpus: Vec<usize>,
    /// Sleep this long when a poll finds nothing (0: busy-poll; for several
    /// switches sharing a small machine's CPUs).
    #[arg(long, default_value_t = 0)]
    idle_sleep_us: u64,
    /// With several workers: `auto` asks each device for an rte_flow rule
    /// per operation (installed at its STAGE by the owning core, removed at
    /// RELEASE or ABORT) that delivers the operation's frames to its owner's
    /// RX queue; devices without flow support (every virtual one) are told
    /// apart at start, and their frames are steered between cores in
    /// software. `off`: software steering everywhere.
    #[arg(long, value_enum, default_value = "auto")]
    flow_steering: FlowSteering,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum FlowSteering {
    Auto,
    Off,
}

/// rte_flow as the operation rules' device.
struct DpdkFlows<'a> {
    ports: &'a [Port],
    mac: [u8; 6],
}

impl FlowDevice for DpdkFlows<'_> {
    type Rule = FlowRule;
    fn install(&mut self, port: usize, key: OperationKey, queue: u16) -> Result<FlowRule, String> {
        let p = self.ports.get(port).ok_or("no such port")?;
        p.steer_operation(self.mac, key, queue, false).map_err(|e| e.to_string())?.ok_or_else(|| "the device gave no rule".to_string())
    }
    fn remove(&mut self, _port: usize, rule: FlowRule) -> Result<(), String> {
        rule.destroy().map_err(|e| e.to_string())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum TxFlush {
    Burst,
    Result,
}

fn split_args() -> (Vec<String>, Vec<String>) {
    let all: Vec<String> = std::env::args().collect();
    let prog = all.first().cloned().unwrap_or_else(|| "prism-switch".into());
    match all.iter().position(|a| a == "--") {
        Some(i) => (all[..i].to_vec(), std::iter::once(prog).chain(all[i + 1..].iter().cloned()).collect()),
        // No `--`: everything is ours (so --help works without EAL).
        None => (vec![prog.clone()], all),
    }
}

/// Per-worker packet counts, by port, and the residence times.
#[derive(Clone)]
struct Stats {
    residence: Residence,
    rx: Vec<u64>,
    tx: Vec<u64>,
    tx_dropped: Vec<u64>,
    no_mbuf: u64,
    steered: u64,
    steer_dropped: u64,
    /// This core's operation rules (rte_flow) and how many are in place.
    flows: FlowStats,
    flows_live: u64,
}

/// One worker's counters as JSON (engine, Layer 2, its share of the ports).
fn worker_json(core: &SwitchCore, s: &Stats) -> Value {
    let c = &core.node.counters;
    let streams = core.node.stream_stats();
    let named = |names: &mut dyn Iterator<Item = (&'static str, u64)>| -> Value {
        let mut m = Map::new();
        for (k, v) in names {
            m.insert(k.into(), json!(v));
        }
        Value::Object(m)
    };
    json!({
        "ports": s.rx.iter().zip(&s.tx).zip(&s.tx_dropped).map(|((rx, tx), d)| json!({"rx": rx, "tx": tx, "tx_dropped": d})).collect::<Vec<_>>(),
        "engine": c,
        "streams": {
            "sent": streams.sent,
            "retransmitted": streams.retransmitted,
            "acked": streams.acked,
            "refused": streams.refused,
            "timeouts": streams.timeouts,
        },
        "l2": {
            "forwarded": core.l2.forwarded,
            "flooded": core.l2.flooded,
            "dropped": named(&mut L2Drop::ALL.iter().map(|d| (d.name(), core.l2.dropped[*d as usize]))),
        },
        "no_mbuf": s.no_mbuf,
        "steered_to_other_core": s.steered,
        "steer_dropped": s.steer_dropped,
        "flow_rules": {"installed": s.flows.installed, "failed": s.flows.failed, "removed": s.flows.removed, "live": s.flows_live},
    })
}

/// Adds `b` into `a`: numbers add, objects and arrays merge by key and position.
fn merge_add(a: &mut Value, b: &Value) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => *x = (x.as_u64().unwrap_or(0) + y.as_u64().unwrap_or(0)).into(),
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in y {
                match x.get_mut(k) {
                    Some(e) => merge_add(e, v),
                    None => {
                        x.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for (i, v) in y.iter().enumerate() {
                match x.get_mut(i) {
                    Some(e) => merge_add(e, v),
                    None => x.push(v.clone()),
                }
            }
        }
        _ => {}
    }
}

/// The whole switch: every worker's counters summed, plus the devices' own.
fn total_json(workers: &[Value], ports: &[Port], pool: &Mempool, residence: &Residence, steering: &[Result<(), String>]) -> Value {
    let mut total = workers.first().cloned().unwrap_or(json!({}));
    for w in workers.iter().skip(1) {
        merge_add(&mut total, w);
    }
    if let Some(arr) = total.get_mut("ports").and_then(Value::as_array_mut) {
        for (i, (v, p)) in arr.iter_mut().zip(ports).enumerate() {
            let d = p.stats();
            if let Value::Object(m) = v {
                m.insert("port".into(), json!(i));
                m.insert("device".into(), json!(p.name()));
                for (k, x) in [("dev_ipackets", d.ipackets), ("dev_opackets", d.opackets), ("dev_imissed", d.imissed), ("dev_ierrors", d.ierrors), ("dev_rx_nombuf", d.rx_nombuf)] {
                    m.insert(k.into(), json!(x));
                }
            }
        }
    }
    if let Value::Object(m) = &mut total {
        m.insert("workers".into(), json!(workers.len()));
        // What each core did: a collective striped over cores shows on each.
        let per_worker: Vec<Value> = workers
            .iter()
            .map(|w| {
                let rx: u64 = w["ports"].as_array().map_or(0, |a| a.iter().filter_map(|p| p["rx"].as_u64()).sum());
                let c = stats::engine(w).unwrap_or_default();
                json!(WorkerShare::new(&c, rx, w["steered_to_other_core"].as_u64().unwrap_or(0)))
            })
            .collect();
        m.insert("per_worker".into(), json!(per_worker));
        // From the DATA burst that completes a range in to each RESULT burst out (TSC, in ns).
        m.insert("residence_ns".into(), residence.to_json());
        m.insert("mbufs_available".into(), json!(pool.available()));
        // Per port: whether the device steers each operation to its owner (rte_flow), or why not.
        let flows: Vec<Value> = steering
            .iter()
            .map(|s| match s {
                Ok(()) => json!({"rte_flow": true}),
                Err(why) => json!({"rte_flow": false, "why": why}),
            })
            .collect();
        m.insert("flow_steering".into(), json!(flows));
    }
    total
}

/// Says that the ports are started and every worker polls: a line on
/// stderr, and the ready file (written whole, then renamed into place, so a
/// reader never sees half of it).
fn announce_ready(path: &Option<PathBuf>, ports: &[Port], workers: usize, rxq: u16) {
    let links: Vec<Value> = ports.iter().map(|p| json!({"port": p.0, "device": p.name(), "link_up": p.link_up().is_some()})).collect();
    eprintln!("prism-switch: ready ({} ports, {workers} workers, {rxq} RX queues a port)", ports.len());
    if let Some(p) = path {
        let v = json!({"pid": std::process::id(), "workers": workers, "rx_queues": rxq, "ports": links});
        if let Err(e) = prism_dataplane::files::write_whole(p, v.to_string() + "\n") {
            tracing::error!("cannot write the ready file {}: {e}", p.display());
        }
    }
}

fn merged_residence(parts: impl Iterator<Item = Residence>, tsc_hz: u64) -> Residence {
    let mut all = Residence::new(tsc_hz);
    for r in parts {
        all.merge(&r);
    }
    all
}

fn write_residence(path: &Option<PathBuf>, r: &Residence) {
    if let Some(p) = path {
        if let Err(e) = r.write_hlog(p, "prism-switch residence time: the DATA burst that completes a range in, each RESULT burst out") {
            tracing::error!("cannot write the residence histogram to {}: {e}", p.display());
        }
    }
}

fn write_stats(path: &Option<PathBuf>, v: &Value) {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    match path {
        Some(p) => {
            if let Err(e) = std::fs::write(p, text + "\n") {
                tracing::error!("cannot write stats to {}: {e}", p.display());
            }
        }
        None => println!("{text}"),
    }
}

/// What the workers share: the stop flag, the last time anything arrived,
/// published counters, and the inboxes that steer frames between cores.
struct Shared {
    stop: AtomicBool,
    last_rx_ms: AtomicU64,
    /// Workers that have entered their polling loop.
    polling: AtomicUsize,
    snapshots: Vec<Mutex<Value>>,
    /// inbox[dst * n + src]: frames core `src` received for operations core `dst` owns.
    /// Each frame with the TSC of the receive burst it came in (for residence times).
    inbox: Vec<ArrayQueue<(u16, Mbuf, u64)>>,
    /// Every worker's residence times, published a few times a second and on request.
    residence: Vec<Mutex<Option<Residence>>>,
    /// A dump's request number: each worker publishes its counters and
    /// histogram as of now, then acknowledges with the same number, so a
    /// SIGUSR1 dump is exact, not a snapshot up to a few thousand loops old.
    dump_request: AtomicU64,
    dump_ack: Vec<AtomicU64>,
}

struct Worker<'a> {
    id: usize,
    n: usize,
    ports: &'a [Port],
    queues: Vec<(usize, u16)>,
    pool: &'a Mempool,
    shared: &'a Shared,
    burst: usize,
    start: Instant,
    tsc_hz: u64,
    tsc_start: u64,
    impair: Option<ImpairSpec>,
    idle_sleep: Duration,
    flush_results: bool,
    /// The node's MAC (the destination of the frames it owns).
    mac: [u8; 6],
    /// This core's operation rules on the ports that take them.
    flows: std::cell::RefCell<OperationFlows<FlowRule>>,
    /// Whether any port takes rules: without, a frame skips the flow bookkeeping.
    flows_active: bool,
}

impl Worker<'_> {
    fn run(self, mut core: SwitchCore) -> (SwitchCore, Stats) {
        let np = self.ports.len();
        let mut st = Stats {
            residence: Residence::new(self.tsc_hz),
            rx: vec![0; np],
            tx: vec![0; np],
            tx_dropped: vec![0; np],
            no_mbuf: 0,
            steered: 0,
            steer_dropped: 0,
            flows: FlowStats::default(),
            flows_live: 0,
        };
        let mut rxbuf: Vec<Mbuf> = Vec::with_capacity(64);
        // This core's frames of one RX burst (`Worker::burst`).
        let mut local: Vec<Mbuf> = Vec::with_capacity(64);
        let mut txq: Vec<Vec<Mbuf>> = (0..np).map(|_| Vec::with_capacity(256)).collect();
        // Beside each queued frame: the RX burst TSC of the DATA that made it, when it is a RESULT (else 0).
        let mut stamps: Vec<Vec<u64>> = (0..np).map(|_| Vec::with_capacity(256)).collect();
        let mut impair = self.impair.map(|spec| Impairment::new(ImpairSpec { seed: spec.seed.wrapping_add(self.id as u64), ..spec }));
        let mut held: Option<(usize, Mbuf, u64)> = None;
        self.shared.polling.fetch_add(1, Ordering::Release);
        loop {
            let stopping = self.shared.stop.load(Ordering::Relaxed);
            // The engine's clock (retransmission timers, replay stamps): TSC as nanoseconds.
            let now_ns = ((rdtsc().wrapping_sub(self.tsc_start)) as u128 * 1_000_000_000 / self.tsc_hz.max(1) as u128) as u64;
            let mut sink = MbufSink { pool: self.pool, txq: &mut txq, no_mbuf: 0 };
            core.tick(now_ns, &mut sink);
            st.no_mbuf += sink.no_mbuf;
            stamp_new(&txq, &mut stamps, 0);
            let mut got = 0;
            for &(pi, q) in &self.queues {
                rxbuf.clear();
                let n = self.ports[pi].rx_burst(q, &mut rxbuf, self.burst);
                got += n;
                let rx_tsc = if n > 0 { rdtsc() } else { 0 };
                if impair.is_none() && !self.flush_results {
                    // Nothing between frames (no impairment, no flush after a
                    // RESULT): the burst to the engine at once.
                    self.burst(&mut core, &mut txq, &mut stamps, &mut st, pi, &mut rxbuf, &mut local, rx_tsc);
                    continue;
                }
                for m in rxbuf.drain(..) {
                    st.rx[pi] += 1;
                    if m.is_chained() {
                        core.chained();
                        continue;
                    }
                    let verdict = impair.as_mut().map_or(Verdict::Deliver, |i| i.decide(m.data().len()));
                    match verdict {
                        Verdict::Deliver => {
                            self.dispatch(&mut core, &mut txq, &mut stamps, &mut st, pi, m, rx_tsc);
                            self.flush_if_result(&mut txq, &mut stamps, &mut st);
                            if let Some((hp, hm, ht)) = held.take() {
                                self.dispatch(&mut core, &mut txq, &mut stamps, &mut st, hp, hm, ht);
                            }
                        }
                        Verdict::Drop => drop(m),
                        Verdict::Duplicate => {
                            let copy = m.share();
                            self.dispatch(&mut core, &mut txq, &mut stamps, &mut st, pi, copy, rx_tsc);
                            self.dispatch(&mut core, &mut txq, &mut stamps, &mut st, pi, m, rx_tsc);
                        }
                        Verdict::Cut(n) => {
                            // Only the engine sees a cut frame (it must count it as malformed).
                            let mut sink = MbufSink { pool: self.pool, txq: &mut txq, no_mbuf: 0 };
                            core.rx(pi as u16, &m.data()[..n], &mut sink);
                            st.no_mbuf += sink.no_mbuf;
                            stamp_new(&txq, &mut stamps, 0);
                        }
                        Verdict::Hold => {
                            if let Some((hp, hm, ht)) = held.replace((pi, m, rx_tsc)) {
                                self.dispatch(&mut core, &mut txq, &mut stamps, &mut st, hp, hm, ht);
                            }
                        }
                    }
                }
            }
            if got == 0 {
                if let Some((hp, hm, ht)) = held.take() {
                    self.dispatch(&mut core, &mut txq, &mut stamps, &mut st, hp, hm, ht);
                }
                if !self.idle_sleep.is_zero() && txq.iter().all(|q| q.is_empty()) {
                    std::thread::sleep(self.idle_sleep);
                }
            }
            for src in 0..self.n {
                while let Some((pi, m, rx_tsc)) = self.shared.inbox[self.id * self.n + src].pop() {
                    got += 1;
                    self.flow_rules(&m);
                    handle(&mut core, self.pool, &mut txq, &mut stamps, &mut st, pi as usize, m, rx_tsc);
                    self.flush_if_result(&mut txq, &mut stamps, &mut st);
                }
            }
            self.send_all(&mut txq, &mut stamps, &mut st);
            if got > 0 {
                self.shared.last_rx_ms.store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
            }
            // Counters and the histogram (a few hundred KB) are published only
            // when asked (a dump, the rate line) and at the stop: nothing
            // periodic in the polling loop that a frame could wait behind.
            let request = self.shared.dump_request.load(Ordering::Acquire);
            let asked = request != self.shared.dump_ack[self.id].load(Ordering::Relaxed);
            if stopping && got == 0 {
                // The device's rules go with the switch.
                self.flows.borrow_mut().clear(&mut DpdkFlows { ports: self.ports, mac: self.mac });
            }
            if asked || stopping {
                let f = self.flows.borrow();
                (st.flows, st.flows_live) = (f.stats, f.live() as u64);
                drop(f);
                if let Ok(mut r) = self.shared.residence[self.id].lock() {
                    *r = Some(st.residence.clone());
                }
                if let Ok(mut s) = self.shared.snapshots[self.id].lock() {
                    *s = worker_json(&core, &st);
                }
                self.shared.dump_ack[self.id].store(request, Ordering::Release);
            }
            // A clean stop: the loop that saw the flag has already sent what it queued.
            if stopping && got == 0 {
                break;
            }
        }
        (core, st)
    }
}

impl Worker<'_> {
    /// Hands every queued frame to its port's TX queue of this worker;
    /// RESULTs with a stamp become residence samples.
    fn send_all(&self, txq: &mut [Vec<Mbuf>], stamps: &mut [Vec<u64>], st: &mut Stats) {
        for (pi, port) in self.ports.iter().enumerate() {
            if !txq[pi].is_empty() {
                let want = txq[pi].len() as u64;
                let tx_tsc = rdtsc();
                let sent = port.tx_burst(self.id as u16, &mut txq[pi]) as u64;
                for &rx_tsc in &stamps[pi][..sent as usize] {
                    if rx_tsc != 0 {
                        st.residence.record(rx_tsc, tx_tsc);
                    }
                }
                stamps[pi].clear();
                st.tx[pi] += sent;
                st.tx_dropped[pi] += want - sent;
            }
        }
    }

    /// With `--tx-flush result`: sends at once when the frame just handled
    /// queued a RESULT, instead of after the whole receive burst.
    fn flush_if_result(&self, txq: &mut [Vec<Mbuf>], stamps: &mut [Vec<u64>], st: &mut Stats) {
        if self.flush_results && stamps.iter().any(|s| s.last().is_some_and(|&t| t != 0)) {
            self.send_all(txq, stamps, st);
        }
    }

    /// The operation rules a frame this core owns installs or removes.
    fn flow_rules(&self, m: &Mbuf) {
        if self.flows_active {
            self.flows.borrow_mut().on_frame(m.data(), &mut DpdkFlows { ports: self.ports, mac: self.mac });
        }
    }

    /// One RX burst without impairment or flush after a RESULT: chained
    /// frames counted, frames another core owns sent to it, and this core's
    /// frames to the engine in one `SwitchCore::rx_burst`, in order. Each
    /// frame is stamped and sent on as `handle` does; its engine time runs
    /// from the end of the frame before it (one TSC read a frame).
    #[allow(clippy::too_many_arguments)]
    fn burst(&self, core: &mut SwitchCore, txq: &mut [Vec<Mbuf>], stamps: &mut [Vec<u64>], st: &mut Stats, pi: usize, rxbuf: &mut Vec<Mbuf>, local: &mut Vec<Mbuf>, rx_tsc: u64) {
        for m in rxbuf.drain(..) {
            st.rx[pi] += 1;
            if m.is_chained() {
                core.chained();
                continue;
            }
            if let Some(m) = self.steer(core, st, pi, m, rx_tsc) {
                local.push(m);
            }
        }
        let frames: &[Mbuf] = local;
        let mut sink = MbufSink { pool: self.pool, txq, no_mbuf: 0 };
        let mut start_tsc = rdtsc();
        core.rx_burst(frames.iter().map(|m| (pi as u16, m.data())), &mut sink, |i, action, sink| {
            let Some(m) = frames.get(i) else { return };
            // As `handle`: only a DATA frame's RESULTs are residence samples.
            let stamp = if class_of(m.data()) == Some(Class::DATA) { rx_tsc } else { 0 };
            let done_tsc = rdtsc();
            if stamp_new(sink.txq, stamps, stamp) {
                st.residence.record_engine(rx_tsc, start_tsc, done_tsc);
            }
            match action {
                Action::Consumed | Action::Drop(_) => {}
                Action::Forward(p) => sink.txq[p as usize].push(m.share()),
                Action::Flood => {
                    for (q, buf) in sink.txq.iter_mut().enumerate() {
                        if q != pi {
                            buf.push(m.share());
                        }
                    }
                }
            }
            stamp_new(sink.txq, stamps, 0);
            start_tsc = done_tsc;
        });
        st.no_mbuf += sink.no_mbuf;
        local.clear();
    }

    /// A received frame to the core that owns its operation, or handled here.
    #[allow(clippy::too_many_arguments)]
    fn dispatch(&self, core: &mut SwitchCore, txq: &mut [Vec<Mbuf>], stamps: &mut [Vec<u64>], st: &mut Stats, pi: usize, m: Mbuf, rx_tsc: u64) {
        if let Some(m) = self.steer(core, st, pi, m, rx_tsc) {
            handle(core, self.pool, txq, stamps, st, pi, m, rx_tsc)
        }
    }

    /// A frame another core owns goes to that core's inbox (None); one this
    /// core owns has its flow rules looked at and comes back to be handled.
    fn steer(&self, core: &SwitchCore, st: &mut Stats, pi: usize, m: Mbuf, rx_tsc: u64) -> Option<Mbuf> {
        match core.owner(m.data(), self.n) {
            Some(o) if o != self.id => {
                st.steered += 1;
                if self.shared.inbox[o * self.n + self.id].push((pi as u16, m, rx_tsc)).is_err() {
                    st.steer_dropped += 1;
                }
                None
            }
            _ => {
                self.flow_rules(&m);
                Some(m)
            }
        }
    }
}

/// Gives every frame queued since the last call its stamp: `rx_tsc` for a
/// RESULT (made by the DATA frame just handled), 0 for anything else.
/// Whether any got a stamp.
fn stamp_new(txq: &[Vec<Mbuf>], stamps: &mut [Vec<u64>], rx_tsc: u64) -> bool {
    let mut stamped = false;
    for (q, s) in txq.iter().zip(stamps.iter_mut()) {
        for m in &q[s.len()..] {
            let result = rx_tsc != 0 && class_of(m.data()) == Some(Class::RESULT);
            stamped |= result;
            s.push(if result { rx_tsc } else { 0 });
        }
    }
    stamped
}

/// One frame on the core that owns it.
#[allow(clippy::too_many_arguments)]
fn handle(core: &mut SwitchCore, pool: &Mempool, txq: &mut [Vec<Mbuf>], stamps: &mut [Vec<u64>], st: &mut Stats, pi: usize, m: Mbuf, rx_tsc: u64) {
    // Only a DATA frame can complete a range: RESULTs made by anything else (timers, PROGRESS) are not residence samples.
    let stamp = if class_of(m.data()) == Some(Class::DATA) { rx_tsc } else { 0 };
    let start_tsc = if stamp != 0 { rdtsc() } else { 0 };
    // Engine replies are built directly in mbufs on their port's TX queue.
    let mut sink = MbufSink { pool, txq, no_mbuf: 0 };
    let action = core.rx(pi as u16, m.data(), &mut sink);
    st.no_mbuf += sink.no_mbuf;
    if stamp_new(txq, stamps, stamp) {
        st.residence.record_engine(rx_tsc, start_tsc, rdtsc());
    }
    match action {
        Action::Consumed | Action::Drop(_) => drop(m),
        Action::Forward(p) => txq[p as usize].push(m),
        Action::Flood => {
            for (q, buf) in txq.iter_mut().enumerate() {
                if q != pi {
                    buf.push(m.share());
                }
            }
        }
    }
    // Forwarded frames are not the switch's own RESULTs.
    stamp_new(txq, stamps, 0);
}

fn run(args: Args, eal_args: Vec<String>) -> Result<(), Box<dyn std::error::Error>> {
    let mut cfg = SwitchConfig::load(&args.config)?;
    if let Some(rto) = args.rto_us {
        cfg.node.rto_us = rto;
    }
    if let Some(p) = &args.ready_file {
        // A stale file from an earlier run must not be taken for this one's.
        let _ = std::fs::remove_file(p);
    }
    // Decided from the arguments, so that other ports' teardown makes no extra driver call.
    let on_memif = eal_args.iter().any(|a| a.contains("net_memif"));
    let eal = Eal::init(&eal_args)?;
    let n = args.workers.unwrap_or(cfg.dataplane.workers).max(1);
    tracing::info!("EAL up: {} ports, TSC {} MHz, {n} polling core(s)", eal.port_count(), eal.tsc_hz() / 1_000_000);
    let data_room = (cfg.node.mtu as u32 + 14 + 128 + 64).max(2048 + 128) as u16;
    let pool = Mempool::new(&eal, "prism_mbufs", cfg.dataplane.mbufs, 256, data_room)?;
    let ports: Vec<Port> = cfg.ports.iter().map(|p| Port::by_name(&eal, &p.device)).collect::<Result<_, DpdkError>>()?;
    let infos: Vec<(String, PortInfo)> = ports.iter().map(|p| Ok((p.name(), p.info()?))).collect::<Result<_, DpdkError>>()?;
    let rxq = plan_rx_queues(n, args.rx_queues.or(cfg.dataplane.rx_queues), &infos)?;
    for p in &ports {
        p.start(&pool, rxq, n as u16, cfg.dataplane.rx_desc.max(cfg.dataplane.tx_desc), cfg.node.mtu)?;
        tracing::info!("port {} = {} up, MAC {}, {rxq} RX / {n} TX queues", p.0, p.name(), prism_dataplane::wire::Mac(p.mac()));
    }
    // Which devices take a rule per operation (asked once, with a rule that is validated, not installed).
    let steering: Vec<Result<(), String>> = ports
        .iter()
        .map(|p| {
            if n <= 1 || args.flow_steering == FlowSteering::Off {
                return Err(if n <= 1 { "one worker".into() } else { "--flow-steering off".into() });
            }
            p.steer_operation(cfg.node_mac().0, [0; 14], 0, true).map(|_| ()).map_err(|e| e.to_string())
        })
        .collect();
    for (p, s) in ports.iter().zip(&steering) {
        match s {
            Ok(()) => tracing::info!("port {} ({}): rte_flow rules deliver each operation to its owner's queue", p.0, p.name()),
            Err(why) if n > 1 => tracing::info!("port {} ({}): no rte_flow steering ({why}); frames reach their owner core in software", p.0, p.name()),
            Err(_) => {}
        }
    }
    signals::install();
    let shared = Shared {
        stop: AtomicBool::new(false),
        last_rx_ms: AtomicU64::new(0),
        polling: AtomicUsize::new(0),
        snapshots: (0..n).map(|_| Mutex::new(json!({}))).collect(),
        inbox: (0..n * n).map(|_| ArrayQueue::new(4096)).collect(),
        residence: (0..n).map(|_| Mutex::new(None)).collect(),
        dump_request: AtomicU64::new(0),
        dump_ack: (0..n).map(|_| AtomicU64::new(0)).collect(),
    };
    // RX queues dealt round-robin: one polling core per queue, several queues per core when fewer cores.
    let all_queues: Vec<(usize, u16)> = (0..ports.len()).flat_map(|p| (0..rxq).map(move |q| (p, q))).collect();
    let cores = if args.cpus.is_empty() { prism_dataplane::dpdk::online_cpus() } else { args.cpus.iter().map(|&id| core_affinity::CoreId { id }).collect() };
    let start = Instant::now();
    let tsc_start = rdtsc();
    // Worker w's core (cores are reused round-robin when there are fewer than workers).
    let pins: Vec<Option<core_affinity::CoreId>> = (0..n).map(|w| cores.get(w % cores.len().max(1)).copied()).collect();
    let results: Vec<(SwitchCore, Stats)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|w| {
                let queues: Vec<(usize, u16)> = all_queues.iter().enumerate().filter(|(i, _)| i % n == w).map(|(_, q)| *q).collect();
                // Per port: this core's queue there, if the device takes rules.
                let rule_queues: Vec<Option<u16>> = (0..ports.len()).map(|p| if steering[p].is_ok() { queues.iter().find(|(qp, _)| *qp == p).map(|(_, q)| *q) } else { None }).collect();
                let flows = OperationFlows::new(cfg.node_mac(), rule_queues);
                let worker = Worker {
                    id: w,
                    n,
                    ports: &ports,
                    mac: cfg.node_mac().0,
                    flows_active: flows.active(),
                    flows: std::cell::RefCell::new(flows),
                    queues,
                    pool: &pool,
                    shared: &shared,
                    burst: cfg.dataplane.burst,
                    start,
                    tsc_hz: eal.tsc_hz(),
                    tsc_start,
                    impair: args.impair,
                    idle_sleep: Duration::from_micros(args.idle_sleep_us),
                    flush_results: args.tx_flush == TxFlush::Result,
                };
                let core = SwitchCore::new(&cfg);
                let pin = pins[w];
                let eal = &eal;
                s.spawn(move || {
                    if let Some(c) = pin {
                        core_affinity::set_for_current(c);
                    }
                    // An lcore id for this thread: per-core mempool caches, no shared-ring traffic.
                    let lcore = LcoreGuard::register(eal);
                    tracing::info!("worker {w} on core {:?}, lcore {}", pin.map(|c| c.id), lcore.lcore());
                    worker.run(core)
                })
            })
            .collect();
        // This thread: signals, idle exit, the rate line and SIGUSR1 dumps.
        // It wakes 50 times a second: on a CPU without a polling core when
        // there is one, so it never preempts a poller (on the poller's CPU,
        // a frame that arrives while it runs waits for it).
        if let Some(free) = prism_dataplane::dpdk::online_cpus().into_iter().find(|c| !pins.contains(&Some(*c))) {
            core_affinity::set_for_current(free);
        }
        let mut last_line = Instant::now();
        let (mut line_rx, mut line_tx) = (0u64, 0u64);
        let mut ready = false;
        loop {
            std::thread::sleep(Duration::from_millis(if ready { 20 } else { 1 }));
            if !ready && shared.polling.load(Ordering::Acquire) == n {
                ready = true;
                announce_ready(&args.ready_file, &ports, n, rxq);
            }
            if signals::stop_requested() {
                break;
            }
            let dump = signals::take_dump_request();
            let line_due = args.stats_interval > 0 && last_line.elapsed() >= Duration::from_secs(args.stats_interval);
            if dump || line_due {
                // Every worker publishes as of now (bounded: a stuck worker must not stop the dump).
                let request = shared.dump_request.fetch_add(1, Ordering::AcqRel) + 1;
                let asked_at = Instant::now();
                while shared.dump_ack.iter().any(|a| a.load(Ordering::Acquire) != request) && asked_at.elapsed() < Duration::from_secs(1) {
                    std::thread::yield_now();
                }
            }
            let idle = idle_ms(start.elapsed().as_millis() as u64, shared.last_rx_ms.load(Ordering::Relaxed));
            if args.idle_exit_ms > 0 && idle > args.idle_exit_ms {
                tracing::info!("idle for {} ms: stopping", args.idle_exit_ms);
                break;
            }
            // Only when they are used: a wake that copies every worker's counters costs the pollers' caches.
            let snaps: Vec<Value> = if dump || line_due { shared.snapshots.iter().filter_map(|m| m.lock().ok().map(|v| v.clone())).collect() } else { Vec::new() };
            if dump {
                let r = merged_residence(shared.residence.iter().filter_map(|m| m.lock().ok().and_then(|r| r.clone())), eal.tsc_hz());
                write_stats(&args.stats_json, &total_json(&snaps, &ports, &pool, &r, &steering));
                write_residence(&args.residence_hlog, &r);
            }
            if line_due {
                let t = total_json(&snaps, &ports, &pool, &Residence::new(1), &steering);
                let sum = |k: &str| t["ports"].as_array().map_or(0, |a| a.iter().map(|p| p[k].as_u64().unwrap_or(0)).sum::<u64>());
                let (rx, tx) = (sum("rx"), sum("tx"));
                let secs = last_line.elapsed().as_secs_f64();
                let e = stats::engine(&t).unwrap_or_default();
                tracing::info!(
                    "rx {:.0} pps, tx {:.0} pps | applied {} dup {} results {} | rejected {} malformed {}",
                    (rx.saturating_sub(line_rx)) as f64 / secs,
                    (tx.saturating_sub(line_tx)) as f64 / secs,
                    e.data_applied,
                    e.data_duplicates,
                    e.results_sent,
                    e.data_rejected.iter().sum::<u64>(),
                    e.malformed.iter().sum::<u64>()
                );
                (line_rx, line_tx, last_line) = (rx, tx, Instant::now());
            }
        }
        shared.stop.store(true, Ordering::Relaxed);
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let cycles = rdtsc() - tsc_start;
    tracing::info!("stopped after {:.3} s", cycles as f64 / eal.tsc_hz() as f64);
    let per_worker: Vec<Value> = results.iter().map(|(c, s)| worker_json(c, s)).collect();
    let residence = merged_residence(results.iter().map(|(_, s)| s.residence.clone()), eal.tsc_hz());
    write_stats(&args.stats_json, &total_json(&per_worker, &ports, &pool, &residence, &steering));
    write_residence(&args.residence_hlog, &residence);
    if on_memif {
        // DPDK 22.11's memif PMD frees its shared regions from its interrupt thread with no
        // lock against a concurrent close; closing our side with the client still connected
        // has died of SIGSEGV here, after the stats were written. Exit without the close:
        // the kernel releases the memfd regions and the socket (docs/switch.md).
        tracing::info!("memif: exiting without closing the ports");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        std::process::exit(0);
    }
    for p in &ports {
        p.stop();
    }
    // The pool has no destructor of its own: EAL cleanup frees its memory.
    drop(eal);
    Ok(())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_target(false).init();
    let (eal_args, own) = split_args();
    let args = Args::parse_from(own);
    match run(args, eal_args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("prism-switch: {e}");
            ExitCode::from(1)
        }
    }
}

/// Milliseconds since the last received frame. A worker can note a frame
/// after the caller read the clock (its time is then later than `now`):
/// the switch was not idle, and the difference must not wrap (in release
/// it wrapped to an idle time that stopped the switch at once; in debug
/// it panicked).
fn idle_ms(now: u64, last_rx: u64) -> u64 {
    now.saturating_sub(last_rx)
}

#[cfg(test)]
mod idle_tests {
    use super::idle_ms;

    #[test]
    fn a_frame_noted_after_the_clock_was_read_is_not_idle_time() {
        assert_eq!(idle_ms(1000, 400), 600);
        assert_eq!(idle_ms(1000, 1000), 0);
        assert_eq!(idle_ms(1000, 1001), 0);
    }
}
