//! pktgen against the in-process engine: every policy and output, 2 to 8
//! ranks, and a corrupting switch caught at the right element.

mod common;

use common::{config, job};
use prism_arith::NumFormat;
use prism_dataplane::wire::*;
use prism_pktgen::*;

#[test]
fn every_policy_and_output_verifies() {
    for ranks in [2u16, 3, 8] {
        for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
            for acc in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
                for output in [OutputFormat::FP32, OutputFormat::AUTO, OutputFormat::BF16, OutputFormat::KULISCH] {
                    if acc == AccumulatorPolicy::FP32_ARRIVAL && output == OutputFormat::KULISCH {
                        continue;
                    }
                    let j = job(ranks, semantics, acc, output);
                    let mut link = SimLink::new(&config());
                    let r = run(&j, &mut link, &RunOptions::default()).unwrap();
                    assert!(r.passed(), "{ranks} {semantics:?} {acc:?} {output:?}: {:?}", r.mismatches());
                    assert_eq!(r.per_rank.len(), if semantics == Semantics::REDUCE { 1 } else { ranks as usize });
                    assert_eq!(r.latency.len(), r.per_rank.iter().map(|(_, p)| p.frames).sum::<u64>(), "one latency sample per RESULT frame");
                }
            }
        }
    }
}

#[test]
fn input_formats_mtus_and_packetizations() {
    for (input, pattern) in [(NumFormat::Int8, Pattern::Integers), (NumFormat::Fp16, Pattern::Uniform), (NumFormat::Bf16, Pattern::FullRange)] {
        for mtu in [576u16, 1500, 9000] {
            for p in [Packetization::Full, Packetization::Random, Packetization::MultiGroup] {
                let mut j = job(3, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::AUTO);
                (j.input, j.pattern, j.mtu, j.packetization) = (input, pattern, mtu, p);
                let mut link = SimLink::new(&config());
                let r = run(&j, &mut link, &RunOptions::default()).unwrap();
                assert!(r.passed(), "{input:?} {mtu} {p:?}");
            }
        }
    }
}

#[test]
fn a_corrupting_switch_is_caught_at_the_element() {
    // Both checks: Kulisch by the exact sum, FP32_ARRIVAL by the bits of every arrival order.
    for acc in [AccumulatorPolicy::KULISCH_FIXED, AccumulatorPolicy::FP32_ARRIVAL] {
        let j = job(3, Semantics::ALLREDUCE, acc, OutputFormat::FP32);
        let mut link = SimLink::new(&config());
        link.corrupt_element = Some(1234);
        let r = run(&j, &mut link, &RunOptions::default()).unwrap();
        assert!(!r.passed(), "{acc:?}");
        let m = r.mismatches();
        assert_eq!(m.len(), 3, "{acc:?}: one per receiving rank");
        assert!(m.iter().all(|m| m.element == 1234), "{acc:?}: {m:?}");
    }
}

#[test]
fn unsupported_tuples_are_refused_before_stage() {
    let mut j = job(2, Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::KULISCH);
    j.vector_len = 10;
    let mut link = SimLink::new(&config());
    assert_eq!(run(&j, &mut link, &RunOptions::default()).err(), Some(RunError::Unsupported));
    assert_eq!(link.node().counters.accepted, 1, "only the CAPS_QUERY reached the switch");
}

#[test]
fn progress_and_replay_on_a_single_switch() {
    for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
        for acc in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
            let mut j = job(4, semantics, acc, OutputFormat::FP32);
            j.replay_depth = 4;
            j.vector_len = 20_000;
            let mut link = SimLink::new(&config());
            let r = run(&j, &mut link, &RunOptions::default()).unwrap();
            assert!(r.passed(), "{semantics:?} {acc:?}: missing {} {:?}", r.missing(), r.mismatches());
            assert!(!r.timed_out);
            let c = &link.node().counters;
            // Every DATA and every RESULT was answered by PROGRESS, and the switch applied the ranks'.
            assert!(c.progress_sent >= c.data_applied, "{c:?}");
            assert!(c.progress_applied >= c.results_sent, "{c:?}");
            assert_eq!(c.data_rejected.iter().sum::<u64>(), 0, "the ranks stayed within the credit: {c:?}");
            assert_eq!(link.node().state(&j.identity), None, "COMPLETE and RELEASE went through");
        }
    }
}

