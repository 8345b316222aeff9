//! `prism-bench switch --rounds`: every case measured once a round, the
//! table's row the median round. Cycles are not judged here (benchmarks do
//! that); what is checked is the rounds' bookkeeping in the JSON.

use std::process::Command;

/// One test: every run of the bench takes the same EAL file prefix, so
/// two at once fail to start.
#[test]
fn rounds_and_bursts() {
    rounds_give_each_case_its_median_round_and_every_ratio();
    bursts_of_rx_admit_every_frame();
}

fn rounds_give_each_case_its_median_round_and_every_ratio() {
    let out = Command::new(env!("CARGO_BIN_EXE_prism-bench"))
        .args(["switch", "--no-baseline", "--only", "FP32,Gradient,ranks=2", "--seconds", "0.02", "--rounds", "3", "--burst", "1", "--json"])
        .output()
        .expect("prism-bench runs");
    assert!(out.status.success(), "prism-bench switch failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["rounds"].as_u64(), Some(3));
    assert_eq!(v["burst"].as_u64(), Some(1));
    let cases = v["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 2, "REDUCE and ALLREDUCE");
    for c in cases {
        let r: Vec<f64> = c["core_to_floor_work_rounds"].as_array().expect("rounds").iter().map(|x| x.as_f64().expect("a ratio")).collect();
        assert_eq!(r.len(), 3, "{}: one ratio a round", c["semantics"]);
        assert!(r.windows(2).all(|w| w[0] <= w[1]), "{}: sorted: {r:?}", c["semantics"]);
        assert!(r.iter().all(|x| x.is_finite() && *x > 0.0), "{}: {r:?}", c["semantics"]);
        assert_eq!(c["core_to_floor_work"].as_f64(), Some(r[1]), "{}: the row is the median round", c["semantics"]);
        assert!(c["data_packets"].as_u64().unwrap_or(0) > 0);
    }
}

/// Bursts, prism-switch's own by default: the switch core takes its frames
/// through `SwitchCore::rx_burst` (the bench fails if any frame is
/// refused) and the JSON says the burst.
fn bursts_of_rx_admit_every_frame() {
    let out = Command::new(env!("CARGO_BIN_EXE_prism-bench")).args(["switch", "--no-baseline", "--only", "FP32,Gradient,ranks=8", "--seconds", "0.02", "--json"]).output().expect("prism-bench runs");
    assert!(out.status.success(), "prism-bench switch in bursts failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(v["burst"].as_u64(), Some(32));
    for c in v["cases"].as_array().expect("cases") {
        assert!(c["data_packets"].as_u64().unwrap_or(0) > 0 && c["results"].as_u64().unwrap_or(0) > 0, "{c}");
        assert!(c["core_to_floor_work"].as_f64().is_some_and(|x| x.is_finite() && x > 0.0), "{c}");
    }
}
