//! One active operation's data path: contributor windows, reduction by global
//! element position, canonical RESULT packetization (docs/wire-format.md section 9).

use super::digest::digest;
use super::Sink;
use crate::wire::*;
use std::result::Result;
use prism_arith::{auto, Accumulator, ArithError, NumFormat, Output, Policy};

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
}

impl DataReject {
    pub const ALL: [DataReject; 19] = [
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
}

impl Contributor {
    /// End of the contiguous coverage from `from` by held packets.
    fn covered_from(&self, from: u64) -> u64 {
        let mut at = from;
        loop {
            match self.held.iter().find(|h| h.first <= at && h.end > at) {
                Some(h) => at = h.end,
                None => return at,
            }
        }
    }
}

#[derive(Debug, Clone)]
struct ResultPath {
    binding: BindingRecord,
    next_packet_id: u32,
}

impl ResultPath {
    /// One RESULT frame on this path, with its next Packet ID.
    #[allow(clippy::too_many_arguments)]
    fn send(&mut self, out: &mut impl Sink, identity: Identity, src: Mac, first: u32, count: u16, groups: u8, flags: u8, body: &[u8]) {
        let repr = DataRepr {
            class: Class::RESULT,
            identity,
            src_ep: self.binding.local_ep,
            dst_ep: self.binding.peer_ep,
            packet_id: self.next_packet_id,
            first_element: first,
            element_count: count,
            group_count: groups,
            flags,
            stream_id: self.binding.stream_id,
            body,
        };
        self.next_packet_id += 1;
        emit_to(out, self.binding.port, &PrismRepr::Data(repr), src, self.binding.peer_mac);
    }
}

/// The data state of one operation, reserved at STAGE.
#[derive(Debug)]
pub struct OpData {
    pub context: ContextRecord,
    identity: Identity,
    node_mac: Mac,
    contributors: Vec<Contributor>,
    paths: Vec<ResultPath>,
    acc: Accumulator,
    /// Lowest element not yet released: results below it are sent.
    base: u64,
    failed: bool,
    /// AUTO candidate sets of `[base, base + masks_len)`, linear from `base`.
    masks: Vec<u8>,
    masks_len: usize,
    /// RESULT frames emitted since the node last asked.
    sent: u64,
    scratch: Vec<u8>,
}

fn ring(pos: u64, slots: usize) -> usize {
    (pos % slots as u64) as usize
}

impl OpData {
    /// Reserves every resource of a validated context (the only allocations).
    pub fn new(identity: Identity, context: ContextRecord, bindings: &Records<'_, BindingRecord>, node_mac: Mac) -> Self {
        let policy = match context.accumulator {
            AccumulatorPolicy::KULISCH_FIXED => Policy::Kulisch { width_bits: context.kulisch_width },
            _ => Policy::Fp32Arrival,
        };
        let slots = context.window_elements as usize;
        let contributors = bindings
            .iter()
            .filter(|b| b.has(direction::DATA_IN))
            .map(|b| Contributor { binding: b, held: Vec::with_capacity(context.window_intervals as usize), held_bytes: 0, covered: 0 })
            .collect();
        let reduce_to = (context.semantics == Semantics::REDUCE).then_some(context.dest_rank);
        let paths = bindings
            .iter()
            .filter(|b| b.has(direction::RESULT_OUT) && reduce_to.is_none_or(|r| b.rank == r))
            .map(|b| ResultPath { binding: b, next_packet_id: 0 })
            .collect();
        OpData {
            context,
            identity,
            node_mac,
            contributors,
            paths,
            acc: Accumulator::new(policy, slots),
            base: 0,
            failed: false,
            masks: vec![0; slots],
            masks_len: 0,
            sent: 0,
            scratch: vec![0; context.mtu as usize],
        }
    }

    /// Whether every RESULT was sent (or the operation failed terminally).
    pub fn done(&self) -> bool {
        self.failed || self.base >= self.context.vector_len as u64
    }

    /// RESULT frames emitted since the last call.
    pub fn take_sent(&mut self) -> u64 {
        std::mem::take(&mut self.sent)
    }

