//! The report of a software-vs-hardware run: percentile table, HdrHistogram
//! logs, a percentile-spectrum plot and a CDF (SVG, both switches on one
//! figure), report.md, report.html and summary.json; and `compare`.

use crate::latency::{write_hlog, Outcome, Side, Software, MAC_PHY_ALLOWANCE_NS, MAC_PHY_ALLOWANCE_SOURCE, PERCENTILES};
use hdrhistogram::Histogram;
use plotters::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use crate::BenchError;

fn plot(e: impl std::fmt::Display) -> BenchError {
    BenchError::Plot(e.to_string())
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// p50 .. p99.99 and max of a histogram, in ns.
fn percentiles(h: &Histogram<u64>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = PERCENTILES.iter().map(|p| (format!("p{p}"), h.value_at_quantile(p / 100.0))).collect();
    v.push(("max".into(), h.max()));
    v
}

/// A histogram with a constant added to every sample (the MAC/PHY allowance row).
fn shifted(h: &Histogram<u64>, add: u64) -> Histogram<u64> {
    let mut out = Histogram::new_from(h);
    for v in h.iter_recorded() {
        let _ = out.record_n(v.value_iterated_to() + add, v.count_at_value());
    }
    out
}

/// The hardware's wire-to-wire latency with the stated MAC/PHY allowance added.
pub fn hardware_with_allowance(o: &Outcome) -> Histogram<u64> {
    shifted(&o.hardware.latency, MAC_PHY_ALLOWANCE_NS)
}

fn pmap(h: &Histogram<u64>) -> serde_json::Map<String, Value> {
    percentiles(h).into_iter().map(|(k, v)| (k, json!(v))).collect()
}

fn side_json(s: &Side, operations: u32) -> Value {
    let p = pmap(&s.latency);
    json!({
        "target": s.target,
        "clock": s.clock,
        "exact": s.passed(operations),
        "failures": s.failures,
        "operations_passed": s.operations_passed,
        "result_frames": s.results,
        "latency_samples": s.latency.len(),
        "latency_ns": p,
        "latency_mean_ns": s.latency.mean(),
        "operation_ns": { "p50": s.operation.value_at_quantile(0.5), "max": s.operation.max() },
        "frames_sent": s.frames_sent,
        "elements_per_s": s.elements_per_s(),
        "data_frames": s.data_frames,
        "data_pps": s.data_pps(),
        "residence_samples": s.residence.as_ref().map(|h| h.len()),
        "residence_ns": s.residence.as_ref().map(pmap),
        "residence_before_engine_ns": s.residence_parts.as_ref().map(|[w, _]| pmap(w)),
        "residence_engine_ns": s.residence_parts.as_ref().map(|[_, e]| pmap(e)),
        "residence_cycles": s.residence_cycles.as_ref().map(pmap),
        "first_result_residence_cycles": s.first_residence_cycles.as_ref().map(pmap),
    })
}

/// The machine, tools and versions, for reproducibility.
fn machine() -> Vec<(String, String)> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpu = read("/proc/cpuinfo").lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).unwrap_or("?").trim().to_string();
    // The machine's, from /proc/cpuinfo: available_parallelism is this
    // thread's affinity, and the memif rig's EAL has pinned it to one CPU
    // by the time a report is written (reports read "1 logical cores").
    let cores = read("/proc/cpuinfo").lines().filter(|l| l.starts_with("processor")).count();
    let mem = read("/proc/meminfo").lines().next().unwrap_or("").split_whitespace().nth(1).and_then(|k| k.parse::<u64>().ok()).map_or("?".into(), |k| format!("{:.1} GiB", k as f64 / 1048576.0));
    let cmd = |c: &str, a: &[&str]| std::process::Command::new(c).args(a).output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).filter(|s| !s.is_empty()).unwrap_or("?".into());
    vec![
        ("cpu".into(), format!("{cpu}, {cores} logical cores")),
        ("memory".into(), mem),
        ("kernel".into(), cmd("uname", &["-sr"])),
        ("prism".into(), env!("CARGO_PKG_VERSION").into()),
        ("dpdk".into(), cmd("pkg-config", &["--modversion", "libdpdk"])),
        ("verilator".into(), cmd("verilator", &["--version"])),
    ]
}

