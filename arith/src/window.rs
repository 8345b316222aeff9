//! One operation's accumulator window: runs of values in, exact or rounded values out.

use crate::auto::{self, C_BF16, C_FP16, C_FP32, C_INT8, C_KULISCH};
use crate::kulisch::{Exact, KulischWindow};
use crate::round::{self, Rounded, FP16_NAN, FP32_NAN};
use crate::term::{decode_native, Term};
use crate::{bigint, simd, NumFormat};

/// How a node combines contributions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Round to FP32 (nearest, ties to even) on every arrival.
    Fp32Arrival,
    /// Exact sum; round once at output.
    Kulisch { width_bits: u16 },
}

/// Native output formats (AUTO is planned with `crate::auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Int8,
    Fp16,
    Bf16,
    Fp32,
    Kulisch,
}

impl Output {
    /// From an AUTO format index (0..5).
    pub fn from_index(i: u8) -> Output {
        [Output::Int8, Output::Fp16, Output::Bf16, Output::Fp32, Output::Kulisch][i.min(4) as usize]
    }

    /// The wire format of values written in this output (Kulisch at `kulisch_bits`).
    pub fn num_format(self, kulisch_bits: u16) -> NumFormat {
        match self {
            Output::Int8 => NumFormat::Int8,
            Output::Fp16 => NumFormat::Fp16,
            Output::Bf16 => NumFormat::Bf16,
            Output::Fp32 => NumFormat::Fp32,
            Output::Kulisch => NumFormat::Kulisch { width_bits: kulisch_bits },
        }
    }
}

/// Why an accumulation or an output was refused. Nothing changed when it is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithError {
    /// FP32_ARRIVAL takes native formats only.
    KulischUnderFp32Arrival,
    /// A Kulisch run whose width differs from the operation's.
    KulischWidthMismatch { got: u16, want: u16 },
    /// The run passes the end of the window.
    OutOfWindow,
    /// The exact sum does not fit the Kulisch width: ACCUMULATION_INEXACT.
    Inexact { slot: usize },
    /// An INT8 output that is not integral or not in range.
    NotInt8 { slot: usize },
    /// KULISCH output under FP32_ARRIVAL (a rounded value is never presented as exact).
    KulischOutputUnderFp32Arrival,
}

impl std::fmt::Display for ArithError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArithError::KulischUnderFp32Arrival => write!(f, "Kulisch input under FP32_ARRIVAL"),
            ArithError::KulischWidthMismatch { got, want } => write!(f, "Kulisch width {got} differs from the operation's {want}"),
            ArithError::OutOfWindow => write!(f, "run passes the end of the window"),
            ArithError::Inexact { slot } => write!(f, "slot {slot}: exact sum does not fit the Kulisch width"),
            ArithError::NotInt8 { slot } => write!(f, "slot {slot}: value is not an integer in -128..127"),
            ArithError::KulischOutputUnderFp32Arrival => write!(f, "KULISCH output under FP32_ARRIVAL"),
        }
    }
}
impl std::error::Error for ArithError {}

/// FP32_ARRIVAL state: one f32 per slot, starting at -0 (the identity of IEEE addition).
#[derive(Debug, Clone)]
pub struct Fp32Window {
    pub(crate) acc: Vec<f32>,
}

/// The accumulator of one operation.
#[derive(Debug, Clone)]
pub enum Accumulator {
    Fp32(Fp32Window),
    Kulisch(KulischWindow),
}

impl Accumulator {
    /// Allocates a window of `slots` elements (the only allocation).
    pub fn new(policy: Policy, slots: usize) -> Self {
        match policy {
            Policy::Fp32Arrival => Accumulator::Fp32(Fp32Window { acc: vec![-0.0; slots] }),
            Policy::Kulisch { width_bits } => Accumulator::Kulisch(KulischWindow::new(width_bits, slots)),
        }
    }

    pub fn slots(&self) -> usize {
        match self {
            Accumulator::Fp32(w) => w.acc.len(),
            Accumulator::Kulisch(k) => k.slots(),
        }
    }

    pub fn policy(&self) -> Policy {
        match self {
            Accumulator::Fp32(_) => Policy::Fp32Arrival,
            Accumulator::Kulisch(k) => Policy::Kulisch { width_bits: k.width() },
        }
    }

