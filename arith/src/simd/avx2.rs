//! The AVX2 kernels, each an `unsafe fn` with `#[target_feature(enable =
//! "avx2")]` that `super` calls once AVX2 support is detected: FP32_ARRIVAL's
//! add and write, the naive baseline, KULISCH_FIXED's add of FP32 runs
//! (`kulisch_fp32_kernel`, whose body the AVX-512 kernel shares) and its
//! final FP32 rounding. x86_64 only (the `cfg` is on the `mod` declaration).

use std::arch::x86_64::*;

use crate::kulisch::{KulischWindow, DIGITS, F_NOT_NEGZERO, F_PAIR, F_PAIR2, F_SLOW, TILE};
use crate::term::FP32;

#[target_feature(enable = "avx2")]
pub(super) unsafe fn fp32_arrival_avx2(acc: &mut [f32], values: &[u8]) {
    let n = (values.len() / 4).min(acc.len());
    let (vp, ap) = (values.as_ptr() as *const f32, acc.as_mut_ptr());
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: i + 16 <= n keeps the 64-byte accesses inside `acc` and
        // `values`; unaligned loads and stores. x86 is little-endian like the wire.
        unsafe {
            let (v0, v1) = (_mm256_loadu_ps(vp.add(i)), _mm256_loadu_ps(vp.add(i + 8)));
            _mm256_storeu_ps(ap.add(i), _mm256_add_ps(_mm256_loadu_ps(ap.add(i)), v0));
            _mm256_storeu_ps(ap.add(i + 8), _mm256_add_ps(_mm256_loadu_ps(ap.add(i + 8)), v1));
        }
        i += 16;
    }
    if i + 8 <= n {
        // SAFETY: as above, for eight values.
        unsafe { _mm256_storeu_ps(ap.add(i), _mm256_add_ps(_mm256_loadu_ps(ap.add(i)), _mm256_loadu_ps(vp.add(i)))) };
        i += 8;
    }
    if i < n {
        // The last 1..=7 values: lanes past n are neither read nor written (masked).
        let mask = first_lanes(n - i);
        // SAFETY: the mask keeps every access to lanes i..n, inside both slices.
        unsafe {
            let v = _mm256_maskload_ps(vp.add(i), mask);
            _mm256_maskstore_ps(ap.add(i), mask, _mm256_add_ps(_mm256_maskload_ps(ap.add(i), mask), v));
        }
    }
}

