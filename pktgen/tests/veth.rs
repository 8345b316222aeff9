//! pktgen against the real prism-switch binary on DPDK's net_af_packet over
//! veth pairs (needs root and iproute2; the README's test command has both).
//! The same jobs through `--switch sim` give the same result vectors.
// Starts prism-switch (a DPDK program): with the `dpdk` feature only (the default).
#![cfg(feature = "dpdk")]

mod common;

use common as sim;

use prism_dataplane::engine::DataReject;
use prism_dataplane::fixtures::SwitchToml;
use prism_dataplane::switch::stats;
use prism_dataplane::wire::*;
use prism_pktgen::process::{switch_command, Spawned};
use prism_pktgen::*;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The switches busy-poll their cores: one test at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn sh(args: &[&str]) {
    let st = Command::new(args[0]).args(&args[1..]).status().unwrap_or_else(|e| panic!("{}: {e} (is iproute2 installed?)", args[0]));
    assert!(st.success(), "{args:?} failed");
}

/// Two veth pairs, torn down on drop.
struct Veths {
    names: Vec<(String, String)>,
}

impl Veths {
    fn new(tag: &str) -> Veths {
        let names: Vec<(String, String)> = (0..2).map(|i| (format!("{tag}s{i}"), format!("{tag}p{i}"))).collect();
        for (a, b) in &names {
            let _ = Command::new("ip").args(["link", "del", a]).stderr(Stdio::null()).status();
            sh(&["ip", "link", "add", a, "type", "veth", "peer", "name", b]);
            for n in [a, b] {
                let _ = Command::new("sysctl").args(["-qw", &format!("net.ipv6.conf.{n}.disable_ipv6=1")]).status();
                sh(&["ip", "link", "set", n, "up"]);
            }
        }
        Veths { names }
    }
}

impl Drop for Veths {
    fn drop(&mut self) {
        for (a, _) in &self.names {
            let _ = Command::new("ip").args(["link", "del", a]).status();
        }
    }
}

fn switch_binary() -> PathBuf {
    prism_pktgen::process::sibling_binary("prism-switch").unwrap_or_else(|e| panic!("{e}"))
}

/// A running prism-switch: killed and reaped (with its process group) when
/// dropped, so a failing test leaves no busy-polling process behind.
struct Switch {
    proc: Spawned,
    stats: PathBuf,
}

impl Switch {
    fn start(v: &Veths, stats: PathBuf) -> Switch {
        Self::start_with(v, stats, 1)
    }

    /// `workers` polling cores; each port gets one queue pair per worker,
    /// and the switch polls all of them (it refuses to run otherwise).
    fn start_with(v: &Veths, stats: PathBuf, workers: usize) -> Switch {
        let tag = &v.names[0].0;
        let dir = std::env::temp_dir();
        let cfg = dir.join(format!("prism-veth-{tag}.toml"));
        let ready = dir.join(format!("prism-veth-{tag}.ready"));
        std::fs::write(&cfg, SwitchToml::new(&["net_af_packet0", "net_af_packet1"]).to_string()).unwrap();
        let cpus = if workers > 1 { "0,1".to_string() } else { "0".to_string() };
        let vdevs: Vec<String> = v.names.iter().enumerate().map(|(i, (ours, _))| format!("net_af_packet{i},iface={ours},qpairs={workers}")).collect();
        let mut cmd = switch_command(&switch_binary(), &format!("prism-veth-{tag}"), &cpus, &vdevs, &cfg, &stats, &ready);
        cmd.args(["--workers", &workers.to_string()]);
        let mut proc = Spawned::spawn(&mut cmd, "prism-switch", &dir.join(format!("prism-veth-{tag}.log"))).unwrap();
        let r = proc.wait_ready(&ready, Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r["rx_queues"].as_u64(), Some(workers as u64), "every queue pair of the devices is polled");
        Switch { proc, stats }
    }

    /// SIGTERM, a clean exit, and the final stats.
    fn stop(self) -> serde_json::Value {
        self.proc.stop(Duration::from_secs(20)).unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_str(&std::fs::read_to_string(&self.stats).unwrap()).unwrap()
    }
}

