//! One job end to end: setup as Aggregation Manager, ranks' DATA within the
//! window, RESULT reassembly and verification, COMPLETE and RELEASE.

use crate::feedback;
use crate::job::Job;
use crate::link::{Link, Rx};
use crate::verify::{Check, Expected, Mismatch, Reassembly};
use hdrhistogram::Histogram;
use prism_dataplane::engine::{Replay, RxWindow, Sent};
use prism_dataplane::pcap::Captured;
use prism_dataplane::wire::*;
use std::time::{Duration, Instant};

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Packets per second over all ranks (None: as fast as the window allows).
    pub rate_pps: Option<f64>,
    /// Give up after this long without progress.
    pub timeout: Duration,
    /// Keep every frame sent and received.
    pub capture: bool,
    /// A live progress line on stderr.
    pub progress: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { rate_pps: None, timeout: Duration::from_secs(5), capture: false, progress: false }
    }
}

/// Why a job failed before its results could be judged.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    Io(String),
    /// The target did not answer a CONTROL request in time.
    NoAnswer {
        command: &'static str,
        tries: u32,
    },
    /// The target refused a request.
    Refused {
        command: &'static str,
        status: &'static str,
        detail: u16,
    },
    /// No capability record of the target covers the job's tuple.
    Unsupported,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Io(e) => write!(f, "I/O: {e}"),
            RunError::NoAnswer { command, tries } => write!(f, "the switch did not answer {command} ({tries} tries, 500 ms apart)"),
            RunError::Refused { command, status, detail } => write!(f, "the switch refused {command}: {status} (detail {detail})"),
            RunError::Unsupported => write!(f, "no capability record of the switch covers the job's (input, accumulator, partial, output) tuple"),
        }
    }
}
impl std::error::Error for RunError {}

/// What a job did.
pub struct Report {
    pub frames_sent: u64,
    pub frames_received: u64,
    pub ignored: u64,
    pub per_rank: Vec<(u16, Reassembly)>,
    pub check: Check,
    /// Last contributing DATA sent to RESULT received, ns, one sample per RESULT frame.
    pub latency: Histogram<u64>,
    /// First DATA sent to last RESULT received.
    pub operation: Duration,
    pub capture: Vec<Captured>,
    pub timed_out: bool,
}

impl Report {
    pub fn mismatches(&self) -> Vec<&Mismatch> {
        self.per_rank.iter().flat_map(|(_, r)| r.mismatches.iter()).collect()
    }
    pub fn missing(&self) -> u64 {
        self.per_rank.iter().map(|(_, r)| r.received.iter().filter(|&&c| c == 0).count() as u64).sum()
    }
    pub fn inexact(&self) -> bool {
        self.per_rank.iter().any(|(_, r)| r.inexact)
    }
    /// Verified: every receiver got every element once or more, all correct.
    pub fn passed(&self) -> bool {
        !self.timed_out && !self.inexact() && self.missing() == 0 && self.mismatches().is_empty()
    }
}

struct Session<'a> {
    link: &'a mut dyn Link,
    start: Instant,
    capture: Option<Vec<Captured>>,
    sent: u64,
    received: u64,
}

impl Session<'_> {
    fn send(&mut self, port: u16, frame: &[u8]) -> Result<(), RunError> {
        self.link.send(port, frame).map_err(|e| RunError::Io(e.to_string()))?;
        self.sent += 1;
        if let Some(c) = &mut self.capture {
            c.push(Captured { ts: self.link.now().saturating_duration_since(self.start), data: frame.to_vec() });
        }
        Ok(())
    }
    fn recv(&mut self, timeout: Duration) -> Result<Option<Rx>, RunError> {
        let r = self.link.recv(timeout).map_err(|e| RunError::Io(e.to_string()))?;
        if let Some(rx) = &r {
            self.received += 1;
            if let Some(c) = &mut self.capture {
                c.push(Captured { ts: rx.at.saturating_duration_since(self.start), data: rx.frame.clone() });
            }
        }
        Ok(r)
    }
}

