//! prism_fp32_add against the CPU's IEEE binary32 addition (round to nearest
//! even, subnormals kept): the oracle is the hardware FPU, not our code. NaN
//! results must be the canonical quiet NaN.

use prism_rtl::Fp32Adder;

mod common;
use common::Rng;

fn expected(a: u32, b: u32) -> u32 {
    let s = f32::from_bits(a) + f32::from_bits(b);
    if s.is_nan() { 0x7FC0_0000 } else { s.to_bits() }
}

fn check(adder: &mut Fp32Adder, a: &[u32], b: &[u32], what: &str) {
    let got = adder.add(a, b);
    let mut bad = 0;
    for i in 0..a.len() {
        let want = expected(a[i], b[i]);
        if got[i] != want {
            if bad < 10 {
                eprintln!("{what}: {:08x} + {:08x}: rtl {:08x}, ieee {want:08x}", a[i], b[i], got[i]);
            }
            bad += 1;
        }
    }
    assert_eq!(bad, 0, "{what}: {bad} of {} sums differ", a.len());
}

/// Operand classes that stress alignment, cancellation, rounding and the edges.
fn operand(r: &mut Rng, class: u64, other: u32) -> u32 {
    let sign = (r.u32() & 1) << 31;
    match class {
        // Any bit pattern (NaNs and infinities included).
        0 => r.u32(),
        // Subnormals and the smallest normals.
        1 => sign | (r.u32() & 0x00FF_FFFF),
        // Near the other operand's exponent (close alignment, carries).
        2 => {
            let e = ((other >> 23) & 0xFF) as i32 + (r.u32() % 7) as i32 - 3;
            sign | ((e.clamp(0, 254) as u32) << 23) | (r.u32() & 0x7F_FFFF)
        }
        // Cancellation: the negated other operand, a few ulps away.
        3 => (other ^ 0x8000_0000).wrapping_add(r.u32() % 5).wrapping_sub(2),
        // The largest finite values (overflow to infinity).
        4 => sign | (0xFE << 23) | (r.u32() & 0x7F_FFFF),
        // Zeros and infinities of either sign.
        5 => sign | [0, 0x7F80_0000][(r.u32() & 1) as usize],
        // Ties: a power of two apart by 24 or 25 binades (exact half ulps).
        6 => {
            let e = ((other >> 23) & 0xFF) as i32 - 24 - (r.u32() & 1) as i32;
            sign | ((e.clamp(1, 254) as u32) << 23) | (r.u32() & 1)
        }
        // Gradient-like magnitudes (around 1e-3).
        _ => sign | ((0x70 + r.u32() % 16) << 23) | (r.u32() & 0x7F_FFFF),
    }
}

#[test]
fn random_pairs_match_ieee() {
    let mut adder = Fp32Adder::new();
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    for class in 0..8u64 {
        let n = 250_000;
        let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            let x = operand(&mut r, 7 * (class & 1), 0);
            let x = if class == 0 { r.u32() } else { x };
            let y = operand(&mut r, class, x);
            a.push(x);
            b.push(y);
        }
        check(&mut adder, &a, &b, &format!("class {class}"));
        // Addition commutes: the swapped order must give the same bits.
        check(&mut adder, &b, &a, &format!("class {class} swapped"));
    }
}

#[test]
fn special_values_exhaustively_paired() {
    let specials: Vec<u32> = [
        0x0000_0000u32, 0x8000_0000, 0x0000_0001, 0x8000_0001, 0x007F_FFFF, 0x807F_FFFF, 0x0080_0000, 0x8080_0000,
        0x3F80_0000, 0xBF80_0000, 0x3F80_0001, 0x7F7F_FFFF, 0xFF7F_FFFF, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000,
        0xFFC0_0001, 0x7F80_0001, 0x4B80_0000, 0x3380_0000, 0x3400_0000, 0xB3FF_FFFF,
    ]
    .to_vec();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &specials {
        for &y in &specials {
            a.push(x);
            b.push(y);
        }
    }
    check(&mut Fp32Adder::new(), &a, &b, "specials");
}

#[test]
fn all_subnormal_sums_of_small_values() {
    // Every pair of the 2^9 smallest magnitudes, both signs: exact subnormal arithmetic.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for x in 0..512u32 {
        for y in 0..512u32 {
            a.push(x | ((y & 1) << 31));
            b.push((y << 14) | ((x & 1) << 31));
        }
    }
    check(&mut Fp32Adder::new(), &a, &b, "subnormals");
}
