//! KULISCH_FIXED: an exact per-element sum in units of 2^-149.
//!
//! The window is cut into tiles of `TILE` slots. Each tile has an exponent
//! window `[elo, ehi]` (FP32 biased exponents, `ehi - elo = SPAN`), chosen
//! from the first finite values that reach it. A term inside its tile's
//! window (or any zero) is added to the slot's `f64` register; every other
//! term goes to the slot's full two's-complement limbs.
//!
//! Why the `f64` adds are exact: every term inside the window is a multiple
//! of 2^(elo - 150) (its last significant bit), so every partial sum is too;
//! and each term is below 2^(ehi - 126), so `K` of them sum to less than
//! 2^(ehi - 126 + log2 K) <= 2^(elo - 150 + 53) while `log2 K <= 29 - SPAN`.
//! A sum that is a multiple of 2^q and below 2^(q + 53) in magnitude is an
//! `f64` value, so no addition rounds. The window flushes every register
//! into its limbs before `MAX_FAST_RUNS` runs reach it. IEEE addition also keeps the
//! sign of an exact zero as PRISM wants it: -0 only when every input was -0
//! (registers start at -0, the identity).
//!
//! A finite native term outside the window goes to the slot's carry-save
//! digits (the AVX2 kernel sends every finite lane of a block with any lane
//! outside there, inside ones too: the digits hold any finite term exactly,
//! and a +0 lane sets the slot's not-negative-zero flag instead):
//! `DIGITS` signed 64-bit digits of 32 bits each. Its 24-bit
//! significand, shifted by its exponent, touches two digits; each gets less
//! than 2^32 in magnitude, so no carry moves and no branch depends on the
//! value (full-range data would otherwise ripple carries through the
//! sign-extension limbs). Digits are folded into the limbs when the value is
//! read, and at every flush; between flushes fewer than 2^13 terms reach a
//! digit, far below the 2^31 it holds.

use crate::bigint;
use crate::round::Rounded;
use crate::term::{decode_native, Term};
use crate::NumFormat;

/// Bits of the largest native term as a signed integer in units of 2^-149
/// (FP32's and BF16's largest finite values are below 2^128 = 2^277 units).
const NATIVE_BITS: usize = 278;
/// Slots per tile (one exponent window each). 512 rather than 256: a
/// 363-value run crosses fewer tile edges, where the AVX2 kernel's 64-slot
/// steps stop (4.5% fewer kernel instructions on gradient-like data, and
/// fewer on `Data::Layered` too); 1024 puts parts of two layers of
/// different scale in one tile too often, and their blocks take the mixed
/// path (27% more instructions on `Layered`, 8 contributors).
pub(crate) const TILE: usize = 512;
const _: () = assert!(TILE.is_multiple_of(64), "a tile's used slots are whole words");
/// Binades a tile's window spans above its lowest exponent.
pub(crate) const SPAN: u32 = 16;
/// Values of a tile's first run whose largest exponent sets the window.
const SCAN: usize = 16;
/// Headroom above the largest exponent the window was chosen from.
const ABOVE: u32 = 3;
/// Runs added between flushes: 2^(29 - SPAN) - 1.
pub(crate) const MAX_FAST_RUNS: u32 = (1 << (29 - SPAN)) - 1;

pub(crate) const F_NOT_NEGZERO: u8 = 1 << 0;
pub(crate) const F_NAN: u8 = 1 << 1;
pub(crate) const F_POS_INF: u8 = 1 << 2;
pub(crate) const F_NEG_INF: u8 = 1 << 3;
/// The slot's limbs or digits hold part of its value.
pub(crate) const F_SLOW: u8 = 1 << 4;
/// The slot's limbs hold part of its value (a wide Kulisch partial, or a flush).
pub(crate) const F_LIMBS: u8 = 1 << 5;
/// The slot's pair registers hold part of its value: `hi` one term, or with
/// F_PAIR2 `hi + lo` the exact sum of two (filled by the AVX2 kernel, see
/// `simd::avx2::mixed_block_avx2`; every reader adds them like the register).
pub(crate) const F_PAIR: u8 = 1 << 6;
/// The pair registers hold two terms: the next goes to the digits.
pub(crate) const F_PAIR2: u8 = 1 << 7;
/// Carry-save digits a slot: bit positions 0..320 in units of 2^-149. A
/// native term reaches bit 277 at most, but its shift alone can reach 269
/// (a BF16 term has 8 significant bits): digits shift / 32 and the next.
pub(crate) const DIGITS: usize = 10;
/// The weight of each digit, 2^(32 i - 149): a digit (below 2^53) times it is exact in f64.
pub(crate) const DIGIT_SCALE: [f64; DIGITS] = {
    let mut s = [0f64; DIGITS];
    let mut i = 0;
    while i < DIGITS {
        s[i] = f64::from_bits(((32 * i as u64) + 1023 - 149) << 52);
        i += 1;
    }
    s
};

/// A tile's window, as FP32 biased exponents; `UNSET` until a finite value arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    pub elo: u8,
    pub ehi: u8,
    /// The window's test as the AVX2 kernel makes it, worked out once
    /// when the window is set rather than each time a run enters the
    /// tile: a value lies inside when `(|bits| + bias) < size` as signed
    /// 32-bit integers (see `simd::avx2::inside_lanes_avx2`).
    pub bias: i32,
    pub size: i32,
}

/// No window: no value lies inside (none is below i32::MIN).
pub(crate) const UNSET: Window = Window { elo: 0, ehi: 0, bias: 0, size: i32::MIN };

impl Window {
    /// The window for values whose largest FP32 exponent is `e`.
    pub(crate) fn around(e: u32) -> Window {
        let ehi = (e + ABOVE).min(254);
        let elo = ehi.saturating_sub(SPAN).max(1);
        // Inside: |bits| in [elo << 23, (ehi + 1) << 23), i.e. |bits| - lo
        // below the window's size as an unsigned number; adding 2^31 - lo
        // maps that unsigned test onto a signed one against the size - 2^31.
        // A window never reaches exponent 0 or 255: subnormals,
        // infinities and NaNs fall outside.
        let (lo, hi) = (elo << 23, (ehi + 1) << 23);
        Window { elo: elo as u8, ehi: ehi as u8, bias: 0x8000_0000u32.wrapping_sub(lo) as i32, size: ((hi - lo) ^ 0x8000_0000) as i32 }
    }

