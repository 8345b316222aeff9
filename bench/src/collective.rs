//! One collective over several cores, in process: the collective striped
//! over K operations (`Job::striped`, as pktgen runs it), each stripe's
//! frames through its own `SwitchCore` on its own pinned core (as
//! prism-switch places them), against the same collective on one core.
//!
//! The rate of a collective is its DATA frames over its makespan: from the
//! first core starting to the last core finishing, all cores released
//! together by a barrier. So a core left idle, or one stripe slower than
//! the others, shows in the figure; a sum of per-core rates would hide it.

use crate::switch_throughput::{config, Case};
use crate::BenchError;
use crossbeam::queue::ArrayQueue;
use prism_dataplane::dpdk::{online_cpus, rdtsc, DpdkError, Eal, LcoreGuard, Mbuf, MbufSink, Mempool};
use prism_dataplane::engine::Sent;
use prism_dataplane::fixtures::SwitchToml;
use prism_dataplane::switch::config::SwitchConfig;
use prism_dataplane::switch::stats;
use prism_dataplane::switch::SwitchCore;
use prism_dataplane::wire::*;
use prism_pktgen::Job;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Releases every core at once: a spinning barrier (a futex barrier wakes
/// its threads tens of microseconds apart, a visible part of a 1 ms round).
struct Start {
    cores: usize,
    arrived: AtomicUsize,
}

impl Start {
    /// Waits for every core's `round`-th arrival (rounds from 0).
    fn wait(&self, round: usize) {
        self.arrived.fetch_add(1, Ordering::AcqRel);
        while self.arrived.load(Ordering::Acquire) < self.cores * (round + 1) {
            std::hint::spin_loop();
        }
    }
}

/// How the collective's frames reach the cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Each core receives its own stripe's frames (an RX queue a core, the
    /// frames steered there by the NIC or, on memif, by the sender).
    OwnQueue,
    /// Every frame arrives on core 0's queue, which receives them all and
    /// hands the other stripes' mbufs (pointers, no copy) to their owners
    /// through a bounded lock-free queue, as prism-switch does when a
    /// device cannot steer PRISM frames.
    OneQueue,
}

/// One collective's figures on `cores` cores.
#[derive(Debug, Clone, Copy)]
pub struct CollectiveRate {
    pub cores: usize,
    /// DATA frames of the collective (all ranks) per second of makespan.
    pub data_pps: f64,
    /// Vector elements reduced per second (the collective's length over its makespan).
    pub elements_per_s: f64,
    /// Rounds timed.
    pub rounds: usize,
    /// DATA frames each core applied in a round (each stripe's share).
    pub frames_per_core: [u64; 8],
}

/// One round's DATA frames of one stripe, in the order the ranks send them: (port, frame).
type Order = Vec<(u16, Vec<u8>)>;

