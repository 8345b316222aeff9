//! Direct streams with delivery feedback (docs/wire-format.md section 11):
//! the sender's replay queue and the receiver's coverage window. Both are
//! sans-IO and shared by the node (its parent and result-path streams, its
//! RESULT-from-parent stream) and by the ranks of pktgen and the simulators.

use super::Sink;
use crate::wire::{progress_flags, BindingRecord, EthernetRepr, Hole, Identity, Mac, PrismRepr, ProgressRepr, ProgressStatus, Records, ETHERTYPE, MAX_HOLES};
use std::collections::VecDeque;

/// Retransmission timer defaults, in nanoseconds of the caller's clock.
pub const DEFAULT_RTO_NS: u64 = 2_000_000;
pub const MAX_RTO_NS: u64 = 64_000_000;

/// What one outgoing stream did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Frames sent for the first time.
    pub sent: u64,
    /// Frames sent again (holes, refusals, timeouts).
    pub retransmitted: u64,
    /// Frames the receiver acknowledged (by Packet ID or by its watermark).
    pub acked: u64,
    /// Refusals reported by the receiver (REJECTED, UNKNOWN_OPERATION).
    pub refused: u64,
    /// Retransmission timer expiries.
    pub timeouts: u64,
    /// Frames sent again for a hole below an acknowledged packet.
    pub hole_resends: u64,
    /// Probes: the lowest frame sent again on a timeout or a WINDOW_UPDATE.
    pub probes: u64,
}

impl StreamStats {
    pub fn add(&mut self, o: &StreamStats) {
        self.sent += o.sent;
        self.retransmitted += o.retransmitted;
        self.acked += o.acked;
        self.refused += o.refused;
        self.timeouts += o.timeouts;
        self.hole_resends += o.hole_resends;
        self.probes += o.probes;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Unsent,
    InFlight,
    /// Refused by the receiver: waits for its window to move, or for the timer.
    Blocked,
}

#[derive(Debug)]
struct Entry {
    packet_id: u32,
    /// Element range; a terminal INEXACT frame has none (`u64::MAX` both) so
    /// that only its Packet ID acknowledges it.
    first: u64,
    end: u64,
    frame: Vec<u8>,
    state: State,
    /// When it was last sent or refused.
    at: u64,
    /// Transmission order of its last send.
    seq: u64,
    ever_sent: bool,
    /// Already retransmitted once for a hole since its last timeout.
    fast: bool,
}

/// The sender side of one direct stream: Packet IDs, the frames awaiting
/// PROGRESS (at most the replay depth), the receiver's credits, and the
/// retransmission timer. With depth 0 the stream has no feedback: frames go
/// out at once and nothing is kept (the SINGLE prototype's behaviour).
///
/// A refusal pauses the stream: the receiver's window (which the sender
/// cannot see in element terms) has no room, so nothing new goes out until a
/// probe is accepted. The probe is the oldest refused frame, sent again when
/// the receiver says its window moved (WINDOW_UPDATE) or when the timer
/// expires. Each refusal therefore costs one frame, not one per queued frame.
#[derive(Debug)]
pub struct Replay {
    port: u16,
    depth: usize,
    entries: VecDeque<Entry>,
    pool: Vec<Vec<u8>>,
    credit_intervals: u32,
    credit_bytes: u32,
    rto_base: u64,
    rto: u64,
    next_packet_id: u32,
    tx_seq: u64,
    /// Set by a refusal: the transmission order at that moment. Only an
    /// acknowledgement of a frame sent later (the probe) lifts it.
    paused: Option<u64>,
    /// Set when frames wait for credit and nothing is in flight: the time to probe.
    probe_at: Option<u64>,
    pub stats: StreamStats,
}

impl Replay {
    /// A stream on `port` keeping up to `depth` frames of at most `frame_len`
    /// bytes (all buffers reserved here), starting with the receiver's
    /// configured window as its credit.
    pub fn new(port: u16, depth: usize, frame_len: usize, credit_intervals: u32, credit_bytes: u32, rto_ns: u64) -> Self {
        Replay {
            port,
            depth,
            entries: VecDeque::with_capacity(depth + 1),
            pool: (0..depth + 1).map(|_| Vec::with_capacity(frame_len)).collect(),
            credit_intervals,
            credit_bytes,
            rto_base: rto_ns.max(1),
            rto: rto_ns.max(1),
            next_packet_id: 0,
            tx_seq: 0,
            paused: None,
            probe_at: None,
            stats: StreamStats::default(),
        }
    }