/// A mask of the first `count` (0..=8) of eight 32-bit lanes, for the masked
/// loads and stores that end a run without a scalar tail.
#[target_feature(enable = "avx2")]
#[inline]
fn first_lanes(count: usize) -> __m256i {
    _mm256_cmpgt_epi32(_mm256_set1_epi32(count as i32), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn fp32_write_avx2(acc: &mut [f32], out: &mut [u8], take: bool) {
    let n = (out.len() / 4).min(acc.len());
    let nan = _mm256_castsi256_ps(_mm256_set1_epi32(crate::round::FP32_NAN as i32));
    let neg_zero = _mm256_set1_ps(-0.0);
    let (ap, op) = (acc.as_mut_ptr(), out.as_mut_ptr() as *mut f32);
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: i + 8 <= n keeps both 32-byte accesses inside `acc` and `out`;
        // unaligned loads and stores. x86 is little-endian like the wire.
        unsafe {
            let a = _mm256_loadu_ps(ap.add(i));
            _mm256_storeu_ps(op.add(i), _mm256_blendv_ps(a, nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(a, a)));
            if take {
                _mm256_storeu_ps(ap.add(i), neg_zero);
            }
        }
        i += 8;
    }
    if i < n {
        // The last 1..=7 values: lanes past n are neither read nor written (masked).
        let mask = first_lanes(n - i);
        // SAFETY: the mask keeps every access to lanes i..n, inside both slices.
        unsafe {
            let a = _mm256_maskload_ps(ap.add(i), mask);
            _mm256_maskstore_ps(op.add(i), mask, _mm256_blendv_ps(a, nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(a, a)));
            if take {
                _mm256_maskstore_ps(ap.add(i), mask, neg_zero);
            }
        }
    }
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn naive_avx2<T: Copy + std::ops::AddAssign + From<f32>>(acc: &mut [T], values: &[f32]) {
    for (a, v) in acc.iter_mut().zip(values) {
        *a += T::from(*v);
    }
}

/// Eight values at a time: when all eight lie inside their tile's window (or
/// are zeros), they are widened to f64 and added to the slots' registers;
/// otherwise each goes, by the same test, to its register, to the slot's
/// carry-save digits or (infinities, NaN) to its flags. Blocks are aligned to
/// slot multiples of eight, so a block is one cache line of registers and
/// never straddles two tiles (`TILE` is a multiple of eight); the blocks the
/// run starts and ends inside read their lanes outside the run as -0, which
/// changes no register (the registers are padded to whole blocks).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn kulisch_fp32_avx2(k: &mut KulischWindow, first: usize, values: &[u8]) {
    // SAFETY: AVX2 is present (this function's contract).
    unsafe { kulisch_fp32_kernel::<false>(k, first, values) }
}

/// The body of both kernels, compiled into each with its target features
/// (inlined: a function without target features of its own takes its
/// caller's). `WIDE`: the AVX-512 steps; the caller has AVX-512 F, BW, VL.
///
/// # Safety
/// AVX2 is present, and AVX-512 F, BW and VL when `WIDE`.
#[inline(always)]
pub(super) unsafe fn kulisch_fp32_kernel<const WIDE: bool>(k: &mut KulischWindow, first: usize, values: &[u8]) {
    const _: () = assert!(TILE.is_multiple_of(8), "an aligned block lies in one tile");
    let n = values.len() / 4;
    if n == 0 {
        return;
    }
    let end = first + n;
    let zero = _mm256_setzero_si256();
    let neg_zero = _mm256_set1_epi32(i32::MIN);
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let n_lanes = _mm256_set1_epi32(n as i32);
    // A block the run starts or ends inside takes the vector path too when
    // all eight of its slots lie in the window (its lanes outside the run
    // are -0: nothing for the digits).
    let slots = k.slots();
    macro_rules! test {
        ($b:expr, $bias:expr, $size:expr) => {
            inside_lanes_avx2($b, $bias, $size)
        };
    }
    // The tile the blocks are in, its window test, and whether a tile the
    // run was counted into is due for a flush (see `enter!`).
    let (mut tile, mut bias, mut size, mut due) = (usize::MAX, zero, zero, false);
    let regs = k.acc.as_mut_ptr();
    // Adds block `b`, every lane inside the window, to the registers of slots s..s + 8.
    // The caller's SAFETY: s + 8 <= the registers' padded length.
    // `$hi`: the block's upper four values widened to f64 (from memory,
    // `upper_half_avx2`, where the block came from `values` whole).
    macro_rules! add_inside {
        ($b:expr, $s:expr) => {{
            let b = $b;
            add_inside!(b, $s, _mm256_cvtps_pd(_mm256_extractf128_ps(_mm256_castsi256_ps(b), 1)))
        }};
        ($b:expr, $s:expr, $hi:expr) => {{
            // The upper half first: a read of `values` after the stores
            // below would have to wait for them (`asm!` reading memory).
            let (hi, p) = ($hi, regs.add($s));
            _mm256_storeu_pd(p, _mm256_add_pd(_mm256_loadu_pd(p), _mm256_cvtps_pd(_mm256_castps256_ps128(_mm256_castsi256_ps($b)))));
            _mm256_storeu_pd(p.add(4), _mm256_add_pd(_mm256_loadu_pd(p.add(4)), hi));
        }};
    }
    // Tests block `b` at slot `s` against the tile's window and adds it;
    // `$in_window`: s + 8 <= slots (a mixed block then takes the vector path).
    // The caller's SAFETY: s + 8 <= the registers' padded length.
    macro_rules! block {
        ($b:expr, $s:expr, $bias:expr, $size:expr, $in_window:expr) => {{
            let (b, s) = ($b, $s);
            let ok = test!(b, $bias, $size);
            if ok == 0xff {
                add_inside!(b, s);
            } else if $in_window {
                // One block alone: it crosses into no tile, so the state handed over comes back unchanged.
                mixed_blocks_avx2(k, s, b, Rest::none(), &mut At { tile, bias: $bias, size: $size, due: false });
            } else {
                let mut lane = [0u32; 8];
                _mm256_storeu_si256(lane.as_mut_ptr() as *mut __m256i, b);
                mixed_block(k, s, &lane, ok);
            }
        }};
    }
    // Enters the tile slot `s` lies in unless the blocks are in it already:
    // counts the run into it and takes its window test, kept while the
    // blocks stay in the tile (a tile's window is chosen from this run if
    // it has none, and does not change during the run).
    macro_rules! enter {
        ($s:expr) => {
            if $s / TILE != tile {
                tile = $s / TILE;
                due |= k.count_run(tile);
                // SAFETY (in the closure): AVX2 is present, as for this function.
                let w = k.tile_window(tile, first, values, |v| unsafe { max_finite_exponent_avx2(v) });
                (bias, size) = (_mm256_set1_epi32(w.bias), _mm256_set1_epi32(w.size));
            }
        };
    }
    // `$blocks` blocks from slot `$s` in one step, with one test and one
    // branch for all of them and one prefetch a cache line: when all their
    // values lie inside the tile's window, adds them and is true; else
    // changes nothing. The caller's SAFETY: s + 8 * $blocks <= stop.
    macro_rules! all_inside_step {
        ($s:expr, 8) => {{
            if WIDE {
                let s = $s;
                // SAFETY: first <= s and s + 64 <= stop <= end: the 256 bytes lie in `values`;
                // s + 64 <= slots <= the registers' padded length; AVX-512 F, BW, VL (WIDE).
                unsafe { super::avx512::all_inside64_avx512(values.as_ptr().add(4 * (s - first)), regs.add(s), bias, size) }
            } else {
                all_inside_step!(@avx2 $s, 8)
            }
        }};
        ($s:expr, $blocks:expr) => {
            all_inside_step!(@avx2 $s, $blocks)
        };
        (@avx2 $s:expr, $blocks:expr) => {{
            let s = $s;
            let v = values.as_ptr().wrapping_add(4 * (s - first));
            for line in 0..$blocks / 2 {
                _mm_prefetch::<_MM_HINT_T0>(v.wrapping_add(2048 + 64 * line) as *const i8);
            }
            // SAFETY: first <= s and s + 8 * $blocks <= stop <= end: the blocks lie in `values`.
            let b: [__m256i; $blocks] = unsafe { std::array::from_fn(|j| _mm256_loadu_si256((v as *const __m256i).add(j))) };
            let ones = _mm256_set1_epi32(-1);
            let all = b.iter().fold(ones, |a, &x| _mm256_and_si256(a, inside_avx2(x, bias, size)));
            // Every sign bit set (one `vtestps`).
            let inside = _mm256_testc_ps(_mm256_castsi256_ps(all), _mm256_castsi256_ps(ones)) == 1;
            if inside {
                for q in 0..$blocks / 4 {
                    // SAFETY: the four blocks from v + 128 q lie in `values` (above).
                    let hi = unsafe { upper_halves4_avx2(v.wrapping_add(128 * q)) };
                    for (j, h) in hi.into_iter().enumerate() {
                        // SAFETY: s + 8 * $blocks <= stop <= slots <= the registers' padded length.
                        unsafe { add_inside!(b[4 * q + j], s + 8 * (4 * q + j), h) };
                    }
                }
            }
            inside
        }};
    }
    // A block the run starts or ends inside: lane j is the run's value
    // s + j - first when that lies in [0, n), else -0.
    macro_rules! partial {
        ($s:expr) => {{
            let s = $s;
            let at = _mm256_add_epi32(lanes, _mm256_set1_epi32(s as i32 - first as i32));
            let valid = _mm256_andnot_si256(_mm256_cmpgt_epi32(zero, at), _mm256_cmpgt_epi32(n_lanes, at));
            let base = values.as_ptr().wrapping_add(4 * s).wrapping_sub(4 * first);
            // SAFETY: the masked load reads only the lanes inside the run.
            let v = unsafe { _mm256_maskload_epi32(base as *const i32, valid) };
            enter!(s);
            // SAFETY: s + 8 <= the registers' padded length (end <= slots, checked by `Accumulator::check`).
            unsafe { block!(_mm256_blendv_epi8(neg_zero, v, valid), s, bias, size, s + 8 <= slots) };
        }};
    }
    let mut s = first & !7;
    if s < first || s + 8 > end {
        partial!(s);
        s += 8;
    }
    let full_end = end & !7;
    while s < full_end {
        let stop = ((s / TILE + 1) * TILE).min(full_end);
        enter!(s);
        // Sixty-four slots (256 bytes of values) a step while all their
        // values lie inside, then 32; otherwise one block.
        while s + 64 <= stop && all_inside_step!(s, 8) {
            s += 64;
        }
        while s < stop {
            if s + 32 <= stop && all_inside_step!(s, 4) {
                s += 32;
                continue;
            }
            // Streaming from DRAM, the load waits unless asked for early:
            // 2 KiB ahead (a prefetch never faults, past the run's end too).
            _mm_prefetch::<_MM_HINT_T0>(values.as_ptr().wrapping_add(4 * (s - first) + 2048) as *const i8);
            // SAFETY: first <= s and s + 8 <= end: the 32 bytes lie in `values`; s + 8 <= slots.
            let b = unsafe { _mm256_loadu_si256(values.as_ptr().add(4 * (s - first)) as *const __m256i) };
            let ok = test!(b, bias, size);
            if ok == 0xff {
                // SAFETY: s + 8 <= slots <= the registers' padded length; the block's
                // upper half lies in `values` (read above).
                unsafe { add_inside!(b, s, upper_half_avx2(values.as_ptr().add(4 * (s - first)))) };
                s += 8;
            } else {
                // This block and the mixed ones after it, in one call
                // (full-range data: the rest of the run, across the tiles
                // whose windows are set).
                let rest = Rest { values: values.as_ptr().wrapping_sub(4 * first), stop: full_end };
                let mut at = At { tile, bias, size, due };
                // SAFETY: s + 8 <= slots, and every full block from s to full_end lies in the run and the window.
                s = unsafe { mixed_blocks_avx2(k, s, b, rest, &mut at) };
                (tile, bias, size, due) = (at.tile, at.bias, at.size, at.due);
            }
        }
    }
    if s < end {
        partial!(s);
    }
    // The run's slots, marked once it is added (the tiles counted it as it entered them).
    let span = k.mark_used(first, n);
    if due {
        k.flush_due(span);
    }
}

/// The upper four values of a block at `v` (16 bytes at v + 16), widened
/// to f64 straight from memory. Written with intrinsics, LLVM extracts
/// them from the register the window test loaded the block into instead:
/// one more vector operation a block, where the vector pipes are what the
/// all-inside steps wait for (the load ports have room).
///
/// # Safety
/// AVX2 is present; the 32 bytes from `v` are readable.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn upper_half_avx2(v: *const u8) -> __m256d {
    let h;
    // SAFETY: the caller's: the 16 bytes read lie in the 32 from `v`.
    unsafe {
        std::arch::asm!("vcvtps2pd {h}, xmmword ptr [{v} + 16]", v = in(reg) v, h = out(ymm_reg) h, options(pure, readonly, nostack, preserves_flags));
    }
    h
}

