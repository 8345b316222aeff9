//! The AVX-512 kernels (F, BW and VL, with AVX2), each an `unsafe fn` with
//! `#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]` that `super`
//! calls once that support is detected (or `super::emu`, on an emulated CPU).
//! Where no AVX-512 kernel exists, such a CPU runs the AVX2 one. x86_64 only
//! (the `cfg` is on the `mod` declaration).

use std::arch::x86_64::*;

use crate::kulisch::KulischWindow;

/// The first `count` (0..=16) of sixteen lanes, for the masked loads and
/// stores that end a run in the AVX-512 kernels.
#[inline(always)]
fn first16(count: usize) -> u16 {
    ((1u32 << count) - 1) as u16
}

/// `fp32_arrival` sixteen values a vector, the last 1..=15 masked.
///
/// # Safety
/// AVX-512 F, BW, VL and AVX2 are present.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
pub(crate) unsafe fn fp32_arrival_avx512(acc: &mut [f32], values: &[u8]) {
    let n = (values.len() / 4).min(acc.len());
    let (vp, ap) = (values.as_ptr() as *const f32, acc.as_mut_ptr());
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: i + 16 <= n keeps the 64-byte accesses inside `acc` and `values`; unaligned.
        unsafe { _mm512_storeu_ps(ap.add(i), _mm512_add_ps(_mm512_loadu_ps(ap.add(i)), _mm512_loadu_ps(vp.add(i)))) };
        i += 16;
    }
    if i < n {
        let m = first16(n - i);
        // SAFETY: the mask keeps every access to lanes i..n, inside both slices (masked lanes never fault).
        unsafe {
            let v = _mm512_maskz_loadu_ps(m, vp.add(i));
            _mm512_mask_storeu_ps(ap.add(i), m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, ap.add(i)), v));
        }
    }
}

/// `fp32_write` sixteen slots a vector, the last 1..=15 masked.
///
/// # Safety
/// AVX-512 F, BW, VL and AVX2 are present.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
pub(crate) unsafe fn fp32_write_avx512(acc: &mut [f32], out: &mut [u8], take: bool) {
    let n = (out.len() / 4).min(acc.len());
    let nan = _mm512_castsi512_ps(_mm512_set1_epi32(crate::round::FP32_NAN as i32));
    let neg_zero = _mm512_set1_ps(-0.0);
    let (ap, op) = (acc.as_mut_ptr(), out.as_mut_ptr() as *mut f32);
    let mut i = 0;
    while i < n {
        let m = first16((n - i).min(16));
        // SAFETY: the mask keeps every access to lanes i..min(i + 16, n), inside both slices.
        unsafe {
            let a = _mm512_maskz_loadu_ps(m, ap.add(i));
            _mm512_mask_storeu_ps(op.add(i), m, _mm512_mask_blend_ps(_mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a), a, nan));
            if take {
                _mm512_mask_storeu_ps(ap.add(i), m, neg_zero);
            }
        }
        i += 16;
    }
}

/// `max_finite_exponent` sixteen values a vector.
///
/// # Safety
/// AVX-512 F, BW, VL and AVX2 are present.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
pub(crate) unsafe fn max_finite_exponent_avx512(values: &[u8]) -> u32 {
    let n = values.len() / 4;
    let c_exp = _mm512_set1_epi32(0xff);
    let mut m = _mm512_setzero_si512();
    let mut i = 0;
    while i < n {
        let k = first16((n - i).min(16));
        // SAFETY: the mask reads only the values i..min(i + 16, n); lanes past n read as 0.
        let b = unsafe { _mm512_maskz_loadu_epi32(k, values.as_ptr().add(4 * i) as *const i32) };
        let e = _mm512_and_si512(_mm512_srli_epi32::<23>(b), c_exp);
        // Exponent 255 (not finite) counts as 0.
        m = _mm512_max_epu32(m, _mm512_maskz_mov_epi32(_mm512_cmpneq_epi32_mask(e, c_exp), e));
        i += 16;
    }
    _mm512_reduce_max_epu32(m)
}

/// `kulisch_fp32_avx2` with the 64-slot all-inside steps in 512-bit vectors
/// (`all_inside64_avx512`); blocks with values outside take the AVX2 paths.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
pub(crate) unsafe fn kulisch_fp32_avx512(k: &mut KulischWindow, first: usize, values: &[u8]) {
    // SAFETY: AVX-512 F, BW, VL and AVX2 are present (this function's contract).
    unsafe { super::avx2::kulisch_fp32_kernel::<true>(k, first, values) }
}

/// The 64-slot all-inside step of `kulisch_fp32_kernel` in 512-bit vectors:
/// the window test of the 64 values at `v` in four vectors, then each
/// 64-byte line of registers from `regs` added in one vector. True, and
/// the values added, when all 64 lie inside (`bias`, `size`: the window's
/// test as `inside_avx2` takes it); else nothing changes.
///
/// # Safety
/// AVX-512 F, BW, VL and AVX2 are present; the 256 bytes from `v` are
/// readable and the 64 registers from `regs` writable.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
#[inline]
pub(super) unsafe fn all_inside64_avx512(v: *const u8, regs: *mut f64, bias: __m256i, size: __m256i) -> bool {
    for line in 0..4 {
        _mm_prefetch::<_MM_HINT_T0>(v.wrapping_add(2048 + 64 * line) as *const i8);
    }
    let (bias, size) = (_mm512_broadcastd_epi32(_mm256_castsi256_si128(bias)), _mm512_broadcastd_epi32(_mm256_castsi256_si128(size)));
    // SAFETY: the 256 bytes from `v` are readable (the contract).
    let b: [__m512i; 4] = std::array::from_fn(|j| unsafe { _mm512_loadu_si512(v.add(64 * j) as *const __m512i) });
    let magnitude = _mm512_set1_epi32(0x7fff_ffff);
    let max = b.iter().fold(_mm512_set1_epi32(i32::MIN), |m, &x| _mm512_max_epi32(m, _mm512_add_epi32(_mm512_and_si512(x, magnitude), bias)));
    if _mm512_cmpgt_epi32_mask(size, max) != 0xffff {
        return false;
    }
    for (j, x) in b.into_iter().enumerate() {
        let lo = _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_castsi512_ps(x)));
        // SAFETY: the upper eight values of the vector lie in the 256 bytes; the registers are the contract's.
        unsafe {
            let hi = _mm512_cvtps_pd(_mm256_loadu_ps((v as *const f32).add(16 * j + 8)));
            let p = regs.add(16 * j);
            _mm512_storeu_pd(p, _mm512_add_pd(_mm512_loadu_pd(p), lo));
            _mm512_storeu_pd(p.add(8), _mm512_add_pd(_mm512_loadu_pd(p.add(8)), hi));
        }
    }
    true
}
