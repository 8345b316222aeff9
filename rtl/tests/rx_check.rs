//! prism_rx_validate (prism_rx_check + prism_group_walk, Verilator) against the Rust parser: the golden and
//! malformed frames and 5,000 mutated frames, with and without idle
//! gaps, back to back (1-beat frames every cycle too), each verdict
//! `RxCheck::LATENCY` cycles after its last beat; the package matches the
//! wire module; lint is clean.

use prism_dataplane::golden::{self, SWITCH_MAC};
use prism_dataplane::wire::*;
use prism_rtl::{RxCheck, Verdict};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Rejects of records the hardware does not walk yet: Kulisch value states,
/// STAGE bindings, capability records and PROGRESS holes.
fn body_level(frame: &[u8], e: &Error) -> bool {
    use Reason::*;
    let class = Class::from(frame.get(ETH_HEADER_LEN + 1).copied().unwrap_or(0));
    let data = matches!(class, Class::DATA | Class::RESULT);
    match e.reason {
        BadKulischValue | BadHoles => true,
        ReservedNonZero if data => false,
        ReservedNonZero => {
            let body = ETH_HEADER_LEN
                + match class {
                    Class::CONTROL => offsets::control::BODY,
                    Class::PROGRESS => offsets::progress::HOLES,
                    _ => offsets::data::BODY,
                };
            let header_checked = [ETH_HEADER_LEN + offsets::control::BODY + offsets::ack::RESERVED, ETH_HEADER_LEN + offsets::control::BODY + offsets::context::RESERVED.start];
            e.offset >= body && !(class == Class::CONTROL && header_checked.contains(&e.offset))
        }
        _ => false,
    }
}

/// What the checker must say about a frame, from the Rust parser.
fn check(frame: &[u8], v: &Verdict) -> Result<(), String> {
    let prism = frame.len() >= ETH_HEADER_LEN && frame[12..14] == ETHERTYPE.to_be_bytes();
    let want = match parse_frame(frame, &Limits::default()) {
        Ok(p) => {
            let walk = p.prism.is_some_and(|r| match r {
                PrismRepr::Data(d) => d.groups().any(|g| matches!(g.format, prism_arith::NumFormat::Kulisch { .. })),
                PrismRepr::Control(c) => matches!(c.body, ControlBody::Stage { bindings, .. } if !bindings.is_empty()) || matches!(c.body, ControlBody::Caps(r) if !r.is_empty()),
                PrismRepr::Progress(g) => !g.holes.is_empty(),
            });
            (true, None, walk)
        }
        // A Kulisch value state is checked after the group walk; a frame whose
        // group structure is also broken reports that first in hardware.
        Err(e) if body_level(frame, &e) => (true, None, true),
        Err(e) => (false, Some((e.reason.index() as u8, e.offset as u16)), false),
    };
    let got = (v.ok, (!v.ok).then_some((v.reason, v.offset)), v.body_walk);
    // The hardware checks Kulisch value states after the walk: when the Rust parser
    // stops at a bad value, the hardware may instead report a structural error
    // found later in the same frame (a later group, or the declared counts).
    if let Err(e) = parse_frame(frame, &Limits::default()) {
        if e.reason == Reason::BadKulischValue && !v.ok {
            let later = v.offset as usize > e.offset || [46, 48].contains(&v.offset);
            let structural = [
                Reason::GroupOverrun,
                Reason::GroupCountMismatch,
                Reason::ElementCountMismatch,
                Reason::PaddingNonZero,
                Reason::UnknownFormat,
                Reason::EmptyGroup,
                Reason::BadKulischWidth,
                Reason::ReservedNonZero,
            ]
            .iter()
            .any(|r| r.index() as u8 == v.reason);
            if later && structural {
                return Ok(());
            }
        }
    }
    if got != want || v.prism != prism {
        return Err(format!("RTL {v:?}, Rust {:?}", parse_frame(frame, &Limits::default()).err()));
    }
    if prism && v.ok && frame.len() >= 16 {
        if v.class != frame[15] {
            return Err(format!("class {} != {}", v.class, frame[15]));
        }
        if v.local != (frame[..6] == SWITCH_MAC.0) {
            return Err("ownership".into());
        }
    }
    Ok(())
}

