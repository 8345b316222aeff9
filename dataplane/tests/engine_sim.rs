//! The node engine under the deterministic simulator (fixtures::sim), checked
//! against the independent oracle (prism-oracle).

use prism_oracle as oracle;

use oracle::{B16, F16, F32, V};
use prism_arith::NumFormat;
use prism_dataplane::engine::{DataReject, Node};
use prism_dataplane::fixtures::sim;
use prism_dataplane::wire::*;
use sim::*;

/// What each element must be, per the scenario's policy and output format.
fn expected(s: &Scenario, v: &[Vec<Value>], o: &Outcome, pos: usize) -> V {
    let terms: Vec<V> = v.iter().map(|r| oracle::of_f64(r[pos].as_f64())).collect();
    let value = if s.accumulator == AccumulatorPolicy::KULISCH_FIXED {
        oracle::sum(&terms)
    } else {
        // A sequential round-to-nearest-even replay of the actual admission order.
        let order = &o.arrival[pos];
        assert_eq!(order.len(), s.ranks as usize, "element {pos} applied {order:?}");
        let mut acc = terms[order[0] as usize].clone();
        for &r in &order[1..] {
            acc = oracle::of_f32_bits(oracle::round(&oracle::sum(&[acc, terms[r as usize].clone()]), F32));
        }
        acc
    };
    match s.output {
        OutputFormat::FP32 => oracle::of_f32_bits(oracle::round(&value, F32)),
        OutputFormat::FP16 => oracle::of_f64(half::f16::from_bits(oracle::round(&value, F16) as u16).to_f64()),
        OutputFormat::BF16 => oracle::of_f64(half::bf16::from_bits(oracle::round(&value, B16) as u16).to_f64()),
        // AUTO, KULISCH and INT8 are lossless: the value itself (FP32-rounded under FP32_ARRIVAL).
        _ => {
            if s.accumulator == AccumulatorPolicy::KULISCH_FIXED {
                value
            } else {
                oracle::of_f32_bits(oracle::round(&value, F32))
            }
        }
    }
}

/// Checks every path's RESULT stream: right ports only, contiguous, LAST at the end, exact values.
fn verify(s: &Scenario, v: &[Vec<Value>], o: &Outcome) {
    let want_ports: Vec<u16> = if s.semantics == Semantics::REDUCE { vec![s.dest_rank] } else { (0..s.ranks).collect() };
    let want: Vec<V> = (0..s.vector_len as usize).map(|pos| expected(s, v, o, pos)).collect();
    assert_eq!(o.results.keys().copied().collect::<Vec<_>>(), want_ports, "RESULT ports");
    for (&port, frames) in &o.results {
        let mut next = 0u64;
        for (i, f) in frames.iter().enumerate() {
            let parsed = parse_frame(f, &Limits { mtu: s.mtu }).unwrap();
            assert_eq!(parsed.eth.dst, rank_mac(port));
            let Some(PrismRepr::Data(d)) = parsed.prism else { panic!("not RESULT") };
            assert_eq!(d.class, Class::RESULT);
            assert!(!d.is_inexact(), "unexpected INEXACT");
            // Frames the sink refused leave gaps in the stream, not wrong values.
            if o.refused == 0 {
                assert_eq!((d.packet_id, d.stream_id, d.dst_ep, d.src_ep), (i as u32, port, 0x1000 + port, 0x0100 + port));
                assert_eq!(d.first_element as u64, next, "port {port} packet {i}");
            }
            assert_eq!(d.is_last(), d.end_element() == s.vector_len as u64);
            let mut pos = d.first_element as usize;
            for g in d.groups() {
                for val in g.values.chunks_exact(g.format.value_bytes()) {
                    assert_eq!(oracle::decode(g.format, val), want[pos], "{s:?} port {port} element {pos} as {:?}", g.format);
                    pos += 1;
                }
            }
            next = d.end_element();
        }
        if o.refused == 0 {
            assert_eq!(next, s.vector_len as u64, "port {port} coverage");
        }
    }
}

fn run(s: &Scenario) -> (Node, Outcome) {
    let v = vectors(s);
    let mut n = setup(s, 2);
    let o = run_data(&mut n, s, &v, 2);
    verify(s, &v, &o);
    // The operation completes and releases.
    let mut out = Vec::new();
    n.handle(AM_PORT, &control_frame(s.identity(2), 10, Command::COMPLETE, ControlBody::Empty), &mut out);
    assert_eq!(ack_status(&out), AckStatus::OK);
    out.clear();
    n.handle(AM_PORT, &control_frame(s.identity(2), 11, Command::RELEASE, ControlBody::Empty), &mut out);
    assert_eq!(ack_status(&out), AckStatus::OK);
    (n, o)
}

#[test]
fn reduce_and_allreduce_for_2_3_8_64_ranks_both_policies() {
    for ranks in [2u16, 3, 8, 64] {
        for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
            for acc in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
                let mut s = Scenario::new(ranks, semantics, acc);
                s.vector_len = if ranks == 64 { 1000 } else { 3000 };
                s.data_seed = ranks as u64;
                s.net_seed = ranks as u64 * 7 + u8::from(semantics) as u64;
                let (n, o) = run(&s);
                assert!(o.steps > 0);
                assert_eq!(n.counters.data_rejected.iter().sum::<u64>(), 0, "{s:?}: {:?}", n.counters);
            }
        }
    }
}

#[test]
fn every_output_format() {
    for acc in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
        for out in [OutputFormat::AUTO, OutputFormat::FP16, OutputFormat::BF16, OutputFormat::INT8, OutputFormat::KULISCH] {
            if acc == AccumulatorPolicy::FP32_ARRIVAL && out == OutputFormat::KULISCH {
                continue;
            }
            let mut s = Scenario::new(3, Semantics::ALLREDUCE, acc);
            s.output = out;
            s.integers = out == OutputFormat::INT8;
            s.data_seed = 40;
            run(&s);
        }
    }
}

#[test]
fn vectors_much_longer_than_the_window_stream_through_it() {
    for mtu in [576u16, 1500, 9000] {
        let mut s = Scenario::new(3, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED);
        s.mtu = mtu;
        s.vector_len = 40_000;
        s.output = OutputFormat::AUTO;
        run(&s);
    }
}

