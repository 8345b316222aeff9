//! The ranks of the operations an AM runs, SINGLE or tree alike: one `Rank`
//! each (its DATA, its stream, its side of the RESULT path), and one loop
//! (`drive`) that sends within the window or the switch's credit and the
//! pace, takes PROGRESS and RESULT, and stops when every operation is done
//! or nothing moved for the timeout.

use super::{AmError, Session};
use crate::feedback;
use crate::link::Rx;
use crate::verify::Reassembly;
use hdrhistogram::Histogram;
use prism_dataplane::engine::{Replay, RxWindow, Sent};
use prism_dataplane::fixtures::rank_mac;
use prism_dataplane::switch::impair::{ImpairSpec, Impairment, Verdict};
use prism_dataplane::wire::*;
use std::time::{Duration, Instant};

/// A DATA frame of a rank: its first and end element, its bytes.
pub type Packet = (u64, u64, Vec<u8>);

/// One rank of an operation.
pub struct Rank {
    pub id: u16,
    /// The link port its DATA leaves on.
    port: u16,
    packets: Vec<Packet>,
    /// The first packet not yet sent, and when each one before it first went out.
    next: usize,
    sent_at: Vec<Instant>,
    /// Without feedback: the first packet not yet below the window, and the bytes from it to `next`.
    held_lo: usize,
    held_bytes: usize,
    /// Where `last_data_sent` last found a packet of the rank.
    found: usize,
    /// With feedback: the DATA stream (replay, credit, timer).
    pub stream: Replay,
    /// The rank's RESULT path, if it receives.
    pub receiver: Option<Receiver>,
}

impl Rank {
    /// A receiving rank's RESULT log gets room for about its DATA bytes
    /// (RESULTs of the same ranges), reserved and touched now, before the run.
    pub fn new(id: u16, port: u16, packets: Vec<Packet>, stream: Replay, mut receiver: Option<Receiver>) -> Rank {
        let sent_at = Vec::with_capacity(packets.len());
        if let Some(x) = &mut receiver {
            x.results = FrameLog::with_capacity(packets.iter().map(|p| p.2.len()).sum());
        }
        Rank { id, port, packets, next: 0, sent_at, held_lo: 0, held_bytes: 0, found: 0, stream, receiver }
    }

    /// How many DATA frames the rank has to send.
    pub fn data_frames(&self) -> usize {
        self.packets.len()
    }
}

/// A receiving rank's RESULT path.
pub struct Receiver {
    window: RxWindow,
    /// The edge PROGRESS for its RESULTs goes back on.
    to_switch: BindingRecord,
    pub reassembly: Reassembly,
    /// RESULT frames taken, verified after the run so that checking never delays the traffic.
    pub results: FrameLog,
    /// RESULT frames that were copies of ones taken (with feedback).
    pub duplicates: u64,
}

impl Receiver {
    pub fn new(vector_len: u32, to_switch: BindingRecord) -> Receiver {
        Receiver { window: RxWindow::new(64), to_switch, reassembly: Reassembly::new(vector_len), results: FrameLog::default(), duplicates: 0 }
    }
}

/// Frames kept back to back in one buffer. Its memory is reserved and
/// touched when it is made, so that keeping a frame during a run is a copy
/// and never a page fault or an allocation (a `Vec` a RESULT frame cost
/// pktgen's loop a third of its time on memif in page faults alone).
#[derive(Debug, Default)]
pub struct FrameLog {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl FrameLog {
    /// Room for about `bytes` of frames (as many frames as 512-byte ones
    /// would make), touched. More grows it, as a `Vec` grows.
    pub fn with_capacity(bytes: usize) -> FrameLog {
        let mut log = FrameLog { bytes: Vec::with_capacity(bytes), ends: Vec::with_capacity(bytes / 512 + 1) };
        crate::verify::touch(log.bytes.spare_capacity_mut());
        crate::verify::touch(log.ends.spare_capacity_mut());
        log
    }

