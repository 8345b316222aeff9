//! Exactness against the independent oracle (prism-oracle): every input class
//! of the issue, SIMD and scalar paths, FP32, FP16 and BF16 outputs.

use prism_oracle as oracle;

use num_bigint::BigInt;
use oracle::{Fmt, B16, F16, F32, V};
use prism_arith::*;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};

const SLOTS: usize = 363;

type Gen = dyn FnMut(&mut rand::rngs::StdRng, usize) -> f32;

/// Runs N contributors of `SLOTS` values through the accumulator (SIMD and scalar)
/// and checks every output format against the oracle.
fn check_kulisch(n: usize, seed: u64, gen: &mut dyn FnMut(&mut rand::rngs::StdRng, usize) -> f32) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let contributions: Vec<Vec<f32>> = (0..n).map(|_| (0..SLOTS).map(|i| gen(&mut rng, i)).collect()).collect();
    let width = min_kulisch_width(n as u32) as u16;
    let mut fast = Accumulator::new(Policy::Kulisch { width_bits: width }, SLOTS);
    let mut slow = Accumulator::new(Policy::Kulisch { width_bits: width }, SLOTS);
    for c in &contributions {
        let bytes: Vec<u8> = c.iter().flat_map(|v| v.to_le_bytes()).collect();
        fast.accumulate(0, NumFormat::Fp32, &bytes).unwrap();
        slow.accumulate_scalar(0, NumFormat::Fp32, &bytes).unwrap();
    }
    let mut run = vec![0u8; 4 * SLOTS];
    fast.write_fp32_run(0, SLOTS, &mut run).unwrap();
    for slot in 0..SLOTS {
        let terms: Vec<V> = contributions.iter().map(|c| oracle::of_f32_bits(c[slot].to_bits())).collect();
        let want32 = oracle::round(&oracle::sum(&terms), F32);
        assert_eq!(u32::from_le_bytes(run[4 * slot..4 * slot + 4].try_into().unwrap()), want32, "write_fp32_run slot {slot}");
        let exact = oracle::sum(&terms);
        for (fmt, out, bytes) in [(F32, Output::Fp32, 4), (F16, Output::Fp16, 2), (B16, Output::Bf16, 2)] {
            let want = oracle::round(&exact, fmt);
            for acc in [&mut fast, &mut slow] {
                let mut buf = [0u8; 4];
                acc.write(slot, out, &mut buf).unwrap();
                let got = if bytes == 4 { u32::from_le_bytes(buf) } else { u16::from_le_bytes([buf[0], buf[1]]) as u32 };
                assert_eq!(got, want, "N={n} seed={seed} slot={slot} {out:?}: inputs {:?}", contributions.iter().map(|c| c[slot]).collect::<Vec<_>>());
            }
        }
        // The Kulisch encoding itself decodes to the exact sum.
        let mut buf = vec![0u8; 1 + width as usize / 8];
        fast.write(slot, Output::Kulisch, &mut buf).unwrap();
        assert_eq!(decode_kulisch(&buf), exact, "slot {slot}");
    }
}

/// The oracle's reading of a Kulisch wire value.
fn decode_kulisch(b: &[u8]) -> V {
    match b[0] {
        0 => V::Finite(BigInt::from_signed_bytes_le(&b[1..])),
        1 => V::Zero(false),
        2 => V::Zero(true),
        3 => V::Inf(false),
        4 => V::Inf(true),
        _ => V::NaN,
    }
}

fn normal(sigma: f32) -> Box<Gen> {
    let d = Normal::new(0.0f32, sigma).unwrap();
    Box::new(move |r, _| d.sample(r))
}

fn full_range() -> Box<Gen> {
    // Any finite FP32 value, every exponent equally likely.
    Box::new(|r, _| loop {
        let v = f32::from_bits(r.gen());
        if v.is_finite() {
            return v;
        }
    })
}

#[test]
fn random_normal_data() {
    for n in [2, 3, 8, 64] {
        check_kulisch(n, n as u64, &mut *normal(1.0));
    }
}

#[test]
fn gradient_like_data() {
    for n in [2, 3, 8, 64] {
        check_kulisch(n, 100 + n as u64, &mut *normal(1e-3));
    }
}

#[test]
fn full_exponent_range() {
    for n in [2, 3, 8, 64] {
        check_kulisch(n, 200 + n as u64, &mut *full_range());
    }
}

#[test]
fn catastrophic_cancellation() {
    // Big values that cancel exactly, leaving tiny ones: FP32 arithmetic loses them.
    for n in [2, 3, 8, 64] {
        let mut big = Vec::new();
        check_kulisch(n, 300 + n as u64, &mut |r, i| {
            if big.len() <= i {
                big.push(r.gen_range(1e20f32..1e30));
            }
            match r.gen_range(0..3) {
                0 => big[i],
                1 => -big[i],
                _ => f32::from_bits(r.gen_range(1..0x0080_0000)) * if r.gen() { 1.0 } else { -1.0 },
            }
        });
    }
}

#[test]
fn subnormals() {
    for n in [2, 3, 8, 64] {
        check_kulisch(n, 400 + n as u64, &mut |r, _| {
            let v = f32::from_bits(r.gen_range(1..0x0100_0000));
            if r.gen() {
                v
            } else {
                -v
            }
        });
    }
}

