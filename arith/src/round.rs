//! Final rounding of exact values: round to nearest, ties to even, subnormals kept.

use crate::bigint;
use crate::term::{Ieee, BF16, FP16, FP32};

/// A rounded native value: its bits, and whether rounding changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rounded {
    pub bits: u32,
    pub exact: bool,
}

pub const FP32_NAN: u32 = 0x7fc0_0000;
pub const FP16_NAN: u32 = 0x7e00;
pub const BF16_NAN: u32 = 0x7fc0;

impl Ieee {
    fn precision(self) -> u32 {
        self.frac_bits + 1
    }
    fn max_exp(self) -> u32 {
        (1 << self.exp_bits) - 1
    }
    fn sign_bit(self) -> u32 {
        1 << (self.exp_bits + self.frac_bits)
    }
    pub(crate) fn inf(self, neg: bool) -> u32 {
        self.max_exp() << self.frac_bits | if neg { self.sign_bit() } else { 0 }
    }
    pub(crate) fn zero(self, neg: bool) -> u32 {
        if neg {
            self.sign_bit()
        } else {
            0
        }
    }

    /// Rounds the magnitude `mag` (units of 2^-149, non-zero) with sign `neg`.
    pub(crate) fn round(self, neg: bool, mag: &[u64]) -> Rounded {
        let sign = if neg { self.sign_bit() } else { 0 };
        let Some(h) = bigint::highest_bit(mag) else {
            return Rounded { bits: sign, exact: true };
        };
        let p = self.precision();
        let lsb = (h + 1).saturating_sub(p).max(self.sub_shift);
        // Below the format's smallest subnormal: everything is round bits.
        let mut q = if lsb > h { 0 } else { bigint::bits(mag, lsb, h + 1 - lsb) };
        let round_bit = lsb > 0 && bigint::bits(mag, lsb - 1, 1) == 1;
        let sticky = lsb > 1 && bigint::any_below(mag, lsb - 1);
        let exact = !round_bit && !sticky;
        if round_bit && (sticky || q & 1 == 1) {
            q += 1;
        }
        let mut lsb = lsb;
        if q == 1 << p {
            q >>= 1;
            lsb += 1;
        }
        let bits = if q < 1 << (p - 1) {
            // Subnormal (or zero after rounding): exponent field 0.
            q as u32
        } else {
            let e = lsb - self.sub_shift + 1;
            if e >= self.max_exp() {
                return Rounded { bits: self.inf(neg), exact: false };
            }
            e << self.frac_bits | (q as u32 & ((1 << self.frac_bits) - 1))
        };
        Rounded { bits: bits | sign, exact }
    }
}

/// Rounds an exact magnitude to FP32.
pub fn round_fp32(neg: bool, mag: &[u64]) -> Rounded {
    FP32.round(neg, mag)
}
/// Rounds an exact magnitude to FP16.
pub fn round_fp16(neg: bool, mag: &[u64]) -> Rounded {
    FP16.round(neg, mag)
}
/// Rounds an exact magnitude to BF16.
pub fn round_bf16(neg: bool, mag: &[u64]) -> Rounded {
    BF16.round(neg, mag)
}

/// The FP16 value equal to an FP32 value, if there is one (NaN maps to the canonical NaN).
pub fn fp32_to_fp16_exact(bits: u32) -> Option<u16> {
    let x = f32::from_bits(bits);
    if x.is_nan() {
        return Some(FP16_NAN as u16);
    }
    let h = half::f16::from_f32(x);
    (h.to_f32().to_bits() == bits).then_some(h.to_bits())
}

/// The BF16 value equal to an FP32 value, if there is one.
pub fn fp32_to_bf16_exact(bits: u32) -> Option<u16> {
    if f32::from_bits(bits).is_nan() {
        return Some(BF16_NAN as u16);
    }
    (bits & 0xffff == 0).then_some((bits >> 16) as u16)
}

/// The INT8 value equal to an FP32 value: integral, in range, and not -0.
pub fn fp32_to_int8_exact(bits: u32) -> Option<i8> {
    let x = f32::from_bits(bits);
    if bits == 0x8000_0000 || !x.is_finite() || x.fract() != 0.0 || !(-128.0..=127.0).contains(&x) {
        return None;
    }
    Some(x as i8)
}
