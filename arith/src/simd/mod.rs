//! SIMD kernels behind runtime CPU detection, each with a scalar twin that
//! the tests compare it against. The `unsafe` of this crate lives here.
//!
//! This module holds the public API, the CPU detection (`detected`, with
//! `PRISM_ARITH_ISA`) and the dispatch to the kernels of one instruction set
//! each: `scalar` (the twins, on every target), `avx2` and `avx512` (x86_64
//! only).

use crate::kulisch::KulischWindow;
use crate::NumFormat;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
mod scalar;

pub use scalar::{fp32_arrival_scalar, fp32_write_scalar, max_finite_exponent_scalar};

/// Which kernels this CPU runs: each set includes the ones before it (a CPU
/// with AVX-512 runs the AVX2 kernels where no AVX-512 one exists).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    Scalar,
    Avx2,
    /// AVX-512 F, BW and VL (with AVX2).
    Avx512,
}

/// The best kernel set the CPU supports. `PRISM_ARITH_ISA=scalar` or
/// `avx2` caps it (any other value, `avx512` among them, leaves the best),
/// and `PRISM_ARITH_SCALAR=1` asks for the scalar twins.
pub fn detected() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static ISA: OnceLock<Isa> = OnceLock::new();
        *ISA.get_or_init(|| {
            let best = if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("avx512vl") && is_x86_feature_detected!("avx2") {
                Isa::Avx512
            } else if is_x86_feature_detected!("avx2") {
                Isa::Avx2
            } else {
                Isa::Scalar
            };
            let asked = match std::env::var("PRISM_ARITH_ISA").as_deref() {
                Ok("scalar") => Isa::Scalar,
                Ok("avx2") => Isa::Avx2,
                _ => Isa::Avx512,
            };
            if std::env::var_os("PRISM_ARITH_SCALAR").is_some() {
                Isa::Scalar
            } else {
                best.min(asked)
            }
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    Isa::Scalar
}

/// The AVX-512 kernels without CPU detection, for `tools/avx512-emu`, which
/// runs them on an emulated CPU where the host has no AVX-512.
#[cfg(all(feature = "emu", target_arch = "x86_64"))]
#[doc(hidden)]
pub mod emu {
    /// `fp32_write` with the AVX-512 kernel.
    ///
    /// # Safety
    /// The CPU running this (real or emulated) has AVX-512 F, BW, VL and AVX2.
    pub unsafe fn fp32_write_avx512(acc: &mut [f32], out: &mut [u8], take: bool) {
        // SAFETY: the caller's.
        unsafe { super::avx512::fp32_write_avx512(acc, out, take) }
    }

    /// `max_finite_exponent` with the AVX-512 kernel.
    ///
    /// # Safety
    /// As for `fp32_write_avx512`.
    pub unsafe fn max_finite_exponent_avx512(values: &[u8]) -> u32 {
        // SAFETY: the caller's.
        unsafe { super::avx512::max_finite_exponent_avx512(values) }
    }
}

/// Runs the kernel of the best ISA `detected()` allows. The first form
/// takes the AVX-512, AVX2 and scalar calls; the second the AVX2 call (for
/// AVX-512 too, which includes AVX2) and the scalar one. The kernel calls
/// exist on x86_64 only.
macro_rules! dispatch {
    (avx512: $avx512:expr, avx2: $avx2:expr, scalar: $scalar:expr $(,)?) => {
        match detected() {
            // SAFETY: AVX-512 F, BW, VL and AVX2 support was detected at run time.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { $avx512 },
            // SAFETY: AVX2 support was detected at run time.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { $avx2 },
            _ => $scalar,
        }
    };
    (avx2: $avx2:expr, scalar: $scalar:expr $(,)?) => {
        match detected() {
            // SAFETY: AVX2 support was detected at run time (AVX-512 support includes it).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx2 => unsafe { $avx2 },
            _ => $scalar,
        }
    };
}

/// FP32_ARRIVAL of a run of FP32 wire values: `acc[i] += v[i]`, RNE.
pub fn fp32_arrival(acc: &mut [f32], values: &[u8]) {
    dispatch!(
        avx512: avx512::fp32_arrival_avx512(acc, values),
        avx2: avx2::fp32_arrival_avx2(acc, values),
        scalar: fp32_arrival_scalar(acc, values),
    )
}

/// Writes FP32_ARRIVAL slots as little-endian wire values, NaN made canonical;
/// with `take`, each slot read is reset to -0 in the same pass.
pub fn fp32_write(acc: &mut [f32], out: &mut [u8], take: bool) {
    dispatch!(
        avx512: avx512::fp32_write_avx512(acc, out, take),
        avx2: avx2::fp32_write_avx2(acc, out, take),
        scalar: fp32_write_scalar(acc, out, take),
    )
}

/// The baseline of the benchmarks: the same stream added naively, vectorised by
/// the compiler for the best ISA detected.
pub fn naive_fp32_add(acc: &mut [f32], values: &[f32]) {
    naive_add(acc, values)
}

/// A reference point of the benchmarks, not an accumulator (its sums
/// round): the same stream widened to f64 and added to f64 sums, the load
/// and store traffic of any design that keeps 8 bytes per element, as
/// KULISCH_FIXED's registers do, with no test of the values at all.
pub fn naive_f64_add(acc: &mut [f64], values: &[f32]) {
    naive_add(acc, values)
}

fn naive_add<T: Copy + std::ops::AddAssign + From<f32>>(acc: &mut [T], values: &[f32]) {
    dispatch!(avx2: avx2::naive_avx2(acc, values), scalar: scalar::naive_add(acc, values))
}

/// KULISCH_FIXED of a run of FP32 wire values into slots `[first, ..)`.
pub fn kulisch_fp32(k: &mut KulischWindow, first: usize, values: &[u8]) {
    dispatch!(
        avx512: avx512::kulisch_fp32_avx512(k, first, values),
        avx2: avx2::kulisch_fp32_avx2(k, first, values),
        scalar: k.add_native_scalar(first, NumFormat::Fp32, values),
    )
}

/// The largest FP32 exponent field among the finite values of a run (255,
/// infinities and NaNs, excluded; 0 when there is none).
pub(crate) fn max_finite_exponent(values: &[u8]) -> u32 {
    dispatch!(
        avx512: avx512::max_finite_exponent_avx512(values),
        avx2: avx2::max_finite_exponent_avx2(values),
        scalar: max_finite_exponent_scalar(values),
    )
}

/// Final FP32 rounding of Kulisch slots `[first, first + n)` into `out` (4
/// bytes each). Four slots at a time where all four qualify -- their whole
/// state is the f64 register (no flags) and the value fits the width: one
/// f64-to-f32 conversion rounds each to nearest even, subnormal results
/// included, keeping the sign of an exact zero. Any other slot rounds from
/// its f64 estimate when that settles it (`round_fp32_estimate`), else
/// through `slow`, which rounds it exactly. With `take`, each slot is also
/// cleared once written (one pass instead of a write and a clear).
pub(crate) fn kulisch_write_fp32(
    k: &mut KulischWindow,
    first: usize,
    n: usize,
    out: &mut [u8],
    take: bool,
    slow: &mut dyn FnMut(&mut KulischWindow, usize) -> Result<u32, crate::ArithError>,
) -> Result<(), crate::ArithError> {
    dispatch!(
        avx2: avx2::kulisch_write_fp32_avx2(k, first, n, out, take, slow),
        scalar: scalar::kulisch_write_fp32(k, first, n, out, take, slow),
    )
}

/// `round_fp32_estimate4_avx2` for the tests (`None` without AVX2).
#[cfg(test)]
pub(crate) fn round_fp32_estimate4(k: &mut KulischWindow, slot: usize) -> Option<[u32; 4]> {
    match detected() {
        // SAFETY: AVX2 support was detected at run time; the caller's slot + 4 <= slots.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 | Isa::Avx2 => unsafe { avx2::round_fp32_estimate4_avx2(k, slot, false) },
        _ => None,
    }
}

/// `KulischWindow::round_fp32_estimate` with the runtime's best ISA (the
/// tests compare the two).
#[cfg(test)]
pub(crate) fn round_fp32_estimate(k: &mut KulischWindow, slot: usize) -> Option<u32> {
    match detected() {
        // SAFETY: AVX2 support was detected at run time; the caller's slot is in the window.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 | Isa::Avx2 => unsafe { avx2::round_fp32_estimate_avx2(k, slot, false) },
        _ => k.round_fp32_estimate(slot),
    }
}

/// The f64 registers of a Kulisch window in 64-byte lines: an aligned block
/// of eight slots is one cache line, and the length is whole blocks.
#[derive(Debug, Clone)]
pub(crate) struct Registers(Vec<Line>);

#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Line([f64; 8]);

impl Registers {
    /// Registers for `slots` slots (rounded up to whole lines), all -0.
    pub(crate) fn new(slots: usize) -> Registers {
        Registers(vec![Line([-0.0; 8]); slots.div_ceil(8)])
    }
}

impl Registers {
    /// The first register, from the vector itself rather than through a
    /// slice, so that pointers taken this way stay valid next to the
    /// slice accesses the scalar paths make in between.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut f64 {
        self.0.as_mut_ptr() as *mut f64
    }

    pub(crate) fn as_ptr(&self) -> *const f64 {
        self.0.as_ptr() as *const f64
    }
}

