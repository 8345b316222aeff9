//! The hardware's Kulisch lane and rounding against the independent
//! big-integer oracle (arith/tests/oracle): exact sums of FP32 terms and
//! Kulisch values over the whole FP32 range, with NaN, infinities and signed
//! zeros, then one rounding to FP32 (RNE, subnormals, overflow) and its
//! exactness flag.

mod slots;
use slots::{oracle, value_of, words_of};

use num_bigint::BigInt;
use num_traits::Zero;
use oracle::V;
use prism_rtl::{KulischUnits, Slot, Term};

mod common;
use common::Rng;

fn random_fp32(r: &mut Rng) -> u32 {
    match r.next() % 20 {
        0 => 0x8000_0000,
        1 => 0,
        2 => 0x7F80_0000 | ((r.next() as u32) & 0x8000_0000),
        3 => 0x7FC0_0000,
        4..=6 => (r.next() as u32) & 0x807F_FFFF,
        7..=9 => ((r.next() as u32) & 0x8000_0000) | (0xFE << 23) | ((r.next() as u32) & 0x7F_FFFF),
        _ => loop {
            let b = r.next() as u32;
            if b & 0x7F80_0000 != 0x7F80_0000 {
                break b;
            }
        },
    }
}

#[test]
fn lane_sums_equal_the_oracle_and_round_like_it() {
    let mut u = KulischUnits::new();
    let mut r = Rng(0x1234_5678_9abc_def1);
    let mut finite_sums = 0;
    for case in 0..4000 {
        let n = 1 + (r.next() % 12) as usize;
        let mut slot = Slot::default();
        let mut terms = Vec::new();
        for _ in 0..n {
            if case % 5 == 0 && r.next() % 3 == 0 {
                // A Kulisch value: any 280-bit integer (FINITE), or a special state.
                let state = [0u8, 0, 0, 1, 2, 3, 4, 5][(r.next() % 8) as usize];
                let mut k = BigInt::zero();
                if state == 0 {
                    while k.is_zero() {
                        k = BigInt::from(r.next()) << (r.next() % 210) as usize;
                        if r.next() % 2 == 0 {
                            k = -k;
                        }
                    }
                }
                terms.push(match state {
                    0 => V::Finite(k.clone()),
                    1 => V::Zero(false),
                    2 => V::Zero(true),
                    3 => V::Inf(false),
                    4 => V::Inf(true),
                    _ => V::NaN,
                });
                slot = u.add(&slot, Term::Kulisch { state, words: words_of(&k) });
            } else {
                let b = random_fp32(&mut r);
                terms.push(oracle::of_f32_bits(b));
                slot = u.add(&slot, Term::Fp32(b));
            }
        }
        let want = oracle::sum(&terms);
        assert_eq!(value_of(&slot), want, "case {case}: terms {terms:?}");
        let (bits, exact) = u.round(&slot);
        let rounded = oracle::round(&want, oracle::F32);
        assert_eq!(bits, rounded, "case {case}: rounding of {want:?}");
        let back = oracle::of_f32_bits(bits);
        let is_exact = match (&want, &back) {
            (V::Finite(a), V::Finite(b)) => a == b,
            (V::Finite(_), _) => false,
            _ => true,
        };
        assert_eq!(exact, is_exact, "case {case}: exactness of {want:?} -> {bits:08x}");
        finite_sums += matches!(want, V::Finite(_)) as usize;
    }
    assert!(finite_sums > 1000, "{finite_sums}");
}

#[test]
fn rounding_of_values_near_every_binade_and_tie() {
    let mut u = KulischUnits::new();
    let mut r = Rng(77);
    for p in 0..300usize {
        for _ in 0..20 {
            // Around 2^p: the value itself, a tie, and neighbours, both signs.
            let base = BigInt::from(1) << p;
            let noise = BigInt::from(r.next() % 5) - 2;
            // Half an FP32 ulp at 2^p (a tie), and one ulp (an odd significand).
            let half = if p >= 24 { BigInt::from(1) << (p - 24) } else { BigInt::zero() };
            let ulp = if p >= 23 { BigInt::from(1) << (p - 23) } else { BigInt::from(1) };
            for v in [base.clone() + &noise, base.clone() + &half, base.clone() + &half + 1, base.clone() + &ulp + &half, base.clone() + &ulp + &half - 1, base.clone() * 3 + &half] {
                for neg in [false, true] {
                    let v = if neg { -v.clone() } else { v.clone() };
                    if v.is_zero() {
                        continue;
                    }
                    let slot = Slot { words: words_of(&v), flags: 0b11000 };
                    let (bits, _) = u.round(&slot);
                    assert_eq!(bits, oracle::round(&V::Finite(v.clone()), oracle::F32), "2^{p} {v}");
                }
            }
        }
    }
}
