//! Load levels (issue 27): one scenario at fractions of the software
//! switch's sustained DATA rate on the chosen path, measured first in the
//! same run, plus the maximum. Both switches get the same offered rate at
//! each level (pktgen paces the RTL on simulated time); each level is a
//! full report of its own, and `loads.md` / `loads.json` put the levels
//! side by side with the offered and achieved rates.

use crate::latency::{self, Outcome, Scenario, Side, Software};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::path::Path;

use crate::BenchError;

/// One load level: a percentage of the sustained rate, or the maximum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Level {
    Percent(f64),
    Max,
}

impl Level {
    pub fn name(&self) -> String {
        match self {
            Level::Percent(p) => format!("{p}%"),
            Level::Max => "max".into(),
        }
    }
    fn dir(&self) -> String {
        match self {
            Level::Percent(p) => format!("load-{p}"),
            Level::Max => "load-max".into(),
        }
    }
}

/// `10,50,90,max`: percentages in (0, 100] and `max`.
pub fn parse_levels(words: &[String]) -> Result<Vec<Level>, BenchError> {
    words
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| match w.trim() {
            "max" => Ok(Level::Max),
            p => match p.trim_end_matches('%').parse::<f64>() {
                Ok(v) if v > 0.0 && v <= 100.0 => Ok(Level::Percent(v)),
                _ => Err(BenchError::Usage(format!("load level '{w}': a percentage of the sustained rate in (0, 100], or max"))),
            },
        })
        .collect()
}

/// What a run over the levels gave.
pub struct Loads {
    /// The sustained DATA rate the percentages are of (DATA frames/s, all ranks).
    pub sustained_pps: f64,
    pub levels: Vec<(Level, Option<f64>, Outcome)>,
    /// loads.md's table.
    pub table: String,
    pub exact: bool,
}

fn p(h: &Histogram<u64>, q: f64) -> u64 {
    h.value_at_quantile(q)
}

fn us(ns: u64) -> String {
    format!("{:.2}", ns as f64 / 1e3)
}

fn side_row(s: &Side) -> Value {
    let r = s.residence.as_ref();
    json!({
        "achieved_data_pps": s.data_pps(),
        "latency_p50_ns": p(&s.latency, 0.5), "latency_p99_ns": p(&s.latency, 0.99),
        "residence_p50_ns": r.map(|h| p(h, 0.5)), "residence_p99_ns": r.map(|h| p(h, 0.99)),
        "residence_p50_cycles": s.residence_cycles.as_ref().map(|h| p(h, 0.5)),
        "first_result_residence_p50_cycles": s.first_residence_cycles.as_ref().map(|h| p(h, 0.5)),
        "first_result_residence_max_cycles": s.first_residence_cycles.as_ref().map(|h| h.max()),
        "residence_samples": r.map(|h| h.len()),
        "result_frames": s.results,
        "exact": s.failures.is_empty(),
    })
}