#[test]
fn overflow_to_infinity() {
    for n in [2, 3, 8, 64] {
        check_kulisch(n, 500 + n as u64, &mut |r, _| r.gen_range(1.0e38f32..f32::MAX) * if r.gen_bool(0.8) { 1.0 } else { -1.0 });
    }
}

#[test]
fn specials_and_signed_zeros() {
    let specials = [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::from_bits(0x7f80_0001), 1.0, -1.0];
    for n in [2, 3, 8] {
        check_kulisch(n, 600 + n as u64, &mut |r, _| specials[r.gen_range(0..specials.len())]);
    }
    // All -0 stays -0; any +0 makes it +0.
    let mut only_neg = |_: &mut rand::rngs::StdRng, _| -0.0f32;
    check_kulisch(3, 1, &mut only_neg);
}

#[test]
fn exact_ties_round_to_even() {
    // 1 + 2^-24 is halfway between 1 and 1 + 2^-23: even is 1.
    // (1 + 2^-23) + 2^-24 is halfway between 1 + 2^-23 and 1 + 2^-22: even is 1 + 2^-22.
    let cases: [(&[f32], u32); 4] = [
        (&[1.0, 2f32.powi(-24)], 0x3f80_0000),
        (&[1.0 + 2f32.powi(-23), 2f32.powi(-24)], 0x3f80_0002),
        (&[-1.0, -(2f32.powi(-24))], 0xbf80_0000),
        // A tie broken by a tiny third term: just above halfway rounds up.
        (&[1.0, 2f32.powi(-24), f32::from_bits(1)], 0x3f80_0001),
    ];
    for (terms, want) in cases {
        let mut acc = Accumulator::new(Policy::Kulisch { width_bits: 280 }, 1);
        for t in terms {
            acc.accumulate(0, NumFormat::Fp32, &t.to_le_bytes()).unwrap();
        }
        assert_eq!(acc.round_fp32(0).unwrap().bits, want, "{terms:?}");
        let exact = oracle::sum(&terms.iter().map(|t| oracle::of_f32_bits(t.to_bits())).collect::<Vec<_>>());
        assert_eq!(oracle::round(&exact, F32), want);
    }
}

/// A leaf's Kulisch partial of its ranks' FP32 vectors, as wire values.
fn leaf_partial(leaf: &[Vec<f32>], width: u16) -> Vec<u8> {
    let k = NumFormat::Kulisch { width_bits: width };
    let mut acc = Accumulator::new(Policy::Kulisch { width_bits: width }, SLOTS);
    for r in leaf {
        acc.accumulate(0, NumFormat::Fp32, &r.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).unwrap();
    }
    let mut partial = vec![0u8; SLOTS * k.value_bytes()];
    for (slot, out) in partial.chunks_exact_mut(k.value_bytes()).enumerate() {
        acc.write(slot, Output::Kulisch, out).unwrap();
    }
    partial
}

#[test]
fn kulisch_partials_summed_again_like_a_tree() {
    // Leaves sum 8 ranks each; the root sums the leaves' Kulisch partials.
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let ranks: Vec<Vec<f32>> = (0..32).map(|_| (0..SLOTS).map(|_| full_range()(&mut rng, 0)).collect()).collect();
    let width = min_kulisch_width(32) as u16;
    let k = NumFormat::Kulisch { width_bits: width };
    let mut root = Accumulator::new(Policy::Kulisch { width_bits: width }, SLOTS);
    for leaf in ranks.chunks(8) {
        root.accumulate(0, k, &leaf_partial(leaf, width)).unwrap();
    }
    for slot in 0..SLOTS {
        let exact = oracle::sum(&ranks.iter().map(|r| oracle::of_f32_bits(r[slot].to_bits())).collect::<Vec<_>>());
        assert_eq!(root.round_fp32(slot).unwrap().bits, oracle::round(&exact, F32), "slot {slot}");
    }
}

#[test]
fn overflowing_the_width_is_inexact_never_saturated() {
    // Two Kulisch-280 partials near the top of the range: their sum needs 281 bits.
    let mut v = vec![0u8; 36];
    v[35] = 0x7f;
    v[1] = 1;
    let k = NumFormat::Kulisch { width_bits: 280 };
    let mut acc = Accumulator::new(Policy::Kulisch { width_bits: 280 }, 1);
    acc.accumulate(0, k, &v).unwrap();
    assert!(acc.fits(0));
    acc.accumulate(0, k, &v).unwrap();
    assert!(!acc.fits(0));
    assert_eq!(acc.round_fp32(0), Err(ArithError::Inexact { slot: 0 }));
    let mut out = [0u8; 36];
    assert_eq!(acc.write(0, Output::Kulisch, &mut out), Err(ArithError::Inexact { slot: 0 }));
}