/// `upper_half_avx2` of four blocks at `v` (16 bytes at v + 32 j + 16), in
/// one `asm!` so that the four share one address register.
///
/// # Safety
/// AVX2 is present; the 128 bytes from `v` are readable.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn upper_halves4_avx2(v: *const u8) -> [__m256d; 4] {
    let (h0, h1, h2, h3): (__m256d, __m256d, __m256d, __m256d);
    // SAFETY: the caller's: the four 16-byte reads lie in the 128 bytes from `v`.
    unsafe {
        std::arch::asm!(
            "vcvtps2pd {h0}, xmmword ptr [{v} + 16]",
            "vcvtps2pd {h1}, xmmword ptr [{v} + 48]",
            "vcvtps2pd {h2}, xmmword ptr [{v} + 80]",
            "vcvtps2pd {h3}, xmmword ptr [{v} + 112]",
            v = in(reg) v,
            h0 = out(ymm_reg) h0,
            h1 = out(ymm_reg) h1,
            h2 = out(ymm_reg) h2,
            h3 = out(ymm_reg) h3,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    [h0, h1, h2, h3]
}

/// A block of up to eight with some lanes outside the window, lane by lane:
/// inside (or zero, bit set in `inside`) to the register, finite outside to
/// the carry-save digits, specials to the flags. Kept out of line so that
/// the all-inside loop keeps its registers.
#[inline(never)]
fn mixed_block(k: &mut KulischWindow, slot: usize, lane: &[u32], inside: i32) {
    for (j, &bits) in lane.iter().enumerate() {
        if inside >> j & 1 == 1 {
            k.acc[slot + j] += f32::from_bits(bits) as f64;
        } else {
            k.add_outside(slot + j, FP32.decode(bits));
        }
    }
}

/// Which lanes of block `b` lie inside a tile's window (bit j for lane j),
/// zeros counted as inside: the window test of `kulisch_fp32_avx2`, whose
/// `bias` and `size` it takes.
#[target_feature(enable = "avx2")]
#[inline]
fn inside_lanes_avx2(b: __m256i, bias: __m256i, size: __m256i) -> i32 {
    let inside = inside_avx2(b, bias, size);
    let ok = _mm256_movemask_ps(_mm256_castsi256_ps(inside));
    if ok == 0xff {
        ok
    } else {
        let zeros = _mm256_cmpeq_epi32(_mm256_slli_epi32::<1>(b), _mm256_setzero_si256());
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_or_si256(inside, zeros)))
    }
}

/// The window test's lanes (all ones where |bits| lies inside the window;
/// zeros not counted): `(|bits| + bias) < size` as signed integers.
#[target_feature(enable = "avx2")]
#[inline]
fn inside_avx2(b: __m256i, bias: __m256i, size: __m256i) -> __m256i {
    _mm256_cmpgt_epi32(size, _mm256_add_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7fff_ffff)), bias))
}

/// Where `mixed_blocks_avx2` may go on after its first block: the run's
/// values (as the address of slot 0's) and the end of the run's full blocks.
#[derive(Clone, Copy)]
struct Rest {
    values: *const u8,
    stop: usize,
}

impl Rest {
    /// The first block alone.
    fn none() -> Rest {
        Rest { values: std::ptr::null(), stop: 0 }
    }
}

/// The tile `kulisch_fp32_avx2` is in, its window test, and whether a tile
/// it counted the run into is due for a flush: what `mixed_blocks_avx2`
/// takes over and hands back when it crosses into another tile.
struct At {
    tile: usize,
    bias: __m256i,
    size: __m256i,
    due: bool,
}

/// `mixed_block_avx2` for block `b` at slot `s` (a block with lanes outside
/// its tile's window), then for each following full block up to
/// `rest.stop` until one lies wholly inside its tile's window or reaches a
/// tile without one (the caller chooses it); returns the slot of the first
/// block not done. Out of line, so that the all-inside loop keeps its
/// registers, and one call a run of mixed blocks (full-range data: the
/// rest of the run) rather than one a block or a tile.
///
/// # Safety
/// AVX2 is present; s + 8 <= slots; every block from s + 8 up to rest.stop
/// lies in the window and its 32 bytes at `rest.values + 4 * slot` in the run.
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn mixed_blocks_avx2(k: &mut KulischWindow, mut s: usize, mut b: __m256i, rest: Rest, at: &mut At) -> usize {
    loop {
        // SAFETY: s + 8 <= slots (the contract, for the first block; the loop's test for the rest).
        unsafe { mixed_block_avx2(k, s, b) };
        s += 8;
        if s >= rest.stop {
            return s;
        }
        if s.is_multiple_of(TILE) {
            // A new tile: its window decides what is inside from here; an
            // unset one is the caller's to choose (from the run's values).
            let w = k.tiles[s / TILE].window;
            if w.is_unset() {
                return s;
            }
            at.tile = s / TILE;
            at.due |= k.count_run(at.tile);
            (at.bias, at.size) = (_mm256_set1_epi32(w.bias), _mm256_set1_epi32(w.size));
        }
        _mm_prefetch::<_MM_HINT_T0>(rest.values.wrapping_add(4 * s + 2048) as *const i8);
        // SAFETY: s < rest.stop: the block lies in the run (the contract).
        b = unsafe { _mm256_loadu_si256(rest.values.wrapping_add(4 * s) as *const __m256i) };
        if inside_lanes_avx2(b, at.bias, at.size) == 0xff {
            return s;
        }
    }
}