    /// Forgets slots `[first, first + n)` so they can take a new range.
    pub fn clear(&mut self, first: usize, n: usize) {
        match self {
            Accumulator::Fp32(w) => w.acc[first..first + n].fill(-0.0),
            Accumulator::Kulisch(k) => k.clear(first, n),
        }
    }

    /// Adds a run of `format` values (wire bytes, already validated) into slots
    /// `[first, first + n)`. The fastest implementation the CPU offers is used.
    #[inline]
    pub fn accumulate(&mut self, first: usize, format: NumFormat, values: &[u8]) -> Result<(), ArithError> {
        self.check(first, format, values)?;
        match (self, format) {
            (Accumulator::Fp32(w), NumFormat::Fp32) => simd::fp32_arrival(&mut w.acc[first..], values),
            (Accumulator::Fp32(w), f) => add_fp32_scalar(&mut w.acc[first..], f, values),
            (Accumulator::Kulisch(k), NumFormat::Kulisch { .. }) => k.add_kulisch(first, values),
            (Accumulator::Kulisch(k), NumFormat::Fp32) => simd::kulisch_fp32(k, first, values),
            (Accumulator::Kulisch(k), f) => k.add_native_scalar(first, f, values),
        }
        Ok(())
    }

    /// `accumulate` of FP32 values with the AVX-512 kernels, whatever the
    /// CPU detection says: for running them under an emulated CPU
    /// (`tools/avx512-emu`) where the host has no AVX-512.
    ///
    /// # Safety
    /// The CPU running this (real or emulated) has AVX-512 F, BW, VL and AVX2.
    #[cfg(all(feature = "emu", target_arch = "x86_64"))]
    #[doc(hidden)]
    pub unsafe fn accumulate_fp32_avx512(&mut self, first: usize, values: &[u8]) -> Result<(), ArithError> {
        self.check(first, NumFormat::Fp32, values)?;
        match self {
            // SAFETY: the caller's.
            Accumulator::Fp32(w) => unsafe { simd::avx512::fp32_arrival_avx512(&mut w.acc[first..], values) },
            // SAFETY: the caller's; `check` keeps the run inside the window.
            Accumulator::Kulisch(k) => unsafe { simd::avx512::kulisch_fp32_avx512(k, first, values) },
        }
        Ok(())
    }

    /// The same as `accumulate` with the scalar reference implementation only.
    pub fn accumulate_scalar(&mut self, first: usize, format: NumFormat, values: &[u8]) -> Result<(), ArithError> {
        self.check(first, format, values)?;
        match (self, format) {
            (Accumulator::Fp32(w), f) => add_fp32_scalar(&mut w.acc[first..], f, values),
            (Accumulator::Kulisch(k), NumFormat::Kulisch { .. }) => k.add_kulisch(first, values),
            (Accumulator::Kulisch(k), f) => k.add_native_scalar(first, f, values),
        }
        Ok(())
    }

    fn check(&self, first: usize, format: NumFormat, values: &[u8]) -> Result<(), ArithError> {
        let n = format.values_in(values.len());
        if first + n > self.slots() {
            return Err(ArithError::OutOfWindow);
        }
        match (self, format) {
            (Accumulator::Fp32(_), NumFormat::Kulisch { .. }) => Err(ArithError::KulischUnderFp32Arrival),
            (Accumulator::Kulisch(k), NumFormat::Kulisch { width_bits }) if width_bits != k.width() => Err(ArithError::KulischWidthMismatch { got: width_bits, want: k.width() }),
            _ => Ok(()),
        }
    }

    /// The slot rounded to FP32 (canonical NaN), with an exactness flag.
    pub fn round_fp32(&mut self, slot: usize) -> Result<Rounded, ArithError> {
        match self {
            Accumulator::Fp32(w) => {
                let v = w.acc[slot];
                Ok(Rounded { bits: if v.is_nan() { FP32_NAN } else { v.to_bits() }, exact: true })
            }
            Accumulator::Kulisch(k) => kulisch_round_fp32(k, slot),
        }
    }

    /// Writes slots `[first, first + n)` as FP32 wire values into `out` (4 bytes each).
    pub fn write_fp32_run(&mut self, first: usize, n: usize, out: &mut [u8]) -> Result<(), ArithError> {
        self.fp32_run(first, n, out, false)
    }