#[test]
fn a_narrow_width_reports_inexact_from_the_registers_too() {
    // W = 64 holds magnitudes below 2^(64 - 150) = 2^-86: FP32 terms of
    // 2^-100 (inside a tile's window, so in the registers) fit, 1.0 does
    // not; sixteen slots, so the eight-slot rounding path sees them.
    let (tiny, one) = (2f32.powi(-100), 1.0f32);
    for big in [None, Some(3), Some(12)] {
        let vals: Vec<f32> = (0..16).map(|i| if Some(i) == big { one } else { tiny }).collect();
        let b: Vec<u8> = vals.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut acc = Accumulator::new(Policy::Kulisch { width_bits: 64 }, 16);
        acc.accumulate(0, NumFormat::Fp32, &b).unwrap();
        acc.accumulate(0, NumFormat::Fp32, &b).unwrap();
        let mut out = vec![0u8; 64];
        let got = acc.write_fp32_run(0, 16, &mut out);
        match big {
            None => {
                got.unwrap();
                for c in out.chunks_exact(4) {
                    assert_eq!(f32::from_le_bytes(c.try_into().unwrap()), 2.0 * tiny);
                }
            }
            Some(slot) => assert_eq!(got, Err(ArithError::Inexact { slot }), "write"),
        }
        let got = acc.take_fp32_run(0, 16, &mut out);
        assert_eq!(got.is_ok(), big.is_none(), "take");
    }
    // Every slot too large, all in the registers (one window for all).
    let b: Vec<u8> = (0..16).flat_map(|_| 1.0f32.to_le_bytes()).collect();
    let mut acc = Accumulator::new(Policy::Kulisch { width_bits: 64 }, 16);
    acc.accumulate(0, NumFormat::Fp32, &b).unwrap();
    let mut out = vec![0u8; 64];
    assert_eq!(acc.write_fp32_run(0, 16, &mut out), Err(ArithError::Inexact { slot: 0 }));
    assert_eq!(acc.take_fp32_run(0, 16, &mut out), Err(ArithError::Inexact { slot: 0 }));
    assert!(!acc.fits(5));
}

#[test]
fn fp32_arrival_equals_a_sequential_rne_replay() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for n in [2, 3, 8, 64] {
        let vals: Vec<Vec<f32>> = (0..n).map(|_| (0..SLOTS).map(|_| full_range()(&mut rng, 0)).collect()).collect();
        let mut acc = Accumulator::new(Policy::Fp32Arrival, SLOTS);
        let mut scalar = Accumulator::new(Policy::Fp32Arrival, SLOTS);
        for v in &vals {
            let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            acc.accumulate(0, NumFormat::Fp32, &b).unwrap();
            scalar.accumulate_scalar(0, NumFormat::Fp32, &b).unwrap();
        }
        for slot in 0..SLOTS {
            // Oracle: exact running sum, rounded after every arrival.
            let mut state = oracle::of_f32_bits(vals[0][slot].to_bits());
            for v in &vals[1..] {
                let s = oracle::sum(&[state, oracle::of_f32_bits(v[slot].to_bits())]);
                state = oracle::of_f32_bits(oracle::round(&s, F32));
            }
            let want = oracle::round(&state, F32);
            assert_eq!(acc.round_fp32(slot).unwrap().bits, want, "n={n} slot={slot}");
            assert_eq!(scalar.round_fp32(slot).unwrap().bits, want);
        }
    }
}

#[test]
fn mixed_formats_meet_by_position() {
    // INT8, FP16, BF16 and FP32 contributions to the same slots.
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let int8: Vec<u8> = (0..SLOTS).map(|_| rng.gen()).collect();
    let fp16: Vec<u16> = (0..SLOTS).map(|_| rng.gen_range(0..0x7c00) | if rng.gen() { 0x8000 } else { 0 }).collect();
    let bf16: Vec<u16> = (0..SLOTS).map(|_| rng.gen_range(0..0x7f80) | if rng.gen() { 0x8000 } else { 0 }).collect();
    let fp32: Vec<f32> = (0..SLOTS).map(|_| full_range()(&mut rng, 0) * 1e-30).collect();
    for policy in [Policy::Kulisch { width_bits: 288 }, Policy::Fp32Arrival] {
        let mut acc = Accumulator::new(policy, SLOTS);
        acc.accumulate(0, NumFormat::Int8, &int8).unwrap();
        acc.accumulate(0, NumFormat::Fp16, &fp16.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).unwrap();
        acc.accumulate(0, NumFormat::Bf16, &bf16.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).unwrap();
        acc.accumulate(0, NumFormat::Fp32, &fp32.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).unwrap();
        for slot in 0..SLOTS {
            let terms = [
                oracle::of_f64(int8[slot] as i8 as f64),
                oracle::of_f64(half::f16::from_bits(fp16[slot]).to_f64()),
                oracle::of_f64(half::bf16::from_bits(bf16[slot]).to_f64()),
                oracle::of_f32_bits(fp32[slot].to_bits()),
            ];
            let want = match policy {
                Policy::Fp32Arrival => {
                    let mut s = terms[0].clone();
                    for t in &terms[1..] {
                        s = oracle::of_f32_bits(oracle::round(&oracle::sum(&[s, t.clone()]), F32));
                    }
                    oracle::round(&s, F32)
                }
                _ => oracle::round(&oracle::sum(&terms), F32),
            };
            assert_eq!(acc.round_fp32(slot).unwrap().bits, want, "{policy:?} slot {slot}");
        }
    }
}

