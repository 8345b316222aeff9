//! The RTL switch (prism_switch under Verilator) against the Rust engine:
//! the same frames in the same order give the same frames out, byte for
//! byte and in order on each port, and the same counters (every reject by reason). The
//! software node is configured with the capability record the hardware
//! advertises, one operation context and one port, like the hardware.

use prism_arith::NumFormat;
use prism_dataplane::engine::{DataReject, Node, NodeConfig, Sent};
use prism_dataplane::fixtures::sim;
use prism_dataplane::golden::{self, AM_EP, AM_MAC, SWITCH_EP, SWITCH_MAC};
use prism_dataplane::wire::*;
use prism_rtl::{Egress, RtlSwitch};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sim::{control_frame, packetize, rank_mac, vectors, Scenario, Value};

/// Both switches, fed the same frames.
struct Pair {
    rtl: RtlSwitch,
    sw: Node,
    rtl_out: Vec<Egress>,
    sw_out: Vec<Sent>,
    gap: usize,
}

/// The capability records the hardware answers a CAPS_QUERY with.
fn rtl_caps(rtl: &mut RtlSwitch) -> Vec<CapabilityRecord> {
    let mut out = Vec::new();
    rtl.send(&control_frame(golden::IDENTITY, 7, Command::CAPS_QUERY, ControlBody::Empty), 0, &mut out);
    rtl.drain(64, &mut out);
    assert_eq!(out.len(), 1, "one CAPS_RESPONSE page");
    match parse_frame(&out[0].frame, &Limits::default()).expect("a valid CAPS_RESPONSE").prism {
        Some(PrismRepr::Control(ControlRepr { command: Command::CAPS_RESPONSE, body: ControlBody::Caps(r), .. })) => r.iter().collect(),
        other => panic!("not a CAPS_RESPONSE: {other:?}"),
    }
}

impl Pair {
    fn new(gap: usize) -> Self {
        let mut rtl = if FP32_BUILD.with(|b| b.get()) { RtlSwitch::fp32_only(SWITCH_MAC.0, AM_MAC.0, SWITCH_EP) } else { RtlSwitch::new(SWITCH_MAC.0, AM_MAC.0, SWITCH_EP) };
        let caps = rtl_caps(&mut rtl);
        let ports = rtl.ports() as u16;
        let sw = Node::new(NodeConfig { mac: SWITCH_MAC, control_ep: SWITCH_EP, am_mac: AM_MAC, am_port: 0, ports, mtu: 1500, max_ops: 1, caps });
        // The query above counts once in the hardware: match it in software.
        let mut p = Pair { rtl, sw, rtl_out: Vec::new(), sw_out: Vec::new(), gap };
        p.sw.handle(0, &control_frame(golden::IDENTITY, 7, Command::CAPS_QUERY, ControlBody::Empty), &mut Vec::new());
        p
    }

    fn send(&mut self, frame: &[u8]) {
        self.send_on(0, frame);
    }

    fn send_on(&mut self, port: u16, frame: &[u8]) {
        self.rtl.send_on(port as usize, frame, self.gap, &mut self.rtl_out);
        self.sw.handle(port, frame, &mut self.sw_out);
    }

