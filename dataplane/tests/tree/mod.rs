//! A deterministic simulator of a PRISM switch tree: spine S0 (ROOT) over
//! leaves L0 and L1, two ranks under each leaf, every direct stream with
//! PROGRESS and retransmission. One seeded RNG and a virtual clock in
//! nanoseconds; every link can drop, duplicate, delay (so reorder) and
//! corrupt frames. The Aggregation Manager talks to the nodes directly.

#![allow(dead_code)]

use prism_arith::NumFormat;
use prism_dataplane::engine::stream::{emit_progress, Credit};
use prism_dataplane::engine::{Node, NodeConfig, Replay, RxWindow, Sent};
pub use prism_dataplane::fixtures::rank_mac;
use prism_dataplane::fixtures::{internal_mac, leaf_mac, AM_MAC, ROOT_MAC, SWITCH_EP};
use prism_dataplane::golden::{sample_capability, IDENTITY};
use prism_dataplane::wire::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub const AM_PORT: u16 = 65535;
pub const NODE_EP: u16 = SWITCH_EP;
pub const RANKS: u16 = 4;
pub const S0: usize = 0;
pub const L0: usize = 1;
pub const L1: usize = 2;
/// The INTERNAL node between S0 and the leaves in `chain` scenarios.
pub const I0: usize = 3;
pub const RTO_NS: u64 = 200_000;

/// Node `n`'s MAC: the tree roles' addresses of `fixtures`.
pub fn node_mac(n: usize) -> Mac {
    match n {
        S0 => ROOT_MAC,
        L0 => leaf_mac(0),
        L1 => leaf_mac(1),
        _ => internal_mac((n - I0) as u16),
    }
}

/// The leaf a rank hangs under, and its port there.
pub fn leaf_of(r: u16) -> (usize, u16) {
    (if r < 2 { L0 } else { L1 }, r % 2)
}

/// Tree capability records: every role, every partial policy that keeps the
/// accumulator's promise, FP32 and AUTO outputs, replay depth 32.
pub fn caps() -> Vec<CapabilityRecord> {
    let mut v = Vec::new();
    for (acc, partials) in [(AccumulatorPolicy::FP32_ARRIVAL, &[PartialPolicy::FP32, PartialPolicy::AUTO][..]), (AccumulatorPolicy::KULISCH_FIXED, &[PartialPolicy::KULISCH, PartialPolicy::AUTO][..])]
    {
        for &partial in partials {
            for out in [OutputFormat::FP32, OutputFormat::AUTO] {
                let mut r = sample_capability(FormatCode::FP32, acc, out);
                r.partial = partial;
                r.roles = caps_bits::ROLE_SINGLE | caps_bits::ROLE_LEAF | caps_bits::ROLE_INTERNAL | caps_bits::ROLE_ROOT;
                r.window_intervals = 64;
                r.window_bytes = 1 << 20;
                r.replay_depth = 32;
                v.push(r);
            }
        }
    }
    v
}

/// What a run does.
#[derive(Debug, Clone)]
pub struct TreeScenario {
    pub semantics: Semantics,
    pub dest_rank: u16,
    pub accumulator: AccumulatorPolicy,
    pub partial: PartialPolicy,
    pub output: OutputFormat,
    pub vector_len: u32,
    pub replay_depth: u16,
    pub data_seed: u64,
    pub net_seed: u64,
    pub drop: f64,
    pub duplicate: f64,
    pub corrupt: f64,
    /// Link delay range in ns (random per frame, so frames reorder).
    pub delay: (u64, u64),
    /// Values over the whole FP32 exponent range instead of gradient-like ones.
    pub full_range: bool,
    /// S0 over an INTERNAL node I0 over the leaves (three levels), instead of S0 over the leaves.
    pub chain: bool,
}

