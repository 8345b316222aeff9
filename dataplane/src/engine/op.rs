//! One active operation's data path: contributor windows, reduction by global
//! element position, canonical RESULT packetization (docs/wire-format.md
//! section 9), partials to a parent and RESULT forwarding in a tree, and the
//! PROGRESS of every direct stream (section 11).

use super::digest::digest;
use super::stream::{emit_progress, Coverage, Credit, Replay, RxRefusal, RxWindow, StreamStats};
use super::Sink;
use crate::wire::*;
use prism_arith::{auto, Accumulator, ArithError, NumFormat, Output, Policy};
use std::result::Result;

/// Why a DATA frame was not applied. Each has a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataReject {
    NoOperation,
    NotActive,
    StaleGeneration,
    UnknownStream,
    EndpointMismatch,
    WrongPort,
    WrongSourceMac,
    RangeOutsideVector,
    LastFlagMismatch,
    FormatNotAllowed,
    BelowWindow,
    BeyondWindow,
    Overlap,
    ChangedRetransmit,
    IntervalsExhausted,
    BytesExhausted,
    OperationFailed,
    OperationDone,
    ResultNotInput,
    ResultBackpressure,
}

impl DataReject {
    pub const ALL: [DataReject; 20] = [
        DataReject::NoOperation,
        DataReject::NotActive,
        DataReject::StaleGeneration,
        DataReject::UnknownStream,
        DataReject::EndpointMismatch,
        DataReject::WrongPort,
        DataReject::WrongSourceMac,
        DataReject::RangeOutsideVector,
        DataReject::LastFlagMismatch,
        DataReject::FormatNotAllowed,
        DataReject::BelowWindow,
        DataReject::BeyondWindow,
        DataReject::Overlap,
        DataReject::ChangedRetransmit,
        DataReject::IntervalsExhausted,
        DataReject::BytesExhausted,
        DataReject::OperationFailed,
        DataReject::OperationDone,
        DataReject::ResultNotInput,
        DataReject::ResultBackpressure,
    ];
    /// Stable snake_case name for counters.
    pub fn name(self) -> &'static str {
        match self {
            DataReject::NoOperation => "no_operation",
            DataReject::NotActive => "not_active",
            DataReject::StaleGeneration => "stale_generation",
            DataReject::UnknownStream => "unknown_stream",
            DataReject::EndpointMismatch => "endpoint_mismatch",
            DataReject::WrongPort => "wrong_port",
            DataReject::WrongSourceMac => "wrong_source_mac",
            DataReject::RangeOutsideVector => "range_outside_vector",
            DataReject::LastFlagMismatch => "last_flag_mismatch",
            DataReject::FormatNotAllowed => "format_not_allowed",
            DataReject::BelowWindow => "below_window",
            DataReject::BeyondWindow => "beyond_window",
            DataReject::Overlap => "overlap",
            DataReject::ChangedRetransmit => "changed_retransmit",
            DataReject::IntervalsExhausted => "intervals_exhausted",
            DataReject::BytesExhausted => "bytes_exhausted",
            DataReject::OperationFailed => "operation_failed",
            DataReject::OperationDone => "operation_done",
            DataReject::ResultNotInput => "result_not_input",
            DataReject::ResultBackpressure => "result_backpressure",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What happened to an admitted DATA frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    Applied,
    Duplicate,
}

/// Why a PROGRESS frame changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressRefusal {
    /// The operation runs without delivery feedback (replay depth 0).
    NoFeedback,
    /// No outgoing stream of the operation has this Stream ID.
    UnknownStream,
    /// Endpoints, port or source MAC differ from the stream's binding.
    BindingMismatch,
}

/// Frames an operation sent since the node last asked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    pub results: u64,
    pub partials: u64,
    pub forwarded: u64,
    pub progress: u64,
}

/// A packet a contributor delivered whose range is not yet released.
#[derive(Debug, Clone, Copy)]
struct Held {
    packet_id: u32,
    first: u64,
    end: u64,
    digest: u64,
    bytes: u32,
}

#[derive(Debug, Clone)]
struct Contributor {
    binding: BindingRecord,
    held: Vec<Held>,
    held_bytes: u32,
    /// End of this contributor's contiguous coverage from the window's base
    /// (only its own admissions move it; releases never go past it).
    covered: u64,
    /// Refused for want of window, or told it has no credit: told
    /// (WINDOW_UPDATE) when the window moves.
    starved: bool,
    /// The most elements one of its packets carried (to turn the element
    /// span left in the window into packet credit).
    largest: u64,
    /// The frame header every DATA frame of this stream carries, with the
    /// per-frame fields zero (`admit_fast` compares the fixed ones).
    template: [u8; FRAME_HEADER],
}

impl Contributor {
    /// Forgets the packets that end at or below `to`.
    fn forget_below(&mut self, to: u64) {
        let mut freed = 0;
        self.held.retain(|h| {
            let keep = h.end > to;
            if !keep {
                freed += h.bytes;
            }
            keep
        });
        self.held_bytes -= freed;
    }

    /// End of the contiguous coverage from `from` by held packets.
    #[inline(always)]
    fn covered_from(&self, from: u64) -> u64 {
        // One held packet (in-order traffic: the one just admitted): no walk.
        if let [h] = self.held[..] {
            return if h.first <= from && h.end > from { h.end } else { from };
        }
        let mut at = from;
        loop {
            match self.held.iter().find(|h| h.first <= at && h.end > at) {
                Some(h) => at = h.end,
                None => return at,
            }
        }
    }
}

/// Ethernet header, control word and DATA/RESULT header: what precedes a body.
const FRAME_HEADER: usize = ETH_HEADER_LEN + CONTROL_WORD_LEN + DATA_HEADER_LEN;

/// The bytes of a stream's DATA frame header that are the same in every
/// frame: Ethernet header, control word (identity included) and endpoints
/// (frame bytes 0..38), then Stream ID and reserved (52..56). Between them
/// the per-frame fields: Packet ID, first element, count, groups, flags,
/// body length.
const FIXED_HEAD: usize = ETH_HEADER_LEN + offsets::data::PACKET_ID.start;
const FIXED_TAIL: core::ops::Range<usize> = ETH_HEADER_LEN + offsets::data::STREAM_ID.start..FRAME_HEADER;

/// The header as eight-byte words (little-endian), and in each the bits of
/// its fixed bytes: `fixed_equal` compares them by seven masked XORs, with
/// no call to `memcmp` and no byte loop.
const WORDS: usize = FRAME_HEADER / 8;
const FIXED_MASK: [u64; WORDS] = {
    assert!(FRAME_HEADER.is_multiple_of(8));
    let mut m = [0u64; WORDS];
    let mut i = 0;
    while i < FRAME_HEADER {
        if i < FIXED_HEAD || i >= FIXED_TAIL.start {
            m[i / 8] |= 0xff << (8 * (i % 8));
        }
        i += 1;
    }
    m
};

/// Word `i` of a header (little-endian).
#[inline(always)]
fn word(h: &[u8; FRAME_HEADER], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&h[8 * i..8 * i + 8]);
    u64::from_le_bytes(w)
}