#[test]
fn reduce_and_allreduce_through_the_dpdk_switch_match_sim() {
    let _serial = serial();
    let v = Veths::new(&format!("pk{}", std::process::id() % 10000));
    let stats = std::env::temp_dir().join(format!("prism-veth-stats-{}.json", std::process::id()));
    let sw = Switch::start(&v, stats);
    let ifaces: Vec<String> = v.names.iter().map(|(_, b)| b.clone()).collect();
    let mut link = AfPacketLink::open(&ifaces).unwrap();
    let mut gen = 1;
    for ranks in [2u16, 4] {
        for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
            for acc in [AccumulatorPolicy::KULISCH_FIXED, AccumulatorPolicy::FP32_ARRIVAL] {
                // AUTO once (it is the slowest output in a debug build), FP32 otherwise.
                let output = if ranks == 4 && semantics == Semantics::ALLREDUCE && acc == AccumulatorPolicy::KULISCH_FIXED { OutputFormat::AUTO } else { OutputFormat::FP32 };
                let mut j = sim::job(ranks, semantics, acc, output);
                j.vector_len = 10_000;
                gen += 1;
                j.identity.op_gen = gen;
                let r = run(&j, &mut link, &RunOptions::default()).unwrap();
                assert!(r.passed(), "{ranks} {semantics:?} {acc:?}: missing {} mismatches {:?}", r.missing(), r.mismatches());
                // The in-process engine gives the same vectors (FP32_ARRIVAL: when order cannot matter).
                if acc == AccumulatorPolicy::KULISCH_FIXED || ranks == 2 {
                    let mut simlink = SimLink::new(&sim::config());
                    let s = run(&j, &mut simlink, &RunOptions::default()).unwrap();
                    for ((ra, a), (rb, b)) in r.per_rank.iter().zip(&s.per_rank) {
                        assert_eq!(ra, rb);
                        assert!(a.values.iter().zip(&b.values).all(|(x, y)| x.to_bits() == y.to_bits()), "rank {ra}: DPDK and sim results differ");
                    }
                }
            }
        }
    }
    let stats = sw.stop();
    let engine = stats::engine(&stats).unwrap();
    assert!(engine.results_sent > 100);
    assert_eq!(engine.data_rejected.iter().sum::<u64>(), 0);
}

#[test]
fn two_polling_cores_split_operations_and_stay_exact() {
    let _serial = serial();
    let v = Veths::new(&format!("pm{}", std::process::id() % 10000));
    let stats = std::env::temp_dir().join(format!("prism-veth2-stats-{}.json", std::process::id()));
    let sw = Switch::start_with(&v, stats, 2);
    let ifaces: Vec<String> = v.names.iter().map(|(_, b)| b.clone()).collect();
    let mut link = AfPacketLink::open(&ifaces).unwrap();
    // Several operations: they hash to both cores; frames arriving on the other core are steered.
    for op in 1..=6u16 {
        let mut j = sim::job(4, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::FP32);
        j.vector_len = 5_000;
        j.identity.op = op;
        let r = run(&j, &mut link, &RunOptions::default()).unwrap();
        assert!(r.passed(), "op {op}: missing {} mismatches {:?}", r.missing(), r.mismatches());
    }
    // SIGUSR1: the counters so far, written while the switch keeps running.
    let dumped = sw.dump();
    assert!(stats::engine(&dumped).unwrap().data_applied > 0);
    let mut j = sim::job(2, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::FP32);
    j.identity.op = 50;
    assert!(run(&j, &mut link, &RunOptions::default()).unwrap().passed(), "still forwarding after the dump");
    let stats = sw.stop();
    assert_eq!(stats["workers"].as_u64(), Some(2));
    assert!(stats["steered_to_other_core"].as_u64().unwrap() > 0, "some frames crossed cores");
    assert_eq!(stats["steer_dropped"].as_u64(), Some(0));
    let engine = stats::engine(&stats).unwrap();
    assert_eq!(engine.accepted, 7 * 5, "CAPS_QUERY, STAGE, COMMIT, COMPLETE, RELEASE per operation");
    // Nothing accepted was lost: every RESULT the engines built went out of a port.
    let tx: u64 = stats["ports"].as_array().unwrap().iter().map(|p| p["tx"].as_u64().unwrap()).sum();
    let dropped: u64 = stats["ports"].as_array().unwrap().iter().map(|p| p["tx_dropped"].as_u64().unwrap()).sum();
    assert_eq!(dropped, 0);
    assert!(tx >= engine.results_sent);
}

impl Switch {
    /// The counters so far (SIGUSR1), while the switch keeps running.
    fn dump(&self) -> serde_json::Value {
        let _ = std::fs::remove_file(&self.stats);
        self.proc.signal(libc::SIGUSR1);
        for _ in 0..500 {
            std::thread::sleep(Duration::from_millis(20));
            if let Ok(Ok(v)) = std::fs::read_to_string(&self.stats).map(|t| serde_json::from_str::<serde_json::Value>(&t)) {
                return v;
            }
        }
        panic!("no stats dump 10 s after SIGUSR1");
    }
}