/// What `mixed_block` does for a whole block of eight slots inside the window
/// (s + 8 <= slots), in vectors and without a branch per lane (full-range
/// data makes each a coin toss), but with every finite non-zero lane sent
/// out of the register (whether or not it lies inside the tile's window; the
/// registers' line is then not touched):
/// - to the slot's pair registers while they hold fewer than two terms and
///   the slot has not spilled to its digits: the first term is `hi`; the
///   second makes `(hi, lo)` the rounded f64 sum and its exact error (an
///   error-free sum, TwoSum: the error of one f64 sum of two FP32 values is
///   itself an f64), so two contributors of full-range data never reach the
///   digits, and each term costs a few vector operations;
/// - else to the carry-save digits: decoded in vectors and added to its two
///   digits as one 16-byte add; every other lane adds 0 to its slot's lowest
///   two digits (no change, no branch).
///
/// A +0 lane only marks its slot as not -0 (as adding it to the register
/// would); a -0 lane changes nothing. Infinities and NaNs, rare, take the
/// scalar path afterwards.
///
/// # Safety
/// AVX2 is present, and the block's slots lie in the window: s + 8 <= slots.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn mixed_block_avx2(k: &mut KulischWindow, s: usize, b: __m256i) {
    let zero = _mm256_setzero_si256();
    let e = _mm256_and_si256(_mm256_srli_epi32::<23>(b), _mm256_set1_epi32(0xff));
    let special = _mm256_cmpeq_epi32(e, _mm256_set1_epi32(0xff));
    // Lanes whose term leaves the register: finite and non-zero.
    let finite = _mm256_andnot_si256(_mm256_or_si256(_mm256_cmpeq_epi32(_mm256_slli_epi32::<1>(b), zero), special), _mm256_set1_epi32(-1));
    // SAFETY: s + 8 <= slots = the flags' length (the caller's contract); unaligned.
    let meta = unsafe { k.meta.as_mut_ptr().add(s) as *mut u64 };
    let flags = unsafe { meta.read_unaligned() };
    const _: () = assert!(F_PAIR2 >> 3 == F_SLOW, "one shift brings F_PAIR2 onto F_SLOW");
    // Lanes the pairs take, and their flag bits: none when every slot has
    // spilled or its pair is full (more than two contributors).
    let (take, pair_flags) = if (flags | flags >> 3) & splat(F_SLOW) == splat(F_SLOW) {
        (zero, zero)
    } else {
        // SAFETY: the caller's contract.
        unsafe { pair_block_avx2(k, s, b, finite, flags) }
    };
    let digit = _mm256_andnot_si256(take, finite);
    if _mm256_movemask_ps(_mm256_castsi256_ps(digit)) != 0 {
        // SAFETY: the caller's contract.
        unsafe { digits_avx2(k, s, b, e, digit) };
    }
    // Flags: F_NOT_NEGZERO and F_SLOW on the digit lanes, the pair's on its
    // lanes, F_NOT_NEGZERO on the +0 lanes.
    let f = _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(digit, _mm256_set1_epi32((F_NOT_NEGZERO | F_SLOW) as i32)), pair_flags),
        _mm256_and_si256(_mm256_cmpeq_epi32(b, zero), _mm256_set1_epi32(F_NOT_NEGZERO as i32)),
    );
    // SAFETY: as for the read above.
    unsafe { meta.write_unaligned(flags | lane_bytes(f)) };
    let sp = _mm256_movemask_ps(_mm256_castsi256_ps(special));
    if sp != 0 {
        let mut lane = [0u32; 8];
        // SAFETY: `lane` is 32 bytes.
        unsafe { _mm256_storeu_si256(lane.as_mut_ptr() as *mut __m256i, b) };
        for (j, &bits) in lane.iter().enumerate() {
            if sp >> j & 1 == 1 {
                k.add_outside(s + j, FP32.decode(bits));
            }
        }
    }
}

/// Flag bits `f` in each of eight slots' flag bytes, as one word.
const fn splat(f: u8) -> u64 {
    u64::from_ne_bytes([f; 8])
}

/// The eight 32-bit lanes, each below 256, as eight bytes: lane j in byte j.
#[target_feature(enable = "avx2")]
#[inline]
fn lane_bytes(m: __m256i) -> u64 {
    let w16 = _mm_packs_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
    _mm_cvtsi128_si64(_mm_packus_epi16(w16, w16)) as u64
}

/// The pair half of `mixed_block_avx2`, when some slot's pair may take its
/// term (`flags`: the eight slots' flags before this block; `finite`: the
/// finite non-zero lanes): adds the terms the pairs take to them and
/// returns those lanes and their flag bits (F_NOT_NEGZERO and F_PAIR, with
/// F_PAIR2 where the pair already held a term).
///
/// # Safety
/// AVX2 is present, and s + 8 <= slots.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn pair_block_avx2(k: &mut KulischWindow, s: usize, b: __m256i, finite: __m256i, flags: u64) -> (__m256i, __m256i) {
    let lanes = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(flags as i64));
    // The pair takes the term when the slot has not spilled to its digits
    // and its pair holds fewer than two terms.
    let open = _mm256_cmpeq_epi32(_mm256_and_si256(lanes, _mm256_set1_epi32((F_SLOW | F_PAIR2) as i32)), _mm256_setzero_si256());
    let take = _mm256_and_si256(open, finite);
    if _mm256_movemask_ps(_mm256_castsi256_ps(take)) != 0 {
        // SAFETY: s + 8 <= slots <= the pair registers' padded length.
        let (hp, lp) = unsafe { (k.pair_hi.as_mut_ptr().add(s), k.pair_lo.as_mut_ptr().add(s)) };
        for half in 0..2 {
            let (x, took) = if half == 0 {
                (_mm256_castps256_ps128(_mm256_castsi256_ps(b)), _mm256_castsi256_si128(take))
            } else {
                (_mm256_extractf128_ps::<1>(_mm256_castsi256_ps(b)), _mm256_extracti128_si256::<1>(take))
            };
            // Lanes not taken add +0: their `hi` keeps its value and their error is 0.
            let t = _mm256_and_pd(_mm256_cvtps_pd(x), _mm256_castsi256_pd(_mm256_cvtepi32_epi64(took)));
            // SAFETY (both blocks): the four registers of this half lie in the padded lines (above).
            if flags == 0 {
                // No pair in use among the eight: `hi` is the term.
                unsafe { _mm256_storeu_pd(hp.add(4 * half), t) };
            } else {
                // (hi, lo) = (hi + t rounded, its exact error): `lo` was empty
                // where the term is taken, and gains 0 elsewhere.
                let (h, l) = unsafe { (_mm256_loadu_pd(hp.add(4 * half)), _mm256_loadu_pd(lp.add(4 * half))) };
                let (h2, err) = two_sum_avx2(h, t);
                unsafe {
                    _mm256_storeu_pd(hp.add(4 * half), h2);
                    _mm256_storeu_pd(lp.add(4 * half), _mm256_add_pd(l, err));
                }
            }
        }
    }
    // F_PAIR2 from the lane's own F_PAIR, moved up one bit.
    const _: () = assert!(F_PAIR2 == F_PAIR << 1);
    let bits = _mm256_or_si256(_mm256_set1_epi32((F_NOT_NEGZERO | F_PAIR) as i32), _mm256_slli_epi32::<1>(_mm256_and_si256(lanes, _mm256_set1_epi32(F_PAIR as i32))));
    (take, _mm256_and_si256(take, bits))
}

