//! One job end to end: setup as Aggregation Manager, ranks' DATA within the
//! window, RESULT reassembly and verification, COMPLETE and RELEASE.

use crate::am::control::{find_record, Control, Peer, Retry};
use crate::am::ranks::{drive, linger, Drive, Flow, Operation, Rank, Receiver};
use crate::am::{AmError, Session};
use crate::feedback;
use crate::job::Job;
use crate::link::Link;
use crate::verify::{Check, Expected, Mismatch, Reassembly};
use hdrhistogram::Histogram;
use prism_dataplane::engine::Replay;
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
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error("I/O: {0}")]
    Io(String),
    /// The target did not answer a CONTROL request in time.
    #[error("the switch did not answer {command} ({tries} tries, {} ms apart)", SPACING.as_millis())]
    NoAnswer { command: &'static str, tries: u32 },
    /// The target refused a request.
    #[error("the switch refused {command}: {status} (detail {detail})")]
    Refused { command: &'static str, status: &'static str, detail: u16 },
    /// No capability record of the target covers the job's tuple.
    #[error("no capability record of the switch covers the job's (input, accumulator, partial, output) tuple")]
    Unsupported,
}

impl From<AmError> for RunError {
    fn from(e: AmError) -> Self {
        match e {
            AmError::Io(e) => RunError::Io(e),
            AmError::NoAnswer { command, tries, .. } => RunError::NoAnswer { command, tries },
            AmError::Refused { command, status, detail } => RunError::Refused { command, status, detail },
        }
    }
}

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

/// How long each CONTROL try waits for its answer.
const SPACING: Duration = Duration::from_millis(500);

/// How long the ranks answer frames before COMPLETE is asked again.
const COMPLETE_AGAIN: Duration = Duration::from_millis(20);

/// Transaction IDs are unique per operation generation: the step in the low 4 bits.
mod step {
    pub const CAPS_QUERY: u32 = 1;
    pub const STAGE: u32 = 2;
    pub const COMMIT: u32 = 3;
    pub const COMPLETE: u32 = 4;
    pub const RELEASE: u32 = 5;
    pub const ABORT: u32 = 9;
}

/// One stripe's CONTROL: to the switch, from the job's AM.
struct Stepper {
    control: Control,
    peer: Peer,
}

impl Stepper {
    fn new(job: &Job) -> Self {
        Stepper { control: Control { identity: job.identity, am_mac: job.am_mac, retry: Retry { tries: 3, spacing: SPACING } }, peer: Peer { mac: job.switch_mac, port: job.am_port } }
    }
    fn txn(&self, step: u32) -> u32 {
        self.control.identity.op_gen.wrapping_shl(4) | step
    }
    /// A request answered by an ACK with status OK.
    fn ack(&self, s: &mut Session<'_>, step: u32, command: Command, body: ControlBody<'_>) -> Result<(), RunError> {
        self.control.transact(s, self.peer, self.txn(step), command, body)?;
        Ok(())
    }
    /// ABORT, when the run gives up on the stripe: nobody is left to tell if it is not answered.
    fn abort(&self, s: &mut Session<'_>) {
        let _ = self.ack(s, step::ABORT, Command::ABORT, ControlBody::Empty);
    }

    /// Capabilities, STAGE and COMMIT: the context the stripe runs with.
    fn setup(&self, job: &Job, s: &mut Session<'_>, opts: &RunOptions) -> Result<ContextRecord, RunError> {
        // The first contact is retried for the whole run timeout: a switch whose
        // ports are still coming up, or a link that is not up yet, answers late, not never.
        let first_contact = Retry { tries: (opts.timeout.as_millis() / SPACING.as_millis()).max(3) as u32, spacing: SPACING };
        let pages = self.control.transact_with(s, self.peer, self.txn(step::CAPS_QUERY), Command::CAPS_QUERY, ControlBody::Empty, first_contact)?;
        // Capabilities: the whole tuple must be covered by one record.
        let mut context = job.context();
        let record = find_record(&pages, |r| r.covers(&context) && context.window_elements <= r.window_elements).ok_or(RunError::Unsupported)?;
        // The window's packet and byte limits: the job's defaults, within what the switch holds.
        context.window_intervals = context.window_intervals.min(record.window_intervals);
        context.window_bytes = context.window_bytes.min(record.window_bytes);
        // The switch keeps fewer frames of replay than asked: use what it has (0: no PROGRESS).
        context.replay_depth = context.replay_depth.min(record.replay_depth);
        let bindings = job.bindings();
        self.ack(s, step::STAGE, Command::STAGE, ControlBody::Stage { context, bindings: Records::Typed(&bindings) })?;
        if let Err(e) = self.ack(s, step::COMMIT, Command::COMMIT, ControlBody::Empty) {
            self.abort(s);
            return Err(e);
        }
        Ok(context)
    }

    /// COMPLETE, then RELEASE. The switch refuses COMPLETE (BAD_STATE) while
    /// a RESULT copy is still unacknowledged, which a receiver's last
    /// PROGRESS on another port may not have reached yet: COMPLETE is asked
    /// again, each time under a Transaction ID of its own (the switch answers
    /// a repeated ID from its record), while the ranks keep answering what
    /// arrives, until `until`. A COMPLETE refused for good or unanswered is
    /// the run's error, after an ABORT that frees what the switch still holds.
    fn finish<O: AsMut<Operation>>(&self, s: &mut Session<'_>, ops: &mut [O], until: Instant, limits: &Limits) -> Result<(), RunError> {
        let mut again = 0u32;
        loop {
            let txn = self.txn(step::COMPLETE) ^ (again << 28);
            match self.control.transact(s, self.peer, txn, Command::COMPLETE, ControlBody::Empty) {
                Ok(_) => break,
                Err(AmError::Refused { status: "BAD_STATE", .. }) if again < 15 && s.now() < until => {
                    again += 1;
                    if let Err(e) = linger(s, ops, COMPLETE_AGAIN, limits) {
                        self.abort(s);
                        return Err(e.into());
                    }
                }
                Err(e) => {
                    self.abort(s);
                    return Err(e.into());
                }
            }
        }
        self.ack(s, step::RELEASE, Command::RELEASE, ControlBody::Empty)
    }
}

