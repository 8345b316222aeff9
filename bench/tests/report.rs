//! A short scenario end to end through both switches (prism-switch over DPDK
//! net_af_packet on a veth pair, and the RTL under Verilator): every RESULT
//! exact on both, one latency sample per RESULT frame, the report's files
//! written, the HdrHistogram logs read back with the same counts.

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use prism_bench::latency::{self, Scenario, Software};
use prism_bench::report;

fn scenario(name: &str, semantics: &str) -> Scenario {
    toml::from_str(&format!("name = \"{name}\"\nranks = 3\nsemantics = \"{semantics}\"\nvector_len = 2904\noperations = 2\nseed = 5\npacketization = \"random\"\n")).expect("scenario")
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
            let row =
                md.lines().find(|l| l.starts_with("| software |") && l.ends_with(&format!(" {want} |")) && md.contains("## Residence time")).unwrap_or_else(|| panic!("no residence row in:\n{md}"));
            assert!(row.contains(&format!("| {:.2} us |", p50 as f64 / 1000.0)), "report.md's p50 is summary.json's: {row} vs {p50} ns");
            // The same case in process beside the binaries' rate, report.md equal to summary.json.
            let cpp = summary["software_in_process"]["cycles_per_data_packet"].as_f64().expect("an in-process figure on memif");
            assert!(cpp > 0.0);
            assert!(md.contains(&format!("{cpp:.0} cycles per DATA packet")), "report.md gives summary.json's {cpp:.0} cycles per DATA packet");
            // The core's own share of the residence time, and the polling core's interruptions.
            let ip = &summary["software_in_process"];
            assert!(ip["residence_samples"].as_u64().unwrap() > 0, "in-process residence samples");
            let ip50 = ip["residence_ns"]["p50"].as_f64().unwrap();
            assert!(ip50 > 0.0);
            let core_row = md.lines().find(|l| l.starts_with("| software core in process")).unwrap_or_else(|| panic!("no in-process residence row in:\n{md}"));
            assert!(core_row.contains(&format!("| {:.2} us |", ip50 / 1000.0)), "report.md's in-process p50 is summary.json's: {core_row} vs {ip50} ns");
            let noise = &summary["software_core_noise"];
            assert!(noise["seconds"].as_f64().unwrap() >= 1.0 && noise["gaps_per_s"].as_f64().is_some(), "{noise}");
            assert!(md.contains("The switch's polling core, probed just before"), "{md}");
            // What the busy threads lost to other tasks: both read (their
            // run times move at the scheduler's ticks, so a run this short
            // may read 0), report.md gives summary.json's figures.
            let rq = &summary["software_run_queue"];
            for who in ["pktgen", "switch_poller"] {
                assert!(rq[who]["run_ns"].as_u64().is_some() && rq[who]["timeslices"].as_u64().is_some(), "{who}'s schedstat in {rq}");
            }
            assert!(rq["seconds"].as_f64().is_some_and(|s| s > 0.0), "{rq}");
            let wait_ms = |who: &str| rq[who]["wait_ns"].as_u64().unwrap() as f64 / 1e6;
            assert!(
                md.contains(&format!("pktgen's thread {:.2} ms, the switch's polling thread {:.2} ms", wait_ms("pktgen"), wait_ms("switch_poller"))),
                "report.md's run-queue wait is summary.json's ({rq}):\n{md}"
            );
            // The real binary's split: one sample per range (the frame that completes it).
            let ranges = want / paths;
            assert_eq!(summary["software"]["residence_engine_ns"]["p50"].as_u64().map(|v| v > 0), Some(true));
            for part in ["receive burst to engine", "engine, completing frame"] {
                let row = md.lines().find(|l| l.starts_with(&format!("| software: {part} |"))).unwrap_or_else(|| panic!("no {part} row in:\n{md}"));
                assert!(row.ends_with(&format!(" {ranges} |")), "one sample per completing frame: {row}");
            }
        } else {
            assert!(o.software.residence.is_none());
        }
        // The hardware's residence time, measured the same way: one sample
        // per RESULT frame, in ns and in cycles, report.md equal to summary.json.
        let hr = o.hardware.residence.as_ref().expect("the RTL gives its residence time");
        assert_eq!(hr.len(), want, "one hardware residence sample per RESULT frame");
        assert_eq!(o.hardware.residence_cycles.as_ref().map(|c| c.len()), Some(want));
        assert_eq!(summary["hardware"]["residence_samples"], want);
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        let hp50 = summary["hardware"]["residence_ns"]["p50"].as_u64().unwrap();
        let hrow = md.lines().find(|l| l.starts_with("| hardware |") && l.ends_with(&format!(" {want} |"))).unwrap_or_else(|| panic!("no hardware residence row in:\n{md}"));
        assert!(hrow.contains(&format!("| {:.2} us |", hp50 as f64 / 1000.0)), "{hrow} vs {hp50} ns");
        let cp50 = summary["hardware"]["residence_cycles"]["p50"].as_u64().unwrap();
        assert!(md.contains(&format!("| hardware (cycles) | {cp50} |")), "cycles row with p50 {cp50}:\n{md}");
        // One path: every sample is a range's first RESULT (the target's
        // interval); with more paths a RESULT also waits for the paths before it.
        assert!(cp50 > 0 && (paths > 1 || cp50 <= 64), "hardware residence p50 {cp50} cycles (target: at most 64)");
        // Each range's first RESULT: one sample a range (8 ranges an
        // operation). With one path it is every RESULT (at most 64 cycles at
        // the median, above); with three on one port at full rate, egress
        // carries three times the ingress bytes and RESULTs queue.
        let first = o.hardware.first_residence_cycles.as_ref().expect("first-RESULT residence");
        assert_eq!(first.len(), 8 * 2, "one first-RESULT sample per range");
        assert!(first.value_at_quantile(0.5) <= cp50, "a range's first RESULT leaves no later than the median RESULT");
        // The MAC/PHY allowance row: its own row, the hardware's samples plus the stated allowance.
        let ap50 = summary["hardware_with_mac_phy"]["latency_ns"]["p50"].as_u64().unwrap();
        let lp50 = summary["hardware"]["latency_ns"]["p50"].as_u64().unwrap();
        let allowance = summary["hardware_with_mac_phy"]["allowance_ns"].as_u64().unwrap();
        assert_eq!(allowance, latency::MAC_PHY_ALLOWANCE_NS);
        assert!(ap50.abs_diff(lp50 + allowance) <= (lp50 + allowance) / 500 + 1, "allowance row p50 {ap50} vs {lp50} + {allowance}");
        let arow = md.lines().find(|l| l.starts_with("| hardware + MAC/PHY allowance")).unwrap_or_else(|| panic!("no allowance row:\n{md}"));
        assert!(arow.contains(&format!("| {:.2} us |", ap50 as f64 / 1000.0)), "{arow} vs {ap50}");
        assert!(summary["software"]["data_pps"].as_f64().unwrap() > 0.0 && summary["hardware"]["data_pps"].as_f64().unwrap() > 0.0);
        let svg = std::fs::read_to_string(out.join("latency-spectrum.svg")).unwrap();
        assert!(svg.contains("software") && svg.contains("hardware"), "both switches on one figure");
        dirs.push(out);
    }
    let t = report::compare(&dirs[0], &dirs[1]).unwrap();
    assert!(t.contains("| hardware | p99.9 |") && t.contains("elements/s"), "{t}");
    assert!(t.contains("| hardware | residence p50 |") && t.contains("| software | DATA frames/s |") && t.contains("| hardware + MAC/PHY | latency p99 |"), "{t}");
    // The memif run's residence split, beside the veth run's nothing.
    assert!(t.contains("| software | residence, engine, p50 |") && t.contains("| software | residence, receive burst to engine, p99 |"), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scenario_errors_name_the_field() {
    let dir = std::env::temp_dir().join(format!("prism-bench-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.toml");
    std::fs::write(&p, "name = \"x\"\nranks = 2\nsemantics = \"gather\"\nvector_len = 10\n").unwrap();
    let e = Scenario::load(&p).unwrap_err().to_string();
    assert!(e.contains("semantics 'gather'"), "{e}");
    std::fs::write(&p, "name = \"x\"\nranks = 2\nsemantics = \"reduce\"\nvector_len = 10\nrate = 5\n").unwrap();
    let e = Scenario::load(&p).unwrap_err().to_string();
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

/// Load levels on the memif path: the sustained rate measured first, each
/// level offered its share of it to both switches, every RESULT exact, a
/// report per level and loads.json with offered and achieved rates.
#[test]
fn load_levels_on_memif() {
    let dir = std::env::temp_dir().join(format!("prism-bench-loads-{}", std::process::id()));
    let sc = scenario("t-loads", "allreduce");
    let levels = prism_bench::loads::parse_levels(&["50".to_string(), "max".to_string()]).unwrap();
    let r = prism_bench::loads::run(&sc, "name = \"t\"", &Software::Memif, &levels, &dir, "prism-bench report ... --loads 50,max", true).unwrap();
    assert!(r.exact, "every RESULT exact at every level");
    assert!(r.sustained_pps > 0.0);
    assert_eq!(r.levels.len(), 2);
    let (_, offered, half) = &r.levels[0];
    let offered = offered.expect("50% has an offered rate");
    assert!((offered - r.sustained_pps / 2.0).abs() < 1.0, "{offered} vs {}", r.sustained_pps);
    // Paced at half the sustained rate, neither switch runs above the offer by much.
    for s in [&half.software, &half.hardware] {
        assert!(s.data_pps() > 0.0 && s.data_pps() < offered * 1.5, "{}: achieved {} at offered {offered}", s.name, s.data_pps());
        assert_eq!(s.residence.as_ref().map(|h| h.len()), Some(s.results), "{}: one residence sample per RESULT", s.name);
    }
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("loads.json")).unwrap()).unwrap();
    assert_eq!(j["levels"].as_array().map(|a| a.len()), Some(2));
    // JSON keeps the rate to within float printing (not always the last bit).
    let written = j["levels"][0]["offered_data_pps"].as_f64().expect("the 50% level's offered rate");
    assert!((written - offered).abs() <= offered * 1e-12, "{written} vs {offered}");
    assert!(j["levels"][1]["offered_data_pps"].is_null());
    for l in ["load-50", "load-max"] {
        assert!(dir.join(l).join("report.md").exists() && dir.join(l).join("summary.json").exists(), "{l}");
    }
    let md = std::fs::read_to_string(dir.join("loads.md")).unwrap();
    assert!(md.contains("| 50% |") && md.contains("| max |"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}