/// `a + b` as the rounded sum and its exact error (Knuth's TwoSum: six
/// operations, no condition on the magnitudes), four lanes at a time.
#[target_feature(enable = "avx2")]
#[inline]
fn two_sum_avx2(a: __m256d, b: __m256d) -> (__m256d, __m256d) {
    let s = _mm256_add_pd(a, b);
    let bb = _mm256_sub_pd(s, a);
    let err = _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b, bb));
    (s, err)
}

/// The digit half of `mixed_block_avx2`: the finite lanes of block `b` set
/// in `digit` (exponent fields `e`) added to their slots' carry-save digits.
///
/// # Safety
/// AVX2 is present, and s + 8 <= slots.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn digits_avx2(k: &mut KulischWindow, s: usize, b: __m256i, e: __m256i, digit: __m256i) {
    // Decode: significand (hidden bit when normal), shift = max(e, 1) - 1 units,
    // digit index shift / 32; lanes not for the digits get 0 and index 0.
    let normal = _mm256_andnot_si256(_mm256_cmpeq_epi32(e, _mm256_setzero_si256()), _mm256_set1_epi32(0x80_0000));
    let mant = _mm256_and_si256(_mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x7f_ffff)), normal), digit);
    let shift = _mm256_sub_epi32(_mm256_max_epi32(e, _mm256_set1_epi32(1)), _mm256_set1_epi32(1));
    let idx = _mm256_and_si256(_mm256_srli_epi32::<5>(shift), digit);
    let sh = _mm256_and_si256(shift, _mm256_set1_epi32(31));
    // The signed significand (|m| < 2^24; 0 on lanes not for the digits).
    let neg = _mm256_srai_epi32::<31>(b);
    let smant = _mm256_sub_epi32(_mm256_xor_si256(mant, neg), neg);
    let mut at = [0u32; 8];
    // SAFETY: `at` is 32 bytes.
    unsafe { _mm256_storeu_si256(at.as_mut_ptr() as *mut __m256i, idx) };
    // Adds a lane's (low, high) digit pair to its slot's digits.
    // The caller's SAFETY: slot s + j < slots (the function's contract), and a
    // lane's digit index is at most 7 (shift <= 253), so the two digits lie
    // among the slot's ten.
    let digits = k.digits.as_mut_ptr();
    macro_rules! add_pair {
        ($j:expr, $pair:expr) => {{
            let p = digits.add((s + $j) * DIGITS + at[$j] as usize) as *mut __m128i;
            _mm_storeu_si128(p, _mm_add_epi64(_mm_loadu_si128(p), $pair));
        }};
    }
    for half in 0..2 {
        let (m, c) = if half == 0 { (_mm256_castsi256_si128(smant), _mm256_castsi256_si128(sh)) } else { (_mm256_extracti128_si256::<1>(smant), _mm256_extracti128_si256::<1>(sh)) };
        // The signed term v = m << sh (|v| < 2^55) in 64-bit lanes, as
        // hi * 2^32 + lo: lo its low 32 bits (unsigned, below 2^32), hi the
        // rest, sign-extended (|hi| <= 2^23) -- the high word of each lane
        // moved down, with the lane's sign bits above it.
        let v = _mm256_sllv_epi64(_mm256_cvtepi32_epi64(m), _mm256_cvtepu32_epi64(c));
        let lo = _mm256_and_si256(v, _mm256_set1_epi64x(0xffff_ffff));
        let hi = _mm256_blend_epi32::<0b1010_1010>(_mm256_srli_epi64::<32>(v), _mm256_srai_epi32::<31>(v));
        // (lo, hi) pairs of lanes 0, 2 | 1, 3 of this half.
        let p02 = _mm256_unpacklo_epi64(lo, hi);
        let p13 = _mm256_unpackhi_epi64(lo, hi);
        let j = 4 * half;
        // SAFETY: see add_pair.
        unsafe {
            add_pair!(j, _mm256_castsi256_si128(p02));
            add_pair!(j + 1, _mm256_castsi256_si128(p13));
            add_pair!(j + 2, _mm256_extracti128_si256::<1>(p02));
            add_pair!(j + 3, _mm256_extracti128_si256::<1>(p13));
        }
    }
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn max_finite_exponent_avx2(values: &[u8]) -> u32 {
    let n = values.len() / 4;
    let c_exp = _mm256_set1_epi32(0xff);
    // Exponent 255 (not finite) counts as 0, as does a masked-off lane.
    let exponents = |b: __m256i| {
        let e = _mm256_and_si256(_mm256_srli_epi32(b, 23), c_exp);
        _mm256_andnot_si256(_mm256_cmpeq_epi32(e, c_exp), e)
    };
    let mut m = _mm256_setzero_si256();
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: i + 8 <= n bounds the 32-byte load.
        let b = unsafe { _mm256_loadu_si256(values.as_ptr().add(4 * i) as *const __m256i) };
        m = _mm256_max_epu32(m, exponents(b));
        i += 8;
    }
    if i < n {
        let mask = first_lanes(n - i);
        // SAFETY: the mask reads only the values i..n, inside `values`; lanes past n read as 0.
        let b = unsafe { _mm256_maskload_epi32(values.as_ptr().add(4 * i) as *const i32, mask) };
        m = _mm256_max_epu32(m, exponents(b));
    }
    // The largest of the eight lanes, in registers.
    let x = _mm_max_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
    let x = _mm_max_epu32(x, _mm_shuffle_epi32::<0b01_00_11_10>(x));
    let x = _mm_max_epu32(x, _mm_shuffle_epi32::<0b10_11_00_01>(x));
    _mm_cvtsi128_si32(x) as u32
}