/// The collective of `c` with `elements` per rank, striped over `cores`
/// operations on `cores` pinned cores, `rounds` times (each a fresh
/// generation); the best round's rate (the machine's noise only ever slows
/// a round down).
pub fn collective(eal: &Eal, pool: &Mempool, c: &Case, elements: u32, cores: usize, rounds: usize, arrival: Arrival) -> Result<CollectiveRate, BenchError> {
    let cores = cores.clamp(1, 8);
    let mut whole = Job { pattern: c.pattern, seed: 7, rank_ports: vec![0, 1], ..Job::new(c.ranks, c.semantics, c.accumulator, elements) };
    whole.stripes = cores as u16;
    let vectors = whole.vectors();
    let stripes: Vec<Job> = whole.striped(&vectors).into_iter().map(|(_, j)| j).collect();
    if stripes.len() != cores {
        return Err(BenchError::Run(format!("{elements} elements make {} stripes, not {cores}", stripes.len())));
    }
    // Every round's frames, built before anything is timed: [round][stripe].
    let orders: Vec<Vec<Order>> = (0..rounds).map(|round| stripes.iter().map(|j| order(j, 1 + round as u32)).collect()).collect();
    let ids = online_cpus();
    let hz = eal.tsc_hz() as f64;
    let start = Start { cores, arrived: AtomicUsize::new(0) };
    let inboxes: Vec<ArrayQueue<Mbuf>> = (0..cores).map(|_| ArrayQueue::new(1024)).collect();
    let rig = Rig { pool, orders: &orders, start: &start, inboxes: &inboxes, arrival };
    // Per round and core: (first cycle, last cycle, DATA frames).
    type Rounds = Result<Vec<(u64, u64, u64)>, BenchError>;
    let per_core: Vec<Rounds> = std::thread::scope(|s| {
        let hs: Vec<_> = stripes
            .iter()
            .enumerate()
            .map(|(i, stripe)| {
                let pin = ids.get(i % ids.len().max(1)).copied();
                let rig = &rig;
                s.spawn(move || {
                    if let Some(p) = pin {
                        core_affinity::set_for_current(p);
                    }
                    let _lcore = LcoreGuard::register(eal);
                    run_stripe(rig, i, stripe)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(BenchError::Run("a core's thread panicked".into())))).collect()
    });
    let per_core: Vec<Vec<(u64, u64, u64)>> = per_core.into_iter().collect::<Result<_, _>>()?;
    let frames: u64 = per_core.iter().map(|r| r[0].2).sum();
    let best = (0..rounds)
        .map(|k| {
            let first = per_core.iter().map(|r| r[k].0).min().unwrap_or(0);
            let last = per_core.iter().map(|r| r[k].1).max().unwrap_or(0);
            last.saturating_sub(first).max(1)
        })
        .min()
        .unwrap_or(1) as f64;
    let mut frames_per_core = [0u64; 8];
    for (f, r) in frames_per_core.iter_mut().zip(&per_core) {
        *f = r[0].2;
    }
    Ok(CollectiveRate { cores, data_pps: frames as f64 * hz / best, elements_per_s: elements as f64 * hz / best, rounds, frames_per_core })
}

/// A stripe's DATA frames for generation `gen`, in window order across
/// ranks, as the ranks send them.
fn order(stripe: &Job, gen: u32) -> Order {
    let mut j = stripe.clone();
    j.identity.op_gen = gen;
    let vectors = j.vectors();
    let mut per_rank: Vec<Vec<(u64, u64, Vec<u8>)>> = (0..j.ranks).map(|r| j.packets(r, &vectors[r as usize])).collect();
    let most = per_rank.iter().map(Vec::len).max().unwrap_or(0);
    let mut order = Vec::with_capacity(most * per_rank.len());
    for i in 0..most {
        for (r, p) in per_rank.iter_mut().enumerate() {
            if let Some(f) = p.get_mut(i) {
                order.push((j.rank_ports[r % 2], std::mem::take(&mut f.2)));
            }
        }
    }
    order
}

/// What the cores share.
struct Rig<'a> {
    pool: &'a Mempool,
    orders: &'a [Vec<Order>],
    start: &'a Start,
    /// Per core: the mbufs core 0 received for it (`Arrival::OneQueue`).
    inboxes: &'a [ArrayQueue<Mbuf>],
    arrival: Arrival,
}

/// One stripe on core `me`: each round, STAGE and COMMIT (untimed), wait
/// for every core, then its DATA frames through the switch core with
/// prism-switch's RX and TX emulated as in `switch_throughput` (a fresh
/// mbuf per frame, RESULTs built in TX mbufs and freed); COMPLETE, RELEASE.
fn run_stripe(rig: &Rig<'_>, me: usize, stripe: &Job) -> Result<Vec<(u64, u64, u64)>, BenchError> {
    let cfg = SwitchConfig::parse(&config().to_string())?;
    let mut core = SwitchCore::new(&cfg);
    let mut out: Vec<Sent> = Vec::with_capacity(64);
    let mut times = Vec::with_capacity(rig.orders.len());
    let mut txq: Vec<Vec<Mbuf>> = vec![Vec::with_capacity(64), Vec::with_capacity(64)];
    let pool = rig.pool;
    for (round, orders) in rig.orders.iter().enumerate() {
        let mut j = stripe.clone();
        j.identity.op_gen = 1 + round as u32;
        let step = |core: &mut SwitchCore, out: &mut Vec<Sent>, k: u32, command: Command, body: ControlBody<'_>| {
            core.rx(0, &j.control(j.identity.op_gen * 16 + k, command, body), out);
            out.clear();
        };
        let bindings = j.bindings();
        step(&mut core, &mut out, 2, Command::STAGE, ControlBody::Stage { context: j.context(), bindings: Records::Typed(&bindings) });
        step(&mut core, &mut out, 3, Command::COMMIT, ControlBody::Empty);
        let mine = &orders[me];
        let mut apply = |core: &mut SwitchCore, port: u16, m: Mbuf| {
            let mut sink = MbufSink { pool, txq: &mut txq, no_mbuf: 0 };
            core.rx(port, m.data(), &mut sink);
            drop(m);
            for q in &mut txq {
                q.clear(); // TX into net_null: freed
            }
        };
        rig.start.wait(round);
        let t0 = rdtsc();
        match rig.arrival {
            Arrival::OwnQueue => {
                for (port, frame) in mine {
                    let Some(m) = pool.frame(frame) else { return Err(BenchError::Dpdk(DpdkError::NoMbuf)) };
                    apply(&mut core, *port, m);
                }
            }
            Arrival::OneQueue if me == 0 => {
                // Core 0 receives every stripe's frames as they arrive (the
                // stripes' streams interleaved) and keeps its own.
                let most = orders.iter().map(Vec::len).max().unwrap_or(0);
                for i in 0..most {
                    for (k, o) in orders.iter().enumerate() {
                        let Some((port, frame)) = o.get(i) else { continue };
                        let Some(mut m) = pool.frame(frame) else { return Err(BenchError::Dpdk(DpdkError::NoMbuf)) };
                        if k == 0 {
                            apply(&mut core, *port, m);
                            continue;
                        }
                        // A full inbox waits for its owner (the switch drops and counts instead).
                        while let Err(back) = rig.inboxes[k].push(m) {
                            m = back;
                            std::hint::spin_loop();
                        }
                    }
                }
            }
            Arrival::OneQueue => {
                // Core 0 hands this stripe's frames over in its own order.
                for (port, _) in mine {
                    let m = loop {
                        match rig.inboxes[me].pop() {
                            Some(m) => break m,
                            None => std::hint::spin_loop(),
                        }
                    };
                    apply(&mut core, *port, m);
                }
            }
        }
        let t1 = rdtsc();
        times.push((t0, t1, mine.len() as u64));
        step(&mut core, &mut out, 4, Command::COMPLETE, ControlBody::Empty);
        step(&mut core, &mut out, 5, Command::RELEASE, ControlBody::Empty);
        let c = &core.node.counters;
        if c.data_rejected.iter().sum::<u64>() != 0 || c.data_applied != (round as u64 + 1) * mine.len() as u64 {
            return Err(BenchError::Run(format!("stripe {}: not every DATA frame was applied ({c:?})", j.identity.op)));
        }
    }
    Ok(times)
}