    /// Whether another frame may be queued now.
    pub fn has_room(&self) -> bool {
        self.depth == 0 || self.entries.len() < self.depth
    }

    /// How many more frames may be queued (unbounded without feedback).
    pub fn free(&self) -> usize {
        if self.depth == 0 {
            usize::MAX
        } else {
            self.depth.saturating_sub(self.entries.len())
        }
    }

    /// Frames awaiting acknowledgement (sent or not).
    pub fn pending(&self) -> usize {
        self.entries.len()
    }

    /// Every frame acknowledged.
    pub fn is_idle(&self) -> bool {
        self.entries.is_empty()
    }

    /// Queues (or, without feedback, sends) one new frame of `len` bytes that
    /// `fill` writes given its Packet ID. `range` is None for a terminal frame,
    /// which only its Packet ID acknowledges. The caller checks `has_room`
    /// first; a terminal frame may exceed the depth by one.
    pub fn push(&mut self, now: u64, out: &mut impl Sink, range: Option<(u64, u64)>, len: usize, fill: impl FnOnce(u32, &mut [u8])) {
        let packet_id = self.next_packet_id;
        self.next_packet_id = self.next_packet_id.wrapping_add(1);
        if self.depth == 0 {
            if let Some(b) = out.buffer(self.port, len) {
                fill(packet_id, b);
            }
            self.stats.sent += 1;
            return;
        }
        let mut frame = self.pool.pop().unwrap_or_default();
        frame.clear();
        frame.resize(len, 0);
        fill(packet_id, &mut frame);
        let (first, end) = range.unwrap_or((u64::MAX, u64::MAX));
        self.entries.push_back(Entry { packet_id, first, end, frame, state: State::Unsent, at: now, seq: 0, ever_sent: false, fast: false });
        self.transmit(now, out);
    }

    /// `push` without feedback (depth 0 only) for a frame that starts as a
    /// copy of the one last sent to port `from` (`Sink::copy_last`): `fill`
    /// rewrites what differs (the header).
    pub fn push_copy(&mut self, out: &mut impl Sink, from: u16, fill: impl FnOnce(u32, &mut [u8])) {
        debug_assert_eq!(self.depth, 0);
        let packet_id = self.next_packet_id;
        self.next_packet_id = self.next_packet_id.wrapping_add(1);
        if let Some(b) = out.copy_last(from, self.port) {
            fill(packet_id, b);
        }
        self.stats.sent += 1;
    }

    /// Sends queued frames in order while the receiver's credit allows and
    /// the stream is not paused.
    pub fn transmit(&mut self, now: u64, out: &mut impl Sink) {
        if self.paused.is_some() {
            // Paused: only the timer (or a WINDOW_UPDATE) sends, one probe at a time.
            if self.probe_at.is_none() {
                self.probe_at = Some(now + self.rto);
            }
            return;
        }
        let (mut flying, mut bytes) = (0u32, 0u64);
        for e in self.entries.iter().filter(|e| e.state == State::InFlight) {
            flying += 1;
            bytes += e.frame.len() as u64;
        }
        let mut stalled = false;
        for i in 0..self.entries.len() {
            if self.entries[i].state != State::Unsent {
                continue;
            }
            let len = self.entries[i].frame.len() as u64;
            if flying >= self.credit_intervals || bytes + len > self.credit_bytes as u64 {
                stalled = true;
                break;
            }
            self.send(i, now, out);
            flying += 1;
            bytes += len;
        }
        self.probe_at = if stalled && flying == 0 { Some(self.probe_at.unwrap_or(now + self.rto)) } else { None };
    }

    fn send(&mut self, i: usize, now: u64, out: &mut impl Sink) {
        self.tx_seq += 1;
        let e = &mut self.entries[i];
        out.copy(self.port, &e.frame);
        if e.ever_sent {
            self.stats.retransmitted += 1;
        } else {
            self.stats.sent += 1;
        }
        e.ever_sent = true;
        e.state = State::InFlight;
        e.at = now;
        e.seq = self.tx_seq;
    }

    /// Sends the unacknowledged frame that starts lowest again (the one the
    /// receiver's watermark waits for), even when paused or without credit.
    fn probe(&mut self, now: u64, out: &mut impl Sink) {
        let lowest = self.entries.iter().enumerate().min_by_key(|(_, e)| (e.first, e.packet_id)).map(|(i, _)| i);
        if let Some(i) = lowest {
            self.stats.probes += 1;
            self.send(i, now, out);
        }
    }