impl TreeScenario {
    pub fn new(semantics: Semantics, accumulator: AccumulatorPolicy, partial: PartialPolicy) -> Self {
        TreeScenario {
            semantics,
            dest_rank: 1,
            accumulator,
            partial,
            output: OutputFormat::FP32,
            vector_len: 5000,
            replay_depth: 8,
            data_seed: 1,
            net_seed: 2,
            drop: 0.0,
            duplicate: 0.0,
            corrupt: 0.0,
            delay: (1_000, 5_000),
            full_range: false,
            chain: false,
        }
    }
    pub fn impaired(mut self, p: f64) -> Self {
        self.drop = p;
        self.duplicate = p;
        self.corrupt = p;
        self.delay = (1_000, 30_000);
        self
    }
    pub fn kulisch_width(&self) -> u16 {
        prism_dataplane::fixtures::kulisch_width(self.accumulator, RANKS as u32)
    }
    pub fn identity(&self, op_gen: u32) -> Identity {
        Identity { op_gen, ..IDENTITY }
    }
    pub fn gets_result(&self, r: u16) -> bool {
        self.semantics == Semantics::ALLREDUCE || r == self.dest_rank
    }
    pub fn nodes(&self) -> usize {
        if self.chain {
            4
        } else {
            3
        }
    }
    /// The node a leaf's partials go to.
    pub fn parent_of_leaves(&self) -> usize {
        if self.chain {
            I0
        } else {
            S0
        }
    }
    /// Children of a non-leaf node, by the port they hang on.
    pub fn children(&self, n: usize) -> Vec<usize> {
        match (n, self.chain) {
            (S0, true) => vec![I0],
            (S0, false) | (I0, true) => vec![L0, L1],
            _ => vec![],
        }
    }
    fn context(&self, role: Role, binding_count: usize) -> ContextRecord {
        ContextRecord {
            role,
            semantics: self.semantics,
            input_format: FormatCode::FP32,
            accumulator: self.accumulator,
            partial: self.partial,
            output: self.output,
            kulisch_width: self.kulisch_width(),
            vector_len: self.vector_len,
            dest_rank: if self.semantics == Semantics::REDUCE { self.dest_rank } else { NO_RANK },
            mtu: 1500,
            terms: RANKS as u32,
            window_elements: single_window_elements(1500) as u32,
            window_intervals: 16,
            replay_depth: self.replay_depth,
            window_bytes: 16 * 1518,
            binding_count: binding_count as u16,
        }
    }
}

/// Stream IDs and endpoints of every edge, the same on both of its ends.
pub fn rank_stream(r: u16) -> u16 {
    r
}
pub fn rank_ep(r: u16) -> u16 {
    0x1000 + r
}
pub fn leaf_ep_for_rank(r: u16) -> u16 {
    0x0100 + r
}
pub fn child_stream(leaf: usize) -> u16 {
    0x10 + leaf as u16
}
pub fn leaf_up_ep(leaf: usize) -> u16 {
    0x0200 + leaf as u16
}
pub fn root_ep_for(leaf: usize) -> u16 {
    0x0300 + leaf as u16
}

/// Each node's STAGE (index = node): its context and its own bindings only.
pub fn stage_frames(s: &TreeScenario, op_gen: u32, txn: u32) -> Vec<Vec<u8>> {
    let ranks_under = |n: usize| -> Vec<u16> {
        let leaves: Vec<usize> = match n {
            L0 | L1 => vec![n],
            _ => vec![L0, L1],
        };
        (0..RANKS).filter(|&r| leaves.contains(&leaf_of(r).0)).collect()
    };
    let results_below = |n: usize| ranks_under(n).iter().any(|&r| s.gets_result(r));
    // The binding an upper node has for a child switch, and the child's parent binding.
    let child_binding = |child: usize, port: u16| BindingRecord {
        directions: direction::DATA_IN | if results_below(child) { direction::RESULT_OUT } else { 0 },
        peer_kind: PeerKind::SWITCH,
        stream_id: child_stream(child),
        local_ep: root_ep_for(child),
        peer_ep: leaf_up_ep(child),
        peer_mac: node_mac(child),
        port,
        rank: NO_RANK,
        terms: ranks_under(child).len() as u16,
    };
    let parent_binding = |child: usize, parent: usize, port: u16| BindingRecord {
        directions: direction::DATA_OUT | if results_below(child) { direction::RESULT_IN } else { 0 },
        peer_kind: PeerKind::SWITCH,
        stream_id: child_stream(child),
        local_ep: leaf_up_ep(child),
        peer_ep: root_ep_for(child),
        peer_mac: node_mac(parent),
        port,
        rank: NO_RANK,
        terms: ranks_under(child).len() as u16,
    };
    let mut out = vec![Vec::new(); s.nodes()];
    for n in [S0, I0].into_iter().filter(|&n| n < s.nodes()) {
        let mut b: Vec<BindingRecord> = s.children(n).iter().enumerate().map(|(port, &c)| child_binding(c, port as u16)).collect();
        let role = if n == S0 { Role::ROOT } else { Role::INTERNAL };
        if n == I0 {
            b.push(parent_binding(I0, S0, 2));
        }
        out[n] = stage(s, op_gen, txn, n, s.context(role, b.len()), &b);
    }
    for leaf in [L0, L1] {
        let mut b: Vec<BindingRecord> = (0..RANKS)
            .filter(|&r| leaf_of(r).0 == leaf)
            .map(|r| BindingRecord {
                directions: direction::DATA_IN | if s.gets_result(r) { direction::RESULT_OUT } else { 0 },
                peer_kind: PeerKind::RANK,
                stream_id: rank_stream(r),
                local_ep: leaf_ep_for_rank(r),
                peer_ep: rank_ep(r),
                peer_mac: rank_mac(r),
                port: leaf_of(r).1,
                rank: r,
                terms: 1,
            })
            .collect();
        b.push(parent_binding(leaf, s.parent_of_leaves(), 2));
        out[leaf] = stage(s, op_gen, txn, leaf, s.context(Role::LEAF, b.len()), &b);
    }
    out
}