/// A collective through the binaries.
#[derive(Debug, Clone)]
pub struct MemifRate {
    pub data_pps: f64,
    pub elements_per_s: f64,
    /// DATA frames each polling core applied over every round.
    pub applied_per_core: Vec<u64>,
    /// Frames the switch handed from the core that received them to their
    /// owner (0 when pktgen delivers each stripe to its owner's queue).
    pub steered: u64,
}

/// The same collective through the real binaries on net_memif: prism-switch
/// with `workers` polling cores (pinned to CPUs 0..workers) as the memif
/// server, prism-pktgen as the client (its one busy thread on the last
/// CPU) running the collective striped over `workers` operations; `rounds`
/// collectives, each exact or the whole measurement fails. The best
/// round's DATA frames over pktgen's first-DATA-to-last-RESULT time; the
/// per-core counts are the last round's.
///
/// On a machine with fewer than workers + 1 cores the switch's workers and
/// pktgen share CPUs by time-slicing (the workers then sleep when idle):
/// the figure then is that of the machine, not of the switch, and the
/// report says so.
pub fn memif_collective(c: &Case, elements: u32, workers: usize, rounds: usize) -> Result<MemifRate, BenchError> {
    let (mut best_pps, mut best_eps) = (0f64, 0f64);
    let mut last = None;
    for round in 0..rounds.max(1) {
        let (v, s) = memif_round(c, elements, workers, round)?;
        let secs = v["operation_us"].as_f64().unwrap_or(0.0) / 1e6;
        let frames = v["frames_sent"].as_f64().unwrap_or(0.0);
        if secs > 0.0 {
            best_pps = best_pps.max(frames / secs);
            best_eps = best_eps.max(elements as f64 / secs);
        }
        last = Some(s);
    }
    let s = last.unwrap_or_default();
    let applied_per_core = stats::per_worker(&s).map(|w| w.iter().map(|w| w.data_applied).collect()).unwrap_or_default();
    Ok(MemifRate { data_pps: best_pps, elements_per_s: best_eps, applied_per_core, steered: s["steered_to_other_core"].as_u64().unwrap_or(0) })
}

