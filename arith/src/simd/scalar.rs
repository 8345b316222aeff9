//! The scalar twins: the reference each SIMD kernel is tested against, and
//! what runs on a CPU without AVX2 (or with `PRISM_ARITH_ISA=scalar`).

use crate::kulisch::KulischWindow;

/// Scalar twin of `fp32_arrival`.
pub fn fp32_arrival_scalar(acc: &mut [f32], values: &[u8]) {
    for (a, v) in acc.iter_mut().zip(values.chunks_exact(4)) {
        *a += f32::from_le_bytes([v[0], v[1], v[2], v[3]]);
    }
}

/// Scalar twin of `fp32_write`.
pub fn fp32_write_scalar(acc: &mut [f32], out: &mut [u8], take: bool) {
    for (v, o) in acc.iter_mut().zip(out.chunks_exact_mut(4)) {
        let bits = if v.is_nan() { crate::round::FP32_NAN } else { v.to_bits() };
        o.copy_from_slice(&bits.to_le_bytes());
        if take {
            *v = -0.0;
        }
    }
}

/// Scalar twin of `max_finite_exponent`.
pub fn max_finite_exponent_scalar(values: &[u8]) -> u32 {
    values.chunks_exact(4).map(|v| (u32::from_le_bytes([v[0], v[1], v[2], v[3]]) >> 23) & 0xff).filter(|&e| e != 0xff).max().unwrap_or(0)
}

/// Scalar twin of `naive_avx2` (the baseline of the benchmarks).
pub(super) fn naive_add<T: Copy + std::ops::AddAssign + From<f32>>(acc: &mut [T], values: &[f32]) {
    for (a, v) in acc.iter_mut().zip(values) {
        *a += T::from(*v);
    }
}

/// Scalar twin of `kulisch_write_fp32_avx2` (see `super::kulisch_write_fp32`).
pub(super) fn kulisch_write_fp32(
    k: &mut KulischWindow,
    first: usize,
    n: usize,
    out: &mut [u8],
    take: bool,
    slow: &mut dyn FnMut(&mut KulischWindow, usize) -> Result<u32, crate::ArithError>,
) -> Result<(), crate::ArithError> {
    for i in 0..n {
        // A slot of digits and register rounds from its f64 estimate when that settles it.
        let bits = match k.round_fp32_estimate(first + i) {
            Some(bits) => bits,
            None => slow(k, first + i)?,
        };
        out[4 * i..4 * i + 4].copy_from_slice(&bits.to_le_bytes());
        if take {
            k.clear_slot(first + i);
        }
    }
    Ok(())
}
