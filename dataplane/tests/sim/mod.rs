//! A deterministic simulator of one SINGLE node: the Aggregation Manager, the
//! Host Coordinator and N ranks, a seeded RNG and a virtual clock. Links have
//! random delay (so frames reorder), may duplicate frames, and malformed
//! frames can be mixed in. Ranks pace themselves by the node's window (what
//! PROGRESS credit will advertise once it exists): a rank sends a packet only
//! when its range ends inside the window and its held packets and bytes stay
//! within the window limits.


use prism_arith::NumFormat;
use prism_dataplane::engine::{Node, NodeConfig, Sent};
pub use prism_dataplane::fixtures::rank_mac;
use prism_dataplane::fixtures::{AM_EP, AM_MAC, SWITCH_EP, SWITCH_MAC};
use prism_dataplane::golden::{sample_capability, IDENTITY};
use prism_dataplane::wire::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BinaryHeap};
use std::cmp::Reverse;

/// A sink that, when `every > 0`, has no buffer for every `every`-th frame
/// (the frame is lost, as when a pool runs dry).
pub struct Lossy {
    pub sent: Vec<Sent>,
    pub every: usize,
    pub asked: usize,
    pub refused: usize,
}

impl prism_dataplane::engine::Sink for Lossy {
    fn buffer(&mut self, port: u16, len: usize) -> Option<&mut [u8]> {
        self.asked += 1;
        if self.every > 0 && self.asked.is_multiple_of(self.every) {
            self.refused += 1;
            return None;
        }
        self.sent.buffer(port, len)
    }
}

pub const AM_PORT: u16 = 65535;

/// A DATA frame in flight: (arrival time, sequence, rank, first, end, is_dup).
type InFlight = (u64, u64, u16, u64, u64, bool);


/// Every native output for both policies, as SINGLE capability records.
pub fn caps() -> Vec<CapabilityRecord> {
    let mut v = Vec::new();
    for acc in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
        for out in [OutputFormat::FP32, OutputFormat::AUTO, OutputFormat::FP16, OutputFormat::BF16, OutputFormat::INT8, OutputFormat::KULISCH] {
            if acc == AccumulatorPolicy::FP32_ARRIVAL && out == OutputFormat::KULISCH {
                continue;
            }
            let mut r = sample_capability(FormatCode::FP32, acc, out);
            r.window_elements = 17904;
            r.window_intervals = 64;
            r.window_bytes = 1 << 20;
            v.push(r);
        }
    }
    v
}

pub fn node(ports: u16, mtu: u16) -> Node {
    Node::new(NodeConfig { mac: SWITCH_MAC, control_ep: SWITCH_EP, am_mac: AM_MAC, am_port: AM_PORT, ports, mtu, max_ops: 4, caps: caps() })
}

/// What a run does.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub ranks: u16,
    pub semantics: Semantics,
    pub dest_rank: u16,
    pub accumulator: AccumulatorPolicy,
    pub output: OutputFormat,
    pub vector_len: u32,
    pub mtu: u16,
    pub data_seed: u64,
    pub net_seed: u64,
    pub duplicate: f64,
    pub malformed: f64,
    /// Integers only (for INT8 outputs).
    pub integers: bool,
    /// Per-contributor window bytes (default: 16 frames of the MTU).
    pub window_bytes: Option<u32>,
    /// Every rank behind port 0 (one-port captures).
    pub single_port: bool,
    /// The node's sink has no buffer for every n-th frame it is asked for (0: never).
    pub refuse_every: usize,
}

impl Scenario {
    pub fn new(ranks: u16, semantics: Semantics, accumulator: AccumulatorPolicy) -> Self {
        Scenario {
            ranks,
            semantics,
            dest_rank: 1 % ranks,
            accumulator,
            output: OutputFormat::FP32,
            vector_len: 3000,
            mtu: 1500,
            data_seed: 1,
            net_seed: 2,
            duplicate: 0.0,
            malformed: 0.0,
            integers: false,
            window_bytes: None,
            single_port: false,
            refuse_every: 0,
        }
    }
    pub fn kulisch_width(&self) -> u16 {
        if self.accumulator == AccumulatorPolicy::KULISCH_FIXED { prism_arith::min_kulisch_width(self.ranks as u32) as u16 } else { 0 }
    }
    pub fn identity(&self, op_gen: u32) -> Identity {
        Identity { op_gen, ..IDENTITY }
    }
}