impl std::ops::Deref for Registers {
    type Target = [f64];
    fn deref(&self) -> &[f64] {
        // SAFETY: a Line is eight f64 with no padding (repr(C), size 64 = 8 * 8), so the
        // vector's buffer is len * 8 initialised, contiguous f64 values.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr() as *const f64, self.0.len() * 8) }
    }
}

impl std::ops::DerefMut for Registers {
    fn deref_mut(&mut self) -> &mut [f64] {
        // SAFETY: as in `deref`, and the borrow of `self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr() as *mut f64, self.0.len() * 8) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FP32_ARRIVAL's add and write kernels against their scalar twins for
    /// every run length up to 40 (whole steps, masked tails) with NaNs,
    /// infinities and signed zeros, and nothing past the run touched: the
    /// slots and output words after it hold guards that must survive.
    #[test]
    fn fp32_arrival_kernels_match_their_scalar_twins_and_stay_in_the_run() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            match s % 11 {
                0 => f32::NAN.to_bits() | (s as u32 & 0x8000_0001),
                1 => f32::INFINITY.to_bits() | (s as u32 & 0x8000_0000),
                2 => (s as u32) & 0x8000_0000,
                _ => s as u32,
            }
        };
        const GUARD: u32 = 0x1234_5678;
        for n in 0..=40usize {
            let acc0: Vec<f32> = (0..n + 9).map(|i| if i < n { f32::from_bits(next()) } else { f32::from_bits(GUARD) }).collect();
            let vals: Vec<u8> = (0..n).flat_map(|_| next().to_le_bytes()).collect();
            let (mut a, mut b) = (acc0.clone(), acc0.clone());
            fp32_arrival(&mut a[..n + 9], &vals);
            fp32_arrival_scalar(&mut b[..n + 9], &vals);
            // A NaN's sign and payload are the hardware's choice (Rust does not
            // fix them; RESULTs carry the canonical NaN): any NaN matches any.
            let bits = |v: &[f32]| v.iter().map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() }).collect::<Vec<_>>();
            assert_eq!(bits(&a), bits(&b), "add, n {n}");
            assert!(a[n..].iter().all(|x| x.to_bits() == GUARD), "add touched past n {n}");
            for take in [false, true] {
                let (mut a2, mut b2) = (a.clone(), a.clone());
                let (mut oa, mut ob) = (vec![0xa5u8; 4 * n + 36], vec![0xa5u8; 4 * n + 36]);
                fp32_write(&mut a2[..n + 9], &mut oa[..4 * n], take);
                fp32_write_scalar(&mut b2[..n + 9], &mut ob[..4 * n], take);
                assert_eq!(oa, ob, "write, n {n} take {take}");
                assert_eq!(bits(&a2), bits(&b2), "write's reset, n {n} take {take}");
                assert!(oa[4 * n..].iter().all(|&x| x == 0xa5), "write past n {n}");
                assert!(a2[n..].iter().all(|x| x.to_bits() == GUARD), "reset past n {n}");
            }
        }
    }

    #[test]
    fn max_finite_exponent_matches_its_scalar_twin() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..100 {
            let vals: Vec<u8> = (0..len)
                .flat_map(|i| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    let v = match i % 7 {
                        0 => 0x7f80_0000 | (s as u32 & 0x8000_0001), // inf or NaN
                        _ => s as u32,
                    };
                    v.to_le_bytes()
                })
                .collect();
            assert_eq!(max_finite_exponent(&vals), max_finite_exponent_scalar(&vals), "len {len}");
        }
    }

    #[test]
    fn fp32_write_matches_its_scalar_twin() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        for len in 0..40 {
            for take in [false, true] {
                let acc: Vec<f32> = (0..len)
                    .map(|i| {
                        s ^= s << 13;
                        s ^= s >> 7;
                        s ^= s << 17;
                        f32::from_bits(match i % 5 {
                            0 => 0x7f80_0000 | (s as u32 & 0x807f_ffff), // inf or a NaN with any sign and payload
                            1 => s as u32 & 0x8000_0000,                 // a signed zero
                            _ => s as u32,
                        })
                    })
                    .collect();
                let (mut a, mut b) = (acc.clone(), acc.clone());
                let (mut oa, mut ob) = (vec![0xa5u8; 4 * len], vec![0xa5u8; 4 * len]);
                fp32_write(&mut a, &mut oa, take);
                fp32_write_scalar(&mut b, &mut ob, take);
                assert_eq!(oa, ob, "len {len} take {take}");
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&a), bits(&b), "len {len} take {take}");
                for (o, v) in ob.chunks_exact(4).zip(&acc) {
                    let w = u32::from_le_bytes([o[0], o[1], o[2], o[3]]);
                    assert_eq!(w, if v.is_nan() { crate::round::FP32_NAN } else { v.to_bits() });
                }
                assert!(!take || b.iter().all(|v| v.to_bits() == 0x8000_0000));
            }
        }
    }
}