/// One CONTROL transaction with retries of the identical bytes: the ACK, or the caps pages.
/// Transaction IDs are unique per operation generation: `step` in the low 4 bits.
fn transact(s: &mut Session<'_>, job: &Job, step: u32, command: Command, body: ControlBody<'_>) -> Result<Vec<Vec<u8>>, RunError> {
    transact_for(s, job, step, command, body, 3)
}

/// As `transact`, with `tries` sends 500 ms apart. The first contact
/// (CAPS_QUERY) is retried for the whole run timeout: a switch whose ports
/// are still coming up, or a link that is not up yet, answers late, not never.
fn transact_for(s: &mut Session<'_>, job: &Job, step: u32, command: Command, body: ControlBody<'_>, tries: u32) -> Result<Vec<Vec<u8>>, RunError> {
    let txn = job.identity.op_gen.wrapping_shl(4) | step;
    let frame = job.control(txn, command, body);
    for _try in 0..tries.max(1) {
        s.send(job.am_port, &frame)?;
        let deadline = Instant::now() + Duration::from_millis(500);
        let mut pages: Vec<Vec<u8>> = Vec::new();
        while Instant::now() < deadline {
            let Some(rx) = s.recv(Duration::from_millis(20))? else { continue };
            let Ok(ParsedFrame { eth, prism: Some(PrismRepr::Control(c)) }) = parse_frame(&rx.frame, &Limits::default()) else { continue };
            if eth.dst != job.am_mac || c.txn != txn || c.identity != job.identity {
                continue;
            }
            match c.command {
                Command::ACK => return Ok(vec![rx.frame.clone()]),
                Command::CAPS_RESPONSE => {
                    let count = c.frag_count as usize;
                    pages.push(rx.frame.clone());
                    if pages.len() == count {
                        return Ok(pages);
                    }
                }
                _ => {}
            }
        }
    }
    Err(RunError::NoAnswer { command: command.name(), tries: tries.max(1) })
}

fn expect_ok(frames: &[Vec<u8>], command: Command) -> Result<(), RunError> {
    for f in frames {
        if let Ok(ParsedFrame { prism: Some(PrismRepr::Control(c)), .. }) = parse_frame(f, &Limits::default()) {
            if let ControlBody::Ack { status, body } = c.body {
                return if status == AckStatus::OK { Ok(()) } else { Err(RunError::Refused { command: command.name(), status: status.name(), detail: body.detail }) };
            }
        }
    }
    Err(RunError::NoAnswer { command: command.name(), tries: 1 })
}

/// Whether one capability record covers the whole job.
fn covers(r: &CapabilityRecord, job: &Job) -> bool {
    let ctx = job.context();
    let mtu_bit = match job.mtu {
        576 => caps_bits::MTU_576,
        1500 => caps_bits::MTU_1500,
        _ => caps_bits::MTU_9000,
    };
    r.input_format == ctx.input_format
        && r.accumulator == ctx.accumulator
        && r.partial == ctx.partial
        && r.output == ctx.output
        && r.roles & caps_bits::ROLE_SINGLE != 0
        && r.semantics & (1 << (u8::from(ctx.semantics) - 1)) != 0
        && r.mtus & mtu_bit != 0
        && ctx.vector_len <= r.max_vector
        && ctx.terms <= r.max_terms
        && (ctx.kulisch_width == 0 || (r.kulisch_min..=r.kulisch_max).contains(&ctx.kulisch_width))
        && ctx.window_elements <= r.window_elements
}

/// One operation's traffic and its receivers during a run: the ranks'
/// frames and how far each got, the window they send within, and what the
/// receivers reassembled. A striped collective runs several at once.
struct OpRun {
    job: Job,
    /// Where the operation's elements start in the collective's vector.
    offset: u32,
    expected: Expected,
    packets: Vec<Vec<(u64, u64, Vec<u8>)>>,
    receivers: Vec<u16>,
    per_rank: Vec<(u16, Reassembly)>,
    next: Vec<usize>,
    /// Per rank: the first packet not yet below the window, and the bytes from it to `next`.
    held_lo: Vec<usize>,
    held_bytes: Vec<usize>,
    sent_at: Vec<Vec<Instant>>,
    window: u64,
    max_held: usize,
    max_bytes: usize,
    /// With feedback: each rank's DATA stream (replay, credits, timer) and RESULT window.
    feedback: bool,
    streams: Vec<Replay>,
    rx_windows: Vec<RxWindow>,
    results: Vec<(u16, Vec<u8>)>,
}

