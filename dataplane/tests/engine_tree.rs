//! Switch trees under the deterministic simulator (tests/tree): spine S0 over
//! leaves L0 and L1 and four ranks, PROGRESS and local retransmission on every
//! direct stream, links that drop, duplicate, reorder and corrupt. Results are
//! checked against the independent oracle (prism-oracle): KULISCH_FIXED
//! against the exact sum, FP32_ARRIVAL against a replay of the tree in the
//! order each node applied its inputs.

use prism_oracle as oracle;
mod tree;

use oracle::{F32, V};
use prism_dataplane::wire::*;
use tree::*;

fn term(bits: u32) -> V {
    oracle::of_f32_bits(bits)
}

/// One round-to-nearest-even FP32 addition, as FP32_ARRIVAL applies it.
fn add_fp32(acc: &V, t: &V) -> V {
    oracle::of_f32_bits(oracle::round(&oracle::sum(&[acc.clone(), t.clone()]), F32))
}

/// The value node `n` holds (and sends on) for one element: the exact sum of
/// the ranks below it (Kulisch), or the FP32 sum of its inputs in the order
/// it applied them, each input being a rank's value or a child's partial.
fn node_value(s: &TreeScenario, v: &[Vec<u32>], o: &TreeOutcome, n: usize, pos: usize) -> V {
    let leaf_node = n == L0 || n == L1;
    if s.accumulator == AccumulatorPolicy::KULISCH_FIXED {
        let ranks: Vec<u16> = (0..RANKS).filter(|&r| !leaf_node || leaf_of(r).0 == n).collect();
        return oracle::sum(&ranks.iter().map(|&r| term(v[r as usize][pos])).collect::<Vec<_>>());
    }
    let input = |stream: u16| if leaf_node { term(v[stream as usize][pos]) } else { node_value(s, v, o, (stream - child_stream(0)) as usize, pos) };
    let order = &o.arrival[n][pos];
    let want = if leaf_node { 2 } else { s.children(n).len() };
    assert_eq!(order.len(), want, "node {n} element {pos} applied {order:?}");
    let mut acc = input(order[0]);
    for &c in &order[1..] {
        acc = add_fp32(&acc, &input(c));
    }
    acc
}

/// The value every receiving rank must get for one element.
fn expected(s: &TreeScenario, v: &[Vec<u32>], o: &TreeOutcome, pos: usize) -> V {
    let value = node_value(s, v, o, S0, pos);
    match s.output {
        OutputFormat::FP32 => oracle::of_f32_bits(oracle::round(&value, F32)),
        // AUTO is lossless: the value itself (FP32-rounded under FP32_ARRIVAL, where it already is).
        _ => value,
    }
}

/// Every element applied exactly once per contributor at every node.
fn applied_once(s: &TreeScenario, o: &TreeOutcome) {
    for (n, per) in o.arrival.iter().enumerate() {
        let want = if n == L0 || n == L1 { 2 } else { s.children(n).len() };
        for (pos, order) in per.iter().enumerate() {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), order.len(), "node {n} element {pos} applied twice: {order:?} ({s:?})");
            assert_eq!(order.len(), want, "node {n} element {pos}: {order:?}");
        }
    }
}

/// Every partial a node applied carries its sender's value exactly, in a
/// format its partial policy allows.
fn check_partials(s: &TreeScenario, v: &[Vec<u32>], o: &TreeOutcome) {
    assert!(!o.partials.is_empty());
    for (_, f) in &o.partials {
        let Some(PrismRepr::Data(d)) = parse_frame(f, &Limits::default()).unwrap().prism else { panic!() };
        let child = (d.stream_id - child_stream(0)) as usize;
        let mut pos = d.first_element as usize;
        for g in d.groups() {
            match (s.partial, g.format) {
                (PartialPolicy::KULISCH, NumFormat::Kulisch { width_bits }) => assert_eq!(width_bits, s.kulisch_width()),
                (PartialPolicy::FP32, NumFormat::Fp32) | (PartialPolicy::AUTO, _) => {}
                (p, f) => panic!("partial policy {p:?} sent {f:?}"),
            }
            for val in g.values.chunks_exact(g.format.value_bytes()) {
                assert_eq!(oracle::decode(g.format, val), node_value(s, v, o, child, pos), "partial of node {child} element {pos} ({s:?})");
                pos += 1;
            }
        }
    }
}