/// Whether two headers agree in every fixed byte (`FIXED_HEAD`, `FIXED_TAIL`).
#[inline(always)]
fn fixed_equal(a: &[u8; FRAME_HEADER], b: &[u8; FRAME_HEADER]) -> bool {
    let mut diff = 0;
    for (i, m) in FIXED_MASK.iter().enumerate() {
        diff |= (word(a, i) ^ word(b, i)) & m;
    }
    diff == 0
}

/// The header of a DATA frame on one stream with its per-frame fields zero.
fn frame_header(class: Class, dst: Mac, src: Mac, identity: Identity, src_ep: u16, dst_ep: u16, stream_id: u16) -> [u8; FRAME_HEADER] {
    let mut header = [0u8; FRAME_HEADER];
    EthernetRepr { dst, src, ethertype: ETHERTYPE }.emit(&mut EthernetFrame::new_unchecked(&mut header[..]));
    let repr = DataRepr { class, identity, src_ep, dst_ep, packet_id: 0, first_element: 0, element_count: 0, group_count: 0, flags: 0, stream_id, body: &[] };
    repr.emit(&mut header[ETH_HEADER_LEN..]);
    header
}

/// An outgoing direct stream: a result path, or the parent.
#[derive(Debug)]
struct Outgoing {
    binding: BindingRecord,
    replay: Replay,
    /// This stream's frame header with the per-frame fields zero: copied
    /// into each frame, which then gets only those fields (building the
    /// whole header field by field cost about 200 instructions a frame).
    header: [u8; FRAME_HEADER],
}

impl Outgoing {
    fn new(binding: BindingRecord, replay: Replay, identity: Identity, src: Mac) -> Self {
        let header = frame_header(Class::DATA, binding.peer_mac, src, identity, binding.local_ep, binding.peer_ep, binding.stream_id);
        Outgoing { binding, replay, header }
    }

    /// One DATA or RESULT frame on this stream, with its next Packet ID.
    #[allow(clippy::too_many_arguments)]
    fn send(&mut self, now: u64, out: &mut impl Sink, class: Class, first: u32, count: u16, groups: u8, flags: u8, body: &[u8]) {
        self.send_filled(now, out, class, first, count, groups, flags, body.len(), |b| b.copy_from_slice(body));
    }

    /// The same frame with a body of `body_len` bytes that `fill` writes
    /// straight into it (a body built in the frame is never copied). `fill`
    /// does not run when no buffer was free (the frame is lost, as any frame
    /// the sink cannot take); it runs once when it does.
    #[allow(clippy::too_many_arguments)]
    fn send_filled(&mut self, now: u64, out: &mut impl Sink, class: Class, first: u32, count: u16, groups: u8, flags: u8, body_len: usize, fill: impl FnOnce(&mut [u8])) {
        let range = (flags & flags::INEXACT == 0).then_some((first as u64, first as u64 + count as u64));
        let end = FRAME_HEADER + body_len;
        let len = end.max(ETH_MIN_FRAME);
        let header = &self.header;
        self.replay.push(now, out, range, len, |packet_id, buf| {
            // len >= FRAME_HEADER: the chunk is always there.
            let Some((head, rest)) = buf[..len].split_first_chunk_mut::<FRAME_HEADER>() else { return };
            write_header(head, header, class, packet_id, first, count, groups, flags, body_len);
            let (body, pad) = rest.split_at_mut(body_len);
            fill(body);
            // Only short frames have padding (no call to memset for none).
            if !pad.is_empty() {
                pad.fill(0);
            }
        });
    }
}

impl Outgoing {
    /// The frame `send_filled` would send, built as a copy of the one just
    /// sent to port `from` with the same body and length (`Sink::copy_last`;
    /// streams without feedback only): only the header is written.
    #[allow(clippy::too_many_arguments)]
    fn send_copy(&mut self, out: &mut impl Sink, from: u16, class: Class, first: u32, count: u16, groups: u8, flags: u8, body_len: usize) {
        let header = &self.header;
        self.replay.push_copy(out, from, |packet_id, buf| {
            let Some(head) = buf.first_chunk_mut::<FRAME_HEADER>() else { return };
            write_header(head, header, class, packet_id, first, count, groups, flags, body_len);
        });
    }
}

/// A frame's header: the stream's template, then the per-frame fields.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn write_header(head: &mut [u8; FRAME_HEADER], header: &[u8; FRAME_HEADER], class: Class, packet_id: u32, first: u32, count: u16, groups: u8, flags: u8, body_len: usize) {
    // A fixed-size copy: a few vector moves, not a call to memcpy.
    *head = *header;
    let mut p = DataPacket::new_unchecked(&mut head[ETH_HEADER_LEN..]);
    p.set_class_code(class.into());
    p.set_packet_id(packet_id);
    p.set_first_element(first);
    p.set_element_count(count);
    p.set_group_count(groups);
    p.set_flags(flags);
    p.set_body_len(body_len as u16);
}

/// The parent of a LEAF or INTERNAL node: where partials go, and where the
/// RESULT comes back from.
#[derive(Debug)]
struct Parent {
    out: Outgoing,
    /// RESULT from the parent; absent when no result path leads through this node.
    result_in: Option<RxWindow>,
    /// A RESULT was refused for want of room on the result paths.
    starved: bool,
}

/// The data state of one operation, reserved at STAGE.
#[derive(Debug)]
pub struct OpData {
    pub context: ContextRecord,
    identity: Identity,
    node_mac: Mac,
    contributors: Vec<Contributor>,
    /// Each contributor's Stream ID, in its order: `admit_fast` finds a
    /// frame's contributor in one or two cache lines.
    stream_ids: Vec<u16>,
    /// Contributor `i` has Stream ID `i` (then each ID is its own index).
    ids_are_indices: bool,
    paths: Vec<Outgoing>,
    parent: Option<Parent>,
    acc: Accumulator,
    ring: Ring,
    /// Positions to their offset in the native output's canonical packet
    /// (`pos mod capacity`): where the next RESULT ends, without a divide.
    cut: Ring,
    /// `native_of()`, computed once.
    native: Option<(Output, NumFormat)>,
    /// FP32 RESULT and no parent: `emit_fp32`.
    fp32_results: bool,
    /// Lowest element not yet released: results (or partials) below it are sent.
    base: u64,
    /// Contributors whose coverage ends below `target`: while any is, the
    /// next packet out is not complete (`emit_ready` is not called for most
    /// packets, and `emit_fp32` does not take the minimum over contributors).
    behind: usize,
    /// Where the next packet out ends (`next_target`): the end of the
    /// canonical packet at `base` for a native output, else `base + 1`.
    target: u64,
    /// The reduction failed (INEXACT): no more DATA is taken.
    failed: bool,
    /// Every RESULT from the parent was forwarded (or its terminal INEXACT).
    results_in_done: bool,
    results_in_inexact: bool,
    /// PROGRESS and retransmission on every direct stream (replay depth > 0).
    feedback: bool,
    now: u64,
    /// AUTO candidate sets of `[base, base + masks_len)`, linear from `base`.
    masks: Vec<u8>,
    masks_len: usize,
    /// The AUTO plan of the packet being built (a kilobyte: kept here, not
    /// moved through every call that plans a packet).
    auto_plan: Option<Box<auto::PacketPlan>>,
    tally: Tally,
    scratch: Vec<u8>,
    cover: Vec<(u64, u64)>,
}

