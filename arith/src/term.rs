//! Decoding wire values into exact terms, in units of 2^-149.

use crate::NumFormat;

/// One input value, exactly: `(-1)^neg * mant * 2^(shift - 149)` when finite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    Zero { neg: bool },
    Finite { neg: bool, mant: u32, shift: u32 },
    Inf { neg: bool },
    NaN,
}

/// An IEEE-style binary format: exponent bits, fraction bits, and the Kulisch
/// bit position of its smallest subnormal.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ieee {
    pub exp_bits: u32,
    pub frac_bits: u32,
    /// Shift of a subnormal (exponent field 0 or 1) in units of 2^-149.
    pub sub_shift: u32,
}

pub(crate) const FP32: Ieee = Ieee { exp_bits: 8, frac_bits: 23, sub_shift: 0 };
pub(crate) const FP16: Ieee = Ieee { exp_bits: 5, frac_bits: 10, sub_shift: 125 };
pub(crate) const BF16: Ieee = Ieee { exp_bits: 8, frac_bits: 7, sub_shift: 16 };

impl Ieee {
    #[inline(always)]
    pub fn decode(self, bits: u32) -> Term {
        let neg = bits >> (self.exp_bits + self.frac_bits) & 1 == 1;
        let exp = (bits >> self.frac_bits) & ((1 << self.exp_bits) - 1);
        let frac = bits & ((1 << self.frac_bits) - 1);
        if exp == 0 {
            if frac == 0 {
                Term::Zero { neg }
            } else {
                Term::Finite { neg, mant: frac, shift: self.sub_shift }
            }
        } else if exp == (1 << self.exp_bits) - 1 {
            if frac == 0 {
                Term::Inf { neg }
            } else {
                Term::NaN
            }
        } else {
            Term::Finite { neg, mant: frac | 1 << self.frac_bits, shift: self.sub_shift + exp - 1 }
        }
    }
}

/// Decodes one native value (not Kulisch) from its little-endian bytes.
#[inline(always)]
pub fn decode_native(format: NumFormat, v: &[u8]) -> Term {
    match format {
        NumFormat::Int8 => {
            let x = v[0] as i8;
            if x == 0 {
                Term::Zero { neg: false }
            } else {
                Term::Finite { neg: x < 0, mant: x.unsigned_abs() as u32, shift: 149 }
            }
        }
        NumFormat::Fp16 => FP16.decode(u16::from_le_bytes([v[0], v[1]]) as u32),
        NumFormat::Bf16 => BF16.decode(u16::from_le_bytes([v[0], v[1]]) as u32),
        NumFormat::Fp32 => FP32.decode(u32::from_le_bytes([v[0], v[1], v[2], v[3]])),
        NumFormat::Kulisch { .. } => Term::NaN,
    }
}
