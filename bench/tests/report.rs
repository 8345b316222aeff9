//! A short scenario end to end through both switches (prism-switch over DPDK
//! net_af_packet on a veth pair, and the RTL under Verilator): every RESULT
//! exact on both, one latency sample per RESULT frame, the report's files
//! written, the HdrHistogram logs read back with the same counts.

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use prism_bench::latency::{self, Scenario, Software};
use prism_bench::report;

fn scenario(name: &str, semantics: &str) -> Scenario {
    toml::from_str(&format!(
        "name = \"{name}\"\nranks = 3\nsemantics = \"{semantics}\"\nvector_len = 2904\noperations = 2\nseed = 5\npacketization = \"random\"\n"
    ))
    .expect("scenario")
}

fn hlog_count(path: &std::path::Path) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    let mut total = 0;
    for e in IntervalLogIterator::new(&bytes) {
        if let Ok(LogEntry::Interval(h)) = e {
            let raw = base64_decode(h.encoded_histogram());
            let hist: hdrhistogram::Histogram<u64> = Deserializer::new().deserialize(&mut raw.as_slice()).unwrap();
            total += hist.len();
        }
    }
    total
}

/// Standard base64 (the log's histogram encoding), without a dependency.
fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= (val(c) as u32) << (18 - 6 * i);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

#[test]
fn short_scenario_through_both_switches() {
    let dir = std::env::temp_dir().join(format!("prism-bench-test-{}", std::process::id()));
    let mut dirs = Vec::new();
    // ALLREDUCE through the memif path (the default), REDUCE through veth.
    for (name, semantics, paths, mode) in [("t-allreduce", "allreduce", 3u64, Software::Memif), ("t-reduce", "reduce", 1, Software::Veth)] {
        let sc = scenario(name, semantics);
        let out = dir.join(name);
        std::fs::create_dir_all(&out).unwrap();
        let frames = latency::write_scenario_pcap(&sc, &out.join("scenario.pcap")).unwrap();
        assert!(frames >= 3 * 8, "every rank's DATA recorded");
        let o = latency::run(&sc, mode.clone(), false).unwrap();
        // 2904 elements = 8 canonical packets of 363, per path, per operation.
        let want = paths * 8 * 2;
        for s in [&o.software, &o.hardware] {
            assert!(s.passed(2), "{}: {:?}", s.name, s.failures);
            assert_eq!(s.results, want, "{}: RESULT frames", s.name);
            assert_eq!(s.latency.len(), want, "{}: one latency sample per RESULT frame", s.name);
            assert_eq!(s.operation.len(), 2, "{}: one sample per operation", s.name);
        }
        let html = report::write(&o, &out, &["prism-bench report ...".into()], "name = \"t\"", frames).unwrap();
        for f in ["report.html", "report.md", "summary.json", "software.hlog", "hardware.hlog", "latency-spectrum.svg", "latency-cdf.svg", "scenario.pcap"] {
            let p = out.join(f);
            assert!(p.metadata().map(|m| m.len() > 100).unwrap_or(false), "{} missing or empty", p.display());
        }
        assert!(html.ends_with("report.html"));
        assert_eq!(hlog_count(&out.join("software.hlog")), want);
        assert_eq!(hlog_count(&out.join("hardware.hlog")), want);
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["hardware"]["exact"], true);
        assert_eq!(summary["software"]["latency_samples"], want);
        if mode == Software::Memif {
            // The switch's own residence time: one sample per RESULT frame of this scenario.
            let r = o.software.residence.as_ref().expect("memif gives the switch's residence time");
            assert_eq!(r.len(), want, "one residence sample per RESULT frame");
            assert_eq!(summary["software"]["residence_samples"], want);
            let p50 = summary["software"]["residence_ns"]["p50"].as_u64().unwrap();
            assert!(p50 > 0 && p50 <= r.max());
            let md = std::fs::read_to_string(out.join("report.md")).unwrap();
            let row = md.lines().find(|l| l.starts_with("| software |") && l.ends_with(&format!(" {want} |")) && md.contains("## Residence time")).unwrap_or_else(|| panic!("no residence row in:\n{md}"));
            assert!(row.contains(&format!("| {:.2} us |", p50 as f64 / 1000.0)), "report.md's p50 is summary.json's: {row} vs {p50} ns");
        } else {
            assert!(o.software.residence.is_none());
        }
        let svg = std::fs::read_to_string(out.join("latency-spectrum.svg")).unwrap();
        assert!(svg.contains("software") && svg.contains("hardware"), "both switches on one figure");
        dirs.push(out);
    }
    let t = report::compare(&dirs[0], &dirs[1]).unwrap();
    assert!(t.contains("| hardware | p99.9 |") && t.contains("elements/s"), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scenario_errors_name_the_field() {
    let dir = std::env::temp_dir().join(format!("prism-bench-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.toml");
    std::fs::write(&p, "name = \"x\"\nranks = 2\nsemantics = \"gather\"\nvector_len = 10\n").unwrap();
    let e = Scenario::load(&p).unwrap_err();
    assert!(e.contains("semantics 'gather'"), "{e}");
    std::fs::write(&p, "name = \"x\"\nranks = 2\nsemantics = \"reduce\"\nvector_len = 10\nrate = 5\n").unwrap();
    let e = Scenario::load(&p).unwrap_err();
    assert!(e.contains("unknown field"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_shipped_scenario_loads() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/bench");
    let mut n = 0;
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            Scenario::load(&p).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 17, "{n} scenarios");
}