/// Window positions to accumulator slots, `pos mod slots`, by two multiplies
/// (Lemire's fastmod, exact for 32-bit positions and slot counts): a divide
/// costs tens of cycles, and every packet in and out maps a position.
#[derive(Debug, Clone, Copy)]
struct Ring {
    slots: u64,
    m: u64,
}

impl Ring {
    fn new(slots: usize) -> Self {
        let slots = slots.max(1) as u64;
        Ring { slots, m: (u64::MAX / slots).wrapping_add(1) }
    }

    fn slot(self, pos: u64) -> usize {
        if (pos | self.slots) >> 32 == 0 {
            ((self.m.wrapping_mul(pos) as u128 * self.slots as u128) >> 64) as usize
        } else {
            (pos % self.slots) as usize
        }
    }
}

impl OpData {
    /// Reserves every resource of a validated context (the only allocations).
    pub fn new(identity: Identity, context: ContextRecord, bindings: &Records<'_, BindingRecord>, node_mac: Mac, rto_ns: u64) -> Self {
        let policy = match context.accumulator {
            AccumulatorPolicy::KULISCH_FIXED => Policy::Kulisch { width_bits: context.kulisch_width },
            _ => Policy::Fp32Arrival,
        };
        let slots = context.window_elements as usize;
        let depth = context.replay_depth as usize;
        let frame_len = context.mtu as usize + ETH_HEADER_LEN;
        let stream = |b: BindingRecord| Outgoing::new(b, Replay::new(b.port, depth, frame_len, context.window_intervals as u32, context.window_bytes, rto_ns), identity, node_mac);
        let contributors: Vec<Contributor> = bindings
            .iter()
            .filter(|b| b.has(direction::DATA_IN))
            .map(|b| Contributor {
                binding: b,
                held: Vec::with_capacity(context.window_intervals as usize),
                held_bytes: 0,
                covered: 0,
                starved: false,
                largest: 1,
                template: frame_header(Class::DATA, node_mac, b.peer_mac, identity, b.peer_ep, b.local_ep, b.stream_id),
            })
            .collect();
        let reduce_to = (context.semantics == Semantics::REDUCE).then_some(context.dest_rank);
        let paths = bindings.iter().filter(|b| b.has(direction::RESULT_OUT) && reduce_to.is_none_or(|r| b.peer_kind == PeerKind::SWITCH || b.rank == r)).map(stream).collect();
        let parent = bindings.iter().find(|b| b.has(direction::DATA_OUT)).map(|b| Parent {
            out: stream(b),
            result_in: b.has(direction::RESULT_IN).then(|| RxWindow::new(context.window_intervals as usize)),
            starved: false,
        });
        let behind = contributors.len();
        let stream_ids: Vec<u16> = contributors.iter().map(|c| c.binding.stream_id).collect();
        let mut data = OpData {
            context,
            identity,
            node_mac,
            contributors,
            ids_are_indices: stream_ids.iter().enumerate().all(|(i, s)| i == *s as usize),
            stream_ids,
            paths,
            parent,
            acc: Accumulator::new(policy, slots),
            ring: Ring::new(slots),
            cut: Ring::new(0),
            native: None,
            fp32_results: false,
            base: 0,
            behind,
            target: 1,
            failed: false,
            results_in_done: false,
            results_in_inexact: false,
            feedback: depth > 0,
            now: 0,
            masks: vec![0; slots],
            masks_len: 0,
            auto_plan: None,
            tally: Tally::default(),
            scratch: vec![0; context.mtu as usize],
            cover: Vec::with_capacity(context.window_intervals as usize),
        };
        data.native = data.native_of();
        data.fp32_results = data.parent.is_none() && matches!(data.native, Some((Output::Fp32, _)));
        if let Some((_, format)) = data.native() {
            data.cut = Ring::new(capacity(format, context.mtu));
        }
        data.target = data.next_target();
        data
    }

    /// `target` for the current `base`: a native output's packets are cut
    /// canonically (packet k covers `[k * cap, (k + 1) * cap)`, `plan`), so
    /// nothing goes out before every contributor covers the one at `base`;
    /// AUTO plans whatever is complete. A native output only ever releases
    /// whole canonical packets, so `base` is on a cut (or the end) and the
    /// packet at it ends `cap` further on.
    fn next_target(&self) -> u64 {
        if self.native.is_some() {
            debug_assert!(self.cut.slot(self.base) == 0 || self.base >= self.len(), "base {} is not on a cut", self.base);
            (self.base + self.cut.slots).min(self.len())
        } else {
            self.base + 1
        }
    }

    fn len(&self) -> u64 {
        self.context.vector_len as u64
    }

    /// Every contribution reduced and sent on (or the reduction failed).
    fn reduced(&self) -> bool {
        self.failed || self.base >= self.len()
    }

    fn streams_idle(&self) -> bool {
        self.paths.iter().all(|p| p.replay.is_idle()) && self.parent.as_ref().is_none_or(|p| p.out.replay.is_idle())
    }

    /// Whether the node's part is over: reduced, every RESULT from the parent
    /// forwarded, and every frame sent acknowledged by its receiver.
    pub fn done(&self) -> bool {
        let results_in = self.parent.as_ref().is_none_or(|p| p.result_in.is_none() || self.results_in_done);
        self.reduced() && results_in && self.streams_idle()
    }

    /// Frames sent since the last call.
    pub fn take_tally(&mut self) -> Tally {
        std::mem::take(&mut self.tally)
    }

    /// Whether RESULT comes to this node from a parent (and is forwarded).
    pub fn takes_results(&self) -> bool {
        self.parent.as_ref().is_some_and(|p| p.result_in.is_some())
    }

    /// Lowest element whose result (or partial) is not yet sent.
    pub fn base(&self) -> u64 {
        self.base
    }

    pub fn set_now(&mut self, now: u64) {
        self.now = now;
    }

    /// Retransmission statistics of every outgoing stream.
    pub fn stream_stats(&self) -> StreamStats {
        let mut s = StreamStats::default();
        for p in &self.paths {
            s.add(&p.replay.stats);
        }
        if let Some(p) = &self.parent {
            s.add(&p.out.replay.stats);
        }
        s
    }

    /// When the earliest retransmission timer of the operation expires.
    pub fn deadline(&self) -> Option<u64> {
        // Called every polling loop: operations without feedback have no timers.
        if !self.feedback {
            return None;
        }
        let paths = self.paths.iter().filter_map(|p| p.replay.deadline());
        paths.chain(self.parent.iter().filter_map(|p| p.out.replay.deadline())).min()
    }

    pub fn on_timeout(&mut self, out: &mut impl Sink) {
        let now = self.now;
        for p in &mut self.paths {
            p.replay.on_timeout(now, out);
        }
        if let Some(p) = &mut self.parent {
            p.out.replay.on_timeout(now, out);
        }
    }