#[test]
fn every_half_code_in_the_last_slot() {
    // Every finite FP16 and BF16 code, alone and next to an FP32 term, in
    // the last slot of a window: the largest BF16 exponents reach the top
    // of the carry-save digits there.
    let mut acc = Accumulator::new(Policy::Kulisch { width_bits: 288 }, 4);
    for (fmt, format) in [(F16, NumFormat::Fp16), (B16, NumFormat::Bf16)] {
        for code in 0..=0xffffu16 {
            let v = (fmt.to_f64)(code as u32);
            if !v.is_finite() {
                continue;
            }
            for other in [0.0f32, -3.5e-30, 1.25e30] {
                // The FP32 term first: it chooses the tile's window, so large half codes fall outside it.
                acc.accumulate(3, NumFormat::Fp32, &other.to_le_bytes()).unwrap();
                acc.accumulate(3, format, &code.to_le_bytes()).unwrap();
                let want = oracle::round(&oracle::sum(&[oracle::of_f64(v), oracle::of_f32_bits(other.to_bits())]), F32);
                assert_eq!(acc.round_fp32(3).unwrap().bits, want, "{format:?} {code:#06x} + {other}");
                acc.clear(3, 1);
            }
        }
    }
}

fn check_half_exhaustive(fmt: Fmt, format: NumFormat, out: Output) {
    for code in 0..=0xffffu32 {
        let bytes = (code as u16).to_le_bytes();
        let want = oracle::of_f64((fmt.to_f64)(code));
        // Decode: our term equals the oracle's value.
        let got = match decode_native(format, &bytes) {
            Term::NaN => V::NaN,
            Term::Inf { neg } => V::Inf(neg),
            Term::Zero { neg } => V::Zero(neg),
            Term::Finite { neg, mant, shift } => {
                let m = BigInt::from(mant) << shift as usize;
                V::Finite(if neg { -m } else { m })
            }
        };
        assert_eq!(got, want, "{format:?} code {code:#06x}");
        // Encode: the value alone, rounded back to the format, is the same code (canonical NaN).
        let mut acc = Accumulator::new(Policy::Kulisch { width_bits: 280 }, 1);
        acc.accumulate(0, format, &bytes).unwrap();
        let mut buf = [0u8; 2];
        acc.write(0, out, &mut buf).unwrap();
        let back = u16::from_le_bytes(buf) as u32;
        let expect = if want == V::NaN { fmt.nan } else { code };
        assert_eq!(back, expect, "{format:?} code {code:#06x} re-encoded");
    }
}

#[test]
fn fp16_exhaustive() {
    check_half_exhaustive(F16, NumFormat::Fp16, Output::Fp16);
}

#[test]
fn bf16_exhaustive() {
    check_half_exhaustive(B16, NumFormat::Bf16, Output::Bf16);
}

#[test]
fn int8_output_is_never_a_clamp() {
    let mut acc = Accumulator::new(Policy::Kulisch { width_bits: 280 }, 4);
    let vals: Vec<u8> = [100.0f32, 2.5, -128.0, 127.5].iter().flat_map(|v| v.to_le_bytes()).collect();
    acc.accumulate(0, NumFormat::Fp32, &vals).unwrap();
    acc.accumulate(0, NumFormat::Fp32, &vals).unwrap();
    let mut b = [0u8; 1];
    assert_eq!(acc.write(0, Output::Int8, &mut b), Err(ArithError::NotInt8 { slot: 0 })); // 200
    assert_eq!(acc.write(1, Output::Int8, &mut b), Ok(1)); // 5
    assert_eq!(b[0], 5);
    assert_eq!(acc.write(2, Output::Int8, &mut b), Err(ArithError::NotInt8 { slot: 2 })); // -256

    // 255
    assert_eq!(acc.write(3, Output::Int8, &mut b), Err(ArithError::NotInt8 { slot: 3 }));
}

#[test]
fn bad_runs_change_nothing() {
    let mut acc = Accumulator::new(Policy::Fp32Arrival, 4);
    acc.accumulate(0, NumFormat::Fp32, &1.0f32.to_le_bytes()).unwrap();
    assert_eq!(acc.accumulate(0, NumFormat::Kulisch { width_bits: 280 }, &[0; 36]), Err(ArithError::KulischUnderFp32Arrival));
    assert_eq!(acc.accumulate(3, NumFormat::Fp32, &[0; 8]), Err(ArithError::OutOfWindow));
    assert_eq!(acc.round_fp32(0).unwrap().bits, 1.0f32.to_bits());
    let mut k = Accumulator::new(Policy::Kulisch { width_bits: 288 }, 1);
    assert_eq!(k.accumulate(0, NumFormat::Kulisch { width_bits: 280 }, &[0; 36]), Err(ArithError::KulischWidthMismatch { got: 280, want: 288 }));
}

/// The whole FP32 decode/encode path, all 2^32 codes: `cargo test -p prism-arith --release -- --ignored fp32_sweep`.
#[test]
#[ignore = "2^32 codes: minutes in release; run with --ignored"]
fn fp32_sweep() {
    let mut acc = Accumulator::new(Policy::Kulisch { width_bits: 280 }, 1);
    for code in 0..=u32::MAX {
        acc.clear(0, 1);
        acc.accumulate_scalar(0, NumFormat::Fp32, &code.to_le_bytes()).unwrap();
        let got = acc.round_fp32(0).unwrap().bits;
        let want = if f32::from_bits(code).is_nan() { 0x7fc0_0000 } else { code };
        assert_eq!(got, want, "{code:#010x}");
    }
}