use prism_arith::NumFormat;

/// Runs a scenario to the end and checks everything; returns the net for figures.
fn run(s: &TreeScenario) -> Net {
    let v = vectors(s);
    let mut nodes: Vec<_> = (0..s.nodes()).map(new_node).collect();
    setup(&mut nodes, s, 2);
    let mut net = Net::new(nodes, s, &v, 2);
    let finished = net.run(s, 60_000_000_000, |_| false);
    assert!(finished, "run stalled at {} ns after {} steps: {:?}", net.now, net.outcome.steps, net.nodes.iter().map(|n| &n.counters).collect::<Vec<_>>());
    applied_once(s, &net.outcome);
    check_partials(s, &v, &net.outcome);
    for r in 0..RANKS {
        let rank = &net.ranks[r as usize];
        assert!(!rank.inexact, "rank {r} got INEXACT");
        if !s.gets_result(r) {
            assert_eq!(rank.result_frames, 0, "rank {r} is not a destination");
            continue;
        }
        for pos in 0..s.vector_len as usize {
            let (format, bytes) = rank.values[pos].as_ref().unwrap_or_else(|| panic!("rank {r} element {pos} missing"));
            assert_eq!(oracle::decode(*format, bytes), expected(s, &v, &net.outcome, pos), "rank {r} element {pos} ({s:?})");
        }
    }
    // Every node's part is over: COMPLETE is accepted, then RELEASE.
    for n in 0..s.nodes() {
        assert_eq!(command(&mut net.nodes[n], n, s, 2, 900, Command::COMPLETE), AckStatus::OK, "COMPLETE at node {n}: {:?}", net.nodes[n].counters);
        assert_eq!(command(&mut net.nodes[n], n, s, 2, 901, Command::RELEASE), AckStatus::OK);
    }
    net
}

fn policies() -> [(AccumulatorPolicy, PartialPolicy); 4] {
    [
        (AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH),
        (AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::AUTO),
        (AccumulatorPolicy::FP32_ARRIVAL, PartialPolicy::FP32),
        (AccumulatorPolicy::FP32_ARRIVAL, PartialPolicy::AUTO),
    ]
}

#[test]
fn reduce_and_allreduce_through_a_spine_leaf_tree() {
    for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
        for (acc, partial) in policies() {
            let s = TreeScenario::new(semantics, acc, partial);
            let net = run(&s);
            let c = &net.nodes[S0].counters;
            assert!(c.data_applied > 0 && c.progress_sent > 0);
            assert_eq!(net.nodes[L1].counters.results_forwarded > 0, semantics == Semantics::ALLREDUCE, "REDUCE to rank1 goes down L0 only");
        }
    }
}

#[test]
fn three_levels_with_an_internal_node() {
    for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
        for (i, (acc, partial)) in policies().into_iter().enumerate() {
            let mut s = TreeScenario::new(semantics, acc, partial);
            s.chain = true;
            s.dest_rank = 3;
            s.vector_len = 4000;
            let net = run(&s);
            let c = &net.nodes[I0].counters;
            assert!(c.partials_sent > 0 && c.results_forwarded > 0, "{c:?}");
            // The impaired variant of the same tree.
            let mut s = s.impaired(0.02);
            s.net_seed = 500 + i as u64;
            run(&s);
        }
    }
}

#[test]
fn full_range_and_auto_output() {
    for (acc, partial) in policies() {
        let mut s = TreeScenario::new(Semantics::ALLREDUCE, acc, partial);
        s.full_range = true;
        s.output = OutputFormat::AUTO;
        s.vector_len = 2000;
        run(&s);
    }
}

