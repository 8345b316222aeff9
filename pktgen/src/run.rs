//! One job end to end: setup as Aggregation Manager, ranks' DATA within the
//! window, RESULT reassembly and verification, COMPLETE and RELEASE.

use crate::job::Job;
use crate::link::{Link, Rx};
use crate::verify::{Check, Expected, Mismatch, Reassembly};
use crate::feedback;
use prism_dataplane::engine::{Replay, RxWindow, Sent};
use hdrhistogram::Histogram;
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
    NoAnswer { command: &'static str, tries: u32 },
    /// The target refused a request.
    Refused { command: &'static str, status: &'static str, detail: u16 },
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

/// Runs a job against a switch.
pub fn run(job: &Job, link: &mut dyn Link, opts: &RunOptions) -> Result<Report, RunError> {
    let start = link.now();
    let mut s = Session { link, start, capture: opts.capture.then(Vec::new), sent: 0, received: 0 };
    // Capabilities: the whole tuple must be covered by one record.
    let first_contact_tries = (opts.timeout.as_millis() / 500).max(3) as u32;
    let pages = transact_for(&mut s, job, 1, Command::CAPS_QUERY, ControlBody::Empty, first_contact_tries)?;
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
    let staged = transact(&mut s, job, 2, Command::STAGE, ControlBody::Stage { context, bindings: Records::Typed(&bindings) })?;
    expect_ok(&staged, Command::STAGE)?;
    let committed = transact(&mut s, job, 3, Command::COMMIT, ControlBody::Empty).and_then(|f| expect_ok(&f, Command::COMMIT));
    if let Err(e) = committed {
        let _ = transact(&mut s, job, 9, Command::ABORT, ControlBody::Empty);
        return Err(e);
    }
    // START_GRANT: every COMMIT is acknowledged; the ranks may send.
    let vectors = job.vectors();
    let expected = Expected::new(job, &vectors);
    let packets: Vec<Vec<(u64, u64, Vec<u8>)>> = (0..job.ranks).map(|r| job.packets(r, &vectors[r as usize])).collect();
    let total: usize = packets.iter().map(Vec::len).sum();
    let receivers = job.receivers();
    let mut per_rank: Vec<(u16, Reassembly)> = receivers.iter().map(|&r| (r, Reassembly::new(job.vector_len))).collect();
    let mut next = vec![0usize; job.ranks as usize];
    // Per rank: the first packet not yet below the window, and the bytes from it to `next`.
    let mut held_lo = vec![0usize; job.ranks as usize];
    let mut held_bytes = vec![0usize; job.ranks as usize];
    let mut sent_at: Vec<Vec<Instant>> = packets.iter().map(|p| Vec::with_capacity(p.len())).collect();
    let window = job.window_elements() as u64;
    let (max_held, max_bytes) = (context.window_intervals as usize, context.window_bytes as usize);
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).map_err(|e| RunError::Io(e.to_string()))?;
    let data_start = s.link.now();
    let mut last_result = data_start;
    let mut last_progress = Instant::now();
    let mut last_line = Instant::now();
    let mut sent_data = 0u64;
    let mut results: Vec<(u16, Vec<u8>)> = Vec::new();
    let mut ignored = 0u64;
    let mut timed_out = false;
    let feedback = context.replay_depth > 0;
    // With feedback: each rank's DATA stream (replay, credits, timer) and RESULT window.
    let mut streams: Vec<Replay> = (0..job.ranks)
        .map(|r| Replay::new(job.rank_ports[r as usize % job.rank_ports.len()], context.replay_depth as usize, job.mtu as usize + 14, max_held as u32, max_bytes as u32, 5_000_000))
        .collect();
    let mut rx_windows: Vec<RxWindow> = receivers.iter().map(|_| RxWindow::new(64)).collect();
    let mut out: Vec<Sent> = Vec::new();
    let clock_ns = |now: Instant| now.saturating_duration_since(data_start).as_nanos() as u64;
    loop {
        let (progressed, done) = if feedback {
            // Ranks queue what their replay depth allows; the streams send within the switch's credit.
            let now = s.link.now();
            for r in 0..job.ranks as usize {
                if streams[r].deadline().is_some_and(|d| d <= clock_ns(now)) {
                    streams[r].on_timeout(clock_ns(now), &mut out);
                }
                while streams[r].has_room() && next[r] < packets[r].len() && sent_data < allowed_at(opts, data_start, s.link.now()) {
                    let (first, end, f) = &packets[r][next[r]];
                    sent_at[r].push(s.link.now());
                    feedback::queue(&mut streams[r], clock_ns(now), &mut out, *first, *end, f);
                    next[r] += 1;
                    sent_data += 1;
                }
            }
            let mut progressed = !out.is_empty();
            for f in out.drain(..) {
                s.send(f.port, &f.frame)?;
            }
            while let Some(rx) = s.recv(Duration::from_millis(if progressed { 0 } else { 1 }))? {
                let now = clock_ns(s.link.now());
                let parsed = parse_frame(&rx.frame, &Limits { mtu: job.mtu });
                let Ok(ParsedFrame { eth, prism: Some(p) }) = parsed else {
                    ignored += 1;
                    continue;
                };
                match p {
                    PrismRepr::Progress(pr) if pr.identity == job.identity && (pr.stream_id as usize) < streams.len() && crate::job::rank_mac(pr.stream_id) == eth.dst => {
                        let acked = streams[pr.stream_id as usize].stats.acked;
                        streams[pr.stream_id as usize].on_progress(now, &pr, &mut out);
                        progressed |= streams[pr.stream_id as usize].stats.acked > acked;
                    }
                    PrismRepr::Data(d) if d.class == Class::RESULT && d.identity == job.identity => {
                        let Some(i) = receivers.iter().position(|&r| crate::job::rank_mac(r) == eth.dst && d.stream_id == r) else {
                            ignored += 1;
                            continue;
                        };
                        let (a, b) = (d.first_element as u64, d.end_element());
                        let status = feedback::take_result(&mut rx_windows[i], &d);
                        if status == ProgressStatus::ACCEPTED {
                            let (rank, re) = &mut per_rank[i];
                            if re.note(job, &d) {
                                results.push((*rank, rx.frame.clone()));
                            }
                            if let Some(t) = last_data_sent(&packets, &sent_at, a, b) {
                                let _ = latency.record(rx.at.saturating_duration_since(t).as_nanos().max(1) as u64);
                            }
                            last_result = rx.at;
                            progressed = true;
                        }
                        // PROGRESS back to the switch on this result path.
                        let r = receivers[i];
                        let bound = feedback::to_switch(r, job.switch_mac, job.rank_ports[r as usize % job.rank_ports.len()]);
                        feedback::answer(&mut out, job.identity, crate::job::rank_mac(r), &bound, &mut rx_windows[i], d.packet_id, status);
                    }
                    _ => ignored += 1,
                }
                for f in out.drain(..) {
                    s.send(f.port, &f.frame)?;
                }
            }
            let done = per_rank.iter().all(|(_, r)| r.complete()) && streams.iter().all(Replay::is_idle) && next.iter().zip(&packets).all(|(n, p)| *n == p.len());
            (progressed, done)
        } else {
            // The window's base as RESULTs show it: every receiver has everything below.
            let base = per_rank.iter().map(|(_, r)| r.contiguous()).min().unwrap_or(0);
            let allowed = allowed_at(opts, data_start, s.link.now());
            let mut progressed = false;
            for r in 0..job.ranks as usize {
                while held_lo[r] < next[r] && packets[r][held_lo[r]].1 <= base {
                    held_bytes[r] -= packets[r][held_lo[r]].2.len();
                    held_lo[r] += 1;
                }
                loop {
                    let Some((_, end, frame)) = packets[r].get(next[r]) else { break };
                    let held = next[r] - held_lo[r];
                    if *end > base + window || held >= max_held || held_bytes[r] + frame.len() > max_bytes || sent_data >= allowed {
                        break;
                    }
                    held_bytes[r] += frame.len();
                    sent_at[r].push(s.link.now());
                    s.send(job.rank_ports[r % job.rank_ports.len()], frame)?;
                    next[r] += 1;
                    sent_data += 1;
                    progressed = true;
                }
            }
            while let Some(rx) = s.recv(Duration::from_millis(if progressed { 0 } else { 2 }))? {
                let parsed = parse_frame(&rx.frame, &Limits { mtu: job.mtu });
                let Ok(ParsedFrame { eth, prism: Some(PrismRepr::Data(d)) }) = parsed else {
                    ignored += 1;
                    continue;
                };
                if d.class != Class::RESULT || d.identity != job.identity {
                    ignored += 1;
                    continue;
                }
                let Some((rank, re)) = per_rank.iter_mut().find(|(r, _)| crate::job::rank_mac(*r) == eth.dst && d.stream_id == *r) else {
                    ignored += 1;
                    continue;
                };
                if re.note(job, &d) {
                    results.push((*rank, rx.frame.clone()));
                }
                // Latency: from the last DATA (any rank) covering this range.
                let (a, b) = (d.first_element as u64, d.end_element());
                if let Some(t) = last_data_sent(&packets, &sent_at, a, b) {
                    let _ = latency.record(rx.at.saturating_duration_since(t).as_nanos().max(1) as u64);
                }
                last_result = rx.at;
                progressed = true;
            }
            (progressed, per_rank.iter().all(|(_, r)| r.complete()))
        };
        if done {
            break;
        }
        if progressed {
            last_progress = Instant::now();
        } else if last_progress.elapsed() > opts.timeout {
            timed_out = true;
            break;
        }
        if opts.progress && last_line.elapsed() > Duration::from_millis(500) {
            let again: u64 = streams.iter().map(|x| x.stats.retransmitted).sum();
            eprint!("\r  sent {sent_data}/{total} DATA ({again} again), received {} frames, {:.1} s   ", s.received, s.link.now().saturating_duration_since(data_start).as_secs_f64());
            last_line = Instant::now();
        }
    }
    if opts.progress {
        eprintln!();
    }
    let operation = last_result.saturating_duration_since(data_start);
    // Exact verification after the run, so that it never delays the traffic.
    for (rank, frame) in &results {
        if let Ok(ParsedFrame { prism: Some(PrismRepr::Data(d)), .. }) = parse_frame(frame, &Limits { mtu: job.mtu }) {
            if let Some((_, re)) = per_rank.iter_mut().find(|(r, _)| r == rank) {
                re.check(job, *rank, &d, &expected);
            }
        }
    }
    if !timed_out {
        let done = transact(&mut s, job, 4, Command::COMPLETE, ControlBody::Empty).and_then(|f| expect_ok(&f, Command::COMPLETE));
        if done.is_ok() {
            transact(&mut s, job, 5, Command::RELEASE, ControlBody::Empty).and_then(|f| expect_ok(&f, Command::RELEASE))?;
        } else {
            let _ = transact(&mut s, job, 9, Command::ABORT, ControlBody::Empty);
        }
    } else {
        let _ = transact(&mut s, job, 9, Command::ABORT, ControlBody::Empty);
    }
    Ok(Report {
        frames_sent: s.sent,
        frames_received: s.received,
        ignored,
        per_rank,
        check: expected.check,
        latency,
        operation,
        capture: s.capture.take().unwrap_or_default(),
        timed_out,
    })
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
