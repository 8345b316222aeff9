//! prism-bench: benchmarks of the PRISM switches.

use clap::{Parser, Subcommand};
use prism_bench::switch_throughput::*;
use prism_dataplane::dpdk::{Eal, Mempool};
use serde_json::json;
use std::error::Error;
use std::process::ExitCode;

#[derive(Parser)]
#[command(version, about = "PRISM benchmarks")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Software vs hardware switch on the same scenarios: HDR latency histograms,
    /// throughput, and a report (report.html, report.md, summary.json, SVG plots)
    /// in OUT/<scenario>/.
    Report {
        /// Scenario files (configs/bench/*.toml).
        #[arg(required = true)]
        scenarios: Vec<std::path::PathBuf>,
        /// Where the reports go.
        #[arg(long, default_value = "bench/out")]
        out: std::path::PathBuf,
        /// Where the software switch runs: `memif` (prism-switch and the
        /// ranks as DPDK processes joined by net_memif, CPUs 0 and 1: no
        /// kernel path; also gives the switch's residence time), `veth`
        /// (prism-switch over DPDK net_af_packet on a veth pair; needs root),
        /// `sim` (the engine in-process), or `afpacket:IFACE` (a switch already
        /// running behind IFACE, e.g. prism-switch on a real NIC; MAC
        /// 02:00:00:00:00:50, AM port 0).
        #[arg(long, default_value = "memif")]
        software: String,
        /// Load levels instead of the scenario's own rate: percentages of
        /// the software switch's sustained DATA rate on this path (measured
        /// first, in the same run, at full window rate) and `max`, e.g.
        /// `--loads 10,50,90,max`. Each level is a report of its own under
        /// OUT/<scenario>/load-<level>/, and OUT/<scenario>/loads.md
        /// (and loads.json) puts them side by side.
        #[arg(long, value_delimiter = ',')]
        loads: Vec<String>,
        /// No progress lines.
        #[arg(long)]
        quiet: bool,
        /// The memif rig's CPUs: the switch's polling core, then pktgen's.
        #[arg(long, value_delimiter = ',', default_values_t = [0, 1])]
        memif_cpus: Vec<usize>,
    },
    /// How much a spinning, pinned thread loses to the machine on each CPU
    /// (timer ticks, interrupts, the hypervisor): every gap of 1 us or more
    /// between two TSC reads. Run it before trusting a latency tail.
    Noise {
        /// CPUs to probe, one after the other (default: every CPU).
        #[arg(long, value_delimiter = ',')]
        cpus: Vec<usize>,
        /// Seconds per CPU.
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
        #[arg(long)]
        json: bool,
    },
    /// Two saved reports side by side (their directories or summary.json files).
    Compare { a: std::path::PathBuf, b: std::path::PathBuf },
    /// pktgen's generation rate (pre-built 1512-byte DATA mbufs replayed on net_null)
    /// vs `dpdk-testpmd --forward-mode=txonly --txpkts=1512` on net_null, same run, one core each.
    Pktgen {
        /// Seconds for each side.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        #[arg(long)]
        json: bool,
    },
    /// Cycles per DATA packet of the switch core vs testpmd io forwarding (net_null, copy=1, 1514 B), same run.
    Switch {
        /// Seconds per case.
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        /// Only the two gradient-like 2-rank ALLREDUCE cases, 0.3 s each.
        #[arg(long)]
        quick: bool,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Skip the testpmd baseline (for profiling the switch alone).
        #[arg(long)]
        no_baseline: bool,
        /// Only cases matching every comma-separated word: part of the
        /// accumulator's or the data's name (FP32, KULISCH, Gradient,
        /// FullRange), REDUCE or ALLREDUCE, ranks=2 or ranks=8.
        #[arg(long)]
        only: Option<String>,
        /// Hugepages for both testpmd and the switch core instead of --no-huge
        /// (reserve them first: scripts/hugepages.sh).
        #[arg(long)]
        huge: bool,
        /// Measure every case this many times, the cases alternated round by
        /// round: the table shows each case's median round (by core/work) and
        /// a summary gives core/work's median and range over the rounds.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
        rounds: u32,
        /// RX in bursts of this many frames, as a PMD's RX burst: each
        /// burst's frames copied into fresh mbufs first, then handed to the
        /// switch core at once (`SwitchCore::rx_burst`); the RX copy and the
        /// floors get the same bursts. 1: one frame at a time (`rx`). The
        /// default is prism-switch's own (`dataplane.burst`).
        #[arg(long, default_value_t = prism_dataplane::switch::config::DEFAULT_BURST as u32, value_parser = clap::value_parser!(u32).range(1..=256))]
        burst: u32,
    },
    /// One collective striped over several cores against the same collective
    /// on one core, same run: its DATA rate over its makespan, and the cores
    /// it needs for 25, 100 and 400 GbE.
    Collective(CollectiveArgs),
}