    /// Drains the hardware and compares everything so far.
    fn check(&mut self, what: &str) {
        // Longer than the longest silent stretch (a STAGE clears 4,096 slots, 64 cycles).
        self.rtl.drain(1000, &mut self.rtl_out);
        // Each port is its own link: frames are compared port by port, in order.
        for port in 0..self.rtl.ports() as u16 {
            let rtl: Vec<&[u8]> = self.rtl_out.iter().filter(|e| e.port == port).map(|e| e.frame.as_slice()).collect();
            let sw: Vec<&[u8]> = self.sw_out.iter().filter(|s| s.port == port).map(|s| s.frame.as_slice()).collect();
            for (i, (a, b)) in rtl.iter().zip(sw.iter()).enumerate() {
                if a != b {
                    let at = a.iter().zip(b.iter()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
                    panic!("{what}: frame {i} on port {port} differs from byte {at} (lengths {} and {})\nRTL {}\nSW  {}", a.len(), b.len(), describe(a), describe(b));
                }
            }
            assert_eq!(rtl.len(), sw.len(), "{what}: {} frames on port {port} from the RTL, {} from the engine", rtl.len(), sw.len());
        }
        assert_eq!(self.rtl_out.len(), self.sw_out.len(), "{what}: {} frames from the RTL, {} from the engine", self.rtl_out.len(), self.sw_out.len());
        assert_eq!(self.rtl.counters(), self.sw.counters, "{what}: counters differ");
    }
}

/// The first beat in hex, and the parse verdict.
fn describe(f: &[u8]) -> String {
    let head: String = f.iter().take(64).map(|b| format!("{b:02x}")).collect();
    format!("{head} {:?}", parse_frame(f, &Limits::default()).err())
}

/// Ranks alternate between the switch's two ports.
const PORTS: u16 = 2;

/// The simulator's STAGE within the hardware's limits (ranks alternating
/// between its two ports, eight held packets, 12,000 window bytes), then `edit`.
fn stage(s: &Scenario, txn: u32, op_gen: u32, edit: impl Fn(&mut ContextRecord, &mut Vec<BindingRecord>)) -> Vec<u8> {
    let frame = sim::stage_frame(s, txn, op_gen);
    let Some(PrismRepr::Control(ControlRepr { body: ControlBody::Stage { mut context, bindings }, .. })) = parse_frame(&frame, &Limits::default()).expect("the simulator's STAGE").prism else {
        panic!("the simulator's STAGE is not a STAGE")
    };
    let mut bindings: Vec<BindingRecord> = bindings.iter().collect();
    context.window_intervals = 8;
    context.window_bytes = 12000;
    for b in &mut bindings {
        b.port = b.rank % PORTS;
    }
    edit(&mut context, &mut bindings);
    context.binding_count = bindings.len() as u16;
    control_frame(s.identity(op_gen), txn, Command::STAGE, ControlBody::Stage { context, bindings: Records::Typed(&bindings) })
}

fn cmd(s: &Scenario, c: Command, txn: u32, op_gen: u32) -> Vec<u8> {
    control_frame(s.identity(op_gen), txn, c, ControlBody::Empty)
}

#[test]
fn golden_and_malformed_frames() {
    for gap in [0, 2] {
        let mut p = Pair::new(gap);
        for (i, g) in golden::frames().iter().enumerate() {
            p.send_on(i as u16 % PORTS, &g.bytes);
        }
        for (i, m) in golden::malformed().iter().enumerate() {
            p.send_on(i as u16 % PORTS, &m.bytes);
        }
        p.check(&format!("golden, gap {gap}"));
    }
}

#[test]
fn control_refusals_match() {
    let s = Scenario::new(4, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL);
    let mut p = Pair::new(0);
    let mut txn = 100;
    let mut next = || {
        txn += 1;
        txn
    };
    type Edit = fn(&mut ContextRecord, &mut Vec<BindingRecord>);
    let edits: &[(&str, Edit)] = &[
        ("unknown role", |c, _| c.role = Role::Unknown(9)),
        ("zero vector", |c, _| c.vector_len = 0),
        ("zero terms", |c, _| c.terms = 0),
        ("mtu 1000", |c, _| c.mtu = 1000),
        ("mtu 9000", |c, _| c.mtu = 9000),
        ("kulisch wider than the hardware", |c, _| {
            c.accumulator = AccumulatorPolicy::KULISCH_FIXED;
            c.kulisch_width = 4096
        }),
        ("kulisch too narrow", |c, _| {
            c.accumulator = AccumulatorPolicy::KULISCH_FIXED;
            c.kulisch_width = 272
        }),
        // The least Kulisch width steps at 4, 2^10, 2^18 and 2^26 terms:
        // INVALID below it, else the terms' mismatch with the bindings.
        ("kulisch at 280 for 5 terms", |c, _| {
            c.accumulator = AccumulatorPolicy::KULISCH_FIXED;
            c.kulisch_width = 280;
            c.terms = 5
        }),
        ("kulisch at 288 for 1024 terms", |c, _| {
            c.accumulator = AccumulatorPolicy::KULISCH_FIXED;
            c.kulisch_width = 288;
            c.terms = 1024
        }),
        ("kulisch at 288 for 1025 terms", |c, _| {
            c.accumulator = AccumulatorPolicy::KULISCH_FIXED;
            c.kulisch_width = 288;
            c.terms = 1025
        }),
        ("kulisch at 304 for 2^26 + 1 terms", |c, _| {
            c.accumulator = AccumulatorPolicy::KULISCH_FIXED;
            c.kulisch_width = 304;
            c.terms = (1 << 26) + 1
        }),
        ("FP16 output", |c, _| c.output = OutputFormat::FP16),
        ("FP16 input", |c, _| c.input_format = FormatCode::FP16),
        ("port 3", |_, b| b[2].port = 3),
        ("port 2 of 2", |_, b| b[1].port = 2),
        ("switch peer", |_, b| b[1].peer_kind = PeerKind::SWITCH),
        ("no direction", |_, b| b[1].directions = 0),
        ("duplicate stream", |_, b| b[3].stream_id = 1),
        ("duplicate endpoint", |_, b| b[3].local_ep = b[0].local_ep),
        // The hardware scans the bindings before: the first and the last of them.
        ("duplicate of the binding before", |_, b| b[3].stream_id = b[2].stream_id),
        ("duplicate of the first binding", |_, b| b[2].local_ep = b[0].local_ep),
        ("allreduce without result", |_, b| b[2].directions = direction::DATA_IN),
        ("terms", |_, b| b[0].terms = 2),
        ("small window", |c, _| c.window_elements = 2000),
        ("zero intervals", |c, _| c.window_intervals = 0),
        ("few bytes", |c, _| c.window_bytes = 1000),
        ("big window", |c, _| c.window_elements = 5000),
        ("many intervals", |c, _| c.window_intervals = 17),
        ("many bytes", |c, _| c.window_bytes = 30000),
        ("nine ranks", |c, b| {
            for r in 4..9u16 {
                let mut x = b[0];
                x.stream_id = r;
                x.local_ep = 0x100 + r;
                x.rank = r;
                b.push(x);
            }
            c.terms = 9;
        }),
        ("reduce to a rank without path", |c, b| {
            c.semantics = Semantics::REDUCE;
            c.dest_rank = 9;
            for x in b.iter_mut() {
                x.directions = direction::DATA_IN;
            }
        }),
        ("reduce, path to another rank", |c, b| {
            c.semantics = Semantics::REDUCE;
            c.dest_rank = 1;
            b[2].directions = direction::DATA_IN | direction::RESULT_OUT;
        }),
    ];
    for (name, edit) in edits {
        p.send(&stage(&s, next(), 1, *edit));
        p.check(name);
    }
    // Commands out of order, then the lifecycle with retries, conflicts and generations.
    let t = next();
    p.send(&cmd(&s, Command::COMMIT, t, 1));
    p.send(&cmd(&s, Command::ABORT, next(), 1));
    let st = next();
    p.send(&stage(&s, st, 2, |_, _| {}));
    p.send(&stage(&s, st, 2, |_, _| {})); // identical retry
    p.send(&stage(&s, st, 3, |_, _| {})); // same txn, other bytes
    p.send(&stage(&s, next(), 2, |_, _| {})); // same generation again
    p.send(&stage(&s, next(), 1, |_, _| {})); // older
    p.send(&control_frame(Identity { op: 77, ..s.identity(1) }, next(), Command::STAGE, ControlBody::Empty));
    p.send(&cmd(&s, Command::COMPLETE, next(), 2));
    p.send(&cmd(&s, Command::RELEASE, next(), 2));
    let c = next();
    p.send(&cmd(&s, Command::COMMIT, c, 2));
    p.send(&cmd(&s, Command::COMMIT, c, 2));
    p.send(&cmd(&s, Command::COMMIT, next(), 2));
    p.send(&cmd(&s, Command::COMPLETE, next(), 2));
    p.send(&cmd(&s, Command::ACK, next(), 2));
    p.send(&cmd(&s, Command::COMMIT, next(), 5));
    p.send(&cmd(&s, Command::RELEASE, next(), 2));
    p.send(&stage(&s, next(), 2, |_, _| {})); // retired generation
    p.send(&stage(&s, next(), 3, |_, _| {}));
    // From a stranger: untrusted.
    let mut f = cmd(&s, Command::COMMIT, next(), 3);
    f[6..12].copy_from_slice(&rank_mac(1).0);
    p.send(&f);
    p.send(&cmd(&s, Command::CAPS_QUERY, next(), 3));
    p.check("lifecycle");
    // Every ACK status but OK was exercised, and retries were answered.
    let c = &p.sw.counters;
    for status in AckStatus::ALL.iter().skip(1) {
        assert!(c.refused[u8::from(*status) as usize] > 0, "no {status:?} refusal exercised: {c:?}");
    }
    assert!(c.retries_answered >= 2 && c.untrusted_source == 1, "{c:?}");
    let _ = AM_EP;
}

/// One randomized SINGLE run through both switches: setup, DATA from every
/// rank with random packetization, reordering inside the window, duplicates
/// and corrupted copies, then COMPLETE and RELEASE.
fn run(ranks: u16, semantics: Semantics, seed: u64, vector_len: u32, gap: usize) -> Pair {
    run_with(ranks, semantics, AccumulatorPolicy::FP32_ARRIVAL, seed, vector_len, gap, false)
}

/// FP32 values over the whole range: subnormals, huge values, zeros of both
/// signs, infinities and NaN now and then (rounding, flags, overflow).
fn full_range(s: &Scenario, rng: &mut StdRng) -> Vec<Vec<Value>> {
    (0..s.ranks)
        .map(|_| {
            (0..s.vector_len)
                .map(|i| {
                    let bits = match rng.gen_range(0..100) {
                        0 => 0x8000_0000,
                        1 => 0,
                        2 if i % 7 == 0 => 0x7F80_0000 | (rng.gen::<u32>() & 0x8000_0000),
                        3 if i % 11 == 0 => 0x7FC0_0000,
                        4..=9 => rng.gen::<u32>() & 0x807F_FFFF,
                        _ => loop {
                            let b: u32 = rng.gen();
                            if b & 0x7F80_0000 != 0x7F80_0000 {
                                break b;
                            }
                        },
                    };
                    Value { format: NumFormat::Fp32, bits }
                })
                .collect()
        })
        .collect()
}

fn run_with(ranks: u16, semantics: Semantics, accumulator: AccumulatorPolicy, seed: u64, vector_len: u32, gap: usize, wide: bool) -> Pair {
    run_stalled(ranks, semantics, accumulator, seed, vector_len, gap, wide, Vec::new())
}

thread_local! {
    /// The RESULT output format of the next runs (FP32 unless a test says AUTO).
    static OUTPUT: std::cell::Cell<OutputFormat> = const { std::cell::Cell::new(OutputFormat::FP32) };
    /// Small integers as inputs (sums that fit INT8, FP16 and BF16 too).
    static INTEGERS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Hazard runs under KULISCH_FIXED: each frame's last FP32 values go as
    /// Kulisch values of the operation's width (one a cycle through the lanes).
    static KVALUES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The next switches are the FP32-only build (prism_switch_fp32).
    static FP32_BUILD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[allow(clippy::too_many_arguments)]
fn run_stalled(ranks: u16, semantics: Semantics, accumulator: AccumulatorPolicy, seed: u64, vector_len: u32, gap: usize, wide: bool, stall: Vec<bool>) -> Pair {
    let mut p = Pair::new(gap);
    p.rtl.out_stall = stall;
    let s = scenario(ranks, semantics, accumulator, seed, vector_len);
    drive_op(&mut p, &s, 1, wide);
    p.check(&format!("{ranks} ranks, {semantics:?}, {accumulator:?}, seed {seed}"));
    check_results(&p, &s, 0);
    p
}

fn scenario(ranks: u16, semantics: Semantics, accumulator: AccumulatorPolicy, seed: u64, vector_len: u32) -> Scenario {
    let mut s = Scenario::new(ranks, semantics, accumulator);
    s.vector_len = vector_len;
    s.data_seed = seed;
    s.dest_rank = (seed % ranks as u64) as u16;
    s.output = OUTPUT.with(|o| o.get());
    s.integers = INTEGERS.with(|o| o.get());
    s
}

/// Nothing was lost: one RESULT per canonical packet per path (FP32
/// output), counting from `before` (the RESULTs of earlier operations).
fn check_results(p: &Pair, s: &Scenario, before: u64) {
    let paths = if s.semantics == Semantics::ALLREDUCE { s.ranks as u64 } else { 1 };
    let packets = (s.vector_len as u64).div_ceil(363);
    let sent = p.sw.counters.results_sent - before;
    if s.output == OutputFormat::FP32 {
        assert_eq!(sent, paths * packets, "{:?}", p.sw.counters);
    } else {
        assert!(sent >= paths, "{:?}", p.sw.counters);
    }
}

/// One operation of generation `op_gen` through both switches, STAGE to
/// RELEASE: each rank's packets in a random order inside the window, with
/// duplicates, changed copies, malformed frames and frames on the wrong port
/// in between.
fn drive_op(p: &mut Pair, s: &Scenario, op_gen: u32, wide: bool) {
    let (ranks, seed) = (s.ranks, s.data_seed);
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    let txn = 16 * op_gen;
    p.send(&stage(s, txn + 1, op_gen, |_, _| {}));
    p.send(&cmd(s, Command::COMMIT, txn + 2, op_gen));
    p.send(&cmd(s, Command::COMMIT, txn + 2, op_gen));
    let v = if wide { full_range(s, &mut rng) } else { vectors(s) };
    let mut pending: Vec<Vec<(u64, u64, Vec<u8>)>> = (0..ranks).map(|r| packetize(s, r, &v[r as usize], op_gen, &mut rng)).collect();
    let mut sent: Vec<(u16, Vec<u8>)> = Vec::new();
    let mut held: Vec<Vec<u64>> = vec![Vec::new(); ranks as usize];
    let id = s.identity(op_gen);
    let window = single_window_elements(s.mtu) as u64;
    let malformed = golden::malformed();
    let mut steps = 0;
    while pending.iter().any(|q| !q.is_empty()) {
        steps += 1;
        assert!(steps < 200_000, "the run does not finish");
        let base = p.sw.window_base(&id).unwrap_or(0);
        let r = rng.gen_range(0..ranks as usize);
        if pending[r].is_empty() {
            continue;
        }
        // One of the next three packets inside the window; the next one in
        // order when the rank holds six (eight are allowed: no deadlock).
        held[r].retain(|&e| e > base);
        let k = if held[r].len() >= 6 { 0 } else { rng.gen_range(0..pending[r].len().min(3)) };
        let (_, end, _) = &pending[r][k];
        if *end > base + window {
            continue;
        }
        let end = *end;
        let before = p.sw.counters.data_applied;
        let frame = pending[r][k].2.clone();
        let port = r as u16 % PORTS;
        p.send_on(port, &frame);
        if p.sw.counters.data_applied > before {
            pending[r].remove(k);
            held[r].push(end);
            sent.push((port, frame));
        }
        match rng.gen_range(0..40) {
            // An identical duplicate of something sent.
            0..=2 if !sent.is_empty() => {
                let (q, f) = sent[rng.gen_range(0..sent.len())].clone();
                p.send_on(q, &f);
            }
            // A copy with one body byte changed: changed retransmit or malformed.
            3 if !sent.is_empty() => {
                let (q, mut f) = sent[rng.gen_range(0..sent.len())].clone();
                let at = rng.gen_range(56..f.len());
                f[at] ^= 1 << rng.gen_range(0..8);
                p.send_on(q, &f);
            }
            4 => {
                let m = &malformed[rng.gen_range(0..malformed.len())];
                p.send_on(rng.gen_range(0..PORTS), &m.bytes);
            }
            // The right frame on the wrong port: wrong_port in both.
            5 => {
                let f = pending[r].first().map(|x| x.2.clone());
                if let Some(f) = f {
                    p.send_on((port + 1) % PORTS, &f);
                }
            }
            _ => {}
        }
    }
    p.send(&cmd(s, Command::COMPLETE, txn + 3, op_gen));
    p.send(&cmd(s, Command::RELEASE, txn + 4, op_gen));
}

/// The ring's slots reused: a vector over twice the ring (4,096 slots), so
/// every slot serves two laps of one operation and slots 0 to 907 three,
/// then operations one after another on one switch (each STAGE's fresh
/// accumulator over the last one's sums: the third operation's slots 904
/// to 1,999 hold the second's lap-0 sums), under both policies and both
/// outputs. The ring tells a slot at rest by the lap of the element it
/// last summed; a stale sum read as a value, or a fresh slot's first add
/// missing its zero, changes a RESULT byte.
#[test]
fn the_ring_is_reused_across_laps_and_operations() {
    for (acc, output, ranks) in [
        (AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::FP32, 3u16),
        (AccumulatorPolicy::KULISCH_FIXED, OutputFormat::FP32, 2),
        (AccumulatorPolicy::KULISCH_FIXED, OutputFormat::AUTO, 3),
        (AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::AUTO, 2),
    ] {
        OUTPUT.with(|o| o.set(output));
        let mut p = Pair::new(1);
        // Laps 0 to 2; then laps 0 and 1; then lap 0 over slots the one
        // before summed at lap 0.
        for (i, len) in [9100u32, 5000, 2000].into_iter().enumerate() {
            let semantics = if i == 1 { Semantics::REDUCE } else { Semantics::ALLREDUCE };
            let s = scenario(ranks, semantics, acc, 71 + i as u64, len);
            let before = p.sw.counters.results_sent;
            drive_op(&mut p, &s, i as u32 + 1, i == 0 && acc == AccumulatorPolicy::KULISCH_FIXED);
            p.check(&format!("{acc:?} {output:?}, operation {} of {len} elements", i + 1));
            check_results(&p, &s, before);
        }
    }
    OUTPUT.with(|o| o.set(OutputFormat::FP32));
}

/// The window's flow control refuses the same frames in both switches: a
/// rank runs ahead of the other until it holds as many packets as the
/// window allows (3 intervals; 2,400 bytes: three frames of 121 values, a
/// canonical packet's range), and the frames refused are admitted once the
/// other rank catches up and the window moves.
#[test]
fn flow_control_refusals_match() {
    for (intervals, bytes, limit) in [(3u16, 12000u32, DataReject::IntervalsExhausted), (8, 2400, DataReject::BytesExhausted)] {
        let mut s = Scenario::new(2, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL);
        s.vector_len = 600;
        let mut p = Pair::new(0);
        p.send(&stage(&s, 1, 1, |c, _| {
            c.window_intervals = intervals;
            c.window_bytes = bytes;
        }));
        p.send(&cmd(&s, Command::COMMIT, 2, 1));
        let v = vectors(&s);
        let cuts = [0, 121, 242, 363, 484, 600];
        let frame = |r: u16, i: usize| data_frame(&s, r, i as u32, cuts[i], &v[r as usize][cuts[i]..cuts[i + 1]], cuts[i + 1] == 600);
        for i in 0..cuts.len() - 1 {
            p.send_on(1, &frame(1, i));
        }
        for i in 0..cuts.len() - 1 {
            p.send_on(0, &frame(0, i));
            p.send_on(1, &frame(1, i));
        }
        p.send(&cmd(&s, Command::COMPLETE, 3, 1));
        p.send(&cmd(&s, Command::RELEASE, 4, 1));
        let what = format!("{intervals} intervals, {bytes} bytes");
        p.check(&what);
        let c = &p.sw.counters;
        assert!(c.data_rejected[limit.index()] >= 2, "{what}: {} refusals for {}", c.data_rejected[limit.index()], limit.name());
        assert_eq!(c.results_sent, 2 * 600u64.div_ceil(363), "{what}: every range's RESULT on both paths: {c:?}");
    }
}

/// Vectors whose last RESULT holds one element (363k + 1 at MTU 1500): the
/// builder's last line is line 0, with no request after it.
#[test]
fn a_one_element_last_result_is_byte_identical() {
    let mut results = 0;
    for (i, (ranks, semantics, len)) in [(2u16, Semantics::REDUCE, 364u32), (3, Semantics::ALLREDUCE, 1090)].into_iter().enumerate() {
        let p = run(ranks, semantics, 71 + i as u64, len, i % 2);
        results += p.sw.counters.results_sent;
    }
    assert!(results >= 2 + 2 * 3, "{results}");
}

#[test]
fn randomized_single_traffic_is_byte_identical() {
    let (mut dups, mut changed, mut malformed, mut results) = (0, 0, 0, 0);
    for (i, ranks) in [2u16, 3, 5, 8].into_iter().enumerate() {
        for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
            let p = run(ranks, semantics, 11 + i as u64, 2000 + 397 * i as u32, i % 2);
            let c = &p.sw.counters;
            dups += c.data_duplicates;
            changed += c.data_rejected[prism_dataplane::engine::DataReject::ChangedRetransmit.index()];
            malformed += c.malformed.iter().sum::<u64>();
            results += c.results_sent;
        }
    }
    // The runs went through the paths they are meant to compare.
    assert!(dups > 10 && changed > 3 && malformed > 10 && results > 50, "dups {dups}, changed {changed}, malformed {malformed}, results {results}");
}

#[test]
fn kulisch_fixed_is_byte_identical() {
    let mut results = 0;
    for (i, ranks) in [2u16, 3, 8].into_iter().enumerate() {
        for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
            for wide in [false, true] {
                let p = run_with(ranks, semantics, AccumulatorPolicy::KULISCH_FIXED, 31 + i as u64, 1500 + 611 * i as u32, i % 2, wide);
                results += p.sw.counters.results_sent;
            }
        }
    }
    assert!(results > 40, "{results}");
}