    /// `write_fp32_run` then `clear` of the same slots, in one pass: what a
    /// node does with a range whose RESULT is built. On an error the slots
    /// before the failing one are taken and the rest are untouched.
    pub fn take_fp32_run(&mut self, first: usize, n: usize, out: &mut [u8]) -> Result<(), ArithError> {
        self.fp32_run(first, n, out, true)
    }

    fn fp32_run(&mut self, first: usize, n: usize, out: &mut [u8], take: bool) -> Result<(), ArithError> {
        match self {
            Accumulator::Fp32(w) => simd::fp32_write(&mut w.acc[first..first + n], out, take),
            Accumulator::Kulisch(k) => {
                // Vectorised eight (or four) slots at a time where every one rounds straight from its register; the rest one by one, exactly.
                let r = simd::kulisch_write_fp32(k, first, n, out, take, &mut |k, slot| Ok(kulisch_round_fp32(k, slot)?.bits));
                if take {
                    // Only what was taken: on an error the failing slot and the rest still hold their values.
                    let taken = match &r {
                        Ok(()) => n,
                        Err(ArithError::Inexact { slot }) if (first..first + n).contains(slot) => slot - first,
                        Err(_) => 0,
                    };
                    k.forget(first, taken);
                }
                r?;
            }
        }
        Ok(())
    }

    /// Writes the slot in a native output format; returns the bytes written.
    pub fn write(&mut self, slot: usize, out: Output, buf: &mut [u8]) -> Result<usize, ArithError> {
        match out {
            Output::Fp32 => {
                buf[..4].copy_from_slice(&self.round_fp32(slot)?.bits.to_le_bytes());
                Ok(4)
            }
            Output::Fp16 | Output::Bf16 => {
                let ieee = if out == Output::Fp16 { crate::term::FP16 } else { crate::term::BF16 };
                let bits = match self {
                    Accumulator::Fp32(w) => round_f32_to(ieee, w.acc[slot]),
                    Accumulator::Kulisch(k) => exact_round(&k.value(slot), slot, ieee)?.bits,
                };
                buf[..2].copy_from_slice(&(bits as u16).to_le_bytes());
                Ok(2)
            }
            Output::Int8 => {
                let r = self.round_fp32(slot)?;
                let v = if r.bits == 0x8000_0000 { Some(0) } else { round::fp32_to_int8_exact(r.bits) };
                match (r.exact, v) {
                    (true, Some(v)) => {
                        buf[0] = v as u8;
                        Ok(1)
                    }
                    _ => Err(ArithError::NotInt8 { slot }),
                }
            }
            Output::Kulisch => match self {
                Accumulator::Fp32(_) => Err(ArithError::KulischOutputUnderFp32Arrival),
                Accumulator::Kulisch(k) => {
                    let width = k.width();
                    let e = k.value(slot);
                    e.encode_kulisch(width, buf).ok_or(ArithError::Inexact { slot })?;
                    Ok(1 + width as usize / 8)
                }
            },
        }
    }

    /// Whether the slot's exact sum fits the Kulisch width (always true under FP32_ARRIVAL).
    pub fn fits(&mut self, slot: usize) -> bool {
        match self {
            Accumulator::Fp32(_) => true,
            Accumulator::Kulisch(k) => k.value(slot).fits(),
        }
    }

    /// AUTO candidate set of a slot: the formats that hold its value exactly.
    pub fn candidates(&mut self, slot: usize) -> Result<u8, ArithError> {
        let kulisch_ok = matches!(self, Accumulator::Kulisch(_));
        if kulisch_ok && !self.fits(slot) {
            return Err(ArithError::Inexact { slot });
        }
        let r = self.round_fp32(slot)?;
        let mut mask = if kulisch_ok { C_KULISCH } else { 0 };
        if r.exact {
            mask |= C_FP32;
            if round::fp32_to_fp16_exact(r.bits).is_some() {
                mask |= C_FP16;
            }
            if round::fp32_to_bf16_exact(r.bits).is_some() {
                mask |= C_BF16;
            }
            if round::fp32_to_int8_exact(r.bits).is_some() {
                mask |= C_INT8;
            }
        }
        Ok(mask)
    }