    /// Admits one DATA packet after checking it against the operation, then
    /// reduces and emits whatever it completed. Nothing changes on a reject.
    /// With feedback, the contributor hears the outcome in a PROGRESS frame.
    pub fn admit(&mut self, port: u16, src: Mac, d: &DataRepr<'_>, frame_len: usize, out: &mut impl Sink) -> Result<Admitted, DataReject> {
        if self.failed {
            return Err(DataReject::OperationFailed);
        }
        if !self.feedback && self.reduced() {
            return Err(DataReject::OperationDone);
        }
        let ci = self.contributors.iter().position(|c| c.binding.stream_id == d.stream_id).ok_or(DataReject::UnknownStream)?;
        let b = self.contributors[ci].binding;
        bound_to(&b, port, src, d)?;
        self.admit_bound(ci, d, frame_len, out)
    }

    /// The common DATA frame, without the general parse: one FP32 group
    /// filling the body, no padding, its header equal to a contributor's
    /// template in every fixed byte (so its destination, source, identity,
    /// generation, endpoints and Stream ID are the binding's) and arriving
    /// on that binding's port. The caller has checked the frame's class,
    /// body length, count, group count, flags, descriptor and MTU
    /// (`Node::data_fast`). `None`: not such a frame (nothing changed; the
    /// caller parses it in full), else what `admit` would have answered.
    #[inline(always)]
    pub fn admit_fast(&mut self, port: u16, frame: &[u8], out: &mut impl Sink) -> Option<Result<Admitted, DataReject>> {
        let h = frame.first_chunk::<FRAME_HEADER>()?;
        let sid = u16::from_be_bytes([h[FIXED_TAIL.start], h[FIXED_TAIL.start + 1]]);
        let ci = match self.stream_ids.get(sid as usize) {
            // Stream IDs 0..n in contributor order (the usual binding): no search.
            Some(s) if self.ids_are_indices && *s == sid => sid as usize,
            _ => self.stream_ids.iter().position(|s| *s == sid)?,
        };
        let c = self.contributors.get(ci)?;
        if c.binding.port != port || !fixed_equal(&c.template, h) {
            return None;
        }
        let p = DataPacket::new_unchecked(&h[ETH_HEADER_LEN..]);
        let (packet_id, count) = (p.packet_id(), p.element_count());
        let body = frame.get(FRAME_HEADER..)?;
        let values = body.get(GROUP_DESCRIPTOR_LEN..)?;
        if self.failed {
            return Some(Err(DataReject::OperationFailed));
        }
        if !self.feedback && self.reduced() {
            return Some(Err(DataReject::OperationDone));
        }
        // The shape checks of `admit_from` that the frame's checks left: its
        // range against the vector (`DataRepr::check_against_vector` for a
        // frame that is not INEXACT, which the caller checked).
        let first = p.first_element() as u64;
        let end = first + count as u64;
        let len = self.context.vector_len as u64;
        let r = if end > len {
            Err(DataReject::RangeOutsideVector)
        } else if (p.flags() & flags::LAST != 0) != (end == len) {
            Err(DataReject::LastFlagMismatch)
        } else {
            self.admit_window(ci, packet_id, body, Groups::One(GroupRepr { format: NumFormat::Fp32, count, values }), first, end, frame.len(), out)
        };
        Some(self.progress_after(ci, packet_id, r, out))
    }

    /// `admit` once the frame's stream and binding are known.
    fn admit_bound(&mut self, ci: usize, d: &DataRepr<'_>, frame_len: usize, out: &mut impl Sink) -> Result<Admitted, DataReject> {
        let r = self.admit_from(ci, d, frame_len, out);
        self.progress_after(ci, d.packet_id, r, out)
    }

    /// With feedback, the contributor hears an admission's outcome.
    fn progress_after(&mut self, ci: usize, packet_id: u32, r: Result<Admitted, DataReject>, out: &mut impl Sink) -> Result<Admitted, DataReject> {
        if self.feedback {
            let status = progress_status(&r);
            self.progress_to_contributor(ci, packet_id, status, 0, out);
        }
        r
    }

    fn admit_from(&mut self, ci: usize, d: &DataRepr<'_>, frame_len: usize, out: &mut impl Sink) -> Result<Admitted, DataReject> {
        if d.is_inexact() {
            // A child's terminal INEXACT: the whole operation fails (trees; a rank never sends it).
            self.fail(out);
            return Ok(Admitted::Applied);
        }
        d.check_against_vector(self.context.vector_len, 0).map_err(|e| vector_reject(e.reason))?;
        let kulisch = match self.acc.policy() {
            Policy::Kulisch { width_bits } => Some(width_bits),
            Policy::Fp32Arrival => None,
        };
        // A body of one group (nearly every packet) is read once, here, and
        // applied from this copy below; others are walked twice.
        // A single FP32 group (nearly every packet) by one compare of its
        // descriptor: every policy takes FP32.
        let single = match d.single_fp32_group() {
            Some(g) => Some(g),
            None if d.group_count == 1 => d.groups().next(),
            None => None,
        };
        let allowed = |g: &GroupRepr<'_>| !matches!(g.format, NumFormat::Kulisch { width_bits } if kulisch != Some(width_bits));
        let ok = match &single {
            Some(g) => allowed(g),
            None => d.groups().all(|g| allowed(&g)),
        };
        if !ok {
            return Err(DataReject::FormatNotAllowed);
        }
        let groups = match single {
            Some(g) => Groups::One(g),
            None => Groups::All(d),
        };
        self.admit_window(ci, d.packet_id, d.body, groups, d.first_element as u64, d.end_element(), frame_len, out)
    }

