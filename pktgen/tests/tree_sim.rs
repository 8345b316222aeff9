//! The tree job's Aggregation Manager and ranks against the in-process tree
//! (`SimTreeLink`: the same SwitchCores as prism-switch, wired as the lab).

use prism_dataplane::wire::*;
use prism_pktgen::simtree::SimTreeLink;
use prism_pktgen::tree::{run_tree, TreeError, TreeJob, TreeNode};

#[test]
fn reduce_and_allreduce_in_process() {
    for (i, (semantics, acc, partial)) in
        [(Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::AUTO), (Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, PartialPolicy::AUTO)].into_iter().enumerate()
    {
        let mut link = SimTreeLink::new(2, |_, _| {}).unwrap().with_virtual_clock();
        let mut job = TreeJob::new(semantics, acc, partial, 10_000);
        job.identity.op = 1 + i as u16;
        let r = run_tree(&job, &mut link).unwrap();
        assert!(r.passed(), "missing {} mismatches {:?}", r.missing, r.mismatches);
        assert!(r.rollback.is_empty());
        // COMPLETE and RELEASE reached every node: nothing stays installed.
        for n in job.nodes() {
            assert_eq!(link.core(n).node.state(&job.identity), None, "{} still holds the operation", n.name());
        }
        assert!(link.core(TreeNode::Leaf(0)).node.counters.partials_sent > 0);
    }
}

#[test]
fn a_refused_stage_rolls_back_every_staged_node() {
    // Leaf 1 has no free context: its STAGE is refused after the root and leaf 0 staged.
    let mut link = SimTreeLink::new(2, |n, cfg| {
        if n == TreeNode::Leaf(1) {
            cfg.node.max_ops = 0;
        }
    })
    .unwrap()
    .with_virtual_clock();
    let job = TreeJob::new(Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH, 1000);
    match run_tree(&job, &mut link) {
        Err(TreeError::Setup { cause, staged, rollback }) => {
            assert!(matches!(*cause, TreeError::Refused { command: "STAGE", status: "NO_RESOURCES", .. }), "{cause}");
            assert_eq!(staged, vec!["root".to_string(), "leaf 0".to_string()]);
            assert!(rollback.is_empty(), "every ABORT was acknowledged: {rollback:?}");
        }
        other => panic!("expected a setup failure, got {:?}", other.map(|r| r.passed())),
    }
    for n in job.nodes() {
        assert_eq!(link.core(n).node.state(&job.identity), None, "{} keeps no context", n.name());
    }
    // No DATA was sent: the start is granted only after every COMMIT.
    assert_eq!(link.core(TreeNode::Leaf(0)).node.counters.data_applied, 0);
}

#[test]
fn lost_acks_are_retried_with_the_same_transaction_and_bytes() {
    let mut link = SimTreeLink::new(2, |_, _| {}).unwrap().with_virtual_clock();
    // The root's CAPS_RESPONSE is lost; the AM asks again.
    link.lose_to_pktgen = 1;
    let job = TreeJob::new(Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH, 2000);
    let r = run_tree(&job, &mut link).unwrap();
    assert!(r.passed());
    // A STAGE whose ACK is lost is answered from the node's record, not applied twice.
    let mut link = SimTreeLink::new(2, |_, _| {}).unwrap().with_virtual_clock();
    let mut job = TreeJob::new(Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH, 2000);
    job.identity.op = 2;
    let r = run_tree_losing_stage_ack(&job, &mut link);
    assert!(r.passed());
    assert_eq!(link.core(TreeNode::Root).node.counters.retries_answered, 1, "the retry got the recorded ACK");
}