/// Ranges stream through a ring window as in the engine: runs at any offset
/// and length, ranges released (cleared) and reused with values of very
/// different magnitude each lap, so tile windows are chosen again; SIMD and
/// scalar against the oracle.
#[test]
fn ring_reuse_with_changing_magnitudes() {
    const RING: usize = 2904;
    let mut rng = rand::rngs::StdRng::seed_from_u64(77);
    let width = min_kulisch_width(3) as u16;
    let mut fast = Accumulator::new(Policy::Kulisch { width_bits: width }, RING);
    let mut slow = Accumulator::new(Policy::Kulisch { width_bits: width }, RING);
    let mut base = 0usize;
    for lap in 0..12 {
        let len = rng.gen_range(1..=1200usize);
        let scale = 2f32.powi(rng.gen_range(-120..100));
        let contributions: Vec<Vec<f32>> =
            (0..3).map(|_| (0..len).map(|i| if i % 13 == 5 { 0.0 } else { (rng.gen::<f32>() - 0.5) * scale * if lap % 3 == 0 { 2f32.powi(rng.gen_range(-30..30)) } else { 1.0 } }).collect()).collect();
        for c in &contributions {
            // Cut each contribution into runs that wrap around the ring.
            let mut at = 0;
            while at < len {
                let n = rng.gen_range(1..=300usize).min(len - at);
                let mut pos = (base + at) % RING;
                let mut left = n;
                let mut k = at;
                while left > 0 {
                    let m = left.min(RING - pos);
                    let bytes: Vec<u8> = c[k..k + m].iter().flat_map(|v| v.to_le_bytes()).collect();
                    fast.accumulate(pos, NumFormat::Fp32, &bytes).unwrap();
                    slow.accumulate_scalar(pos, NumFormat::Fp32, &bytes).unwrap();
                    pos = (pos + m) % RING;
                    left -= m;
                    k += m;
                }
                at += n;
            }
        }
        for i in 0..len {
            let slot = (base + i) % RING;
            let terms: Vec<V> = contributions.iter().map(|c| oracle::of_f32_bits(c[i].to_bits())).collect();
            let want = oracle::round(&oracle::sum(&terms), F32);
            let mut run = [0u8; 4];
            fast.write_fp32_run(slot, 1, &mut run).unwrap();
            assert_eq!(u32::from_le_bytes(run), want, "lap {lap} element {i}");
            assert_eq!(slow.round_fp32(slot).unwrap().bits, want, "scalar lap {lap} element {i}");
        }
        // Release the range, as the engine does after sending it.
        let mut pos = base % RING;
        let mut left = len;
        while left > 0 {
            let m = left.min(RING - pos);
            fast.clear(pos, m);
            slow.clear(pos, m);
            pos = (pos + m) % RING;
            left -= m;
        }
        base += len;
    }
}

/// More runs into the same slots than the fast registers take between
/// flushes: the sums stay exact (small integers, checked with i64).
#[test]
fn more_runs_than_a_register_holds_between_flushes() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let slots = 40;
    let mut acc = Accumulator::new(Policy::Kulisch { width_bits: min_kulisch_width(20_000) as u16 }, slots);
    let mut want = vec![0i64; slots];
    for _ in 0..20_000 {
        let vals: Vec<f32> = (0..slots).map(|_| rng.gen_range(-1000..=1000) as f32 * 1024.0).collect();
        for (w, v) in want.iter_mut().zip(&vals) {
            *w += *v as i64;
        }
        let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        acc.accumulate(0, NumFormat::Fp32, &bytes).unwrap();
    }
    for (slot, w) in want.iter().enumerate() {
        let got = f32::from_bits(acc.round_fp32(slot).unwrap().bits);
        assert_eq!(got, *w as f32, "slot {slot}");
    }
}

/// Enough runs near the top of the tiles' windows that an unflushed
/// register would pass 2^53 of its units and drop the last bit of a later
/// term, one that breaks a tie in the final rounding: the AVX2 kernel must
/// count each run into every tile it reaches (whole tiles, single blocks, a
/// run's partial first and last blocks) and flush in time. Against the oracle.
#[test]
fn runs_past_the_flush_limit_stay_exact_through_the_kernel() {
    let (slots, first, n) = (200, 3, 190);
    let mut acc = Accumulator::new(Policy::Kulisch { width_bits: min_kulisch_width(10_000) as u16 }, slots);
    let mut terms: Vec<Vec<V>> = vec![Vec::new(); n];
    let mut run = |acc: &mut Accumulator, v: f32| {
        for t in terms.iter_mut() {
            t.push(oracle::of_f32_bits(v.to_bits()));
        }
        let bytes: Vec<u8> = (0..n).flat_map(|_| v.to_le_bytes()).collect();
        acc.accumulate(first, NumFormat::Fp32, &bytes).unwrap();
    };
    // The first run sets the windows around 1.0: inside, 2^-13 up to 16, in units of 2^-36.
    run(&mut acc, 1.0);
    // 135001 passes 2^17 = 2^53 units.
    for _ in 0..9000 {
        run(&mut acc, 15.0);
    }
    // Half an FP32 ulp at 135001 (a tie, to even: down), then 2^-36 (up), as 2^-13 + 2^-36 and -2^-13.
    run(&mut acc, 2f32.powi(-7));
    run(&mut acc, 2f32.powi(-13) * (1.0 + 2f32.powi(-23)));
    run(&mut acc, -2f32.powi(-13));
    let mut out = vec![0u8; 4 * n];
    acc.write_fp32_run(first, n, &mut out).unwrap();
    for (i, t) in terms.iter().enumerate() {
        let want = oracle::round(&oracle::sum(t), F32);
        assert_eq!(want, (135001.0f32 + 2f32.powi(-6)).to_bits(), "the oracle's sum");
        let got = u32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(got, want, "slot {}", first + i);
    }
}