    /// Kulisch width used by AUTO (0 under FP32_ARRIVAL).
    pub fn kulisch_bits(&self) -> u16 {
        match self {
            Accumulator::Fp32(_) => 0,
            Accumulator::Kulisch(k) => k.width(),
        }
    }
}

/// A Kulisch slot rounded to FP32 by the cheapest path that holds it: the
/// register alone, the register and the digits, or the exact limbs.
fn kulisch_round_fp32(k: &mut KulischWindow, slot: usize) -> Result<Rounded, ArithError> {
    if let Some(bits) = k.round_fp32_fast(slot) {
        return Ok(Rounded { bits, exact: k.fast_is_exact_fp32(slot) });
    }
    if let Some(r) = k.round_fp32_digits(slot) {
        return Ok(r);
    }
    exact_round(&k.value(slot), slot, crate::term::FP32)
}

/// Rounds an exact value with the given IEEE format (NaN canonical).
fn exact_round(e: &Exact<'_>, slot: usize, ieee: crate::term::Ieee) -> Result<Rounded, ArithError> {
    let nan = match ieee.frac_bits {
        23 => FP32_NAN,
        10 => FP16_NAN,
        _ => round::BF16_NAN,
    };
    Ok(match e {
        Exact::NaN => Rounded { bits: nan, exact: true },
        Exact::Inf { neg } => Rounded { bits: ieee.inf(*neg), exact: true },
        Exact::Zero { neg } => Rounded { bits: ieee.zero(*neg), exact: true },
        Exact::Finite { limbs, width } => {
            if !bigint::fits_signed(limbs, *width as u32) {
                return Err(ArithError::Inexact { slot });
            }
            // Up to 512-bit accumulators on the stack without zeroing a 4096-bit buffer.
            if limbs.len() <= 8 {
                let mut mag = [0u64; 8];
                let mag = &mut mag[..limbs.len()];
                let neg = bigint::magnitude(limbs, mag);
                ieee.round(neg, mag)
            } else {
                let mut mag = [0u64; 66];
                let mag = &mut mag[..limbs.len()];
                let neg = bigint::magnitude(limbs, mag);
                ieee.round(neg, mag)
            }
        }
    })
}

/// Rounds an f32 to FP16 or BF16 (RNE, subnormals kept, canonical NaN).
fn round_f32_to(ieee: crate::term::Ieee, v: f32) -> u32 {
    match crate::term::FP32.decode(v.to_bits()) {
        Term::NaN => {
            if ieee.frac_bits == 10 {
                FP16_NAN
            } else {
                round::BF16_NAN
            }
        }
        Term::Inf { neg } => ieee.inf(neg),
        Term::Zero { neg } => ieee.zero(neg),
        Term::Finite { neg, mant, shift } => {
            let mut mag = [0u64; 5];
            bigint::add_shifted(&mut mag, mant as u64, shift);
            ieee.round(neg, &mag).bits
        }
    }
}

/// FP32_ARRIVAL of non-FP32 native values: each converts exactly to f32 first.
fn add_fp32_scalar(acc: &mut [f32], format: NumFormat, values: &[u8]) {
    let w = format.value_bytes();
    for (a, v) in acc.iter_mut().zip(values.chunks_exact(w)) {
        *a += term_to_f32(decode_native(format, v));
    }
}

/// A native term as f32 (exact for INT8, FP16, BF16 and FP32).
pub(crate) fn term_to_f32(t: Term) -> f32 {
    match t {
        Term::Zero { neg } => {
            if neg {
                -0.0
            } else {
                0.0
            }
        }
        Term::Inf { neg } => {
            if neg {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            }
        }
        Term::NaN => f32::NAN,
        Term::Finite { neg, mant, shift } => {
            // mant < 2^24 and 2^(shift-149) are exact in f64; the product is an FP32 value.
            let v = mant as f64 * (2f64).powi(shift as i32 - 149);
            (if neg { -v } else { v }) as f32
        }
    }
}

/// Plans an AUTO packet for consecutive slots `[first, first + n)` (see `auto::plan_packet`).
pub fn auto_masks(acc: &mut Accumulator, first: usize, n: usize, masks: &mut [u8]) -> Result<(), ArithError> {
    for (i, m) in masks[..n].iter_mut().enumerate() {
        *m = acc.candidates(first + i)?;
    }
    Ok(())
}

pub use auto::{plan_packet, PacketPlan, PlanError, PlannedGroup};