fn stage(s: &TreeScenario, op_gen: u32, txn: u32, node: usize, context: ContextRecord, b: &[BindingRecord]) -> Vec<u8> {
    control_frame(s.identity(op_gen), txn, node, Command::STAGE, ControlBody::Stage { context, bindings: Records::Typed(b) })
}

pub fn control_frame(identity: Identity, txn: u32, node: usize, command: Command, body: ControlBody<'_>) -> Vec<u8> {
    prism_dataplane::fixtures::control_frame(identity, AM_MAC, node_mac(node), txn, command, body)
}

pub fn ack_status(frames: &[Sent]) -> AckStatus {
    assert_eq!(frames.len(), 1, "one ACK expected, got {}", frames.len());
    match parse_frame(&frames[0].frame, &Limits::default()).unwrap().prism {
        Some(PrismRepr::Control(c)) if c.command == Command::ACK => c.status(),
        other => panic!("not an ACK: {other:?}"),
    }
}

pub fn new_node(n: usize) -> Node {
    let ports = 3;
    let mut node = Node::new(NodeConfig { mac: node_mac(n), control_ep: NODE_EP, am_mac: AM_MAC, am_port: AM_PORT, ports, mtu: 1500, max_ops: 4, caps: caps() });
    node.set_rto(RTO_NS);
    node
}

/// The AM's command to one node; the ACK status.
pub fn command(node: &mut Node, n: usize, s: &TreeScenario, op_gen: u32, txn: u32, c: Command) -> AckStatus {
    let mut out = Vec::new();
    node.handle(AM_PORT, &control_frame(s.identity(op_gen), txn, n, c, ControlBody::Empty), &mut out);
    ack_status(&out)
}

/// STAGE on every node, then COMMIT on every node: the start is granted only
/// after every COMMIT is acknowledged.
pub fn setup(nodes: &mut [Node], s: &TreeScenario, op_gen: u32) {
    for (n, f) in stage_frames(s, op_gen, 100 + op_gen).iter().enumerate() {
        let mut out = Vec::new();
        nodes[n].handle(AM_PORT, f, &mut out);
        assert_eq!(ack_status(&out), AckStatus::OK, "STAGE at node {n} of {s:?}");
    }
    for (n, node) in nodes.iter_mut().enumerate() {
        assert_eq!(command(node, n, s, op_gen, 200 + op_gen, Command::COMMIT), AckStatus::OK);
    }
}

/// Each rank's FP32 vector (bit patterns).
pub fn vectors(s: &TreeScenario) -> Vec<Vec<u32>> {
    let mut rng = StdRng::seed_from_u64(s.data_seed);
    (0..RANKS)
        .map(|_| {
            (0..s.vector_len)
                .map(|i| {
                    let x: f32 = if s.full_range {
                        // Any finite bit pattern: every binade, subnormals included.
                        f32::from_bits(rng.gen_range(0..0x7f80_0000u32))
                    } else if i % 97 == 0 {
                        // Cancellation: large values whose sum is small.
                        if rng.gen() {
                            1.0e7
                        } else {
                            -1.0e7
                        }
                    } else {
                        // Gradient-like: about normal with sigma 1e-3.
                        let u: f32 = (0..4).map(|_| rng.gen::<f32>() - 0.5).sum();
                        u * 1.7e-3
                    };
                    if rng.gen_bool(0.5) {
                        (-x).to_bits()
                    } else {
                        x.to_bits()
                    }
                })
                .collect()
        })
        .collect()
}