    /// Admission of a well-shaped packet `[first, end)` to the window: a
    /// duplicate, or room in the window and in the contributor's credit,
    /// then applied (`groups`: its one group, or every group walked).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn admit_window(&mut self, ci: usize, packet_id: u32, body: &[u8], groups: Groups<'_>, first: u64, end: u64, frame_len: usize, out: &mut impl Sink) -> Result<Admitted, DataReject> {
        let digest = digest(first, end, body);
        let c = &self.contributors[ci];
        // One walk of the held packets: the first with this Packet ID
        // decides at once; an overlap is refused after the checks below.
        let mut overlap = false;
        for h in &c.held {
            if h.packet_id == packet_id {
                return if h.digest == digest && h.first == first && h.end == end { Ok(Admitted::Duplicate) } else { Err(DataReject::ChangedRetransmit) };
            }
            overlap |= h.first < end && first < h.end;
        }
        if self.feedback && end <= c.covered.max(self.base) {
            // A copy of a range already taken (and perhaps released): its sender lost our PROGRESS.
            return Ok(Admitted::Duplicate);
        }
        if self.reduced() {
            return Err(DataReject::OperationDone);
        }
        if first < self.base {
            return Err(DataReject::BelowWindow);
        }
        if end > self.base + self.context.window_elements as u64 {
            self.contributors[ci].starved = true;
            return Err(DataReject::BeyondWindow);
        }
        if overlap {
            return Err(DataReject::Overlap);
        }
        // With feedback, the last interval and frame of the window are kept
        // for the packet at the contributor's watermark: packets above a hole
        // can never fill the window so that the hole cannot close.
        let fills = first <= c.covered.max(self.base);
        let (spare_intervals, spare_bytes) = if self.feedback && !fills { (1, self.context.mtu as u64 + ETH_HEADER_LEN as u64) } else { (0, 0) };
        if c.held.len() + spare_intervals >= self.context.window_intervals as usize {
            self.contributors[ci].starved = true;
            return Err(DataReject::IntervalsExhausted);
        }
        if c.held_bytes as u64 + frame_len as u64 + spare_bytes > self.context.window_bytes as u64 {
            self.contributors[ci].starved = true;
            return Err(DataReject::BytesExhausted);
        }
        // Admitted: apply every group at its global position.
        match groups {
            Groups::One(g) => self.apply_group(first, &g),
            Groups::All(d) => {
                let mut pos = first;
                for g in d.groups() {
                    self.apply_group(pos, &g);
                    pos += g.count as u64;
                }
            }
        }
        let c = &mut self.contributors[ci];
        c.largest = c.largest.max(end - first);
        c.held.push(Held { packet_id, first, end, digest, bytes: frame_len as u32 });
        c.held_bytes += frame_len as u32;
        let was = c.covered;
        c.covered = c.covered_from(was.max(self.base));
        // With feedback, a packet wholly below the watermark is summed and
        // its copies are known by the watermark alone: it no longer counts
        // against the window's intervals and bytes. (Kept until the window
        // moved, they could fill them while a second hole waits for its
        // packet, and with the base held by a slower contributor nothing
        // would ever free them.)
        if self.feedback && c.covered > was {
            c.forget_below(c.covered);
        }
        if was < self.target && c.covered >= self.target {
            self.behind -= 1;
        }
        if self.behind == 0 {
            self.emit_ready(out);
        }
        Ok(Admitted::Applied)
    }

    /// Adds one admitted group's values, which start at global position
    /// `pos`, to the window (split where the ring wraps).
    #[inline(always)]
    fn apply_group(&mut self, mut pos: u64, g: &GroupRepr<'_>) {
        let slots = self.acc.slots();
        let w = g.format.value_bytes();
        let (mut vals, mut left) = (g.values, g.count as usize);
        while left > 0 {
            let slot = self.ring.slot(pos);
            let n = left.min(slots - slot);
            let (now, rest) = vals.split_at(n * w);
            // Validated shapes: accumulate cannot fail here (formats checked by the caller, ranges in window).
            let _ = self.acc.accumulate(slot, g.format, now);
            (vals, left) = (rest, left - n);
            pos += n as u64;
        }
    }

    /// PROGRESS to a contributor: its watermark, holes and remaining credit.
    fn progress_to_contributor(&mut self, ci: usize, packet_id: u32, status: ProgressStatus, flags: u8, out: &mut impl Sink) {
        let c = &self.contributors[ci];
        let committed = c.covered.max(self.base);
        let cov = Coverage::of(committed, c.held.iter().map(|h| (h.first, h.end)), &mut self.cover);
        let complete = if committed >= self.len() { progress_flags::COMPLETE } else { 0 };
        // Credit: free intervals and bytes, and no more packets (of the
        // largest size it sent) than fit between its highest element and
        // the window's end: the sender cannot see the window in elements.
        let reach = c.held.iter().map(|h| h.end).max().unwrap_or(0).max(committed);
        let span = (self.base + self.context.window_elements as u64).saturating_sub(reach);
        let credit = Credit {
            intervals: (self.context.window_intervals as usize).saturating_sub(c.held.len()).min((span / c.largest) as usize),
            bytes: (self.context.window_bytes as u64).saturating_sub(c.held_bytes as u64),
        };
        if credit.intervals == 0 && committed < self.len() {
            self.contributors[ci].starved = true;
        }
        emit_progress(out, self.identity, self.node_mac, &self.contributors[ci].binding, packet_id, status, flags | complete, &cov, credit);
        self.tally.progress += 1;
    }

    /// Admits one RESULT from the parent and forwards it on every result path
    /// (the same ranges and body; each path has its own Packet IDs). A RESULT
    /// is never reduced.
    pub fn admit_result(&mut self, port: u16, src: Mac, d: &DataRepr<'_>, out: &mut impl Sink) -> Result<Admitted, DataReject> {
        let Some(parent) = self.parent.as_ref().filter(|p| p.result_in.is_some()) else { return Err(DataReject::ResultNotInput) };
        let b = parent.out.binding;
        if d.stream_id != b.stream_id {
            return Err(DataReject::UnknownStream);
        }
        bound_to(&b, port, src, d)?;
        let r = self.forward_result(d, out);
        if self.feedback {
            let status = progress_status(&r);
            self.progress_to_parent(d.packet_id, status, 0, out);
        }
        r
    }

    fn forward_result(&mut self, d: &DataRepr<'_>, out: &mut impl Sink) -> Result<Admitted, DataReject> {
        let now = self.now;
        if d.is_inexact() {
            if self.results_in_inexact {
                return Ok(Admitted::Duplicate);
            }
            for p in &mut self.paths {
                p.send(now, out, Class::RESULT, 0, 0, 0, flags::LAST | flags::INEXACT, &[]);
                self.tally.results += 1;
            }
            self.results_in_inexact = true;
            self.results_in_done = true;
            return Ok(Admitted::Applied);
        }
        d.check_against_vector(self.context.vector_len, 0).map_err(|e| vector_reject(e.reason))?;
        let (first, end) = (d.first_element as u64, d.end_element());
        let digest = digest(first, end, d.body);
        let Some(parent) = self.parent.as_mut() else { return Err(DataReject::ResultNotInput) };
        let Some(rx) = parent.result_in.as_mut() else { return Err(DataReject::ResultNotInput) };
        match rx.check(d.packet_id, first, end, digest) {
            Ok(false) => return Ok(Admitted::Duplicate),
            Ok(true) => {}
            Err(RxRefusal::Overlap) => return Err(DataReject::Overlap),
            Err(RxRefusal::ChangedRetransmit) => return Err(DataReject::ChangedRetransmit),
            Err(RxRefusal::IntervalsExhausted) => return Err(DataReject::IntervalsExhausted),
        }
        if self.results_in_done {
            return Err(DataReject::OperationDone);
        }
        if !self.paths.iter().all(|p| p.replay.has_room()) {
            parent.starved = true;
            return Err(DataReject::ResultBackpressure);
        }
        rx.record(d.packet_id, first, end, digest);
        if rx.committed() >= self.context.vector_len as u64 {
            self.results_in_done = true;
        }
        for p in &mut self.paths {
            p.send(now, out, Class::RESULT, d.first_element, d.element_count, d.group_count, d.flags, d.body);
            self.tally.forwarded += 1;
        }
        Ok(Admitted::Applied)
    }

    /// PROGRESS to the parent about the RESULT it sends: credit is the room
    /// left on the result paths, where accepted RESULT waits for its own acknowledgement.
    fn progress_to_parent(&mut self, packet_id: u32, status: ProgressStatus, flags: u8, out: &mut impl Sink) {
        let room = self.paths.iter().map(|p| p.replay.free()).min().unwrap_or(0);
        let Some(parent) = self.parent.as_mut() else { return };
        let Some(rx) = parent.result_in.as_mut() else { return };
        let cov = rx.coverage();
        let intervals = rx.free_intervals().min(room);
        let credit = Credit { intervals, bytes: intervals as u64 * (self.context.mtu as u64 + ETH_HEADER_LEN as u64) };
        let complete = if rx.committed() >= self.context.vector_len as u64 { progress_flags::COMPLETE } else { 0 };
        emit_progress(out, self.identity, self.node_mac, &parent.out.binding, packet_id, status, flags | complete, &cov, credit);
        self.tally.progress += 1;
    }

    /// Applies PROGRESS from the receiver of one of our streams; freed room
    /// lets held results go out and refused senders hear of it.
    pub fn on_progress(&mut self, port: u16, src: Mac, p: &ProgressRepr<'_>, out: &mut impl Sink) -> Result<(), ProgressRefusal> {
        if !self.feedback {
            return Err(ProgressRefusal::NoFeedback);
        }
        let now = self.now;
        let stream = match self.parent.as_mut().filter(|x| x.out.binding.stream_id == p.stream_id) {
            Some(x) => &mut x.out,
            None => self.paths.iter_mut().find(|x| x.binding.stream_id == p.stream_id).ok_or(ProgressRefusal::UnknownStream)?,
        };
        let b = stream.binding;
        if p.dst_ep != b.local_ep || p.src_ep != b.peer_ep || port != b.port || src != b.peer_mac {
            return Err(ProgressRefusal::BindingMismatch);
        }
        stream.replay.on_progress(now, p, out);
        self.emit_ready(out);
        let wake = self.parent.as_ref().is_some_and(|x| x.starved) && self.paths.iter().all(|x| x.replay.has_room());
        if wake {
            if let Some(x) = self.parent.as_mut() {
                x.starved = false;
            }
            self.progress_to_parent(0, ProgressStatus::ACCEPTED, progress_flags::WINDOW_UPDATE, out);
        }
        Ok(())
    }

    /// Every element below this is delivered by every contributor.
    fn complete_to(&self) -> u64 {
        self.contributors.iter().map(|c| c.covered.max(self.base)).min().unwrap_or(self.base)
    }

    /// Whether the next RESULT (or partial) has room on every stream it goes to.
    fn room(&self) -> bool {
        match &self.parent {
            Some(p) => p.out.replay.has_room(),
            None => self.paths.iter().all(|p| p.replay.has_room()),
        }
    }

    /// Sends the packets whose whole range (and AUTO lookahead) is complete,
    /// in order, while their streams have room.
    fn emit_ready(&mut self, out: &mut impl Sink) {
        if self.fp32_results {
            self.emit_fp32(out);
        } else {
            self.emit_planned(out);
        }
    }

    /// `emit_ready` for a node that sends FP32 RESULT (no parent, FP32
    /// output; nearly every operation): the canonical packet that starts
    /// at `base` when it is complete, its values taken in one run (straight
    /// into the frame for one FP32_ARRIVAL path), without a plan. The
    /// same frames, in the same order, as `emit_planned`, which it leaves
    /// a packet cut by the ring's end to.
    fn emit_fp32(&mut self, out: &mut impl Sink) {
        let len = self.len();
        let slots = self.acc.slots();
        while !self.failed && self.behind == 0 {
            if !self.paths.iter().all(|p| p.replay.has_room()) {
                return;
            }
            // Every contributor covers the canonical packet at `base`
            // (`behind` is zero), which ends at `target`.
            let (base, end) = (self.base, self.target);
            if end <= base {
                return;
            }
            debug_assert!(self.complete_to() >= end, "behind is zero before the packet at {base} is complete");
            let count = (end - base) as usize;
            let first_slot = self.ring.slot(base);
            if slots - first_slot < count {
                return self.emit_planned(out);
            }
            let flags = if end == len { flags::LAST } else { 0 };
            let descriptor = GroupRepr { format: NumFormat::Fp32, count: count as u16, values: &[] }.descriptor().to_be_bytes();
            let (now, acc) = (self.now, &mut self.acc);
            let taken = match (acc.policy(), &mut self.paths[..]) {
                // Its values cannot fail to round: written straight into the frame.
                (Policy::Fp32Arrival, [path]) => {
                    let mut taken = false;
                    path.send_filled(now, out, Class::RESULT, base as u32, count as u16, 1, flags, 4 + 4 * count, |body| {
                        body[..4].copy_from_slice(&descriptor);
                        taken = acc.take_fp32_run(first_slot, count, &mut body[4..]).is_ok();
                    });
                    self.tally.results += 1;
                    taken
                }
                // Without feedback, into the first path's frame that the sink
                // has a buffer for; the others get a copy of it with their
                // own header (no scratch body copied into every frame).
                (Policy::Fp32Arrival, paths) if !self.feedback && out.copies_last() => {
                    let mut from = None;
                    for path in paths {
                        match from {
                            None => {
                                let mut taken = false;
                                path.send_filled(now, out, Class::RESULT, base as u32, count as u16, 1, flags, 4 + 4 * count, |body| {
                                    body[..4].copy_from_slice(&descriptor);
                                    taken = acc.take_fp32_run(first_slot, count, &mut body[4..]).is_ok();
                                });
                                from = taken.then_some(path.binding.port);
                            }
                            Some(f) => path.send_copy(out, f, Class::RESULT, base as u32, count as u16, 1, flags, 4 + 4 * count),
                        }
                        self.tally.results += 1;
                    }
                    from.is_some()
                }
                (_, paths) => {
                    let body = &mut self.scratch[..4 + 4 * count];
                    body[..4].copy_from_slice(&descriptor);
                    if acc.take_fp32_run(first_slot, count, &mut body[4..]).is_err() {
                        self.fail(out);
                        return;
                    }
                    for path in paths {
                        path.send(now, out, Class::RESULT, base as u32, count as u16, 1, flags, body);
                        self.tally.results += 1;
                    }
                    true
                }
            };
            self.release(end, taken, out);
        }
    }

    /// `emit_ready` for every other node: each packet planned (AUTO,
    /// partials, other output formats, a packet cut by the ring's end).
    fn emit_planned(&mut self, out: &mut impl Sink) {
        let len = self.len();
        while !self.failed {
            // Nothing new is complete (most packets), or no stream has room.
            if self.behind > 0 || !self.room() {
                return;
            }
            let ready = self.complete_to();
            if ready <= self.base {
                return;
            }
            let at_end = ready == len;
            let planned = match self.plan(ready, at_end) {
                Ok(Some(p)) => p,
                Ok(None) => return,
                Err(_) => {
                    self.fail(out);
                    return;
                }
            };
            match self.send_output(&planned, out) {
                Ok((count, taken)) => self.release(self.base + count as u64, taken, out),
                Err(_) => {
                    self.fail(out);
                    return;
                }
            }
        }
    }

    /// The format of what this node emits: partials under the partial policy
    /// when it has a parent, else the output format.
    fn emitted(&self) -> OutputFormat {
        if self.parent.is_none() {
            return self.context.output;
        }
        match self.context.partial {
            PartialPolicy::KULISCH => OutputFormat::KULISCH,
            PartialPolicy::AUTO => OutputFormat::AUTO,
            _ => OutputFormat::FP32,
        }
    }

    /// The single format of what this node emits, unless it is AUTO (fixed
    /// at STAGE: `native` holds it).
    fn native(&self) -> Option<(Output, NumFormat)> {
        self.native
    }

    fn native_of(&self) -> Option<(Output, NumFormat)> {
        match self.emitted() {
            OutputFormat::INT8 => Some((Output::Int8, NumFormat::Int8)),
            OutputFormat::FP16 => Some((Output::Fp16, NumFormat::Fp16)),
            OutputFormat::BF16 => Some((Output::Bf16, NumFormat::Bf16)),
            OutputFormat::KULISCH => Some((Output::Kulisch, NumFormat::Kulisch { width_bits: self.context.kulisch_width })),
            OutputFormat::AUTO => None,
            _ => Some((Output::Fp32, NumFormat::Fp32)),
        }
    }

    /// The next packet's groups: `(format, count)` list and value count.
    fn plan(&mut self, ready: u64, at_end: bool) -> Result<Option<Plan>, ArithError> {
        let avail = (ready - self.base) as usize;
        let budget = self.context.mtu as usize - offsets::data::BODY;
        if let Some((out, format)) = self.native() {
            // Canonical cut: packet k covers [k * cap, (k + 1) * cap).
            let end = (self.base - self.cut.slot(self.base) as u64 + self.cut.slots).min(self.len());
            if ready < end {
                return Ok(None);
            }
            return Ok(Some(Plan::Native { out, format, count: (end - self.base) as usize }));
        }
        // Candidate sets are computed once per element, when it completes.
        for i in self.masks_len..avail {
            self.masks[i] = self.acc.candidates(self.ring.slot(self.base + i as u64))?;
        }
        self.masks_len = self.masks_len.max(avail);
        let kbits = self.acc.kulisch_bits();
        let Some(p) = auto::plan_packet(&self.masks[..avail], kbits, budget, at_end).map_err(|_| ArithError::Inexact { slot: 0 })? else { return Ok(None) };
        match &mut self.auto_plan {
            Some(b) => **b = p,
            None => self.auto_plan = Some(Box::new(p)),
        }
        Ok(Some(Plan::Auto))
    }

    /// Writes the planned groups into the scratch body: (body bytes, groups, values).
    fn write_groups(&mut self, plan: &Plan) -> Result<(usize, u8, usize), ArithError> {
        let ring = self.ring;
        let mut body_len = 0;
        let mut groups = 0u8;
        let mut pos = self.base;
        let mut write_group = |acc: &mut Accumulator, scratch: &mut [u8], format: NumFormat, outf: Output, count: usize| -> Result<(), ArithError> {
            let start = body_len;
            let mut at = start + GROUP_DESCRIPTOR_LEN;
            for _ in 0..count {
                at += acc.write(ring.slot(pos), outf, &mut scratch[at..])?;
                pos += 1;
            }
            let vlen = at - start - GROUP_DESCRIPTOR_LEN;
            let pad = (4 - vlen % 4) % 4;
            scratch[at..at + pad].fill(0);
            let g = GroupRepr { format, count: count as u16, values: &[] };
            scratch[start..start + 4].copy_from_slice(&g.descriptor().to_be_bytes());
            body_len = at + pad;
            groups += 1;
            Ok(())
        };
        let count = match plan {
            Plan::Native { out: o, format, count } => {
                write_group(&mut self.acc, &mut self.scratch, *format, *o, *count)?;
                *count
            }
            Plan::Auto => {
                let kbits = self.context.kulisch_width;
                let Some(p) = &self.auto_plan else { return Err(ArithError::Inexact { slot: 0 }) };
                for g in p.groups() {
                    let outf = Output::from_index(g.format);
                    let format = outf.num_format(kbits);
                    write_group(&mut self.acc, &mut self.scratch, format, outf, g.count as usize)?;
                }
                p.values
            }
        };
        Ok((body_len, groups, count))
    }

    /// Builds the body once and sends it: as a partial to the parent, or as
    /// RESULT on every path. Returns the values sent, and whether their slots
    /// were cleared as they were read (the FP32 run is taken in one pass).
    fn send_output(&mut self, plan: &Plan, out: &mut impl Sink) -> Result<(usize, bool), ArithError> {
        let slots = self.acc.slots();
        let first_slot = self.ring.slot(self.base);
        // One FP32_ARRIVAL run to one result path: written straight into the
        // frame (its values cannot fail to round, so nothing is sent before
        // an error could be found).
        let len = self.len();
        if let (Plan::Native { out: Output::Fp32, format, count }, Policy::Fp32Arrival, None, [path]) = (plan, self.acc.policy(), &self.parent, &mut self.paths[..]) {
            if slots - first_slot >= *count {
                let count = *count;
                let flags = if self.base + count as u64 == len { flags::LAST } else { 0 };
                let g = GroupRepr { format: *format, count: count as u16, values: &[] };
                let acc = &mut self.acc;
                let mut taken = false;
                path.send_filled(self.now, out, Class::RESULT, self.base as u32, count as u16, 1, flags, 4 + 4 * count, |body| {
                    body[..4].copy_from_slice(&g.descriptor().to_be_bytes());
                    taken = acc.take_fp32_run(first_slot, count, &mut body[4..]).is_ok();
                });
                self.tally.results += 1;
                return Ok((count, taken));
            }
        }
        let (body_len, groups, count, taken) = match plan {
            Plan::Native { out: Output::Fp32, format, count } if slots - first_slot >= *count => {
                // One run of FP32 values: the bulk writer (no per-value dispatch), clearing as it reads.
                let g = GroupRepr { format: *format, count: *count as u16, values: &[] };
                self.scratch[..4].copy_from_slice(&g.descriptor().to_be_bytes());
                self.acc.take_fp32_run(first_slot, *count, &mut self.scratch[4..4 + 4 * count])?;
                (4 + 4 * count, 1u8, *count, true)
            }
            _ => {
                let (body_len, groups, count) = self.write_groups(plan)?;
                (body_len, groups, count, false)
            }
        };
        let last = self.base + count as u64 == self.len();
        let body = &self.scratch[..body_len];
        let flags = if last { flags::LAST } else { 0 };
        let (now, first) = (self.now, self.base as u32);
        if let Some(p) = &mut self.parent {
            p.out.send(now, out, Class::DATA, first, count as u16, groups, flags, body);
            self.tally.partials += 1;
        } else {
            for path in &mut self.paths {
                path.send(now, out, Class::RESULT, first, count as u16, groups, flags, body);
                self.tally.results += 1;
            }
        }
        Ok((count, taken))
    }

    /// Frees `[base, to)`: accumulator slots (unless `cleared` says they were
    /// taken already), and packets wholly below `to`; contributors that were
    /// refused for want of window hear that it moved.
    fn release(&mut self, to: u64, cleared: bool, out: &mut impl Sink) {
        let slots = self.acc.slots();
        let mut pos = self.base;
        while pos < to && !cleared {
            let slot = self.ring.slot(pos);
            let n = ((to - pos) as usize).min(slots - slot);
            self.acc.clear(slot, n);
            pos += n as u64;
        }
        if self.masks_len > 0 {
            let shift = ((to - self.base) as usize).min(self.masks_len);
            self.masks.copy_within(shift..self.masks_len, 0);
            self.masks_len -= shift;
        }
        self.base = to;
        let target = self.next_target();
        self.target = target;
        let mut behind = 0;
        for c in &mut self.contributors {
            behind += (c.covered < target) as usize;
            // Every packet released (in-order traffic: none or the one
            // packet just completed, no loop): no compaction.
            let all = match c.held[..] {
                [] => true,
                [h] => h.end <= to,
                _ => c.held.iter().all(|h| h.end <= to),
            };
            if all {
                c.held.clear();
                c.held_bytes = 0;
            } else {
                c.forget_below(to);
            }
        }
        self.behind = behind;
        // Then, in the same order, the refused hear that the window moved
        // (each PROGRESS reads only its own contributor's state).
        if self.feedback {
            for ci in 0..self.contributors.len() {
                if self.contributors[ci].starved {
                    self.contributors[ci].starved = false;
                    self.progress_to_contributor(ci, 0, ProgressStatus::ACCEPTED, progress_flags::WINDOW_UPDATE, out);
                }
            }
        }
    }

    /// Ends the reduction with the terminal ACCUMULATION_INEXACT: to the
    /// parent as DATA, or on every result path as RESULT.
    fn fail(&mut self, out: &mut impl Sink) {
        if self.failed {
            return;
        }
        self.failed = true;
        let now = self.now;
        if let Some(p) = &mut self.parent {
            p.out.send(now, out, Class::DATA, 0, 0, 0, flags::LAST | flags::INEXACT, &[]);
            self.tally.partials += 1;
        } else {
            for path in &mut self.paths {
                path.send(now, out, Class::RESULT, 0, 0, 0, flags::LAST | flags::INEXACT, &[]);
                self.tally.results += 1;
            }
        }
    }
}

