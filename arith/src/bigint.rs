//! Fixed-width two's-complement integers as little-endian `u64` limbs.
//! Every operation wraps modulo 2^(64 * limbs.len()); callers keep headroom.

/// Adds `m << shift` (m < 2^64) into `limbs`.
#[inline(always)]
pub(crate) fn add_shifted(limbs: &mut [u64], m: u64, shift: u32) {
    let k = (shift / 64) as usize;
    let o = shift % 64;
    let lo = m << o;
    let hi = if o == 0 { 0 } else { m >> (64 - o) };
    let (s, c1) = limbs[k].overflowing_add(lo);
    limbs[k] = s;
    // hi < 2^63, so hi + carry cannot overflow.
    let mut carry = hi + c1 as u64;
    let mut i = k + 1;
    while carry != 0 && i < limbs.len() {
        let (s, c) = limbs[i].overflowing_add(carry);
        limbs[i] = s;
        carry = c as u64;
        i += 1;
    }
}

/// Subtracts `m << shift` from `limbs`.
#[inline(always)]
pub(crate) fn sub_shifted(limbs: &mut [u64], m: u64, shift: u32) {
    let k = (shift / 64) as usize;
    let o = shift % 64;
    let lo = m << o;
    let hi = if o == 0 { 0 } else { m >> (64 - o) };
    let (s, b1) = limbs[k].overflowing_sub(lo);
    limbs[k] = s;
    let mut borrow = hi + b1 as u64;
    let mut i = k + 1;
    while borrow != 0 && i < limbs.len() {
        let (s, b) = limbs[i].overflowing_sub(borrow);
        limbs[i] = s;
        borrow = b as u64;
        i += 1;
    }
}

/// Adds a signed `v << shift`.
#[inline(always)]
pub(crate) fn add_signed_shifted(limbs: &mut [u64], v: i64, shift: u32) {
    if v >= 0 {
        add_shifted(limbs, v as u64, shift)
    } else {
        sub_shifted(limbs, v.unsigned_abs(), shift)
    }
}

/// Adds a little-endian two's-complement integer of `bytes.len()` bytes, sign-extended.
pub(crate) fn add_le_bytes(limbs: &mut [u64], bytes: &[u8]) {
    let negative = bytes.last().is_some_and(|b| b & 0x80 != 0);
    let ext: u64 = if negative { u64::MAX } else { 0 };
    let mut carry = 0u128;
    for (i, limb) in limbs.iter_mut().enumerate() {
        let mut word = ext;
        for j in 0..8 {
            if let Some(&b) = bytes.get(i * 8 + j) {
                word = (word & !(0xffu64 << (8 * j))) | (b as u64) << (8 * j);
            }
        }
        let t = *limb as u128 + word as u128 + carry;
        *limb = t as u64;
        carry = t >> 64;
    }
}

pub(crate) fn is_negative(limbs: &[u64]) -> bool {
    limbs.last().is_some_and(|l| l >> 63 == 1)
}

pub(crate) fn is_zero(limbs: &[u64]) -> bool {
    limbs.iter().all(|&l| l == 0)
}

/// Magnitude of a two's-complement value into `out` (same length).
pub(crate) fn magnitude(limbs: &[u64], out: &mut [u64]) -> bool {
    let neg = is_negative(limbs);
    out.copy_from_slice(limbs);
    if neg {
        let mut carry = 1u64;
        for l in out.iter_mut() {
            let (s, c) = (!*l).overflowing_add(carry);
            *l = s;
            carry = c as u64;
        }
    }
    neg
}

/// Whether the value fits a signed integer of `bits` bits.
pub(crate) fn fits_signed(limbs: &[u64], bits: u32) -> bool {
    let ext = if is_negative(limbs) { u64::MAX } else { 0 };
    // Bits bits-1 .. top must all equal the sign.
    let from = bits - 1;
    for (i, &l) in limbs.iter().enumerate() {
        let lo_bit = i as u32 * 64;
        if lo_bit + 64 <= from {
            continue;
        }
        let mask = if lo_bit >= from { u64::MAX } else { u64::MAX << (from - lo_bit) };
        if (l ^ ext) & mask != 0 {
            return false;
        }
    }
    true
}

/// Index of the highest set bit of a magnitude, if any.
pub(crate) fn highest_bit(mag: &[u64]) -> Option<u32> {
    mag.iter().enumerate().rev().find(|(_, &l)| l != 0).map(|(i, &l)| i as u32 * 64 + 63 - l.leading_zeros())
}

/// Bits `[lo, lo + n)` of a magnitude, n <= 64.
pub(crate) fn bits(mag: &[u64], lo: u32, n: u32) -> u64 {
    let k = (lo / 64) as usize;
    let o = lo % 64;
    let mut v = mag.get(k).copied().unwrap_or(0) >> o;
    if o != 0 {
        v |= mag.get(k + 1).copied().unwrap_or(0) << (64 - o);
    }
    if n == 64 {
        v
    } else {
        v & ((1u64 << n) - 1)
    }
}

/// Whether any bit below `lo` is set.
pub(crate) fn any_below(mag: &[u64], lo: u32) -> bool {
    let k = (lo / 64) as usize;
    let o = lo % 64;
    mag[..k.min(mag.len())].iter().any(|&l| l != 0) || (o != 0 && k < mag.len() && mag[k] & ((1u64 << o) - 1) != 0)
}