/// `bits` as a Kulisch value of `w` bits: state byte, then the integer in units of 2^-149.
fn kulisch_value(bits: u32, w: usize) -> Vec<u8> {
    let mut v = vec![0u8; 1 + w / 8];
    let (neg, e, f) = (bits >> 31 == 1, (bits >> 23) & 0xFF, bits & 0x7F_FFFF);
    if e == 0xFF {
        v[0] = if f != 0 {
            5
        } else if neg {
            4
        } else {
            3
        };
        return v;
    }
    let m = if e == 0 { f } else { f | 0x80_0000 } as u64;
    if m == 0 {
        v[0] = if neg { 2 } else { 1 };
        return v;
    }
    let shift = if e == 0 { 0 } else { e as usize - 1 };
    let int = &mut v[1..];
    let (byte, bit) = (shift / 8, shift % 8);
    let wide = m << bit;
    for k in 0..5 {
        if byte + k < int.len() {
            int[byte + k] = (wide >> (8 * k)) as u8;
        }
    }
    if neg {
        negate_le(int);
    }
    v
}

/// `a = -a`, a little-endian two's complement integer.
fn negate_le(a: &mut [u8]) {
    a.iter_mut().for_each(|b| *b = !*b);
    add_le(a, &[1]);
}

#[test]
fn kulisch_values_in_data_are_byte_identical() {
    // Ranks send some ranges as Kulisch values of the operation's width (and
    // one packet of another width, refused the same way by both). At the
    // scenario's width (280 bits) a value is 36 bytes, so every value sits
    // at a multiple of 4 in the frame.
    kulisch_values_in_data(None, 77);
}