    pub fn push(&mut self, frame: &[u8]) {
        self.bytes.extend_from_slice(frame);
        self.ends.push(self.bytes.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter().copied()).map(|(a, b)| &self.bytes[a..b])
    }
}

/// How an operation's ranks are held back.
#[derive(Debug, Clone, Copy)]
pub enum Flow {
    /// No PROGRESS: each rank sends within `elements` past the base every
    /// receiver has, and within the switch's packet and byte limits.
    Window { elements: u64, intervals: usize, bytes: usize },
    /// PROGRESS: each rank's stream sends within the switch's credit and retransmits.
    Feedback,
}

/// One operation's ranks.
pub struct Operation {
    pub identity: Identity,
    pub flow: Flow,
    pub ranks: Vec<Rank>,
}

impl AsMut<Operation> for Operation {
    fn as_mut(&mut self) -> &mut Operation {
        self
    }
}

/// The pace over every operation: DATA frames first sent so far.
///
/// A pace that falls behind (the sender was descheduled, or a pass took
/// long) catches up by at most `burst` frames, one a rank: the rest of the
/// debt is forgiven, so a gap in the sender never reaches the switch as one
/// long burst. The offered rate is then an upper bound, and the achieved
/// rate is what the run reports.
struct Pace {
    rate_pps: Option<f64>,
    data_start: Instant,
    sent_data: u64,
    /// Frames the pace has counted as sent: `sent_data` plus the forgiven debt.
    paced: u64,
    burst: u64,
    /// The pace refused a frame since `begin_pass`: the pass stopped on
    /// the pace, not on the window.
    held: bool,
}

impl Pace {
    fn new(rate_pps: Option<f64>, data_start: Instant, burst: u64) -> Pace {
        Pace { rate_pps, data_start, sent_data: 0, paced: 0, burst: burst.max(1), held: false }
    }
    /// Frames due by `now` since the start.
    fn due(&self, now: Instant, pps: f64) -> u64 {
        (now.saturating_duration_since(self.data_start).as_secs_f64() * pps) as u64 + 1
    }
    /// `now` is read only for a paced run (the clock a frame costs counts at millions a second).
    fn allows(&mut self, now: impl FnOnce() -> Instant) -> bool {
        let Some(pps) = self.rate_pps else { return true };
        let due = self.due(now(), pps);
        self.paced = self.paced.max(due.saturating_sub(self.burst));
        let ok = self.paced < due;
        self.held |= !ok;
        ok
    }
    fn begin_pass(&mut self) {
        self.held = false;
    }
    fn sent(&mut self) {
        self.sent_data += 1;
        self.paced += 1;
    }
    /// How long the run may wait for frames after a pass that sent
    /// nothing: until its next DATA frame is due when the pace held the
    /// pass (at most 1 ms), else 1 ms (the window holds it, and only frames
    /// from the switch can open it). It asks what held the pass, not
    /// whether the pace allows a frame now: a frame that fell due between
    /// the two would otherwise wait the whole millisecond for a RESULT that
    /// needs it (every 50% load level lost 1 ms in most operations so).
    fn until_next(&mut self, now: Instant) -> Duration {
        let most = Duration::from_millis(1);
        let Some(pps) = self.rate_pps.filter(|_| self.held) else { return most };
        let due = self.data_start + Duration::from_secs_f64(self.paced as f64 / pps);
        // At least a nanosecond: `due` is rounded to one, and a zero wait on
        // a simulated link would never move its clock to the next frame.
        due.saturating_duration_since(now).clamp(Duration::from_nanos(1), most)
    }
    fn clock_ns(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.data_start).as_nanos() as u64
    }
}

/// What went out in one sending pass.
#[derive(Default)]
struct Sending {
    /// Any frame, retransmissions too: the loop then does not wait for frames.
    any: bool,
    /// A DATA frame sent for the first time: the run moved on.
    new_data: bool,
}