/// One stripe of the collective (the whole job unless it is striped): its
/// ranks, where its elements start in the collective's vector, and what its
/// receivers must get.
struct Stripe {
    job: Job,
    offset: u32,
    expected: Expected,
    op: Operation,
}

impl AsMut<Operation> for Stripe {
    fn as_mut(&mut self) -> &mut Operation {
        &mut self.op
    }
}

impl Stripe {
    fn new(job: Job, offset: u32, context: &ContextRecord) -> Stripe {
        let vectors = job.vectors();
        let expected = Expected::new(&job, &vectors);
        let receivers = job.receivers();
        let ranks = (0..job.ranks)
            .map(|r| {
                let port = job.rank_port(r);
                let stream = Replay::new(port, context.replay_depth as usize, job.mtu as usize + 14, context.window_intervals as u32, context.window_bytes, 5_000_000);
                let receiver = receivers.contains(&r).then(|| Receiver::new(job.vector_len, feedback::to_switch(r, job.switch_mac, port)));
                Rank::new(r, port, job.packets(r, &vectors[r as usize]), stream, receiver)
            })
            .collect();
        let flow = if context.replay_depth > 0 {
            Flow::Feedback
        } else {
            Flow::Window { elements: job.window_elements() as u64, intervals: context.window_intervals as usize, bytes: context.window_bytes as usize }
        };
        let op = Operation { identity: job.identity, flow, ranks };
        Stripe { job, offset, expected, op }
    }

    fn total(&self) -> usize {
        self.op.ranks.iter().map(|k| k.data_frames()).sum()
    }

    /// Exact verification after the run, so that it never delays the traffic.
    fn verify(&mut self) {
        let limits = Limits { mtu: self.job.mtu };
        for rank in &mut self.op.ranks {
            let Some(x) = &mut rank.receiver else { continue };
            for frame in x.results.iter() {
                if let Ok(ParsedFrame { prism: Some(PrismRepr::Data(d)), .. }) = parse_frame(frame, &limits) {
                    x.reassembly.check(&self.job, rank.id, &d, &self.expected);
                }
            }
        }
    }
}

/// Runs a job against a switch: its `stripes` operations at once (one
/// unless the job is striped), verified and reported as one collective.
pub fn run(job: &Job, link: &mut dyn Link, opts: &RunOptions) -> Result<Report, RunError> {
    let mut s = Session::new(link, opts.capture);
    let whole = job.vectors();
    let cuts = if job.stripes > 1 { job.striped(&whole) } else { vec![(0, job.clone())] };
    let mut stripes: Vec<Stripe> = Vec::with_capacity(cuts.len());
    for (k, (offset, j)) in cuts.into_iter().enumerate() {
        match Stepper::new(&j).setup(&j, &mut s, opts) {
            Ok(context) => stripes.push(Stripe::new(j, offset, &context)),
            Err(e) => {
                // The stripes already committed are given back.
                for o in &stripes {
                    Stepper::new(&o.job).abort(&mut s);
                }
                return Err(if k == 0 { e } else { RunError::Io(format!("stripe {k}: {e}")) });
            }
        }
    }
    // START_GRANT: every COMMIT is acknowledged; the ranks may send.
    let total: usize = stripes.iter().map(Stripe::total).sum();
    let mut line = |st: &crate::am::ranks::Status| {
        if opts.progress {
            eprint!("\r  sent {}/{total} DATA ({} again), received {} frames, {:.1} s   ", st.data_sent, st.retransmitted, st.frames_received, st.elapsed.as_secs_f64());
        }
    };
    let how = Drive { rate_pps: opts.rate_pps, timeout: opts.timeout, limits: Limits { mtu: job.mtu }, impair: None, observe_every: Duration::from_millis(500), observe: &mut line };
    let outcome = drive(&mut s, &mut stripes, how)?;
    if opts.progress {
        eprintln!();
    }
    for o in &mut stripes {
        o.verify();
    }
    let mut release: Result<(), RunError> = Ok(());
    let until = s.now() + opts.timeout;
    let limits = Limits { mtu: job.mtu };
    for k in 0..stripes.len() {
        let am = Stepper::new(&stripes[k].job);
        if outcome.timed_out {
            am.abort(&mut s);
        } else if let Err(e) = am.finish(&mut s, &mut stripes, until, &limits) {
            release = release.and(Err(e));
        }
    }
    release?;
    // One collective: the stripes' receivers joined at their offsets.
    let check = stripes.first().map_or(Check::Exact, |o| o.expected.check);
    let mut per_rank: Vec<(u16, Reassembly)> = job.receivers().iter().map(|&r| (r, Reassembly::default())).collect();
    for o in stripes {
        let parts = o.op.ranks.into_iter().filter_map(|k| k.receiver.map(|x| x.reassembly));
        for ((_, whole), part) in per_rank.iter_mut().zip(parts) {
            whole.append(part, o.offset as u64);
        }
    }
    Ok(Report {
        frames_sent: s.sent,
        frames_received: s.received,
        ignored: outcome.ignored,
        per_rank,
        check,
        latency: outcome.latency,
        operation: outcome.last_result.saturating_duration_since(outcome.data_start),
        capture: s.take_capture(),
        timed_out: outcome.timed_out,
    })
}