/// The STAGE frame of a scenario.
pub fn stage_frame(s: &Scenario, txn: u32, op_gen: u32) -> Vec<u8> {
    let bindings: Vec<BindingRecord> = (0..s.ranks)
        .map(|r| {
            let result = s.semantics == Semantics::ALLREDUCE || r == s.dest_rank;
            BindingRecord {
                directions: direction::DATA_IN | if result { direction::RESULT_OUT } else { 0 },
                peer_kind: PeerKind::RANK,
                stream_id: r,
                local_ep: 0x0100 + r,
                peer_ep: 0x1000 + r,
                peer_mac: rank_mac(r),
                port: if s.single_port { 0 } else { r },
                rank: r,
                terms: 1,
            }
        })
        .collect();
    let context = ContextRecord {
        role: Role::SINGLE,
        semantics: s.semantics,
        input_format: FormatCode::FP32,
        accumulator: s.accumulator,
        partial: PartialPolicy::NONE,
        output: s.output,
        kulisch_width: s.kulisch_width(),
        vector_len: s.vector_len,
        dest_rank: if s.semantics == Semantics::REDUCE { s.dest_rank } else { NO_RANK },
        mtu: s.mtu,
        terms: s.ranks as u32,
        window_elements: single_window_elements(s.mtu) as u32,
        window_intervals: 16,
        replay_depth: 0,
        window_bytes: s.window_bytes.unwrap_or(16 * (s.mtu as u32 + 18)),
        binding_count: bindings.len() as u16,
    };
    control_frame(s.identity(op_gen), txn, Command::STAGE, ControlBody::Stage { context, bindings: Records::Typed(&bindings) })
}

pub fn control_frame(identity: Identity, txn: u32, command: Command, body: ControlBody<'_>) -> Vec<u8> {
    let c = ControlRepr { identity, txn, src_ep: AM_EP, dst_ep: SWITCH_EP, command, frag_index: 0, frag_count: 1, body };
    let p = PrismRepr::Control(c);
    let mut f = vec![0; p.frame_len()];
    p.emit_frame(&EthernetRepr { dst: SWITCH_MAC, src: AM_MAC, ethertype: ETHERTYPE }, &mut f);
    f
}

/// The ACK status of a reply frame.
pub fn ack_status(frames: &[Sent]) -> AckStatus {
    assert_eq!(frames.len(), 1, "one ACK expected, got {}", frames.len());
    match parse_frame(&frames[0].frame, &Limits::default()).unwrap().prism {
        Some(PrismRepr::Control(c)) if c.command == Command::ACK => c.status(),
        other => panic!("not an ACK: {other:?}"),
    }
}

/// One rank value in the format it is sent in.
#[derive(Debug, Clone, Copy)]
pub struct Value {
    pub format: NumFormat,
    pub bits: u32,
}

impl Value {
    pub fn as_f64(&self) -> f64 {
        match self.format {
            NumFormat::Int8 => self.bits as u8 as i8 as f64,
            NumFormat::Fp16 => half::f16::from_bits(self.bits as u16).to_f64(),
            NumFormat::Bf16 => half::bf16::from_bits(self.bits as u16).to_f64(),
            _ => f32::from_bits(self.bits) as f64,
        }
    }
    fn bytes(&self) -> Vec<u8> {
        match self.format {
            NumFormat::Int8 => vec![self.bits as u8],
            NumFormat::Fp16 | NumFormat::Bf16 => (self.bits as u16).to_le_bytes().to_vec(),
            _ => self.bits.to_le_bytes().to_vec(),
        }
    }
}

