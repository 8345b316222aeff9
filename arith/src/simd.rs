//! SIMD kernels behind runtime CPU detection, each with a scalar twin that
//! the tests compare it against. The `unsafe` of this crate lives here.

use crate::kulisch::{KulischWindow, F_ANY, F_BASE_SET, F_NAN, F_NEG_INF, F_NOT_NEGZERO, F_POS_INF, F_SLOW, FAST_SPAN};
use crate::term::FP32;
use crate::NumFormat;

/// Which kernels this CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Scalar,
    Avx2,
}

/// The best kernel set the CPU supports (can be forced to scalar with PRISM_ARITH_SCALAR=1).
pub fn detected() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static ISA: OnceLock<Isa> = OnceLock::new();
        *ISA.get_or_init(|| {
            if std::env::var_os("PRISM_ARITH_SCALAR").is_some() {
                Isa::Scalar
            } else if is_x86_feature_detected!("avx2") {
                Isa::Avx2
            } else {
                Isa::Scalar
            }
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    Isa::Scalar
}

/// FP32_ARRIVAL of a run of FP32 wire values: `acc[i] += v[i]`, RNE.
pub fn fp32_arrival(acc: &mut [f32], values: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if detected() == Isa::Avx2 {
        // SAFETY: AVX2 support was detected at run time.
        unsafe { fp32_arrival_avx2(acc, values) };
        return;
    }
    fp32_arrival_scalar(acc, values)
}

/// Scalar twin of `fp32_arrival`.
pub fn fp32_arrival_scalar(acc: &mut [f32], values: &[u8]) {
    for (a, v) in acc.iter_mut().zip(values.chunks_exact(4)) {
        *a += f32::from_le_bytes([v[0], v[1], v[2], v[3]]);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fp32_arrival_avx2(acc: &mut [f32], values: &[u8]) {
    use std::arch::x86_64::*;
    let n = (values.len() / 4).min(acc.len());
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: i + 8 <= n keeps both 32-byte accesses inside `acc` and `values`;
        // unaligned loads and stores are used. x86 is little-endian like the wire.
        unsafe {
            let v = _mm256_loadu_ps(values.as_ptr().add(4 * i) as *const f32);
            let a = _mm256_loadu_ps(acc.as_ptr().add(i));
            _mm256_storeu_ps(acc.as_mut_ptr().add(i), _mm256_add_ps(a, v));
        }
        i += 8;
    }
    fp32_arrival_scalar(&mut acc[i..n], &values[4 * i..4 * n]);
}

/// The baseline of the benchmarks: the same stream added naively, vectorised by
/// the compiler for the best ISA detected.
pub fn naive_fp32_add(acc: &mut [f32], values: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if detected() == Isa::Avx2 {
        // SAFETY: AVX2 support was detected at run time.
        unsafe { naive_avx2(acc, values) };
        return;
    }
    for (a, v) in acc.iter_mut().zip(values) {
        *a += *v;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn naive_avx2(acc: &mut [f32], values: &[f32]) {
    for (a, v) in acc.iter_mut().zip(values) {
        *a += *v;
    }
}

/// KULISCH_FIXED of a run of FP32 wire values into slots `[first, ..)`.
pub fn kulisch_fp32(k: &mut KulischWindow, first: usize, values: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if detected() == Isa::Avx2 {
        // SAFETY: AVX2 support was detected at run time.
        unsafe { kulisch_fp32_avx2(k, first, values) };
        k.note_run();
        return;
    }
    k.add_native_scalar(first, NumFormat::Fp32, values)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn kulisch_fp32_avx2(k: &mut KulischWindow, first: usize, values: &[u8]) {
    use std::arch::x86_64::*;
    let n = values.len() / 4;
    let mut i = 0;
    let c_exp = _mm256_set1_epi64x(0xff);
    let c_frac = _mm256_set1_epi64x(0x7f_ffff);
    let c_hidden = _mm256_set1_epi64x(1 << 23);
    let c_one = _mm256_set1_epi64x(1);
    let c_below = _mm256_set1_epi64x(12);
    let c_span = _mm256_set1_epi64x(FAST_SPAN as i64);
    let c_base = _mm256_set1_epi64x(0xffff);
    let c_flags = _mm256_set1_epi64x((F_ANY | F_NOT_NEGZERO | F_BASE_SET) as i64);
    let c_set = _mm256_set1_epi64x(F_BASE_SET as i64);
    let zero = _mm256_setzero_si256();
    while i + 4 <= n {
        let slot = first + i;
        // SAFETY: i + 4 <= n bounds the 16-byte load from `values`; `slot + 4 <= slots`
        // was checked by `Accumulator::check`, bounding the 32-byte accesses to `fast` and `meta`.
        let (b, meta, fast) = unsafe {
            (
                _mm256_cvtepu32_epi64(_mm_loadu_si128(values.as_ptr().add(4 * i) as *const __m128i)),
                _mm256_loadu_si256(k.meta.as_ptr().add(slot) as *const __m256i),
                _mm256_loadu_si256(k.fast.as_ptr().add(slot) as *const __m256i),
            )
        };
        let exp = _mm256_and_si256(_mm256_srli_epi64(b, 23), c_exp);
        let frac = _mm256_and_si256(b, c_frac);
        let normal = _mm256_andnot_si256(_mm256_cmpeq_epi64(exp, zero), _mm256_set1_epi64x(-1));
        let mant = _mm256_or_si256(frac, _mm256_and_si256(normal, c_hidden));
        // shift = max(exp, 1) - 1; lanes are < 2^32 so a 32-bit max is exact.
        let shift = _mm256_sub_epi64(_mm256_max_epi32(exp, c_one), c_one);
        let finite_nonzero = _mm256_andnot_si256(
            _mm256_or_si256(_mm256_cmpeq_epi64(exp, c_exp), _mm256_cmpeq_epi64(mant, zero)),
            _mm256_set1_epi64x(-1),
        );
        let base_set = _mm256_cmpeq_epi64(_mm256_and_si256(meta, c_set), c_set);
        let fresh_base = _mm256_sub_epi64(_mm256_max_epi32(shift, c_below), c_below);
        let base = _mm256_blendv_epi8(fresh_base, _mm256_and_si256(meta, c_base), base_set);
        let d = _mm256_sub_epi64(shift, base);
        let out_of_range = _mm256_or_si256(_mm256_cmpgt_epi64(d, c_span), _mm256_cmpgt_epi64(zero, d));
        let eligible = _mm256_andnot_si256(out_of_range, finite_nonzero);
        let neg = _mm256_sub_epi64(zero, _mm256_srli_epi64(b, 31));
        let v = _mm256_sllv_epi64(mant, d);
        let v = _mm256_sub_epi64(_mm256_xor_si256(v, neg), neg);
        let fast = _mm256_add_epi64(fast, _mm256_and_si256(v, eligible));
        let meta = _mm256_or_si256(meta, _mm256_and_si256(_mm256_or_si256(c_flags, base), eligible));
        // SAFETY: the same bounds as the loads above.
        unsafe {
            _mm256_storeu_si256(k.fast.as_mut_ptr().add(slot) as *mut __m256i, fast);
            _mm256_storeu_si256(k.meta.as_mut_ptr().add(slot) as *mut __m256i, meta);
        }
        let rest = !_mm256_movemask_pd(_mm256_castsi256_pd(eligible)) & 0xf;
        if rest != 0 {
            for lane in 0..4 {
                if rest & (1 << lane) != 0 {
                    let j = i + lane;
                    let bits = u32::from_le_bytes([values[4 * j], values[4 * j + 1], values[4 * j + 2], values[4 * j + 3]]);
                    k.add_term(first + j, FP32.decode(bits));
                }
            }
        }
        i += 4;
    }
    for j in i..n {
        let bits = u32::from_le_bytes([values[4 * j], values[4 * j + 1], values[4 * j + 2], values[4 * j + 3]]);
        k.add_term(first + j, FP32.decode(bits));
    }
}

/// Final FP32 rounding of Kulisch slots `[first, first + n)` into `out`, four
/// at a time, where all four qualify; `done[i]` says slot `first + i` was
/// written (the caller rounds the others one by one, exactly).
///
/// A slot qualifies when its value lives only in its i64 register (no limbs,
/// no specials) and |value| < 2^51: the register converts exactly to f64, the
/// scale 2^(base - 149) is exact, and one f64-to-f32 conversion rounds to
/// nearest even -- subnormal results included.
pub(crate) fn kulisch_round_fp32(k: &KulischWindow, first: usize, n: usize, out: &mut [u8], done: &mut [bool]) {
    #[cfg(target_arch = "x86_64")]
    if detected() == Isa::Avx2 {
        // SAFETY: AVX2 support was detected at run time.
        unsafe { kulisch_round_fp32_avx2(k, first, n, out, done) };
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn kulisch_round_fp32_avx2(k: &KulischWindow, first: usize, n: usize, out: &mut [u8], done: &mut [bool]) {
    use std::arch::x86_64::*;
    let blockers = _mm256_set1_epi64x((F_SLOW | F_NAN | F_POS_INF | F_NEG_INF) as i64);
    let zero = _mm256_setzero_si256();
    let limit = _mm256_set1_epi64x(1 << 51);
    let neg_limit = _mm256_set1_epi64x(-(1 << 51));
    let magic_i = _mm256_set1_epi64x(0x4338_0000_0000_0000);
    let magic_d = _mm256_castsi256_pd(magic_i);
    let base_mask = _mm256_set1_epi64x(0xffff);
    let bias = _mm256_set1_epi64x(1023 - 149);
    let mut i = 0;
    while i + 4 <= n {
        let slot = first + i;
        // SAFETY: slot + 4 <= first + n <= slots (the caller's range), so the
        // 32-byte loads stay inside `fast` and `meta`.
        let (fast, meta) = unsafe {
            (
                _mm256_loadu_si256(k.fast.as_ptr().add(slot) as *const __m256i),
                _mm256_loadu_si256(k.meta.as_ptr().add(slot) as *const __m256i),
            )
        };
        let blocked = _mm256_cmpeq_epi64(_mm256_and_si256(meta, blockers), zero);
        let nonzero = _mm256_xor_si256(_mm256_cmpeq_epi64(fast, zero), _mm256_set1_epi64x(-1));
        let in_range = _mm256_and_si256(_mm256_cmpgt_epi64(limit, fast), _mm256_cmpgt_epi64(fast, neg_limit));
        let ok = _mm256_and_si256(_mm256_and_si256(blocked, nonzero), in_range);
        if _mm256_movemask_pd(_mm256_castsi256_pd(ok)) == 0xf {
            let d = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(fast, magic_i)), magic_d);
            let scale = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(_mm256_and_si256(meta, base_mask), bias), 52));
            let f = _mm256_cvtpd_ps(_mm256_mul_pd(d, scale));
            // SAFETY: out holds 4 bytes per slot of the range; 16 bytes from 4 * i.
            unsafe { _mm_storeu_ps(out.as_mut_ptr().add(4 * i) as *mut f32, f) };
            done[i..i + 4].fill(true);
        }
        i += 4;
    }
}
