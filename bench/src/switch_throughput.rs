//! Cycles per DATA packet of the switch core, against `dpdk-testpmd
//! --forward-mode=io` between two `net_null` devices (copy=1, 1514-byte frames)
//! measured in the same run on the same machine.
//!
//! What each side includes: testpmd's figure is RX from net_null (which copies
//! 1514 bytes into a fresh mbuf), io forwarding and TX (net_null frees). Ours
//! emulates exactly that around the real work: for every DATA frame, allocate
//! an mbuf and copy the frame into it, run `SwitchCore::rx` (parse, admission,
//! accumulation, RESULT emission), then free it; every RESULT the engine emits
//! is copied into a fresh mbuf and freed (the TX side of net_null). The RX
//! is a PMD's burst (`measure_burst`, prism-switch's `dataplane.burst` by
//! default): N frames copied into fresh mbufs, then all handed to
//! `SwitchCore::rx_burst`; the RX copy alone and the floors get the same
//! bursts. `--burst 1` hands the core one frame at a time (`SwitchCore::rx`).
//!
//! Beside each case, in the same run and over the same frames, its floors
//! (`Floor`): the protocol's own work with no engine around it, so that a
//! report tells the engine's cost from the arithmetic's and the RX's.

use crate::BenchError;
use prism_arith::window::{Accumulator, Policy};
use prism_arith::NumFormat;
use prism_dataplane::dpdk::{rdtsc, Eal, LcoreGuard, Mbuf, MbufSink, Mempool};
use prism_dataplane::engine::digest::digest;
use prism_dataplane::engine::Sent;
use prism_dataplane::fixtures::SwitchToml;
use prism_dataplane::switch::config::SwitchConfig;
use prism_dataplane::switch::SwitchCore;
use prism_dataplane::wire::*;
use prism_pktgen::{Job, Pattern};
use std::process::Command as Proc;
use std::time::Duration;

/// One benchmark case.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    pub ranks: u16,
    pub semantics: Semantics,
    pub accumulator: AccumulatorPolicy,
    pub pattern: Pattern,
}

/// The cases of issue 9: both policies, gradient and full-range data, 2 and 8 ranks, REDUCE and ALLREDUCE.
pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for accumulator in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
        for pattern in [Pattern::Gradient(1e-3), Pattern::FullRange] {
            for ranks in [2u16, 8] {
                for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
                    v.push(Case { ranks, semantics, accumulator, pattern });
                }
            }
        }
    }
    v
}

pub(crate) fn config() -> SwitchToml {
    SwitchToml::new(&["p0", "p1"]).max_ops(4)
}

fn job(c: &Case, gen: u32, len: u32) -> Job {
    let mut j = Job { pattern: c.pattern, seed: 7, rank_ports: vec![0, 1], ..Job::new(c.ranks, c.semantics, c.accumulator, len) };
    j.identity.op_gen = gen;
    j
}

fn control(j: &Job, txn: u32, command: Command, body: ControlBody<'_>) -> Vec<u8> {
    j.control(txn, command, body)
}

/// Result of one case.
#[derive(Debug, Clone)]
pub struct Measured {
    pub case: Case,
    pub data_packets: u64,
    pub results: u64,
    pub cycles_per_packet: f64,
    pub mpps: f64,
    /// The emulated RX alone over the same frames (copy into a fresh mbuf,
    /// free), timed right after each operation: what of `cycles_per_packet`
    /// is not the switch core's.
    pub rx_copy_cycles: f64,
    /// The floor: the same frames through the same emulated RX with only
    /// the work no implementation of the protocol can skip: the body's
    /// duplicate digest, the accumulation, and each RESULT's values taken
    /// into a fresh TX mbuf for every path (no parse, admission or headers).
    pub floor_cycles: f64,
    /// The floor without the digest: RX, the sum and the RESULT values, what
    /// a forwarder that sums each frame's payload does (the issue's
    /// throwaway forwarder, with this benchmark's RX and the RESULTs).
    pub sum_cycles: f64,
    /// The same with testpmd's RX: every frame copied from one hot buffer
    /// (net_null copy=1) and summed at its own position.
    pub hot_sum_cycles: f64,
    /// FP32_ARRIVAL with at most 8 ranks (NaN otherwise): the kept-frame design's floor,
    /// RX as the switch's, frames kept until their range completes and
    /// summed straight into the RESULT.
    pub kept_cycles: f64,
    /// `cycles_per_packet` with the engine's DATA fast path off (every frame
    /// through the full parse and dispatch): every other operation of the
    /// same run, the same frames.
    pub full_parse_cycles: f64,
}

