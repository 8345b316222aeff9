//! Cases for `run.py`, which runs prism-arith's AVX-512 kernels on an
//! emulated CPU (BochsCPU) inside its own process, where the host has no
//! AVX-512, and checks each result against the scalar twin and the host's
//! kernels.
//!
//! The protocol, all C ABI: `prism_emu_cases` says how many cases there
//! are; `prism_emu_setup(i)` builds case `i` (natively) and returns it;
//! the emulator calls the function at `prism_emu_entry()` with the case,
//! which runs only the AVX-512 kernels; `prism_emu_check` (natively again)
//! runs the same inputs through the scalar twin and the host's kernels,
//! compares, writes one line about the case and frees it.

use prism_arith::simd::{self, emu};
use prism_arith::{min_kulisch_width, Accumulator, NumFormat, Output, Policy};

/// Input classes (the list for the accumulators).
#[derive(Debug, Clone, Copy)]
enum Class {
    /// Normal, sigma 1e-3.
    Gradient,
    /// Normal, sigma 1.
    Normal,
    /// Every finite FP32 bit pattern.
    FullRange,
    /// Contributors in pairs, the second the negation of the first.
    Cancellation,
    /// Subnormals of both signs, a few tiny normals among them.
    Subnormal,
    /// Large values of one sign: the sum leaves FP32's range.
    Overflow,
    /// A value and half an ulp of it: sums exactly halfway between FP32 neighbours.
    Ties,
    /// NaNs (any payload), infinities and zeros of both signs among gradient values.
    Specials,
    /// Gradient values whose scale changes every 1500 elements.
    Layered,
}

const CLASSES: [Class; 9] = [Class::Gradient, Class::Normal, Class::FullRange, Class::Cancellation, Class::Subnormal, Class::Overflow, Class::Ties, Class::Specials, Class::Layered];
const CONTRIBUTORS: [usize; 4] = [2, 3, 8, 64];
/// Lengths for the small kernels: every tail of 16 lanes, and a few whole vectors.
const LENGTHS: usize = 41;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn normal(&mut self) -> f64 {
        let u1 = ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let u2 = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Value `i` of contributor `j` in class `class`.
fn value(class: Class, j: usize, i: usize, seed: u64) -> f32 {
    // Pairs of contributors share a stream where the class needs it.
    let mut r = Rng((seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ ((j as u64) << 48)) | 1);
    let _ = r.next();
    match class {
        Class::Gradient => (r.normal() * 1e-3) as f32,
        Class::Normal => r.normal() as f32,
        Class::FullRange => loop {
            let v = f32::from_bits(r.next() as u32);
            if v.is_finite() {
                break v;
            }
        },
        Class::Cancellation => {
            let base = value(Class::FullRange, j & !1, i, seed);
            if j % 2 == 1 {
                -base
            } else {
                base
            }
        }
        Class::Subnormal => {
            let bits = r.next() as u32;
            if bits.is_multiple_of(8) {
                f32::from_bits(bits & 0x8000_0000 | 0x0080_0000 | bits >> 9 & 0xffff)
            } else {
                f32::from_bits(bits & 0x807f_ffff)
            }
        }
        Class::Overflow => f32::from_bits(0x7f00_0000 | (r.next() as u32 & 0x7f_ffff)),
        Class::Ties => {
            let v = value(Class::Normal, 0, i, seed);
            match j {
                0 => v,
                // Half an ulp of v, of either sign: v + h lies halfway between two FP32 values.
                1 => f32::from_bits(v.to_bits() & 0xff80_0000) * if r.next().is_multiple_of(2) { 2f32.powi(-24) } else { -(2f32.powi(-24)) },
                _ => {
                    if r.next().is_multiple_of(2) {
                        0.0
                    } else {
                        -0.0
                    }
                }
            }
        }
        Class::Specials => match r.next() % 20 {
            0 | 1 => f32::from_bits(0x7f80_0001 | (r.next() as u32 & 0x807f_ffff)),
            2 => f32::INFINITY,
            3 => f32::NEG_INFINITY,
            4 | 5 => 0.0,
            6 | 7 => -0.0,
            _ => (r.normal() * 1e-3) as f32,
        },
        Class::Layered => {
            let mut layer = Rng((seed ^ (i / 1500) as u64) | 1);
            let k = (layer.next() % 17) as i32 - 8;
            (r.normal() * 1e-3 * 2f64.powi(k)) as f32
        }
    }
}

/// Where a contributor's runs go: the switch's (363-value packets through a
/// 2904-slot window) or scattered runs of any length and offset.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Packets,
    Scattered,
}