/// One rank: its DATA stream with replay, its RESULT receive window.
pub struct Rank {
    pub r: u16,
    op_gen: u32,
    identity: Identity,
    /// DATA frames not yet handed to the replay queue: (first, end, frame).
    pending: Vec<(u64, u64, Vec<u8>)>,
    pub replay: Replay,
    pub results: RxWindow,
    /// Result values as received, by element.
    pub values: Vec<Option<(NumFormat, Vec<u8>)>>,
    pub inexact: bool,
    pub result_frames: u64,
    to_leaf: BindingRecord,
}

impl Rank {
    pub fn new(s: &TreeScenario, r: u16, v: &[u32], op_gen: u32, rng: &mut StdRng) -> Rank {
        let identity = s.identity(op_gen);
        let (leaf, _) = leaf_of(r);
        // Random packetization: 1 to 363 values a packet.
        let mut pending = Vec::new();
        let mut at = 0usize;
        while at < v.len() {
            let n = rng.gen_range(1..=363usize).min(v.len() - at);
            let bytes: Vec<u8> = v[at..at + n].iter().flat_map(|b| b.to_le_bytes()).collect();
            let g = [GroupRepr { format: NumFormat::Fp32, count: n as u16, values: &bytes }];
            let mut body = vec![0; groups_len(&g)];
            emit_groups(&g, &mut body);
            let d = DataRepr {
                class: Class::DATA,
                identity,
                src_ep: rank_ep(r),
                dst_ep: leaf_ep_for_rank(r),
                packet_id: 0,
                first_element: at as u32,
                element_count: n as u16,
                group_count: 1,
                flags: if at + n == v.len() { flags::LAST } else { 0 },
                stream_id: rank_stream(r),
                body: &body,
            };
            let p = PrismRepr::Data(d);
            let mut f = vec![0; p.frame_len()];
            p.emit_frame(&EthernetRepr { dst: node_mac(leaf), src: rank_mac(r), ethertype: ETHERTYPE }, &mut f);
            pending.push((at as u64, (at + n) as u64, f));
            at += n;
        }
        pending.reverse();
        let ctx = s.context(Role::LEAF, 1);
        Rank {
            r,
            op_gen,
            identity,
            pending,
            replay: Replay::new(0, s.replay_depth as usize, 1518, ctx.window_intervals as u32, ctx.window_bytes, RTO_NS),
            results: RxWindow::new(64),
            values: vec![None; s.vector_len as usize],
            inexact: false,
            result_frames: 0,
            to_leaf: BindingRecord {
                directions: 0,
                peer_kind: PeerKind::SWITCH,
                stream_id: rank_stream(r),
                local_ep: rank_ep(r),
                peer_ep: leaf_ep_for_rank(r),
                peer_mac: node_mac(leaf),
                port: 0,
                rank: NO_RANK,
                terms: 0,
            },
        }
    }

    /// Hands frames to the replay queue while it has room, choosing among the
    /// next three so packets leave out of order.
    pub fn fill(&mut self, now: u64, rng: &mut StdRng, out: &mut Vec<Sent>) {
        while self.replay.has_room() && !self.pending.is_empty() {
            let k = rng.gen_range(0..self.pending.len().min(3));
            let idx = self.pending.len() - 1 - k;
            let (first, end, f) = self.pending.remove(idx);
            self.replay.push(now, out, Some((first, end)), f.len(), |pid, buf| {
                buf.copy_from_slice(&f);
                DataPacket::new_unchecked(&mut buf[ETH_HEADER_LEN..]).set_packet_id(pid);
            });
        }
    }

    pub fn data_done(&self) -> bool {
        self.pending.is_empty() && self.replay.is_idle()
    }

    pub fn result_done(&self, s: &TreeScenario) -> bool {
        !s.gets_result(self.r) || self.inexact || self.results.committed() >= s.vector_len as u64
    }

