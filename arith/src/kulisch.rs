//! KULISCH_FIXED: an exact per-element sum in units of 2^-149.
//!
//! Each slot keeps a fast `i64` register anchored at a per-slot bit position
//! (`base`, set by the slot's first finite term) next to the full two's-
//! complement limbs. An FP32-domain term whose bit position lies in
//! `[base, base + FAST_SPAN]` is added to the register exactly as
//! `mant << (shift - base)`; any other term goes to the limbs. The register
//! holds at most 2^(24 + FAST_SPAN) per term, so `MAX_FAST_RUNS` additions
//! cannot overflow it; the window flushes every register into its limbs
//! before that count is reached and before any value is read.

use crate::bigint;
use crate::term::{decode_native, Term};
use crate::NumFormat;

pub(crate) const FAST_SPAN: u32 = 24;
/// Below the first term's position the register still has this many bits.
const FAST_BELOW: u32 = 12;
/// Runs added between flushes: 2^(63 - 24 - FAST_SPAN) - 1.
pub(crate) const MAX_FAST_RUNS: u32 = (1 << (63 - 24 - FAST_SPAN)) - 1;

pub(crate) const F_ANY: u64 = 1 << 16;
pub(crate) const F_NOT_NEGZERO: u64 = 1 << 17;
pub(crate) const F_NAN: u64 = 1 << 18;
pub(crate) const F_POS_INF: u64 = 1 << 19;
pub(crate) const F_NEG_INF: u64 = 1 << 20;
pub(crate) const F_BASE_SET: u64 = 1 << 21;
pub(crate) const F_SLOW: u64 = 1 << 22;
pub(crate) const BASE_MASK: u64 = 0xffff;

/// The exact state of every slot of one operation's window.
#[derive(Debug, Clone)]
pub struct KulischWindow {
    width: u16,
    limbs_per: usize,
    pub(crate) fast: Vec<i64>,
    /// Low 16 bits: base; above: F_* flags.
    pub(crate) meta: Vec<u64>,
    limbs: Vec<u64>,
    runs_since_flush: u32,
}

impl KulischWindow {
    /// A window of `slots` elements for Kulisch width `width` bits.
    pub fn new(width: u16, slots: usize) -> Self {
        // 64 bits of headroom above W: sums of up to 2^63 W-bit partials never wrap.
        let limbs_per = (width as usize).div_ceil(64) + 1;
        KulischWindow {
            width,
            limbs_per,
            fast: vec![0; slots],
            meta: vec![0; slots],
            limbs: vec![0; slots * limbs_per],
            runs_since_flush: 0,
        }
    }

    pub fn width(&self) -> u16 {
        self.width
    }
    pub fn slots(&self) -> usize {
        self.meta.len()
    }

    /// Forgets slots `[first, first + n)` (limbs only where they were used).
    pub fn clear(&mut self, first: usize, n: usize) {
        let l = self.limbs_per;
        for slot in first..first + n {
            if self.meta[slot] & F_SLOW != 0 {
                self.limbs[slot * l..(slot + 1) * l].fill(0);
            }
        }
        self.fast[first..first + n].fill(0);
        self.meta[first..first + n].fill(0);
    }

    /// FP32 rounding straight from the fast register when the slot never used
    /// its limbs and the result is a normal number: one i64-to-f32 conversion
    /// (round to nearest even) and an exact power-of-two scale. `None` otherwise.
    #[inline(always)]
    pub(crate) fn round_fp32_fast(&self, slot: usize) -> Option<u32> {
        let meta = self.meta[slot];
        if meta & (F_SLOW | F_NAN | F_POS_INF | F_NEG_INF) != 0 {
            return None;
        }
        let v = self.fast[slot];
        if v == 0 {
            return None; // zero: the sign of zero needs the flags
        }
        let base = (meta & BASE_MASK) as i32;
        // 2^(base - 149) built from its exponent bits (base - 149 is in -149..=104).
        let scale = f64::from_bits(((base - 149 + 1023) as u64) << 52);
        let scaled = v as f32 as f64 * scale;
        // Normal results only: a subnormal would be rounded a second time.
        (scaled.abs() >= f32::MIN_POSITIVE as f64).then(|| (scaled as f32).to_bits())
    }

