//! prism_crc32c_512 (prism_node's frame digest, one 512-bit beat a cycle)
//! against two oracles written here: the bitwise definition (reflected
//! CRC-32C, LSB of each byte first, from 0, no final xor, over every byte
//! of every beat) and Sarwate's byte-table CRC-32C with the standard
//! conventions, related to the digest by linearity. Both are first checked
//! against the published CRC-32C check value.

use prism_rtl::{Crc32c512, CrcBeat, CrcDigest, CRC_BEAT_BYTES};

mod common;
use common::Rng;

const POLY: u32 = 0x82F6_3B78;

/// The definition: each byte LSB first through the reflected LFSR.
fn crc_bitwise(init: u32, bytes: &[u8]) -> u32 {
    let mut x = init;
    for &b in bytes {
        for i in 0..8 {
            let fb = (x ^ u32::from(b >> i)) & 1;
            x >>= 1;
            if fb != 0 {
                x ^= POLY;
            }
        }
    }
    x
}

/// Standard CRC-32C (init and final xor 0xFFFFFFFF), a byte a step from a
/// 256-entry table.
struct Crc32cTable([u32; 256]);

impl Crc32cTable {
    fn new() -> Self {
        let mut t = [0u32; 256];
        for (n, e) in t.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            }
            *e = c;
        }
        Crc32cTable(t)
    }

    fn crc(&self, bytes: &[u8]) -> u32 {
        !bytes.iter().fold(!0u32, |c, &b| self.0[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8))
    }
}

/// The digest of a frame by the second oracle: over GF(2),
/// raw(0, m) = raw(!0, m) ^ raw(!0, 0^len) = std(m) ^ std(0^len).
fn digest_std(t: &Crc32cTable, bytes: &[u8]) -> u32 {
    t.crc(bytes) ^ t.crc(&vec![0u8; bytes.len()])
}

#[test]
fn oracles_give_the_crc32c_check_value() {
    let t = Crc32cTable::new();
    assert_eq!(crc_bitwise(!0, b"123456789") ^ !0, 0xE306_9283);
    assert_eq!(t.crc(b"123456789"), 0xE306_9283);
    // The two oracles agree on digests (a zero prefix or suffix matters).
    let mut r = Rng(0x5EED_0001);
    for len in [0usize, 1, 4, 63, 64, 65, 128, 640] {
        let m: Vec<u8> = (0..len).map(|_| r.u32() as u8).collect();
        assert_eq!(crc_bitwise(0, &m), digest_std(&t, &m), "len {len}");
    }
    assert_ne!(crc_bitwise(0, &[0, 1]), crc_bitwise(0, &[1, 0]));
    assert_ne!(crc_bitwise(0, &[1]), crc_bitwise(0, &[1, 0]));
}

/// A frame of `beats` beats, masked the way prism_node masks: zero outside
/// a hashed range [hs, he) and on bytes tkeep dropped.
fn frame(r: &mut Rng, beats: usize) -> Vec<u8> {
    let len = beats * CRC_BEAT_BYTES;
    let mut f: Vec<u8> = (0..len).map(|_| r.u32() as u8).collect();
    let (hs, he) = match r.u32() % 4 {
        0 => (0, len),
        1 => (14, len - r.u32() as usize % CRC_BEAT_BYTES.min(len - 14)),
        2 => (r.u32() as usize % len, len),
        _ => {
            let a = r.u32() as usize % len;
            (a, a + r.u32() as usize % (len - a + 1))
        }
    };
    // Bytes tkeep drops: none, none, one in 8, half.
    let drop = [0, 0, 1, 4][(r.u32() % 4) as usize];
    for (i, b) in f.iter_mut().enumerate() {
        if i < hs || i >= he || r.u32() % 8 < drop {
            *b = 0;
        }
    }
    f
}