    /// Lowest element whose result is not yet sent.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Admits one DATA packet after checking it against the operation, then
    /// reduces and emits whatever it completed. Nothing changes on a reject.
    pub fn admit(&mut self, port: u16, src: Mac, d: &DataRepr<'_>, frame_len: usize, out: &mut impl Sink) -> Result<Admitted, DataReject> {
        if self.failed {
            return Err(DataReject::OperationFailed);
        }
        if self.done() {
            return Err(DataReject::OperationDone);
        }
        let ci = self.contributors.iter().position(|c| c.binding.stream_id == d.stream_id).ok_or(DataReject::UnknownStream)?;
        let b = self.contributors[ci].binding;
        if d.dst_ep != b.local_ep || d.src_ep != b.peer_ep {
            return Err(DataReject::EndpointMismatch);
        }
        if port != b.port {
            return Err(DataReject::WrongPort);
        }
        if src != b.peer_mac {
            return Err(DataReject::WrongSourceMac);
        }
        if d.is_inexact() {
            // A child's terminal INEXACT: the whole operation fails (trees; a rank never sends it).
            self.fail(out);
            return Ok(Admitted::Applied);
        }
        d.check_against_vector(self.context.vector_len, 0).map_err(|e| match e.reason {
            Reason::RangeOutsideVector => DataReject::RangeOutsideVector,
            _ => DataReject::LastFlagMismatch,
        })?;
        let kulisch = match self.acc.policy() {
            Policy::Kulisch { width_bits } => Some(width_bits),
            Policy::Fp32Arrival => None,
        };
        for g in d.groups() {
            if let NumFormat::Kulisch { width_bits } = g.format {
                if kulisch != Some(width_bits) {
                    return Err(DataReject::FormatNotAllowed);
                }
            }
        }
        let (first, end) = (d.first_element as u64, d.end_element());
        let digest = digest(first, end, d.body);
        let c = &self.contributors[ci];
        if let Some(h) = c.held.iter().find(|h| h.packet_id == d.packet_id) {
            return if h.digest == digest && h.first == first && h.end == end { Ok(Admitted::Duplicate) } else { Err(DataReject::ChangedRetransmit) };
        }
        if first < self.base {
            return Err(DataReject::BelowWindow);
        }
        if end > self.base + self.context.window_elements as u64 {
            return Err(DataReject::BeyondWindow);
        }
        if c.held.iter().any(|h| h.first < end && first < h.end) {
            return Err(DataReject::Overlap);
        }
        if c.held.len() >= self.context.window_intervals as usize {
            return Err(DataReject::IntervalsExhausted);
        }
        if c.held_bytes as u64 + frame_len as u64 > self.context.window_bytes as u64 {
            return Err(DataReject::BytesExhausted);
        }
        // Admitted: apply every group at its global position.
        let slots = self.acc.slots();
        let mut pos = first;
        for g in d.groups() {
            let w = g.format.value_bytes();
            let mut vals = g.values;
            while !vals.is_empty() {
                let slot = ring(pos, slots);
                let n = (vals.len() / w).min(slots - slot);
                // Validated shapes: accumulate cannot fail here (formats checked above, ranges in window).
                let _ = self.acc.accumulate(slot, g.format, &vals[..n * w]);
                vals = &vals[n * w..];
                pos += n as u64;
            }
        }
        let c = &mut self.contributors[ci];
        c.held.push(Held { packet_id: d.packet_id, first, end, digest, bytes: frame_len as u32 });
        c.held_bytes += frame_len as u32;
        c.covered = c.covered_from(c.covered.max(self.base));
        self.emit_ready(out);
        Ok(Admitted::Applied)
    }

    /// Every element below this is delivered by every contributor.
    fn complete_to(&self) -> u64 {
        self.contributors.iter().map(|c| c.covered.max(self.base)).min().unwrap_or(self.base)
    }

    /// Sends the RESULT packets whose whole range (and AUTO lookahead) is complete, in order.
    fn emit_ready(&mut self, out: &mut impl Sink) {
        let len = self.context.vector_len as u64;
        loop {
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
            match self.send_result(&planned, out) {
                Ok(count) => self.release(self.base + count as u64),
                Err(_) => {
                    self.fail(out);
                    return;
                }
            }
        }
    }

    /// The next RESULT packet's groups: `(format, count)` list and value count.
    fn plan(&mut self, ready: u64, at_end: bool) -> Result<Option<Plan>, ArithError> {
        let slots = self.acc.slots();
        let avail = (ready - self.base) as usize;
        let budget = self.context.mtu as usize - offsets::data::BODY;
        let native = match self.context.output {
            OutputFormat::INT8 => Some((Output::Int8, NumFormat::Int8)),
            OutputFormat::FP16 => Some((Output::Fp16, NumFormat::Fp16)),
            OutputFormat::BF16 => Some((Output::Bf16, NumFormat::Bf16)),
            OutputFormat::KULISCH => Some((Output::Kulisch, NumFormat::Kulisch { width_bits: self.context.kulisch_width })),
            OutputFormat::AUTO => None,
            _ => Some((Output::Fp32, NumFormat::Fp32)),
        };
        if let Some((out, format)) = native {
            let cap = capacity(format, self.context.mtu) as u64;
            // Canonical cut: packet k covers [k * cap, (k + 1) * cap).
            let end = ((self.base / cap + 1) * cap).min(self.context.vector_len as u64);
            if ready < end {
                return Ok(None);
            }
            return Ok(Some(Plan::Native { out, format, count: (end - self.base) as usize }));
        }
        // Candidate sets are computed once per element, when it completes.
        for i in self.masks_len..avail {
            self.masks[i] = self.acc.candidates(ring(self.base + i as u64, slots))?;
        }
        self.masks_len = self.masks_len.max(avail);
        let kbits = self.acc.kulisch_bits();
        Ok(auto::plan_packet(&self.masks[..avail], kbits, budget, at_end).map_err(|_| ArithError::Inexact { slot: 0 })?.map(Plan::Auto))
    }