#[test]
fn kulisch_values_at_every_byte_alignment_are_byte_identical() {
    // 37- and 41-byte values (288 and 320 bits, the widest the hardware
    // takes): the frame buffer's view reads them from every offset mod 4,
    // the widest up to its 42nd byte. At 320 bits ranks 0 and 1 add +X and
    // -X to their finite values, X a 316-bit integer of the element: where
    // both send Kulisch values the X cancel and the RESULT is finite, so a
    // wrong byte anywhere in the integer shows.
    kulisch_values_in_data(Some(288), 79);
    kulisch_values_in_data(Some(320), 80);
}

/// `a += b`, little-endian two's complement integers (b no wider than a,
/// zero-extended), modulo a's width.
fn add_le(a: &mut [u8], b: &[u8]) {
    let mut carry = 0u16;
    for (i, x) in a.iter_mut().enumerate() {
        let t = *x as u16 + *b.get(i).unwrap_or(&0) as u16 + carry;
        *x = t as u8;
        carry = t >> 8;
    }
}

fn kulisch_values_in_data(width: Option<u16>, seed: u64) {
    let s = {
        let mut s = Scenario::new(3, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED);
        s.vector_len = 240;
        s
    };
    let w = width.unwrap_or(s.kulisch_width()) as usize;
    let mut p = Pair::new(0);
    p.send(&stage(&s, 1, 1, |c, _| c.kulisch_width = w as u16));
    p.send(&cmd(&s, Command::COMMIT, 2, 1));
    let mut rng = StdRng::seed_from_u64(seed);
    let v = full_range(&s, &mut rng);
    // At the widest, +X for rank 0 and -X for rank 1 (above).
    let cancel: Vec<[Vec<u8>; 2]> = (0..s.vector_len)
        .map(|_| {
            let mut x: Vec<u8> = (0..w / 8).map(|_| rng.gen()).collect();
            x[w / 8 - 1] &= 0x0F;
            let mut neg = x.clone();
            negate_le(&mut neg);
            [x, neg]
        })
        .collect();
    let value = |r: u16, e: usize, bits: u32| -> Vec<u8> {
        let mut k = kulisch_value(bits, w);
        if w == 320 && r < 2 && k[0] == 0 {
            add_le(&mut k[1..], &cancel[e][r as usize]);
        }
        k
    };
    // 30 to 34 values a packet (34 Kulisch-320 values fill a 1500-byte
    // frame): at most 8 packets a rank, the window's interval limit.
    let mut frames: Vec<Vec<Vec<u8>>> = Vec::new();
    for r in 0..s.ranks {
        let mut mine = Vec::new();
        let mut at = 0usize;
        let mut pid = 0u32;
        while at < v[r as usize].len() {
            let n = rng.gen_range(30..=34usize).min(v[r as usize].len() - at);
            let kulisch = rng.gen_bool(0.6);
            let vals: Vec<u8> = if kulisch {
                v[r as usize][at..at + n].iter().enumerate().flat_map(|(i, x)| value(r, at + i, x.bits)).collect()
            } else {
                v[r as usize][at..at + n].iter().flat_map(|x| x.bits.to_le_bytes()).collect()
            };
            let format = if kulisch { NumFormat::Kulisch { width_bits: w as u16 } } else { NumFormat::Fp32 };
            if pid == 2 && kulisch {
                // The same packet at another width first: format_not_allowed on both.
                // (320 bits is the widest the hardware takes: 312 there.)
                let ow = if w + 8 <= 320 { w + 8 } else { w - 8 };
                let other: Vec<u8> = v[r as usize][at..at + 10].iter().flat_map(|x| kulisch_value(x.bits, ow)).collect();
                mine.push(sim::data_frame(&s, r, 1, pid, at, &[(NumFormat::Kulisch { width_bits: ow as u16 }, other, 10)], false));
            }
            mine.push(sim::data_frame(&s, r, 1, pid, at, &[(format, vals, n as u16)], at + n == v[r as usize].len()));
            at += n;
            pid += 1;
        }
        frames.push(mine);
    }
    // Ranks interleaved, packet by packet, each on its port.
    for k in 0..frames.iter().map(Vec::len).max().unwrap_or(0) {
        for (r, f) in frames.iter().enumerate() {
            if let Some(f) = f.get(k) {
                p.send_on(r as u16 % PORTS, f);
            }
        }
    }
    p.check(&format!("Kulisch values in DATA, {w} bits"));
    let c = &p.sw.counters;
    assert_eq!(c.results_sent, 3, "the RESULT on every path");
    assert!(c.data_rejected[prism_dataplane::engine::DataReject::FormatNotAllowed.index()] >= 1, "{c:?}");
}