#[target_feature(enable = "avx2")]
pub(super) unsafe fn kulisch_write_fp32_avx2(
    k: &mut KulischWindow,
    first: usize,
    n: usize,
    out: &mut [u8],
    take: bool,
    slow: &mut dyn FnMut(&mut KulischWindow, usize) -> Result<u32, crate::ArithError>,
) -> Result<(), crate::ArithError> {
    let abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
    let limit = _mm256_set1_pd(k.fast_limit());
    let slots = k.acc.len().min(k.meta.len());
    // Which of four registers at `slot` hold a magnitude the width holds (the
    // caller's SAFETY: slot + 4 <= slots); read only for slots without flags.
    macro_rules! small4 {
        ($slot:expr) => {{
            let acc = _mm256_loadu_pd(k.acc.as_ptr().add($slot));
            (acc, _mm256_movemask_pd(_mm256_cmp_pd(_mm256_and_pd(acc, abs_mask), limit, _CMP_LT_OQ)))
        }};
    }
    let mut i = 0;
    while i < n {
        // Eight at a time while all eight round straight from their registers.
        // SAFETY: AVX2 is present (this function's feature); first + n <= slots (the
        // caller checked the range) and `out` holds 4 bytes a slot.
        i = unsafe {
            let (acc, meta) = (k.acc.as_mut_ptr(), k.meta.as_ptr());
            if take {
                fast_run8_avx2::<true>(acc, meta, out.as_mut_ptr(), first, i, n, limit)
            } else {
                fast_run8_avx2::<false>(acc, meta, out.as_mut_ptr(), first, i, n, limit)
            }
        };
        if i >= n {
            break;
        }
        let slot = first + i;
        let m = (n - i).min(4);
        // Four (or a last group of fewer, which reads but never writes the registers
        // after it while the window has them).
        if slot + 4 <= slots {
            // SAFETY: slot + 4 <= slots = the flags' length.
            let meta = unsafe { (k.meta.as_ptr().add(slot) as *const u32).read_unaligned() };
            let meta = if m == 4 { meta } else { meta & (u32::MAX >> (32 - 8 * m)) };
            let lanes = (1 << m) - 1;
            if meta == 0 {
                // SAFETY: slot + 4 <= slots bounds the 32-byte load from `acc`.
                let (acc, small) = unsafe { small4!(slot) };
                if small & lanes == lanes {
                    let mut v = [0f32; 4];
                    // SAFETY: `v` holds 16 bytes.
                    unsafe { _mm_storeu_ps(v.as_mut_ptr(), _mm256_cvtpd_ps(acc)) };
                    for (o, x) in out[4 * i..4 * (i + m)].chunks_exact_mut(4).zip(v) {
                        o.copy_from_slice(&x.to_bits().to_le_bytes());
                    }
                    if take {
                        // Flags are clear already: only the registers go back to -0.
                        k.acc[slot..slot + m].fill(-0.0);
                    }
                    i += m;
                    continue;
                }
            } else if m == 4 && meta & u32::from_ne_bytes([F_PAIR; 4]) != 0 && meta & NOT_PAIR_ROUNDABLE == 0 {
                // Four slots of registers and pair registers, some pair in use, at once.
                // SAFETY: AVX2 is present (this function's feature); slot + 4 <= slots; `meta` is theirs.
                if let Some(bits) = unsafe { round_pair4_avx2(k, slot, meta, take) } {
                    for (o, b) in out[4 * i..4 * i + 16].chunks_exact_mut(4).zip(bits) {
                        o.copy_from_slice(&b.to_le_bytes());
                    }
                    i += 4;
                    continue;
                }
            }
            // Four slots of digits and registers at once from their f64
            // estimates, when all four settle; and the groups of digits after them.
            if m == 4 {
                let groups = (n - i) / 4;
                // SAFETY: AVX2 is present (this function's feature); slot + 4 * groups
                // <= first + n <= slots.
                let done = unsafe { round_fp32_estimate4_run_avx2(k, slot, groups, &mut out[4 * i..], take) };
                if done > 0 {
                    i += 4 * done;
                    continue;
                }
            }
        }
        for j in i..i + m {
            // A slot of digits and register rounds from its f64 estimate when that settles it.
            // SAFETY: AVX2 is present (this function's feature); first + j < slots.
            let bits = match unsafe { round_fp32_estimate_avx2(k, first + j, take) } {
                Some(bits) => bits,
                None => {
                    let bits = slow(k, first + j)?;
                    if take {
                        k.clear_slot(first + j);
                    }
                    bits
                }
            };
            out[4 * j..4 * j + 4].copy_from_slice(&bits.to_le_bytes());
        }
        i += m;
    }
    Ok(())
}

/// From slot `first + i` on, eight slots at a time while all eight have no
/// flags and registers below `limit` (then each rounds straight from its
/// register: one f64-to-f32 conversion, round to nearest even): writes their
/// FP32 values at `out + 4 i` and, with `TAKE`, sets the registers back to
/// -0 (the flags are clear already). Returns the `i` it stopped at. Its own
/// loop, with the pointers and constants in registers and the `TAKE` test
/// out of it: the common case of every RESULT.
///
/// # Safety
/// AVX2 is present; `acc` and `meta` hold the window's registers and flags,
/// and first + n <= their length; `out` holds 4 n bytes.
#[target_feature(enable = "avx2")]
unsafe fn fast_run8_avx2<const TAKE: bool>(acc: *mut f64, meta: *const u8, out: *mut u8, first: usize, mut i: usize, n: usize, limit: __m256d) -> usize {
    let abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
    let neg_zero = _mm256_set1_pd(-0.0);
    while i + 8 <= n {
        let slot = first + i;
        // SAFETY: slot + 8 <= first + n: the 8-byte read of `meta`, both 32-byte
        // loads from and stores to `acc` and the 32-byte store at `out + 4 i` stay inside.
        unsafe {
            if (meta.add(slot) as *const u64).read_unaligned() != 0 {
                break;
            }
            let (a0, a1) = (_mm256_loadu_pd(acc.add(slot)), _mm256_loadu_pd(acc.add(slot + 4)));
            let small = _mm256_and_pd(_mm256_cmp_pd(_mm256_and_pd(a0, abs_mask), limit, _CMP_LT_OQ), _mm256_cmp_pd(_mm256_and_pd(a1, abs_mask), limit, _CMP_LT_OQ));
            if _mm256_movemask_pd(small) != 0xf {
                break;
            }
            _mm256_storeu_ps(out.add(4 * i) as *mut f32, _mm256_set_m128(_mm256_cvtpd_ps(a1), _mm256_cvtpd_ps(a0)));
            if TAKE {
                _mm256_storeu_pd(acc.add(slot), neg_zero);
                _mm256_storeu_pd(acc.add(slot + 4), neg_zero);
            }
        }
        i += 8;
    }
    i
}

/// Flags of four slots that `round_pair4_avx2` cannot round: digits,
/// limbs, specials (all but F_NOT_NEGZERO and the pair's).
const NOT_PAIR_ROUNDABLE: u32 = u32::from_ne_bytes([!(F_NOT_NEGZERO | F_PAIR | F_PAIR2); 4]);