impl Operation {
    /// Sends what the window (or the streams' credit) and the pace allow.
    fn send(&mut self, s: &mut Session<'_>, pace: &mut Pace, out: &mut Vec<Sent>) -> Result<Sending, AmError> {
        let mut sending = Sending::default();
        match self.flow {
            Flow::Feedback => {
                // Ranks queue what their replay depth allows; the streams send within the switch's credit.
                let clock = pace.clock_ns(s.now());
                for rank in &mut self.ranks {
                    if rank.stream.deadline().is_some_and(|d| d <= clock) {
                        rank.stream.on_timeout(clock, out);
                    }
                    while rank.stream.has_room() && rank.next < rank.packets.len() && pace.allows(|| s.now()) {
                        let (first, end, f) = &rank.packets[rank.next];
                        rank.sent_at.push(s.now());
                        feedback::queue(&mut rank.stream, clock, out, *first, *end, f);
                        rank.next += 1;
                        pace.sent();
                        sending.new_data = true;
                    }
                }
                sending.any = !out.is_empty();
                s.flush(out)?;
            }
            Flow::Window { elements, intervals, bytes } => {
                // The window's base as RESULTs show it: every receiver has everything below.
                let base = self.ranks.iter().filter_map(|k| k.receiver.as_ref()).map(|x| x.reassembly.contiguous()).min().unwrap_or(0);
                for rank in &mut self.ranks {
                    while rank.held_lo < rank.next && rank.packets[rank.held_lo].1 <= base {
                        rank.held_bytes -= rank.packets[rank.held_lo].2.len();
                        rank.held_lo += 1;
                    }
                }
                // One frame a rank a round: the ranks' frames of a range go
                // out together, so a range completes as soon as it can, and
                // a catch-up burst is a few frames of every rank, not one
                // rank's window.
                'rounds: loop {
                    let mut round = false;
                    for rank in &mut self.ranks {
                        let Some((_, end, frame)) = rank.packets.get(rank.next) else { continue };
                        let held = rank.next - rank.held_lo;
                        if *end > base + elements || held >= intervals || rank.held_bytes + frame.len() > bytes {
                            continue;
                        }
                        if !pace.allows(|| s.now()) {
                            break 'rounds;
                        }
                        rank.held_bytes += frame.len();
                        rank.sent_at.push(s.now());
                        s.send(rank.port, frame)?;
                        rank.next += 1;
                        pace.sent();
                        round = true;
                        sending = Sending { any: true, new_data: true };
                    }
                    if !round {
                        break;
                    }
                }
            }
        }
        Ok(sending)
    }

    /// A PROGRESS for one of the streams: whether it acknowledged something
    /// (None: not for any of this operation's streams).
    fn on_progress(&mut self, clock: u64, eth: &EthernetRepr, pr: &ProgressRepr<'_>, out: &mut Vec<Sent>) -> Option<bool> {
        if !matches!(self.flow, Flow::Feedback) {
            return None;
        }
        let rank = self.ranks.iter_mut().find(|k| k.id == pr.stream_id && rank_mac(k.id) == eth.dst)?;
        let acked = rank.stream.stats.acked;
        rank.stream.on_progress(clock, pr, out);
        Some(rank.stream.stats.acked > acked)
    }

    /// A RESULT: whether its receiver took it (None: no receiver of the
    /// operation takes the frame).
    fn on_result(&mut self, rx: &Rx, eth: &EthernetRepr, d: &DataRepr<'_>, latency: Option<&mut Histogram<u64>>, out: &mut Vec<Sent>) -> Option<bool> {
        let feedback = matches!(self.flow, Flow::Feedback);
        let i = self.ranks.iter().position(|k| k.receiver.is_some() && k.id == d.stream_id && rank_mac(k.id) == eth.dst)?;
        let id = self.ranks[i].id;
        let x = self.ranks[i].receiver.as_mut()?;
        let accepted = if feedback { feedback::take_result(&mut x.window, d) } else { ProgressStatus::ACCEPTED };
        if accepted == ProgressStatus::DUPLICATE {
            x.duplicates += 1;
        }
        if accepted == ProgressStatus::ACCEPTED && x.reassembly.note(d) {
            x.results.push(&rx.frame);
        }
        if feedback {
            // PROGRESS back to the switch on this result path.
            feedback::answer(out, self.identity, rank_mac(id), &x.to_switch, &mut x.window, d.packet_id, accepted);
        }
        if let (ProgressStatus::ACCEPTED, Some(latency)) = (accepted, latency) {
            // Latency: from the last DATA (any rank) covering this range.
            if let Some(t) = self.last_data_sent(d.first_element as u64, d.end_element()) {
                let _ = latency.record(rx.at.saturating_duration_since(t).as_nanos().max(1) as u64);
            }
        }
        Some(accepted == ProgressStatus::ACCEPTED)
    }

    /// When the last DATA frame (any rank) that covers part of `[a, b)` was first sent.
    /// Each rank's search starts where its last one ended (RESULTs come
    /// mostly in order): a binary search from scratch was a cache miss a
    /// step in every rank's packets, for every RESULT.
    fn last_data_sent(&mut self, a: u64, b: u64) -> Option<Instant> {
        self.ranks
            .iter_mut()
            .filter_map(|k| {
                let sent = &k.packets[..k.sent_at.len()];
                let mut i = k.found.min(sent.len());
                if i > 0 && sent[i - 1].1 > a {
                    i = sent[..i].partition_point(|p| p.1 <= a);
                } else {
                    while i < sent.len() && sent[i].1 <= a {
                        i += 1;
                    }
                }
                k.found = i;
                (i..sent.len()).take_while(|&i| sent[i].0 < b).map(|i| k.sent_at[i]).max()
            })
            .max()
    }

    /// The earliest retransmission or probe timer of the ranks' streams
    /// (pace clock, ns): with feedback, the loop must not wait past it.
    fn next_deadline(&self) -> Option<u64> {
        match self.flow {
            Flow::Feedback => self.ranks.iter().filter_map(|k| k.stream.deadline()).min(),
            Flow::Window { .. } => None,
        }
    }

    /// Every receiver has every element (or learnt the result is inexact)
    /// and, with feedback, every rank's DATA is sent and acknowledged.
    pub fn done(&self) -> bool {
        let received = self.ranks.iter().filter_map(|k| k.receiver.as_ref()).all(|x| x.reassembly.complete());
        match self.flow {
            Flow::Window { .. } => received,
            Flow::Feedback => received && self.ranks.iter().all(|k| k.stream.is_idle() && k.next == k.packets.len()),
        }
    }
}

