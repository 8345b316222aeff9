//! The sum a kept-frame switch would do: each contributor's frame is kept
//! until its range completes, then the kept bodies are summed straight into
//! the RESULT, one pass, in arrival order (FP32_ARRIVAL: `-0 + b0 + b1 + ...`,
//! each add rounded, as the window path does). Only the benchmark's floor uses
//! it: it measures how near such a design could come, not the switch.

use prism_arith::round::FP32_NAN;

/// `out[j] = -0 + b0[j] + b1[j] + ...` over `n` little-endian FP32 values,
/// NaN made canonical. Every body and `out` hold at least `4 * n` bytes;
/// otherwise nothing is written.
pub fn sum_kept_fp32(bodies: &[&[u8]], out: &mut [u8], n: usize) {
    if bodies.iter().any(|b| b.len() < 4 * n) || out.len() < 4 * n {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked above); the lengths were checked above.
        unsafe { sum_kept_fp32_avx2(bodies, out, n) };
        return;
    }
    sum_kept_fp32_scalar(bodies, out, n)
}

/// The scalar twin.
pub fn sum_kept_fp32_scalar(bodies: &[&[u8]], out: &mut [u8], n: usize) {
    sum_scalar_from(bodies, out, 0, n)
}

/// Values `from..n` one at a time.
fn sum_scalar_from(bodies: &[&[u8]], out: &mut [u8], from: usize, n: usize) {
    for j in from..n {
        let mut a = -0.0f32;
        for b in bodies {
            a += f32::from_le_bytes([b[4 * j], b[4 * j + 1], b[4 * j + 2], b[4 * j + 3]]);
        }
        let bits = if a.is_nan() { FP32_NAN } else { a.to_bits() };
        out[4 * j..4 * j + 4].copy_from_slice(&bits.to_le_bytes());
    }
}

/// # Safety
/// AVX2 is present; every body and `out` hold at least `4 * n` bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sum_kept_fp32_avx2(bodies: &[&[u8]], out: &mut [u8], n: usize) {
    use std::arch::x86_64::*;
    let nan = _mm256_castsi256_ps(_mm256_set1_epi32(FP32_NAN as i32));
    let mut j = 0;
    while j + 8 <= n {
        let mut acc = _mm256_set1_ps(-0.0);
        for b in bodies {
            // SAFETY: values j..j + 8 lie inside the body (4 * n bytes, j + 8 <= n); unaligned load.
            acc = _mm256_add_ps(acc, unsafe { _mm256_loadu_ps(b.as_ptr().add(4 * j) as *const f32) });
        }
        let v = _mm256_blendv_ps(acc, nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(acc, acc));
        // SAFETY: as above, for out.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(4 * j) as *mut f32, v) };
        j += 8;
    }
    // The last values (fewer than eight).
    sum_scalar_from(bodies, out, j, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prism_arith::window::{Accumulator, Policy};
    use prism_arith::NumFormat;

    #[test]
    fn kept_sum_equals_the_window_path_bit_for_bit() {
        let mut s = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            // Every class of value: full exponent range, zeros of both signs, inf, NaN.
            match s % 16 {
                0 => 0x8000_0000,
                1 => 0,
                2 => 0x7f80_0000,
                3 => 0xff80_0000,
                4 => 0x7fa0_0001,
                _ => (s >> 16) as u32,
            }
        };
        for ranks in [1usize, 2, 3, 8] {
            for n in [0usize, 1, 7, 8, 9, 363] {
                let bodies: Vec<Vec<u8>> = (0..ranks).map(|_| (0..n).flat_map(|_| next().to_le_bytes()).collect()).collect();
                let refs: Vec<&[u8]> = bodies.iter().map(|b| b.as_slice()).collect();
                let mut acc = Accumulator::new(Policy::Fp32Arrival, n.max(1));
                for b in &refs {
                    acc.accumulate(0, NumFormat::Fp32, b).unwrap();
                }
                let mut want = vec![0xa5u8; 4 * n];
                acc.take_fp32_run(0, n, &mut want).unwrap();
                let (mut got, mut twin) = (vec![0xa5u8; 4 * n], vec![0xa5u8; 4 * n]);
                sum_kept_fp32(&refs, &mut got, n);
                sum_kept_fp32_scalar(&refs, &mut twin, n);
                assert_eq!(got, want, "ranks {ranks} n {n}");
                assert_eq!(twin, want, "scalar, ranks {ranks} n {n}");
            }
        }
    }
}
