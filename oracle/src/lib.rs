//! An independent oracle: values through f64 and big integers, rounding by
//! binary search over bit patterns. It shares no code with prism-arith (only
//! its `NumFormat`, to name what `decode` reads). The arith, dataplane and RTL
//! tests check against it, and pktgen verifies every RESULT with it.

// Library code reports bad input as errors: no unwrap, expect or panic
// outside tests (issue 29's lint policy; clippy runs with -D warnings).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

/// An exact value: special states or a big integer in units of 2^-149.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    NaN,
    Inf(bool),
    Zero(bool),
    Finite(BigInt),
}

/// Exact units of a finite f64 that is a multiple of 2^-149.
pub fn units_of_f64(x: f64) -> BigInt {
    if x == 0.0 {
        return BigInt::zero();
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 { (frac, -1074) } else { (frac | 1 << 52, exp - 1075) };
    let m = BigInt::from(m);
    let shift = e + 149;
    let v = if shift >= 0 {
        m << shift as usize
    } else {
        let d = -shift as usize;
        assert!((&m % (BigInt::one() << d)).is_zero(), "not a multiple of 2^-149");
        m >> d
    };
    if x < 0.0 {
        -v
    } else {
        v
    }
}

pub fn of_f64(x: f64) -> V {
    if x.is_nan() {
        V::NaN
    } else if x.is_infinite() {
        V::Inf(x < 0.0)
    } else if x == 0.0 {
        V::Zero(x.is_sign_negative())
    } else {
        V::Finite(units_of_f64(x))
    }
}

/// An exact value that is an FP32 value, as f32 (NaN, infinities and signed zeros kept).
pub fn to_f32(v: &V) -> f32 {
    match v {
        V::NaN => f32::NAN,
        V::Inf(n) => {
            if *n {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            }
        }
        V::Zero(n) => {
            if *n {
                -0.0
            } else {
                0.0
            }
        }
        V::Finite(k) => (k.to_string().parse::<f64>().unwrap_or(f64::NAN) * 2f64.powi(-149)) as f32,
    }
}

pub fn of_f32_bits(b: u32) -> V {
    of_f64(f32::from_bits(b) as f64)
}

/// Exact sum with IEEE special rules: NaN wins, +inf + -inf = NaN, -0 only if all -0.
pub fn sum(vals: &[V]) -> V {
    let mut nan = false;
    let (mut pinf, mut ninf) = (false, false);
    let mut all_neg_zero = true;
    let mut acc = BigInt::zero();
    for v in vals {
        match v {
            V::NaN => nan = true,
            V::Inf(n) => {
                if *n {
                    ninf = true
                } else {
                    pinf = true
                }
                all_neg_zero = false;
            }
            V::Zero(n) => all_neg_zero &= *n,
            V::Finite(k) => {
                acc += k;
                all_neg_zero = false;
            }
        }
    }
    if nan || (pinf && ninf) {
        V::NaN
    } else if pinf {
        V::Inf(false)
    } else if ninf {
        V::Inf(true)
    } else if acc.is_zero() {
        V::Zero(all_neg_zero && !vals.is_empty())
    } else {
        V::Finite(acc)
    }
}

/// A binary floating-point format described by its bit patterns.
#[derive(Clone, Copy)]
pub struct Fmt {
    pub max_finite: u32,
    pub sign: u32,
    pub inf: u32,
    pub nan: u32,
    pub to_f64: fn(u32) -> f64,
}

pub const F32: Fmt = Fmt { max_finite: 0x7f7f_ffff, sign: 0x8000_0000, inf: 0x7f80_0000, nan: 0x7fc0_0000, to_f64: |b| f32::from_bits(b) as f64 };
pub const F16: Fmt = Fmt { max_finite: 0x7bff, sign: 0x8000, inf: 0x7c00, nan: 0x7e00, to_f64: |b| half::f16::from_bits(b as u16).to_f64() };
pub const B16: Fmt = Fmt { max_finite: 0x7f7f, sign: 0x8000, inf: 0x7f80, nan: 0x7fc0, to_f64: |b| half::bf16::from_bits(b as u16).to_f64() };

/// Round to nearest, ties to even, by searching the positive bit patterns.
pub fn round(v: &V, f: Fmt) -> u32 {
    match v {
        V::NaN => f.nan,
        V::Inf(n) => f.inf | if *n { f.sign } else { 0 },
        V::Zero(n) => {
            if *n {
                f.sign
            } else {
                0
            }
        }
        V::Finite(k) => {
            let neg = k.is_negative();
            let a = k.abs();
            let val = |b: u32| units_of_f64((f.to_f64)(b));
            let s = if neg { f.sign } else { 0 };
            // Overflow: at or beyond the midpoint between max and the next power of two.
            let max = val(f.max_finite);
            let ulp = &max - val(f.max_finite - 1);
            if a >= &max + (&ulp >> 1usize) {
                return f.inf | s;
            }
            // Largest pattern with value <= a.
            let (mut lo, mut hi) = (0u32, f.max_finite);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if val(mid) <= a {
                    lo = mid
                } else {
                    hi = mid - 1
                }
            }
            let below = val(lo);
            if below == a || lo == f.max_finite {
                return lo | s;
            }
            let above = val(lo + 1);
            let (d1, d2) = (&a - &below, &above - &a);
            let pick = if d1 < d2 {
                lo
            } else if d2 < d1 {
                lo + 1
            } else if lo % 2 == 0 {
                lo
            } else {
                lo + 1
            };
            pick | s
        }
    }
}

/// Decodes one wire value (any NumberGroup format) exactly.
pub fn decode(format: prism_arith::NumFormat, v: &[u8]) -> V {
    use prism_arith::NumFormat;
    match format {
        NumFormat::Int8 => of_f64(v[0] as i8 as f64),
        NumFormat::Fp16 => of_f64(half::f16::from_le_bytes([v[0], v[1]]).to_f64()),
        NumFormat::Bf16 => of_f64(half::bf16::from_le_bytes([v[0], v[1]]).to_f64()),
        NumFormat::Fp32 => of_f32_bits(u32::from_le_bytes([v[0], v[1], v[2], v[3]])),
        NumFormat::Kulisch { .. } => match v[0] {
            0 => V::Finite(BigInt::from_signed_bytes_le(&v[1..])),
            1 => V::Zero(false),
            2 => V::Zero(true),
            3 => V::Inf(false),
            4 => V::Inf(true),
            _ => V::NaN,
        },
    }
}