impl Measured {
    /// The switch core's cycles against the floor's own work (the floor
    /// minus the RX copy): the engine's overhead as a ratio, issue 28's 1.4x.
    pub fn core_to_work(&self) -> f64 {
        (self.cycles_per_packet - self.rx_copy_cycles) / (self.floor_cycles - self.rx_copy_cycles)
    }
}

/// Runs one case for about `seconds`.
pub fn measure(eal: &Eal, pool: &Mempool, c: &Case, seconds: f64) -> Measured {
    measure_burst(eal, pool, c, seconds, 1)
}

/// `measure` with RX in bursts of `burst` frames (1: one at a time, as
/// `measure`): each burst's frames are all copied into fresh mbufs first,
/// as a PMD's RX burst does, then handed to `SwitchCore::rx_burst` at once.
/// The RX copy and the floors get the same bursts, so core/work compares
/// the engine and the floor on the same RX.
pub fn measure_burst(eal: &Eal, pool: &Mempool, c: &Case, seconds: f64, burst: usize) -> Measured {
    measure_op(eal.tsc_hz(), pool, c, seconds, 1, None, true, burst.max(1))
}

/// Packets per second of `cores` threads running at the same time, each pinned
/// to its own core with its own operations (the way prism-switch splits work:
/// whole operations per core): the sum of each thread's rate over its timed
/// processing (so traffic generation between operations is not counted; a
/// shared-pool or cache contention shows as more cycles per packet).
pub fn scaling(eal: &Eal, pool: &Mempool, c: &Case, seconds: f64, cores: usize, burst: usize) -> f64 {
    let hz = eal.tsc_hz();
    let ids = prism_dataplane::dpdk::online_cpus();
    let rates: f64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..cores)
            .map(|i| {
                let pin = ids.get(i % ids.len().max(1)).copied();
                s.spawn(move || {
                    if let Some(p) = pin {
                        core_affinity::set_for_current(p);
                    }
                    let _lcore = LcoreGuard::register(eal);
                    measure_op(hz, pool, c, seconds, 1 + i as u16, None, false, burst.max(1)).mpps * 1e6
                })
            })
            .collect();
        hs.into_iter().filter_map(|h| h.join().ok()).sum()
    });
    rates
}

/// `measure` for a caller that has its own EAL (the report's memif rig):
/// the switch core in this process, on this thread, for about `seconds`,
/// in prism-switch's RX bursts as `prism-bench switch` measures it.
pub fn measure_in_process(tsc_hz: u64, pool: &Mempool, c: &Case, seconds: f64) -> Measured {
    measure_op(tsc_hz, pool, c, seconds, 1, None, false, prism_dataplane::switch::config::DEFAULT_BURST)
}

/// The switch core's share of the residence time, in this process: the
/// cycles from handing a DATA frame that completes a range to the core until
/// its RESULT frames are in their TX queues, one sample per such frame
/// (about `seconds` of the case's traffic). No link, no driver, no other
/// process: what is left of the real binary's residence time is theirs and
/// the machine's.
pub fn residence_in_process(tsc_hz: u64, pool: &Mempool, c: &Case, seconds: f64) -> hdrhistogram::Histogram<u64> {
    let mut h = crate::histogram(1 << 40);
    measure_op(tsc_hz, pool, c, seconds, 1, Some(&mut h), false, 1);
    h
}

