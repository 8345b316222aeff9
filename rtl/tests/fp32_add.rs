//! prism_fp32_add against the CPU's IEEE binary32 addition (round to nearest
//! even, subnormals kept): the oracle is the hardware FPU, not our code. NaN
//! results must be the canonical quiet NaN.

use prism_rtl::{Fp32Adder, Fp32PipeAdder};

mod common;
use common::Rng;

/// Zeros, subnormals, the normal range's edges, infinities, NaNs and
/// values one rounding apart: the operands every adder test pairs.
const SPECIALS: [u32; 22] = [
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x8000_0001,
    0x007F_FFFF,
    0x807F_FFFF,
    0x0080_0000,
    0x8080_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x3F80_0001,
    0x7F7F_FFFF,
    0xFF7F_FFFF,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0xFFC0_0001,
    0x7F80_0001,
    0x4B80_0000,
    0x3380_0000,
    0x3400_0000,
    0xB3FF_FFFF,
];

/// Every ordered pair of `xs`, as the adder's two operand streams.
fn every_pair(xs: &[u32]) -> (Vec<u32>, Vec<u32>) {
    xs.iter().flat_map(|&x| xs.iter().map(move |&y| (x, y))).unzip()
}

fn expected(a: u32, b: u32) -> u32 {
    let s = f32::from_bits(a) + f32::from_bits(b);
    if s.is_nan() {
        0x7FC0_0000
    } else {
        s.to_bits()
    }
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
        // Every exponent difference up to 31 below the other operand, any
        // fraction: each of the pipelined adder's alignment cases (no
        // pre-shift below 11, pre-shifted 11..25, sticky alone from 26),
        // sums and differences, and fractions whose low bits are all ones
        // or zeros (borrows through the sticky region).
        8 => {
            let e = ((other >> 23) & 0xFF) as i32 - (r.u32() % 32) as i32;
            let frac = match r.u32() % 4 {
                0 => 0x7F_FFFF ^ (r.u32() & 0x7F_FE00 & r.u32()),
                1 => r.u32() & 0x7F_FE00 & r.u32(),
                _ => r.u32() & 0x7F_FFFF,
            };
            sign | ((e.clamp(0, 254) as u32) << 23) | frac
        }
        // Gradient-like magnitudes (around 1e-3).
        _ => sign | ((0x70 + r.u32() % 16) << 23) | (r.u32() & 0x7F_FFFF),
    }
}

#[test]
fn random_pairs_match_ieee() {
    let mut adder = Fp32Adder::new();
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    for class in 0..9u64 {
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
    let (a, b) = every_pair(&SPECIALS);
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

fn check_pipe(a: &[u32], b: &[u32], stall_seed: u64, what: &str) -> prism_rtl::PipeRun {
    let (got, run) = Fp32PipeAdder::new().add(a, b, stall_seed);
    assert_eq!(run.sums, a.len(), "{what}: every pair gives one sum, none lost or repeated");
    let bad: Vec<usize> = (0..a.len()).filter(|&i| got[i] != expected(a[i], b[i])).collect();
    for &i in bad.iter().take(10) {
        eprintln!("{what}: {:08x} + {:08x}: pipelined rtl {:08x}, ieee {:08x}", a[i], b[i], got[i], expected(a[i], b[i]));
    }
    assert!(bad.is_empty(), "{what}: {} of {} sums differ", bad.len(), a.len());
    run
}

/// The ten-stage adder (the lane that closes timing) on the same operand
/// classes, streamed one pair a cycle: the same bits as the CPU, and a sum
/// every cycle once the pipeline is full.
#[test]
fn pipelined_adder_matches_ieee_at_one_sum_a_cycle() {
    let mut r = Rng(0x2545_F491_4F6C_DD1D);
    for class in 0..9u64 {
        let n = 100_000;
        let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            let x = if class == 0 { r.u32() } else { operand(&mut r, 7 * (class & 1), 0) };
            let y = operand(&mut r, class, x);
            a.push(x);
            b.push(y);
        }
        let run = check_pipe(&a, &b, 0, &format!("pipelined class {class}"));
        assert_eq!(run.cycles, n as u64 + u64::from(Fp32PipeAdder::latency()) - 1, "class {class}: one pair a cycle, LATENCY cycles to the first sum");
    }
}

/// `en` low on random cycles: what is in flight holds, nothing is lost or repeated.
#[test]
fn pipelined_adder_holds_its_stages_when_stalled() {
    let mut r = Rng(0xD1B5_4A32_D192_ED03);
    let n = 50_000;
    let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let x = operand(&mut r, (i % 8) as u64, 0);
        a.push(x);
        b.push(operand(&mut r, (i % 7) as u64, x));
    }
    let run = check_pipe(&a, &b, 0x9E37_79B9, "stalled");
    assert!(run.cycles > n as u64 + 9, "the stalls took cycles ({})", run.cycles);
}