    /// Applies the receiver's PROGRESS: acknowledgements, refusals, credits,
    /// and holes below a packet that did arrive (sent again at once, once).
    pub fn on_progress(&mut self, now: u64, p: &ProgressRepr<'_>, out: &mut impl Sink) {
        let committed = p.committed as u64;
        let update = p.flags & progress_flags::WINDOW_UPDATE != 0;
        let mut acked_seq = None;
        if !update {
            if let Some(i) = self.entries.iter().position(|e| e.packet_id == p.packet_id) {
                match p.status {
                    ProgressStatus::ACCEPTED | ProgressStatus::DUPLICATE => {
                        if let Some(e) = self.entries.remove(i) {
                            acked_seq = Some(e.seq);
                            self.pool.push(e.frame);
                            self.stats.acked += 1;
                        }
                    }
                    _ => {
                        let e = &mut self.entries[i];
                        if e.state == State::InFlight {
                            e.state = State::Blocked;
                            e.at = now;
                            self.stats.refused += 1;
                            self.paused = Some(self.paused.unwrap_or(self.tx_seq));
                        }
                    }
                }
            }
        }
        // Everything below the receiver's watermark arrived (terminal frames have no range).
        let before = self.entries.len();
        let pool = &mut self.pool;
        self.entries.retain_mut(|e| {
            let done = e.end <= committed && e.first != u64::MAX;
            if done {
                pool.push(std::mem::take(&mut e.frame));
            }
            !done
        });
        self.stats.acked += (before - self.entries.len()) as u64;
        if acked_seq.is_some() || self.entries.len() < before {
            self.rto = self.rto_base;
        }
        self.credit_intervals = p.interval_credits as u32;
        self.credit_bytes = p.byte_credits;
        // The probe got through: the receiver has room again.
        if let (Some(seq), Some(since)) = (acked_seq, self.paused) {
            if seq > since {
                self.paused = None;
                for e in self.entries.iter_mut().filter(|e| e.state == State::Blocked) {
                    e.state = State::Unsent;
                }
            }
        }
        if let Some(seq) = acked_seq {
            for e in self.entries.iter_mut() {
                if e.state == State::InFlight && e.seq < seq && !e.fast && p.holes.iter().any(|h| e.first < h.first as u64 + h.count as u64 && (h.first as u64) < e.end) {
                    e.state = State::Unsent;
                    e.fast = true;
                    self.stats.hole_resends += 1;
                }
            }
        }
        if update && self.paused.is_some() {
            self.probe(now, out);
        }
        self.transmit(now, out);
    }