    pub fn handle(&mut self, now: u64, frame: &[u8], rng: &mut StdRng, out: &mut Vec<Sent>) {
        let Ok(parsed) = parse_frame(frame, &Limits::default()) else { return };
        match parsed.prism {
            Some(PrismRepr::Progress(p)) if p.identity == self.identity && p.stream_id == rank_stream(self.r) => {
                self.replay.on_progress(now, &p, out);
                self.fill(now, rng, out);
            }
            Some(PrismRepr::Data(d)) if d.class == Class::RESULT && d.identity == self.identity => {
                assert_eq!((d.stream_id, d.dst_ep), (rank_stream(self.r), rank_ep(self.r)), "RESULT for another path at rank {}", self.r);
                let (first, end) = (d.first_element as u64, d.end_element());
                let digest = prism_dataplane::engine::digest::digest(first, end, d.body);
                let status = if d.is_inexact() {
                    self.inexact = true;
                    ProgressStatus::ACCEPTED
                } else {
                    match self.results.check(d.packet_id, first, end, digest) {
                        Ok(true) => {
                            self.results.record(d.packet_id, first, end, digest);
                            self.result_frames += 1;
                            let mut pos = first as usize;
                            for g in d.groups() {
                                for val in g.values.chunks_exact(g.format.value_bytes()) {
                                    assert!(self.values[pos].is_none(), "rank {} element {pos} delivered twice", self.r);
                                    self.values[pos] = Some((g.format, val.to_vec()));
                                    pos += 1;
                                }
                            }
                            ProgressStatus::ACCEPTED
                        }
                        Ok(false) => ProgressStatus::DUPLICATE,
                        Err(e) => panic!("rank {} refused RESULT {first}..{end}: {e:?}", self.r),
                    }
                };
                let cov = self.results.coverage();
                emit_progress(out, self.identity, rank_mac(self.r), &self.to_leaf, d.packet_id, status, 0, &cov, Credit { intervals: self.results.free_intervals(), bytes: 1 << 20 });
            }
            _ => {}
        }
    }
}

/// Where a frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum End {
    Node(usize, u16),
    Rank(u16),
}

/// The wire between two ends.
pub fn peer(s: &TreeScenario, e: End) -> End {
    match e {
        End::Rank(r) => {
            let (leaf, port) = leaf_of(r);
            End::Node(leaf, port)
        }
        End::Node(leaf @ (L0 | L1), 2) => {
            let up = s.parent_of_leaves();
            End::Node(up, s.children(up).iter().position(|&c| c == leaf).unwrap_or(0) as u16)
        }
        End::Node(leaf @ (L0 | L1), p) => End::Rank(if leaf == L0 { p } else { 2 + p }),
        End::Node(I0, 2) => End::Node(S0, 0),
        End::Node(upper, p) => {
            let child = s.children(upper)[p as usize];
            End::Node(child, 2)
        }
    }
}

/// What a run observed.
#[derive(Debug, Default)]
pub struct TreeOutcome {
    /// Per node, per element: the Stream IDs in the order their values were applied.
    pub arrival: Vec<Vec<Vec<u16>>>,
    /// Partial DATA frames applied, with the node that applied them.
    pub partials: Vec<(usize, Vec<u8>)>,
    pub now: u64,
    pub steps: u64,
    pub dropped: u64,
    pub duplicated: u64,
    pub corrupted: u64,
}

pub struct Net {
    pub nodes: Vec<Node>,
    pub ranks: Vec<Rank>,
    /// Ends that are down (a killed switch): frames to and from them vanish.
    pub dead: Vec<usize>,
    wire: BinaryHeap<Reverse<(u64, u64, End, usize)>>,
    frames: Vec<Option<Vec<u8>>>,
    seq: u64,
    pub rng: StdRng,
    pub now: u64,
    pub outcome: TreeOutcome,
}

impl Net {
    pub fn new(nodes: Vec<Node>, s: &TreeScenario, v: &[Vec<u32>], op_gen: u32) -> Net {
        let mut rng = StdRng::seed_from_u64(s.net_seed);
        let ranks = (0..RANKS).map(|r| Rank::new(s, r, &v[r as usize], op_gen, &mut rng)).collect();
        let outcome = TreeOutcome { arrival: vec![vec![Vec::new(); s.vector_len as usize]; s.nodes()], ..Default::default() };
        Net { nodes, ranks, dead: Vec::new(), wire: BinaryHeap::new(), frames: Vec::new(), seq: 0, rng, now: 0, outcome }
    }