// The switch config is this module's constant (`config`), which a test parses.
#[allow(clippy::expect_used)]
/// `compare_full`: every other operation runs with the engine's fast path
/// off (`Measured::full_parse_cycles`; NaN without). `burst` above 1: RX
/// in bursts (`measure_burst`; no residence samples then).
#[allow(clippy::too_many_arguments)]
fn measure_op(tsc_hz: u64, pool: &Mempool, c: &Case, seconds: f64, op: u16, mut residence: Option<&mut hdrhistogram::Histogram<u64>>, compare_full: bool, burst: usize) -> Measured {
    let cfg = SwitchConfig::parse(&config().to_string()).expect("bench config");
    let mut core = SwitchCore::new(&cfg);
    // 64 windows of 2904 elements per operation; DATA in window order across ranks.
    let len = 2904 * 64;
    let mut j0 = job(c, 1, len);
    j0.identity.op = op;
    let vectors = j0.vectors();
    let mut out: Vec<Sent> = Vec::with_capacity(64);
    let hz = tsc_hz as f64;
    let (mut packets, mut results, mut cycles, mut copy_cycles) = (0u64, 0u64, 0u64, 0u64);
    let (mut floor_cycles, mut sum_cycles, mut hot_sum_cycles, mut kept_cycles) = (0u64, 0u64, 0u64, 0u64);
    let policy = match c.accumulator {
        AccumulatorPolicy::KULISCH_FIXED => Policy::Kulisch { width_bits: j0.kulisch_width() },
        _ => Policy::Fp32Arrival,
    };
    let slots = j0.context().window_elements as usize;
    let mut floor_acc = Accumulator::new(policy, slots);
    let paths = if c.semantics == Semantics::ALLREDUCE { c.ranks as usize } else { 1 };
    // The kept-frame floor sums FP32 bodies, at most 8 of them (`floor`).
    let runs_kept = c.accumulator == AccumulatorPolicy::FP32_ARRIVAL && c.ranks <= 8;
    let mut gen = 1u32;
    let (mut full_cycles, mut full_packets) = (0u64, 0u64);
    while (cycles as f64) < seconds * hz {
        // Every other operation without the fast path (alternated, so both see the same machine).
        let full_parse = compare_full && gen & 1 == 0;
        core.node.set_fast_path(!full_parse);
        let mut j = job(c, gen, len);
        j.identity.op = op;
        gen += 1;
        let mut per_rank: Vec<Vec<(u64, u64, Vec<u8>)>> = (0..j.ranks).map(|r| j.packets(r, &vectors[r as usize])).collect();
        let mut order: Vec<(u16, Vec<u8>)> = Vec::new();
        let most = per_rank.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..most {
            for (r, p) in per_rank.iter_mut().enumerate() {
                if i < p.len() {
                    order.push((j.rank_ports[r % 2], std::mem::take(&mut p[i].2)));
                }
            }
        }
        let bindings = j.bindings();
        for f in [
            control(&j, gen * 16 + 1, Command::STAGE, ControlBody::Stage { context: j.context(), bindings: Records::Typed(&bindings) }),
            control(&j, gen * 16 + 2, Command::COMMIT, ControlBody::Empty),
        ] {
            core.rx(0, &f, &mut out);
            out.clear();
        }
        let mut txq: Vec<Vec<Mbuf>> = vec![Vec::with_capacity(64), Vec::with_capacity(64)];
        let mut rxq: Vec<(u16, Mbuf)> = Vec::with_capacity(burst);
        let t0 = rdtsc();
        for chunk in order.chunks(burst).filter(|_| burst > 1) {
            // A PMD's RX burst: every frame copied into a fresh mbuf, then all handled.
            rxq.extend(chunk.iter().filter_map(|(port, frame)| Some((*port, pool.frame(frame)?))));
            let mut sink = MbufSink { pool, txq: &mut txq, no_mbuf: 0 };
            core.rx_burst(rxq.iter().map(|(port, m)| (*port, m.data())), &mut sink, |_, _, _| {});
            rxq.clear();
            for q in &mut txq {
                results += if full_parse { 0 } else { q.len() as u64 };
                q.clear(); // TX into net_null: freed
            }
        }
        for (port, frame) in order.iter().filter(|_| burst <= 1) {
            // net_null copy=1 RX: a fresh mbuf with the frame copied in.
            let Some(m) = pool.frame(frame) else { continue };
            // RESULTs are built in TX mbufs, as in prism-switch.
            let mut sink = MbufSink { pool, txq: &mut txq, no_mbuf: 0 };
            let t1 = if residence.is_some() { rdtsc() } else { 0 };
            core.rx(*port, m.data(), &mut sink);
            if let Some(h) = residence.as_deref_mut().filter(|_| !full_parse) {
                if txq.iter().any(|q| !q.is_empty()) {
                    h.saturating_record(rdtsc().wrapping_sub(t1).max(1));
                }
            }
            drop(m);
            for q in &mut txq {
                results += if full_parse { 0 } else { q.len() as u64 };
                q.clear(); // TX into net_null: freed
            }
        }
        if full_parse {
            full_cycles += rdtsc() - t0;
            full_packets += order.len() as u64;
            for (k, cmd) in [(3, Command::COMPLETE), (4, Command::RELEASE)] {
                core.rx(0, &control(&j, gen * 16 + k, cmd, ControlBody::Empty), &mut out);
                out.clear();
            }
            assert_eq!(core.node.counters.data_rejected.iter().sum::<u64>(), 0, "bench traffic must be admitted");
            continue;
        }
        cycles += rdtsc() - t0;
        packets += order.len() as u64;
        let t0 = rdtsc();
        if burst > 1 {
            let mut rxq: Vec<Mbuf> = Vec::with_capacity(burst);
            for chunk in order.chunks(burst) {
                rxq.extend(chunk.iter().filter_map(|(_, frame)| pool.frame(frame)));
                std::hint::black_box(&rxq);
                rxq.clear();
            }
        } else {
            for (_, frame) in &order {
                drop(std::hint::black_box(pool.frame(frame)));
            }
        }
        copy_cycles += rdtsc() - t0;
        let at: Vec<(u64, usize)> = order
            .iter()
            .map(|(_, f)| {
                let p = DataPacket::new_unchecked(&f[ETH_HEADER_LEN..]);
                (p.first_element() as u64, p.element_count() as usize)
            })
            .collect();
        let ranks = c.ranks as usize;
        let kept = runs_kept.then_some((Floor::Kept, &mut kept_cycles));
        for (what, total) in [(Floor::Full, &mut floor_cycles), (Floor::SumOnly, &mut sum_cycles), (Floor::SumHotRx, &mut hot_sum_cycles)].into_iter().chain(kept) {
            let t0 = rdtsc();
            floor(pool, &order, &at, ranks, paths, &mut floor_acc, what, burst);
            *total += rdtsc() - t0;
        }
        for (k, cmd) in [(3, Command::COMPLETE), (4, Command::RELEASE)] {
            core.rx(0, &control(&j, gen * 16 + k, cmd, ControlBody::Empty), &mut out);
            out.clear();
        }
        assert_eq!(core.node.counters.data_rejected.iter().sum::<u64>(), 0, "bench traffic must be admitted");
    }
    let cpp = cycles as f64 / packets as f64;
    let per = |x: u64| x as f64 / packets as f64;
    Measured {
        case: *c,
        data_packets: packets,
        results,
        cycles_per_packet: cpp,
        mpps: hz / cpp / 1e6,
        rx_copy_cycles: per(copy_cycles),
        floor_cycles: per(floor_cycles),
        sum_cycles: per(sum_cycles),
        hot_sum_cycles: per(hot_sum_cycles),
        kept_cycles: if runs_kept { per(kept_cycles) } else { f64::NAN },
        full_parse_cycles: if full_packets > 0 { full_cycles as f64 / full_packets as f64 } else { f64::NAN },
    }
}