    /// When the timer next needs `on_timeout`.
    pub fn deadline(&self) -> Option<u64> {
        let oldest = self.entries.iter().filter(|e| e.state != State::Unsent).map(|e| e.at + self.rto).min();
        match (oldest, self.probe_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The timer expired: the oldest unacknowledged frame is sent again (a
    /// probe, even without credit or while paused) and the timer doubles;
    /// the other frames wait for the receiver's answer to it.
    pub fn on_timeout(&mut self, now: u64, out: &mut impl Sink) {
        if self.deadline().is_none_or(|d| d > now) {
            return;
        }
        self.stats.timeouts += 1;
        self.rto = (self.rto * 2).min(MAX_RTO_NS.max(self.rto_base));
        self.probe_at = None;
        self.probe(now, out);
        // Everything else in flight restarts its clock behind the probe, and
        // may be sent again once more for a hole the probe's answer reports.
        for e in self.entries.iter_mut().filter(|e| e.state != State::Unsent) {
            e.at = now;
            e.fast = false;
        }
        self.transmit(now, out);
    }
}

/// What a receiver reports about one incoming stream.
#[derive(Debug, Clone, Copy)]
pub struct Coverage {
    pub committed: u64,
    pub holes: [Hole; MAX_HOLES],
    pub hole_count: usize,
}

impl Coverage {
    /// Watermark and up to 32 holes of a set of received ranges above it.
    pub fn of(committed: u64, ranges: impl Iterator<Item = (u64, u64)>, scratch: &mut Vec<(u64, u64)>) -> Coverage {
        scratch.clear();
        scratch.extend(ranges.filter(|r| r.1 > committed));
        scratch.sort_unstable();
        let mut c = Coverage { committed, holes: [Hole { first: 0, count: 0 }; MAX_HOLES], hole_count: 0 };
        let mut at = committed;
        for &(first, end) in scratch.iter() {
            if first > at && c.hole_count < MAX_HOLES {
                c.holes[c.hole_count] = Hole { first: at as u32, count: (first - at) as u32 };
                c.hole_count += 1;
            }
            at = at.max(end);
        }
        c
    }

    pub fn holes(&self) -> &[Hole] {
        &self.holes[..self.hole_count]
    }
}

/// Why a receive window refused a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxRefusal {
    Overlap,
    ChangedRetransmit,
    IntervalsExhausted,
}

/// A received packet above the watermark.
#[derive(Debug, Clone, Copy)]
struct Got {
    packet_id: u32,
    first: u64,
    end: u64,
    digest: u64,
}

/// The receiver side of a stream that is consumed as it arrives (RESULT at a
/// node that forwards it, or at a rank): which ranges arrived, so that a copy
/// is recognised and PROGRESS can name the watermark and the holes.
#[derive(Debug, Clone)]
pub struct RxWindow {
    committed: u64,
    above: Vec<Got>,
    max_intervals: usize,
    scratch: Vec<(u64, u64)>,
}

impl RxWindow {
    pub fn new(max_intervals: usize) -> Self {
        RxWindow { committed: 0, above: Vec::with_capacity(max_intervals), max_intervals: max_intervals.max(2), scratch: Vec::with_capacity(max_intervals) }
    }

    /// Every element below this arrived.
    pub fn committed(&self) -> u64 {
        self.committed
    }

    /// Intervals still free above the watermark.
    pub fn free_intervals(&self) -> usize {
        self.max_intervals - self.above.len()
    }

    /// Checks a packet without recording it: `Ok(true)` when it is new.
    pub fn check(&self, packet_id: u32, first: u64, end: u64, digest: u64) -> Result<bool, RxRefusal> {
        if let Some(g) = self.above.iter().find(|g| g.packet_id == packet_id) {
            return if (g.first, g.end, g.digest) == (first, end, digest) { Ok(false) } else { Err(RxRefusal::ChangedRetransmit) };
        }
        if end <= self.committed {
            return Ok(false);
        }
        if first < self.committed || self.above.iter().any(|g| g.first < end && first < g.end) {
            return Err(RxRefusal::Overlap);
        }
        // The last interval is kept for the packet at the watermark, so that
        // packets above a hole never leave the hole without room to close.
        let spare = (first > self.committed) as usize;
        if self.above.len() + spare >= self.max_intervals {
            return Err(RxRefusal::IntervalsExhausted);
        }
        Ok(true)
    }

    /// Records a packet that `check` found new.
    pub fn record(&mut self, packet_id: u32, first: u64, end: u64, digest: u64) {
        self.above.push(Got { packet_id, first, end, digest });
        while let Some(i) = self.above.iter().position(|g| g.first == self.committed) {
            self.committed = self.above.swap_remove(i).end;
        }
    }

    pub fn coverage(&mut self) -> Coverage {
        let above = std::mem::take(&mut self.above);
        let c = Coverage::of(self.committed, above.iter().map(|g| (g.first, g.end)), &mut self.scratch);
        self.above = above;
        c
    }
}

/// The credit a receiver grants: packet intervals and frame bytes it can still take.
#[derive(Debug, Clone, Copy)]
pub struct Credit {
    pub intervals: usize,
    pub bytes: u64,
}

/// Sends one PROGRESS frame about the stream bound by `b` (whose peer sent
/// to us): endpoints swapped, the stream's ID, the packet it answers.
#[allow(clippy::too_many_arguments)]
pub fn emit_progress(out: &mut impl Sink, identity: Identity, src: Mac, b: &BindingRecord, packet_id: u32, status: ProgressStatus, flags: u8, cov: &Coverage, credit: Credit) {
    let repr = ProgressRepr {
        identity,
        src_ep: b.local_ep,
        dst_ep: b.peer_ep,
        stream_id: b.stream_id,
        packet_id,
        committed: cov.committed.min(u32::MAX as u64) as u32,
        interval_credits: credit.intervals.min(u16::MAX as usize) as u16,
        byte_credits: credit.bytes.min(u32::MAX as u64) as u32,
        status,
        flags,
        holes: Records::Typed(cov.holes()),
    };
    let p = PrismRepr::Progress(repr);
    if let Some(buf) = out.buffer(b.port, p.frame_len()) {
        p.emit_frame(&EthernetRepr { dst: b.peer_mac, src, ethertype: ETHERTYPE }, buf);
    }
}
