//! prism_kulisch_round_pipe (a Kulisch slot rounded once to FP32 in register
//! stages) against the independent big-integer oracle (arith/tests/oracle):
//! every rounded value and exactness flag, streamed one slot a cycle, with and
//! without `en` stalls; and bit for bit against the combinational
//! prism_kulisch_round on the same slots.

mod slots;
use slots::{oracle, value_of, words_of};

use num_bigint::BigInt;
use num_traits::{One, Zero};
use oracle::V;
use prism_rtl::{KulischRoundPipe, KulischUnits, Slot};

mod common;
use common::Rng;

/// Flags {any, not -0, NaN, +inf, -inf} from bit 4 down.
const FINITE: u8 = 0b11000;

/// The oracle's FP32 bits for the slot, and whether they are its value exactly.
fn expected(s: &Slot) -> (u32, bool) {
    let want = value_of(s);
    let bits = oracle::round(&want, oracle::F32);
    let exact = match (&want, &oracle::of_f32_bits(bits)) {
        (V::Finite(a), V::Finite(b)) => a == b,
        (V::Finite(_), _) => false,
        _ => true,
    };
    (bits, exact)
}

fn slot(v: &BigInt, flags: u8) -> Slot {
    Slot { words: words_of(v), flags }
}

fn pow2(p: usize) -> BigInt {
    BigInt::one() << p
}

/// Random integers of every length up to 320 bits (2^319 in magnitude), both signs.
fn random_slots(r: &mut Rng, n: usize) -> Vec<Slot> {
    (0..n)
        .map(|_| {
            let len = (r.next() % 320) as usize + 1;
            let mut v = BigInt::zero();
            while v.bits() < len as u64 {
                v = (v << 64usize) | BigInt::from(r.next());
            }
            v >>= (v.bits() - len as u64) as usize;
            // Sparse low bits now and then: exact values and ties.
            if r.next().is_multiple_of(4) {
                let keep = (r.next() % 26) as usize;
                if len > keep {
                    v = (v >> (len - keep)) << (len - keep);
                }
            }
            let neg = r.next() % 2 == 1;
            // +2^319 does not fit; -2^319 does.
            let v = if neg {
                -v
            } else if v.bits() == 320 {
                v - 1
            } else {
                v
            };
            slot(&v, FINITE)
        })
        .collect()
}

/// Values at, just above and below, and at ties of every binade from 2^0 to
/// 2^300 units, both signs.
fn binade_slots() -> Vec<Slot> {
    let mut out = Vec::new();
    for p in 0..=300usize {
        let base = pow2(p);
        // Half an FP32 ulp at 2^p (a tie), and one ulp (an odd significand).
        let half = if p >= 24 { pow2(p - 24) } else { BigInt::zero() };
        let ulp = if p >= 23 { pow2(p - 23) } else { BigInt::one() };
        let mut vals = vec![
            base.clone(),
            &base + 1,
            &base - 1,
            &base + &half,
            &base + &half + 1,
            &base + &half - 1,
            &base + &ulp + &half,
            &base + &ulp + &half - 1,
            &base + &ulp + &half + 1,
            &base * 2 - 1,
            &base * 2 - &half,
            &base * 2 - &half - 1,
            &base * 3 + &half,
        ];
        // Half an ulp below 2^p (the ulp of the binade below): a tie to even.
        if p >= 25 {
            vals.push(&base - pow2(p - 25));
            vals.push(&base - pow2(p - 25) - 1);
        }
        for v in vals {
            if v.is_zero() {
                continue;
            }
            out.push(slot(&v, FINITE));
            out.push(slot(&-v, FINITE));
        }
    }
    out
}

/// The subnormal/normal boundary (2^23 units is the smallest normal, 2^24
/// the first binade with a unit above 1) and the overflow edges.
fn edge_slots() -> Vec<Slot> {
    let mut vals = Vec::new();
    for p in [23usize, 24, 25] {
        for d in -40i64..=40 {
            vals.push(pow2(p) + d);
        }
    }
    for v in 0..64i64 {
        vals.push(BigInt::from(v));
    }
    // Largest finite FP32: (2^24 - 1) * 2^104 * 2^149 units; its ulp 2^253.
    let max = (pow2(24) - 1) << 253usize;
    let half = pow2(252);
    for d in [-2i64, -1, 0, 1, 2] {
        vals.push(&max + d);
        vals.push(&max + &half + d); // the tie at max + half ulp rounds to infinity
        vals.push(&max - &half + d);
        vals.push(&max + pow2(253) + d);
    }
    for p in [276usize, 277, 278, 279, 300, 318] {
        vals.push(pow2(p));
        vals.push(pow2(p) - 1);
    }
    vals.push(pow2(319) - 1);
    let mut out = Vec::new();
    for v in vals {
        out.push(slot(&v, FINITE));
        out.push(slot(&-v, FINITE));
    }
    // -2^319: the most negative slot.
    out.push(slot(&-pow2(319), FINITE));
    out
}

