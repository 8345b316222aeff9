//! The node: CONTROL state machine and DATA dispatch.

use super::counters::Counters;
use super::op::{Admitted, DataReject, OpData, ProgressRefusal};
use super::stream::{StreamStats, DEFAULT_RTO_NS};
use super::Sink;
use crate::wire::*;
use prism_arith::min_kulisch_width;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::result::Result;

/// A multiply-rotate hasher for operation keys: the table is looked up once
/// per DATA frame, and SipHash was 2-3% of a packet's cycles. Keys only enter
/// the table through STAGE from the trusted AM, so flooding it is not a concern.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u16(&mut self, v: u16) {
        self.write_u64(v as u64);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// What a node is: its MAC, its ports, who may configure it, what it can do.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    pub mac: Mac,
    /// The node's CONTROL endpoint.
    pub control_ep: u16,
    /// The only MAC and port CONTROL is accepted from.
    pub am_mac: Mac,
    pub am_port: u16,
    pub ports: u16,
    /// Largest MTU the node's links support.
    pub mtu: u16,
    /// How many operations may be staged or active at once.
    pub max_ops: usize,
    pub caps: Vec<CapabilityRecord>,
}

/// Where an operation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpState {
    Staged,
    Active,
}

/// Key of an operation context: (Job, Group, Operation ID).
type OpKey = (u64, u16, u16);

/// Ok, or the ACK status and detail of a refused request.
type Refusal = std::result::Result<(), (AckStatus, u16)>;

#[derive(Debug)]
struct Op {
    generation: (u16, u32),
    state: OpState,
    data: OpData,
}

/// A frame for a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub port: u16,
    pub frame: Vec<u8>,
}

/// A run of fast-path DATA frames within one burst (`Node::run_data`):
/// the operation its frames are for, found active with its clock set by
/// the first. Ended by `Node::end_run` before any other frame.
#[derive(Debug, Default)]
pub struct Run {
    op: Option<usize>,
}

/// A CONTROL request answered: its generation, its bytes, and the replies sent.
type Answered = ((u16, u32), Vec<u8>, Vec<Vec<u8>>);

/// One PRISM node, without I/O.
#[derive(Debug)]
pub struct Node {
    cfg: NodeConfig,
    /// Each installed operation's slot in `slots` (iterated in this map's
    /// order, as when the map held the operations).
    ops: FastMap<OpKey, usize>,
    slots: Vec<Option<Op>>,
    /// The operation the last fast-path DATA frame was for, and its slot:
    /// the next frame of the same operation skips the hash lookup. Cleared
    /// when an operation is removed (its slot may be reused).
    last: Option<(OpKey, usize)>,
    /// Highest generation retired (ABORT or RELEASE) per key.
    retired: HashMap<OpKey, (u16, u32)>,
    /// Per (key, Transaction ID): the request's generation and bytes, and the ACK sent.
    /// Entries of a key's older generations go when a newer one is staged.
    txns: HashMap<(OpKey, u32), Answered>,
    pub counters: Counters,
    /// The caller's clock at the last input, nanoseconds.
    now: u64,
    rto_ns: u64,
    /// Stream statistics of operations already removed.
    retired_streams: StreamStats,
    /// Whether `handle` tries `data_fast` first (off only to compare the two paths).
    fast_path: bool,
    /// DATA frames `data_fast` decided.
    fast_taken: u64,
}

impl Node {
    pub fn new(cfg: NodeConfig) -> Self {
        Node {
            cfg,
            ops: FastMap::default(),
            slots: Vec::new(),
            last: None,
            retired: HashMap::new(),
            txns: HashMap::new(),
            counters: Counters::default(),
            now: 0,
            rto_ns: DEFAULT_RTO_NS,
            retired_streams: StreamStats::default(),
            fast_path: true,
            fast_taken: 0,
        }
    }

    fn op(&self, key: &OpKey) -> Option<&Op> {
        self.slots.get(*self.ops.get(key)?)?.as_ref()
    }

    fn op_mut(&mut self, key: &OpKey) -> Option<&mut Op> {
        self.slots.get_mut(*self.ops.get(key)?)?.as_mut()
    }