/// Streams the frames (idle(r) cycles before each beat) and checks one
/// digest per frame, in order, equal to both oracles, LATENCY cycles after
/// the frame's tlast beat.
fn check(frames: &[Vec<u8>], mut idle: impl FnMut(&mut Rng) -> u32, seed: u64, what: &str) {
    let t = Crc32cTable::new();
    let mut r = Rng(seed);
    let mut beats = Vec::new();
    let mut want = Vec::new();
    let mut cycle = 0u64;
    for f in frames {
        let n = f.len() / CRC_BEAT_BYTES;
        for (i, chunk) in f.chunks(CRC_BEAT_BYTES).enumerate() {
            let mut data = [0u8; CRC_BEAT_BYTES];
            data.copy_from_slice(chunk);
            let idle_before = idle(&mut r);
            cycle += u64::from(idle_before);
            beats.push(CrcBeat { data, last: i + 1 == n, idle_before });
            if i + 1 == n {
                let crc = crc_bitwise(0, f);
                assert_eq!(crc, digest_std(&t, f), "the oracles disagree");
                want.push(CrcDigest { crc, cycle: cycle + u64::from(Crc32c512::latency()) });
            }
            cycle += 1;
        }
    }
    let got = Crc32c512::new().run(&beats);
    let mut bad = 0;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if g != w {
            if bad < 10 {
                eprintln!("{what}: frame {i} ({} beats): rtl {:08x} in cycle {}, oracle {:08x} in cycle {}", frames[i].len() / 64, g.crc, g.cycle, w.crc, w.cycle);
            }
            bad += 1;
        }
    }
    assert_eq!(got.len(), want.len(), "{what}: {} digests for {} frames", got.len(), want.len());
    assert_eq!(bad, 0, "{what}: {bad} of {} digests differ", want.len());
}

fn random_frames(seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut r = Rng(seed);
    (0..n)
        .map(|_| {
            let beats = 1 + (r.u32() % 40) as usize;
            frame(&mut r, beats)
        })
        .collect()
}

#[test]
fn random_frames_back_to_back() {
    check(&random_frames(0xC3C3_0001, 3000), |_| 0, 1, "back to back");
}

#[test]
fn random_frames_with_idle_gaps() {
    // Gaps inside frames and between them: mostly none, some short, a few long.
    let idle = |r: &mut Rng| match r.u32() % 16 {
        0..=9 => 0,
        10..=14 => 1 + r.u32() % 3,
        _ => 4 + r.u32() % 20,
    };
    check(&random_frames(0xC3C3_0002, 3000), idle, 2, "idle gaps");
}

#[test]
fn one_beat_frames_every_cycle() {
    let mut r = Rng(0xC3C3_0003);
    let frames: Vec<Vec<u8>> = (0..4000).map(|_| frame(&mut r, 1)).collect();
    check(&frames, |_| 0, 3, "one-beat frames");
    // And alternating with short frames, gaps now and then.
    let frames: Vec<Vec<u8>> = (0..2000).map(|i| frame(&mut r, if i % 2 == 0 { 1 } else { 2 + i % 3 })).collect();
    check(&frames, |r| u32::from(r.u32() % 7 == 0), 4, "one-beat frames among short ones");
}

#[test]
fn every_single_bit() {
    // Each data bit alone, in a one-beat frame (one column of F each), then
    // followed by a zero beat (that column through A), then the zero frame.
    let mut frames = Vec::new();
    for bit in 0..8 * CRC_BEAT_BYTES {
        let mut f = vec![0u8; CRC_BEAT_BYTES];
        f[bit / 8] = 1 << (bit % 8);
        frames.push(f.clone());
        f.extend_from_slice(&[0u8; CRC_BEAT_BYTES]);
        frames.push(f);
    }
    frames.push(vec![0u8; 3 * CRC_BEAT_BYTES]);
    check(&frames, |_| 0, 5, "single bits");
}

#[test]
fn reset_forgets_an_unfinished_frame() {
    let mut r = Rng(0xC3C3_0004);
    let mut m = Crc32c512::new();
    let open: Vec<CrcBeat> = (0..3).map(|_| CrcBeat { data: [0xA5; CRC_BEAT_BYTES], last: false, idle_before: 0 }).collect();
    assert!(m.run(&open).is_empty(), "no tlast, no digest");
    let f = frame(&mut r, 2);
    let beats: Vec<CrcBeat> = f
        .chunks(CRC_BEAT_BYTES)
        .enumerate()
        .map(|(i, c)| {
            let mut data = [0u8; CRC_BEAT_BYTES];
            data.copy_from_slice(c);
            CrcBeat { data, last: i == 1, idle_before: 0 }
        })
        .collect();
    let got = m.run(&beats);
    assert_eq!(got, vec![CrcDigest { crc: crc_bitwise(0, &f), cycle: 1 + u64::from(Crc32c512::latency()) }]);
}