/// Measures the sustained rate, then runs every level and writes the
/// reports under `dir` (one directory a level) and loads.md / loads.json.
pub fn run(sc: &Scenario, scenario_text: &str, mode: &Software, levels: &[Level], dir: &Path, command: &str, quiet: bool) -> Result<Loads, BenchError> {
    std::fs::create_dir_all(dir).map_err(BenchError::file(dir))?;
    let frames = latency::write_scenario_pcap(sc, &dir.join("scenario.pcap"))?;
    let max_sc = Scenario { rate_pps: None, ..sc.clone() };
    // Twice on memif: the first pass starts the rig and warms the switch
    // (its first operations ran at half the rate of later ones: 424k
    // against 642k to 1.04M DATA/s on one machine), the second is the
    // rate. The other paths start afresh each run: once.
    let warm = *mode == Software::Memif;
    if !quiet {
        eprintln!("{}: measuring the software switch's sustained rate ({} operations at full window rate{})", sc.name, sc.operations, if warm { ", after as many to warm up" } else { "" });
    }
    let passes: &[&str] = if warm { &["warm-up", "measured"] } else { &["measured"] };
    let mut sustained = 0.0;
    for pass in passes {
        let probe = latency::run_software(&max_sc, mode, !quiet)?;
        if !probe.failures.is_empty() {
            return Err(BenchError::Run(format!("{}: the rate probe ({pass} pass) was not exact: {:?}", sc.name, probe.failures)));
        }
        sustained = probe.data_pps();
    }
    if sustained <= 0.0 {
        return Err(BenchError::Run(format!("{}: the rate probe sent no DATA", sc.name)));
    }
    let mut out = Vec::new();
    let mut exact = true;
    for (i, level) in levels.iter().enumerate() {
        let offered = match level {
            Level::Percent(pc) => Some(sustained * pc / 100.0),
            Level::Max => None,
        };
        let description = format!(
            "{} Load level {}: {} (the software switch sustained {sustained:.0} DATA frames/s at full window rate, same run).",
            sc.description,
            level.name(),
            offered.map_or("as fast as the window allows".to_string(), |r| format!("{r:.0} DATA frames/s offered over all ranks"))
        );
        let lsc = Scenario { rate_pps: offered, name: format!("{}-{}", sc.name, level.dir()), description, ..sc.clone() };
        if !quiet {
            eprintln!("[{}/{}] {} at {} ({})", i + 1, levels.len(), sc.name, level.name(), offered.map_or("as fast as the window allows".into(), |r| format!("{:.0} DATA/s", r)));
        }
        let o = latency::run(&lsc, mode.clone(), !quiet)?;
        exact &= o.software.passed(sc.operations) && o.hardware.passed(sc.operations);
        let ldir = dir.join(level.dir());
        std::fs::create_dir_all(&ldir).map_err(BenchError::file(&ldir))?;
        latency::write_scenario_pcap(sc, &ldir.join("scenario.pcap"))?;
        crate::report::write(&o, &ldir, &[command.to_string()], scenario_text, frames)?;
        out.push((*level, offered, o));
    }
    let mut t = format!(
        "Sustained rate of the software switch on this path: {:.0} DATA frames/s ({} operations at full window rate{}, same run).\n\n",
        sustained,
        sc.operations,
        if warm { " after as many to warm up" } else { "" }
    );
    t += "| load | offered DATA/s | achieved DATA/s (sw / hw) | sw wire-to-wire p50 / p99 (us) | sw residence p50 / p99 (us) | hw wire-to-wire p50 / p99 (us) | hw residence p50 / p99 (us) | hw residence p50 (cycles) | hw first RESULT residence p50 / max (cycles) | exact |\n|---|---|---|---|---|---|---|---|---|---|\n";
    let mut rows = Vec::new();
    for (level, offered, o) in &out {
        let (s, h) = (&o.software, &o.hardware);
        let res = |x: &Side| x.residence.as_ref().map_or("-".to_string(), |r| format!("{} / {}", us(p(r, 0.5)), us(p(r, 0.99))));
        t += &format!(
            "| {} | {} | {:.0} / {:.0} | {} / {} | {} | {} / {} | {} | {} | {} | {} |\n",
            level.name(),
            offered.map_or("max".to_string(), |r| format!("{r:.0}")),
            s.data_pps(),
            h.data_pps(),
            us(p(&s.latency, 0.5)),
            us(p(&s.latency, 0.99)),
            res(s),
            us(p(&h.latency, 0.5)),
            us(p(&h.latency, 0.99)),
            res(h),
            h.residence_cycles.as_ref().map_or("-".into(), |c| p(c, 0.5).to_string()),
            h.first_residence_cycles.as_ref().map_or("-".into(), |c| format!("{} / {}", p(c, 0.5), c.max())),
            if s.passed(sc.operations) && h.passed(sc.operations) { "yes" } else { "NO" }
        );
        rows.push(json!({"level": level.name(), "offered_data_pps": offered, "software": side_row(s), "hardware": side_row(h)}));
    }
    let j = json!({"scenario": sc.name, "software_mode": format!("{mode:?}"), "sustained_data_pps": sustained, "levels": rows});
    std::fs::write(dir.join("loads.json"), serde_json::to_string_pretty(&j).unwrap_or_default()).map_err(BenchError::file(dir))?;
    let md = format!(
        "# {}: load levels\n\n{}\n\nEach level's full report (percentile spectrum, CDF, residence, MAC/PHY allowance row) is in its `load-*/` directory. Residence: the switch alone (software: the completing DATA's receive burst to each RESULT's transmit burst, TSC; hardware: the completing DATA's last beat in to the RESULT's first beat out, cycles x the clock period). Hardware ns figures: {}.\n\n```sh\n{command}\n```\n",
        sc.name,
        t,
        prism_rtl::CLOCK_STATUS
    );
    std::fs::write(dir.join("loads.md"), &md).map_err(BenchError::file(dir))?;
    Ok(Loads { sustained_pps: sustained, levels: out, table: t, exact })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_bad_ones_say_why() {
        let w = |s: &str| s.split(',').map(String::from).collect::<Vec<_>>();
        assert_eq!(parse_levels(&w("10,50,90,max")).unwrap(), vec![Level::Percent(10.0), Level::Percent(50.0), Level::Percent(90.0), Level::Max]);
        assert_eq!(parse_levels(&w("25%")).unwrap(), vec![Level::Percent(25.0)]);
        for bad in ["0", "101", "fast", "-5"] {
            let e = parse_levels(&w(bad)).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("max"), "{e}");
        }
        assert!(parse_levels(&[]).unwrap().is_empty());
    }
}