/// Each rank's vector: a mix of formats, finite values.
pub fn vectors(s: &Scenario) -> Vec<Vec<Value>> {
    let mut rng = StdRng::seed_from_u64(s.data_seed);
    (0..s.ranks)
        .map(|_| {
            (0..s.vector_len)
                .map(|_| {
                    if s.integers {
                        return Value { format: NumFormat::Int8, bits: rng.gen_range(-3i8..=3) as u8 as u32 };
                    }
                    match rng.gen_range(0..10) {
                        0 => Value { format: NumFormat::Int8, bits: rng.gen::<u8>() as u32 },
                        1 => Value { format: NumFormat::Fp16, bits: rng.gen_range(0..0x7c00u32) | if rng.gen() { 0x8000 } else { 0 } },
                        2 => Value { format: NumFormat::Bf16, bits: rng.gen_range(0x3000..0x4800u32) | if rng.gen() { 0x8000 } else { 0 } },
                        _ => Value { format: NumFormat::Fp32, bits: ((rng.gen::<f32>() - 0.5) * 2f32.powi(rng.gen_range(-20..20))).to_bits() },
                    }
                })
                .collect()
        })
        .collect()
}

/// Groups of values: format, the values' bytes, how many.
pub type Groups = [(NumFormat, Vec<u8>, u16)];

/// Rank `rank`'s DATA frame from element `first` with these groups, to the switch.
pub fn data_frame(s: &Scenario, rank: u16, op_gen: u32, packet_id: u32, first: usize, groups: &Groups, last: bool) -> Vec<u8> {
    let reprs: Vec<GroupRepr<'_>> = groups.iter().map(|g| GroupRepr { format: g.0, count: g.2, values: &g.1 }).collect();
    let mut body = vec![0; groups_len(&reprs)];
    emit_groups(&reprs, &mut body);
    let d = DataRepr {
        class: Class::DATA,
        identity: s.identity(op_gen),
        src_ep: 0x1000 + rank,
        dst_ep: 0x0100 + rank,
        packet_id,
        first_element: first as u32,
        element_count: groups.iter().map(|g| g.2).sum(),
        group_count: reprs.len() as u8,
        flags: if last { flags::LAST } else { 0 },
        stream_id: rank,
        body: &body,
    };
    let p = PrismRepr::Data(d);
    let mut f = vec![0; p.frame_len()];
    p.emit_frame(&EthernetRepr { dst: SWITCH_MAC, src: rank_mac(rank), ethertype: ETHERTYPE }, &mut f);
    f
}

/// Cuts a rank's vector into DATA frames at random boundaries, groups by format runs.
pub fn packetize(s: &Scenario, rank: u16, v: &[Value], op_gen: u32, rng: &mut StdRng) -> Vec<(u64, u64, Vec<u8>)> {
    let budget = s.mtu as usize - offsets::data::BODY;
    let mut frames = Vec::new();
    let mut at = 0usize;
    let mut packet_id = 0u32;
    while at < v.len() {
        // A random cap on elements per packet, then fill within the MTU and 255 groups.
        let want = rng.gen_range(1..=1500usize);
        let mut groups: Vec<(NumFormat, Vec<u8>, u16)> = Vec::new();
        let mut used = 0usize;
        let start = at;
        while at < v.len() && at - start < want {
            let val = v[at];
            let w = val.format.value_bytes();
            let same = groups.last().is_some_and(|g| g.0 == val.format && g.2 < u16::MAX) && rng.gen_bool(0.9);
            let cost = |g: &(NumFormat, Vec<u8>, u16)| 4 + g.1.len().div_ceil(4) * 4;
            let before: usize = used;
            let after = if same {
                let g = groups.last().unwrap();
                before - cost(g) + 4 + (g.1.len() + w).div_ceil(4) * 4
            } else {
                before + 4 + w.div_ceil(4) * 4
            };
            if after > budget || (!same && groups.len() == 255) {
                break;
            }
            if same {
                let g = groups.last_mut().unwrap();
                g.1.extend(val.bytes());
                g.2 += 1;
            } else {
                groups.push((val.format, val.bytes(), 1));
            }
            used = after;
            at += 1;
        }
        let f = data_frame(s, rank, op_gen, packet_id, start, &groups, at == v.len());
        frames.push((start as u64, at as u64, f));
        packet_id += 1;
    }
    frames
}

/// What a run observed.
#[derive(Debug, Default)]
pub struct Outcome {
    /// RESULT frames by destination port, in arrival order.
    pub results: BTreeMap<u16, Vec<Vec<u8>>>,
    /// Per element: the ranks in the order their values were applied.
    pub arrival: Vec<Vec<u16>>,
    pub steps: u64,
    /// Frames the sink had no buffer for.
    pub refused: usize,
}

