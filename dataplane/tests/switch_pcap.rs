//! pcap conformance of the real prism-switch binary through DPDK's net_pcap:
//! setup, DATA and malformed frames go in as a capture; the RESULT and ACK
//! frames that come out must equal the engine's, and the malformed frames are
//! counted by reason without changing any result.
// Runs prism-switch (a DPDK program): with the `dpdk` feature only (the default).
#![cfg(feature = "dpdk")]

use prism_dataplane::fixtures::sim;
use prism_dataplane::golden;
use prism_dataplane::pcap::{self, Captured};
use prism_dataplane::switch::config::SwitchConfig;
use prism_dataplane::switch::stats;
use prism_dataplane::switch::{Action, SwitchCore};
use prism_dataplane::wire::*;
use sim::*;
use std::path::Path;
use std::process::Command as Proc;
use std::time::Duration;

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/single-pcap.toml");

/// The input capture: CAPS_QUERY, STAGE, COMMIT, both ranks' DATA in element
/// order with malformed frames between them, then COMPLETE and RELEASE.
fn input(s: &Scenario) -> Vec<Vec<u8>> {
    let v = vectors(s);
    let mut rng = rand::SeedableRng::seed_from_u64(5);
    let mut data: Vec<(u64, u16, Vec<u8>)> = Vec::new();
    for r in 0..s.ranks {
        for (first, _, f) in packetize(s, r, &v[r as usize], 2, &mut rng) {
            data.push((first, r, f));
        }
    }
    data.sort_by_key(|d| (d.0, d.1));
    let id = s.identity(2);
    let mut frames = vec![control_frame(id, 1, Command::CAPS_QUERY, ControlBody::Empty), stage_frame(s, 2, 2), control_frame(id, 3, Command::COMMIT, ControlBody::Empty)];
    let bad = golden::malformed();
    for (i, (_, _, f)) in data.into_iter().enumerate() {
        frames.push(f);
        if i % 5 == 0 {
            frames.push(bad[i / 5 % bad.len()].bytes.clone());
        }
    }
    frames.push(control_frame(id, 4, Command::COMPLETE, ControlBody::Empty));
    frames.push(control_frame(id, 5, Command::RELEASE, ControlBody::Empty));
    frames
}

/// What the switch must send: the same frames through the same core, in process.
fn expected(frames: &[Vec<u8>]) -> (Vec<Vec<u8>>, SwitchCore) {
    let cfg = SwitchConfig::load(Path::new(CONFIG)).unwrap();
    let mut core = SwitchCore::new(&cfg);
    let mut out = Vec::new();
    let mut sent = Vec::new();
    for f in frames {
        // Frames of more than one mbuf segment never reach the core in the binary.
        if f.len() > 2048 {
            continue;
        }
        let a = core.rx(0, f, &mut out);
        assert!(matches!(a, Action::Consumed | Action::Flood | Action::Drop(_)));
        sent.extend(out.drain(..).map(|s| s.frame));
    }
    (sent, core)
}

fn run_switch(dir: &Path, input: &[Vec<u8>]) -> (Vec<Vec<u8>>, serde_json::Value) {
    let inp = dir.join("in.pcap");
    let outp = dir.join("out.pcap");
    let stats = dir.join("stats.json");
    let caps: Vec<Captured> = input.iter().enumerate().map(|(i, f)| Captured { ts: Duration::from_micros(i as u64), data: f.clone() }).collect();
    pcap::write_all(std::fs::File::create(&inp).unwrap(), &caps).unwrap();
    let status = Proc::new(env!("CARGO_BIN_EXE_prism-switch"))
        .args(["--no-huge", "--no-pci", "-l", "0", "-m", "256", "--log-level", "lib.eal:error"])
        .arg(format!("--file-prefix=prism-pcap-{}", std::process::id()))
        .arg(format!("--vdev=net_pcap0,rx_pcap={},tx_pcap={}", inp.display(), outp.display()))
        .args(["--", "--config", CONFIG, "--idle-exit-ms", "400", "--stats-interval", "0", "--stats-json"])
        .arg(&stats)
        .status()
        .expect("run prism-switch");
    assert!(status.success(), "prism-switch failed: {status}");
    let out = pcap::read_all(std::fs::File::open(&outp).unwrap()).unwrap();
    let stats: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    (out.into_iter().map(|c| c.data).collect(), stats)
}

#[test]
fn pcap_in_equals_engine_out() {
    for (semantics, acc, output) in [(Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::AUTO), (Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::FP32)] {
        let mut s = Scenario::new(3, semantics, acc);
        s.single_port = true;
        s.output = output;
        s.vector_len = 5000;
        let frames = input(&s);
        let (want, core) = expected(&frames);
        let dir = std::env::temp_dir().join(format!("prism-switch-pcap-{}-{}", std::process::id(), u8::from(semantics)));
        std::fs::create_dir_all(&dir).unwrap();
        let (got, stats) = run_switch(&dir, &frames);
        assert!(want.len() > 10, "the scenario produces RESULTs");
        assert_eq!(got.len(), want.len(), "frames out");
        assert!(got == want, "the switch's frames differ from the engine's");
        // Malformed frames counted by reason, like the engine in process.
        let engine = stats::engine(&stats).expect("the engine's counters in the stats");
        for r in Reason::ALL {
            let n = core.node.counters.malformed[r.index()];
            assert_eq!(engine.malformed[r.index()], n, "{}", r.name());
        }
        assert!(core.node.counters.malformed.iter().sum::<u64>() > 10);
        assert_eq!(engine.data_rejected.iter().sum::<u64>(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