/// Runs the job with the root's first STAGE ACK lost on the way back.
fn run_tree_losing_stage_ack(job: &TreeJob, link: &mut SimTreeLink) -> prism_pktgen::tree::TreeReport {
    struct Lossy<'a> {
        inner: &'a mut SimTreeLink,
        lost: bool,
    }
    impl prism_pktgen::Link for Lossy<'_> {
        fn send(&mut self, port: u16, frame: &[u8]) -> std::io::Result<()> {
            self.inner.send(port, frame)
        }
        fn recv(&mut self, timeout: std::time::Duration) -> std::io::Result<Option<prism_pktgen::link::Rx>> {
            let rx = self.inner.recv(timeout)?;
            if let Some(r) = &rx {
                if !self.lost {
                    if let Ok(p) = parse_frame(&r.frame, &Limits::default()) {
                        if let Some(PrismRepr::Control(c)) = p.prism {
                            if let ControlBody::Ack { body, .. } = c.body {
                                if body.command == Command::STAGE && p.eth.src == TreeNode::Root.mac() {
                                    self.lost = true;
                                    return Ok(None);
                                }
                            }
                        }
                    }
                }
            }
            Ok(rx)
        }
        fn describe(&self) -> String {
            "lossy".into()
        }
    }
    let mut lossy = Lossy { inner: link, lost: false };
    let r = run_tree(job, &mut lossy).unwrap();
    assert!(lossy.lost, "the STAGE ACK was dropped once");
    r
}

/// 2% loss, duplication, corruption and reordering at every switch and at
/// the ranks, on the virtual clock (the same run every time, however loaded
/// the machine): every run ends exact, and COMPLETE and RELEASE are accepted
/// everywhere. Among the runs, ones that failed before: run 271 stalled the
/// root for good (a leaf's packets below its watermark held its window); in
/// runs 5, 8, 9 and 10 a leaf refused COMPLETE for a RESULT copy the ranks
/// no longer acknowledged, in 28 and 36 for a partial whose copy the root,
/// released first, no longer acknowledged.
#[test]
fn impaired_in_process_tree_stays_exact() {
    let all = (AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH, Semantics::ALLREDUCE);
    let runs = (0..12).chain([28, 36, 271]).map(|i| (i, all));
    let others = [(AccumulatorPolicy::FP32_ARRIVAL, PartialPolicy::AUTO), (AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::AUTO), (AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH)];
    let runs = runs.chain((0..6).map(|i| {
        let (acc, partial) = others[i as usize % others.len()];
        (1000 + i, (acc, partial, if i % 2 == 0 { Semantics::REDUCE } else { Semantics::ALLREDUCE }))
    }));
    let mut retransmitted = 0;
    for (i, (acc, partial, semantics)) in runs {
        let mut link = SimTreeLink::new(2, |_, _| {}).unwrap().with_virtual_clock();
        link.impair(format!("drop=0.02,dup=0.02,corrupt=0.02,reorder=0.02,seed={}", 5 + 2 * i).parse().unwrap());
        let mut job = TreeJob::new(semantics, acc, partial, 20_000);
        job.impair = Some(format!("drop=0.02,dup=0.02,corrupt=0.02,reorder=0.02,seed={}", 6 + 2 * i).parse().unwrap());
        let r = run_tree(&job, &mut link).unwrap_or_else(|e| panic!("run {i}: {e}"));
        assert!(r.passed(), "run {i}: missing {} mismatches {:?}", r.missing, r.mismatches);
        assert!(r.rollback.is_empty(), "run {i}: {:?}", r.rollback);
        let switch_retx: u64 = job.nodes().iter().map(|&n| link.core(n).node.stream_stats().retransmitted).sum();
        retransmitted += r.ranks.retransmitted + switch_retx;
    }
    assert!(retransmitted > 0);
}

#[test]
fn shipped_tree_configs_are_the_labs() {
    use prism_dataplane::switch::config::SwitchConfig;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tree");
    for (file, node) in [("root.toml", TreeNode::Root), ("leaf0.toml", TreeNode::Leaf(0)), ("leaf1.toml", TreeNode::Leaf(1))] {
        let shipped = SwitchConfig::load(&dir.join(file)).unwrap();
        let lab = SwitchConfig::parse(&prism_pktgen::lab::config_text(node)).unwrap();
        assert_eq!(format!("{shipped:?}"), format!("{lab:?}"), "configs/tree/{file} differs from the lab's wiring");
    }
}