/// Runs the DATA phase of a staged and committed scenario to the end.
pub fn run_data(node: &mut Node, s: &Scenario, v: &[Vec<Value>], op_gen: u32) -> Outcome {
    let mut rng = StdRng::seed_from_u64(s.net_seed);
    let mut packets: Vec<Vec<(u64, u64, Vec<u8>)>> = (0..s.ranks).map(|r| packetize(s, r, &v[r as usize], op_gen, &mut rng)).collect();
    for p in &mut packets {
        p.reverse(); // pop() takes the next in order; ranks may still send out of order below
    }
    let window = single_window_elements(s.mtu) as u64;
    let (max_held, max_bytes) = (16usize, 16 * (s.mtu as usize + 18));
    let id = s.identity(op_gen);
    let mut wire: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut frames: Vec<Vec<u8>> = Vec::new();
    let mut held: Vec<Vec<(u64, usize)>> = vec![Vec::new(); s.ranks as usize];
    let mut outcome = Outcome { arrival: vec![Vec::new(); s.vector_len as usize], ..Default::default() };
    let mut now = 0u64;
    let mut seq = 0u64;
    let malformed = prism_dataplane::golden::malformed();
    let mut out = Lossy { sent: Vec::new(), every: s.refuse_every, asked: 0, refused: 0 };
    loop {
        let base = node.window_base(&id).unwrap_or(u64::MAX);
        // Every rank sends what its window allows, choosing randomly among the next few packets.
        for r in 0..s.ranks as usize {
            held[r].retain(|&(end, _)| end > base);
            loop {
                let pending = &mut packets[r];
                if pending.is_empty() {
                    break;
                }
                let k = rng.gen_range(0..pending.len().min(3));
                let idx = pending.len() - 1 - k;
                let (first, end, _) = &pending[idx];
                let bytes: usize = held[r].iter().map(|h| h.1).sum();
                let flen = pending[idx].2.len();
                if *end > base + window || held[r].len() >= max_held || bytes + flen > max_bytes {
                    break;
                }
                let (first, end) = (*first, *end);
                let (_, _, f) = pending.remove(idx);
                held[r].push((end, flen));
                frames.push(f);
                let delay = rng.gen_range(1..50);
                wire.push(Reverse((now + delay, seq, r as u16, first, end, false)));
                seq += 1;
                if rng.gen_bool(s.duplicate) {
                    wire.push(Reverse((now + rng.gen_range(1..200), seq, r as u16, first, end, true)));
                    frames.push(frames.last().unwrap().clone());
                    seq += 1;
                }
            }
        }
        let Some(Reverse((t, sq, r, first, end, _dup))) = wire.pop() else { break };
        now = t;
        outcome.steps += 1;
        if rng.gen_bool(s.malformed) {
            let m = &malformed[rng.gen_range(0..malformed.len())];
            node.handle(r, &m.bytes, &mut out);
        }
        let applied_before = node.counters.data_applied;
        node.handle(r, &frames[sq as usize], &mut out);
        if node.counters.data_applied > applied_before {
            for pos in first..end {
                outcome.arrival[pos as usize].push(r);
            }
        }
        for sent in out.sent.drain(..) {
            outcome.results.entry(sent.port).or_default().push(sent.frame);
        }
    }
    outcome.refused = out.refused;
    outcome
}

/// Sets up a node for a scenario: CAPS_QUERY, STAGE, COMMIT, all acknowledged.
pub fn setup(s: &Scenario, op_gen: u32) -> Node {
    let mut n = node(s.ranks, s.mtu.max(1500));
    let mut out = Vec::new();
    n.handle(AM_PORT, &control_frame(s.identity(op_gen), 1, Command::CAPS_QUERY, ControlBody::Empty), &mut out);
    assert!(!out.is_empty());
    out.clear();
    n.handle(AM_PORT, &stage_frame(s, 2, op_gen), &mut out);
    assert_eq!(ack_status(&out), AckStatus::OK, "STAGE of {s:?}");
    out.clear();
    n.handle(AM_PORT, &control_frame(s.identity(op_gen), 3, Command::COMMIT, ControlBody::Empty), &mut out);
    assert_eq!(ack_status(&out), AckStatus::OK);
    n
}