/// What a received frame did for the operations of a run.
enum Taken {
    /// A RESULT a receiver took (new).
    Result,
    /// A PROGRESS that acknowledged something.
    Moved,
    /// A copy, or a PROGRESS that acknowledged nothing new.
    Nothing,
}

/// Gives one received frame to the operation it is for; its answers go to
/// `out`. None: no operation of the run takes it (nor a PROGRESS without
/// the pace `clock` its stream's timers run on).
fn take<O: AsMut<Operation>>(ops: &mut [O], rx: &Rx, clock: Option<u64>, limits: &Limits, latency: Option<&mut Histogram<u64>>, out: &mut Vec<Sent>) -> Option<Taken> {
    let Ok(ParsedFrame { eth, prism: Some(p) }) = parse_frame(&rx.frame, limits) else { return None };
    let mut candidates = ops.iter_mut().map(AsMut::as_mut);
    match &p {
        PrismRepr::Progress(pr) => {
            let moved = candidates.find(|o| o.identity == pr.identity)?.on_progress(clock?, &eth, pr, out)?;
            Some(if moved { Taken::Moved } else { Taken::Nothing })
        }
        PrismRepr::Data(d) if d.class == Class::RESULT => {
            let accepted = candidates.find(|o| o.identity == d.identity)?.on_result(rx, &eth, d, latency, out)?;
            Some(if accepted { Taken::Result } else { Taken::Nothing })
        }
        _ => None,
    }
}

/// Waits `wait` on the link's clock after `drive`, still answering what
/// arrives: a RESULT whose PROGRESS was lost comes again, and the switch
/// holds its operation (COMPLETE is refused) until a copy is acknowledged.
pub fn linger<O: AsMut<Operation>>(s: &mut Session<'_>, ops: &mut [O], wait: Duration, limits: &Limits) -> Result<(), AmError> {
    let until = s.now() + wait;
    let mut out = Vec::new();
    while s.now() < until {
        let Some(rx) = s.recv(until.saturating_duration_since(s.now()))? else { continue };
        // The ranks' streams are idle: a late PROGRESS is dropped.
        let _ = take(ops, &rx, None, limits, None, &mut out);
        s.flush(&mut out)?;
    }
    Ok(())
}

