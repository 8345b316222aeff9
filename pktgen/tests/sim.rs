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
    let j = job(3, Semantics::ALLREDUCE, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::FP32);
    let mut link = SimLink::new(&config());
    link.corrupt_element = Some(1234);
    let r = run(&j, &mut link, &RunOptions::default()).unwrap();
    assert!(!r.passed());
    let m = r.mismatches();
    assert_eq!(m.len(), 3, "one per receiving rank");
    assert!(m.iter().all(|m| m.element == 1234));
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