/// What the floor does.
#[derive(Clone, Copy, PartialEq)]
enum Floor {
    /// RX as the switch's, the digest, the sum and the RESULT values.
    Full,
    /// The same without the digest.
    SumOnly,
    /// The sum without the digest, with testpmd's RX: the first frame copied
    /// again and again from one hot buffer (net_null copy=1), summed at each
    /// frame's own position.
    SumHotRx,
    /// A kept-frame design (FP32_ARRIVAL): RX as the switch's, each frame
    /// kept until its range completes, then the kept bodies summed straight
    /// into the RESULT in one pass (no window, no digest: a duplicate would
    /// be compared with the kept frame).
    Kept,
}

/// The floor of one operation's frames (in window order, `ranks` frames a
/// range, each at `at[i]`: first element and count): emulated RX, the
/// digest (`Floor::Full`), the accumulation, and after each range its
/// values rounded into one TX mbuf and copied into the other paths'.
/// `burst` above 1: RX in bursts, every frame of a burst copied first.
#[allow(clippy::too_many_arguments)]
fn floor(pool: &Mempool, order: &[(u16, Vec<u8>)], at: &[(u64, usize)], ranks: usize, paths: usize, acc: &mut Accumulator, what: Floor, burst: usize) {
    let slots = acc.slots();
    let values_at = ETH_HEADER_LEN + DataRepr::len_with_body(GROUP_DESCRIPTOR_LEN);
    let mut tx: Vec<Mbuf> = Vec::with_capacity(paths);
    let mut kept: Vec<Mbuf> = Vec::with_capacity(ranks);
    let src = |frame: &'_ Vec<u8>| if what == Floor::SumHotRx { pool.frame(&order[0].1) } else { pool.frame(frame) };
    let mut rxq: Vec<Option<Mbuf>> = Vec::with_capacity(burst);
    let mut bursts = order.chunks(burst.max(1)).filter(|_| burst > 1);
    let mut next_burst = |at: usize| {
        if at.is_multiple_of(burst) {
            rxq.clear();
            if let Some(chunk) = bursts.next() {
                rxq.extend(chunk.iter().map(|(_, f)| src(f)));
                rxq.reverse();
            }
        }
        rxq.pop().flatten()
    };
    for (i, ((_, frame), &(first, count))) in order.iter().zip(at).enumerate() {
        let m = if burst > 1 { next_burst(i) } else { src(frame) };
        let Some(m) = m else { continue };
        if what == Floor::Kept {
            kept.push(m);
            if kept.len() == ranks {
                // At most 8 ranks here (the Kept floor runs only then).
                let mut bodies: [&[u8]; 8] = [&[]; 8];
                for (b, k) in bodies.iter_mut().zip(&kept) {
                    *b = k.data().get(values_at..).unwrap_or(&[]);
                }
                let n = kept.len().min(bodies.len());
                results(pool, &mut tx, paths, values_at, count, |out| crate::kept::sum_kept_fp32(&bodies[..n], out, count));
                kept.clear(); // the kept frames freed with their range
            }
            continue;
        }
        let rxd = DataPacket::new_unchecked(&m.data()[ETH_HEADER_LEN..]);
        let body = rxd.body();
        if what == Floor::Full {
            std::hint::black_box(digest(first, first + count as u64, body));
        }
        let slot = (first % slots as u64) as usize;
        let values = &body[GROUP_DESCRIPTOR_LEN..];
        let _ = acc.accumulate(slot, NumFormat::Fp32, &values[..(4 * count).min(values.len())]);
        drop(m);
        if (i + 1) % ranks == 0 {
            results(pool, &mut tx, paths, values_at, count, |out| {
                let _ = acc.take_fp32_run(slot, count, out);
            });
        }
    }
}