fn all_frames() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = golden::frames().into_iter().map(|g| (g.name.to_string(), g.bytes)).collect();
    v.extend(golden::malformed().into_iter().map(|m| (format!("malformed_{}", m.name), m.bytes)));
    v
}

#[test]
fn package_matches_the_wire_module() {
    let on_disk = std::fs::read_to_string(format!("{ROOT}/sv/prism_pkg.sv")).unwrap();
    assert_eq!(on_disk, prism_rtl::svpkg::generate(), "rtl/sv/prism_pkg.sv is stale: run `cargo run -p prism-rtl --bin prism-rtl-gen`");
}

/// Every module in rtl/sv, each as its own top (the modules it uses found
/// by file name), lint-clean under -Wall: the switch and every unit.
#[test]
fn lint_is_clean() {
    let mut tops: Vec<String> =
        std::fs::read_dir(format!("{ROOT}/sv")).unwrap().filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".sv").map(String::from)).filter(|m| m != "prism_pkg").collect();
    tops.sort();
    assert!(tops.iter().any(|t| t == "prism_switch") && tops.len() >= 10, "{tops:?}");
    for top in &tops {
        let out = Command::new("verilator")
            .current_dir(ROOT)
            .args(["--lint-only", "-Wall", "--top-module", top, "-y", "sv", "sv/prism_pkg.sv", &format!("sv/{top}.sv")])
            .output()
            .expect("verilator must be installed (scripts/test.sh installs it)");
        assert!(out.status.success() && out.stderr.is_empty(), "{top}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn the_verdict_comes_latency_cycles_after_the_last_beat() {
    let f = &all_frames()[0].1;
    for gap in [0, 2] {
        let mut rtl = RxCheck::new(SWITCH_MAC.0);
        let mut v = rtl.send(f, gap);
        let tlast = rtl.tlast_cycle();
        v.extend(rtl.drain());
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].cycle - tlast, RxCheck::LATENCY, "gap {gap}");
    }
}

#[test]
fn golden_and_malformed_frames_get_the_rust_verdict() {
    for gap in [0, 3] {
        let mut rtl = RxCheck::new(SWITCH_MAC.0);
        for (name, f) in all_frames() {
            let mut v = rtl.send(&f, gap);
            let tlast = rtl.tlast_cycle();
            v.extend(rtl.drain());
            assert_eq!(v.len(), 1, "{name}: one verdict per frame");
            assert_eq!(v[0].cycle, tlast + RxCheck::LATENCY, "{name}: a fixed latency");
            check(&f, &v[0]).unwrap_or_else(|e| panic!("{name} (gap {gap}): {e}"));
        }
    }
}

#[test]
fn back_to_back_frames_keep_their_order_and_verdicts() {
    let frames = all_frames();
    let mut rtl = RxCheck::new(SWITCH_MAC.0);
    let mut verdicts = Vec::new();
    let mut tlasts = Vec::new();
    for (_, f) in &frames {
        verdicts.extend(rtl.send(f, 0));
        tlasts.push(rtl.tlast_cycle());
    }
    verdicts.extend(rtl.drain());
    assert_eq!(verdicts.len(), frames.len());
    for (((name, f), v), t) in frames.iter().zip(&verdicts).zip(&tlasts) {
        check(f, v).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(v.cycle, t + RxCheck::LATENCY, "{name}: a fixed latency");
    }
}

/// 1-beat frames (cuts of every frame, so their verdicts differ: truncations
/// at their own offsets, short CONTROL frames accepted) one every cycle, then
/// with random idle gaps: one verdict a frame, in order, at a fixed latency.
#[test]
fn one_beat_frames_every_cycle_keep_their_order_and_verdicts() {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut frames: Vec<(String, Vec<u8>)> = Vec::new();
    for (name, f) in all_frames() {
        for cut in [f.len().min(64), f.len().min(60), 1 + next() as usize % f.len().min(64)] {
            frames.push((format!("{name}[..{cut}]"), f[..cut].to_vec()));
        }
    }
    for max_gap in [0u64, 3] {
        let mut rtl = RxCheck::new(SWITCH_MAC.0);
        let mut verdicts = Vec::new();
        let mut tlasts = Vec::new();
        for (_, f) in &frames {
            assert!(f.len() <= 64);
            let gap = if max_gap == 0 { 0 } else { (next() % (max_gap + 1)) as usize };
            verdicts.extend(rtl.send(f, gap));
            tlasts.push(rtl.tlast_cycle());
        }
        verdicts.extend(rtl.drain());
        assert_eq!(verdicts.len(), frames.len(), "gaps up to {max_gap}: one verdict per frame");
        for (((name, f), v), t) in frames.iter().zip(&verdicts).zip(&tlasts) {
            check(f, v).unwrap_or_else(|e| panic!("{name} (gaps up to {max_gap}): {e}"));
            assert_eq!(v.cycle, t + RxCheck::LATENCY, "{name} (gaps up to {max_gap}): a fixed latency");
        }
    }
}

