//! prism-pktgen and prism-switch as two DPDK processes joined by `net_memif`
//! (shared memory, no kernel), each pinned to its own core: the path a user
//! takes toward a switch on another port, with a link that comes up only
//! when the client connects. pktgen waits for the link and treats a full TX
//! queue as backpressure; every RESULT is verified exactly.
// Starts prism-switch (a DPDK program): with the `dpdk` feature only (the default).
#![cfg(feature = "dpdk")]

use prism_dataplane::fixtures::SwitchToml;
use prism_dataplane::switch::stats;
use prism_pktgen::process::{switch_command, Spawned};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn binary(name: &str) -> PathBuf {
    prism_pktgen::process::sibling_binary(name).unwrap_or_else(|e| panic!("{e}"))
}

/// One job on a switch of its own. pktgen lingers after its summary and the
/// switch stops first: DPDK 22.11's memif PMD frees the shared rings when
/// its peer leaves, without waiting for the cores polling them (a SIGSEGV
/// in the switch, seen in CI when pktgen left first).
fn one_job(dir: &std::path::Path, tag: &str, (op, policy, ranks, op_id): (&str, &str, &str, u32)) {
    let sock = dir.join(format!("memif{op_id}.sock"));
    let cfg = dir.join("switch.toml");
    let ready = dir.join(format!("switch{op_id}.ready"));
    let stats = dir.join(format!("switch{op_id}.json"));
    let residence = dir.join(format!("residence{op_id}.hlog"));
    let summary = dir.join(format!("pktgen{op_id}.json"));
    std::fs::write(&cfg, SwitchToml::new(&["net_memif0", "net_memif1"]).to_string()).unwrap();
    let vdevs = |role: &str| -> Vec<String> { (0..2).map(|i| format!("net_memif{i},role={role},id={i},socket={}", sock.display())).collect() };
    let mut cmd = switch_command(&binary("prism-switch"), &format!("prism-{tag}-sw{op_id}"), "0", &vdevs("server"), &cfg, &stats, &ready);
    cmd.args(["--cpus", "0", "--residence-hlog"]).arg(&residence);
    let mut sw = Spawned::spawn(&mut cmd, "prism-switch", &dir.join(format!("switch{op_id}.log"))).unwrap();
    let r = sw.wait_ready(&ready, Duration::from_secs(30)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r["ports"][0]["link_up"].as_bool(), Some(false), "a memif server's link is down until its client connects");

    let mut eal = vec!["--no-huge".to_string(), "--no-pci".into(), "-l".into(), "1".into(), "-m".into(), "256".into(), "--log-level".into(), "lib.eal:error".into()];
    eal.push(format!("--file-prefix=prism-{tag}-pg{op_id}"));
    eal.extend(vdevs("client").into_iter().map(|v| format!("--vdev={v}")));
    let mut pg = Command::new(binary("prism-pktgen"));
    pg.args(["--switch", "dpdk:net_memif0,net_memif1"])
        .arg(format!("--eal={}", eal.join(" ")))
        .args(["--op", op, "--policy", policy, "--ranks", ranks, "--len", "20000", "--rank-ports", "0,1", "--mtu", "1500", "--linger", "--json-out"])
        .arg(&summary)
        .args(["--op-id", &op_id.to_string(), "--timeout-ms", "10000", "--link-timeout-ms", "20000"]);
    let out_log = dir.join(format!("pktgen{op_id}.log"));
    let mut pg = Spawned::spawn(&mut pg, "prism-pktgen", &out_log).unwrap();
    let v = pg.wait_ready(&summary, Duration::from_secs(120)).unwrap_or_else(|e| panic!("pktgen {op} {policy}: {e}"));
    assert_eq!(v["verdict"], "PASS", "{v}");
    assert_eq!(v["check"], "Exact", "{v}");
    assert_eq!(v["missing"].as_u64(), Some(0));
    assert!(v["checked_values"].as_u64().unwrap() >= 20_000);
    // The poller first, then the idle client (it sees the disconnect and stays up until told).
    sw.stop(Duration::from_secs(20)).unwrap_or_else(|e| panic!("{e}"));
    let status = pg.stop(Duration::from_secs(20)).unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "pktgen {op} {policy}: {status}");

    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let engine = stats::engine(&s).unwrap();
    assert_eq!(engine.accepted, 5, "CAPS_QUERY, STAGE, COMMIT, COMPLETE, RELEASE");
    assert!(engine.results_sent > 0);
    // Residence time: one sample for every RESULT frame (no PROGRESS here, so every RESULT follows a completing DATA).
    let tx_dropped: u64 = s["ports"].as_array().unwrap().iter().map(|p| p["tx_dropped"].as_u64().unwrap()).sum();
    assert_eq!(tx_dropped, 0);
    assert_eq!(s["residence_ns"]["samples"].as_u64(), Some(engine.results_sent), "{}", s["residence_ns"]);
    assert!(s["residence_ns"]["p50"].as_u64().unwrap() > 0);
    assert!(s["residence_ns"]["max"].as_u64().unwrap() >= s["residence_ns"]["p50"].as_u64().unwrap());
    let hlog = std::fs::read_to_string(&residence).unwrap();
    assert!(hlog.contains("residence") && hlog.lines().any(|l| l.starts_with("Tag=residence,")), "{hlog}");
    assert_eq!(engine.data_rejected.iter().sum::<u64>(), 0);
}

#[test]
fn pktgen_over_memif_against_the_switch_is_exact() {
    let tag = format!("m{}", std::process::id());
    let dir = std::env::temp_dir().join(format!("prism-memif-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for job in [("allreduce", "kulisch", "4", 1), ("reduce", "fp32-arrival", "3", 2)] {
        one_job(&dir, &tag, job);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