/// One range's RESULT values on every path: `fill` writes them into the
/// first TX mbuf (from `values_at`), the other paths' get a copy; then
/// all are freed (TX into net_null).
fn results(pool: &Mempool, tx: &mut Vec<Mbuf>, paths: usize, values_at: usize, count: usize, fill: impl FnOnce(&mut [u8])) {
    let len = values_at + 4 * count;
    let Some(mut first) = pool.alloc_len(len) else { return };
    fill(&mut first.data_mut()[values_at..]);
    for _ in 1..paths {
        let Some(mut t) = pool.alloc_len(len) else { break };
        t.data_mut()[values_at..len].copy_from_slice(&first.data()[values_at..len]);
        tx.push(t);
    }
    tx.push(first);
    tx.clear();
}

/// The job whose DATA frames the pktgen generation benchmark replays.
pub fn pktgen_job() -> Job {
    let c = Case { ranks: 8, semantics: Semantics::ALLREDUCE, accumulator: AccumulatorPolicy::KULISCH_FIXED, pattern: Pattern::Gradient(1e-3) };
    job(&c, 1, 363 * 256)
}

/// testpmd generating 1512-byte frames (a full 363-value FP32 DATA frame at MTU 1500)
/// on one net_null device: its best Tx-pps report.
pub fn testpmd_txonly(seconds: u64) -> Result<f64, BenchError> {
    let out = Proc::new("timeout")
        .args(["-s", "INT", &format!("{}", seconds + 4), "dpdk-testpmd", "--no-huge", "--no-pci", "-l", "0,1", "-m", "1024", "--file-prefix", "prism-bench-txonly"])
        .args(["--vdev", "net_null0,size=1514"])
        .args(["--", "--forward-mode=txonly", "--txpkts=1512", "--auto-start", "--stats-period", "1", "--total-num-mbufs=16384"])
        .output()
        .map_err(BenchError::NoTestpmd)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let best = text.lines().filter_map(|l| l.trim().strip_prefix("Tx-pps:")).filter_map(|r| r.split_whitespace().next()?.parse::<f64>().ok()).fold(0.0, f64::max);
    if best <= 0.0 {
        return Err(BenchError::Run(format!("no Tx-pps in testpmd's output:\n{}", text.lines().rev().take(20).collect::<Vec<_>>().join("\n"))));
    }
    Ok(best)
}