#[test]
fn mutated_frames_agree_with_rust() {
    // A deterministic xorshift so the test needs no RNG crate.
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let frames = all_frames();
    let mut rtl = RxCheck::new(SWITCH_MAC.0);
    for i in 0..5000 {
        let (name, base) = &frames[next() as usize % frames.len()];
        let mut f = base.clone();
        // Header edits and body edits (descriptors, values, padding), sometimes a cut.
        for _ in 0..(1 + next() % 3) {
            let span = if next() % 2 == 0 { f.len().min(96) } else { f.len() };
            let at = next() as usize % span;
            f[at] = next() as u8;
        }
        if next() % 8 == 0 {
            let cut = next() as usize % (f.len() + 1);
            f.truncate(cut.max(1));
        }
        let mut v = rtl.send(&f, (i % 2) as usize);
        let tlast = rtl.tlast_cycle();
        v.extend(rtl.drain());
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].cycle, tlast + RxCheck::LATENCY);
        check(&f, &v[0]).unwrap_or_else(|e| panic!("mutation {i} of {name}: {e}\nframe {:02x?}", &f[..f.len().min(64)]));
    }
}

// ---------------------------------------------------------------- the walk under stress
// Frames built around hand-made bodies: the walker's cases by position in the
// 64-byte beat (the body starts at frame offset 56, word 14 of beat 0), each
// verdict against the Rust parser. Frames go back to back (gap 0), so every
// batch also checks one verdict per frame, in order.

mod common;
use common::Rng;

const BODY: usize = ETH_HEADER_LEN + offsets::data::BODY;

/// A DATA frame with the golden DATA_FP32 header around `body`, declaring `groups` groups and `count` elements.
fn data_frame(body: &[u8], groups: u8, count: u16) -> Vec<u8> {
    let at = |o: usize| ETH_HEADER_LEN + o;
    let mut f = golden::DATA_FP32[..BODY].to_vec();
    f[at(offsets::data::ELEMENT_COUNT.start)..at(offsets::data::ELEMENT_COUNT.end)].copy_from_slice(&count.to_be_bytes());
    f[at(offsets::data::GROUP_COUNT)] = groups;
    f[at(offsets::data::BODY_LEN.start)..at(offsets::data::BODY_LEN.end)].copy_from_slice(&(body.len() as u16).to_be_bytes());
    f.extend_from_slice(body);
    if f.len() < 60 {
        f.resize(60, 0);
    }
    f
}

/// A descriptor word: format nibble, width field, count.
fn descriptor_word(fmt: u8, width: u16, count: u16) -> [u8; 4] {
    ((u32::from(fmt) << descriptor::FORMAT_SHIFT) | ((u32::from(width) & descriptor::WIDTH_MASK) << descriptor::WIDTH_SHIFT) | u32::from(count)).to_be_bytes()
}

fn value_bytes(fmt: FormatCode, width: u16) -> usize {
    match fmt {
        FormatCode::INT8 => 1,
        FormatCode::FP16 | FormatCode::BF16 => 2,
        FormatCode::FP32 => 4,
        _ => width as usize + 2,
    }
}

/// A well-formed group: `count` values (non-zero bytes; Kulisch values are +0), zero padding.
fn good_group(fmt: FormatCode, width: u16, count: u16) -> Vec<u8> {
    let vb = value_bytes(fmt, width);
    let mut g = descriptor_word(fmt.into(), if fmt == FormatCode::KULISCH { width } else { 0 }, count).to_vec();
    for _ in 0..count {
        if fmt == FormatCode::KULISCH {
            g.push(KulischState::POS_ZERO.into());
            g.extend(std::iter::repeat(0).take(vb - 1));
        } else {
            g.extend(std::iter::repeat(0x3c).take(vb));
        }
    }
    while g.len() % 4 != 0 {
        g.push(0);
    }
    g
}