/// A collective striped over K operations is one collective: every element
/// verified against the oracle at its place in the whole vector, the same
/// values as the unstriped run where the policy makes them order-free, and
/// each stripe an operation of its own at the switch.
#[test]
fn a_striped_collective_is_exact_and_equals_the_unstriped_one() {
    for (semantics, acc, replay) in [
        (Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, 0u16),
        (Semantics::REDUCE, AccumulatorPolicy::KULISCH_FIXED, 4),
        (Semantics::ALLREDUCE, AccumulatorPolicy::FP32_ARRIVAL, 4),
        (Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, 0),
    ] {
        let mut j = job(4, semantics, acc, OutputFormat::FP32);
        (j.vector_len, j.replay_depth, j.packetization) = (7_001, replay, Packetization::Full);
        let whole = run(&j, &mut SimLink::new(&config()), &RunOptions::default()).unwrap();
        assert!(whole.passed());
        for stripes in [2u16, 3, 5] {
            j.stripes = stripes;
            let mut link = SimLink::new(&config());
            let r = run(&j, &mut link, &RunOptions::default()).unwrap();
            let what = format!("{semantics:?} {acc:?} replay {replay}, {stripes} stripes");
            assert!(r.passed(), "{what}: missing {} {:?}", r.missing(), r.mismatches());
            assert_eq!(r.per_rank.len(), whole.per_rank.len());
            for ((ra, a), (rb, b)) in r.per_rank.iter().zip(&whole.per_rank) {
                assert_eq!(ra, rb);
                assert_eq!(a.values.len(), 7_001, "{what}");
                assert_eq!(a.checked, 7_001, "{what}: every element checked once");
                if acc == AccumulatorPolicy::KULISCH_FIXED {
                    assert!(a.values.iter().zip(&b.values).all(|(x, y)| x.to_bits() == y.to_bits()), "{what}: rank {ra} differs from the unstriped run");
                }
            }
            // CAPS_QUERY, STAGE, COMMIT, COMPLETE, RELEASE for each stripe, each its own operation.
            assert_eq!(link.node().counters.accepted, 5 * stripes as u64, "{what}");
            for k in 0..stripes {
                let id = Identity { op: j.identity.op + k, ..j.identity };
                assert_eq!(link.node().state(&id), None, "{what}: stripe {k} released");
            }
        }
    }
}

/// A wrong value in the second stripe is reported at its element of the whole vector.
#[test]
fn a_striped_collective_reports_mismatches_at_the_whole_vectors_element() {
    let mut j = job(3, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::FP32);
    (j.vector_len, j.stripes, j.packetization) = (6_000, 2, Packetization::Full);
    let stripes = j.striped(&j.vectors());
    let (second, _) = stripes[1];
    let mut link = SimLink::new(&config());
    // The corrupting link sees the stripe's own element numbers.
    link.corrupt_element = Some(17);
    let r = run(&j, &mut link, &RunOptions::default()).unwrap();
    let m = r.mismatches();
    assert!(!r.passed());
    let mut at: Vec<u64> = m.iter().map(|m| m.element).collect();
    at.sort_unstable();
    at.dedup();
    assert_eq!(at, vec![17, second as u64 + 17], "element 17 of each stripe, at its place in the whole vector");
}

#[test]
fn stripes_cut_on_whole_frames_and_cover_the_vector() {
    for (len, k) in [(10_000u32, 2u16), (10_000, 7), (363, 4), (1, 3), (364, 2)] {
        let mut j = job(2, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::FP32);
        (j.vector_len, j.stripes, j.mtu) = (len, k, 1500);
        let v = j.vectors();
        let s = j.striped(&v);
        assert!(!s.is_empty() && s.len() <= k as usize, "{len} {k}");
        let cap = 363; // FP32 values in one MTU-1500 DATA frame
        let mut at = 0u32;
        for (i, (first, sj)) in s.iter().enumerate() {
            assert_eq!(*first, at, "{len} {k}: contiguous");
            assert!(sj.vector_len > 0);
            assert_eq!(sj.identity.op, j.identity.op + i as u16);
            if i + 1 < s.len() {
                assert_eq!(sj.vector_len % cap, 0, "{len} {k}: cuts on whole frames");
            }
            let g = sj.given.as_ref().unwrap();
            for r in 0..2 {
                assert_eq!(g[r], v[r][*first as usize * 4..(*first + sj.vector_len) as usize * 4]);
            }
            at += sj.vector_len;
        }
        assert_eq!(at, len);
        let sizes: Vec<u32> = s.iter().map(|(_, sj)| sj.vector_len).collect();
        assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= cap, "{len} {k}: balanced {sizes:?}");
    }
}