enum Kind {
    /// Runs of FP32 wire values into an accumulator; `acc` is the one the
    /// emulated kernels fill.
    Accumulate { policy: Policy, slots: usize, runs: Vec<(usize, Vec<u8>)>, acc: Accumulator },
    /// `fp32_write` of `input` (into `out`, clearing `acc` when `take`).
    Write { input: Vec<f32>, acc: Vec<f32>, out: Vec<u8>, take: bool },
    /// `max_finite_exponent` of `values`.
    MaxExponent { values: Vec<u8>, got: u32 },
}

pub struct Case {
    name: String,
    kind: Kind,
}

fn accumulate_case(index: usize) -> Case {
    let per_policy = CLASSES.len() * CONTRIBUTORS.len() * 2;
    let kulisch = index / per_policy == 1;
    let index = index % per_policy;
    let class = CLASSES[index % CLASSES.len()];
    let n = CONTRIBUTORS[index / CLASSES.len() % CONTRIBUTORS.len()];
    let layout = if index / (CLASSES.len() * CONTRIBUTORS.len()) == 0 { Layout::Packets } else { Layout::Scattered };
    let policy = if kulisch { Policy::Kulisch { width_bits: min_kulisch_width(n as u32) as u16 } } else { Policy::Fp32Arrival };
    let seed = 0x5eed_0000 + index as u64;
    let mut place = Rng(seed | 1);
    let (slots, mut runs) = (2904, Vec::new());
    for j in 0..n {
        let spans: Vec<(usize, usize)> = match layout {
            Layout::Packets => (0..8).map(|p| (363 * p, 363)).collect(),
            Layout::Scattered => (0..6)
                .map(|_| {
                    let len = 1 + (place.next() % 700) as usize;
                    ((place.next() as usize) % (slots - len + 1), len)
                })
                .collect(),
        };
        for (first, len) in spans {
            let bytes = (first..first + len).flat_map(|i| value(class, j, i, seed).to_le_bytes()).collect();
            runs.push((first, bytes));
        }
    }
    let name = format!("accumulate {} {class:?} N={n} {layout:?}", if kulisch { "KULISCH" } else { "FP32_ARRIVAL" });
    Case { name, kind: Kind::Accumulate { policy, slots, runs, acc: Accumulator::new(policy, slots) } }
}

/// More runs into one tile than its registers take between flushes
/// (8,191), across a tile edge, with sums that pass 2^53 of the window's
/// last bit, then a tie that bit breaks (as arith's
/// `runs_past_the_flush_limit_stay_exact_through_the_kernel`): without the
/// flush the registers round.
fn flush_case() -> Case {
    let policy = Policy::Kulisch { width_bits: min_kulisch_width(10_000) as u16 };
    let (slots, first, len) = (2904, 490, 45);
    let mut values = vec![1.0f32];
    values.extend(std::iter::repeat_n(15.0, 9000));
    values.extend([2f32.powi(-7), 2f32.powi(-13) * (1.0 + 2f32.powi(-23)), -(2f32.powi(-13))]);
    let runs = values.iter().map(|v| (first, std::iter::repeat_n(v.to_le_bytes(), len).flatten().collect())).collect();
    Case { name: "accumulate KULISCH 9004 runs across a tile edge, past the flush limit".into(), kind: Kind::Accumulate { policy, slots, runs, acc: Accumulator::new(policy, slots) } }
}