/// `a_rest` (the ring's slot at rest) reads `a` as -0 whatever it holds,
/// pair by pair: -0 + b for a flagged pair (b itself, except -0 + +0 = +0
/// and NaNs made canonical), a + b for the others, in one stream.
#[test]
fn pipelined_adder_reads_a_at_rest_as_negative_zero() {
    let mut r = Rng(0x6A09_E667_F3BC_C909);
    let n = 50_000;
    let (mut a, mut rest, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let x = operand(&mut r, (i % 8) as u64, 0);
        a.push(x);
        rest.push(r.u32() & 3 == 0);
        b.push(operand(&mut r, (i % 7) as u64, x));
    }
    for (i, x) in SPECIALS.iter().enumerate() {
        a.push(0x3F80_0000);
        rest.push(true);
        b.push(*x);
        a.push(*x);
        rest.push(i % 2 == 0);
        b.push(0);
    }
    let (got, run) = Fp32PipeAdder::new().add_at_rest(&a, &rest, &b, 0x51_7CC1);
    assert_eq!(run.sums, a.len(), "every pair gives one sum");
    let flagged = rest.iter().filter(|&&f| f).count();
    assert!(flagged > n / 8 && flagged < n / 2, "both kinds of pair in the stream ({flagged})");
    for i in 0..a.len() {
        let want = if rest[i] { expected(0x8000_0000, b[i]) } else { expected(a[i], b[i]) };
        assert_eq!(got[i], want, "pair {i}: {:08x} (at rest: {}) + {:08x}", a[i], rest[i], b[i]);
    }
}

#[test]
fn pipelined_adder_on_special_and_subnormal_pairs() {
    let (mut a, mut b) = every_pair(&SPECIALS);
    for x in 0..256u32 {
        for y in 0..256u32 {
            a.push(x | ((y & 1) << 31));
            b.push((y << 15) | ((x & 1) << 31));
        }
    }
    check_pipe(&a, &b, 0, "specials and subnormals");
}

/// Every exponent difference from 0 to 31, both signs of each operand, with
/// the smaller operand's fraction in the shapes that decide its alignment in
/// the DSP slice: bits below the pre-shift (8:0) set or clear, and the bits
/// between the pre-shift and the round position all ones (a difference's
/// borrow then runs through every bit below the round position).
#[test]
fn pipelined_adder_at_every_alignment_distance() {
    let mut r = Rng(0xBB67_AE85_84CA_A73B);
    let fracs = |r: &mut Rng| -> [u32; 8] { [0, 0x7F_FFFF, 0x7F_FE00, 0x00_01FF, 0x00_0001, 0x40_0000, 0x7F_FE00 | (r.u32() & 0x1FF), r.u32() & 0x7F_FFFF] };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for d in 0..32u32 {
        for _ in 0..64 {
            let ex = 40 + r.u32() % 170;
            for (i, &fy) in fracs(&mut r).iter().enumerate() {
                let fx = if i % 2 == 0 { r.u32() & 0x7F_FFFF } else { [0, 0x7F_FFFF][(r.u32() & 1) as usize] };
                for signs in 0..4u32 {
                    a.push(((signs & 1) << 31) | (ex << 23) | fx);
                    b.push(((signs >> 1) << 31) | ((ex - d) << 23) | fy);
                }
            }
        }
    }
    check_pipe(&a, &b, 0, "every alignment distance");
    check_pipe(&b, &a, 0x5851_F42D, "every alignment distance, swapped, stalled");
}