    /// Whether this is `UNSET` (a set window has ehi >= 1).
    #[inline(always)]
    pub(crate) fn is_unset(self) -> bool {
        self.ehi == 0
    }

    /// Whether a finite term `mant * 2^(shift - 149)` lies inside: its last
    /// bit at or above 2^(elo - 150), its magnitude below 2^(ehi - 126).
    #[inline(always)]
    fn holds(self, mant: u64, shift: u32) -> bool {
        let top = shift + (64 - mant.leading_zeros());
        !self.is_unset() && shift + 1 >= self.elo as u32 && top <= self.ehi as u32 + 23
    }
}

/// A non-zero register value as `mant * 2^shift` units of 2^-149 (mant < 2^53).
#[inline(always)]
fn register_units(v: f64) -> (u64, u32) {
    // v = mant * 2^(exp - 1075), a multiple of 2^-149: in units, mant * 2^(exp - 926).
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let mant = (bits & ((1 << 52) - 1)) | if exp == 0 { 0 } else { 1 << 52 };
    let shift = exp.max(1) - 926;
    if shift < 0 {
        (mant >> -shift, 0) // exact: the value is a multiple of 2^-149
    } else {
        (mant, shift as u32)
    }
}

/// The FP32-equivalent exponent of a finite term (for choosing a window).
#[inline(always)]
fn exponent_of(mant: u64, shift: u32) -> u32 {
    (shift + (64 - mant.leading_zeros())).saturating_sub(23)
}

/// A non-zero little-endian two's-complement integer as (negative, odd
/// magnitude, shift) when its magnitude has at most 64 significant bits.
fn narrow_integer(bytes: &[u8]) -> Option<(bool, u64, u32)> {
    let neg = bytes.last().is_some_and(|b| b & 0x80 != 0);
    let lo = bytes.iter().position(|&b| b != 0)?;
    // Magnitude bytes: two's complement negation keeps the zero bytes below
    // the first non-zero one, negates that one, and inverts the rest.
    let mag = |i: usize| {
        if !neg {
            bytes[i]
        } else if i == lo {
            bytes[i].wrapping_neg()
        } else {
            !bytes[i]
        }
    };
    let hi = (lo..bytes.len()).rev().find(|&i| mag(i) != 0)?;
    if hi - lo >= 9 {
        return None;
    }
    let mut wide = 0u128;
    for i in (lo..=hi).rev() {
        wide = wide << 8 | mag(i) as u128;
    }
    let tz = wide.trailing_zeros();
    let m = wide >> tz;
    (m >> 64 == 0).then_some((neg, m as u64, 8 * lo as u32 + tz))
}

/// The exact state of every slot of one operation's window.
#[derive(Debug, Clone)]
pub struct KulischWindow {
    width: u16,
    limbs_per: usize,
    pub(crate) acc: crate::simd::Registers,
    /// Out-of-window terms the kernel could sum exactly in two `f64` (F_PAIR):
    /// the rounded sum and its error, -0 when empty.
    pub(crate) pair_hi: crate::simd::Registers,
    pub(crate) pair_lo: crate::simd::Registers,
    /// F_* flags of the limbs path and of specials.
    pub(crate) meta: Vec<u8>,
    pub(crate) tiles: Vec<Tile>,
    /// The slots a run reached since they were last cleared.
    used: Used,
    limbs: Vec<u64>,
    /// `DIGITS` carry-save digits a slot (out-of-window FP32 terms).
    pub(crate) digits: Vec<i64>,
}

/// A tile's window and its run count, together: the kernel reads the
/// window and counts the run each time a run enters the tile (one bounds
/// check, one cache line).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tile {
    pub window: Window,
    /// Runs that reached the tile since its registers were last empty or flushed.
    runs: u16,
}

impl Tile {
    const EMPTY: Tile = Tile { window: UNSET, runs: 0 };
}

/// A bit for each slot of the window, slot s in bit s % 64 of word s / 64
/// (whole tiles of words): set when a run reaches the slot, cleared with
/// it -- a superset of the slots that hold anything, so a tile with none
/// set chooses a new window. One bitmap rather than one a tile: a run's
/// mark is then one range, where two tiles' marks cost the kernel about
/// 65 instructions a 363-value packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Used(Vec<u64>);

impl Used {
    fn new(tiles: usize) -> Used {
        Used(vec![0; tiles * TILE / 64])
    }

    /// Sets (`on`) or clears the bits of slots `from..=to` (from <= to):
    /// the end words by masks, the words between whole.
    #[inline(always)]
    fn set(&mut self, from: usize, to: usize, on: bool) {
        let (head, tail) = (u64::MAX << (from % 64), u64::MAX >> (63 - to % 64));
        let words = &mut self.0[from / 64..=to / 64];
        let last = words.len() - 1;
        let put = |w: &mut u64, mask: u64| {
            if on {
                *w |= mask;
            } else {
                *w &= !mask;
            }
        };
        if last == 0 {
            put(&mut words[0], head & tail);
        } else {
            put(&mut words[0], head);
            put(&mut words[last], tail);
            for w in &mut words[1..last] {
                put(w, u64::MAX);
            }
        }
    }

    #[inline(always)]
    fn mark(&mut self, from: usize, to: usize) {
        self.set(from, to, true)
    }

    #[inline(always)]
    fn unmark(&mut self, from: usize, to: usize) {
        self.set(from, to, false)
    }

    /// Whether no slot of tile `t` is set.
    fn tile_is_empty(&self, t: usize) -> bool {
        self.0[t * TILE / 64..(t + 1) * TILE / 64].iter().all(|&x| x == 0)
    }

    #[cfg(test)]
    fn has(&self, slot: usize) -> bool {
        self.0[slot / 64] >> (slot % 64) & 1 == 1
    }
}

/// The tiles `t0..=t1` that `[first, first + n)` (n > 0) reaches.
#[derive(Clone, Copy)]
pub(crate) struct Span {
    t0: usize,
    t1: usize,
}

impl Span {
    pub(crate) fn new(first: usize, n: usize) -> Span {
        Span { t0: first / TILE, t1: (first + n - 1) / TILE }
    }
}