#[test]
fn one_percent_loss_duplication_corruption_and_reordering() {
    for (i, (acc, partial)) in policies().into_iter().enumerate() {
        for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
            let mut s = TreeScenario::new(semantics, acc, partial).impaired(0.01);
            s.net_seed = 40 + i as u64;
            s.vector_len = 20_000;
            let net = run(&s);
            let o = &net.outcome;
            assert!(o.dropped > 0 && o.duplicated > 0 && o.corrupted > 0, "{o:?}");
            let retx: u64 = net.nodes.iter().map(|n| n.stream_stats().retransmitted).sum::<u64>() + net.ranks.iter().map(|r| r.replay.stats.retransmitted).sum::<u64>();
            assert!(retx > 0, "losses were repaired by retransmission");
            let malformed: u64 = net.nodes.iter().map(|n| n.counters.malformed.iter().sum::<u64>()).sum();
            assert!(malformed > 0, "corrupted frames are counted as malformed");
        }
    }
}

#[test]
fn many_seeds_with_heavy_impairment() {
    for seed in 0..24u64 {
        let (acc, partial) = policies()[seed as usize % 4];
        let semantics = if seed % 2 == 0 { Semantics::ALLREDUCE } else { Semantics::REDUCE };
        let mut s = TreeScenario::new(semantics, acc, partial).impaired(0.05);
        s.net_seed = 1000 + seed;
        s.data_seed = seed;
        s.dest_rank = (seed % 4) as u16;
        s.vector_len = 1 + (seed as u32 * 733) % 4000;
        s.replay_depth = 1 + (seed % 8) as u16;
        run(&s);
    }
}

#[test]
fn a_killed_leaf_is_aborted_and_a_new_generation_succeeds() {
    let s = TreeScenario::new(Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, PartialPolicy::KULISCH);
    let v = vectors(&s);
    let mut nodes: Vec<_> = (0..3).map(new_node).collect();
    setup(&mut nodes, &s, 2);
    let mut net = Net::new(nodes, &s, &v, 2);
    // L1 dies once the root has applied some of its partials.
    let killed = net.run(&s, 60_000_000_000, |n| n.nodes[S0].counters.data_applied >= 6);
    assert!(killed);
    net.dead.push(L1);
    // Nothing completes: the run ends when only timers are left and they give up at the limit.
    let finished = net.run(&s, net.now + 500_000_000, |_| false);
    assert!(!finished, "the tree cannot finish without L1");
    for r in 0..RANKS {
        assert!(!net.ranks[r as usize].result_done(&s), "rank {r} must not see a complete result");
    }
    // The AM gets no COMPLETE from the root, aborts every node (L1 does not answer).
    assert_eq!(command(&mut net.nodes[S0], S0, &s, 2, 300, Command::COMPLETE), AckStatus::BAD_STATE);
    for n in [S0, L0] {
        assert_eq!(command(&mut net.nodes[n], n, &s, 2, 301, Command::ABORT), AckStatus::OK);
    }
    // The replaced leaf comes back empty; the retry uses a newer generation everywhere.
    let mut nodes = std::mem::take(&mut net.nodes);
    nodes[L1] = new_node(L1);
    setup(&mut nodes, &s, 3);
    let mut net = Net::new(nodes, &s, &v, 3);
    assert!(net.run(&s, 60_000_000_000, |_| false));
    for r in 0..RANKS {
        assert!(net.ranks[r as usize].result_done(&s));
        for (pos, value) in net.ranks[r as usize].values[..s.vector_len as usize].iter().enumerate() {
            let (format, bytes) = value.as_ref().unwrap();
            let want = oracle::of_f32_bits(oracle::round(&oracle::sum(&(0..RANKS).map(|q| term(v[q as usize][pos])).collect::<Vec<_>>()), F32));
            assert_eq!(oracle::decode(*format, bytes), want);
        }
    }
    // Old-generation frames still in flight change nothing at the new context.
    let mut out = Vec::new();
    net.nodes[S0].handle(AM_PORT, &stage_frames(&s, 2, 302)[S0], &mut out);
    assert_eq!(ack_status(&out), AckStatus::STALE_GENERATION);
}
