//! The control plane against the golden frames and every refusal path.

use prism_dataplane::engine::{Node, NodeConfig, OpState, Sent};
use prism_dataplane::golden::{self, *};
use prism_dataplane::wire::*;

fn caps() -> Vec<CapabilityRecord> {
    vec![sample_capability(FormatCode::FP32, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::FP32), sample_capability(FormatCode::FP32, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::AUTO)]
}

fn node() -> Node {
    Node::new(NodeConfig { mac: SWITCH_MAC, control_ep: SWITCH_EP, am_mac: AM_MAC, am_port: 0, ports: 2, mtu: 1500, max_ops: 4, caps: caps() })
}

fn send(n: &mut Node, port: u16, frame: &[u8]) -> Vec<Sent> {
    let mut out = Vec::new();
    n.handle(port, frame, &mut out);
    out
}

/// The ACK status of a single reply.
fn status(out: &[Sent]) -> (AckStatus, u16) {
    assert_eq!(out.len(), 1, "one reply expected");
    match parse_frame(&out[0].frame, &Limits::default()).unwrap().prism {
        Some(PrismRepr::Control(ControlRepr { body: ControlBody::Ack { status, body }, .. })) => (status, body.detail),
        other => panic!("not an ACK: {other:?}"),
    }
}

/// STAGE with its context and bindings edited.
fn stage_with(txn: u32, op_gen: u32, edit: impl Fn(&mut ContextRecord, &mut Vec<BindingRecord>)) -> Vec<u8> {
    let parsed = parse_frame(&STAGE, &Limits::default()).unwrap();
    let Some(PrismRepr::Control(mut c)) = parsed.prism else { panic!() };
    let ControlBody::Stage { mut context, bindings } = c.body else { panic!() };
    let mut b: Vec<BindingRecord> = bindings.iter().collect();
    edit(&mut context, &mut b);
    context.binding_count = b.len() as u16;
    c.txn = txn;
    c.identity.op_gen = op_gen;
    c.body = ControlBody::Stage { context, bindings: Records::Typed(&b) };
    let p = PrismRepr::Control(c);
    let mut f = vec![0; p.frame_len()];
    p.emit_frame(&parsed.eth, &mut f);
    f
}

fn control(cmd: Command, txn: u32, op_gen: u32) -> Vec<u8> {
    let c = ControlRepr { identity: Identity { op_gen, ..IDENTITY }, txn, src_ep: AM_EP, dst_ep: SWITCH_EP, command: cmd, frag_index: 0, frag_count: 1, body: ControlBody::Empty };
    let p = PrismRepr::Control(c);
    let mut f = vec![0; p.frame_len()];
    p.emit_frame(&EthernetRepr { dst: SWITCH_MAC, src: AM_MAC, ethertype: ETHERTYPE }, &mut f);
    f
}

#[test]
fn golden_stage_gets_the_golden_ack_and_commit_activates() {
    let mut n = node();
    let out = send(&mut n, 0, &STAGE);
    assert_eq!(out, vec![Sent { port: 0, frame: ACK_STAGE_OK.to_vec() }]);
    assert_eq!(n.state(&IDENTITY), Some(OpState::Staged));
    assert_eq!(status(&send(&mut n, 0, &COMMIT)), (AckStatus::OK, 0));
    assert_eq!(n.state(&IDENTITY), Some(OpState::Active));
    assert_eq!(n.context(&IDENTITY).unwrap().vector_len, 1000);
}

#[test]
fn retries_are_idempotent_and_conflicts_refused() {
    let mut n = node();
    let first = send(&mut n, 0, &STAGE);
    send(&mut n, 0, &COMMIT);
    // The same STAGE again: the recorded ACK, and the operation stays active.
    assert_eq!(send(&mut n, 0, &STAGE), first);
    assert_eq!(n.state(&IDENTITY), Some(OpState::Active));
    assert_eq!(n.counters.retries_answered, 1);
    // Same transaction ID, other bytes: a conflict that changes nothing.
    let changed = stage_with(1, 2, |c, _| c.vector_len = 999);
    assert_eq!(status(&send(&mut n, 0, &changed)), (AckStatus::TXN_CONFLICT, 0));
    assert_eq!(n.context(&IDENTITY).unwrap().vector_len, 1000);
}

#[test]
fn untrusted_and_malformed_control_changes_nothing() {
    let mut n = node();
    assert!(send(&mut n, 1, &STAGE).is_empty(), "AM's MAC on the wrong port");
    let mut spoofed = STAGE;
    spoofed[6..12].copy_from_slice(&RANK0_MAC.0);
    assert!(send(&mut n, 0, &spoofed).is_empty(), "right port, wrong MAC");
    assert_eq!(n.counters.untrusted_source, 2);
    for m in golden::malformed() {
        assert!(send(&mut n, 0, &m.bytes).is_empty(), "{}", m.name);
    }
    assert_eq!(n.counters.malformed.iter().sum::<u64>(), golden::malformed().len() as u64);
    assert_eq!(n.counters.malformed[Reason::UnknownCommand.index()], 1);
    assert_eq!(n.state(&IDENTITY), None);
}