/// How `drive` runs.
pub struct Drive<'a> {
    /// DATA frames per second over every operation (None: as the window allows).
    pub rate_pps: Option<f64>,
    /// Give up after this long without anything moving on.
    pub timeout: Duration,
    pub limits: Limits,
    /// Impairment of the frames the ranks receive.
    pub impair: Option<ImpairSpec>,
    /// `observe` is told where the run stands this often.
    pub observe_every: Duration,
    pub observe: &'a mut dyn FnMut(&Status),
}

/// Where a running job stands.
#[derive(Debug, Clone, Copy, Default)]
pub struct Status {
    pub elapsed: Duration,
    /// DATA frames sent for the first time, and again.
    pub data_sent: u64,
    pub retransmitted: u64,
    /// DATA frames PROGRESS acknowledged.
    pub data_acked: u64,
    /// RESULT frames taken, over every receiver.
    pub result_frames: u64,
    /// Frames received on the link.
    pub frames_received: u64,
}

/// How a data phase ended.
pub struct Outcome {
    pub data_start: Instant,
    pub end: Instant,
    /// When the last RESULT was taken (`data_start` if none).
    pub last_result: Instant,
    /// Frames no operation took.
    pub ignored: u64,
    /// Nothing moved on for the timeout.
    pub timed_out: bool,
    /// Last contributing DATA sent to RESULT received, ns, one sample per RESULT taken.
    pub latency: Histogram<u64>,
}

/// The frames the ranks receive, through the impairment if there is one.
struct Arrivals {
    impairment: Option<Impairment>,
    held: Option<Rx>,
}

impl Arrivals {
    /// What `rx` delivers (`None`: nothing arrived, so a held frame goes on).
    fn deliver(&mut self, rx: Option<Rx>, into: &mut Vec<Rx>) {
        let Some(rx) = rx else {
            into.extend(self.held.take());
            return;
        };
        match self.impairment.as_mut().map_or(Verdict::Deliver, |i| i.decide(rx.frame.len())) {
            Verdict::Deliver => {
                into.push(rx);
                into.extend(self.held.take());
            }
            Verdict::Drop => {}
            Verdict::Duplicate => into.extend([rx.clone(), rx]),
            Verdict::Cut(n) => into.push(Rx { frame: rx.frame[..n].to_vec(), ..rx }),
            Verdict::Hold => into.extend(self.held.replace(rx)),
        }
    }
}

/// The data phase of `ops` (each set up and granted its start): until every
/// one is done, or nothing moved on for `how.timeout`.
pub fn drive<O: AsMut<Operation>>(s: &mut Session<'_>, ops: &mut [O], how: Drive<'_>) -> Result<Outcome, AmError> {
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).map_err(|e| AmError::Io(format!("latency histogram: {e}")))?;
    let data_start = s.now();
    // A catch-up burst of at most one frame a rank.
    let ranks: usize = ops.iter_mut().map(|o| o.as_mut().ranks.len()).sum();
    let mut pace = Pace::new(how.rate_pps, data_start, ranks as u64);
    let mut arrivals = Arrivals { impairment: how.impair.map(Impairment::new), held: None };
    let (mut last_result, mut last_progress, mut last_observed) = (data_start, data_start, data_start);
    let (mut ignored, mut timed_out) = (0u64, false);
    let mut out: Vec<Sent> = Vec::new();
    let mut frames: Vec<Rx> = Vec::new();
    loop {
        let now = s.now();
        if now.saturating_duration_since(last_observed) >= how.observe_every {
            last_observed = now;
            (how.observe)(&status(ops, s, &pace, now));
        }
        let mut moved = false;
        let mut sent_any = false;
        pace.begin_pass();
        for op in ops.iter_mut() {
            let sending = op.as_mut().send(s, &mut pace, &mut out)?;
            sent_any |= sending.any;
            moved |= sending.new_data;
        }
        // Wait for the first frame only, then take what has arrived and go
        // back to sending: a RESULT opens the window at once. (Waiting the
        // full timeout for silence after each burst held every window turn
        // for 1 ms: 13k DATA/s through a switch that does 1.5M.)
        let mut wait = if sent_any { Duration::ZERO } else { pace.until_next(s.now()) };
        // A stream's timer cuts the wait short: a retransmission is due
        // then, not after the wait for frames (up to 1 ms later).
        let deadline = ops.iter_mut().filter_map(|o| o.as_mut().next_deadline()).min();
        wait = until_deadline(wait, deadline, pace.clock_ns(s.now()));
        loop {
            let rx = s.recv(wait)?;
            wait = Duration::ZERO;
            let nothing = rx.is_none();
            arrivals.deliver(rx, &mut frames);
            for rx in frames.drain(..) {
                let clock = pace.clock_ns(s.now());
                match take(ops, &rx, Some(clock), &how.limits, Some(&mut latency), &mut out) {
                    Some(Taken::Result) => {
                        last_result = rx.at;
                        moved = true;
                    }
                    Some(Taken::Moved) => moved = true,
                    Some(Taken::Nothing) => {}
                    None => ignored += 1,
                }
                s.flush(&mut out)?;
                s.recycle(rx.frame);
            }
            if nothing {
                break;
            }
        }
        if ops.iter_mut().all(|o| o.as_mut().done()) {
            break;
        }
        let now = s.now();
        if moved {
            last_progress = now;
        } else if now.saturating_duration_since(last_progress) > how.timeout {
            timed_out = true;
            break;
        }
    }
    Ok(Outcome { data_start, end: s.now(), last_result, ignored, timed_out, latency })
}