// `prism-bench collective`'s flags (a plain comment: the variant's doc is the command's help).
#[derive(clap::Args, Debug, Clone, Copy)]
struct CollectiveArgs {
    /// Ranks.
    #[arg(long, default_value_t = 4)]
    ranks: u16,
    /// FP32 elements per rank (262144: 1 MB).
    #[arg(long, default_value_t = 262_144)]
    elements: u32,
    /// Cores to stripe over (compared with 1).
    #[arg(long, default_value_t = 2)]
    cores: usize,
    /// Timed rounds per setting (alternated 1 core, N cores; the best of each).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// REDUCE instead of ALLREDUCE.
    #[arg(long)]
    reduce: bool,
    /// Only the gradient-like data (not also full-range).
    #[arg(long)]
    gradient_only: bool,
    /// Also through the real binaries: prism-switch on 1 and N polling
    /// cores, prism-pktgen striping the collective, over net_memif.
    #[arg(long)]
    memif: bool,
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Noise { cpus, seconds, json } => {
            let cpus = if cpus.is_empty() { (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect() } else { cpus };
            if !(seconds > 0.0 && seconds <= 3600.0) {
                eprintln!("prism-bench: --seconds must be in (0, 3600], not {seconds}");
                return ExitCode::from(1);
            }
            let all: Vec<_> = cpus.iter().map(|&c| prism_bench::noise::probe(c, std::time::Duration::from_secs_f64(seconds))).collect();
            if json {
                println!("{}", serde_json::Value::Array(all.iter().map(prism_bench::noise::Noise::to_json).collect()));
            } else {
                for n in &all {
                    println!("{}", n.describe());
                }
            }
            ExitCode::SUCCESS
        }
        Cmd::Report { scenarios, out, software, loads, quiet, memif_cpus } => match memif_cpus_of(&memif_cpus).map_err(Into::into).and_then(|()| report(&scenarios, &out, &software, &loads, quiet)) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(2),
            Err(e) => {
                eprintln!("prism-bench: {e}");
                ExitCode::from(1)
            }
        },
        Cmd::Compare { a, b } => match prism_bench::report::compare(&a, &b) {
            Ok(t) => {
                print!("{t}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("prism-bench: {e}");
                ExitCode::from(1)
            }
        },
        Cmd::Pktgen { seconds, json } => match pktgen_rate(seconds, json) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("prism-bench: {e}");
                ExitCode::from(1)
            }
        },
        Cmd::Collective(a) => match collective(a) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("prism-bench: {e}");
                ExitCode::from(1)
            }
        },
        Cmd::Switch { seconds, quick, json, no_baseline, only, huge, rounds, burst } => match switch(seconds, quick, json, no_baseline, only, huge, rounds as usize, burst as usize) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("prism-bench: {e}");
                ExitCode::from(1)
            }
        },
    }
}

/// `--memif-cpus SWITCH,PKTGEN`, checked and set.
fn memif_cpus_of(cpus: &[usize]) -> Result<(), prism_bench::BenchError> {
    match cpus {
        [sw, pg] => prism_bench::latency::set_memif_cpus(*sw, *pg),
        _ => Err(prism_bench::BenchError::Run(format!("--memif-cpus takes two CPUs (the switch's, then pktgen's), not {cpus:?}"))),
    }
}