#[test]
fn generations_after_abort_and_release() {
    let mut n = node();
    send(&mut n, 0, &STAGE);
    assert_eq!(status(&send(&mut n, 0, &control(Command::ABORT, 10, 2))), (AckStatus::OK, 0));
    assert_eq!(n.state(&IDENTITY), None);
    // The same generation again is stale, whatever the transaction.
    assert_eq!(status(&send(&mut n, 0, &stage_with(11, 2, |_, _| {}))), (AckStatus::STALE_GENERATION, 0));
    assert_eq!(status(&send(&mut n, 0, &control(Command::COMMIT, 12, 2))), (AckStatus::STALE_GENERATION, 0));
    // A newer one works, and RELEASE retires it in turn.
    assert_eq!(status(&send(&mut n, 0, &stage_with(13, 3, |_, _| {}))), (AckStatus::OK, 0));
    assert_eq!(status(&send(&mut n, 0, &control(Command::RELEASE, 14, 3))), (AckStatus::BAD_STATE, 0), "RELEASE needs an active operation");
    assert_eq!(status(&send(&mut n, 0, &control(Command::COMMIT, 15, 3))), (AckStatus::OK, 0));
    assert_eq!(status(&send(&mut n, 0, &control(Command::RELEASE, 16, 3))), (AckStatus::OK, 0));
    assert_eq!(status(&send(&mut n, 0, &stage_with(17, 3, |_, _| {}))), (AckStatus::STALE_GENERATION, 0));
    assert_eq!(status(&send(&mut n, 0, &stage_with(18, 4, |_, _| {}))), (AckStatus::OK, 0));
}

#[test]
fn stage_refusals_carry_the_right_status() {
    let cases: Vec<(&str, Vec<u8>, (AckStatus, u16))> = vec![
        ("policy 0x02", stage_with(1, 2, |c, _| c.accumulator = AccumulatorPolicy::from(0x02)), (AckStatus::INVALID, 0)),
        ("vector length 0", stage_with(1, 2, |c, _| c.vector_len = 0), (AckStatus::INVALID, 0)),
        ("MTU 1234", stage_with(1, 2, |c, _| c.mtu = 1234), (AckStatus::UNSUPPORTED, 0)),
        ("MTU 9000 on a 1500 node", stage_with(1, 2, |c, _| c.mtu = 9000), (AckStatus::UNSUPPORTED, 0)),
        // KULISCH_FIXED with FP32 output: both codes are advertised, never together.
        (
            "uncovered tuple",
            stage_with(1, 2, |c, _| {
                c.accumulator = AccumulatorPolicy::KULISCH_FIXED;
                c.kulisch_width = 280
            }),
            (AckStatus::UNSUPPORTED, 0),
        ),
        (
            "Kulisch too narrow",
            stage_with(1, 2, |c, _| {
                c.accumulator = AccumulatorPolicy::KULISCH_FIXED;
                c.output = OutputFormat::AUTO;
                c.kulisch_width = 272
            }),
            (AckStatus::INVALID, 0),
        ),
        ("port 7", stage_with(1, 2, |_, b| b[1].port = 7), (AckStatus::INVALID_BINDING, 2)),
        ("duplicate stream", stage_with(1, 2, |_, b| b[1].stream_id = 0), (AckStatus::INVALID_BINDING, 2)),
        ("REDUCE path to the wrong rank", stage_with(1, 2, |_, b| b[0].directions |= direction::RESULT_OUT), (AckStatus::INVALID_BINDING, 1)),
        ("terms do not add up", stage_with(1, 2, |c, _| c.terms = 3), (AckStatus::INVALID_BINDING, 0)),
        ("window too large", stage_with(1, 2, |c, _| c.window_elements = 100_000), (AckStatus::NO_RESOURCES, 0)),
    ];
    for (name, frame, want) in cases {
        let mut n = node();
        assert_eq!(status(&send(&mut n, 0, &frame)), want, "{name}");
        assert_eq!(n.state(&IDENTITY), None, "{name}: refused STAGE installed state");
    }
    // A supported Kulisch tuple is accepted.
    let mut n = node();
    let ok = stage_with(1, 2, |c, _| {
        c.accumulator = AccumulatorPolicy::KULISCH_FIXED;
        c.output = OutputFormat::AUTO;
        c.kulisch_width = 280
    });
    assert_eq!(status(&send(&mut n, 0, &ok)), (AckStatus::OK, 0));
}

#[test]
fn no_resources_when_full() {
    let mut n = Node::new(NodeConfig { mac: SWITCH_MAC, control_ep: SWITCH_EP, am_mac: AM_MAC, am_port: 0, ports: 2, mtu: 1500, max_ops: 1, caps: caps() });
    assert_eq!(status(&send(&mut n, 0, &STAGE)), (AckStatus::OK, 0));
    let mut other = stage_with(2, 2, |_, _| {});
    ControlPacket::new_unchecked(&mut other[ETH_HEADER_LEN..]).set_identity(&Identity { op: 8, ..IDENTITY });
    assert_eq!(status(&send(&mut n, 0, &other)), (AckStatus::NO_RESOURCES, 0));
}

#[test]
fn caps_query_pages_like_the_golden_frames() {
    // The golden capture's two MTU-576 pages: 16 records, 15 on page 0.
    let frames = golden::frames();
    let page = |name: &str| frames.iter().find(|g| g.name == name).unwrap().bytes.clone();
    let records: Vec<CapabilityRecord> = [page("caps_response_page0_mtu576"), page("caps_response_page1_mtu576")]
        .iter()
        .flat_map(|f| match parse_frame(f, &Limits::default()).unwrap().prism {
            Some(PrismRepr::Control(ControlRepr { body: ControlBody::Caps(r), .. })) => r.iter().collect::<Vec<_>>(),
            _ => panic!(),
        })
        .collect();
    assert_eq!(records.len(), 16);
    let mut n = Node::new(NodeConfig { mac: SWITCH_MAC, control_ep: SWITCH_EP, am_mac: AM_MAC, am_port: 0, ports: 2, mtu: 576, max_ops: 4, caps: records });
    let out = send(&mut n, 0, &control(Command::CAPS_QUERY, 7, 2));
    assert_eq!(out.iter().map(|s| s.frame.clone()).collect::<Vec<_>>(), vec![page("caps_response_page0_mtu576"), page("caps_response_page1_mtu576")]);
}