/// The run's shared pacing: DATA frames sent so far over every operation and rank.
struct Pace<'a> {
    opts: &'a RunOptions,
    data_start: Instant,
    sent_data: u64,
}

impl Pace<'_> {
    fn allows(&self, now: Instant) -> bool {
        self.sent_data < allowed_at(self.opts, self.data_start, now)
    }
    /// How long the run may wait for frames: until its next DATA frame is
    /// due when the pace is what holds it (at most 1 ms), else 1 ms (the
    /// window holds it, and only frames from the switch can open it).
    fn until_next(&self, now: Instant) -> Duration {
        let most = Duration::from_millis(1);
        let Some(pps) = self.opts.rate_pps.filter(|_| !self.allows(now)) else { return most };
        let due = self.data_start + Duration::from_secs_f64(self.sent_data as f64 / pps);
        // At least a nanosecond: `due` is rounded to one, and a zero wait on
        // a simulated link would never move its clock to the next frame.
        due.saturating_duration_since(now).clamp(Duration::from_nanos(1), most)
    }
    fn clock_ns(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.data_start).as_nanos() as u64
    }
}

/// Capabilities, STAGE and COMMIT of one operation: the context it runs with.
fn setup(s: &mut Session<'_>, job: &Job, opts: &RunOptions) -> Result<ContextRecord, RunError> {
    // Capabilities: the whole tuple must be covered by one record.
    let first_contact_tries = (opts.timeout.as_millis() / 500).max(3) as u32;
    let pages = transact_for(s, job, 1, Command::CAPS_QUERY, ControlBody::Empty, first_contact_tries)?;
    let record = pages.iter().find_map(|f| match parse_frame(f, &Limits::default()) {
        Ok(ParsedFrame { prism: Some(PrismRepr::Control(ControlRepr { body: ControlBody::Caps(r), .. })), .. }) => r.iter().find(|r| covers(r, job)),
        _ => None,
    });
    let Some(record) = record else {
        return Err(RunError::Unsupported);
    };
    // The window's packet and byte limits: the job's defaults, within what the switch holds.
    let mut context = job.context();
    context.window_intervals = context.window_intervals.min(record.window_intervals);
    context.window_bytes = context.window_bytes.min(record.window_bytes);
    if context.replay_depth > record.replay_depth {
        // The switch keeps fewer frames of replay than asked: use what it has (0: no PROGRESS).
        context.replay_depth = record.replay_depth;
    }
    let bindings = job.bindings();
    let staged = transact(s, job, 2, Command::STAGE, ControlBody::Stage { context, bindings: Records::Typed(&bindings) })?;
    expect_ok(&staged, Command::STAGE)?;
    let committed = transact(s, job, 3, Command::COMMIT, ControlBody::Empty).and_then(|f| expect_ok(&f, Command::COMMIT));
    if let Err(e) = committed {
        let _ = transact(s, job, 9, Command::ABORT, ControlBody::Empty);
        return Err(e);
    }
    Ok(context)
}

impl OpRun {
    fn new(job: Job, offset: u32, context: &ContextRecord) -> OpRun {
        let vectors = job.vectors();
        let expected = Expected::new(&job, &vectors);
        let packets: Vec<Vec<(u64, u64, Vec<u8>)>> = (0..job.ranks).map(|r| job.packets(r, &vectors[r as usize])).collect();
        let receivers = job.receivers();
        let ranks = job.ranks as usize;
        let max_held = context.window_intervals as usize;
        let streams = (0..job.ranks)
            .map(|r| Replay::new(job.rank_ports[r as usize % job.rank_ports.len()], context.replay_depth as usize, job.mtu as usize + 14, max_held as u32, context.window_bytes, 5_000_000))
            .collect();
        OpRun {
            per_rank: receivers.iter().map(|&r| (r, Reassembly::new(job.vector_len))).collect(),
            rx_windows: receivers.iter().map(|_| RxWindow::new(64)).collect(),
            sent_at: packets.iter().map(|p| Vec::with_capacity(p.len())).collect(),
            window: job.window_elements() as u64,
            next: vec![0; ranks],
            held_lo: vec![0; ranks],
            held_bytes: vec![0; ranks],
            max_held,
            max_bytes: context.window_bytes as usize,
            feedback: context.replay_depth > 0,
            streams,
            results: Vec::new(),
            receivers,
            packets,
            expected,
            offset,
            job,
        }
    }