impl KulischWindow {
    /// A window of `slots` elements for Kulisch width `width` bits.
    pub fn new(width: u16, slots: usize) -> Self {
        // 64 bits of headroom above W: sums of up to 2^63 W-bit partials never
        // wrap. And never fewer than a native term needs (2^277 units at the
        // most, FP32 and BF16): below W = 278 a term can exceed the width,
        // and the limbs must still hold it for the width check to see it
        // (narrower limbs dropped its high bits, and the sum came out wrong
        // where it should have been INEXACT).
        let limbs_per = (width as usize).max(NATIVE_BITS).div_ceil(64) + 1;
        KulischWindow {
            width,
            limbs_per,
            acc: crate::simd::Registers::new(slots),
            pair_hi: crate::simd::Registers::new(slots),
            pair_lo: crate::simd::Registers::new(slots),
            meta: vec![0; slots],
            tiles: vec![Tile::EMPTY; slots.div_ceil(TILE)],
            used: Used::new(slots.div_ceil(TILE)),
            limbs: vec![0; slots * limbs_per],
            digits: vec![0; slots * DIGITS],
        }
    }

    pub fn width(&self) -> u16 {
        self.width
    }
    pub fn slots(&self) -> usize {
        self.meta.len()
    }

    /// Forgets slots `[first, first + n)` (limbs only where they were used).
    /// A tile whose slots are all clean again chooses a new window.
    pub fn clear(&mut self, first: usize, n: usize) {
        let l = self.limbs_per;
        // Most ranges never touched their limbs: one OR over the flags (vectorised) says so.
        if self.meta[first..first + n].iter().fold(0, |a, m| a | m) & (F_SLOW | F_PAIR) != 0 {
            for slot in first..first + n {
                let m = self.meta[slot];
                if m & F_LIMBS != 0 {
                    self.limbs[slot * l..(slot + 1) * l].fill(0);
                }
                if m & F_SLOW != 0 {
                    self.digits[slot * DIGITS..(slot + 1) * DIGITS].fill(0);
                }
                if m & F_PAIR != 0 {
                    (self.pair_hi[slot], self.pair_lo[slot]) = (-0.0, -0.0);
                }
            }
        }
        self.acc[first..first + n].fill(-0.0);
        self.meta[first..first + n].fill(0);
        self.forget(first, n);
    }

    /// Clears one slot's register, flags, and digits and limbs where used.
    pub(crate) fn clear_slot(&mut self, slot: usize) {
        let m = self.meta[slot];
        if m & F_LIMBS != 0 {
            let l = self.limbs_per;
            self.limbs[slot * l..(slot + 1) * l].fill(0);
        }
        if m & F_SLOW != 0 {
            self.digits[slot * DIGITS..(slot + 1) * DIGITS].fill(0);
        }
        if m & F_PAIR != 0 {
            (self.pair_hi[slot], self.pair_lo[slot]) = (-0.0, -0.0);
        }
        self.acc[slot] = -0.0;
        self.meta[slot] = 0;
    }

    /// Tells the tiles that `[first, first + n)` is cleared: a tile with no
    /// slot left that a run reached chooses a new window.
    pub(crate) fn forget(&mut self, first: usize, n: usize) {
        if n == 0 {
            return;
        }
        let span = Span::new(first, n);
        self.used.unmark(first, first + n - 1);
        for t in span.t0..span.t1 + 1 {
            if self.used.tile_is_empty(t) {
                self.tiles[t] = Tile::EMPTY;
            }
        }
    }

    /// Chooses the window of every unset tile that `[first, first + n)` of a
    /// run of FP32 values reaches, from the largest finite exponent among the
    /// run's `SCAN` values nearest the tile (a sample: the window only decides
    /// which terms take the fast register, never the result; the headroom
    /// above the sample's largest value keeps later ones of the same data
    /// inside).
    pub(crate) fn prepare_fp32(&mut self, first: usize, values: &[u8]) {
        let n = values.len() / 4;
        if n == 0 {
            return;
        }
        for t in first / TILE..=(first + n - 1) / TILE {
            self.tile_window(t, first, values, crate::simd::max_finite_exponent);
        }
    }

    /// Tile `t`'s window, chosen from this FP32 run (which starts at slot
    /// `first` and reaches the tile) when the tile has none: around the
    /// largest finite exponent among the run's `SCAN` values nearest the
    /// tile -- from where the run enters it, or the run's last `SCAN` when
    /// fewer are left. A run that ends a few slots into a tile would
    /// otherwise choose its window from those few (from one value, which may
    /// be far below the rest of the data: every later block of the tile
    /// then has lanes above the window and leaves the fast path).
    #[inline(always)]
    pub(crate) fn tile_window(&mut self, t: usize, first: usize, values: &[u8], max_exponent: impl Fn(&[u8]) -> u32) -> Window {
        if self.tiles[t].window.is_unset() {
            let n = values.len() / 4;
            let at = ((t * TILE).max(first) - first).min(n.saturating_sub(SCAN));
            let end = (at + SCAN).min(n);
            let emax = max_exponent(&values[4 * at..4 * end]);
            if emax > 0 {
                self.tiles[t].window = Window::around(emax);
            }
        }
        self.tiles[t].window
    }

    /// FP32 rounding straight from the `f64` register when the slot never
    /// used its limbs, has no specials and the value fits the width: one
    /// f64-to-f32 conversion (round to nearest even, subnormals included).
    #[inline(always)]
    pub(crate) fn round_fp32_fast(&self, slot: usize) -> Option<u32> {
        let meta = self.meta[slot];
        if meta & (F_SLOW | F_PAIR | F_NAN | F_POS_INF | F_NEG_INF) != 0 {
            return None;
        }
        let v = self.acc[slot];
        if v == 0.0 {
            return Some(if meta & F_NOT_NEGZERO != 0 { 0 } else { (v as f32).to_bits() });
        }
        // A magnitude the width might not hold takes the exact path (it reports INEXACT).
        (v.abs() < self.fast_limit()).then(|| (v as f32).to_bits())
    }

    /// FP32 rounding (bits only) of a slot whose value is its register plus
    /// its digits and pair registers, from an `f64` estimate when that
    /// settles it: the digits and the registers are exact `f64` terms; their sum is off by at most
    /// `ERR` of the sum of magnitudes, and when both ends of that interval
    /// round to the same FP32 value, so does the exact sum (rounding is
    /// monotonic). Full-range data almost always settles here; cancellation,
    /// values at a rounding boundary, and magnitudes near the width's limit
    /// give `None` (the exact path decides). Straight-line code: no carries.
    #[inline]
    pub(crate) fn round_fp32_estimate(&self, slot: usize) -> Option<u32> {
        if !self.estimable(slot) {
            return None;
        }
        let d = &self.digits[slot * DIGITS..(slot + 1) * DIGITS];
        let mut t = [0f64; 16];
        for ((ti, &di), &sc) in t.iter_mut().zip(d).zip(&DIGIT_SCALE) {
            *ti = di as f64 * sc;
        }
        // The register and the pair registers (-0 when unused).
        (t[DIGITS], t[DIGITS + 1], t[DIGITS + 2]) = (self.acc[slot], self.pair_hi[slot], self.pair_lo[slot]);
        // Summed as a tree (four adds deep, not thirteen): the same error bound.
        let tree = |t: [f64; 16]| {
            let q = |i: usize| (t[i] + t[i + 1]) + (t[i + 2] + t[i + 3]);
            (q(0) + q(4)) + (q(8) + q(12))
        };
        self.settle_estimate(slot, tree(t), tree(t.map(f64::abs)))
    }