/// Well-formed groups filling exactly `len` bytes (a multiple of 4, not 4): one
/// INT8 group, or (`tiny`) INT8 groups of one value (8 bytes) after one of 4 or 8 values.
fn filler(len: usize, tiny: bool) -> (Vec<u8>, u8, u16) {
    assert!(len % 4 == 0 && len != 4);
    if len == 0 {
        return (Vec::new(), 0, 0);
    }
    if !tiny || len < 16 {
        return (good_group(FormatCode::INT8, 0, (len - 4) as u16), 1, (len - 4) as u16);
    }
    let first = if len % 8 == 0 { 8 } else { 12 };
    let mut body = good_group(FormatCode::INT8, 0, (first - 4) as u16);
    let (mut groups, mut count) = (1u8, (first - 4) as u16);
    while body.len() < len {
        body.extend(good_group(FormatCode::INT8, 0, 1));
        groups += 1;
        count += 1;
    }
    (body, groups, count)
}

/// Sends `frames` back to back; every verdict must match the Rust parser's,
/// one a frame, in order, each a fixed number of cycles after its last beat.
fn run_batch(rtl: &mut RxCheck, frames: &[(String, Vec<u8>)]) {
    let mut verdicts = Vec::new();
    for (_, f) in frames {
        verdicts.extend(rtl.send(f, 0));
    }
    verdicts.extend(rtl.drain());
    assert_eq!(verdicts.len(), frames.len(), "one verdict per frame");
    let mut beats = 0u64;
    let mut latency = None;
    for ((name, f), v) in frames.iter().zip(&verdicts) {
        check(f, v).unwrap_or_else(|e| panic!("{name}: {e}\nbody {:02x?}", &f[BODY.min(f.len())..f.len().min(BODY + 160)]));
        beats += f.chunks(64).count() as u64;
        let l = v.cycle - beats;
        assert_eq!(*latency.get_or_insert(l), l, "{name}: the verdict's latency changed");
    }
}

/// The reason and offset the Rust parser gives, for assertions that a case tests what it says.
fn rust_error(f: &[u8]) -> Option<(Reason, usize)> {
    parse_frame(f, &Limits::default()).err().map(|e| (e.reason, e.offset))
}

#[test]
fn tiny_groups_eight_descriptors_a_beat() {
    let mut rtl = RxCheck::new(SWITCH_MAC.0);
    let mut frames = Vec::new();
    for n in [1usize, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 200, 254, 255] {
        for fmt in [FormatCode::INT8, FormatCode::FP16, FormatCode::BF16, FormatCode::FP32] {
            let body: Vec<u8> = (0..n).flat_map(|_| good_group(fmt, 0, 1)).collect();
            let (g, c) = (n as u8, n as u16);
            frames.push((format!("{n} x {fmt:?}[1]"), data_frame(&body, g, c)));
            assert_eq!(rust_error(&frames.last().unwrap().1), None);
            // Declared one group fewer: the last descriptor is one too many.
            if n > 1 {
                frames.push((format!("{n} x {fmt:?}[1], {} declared", n - 1), data_frame(&body, g - 1, c)));
                assert_eq!(rust_error(&frames.last().unwrap().1).map(|e| e.0), Some(Reason::GroupCountMismatch));
            }
            if n < 255 {
                frames.push((format!("{n} x {fmt:?}[1], {} declared", n + 1), data_frame(&body, g + 1, c)));
            }
            frames.push((format!("{n} x {fmt:?}[1], count + 1"), data_frame(&body, g, c + 1)));
        }
        // A mix of one-value groups of every short format.
        let fmts = [FormatCode::INT8, FormatCode::FP16, FormatCode::FP32, FormatCode::BF16];
        let body: Vec<u8> = (0..n).flat_map(|i| good_group(fmts[i % 4], 0, 1 + (i % 3) as u16)).collect();
        let count: u16 = (0..n).map(|i| 1 + (i % 3) as u16).sum();
        frames.push((format!("{n} mixed"), data_frame(&body, n as u8, count)));
    }
    run_batch(&mut rtl, &frames);
}