/// What the in-process switch does wrong around COMPLETE.
#[derive(PartialEq)]
enum Fault {
    /// Forgets the operation just before COMPLETE reaches it (as a switch
    /// restarted mid-run would): COMPLETE is refused.
    ForgetsBeforeComplete,
    /// Gets every rank's PROGRESS one frame late (each port's newest held
    /// until the next): the last acknowledgements reach it only after the
    /// run's first COMPLETE, which it refuses (BAD_STATE: a RESULT copy
    /// still unacknowledged).
    LateProgress,
}

/// The in-process switch with a `Fault`, and the CONTROL commands it was sent.
struct FaultyLink {
    inner: SimLink,
    fault: Fault,
    forgot: bool,
    held: Vec<Option<(u16, Vec<u8>)>>,
    commands: Vec<Command>,
}

impl FaultyLink {
    fn new(fault: Fault) -> Self {
        FaultyLink { inner: SimLink::new(&config()), fault, forgot: false, held: vec![None; 2], commands: Vec::new() }
    }
}

impl Link for FaultyLink {
    fn send(&mut self, port: u16, frame: &[u8]) -> std::io::Result<()> {
        match parse_frame(frame, &Limits::default()) {
            Ok(ParsedFrame { prism: Some(PrismRepr::Progress(_)), .. }) if self.fault == Fault::LateProgress => {
                if let Some((p, f)) = self.held[port as usize].replace((port, frame.to_vec())) {
                    self.inner.send(p, &f)?;
                }
                return Ok(());
            }
            Ok(ParsedFrame { prism: Some(PrismRepr::Control(c)), .. }) => {
                self.commands.push(c.command);
                if c.command == Command::COMPLETE && self.fault == Fault::ForgetsBeforeComplete && !self.forgot {
                    self.forgot = true;
                    // The same request as an ABORT of its own transaction; its ACK is nobody's.
                    let mut abort = frame.to_vec();
                    let mut p = ControlPacket::new_unchecked(&mut abort[ETH_HEADER_LEN..]);
                    p.set_command_code(Command::ABORT.into());
                    p.set_txn(p.txn() | 0xE);
                    self.inner.send(port, &abort)?;
                    while self.inner.recv(std::time::Duration::ZERO)?.is_some() {}
                }
            }
            _ => {}
        }
        self.inner.send(port, frame)?;
        if self.commands.last() == Some(&Command::COMPLETE) {
            for (p, f) in self.held.iter_mut().filter_map(Option::take) {
                self.inner.send(p, &f)?;
            }
        }
        Ok(())
    }
    fn recv(&mut self, timeout: std::time::Duration) -> std::io::Result<Option<prism_dataplane::link::Rx>> {
        self.inner.recv(timeout)
    }
    fn describe(&self) -> String {
        "in-process engine with a fault around COMPLETE".into()
    }
}

#[test]
fn a_refused_complete_is_the_runs_error() {
    let j = job(2, Semantics::REDUCE, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::FP32);
    let mut link = FaultyLink::new(Fault::ForgetsBeforeComplete);
    let e = run(&j, &mut link, &RunOptions::default()).err();
    assert!(matches!(e, Some(RunError::Refused { command: "COMPLETE", status: "STALE_GENERATION", .. })), "{e:?}");
    // The COMPLETE and the run's ABORT after it refused (the operation is
    // retired), and no RELEASE followed.
    let c = &link.inner.node().counters;
    assert_eq!(c.refused.iter().sum::<u64>(), 2, "{:?}", c.refused);
    assert_eq!(c.refused[u8::from(AckStatus::STALE_GENERATION) as usize], 2, "{:?}", c.refused);
}

#[test]
fn complete_is_asked_again_while_the_last_progress_is_on_its_way() {
    for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
        let mut j = job(4, semantics, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::FP32);
        j.replay_depth = 4;
        let mut link = FaultyLink::new(Fault::LateProgress);
        let r = run(&j, &mut link, &RunOptions::default()).unwrap();
        assert!(r.passed(), "{semantics:?}");
        let c = &link.inner.node().counters;
        assert_eq!(c.refused[u8::from(AckStatus::BAD_STATE) as usize], 1, "{semantics:?}: the first COMPLETE refused");
        let tail: Vec<Command> = link.commands.iter().rev().take(3).rev().copied().collect();
        assert_eq!(tail, [Command::COMPLETE, Command::COMPLETE, Command::RELEASE], "{semantics:?}: {:?}", link.commands);
    }
}