    /// Whether a slot's value is its register plus its digits (no limbs, no
    /// specials): what `round_fp32_estimate` and its SIMD twin can round.
    #[inline(always)]
    pub(crate) fn estimable(&self, slot: usize) -> bool {
        self.meta[slot] & (F_LIMBS | F_NAN | F_POS_INF | F_NEG_INF) == 0
    }

    /// The decision shared by `round_fp32_estimate` and its SIMD twins, given
    /// the f64 sum of the slot's thirteen terms (ten digits, the register,
    /// the pair registers; in any order) and the sum of their magnitudes.
    #[inline(always)]
    pub(crate) fn settle_estimate(&self, slot: usize, sum: f64, mag: f64) -> Option<u32> {
        if mag == 0.0 {
            // Every term zero: the register's zero sign, unless a finite term cancelled.
            let negzero = self.acc[slot].to_bits() == (-0.0f64).to_bits() && self.meta[slot] & F_NOT_NEGZERO == 0;
            return Some(if negzero { 0x8000_0000 } else { 0 });
        }
        // A sum of 13 terms in any order errs by less than 12 * 2^-53 of the
        // magnitudes (rounded sums of magnitudes included); 2^-48 bounds it,
        // and covers the rounding of the interval's ends below.
        let err = mag * f64::from_bits((1023 - 48) << 52);
        // Values the width might not hold take the exact path (which reports INEXACT).
        if sum.abs() + err >= self.fast_limit() {
            return None;
        }
        let (lo, hi) = ((sum - err) as f32, (sum + err) as f32);
        (lo.to_bits() == hi.to_bits()).then_some(lo.to_bits())
    }

    /// FP32 rounding of a slot whose value is its registers plus its digits
    /// (no limbs, no specials): the digits and the registers are normalised
    /// into a 320-bit integer in straight-line code and rounded once. `None`
    /// for any other slot, or a value the width might not hold.
    pub(crate) fn round_fp32_digits(&self, slot: usize) -> Option<Rounded> {
        let meta = self.meta[slot];
        if meta & (F_LIMBS | F_NAN | F_POS_INF | F_NEG_INF) != 0 {
            return None;
        }
        const N: usize = DIGITS + 1;
        let mut d = [0i64; N];
        d[..DIGITS].copy_from_slice(&self.digits[slot * DIGITS..(slot + 1) * DIGITS]);
        let v = self.acc[slot];
        // The register and the pair registers (-0 when unused), each a
        // 53-bit significand shifted across three digits.
        for x in [v, self.pair_hi[slot], self.pair_lo[slot]] {
            if x != 0.0 {
                let (mant, shift) = register_units(x);
                let k = shift as usize / 32;
                if k + 3 > N {
                    return None;
                }
                let wide = (mant as u128) << (shift % 32);
                let sign = -((x < 0.0) as i64);
                for (j, dj) in d[k..k + 3].iter_mut().enumerate() {
                    let part = ((wide >> (32 * j)) & 0xffff_ffff) as i64;
                    *dj += (part ^ sign) - sign;
                }
            }
        }
        // Carries: 32-bit digits and the sign of what is left above them.
        let mut n = [0u32; N];
        let mut c = 0i64;
        for (x, &di) in n.iter_mut().zip(&d) {
            let t = di + c;
            *x = t as u32;
            c = t >> 32;
        }
        if c != 0 && c != -1 {
            return None;
        }
        // The magnitude, without a branch on the sign (random in full-range data).
        let neg = c < 0;
        let flip = c as u32; // 0, or all ones when negative (c == -1)
        let mut carry = neg as u64;
        for x in n.iter_mut() {
            let t = (*x ^ flip) as u64 + carry;
            *x = t as u32;
            carry = t >> 32;
        }
        let Some(t) = highest_digit(&n) else {
            let negzero = v.to_bits() == (-0.0f64).to_bits() && meta & F_NOT_NEGZERO == 0;
            return Some(Rounded { bits: if negzero { 0x8000_0000 } else { 0 }, exact: true });
        };
        // Magnitudes of W - 1 bits or more take the exact path (which knows the width rule).
        if 32 * t as u32 + 32 - n[t].leading_zeros() + 1 > self.width as u32 {
            return None;
        }
        Some(round_fp32_digits32(neg, &n, t))
    }

    /// Register values below this fit the width (2^(W - 150), at most 2^1000).
    pub(crate) fn fast_limit(&self) -> f64 {
        // Biased exponent W - 150 + 1023, added before the subtraction: a
        // width below 150 bits has a limit below 1.0.
        f64::from_bits(((self.width as u64).min(1150) + 1023 - 150) << 52)
    }

    #[cfg(test)]
    fn tile_slots_used(&self, t: usize) -> Vec<usize> {
        (0..TILE).filter(|&j| self.used.has(t * TILE + j)).collect()
    }

    /// Counts one more run into the tiles that `[first, first + n)` reaches
    /// and marks its slots used; flushes a tile's registers when it is due.
    /// Counted per tile, so a window whose ranges are cleared as they
    /// complete never flushes.
    pub(crate) fn note_run(&mut self, first: usize, n: usize) {
        if n == 0 {
            return;
        }
        let span = self.mark_used(first, n);
        let mut due = false;
        for t in span.t0..=span.t1 {
            due |= self.count_run(t);
        }
        if due {
            self.flush_due(span);
        }
    }

    /// Marks the slots `[first, first + n)` (n > 0) used, and returns their span.
    #[inline(always)]
    pub(crate) fn mark_used(&mut self, first: usize, n: usize) -> Span {
        self.used.mark(first, first + n - 1);
        Span::new(first, n)
    }