/// Each worker's DATA frames applied, from a stats dump.
fn applied_per_worker(stats: &serde_json::Value) -> Vec<u64> {
    stats::per_worker(stats).expect("per_worker in the stats").iter().map(|w| w.data_applied).collect()
}

/// One collective striped over two operations runs on both polling cores
/// of the real switch (its frames applied by each core, by the counters),
/// exact, for both semantics and policies, with and without PROGRESS.
#[test]
fn one_striped_collective_runs_on_two_polling_cores() {
    let _serial = serial();
    let v = Veths::new(&format!("ps{}", std::process::id() % 10000));
    let stats = std::env::temp_dir().join(format!("prism-veths-stats-{}.json", std::process::id()));
    let sw = Switch::start_with(&v, stats, 2);
    let ifaces: Vec<String> = v.names.iter().map(|(_, b)| b.clone()).collect();
    let mut link = AfPacketLink::open(&ifaces).unwrap();
    let mut before = vec![0u64, 0];
    let mut gen = 1;
    for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
        for acc in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
            for replay in [0u16, 8] {
                let mut j = sim::job(4, semantics, acc, OutputFormat::FP32);
                (j.vector_len, j.stripes, j.replay_depth, j.packetization) = (20_000, 2, replay, Packetization::Full);
                j.identity.op = 400;
                gen += 1;
                j.identity.op_gen = gen;
                let what = format!("{semantics:?} {acc:?} replay {replay}");
                let r = run(&j, &mut link, &RunOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(r.passed(), "{what}: missing {} mismatches {:?}", r.missing(), r.mismatches());
                assert_eq!(r.per_rank.iter().map(|(_, p)| p.checked).min(), Some(20_000), "{what}: every element verified");
                let now = applied_per_worker(&sw.dump());
                let this: Vec<u64> = now.iter().zip(&before).map(|(a, b)| a - b).collect();
                // 4 ranks x 56 frames of 363 values (the stripes cut on whole frames: 28 and 28).
                let frames = 4 * 20_000u64.div_ceil(363);
                assert_eq!(this.iter().sum::<u64>(), frames, "{what}: every DATA frame applied once ({this:?})");
                assert!(this.iter().all(|&n| n >= frames * 2 / 5), "{what}: both cores took a stripe ({this:?})");
                before = now;
            }
        }
    }
    let stats = sw.stop();
    assert_eq!(stats["steer_dropped"].as_u64(), Some(0));
    // With PROGRESS a rank cannot see the element window, only its credit: a
    // rank that runs ahead of a slower one (a busy machine) may be refused for
    // want of window and sends again (docs/wire-format.md, flow control).
    // Those refusals are flow control; any other is a bug.
    let e = stats::engine(&stats).unwrap();
    let flow_control = [DataReject::BeyondWindow, DataReject::IntervalsExhausted, DataReject::BytesExhausted];
    let other: Vec<_> = DataReject::ALL.iter().filter(|r| !flow_control.contains(r)).map(|r| (r.name(), e.data_rejected[r.index()])).filter(|x| x.1 > 0).collect();
    assert!(other.is_empty(), "rejected: {other:?}");
    // net_af_packet has no rte_flow: the switch says so per port, installs no rule, and steers in software.
    for p in stats["flow_steering"].as_array().expect("flow_steering per port") {
        assert_eq!(p["rte_flow"], false, "{p}");
        assert!(p["why"].as_str().is_some_and(|w| !w.is_empty()), "{p}");
    }
    assert_eq!(stats["flow_rules"]["installed"].as_u64(), Some(0));
    assert!(stats["steered_to_other_core"].as_u64().unwrap() > 0, "the kernel's fanout put frames on the other core's socket");
}