/// Leaves' Kulisch partials of gradient-like data (mostly narrow enough for
/// the root's f64 registers), mixed at the root with direct FP32 terms and
/// with a few wide partials; FP32 rounding by the vectorised writer and by
/// the slot-by-slot path, against the oracle.
#[test]
fn narrow_kulisch_partials_take_the_register_path_exactly() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let gen = Normal::new(0.0f32, 1e-3).unwrap();
    let ranks: Vec<Vec<f32>> = (0..6).map(|r| (0..SLOTS).map(|i| if r == 5 && i % 17 == 0 { full_range()(&mut rng, 0) } else { gen.sample(&mut rng) }).collect()).collect();
    let width = min_kulisch_width(6) as u16;
    let k = NumFormat::Kulisch { width_bits: width };
    let mut root = Accumulator::new(Policy::Kulisch { width_bits: width }, SLOTS);
    // Two leaves of two ranks send partials; ranks 4 and 5 go straight to the root.
    for leaf in ranks[..4].chunks(2) {
        root.accumulate(0, k, &leaf_partial(leaf, width)).unwrap();
    }
    for r in &ranks[4..] {
        root.accumulate(0, NumFormat::Fp32, &r.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).unwrap();
    }
    let mut run = vec![0u8; 4 * SLOTS];
    root.write_fp32_run(0, SLOTS, &mut run).unwrap();
    for slot in 0..SLOTS {
        let exact = oracle::sum(&ranks.iter().map(|r| oracle::of_f32_bits(r[slot].to_bits())).collect::<Vec<_>>());
        let want = oracle::round(&exact, F32);
        assert_eq!(u32::from_le_bytes(run[4 * slot..4 * slot + 4].try_into().unwrap()), want, "vectorised slot {slot}");
        assert_eq!(root.round_fp32(slot).unwrap().bits, want, "slot {slot}");
        let mut buf = vec![0u8; 1 + width as usize / 8];
        root.write(slot, Output::Kulisch, &mut buf).unwrap();
        assert_eq!(decode_kulisch(&buf), exact, "Kulisch slot {slot}");
    }
}

/// `take_fp32_run` writes what `write_fp32_run` writes and leaves the slots
/// as `clear` does: a twin accumulator fed the same runs does write then
/// clear, and a second round of data into the same slots, beside slots that
/// were not taken, gives the same bytes in both; under KULISCH_FIXED both
/// rounds are also checked against the oracle.
#[test]
fn take_is_write_then_clear() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    const W: usize = 4 * SLOTS;
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, f32::MIN_POSITIVE / 8.0];
    let mut gens: Vec<Box<Gen>> = vec![normal(1e-3), full_range()];
    gens.push(Box::new(move |r: &mut rand::rngs::StdRng, i: usize| if i.is_multiple_of(13) { specials[r.gen_range(0..specials.len())] } else { full_range()(r, i) }));
    for policy in [Policy::Kulisch { width_bits: min_kulisch_width(6) as u16 }, Policy::Fp32Arrival] {
        let kulisch = matches!(policy, Policy::Kulisch { .. });
        for gen in gens.iter_mut() {
            let (mut acc, mut twin) = (Accumulator::new(policy, W), Accumulator::new(policy, W));
            let mut sums: Vec<Vec<V>> = vec![Vec::new(); W];
            let mut round = |acc: &mut Accumulator, twin: &mut Accumulator, sums: &mut Vec<Vec<V>>, rng: &mut rand::rngs::StdRng| {
                for _ in 0..3 {
                    let vals: Vec<f32> = (0..W).map(|i| gen(rng, i)).collect();
                    // Runs cut at odd places, as packets land in a ring.
                    for run in [0..5, 5..5 + SLOTS, 5 + SLOTS..W] {
                        let bytes: Vec<u8> = vals[run.clone()].iter().flat_map(|v| v.to_le_bytes()).collect();
                        acc.accumulate(run.start, NumFormat::Fp32, &bytes).unwrap();
                        twin.accumulate(run.start, NumFormat::Fp32, &bytes).unwrap();
                    }
                    for (s, v) in sums.iter_mut().zip(&vals) {
                        s.push(oracle::of_f32_bits(v.to_bits()));
                    }
                }
            };
            let check = |acc: &mut Accumulator, twin: &mut Accumulator, sums: &[Vec<V>], what: &str| {
                let (mut a, mut b) = (vec![0u8; 4 * W], vec![0u8; 4 * W]);
                acc.write_fp32_run(0, W, &mut a).unwrap();
                twin.write_fp32_run(0, W, &mut b).unwrap();
                for slot in 0..W {
                    let got = u32::from_le_bytes(a[4 * slot..4 * slot + 4].try_into().unwrap());
                    assert_eq!(got, u32::from_le_bytes(b[4 * slot..4 * slot + 4].try_into().unwrap()), "{what}: slot {slot}");
                    if kulisch {
                        assert_eq!(got, oracle::round(&oracle::sum(&sums[slot]), F32), "{what}: slot {slot} against the oracle");
                    }
                }
            };
            round(&mut acc, &mut twin, &mut sums, &mut rng);
            check(&mut acc, &mut twin, &sums, "first round");
            // Take a range that cuts tiles on both sides; the rest stays.
            let taken = 5..5 + SLOTS;
            let (mut run, mut want) = (vec![0u8; 4 * SLOTS], vec![0u8; 4 * SLOTS]);
            acc.take_fp32_run(taken.start, SLOTS, &mut run).unwrap();
            twin.write_fp32_run(taken.start, SLOTS, &mut want).unwrap();
            twin.clear(taken.start, SLOTS);
            assert_eq!(run, want, "take writes what write writes");
            for s in &mut sums[taken] {
                s.clear();
            }
            round(&mut acc, &mut twin, &mut sums, &mut rng);
            check(&mut acc, &mut twin, &sums, "after the take");
        }
    }
}