/// Every flag combination on zero and on a few non-zero slots (NaN, the
/// infinities and their conflict, signed zeros).
fn flag_slots() -> Vec<Slot> {
    let mut out = Vec::new();
    let ints = [BigInt::zero(), BigInt::one(), -BigInt::one(), pow2(200) + 12345, -pow2(319), pow2(290)];
    for v in &ints {
        for f in 0..32u8 {
            out.push(slot(v, f));
        }
    }
    out
}

fn all_slots() -> Vec<Slot> {
    let mut r = Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut v = flag_slots();
    v.extend(edge_slots());
    v.extend(binade_slots());
    v.extend(random_slots(&mut r, 12_000));
    // Interleave the classes so that neighbours in the stream differ.
    let mut r = Rng(0xA076_1D64_78BD_642F);
    for i in (1..v.len()).rev() {
        v.swap(i, (r.next() % (i as u64 + 1)) as usize);
    }
    v
}

/// Streams the slots through the pipeline and compares each result with the oracle.
fn check_pipe(slots: &[Slot], stall_seed: u64, what: &str) -> prism_rtl::PipeRun {
    let (got, run) = KulischRoundPipe::new().round(slots, stall_seed);
    assert_eq!(run.sums, slots.len(), "{what}: every slot gives one result, none lost or repeated");
    let mut bad = 0;
    for (s, &g) in slots.iter().zip(&got) {
        let want = expected(s);
        if g != want {
            if bad < 10 {
                eprintln!("{what}: {:?} flags {:05b}: pipe {:08x} exact {}, oracle {:08x} exact {}", value_of(s), s.flags, g.0, g.1, want.0, want.1);
            }
            bad += 1;
        }
    }
    assert_eq!(bad, 0, "{what}: {bad} of {} results differ from the oracle", slots.len());
    run
}

/// Every class, one slot a cycle: the oracle's bits and exactness, and one
/// result a cycle once the pipeline is full.
#[test]
fn pipelined_rounding_matches_the_oracle_at_one_slot_a_cycle() {
    let slots = all_slots();
    assert!(slots.len() > 20_000, "{}", slots.len());
    // The stream reaches every kind of result (so the comparison above means something).
    let want: Vec<(u32, bool)> = slots.iter().map(expected).collect();
    let count = |f: &dyn Fn(&(u32, bool)) -> bool| want.iter().filter(|w| f(w)).count();
    assert!(count(&|w| !w.1 && w.0 & 0x7FFF_FFFF != 0x7F80_0000) > 5_000, "inexact finite results");
    assert!(count(&|w| w.1 && w.0 & 0x7F80_0000 != 0x7F80_0000 && w.0 & 0x7FFF_FFFF != 0) > 3_000, "exact finite results");
    assert!(count(&|w| !w.1 && w.0 & 0x7FFF_FFFF == 0x7F80_0000) > 500, "overflows to infinity");
    assert!(count(&|w| w.0 & 0x7F80_0000 == 0 && w.0 & 0x7F_FFFF != 0) > 200, "subnormal results");
    assert!(count(&|w| w.0 >> 31 == 1) > 8_000, "negative results");
    let run = check_pipe(&slots, 0, "streamed");
    assert_eq!(run.cycles, slots.len() as u64 + u64::from(KulischRoundPipe::latency()) - 1, "one slot a cycle, LATENCY cycles to the first result");
}

/// `en` low on about a quarter of the cycles: what is in flight holds,
/// nothing is lost or repeated, the results are the same.
#[test]
fn pipelined_rounding_holds_its_stages_when_stalled() {
    let slots = all_slots();
    let n = slots.len() as u64;
    let run = check_pipe(&slots, 0x9E37_79B9, "stalled");
    // About n / 3 stalled cycles (en low one cycle in four).
    assert!(run.cycles > n + n / 5 && run.cycles < n + n / 2, "the stalls took cycles ({} for {n} slots)", run.cycles);
}

/// The same slots through the combinational prism_kulisch_round: the same bits.
#[test]
fn pipelined_rounding_equals_the_combinational_one() {
    let slots = all_slots();
    let (got, run) = KulischRoundPipe::new().round(&slots, 0);
    assert_eq!(run.sums, slots.len());
    let mut comb = KulischUnits::new();
    let bad: Vec<usize> = (0..slots.len()).filter(|&i| got[i] != comb.round(&slots[i])).collect();
    for &i in bad.iter().take(10) {
        eprintln!("{:?} flags {:05b}: pipe {:x?}, combinational {:x?}", value_of(&slots[i]), slots[i].flags, got[i], comb.round(&slots[i]));
    }
    assert!(bad.is_empty(), "{} of {} results differ from prism_kulisch_round", bad.len(), slots.len());
}
