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
            let structural = [Reason::GroupOverrun, Reason::GroupCountMismatch, Reason::ElementCountMismatch, Reason::PaddingNonZero, Reason::UnknownFormat, Reason::EmptyGroup, Reason::BadKulischWidth, Reason::ReservedNonZero]
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

#[test]
fn lint_is_clean() {
    let out = Command::new("verilator")
        .current_dir(ROOT)
        .args(["--lint-only", "-Wall", "--top-module", "prism_switch", "sv/prism_pkg.sv", "sv/prism_rx_check.sv", "sv/prism_group_walk.sv", "sv/prism_rx_validate.sv", "sv/prism_fp32_add.sv", "sv/prism_kulisch_lane.sv", "sv/prism_kulisch_round.sv", "sv/prism_ring.sv", "sv/prism_node.sv", "sv/prism_switch.sv"])
        .output()
        .expect("verilator must be installed (scripts/test.sh installs it)");
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
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