    fn emit(&mut self, s: &TreeScenario, from: End, frames: Vec<Sent>) {
        for sent in frames {
            let src = match from {
                End::Node(n, _) => End::Node(n, sent.port),
                r => r,
            };
            if matches!(src, End::Node(n, _) if self.dead.contains(&n)) {
                continue;
            }
            let to = peer(s, src);
            if self.rng.gen_bool(s.drop) {
                self.outcome.dropped += 1;
                continue;
            }
            let copies = if self.rng.gen_bool(s.duplicate) { 2 } else { 1 };
            self.outcome.duplicated += copies - 1;
            for _ in 0..copies {
                let mut f = sent.frame.clone();
                if self.rng.gen_bool(s.corrupt) {
                    // The frame arrives cut short (the rest of it is lost): the
                    // receiver must see it as malformed, never as data.
                    let keep = self.rng.gen_range(ETH_HEADER_LEN..f.len());
                    f.truncate(keep);
                    self.outcome.corrupted += 1;
                }
                let t = self.now + self.rng.gen_range(s.delay.0..=s.delay.1);
                self.frames.push(Some(f));
                self.wire.push(Reverse((t, self.seq, to, self.frames.len() - 1)));
                self.seq += 1;
            }
        }
    }

    /// Runs until every rank has its result and every DATA frame is
    /// acknowledged, or until `until` says stop, or the clock passes `limit_ns`.
    pub fn run(&mut self, s: &TreeScenario, limit_ns: u64, mut until: impl FnMut(&Net) -> bool) -> bool {
        let mut out = Vec::new();
        for r in 0..RANKS as usize {
            let now = self.now;
            let rng = &mut self.rng;
            self.ranks[r].fill(now, rng, &mut out);
            self.emit(s, End::Rank(r as u16), std::mem::take(&mut out));
        }
        loop {
            if until(self) {
                return true;
            }
            if self.ranks.iter().all(|r| r.data_done() && r.result_done(s)) && self.nodes.iter().all(|n| n.poll_timeout().is_none()) {
                return true;
            }
            let next_frame = self.wire.peek().map(|Reverse(e)| e.0);
            let node_timer = self.nodes.iter().enumerate().filter(|(i, _)| !self.dead.contains(i)).filter_map(|(_, n)| n.poll_timeout()).min();
            let rank_timer = self.ranks.iter().filter_map(|r| r.replay.deadline()).min();
            let timer = node_timer.into_iter().chain(rank_timer).min();
            let t = match (next_frame, timer) {
                (None, None) => return false,
                (a, b) => a.into_iter().chain(b).min().unwrap(),
            };
            if t > limit_ns {
                return false;
            }
            self.now = self.now.max(t);
            self.outcome.steps += 1;
            if next_frame == Some(t) {
                let Reverse((_, _, to, idx)) = self.wire.pop().unwrap();
                let f = self.frames[idx].take().unwrap();
                self.deliver(s, to, &f, &mut out);
            } else {
                let now = self.now;
                for n in 0..self.nodes.len() {
                    if !self.dead.contains(&n) && self.nodes[n].poll_timeout().is_some_and(|d| d <= now) {
                        self.nodes[n].handle_timeout(now, &mut out);
                        self.emit(s, End::Node(n, 0), std::mem::take(&mut out));
                    }
                }
                for r in 0..RANKS as usize {
                    if self.ranks[r].replay.deadline().is_some_and(|d| d <= now) {
                        self.ranks[r].replay.on_timeout(now, &mut out);
                        self.emit(s, End::Rank(r as u16), std::mem::take(&mut out));
                    }
                }
            }
        }
    }

    fn deliver(&mut self, s: &TreeScenario, to: End, f: &[u8], out: &mut Vec<Sent>) {
        match to {
            End::Rank(r) => {
                let now = self.now;
                let rng = &mut self.rng;
                self.ranks[r as usize].handle(now, f, rng, out);
                self.emit(s, to, std::mem::take(out));
            }
            End::Node(n, port) => {
                if self.dead.contains(&n) {
                    return;
                }
                let applied = self.nodes[n].counters.data_applied;
                self.nodes[n].handle_at(self.now, port, f, out);
                if self.nodes[n].counters.data_applied > applied {
                    let Ok(p) = parse_frame(f, &Limits::default()) else { panic!("applied a malformed frame") };
                    if let Some(PrismRepr::Data(d)) = p.prism.filter(|p| p.class() == Class::DATA) {
                        for pos in d.first_element as u64..d.end_element() {
                            self.outcome.arrival[n][pos as usize].push(d.stream_id);
                        }
                        if n == S0 || n == I0 {
                            self.outcome.partials.push((n, f.to_vec()));
                        }
                    }
                }
                self.emit(s, to, std::mem::take(out));
            }
        }
        self.outcome.now = self.now;
    }
}