fn kernel_case(index: usize) -> Case {
    let len = index % LENGTHS;
    let mut r = Rng(0xabcd_0000 + index as u64);
    let class = [Class::Specials, Class::FullRange][index / LENGTHS % 2];
    let input: Vec<f32> = (0..len).map(|i| value(class, 0, i, r.next())).collect();
    match index / (2 * LENGTHS) {
        0 => Case { name: format!("fp32_write {class:?} len={len} take"), kind: Kind::Write { acc: input.clone(), input, out: vec![0xa5; 4 * len], take: true } },
        1 => Case { name: format!("fp32_write {class:?} len={len}"), kind: Kind::Write { acc: input.clone(), input, out: vec![0xa5; 4 * len], take: false } },
        _ => Case { name: format!("max_finite_exponent {class:?} len={len}"), kind: Kind::MaxExponent { values: input.iter().flat_map(|v| v.to_le_bytes()).collect(), got: u32::MAX } },
    }
}

const ACCUMULATE_CASES: usize = 2 * CLASSES.len() * CONTRIBUTORS.len() * 2;
const KERNEL_CASES: usize = 3 * 2 * LENGTHS;
const FLUSH_CASES: usize = 1;

/// How many cases there are.
#[no_mangle]
pub extern "C" fn prism_emu_cases() -> u32 {
    (ACCUMULATE_CASES + KERNEL_CASES + FLUSH_CASES) as u32
}

/// Case `i`, built natively; null past the last.
#[no_mangle]
pub extern "C" fn prism_emu_setup(i: u32) -> *mut Case {
    let i = i as usize;
    let case = if i < ACCUMULATE_CASES {
        accumulate_case(i)
    } else if i < ACCUMULATE_CASES + KERNEL_CASES {
        kernel_case(i - ACCUMULATE_CASES)
    } else if i < ACCUMULATE_CASES + KERNEL_CASES + FLUSH_CASES {
        flush_case()
    } else {
        return std::ptr::null_mut();
    };
    Box::into_raw(Box::new(case))
}

/// The address of `prism_emu_run`, for the emulator to call.
#[no_mangle]
pub extern "C" fn prism_emu_entry() -> usize {
    prism_emu_run as *const () as usize
}

/// Runs a case's AVX-512 kernels (and nothing else: no allocation, no
/// output), on the emulated CPU.
///
/// # Safety
/// `case` comes from `prism_emu_setup` and was not checked yet; the CPU has
/// AVX-512 F, BW, VL and AVX2.
#[no_mangle]
pub unsafe extern "C" fn prism_emu_run(case: *mut Case) {
    // SAFETY: the caller's: a live case of ours.
    let case = unsafe { &mut *case };
    match &mut case.kind {
        Kind::Accumulate { runs, acc, .. } => {
            for (first, bytes) in runs.iter() {
                // SAFETY: the caller's (AVX-512). A run outside the window is refused, and the check sees it.
                let _ = unsafe { acc.accumulate_fp32_avx512(*first, bytes) };
            }
        }
        // SAFETY: the caller's (AVX-512).
        Kind::Write { acc, out, take, .. } => unsafe { emu::fp32_write_avx512(acc, out, *take) },
        // SAFETY: the caller's (AVX-512).
        Kind::MaxExponent { values, got } => *got = unsafe { emu::max_finite_exponent_avx512(values) },
    }
}