/// Four consecutive slots `[slot, slot + 4)` whose value is their register
/// plus their pair registers (no flags but F_NOT_NEGZERO and the pair's; a
/// slot without F_PAIR has empty pair registers), rounded to FP32 exactly: the three `f64` are summed by error-free sums
/// into one rounded sum `s` and its exact error `e` (when an intermediate
/// error cannot be added exactly the slot gives way), `s` is moved to its
/// odd neighbour toward `e` when `e` is not zero and `s` is even (rounding
/// to odd at 53 bits), and the f64-to-f32 conversion then rounds to nearest
/// even as the exact sum would (53 >= 24 + 2: rounding to odd first never
/// changes a nearest-even result; subnormals and overflow included). An
/// exact zero is +0 when F_NOT_NEGZERO is set, else the register's zero
/// (the pair registers are empty then). `Some` only when all
/// four round so -- then, with `clear`, all four are cleared; `None` changes
/// nothing.
///
/// # Safety
/// AVX2 is present, slot + 4 <= slots, and `meta` is the four slots' flags,
/// none of them in `NOT_PAIR_ROUNDABLE`.
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn round_pair4_avx2(k: &mut KulischWindow, slot: usize, meta: u32, clear: bool) -> Option<[u32; 4]> {
    debug_assert_eq!(meta & NOT_PAIR_ROUNDABLE, 0);
    // SAFETY: slot + 4 <= slots <= the registers' padded lengths.
    let (r, h, l) = unsafe { (_mm256_loadu_pd(k.acc.as_ptr().add(slot)), _mm256_loadu_pd(k.pair_hi.as_ptr().add(slot)), _mm256_loadu_pd(k.pair_lo.as_ptr().add(slot))) };
    let z = _mm256_setzero_pd();
    // r + h + l = s2 + e1 + e2 exactly; = s3 + e3 when e1 + e2 is exact.
    let (s1, e1) = two_sum_avx2(h, l);
    let (s2, e2) = two_sum_avx2(r, s1);
    let (u, f) = two_sum_avx2(e1, e2);
    let (s3, e3) = two_sum_avx2(s2, u);
    let inexact = _mm256_movemask_pd(_mm256_cmp_pd(f, z, _CMP_NEQ_UQ));
    let abs = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
    // A magnitude the width might not hold takes the exact path (it reports INEXACT).
    let fits = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_and_pd(s3, abs), _mm256_set1_pd(k.fast_limit()), _CMP_LT_OQ));
    if inexact != 0 || fits != 0xf {
        return None;
    }
    let sb = _mm256_castpd_si256(s3);
    let even = _mm256_cmpeq_epi64(_mm256_and_si256(sb, _mm256_set1_epi64x(1)), _mm256_setzero_si256());
    let move_ = _mm256_and_si256(even, _mm256_castpd_si256(_mm256_cmp_pd(e3, z, _CMP_NEQ_UQ)));
    // +1 unit of the bit pattern away from zero when e has s's sign, -1 toward it when not.
    let toward = _mm256_or_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), _mm256_xor_si256(sb, _mm256_castpd_si256(e3))), _mm256_set1_epi64x(1));
    let odd = _mm256_castsi256_pd(_mm256_add_epi64(sb, _mm256_and_si256(move_, toward)));
    // An exact zero (s3 == 0, so e3 == 0): +0, or the register's zero when
    // no finite term came (the sums of zeros above may have lost its sign).
    let nn = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128((meta & u32::from_ne_bytes([F_NOT_NEGZERO; 4])) as i32));
    let zero_value = _mm256_blendv_pd(r, z, _mm256_castsi256_pd(_mm256_cmpgt_epi64(nn, _mm256_setzero_si256())));
    let rounded = _mm256_cvtpd_ps(_mm256_blendv_pd(odd, zero_value, _mm256_cmp_pd(s3, z, _CMP_EQ_OQ)));
    let mut bits = [0u32; 4];
    // SAFETY: `bits` holds 16 bytes.
    unsafe { _mm_storeu_si128(bits.as_mut_ptr() as *mut __m128i, _mm_castps_si128(rounded)) };
    if clear {
        // SAFETY: as for the loads.
        unsafe { clear_registers4(k, slot) };
    }
    Some(bits)
}

/// Slots `[slot, slot + 4)` back to empty registers (-0) and no flags:
/// the end of a four-slot rounding with `clear` (digits, when used, are the
/// caller's).
///
/// # Safety
/// AVX2 is present, and slot + 4 <= slots.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn clear_registers4(k: &mut KulischWindow, slot: usize) {
    let neg_zero = _mm256_set1_pd(-0.0);
    // SAFETY: slot + 4 <= slots <= the registers' padded lengths and the flags' length.
    unsafe {
        _mm256_storeu_pd(k.acc.as_mut_ptr().add(slot), neg_zero);
        _mm256_storeu_pd(k.pair_hi.as_mut_ptr().add(slot), neg_zero);
        _mm256_storeu_pd(k.pair_lo.as_mut_ptr().add(slot), neg_zero);
        (k.meta.as_mut_ptr().add(slot) as *mut u32).write_unaligned(0);
    }
}

/// A slot's ten digits as exact f64 terms (digit i times 2^(32 i - 149)),
/// summed into four lanes, and the same for their magnitudes: what both
/// estimate roundings add the register to.
///
/// # Safety
/// AVX2 is present, and slot < slots.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn digit_sums_avx2(k: &KulischWindow, slot: usize) -> (__m256d, __m256d) {
    const _: () = assert!(DIGITS == 10, "two 4-digit vectors and a 2-digit one");
    // Digit i times its weight 2^(32 i - 149) as an exact f64, without a
    // multiply: 1.5 * 2^(52 + 32 i - 149) has a unit in the last place of
    // exactly that weight, so adding the digit (|d| < 2^51; digits stay below
    // 2^45 between flushes) to its bits gives magic + d * weight, and
    // subtracting magic leaves d * weight.
    const MAGIC: [u64; 12] = {
        let mut m = [0u64; 12];
        let mut i = 0;
        while i < 12 {
            m[i] = ((1023 + 52 + 32 * i as u64 - 149) << 52) | 1 << 51;
            i += 1;
        }
        m
    };
    let terms = |d: __m256i, i: usize| {
        let m = _mm256_setr_epi64x(MAGIC[i] as i64, MAGIC[i + 1] as i64, MAGIC[i + 2] as i64, MAGIC[i + 3] as i64);
        _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(d, m)), _mm256_castsi256_pd(m))
    };
    // SAFETY: slot < slots: digits slot * 10 .. slot * 10 + 10 are the slot's own; the
    // last two are read as 128 bits and widened with zeros (whose terms are 0).
    let (d0, d1, d2) = unsafe {
        let p = k.digits.as_ptr().add(slot * DIGITS);
        (_mm256_loadu_si256(p as *const __m256i), _mm256_loadu_si256(p.add(4) as *const __m256i), _mm256_set_m128i(_mm_setzero_si128(), _mm_loadu_si128(p.add(8) as *const __m128i)))
    };
    let (t0, t1, t2) = (terms(d0, 0), terms(d1, 4), terms(d2, 8));
    let abs = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
    (_mm256_add_pd(_mm256_add_pd(t0, t1), t2), _mm256_add_pd(_mm256_add_pd(_mm256_and_pd(t0, abs), _mm256_and_pd(t1, abs)), _mm256_and_pd(t2, abs)))
}