    /// `note_run`'s count for one tile, without the flush: the AVX2 kernel
    /// counts each tile as it enters it (a pass of its own over the run's
    /// tiles cost it about 10%), and marks the run's slots once it is done
    /// (`mark_used`). True when the tile is due (the caller then calls
    /// `flush_due` once the run is added).
    #[inline(always)]
    pub(crate) fn count_run(&mut self, t: usize) -> bool {
        let tile = &mut self.tiles[t];
        tile.runs += 1;
        tile.runs as u32 >= MAX_FAST_RUNS
    }

    /// Flushes the registers of each tile of `span` that `MAX_FAST_RUNS` runs reached.
    #[cold]
    pub(crate) fn flush_due(&mut self, span: Span) {
        for t in span.t0..=span.t1 {
            if self.tiles[t].runs as u32 >= MAX_FAST_RUNS {
                for slot in t * TILE..((t + 1) * TILE).min(self.slots()) {
                    self.flush(slot);
                }
                (self.tiles[t].window, self.tiles[t].runs) = (UNSET, 0);
            }
        }
    }

    /// Moves the register's value and the digits into the limbs (exactly),
    /// and the register's zero sign into the flags.
    fn flush(&mut self, slot: usize) {
        if self.meta[slot] & F_PAIR != 0 {
            self.meta[slot] &= !(F_PAIR | F_PAIR2);
            let (hi, lo) = (std::mem::replace(&mut self.pair_hi[slot], -0.0), std::mem::replace(&mut self.pair_lo[slot], -0.0));
            self.register_to_limbs(slot, hi);
            self.register_to_limbs(slot, lo);
        }
        if self.meta[slot] & F_SLOW != 0 {
            self.meta[slot] |= F_LIMBS;
            let l = self.limbs_per;
            let (limbs, digits) = (&mut self.limbs[slot * l..(slot + 1) * l], &mut self.digits[slot * DIGITS..(slot + 1) * DIGITS]);
            for (i, d) in digits.iter_mut().enumerate() {
                if *d != 0 {
                    bigint::add_signed_shifted(limbs, std::mem::take(d), 32 * i as u32);
                }
            }
        }
        let v = std::mem::replace(&mut self.acc[slot], -0.0);
        if v.to_bits() == (-0.0f64).to_bits() {
            return;
        }
        self.meta[slot] |= F_NOT_NEGZERO;
        self.register_to_limbs(slot, v);
    }

    /// Adds a register's value (a multiple of 2^-149) to the slot's limbs.
    fn register_to_limbs(&mut self, slot: usize, v: f64) {
        if v == 0.0 {
            return;
        }
        let (mant, shift) = register_units(v);
        self.meta[slot] |= F_SLOW | F_LIMBS;
        let l = self.limbs_per;
        let signed = if v < 0.0 { -(mant as i64) } else { mant as i64 };
        bigint::add_signed_shifted(&mut self.limbs[slot * l..(slot + 1) * l], signed, shift);
    }

    /// Adds one native term to a slot (the scalar reference path).
    #[inline(always)]
    pub(crate) fn add_term(&mut self, slot: usize, t: Term) {
        if let Term::Finite { neg, mant, shift } = t {
            if self.add_to_register(slot, neg, mant as u64, shift) {
                return;
            }
        }
        self.add_outside(slot, t)
    }

    /// Adds a finite term to the slot's `f64` register when it lies inside
    /// its tile's window (choosing the window if the tile has none); `false`
    /// when it does not.
    #[inline(always)]
    fn add_to_register(&mut self, slot: usize, neg: bool, mant: u64, shift: u32) -> bool {
        let tile = &mut self.tiles[slot / TILE].window;
        if tile.is_unset() {
            // Only zeros can be in the tile's registers: any window is right for them.
            *tile = Window::around(exponent_of(mant, shift));
        }
        if !tile.holds(mant, shift) {
            return false;
        }
        // Exact: the window's bounds keep mant below 2^41, and the scale is a power of two in f64's range.
        let x = mant as f64 * f64::from_bits(((shift as u64) + 1023 - 149) << 52);
        self.acc[slot] += if neg { -x } else { x };
        true
    }

    /// A term that is not for the window's register: a finite one to the
    /// carry-save digits, specials to the flags (a zero, inside every window,
    /// to the register).
    #[inline(always)]
    pub(crate) fn add_outside(&mut self, slot: usize, t: Term) {
        match t {
            Term::NaN => self.meta[slot] |= F_NOT_NEGZERO | F_NAN,
            Term::Inf { neg } => self.meta[slot] |= F_NOT_NEGZERO | if neg { F_NEG_INF } else { F_POS_INF },
            Term::Zero { neg } => self.acc[slot] += if neg { -0.0 } else { 0.0 },
            Term::Finite { neg, mant, shift } => self.add_digits(slot, neg, mant, shift),
        }
    }

    /// Adds `(-1)^neg * mant * 2^shift` units (mant < 2^24, shift <= 269) to
    /// the slot's carry-save digits: no carries, no value-dependent branch.
    #[inline(always)]
    fn add_digits(&mut self, slot: usize, neg: bool, mant: u32, shift: u32) {
        self.meta[slot] |= F_NOT_NEGZERO | F_SLOW;
        let v = (mant as u64) << (shift % 32);
        let sign = -(neg as i64);
        let (lo, hi) = ((v & 0xffff_ffff) as i64, (v >> 32) as i64);
        let d = &mut self.digits[slot * DIGITS + (shift / 32) as usize..][..2];
        d[0] += (lo ^ sign) - sign;
        d[1] += (hi ^ sign) - sign;
    }

    /// Adds a run of native values (scalar reference path).
    pub fn add_native_scalar(&mut self, first: usize, format: NumFormat, values: &[u8]) {
        if format == NumFormat::Fp32 {
            self.prepare_fp32(first, values);
        }
        let w = format.value_bytes();
        for (i, v) in values.chunks_exact(w).enumerate() {
            self.add_term(first + i, decode_native(format, v));
        }
        self.note_run(first, values.len() / w);
    }

