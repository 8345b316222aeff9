//! prism-tree: a spine-leaf tree of three prism-switch processes (S0 over L0
//! and L1) on veth pairs in network namespaces, four ranks and the AM played
//! by pktgen; measures goodput with and without impairment, retransmissions,
//! and the time to recover from a killed leaf. Needs root and iproute2.

use clap::{Parser, ValueEnum};
use prism_dataplane::wire::*;
use prism_pktgen::args::{Op, PolicyArg};
use prism_pktgen::lab::{Lab, LabOptions};
use prism_pktgen::simtree::SimTreeLink;
use prism_pktgen::tree::{run_tree, run_tree_observed, TreeJob, TreeNode, TreeReport};
use prism_pktgen::AfPacketLink;
use serde_json::json;
use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum PartialArg {
    Fp32,
    Kulisch,
    Auto,
}

/// Run REDUCE or ALLREDUCE through a three-switch spine-leaf tree, every
/// result verified exactly, and report goodput, retransmissions and recovery.
#[derive(Parser, Debug)]
#[command(version, about, after_help = "Example (root):\n  prism-tree --len 1000000 --impair drop=0.01,dup=0.01,corrupt=0.01,reorder=0.01 --kill")]
struct Args {
    #[arg(long, value_enum, default_value = "allreduce")]
    op: Op,
    #[arg(long, value_enum, default_value = "kulisch")]
    policy: PolicyArg,
    /// Partial policy (default: KULISCH under Kulisch, FP32 under FP32_ARRIVAL).
    #[arg(long, value_enum)]
    partial: Option<PartialArg>,
    /// Elements per rank.
    #[arg(long, default_value_t = 1_000_000)]
    len: u32,
    /// Impairment of every link for a second run (`drop=P,dup=P,corrupt=P,reorder=P`); none: clean only.
    #[arg(long)]
    impair: Option<String>,
    /// Also kill leaf 1 during an operation and time the recovery (ABORT, restart, new generation).
    #[arg(long)]
    kill: bool,
    /// Replay depth of every stream.
    #[arg(long, default_value_t = 16)]
    replay_depth: u16,
    /// First retransmission timeout, microseconds.
    #[arg(long, default_value_t = 3000)]
    rto_us: u64,
    /// Sleep of an idle switch poll (three switches share this machine's CPUs).
    #[arg(long, default_value_t = 50)]
    idle_sleep_us: u64,
    /// The prism-switch binary (default: next to this one).
    #[arg(long)]
    switch_binary: Option<PathBuf>,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
    /// The tree in this process (the switches' engines without DPDK or veths;
    /// no root needed). Not with --kill.
    #[arg(long)]
    sim: bool,
}

fn job(args: &Args) -> TreeJob {
    let (semantics, acc) = (args.op.semantics(), args.policy.accumulator());
    let partial = match (args.partial, acc) {
        (Some(PartialArg::Fp32), _) => PartialPolicy::FP32,
        (Some(PartialArg::Kulisch), _) => PartialPolicy::KULISCH,
        (Some(PartialArg::Auto), _) => PartialPolicy::AUTO,
        (None, AccumulatorPolicy::KULISCH_FIXED) => PartialPolicy::KULISCH,
        (None, _) => PartialPolicy::FP32,
    };
    let mut j = TreeJob::new(semantics, acc, partial, args.len);
    j.replay_depth = args.replay_depth;
    j.timeout = Duration::from_secs(5);
    j
}

fn retransmitted(stats: &[(TreeNode, serde_json::Value)]) -> u64 {
    stats.iter().map(|(_, v)| v["streams"]["retransmitted"].as_u64().unwrap_or(0)).sum()
}

/// One lab, one verified job; (report, switches' retransmissions).
fn measured(args: &Args, tag: &str, impair: Option<&str>, op: u16) -> Result<(TreeReport, u64), Box<dyn Error>> {
    let mut j = job(args);
    j.identity.op = op;
    j.impair = impair.map(|s| format!("{s},seed=99").parse()).transpose()?;
    if args.sim {
        let mut link = SimTreeLink::new(2, |_, _| {})?;
        if let Some(s) = impair {
            link.impair(s.parse()?);
        }
        eprintln!("prism-tree: {} elements, in-process tree, {}", j.vector_len, impair.map_or("clean links".to_string(), |s| format!("impaired links ({s})")));
        let r = run_tree(&j, &mut link)?;
        if !r.passed() {
            return Err(format!("results wrong: missing {}, mismatches {:?}", r.missing, r.mismatches).into());
        }
        let retx = [TreeNode::Root, TreeNode::Leaf(0), TreeNode::Leaf(1)].iter().map(|&n| link.core(n).node.stream_stats().retransmitted).sum();
        return Ok((r, retx));
    }
    let binary = args.switch_binary.clone().unwrap_or_else(|| Lab::default_binary(&std::env::current_exe().unwrap_or_default()));
    let opts = LabOptions { binary, impair: impair.map(String::from), rto_us: args.rto_us, idle_sleep_us: args.idle_sleep_us };
    let lab = Lab::start(tag, 2, opts)?;
    let mut link = AfPacketLink::open(&lab.pktgen_ifaces)?;
    eprintln!("prism-tree: {} elements, {}", j.vector_len, impair.map_or("clean links".to_string(), |s| format!("impaired links ({s})")));
    let r = run_tree(&j, &mut link)?;
    drop(link);
    let stats = lab.stop()?;
    if !r.passed() {
        return Err(format!("results wrong: missing {}, mismatches {:?}", r.missing, r.mismatches).into());
    }
    Ok((r, retransmitted(&stats)))
}