    /// Counts one more run into the fast registers; flushes all of them when due.
    pub(crate) fn note_run(&mut self) {
        self.runs_since_flush += 1;
        if self.runs_since_flush >= MAX_FAST_RUNS {
            for slot in 0..self.slots() {
                self.flush(slot);
            }
            self.runs_since_flush = 0;
        }
    }

    fn flush(&mut self, slot: usize) {
        let v = std::mem::take(&mut self.fast[slot]);
        if v != 0 {
            self.meta[slot] |= F_SLOW;
            let base = (self.meta[slot] & BASE_MASK) as u32;
            let l = self.limbs_per;
            bigint::add_signed_shifted(&mut self.limbs[slot * l..(slot + 1) * l], v, base);
        }
    }

    /// Adds one native term to a slot (the scalar reference path).
    #[inline(always)]
    pub(crate) fn add_term(&mut self, slot: usize, t: Term) {
        let meta = &mut self.meta[slot];
        match t {
            Term::NaN => *meta |= F_ANY | F_NOT_NEGZERO | F_NAN,
            Term::Inf { neg } => *meta |= F_ANY | F_NOT_NEGZERO | if neg { F_NEG_INF } else { F_POS_INF },
            Term::Zero { neg } => *meta |= F_ANY | if neg { 0 } else { F_NOT_NEGZERO },
            Term::Finite { neg, mant, shift } => {
                *meta |= F_ANY | F_NOT_NEGZERO;
                if *meta & F_BASE_SET == 0 {
                    *meta |= F_BASE_SET | shift.saturating_sub(FAST_BELOW) as u64;
                }
                let base = (*meta & BASE_MASK) as u32;
                let d = shift.wrapping_sub(base);
                if d <= FAST_SPAN {
                    let v = (mant as i64) << d;
                    self.fast[slot] += if neg { -v } else { v };
                } else {
                    *meta |= F_SLOW;
                    let l = self.limbs_per;
                    let limbs = &mut self.limbs[slot * l..(slot + 1) * l];
                    if neg {
                        bigint::sub_shifted(limbs, mant as u64, shift)
                    } else {
                        bigint::add_shifted(limbs, mant as u64, shift)
                    }
                }
            }
        }
    }

    /// Adds a run of native values (scalar reference path).
    pub fn add_native_scalar(&mut self, first: usize, format: NumFormat, values: &[u8]) {
        let w = format.value_bytes();
        for (i, v) in values.chunks_exact(w).enumerate() {
            self.add_term(first + i, decode_native(format, v));
        }
        self.note_run();
    }

    /// Adds a run of Kulisch values of this window's width (already validated on the wire).
    pub fn add_kulisch(&mut self, first: usize, values: &[u8]) {
        let w = 1 + self.width as usize / 8;
        for (i, v) in values.chunks_exact(w).enumerate() {
            let slot = first + i;
            let meta = &mut self.meta[slot];
            match v[0] {
                0 => {
                    *meta |= F_ANY | F_NOT_NEGZERO | F_SLOW;
                    let l = self.limbs_per;
                    bigint::add_le_bytes(&mut self.limbs[slot * l..(slot + 1) * l], &v[1..]);
                }
                1 => *meta |= F_ANY | F_NOT_NEGZERO,
                2 => *meta |= F_ANY,
                3 => *meta |= F_ANY | F_NOT_NEGZERO | F_POS_INF,
                4 => *meta |= F_ANY | F_NOT_NEGZERO | F_NEG_INF,
                _ => *meta |= F_ANY | F_NOT_NEGZERO | F_NAN,
            }
        }
    }

    /// Whether the fast register's value is an FP32 value (at most 24 significant bits).
    pub(crate) fn fast_is_exact_fp32(&self, slot: usize) -> bool {
        let m = self.fast[slot].unsigned_abs();
        m >> m.trailing_zeros() < 1 << 24
    }

    /// The exact value of a slot (flushes its fast register first).
    pub fn value(&mut self, slot: usize) -> Exact<'_> {
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
            Exact::Zero { neg: meta & F_ANY != 0 && meta & F_NOT_NEGZERO == 0 }
        } else {
            Exact::Finite { limbs, width: self.width }
        }
    }
}

/// The exact value of a sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exact<'a> {
    Zero { neg: bool },
    /// Non-zero two's-complement integer in units of 2^-149 (with headroom above `width`).
    Finite { limbs: &'a [u64], width: u16 },
    Inf { neg: bool },
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
