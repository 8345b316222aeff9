//! The prism-pktgen binary: a verified run with every output file, the DPDK
//! replay mode, and clear errors.

use std::process::Command;

fn pktgen() -> Command {
    Command::new(env!("CARGO_BIN_EXE_prism-pktgen"))
}

#[test]
fn sim_run_writes_pcap_npy_hdr_and_json() {
    let dir = std::env::temp_dir().join(format!("prism-pktgen-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = pktgen()
        .args(["--ranks", "3", "--op", "reduce", "--dest", "2", "--policy", "kulisch", "--output", "auto", "--len", "2000", "--json"])
        .arg("--pcap-out")
        .arg(dir.join("run.pcap"))
        .arg("--npy-out")
        .arg(dir.join("result.npy"))
        .arg("--hdr-log")
        .arg(dir.join("latency.hlog"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "PASS");
    assert_eq!(v["checked_values"], 2000);
    let frames = prism_dataplane::pcap::read_all(std::fs::File::open(dir.join("run.pcap")).unwrap()).unwrap();
    assert!(frames.len() as u64 >= v["frames_sent"].as_u64().unwrap());
    let npy = std::fs::read(dir.join("result.npy")).unwrap();
    assert!(npy.starts_with(b"\x93NUMPY"));
    assert_eq!(npy.len() % 64, (2000 * 8) % 64, "header padded to 64 bytes, then 2000 float64 values");
    let hlog = std::fs::read_to_string(dir.join("latency.hlog")).unwrap();
    assert!(hlog.contains("#[StartTime") || hlog.contains("prism-pktgen"), "{hlog}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_corrupting_switch_fails_the_run_with_the_element() {
    let out = pktgen().args(["--ranks", "2", "--len", "1000", "--corrupt-element", "500"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FAIL") && text.contains("element 500"), "{text}");
}

#[test]
fn bad_arguments_say_what_is_wrong() {
    let out = pktgen().args(["--ranks", "2", "--dest", "5"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--dest 5"));
    let out = pktgen().args(["--switch", "carrier-pigeon"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("carrier-pigeon"));
}

#[test]
#[cfg(feature = "dpdk")]
fn dpdk_replay_generates_at_rate() {
    let out = pktgen()
        .args(["--switch", "dpdk:net_null0", "--blast", "0.3", "--len", "20000", "--json"])
        .arg(format!("--eal=--no-huge --no-pci -l 0 -m 256 --log-level lib.eal:error --file-prefix pktgen-cli-{} --vdev net_null0", std::process::id()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["pps"].as_f64().unwrap() > 100_000.0, "{v}");
}

fn npy(path: &std::path::Path, descr: &str, payload: &[u8], n: usize) {
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({n},), }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend((h.len() as u16).to_le_bytes());
    b.extend(h.as_bytes());
    b.extend(payload);
    std::fs::write(path, b).unwrap();
}

#[test]
fn vectors_from_npy_and_raw_files() {
    let dir = std::env::temp_dir().join(format!("prism-pktgen-in-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for r in 0..2u32 {
        let vals: Vec<u8> = (0..500).flat_map(|i| (i as f32 * 0.5 + r as f32).to_le_bytes()).collect();
        npy(&dir.join(format!("r{r}.npy")), "<f4", &vals, 500);
        std::fs::write(dir.join(format!("r{r}.bin")), (0..300).map(|i| (i % 7) as i8 as u8 + r as u8).collect::<Vec<u8>>()).unwrap();
    }
    let out = pktgen().args(["--ranks", "2", "--json", "--input-file"]).arg(dir.join("r{rank}.npy")).arg("--npy-out").arg(dir.join("sum.npy")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["verdict"].as_str(), v["checked_values"].as_u64()), (Some("PASS"), Some(1000)));
    let sum = std::fs::read(dir.join("sum.npy")).unwrap();
    let last = f64::from_le_bytes(sum[sum.len() - 8..].try_into().unwrap());
    assert_eq!(last, 499.0 * 0.5 * 2.0 + 1.0);
    let out = pktgen().args(["--ranks", "2", "--input", "int8", "--output", "int8", "--json", "--input-file"]).arg(dir.join("r{rank}.bin")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A dtype that does not match the input format is refused with the reason.
    let out = pktgen().args(["--ranks", "2", "--input", "fp16", "--input-file"]).arg(dir.join("r{rank}.npy")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'<f2'"), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
