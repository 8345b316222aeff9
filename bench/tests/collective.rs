//! `prism-bench collective` end to end on a small vector: the collective
//! striped over two cores in process and through the real binaries on
//! net_memif. Rates are not judged here (benchmarks do that); what is
//! checked is that each stripe ran on its own core and every frame was
//! applied (the bench fails otherwise), and that the memif collective was
//! exact (pktgen's verdict, or the bench fails).

use std::process::Command;

#[test]
fn a_collective_striped_over_two_cores_runs_on_both() {
    let out = Command::new(env!("CARGO_BIN_EXE_prism-bench")).args(["collective", "--elements", "20000", "--rounds", "1", "--gradient-only", "--memif", "--json"]).output().expect("prism-bench runs");
    assert!(out.status.success(), "prism-bench collective failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let cases = v["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 2, "FP32_ARRIVAL and KULISCH_FIXED");
    // 4 ranks x 56 frames of 363 values; the stripes cut on whole frames (28 and 28 a rank).
    let frames = 4 * 20_000u64.div_ceil(363);
    for c in cases {
        let per_core: Vec<u64> = c["n_cores"]["frames_per_core"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        assert_eq!(per_core, vec![frames / 2, frames / 2], "{}: in process, half the frames on each core", c["accumulator"]);
        assert!(c["ratio"].as_f64().unwrap() > 0.0);
        let applied: Vec<u64> = c["memif"]["n_cores"]["data_applied_per_core"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        assert_eq!(applied.len(), 2, "{}: two polling cores", c["accumulator"]);
        assert_eq!(applied.iter().sum::<u64>(), frames, "{}: every DATA frame applied once", c["accumulator"]);
        assert!(applied.iter().all(|&n| n == frames / 2), "{}: each core applied its stripe: {applied:?}", c["accumulator"]);
        // pktgen sent each stripe on its owner's memif queue: nothing crossed cores in the switch.
        assert_eq!(c["memif"]["n_cores"]["steered_to_other_core"].as_u64(), Some(0), "{}", c["accumulator"]);
    }
}