/// Kulisch values whose state and integer disagree end their frame on both
/// switches (malformed, nothing of it applied) wherever the value sits,
/// first, inside or last of its group, and whether the group comes before
/// or after a native one; the frames' good copies, two groups each
/// (native and Kulisch: the walk skips the native group by its
/// descriptor), complete the operation.
#[test]
fn malformed_kulisch_values_and_mixed_groups_match() {
    let s = {
        let mut s = Scenario::new(3, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED);
        s.vector_len = 240;
        s
    };
    let w = s.kulisch_width() as usize;
    let vb = 1 + w / 8;
    let mut p = Pair::new(0);
    p.send(&stage(&s, 1, 1, |_, _| {}));
    p.send(&cmd(&s, Command::COMMIT, 2, 1));
    let mut rng = StdRng::seed_from_u64(78);
    let v = full_range(&s, &mut rng);
    let fp32 = |x: &[Value]| -> Vec<u8> { x.iter().flat_map(|x| x.bits.to_le_bytes()).collect() };
    let kul = |x: &[Value]| -> Vec<u8> { x.iter().flat_map(|x| kulisch_value(x.bits, w)).collect() };
    let mut broken = 0u64;
    for r in 0..s.ranks {
        let vr = &v[r as usize];
        let (mut at, mut pid) = (0usize, 0u32);
        while at < vr.len() {
            let n = 30.min(vr.len() - at);
            let k = rng.gen_range(1..n);
            let native_first = pid % 2 == 0;
            let (a, b) = (&vr[at..at + k], &vr[at + k..at + n]);
            let ku = if native_first { kul(b) } else { kul(a) };
            let kn = if native_first { n - k } else { k };
            let frame = |ku: Vec<u8>| {
                let groups = if native_first {
                    vec![(NumFormat::Fp32, fp32(a), k as u16), (NumFormat::Kulisch { width_bits: w as u16 }, ku, (n - k) as u16)]
                } else {
                    vec![(NumFormat::Kulisch { width_bits: w as u16 }, ku, k as u16), (NumFormat::Fp32, fp32(b), (n - k) as u16)]
                };
                sim::data_frame(&s, r, 1, pid, at, &groups, at + n == vr.len())
            };
            // A broken copy first: value j of the Kulisch group (first,
            // inside, last), its state and integer made to disagree.
            let j = [0, kn / 2, kn - 1][(pid as usize + r as usize) % 3];
            let mut bad = ku.clone();
            let val = &mut bad[j * vb..(j + 1) * vb];
            match (pid as usize / 3 + r as usize) % 3 {
                0 => val.fill(0), // FINITE, integer zero
                1 => {
                    val[0] = 1; // +0, integer not zero
                    val[rng.gen_range(1..vb)] = 0x5a;
                }
                _ => val[0] = 6, // no such state
            }
            p.send_on(r % PORTS, &frame(bad));
            broken += 1;
            p.send_on(r % PORTS, &frame(ku));
            at += n;
            pid += 1;
        }
    }
    p.check("malformed Kulisch values and mixed groups");
    let c = &p.sw.counters;
    assert_eq!(c.malformed[Reason::BadKulischValue.index()], broken, "every broken copy refused for its value: {c:?}");
    assert_eq!(c.results_sent, 3, "the good copies complete the operation on every path");
}