#[test]
fn groups_ending_at_beat_boundaries_and_pad_words_in_the_last_word() {
    let mut rtl = RxCheck::new(SWITCH_MAC.0);
    let mut frames = Vec::new();
    // 8 bytes to the first boundary (64), then whole beats of FP32 x15, INT8 x60, FP16 x30.
    for beats in 1..6 {
        let mut body = good_group(FormatCode::INT8, 0, 4);
        let (mut g, mut c) = (1u8, 4u16);
        for i in 0..beats {
            let (fmt, n) = [(FormatCode::FP32, 15), (FormatCode::INT8, 60), (FormatCode::FP16, 30)][i % 3];
            body.extend(good_group(fmt, 0, n));
            g += 1;
            c += n;
        }
        frames.push((format!("{beats} whole beats"), data_frame(&body, g, c)));
        // And a descriptor (a one-value group) as the first word of the beat after.
        body.extend(good_group(FormatCode::INT8, 0, 1));
        frames.push((format!("{beats} whole beats + 1"), data_frame(&body, g + 1, c + 1)));
    }
    // A group whose last value word is the last word of a beat, with 1..3
    // padding bytes, its descriptor `span` beats earlier (or in the same beat),
    // the next descriptor at word 0 of the next beat (or the body's end).
    for span in 0..4usize {
        for pad in 1..4usize {
            for tail in [false, true] {
                for bad in 0..=pad {
                    // The group starts at 64 (after an 8-byte filler) and ends at 64 x (span + 2).
                    let end = 64 * (span + 2);
                    let n = (end - 64 - 4 - pad) as u16;
                    let mut body = good_group(FormatCode::INT8, 0, 4);
                    body.extend(good_group(FormatCode::INT8, 0, n));
                    let (mut g, mut c) = (2u8, 4 + n);
                    if bad > 0 {
                        // A non-zero padding byte: the bad-th of the pad.
                        let at = end - BODY - pad + bad - 1;
                        body[at] = 0x80;
                    }
                    if tail {
                        body.extend(good_group(FormatCode::FP32, 0, 2));
                        g += 1;
                        c += 2;
                    }
                    let f = data_frame(&body, g, c);
                    if bad > 0 {
                        assert_eq!(rust_error(&f), Some((Reason::PaddingNonZero, end - pad + bad - 1)));
                    }
                    frames.push((format!("span {span} pad {pad} bad {bad} tail {tail}"), f));
                }
            }
        }
    }
    run_batch(&mut rtl, &frames);
}

#[test]
fn kulisch_groups_spanning_beats() {
    let mut rtl = RxCheck::new(SWITCH_MAC.0);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut frames = Vec::new();
    for i in 0..300 {
        let mut body = Vec::new();
        let (mut g, mut c) = (0u8, 0u16);
        while g < 4 && body.len() < 6000 {
            let width = 34 + (rng.next() % 478) as u16;
            let n = 1 + (rng.next() % 12) as u16;
            if body.len() + 4 + n as usize * (width as usize + 2) > 8000 {
                break;
            }
            body.extend(good_group(FormatCode::KULISCH, width, n));
            g += 1;
            c += n;
            if rng.next() % 2 == 0 {
                let n = 1 + (rng.next() % 40) as u16;
                body.extend(good_group(FormatCode::FP16, 0, n));
                g += 1;
                c += n;
            }
        }
        if g == 0 {
            body.extend(good_group(FormatCode::KULISCH, 34, 1));
            g = 1;
            c = 1;
        }
        // Some frames get a non-zero padding byte or a changed descriptor byte.
        match i % 4 {
            1 => {
                let at = rng.next() as usize % body.len();
                body[at] ^= 1 << (rng.next() % 8);
            }
            2 => c = c.wrapping_add(1),
            _ => {}
        }
        frames.push((format!("kulisch frame {i}"), data_frame(&body, g, c)));
    }
    run_batch(&mut rtl, &frames);
}