/// What `admit_window` applies: the frame's one group (read once by the
/// caller), or every group of a parsed frame.
enum Groups<'a> {
    One(GroupRepr<'a>),
    All(&'a DataRepr<'a>),
}

enum Plan {
    Native {
        out: Output,
        format: NumFormat,
        count: usize,
    },
    /// The plan is in `OpData::auto_plan`.
    Auto,
}

/// Whether a DATA or RESULT frame comes over the edge `b` binds: its
/// endpoints, ingress port and source MAC.
fn vector_reject(r: Reason) -> DataReject {
    match r {
        Reason::RangeOutsideVector => DataReject::RangeOutsideVector,
        _ => DataReject::LastFlagMismatch,
    }
}

fn bound_to(b: &BindingRecord, port: u16, src: Mac, d: &DataRepr<'_>) -> Result<(), DataReject> {
    if d.dst_ep != b.local_ep || d.src_ep != b.peer_ep {
        return Err(DataReject::EndpointMismatch);
    }
    if port != b.port {
        return Err(DataReject::WrongPort);
    }
    if src != b.peer_mac {
        return Err(DataReject::WrongSourceMac);
    }
    Ok(())
}

/// What PROGRESS tells the sender about its packet.
fn progress_status(r: &Result<Admitted, DataReject>) -> ProgressStatus {
    match r {
        Ok(Admitted::Applied) => ProgressStatus::ACCEPTED,
        Ok(Admitted::Duplicate) => ProgressStatus::DUPLICATE,
        Err(_) => ProgressStatus::REJECTED,
    }
}