    /// Writes the planned groups into the scratch body: (body bytes, groups, values).
    fn write_groups(&mut self, plan: &Plan) -> Result<(usize, u8, usize), ArithError> {
        let slots = self.acc.slots();
        let mut body_len = 0;
        let mut groups = 0u8;
        let mut pos = self.base;
        let mut write_group = |acc: &mut Accumulator, scratch: &mut [u8], format: NumFormat, outf: Output, count: usize| -> Result<(), ArithError> {
            let start = body_len;
            let mut at = start + GROUP_DESCRIPTOR_LEN;
            for _ in 0..count {
                at += acc.write(ring(pos, slots), outf, &mut scratch[at..])?;
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
            Plan::Auto(p) => {
                let kbits = self.context.kulisch_width;
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

    /// Builds the RESULT body once and sends it on every path.
    fn send_result(&mut self, plan: &Plan, out: &mut impl Sink) -> Result<usize, ArithError> {
        let slots = self.acc.slots();
        let first_slot = ring(self.base, slots);
        let (body_len, groups, count) = match plan {
            Plan::Native { out: Output::Fp32, format, count } if slots - first_slot >= *count => {
                // One run of FP32 values: the bulk writer (no per-value dispatch).
                let g = GroupRepr { format: *format, count: *count as u16, values: &[] };
                self.scratch[..4].copy_from_slice(&g.descriptor().to_be_bytes());
                self.acc.write_fp32_run(first_slot, *count, &mut self.scratch[4..4 + 4 * count])?;
                (4 + 4 * count, 1u8, *count)
            }
            _ => self.write_groups(plan)?,
        };
        let last = self.base + count as u64 == self.context.vector_len as u64;
        let body = &self.scratch[..body_len];
        let flags = if last { flags::LAST } else { 0 };
        for path in &mut self.paths {
            path.send(out, self.identity, self.node_mac, self.base as u32, count as u16, groups, flags, body);
            self.sent += 1;
        }
        Ok(count)
    }

    /// Frees `[base, to)`: accumulator slots, and packets wholly below `to`.
    fn release(&mut self, to: u64) {
        let slots = self.acc.slots();
        let mut pos = self.base;
        while pos < to {
            let slot = ring(pos, slots);
            let n = ((to - pos) as usize).min(slots - slot);
            self.acc.clear(slot, n);
            pos += n as u64;
        }
        let shift = ((to - self.base) as usize).min(self.masks_len);
        self.masks.copy_within(shift..self.masks_len, 0);
        self.masks_len -= shift;
        self.base = to;
        for c in &mut self.contributors {
            let before = c.held.len();
            let mut freed = 0;
            c.held.retain(|h| {
                let keep = h.end > to;
                if !keep {
                    freed += h.bytes;
                }
                keep
            });
            debug_assert!(c.held.len() <= before);
            c.held_bytes -= freed;
        }
    }

    /// Ends the operation with the terminal ACCUMULATION_INEXACT RESULT on every path.
    fn fail(&mut self, out: &mut impl Sink) {
        if self.failed {
            return;
        }
        self.failed = true;
        for path in &mut self.paths {
            path.send(out, self.identity, self.node_mac, 0, 0, 0, flags::LAST | flags::INEXACT, &[]);
            self.sent += 1;
        }
    }
}

enum Plan {
    Native { out: Output, format: NumFormat, count: usize },
    Auto(auto::PacketPlan),
}

/// Builds a frame straight into the sink's buffer.
fn emit_to(out: &mut impl Sink, port: u16, p: &PrismRepr<'_>, src: Mac, dst: Mac) {
    if let Some(buf) = out.buffer(port, p.frame_len()) {
        p.emit_frame(&EthernetRepr { dst, src, ethertype: ETHERTYPE }, buf);
    }
}