    /// Installed operations, in the map's order.
    fn ops(&self) -> impl Iterator<Item = &Op> {
        self.ops.values().filter_map(|&i| self.slots.get(i)?.as_ref())
    }

    /// Turns the DATA fast path off or on (tests and benchmarks compare
    /// the two; every decision and frame is the same either way).
    pub fn set_fast_path(&mut self, on: bool) {
        self.fast_path = on;
    }

    /// DATA frames decided by the fast path, without the full parse.
    pub fn fast_path_taken(&self) -> u64 {
        self.fast_taken
    }

    /// The first retransmission timeout of operations staged from now on.
    pub fn set_rto(&mut self, ns: u64) {
        self.rto_ns = ns.max(1);
    }

    /// Retransmission statistics of every outgoing stream, past and present.
    pub fn stream_stats(&self) -> StreamStats {
        let mut s = self.retired_streams;
        for op in self.ops() {
            s.add(&op.data.stream_stats());
        }
        s
    }

    /// When `handle_timeout` is next needed, if ever.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.ops().filter(|o| o.state == OpState::Active).filter_map(|o| o.data.deadline()).min()
    }

    /// Retransmits what timed out at `now`.
    pub fn handle_timeout(&mut self, now: u64, out: &mut impl Sink) {
        self.now = self.now.max(now);
        for &i in self.ops.values() {
            let Some(op) = self.slots.get_mut(i).and_then(Option::as_mut).filter(|o| o.state == OpState::Active) else { continue };
            if op.data.deadline().is_some_and(|d| d <= now) {
                op.data.set_now(self.now);
                op.data.on_timeout(out);
            }
        }
    }

    /// `handle` at a given time of the caller's clock (nanoseconds).
    pub fn handle_at(&mut self, now: u64, port: u16, frame: &[u8], out: &mut impl Sink) {
        self.now = self.now.max(now);
        self.handle(port, frame, out);
    }

    /// The state of an operation, if installed.
    pub fn state(&self, id: &Identity) -> Option<OpState> {
        self.op(&(id.job, id.group, id.op)).filter(|o| o.generation == id.generation()).map(|o| o.state)
    }

    /// The staged or active context of an operation.
    pub fn context(&self, id: &Identity) -> Option<&ContextRecord> {
        self.op(&(id.job, id.group, id.op)).filter(|o| o.generation == id.generation()).map(|o| &o.data.context)
    }

    /// Lowest element of an operation whose RESULT is not yet sent (its window's base).
    pub fn window_base(&self, id: &Identity) -> Option<u64> {
        self.op(&(id.job, id.group, id.op)).filter(|o| o.generation == id.generation()).map(|o| o.data.base())
    }

    /// Handles one received frame; replies go to `out`. Anything refused changes no state.
    pub fn handle(&mut self, port: u16, frame: &[u8], out: &mut impl Sink) {
        if let Some(r) = self.fast_path.then(|| self.data_fast(port, frame, out)).flatten() {
            self.fast_taken += 1;
            match r {
                Ok(Admitted::Applied) => self.counters.data_applied += 1,
                Ok(Admitted::Duplicate) => self.counters.data_duplicates += 1,
                Err(r) => self.counters.data_rejected[r.index()] += 1,
            }
            return;
        }
        // Each class is parsed straight from the envelope, without a
        // `PrismRepr` to build and match (DATA and RESULT are nearly every frame).
        let Envelope { eth, packet } = match parse_envelope(frame, &Limits { mtu: self.cfg.mtu }) {
            Ok(x) => x,
            Err(e) => {
                self.counters.malformed[e.reason.index()] += 1;
                return;
            }
        };
        let Some((class, packet)) = packet else {
            self.counters.not_for_us += 1;
            return;
        };
        // The class's own parse (an error is counted as malformed), then
        // the destination: a frame for another MAC is not ours.
        macro_rules! parse_ours {
            ($parsed:expr) => {{
                let x = match $parsed {
                    Ok(x) => x,
                    Err(e) => {
                        self.counters.malformed[e.reason.index()] += 1;
                        return;
                    }
                };
                if eth.dst != self.cfg.mac {
                    self.counters.not_for_us += 1;
                    return;
                }
                x
            }};
        }
        let c = match class {
            Class::DATA | Class::RESULT => {
                let d = parse_ours!(DataRepr::parse(&DataPacket::new_unchecked(packet), ETH_HEADER_LEN));
                let result = d.class == Class::RESULT;
                match self.data(port, eth.src, &d, frame.len(), out) {
                    Ok(Admitted::Applied) if result => self.counters.results_received += 1,
                    Ok(Admitted::Duplicate) if result => self.counters.results_duplicates += 1,
                    Ok(Admitted::Applied) => self.counters.data_applied += 1,
                    Ok(Admitted::Duplicate) => self.counters.data_duplicates += 1,
                    Err(r) => self.counters.data_rejected[r.index()] += 1,
                }
                return;
            }
            Class::PROGRESS => {
                let p = parse_ours!(ProgressRepr::parse(&ProgressPacket::new_unchecked(packet), ETH_HEADER_LEN));
                self.progress(port, eth.src, &p, out);
                return;
            }
            // CONTROL (the envelope admits known classes only).
            _ => parse_ours!(ControlRepr::parse(&ControlPacket::new_unchecked(packet), ETH_HEADER_LEN)),
        };
        if eth.src != self.cfg.am_mac || port != self.cfg.am_port {
            self.counters.untrusted_source += 1;
            return;
        }
        let id = c.identity;
        let key = (id.job, id.group, id.op);
        let request = &frame[ETH_HEADER_LEN..ETH_HEADER_LEN + c.buffer_len()];
        if let Some((_, bytes, acks)) = self.txns.get(&(key, c.txn)).filter(|_| c.command != Command::CAPS_QUERY) {
            if bytes.as_slice() == request {
                self.counters.retries_answered += 1;
                for f in acks {
                    out.copy(port, f);
                }
            } else {
                out.copy(port, &self.ack_frame(&c, AckStatus::TXN_CONFLICT, 0, port).frame);
                self.counters.refused[u8::from(AckStatus::TXN_CONFLICT) as usize] += 1;
            }
            return;
        }
        let replies: Vec<Vec<u8>> = if c.command == Command::CAPS_QUERY {
            self.caps_pages(&c)
        } else {
            let (status, detail) = match self.apply(&c, key) {
                Ok(()) => (AckStatus::OK, 0),
                Err((s, d)) => (s, d),
            };
            if status != AckStatus::OK {
                self.counters.refused[u8::from(status) as usize] += 1;
            }
            vec![self.ack_frame(&c, status, detail, port).frame]
        };
        self.counters.accepted += 1;
        // CAPS_QUERY changes nothing: it is answered afresh every time.
        if c.command != Command::CAPS_QUERY {
            let gen = id.generation();
            if c.command == Command::STAGE && self.state(&id).is_some() {
                self.txns.retain(|(k, _), (g, _, _)| *k != key || *g >= gen);
            }
            self.txns.insert((key, c.txn), (gen, request.to_vec(), replies.clone()));
        }
        for f in &replies {
            out.copy(port, f);
        }
    }

    /// Nearly every frame: a DATA frame of one FP32 group filling its body,
    /// for an active operation, from one of its contributors. Taken here
    /// without the general parse and dispatch by checking the per-frame
    /// fields that shape the body (count, body length, one group, its FP32
    /// descriptor, flags LAST or none, no padding, within the MTU) and then
    /// every fixed header byte against the stream's template (`OpData::
    /// admit_fast`). `None`: any other frame, nothing changed; `handle`
    /// parses it in full, so every refusal keeps its own reason and counter.
    #[inline]
    fn data_fast(&mut self, port: u16, frame: &[u8], out: &mut impl Sink) -> Option<Result<Admitted, DataReject>> {
        if !self.shaped(frame) {
            return None;
        }
        let slot = self.fast_slot(frame)?;
        let op = self.slots.get_mut(slot)?.as_mut()?;
        op.data.set_now(self.now);
        let r = op.data.admit_fast(port, frame, out)?;
        Self::count_tally(&mut self.counters, op);
        Some(r)
    }

    /// Whether a frame is shaped for the fast path (`data_fast`): a DATA
    /// frame whose body is exactly one FP32 group of its count, flags LAST
    /// or none, within the MTU.
    #[inline(always)]
    fn shaped(&self, frame: &[u8]) -> bool {
        const HEAD: usize = ETH_HEADER_LEN + CONTROL_WORD_LEN + DATA_HEADER_LEN;
        let Some(h) = frame.first_chunk::<{ HEAD + GROUP_DESCRIPTOR_LEN }>() else { return false };
        if h[ETH_HEADER_LEN + offsets::CLASS] != u8::from(Class::DATA) {
            return false;
        }
        let p = DataPacket::new_unchecked(&h[ETH_HEADER_LEN..]);
        let count = p.element_count() as usize;
        let body = GROUP_DESCRIPTOR_LEN + 4 * count;
        let fp32 = ((u8::from(FormatCode::FP32) as u32) << descriptor::FORMAT_SHIFT) | count as u32;
        count > 0
            && frame.len() == HEAD + body
            && p.body_len() as usize == body
            && p.group_count() == 1
            && p.flags() & !flags::LAST == 0
            && CONTROL_WORD_LEN + DATA_HEADER_LEN + body <= self.cfg.mtu as usize
            && h[HEAD..].first_chunk::<GROUP_DESCRIPTOR_LEN>().is_some_and(|w| u32::from_be_bytes(*w) == fp32)
    }

    /// The slot of the active operation a shaped frame names (by the op-slot
    /// cache, else the table), or `None`.
    #[inline(always)]
    fn fast_slot(&mut self, frame: &[u8]) -> Option<usize> {
        let p = DataPacket::new_unchecked(frame.get(ETH_HEADER_LEN..)?);
        let id = p.identity();
        let key = (id.job, id.group, id.op);
        let slot = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let i = *self.ops.get(&key)?;
                self.last = Some((key, i));
                i
            }
        };
        let op = self.slots.get(slot)?.as_ref()?;
        (op.state == OpState::Active).then_some(slot)
    }

    /// The node's MAC.
    pub fn mac(&self) -> Mac {
        self.cfg.mac
    }

    /// One frame of a burst (`SwitchCore::rx_burst`) at `now`: `true` when
    /// it was a fast-path DATA frame (`data_fast`), decided and counted
    /// here, as `handle_at` would have; `false` when nothing changed but
    /// perhaps the clock, and the caller ends the run (`end_run`) and
    /// hands the frame to `handle_at`. Within a run the operation of its
    /// first frame is kept (`Run`): later frames skip the key, the lookup,
    /// the state check and the clock, and its tally is counted once, at the
    /// run's end. A frame for another operation fails that operation's
    /// template compare (its identity differs) and goes the full way.
    #[inline(always)]
    pub fn run_data(&mut self, run: &mut Run, now: u64, port: u16, frame: &[u8], out: &mut impl Sink) -> bool {
        let slot = match run.op {
            // The run's operation: a frame that is not ours, or not for it,
            // fails its template compare (which has the node's MAC, the
            // identity and the generation) and changes nothing.
            Some(i) if self.shaped(frame) => i,
            Some(_) => return false,
            None => {
                // Ours, as `SwitchCore::rx` checks before `handle_at`: a frame
                // that is not changes nothing here, not even the clock.
                if !self.fast_path || frame.get(..6) != Some(&self.cfg.mac.0[..]) || !self.shaped(frame) {
                    return false;
                }
                let Some(i) = self.fast_slot(frame) else { return false };
                // `handle_at`'s clock, then `data_fast`'s: the same for every frame of the run.
                self.now = self.now.max(now);
                let Some(op) = self.slots.get_mut(i).and_then(Option::as_mut) else { return false };
                op.data.set_now(self.now);
                run.op = Some(i);
                i
            }
        };
        let Some(op) = self.slots.get_mut(slot).and_then(Option::as_mut) else { return false };
        let Some(r) = op.data.admit_fast(port, frame, out) else { return false };
        self.fast_taken += 1;
        match r {
            Ok(Admitted::Applied) => self.counters.data_applied += 1,
            Ok(Admitted::Duplicate) => self.counters.data_duplicates += 1,
            Err(r) => self.counters.data_rejected[r.index()] += 1,
        }
        true
    }

    /// Ends a run of `run_data`: what its operation sent is counted, and
    /// the next frame looks its operation up again.
    #[inline]
    pub fn end_run(&mut self, run: &mut Run) {
        if let Some(op) = run.op.take().and_then(|i| self.slots.get_mut(i)?.as_mut()) {
            Self::count_tally(&mut self.counters, op);
        }
    }

    fn progress(&mut self, port: u16, src: Mac, p: &ProgressRepr<'_>, out: &mut impl Sink) {
        let id = p.identity;
        let slot = self.ops.get(&(id.job, id.group, id.op)).copied();
        let Some(op) = slot.and_then(|i| self.slots.get_mut(i)?.as_mut()).filter(|o| o.generation == id.generation() && o.state == OpState::Active) else {
            self.counters.progress_ignored += 1;
            return;
        };
        op.data.set_now(self.now);
        match op.data.on_progress(port, src, p, out) {
            Ok(()) => self.counters.progress_applied += 1,
            Err(ProgressRefusal::NoFeedback) => self.counters.progress_ignored += 1,
            Err(_) => self.counters.progress_rejected += 1,
        }
        Self::count_tally(&mut self.counters, op);
    }

    fn count_tally(c: &mut Counters, op: &mut Op) {
        let t = op.data.take_tally();
        c.results_sent += t.results;
        c.partials_sent += t.partials;
        c.results_forwarded += t.forwarded;
        c.progress_sent += t.progress;
    }

    fn data(&mut self, port: u16, src: Mac, d: &DataRepr<'_>, len: usize, out: &mut impl Sink) -> Result<Admitted, DataReject> {
        let id = d.identity;
        let slot = self.ops.get(&(id.job, id.group, id.op)).copied();
        let Some(op) = slot.and_then(|i| self.slots.get_mut(i)?.as_mut()) else {
            return Err(if d.class == Class::RESULT { DataReject::ResultNotInput } else { DataReject::NoOperation });
        };
        if d.class == Class::RESULT && !op.data.takes_results() {
            return Err(DataReject::ResultNotInput);
        }
        if op.generation != id.generation() {
            return Err(if id.generation() < op.generation { DataReject::StaleGeneration } else { DataReject::NoOperation });
        }
        if op.state != OpState::Active {
            return Err(DataReject::NotActive);
        }
        op.data.set_now(self.now);
        let r = if d.class == Class::RESULT { op.data.admit_result(port, src, d, out) } else { op.data.admit(port, src, d, len, out) };
        Self::count_tally(&mut self.counters, op);
        r
    }

    /// Applies one request; an error leaves every state as it was.
    fn apply(&mut self, c: &ControlRepr<'_>, key: OpKey) -> Refusal {
        let gen = c.identity.generation();
        if self.retired.get(&key).is_some_and(|g| gen <= *g) {
            return Err((AckStatus::STALE_GENERATION, 0));
        }
        match c.command {
            Command::STAGE => {
                let ControlBody::Stage { context, bindings } = c.body else { return Err((AckStatus::INVALID, 0)) };
                if let Some(op) = self.op(&key) {
                    return Err(if gen <= op.generation { (AckStatus::STALE_GENERATION, 0) } else { (AckStatus::BAD_STATE, 0) });
                }
                self.validate(&context, &bindings)?;
                if self.ops.len() >= self.cfg.max_ops {
                    return Err((AckStatus::NO_RESOURCES, 0));
                }
                let data = OpData::new(c.identity, context, &bindings, self.cfg.mac, self.rto_ns);
                let op = Some(Op { generation: gen, state: OpState::Staged, data });
                let slot = match self.slots.iter().position(Option::is_none) {
                    Some(i) => {
                        self.slots[i] = op;
                        i
                    }
                    None => {
                        self.slots.push(op);
                        self.slots.len() - 1
                    }
                };
                self.ops.insert(key, slot);
                Ok(())
            }
            Command::COMMIT | Command::COMPLETE | Command::RELEASE | Command::ABORT => {
                let Some(op) = self.op_mut(&key) else { return Err((AckStatus::BAD_STATE, 0)) };
                if op.generation != gen {
                    return Err(if gen < op.generation { (AckStatus::STALE_GENERATION, 0) } else { (AckStatus::BAD_STATE, 0) });
                }
                match (c.command, op.state) {
                    (Command::COMMIT, OpState::Staged) => op.state = OpState::Active,
                    (Command::COMPLETE, OpState::Active) if op.data.done() => {}
                    (Command::RELEASE, OpState::Active) | (Command::ABORT, _) => {
                        if let Some(op) = self.ops.remove(&key).and_then(|i| self.slots.get_mut(i)?.take()) {
                            self.retired_streams.add(&op.data.stream_stats());
                        }
                        self.last = None;
                        self.retired.insert(key, gen);
                    }
                    _ => return Err((AckStatus::BAD_STATE, 0)),
                }
                Ok(())
            }
            _ => Err((AckStatus::INVALID, 0)),
        }
    }

    /// Whole-context checks of STAGE, in the order their statuses are reported.
    fn validate(&self, x: &ContextRecord, bindings: &Records<'_, BindingRecord>) -> Refusal {
        let invalid = Err((AckStatus::INVALID, 0));
        let known = x.role.is_known() && x.semantics.is_known() && x.input_format.is_known() && x.accumulator.is_known() && x.partial.is_known() && x.output.is_known();
        if !known || x.vector_len == 0 || x.binding_count as usize != bindings.len() || bindings.is_empty() || x.terms == 0 {
            return invalid;
        }
        if !MTUS.contains(&x.mtu) || x.mtu > self.cfg.mtu {
            return Err((AckStatus::UNSUPPORTED, 0));
        }
        let kulisch = x.accumulator == AccumulatorPolicy::KULISCH_FIXED;
        if kulisch && (!x.kulisch_width.is_multiple_of(8) || (x.kulisch_width as u32) < min_kulisch_width(x.terms) || x.kulisch_width > KULISCH_MAX_WIDTH) {
            return invalid;
        }
        let tree_child = x.role == Role::LEAF || x.role == Role::INTERNAL;
        let kulisch_partial = x.partial == PartialPolicy::KULISCH || (x.partial == PartialPolicy::AUTO && kulisch);
        // A child emits partials: it needs a partial policy, and an exact sum needs exact partials.
        if tree_child && (x.partial == PartialPolicy::NONE || (kulisch && !kulisch_partial) || (!kulisch && x.partial == PartialPolicy::KULISCH)) {
            return invalid;
        }
        // Bindings: ports exist, streams and local endpoints unique, terms add
        // up, one parent exactly when the role has one, result paths match the semantics.
        let mut streams = Vec::with_capacity(bindings.len());
        let mut eps = Vec::with_capacity(bindings.len());
        let (mut terms, mut contributors, mut paths, mut dest_paths, mut parents, mut results_in) = (0u32, 0u16, 0u16, 0u16, 0u16, 0u16);
        for (i, b) in bindings.iter().enumerate() {
            let bad = Err((AckStatus::INVALID_BINDING, i as u16 + 1));
            if b.port >= self.cfg.ports || !b.peer_kind.is_known() || b.directions == 0 || b.directions & direction::RESERVED != 0 || streams.contains(&b.stream_id) || eps.contains(&b.local_ep) {
                return bad;
            }
            streams.push(b.stream_id);
            eps.push(b.local_ep);
            let upward = b.has(direction::DATA_OUT) || b.has(direction::RESULT_IN);
            if upward {
                // The parent: a switch, reached by DATA out (and RESULT in), nothing else.
                if !tree_child || b.peer_kind != PeerKind::SWITCH || !b.has(direction::DATA_OUT) || b.has(direction::DATA_IN | direction::RESULT_OUT) || parents > 0 {
                    return bad;
                }
                parents += 1;
                results_in += b.has(direction::RESULT_IN) as u16;
                continue;
            }
            // Ranks attach to SINGLE and LEAF nodes; child subtrees to INTERNAL and ROOT ones.
            let rank_role = x.role == Role::SINGLE || x.role == Role::LEAF;
            if (b.peer_kind == PeerKind::RANK) != rank_role {
                return bad;
            }
            if b.has(direction::DATA_IN) {
                terms += b.terms as u32;
                contributors += 1;
            }
            if b.has(direction::RESULT_OUT) {
                paths += 1;
                if x.semantics == Semantics::REDUCE && b.peer_kind == PeerKind::RANK && b.rank != x.dest_rank {
                    return bad;
                }
                dest_paths += (b.peer_kind == PeerKind::SWITCH || b.rank == x.dest_rank) as u16;
            }
            if x.semantics == Semantics::ALLREDUCE && b.has(direction::DATA_IN) && !b.has(direction::RESULT_OUT) {
                return bad;
            }
        }
        // The root (or SINGLE node) sees every original term; a child sees its subtree's.
        let terms_ok = if tree_child { terms >= 1 && terms <= x.terms } else { terms == x.terms };
        let paths_ok = if tree_child {
            // RESULT comes from the parent exactly when it has somewhere to go.
            parents == 1 && (results_in == 1) == (paths > 0) && (x.semantics == Semantics::ALLREDUCE || dest_paths <= 1)
        } else {
            paths > 0 && (x.semantics == Semantics::ALLREDUCE || dest_paths == 1)
        };
        if !terms_ok || contributors == 0 || !paths_ok {
            return Err((AckStatus::INVALID_BINDING, 0));
        }
        let covered = self.cfg.caps.iter().any(|r| r.covers(x) && contributors <= r.max_contributors && paths <= r.max_result_paths);
        if !covered {
            return Err((AckStatus::UNSUPPORTED, 0));
        }
        // The window holds two maximal packets (the SINGLE rule), and its limits are usable.
        if (x.window_elements as usize) < single_window_elements(x.mtu) || x.window_intervals == 0 || x.window_bytes < x.mtu as u32 + ETH_HEADER_LEN as u32 {
            return invalid;
        }
        // A window the node cannot hold: more elements, packet intervals or bytes than it advertises.
        let most = |f: fn(&CapabilityRecord) -> u32| self.cfg.caps.iter().map(f).max().unwrap_or(0);
        if x.window_elements > most(|r| r.window_elements)
            || x.window_intervals as u32 > most(|r| r.window_intervals as u32)
            || x.window_bytes > most(|r| r.window_bytes)
            || x.replay_depth as u32 > most(|r| r.replay_depth as u32)
        {
            return Err((AckStatus::NO_RESOURCES, 0));
        }
        Ok(())
    }

    fn reply_eth(&self) -> EthernetRepr {
        EthernetRepr { dst: self.cfg.am_mac, src: self.cfg.mac, ethertype: ETHERTYPE }
    }

    fn ack_frame(&self, c: &ControlRepr<'_>, status: AckStatus, detail: u16, port: u16) -> Sent {
        let ack = ControlRepr {
            identity: c.identity,
            txn: c.txn,
            src_ep: self.cfg.control_ep,
            dst_ep: c.src_ep,
            command: Command::ACK,
            frag_index: 0,
            frag_count: 1,
            body: ControlBody::Ack { status, body: AckBody { command: c.command, detail } },
        };
        let p = PrismRepr::Control(ack);
        let mut frame = vec![0; p.frame_len()];
        p.emit_frame(&self.reply_eth(), &mut frame);
        Sent { port, frame }
    }

    /// CAPS_RESPONSE pages: as many whole records as the MTU allows, index 0 first.
    fn caps_pages(&self, c: &ControlRepr<'_>) -> Vec<Vec<u8>> {
        let per_page = ((self.cfg.mtu as usize - offsets::control::BODY) / CAPABILITY_RECORD_LEN).max(1);
        let chunks: Vec<&[CapabilityRecord]> = if self.cfg.caps.is_empty() { vec![&[]] } else { self.cfg.caps.chunks(per_page).collect() };
        let count = chunks.len().min(255) as u8;
        chunks
            .iter()
            .take(255)
            .enumerate()
            .map(|(i, recs)| {
                let p = PrismRepr::Control(ControlRepr {
                    identity: c.identity,
                    txn: c.txn,
                    src_ep: self.cfg.control_ep,
                    dst_ep: c.src_ep,
                    command: Command::CAPS_RESPONSE,
                    frag_index: i as u8,
                    frag_count: count,
                    body: ControlBody::Caps(Records::Typed(recs)),
                });
                let mut frame = vec![0; p.frame_len()];
                p.emit_frame(&self.reply_eth(), &mut frame);
                frame
            })
            .collect()
    }
}