/// `wait`, or less when a timer falls due sooner (`deadline` and `clock`
/// in the pace's ns; at least 1 ns, as `Pace::until_next`).
fn until_deadline(wait: Duration, deadline: Option<u64>, clock: u64) -> Duration {
    match deadline {
        Some(d) => wait.min(Duration::from_nanos(d.saturating_sub(clock).max(1))),
        None => wait,
    }
}

fn status<O: AsMut<Operation>>(ops: &mut [O], s: &Session<'_>, pace: &Pace, now: Instant) -> Status {
    let mut st = Status { elapsed: now.saturating_duration_since(pace.data_start), data_sent: pace.sent_data, frames_received: s.received, ..Status::default() };
    for rank in ops.iter_mut().flat_map(|o| &o.as_mut().ranks) {
        st.retransmitted += rank.stream.stats.retransmitted;
        st.data_acked += rank.stream.stats.acked;
        st.result_frames += rank.receiver.as_ref().map_or(0, |x| x.results.len() as u64);
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `last_data_sent`'s search resumed from the last one gives what a
    /// binary search from scratch gives, for queries in and out of order,
    /// repeated, and as more packets are sent.
    #[test]
    fn the_resumed_latency_search_is_the_binary_search() {
        let t0 = Instant::now();
        let mut x = 0x2545_f491u32;
        let mut rnd = move |n: u32| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x % n
        };
        let ranks = (0..3u16)
            .map(|r| {
                let mut packets = Vec::new();
                let mut at = 0u64;
                while at < 2_000 {
                    let n = 1 + u64::from(rnd(90));
                    packets.push((at, at + n, Vec::new()));
                    at += n;
                }
                Rank::new(r, 0, packets, Replay::new(0, 0, 1514, 16, 1 << 20, 1_000_000), None)
            })
            .collect();
        let mut op = Operation { identity: Identity { job: 1, group: 1, group_gen: 1, op: 1, op_gen: 1 }, flow: Flow::Feedback, ranks };
        let scratch = |op: &Operation, a: u64, b: u64| {
            op.ranks
                .iter()
                .filter_map(|k| {
                    let sent = &k.packets[..k.sent_at.len()];
                    let i = sent.partition_point(|p| p.1 <= a);
                    (i..sent.len()).take_while(|&i| sent[i].0 < b).map(|i| k.sent_at[i]).max()
                })
                .max()
        };
        let mut base = 0u64;
        for step in 0..3_000u64 {
            // Send a few more packets now and then, each at its own time.
            for k in &mut op.ranks {
                while k.sent_at.len() < k.packets.len() && rnd(3) == 0 {
                    k.sent_at.push(t0 + Duration::from_nanos(step * 1_000 + u64::from(rnd(1_000))));
                }
            }
            // Mostly the next range, sometimes one far behind or ahead.
            let a = match rnd(10) {
                0 => u64::from(rnd(2_000)),
                1 => base,
                _ => {
                    base = (base + u64::from(rnd(120))) % 2_000;
                    base
                }
            };
            let b = a + 1 + u64::from(rnd(200));
            assert_eq!(op.last_data_sent(a, b), scratch(&op, a, b), "step {step}: [{a}, {b})");
        }
    }

    #[test]
    fn a_frame_log_gives_back_its_frames_in_order() {
        let frames: Vec<Vec<u8>> = (0..50u8).map(|k| (0..(k as usize * 37 % 1500 + 1)).map(|i| (i as u8) ^ k).collect()).collect();
        // Room for a few only: it grows past what was touched.
        let mut log = FrameLog::with_capacity(3000);
        assert!(log.is_empty());
        for f in &frames {
            log.push(f);
        }
        assert_eq!(log.len(), frames.len());
        let back: Vec<&[u8]> = log.iter().collect();
        assert_eq!(back, frames.iter().map(|f| f.as_slice()).collect::<Vec<_>>());
    }

    /// Sends whatever the pace allows at `now`.
    fn send_due(p: &mut Pace, now: Instant) -> u64 {
        let mut n = 0;
        while p.allows(|| now) {
            p.sent();
            n += 1;
        }
        n
    }

    #[test]
    fn a_pace_that_fell_behind_catches_up_by_at_most_its_burst() {
        let t0 = Instant::now();
        let mut p = Pace::new(Some(1_000_000.0), t0, 4);
        assert_eq!(send_due(&mut p, t0), 1, "the first frame is due at the start");
        // 1 ms late: 1,000 frames are owed, four go.
        assert_eq!(send_due(&mut p, t0 + Duration::from_millis(1)), 4);
        assert_eq!(p.sent_data, 5);
        // On schedule again, one a microsecond (half-way times: no float rounding at the edges).
        assert_eq!(send_due(&mut p, t0 + Duration::from_nanos(1_001_500)), 1);
        assert_eq!(send_due(&mut p, t0 + Duration::from_nanos(1_003_500)), 2);
        assert!(p.until_next(t0 + Duration::from_nanos(1_003_500)) <= Duration::from_micros(1));
    }

    #[test]
    fn a_frame_due_after_the_pass_is_waited_for_by_the_pace_not_the_window() {
        let t0 = Instant::now();
        let mut p = Pace::new(Some(1_000_000.0), t0, 4);
        p.begin_pass();
        assert_eq!(send_due(&mut p, t0), 1);
        // The pass ended on the pace; by the time the loop asks how long to
        // wait, the next frame is due: no wait for frames from the switch.
        let later = t0 + Duration::from_nanos(1_500);
        assert!(p.until_next(later) <= Duration::from_nanos(1), "{:?}", p.until_next(later));
        // A pass the pace did not hold (the window did) waits for the switch.
        p.begin_pass();
        assert_eq!(p.until_next(later), Duration::from_millis(1));
    }

    #[test]
    fn a_streams_timer_cuts_the_wait_for_frames_short() {
        let ms = Duration::from_millis(1);
        assert_eq!(until_deadline(ms, None, 5_000), ms);
        assert_eq!(until_deadline(ms, Some(5_300), 5_000), Duration::from_nanos(300));
        assert_eq!(until_deadline(ms, Some(4_000), 5_000), Duration::from_nanos(1), "a timer already due: go at once");
        assert_eq!(until_deadline(Duration::ZERO, Some(9_000), 5_000), Duration::ZERO);
        assert_eq!(until_deadline(ms, Some(5_000 + 2_000_000), 5_000), ms);
    }

    #[test]
    fn without_a_rate_the_pace_allows_everything() {
        let t0 = Instant::now();
        let mut p = Pace::new(None, t0, 4);
        assert_eq!((0..100).filter(|_| p.allows(|| t0)).count(), 100);
        assert_eq!(p.until_next(t0), Duration::from_millis(1));
    }
}