/// Four consecutive slots `[slot, slot + 4)` rounded as
/// `round_fp32_estimate_avx2` rounds each (the same eleven terms a slot and
/// the same error bound, summed in another order), a slot a vector lane:
/// `Some` only when all four are estimable and settle -- then, with `clear`,
/// all four are cleared too; `None` changes nothing (the caller rounds them
/// one by one).
///
/// # Safety
/// AVX2 is present, and slot + 4 <= slots.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn round_fp32_estimate4_avx2(k: &mut KulischWindow, slot: usize, clear: bool) -> Option<[u32; 4]> {
    use crate::kulisch::{F_LIMBS, F_NAN, F_NEG_INF, F_POS_INF};
    const NOT_ESTIMABLE: u32 = u32::from_ne_bytes([F_LIMBS | F_NAN | F_POS_INF | F_NEG_INF; 4]);
    // SAFETY: slot + 4 <= slots = the flags' length; unaligned.
    let meta = unsafe { (k.meta.as_ptr().add(slot) as *const u32).read_unaligned() };
    if meta & NOT_ESTIMABLE != 0 {
        return None;
    }
    let abs = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
    // SAFETY (all four): slot + j < slots.
    let ((s0, m0), (s1, m1)) = unsafe { (digit_sums_avx2(k, slot), digit_sums_avx2(k, slot + 1)) };
    let ((s2, m2), (s3, m3)) = unsafe { (digit_sums_avx2(k, slot + 2), digit_sums_avx2(k, slot + 3)) };
    // Lane j: the sum of slot j's four lanes.
    macro_rules! across {
        ($a:expr, $b:expr, $c:expr, $d:expr) => {{
            let (h01, h23) = (_mm256_hadd_pd($a, $b), _mm256_hadd_pd($c, $d));
            _mm256_add_pd(_mm256_permute2f128_pd::<0x20>(h01, h23), _mm256_permute2f128_pd::<0x31>(h01, h23))
        }};
    }
    // SAFETY: slot + 4 <= slots <= the registers' lengths.
    let (regs, hi, lo) = unsafe { (_mm256_loadu_pd(k.acc.as_ptr().add(slot)), _mm256_loadu_pd(k.pair_hi.as_ptr().add(slot)), _mm256_loadu_pd(k.pair_lo.as_ptr().add(slot))) };
    let sum = _mm256_add_pd(across!(s0, s1, s2, s3), _mm256_add_pd(regs, _mm256_add_pd(hi, lo)));
    let mag = _mm256_add_pd(across!(m0, m1, m2, m3), _mm256_add_pd(_mm256_and_pd(regs, abs), _mm256_add_pd(_mm256_and_pd(hi, abs), _mm256_and_pd(lo, abs))));
    // `settle_estimate`, four lanes at once; a zero magnitude (the sign of
    // an exact zero) is left to it.
    let err = _mm256_mul_pd(mag, _mm256_set1_pd(f64::from_bits((1023 - 48) << 52)));
    let zero = _mm256_movemask_pd(_mm256_cmp_pd(mag, _mm256_setzero_pd(), _CMP_EQ_OQ));
    let fits = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_add_pd(_mm256_and_pd(sum, abs), err), _mm256_set1_pd(k.fast_limit()), _CMP_LT_OQ));
    let (lo, hi) = (_mm256_cvtpd_ps(_mm256_sub_pd(sum, err)), _mm256_cvtpd_ps(_mm256_add_pd(sum, err)));
    let same = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(_mm_castps_si128(lo), _mm_castps_si128(hi))));
    if zero != 0 || fits != 0xf || same != 0xf {
        return None;
    }
    let mut bits = [0u32; 4];
    // SAFETY: `bits` holds 16 bytes.
    unsafe { _mm_storeu_si128(bits.as_mut_ptr() as *mut __m128i, _mm_castps_si128(lo)) };
    if clear {
        // SAFETY: as for the loads: the four slots' forty digits, registers and flags.
        unsafe {
            let p = k.digits.as_mut_ptr().add(slot * DIGITS) as *mut __m256i;
            // Four slots' digits are 4 * DIGITS i64, DIGITS 32-byte vectors.
            for j in 0..4 * DIGITS / 4 {
                _mm256_storeu_si256(p.add(j), _mm256_setzero_si256());
            }
            clear_registers4(k, slot);
        }
    }
    Some(bits)
}

/// `round_fp32_estimate4_avx2` over consecutive groups of four slots from
/// `slot`, at most `groups` of them, while each group has digits (the other
/// kinds of group round faster in the caller's loop) and settles: the
/// values go to `out` (4 bytes a slot, from its start); returns the groups
/// done. One call a run of such groups (full-range data: the whole run), so
/// that the estimate's constants stay in registers and the caller's
/// all-fast loop keeps its own.
///
/// # Safety
/// AVX2 is present, and slot + 4 * groups <= slots (a group without its 16
/// bytes in `out` is not done).
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn round_fp32_estimate4_run_avx2(k: &mut KulischWindow, slot: usize, groups: usize, out: &mut [u8], clear: bool) -> usize {
    const SLOW: u32 = u32::from_ne_bytes([F_SLOW; 4]);
    let mut done = 0;
    for (g, o) in out.chunks_exact_mut(16).take(groups).enumerate() {
        let at = slot + 4 * g;
        // The first group is the caller's choice; a later one goes on only with digits.
        if g > 0 && u32::from_ne_bytes([k.meta[at], k.meta[at + 1], k.meta[at + 2], k.meta[at + 3]]) & SLOW == 0 {
            break;
        }
        // SAFETY: AVX2 is present; at + 4 <= slots.
        let Some(bits) = (unsafe { round_fp32_estimate4_avx2(k, at, clear) }) else { break };
        for (b, v) in o.chunks_exact_mut(4).zip(bits) {
            b.copy_from_slice(&v.to_le_bytes());
        }
        done += 1;
    }
    done
}

/// The AVX2 twin of `KulischWindow::round_fp32_estimate` (the same terms
/// and the same error bound, summed in another order, which the bound
/// allows); with `clear`, a slot it settles is also cleared (its digits,
/// register and flags: such a slot has no limbs).
///
/// # Safety
/// AVX2 is present, and slot < slots.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn round_fp32_estimate_avx2(k: &mut KulischWindow, slot: usize, clear: bool) -> Option<u32> {
    if !k.estimable(slot) {
        return None;
    }
    // SAFETY: slot < slots.
    let (sum4, mag4) = unsafe { digit_sums_avx2(k, slot) };
    // The register and the pair registers (-0 when unused).
    let (v, hi, lo) = (k.acc[slot], k.pair_hi[slot], k.pair_lo[slot]);
    let across = |x: __m256d| {
        let y = _mm_add_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd::<1>(x));
        _mm_add_sd(y, _mm_unpackhi_pd(y, y))
    };
    let (sum, mag) = (_mm_cvtsd_f64(_mm_add_sd(across(sum4), _mm_set_sd(v + (hi + lo)))), _mm_cvtsd_f64(_mm_add_sd(across(mag4), _mm_set_sd(v.abs() + (hi.abs() + lo.abs())))));
    let bits = k.settle_estimate(slot, sum, mag)?;
    if clear {
        // SAFETY: as for the loads.
        unsafe {
            let p = k.digits.as_mut_ptr().add(slot * DIGITS);
            _mm256_storeu_si256(p as *mut __m256i, _mm256_setzero_si256());
            _mm256_storeu_si256(p.add(4) as *mut __m256i, _mm256_setzero_si256());
            _mm_storeu_si128(p.add(8) as *mut __m128i, _mm_setzero_si128());
        }
        (k.acc[slot], k.pair_hi[slot], k.pair_lo[slot]) = (-0.0, -0.0, -0.0);
        k.meta[slot] = 0;
    }
    Some(bits)
}