/// A RESULT the sink has no buffer for is lost, and its slots are still
/// cleared: the values that reuse them later (the vector is many windows
/// long) are exact. The single-path FP32 run is written straight into the
/// frame, so this is the path where a missing buffer means nothing was taken.
#[test]
fn results_lost_for_want_of_a_buffer_leave_no_stale_slots() {
    for (semantics, policy) in [(Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL), (Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED), (Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL)] {
        let mut s = Scenario::new(3, semantics, policy);
        s.vector_len = 20_000;
        // Five: prime to the three ports and to the eight packets a window
        // holds, so refused frames land on every port and every part of the
        // ring, and a refused range is later reused by a delivered one.
        s.refuse_every = 5;
        let v = vectors(&s);
        let mut n = setup(&s, 2);
        let o = run_data(&mut n, &s, &v, 2);
        let delivered: usize = o.results.values().map(|f| f.len()).sum();
        assert!(o.refused > 0 && delivered >= 4 * o.refused - 4, "{semantics:?}: {delivered} delivered, {} refused", o.refused);
        verify(&s, &v, &o);
    }
}

#[test]
fn duplicates_reordering_and_malformed_frames_change_nothing() {
    for acc in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
        let mut s = Scenario::new(8, Semantics::ALLREDUCE, acc);
        s.duplicate = 0.2;
        s.malformed = 0.1;
        s.vector_len = 10_000;
        let (n, _) = run(&s);
        assert!(n.counters.data_duplicates + n.counters.data_rejected[DataReject::BelowWindow.index()] > 0, "duplicates seen");
        assert!(n.counters.malformed.iter().sum::<u64>() > 0, "malformed frames seen");
    }
}

#[test]
fn any_interleaving_gives_the_same_kulisch_result() {
    let mut first: Option<std::collections::BTreeMap<u16, Vec<Vec<u8>>>> = None;
    for net_seed in 0..12 {
        let mut s = Scenario::new(8, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED);
        s.output = OutputFormat::AUTO;
        s.net_seed = net_seed;
        s.duplicate = 0.05;
        let (_, o) = run(&s);
        match &first {
            None => first = Some(o.results),
            Some(f) => assert_eq!(f, &o.results, "net seed {net_seed} changed the RESULT bytes"),
        }
    }
}

#[test]
fn abort_in_the_middle_then_a_newer_generation() {
    let s = Scenario::new(3, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED);
    let v = vectors(&s);
    let mut n = setup(&s, 2);
    let mut rng = rand::SeedableRng::seed_from_u64(9);
    let frames = packetize(&s, 0, &v[0], 2, &mut rng);
    let mut out = Vec::new();
    n.handle(0, &frames[0].2, &mut out);
    assert_eq!(n.counters.data_applied, 1);
    n.handle(AM_PORT, &control_frame(s.identity(2), 20, Command::ABORT, ControlBody::Empty), &mut out);
    assert_eq!(ack_status(&out), AckStatus::OK);
    out.clear();
    // Stale DATA of the aborted generation is refused; nothing comes out.
    n.handle(0, &frames[1].2, &mut out);
    assert!(out.is_empty());
    assert_eq!(n.counters.data_rejected[DataReject::NoOperation.index()], 1);
    // The same generation cannot be staged again; a newer one runs to completion.
    n.handle(AM_PORT, &stage_frame(&s, 21, 2), &mut out);
    assert_eq!(ack_status(&out), AckStatus::STALE_GENERATION);
    out.clear();
    n.handle(AM_PORT, &stage_frame(&s, 22, 3), &mut out);
    assert_eq!(ack_status(&out), AckStatus::OK);
    out.clear();
    n.handle(AM_PORT, &control_frame(s.identity(3), 23, Command::COMMIT, ControlBody::Empty), &mut out);
    assert_eq!(ack_status(&out), AckStatus::OK);
    // An old-generation frame while the new one is active: stale.
    out.clear();
    n.handle(0, &frames[1].2, &mut out);
    assert_eq!(n.counters.data_rejected[DataReject::StaleGeneration.index()], 1);
    let o = run_data(&mut n, &s, &v, 3);
    verify(&s, &v, &o);
}