#[test]
fn egress_backpressure_changes_nothing() {
    // m_axis_tready low on a fixed irregular pattern (7 of 19 cycles, each
    // port at its own phase), and ingress idle gaps: the same frames and
    // counters as the engine.
    let stall: Vec<bool> = (0..19).map(|i| [1, 2, 5, 8, 9, 13, 17].contains(&i)).collect();
    for (ranks, semantics, acc, gap) in
        [(3u16, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, 0), (4, Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED, 1), (8, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 0)]
    {
        let p = run_stalled(ranks, semantics, acc, 91 + ranks as u64, 1700, gap, false, stall.clone());
        assert!(p.sw.counters.results_sent > 0);
    }
    // AUTO bodies leave from the encoder's buffer, not the line buffers: stalled too.
    OUTPUT.with(|o| o.set(OutputFormat::AUTO));
    let p = run_stalled(5, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 97, 1500, 0, true, stall);
    OUTPUT.with(|o| o.set(OutputFormat::FP32));
    assert!(p.sw.counters.results_sent > 0);
}

#[test]
fn auto_output_is_byte_identical() {
    // AUTO RESULTs (docs/wire-format.md sections 8 and 9): the hardware's
    // encoder decides the same groups and bytes as the software's.
    OUTPUT.with(|o| o.set(OutputFormat::AUTO));
    let mut results = 0;
    for (i, ranks) in [2u16, 3, 8].into_iter().enumerate() {
        for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
            for acc in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
                for wide in [false, true] {
                    let p = run_with(ranks, semantics, acc, 51 + i as u64, 1300 + 457 * i as u32, i % 2, wide);
                    results += p.sw.counters.results_sent;
                }
            }
        }
    }
    // Small integers: sums that INT8, FP16 and BF16 hold, so every format and
    // format changes inside packets appear.
    INTEGERS.with(|o| o.set(true));
    let mut formats = std::collections::BTreeSet::new();
    for (ranks, acc) in [(3u16, AccumulatorPolicy::FP32_ARRIVAL), (8, AccumulatorPolicy::KULISCH_FIXED)] {
        let p = run_with(ranks, Semantics::ALLREDUCE, acc, 61 + ranks as u64, 2500, 0, false);
        results += p.sw.counters.results_sent;
        for e in &p.rtl_out {
            if let Ok(ParsedFrame { prism: Some(PrismRepr::Data(d)), .. }) = parse_frame(&e.frame, &Limits::default()) {
                formats.extend(d.groups().map(|g| format!("{:?}", g.format)));
            }
        }
    }
    INTEGERS.with(|o| o.set(false));
    OUTPUT.with(|o| o.set(OutputFormat::FP32));
    assert!(results > 50, "{results}");
    assert!(formats.contains("Int8"), "{formats:?}");
}

// ------------------------------------------------------------------ lane hazards
// The lanes are pipelined: a run's sums reach the ring 9 cycles (FP32) or 3
// cycles (Kulisch) after it read its slots. Short frames of one range arriving back to back make
// the next frame read those slots while their sums are in flight; the
// switch must wait for them (and add in arrival order), the RESULT builder
// and AUTO's planner too. Every run below is compared byte for byte with
// the software engine, as the others are.

impl Pair {
    /// Every port's frames offered at once, back to back on each port; the
    /// engine gets them in the order the hardware took them (by the cycle of
    /// the last beat, ports in index order within a cycle).
    fn send_together(&mut self, per_port: &[Vec<Vec<u8>>]) {
        let seen = self.rtl.send_all(per_port, &mut self.rtl_out);
        let mut order: Vec<(u64, usize, usize)> = seen.iter().enumerate().flat_map(|(p, v)| v.iter().enumerate().map(move |(i, g)| (g.last_cycle, p, i))).collect();
        order.sort_unstable();
        for (_, p, i) in order {
            self.sw.handle(p as u16, &per_port[p][i], &mut self.sw_out);
        }
    }
}