/// Every structural reject with its descriptor (or padding word) in every
/// word of a beat: beats 0 (words 14, 15), 1 and 2.
#[test]
fn every_reject_in_every_word_of_a_beat() {
    let mut rtl = RxCheck::new(SWITCH_MAC.0);
    let mut frames: Vec<(String, Vec<u8>)> = Vec::new();
    let mut reasons = std::collections::BTreeSet::new();
    for target in (BODY..3 * 64).step_by(4) {
        let lead = target - BODY;
        for tiny in [false, true] {
            // A descriptor at `target` (none can sit at 60: a group takes 8 bytes at least).
            if lead != 4 {
                let (pre, pg, pc) = filler(lead, tiny);
                let after = good_group(FormatCode::FP32, 0, 3);
                let with = |desc: [u8; 4], rest: &[u8], body_len: Option<usize>, g: u8, c: u16| {
                    let mut b = pre.clone();
                    b.extend_from_slice(&desc);
                    b.extend_from_slice(rest);
                    b.extend_from_slice(&after);
                    if let Some(l) = body_len {
                        b.truncate(l);
                    }
                    data_frame(&b, pg + g, pc + c)
                };
                let vals = [0x3cu8; 8];
                let mut reserved = descriptor_word(4, 0, 2);
                reserved[0] |= 0x02;
                let cases: Vec<(&str, Vec<u8>)> = vec![
                    ("reserved bits", with(reserved, &vals, None, 2, 5)),
                    ("kulisch width 33", with(descriptor_word(5, 33, 1), &[1; 36], None, 2, 4)),
                    ("unknown format 6", with(descriptor_word(6, 0, 2), &vals, None, 2, 5)),
                    ("unknown format 0", with(descriptor_word(0, 0, 2), &vals, None, 2, 5)),
                    ("width on FP32", with(descriptor_word(4, 1, 2), &vals, None, 2, 5)),
                    ("empty group", with(descriptor_word(4, 0, 0), &vals, None, 2, 3)),
                    ("overrun", with(descriptor_word(4, 0, 9), &vals, None, 2, 12)),
                    ("overrun by one byte", with(descriptor_word(1, 0, 25), &vals, None, 2, 28)),
                    ("values to the body's end", with(descriptor_word(1, 0, 24), &vals, None, 1, 24)),
                    ("one group too many", with(descriptor_word(4, 0, 2), &vals, None, 0, 5)),
                    ("one too many, bad fields", with(descriptor_word(6, 1, 0), &vals, None, 0, 5)),
                    ("the group after one too many", with(descriptor_word(4, 0, 2), &vals, None, 1, 5)),
                    ("too few groups", with(descriptor_word(4, 0, 2), &vals, None, 3, 5)),
                    ("element count", with(descriptor_word(4, 0, 2), &vals, None, 2, 6)),
                    ("good", with(descriptor_word(4, 0, 2), &vals, None, 2, 5)),
                ];
                let mut cases = cases;
                // The descriptor crosses the body's end (1..3 bytes of it in the body), or ends it.
                for k in 1..4 {
                    cases.push(("descriptor cut", with(descriptor_word(4, 0, 2), &vals, Some(lead + k), 1, 0)));
                }
                cases.push(("body ends at it", with(descriptor_word(4, 0, 2), &vals, Some(lead), 0, 0)));
                for (what, f) in cases {
                    reasons.insert(format!("{:?}", rust_error(&f).map(|e| e.0)));
                    frames.push((format!("{what} at {target} (tiny {tiny})"), f));
                }
            }
            // A padding word at `target`: an INT8 group ending p bytes before it ends, a non-zero pad byte.
            for p in 1..4usize {
                for bad in 1..=p {
                    // The group's descriptor at 56 (lead 0) or after a filler, when there is room.
                    for start in [BODY, BODY + 8] {
                        if start + 4 > target {
                            continue;
                        }
                        let (pre, pg, pc) = filler(start - BODY, tiny);
                        let n = (target + 4 - p - (start + 4)) as u16;
                        if n == 0 {
                            continue;
                        }
                        let mut b = pre;
                        b.extend(good_group(FormatCode::INT8, 0, n));
                        let at = target + 4 - p + bad - 1 - BODY;
                        b[at] = 0x01;
                        b.extend(good_group(FormatCode::INT8, 0, 5));
                        let f = data_frame(&b, pg + 2, pc + n + 5);
                        assert_eq!(rust_error(&f), Some((Reason::PaddingNonZero, target + 4 - p + bad - 1)));
                        frames.push((format!("padding {p} bad {bad} in the word at {target} from {start} (tiny {tiny})"), f));
                    }
                }
            }
        }
    }
    // The cases are the rejects they are meant to be.
    for r in ["ReservedNonZero", "BadKulischWidth", "UnknownFormat", "EmptyGroup", "GroupOverrun", "GroupCountMismatch", "ElementCountMismatch"] {
        assert!(reasons.iter().any(|x| x.contains(r)), "no case gives {r}: {reasons:?}");
    }
    assert!(reasons.contains("None"));
    run_batch(&mut rtl, &frames);
}