/// Runs of every short length at every offset within a block of eight, with
/// specials, subnormals, zeros of both signs and far-apart magnitudes in
/// them: each run's slots sum exactly, and the slots around it (holding -0
/// alone, +0, NaN or a value) keep what they held. The SIMD kernel works on
/// whole aligned blocks and reads the lanes outside a run as -0.
#[test]
fn runs_at_any_offset_touch_only_their_slots() {
    const SLOTS: usize = 64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(31);
    let width = min_kulisch_width(2) as u16;
    let pick = |r: &mut rand::rngs::StdRng| -> u32 {
        match r.gen_range(0..10) {
            0 => [0x8000_0000, 0, 0x7f80_0000, 0xff80_0000, 0x7fc0_0001, 0x0000_0003, 0x8000_0100][r.gen_range(0..7)],
            1..=3 => f32::from_bits(r.gen::<u32>() & 0x7f7f_ffff | (r.gen::<u32>() & 0x8000_0000)).to_bits(),
            _ => (r.gen::<f32>() - 0.5).to_bits(),
        }
    };
    for first in 8..24 {
        for n in 1..=19 {
            let mut fast = Accumulator::new(Policy::Kulisch { width_bits: width }, SLOTS);
            let mut slow = Accumulator::new(Policy::Kulisch { width_bits: width }, SLOTS);
            // Neighbours: every slot outside the run gets one of four states first.
            let around: Vec<u32> = (0..SLOTS).map(|s| [0x8000_0000u32, 0, 0x7fc0_0000, 0x3f80_0000][s % 4]).collect();
            let bytes: Vec<u8> = around.iter().flat_map(|v| v.to_le_bytes()).collect();
            fast.accumulate_scalar(0, NumFormat::Fp32, &bytes).unwrap();
            slow.accumulate_scalar(0, NumFormat::Fp32, &bytes).unwrap();
            let run: Vec<Vec<u32>> = (0..2).map(|_| (0..n).map(|_| pick(&mut rng)).collect()).collect();
            for r in &run {
                let b: Vec<u8> = r.iter().flat_map(|v| v.to_le_bytes()).collect();
                fast.accumulate(first, NumFormat::Fp32, &b).unwrap();
                slow.accumulate_scalar(first, NumFormat::Fp32, &b).unwrap();
            }
            for slot in 0..SLOTS {
                let mut terms = vec![oracle::of_f32_bits(around[slot])];
                if (first..first + n).contains(&slot) {
                    terms.extend(run.iter().map(|r| oracle::of_f32_bits(r[slot - first])));
                }
                let want = oracle::round(&oracle::sum(&terms), F32);
                assert_eq!(fast.round_fp32(slot).unwrap().bits, want, "SIMD first {first} n {n} slot {slot}");
                assert_eq!(slow.round_fp32(slot).unwrap().bits, want, "scalar first {first} n {n} slot {slot}");
            }
        }
    }
}