/// Runs each scenario on both switches and writes its report; false when a run was not exact.
fn report(scenarios: &[std::path::PathBuf], out: &std::path::Path, software: &str, loads: &[String], quiet: bool) -> Result<bool, Box<dyn Error>> {
    use prism_bench::latency::{self, Software};
    let mode: Software = software.parse()?;
    let levels = prism_bench::loads::parse_levels(loads)?;
    if !levels.is_empty() {
        let mut all_exact = true;
        for path in scenarios {
            let sc = latency::Scenario::load(path)?;
            let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
            let cmd = format!("./target/release/prism-bench report {} --software {software} --loads {} --out {}", path.display(), loads.join(","), out.display());
            let r = prism_bench::loads::run(&sc, &text, &mode, &levels, &out.join(&sc.name), &cmd, quiet)?;
            println!("{}", r.table);
            all_exact &= r.exact;
        }
        return Ok(all_exact);
    }
    let mut all_exact = true;
    for (i, path) in scenarios.iter().enumerate() {
        let sc = latency::Scenario::load(path)?;
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        if !quiet {
            eprintln!(
                "[{}/{}] {} ({} ranks, {}, {}, {} elements x {} operations{})",
                i + 1,
                scenarios.len(),
                sc.name,
                sc.ranks,
                sc.semantics,
                sc.policy,
                sc.vector_len,
                sc.operations,
                sc.rate_pps.map_or(String::new(), |r| format!(", {r} DATA/s"))
            );
        }
        let dir = out.join(&sc.name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let frames = latency::write_scenario_pcap(&sc, &dir.join("scenario.pcap"))?;
        let o = latency::run(&sc, mode.clone(), !quiet)?;
        let commands = vec![
            "scripts/test.sh   # installs DPDK, Verilator, Rust; or: cargo build --release -p prism-bench -p prism-dataplane".to_string(),
            format!("./target/release/prism-bench report {} --software {software} --out {}", path.display(), out.display()),
        ];
        let html = prism_bench::report::write(&o, &dir, &commands, &text, frames)?;
        let exact = o.software.passed(sc.operations) && o.hardware.passed(sc.operations);
        all_exact &= exact;
        println!("{}: {}\n{}", sc.name, html.display(), prism_bench::report::table(&o));
        for s in [&o.software, &o.hardware] {
            for f in &s.failures {
                println!("  {} failure: {f}", s.name);
            }
        }
    }
    Ok(all_exact)
}

/// One `--only` word: part of the accumulator's name or of the data's, a
/// semantics name exactly (REDUCE is not ALLREDUCE), or `ranks=N`.
fn case_matches(c: &Case, w: &str) -> bool {
    c.accumulator.name().contains(w) || format!("{:?}", c.pattern).contains(w) || c.semantics.name() == w || w.strip_prefix("ranks=").is_some_and(|n| n == c.ranks.to_string())
}

#[allow(clippy::too_many_arguments)]
fn switch(seconds: f64, quick: bool, as_json: bool, no_baseline: bool, only: Option<String>, huge: bool, rounds: usize, burst: usize) -> Result<(), Box<dyn Error>> {
    let base_secs = if quick { 2 } else { 4 };
    if let Some(o) = &only {
        if !cases().iter().any(|c| o.split(',').all(|w| case_matches(c, w))) {
            return Err(format!("no case matches --only {o} (words: FP32, KULISCH, Gradient, FullRange, REDUCE, ALLREDUCE, ranks=2, ranks=8)").into());
        }
    }
    if huge {
        prism_bench::switch_throughput::hugepages_free(256)?;
    }
    let memory = if huge { "hugepages" } else { "--no-huge" };
    let baseline_pps = if no_baseline {
        f64::NAN
    } else {
        eprintln!("baseline: dpdk-testpmd --forward-mode=io, net_null copy=1 size=1514, {memory}, {base_secs} s ...");
        let b = testpmd_baseline(base_secs, huge)?;
        settle();
        b
    };
    let mut args: Vec<String> = ["prism-bench", "--no-pci", "-l", "0", "-m", "512", "--log-level", "lib.eal:error", "--file-prefix", "prism-bench"].iter().map(|s| s.to_string()).collect();
    if !huge {
        args.insert(1, "--no-huge".to_string());
    }
    let eal = Eal::init(&args).map_err(|e| e.to_string())?;
    let pool = Mempool::new(&eal, "bench", 8191, 256, 2048 + 128).map_err(|e| e.to_string())?;
    let hz = eal.tsc_hz() as f64;
    let baseline_cpp = hz / baseline_pps;
    let cases: Vec<Case> = if quick {
        cases().into_iter().filter(|c| c.ranks == 2 && matches!(c.pattern, prism_pktgen::Pattern::Gradient(_)) && c.semantics == prism_dataplane::wire::Semantics::ALLREDUCE).collect()
    } else {
        cases()
    };
    let cases: Vec<Case> = cases.into_iter().filter(|c| only.as_ref().is_none_or(|o| o.split(',').all(|w| case_matches(c, w)))).collect();
    let secs = if quick { 0.3 } else { seconds };
    // Round by round, every case in each: a change of the machine's speed
    // during the run falls on every case alike.
    let mut by_case: Vec<Vec<Measured>> = vec![Vec::with_capacity(rounds); cases.len()];
    for round in 0..rounds {
        if rounds > 1 {
            eprintln!("round {}/{rounds} ({} cases, {secs} s each)", round + 1, cases.len());
        }
        for (c, ms) in cases.iter().zip(&mut by_case) {
            ms.push(measure_burst(&eal, &pool, c, secs, burst));
        }
    }
    for ms in &mut by_case {
        ms.sort_by(|a, b| a.core_to_work().total_cmp(&b.core_to_work()));
    }
    // Each case's median round: a measured row, not a mix of rounds.
    let rows: Vec<Measured> = by_case.iter().map(|ms| ms[ms.len() / 2].clone()).collect();
    // Scaling: whole operations per core, 1 and 2 cores, same run.
    let scale_case = cases.first().copied();
    // Alternated, best of three rounds each: this VM changes speed within a
    // run, and two runs one after the other can land in different states.
    let scaling = scale_case.map(|c| {
        let (mut one, mut two) = (0f64, 0f64);
        for _ in 0..3 {
            one = one.max(scaling(&eal, &pool, &c, secs / 2.0, 1, burst));
            two = two.max(scaling(&eal, &pool, &c, secs / 2.0, 2, burst));
        }
        (c, one, two)
    });
    if as_json {
        let v = json!({
            "scaling": scaling.map(|(c, one, two)| json!({"case": format!("{} {} {:?} {} ranks", c.accumulator.name(), c.semantics.name(), c.pattern, c.ranks), "mpps_1_core": one / 1e6, "mpps_2_cores": two / 1e6, "ratio": two / one})),
            "tsc_hz": hz,
            "memory": memory,
            "baseline": {"what": format!("dpdk-testpmd io, 2x net_null copy=1 size=1514, {memory}"), "pps_per_core": baseline_pps, "cycles_per_packet": baseline_cpp},
            "rounds": rounds,
            "burst": burst,
            "cases": rows.iter().zip(&by_case).map(|(m, ms)| json!({
                "ranks": m.case.ranks, "semantics": m.case.semantics.name(), "accumulator": m.case.accumulator.name(),
                "data": format!("{:?}", m.case.pattern), "data_packets": m.data_packets, "results": m.results,
                "cycles_per_packet": m.cycles_per_packet, "mpps_per_core": m.mpps, "ratio_to_baseline": baseline_cpp / m.cycles_per_packet,
                "rx_copy_cycles_per_packet": m.rx_copy_cycles, "core_cycles_per_packet": m.cycles_per_packet - m.rx_copy_cycles,
                "floor_cycles_per_packet": m.floor_cycles, "floor_ratio_to_baseline": baseline_cpp / m.floor_cycles,
                "sum_only_cycles_per_packet": m.sum_cycles, "sum_only_ratio_to_baseline": baseline_cpp / m.sum_cycles,
                "sum_hot_rx_cycles_per_packet": m.hot_sum_cycles, "sum_hot_rx_ratio_to_baseline": baseline_cpp / m.hot_sum_cycles,
                "kept_frames_cycles_per_packet": m.kept_cycles, "kept_frames_ratio_to_baseline": baseline_cpp / m.kept_cycles,
                "core_to_floor_work": m.core_to_work(),
                "core_to_floor_work_rounds": ms.iter().map(Measured::core_to_work).collect::<Vec<_>>(),
                "full_parse_core_cycles_per_packet": m.full_parse_cycles - m.rx_copy_cycles,
                "full_parse_core_to_floor_work": (m.full_parse_cycles - m.rx_copy_cycles) / (m.floor_cycles - m.rx_copy_cycles),
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        println!("baseline testpmd io ({memory}): {:.2} Mpps per core = {:.0} cycles/packet (TSC {:.0} MHz)", baseline_pps / 1e6, baseline_cpp, hz / 1e6);
        if burst > 1 {
            println!("RX in bursts of {burst} frames (switch core: SwitchCore::rx_burst; RX copy and floors in the same bursts)");
        }
        println!(
            "{:<14} {:<10} {:<18} {:>5} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}",
            "accumulator",
            "semantics",
            "data",
            "ranks",
            "cyc/pkt",
            "Mpps/core",
            "vs base",
            "rx copy",
            "core",
            "floor",
            "sum only",
            "sum hot",
            "kept",
            "floor/base",
            "hot/base",
            "kept/base",
            "core/work",
            "no fast",
            "nf/work"
        );
        for m in &rows {
            println!(
                "{:<14} {:<10} {:<18} {:>5} {:>10.0} {:>10.2} {:>8.2}x {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9} {:>9.2}x {:>9.2}x {:>10} {:>8.2}x {:>9.0} {:>8.2}x",
                m.case.accumulator.name(),
                m.case.semantics.name(),
                format!("{:?}", m.case.pattern),
                m.case.ranks,
                m.cycles_per_packet,
                m.mpps,
                baseline_cpp / m.cycles_per_packet,
                m.rx_copy_cycles,
                m.cycles_per_packet - m.rx_copy_cycles,
                m.floor_cycles,
                m.sum_cycles,
                m.hot_sum_cycles,
                if m.kept_cycles.is_nan() { "-".to_string() } else { format!("{:.0}", m.kept_cycles) },
                baseline_cpp / m.floor_cycles,
                baseline_cpp / m.hot_sum_cycles,
                if m.kept_cycles.is_nan() { "-".to_string() } else { format!("{:.2}x", baseline_cpp / m.kept_cycles) },
                m.core_to_work(),
                m.full_parse_cycles - m.rx_copy_cycles,
                (m.full_parse_cycles - m.rx_copy_cycles) / (m.floor_cycles - m.rx_copy_cycles)
            );
        }
        println!("(rx copy: the emulated RX alone over the same frames, a fresh mbuf with the frame copied in and freed; core: the rest, the switch core's own cycles)");
        println!("(floor: the same RX with only the work the protocol cannot skip, the body's duplicate digest, the accumulation and each RESULT's values rounded into a TX mbuf per path, with no parse, admission or headers; sum only: the floor without the digest, a forwarder that sums each frame's payload into the window and sends the RESULT values; sum hot: that forwarder with testpmd's RX, every frame copied from one hot buffer as net_null does; kept: FP32_ARRIVAL only, a design that keeps each frame until its range completes and then sums the kept bodies straight into the RESULT, with no window and no digest; floor/base, hot/base and kept/base: against testpmd; core/work: core against the floor's own work, floor minus rx copy; no fast and nf/work: the same with the engine's DATA fast path off, every other operation of the run)");
        if rounds > 1 {
            println!("(each row: the case's median round of {rounds}, by core/work; core/work over the rounds, median (min-max), the rounds sorted:)");
            for ms in &by_case {
                let c = &ms[0].case;
                let all: Vec<String> = ms.iter().map(|m| format!("{:.2}", m.core_to_work())).collect();
                println!(
                    "  {:<14} {:<10} {:<18} {:>2} ranks  {:.2}x ({:.2}-{:.2})  [{}]",
                    c.accumulator.name(),
                    c.semantics.name(),
                    format!("{:?}", c.pattern),
                    c.ranks,
                    ms[ms.len() / 2].core_to_work(),
                    ms[0].core_to_work(),
                    ms[ms.len() - 1].core_to_work(),
                    all.join(" ")
                );
            }
        }
        if let Some((c, one, two)) = scaling {
            println!(
                "scaling ({} {} {:?}, {} ranks; best of 3 alternated rounds each): 1 core {:.2} Mpps, 2 cores {:.2} Mpps = {:.2}x",
                c.accumulator.name(),
                c.semantics.name(),
                c.pattern,
                c.ranks,
                one / 1e6,
                two / 1e6,
                two / one
            );
        }
    }
    Ok(())
}

fn collective(a: CollectiveArgs) -> Result<(), Box<dyn Error>> {
    let CollectiveArgs { ranks, elements, cores, rounds, reduce, gradient_only, memif, json: as_json } = a;
    use prism_bench::collective::collective as measure_collective;
    use prism_dataplane::wire::{AccumulatorPolicy, Semantics};
    use prism_pktgen::Pattern;
    if !(2..=8).contains(&cores) || ranks < 2 || elements == 0 || rounds == 0 {
        return Err("--cores must be 2 to 8, --ranks at least 2, --elements and --rounds at least 1".into());
    }
    let online = prism_dataplane::dpdk::online_cpus().len();
    if online < cores {
        return Err(format!("--cores {cores} needs {cores} online CPUs; this machine has {online}").into());
    }
    let args: Vec<String> =
        ["prism-bench", "--no-huge", "--no-pci", "-l", "0", "-m", "1024", "--log-level", "lib.eal:error", "--file-prefix", "prism-bench-coll"].iter().map(|s| s.to_string()).collect();
    let eal = Eal::init(&args).map_err(|e| e.to_string())?;
    let pool = Mempool::new(&eal, "coll", 16383, 256, 2048 + 128).map_err(|e| e.to_string())?;
    let semantics = if reduce { Semantics::REDUCE } else { Semantics::ALLREDUCE };
    let patterns: &[Pattern] = if gradient_only { &[Pattern::Gradient(1e-3)] } else { &[Pattern::Gradient(1e-3), Pattern::FullRange] };
    // Line rate in 1500-byte-MTU frames: 1514 bytes plus preamble, SFD, FCS and gap (24).
    let line_pps = |gbps: f64| gbps * 1e9 / ((1514.0 + 24.0) * 8.0);
    let mut rows = Vec::new();
    for accumulator in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
        for &pattern in patterns {
            let c = Case { ranks, semantics, accumulator, pattern };
            eprintln!("{} {} {pattern:?}, {ranks} ranks, {elements} elements a rank: 1 and {cores} cores, {rounds} rounds each ...", accumulator.name(), semantics.name());
            // Alternated, one round at a time: this VM changes speed within a run.
            use prism_bench::collective::{Arrival, CollectiveRate};
            let keep = |best: &mut Option<CollectiveRate>, r: CollectiveRate| {
                if best.is_none_or(|b| r.data_pps > b.data_pps) {
                    *best = Some(r);
                }
            };
            let (mut one, mut many, mut steered) = (None, None, None);
            for _ in 0..rounds {
                keep(&mut one, measure_collective(&eal, &pool, &c, elements, 1, 1, Arrival::OwnQueue)?);
                keep(&mut many, measure_collective(&eal, &pool, &c, elements, cores, 1, Arrival::OwnQueue)?);
                keep(&mut steered, measure_collective(&eal, &pool, &c, elements, cores, 1, Arrival::OneQueue)?);
            }
            let (Some(one), Some(many), Some(steered)) = (one, many, steered) else { continue };
            // Through the binaries: (DATA/s, elements/s, frames per core) on 1 and N cores.
            let real = if memif {
                eprintln!("  through prism-switch on memif, 1 and {cores} polling cores ...");
                Some((prism_bench::collective::memif_collective(&c, elements, 1, rounds.min(3))?, prism_bench::collective::memif_collective(&c, elements, cores, rounds.min(3))?))
            } else {
                None
            };
            rows.push((c, one, many, steered, real));
        }
    }
    // Cores for a line rate: one core's rate times the measured scaling per core.
    let needed = |one: f64, per_core_efficiency: f64, gbps: f64| (line_pps(gbps) / (one * per_core_efficiency.min(1.0))).ceil() as u64;
    if as_json {
        let v: Vec<_> = rows
            .iter()
            .map(|(c, one, many, steered, real)| {
                let eff = many.data_pps / one.data_pps / cores as f64;
                let real = real.as_ref().map(|(a, n)| json!({"one_core": {"data_pps": a.data_pps, "elements_per_s": a.elements_per_s}, "n_cores": {"data_pps": n.data_pps, "elements_per_s": n.elements_per_s, "data_applied_per_core": n.applied_per_core, "steered_to_other_core": n.steered}, "ratio": n.data_pps / a.data_pps, "cpus": prism_dataplane::dpdk::online_cpus().len()}));
                json!({
                    "accumulator": c.accumulator.name(), "semantics": c.semantics.name(), "data": format!("{:?}", c.pattern), "ranks": c.ranks, "elements_per_rank": elements,
                    "one_core": {"data_mpps": one.data_pps / 1e6, "elements_per_s": one.elements_per_s},
                    "cores": cores, "n_cores": {"data_mpps": many.data_pps / 1e6, "elements_per_s": many.elements_per_s, "frames_per_core": &many.frames_per_core[..cores]},
                    "ratio": many.data_pps / one.data_pps,
                    "one_rx_queue": {"data_mpps": steered.data_pps / 1e6, "ratio": steered.data_pps / one.data_pps},
                    "cores_for_gbe": {"25": needed(one.data_pps, eff, 25.0), "100": needed(one.data_pps, eff, 100.0), "400": needed(one.data_pps, eff, 400.0)},
                    "memif": real,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&json!({"rounds": rounds, "cases": v})).unwrap_or_default());
        return Ok(());
    }
    println!("one collective, {ranks} ranks, {elements} FP32 elements a rank, {}: striped over {cores} operations on {cores} cores vs one core (best of {rounds} alternated rounds; rate = DATA frames over the makespan)", semantics.name());
    println!(
        "{:<14} {:<18} {:>12} {:>12} {:>8} {:>14} {:>8} {:>8} {:>8} {:>16}",
        "accumulator",
        "data",
        "1 core Mpps",
        format!("{cores} cores Mpps"),
        "ratio",
        "Melem/s",
        "25 GbE",
        "100 GbE",
        "400 GbE",
        "one RX queue"
    );
    for (c, one, many, steered, _) in &rows {
        let eff = many.data_pps / one.data_pps / cores as f64;
        println!(
            "{:<14} {:<18} {:>12.3} {:>12.3} {:>7.2}x {:>14.1} {:>8} {:>8} {:>8} {:>16}",
            c.accumulator.name(),
            format!("{:?}", c.pattern),
            one.data_pps / 1e6,
            many.data_pps / 1e6,
            many.data_pps / one.data_pps,
            many.elements_per_s / 1e6,
            needed(one.data_pps, eff, 25.0),
            needed(one.data_pps, eff, 100.0),
            needed(one.data_pps, eff, 400.0),
            format!("{:.3} ({:.2}x)", steered.data_pps / 1e6, steered.data_pps / one.data_pps)
        );
    }
    if memif {
        let cpus = prism_dataplane::dpdk::online_cpus().len();
        println!(
            "through the binaries on net_memif (prism-switch with 1 and {cores} polling cores, prism-pktgen striping over as many operations; {cpus} CPUs{}):",
            if cpus < cores + 1 { ", so pktgen time-shares a CPU with a polling core, and the N-core switch runs with --idle-sleep-us 20" } else { "" }
        );
        println!("{:<14} {:<18} {:>14} {:>14} {:>8} {:>22} {:>8}", "accumulator", "data", "1 core DATA/s", format!("{cores} cores DATA/s"), "ratio", "DATA applied per core", "steered");
        for (c, _, _, _, real) in &rows {
            if let Some((a, n)) = real {
                println!(
                    "{:<14} {:<18} {:>14.0} {:>14.0} {:>7.2}x {:>22} {:>8}",
                    c.accumulator.name(),
                    format!("{:?}", c.pattern),
                    a.data_pps,
                    n.data_pps,
                    n.data_pps / a.data_pps,
                    format!("{:?}", n.applied_per_core),
                    n.steered
                );
            }
        }
    }
    println!("(Melem/s: vector elements reduced per second on {cores} cores; 25/100/400 GbE: cores one collective needs at 1500-byte frames ({:.2}, {:.2}, {:.2} Mpps of DATA in), from one core's rate and the per-core scaling measured here; one RX queue: the {cores} cores with every frame arriving on core 0, which hands the other stripes' mbufs to their owners through a lock-free queue, prism-switch's software steering, in Mpps and against one core)", line_pps(25.0) / 1e6, line_pps(100.0) / 1e6, line_pps(400.0) / 1e6);
    Ok(())
}

fn pktgen_rate(seconds: f64, as_json: bool) -> Result<(), Box<dyn Error>> {
    eprintln!("baseline: dpdk-testpmd --forward-mode=txonly --txpkts=1512 on net_null, --no-huge ...");
    let base = testpmd_txonly(seconds.ceil() as u64)?;
    settle();
    let args: Vec<String> = ["prism-bench", "--no-huge", "--no-pci", "-l", "0", "-m", "512", "--log-level", "lib.eal:error", "--file-prefix", "prism-bench-pg", "--vdev", "net_null0,size=1514"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let link = prism_pktgen::dpdk::DpdkLink::open_with(&args, &["net_null0".to_string()], 1500, 2)?;
    // 1512-byte frames: full 363-value FP32 DATA packets at MTU 1500, 8 ranks.
    let job = prism_bench::switch_throughput::pktgen_job();
    let vectors = job.vectors();
    let frames: Vec<Vec<u8>> = (0..job.ranks).flat_map(|r| job.packets(r, &vectors[r as usize]).into_iter().map(|p| p.2)).filter(|f| f.len() == 1512).take(2048).collect();
    let port = link.port(0).ok_or("no port")?;
    let r = prism_pktgen::dpdk::replay(link.pool(), port, 0, &frames, std::time::Duration::from_secs_f64(seconds), 32, None)?;
    let r2 = prism_pktgen::dpdk::replay_cores(&link, port, &frames, std::time::Duration::from_secs_f64(seconds), 32, None, 2)?;
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"testpmd_txonly_pps": base, "pktgen_pps": r.pps, "ratio": r.pps / base, "pktgen_gbps_on_wire": r.gbps, "pktgen_2_cores_pps": r2.pps}))
                .unwrap_or_default()
        );
    } else {
        println!("testpmd txonly: {:.2} Mpps; prism-pktgen replay: {:.2} Mpps ({:.1} Gb/s on the wire) = {:.2}x, one core each, 1512-byte frames", base / 1e6, r.pps / 1e6, r.gbps, r.pps / base);
        println!("prism-pktgen replay on 2 cores (2 TX queues): {:.2} Mpps = {:.2}x its one-core rate", r2.pps / 1e6, r2.pps / r.pps);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--only` words: names by part, semantics exactly, ranks=N; a word no
    /// case has matches nothing (the command then says so).
    #[test]
    fn only_words_select_the_cases_they_name() {
        let pick = |only: &str| cases().into_iter().filter(|c| only.split(',').all(|w| case_matches(c, w))).count();
        let all = cases().len();
        assert_eq!(all, 16);
        assert_eq!(pick("FP32"), 8);
        assert_eq!(pick("REDUCE"), 8, "REDUCE is not ALLREDUCE");
        assert_eq!(pick("FP32,REDUCE,ranks=2,Gradient"), 1);
        assert_eq!(pick("ranks=8"), 8);
        assert_eq!(pick("ranks=3"), 0);
        assert_eq!(pick("nonsense"), 0);
    }
}
