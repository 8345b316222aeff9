//! Shared by the Kulisch tests: a 320-bit slot as a big integer, big
//! integers as slot words, and a slot's meaning by the flag rules, in the
//! independent oracle's terms (prism-oracle).
#![allow(dead_code)]

pub use prism_oracle as oracle;

use num_bigint::{BigInt, Sign};
use num_traits::Zero;
use oracle::V;
use prism_rtl::Slot;

/// Ten little-endian words as a signed (two's-complement) big integer.
pub fn int_of_words(words: &[u32; 10]) -> BigInt {
    let mut bytes = Vec::new();
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    let u = BigInt::from_bytes_le(Sign::Plus, &bytes);
    if words[9] >> 31 == 1 {
        u - (BigInt::from(1) << 320usize)
    } else {
        u
    }
}

/// The slot's integer as a signed big integer.
pub fn int_of(s: &Slot) -> BigInt {
    int_of_words(&s.words)
}

/// Any integer, wrapped to 320-bit two's-complement words.
pub fn words_of(v: &BigInt) -> [u32; 10] {
    let m320 = BigInt::from(1) << 320usize;
    let m = ((v % &m320) + &m320) % &m320;
    let (_, bytes) = m.to_bytes_le();
    let mut w = [0u32; 10];
    for (i, b) in bytes.iter().enumerate().take(40) {
        w[i / 4] |= (*b as u32) << (8 * (i % 4));
    }
    w
}

/// What a slot means, by the flag rules {any, not -0, NaN, +inf, -inf}.
pub fn value_of(s: &Slot) -> V {
    let f = s.flags;
    if f & 0b00100 != 0 || (f & 0b00011) == 0b00011 {
        V::NaN
    } else if f & 0b00010 != 0 {
        V::Inf(false)
    } else if f & 0b00001 != 0 {
        V::Inf(true)
    } else {
        let k = int_of(s);
        if k.is_zero() {
            V::Zero(f & 0b10000 != 0 && f & 0b01000 == 0)
        } else {
            V::Finite(k)
        }
    }
}