    fn total(&self) -> usize {
        self.packets.iter().map(Vec::len).sum()
    }

    /// Sends what the window (or the streams' credit) and the pace allow; true if anything went out.
    fn send(&mut self, s: &mut Session<'_>, pace: &mut Pace<'_>, out: &mut Vec<Sent>) -> Result<bool, RunError> {
        let mut progressed = false;
        if self.feedback {
            // Ranks queue what their replay depth allows; the streams send within the switch's credit.
            let now = s.link.now();
            let clock = pace.clock_ns(now);
            for r in 0..self.job.ranks as usize {
                if self.streams[r].deadline().is_some_and(|d| d <= clock) {
                    self.streams[r].on_timeout(clock, out);
                }
                while self.streams[r].has_room() && self.next[r] < self.packets[r].len() && pace.allows(s.link.now()) {
                    let (first, end, f) = &self.packets[r][self.next[r]];
                    self.sent_at[r].push(s.link.now());
                    feedback::queue(&mut self.streams[r], clock, out, *first, *end, f);
                    self.next[r] += 1;
                    pace.sent_data += 1;
                }
            }
            progressed = !out.is_empty();
            for f in out.drain(..) {
                s.send(f.port, &f.frame)?;
            }
            return Ok(progressed);
        }
        // The window's base as RESULTs show it: every receiver has everything below.
        let base = self.per_rank.iter().map(|(_, r)| r.contiguous()).min().unwrap_or(0);
        for r in 0..self.job.ranks as usize {
            let packets = &self.packets[r];
            while self.held_lo[r] < self.next[r] && packets[self.held_lo[r]].1 <= base {
                self.held_bytes[r] -= packets[self.held_lo[r]].2.len();
                self.held_lo[r] += 1;
            }
            while let Some((_, end, frame)) = packets.get(self.next[r]) {
                let held = self.next[r] - self.held_lo[r];
                if *end > base + self.window || held >= self.max_held || self.held_bytes[r] + frame.len() > self.max_bytes || !pace.allows(s.link.now()) {
                    break;
                }
                self.held_bytes[r] += frame.len();
                self.sent_at[r].push(s.link.now());
                s.send(self.job.rank_ports[r % self.job.rank_ports.len()], frame)?;
                self.next[r] += 1;
                pace.sent_data += 1;
                progressed = true;
            }
        }
        Ok(progressed)
    }

    /// A PROGRESS for one of this operation's streams: whether it
    /// acknowledged something (None: not for any of its streams).
    fn on_progress(&mut self, clock: u64, eth: &EthernetRepr, pr: &ProgressRepr<'_>, out: &mut Vec<Sent>) -> Option<bool> {
        let i = pr.stream_id as usize;
        if !self.feedback || i >= self.streams.len() || crate::job::rank_mac(pr.stream_id) != eth.dst {
            return None;
        }
        let acked = self.streams[i].stats.acked;
        self.streams[i].on_progress(clock, pr, out);
        Some(self.streams[i].stats.acked > acked)
    }