/// The two-core switch on `qpairs=2` devices, started afresh several times
/// with different rank sets and operations (so frames come from different
/// MACs and land on either of each device's two sockets): every run must pass.
/// Before the switch polled every queue, a run whose frames the kernel put on
/// the second socket lost them all.
#[test]
fn two_core_switch_on_two_queue_devices_passes_every_run() {
    let _serial = serial();
    for (run_no, ranks) in [2u16, 3, 5, 8].into_iter().enumerate() {
        let v = Veths::new(&format!("pq{}{run_no}", std::process::id() % 1000));
        let stats = std::env::temp_dir().join(format!("prism-vethq-stats-{}-{run_no}.json", std::process::id()));
        let sw = Switch::start_with(&v, stats, 2);
        let ifaces: Vec<String> = v.names.iter().map(|(_, b)| b.clone()).collect();
        let mut link = AfPacketLink::open(&ifaces).unwrap();
        for (k, semantics) in [Semantics::ALLREDUCE, Semantics::REDUCE].into_iter().enumerate() {
            let mut j = sim::job(ranks, semantics, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::FP32);
            j.vector_len = 2_000;
            j.seed = 100 + run_no as u64;
            j.identity.op = 300 + (run_no * 10 + k) as u16;
            let r = run(&j, &mut link, &RunOptions::default()).unwrap_or_else(|e| panic!("run {run_no}, {ranks} ranks, {semantics:?}: {e}"));
            assert!(r.passed(), "run {run_no}, {ranks} ranks, {semantics:?}: missing {} mismatches {:?}", r.missing(), r.mismatches());
        }
        let stats = sw.stop();
        assert_eq!(stats::engine(&stats).unwrap().accepted, 2 * 5, "run {run_no}: every CONTROL of both operations");
        assert_eq!(stats["steer_dropped"].as_u64(), Some(0));
    }
}

#[test]
fn every_format_and_output_through_the_dpdk_switch() {
    let _serial = serial();
    use prism_arith::NumFormat;
    let v = Veths::new(&format!("pf{}", std::process::id() % 10000));
    let stats = std::env::temp_dir().join(format!("prism-vethf-stats-{}.json", std::process::id()));
    let sw = Switch::start(&v, stats);
    let ifaces: Vec<String> = v.names.iter().map(|(_, b)| b.clone()).collect();
    let mut link = AfPacketLink::open(&ifaces).unwrap();
    let cases: Vec<(u16, AccumulatorPolicy, OutputFormat, NumFormat, Pattern)> = vec![
        (8, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::FP32, NumFormat::Fp32, Pattern::Gradient(1e-3)),
        (8, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::FP32, NumFormat::Fp32, Pattern::Gradient(1e-3)),
        (3, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::KULISCH, NumFormat::Fp32, Pattern::FullRange),
        (3, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::FP16, NumFormat::Fp16, Pattern::Uniform),
        (3, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::BF16, NumFormat::Bf16, Pattern::Uniform),
        (3, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::INT8, NumFormat::Int8, Pattern::Integers),
        (3, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::AUTO, NumFormat::Int8, Pattern::Integers),
    ];
    for (i, (ranks, acc, output, input, pattern)) in cases.into_iter().enumerate() {
        for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
            let mut j = sim::job(ranks, semantics, acc, output);
            (j.input, j.pattern, j.vector_len) = (input, pattern, 4_000);
            j.identity.op = 100 + i as u16;
            j.identity.op_gen = 1 + u8::from(semantics) as u32;
            let r = run(&j, &mut link, &RunOptions::default()).unwrap();
            assert!(r.passed(), "{ranks} {acc:?} {output:?} {input:?} {semantics:?}: missing {} mismatches {:?}", r.missing(), r.mismatches());
        }
    }
    sw.stop();
}

#[test]
fn progress_and_replay_through_the_dpdk_switch() {
    let _serial = serial();
    let v = Veths::new(&format!("pr{}", std::process::id() % 10000));
    let stats = std::env::temp_dir().join(format!("prism-vethp-stats-{}.json", std::process::id()));
    let sw = Switch::start(&v, stats);
    let ifaces: Vec<String> = v.names.iter().map(|(_, b)| b.clone()).collect();
    let mut link = AfPacketLink::open(&ifaces).unwrap();
    for (i, acc) in [AccumulatorPolicy::KULISCH_FIXED, AccumulatorPolicy::FP32_ARRIVAL].into_iter().enumerate() {
        let mut j = sim::job(4, Semantics::ALLREDUCE, acc, OutputFormat::FP32);
        j.vector_len = 50_000;
        j.replay_depth = 8;
        j.identity.op = 200 + i as u16;
        let r = run(&j, &mut link, &RunOptions::default()).unwrap();
        assert!(r.passed(), "{acc:?}: missing {} mismatches {:?}", r.missing(), r.mismatches());
    }
    let stats = sw.stop();
    let engine = stats::engine(&stats).unwrap();
    assert!(engine.progress_sent > 0);
    assert!(engine.progress_applied > 0, "the ranks' PROGRESS reached the switch's result paths");
    assert_eq!(engine.progress_rejected, 0);
}