/// Kills leaf 1 mid-operation; the time from the kill to a verified result of the retry.
fn recovery(args: &Args) -> Result<(f64, f64), Box<dyn Error>> {
    let binary = args.switch_binary.clone().unwrap_or_else(|| Lab::default_binary(&std::env::current_exe().unwrap_or_default()));
    let opts = LabOptions { binary, impair: None, rto_us: args.rto_us, idle_sleep_us: args.idle_sleep_us };
    let mut lab = Lab::start("ptk", 2, opts)?;
    let mut link = AfPacketLink::open(&lab.pktgen_ifaces)?;
    let mut j = job(args);
    j.identity.op = 3;
    j.timeout = Duration::from_secs(1);
    let mut killed: Option<Instant> = None;
    let failed = run_tree_observed(&j, &mut link, &mut |p| {
        if killed.is_none() && p.data_acked >= 100 {
            lab.kill(TreeNode::Leaf(1));
            killed = Some(Instant::now());
        }
    });
    let killed = killed.ok_or("the job ended before leaf 1 could be killed (use a longer --len)")?;
    if failed.is_ok() {
        return Err("the job succeeded without leaf 1".into());
    }
    let detected = killed.elapsed().as_secs_f64();
    eprintln!("prism-tree: leaf 1 killed; the AM aborted after {detected:.2} s ({})", failed.err().map(|e| e.to_string()).unwrap_or_default());
    lab.restart(TreeNode::Leaf(1))?;
    j.identity.op_gen += 1;
    j.timeout = Duration::from_secs(5);
    j.vector_len = j.vector_len.min(100_000);
    let r = run_tree(&j, &mut link)?;
    if !r.passed() {
        return Err("the retry's results are wrong".into());
    }
    let total = killed.elapsed().as_secs_f64();
    drop(link);
    lab.stop()?;
    Ok((detected, total))
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.sim && args.kill {
        eprintln!("prism-tree: --kill needs real switch processes (leave out --sim)");
        return ExitCode::from(2);
    }
    let mut rows = Vec::new();
    let runs: Vec<(&str, Option<&str>)> = std::iter::once(("ptc", None)).chain(args.impair.as_deref().map(|s| ("pti", Some(s)))).collect();
    for (i, (tag, impair)) in runs.into_iter().enumerate() {
        match measured(&args, tag, impair, 1 + i as u16) {
            Ok((r, switch_retx)) => rows.push(json!({
                "links": impair.unwrap_or("clean"),
                "elements": args.len,
                "seconds": r.elapsed.as_secs_f64(),
                "elements_per_s": r.elements_per_s,
                "rank_data_gbps": r.elements_per_s * 4.0 * 4.0 * 8.0 / 1e9,
                "rank_frames_sent": r.ranks.sent,
                "rank_frames_retransmitted": r.ranks.retransmitted,
                "rank_hole_resends": r.ranks.hole_resends,
                "rank_probes": r.ranks.probes,
                "rank_timeouts": r.ranks.timeouts,
                "rank_refused": r.ranks.refused,
                "switch_frames_retransmitted": switch_retx,
                "result_frames": r.result_frames,
                "result_duplicates": r.result_duplicates,
                "exact": r.passed(),
            })),
            Err(e) => {
                eprintln!("prism-tree: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let mut out = json!({ "runs": rows });
    if args.kill {
        match recovery(&args) {
            Ok((detected, total)) => out["kill"] = json!({ "abort_after_s": detected, "verified_retry_after_s": total }),
            Err(e) => {
                eprintln!("prism-tree: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        println!("| links | elements | seconds | elements/s | rank frames sent | retransmitted (ranks + switches) | exact |");
        println!("|---|---|---|---|---|---|---|");
        for r in out["runs"].as_array().into_iter().flatten() {
            println!(
                "| {} | {} | {:.3} | {:.3e} | {} | {} + {} | {} |",
                r["links"].as_str().unwrap_or(""),
                r["elements"],
                r["seconds"].as_f64().unwrap_or(0.0),
                r["elements_per_s"].as_f64().unwrap_or(0.0),
                r["rank_frames_sent"],
                r["rank_frames_retransmitted"],
                r["switch_frames_retransmitted"],
                if r["exact"].as_bool() == Some(true) { "yes" } else { "NO" }
            );
        }
        if let Some(k) = out.get("kill") {
            println!(
                "\nkilled leaf 1 mid-operation: the AM gave up and aborted after {:.2} s; a verified retry (new generation, restarted leaf) finished {:.2} s after the kill",
                k["abort_after_s"].as_f64().unwrap_or(0.0),
                k["verified_retry_after_s"].as_f64().unwrap_or(0.0)
            );
        }
    }
    ExitCode::SUCCESS
}