/// Two contributors whose sums sit where rounding from a pair of `f64`
/// (the kernel's rounded sum and its exact error) can go wrong: exact FP32
/// ties and one unit either side of them, at normal, subnormal and
/// overflowing magnitudes, cancellation to zero, and far-apart terms. Every
/// eighth lane holds values far from the rest, so that no block lies inside
/// one tile's window and every case takes the kernel's pair path. Checked
/// against the oracle through `take_fp32_run` (the four-slot pair rounding),
/// `write_fp32_run` and `round_fp32` (which move the pair into the digits);
/// then with a third contributor (the pair full: the digits and the
/// estimate), and a register and a pair in one slot (a tie in the f64 sum
/// that only rounding to odd at 53 bits breaks the right way).
#[test]
fn pair_sums_round_exactly_at_ties_and_edges() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(77);
    let ulp = |x: f32| f32::from_bits(x.to_bits() + 1) - x;
    let mut cases: Vec<(f32, f32)> = vec![
        (1.0, 2f32.powi(-24)),
        (1.0 + 2f32.powi(-23), 2f32.powi(-24)),
        (1.0, 2f32.powi(-24) * (1.0 + 2f32.powi(-23))),
        (1.0, 2f32.powi(-24) * (1.0 - 2f32.powi(-24))),
        (-1.0, -(2f32.powi(-24))),
        (2f32.powi(100), 2f32.powi(-100)),
        (2f32.powi(100), -(2f32.powi(-100))),
        (f32::MAX, f32::MAX),
        (f32::MAX, 2f32.powi(103)),
        (f32::MAX, 2f32.powi(103) * (1.0 - 2f32.powi(-24))),
        (-f32::MAX, -(2f32.powi(103))),
        (f32::MIN_POSITIVE, -f32::from_bits(1)),
        (f32::from_bits(3), -f32::from_bits(1)),
        (f32::from_bits(0x007f_ffff), f32::from_bits(1)),
        (3.5, -3.5),
        (f32::from_bits(1), -f32::from_bits(1)),
        // Zeros beside pairs in one group of four: -0 only from -0 alone.
        (-0.0, -0.0),
        (0.0, -0.0),
        (-0.0, 1.5),
    ];
    // Random ties: a + half an ulp of a (times an odd factor's sign), and a unit off.
    while cases.len() < 7 * 40 {
        let a = f32::from_bits(rng.gen_range(0x0080_0000..0x7f00_0000u32)) * if rng.gen() { 1.0 } else { -1.0 };
        let half = ulp(a.abs()) / 2.0;
        let b = match rng.gen_range(0..4) {
            0 => half,
            1 => -half,
            2 => half * (1.0 + 2f32.powi(-23)),
            _ => half * (1.0 - 2f32.powi(-24)),
        };
        cases.push((a, b));
    }
    let slots = cases.len() / 7 * 8;
    let lane_of = |i: usize| i / 7 * 8 + i % 7;
    let build = |which: usize| -> Vec<f32> {
        let mut v = vec![0f32; slots];
        for (i, c) in cases.iter().enumerate() {
            v[lane_of(i)] = if which == 0 { c.0 } else { c.1 };
        }
        for b in 0..slots / 8 {
            v[8 * b + 7] = if which == 0 { 2f32.powi(-140) } else { 2f32.powi(120) };
        }
        v
    };
    let (c0, c1) = (build(0), build(1));
    let c2: Vec<f32> = (0..slots).map(|i| if i % 3 == 0 { 0.0 } else { f32::from_bits(rng.gen::<u32>() & 0xbf7f_ffff) }).collect();
    // A register and a pair together: a first contributor whose blocks lie
    // inside the tile's window (values in [1, 2)), then two whose blocks do
    // not (a lane far out), bringing half an ulp of the first value (a tie)
    // and a tiny term that decides it.
    let r0: Vec<f32> = (0..slots).map(|_| f32::from_bits(0x3f80_0000 | rng.gen_range(0..0x80_0000u32))).collect();
    let r1: Vec<f32> = (0..slots).map(|i| if i % 8 == 7 { 2f32.powi(120) } else { ulp(r0[i]) / 2.0 * if rng.gen() { 1.0 } else { -1.0 } }).collect();
    let r2: Vec<f32> = (0..slots).map(|i| if i % 8 == 7 { 2f32.powi(-140) } else { 2f32.powi(-rng.gen_range(60..120)) * if rng.gen() { 1.0 } else { -1.0 } }).collect();
    for scenario in 0..3 {
        let width = min_kulisch_width(3) as u16;
        let mut accs: Vec<Accumulator> = (0..3).map(|_| Accumulator::new(Policy::Kulisch { width_bits: width }, slots)).collect();
        let contribs = match scenario {
            0 => vec![&c0, &c1],
            1 => vec![&c0, &c1, &c2],
            _ => vec![&r0, &r1, &r2],
        };

        for c in &contribs {
            let bytes: Vec<u8> = c.iter().flat_map(|v| v.to_le_bytes()).collect();
            for acc in accs.iter_mut() {
                acc.accumulate(0, NumFormat::Fp32, &bytes).unwrap();
            }
        }
        let (mut taken, mut written) = (vec![0u8; 4 * slots], vec![0u8; 4 * slots]);
        accs[0].take_fp32_run(0, slots, &mut taken).unwrap();
        accs[1].write_fp32_run(0, slots, &mut written).unwrap();
        for slot in 0..slots {
            let terms: Vec<V> = contribs.iter().map(|c| oracle::of_f32_bits(c[slot].to_bits())).collect();
            let want = oracle::round(&oracle::sum(&terms), F32);
            let what = format!("scenario {scenario} slot {slot}: {:?}", contribs.iter().map(|c| c[slot]).collect::<Vec<_>>());
            assert_eq!(u32::from_le_bytes(taken[4 * slot..4 * slot + 4].try_into().unwrap()), want, "take: {what}");
            assert_eq!(u32::from_le_bytes(written[4 * slot..4 * slot + 4].try_into().unwrap()), want, "write: {what}");
            assert_eq!(accs[2].round_fp32(slot).unwrap().bits, want, "round_fp32: {what}");
        }
        // Taken slots are empty again: -0 everywhere.
        accs[0].write_fp32_run(0, slots, &mut taken).unwrap();
        assert!(taken.chunks_exact(4).all(|b| b == (-0.0f32).to_le_bytes()), "take leaves the slots clear");
    }
}