    /// A RESULT of this operation: whether its receiver accepted it (None:
    /// no receiver of the operation takes the frame).
    fn on_result(&mut self, rx: &Rx, eth: &EthernetRepr, d: &DataRepr<'_>, latency: &mut Histogram<u64>, out: &mut Vec<Sent>) -> Option<bool> {
        let i = self.receivers.iter().position(|&r| crate::job::rank_mac(r) == eth.dst && d.stream_id == r)?;
        let (a, b) = (d.first_element as u64, d.end_element());
        let accepted = if self.feedback { feedback::take_result(&mut self.rx_windows[i], d) } else { ProgressStatus::ACCEPTED };
        if accepted == ProgressStatus::ACCEPTED {
            let (rank, re) = &mut self.per_rank[i];
            if re.note(&self.job, d) {
                self.results.push((*rank, rx.frame.clone()));
            }
            // Latency: from the last DATA (any rank) covering this range.
            if let Some(t) = last_data_sent(&self.packets, &self.sent_at, a, b) {
                let _ = latency.record(rx.at.saturating_duration_since(t).as_nanos().max(1) as u64);
            }
        }
        if self.feedback {
            // PROGRESS back to the switch on this result path.
            let r = self.receivers[i];
            let bound = feedback::to_switch(r, self.job.switch_mac, self.job.rank_ports[r as usize % self.job.rank_ports.len()]);
            feedback::answer(out, self.job.identity, crate::job::rank_mac(r), &bound, &mut self.rx_windows[i], d.packet_id, accepted);
        }
        Some(accepted == ProgressStatus::ACCEPTED)
    }

    fn done(&self) -> bool {
        let received = self.per_rank.iter().all(|(_, r)| r.complete());
        if !self.feedback {
            return received;
        }
        received && self.streams.iter().all(Replay::is_idle) && self.next.iter().zip(&self.packets).all(|(n, p)| *n == p.len())
    }

    /// Exact verification after the run, so that it never delays the traffic.
    fn verify(&mut self) {
        for (rank, frame) in &self.results {
            if let Ok(ParsedFrame { prism: Some(PrismRepr::Data(d)), .. }) = parse_frame(frame, &Limits { mtu: self.job.mtu }) {
                if let Some((_, re)) = self.per_rank.iter_mut().find(|(r, _)| r == rank) {
                    re.check(&self.job, *rank, &d, &self.expected);
                }
            }
        }
    }
}