    /// Adds a run of Kulisch values of this window's width (already validated
    /// on the wire). A finite value with at most 64 significant bits that lies
    /// inside its tile's window goes to the f64 register like any term (a
    /// partial of a few nearby FP32 values usually does); others to the limbs.
    pub fn add_kulisch(&mut self, first: usize, values: &[u8]) {
        let w = 1 + self.width as usize / 8;
        for (i, v) in values.chunks_exact(w).enumerate() {
            let slot = first + i;
            match v[0] {
                0 => {
                    if let Some((neg, mant, shift)) = narrow_integer(&v[1..]) {
                        if self.add_to_register(slot, neg, mant, shift) {
                            continue;
                        }
                    }
                    self.meta[slot] |= F_NOT_NEGZERO | F_SLOW | F_LIMBS;
                    let l = self.limbs_per;
                    bigint::add_le_bytes(&mut self.limbs[slot * l..(slot + 1) * l], &v[1..]);
                }
                1 => self.meta[slot] |= F_NOT_NEGZERO,
                2 => self.acc[slot] += -0.0,
                3 => self.meta[slot] |= F_NOT_NEGZERO | F_POS_INF,
                4 => self.meta[slot] |= F_NOT_NEGZERO | F_NEG_INF,
                _ => self.meta[slot] |= F_NOT_NEGZERO | F_NAN,
            }
        }
        self.note_run(first, values.len() / w);
    }

    /// Whether the register's value is an FP32 value (rounding it is exact).
    pub(crate) fn fast_is_exact_fp32(&self, slot: usize) -> bool {
        let v = self.acc[slot];
        v as f32 as f64 == v
    }

    /// The exact value of a slot (flushes its register first).
    pub fn value(&mut self, slot: usize) -> Exact<'_> {
        let negzero = self.acc[slot].to_bits() == (-0.0f64).to_bits();
        self.flush(slot);
        let meta = self.meta[slot];
        let l = self.limbs_per;
        let limbs = &self.limbs[slot * l..(slot + 1) * l];
        if meta & F_NAN != 0 || (meta & F_POS_INF != 0 && meta & F_NEG_INF != 0) {
            Exact::NaN
        } else if meta & F_POS_INF != 0 {
            Exact::Inf { neg: false }
        } else if meta & F_NEG_INF != 0 {
            Exact::Inf { neg: true }
        } else if bigint::is_zero(limbs) {
            Exact::Zero { neg: negzero && meta & F_NOT_NEGZERO == 0 }
        } else {
            Exact::Finite { limbs, width: self.width }
        }
    }
}

/// FP32 rounding (nearest, ties to even, subnormals kept) of the magnitude
/// `sum n[i] * 2^(32 i)` units of 2^-149, whose highest non-zero digit is
/// `n[t]`: the 24 kept bits and the round bit lie in the top three digits,
/// so one 96-bit window and an OR of the digits below it decide it.
/// `Ieee::round` on the same value is its twin (tests compare them).
#[inline]
pub(crate) fn round_fp32_digits32(neg: bool, n: &[u32], t: usize) -> Rounded {
    // Digits t-2..=t (zeros below digit 0): bit 0 of w is bit 32 t - 64 of the value.
    let at = |i: usize| if i >= 2 { n[i - 2] as u128 } else { 0 };
    let w = at(t + 2) << 64 | at(t + 1) << 32 | at(t);
    let below = n[..t.saturating_sub(2)].iter().fold(0, |a, &x| a | x) != 0;
    let h = 32 * t as u32 + 31 - n[t].leading_zeros();
    let lsb = (h + 1).saturating_sub(24);
    // lsb >= 32 t - 23 > 32 t - 64, so 41 <= r <= 72.
    let r = lsb + 64 - 32 * t as u32;
    let mut q = (w >> r) as u64 & ((1 << 24) - 1);
    let round_bit = r > 0 && (w >> (r - 1)) & 1 == 1;
    let sticky = below || (r > 1 && w & ((1u128 << (r - 1)) - 1) != 0);
    if round_bit && (sticky || q & 1 == 1) {
        q += 1;
    }
    let bits = ((lsb as u64) << 23) + q;
    let sign = if neg { 0x8000_0000 } else { 0 };
    if bits >= 0x7f80_0000 {
        return Rounded { bits: 0x7f80_0000 | sign, exact: false };
    }
    Rounded { bits: bits as u32 | sign, exact: !round_bit && !sticky }
}

/// Index of the highest non-zero digit, from a mask (no data-dependent loop exit).
#[inline]
fn highest_digit(n: &[u32]) -> Option<usize> {
    let mask = n.iter().enumerate().fold(0u32, |m, (i, &x)| m | ((x != 0) as u32) << i);
    (mask != 0).then(|| 31 - mask.leading_zeros() as usize)
}

/// The exact value of a sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exact<'a> {
    Zero {
        neg: bool,
    },
    /// Non-zero two's-complement integer in units of 2^-149 (with headroom above `width`).
    Finite {
        limbs: &'a [u64],
        width: u16,
    },
    Inf {
        neg: bool,
    },
    NaN,
}