/// Rank `r`'s values from element `first` as one DATA frame (a group per run of one format).
fn data_frame(s: &Scenario, r: u16, pid: u32, first: usize, vals: &[Value], last: bool) -> Vec<u8> {
    let mut groups: Vec<(NumFormat, Vec<u8>, u16)> = Vec::new();
    let kvalues = KVALUES.with(|k| k.get()) && s.accumulator == AccumulatorPolicy::KULISCH_FIXED;
    let w = s.kulisch_width() as usize;
    for (i, x) in vals.iter().enumerate() {
        let kulisch = kvalues && x.format == NumFormat::Fp32 && i + 12 >= vals.len();
        let format = if kulisch { NumFormat::Kulisch { width_bits: w as u16 } } else { x.format };
        let b = match x.format {
            _ if kulisch => kulisch_value(x.bits, w),
            NumFormat::Int8 => vec![x.bits as u8],
            NumFormat::Fp16 | NumFormat::Bf16 => (x.bits as u16).to_le_bytes().to_vec(),
            _ => x.bits.to_le_bytes().to_vec(),
        };
        match groups.last_mut() {
            Some(g) if g.0 == format => {
                g.1.extend(b);
                g.2 += 1;
            }
            _ => groups.push((format, b, 1)),
        }
    }
    sim::data_frame(s, r, 1, pid, first, &groups, last)
}

/// How a hazard run delivers its frames.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Delivery {
    /// One frame at a time, in element order (ranks in order within a range),
    /// each on its rank's port right after the one before.
    InTurn,
    /// Every port at once: each port's frames back to back, so frames of one
    /// range from both ports end in the same cycle (same cuts, FP32 values).
    Together,
}

/// One run of short frames (30 to 64 values: one lane run each, or a few
/// with mixed formats) through both switches: rank r on `port_of(r)`, every
/// rank cutting its vector at the same points (`same_cuts`: each range's
/// frames back to back) or at its own (runs that overlap in part).
#[allow(clippy::too_many_arguments)]
fn hazard_run(ranks: u16, semantics: Semantics, accumulator: AccumulatorPolicy, seed: u64, port_of: fn(u16) -> u16, same_cuts: bool, delivery: Delivery, stall: Vec<bool>) -> Pair {
    let mut s = Scenario::new(ranks, semantics, accumulator);
    s.vector_len = 1100;
    s.data_seed = seed;
    s.dest_rank = (seed % ranks as u64) as u16;
    s.output = OUTPUT.with(|o| o.get());
    let mut p = Pair::new(0);
    p.rtl.out_stall = stall;
    let mut rng = StdRng::seed_from_u64(seed ^ 0x4a2d);
    p.send(&stage(&s, 1, 1, |c, b| {
        // Up to 13 short packets a rank below a canonical packet's end.
        c.window_intervals = 16;
        for x in b.iter_mut() {
            x.port = port_of(x.rank);
        }
    }));
    p.send(&cmd(&s, Command::COMMIT, 2, 1));
    // Together: FP32 values only, so that every rank's frame of a range has the same length.
    let v = if delivery == Delivery::Together || seed % 2 == 1 { full_range(&s, &mut rng) } else { vectors(&s) };
    let n = s.vector_len as usize;
    let cut = |rng: &mut StdRng| {
        let mut c = vec![0];
        while c[c.len() - 1] < n {
            let at = c[c.len() - 1] + rng.gen_range(30..=64usize);
            c.push(at.min(n));
        }
        c
    };
    let common = cut(&mut rng);
    // Each rank's frames: (first element, rank, frame).
    let mut frames: Vec<(usize, u16, Vec<u8>)> = Vec::new();
    for r in 0..ranks {
        let cuts = if same_cuts { common.clone() } else { cut(&mut rng) };
        for (k, w) in cuts.windows(2).enumerate() {
            frames.push((w[0], r, data_frame(&s, r, k as u32, w[0], &v[r as usize][w[0]..w[1]], w[1] == n)));
        }
    }
    frames.sort_by_key(|f| (f.0, f.1));
    let sent = frames.len() as u64;
    match delivery {
        Delivery::InTurn => {
            for (_, r, f) in &frames {
                p.send_on(port_of(*r), f);
            }
        }
        Delivery::Together => {
            let mut per_port: Vec<Vec<Vec<u8>>> = vec![Vec::new(); PORTS as usize];
            for (_, r, f) in frames {
                per_port[port_of(r) as usize].push(f);
            }
            p.send_together(&per_port);
        }
    }
    p.send(&cmd(&s, Command::COMPLETE, 3, 1));
    p.send(&cmd(&s, Command::RELEASE, 4, 1));
    let what = format!("{ranks} ranks, {semantics:?}, {accumulator:?}, {:?} output, seed {seed}, same cuts {same_cuts}, {delivery:?}", s.output);
    p.check(&what);
    // Every frame was applied, none refused, and every RESULT sent.
    let c = &p.sw.counters;
    assert_eq!((c.data_applied, c.data_rejected.iter().sum::<u64>()), (sent, 0), "{what}: {c:?}");
    let paths = if semantics == Semantics::ALLREDUCE { ranks as u64 } else { 1 };
    if s.output == OutputFormat::FP32 {
        assert_eq!(c.results_sent, paths * (s.vector_len as u64).div_ceil(363), "{what}: {c:?}");
    } else {
        assert!(c.results_sent >= paths, "{what}: {c:?}");
    }
    p
}

#[test]
fn lane_hazard_several_ranks_on_one_port() {
    // Ranks 0, 1 and 2 on port 0, rank 3 on port 1: a range's frames from
    // ranks 0..2 follow each other on port 0.
    for (i, semantics) in [Semantics::REDUCE, Semantics::ALLREDUCE].into_iter().enumerate() {
        for same_cuts in [true, false] {
            hazard_run(4, semantics, AccumulatorPolicy::FP32_ARRIVAL, 200 + i as u64, |r| r / 3, same_cuts, Delivery::InTurn, Vec::new());
            hazard_run(4, semantics, AccumulatorPolicy::FP32_ARRIVAL, 211 + i as u64, |r| r / 3, same_cuts, Delivery::InTurn, Vec::new());
        }
    }
    // The Kulisch lanes (8 stages) share the hazard logic; then with Kulisch
    // values at each frame's end (single-slot runs a cycle apart).
    for (i, semantics) in [Semantics::REDUCE, Semantics::ALLREDUCE].into_iter().enumerate() {
        for same_cuts in [true, false] {
            hazard_run(4, semantics, AccumulatorPolicy::KULISCH_FIXED, 221 + i as u64, |r| r / 3, same_cuts, Delivery::InTurn, Vec::new());
        }
    }
    KVALUES.with(|k| k.set(true));
    hazard_run(4, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 231, |r| r / 3, true, Delivery::InTurn, Vec::new());
    hazard_run(3, Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED, 232, |r| r / 3, false, Delivery::InTurn, Vec::new());
    KVALUES.with(|k| k.set(false));
}

