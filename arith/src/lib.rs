//! PRISM arithmetic: number formats, exact Kulisch accumulation, FP32
//! round-on-arrival, final rounding and the AUTO encoder. No I/O.
//!
//! Values are exact terms in units of 2^-149 (the smallest FP32 subnormal),
//! so every INT8, FP16, BF16 and FP32 value is an integer multiple of the unit
//! and a Kulisch accumulator is a plain two's-complement integer.

// Library code must not unwrap, expect or panic on its input (the tests may).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod auto;
#[doc(hidden)]
pub mod bench_support;
mod bigint;
pub mod kulisch;
pub mod round;
pub mod simd;
pub mod term;
pub mod window;

pub use kulisch::{Exact, KulischWindow};
pub use term::{decode_native, Term};
pub use window::{Accumulator, ArithError, Output, Policy};

/// The concrete number formats a NumberGroup can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NumFormat {
    Int8,
    Fp16,
    Bf16,
    Fp32,
    /// Kulisch fixed point: one state byte and a `width_bits`-bit signed integer in units of 2^-149.
    Kulisch {
        width_bits: u16,
    },
}

impl NumFormat {
    /// Bytes one value occupies on the wire.
    pub const fn value_bytes(self) -> usize {
        match self {
            NumFormat::Int8 => 1,
            NumFormat::Fp16 | NumFormat::Bf16 => 2,
            NumFormat::Fp32 => 4,
            NumFormat::Kulisch { width_bits } => 1 + width_bits as usize / 8,
        }
    }

    /// Whole values in `bytes` bytes of this format: a shift for the native
    /// formats (a divide costs tens of cycles, and every packet asks).
    #[inline]
    pub const fn values_in(self, bytes: usize) -> usize {
        match self {
            NumFormat::Int8 => bytes,
            NumFormat::Fp16 | NumFormat::Bf16 => bytes >> 1,
            NumFormat::Fp32 => bytes >> 2,
            NumFormat::Kulisch { .. } => bytes / self.value_bytes(),
        }
    }
}

/// The smallest Kulisch width that sums `terms` original FP32-domain terms exactly:
/// 278 + ceil(log2 N) bits, rounded up to a multiple of 8.
pub fn min_kulisch_width(terms: u32) -> u32 {
    let log = if terms <= 1 { 0 } else { 32 - (terms - 1).leading_zeros() };
    (278 + log).div_ceil(8) * 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_bytes_match_the_seed() {
        assert_eq!(NumFormat::Kulisch { width_bits: 280 }.value_bytes(), 36);
        assert_eq!(NumFormat::Kulisch { width_bits: 4096 }.value_bytes(), 513);
        assert_eq!(NumFormat::Bf16.value_bytes(), 2);
        for f in [NumFormat::Int8, NumFormat::Fp16, NumFormat::Bf16, NumFormat::Fp32, NumFormat::Kulisch { width_bits: 280 }] {
            for bytes in [0, 1, 2, 3, 4, 5, 35, 36, 37, 72, 1452, 1453] {
                assert_eq!(f.values_in(bytes), bytes / f.value_bytes(), "{f:?} {bytes}");
            }
        }
    }

    #[test]
    fn width_rule() {
        assert_eq!(min_kulisch_width(1), 280);
        assert_eq!(min_kulisch_width(2), 280);
        assert_eq!(min_kulisch_width(4), 280);
        assert_eq!(min_kulisch_width(5), 288);
        assert_eq!(min_kulisch_width(64), 288);
        assert_eq!(min_kulisch_width(1 << 20), 304);
    }
}