/// Runs a job against a switch: its `stripes` operations at once (one
/// unless the job is striped), verified and reported as one collective.
pub fn run(job: &Job, link: &mut dyn Link, opts: &RunOptions) -> Result<Report, RunError> {
    let start = link.now();
    let mut s = Session { link, start, capture: opts.capture.then(Vec::new), sent: 0, received: 0 };
    let whole = job.vectors();
    let stripes = if job.stripes > 1 { job.striped(&whole) } else { vec![(0, job.clone())] };
    let mut ops: Vec<OpRun> = Vec::with_capacity(stripes.len());
    for (k, (offset, j)) in stripes.into_iter().enumerate() {
        match setup(&mut s, &j, opts) {
            Ok(context) => ops.push(OpRun::new(j, offset, &context)),
            Err(e) => {
                // The stripes already committed are given back.
                for o in &ops {
                    let _ = transact(&mut s, &o.job, 9, Command::ABORT, ControlBody::Empty);
                }
                return Err(if k == 0 { e } else { RunError::Io(format!("stripe {k}: {e}")) });
            }
        }
    }
    // START_GRANT: every COMMIT is acknowledged; the ranks may send.
    let total: usize = ops.iter().map(OpRun::total).sum();
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).map_err(|e| RunError::Io(e.to_string()))?;
    let data_start = s.link.now();
    let mut pace = Pace { opts, data_start, sent_data: 0 };
    let mut last_result = data_start;
    let mut last_progress = Instant::now();
    let mut last_line = Instant::now();
    let mut ignored = 0u64;
    let mut timed_out = false;
    let mut out: Vec<Sent> = Vec::new();
    let mtu = job.mtu;
    loop {
        let mut progressed = false;
        for op in &mut ops {
            progressed |= op.send(&mut s, &mut pace, &mut out)?;
        }
        let wait = if progressed { Duration::ZERO } else { pace.until_next(s.link.now()) };
        while let Some(rx) = s.recv(wait)? {
            let clock = pace.clock_ns(s.link.now());
            let Ok(ParsedFrame { eth, prism: Some(p) }) = parse_frame(&rx.frame, &Limits { mtu }) else {
                ignored += 1;
                continue;
            };
            // Some(moved on), or None: no operation of this run takes the frame.
            let taken = match &p {
                PrismRepr::Progress(pr) => ops.iter_mut().find(|o| o.job.identity == pr.identity).and_then(|o| o.on_progress(clock, &eth, pr, &mut out)),
                PrismRepr::Data(d) if d.class == Class::RESULT => {
                    let accepted = ops.iter_mut().find(|o| o.job.identity == d.identity).and_then(|o| o.on_result(&rx, &eth, d, &mut latency, &mut out));
                    if accepted == Some(true) {
                        last_result = rx.at;
                    }
                    accepted
                }
                _ => None,
            };
            match taken {
                Some(moved) => progressed |= moved,
                None => ignored += 1,
            }
            for f in out.drain(..) {
                s.send(f.port, &f.frame)?;
            }
        }
        if ops.iter().all(OpRun::done) {
            break;
        }
        if progressed {
            last_progress = Instant::now();
        } else if last_progress.elapsed() > opts.timeout {
            timed_out = true;
            break;
        }
        if opts.progress && last_line.elapsed() > Duration::from_millis(500) {
            let again: u64 = ops.iter().flat_map(|o| &o.streams).map(|x| x.stats.retransmitted).sum();
            eprint!("\r  sent {}/{total} DATA ({again} again), received {} frames, {:.1} s   ", pace.sent_data, s.received, s.link.now().saturating_duration_since(data_start).as_secs_f64());
            last_line = Instant::now();
        }
    }
    if opts.progress {
        eprintln!();
    }
    let operation = last_result.saturating_duration_since(data_start);
    for op in &mut ops {
        op.verify();
    }
    let mut release: Result<(), RunError> = Ok(());
    for op in &ops {
        if timed_out {
            let _ = transact(&mut s, &op.job, 9, Command::ABORT, ControlBody::Empty);
            continue;
        }
        let done = transact(&mut s, &op.job, 4, Command::COMPLETE, ControlBody::Empty).and_then(|f| expect_ok(&f, Command::COMPLETE));
        if done.is_ok() {
            let released = transact(&mut s, &op.job, 5, Command::RELEASE, ControlBody::Empty).and_then(|f| expect_ok(&f, Command::RELEASE));
            if release.is_ok() {
                release = released;
            }
        } else {
            let _ = transact(&mut s, &op.job, 9, Command::ABORT, ControlBody::Empty);
        }
    }
    release?;
    // One collective: the stripes' receivers joined at their offsets.
    let check = ops.first().map_or(Check::Exact, |o| o.expected.check);
    let mut per_rank: Vec<(u16, Reassembly)> = job.receivers().iter().map(|&r| (r, Reassembly::default())).collect();
    for op in ops {
        for ((_, whole), (_, part)) in per_rank.iter_mut().zip(op.per_rank) {
            whole.append(part, op.offset as u64);
        }
    }
    Ok(Report { frames_sent: s.sent, frames_received: s.received, ignored, per_rank, check, latency, operation, capture: s.capture.take().unwrap_or_default(), timed_out })
}

/// DATA frames the rate allows by `now` (all of them without a rate).
fn allowed_at(opts: &RunOptions, data_start: Instant, now: Instant) -> u64 {
    opts.rate_pps.map_or(u64::MAX, |pps| (now.saturating_duration_since(data_start).as_secs_f64() * pps) as u64 + 1)
}

/// When the last DATA frame (any rank) that covers part of `[a, b)` was first sent.
fn last_data_sent(packets: &[Vec<(u64, u64, Vec<u8>)>], sent_at: &[Vec<Instant>], a: u64, b: u64) -> Option<Instant> {
    (0..packets.len())
        .filter_map(|q| {
            let i = packets[q][..sent_at[q].len()].partition_point(|p| p.1 <= a);
            (i..sent_at[q].len()).take_while(|&i| packets[q][i].0 < b).map(|i| sent_at[q][i]).max()
        })
        .max()
}