#[test]
fn lane_hazard_every_rank_on_one_port() {
    for (i, semantics) in [Semantics::REDUCE, Semantics::ALLREDUCE].into_iter().enumerate() {
        for same_cuts in [true, false] {
            hazard_run(8, semantics, AccumulatorPolicy::FP32_ARRIVAL, 300 + i as u64, |_| 0, same_cuts, Delivery::InTurn, Vec::new());
        }
        hazard_run(5, semantics, AccumulatorPolicy::FP32_ARRIVAL, 311 + i as u64, |_| 1, true, Delivery::InTurn, Vec::new());
        for same_cuts in [true, false] {
            hazard_run(8, semantics, AccumulatorPolicy::KULISCH_FIXED, 330 + i as u64, |_| 0, same_cuts, Delivery::InTurn, Vec::new());
        }
    }
    KVALUES.with(|k| k.set(true));
    hazard_run(8, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 333, |_| 0, true, Delivery::InTurn, Vec::new());
    KVALUES.with(|k| k.set(false));
    // AUTO's planner reads the ring too: it waits for the sums in flight.
    OUTPUT.with(|o| o.set(OutputFormat::AUTO));
    hazard_run(8, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, 320, |_| 0, true, Delivery::InTurn, Vec::new());
    hazard_run(3, Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, 322, |_| 0, false, Delivery::InTurn, Vec::new());
    // Under KULISCH_FIXED it reads the exact slots (their rounding's exactness).
    hazard_run(8, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 340, |_| 0, true, Delivery::InTurn, Vec::new());
    hazard_run(3, Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED, 341, |_| 0, false, Delivery::InTurn, Vec::new());
    OUTPUT.with(|o| o.set(OutputFormat::FP32));
}

#[test]
fn lane_hazard_both_ports_in_the_same_cycle() {
    // Rank r on port r mod 2, each port's frames back to back from the same
    // cycle: frames of one range end on both ports in the same cycle.
    for (i, ranks) in [2u16, 4, 8].into_iter().enumerate() {
        for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
            hazard_run(ranks, semantics, AccumulatorPolicy::FP32_ARRIVAL, 401 + i as u64, |r| r % 2, true, Delivery::Together, Vec::new());
        }
    }
    for (i, ranks) in [2u16, 4, 8].into_iter().enumerate() {
        for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
            hazard_run(ranks, semantics, AccumulatorPolicy::KULISCH_FIXED, 411 + i as u64, |r| r % 2, true, Delivery::Together, Vec::new());
        }
    }
    KVALUES.with(|k| k.set(true));
    hazard_run(4, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 415, |r| r % 2, true, Delivery::Together, Vec::new());
    KVALUES.with(|k| k.set(false));
    OUTPUT.with(|o| o.set(OutputFormat::AUTO));
    hazard_run(4, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, 421, |r| r % 2, true, Delivery::Together, Vec::new());
    hazard_run(4, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 422, |r| r % 2, true, Delivery::Together, Vec::new());
    OUTPUT.with(|o| o.set(OutputFormat::FP32));
}

#[test]
fn lane_hazard_under_egress_backpressure() {
    // m_axis_tready low 7 cycles in 19 (each port at its own phase) while
    // frames of one range wait for each other's sums: RESULTs wait for free
    // request slots, the builder for the lanes.
    let stall: Vec<bool> = (0..19).map(|i| [1, 2, 5, 8, 9, 13, 17].contains(&i)).collect();
    hazard_run(4, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, 501, |r| r / 3, true, Delivery::InTurn, stall.clone());
    hazard_run(8, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, 502, |_| 0, false, Delivery::InTurn, stall.clone());
    hazard_run(4, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, 503, |r| r % 2, true, Delivery::Together, stall.clone());
    hazard_run(8, Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, 504, |r| r % 2, true, Delivery::Together, stall.clone());
    hazard_run(4, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 511, |r| r / 3, true, Delivery::InTurn, stall.clone());
    hazard_run(8, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 512, |_| 0, false, Delivery::InTurn, stall.clone());
    hazard_run(4, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 513, |r| r % 2, true, Delivery::Together, stall.clone());
    KVALUES.with(|k| k.set(true));
    hazard_run(8, Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED, 514, |r| r % 2, true, Delivery::Together, stall.clone());
    KVALUES.with(|k| k.set(false));
    OUTPUT.with(|o| o.set(OutputFormat::AUTO));
    hazard_run(4, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, 505, |r| r % 2, true, Delivery::Together, stall.clone());
    hazard_run(4, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 515, |r| r % 2, true, Delivery::Together, stall);
    OUTPUT.with(|o| o.set(OutputFormat::FP32));
}

/// The FP32-only build (`prism_switch_fp32`, KULISCH_ENABLE = AUTO_ENABLE =
/// 0, its own Verilator model): its capability ROM has the FP32_ARRIVAL
/// record only, so STAGEs for KULISCH_FIXED or AUTO output are refused
/// UNSUPPORTED, as the engine refuses a tuple its capabilities lack; and
/// FP32 jobs (with duplicates, corrupted copies, malformed frames) are byte
/// for byte the engine's.
#[test]
fn fp32_only_build_is_byte_identical() {
    FP32_BUILD.with(|b| b.set(true));
    let mut rtl = RtlSwitch::fp32_only(SWITCH_MAC.0, AM_MAC.0, SWITCH_EP);
    let caps = rtl_caps(&mut rtl);
    assert_eq!(caps.len(), 1, "{caps:?}");
    assert_eq!((caps[0].accumulator, caps[0].output), (AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::FP32), "{caps:?}");
    drop(rtl);
    let mut p = Pair::new(0);
    let k = Scenario::new(3, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED);
    p.send(&stage(&k, 1, 1, |_, _| {}));
    let mut a = Scenario::new(3, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL);
    a.output = OutputFormat::AUTO;
    p.send(&stage(&a, 2, 1, |_, _| {}));
    p.check("KULISCH_FIXED and AUTO STAGEs on the FP32-only build");
    let acks: Vec<u8> = p
        .rtl_out
        .iter()
        .map(|e| match parse_frame(&e.frame, &Limits::default()).expect("an ACK").prism {
            Some(PrismRepr::Control(ControlRepr { command: Command::ACK, body: ControlBody::Ack { status, .. }, .. })) => u8::from(status),
            other => panic!("not an ACK: {other:?}"),
        })
        .collect();
    assert_eq!(acks, vec![u8::from(AckStatus::UNSUPPORTED); 2]);
    let mut results = 0;
    for (i, (ranks, semantics)) in [(3u16, Semantics::ALLREDUCE), (2, Semantics::REDUCE)].into_iter().enumerate() {
        let p = run(ranks, semantics, 41 + i as u64, 1800 + 500 * i as u32, i);
        results += p.sw.counters.results_sent;
    }
    FP32_BUILD.with(|b| b.set(false));
    assert!(results > 10, "{results}");
}