#[test]
fn one_and_two_beat_frames_back_to_back() {
    let mut rtl = RxCheck::new(SWITCH_MAC.0);
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut frames = Vec::new();
    for i in 0..600 {
        // 1 beat: a body of at most 8 bytes; 2 beats: 9..72 bytes.
        let two = rng.next() % 2 == 0;
        let mut body = Vec::new();
        let (mut g, mut c) = (0u8, 0u16);
        let limit = if two { 9 + rng.next() as usize % 64 } else { 8 };
        loop {
            let fmt = [FormatCode::INT8, FormatCode::FP16, FormatCode::FP32][rng.next() as usize % 3];
            let n = 1 + (rng.next() % 4) as u16;
            let grp = good_group(fmt, 0, n);
            if body.len() + grp.len() > limit {
                break;
            }
            body.extend(grp);
            g += 1;
            c += n;
        }
        if body.is_empty() {
            body = good_group(FormatCode::INT8, 0, 1);
            g = 1;
            c = 1;
        }
        // A third of them broken somewhere in the body or the counts.
        match rng.next() % 6 {
            0 => {
                let at = rng.next() as usize % body.len();
                body[at] = rng.next() as u8;
            }
            1 => g = g.wrapping_add(if rng.next() % 2 == 0 { 1 } else { 255 }).max(1),
            _ => {}
        }
        let f = data_frame(&body, g, c);
        frames.push((format!("short frame {i}"), f));
    }
    assert!(frames.iter().any(|(_, f)| f.len() <= 64) && frames.iter().any(|(_, f)| f.len() > 64));
    run_batch(&mut rtl, &frames);
}

#[test]
fn random_bodies_with_broken_bytes() {
    let mut rtl = RxCheck::new(SWITCH_MAC.0);
    let mut rng = Rng(0x0bad_cafe_f00d_beef);
    let fmts = [FormatCode::INT8, FormatCode::FP16, FormatCode::BF16, FormatCode::FP32, FormatCode::KULISCH];
    for batch in 0..10 {
        let mut frames = Vec::new();
        for i in 0..200 {
            let mut body = Vec::new();
            let (mut g, mut c) = (0u8, 0u16);
            let groups = 1 + rng.next() % 24;
            let mut descs = Vec::new();
            for _ in 0..groups {
                let fmt = fmts[rng.next() as usize % 5];
                let n = if rng.next() % 4 == 0 { 1 + (rng.next() % 300) as u16 } else { 1 + (rng.next() % 9) as u16 };
                let grp = good_group(fmt, 34 + (rng.next() % 8) as u16, n);
                if body.len() + grp.len() > 8000 {
                    break;
                }
                descs.push(body.len());
                body.extend(grp);
                g += 1;
                c += n;
            }
            if body.is_empty() {
                body = good_group(FormatCode::INT8, 0, 1);
                descs.push(0);
                g = 1;
                c = 1;
            }
            // Break a descriptor byte, a padding or value byte, or the declared counts.
            for _ in 0..(rng.next() % 3) {
                let at = if rng.next() % 2 == 0 { descs[rng.next() as usize % descs.len()] + (rng.next() % 4) as usize } else { rng.next() as usize % body.len() };
                body[at] = if rng.next() % 2 == 0 { rng.next() as u8 } else { body[at] ^ 1 };
            }
            match rng.next() % 8 {
                0 => g = g.wrapping_sub(1).max(1),
                1 => c = c.wrapping_add(1).max(1),
                2 => {
                    // Cut the body (its length too).
                    let cut = 1 + rng.next() as usize % body.len();
                    body.truncate(cut);
                }
                _ => {}
            }
            frames.push((format!("batch {batch} frame {i}"), data_frame(&body, g, c)));
        }
        run_batch(&mut rtl, &frames);
    }
}