/// One DATA frame of rank `r` covering `[first, first + n)` with FP32 ones.
/// A DATA frame from rank 0 (not the last) of these groups, at `first`.
fn rank0_frame(s: &Scenario, packet_id: u32, first: u32, groups: &[GroupRepr<'_>]) -> Vec<u8> {
    let mut body = vec![0; groups_len(groups)];
    emit_groups(groups, &mut body);
    let count = groups.iter().map(|g| g.count).sum();
    let p = PrismRepr::Data(DataRepr {
        class: Class::DATA,
        identity: s.identity(2),
        src_ep: 0x1000,
        dst_ep: 0x0100,
        packet_id,
        first_element: first,
        element_count: count,
        group_count: groups.len() as u8,
        flags: 0,
        stream_id: 0,
        body: &body,
    });
    let mut f = vec![0; p.frame_len()];
    p.emit_frame(&EthernetRepr { dst: prism_dataplane::golden::SWITCH_MAC, src: rank_mac(0), ethertype: ETHERTYPE }, &mut f);
    f
}

fn data(s: &Scenario, r: u16, first: u32, n: u16, packet_id: u32, edit: impl Fn(&mut DataRepr<'_>, &mut EthernetRepr)) -> Vec<u8> {
    data_of(s, r, first, n, packet_id, |_| 1.0, edit)
}

/// `data` with element `i` of the frame (from `first`) holding `value(i)`.
fn data_of(s: &Scenario, r: u16, first: u32, n: u16, packet_id: u32, value: impl Fn(u32) -> f32, edit: impl Fn(&mut DataRepr<'_>, &mut EthernetRepr)) -> Vec<u8> {
    let values: Vec<u8> = (0..n as u32).flat_map(|i| value(i).to_le_bytes()).collect();
    let g = [GroupRepr { format: NumFormat::Fp32, count: n, values: &values }];
    let mut body = vec![0; groups_len(&g)];
    emit_groups(&g, &mut body);
    let mut d = DataRepr {
        class: Class::DATA,
        identity: s.identity(2),
        src_ep: 0x1000 + r,
        dst_ep: 0x0100 + r,
        packet_id,
        first_element: first,
        element_count: n,
        group_count: 1,
        flags: if first + n as u32 == s.vector_len { flags::LAST } else { 0 },
        stream_id: r,
        body: &body,
    };
    let mut eth = EthernetRepr { dst: prism_dataplane::golden::SWITCH_MAC, src: rank_mac(r), ethertype: ETHERTYPE };
    edit(&mut d, &mut eth);
    let p = PrismRepr::Data(d);
    let mut f = vec![0; p.frame_len()];
    p.emit_frame(&eth, &mut f);
    f
}

#[test]
fn every_data_reject_path_is_counted_and_changes_nothing() {
    let s = Scenario::new(2, Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL);
    let window = single_window_elements(1500) as u32;
    let kulisch = {
        let v = vec![0u8; 36];
        let mut v = v;
        v[1] = 1;
        v
    };
    let mut n = setup(&s, 2);
    let mut out = Vec::new();
    // Rank 0 delivers [0, 100) once; the rejects below must not disturb it.
    n.handle(0, &data(&s, 0, 0, 100, 0, |_, _| {}), &mut out);
    assert_eq!(n.counters.data_applied, 1);
    let cases: Vec<(DataReject, u16, Vec<u8>)> = vec![
        (DataReject::WrongPort, 1, data(&s, 0, 100, 10, 1, |_, _| {})),
        (DataReject::WrongSourceMac, 0, data(&s, 0, 100, 10, 1, |_, e| e.src = rank_mac(1))),
        (DataReject::EndpointMismatch, 0, data(&s, 0, 100, 10, 1, |d, _| d.dst_ep = 0x0101)),
        (DataReject::UnknownStream, 0, data(&s, 0, 100, 10, 1, |d, _| d.stream_id = 9)),
        (DataReject::RangeOutsideVector, 0, data(&s, 0, 2995, 10, 1, |_, _| {})),
        (DataReject::LastFlagMismatch, 0, data(&s, 0, 100, 10, 1, |d, _| d.flags = flags::LAST)),
        (DataReject::BeyondWindow, 0, data(&s, 0, window - 5, 10, 1, |_, _| {})),
        (DataReject::Overlap, 0, data(&s, 0, 50, 100, 1, |_, _| {})),
        (DataReject::ChangedRetransmit, 0, data(&s, 0, 0, 100, 0, |d, _| d.first_element = 1)),
        (DataReject::ResultNotInput, 0, data(&s, 0, 100, 10, 1, |d, _| d.class = Class::RESULT)),
        (DataReject::NoOperation, 0, data(&s, 0, 100, 10, 1, |d, _| d.identity.op = 99)),
        (DataReject::NoOperation, 0, data(&s, 0, 100, 10, 1, |d, _| d.identity.op_gen = 3)),
        (DataReject::StaleGeneration, 0, data(&s, 0, 100, 10, 1, |d, _| d.identity.op_gen = 1)),
    ];
    for (reason, port, frame) in cases {
        let before = n.counters.data_rejected[reason.index()];
        n.handle(port, &frame, &mut out);
        assert_eq!(n.counters.data_rejected[reason.index()], before + 1, "{}", reason.name());
        assert!(out.is_empty(), "{} produced output", reason.name());
    }
    // Kulisch values under FP32_ARRIVAL.
    let kulisch_group = GroupRepr { format: NumFormat::Kulisch { width_bits: 280 }, count: 1, values: &kulisch };
    n.handle(0, &rank0_frame(&s, 5, 200, &[kulisch_group]), &mut out);
    assert_eq!(n.counters.data_rejected[DataReject::FormatNotAllowed.index()], 1);
    // The same behind an FP32 group: every group of a body is checked.
    let ones: Vec<u8> = 1.0f32.to_le_bytes().to_vec();
    let fp32_group = GroupRepr { format: NumFormat::Fp32, count: 1, values: &ones };
    n.handle(0, &rank0_frame(&s, 6, 201, &[fp32_group, kulisch_group]), &mut out);
    assert_eq!(n.counters.data_rejected[DataReject::FormatNotAllowed.index()], 2);
    // A valid DATA frame for another MAC is not ours: counted, nothing applied.
    let applied = n.counters.data_applied;
    n.handle(0, &data(&s, 0, 300, 1, 7, |_, e| e.dst = rank_mac(1)), &mut out);
    assert_eq!((n.counters.not_for_us, n.counters.data_applied), (1, applied));
    // A DATA frame whose groups do not match its header is malformed, by reason.
    let mut bad = data(&s, 0, 300, 1, 7, |_, _| {});
    DataPacket::new_unchecked(&mut bad[ETH_HEADER_LEN..]).set_element_count(2);
    n.handle(0, &bad, &mut out);
    assert_eq!(n.counters.malformed[Reason::ElementCountMismatch.index()], 1);
    assert_eq!(n.counters.data_applied, applied);
    // An identical duplicate is acknowledged as such and not applied again.
    n.handle(0, &data(&s, 0, 0, 100, 0, |_, _| {}), &mut out);
    assert_eq!(n.counters.data_duplicates, 1);
    // Window limits: 16 intervals per contributor.
    for i in 0..15u32 {
        n.handle(0, &data(&s, 0, 100 + i, 1, 10 + i, |_, _| {}), &mut out);
    }
    n.handle(0, &data(&s, 0, 200, 1, 40, |_, _| {}), &mut out);
    assert_eq!(n.counters.data_rejected[DataReject::IntervalsExhausted.index()], 1);
    assert!(out.is_empty(), "nothing completes without rank 1");
    // Rank 1 completes [0, 115): exactly 2.0 everywhere, one FP32 packet is not yet full.
    n.handle(1, &data(&s, 1, 0, 363, 0, |_, _| {}), &mut out);
    assert!(out.is_empty(), "the first canonical packet [0, 363) is not complete for rank 0");
    // DATA before COMMIT is refused.
    let mut fresh = node(2, 1500);
    fresh.handle(AM_PORT, &stage_frame(&s, 1, 2), &mut out);
    out.clear();
    fresh.handle(0, &data(&s, 0, 0, 10, 0, |_, _| {}), &mut out);
    assert_eq!(fresh.counters.data_rejected[DataReject::NotActive.index()], 1);
}

/// A node whose capabilities keep 16 frames for replay, with the scenario
/// staged and committed (generation 2).
fn committed_with_replay(s: &Scenario) -> Node {
    let mut caps = caps();
    caps.iter_mut().for_each(|c| c.replay_depth = 16);
    let mut n = Node::new(prism_dataplane::engine::NodeConfig {
        mac: prism_dataplane::fixtures::SWITCH_MAC,
        control_ep: prism_dataplane::fixtures::SWITCH_EP,
        am_mac: prism_dataplane::fixtures::AM_MAC,
        am_port: AM_PORT,
        ports: 2,
        mtu: 1500,
        max_ops: 4,
        caps,
    });
    let mut out = Vec::new();
    n.handle(AM_PORT, &stage_frame(s, 2, 2), &mut out);
    assert_eq!(ack_status(&out), AckStatus::OK);
    out.clear();
    n.handle(AM_PORT, &control_frame(s.identity(2), 3, Command::COMMIT, ControlBody::Empty), &mut out);
    assert_eq!(ack_status(&out), AckStatus::OK);
    n
}

/// The PROGRESS the node sent last: its status and committed watermark.
fn last_progress(out: &[prism_dataplane::engine::Sent]) -> (ProgressStatus, u32) {
    let f = out.last().expect("a PROGRESS");
    match parse_frame(&f.frame, &Limits::default()).expect("a valid frame").prism {
        Some(PrismRepr::Progress(p)) => (p.status, p.committed),
        other => panic!("not a PROGRESS: {other:?}"),
    }
}

/// With feedback, a contributor's packets below its watermark no longer
/// take window intervals: rank 0 leaves two holes, fills the first with the
/// window's last interval, and the packet of the second hole is still taken
/// while rank 1 (silent) keeps the window from moving. (Counted until the
/// window moved, they filled the intervals and the tree stalled for good.)
#[test]
fn a_second_hole_closes_while_a_silent_contributor_holds_the_window() {
    let s = Scenario { replay_depth: 8, ..Scenario::new(2, Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL) };
    let mut n = committed_with_replay(&s);
    let mut out = Vec::new();
    let exhausted = DataReject::IntervalsExhausted.index();
    // Holes at 0 and 2; 15 packets above them use all but the window's last interval.
    for (id, pos) in std::iter::once(1).chain(3..17).enumerate() {
        n.handle(0, &data(&s, 0, pos, 1, 10 + id as u32, |_, _| {}), &mut out);
        assert_eq!(last_progress(&out), (ProgressStatus::ACCEPTED, 0), "element {pos}");
    }
    // The last interval is kept for the packet at the watermark.
    n.handle(0, &data(&s, 0, 17, 1, 40, |_, _| {}), &mut out);
    assert_eq!(n.counters.data_rejected[exhausted], 1);
    assert_eq!(last_progress(&out).0, ProgressStatus::REJECTED);
    // The first hole takes it: the watermark moves to the second hole.
    n.handle(0, &data(&s, 0, 0, 1, 41, |_, _| {}), &mut out);
    assert_eq!(last_progress(&out), (ProgressStatus::ACCEPTED, 2));
    // The second hole's packet is taken too, and closes the run above it.
    n.handle(0, &data(&s, 0, 2, 1, 42, |_, _| {}), &mut out);
    assert_eq!(n.counters.data_rejected[exhausted], 1, "the second hole was refused for want of intervals");
    assert_eq!(last_progress(&out), (ProgressStatus::ACCEPTED, 17));
    assert_eq!(n.counters.data_applied, 17);
    // A copy of a packet below the watermark is known by the watermark alone.
    n.handle(0, &data(&s, 0, 5, 1, 13, |_, _| {}), &mut out);
    assert_eq!((n.counters.data_duplicates, n.counters.data_applied), (1, 17));
    assert_eq!(last_progress(&out), (ProgressStatus::DUPLICATE, 17));
    assert!(out.iter().all(|f| f.port == 0), "nothing but PROGRESS to rank 0 while rank 1 is silent");
}

/// The DATA fast path (`Node::data_fast`) takes a frame only where the full
/// parse would decide it the same way: two nodes, one without the fast path,
/// get the same frames (each packet sent valid, after copies with one header
/// or descriptor byte changed, cut short, grown or on another port, and
/// sometimes again) and must send the same frames and count the same after
/// every one.
#[test]
fn the_data_fast_path_decides_every_frame_as_the_full_parse() {
    use rand::{rngs::StdRng, Rng, SeedableRng};
    for (seed, semantics, accumulator, replay_depth) in [
        (1u64, Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, 0),
        (2, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, 0),
        (3, Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED, 0),
        (4, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 0),
        (5, Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, 8),
        (6, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 8),
    ] {
        let s = Scenario { replay_depth, ..Scenario::new(2, semantics, accumulator) };
        let staged = || committed_with_replay(&s);
        let (mut fast, mut full) = (staged(), staged());
        full.set_fast_path(false);
        let mut rng = StdRng::seed_from_u64(seed);
        let (mut out_fast, mut out_full) = (Vec::new(), Vec::new());
        let mut sent: Vec<(u16, Vec<u8>)> = Vec::new();
        let (mut fed, mut valid_fed) = (0u64, 0u64);
        let mut feed = |port: u16, f: &[u8], fast: &mut Node, full: &mut Node| {
            fed += 1;
            fast.handle(port, f, &mut out_fast);
            full.handle(port, f, &mut out_full);
            assert_eq!(out_fast, out_full, "seed {seed}: frames sent differ after {:02x?}", &f[..f.len().min(64)]);
            assert_eq!(fast.counters, full.counters, "seed {seed}: counters differ after {:02x?}", &f[..f.len().min(64)]);
            out_fast.clear();
            out_full.clear();
        };
        let n = 300u16;
        for k in 0..(s.vector_len / n as u32) {
            for r in 0..s.ranks {
                let valid = data(&s, r, k * n as u32, n, k, |_, _| {});
                for _ in 0..rng.gen_range(0..4) {
                    let mut bad = valid.clone();
                    match rng.gen_range(0..10) {
                        0 => bad.truncate(bad.len() - rng.gen_range(1..8)),
                        1 => bad.resize(bad.len() + rng.gen_range(1..8), 0),
                        2 => {}
                        _ => {
                            let at = rng.gen_range(0..ETH_HEADER_LEN + 46);
                            bad[at] ^= rng.gen_range(1..=255u8);
                        }
                    }
                    let port = if rng.gen_bool(0.2) { 1 - r } else { r };
                    feed(port, &bad, &mut fast, &mut full);
                }
                feed(r, &valid, &mut fast, &mut full);
                valid_fed += 1;
                sent.push((r, valid));
                if rng.gen_bool(0.2) {
                    let (p, f) = sent[rng.gen_range(0..sent.len())].clone();
                    feed(p, &f, &mut fast, &mut full);
                    valid_fed += 1;
                }
            }
        }
        // Every well-formed frame on its own port is the fast path's; many changed ones are not.
        assert!(fast.fast_path_taken() >= valid_fed && fast.fast_path_taken() < fed, "seed {seed}: {} of {fed} frames, {valid_fed} valid", fast.fast_path_taken());
        assert_eq!(full.fast_path_taken(), 0);
        assert!(fast.counters.results_sent > 0 && fast.counters.malformed.iter().sum::<u64>() > 0, "seed {seed}: {:?}", fast.counters);
    }
}

#[test]
fn int8_output_that_is_not_an_integer_ends_with_inexact() {
    let mut s = Scenario::new(2, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED);
    s.output = OutputFormat::INT8;
    s.vector_len = 10;
    let mut n = setup(&s, 2);
    let mut out = Vec::new();
    n.handle(0, &data(&s, 0, 0, 10, 0, |_, _| {}), &mut out);
    let half_values: Vec<u8> = (0..10).flat_map(|_| 0.5f32.to_le_bytes()).collect();
    let g = [GroupRepr { format: NumFormat::Fp32, count: 10, values: &half_values }];
    let mut body = vec![0; groups_len(&g)];
    emit_groups(&g, &mut body);
    let p = PrismRepr::Data(DataRepr {
        class: Class::DATA,
        identity: s.identity(2),
        src_ep: 0x1001,
        dst_ep: 0x0101,
        packet_id: 0,
        first_element: 0,
        element_count: 10,
        group_count: 1,
        flags: flags::LAST,
        stream_id: 1,
        body: &body,
    });
    let mut f = vec![0; p.frame_len()];
    p.emit_frame(&EthernetRepr { dst: prism_dataplane::golden::SWITCH_MAC, src: rank_mac(1), ethertype: ETHERTYPE }, &mut f);
    n.handle(1, &f, &mut out);
    assert_eq!(out.len(), 2, "one terminal frame per path");
    for sent in &out {
        let Some(PrismRepr::Data(d)) = parse_frame(&sent.frame, &Limits::default()).unwrap().prism else { panic!() };
        assert!(d.is_inexact() && d.is_last() && d.element_count == 0);
    }
    // Later DATA is refused as the operation failed.
    out.clear();
    n.handle(0, &data(&s, 0, 0, 10, 0, |_, _| {}), &mut out);
    assert_eq!(n.counters.data_rejected[DataReject::OperationFailed.index()], 1);
}

#[test]
fn kulisch_overflow_of_the_width_is_inexact() {
    // Two ranks send Kulisch-280 values near the top of the range: the sum needs 281 bits.
    let s = Scenario::new(2, Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED);
    let mut s = s;
    s.vector_len = 1;
    let mut n = setup(&s, 2);
    let mut out = Vec::new();
    let mut big = vec![0u8; 36];
    big[35] = 0x7f;
    for r in 0..2u16 {
        let g = [GroupRepr { format: NumFormat::Kulisch { width_bits: 280 }, count: 1, values: &big }];
        let mut body = vec![0; groups_len(&g)];
        emit_groups(&g, &mut body);
        let p = PrismRepr::Data(DataRepr {
            class: Class::DATA,
            identity: s.identity(2),
            src_ep: 0x1000 + r,
            dst_ep: 0x0100 + r,
            packet_id: 0,
            first_element: 0,
            element_count: 1,
            group_count: 1,
            flags: flags::LAST,
            stream_id: r,
            body: &body,
        });
        let mut f = vec![0; p.frame_len()];
        p.emit_frame(&EthernetRepr { dst: prism_dataplane::golden::SWITCH_MAC, src: rank_mac(r), ethertype: ETHERTYPE }, &mut f);
        n.handle(r, &f, &mut out);
    }
    assert_eq!(out.len(), 1, "REDUCE: one path");
    let Some(PrismRepr::Data(d)) = parse_frame(&out[0].frame, &Limits::default()).unwrap().prism else { panic!() };
    assert!(d.is_inexact());
}

#[test]
fn window_bytes_below_window_and_done_are_refused() {
    // A window of 2000 frame bytes: a second 1518-byte frame does not fit.
    let mut s = Scenario::new(2, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED);
    s.window_bytes = Some(2000);
    s.vector_len = 726;
    let mut n = setup(&s, 2);
    let mut out = Vec::new();
    n.handle(0, &data(&s, 0, 0, 363, 0, |_, _| {}), &mut out);
    n.handle(0, &data(&s, 0, 363, 363, 1, |_, _| {}), &mut out);
    assert_eq!(n.counters.data_rejected[DataReject::BytesExhausted.index()], 1);
    // Rank 1 completes [0, 363): one RESULT per path, and the range is released.
    n.handle(1, &data(&s, 1, 0, 363, 0, |_, _| {}), &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(n.window_base(&s.identity(2)), Some(363));
    // A new packet ID below the window is refused; the freed bytes admit rank 0's next frame.
    n.handle(0, &data(&s, 0, 0, 10, 7, |_, _| {}), &mut out);
    assert_eq!(n.counters.data_rejected[DataReject::BelowWindow.index()], 1);
    n.handle(0, &data(&s, 0, 363, 363, 1, |_, _| {}), &mut out);
    n.handle(1, &data(&s, 1, 363, 363, 1, |_, _| {}), &mut out);
    assert_eq!(out.len(), 4);
    // Everything was sent: more DATA is refused, COMPLETE succeeds.
    n.handle(1, &data(&s, 1, 0, 10, 9, |_, _| {}), &mut out);
    assert_eq!(n.counters.data_rejected[DataReject::OperationDone.index()], 1);
    for sent in &out {
        let Some(PrismRepr::Data(d)) = parse_frame(&sent.frame, &Limits::default()).unwrap().prism else { panic!() };
        for g in d.groups() {
            for v in g.values.chunks_exact(4) {
                assert_eq!(f32::from_le_bytes(v.try_into().unwrap()), 2.0);
            }
        }
    }
}

/// A sink that has no buffer for every `every`-th frame it is asked for
/// (0: never), and that reads back the frames it sent (`copy_last`) or not.
struct Reading {
    sent: Vec<prism_dataplane::engine::Sent>,
    every: usize,
    asked: usize,
    copies: bool,
}

impl Reading {
    fn refuse(&mut self) -> bool {
        self.asked += 1;
        self.every > 0 && self.asked.is_multiple_of(self.every)
    }
}

impl prism_dataplane::engine::Sink for Reading {
    fn buffer(&mut self, port: u16, len: usize) -> Option<&mut [u8]> {
        if self.refuse() {
            return None;
        }
        self.sent.buffer(port, len)
    }
    fn copies_last(&self) -> bool {
        self.copies
    }
    fn copy_last(&mut self, from: u16, port: u16) -> Option<&mut [u8]> {
        if self.refuse() {
            return None;
        }
        self.sent.copy_last(from, port)
    }
}

#[test]
fn results_copied_from_the_first_path_equal_results_built_from_one_body() {
    // ALLREDUCE under FP32_ARRIVAL without feedback: a RESULT's values are
    // taken into the first path's frame and the other paths get a copy with
    // their own header, when the sink can read its frames back. A node whose
    // sink cannot must send the same frames and count the same, also when
    // frames are lost (the first path's too) and when every path is on one port.
    for (single_port, every) in [(false, 0), (true, 0), (false, 3), (true, 5), (false, 4)] {
        let s = Scenario { single_port, ..Scenario::new(4, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL) };
        let (mut copying, mut building) = (setup(&s, 2), setup(&s, 2));
        let mut a = Reading { sent: Vec::new(), every, asked: 0, copies: true };
        let mut b = Reading { sent: Vec::new(), every, asked: 0, copies: false };
        let (mut first, mut packet_id, mut results) = (0u32, 0u32, 0usize);
        while first < s.vector_len {
            let n = (s.vector_len - first).min(363) as u16;
            for r in 0..s.ranks {
                // Values that differ by rank and element, so that a body from another RESULT shows.
                let f = data_of(&s, r, first, n, packet_id, |i| (first + i) as f32 * 0.25 + r as f32, |_, _| {});
                let port = if single_port { 0 } else { r };
                copying.handle(port, &f, &mut a);
                building.handle(port, &f, &mut b);
                assert_eq!(a.sent, b.sent, "single_port {single_port} every {every}: frames differ at element {first} rank {r}");
                assert_eq!(copying.counters, building.counters, "single_port {single_port} every {every}: counters differ");
                results += a.sent.len();
                a.sent.clear();
                b.sent.clear();
            }
            first += n as u32;
            packet_id += 1;
        }
        assert_eq!(a.asked, b.asked);
        // Every RESULT went to every path (less what the sink refused).
        let ranges = s.vector_len.div_ceil(363) as usize;
        assert_eq!(results + a.asked.checked_div(every).unwrap_or(0), ranges * s.ranks as usize, "single_port {single_port} every {every}");
    }
}

#[test]
fn a_slot_reused_after_release_or_abort_takes_no_frame_of_the_operation_before() {
    // The node keeps a one-entry cache of the last fast-path frame's
    // operation and slot. An operation released (or aborted) frees its slot,
    // the next STAGE takes it: a frame of the gone operation must then be
    // refused as with no cache (NoOperation, StaleGeneration), and the new
    // one's frames admitted, while frames of two operations alternate. A
    // node without the fast path (no cache) must send and count the same.
    let s = Scenario::new(2, Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL);
    let a = |op_gen: u32| Identity { op: 10, ..s.identity(op_gen) };
    let b = Identity { op: 11, ..s.identity(2) };
    let stage = |id: Identity, txn: u32| {
        let bindings: Vec<BindingRecord> = (0..s.ranks).map(|r| prism_dataplane::fixtures::rank_binding(r, r == s.dest_rank, r)).collect();
        let context = prism_dataplane::fixtures::single_context(s.semantics, s.accumulator, s.output, s.ranks, s.dest_rank, s.vector_len, s.mtu);
        control_frame(id, txn, Command::STAGE, ControlBody::Stage { context, bindings: Records::Typed(&bindings) })
    };
    // 363 values: one frame a canonical RESULT packet (MTU 1500).
    let frame = |id: Identity, r: u16, k: u32| data(&s, r, k * 363, 363, k, move |d, _| d.identity = id);
    let (mut fast, mut full) = (node(s.ranks, 1500), node(s.ranks, 1500));
    full.set_fast_path(false);
    let (mut out_fast, mut out_full) = (Vec::new(), Vec::new());
    let mut txn = 100;
    let mut control = |f: &[u8], fast: &mut Node, full: &mut Node| {
        fast.handle(AM_PORT, f, &mut out_fast);
        full.handle(AM_PORT, f, &mut out_full);
        assert_eq!(ack_status(&out_fast), AckStatus::OK);
        assert_eq!(out_fast, out_full);
        out_fast.clear();
        out_full.clear();
    };
    let (mut of, mut ou) = (Vec::new(), Vec::new());
    let mut feed = |port: u16, f: &[u8], fast: &mut Node, full: &mut Node| {
        fast.handle(port, f, &mut of);
        full.handle(port, f, &mut ou);
        assert_eq!(of, ou, "frames sent differ");
        assert_eq!(fast.counters, full.counters, "counters differ");
        let sent = of.len();
        of.clear();
        ou.clear();
        sent
    };
    let mut next_txn = || {
        txn += 1;
        txn
    };
    // A in the first slot, one frame taken (the cache now holds A).
    control(&stage(a(2), next_txn()), &mut fast, &mut full);
    control(&control_frame(a(2), next_txn(), Command::COMMIT, ControlBody::Empty), &mut fast, &mut full);
    feed(0, &frame(a(2), 0, 0), &mut fast, &mut full);
    assert_eq!((fast.counters.data_applied, fast.fast_path_taken()), (1, 1));
    // A released; B staged into its slot.
    control(&control_frame(a(2), next_txn(), Command::RELEASE, ControlBody::Empty), &mut fast, &mut full);
    control(&stage(b, next_txn()), &mut fast, &mut full);
    control(&control_frame(b, next_txn(), Command::COMMIT, ControlBody::Empty), &mut fast, &mut full);
    // A's next frame: no such operation, not admitted to B.
    feed(1, &frame(a(2), 1, 0), &mut fast, &mut full);
    assert_eq!(fast.counters.data_rejected[DataReject::NoOperation.index()], 1);
    assert_eq!(fast.counters.data_applied, 1);
    // B's frames are its own (a RESULT once both ranks sent the range).
    feed(0, &frame(b, 0, 0), &mut fast, &mut full);
    assert_eq!(feed(1, &frame(b, 1, 0), &mut fast, &mut full), 1, "B's first RESULT");
    // A again, a newer generation, in another slot; frames of both alternate.
    control(&stage(a(3), next_txn()), &mut fast, &mut full);
    control(&control_frame(a(3), next_txn(), Command::COMMIT, ControlBody::Empty), &mut fast, &mut full);
    feed(0, &frame(a(2), 0, 1), &mut fast, &mut full);
    assert_eq!(fast.counters.data_rejected[DataReject::StaleGeneration.index()], 1);
    let mut results = 0;
    for k in 0..3 {
        for r in 0..2 {
            results += feed(r, &frame(a(3), r, k), &mut fast, &mut full);
            results += feed(r, &frame(b, r, k + 1), &mut fast, &mut full);
        }
    }
    assert_eq!(results, 6, "a RESULT a range, both operations");
    assert_eq!(fast.counters.data_applied, 1 + 2 + 12);
    // B aborted while the cache holds it: its next frame has no operation;
    // a STAGE of B's key takes the freed slot and its frames are admitted.
    control(&control_frame(b, next_txn(), Command::ABORT, ControlBody::Empty), &mut fast, &mut full);
    feed(0, &frame(b, 0, 4), &mut fast, &mut full);
    assert_eq!(fast.counters.data_rejected[DataReject::NoOperation.index()], 2);
    let b3 = Identity { op_gen: s.identity(3).op_gen, ..b };
    control(&stage(b3, next_txn()), &mut fast, &mut full);
    control(&control_frame(b3, next_txn(), Command::COMMIT, ControlBody::Empty), &mut fast, &mut full);
    feed(0, &frame(b, 0, 0), &mut fast, &mut full);
    assert_eq!(fast.counters.data_rejected[DataReject::StaleGeneration.index()], 2);
    assert_eq!(feed(0, &frame(b3, 0, 0), &mut fast, &mut full) + feed(1, &frame(b3, 1, 0), &mut fast, &mut full), 1);
    assert_eq!(fast.counters.data_applied, 1 + 2 + 12 + 2);
    assert_eq!(fast.counters.data_rejected.iter().sum::<u64>(), 4);
    assert!(fast.fast_path_taken() >= 16 && full.fast_path_taken() == 0, "{}", fast.fast_path_taken());
}

/// `SwitchCore::rx_burst` decides every frame as `rx` one at a time does:
/// two operations' DATA interleaved in runs and alternating, with changed
/// copies (a header byte, cut, grown, another port), duplicates, frames for
/// another MAC, runts, an ABORT and a new STAGE in the middle of a burst,
/// with and without feedback. Bursts of random sizes; after each the frames
/// sent (in order), every frame's action and every counter must match.
#[test]
fn a_burst_decides_every_frame_as_one_at_a_time() {
    use prism_dataplane::switch::{config::SwitchConfig, Action, SwitchCore};
    use rand::{rngs::StdRng, Rng, SeedableRng};
    for (seed, ranks, semantics, accumulator, replay_depth) in [
        (11u64, 2u16, Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, 0u16),
        (12, 3, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, 0),
        (13, 2, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 0),
        (14, 3, Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, 8),
        (15, 2, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 8),
    ] {
        let s = Scenario { replay_depth, ..Scenario::new(ranks, semantics, accumulator) };
        let core_with = |mac: Mac| {
            let cfg = SwitchConfig::parse(&prism_dataplane::fixtures::SwitchToml::new(&["p0", "p1", "p2"]).to_string()).expect("config");
            let mut c = SwitchCore::new(&cfg);
            let mut caps = caps();
            caps.iter_mut().for_each(|c| c.replay_depth = 16);
            c.node = Node::new(prism_dataplane::engine::NodeConfig {
                mac,
                control_ep: prism_dataplane::fixtures::SWITCH_EP,
                am_mac: prism_dataplane::fixtures::AM_MAC,
                am_port: AM_PORT,
                ports: 3,
                mtu: 1500,
                max_ops: 4,
                caps,
            });
            c
        };
        let core = || core_with(prism_dataplane::fixtures::SWITCH_MAC);
        let a = |op_gen: u32| Identity { op: 10, ..s.identity(op_gen) };
        let b = |op_gen: u32| Identity { op: 11, ..s.identity(op_gen) };
        let stage = |id: Identity, txn: u32| {
            let bindings: Vec<BindingRecord> = (0..s.ranks).map(|r| prism_dataplane::fixtures::rank_binding(r, s.semantics == Semantics::ALLREDUCE || r == s.dest_rank, r)).collect();
            let mut context = prism_dataplane::fixtures::single_context(s.semantics, s.accumulator, s.output, s.ranks, s.dest_rank, s.vector_len, s.mtu);
            context.replay_depth = s.replay_depth;
            control_frame(id, txn, Command::STAGE, ControlBody::Stage { context, bindings: Records::Typed(&bindings) })
        };
        let mut rng = StdRng::seed_from_u64(seed);
        let mut traffic: Vec<(u16, Vec<u8>)> = Vec::new();
        let mut txn = 100;
        let control = |traffic: &mut Vec<(u16, Vec<u8>)>, f: Vec<u8>| traffic.push((AM_PORT, f));
        for (id, t) in [(a(2), 1), (b(2), 3)] {
            control(&mut traffic, stage(id, t));
            control(&mut traffic, control_frame(id, t + 1, Command::COMMIT, ControlBody::Empty));
        }
        // 300 values a frame: canonical RESULT packets of 363 take parts of two frames.
        let n = 300u16;
        let mut sent: Vec<(u16, Vec<u8>)> = Vec::new();
        let mut b_gen = 2;
        let ranges = s.vector_len / n as u32;
        for k in 0..ranges {
            if k == ranges / 2 {
                // B aborted, then staged again (a newer generation) between DATA frames.
                txn += 2;
                control(&mut traffic, control_frame(b(b_gen), txn, Command::ABORT, ControlBody::Empty));
                b_gen += 1;
                // The old B's frame first (the run holds its slot), then a STAGE into that slot:
                // a frame of the new B before its COMMIT is refused (NotActive).
                traffic.push((0, data(&s, 0, k * n as u32, n, k, |d, _| d.identity = b(b_gen - 1))));
                control(&mut traffic, stage(b(b_gen), txn + 1));
                traffic.push((0, data(&s, 0, 0, n, 0, |d, _| d.identity = b(b_gen))));
                control(&mut traffic, control_frame(b(b_gen), txn + 2, Command::COMMIT, ControlBody::Empty));
                txn += 2;
            }
            // A's frames of this range in a run, or A's and B's alternating.
            let mut frames: Vec<(u16, Vec<u8>)> = Vec::new();
            let alternate = rng.gen_bool(0.5);
            for r in 0..s.ranks {
                let fa = data(&s, r, k * n as u32, n, k, |d, _| d.identity = a(2));
                if alternate {
                    frames.push((r, fa));
                }
                let gen = if rng.gen_bool(0.1) { b_gen.saturating_sub(1).max(2) } else { b_gen };
                let first = if b_gen > 2 { (k - ranges / 2) * n as u32 } else { k * n as u32 };
                frames.push((r, data(&s, r, first, n, k, |d, _| d.identity = b(gen))));
                if !alternate {
                    frames.insert(r as usize, (r, data(&s, r, k * n as u32, n, k, |d, _| d.identity = a(2))));
                }
            }
            for (r, valid) in frames {
                for _ in 0..rng.gen_range(0..3) {
                    let mut bad = valid.clone();
                    match rng.gen_range(0..12) {
                        0 => bad.truncate(bad.len() - rng.gen_range(1..8)),
                        1 => bad.resize(bad.len() + rng.gen_range(1..8), 0),
                        2 => bad.truncate(rng.gen_range(0..ETH_HEADER_LEN)),
                        3 => bad[..6].copy_from_slice(&rank_mac(9).0),
                        4 => {}
                        _ => {
                            let at = rng.gen_range(0..ETH_HEADER_LEN + 46);
                            bad[at] ^= rng.gen_range(1..=255u8);
                        }
                    }
                    let port = if rng.gen_bool(0.2) { (r + 1) % s.ranks } else { r };
                    traffic.push((port, bad));
                }
                traffic.push((r, valid.clone()));
                sent.push((r, valid));
                if rng.gen_bool(0.15) {
                    traffic.push(sent[rng.gen_range(0..sent.len())].clone());
                }
            }
        }
        let (mut one, mut burst) = (core(), core());
        let (mut out_one, mut out_burst): (Vec<prism_dataplane::engine::Sent>, Vec<prism_dataplane::engine::Sent>) = (Vec::new(), Vec::new());
        let (mut at, mut now) = (0, 0u64);
        let mut fast_frames = 0;
        while at < traffic.len() {
            let len = rng.gen_range(1..=40).min(traffic.len() - at);
            let chunk = &traffic[at..at + len];
            now += rng.gen_range(0..2_000_000);
            one.tick(now, &mut out_one);
            burst.tick(now, &mut out_burst);
            let want: Vec<Action> = chunk.iter().map(|(p, f)| one.rx(*p, f, &mut out_one)).collect();
            let mut got = vec![None; len];
            let before = burst.node.fast_path_taken();
            burst.rx_burst(chunk.iter().map(|(p, f)| (*p, f.as_slice())), &mut out_burst, |i, a, _| got[i] = Some(a));
            fast_frames += burst.node.fast_path_taken() - before;
            let got: Vec<Action> = got.into_iter().map(|a| a.expect("an action for every frame")).collect();
            assert_eq!(got, want, "seed {seed}: actions of frames {at}..{}", at + len);
            assert_eq!(out_burst, out_one, "seed {seed}: frames sent for frames {at}..{}", at + len);
            assert_eq!(burst.node.counters, one.node.counters, "seed {seed}: counters after frames {at}..{}", at + len);
            assert_eq!((burst.l2.forwarded, burst.l2.flooded, burst.l2.dropped), (one.l2.forwarded, one.l2.flooded, one.l2.dropped), "seed {seed}");
            assert_eq!(burst.node.fast_path_taken(), one.node.fast_path_taken(), "seed {seed}");
            out_one.clear();
            out_burst.clear();
            at += len;
        }
        let c = &burst.node.counters;
        assert!(fast_frames > traffic.len() as u64 / 3, "seed {seed}: {fast_frames} of {} frames on the fast path", traffic.len());
        assert!(c.results_sent > 0 && c.malformed.iter().sum::<u64>() > 0 && c.data_rejected[DataReject::NotActive.index()] > 0, "seed {seed}: {c:?}");
        assert!(burst.l2.flooded + burst.l2.forwarded > 0 && burst.l2.dropped[0] > 0, "seed {seed}");
        // An engine whose MAC is not the switch's (only by replacing `node`;
        // no STAGE can then reach it): the same decisions either way.
        let (mut one, mut burst) = (core_with(rank_mac(7)), core_with(rank_mac(7)));
        for chunk in traffic.chunks(32) {
            let want: Vec<Action> = chunk.iter().map(|(p, f)| one.rx(*p, f, &mut out_one)).collect();
            let mut got = Vec::new();
            burst.rx_burst(chunk.iter().map(|(p, f)| (*p, f.as_slice())), &mut out_burst, |_, a, _| got.push(a));
            assert_eq!((got, &out_burst, &burst.node.counters), (want, &out_one, &one.node.counters), "seed {seed}: another engine MAC");
        }
    }
}