impl Exact<'_> {
    /// Whether the value fits the Kulisch width (always true for zeros and specials).
    pub fn fits(&self) -> bool {
        match self {
            Exact::Finite { limbs, width } => bigint::fits_signed(limbs, *width as u32),
            _ => true,
        }
    }

    /// Writes the Kulisch encoding (state byte, W/8 integer bytes); `None` if it does not fit W.
    pub fn encode_kulisch(&self, width: u16, out: &mut [u8]) -> Option<()> {
        let n = width as usize / 8;
        out[1..=n].fill(0);
        out[0] = match self {
            Exact::Zero { neg: false } => 1,
            Exact::Zero { neg: true } => 2,
            Exact::Inf { neg: false } => 3,
            Exact::Inf { neg: true } => 4,
            Exact::NaN => 5,
            Exact::Finite { limbs, .. } => {
                if !bigint::fits_signed(limbs, width as u32) {
                    return None;
                }
                for (i, b) in out[1..=n].iter_mut().enumerate() {
                    *b = (limbs[i / 8] >> (8 * (i % 8))) as u8;
                }
                0
            }
        };
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::FP32;

    fn le(v: i128, n: usize) -> Vec<u8> {
        let mut b = v.to_le_bytes().to_vec();
        b.resize(n, if v < 0 { 0xff } else { 0 });
        b
    }

    /// A run that ends one slot into a tile gives that tile a window chosen
    /// from the run's last values, not from the one value it brings there
    /// (far below the rest here: that window would hold none of them).
    #[test]
    fn a_tile_a_run_barely_enters_takes_its_window_from_the_runs_last_values() {
        let mut k = KulischWindow::new(288, 2 * TILE);
        let run: Vec<u8> = (0..TILE).flat_map(|i| if i == TILE - 1 { 2f32.powi(-20) } else { 1.0f32 }.to_le_bytes()).collect();
        k.prepare_fp32(1, &run);
        for t in 0..2 {
            let w = k.tiles[t].window;
            assert!(w.elo as u32 <= 127 && 127 <= w.ehi as u32, "tile {t}: window {w:?} leaves out 1.0 (exponent 127)");
        }
    }

    /// A tile chooses a new window only once every slot a run reached is
    /// cleared: clearing part of it keeps the window of the values still there.
    #[test]
    fn a_tile_forgets_its_window_only_when_wholly_cleared() {
        for (path, add) in ADDERS {
            let mut k = KulischWindow::new(280, 4 * TILE);
            // Slots 10 .. TILE + 36: the end of tile 0, the start of tile 1.
            let ones: Vec<u8> = (0..TILE + 26).flat_map(|_| 1.0f32.to_le_bytes()).collect();
            add(&mut k, 10, &ones);
            assert_eq!((k.tiles[0].runs, k.tiles[1].runs), (1, 1), "{path}");
            let set = k.tiles[0].window;
            assert_ne!(set, UNSET);
            k.clear(10, 40);
            assert_eq!(k.tiles[0].window, set, "{path}: slots 50..TILE still hold values");
            assert_ne!(k.tiles[1].window, UNSET);
            assert_eq!(k.tile_slots_used(0), (50..TILE).collect::<Vec<_>>(), "{path}");
            k.clear(50, TILE - 14);
            assert_eq!((k.tiles[0].window, k.tiles[1].window), (UNSET, UNSET), "{path}");
            assert_eq!((k.tiles[0].runs, k.tiles[1].runs), (0, 0), "{path}");
            // A run inside one tile marks exactly its slots.
            add(&mut k, TILE + 6, &ones[..4 * 3]);
            assert_eq!(k.tile_slots_used(1), [6, 7, 8], "{path}");
            assert_eq!(k.tiles[1].runs, 1, "{path}");
        }
    }

    /// Adds a run of FP32 wire values at a first slot.
    type Adder = fn(&mut KulischWindow, usize, &[u8]);

    /// `Used` against a plain array of flags: random ranges marked and
    /// unmarked, within a word, across words and across tiles.
    #[test]
    fn used_marks_and_unmarks_exactly_the_slots_given() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let (mut used, mut want) = (Used::new(3), [false; 3 * TILE]);
        for _ in 0..2000 {
            let from = rng.gen_range(0..3 * TILE);
            let reach = if rng.gen_bool(0.5) { 100 } else { 3 * TILE };
            let to = rng.gen_range(from..(from + reach).min(3 * TILE));
            let on = rng.gen_bool(0.5);
            if on {
                used.mark(from, to);
            } else {
                used.unmark(from, to);
            }
            want[from..=to].fill(on);
            for (j, &w) in want.iter().enumerate() {
                assert_eq!(used.has(j), w, "slot {j} after {from}..={to} {on}");
            }
            for t in 0..3 {
                assert_eq!(used.tile_is_empty(t), !want[t * TILE..(t + 1) * TILE].contains(&true), "tile {t}");
            }
        }
    }

    /// The scalar path, and the dispatcher (the AVX2 kernel where present).
    const ADDERS: [(&str, Adder); 2] = [("scalar", |k, first, v| k.add_native_scalar(first, NumFormat::Fp32, v)), ("dispatched", |k, first, v| crate::simd::kulisch_fp32(k, first, v))];

    /// A run counts once into every tile it reaches and marks exactly its
    /// slots used: also where the kernel crosses tile edges inside a run of
    /// mixed blocks (every block below has a lane under the window).
    #[test]
    fn every_tile_a_run_reaches_counts_it_once() {
        for (path, add) in ADDERS {
            let mut k = KulischWindow::new(280, 4 * TILE);
            let ones: Vec<u8> = (0..4 * TILE).flat_map(|_| 1.0f32.to_le_bytes()).collect();
            add(&mut k, 0, &ones);
            let mixed: Vec<u8> = (10..3 * TILE + 8).flat_map(|s| if s % 8 == 3 { 2f32.powi(-40) } else { 1.0 }.to_le_bytes()).collect();
            add(&mut k, 10, &mixed);
            let runs: Vec<u16> = k.tiles.iter().map(|t| t.runs).collect();
            assert_eq!(runs, [2, 2, 2, 2], "{path}");
            assert!((0..4).all(|t| k.tile_slots_used(t).len() == TILE), "{path}");
            // Across the edge of tiles 1 and 2.
            add(&mut k, 2 * TILE - 20, &mixed[..4 * 40]);
            let runs: Vec<u16> = k.tiles.iter().map(|t| t.runs).collect();
            assert_eq!(runs, [2, 3, 3, 2], "{path}");
        }
    }

    #[test]
    fn digit_rounding_matches_its_twin() {
        // Random magnitudes of every length up to 320 bits, and values at ties,
        // just above and below them, and at the overflow edge.
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x9e37_79b9);
        let mut next = move || rng.gen::<u64>();
        for case in 0..200_000 {
            let mut n = [0u32; 10];
            let t = case % 10;
            for x in n[..=t].iter_mut() {
                *x = next() as u32;
            }
            if case % 3 == 0 {
                // A tie or near-tie: few bits set below the top.
                for x in n[..t].iter_mut() {
                    *x = if next() % 4 == 0 { next() as u32 & 1 } else { 0 };
                }
            }
            if n[t] == 0 {
                n[t] = 1;
            }
            let neg = case % 2 == 1;
            let mut mag = [0u64; 5];
            for (i, m) in mag.iter_mut().enumerate() {
                *m = n[2 * i] as u64 | (n[2 * i + 1] as u64) << 32;
            }
            assert_eq!(round_fp32_digits32(neg, &n, t), FP32.round(neg, &mag), "{n:x?}");
        }
    }

    /// The f64 estimate rounds every digit state it settles exactly as the
    /// carry path does, and gives way at rounding boundaries: states of 2 to
    /// 64 full-range FP32 terms (some with a term and its negation), and
    /// values built at FP32 ties and one unit either side of them.
    #[test]
    fn the_estimate_rounds_as_the_digits_do_or_gives_way() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed);
        let mut k = KulischWindow::new(288, 8);
        let (mut settled, mut simd_settled, mut random_cases, mut exact_ties_settled) = (0, 0, 0, 0);
        let (mut wants, mut four_settled, mut random_fours) = ([None; 4], 0, 0);
        for case in 0..200_000 {
            // Four cases of one kind in a row, in slots 4..8: the four-slot
            // SIMD rounding then takes them together.
            let (kind, s) = ((case / 4) % 4, 4 + case % 4);
            k.digits[s * DIGITS..(s + 1) * DIGITS].fill(0);
            k.acc[s] = -0.0;
            k.meta[s] = 0;
            let exact_tie = if kind == 3 {
                // m * 2^e units with m odd and 25 bits long: a tie between two
                // FP32 values, plus -1, 0 or +1 unit, in carry-save form.
                let m = (1i64 << 24) | rng.gen_range(0..1i64 << 24) | 1;
                let e = rng.gen_range(0..230u32);
                let delta = rng.gen_range(-1i64..=1);
                let wide = (m as u128) << (e % 64);
                let mut words = [0u64; DIGITS / 2 + 2];
                words[(e / 64) as usize] = wide as u64;
                words[(e / 64) as usize + 1] = (wide >> 64) as u64;
                let d = &mut k.digits[s * DIGITS..(s + 1) * DIGITS];
                for (i, di) in d.iter_mut().enumerate() {
                    *di = ((words[i / 2] >> (32 * (i % 2))) & 0xffff_ffff) as i64;
                }
                d[0] += delta;
                for i in 0..DIGITS - 1 {
                    let c = rng.gen_range(-3i64..=3);
                    d[i] += c << 32;
                    d[i + 1] -= c;
                }
                if rng.gen_bool(0.5) {
                    d.iter_mut().for_each(|x| *x = -*x);
                }
                k.meta[s] = F_SLOW | F_NOT_NEGZERO;
                delta == 0
            } else {
                random_cases += 1;
                let n = rng.gen_range(2..=64);
                for i in 0..n {
                    let bits = if kind == 1 && i == n - 1 {
                        // A term and its negation.
                        f32::from_bits(rng.gen::<u32>() & 0x7f7f_ffff).to_bits()
                    } else {
                        loop {
                            let b = rng.gen::<u32>();
                            if (b >> 23) & 0xff != 0xff {
                                break b;
                            }
                        }
                    };
                    for b in [bits, bits ^ if kind == 1 { 0x8000_0000 } else { 0 }].into_iter().take(1 + (kind == 1 && i == n - 1) as usize) {
                        match crate::term::FP32.decode(b) {
                            Term::Finite { neg, mant, shift } => k.add_digits(s, neg, mant, shift),
                            Term::Zero { neg } => k.acc[s] += if neg { -0.0 } else { 0.0 },
                            _ => unreachable!(),
                        }
                    }
                }
                if case % 3 == 0 {
                    // A register value too (a multiple of 2^-149).
                    let r = rng.gen_range(-1e6f64..1e6f64) * 2f64.powi(rng.gen_range(-140..60));
                    k.acc[s] += (r * 2f64.powi(149)).trunc() * 2f64.powi(-149);
                }
                false
            };
            let want = k.round_fp32_digits(s).map(|r| r.bits);
            wants[s - 4] = want;
            // The SIMD twin sums in another order: it may settle a borderline
            // state the scalar one leaves (or the reverse), never differently.
            let simd = crate::simd::round_fp32_estimate(&mut k, s);
            if let Some(bits) = simd {
                assert_eq!(Some(bits), want, "SIMD twin: digits {:?} register {:e}", &k.digits[s * DIGITS..(s + 1) * DIGITS], k.acc[s]);
                simd_settled += 1;
            }
            if let Some(bits) = k.round_fp32_estimate(s) {
                settled += 1;
                exact_ties_settled += exact_tie as u32;
                assert_eq!(Some(bits), want, "digits {:?} register {:e}", &k.digits[s * DIGITS..(s + 1) * DIGITS], k.acc[s]);
            }
            if s == 7 {
                random_fours += (kind != 3) as u32;
                // Settles all four or none; each as the digits round it.
                if let Some(four) = crate::simd::round_fp32_estimate4(&mut k, 4) {
                    four_settled += 1;
                    assert_ne!(kind, 3, "an exact tie settled");
                    for (j, (bits, want)) in four.iter().zip(wants).enumerate() {
                        assert_eq!(Some(*bits), want, "four-slot twin, slot {}: digits {:?} register {:e}", 4 + j, &k.digits[(4 + j) * DIGITS..(5 + j) * DIGITS], k.acc[4 + j]);
                    }
                }
            }
        }
        // Almost every state of FP32 terms settles from the estimate; exact ties never do.
        assert!(settled > random_cases * 9 / 10, "{settled} of {random_cases}");
        assert!(simd_settled > random_cases * 9 / 10, "SIMD: {simd_settled} of {random_cases}");
        assert_eq!(exact_ties_settled, 0);
        if crate::simd::detected() >= crate::simd::Isa::Avx2 {
            assert!(four_settled > random_fours * 3 / 4, "four-slot: {four_settled} of {random_fours}");
        }
    }

    #[test]
    fn narrow_integers_read_back_exactly() {
        for v in [1i128, -1, 256, -256, -257, 0x7fff_ffff_ffff_ffff, -(1 << 63), 12345 << 70, -(12345 << 70), (1 << 64) + 1] {
            let got = narrow_integer(&le(v, 35));
            let m = v.unsigned_abs();
            let tz = m.trailing_zeros();
            let want = ((m >> tz) >> 64 == 0).then_some((v < 0, (m >> tz) as u64, tz));
            assert_eq!(got, want, "{v}");
        }
        assert_eq!(narrow_integer(&[0; 35]), None);
    }

    #[test]
    fn a_narrow_partial_lands_in_the_register() {
        let mut k = KulischWindow::new(280, 8);
        // -3 * 2^-140: -(3 << 9) in units of 2^-149.
        let mut v = vec![0u8];
        v.extend(le(-(3i128 << 9), 35));
        k.add_kulisch(0, &v);
        assert_eq!(k.meta[0] & F_SLOW, 0, "no limbs used");
        assert_eq!(k.acc[0], -3.0 * 2f64.powi(-140));
        // A partial far outside the tile's window goes to the limbs.
        let mut w = vec![0u8];
        w.extend(le(1i128 << 120, 35));
        k.add_kulisch(0, &w);
        assert_ne!(k.meta[0] & F_SLOW, 0);
        match k.value(0) {
            // 2^120 - 3 * 2^9 units, from the limbs and the flushed register together.
            Exact::Finite { limbs, .. } => assert_eq!((limbs[0], limbs[1], limbs[2]), (0u64.wrapping_sub(1536), (1 << 56) - 1, 0), "{limbs:?}"),
            other => panic!("{other:?}"),
        }
    }
}