/// The latency axis of both plots, in us (log scale: strictly positive), with margins.
fn latency_range(sides: &[&Side]) -> (f64, f64) {
    let max_us = sides.iter().map(|s| us(s.latency.max())).fold(0.01f64, f64::max) * 1.2;
    let min_us = sides.iter().map(|s| us(s.latency.min().max(1))).fold(f64::MAX, f64::min).max(1e-3) / 1.5;
    (min_us, max_us)
}

/// Percentile spectrum (HdrHistogram style: x = 1/(1-p), log) of both sides.
fn plot_spectrum(path: &Path, sides: &[&Side], title: &str) -> Result<(), BenchError> {
    let root = SVGBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(plot)?;
    let (min_us, max_us) = latency_range(sides);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((1.0f64..1e5).log_scale(), (min_us..max_us).log_scale())
        .map_err(plot)?;
    chart
        .configure_mesh()
        .x_desc("percentile")
        .y_desc("latency (us)")
        .x_label_formatter(&|x| {
            let p = 100.0 * (1.0 - 1.0 / x);
            if p < 1.0 {
                "0%".into()
            } else {
                format!("{}%", format!("{p:.3}").trim_end_matches('0').trim_end_matches('.'))
            }
        })
        .draw()
        .map_err(plot)?;
    for (i, s) in sides.iter().enumerate() {
        let color = [BLUE, RED][i % 2];
        let mut pts = Vec::new();
        for k in 0..=400 {
            let x = 10f64.powf(k as f64 * 5.0 / 400.0);
            let q = 1.0 - 1.0 / x;
            if s.latency.is_empty() {
                break;
            }
            pts.push((x, us(s.latency.value_at_quantile(q)).max(min_us)));
        }
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(plot)?
            .label(format!("{} ({} samples)", s.name, s.latency.len()))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart.configure_series_labels().border_style(BLACK).background_style(WHITE).draw().map_err(plot)?;
    root.present().map_err(plot)
}

/// CDF of both sides, latency on a log axis.
fn plot_cdf(path: &Path, sides: &[&Side], title: &str) -> Result<(), BenchError> {
    let root = SVGBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(plot)?;
    let (min_us, max_us) = latency_range(sides);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((min_us..max_us).log_scale(), 0.0f64..1.0)
        .map_err(plot)?;
    chart.configure_mesh().x_desc("latency (us)").y_desc("fraction of RESULT frames").draw().map_err(plot)?;
    for (i, s) in sides.iter().enumerate() {
        let color = [BLUE, RED][i % 2];
        let total = s.latency.len().max(1) as f64;
        let mut acc = 0u64;
        let mut pts = vec![(min_us, 0.0)];
        for v in s.latency.iter_recorded() {
            acc += v.count_at_value();
            pts.push((us(v.value_iterated_to()).max(min_us), acc as f64 / total));
        }
        chart.draw_series(LineSeries::new(pts, color.stroke_width(2))).map_err(plot)?.label(s.name).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart.configure_series_labels().border_style(BLACK).background_style(WHITE).draw().map_err(plot)?;
    root.present().map_err(plot)
}

/// The percentile table, markdown.
pub fn table(o: &Outcome) -> String {
    let mut t = String::from("| | ");
    t += &PERCENTILES.iter().map(|p| format!("p{p}")).collect::<Vec<_>>().join(" | ");
    t += " | max | samples | exact | elements/s | DATA frames/s |\n|---|";
    t += &"---|".repeat(PERCENTILES.len() + 5);
    t += "\n";
    for s in [&o.software, &o.hardware] {
        let cells: Vec<String> = percentiles(&s.latency).iter().map(|(_, v)| format!("{:.2} us", us(*v))).collect();
        t += &format!(
            "| {} | {} | {} | {} | {:.3e} | {:.3e} |\n",
            s.name,
            cells.join(" | "),
            s.latency.len(),
            if s.passed(o.scenario.operations) { "yes" } else { "NO" },
            s.elements_per_s(),
            s.data_pps()
        );
    }
    let a = hardware_with_allowance(o);
    let cells: Vec<String> = percentiles(&a).iter().map(|(_, v)| format!("{:.2} us", us(*v))).collect();
    t += &format!("| hardware + MAC/PHY allowance ({MAC_PHY_ALLOWANCE_NS} ns) | {} | {} | | | |\n", cells.join(" | "), a.len());
    t
}

/// The residence-time table: the switch alone, both switches.
pub fn residence_table(o: &Outcome) -> String {
    let mut t = String::from("| | ");
    t += &PERCENTILES.iter().map(|p| format!("p{p}")).collect::<Vec<_>>().join(" | ");
    t += " | max | samples |\n|---|";
    t += &"---|".repeat(PERCENTILES.len() + 2);
    t += "\n";
    for s in [&o.software, &o.hardware] {
        if let Some(r) = &s.residence {
            t += &format!("| {} | {} | {} |\n", s.name, percentiles(r).iter().map(|(_, v)| format!("{:.2} us", us(*v))).collect::<Vec<_>>().join(" | "), r.len());
        }
        if let Some(c) = &s.residence_cycles {
            t += &format!("| {} (cycles) | {} | {} |\n", s.name, percentiles(c).iter().map(|(_, v)| v.to_string()).collect::<Vec<_>>().join(" | "), c.len());
        }
        if let Some(c) = &s.first_residence_cycles {
            t += &format!("| {} (cycles, first RESULT of each range) | {} | {} |\n", s.name, percentiles(c).iter().map(|(_, v)| v.to_string()).collect::<Vec<_>>().join(" | "), c.len());
        }
        if let Some([wait, engine]) = &s.residence_parts {
            for (what, h) in [("receive burst to engine", wait), ("engine, completing frame", engine)] {
                t += &format!("| {}: {what} | {} | {} |\n", s.name, percentiles(h).iter().map(|(_, v)| format!("{:.2} us", us(*v))).collect::<Vec<_>>().join(" | "), h.len());
            }
        }
        if let Some(Ok(ip)) = &s.in_process {
            let h = &ip.residence_cycles;
            let ns = |v: u64| v as f64 * 1e9 / ip.tsc_hz.max(1) as f64;
            t += &format!(
                "| {} core in process (no link, no driver) | {} | {} |\n",
                s.name,
                percentiles(h).iter().map(|(_, v)| format!("{:.2} us", ns(*v) / 1e3)).collect::<Vec<_>>().join(" | "),
                h.len()
            );
        }
    }
    t
}

/// Where the software residence time goes: the switch core's own share
/// (in process), and what the machine takes from its polling core.
fn residence_split(s: &Side) -> String {
    let mut md = String::new();
    if let (Some(r), Some(Ok(ip))) = (&s.residence, &s.in_process) {
        md += &format!(
            "The switch core alone (the same case in this process, the completing DATA frame handed to the core until its RESULTs are queued) takes p50 {:.2} us ({} cycles), p99 {:.2} us; the real binary's p50 is {:.2} us, so {:.2} us of it is the driver, the polling loop and the machine.\n\n",
            ip.residence_ns(0.5) / 1e3,
            ip.residence_cycles.value_at_quantile(0.5),
            ip.residence_ns(0.99) / 1e3,
            r.value_at_quantile(0.5) as f64 / 1e3,
            (r.value_at_quantile(0.5) as f64 - ip.residence_ns(0.5)) / 1e3,
        );
    }
    if let (Some(r), Some([wait, engine])) = (&s.residence, &s.residence_parts) {
        let p = |h: &Histogram<u64>| h.value_at_quantile(0.5) as f64;
        md += &format!(
            "In the real binary, p50: {:.2} us from the receive burst to the engine taking the completing frame, {:.2} us of engine work on it, so {:.2} us from its RESULTs queued to the transmit call (p50s do not add exactly).\n\n",
            p(wait) / 1e3,
            p(engine) / 1e3,
            (p(r) - p(wait) - p(engine)) / 1e3
        );
    }
    if let Some(n) = &s.noise {
        md += &format!("The switch's polling core, probed just before the switch started (a pinned thread spinning on the TSC): {}.", n.describe());
        if let Some(r) = &s.residence {
            let p50 = r.value_at_quantile(0.5) as f64;
            md += &format!(
                " At that rate a residence interval of {:.2} us (the p50) starts or spans a gap {:.2}% of the time: tail percentiles above that share are the machine's, not the switch's.",
                p50 / 1e3,
                n.chance_within(p50) * 100.0
            );
        }
        md += "\n\n";
    }
    if let Some(q) = &s.run_queue {
        md += &q.describe();
        md += "\n\n";
    }
    md
}

/// Writes everything under `dir`; returns the report's path.
pub fn write(o: &Outcome, dir: &Path, commands: &[String], scenario_text: &str, pcap_frames: usize) -> Result<PathBuf, BenchError> {
    std::fs::create_dir_all(dir).map_err(BenchError::file(dir))?;
    let sc = &o.scenario;
    write_hlog(&dir.join("software.hlog"), &o.software.latency, &format!("{}: software switch, RESULT latency", sc.name))?;
    write_hlog(&dir.join("hardware.hlog"), &o.hardware.latency, &format!("{}: hardware switch (simulated), RESULT latency", sc.name))?;
    let sides = [&o.software, &o.hardware];
    plot_spectrum(&dir.join("latency-spectrum.svg"), &sides, &format!("{}: RESULT latency by percentile", sc.name))?;
    plot_cdf(&dir.join("latency-cdf.svg"), &sides, &format!("{}: RESULT latency CDF", sc.name))?;
    let summary = json!({
        "scenario": sc.name,
        "operations": sc.operations,
        "software_mode": match &o.software_mode { Software::Memif => "memif".to_string(), Software::Veth => "veth".to_string(), Software::Sim => "sim".to_string(), Software::Interface(i) => format!("afpacket:{i}") },
        "software": side_json(&o.software, sc.operations),
        "hardware": side_json(&o.hardware, sc.operations),
        "hardware_with_mac_phy": { "allowance_ns": MAC_PHY_ALLOWANCE_NS, "source": MAC_PHY_ALLOWANCE_SOURCE, "latency_ns": pmap(&hardware_with_allowance(o)) },
        "offered_data_pps": sc.rate_pps,
        "software_in_process": match &o.software.in_process {
            Some(Ok(ip)) => json!({
                "cycles_per_data_packet": ip.cycles_per_packet,
                "data_pps": ip.data_pps,
                "ratio_to_end_to_end": ip.data_pps / o.software.data_pps().max(1.0),
                "residence_cycles": pmap(&ip.residence_cycles),
                "residence_ns": { "p50": ip.residence_ns(0.5), "p99": ip.residence_ns(0.99) },
                "residence_samples": ip.residence_cycles.len(),
            }),
            Some(Err(why)) => json!({"not_measured": why}),
            None => json!(null),
        },
        "software_core_noise": o.software.noise.as_ref().map(crate::noise::Noise::to_json),
        "software_run_queue": o.software.run_queue.as_ref().map(crate::runqueue::RunQueue::to_json),
        "machine": machine().into_iter().map(|(k, v)| (k, json!(v))).collect::<serde_json::Map<_, _>>(),
    });
    std::fs::write(dir.join("summary.json"), serde_json::to_string_pretty(&summary).unwrap_or_default()).map_err(BenchError::file(dir.join("summary.json")))?;

    let mut md = format!("# {}: software vs hardware switch\n\n{}\n\n", sc.name, sc.description);
    md += "## RESULT latency\n\n";
    md += &table(o);
    md += "\n![percentile spectrum](latency-spectrum.svg)\n\n![CDF](latency-cdf.svg)\n\n";
    md += "## Residence time (the switch alone)\n\n";
    md += "Software: from the receive burst of the DATA frame that completes a range to the transmit burst that hands each RESULT frame to the driver, by the switch's own TSC. Hardware: from the cycle of the completing DATA frame's last beat in to the RESULT frame's first beat out (under AUTO output a RESULT also waits for the encoder's lookahead past its range). One sample per RESULT frame on both.\n\n";
    md += &residence_table(o);
    md += "\n";
    md += &residence_split(&o.software);
    md += "## What is measured\n\n";
    md += "Latency of a RESULT frame: from pktgen's send of the last DATA frame (of any rank) that covers the RESULT's range, to the RESULT's arrival at pktgen. One sample per RESULT frame on every result path. Throughput: elements of the vector reduced per second of operation time (first DATA sent to last RESULT received).\n\n";
    for s in sides {
        md += &format!("- **{}**: {}. Clock: {}.\n", s.name, s.target, s.clock);
    }
    md += "\nThe two clocks differ: the software figure is wall time on this machine, including the path to and from the switch; the hardware figure is the simulated switch's cycles times the clock period, with frames handed to it beat by beat and no MAC, PHY or cable. Compare shapes and tails with that in mind.\n\n";
    md += &format!(
        "The row **hardware + MAC/PHY allowance** adds {MAC_PHY_ALLOWANCE_NS} ns to every hardware sample: {MAC_PHY_ALLOWANCE_SOURCE}. It is shown apart, never folded into the hardware row.\n\n"
    );
    md += &format!(
        "Offered load: {}. Achieved: software {:.4e} DATA frames/s, hardware {:.4e} DATA frames/s (DATA frames over operation time).\n\n",
        sc.rate_pps.map_or("as fast as the window allows".to_string(), |r| format!("{r:.4e} DATA frames/s over all ranks")),
        o.software.data_pps(),
        o.hardware.data_pps()
    );
    match &o.software.in_process {
        Some(Ok(ip)) => {
            md += &format!(
                "Throughput of the real binaries on memif: {:.4e} DATA frames/s end to end (pktgen's first DATA to last RESULT, every operation exact). The same case through the switch core in this process (`prism-bench switch`'s measure in prism-switch's RX bursts, same run, one core, no link): {:.0} cycles per DATA packet = {:.4e} DATA frames/s, {:.1}x the end-to-end rate.\n\n",
                o.software.data_pps(),
                ip.cycles_per_packet,
                ip.data_pps,
                ip.data_pps / o.software.data_pps().max(1.0)
            );
        }
        Some(Err(why)) => md += &format!("No in-process figure beside the memif throughput: {why}.\n\n"),
        None => {}
    }
    md += &format!("Both switches received the same DATA frames (`scenario.pcap`, {pcap_frames} frames of the first operation; pktgen paces them by the window) and every RESULT was checked exactly against pktgen's big-integer oracle.\n\n");
    md += "## Operations\n\n| | operations exact | RESULT frames | operation p50 | operation max | frames sent |\n|---|---|---|---|---|---|\n";
    for s in sides {
        md += &format!(
            "| {} | {}/{} | {} | {:.1} us | {:.1} us | {} |\n",
            s.name,
            s.operations_passed,
            sc.operations,
            s.results,
            us(s.operation.value_at_quantile(0.5)),
            us(s.operation.max()),
            s.frames_sent
        );
    }
    for s in sides {
        for f in &s.failures {
            md += &format!("\n**{} failure**: {f}\n", s.name);
        }
    }
    md += "\n## Scenario\n\n```toml\n";
    md += scenario_text.trim_end();
    md += "\n```\n\n## Machine\n\n";
    for (k, v) in machine() {
        md += &format!("- {k}: {v}\n");
    }
    md += "\n## Reproduce\n\n```sh\n";
    for c in commands {
        md += c;
        md += "\n";
    }
    md += "```\n\nFiles: `software.hlog`, `hardware.hlog` (HdrHistogram interval logs, ns), `summary.json`, `scenario.pcap`, the two SVG plots.\n";
    std::fs::write(dir.join("report.md"), &md).map_err(BenchError::file(dir.join("report.md")))?;
    std::fs::write(dir.join("report.html"), html(&md)).map_err(BenchError::file(dir.join("report.html")))?;
    Ok(dir.join("report.html"))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A small Markdown-to-HTML rendering of our own report (headings, tables, lists, code, images).
fn html(md: &str) -> String {
    let mut out = String::from("<!doctype html><html><head><meta charset=\"utf-8\"><title>PRISM latency report</title><style>body{font-family:sans-serif;max-width:1000px;margin:2em auto}table{border-collapse:collapse}td,th{border:1px solid #999;padding:3px 8px;text-align:right}pre{background:#f4f4f4;padding:8px}</style></head><body>\n");
    let mut in_code = false;
    let mut in_table = false;
    let mut in_list = false;
    for line in md.lines() {
        if line.starts_with("```") {
            out += if in_code { "</pre>\n" } else { "<pre>" };
            in_code = !in_code;
            continue;
        }
        if in_code {
            out += &escape(line);
            out += "\n";
            continue;
        }
        if in_table && !line.starts_with('|') {
            out += "</table>\n";
            in_table = false;
        }
        if in_list && !line.starts_with("- ") {
            out += "</ul>\n";
            in_list = false;
        }
        let inline = |s: &str| {
            let mut e = escape(s);
            while let (Some(a), true) = (e.find("**"), e.matches("**").count() >= 2) {
                e.replace_range(a..a + 2, "<b>");
                if let Some(b) = e.find("**") {
                    e.replace_range(b..b + 2, "</b>");
                }
            }
            while let (Some(a), true) = (e.find('`'), e.matches('`').count() >= 2) {
                e.replace_range(a..a + 1, "<code>");
                if let Some(b) = e.find('`') {
                    e.replace_range(b..b + 1, "</code>");
                }
            }
            e
        };
        if let Some(h) = line.strip_prefix("## ") {
            out += &format!("<h2>{}</h2>\n", inline(h));
        } else if let Some(h) = line.strip_prefix("# ") {
            out += &format!("<h1>{}</h1>\n", inline(h));
        } else if line.starts_with("|---") {
            continue;
        } else if line.starts_with('|') {
            if !in_table {
                out += "<table>\n";
                in_table = true;
            }
            let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
            out += "<tr>";
            for c in cells {
                out += &format!("<td>{}</td>", inline(c.trim()));
            }
            out += "</tr>\n";
        } else if let Some(rest) = line.strip_prefix("![") {
            if let Some((alt, src)) = rest.split_once("](") {
                out += &format!("<p><img alt=\"{}\" src=\"{}\"></p>\n", escape(alt), escape(src.trim_end_matches(')')));
            }
        } else if let Some(item) = line.strip_prefix("- ") {
            if !in_list {
                out += "<ul>\n";
                in_list = true;
            }
            out += &format!("<li>{}</li>\n", inline(item));
        } else if !line.trim().is_empty() {
            out += &format!("<p>{}</p>\n", inline(line));
        }
    }
    if in_table {
        out += "</table>\n";
    }
    out + "</body></html>\n"
}

/// Two saved runs side by side (directories or their summary.json).
pub fn compare(a: &Path, b: &Path) -> Result<String, BenchError> {
    let load = |p: &Path| -> Result<Value, BenchError> {
        let f = if p.is_dir() { p.join("summary.json") } else { p.to_path_buf() };
        let text = std::fs::read_to_string(&f).map_err(BenchError::file(&f))?;
        serde_json::from_str(&text).map_err(|source| BenchError::Json { path: f, source })
    };
    let (x, y) = (load(a)?, load(b)?);
    let name = |v: &Value| v["scenario"].as_str().unwrap_or("?").to_string();
    let mut t = format!("A = {} ({})\nB = {} ({})\n\n", a.display(), name(&x), b.display(), name(&y));
    t += "| side | figure | A | B | B/A |\n|---|---|---|---|---|\n";
    let cell = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.2} us", v / 1e3));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => format!("{:.2}", b / a),
        _ => "-".to_string(),
    };
    for side in ["software", "hardware"] {
        let keys: Vec<String> = PERCENTILES.iter().map(|p| format!("p{p}")).chain(["max".to_string()]).collect();
        for k in keys {
            let va = x[side]["latency_ns"][&k].as_f64();
            let vb = y[side]["latency_ns"][&k].as_f64();
            t += &format!("| {side} | {k} | {} | {} | {} |\n", cell(va), cell(vb), ratio(va, vb));
        }
        for (view, what) in [("residence_ns", "residence"), ("residence_before_engine_ns", "residence, receive burst to engine,"), ("residence_engine_ns", "residence, engine,")] {
            for k in PERCENTILES.iter().map(|p| format!("p{p}")).chain(["max".to_string()]) {
                let (va, vb) = (x[side][view][&k].as_f64(), y[side][view][&k].as_f64());
                if va.is_some() || vb.is_some() {
                    t += &format!("| {side} | {what} {k} | {} | {} | {} |\n", cell(va), cell(vb), ratio(va, vb));
                }
            }
        }
        for (key, what) in [("elements_per_s", "elements/s"), ("data_pps", "DATA frames/s")] {
            let (ea, eb) = (x[side][key].as_f64(), y[side][key].as_f64());
            let n = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3e}"));
            t += &format!("| {side} | {what} | {} | {} | {} |\n", n(ea), n(eb), ratio(ea, eb));
        }
    }
    for k in PERCENTILES.iter().map(|p| format!("p{p}")).chain(["max".to_string()]) {
        let (va, vb) = (x["hardware_with_mac_phy"]["latency_ns"][&k].as_f64(), y["hardware_with_mac_phy"]["latency_ns"][&k].as_f64());
        if va.is_some() || vb.is_some() {
            t += &format!("| hardware + MAC/PHY | latency {k} | {} | {} | {} |\n", cell(va), cell(vb), ratio(va, vb));
        }
    }
    Ok(t)
}
