//! A spine-leaf tree of three prism-switch processes (S0 over L0 and L1) and
//! four ranks, over veth pairs with DPDK's net_af_packet (needs root and
//! iproute2; the README's test command has both). pktgen is the AM of every
//! node and all ranks; every direct stream has PROGRESS and retransmission.
// Starts prism-switch (a DPDK program): with the `dpdk` feature only (the default).
#![cfg(feature = "dpdk")]

use prism_dataplane::engine::Counters;
use prism_dataplane::switch::stats;
use prism_dataplane::wire::*;
use prism_pktgen::lab::{Lab, LabOptions};
use prism_pktgen::tree::{run_tree, run_tree_observed, TreeError, TreeJob, TreeNode};
use prism_pktgen::AfPacketLink;
use std::time::{Duration, Instant};

/// Three busy switches: one lab at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn lab(tag: &str, impair: Option<&str>) -> Lab {
    let exe = std::env::current_exe().unwrap();
    let binary = Lab::default_binary(&exe);
    assert!(binary.exists(), "{} missing: cargo build -p prism-dataplane --bin prism-switch", binary.display());
    let opts = LabOptions { binary, impair: impair.map(String::from), rto_us: 3000, idle_sleep_us: 20 };
    Lab::start(&format!("{tag}{}", std::process::id() % 1000), 2, opts).expect("lab")
}

fn engine(stats: &[(TreeNode, serde_json::Value)], node: TreeNode) -> Counters {
    let v = &stats.iter().find(|(n, _)| *n == node).unwrap().1;
    stats::engine(v).unwrap_or_else(|e| panic!("{e} in {v}"))
}

fn streams(stats: &[(TreeNode, serde_json::Value)], key: &str) -> u64 {
    stats.iter().map(|(_, v)| v["streams"][key].as_u64().unwrap()).sum()
}

#[test]
fn reduce_and_allreduce_through_three_switch_processes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lab = lab("tc", None);
    let mut link = AfPacketLink::open(&lab.pktgen_ifaces).unwrap();
    let cases = [
        (Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH),
        (Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH),
        (Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::AUTO),
        (Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, PartialPolicy::FP32),
        (Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, PartialPolicy::FP32),
    ];
    for (i, (semantics, acc, partial)) in cases.into_iter().enumerate() {
        let mut job = TreeJob::new(semantics, acc, partial, 20_000);
        job.identity.op = 1 + i as u16;
        job.full_range = i == 1;
        let r = run_tree(&job, &mut link).unwrap_or_else(|e| panic!("{semantics:?} {acc:?} {partial:?}: {e}"));
        assert!(r.passed(), "{semantics:?} {acc:?} {partial:?}: missing {} mismatches {:?}", r.missing, r.mismatches);
        assert!(r.rollback.is_empty(), "{:?}", r.rollback);
    }
    let stats = lab.stop().unwrap();
    for leaf in [TreeNode::Leaf(0), TreeNode::Leaf(1)] {
        assert!(engine(&stats, leaf).partials_sent > 0, "leaves send partials");
        assert!(engine(&stats, leaf).progress_sent > 0);
    }
    assert_eq!(engine(&stats, TreeNode::Root).partials_sent, 0, "the root has no parent");
    assert!(engine(&stats, TreeNode::Root).results_sent > 0);
    // REDUCE to rank 1 goes down L0 only; the ALLREDUCEs go down both.
    assert!(engine(&stats, TreeNode::Leaf(0)).results_forwarded > engine(&stats, TreeNode::Leaf(1)).results_forwarded);
    assert!(engine(&stats, TreeNode::Leaf(1)).results_forwarded > 0);
}

#[test]
fn one_percent_drop_duplicate_corrupt_and_reorder_on_every_link() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let spec = "drop=0.01,dup=0.01,corrupt=0.01,reorder=0.01";
    let lab = lab("ti", Some(spec));
    let mut link = AfPacketLink::open(&lab.pktgen_ifaces).unwrap();
    let mut retx = 0;
    for (i, (semantics, acc, partial)) in
        [(Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH), (Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, PartialPolicy::FP32)].into_iter().enumerate()
    {
        let mut job = TreeJob::new(semantics, acc, partial, 30_000);
        job.identity.op = 10 + i as u16;
        job.impair = Some(format!("{spec},seed={}", 77 + i).parse().unwrap());
        let r = run_tree(&job, &mut link).unwrap_or_else(|e| panic!("{semantics:?} {acc:?}: {e}"));
        assert!(r.passed(), "{semantics:?} {acc:?}: missing {} mismatches {:?}", r.missing, r.mismatches);
        retx += r.ranks.retransmitted;
    }
    let stats = lab.stop().unwrap();
    let engines: Vec<Counters> = stats.iter().map(|(_, v)| stats::engine(v).unwrap_or_else(|e| panic!("{e} in {v}"))).collect();
    let malformed: u64 = engines.iter().map(|c| c.malformed.iter().sum::<u64>()).sum();
    assert!(malformed > 0, "cut frames are counted as malformed");
    assert!(retx + streams(&stats, "retransmitted") > 0, "losses were repaired by retransmission");
    let dups: u64 = engines.iter().map(|c| c.data_duplicates).sum();
    assert!(dups > 0, "duplicates were recognised, not applied");
}

#[test]
fn a_killed_leaf_fails_the_operation_and_a_new_generation_succeeds() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut lab = lab("tk", None);
    let mut link = AfPacketLink::open(&lab.pktgen_ifaces).unwrap();
    let mut job = TreeJob::new(Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH, 400_000);
    job.identity.op = 20;
    job.timeout = Duration::from_secs(2);
    // L1 dies in the middle of the operation: once the leaves acknowledged some DATA.
    let killed_at = std::cell::Cell::new(None);
    let err = run_tree_observed(&job, &mut link, &mut |p| {
        if p.data_acked >= 40 && killed_at.get().is_none() {
            lab.kill(TreeNode::Leaf(1));
            killed_at.set(Some(Instant::now()));
        }
    })
    .expect_err("the operation cannot succeed without L1");
    let killed_at = killed_at.get().expect("L1 was killed during the data phase");
    match &err {
        TreeError::Stalled { rollback, .. } => {
            assert!(rollback.iter().any(|r| r.contains("leaf 1")), "the AM reports the rollback it could not do: {rollback:?}");
            assert!(!rollback.iter().any(|r| r.contains("root") || r.contains("leaf 0")), "the live nodes aborted: {rollback:?}");
        }
        other => panic!("expected a stalled run, got {other}"),
    }
    lab.restart(TreeNode::Leaf(1)).unwrap();
    job.identity.op_gen += 1;
    job.timeout = Duration::from_secs(10);
    job.vector_len = 50_000;
    let r = run_tree(&job, &mut link).unwrap();
    assert!(r.passed(), "retry: missing {} mismatches {:?}", r.missing, r.mismatches);
    eprintln!("killed leaf to a verified retry: {:.2} s", killed_at.elapsed().as_secs_f64());
    lab.stop().unwrap();
}