/// One collective on a switch of its own: pktgen's summary and the
/// switch's stats. The switch stops before pktgen leaves (`--linger`):
/// DPDK 22.11's memif PMD frees the shared rings on a peer's disconnect
/// while the cores polling them may still read them (a SIGSEGV in the
/// switch, seen in CI), so the side that stops first must be the poller.
fn memif_round(c: &Case, elements: u32, workers: usize, round: usize) -> Result<(serde_json::Value, serde_json::Value), BenchError> {
    use prism_pktgen::process::{sibling_binary, switch_command, Spawned};
    use std::time::Duration;
    let switch = sibling_binary("prism-switch")?;
    let pktgen = sibling_binary("prism-pktgen")?;
    let pid = std::process::id();
    let dir = std::env::temp_dir().join(format!("prism-bench-coll-{pid}-{workers}-{round}"));
    std::fs::create_dir_all(&dir).map_err(BenchError::file(&dir))?;
    let sock = dir.join("memif.sock");
    let _ = std::fs::remove_file(&sock);
    let (cfg, ready, stats, summary) = (dir.join("switch.toml"), dir.join("switch.ready"), dir.join("switch.json"), dir.join("pktgen.json"));
    let _ = std::fs::remove_file(&summary);
    std::fs::write(&cfg, SwitchToml::new(&["net_memif0"]).to_string()).map_err(BenchError::file(&cfg))?;
    let online = online_cpus().len().max(1);
    let cpus: Vec<String> = (0..workers).map(|i| (i % online).to_string()).collect();
    let vdev = |role: &str| format!("net_memif0,role={role},id=0,socket={}", sock.display());
    let mut cmd = switch_command(&switch, &format!("prism-coll-sw{pid}"), &cpus.join(","), &[vdev("server")], &cfg, &stats, &ready);
    cmd.args(["--workers", &workers.to_string(), "--cpus", &cpus.join(","), "--tx-flush", "result"]);
    if workers + 1 > online {
        // pktgen shares a CPU with a polling core: the workers sleep 20 us
        // when a poll finds nothing, else each round trip waits for a
        // scheduler time slice (measured: 2-4k against 23-29k DATA/s).
        cmd.args(["--idle-sleep-us", "20"]);
    }
    let mut sw = Spawned::spawn(&mut cmd, "prism-switch (memif)", &dir.join("switch.log"))?;
    sw.wait_ready(&ready, Duration::from_secs(30))?;
    let policy = if c.accumulator == AccumulatorPolicy::KULISCH_FIXED { "kulisch" } else { "fp32-arrival" };
    let pattern = match c.pattern {
        prism_pktgen::Pattern::FullRange => "full-range".to_string(),
        prism_pktgen::Pattern::Gradient(s) => format!("gradient:{s}"),
        other => return Err(BenchError::Usage(format!("pattern {other:?} is not measured here"))),
    };
    let eal = format!("--eal=--no-huge --no-pci -l {} -m 512 --log-level lib.eal:error --file-prefix prism-coll-pg{pid} --vdev {}", online - 1, vdev("client"));
    let mut pg = std::process::Command::new(&pktgen);
    pg.arg("--switch=dpdk:net_memif0").arg(eal).args(["--ranks", &c.ranks.to_string(), "--op", if c.semantics == Semantics::REDUCE { "reduce" } else { "allreduce" }]);
    pg.args(["--policy", policy, "--pattern", &pattern, "--len", &elements.to_string(), "--stripes", &workers.to_string(), "--generation", &(round + 1).to_string()]);
    pg.arg("--json-out").arg(&summary).arg("--linger");
    let mut pg = Spawned::spawn(&mut pg, "prism-pktgen (memif)", &dir.join("pktgen.log"))?;
    // pktgen gives up by itself after 5 s without progress; this bounds a pktgen that hangs.
    let deadline = Duration::from_secs(120 + u64::from(elements) / 20_000);
    // The summary is written whole, as a ready file is: the same wait.
    let v = pg.wait_ready(&summary, deadline)?;
    // The poller stops first; pktgen, idle, then sees the disconnect and leaves.
    sw.stop(Duration::from_secs(20))?;
    let _ = pg.stop(Duration::from_secs(20));
    if v["verdict"] != "PASS" {
        return Err(BenchError::Run(format!("the collective through prism-switch ({workers} cores) was not exact: {v}")));
    }
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).map_err(BenchError::file(&stats))?).map_err(|source| BenchError::Json { path: stats.clone(), source })?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok((v, s))
}
