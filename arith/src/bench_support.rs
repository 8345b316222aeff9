//! Workloads shared by the criterion benchmark and `examples/ratio.rs`.

use crate::{simd, Accumulator, NumFormat, Policy};

/// Elements of one 1500-byte FP32 packet and of the SINGLE window at MTU 1500.
pub const PACKET: usize = 363;
pub const WINDOW: usize = 2904;

/// Data classes of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// Normal, sigma 1e-3.
    Gradient,
    /// Every finite FP32 exponent.
    FullRange,
    /// `Gradient` in layers of `LAYER` elements, each at its own scale
    /// (2^k, k uniform in -8..=8, the same for every contributor): the
    /// magnitudes of a model's gradient change from layer to layer, and
    /// a layer's edge need not fall on an accumulator tile's.
    Layered,
}

/// Elements of one layer of `Data::Layered`.
pub const LAYER: usize = 1500;

/// `n` contributors' vectors of `len` values, deterministic (xorshift; no RNG crate needed).
pub fn contributions(data: Data, n: usize, len: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    // Layer scales from a stream of their own: the same for every contributor.
    let mut layer = 0x2545_f491_4f6c_dd1du64;
    let scales: Vec<f64> = (0..len.div_ceil(LAYER))
        .map(|_| {
            layer ^= layer << 13;
            layer ^= layer >> 7;
            layer ^= layer << 17;
            2f64.powi((layer % 17) as i32 - 8)
        })
        .collect();
    (0..n)
        .map(|_| {
            (0..len)
                .map(|i| match data {
                    Data::Gradient | Data::Layered => {
                        let scale = if data == Data::Layered { scales[i / LAYER] } else { 1.0 };
                        // Box-Muller from two uniforms.
                        let u1 = ((next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
                        let u2 = (next() >> 11) as f64 / (1u64 << 53) as f64;
                        ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos() * 1e-3 * scale) as f32
                    }
                    Data::FullRange => loop {
                        let v = f32::from_bits(next() as u32);
                        if v.is_finite() {
                            break v;
                        }
                    },
                })
                .collect()
        })
        .collect()
}

/// Baseline: the same stream added with plain SIMD f32 adds, window by window.
pub fn run_naive(acc: &mut [f32], contribs: &[Vec<f32>], out: &mut [f32]) {
    naive_windows(acc, contribs, out, simd::naive_fp32_add, |a| a)
}

/// `run_naive` into f64 sums (`simd::naive_f64_add`), rounded to f32 on
/// the way out as a RESULT would be: the memory traffic of 8 bytes of
/// state per element with no other work, a reference point for
/// KULISCH_FIXED's register path.
pub fn run_naive_f64(acc: &mut [f64], contribs: &[Vec<f32>], out: &mut [f32]) {
    naive_windows(acc, contribs, out, simd::naive_f64_add, |a| a as f32)
}

/// Window by window: cleared to -0, each contributor's packets added with
/// `add`, the sums written out through `round`.
fn naive_windows<T: Copy + From<f32>>(acc: &mut [T], contribs: &[Vec<f32>], out: &mut [f32], add: fn(&mut [T], &[f32]), round: fn(T) -> f32) {
    let len = contribs[0].len();
    let mut at = 0;
    while at < len {
        let n = WINDOW.min(len - at);
        acc[..n].fill(T::from(-0.0));
        for c in contribs {
            for p in (0..n).step_by(PACKET) {
                let m = PACKET.min(n - p);
                add(&mut acc[p..p + m], &c[at + p..at + p + m]);
            }
        }
        for (o, a) in out[at..at + n].iter_mut().zip(&acc[..n]) {
            *o = round(*a);
        }
        at += n;
    }
}

/// The switch's path: wire bytes in 363-value packets, the policy's accumulator,
/// then final rounding of every slot to FP32 and clearing for the next range
/// (one pass: `take_fp32_run`).
pub fn run_policy(acc: &mut Accumulator, contribs: &[Vec<u8>], out: &mut [u8]) {
    let len = contribs[0].len() / 4;
    let mut at = 0;
    while at < len {
        let n = WINDOW.min(len - at);
        for c in contribs {
            for p in (0..n).step_by(PACKET) {
                let m = PACKET.min(n - p);
                let bytes = &c[4 * (at + p)..4 * (at + p + m)];
                let _ = acc.accumulate(p, NumFormat::Fp32, bytes);
            }
        }
        let _ = acc.take_fp32_run(0, n, &mut out[4 * at..4 * (at + n)]);
        at += n;
    }
}

/// Wire bytes of f32 vectors.
pub fn as_bytes(v: &[Vec<f32>]) -> Vec<Vec<u8>> {
    v.iter().map(|c| c.iter().flat_map(|x| x.to_le_bytes()).collect()).collect()
}

/// A fresh accumulator of one window for a policy.
pub fn window(policy: Policy) -> Accumulator {
    Accumulator::new(policy, WINDOW)
}