/// testpmd io forwarding between two net_null devices: packets per second
/// of its one forwarding core; `huge`: on hugepages instead of --no-huge.
pub fn testpmd_baseline(seconds: u64, huge: bool) -> Result<f64, BenchError> {
    let out = Proc::new("timeout")
        .args(["-s", "INT", &format!("{}", seconds + 4), "dpdk-testpmd"])
        .args(if huge { &[][..] } else { &["--no-huge"][..] })
        .args(["--no-pci", "-l", "0,1", "-m", if huge { "512" } else { "1024" }, "--file-prefix", "prism-bench-testpmd"])
        .args(["--vdev", "net_null0,copy=1,size=1514", "--vdev", "net_null1,copy=1,size=1514"])
        .args(["--", "--forward-mode=io", "--auto-start", "--stats-period", &seconds.to_string(), "--total-num-mbufs=16384"])
        .output()
        .map_err(BenchError::NoTestpmd)?;
    let text = String::from_utf8_lossy(&out.stdout);
    // Each report has both ports' Rx-pps; their sum is the forwarding core's total.
    // The best report is taken (the first covers start-up, the last may cover the stop).
    let rates: Vec<f64> = text.lines().filter_map(|l| l.trim().strip_prefix("Rx-pps:")).filter_map(|r| r.split_whitespace().next()?.parse().ok()).collect();
    let best = rates.chunks_exact(2).map(|p| p[0] + p[1]).fold(0.0, f64::max);
    if best <= 0.0 {
        return Err(BenchError::Run(format!("no rate in testpmd's output:\n{}", text.lines().rev().take(20).collect::<Vec<_>>().join("\n"))));
    }
    Ok(best)
}

/// Fails with what to do unless at least `pages` free hugepages are
/// reserved and hugetlbfs is mounted (what DPDK needs without --no-huge).
pub fn hugepages_free(pages: u64) -> Result<(), BenchError> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").map_err(BenchError::file("/proc/meminfo"))?;
    let free = meminfo.lines().find_map(|l| l.strip_prefix("HugePages_Free:")).and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
    let mounted = std::fs::read_to_string("/proc/mounts").map_err(BenchError::file("/proc/mounts"))?.lines().any(|l| l.split_whitespace().nth(2) == Some("hugetlbfs"));
    if free < pages || !mounted {
        return Err(BenchError::Usage(format!(
            "--huge needs {pages} free hugepages on a mounted hugetlbfs ({free} free, hugetlbfs {}): run scripts/hugepages.sh as root, or leave out --huge",
            if mounted { "mounted" } else { "not mounted" }
        )));
    }
    Ok(())
}

/// Pause between runs so that testpmd and this process do not share the cores.
pub fn settle() {
    std::thread::sleep(Duration::from_millis(300));
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bench_switch_config_parses() {
        let cfg = prism_dataplane::switch::config::SwitchConfig::parse(&super::config().to_string());
        assert!(cfg.is_ok(), "{:?}", cfg.err());
    }
}