/// What the three accumulators (emulated AVX-512, scalar twin, host) hold
/// after the same runs, slot by slot: each slot's exact value as Kulisch
/// output (or its error), then the window taken as FP32.
fn contents(acc: &mut Accumulator, slots: usize) -> (Vec<String>, Vec<u8>) {
    let mut exact = Vec::new();
    if let Policy::Kulisch { width_bits } = acc.policy() {
        let mut buf = vec![0u8; NumFormat::Kulisch { width_bits }.value_bytes()];
        for slot in 0..slots {
            exact.push(match acc.write(slot, Output::Kulisch, &mut buf) {
                Ok(len) => format!("{:02x?}", &buf[..len]),
                Err(e) => format!("{e:?}"),
            });
        }
    }
    let mut fp32 = vec![0u8; 4 * slots];
    if let Err(e) = acc.take_fp32_run(0, slots, &mut fp32) {
        exact.push(format!("take: {e:?}"));
    }
    (exact, fp32)
}

fn check(case: &mut Case) -> Result<(), String> {
    match &mut case.kind {
        Kind::Accumulate { policy, slots, runs, acc } => {
            let (mut twin, mut host) = (Accumulator::new(*policy, *slots), Accumulator::new(*policy, *slots));
            for (first, bytes) in runs.iter() {
                twin.accumulate_scalar(*first, NumFormat::Fp32, bytes).map_err(|e| format!("scalar twin refused a run: {e:?}"))?;
                host.accumulate(*first, NumFormat::Fp32, bytes).map_err(|e| format!("host kernels refused a run: {e:?}"))?;
            }
            let (want, got, other) = (contents(&mut twin, *slots), contents(acc, *slots), contents(&mut host, *slots));
            for (what, theirs) in [("AVX-512", &got), ("host", &other)] {
                if let Some(slot) = (0..want.0.len()).find(|&s| want.0[s] != theirs.0[s]) {
                    return Err(format!("{what} slot {slot}: exact value {} where the scalar twin has {}", theirs.0[slot], want.0[slot]));
                }
                if let Some(slot) = (0..*slots).find(|&s| want.1[4 * s..4 * s + 4] != theirs.1[4 * s..4 * s + 4]) {
                    return Err(format!("{what} slot {slot}: FP32 {:02x?} where the scalar twin has {:02x?}", &theirs.1[4 * slot..4 * slot + 4], &want.1[4 * slot..4 * slot + 4]));
                }
            }
            Ok(())
        }
        Kind::Write { input, acc, out, take } => {
            let (mut twin_acc, mut twin_out) = (input.clone(), vec![0xa5u8; out.len()]);
            simd::fp32_write_scalar(&mut twin_acc, &mut twin_out, *take);
            if *out != twin_out {
                return Err(format!("written {out:02x?} where the scalar twin wrote {twin_out:02x?}"));
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            if bits(acc) != bits(&twin_acc) {
                return Err(format!("left the slots {:08x?} where the scalar twin left {:08x?}", bits(acc), bits(&twin_acc)));
            }
            Ok(())
        }
        Kind::MaxExponent { values, got } => {
            let want = simd::max_finite_exponent_scalar(values);
            if *got != want {
                return Err(format!("{got} where the scalar twin gives {want}"));
            }
            Ok(())
        }
    }
}

/// Checks a case after its emulated run, writes one line about it into
/// `msg` (NUL-terminated, cut to `cap`) and frees it; 0 when it passed.
///
/// # Safety
/// `case` comes from `prism_emu_setup` and is not used again; `msg` has
/// room for `cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn prism_emu_check(case: *mut Case, msg: *mut u8, cap: usize) -> i32 {
    // SAFETY: the caller's: ours, and given back once.
    let mut case = unsafe { Box::from_raw(case) };
    let result = check(&mut case);
    let line = match &result {
        Ok(()) => format!("{}: ok", case.name),
        Err(why) => format!("{}: {why}", case.name),
    };
    if cap > 0 {
        let len = line.len().min(cap - 1);
        // SAFETY: `msg` has room for `cap` bytes (the caller's), and len + 1 <= cap.
        unsafe {
            std::ptr::copy_nonoverlapping(line.as_ptr(), msg, len);
            *msg.add(len) = 0;
        }
    }
    result.is_err() as i32
}