#[cfg(test)]
mod tests {
    use super::{Outgoing, Ring};
    use crate::engine::Sink;
    use crate::wire::*;

    /// Hands out buffers full of 0xa5, so that a byte the sender forgets shows.
    struct Stained(Vec<(u16, Vec<u8>)>);
    impl Sink for Stained {
        fn buffer(&mut self, port: u16, len: usize) -> Option<&mut [u8]> {
            self.0.push((port, vec![0xa5; len]));
            self.0.last_mut().map(|(_, f)| f.as_mut_slice())
        }
    }

    #[test]
    fn frames_from_the_header_template_equal_typed_emission() {
        let b = BindingRecord {
            directions: direction::RESULT_OUT,
            peer_kind: PeerKind::RANK,
            stream_id: 0x0203,
            local_ep: 0x0405,
            peer_ep: 0x0607,
            peer_mac: Mac([2, 0, 0, 0, 0, 0x11]),
            port: 3,
            rank: 1,
            terms: 1,
        };
        let identity = Identity { job: 0x0102_0304_0506_0708, group: 0x090a, group_gen: 0x0b0c, op: 0x0d0e, op_gen: 0x0f10_1112 };
        let node = crate::fixtures::SWITCH_MAC;
        for depth in [0usize, 4] {
            let mut o = Outgoing::new(b, crate::engine::Replay::new(b.port, depth, 1514, 8, 1 << 20, 1_000), identity, node);
            let mut sink = Stained(Vec::new());
            // A full body, one that needs Ethernet padding, and a terminal INEXACT without one.
            let cases: [(Class, u32, u16, u8, u8, Vec<u8>); 3] = [
                (Class::RESULT, 363, 363, 1, flags::LAST, (0..4 + 4 * 363).map(|i| i as u8).collect()),
                (Class::DATA, 7, 1, 1, 0, vec![0x40, 0, 0, 1, 0x3f, 0x80, 0, 0]),
                (Class::RESULT, 0, 0, 0, flags::LAST | flags::INEXACT, vec![]),
            ];
            for (packet_id, (class, first, count, groups, fl, body)) in cases.iter().enumerate() {
                o.send(0, &mut sink, *class, *first, *count, *groups, *fl, body);
                let p = PrismRepr::Data(DataRepr {
                    class: *class,
                    identity,
                    src_ep: b.local_ep,
                    dst_ep: b.peer_ep,
                    packet_id: packet_id as u32,
                    first_element: *first,
                    element_count: *count,
                    group_count: *groups,
                    flags: *fl,
                    stream_id: b.stream_id,
                    body,
                });
                let mut want = vec![0xa5; p.frame_len()];
                p.emit_frame(&EthernetRepr { dst: b.peer_mac, src: node, ethertype: ETHERTYPE }, &mut want);
                let (port, got) = sink.0.last().expect("a frame was sent");
                assert_eq!((*port, got), (b.port, &want), "depth {depth} packet {packet_id}");
            }
        }
    }

    #[test]
    fn ring_slot_is_the_remainder() {
        let mut s = 0x853c_49e6_748f_ea9bu64;
        for slots in [1usize, 2, 3, 363, 2904, 4096, 5807, 65_535, (1 << 32) - 1, 1 << 32, (1 << 32) + 7] {
            let r = Ring::new(slots);
            let edges = [0u64, 1, slots as u64 - 1, slots as u64, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, u64::MAX];
            for pos in edges.into_iter().chain((0..2000).map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s >> (s % 40)
            })) {
                assert_eq!(r.slot(pos), (pos % slots as u64) as usize, "pos {pos} slots {slots}");
            }
        }
    }
}
