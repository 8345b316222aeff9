//! The golden frames: the wire format pinned byte by byte.
//!
//! Small frames are written out by hand, field by field, straight from
//! `docs/wire-format.md`; they prove the emitters. Large frames (full
//! capacity, every ACK status, 32 holes) are built with the emitters from
//! documented inputs. `testdata/golden.pcap` holds all of them, in this order,
//! and a test keeps it equal to this module. Every implementation (the Rust
//! engine, the RTL, the Wireshark dissector) tests against that capture.
//!
//! `malformed()` breaks good frames with the views' setters, one frame per
//! reject reason, each with the exact error it must produce.

use crate::wire::*;
use prism_arith::NumFormat;

/// A golden frame: a stable name and its bytes (Ethernet header included, no FCS).
#[derive(Debug, Clone)]
pub struct Golden {
    pub name: &'static str,
    pub bytes: Vec<u8>,
}

/// A frame every parser must refuse, with the error it must give.
#[derive(Debug, Clone)]
pub struct Malformed {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    pub error: Error,
}

pub use crate::fixtures::{AM_EP, AM_MAC, SWITCH_EP, SWITCH_MAC};
/// The captures' ranks: fixed by the capture files, not `fixtures::rank_mac`.
pub const RANK0_MAC: Mac = Mac([0x02, 0, 0, 0, 0, 0x10]);
pub const RANK1_MAC: Mac = Mac([0x02, 0, 0, 0, 0, 0x11]);
pub const IDENTITY: Identity = Identity { job: 0x0102_0304_0506_0708, group: 0x10, group_gen: 1, op: 7, op_gen: 2 };

/// STAGE: SINGLE REDUCE to rank 1, FP32 in, FP32_ARRIVAL, FP32 out, 1000 elements, two ranks.
#[rustfmt::skip]
pub const STAGE: [u8; 124] = [
    // Ethernet: dst switch, src AM, EtherType 0x88B5
    0x02, 0x00, 0x00, 0x00, 0x00, 0x50,  0x02, 0x00, 0x00, 0x00, 0x00, 0xa0,  0x88, 0xb5,
    // control word: version 1.0, class CONTROL
    0x10, 0x01,
    // Job ID, Group ID 0x10, Group Gen 1, Operation ID 7, Operation Gen 2
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  0x00, 0x10,  0x00, 0x01,  0x00, 0x07,  0x00, 0x00, 0x00, 0x02,
    // Transaction ID 1, source endpoint AM 0x00a0, destination endpoint switch 0x0050
    0x00, 0x00, 0x00, 0x01,  0x00, 0xa0,  0x00, 0x50,
    // command STAGE, status 0, body length 76, fragment 0 of 1
    0x01, 0x00,  0x00, 0x4c,  0x00, 0x01,
    // context: role SINGLE, REDUCE, input FP32, FP32_ARRIVAL, partial NONE, output FP32
    0x01, 0x01, 0x04, 0x01, 0x00, 0x04,
    // Kulisch width 0, vector length 1000, destination rank 1, MTU 1500
    0x00, 0x00,  0x00, 0x00, 0x03, 0xe8,  0x00, 0x01,  0x05, 0xdc,
    // original terms 2, window 2904 elements, 8 intervals, replay depth 0, 12000 bytes
    0x00, 0x00, 0x00, 0x02,  0x00, 0x00, 0x0b, 0x58,  0x00, 0x08,  0x00, 0x00,  0x00, 0x00, 0x2e, 0xe0,
    // binding count 2, reserved
    0x00, 0x02,  0x00, 0x00,
    // binding 0: DATA in, peer RANK, stream 0, local ep 0x0100, peer ep 0x1000, rank0's MAC, port 0, rank 0, 1 term
    0x01, 0x01,  0x00, 0x00,  0x01, 0x00,  0x10, 0x00,  0x02, 0x00, 0x00, 0x00, 0x00, 0x10,  0x00, 0x00,  0x00, 0x00,  0x00, 0x01,
    // binding 1: DATA in + RESULT out, peer RANK, stream 1, local ep 0x0101, peer ep 0x1001, rank1's MAC, port 1, rank 1, 1 term
    0x03, 0x01,  0x00, 0x01,  0x01, 0x01,  0x10, 0x01,  0x02, 0x00, 0x00, 0x00, 0x00, 0x11,  0x00, 0x01,  0x00, 0x01,  0x00, 0x01,
];

/// ACK OK of the STAGE above, padded to the Ethernet minimum.
#[rustfmt::skip]
pub const ACK_STAGE_OK: [u8; 60] = [
    // Ethernet: dst AM, src switch
    0x02, 0x00, 0x00, 0x00, 0x00, 0xa0,  0x02, 0x00, 0x00, 0x00, 0x00, 0x50,  0x88, 0xb5,
    0x10, 0x01,
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  0x00, 0x10,  0x00, 0x01,  0x00, 0x07,  0x00, 0x00, 0x00, 0x02,
    // Transaction ID 1 (echoed), endpoints swapped
    0x00, 0x00, 0x00, 0x01,  0x00, 0x50,  0x00, 0xa0,
    // command ACK, status OK, body length 4, fragment 0 of 1
    0x05, 0x00,  0x00, 0x04,  0x00, 0x01,
    // ACK body: acknowledges STAGE, reserved, detail 0
    0x01, 0x00,  0x00, 0x00,
    // Ethernet padding (52 -> 60 bytes), never data
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
];

/// COMMIT, transaction 2.
#[rustfmt::skip]
pub const COMMIT: [u8; 60] = [
    0x02, 0x00, 0x00, 0x00, 0x00, 0x50,  0x02, 0x00, 0x00, 0x00, 0x00, 0xa0,  0x88, 0xb5,
    0x10, 0x01,
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  0x00, 0x10,  0x00, 0x01,  0x00, 0x07,  0x00, 0x00, 0x00, 0x02,
    0x00, 0x00, 0x00, 0x02,  0x00, 0xa0,  0x00, 0x50,
    // command COMMIT, status 0, no body, fragment 0 of 1
    0x02, 0x00,  0x00, 0x00,  0x00, 0x01,
    // Ethernet padding (48 -> 60 bytes)
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
];

/// DATA from rank 0: four FP32 values at elements 0..4.
#[rustfmt::skip]
pub const DATA_FP32: [u8; 76] = [
    // Ethernet: dst switch, src rank0
    0x02, 0x00, 0x00, 0x00, 0x00, 0x50,  0x02, 0x00, 0x00, 0x00, 0x00, 0x10,  0x88, 0xb5,
    // version 1.0, class DATA
    0x10, 0x02,
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  0x00, 0x10,  0x00, 0x01,  0x00, 0x07,  0x00, 0x00, 0x00, 0x02,
    // source endpoint rank0 0x1000, destination endpoint 0x0100, Packet ID 0
    0x10, 0x00,  0x01, 0x00,  0x00, 0x00, 0x00, 0x00,
    // First Element 0, Element Count 4, Group Count 1, flags none
    0x00, 0x00, 0x00, 0x00,  0x00, 0x04,  0x01,  0x00,
    // Body Length 20, Stream ID (contributor) 0, reserved
    0x00, 0x14,  0x00, 0x00,  0x00, 0x00,
    // descriptor: FP32 (0x4), width 0, count 4
    0x40, 0x00, 0x00, 0x04,
    // 1.0, -2.5, 0.1, -0.0 as little-endian binary32
    0x00, 0x00, 0x80, 0x3f,  0x00, 0x00, 0x20, 0xc0,  0xcd, 0xcc, 0xcc, 0x3d,  0x00, 0x00, 0x00, 0x80,
];

/// A partial [FP32 x2][KULISCH-280 x1][FP32 x2] from a child switch, elements 10..15.
#[rustfmt::skip]
pub const DATA_MIXED_PARTIAL: [u8; 120] = [
    // Ethernet: dst switch, src child switch 02:00:00:00:00:51
    0x02, 0x00, 0x00, 0x00, 0x00, 0x50,  0x02, 0x00, 0x00, 0x00, 0x00, 0x51,  0x88, 0xb5,
    0x10, 0x02,
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  0x00, 0x10,  0x00, 0x01,  0x00, 0x07,  0x00, 0x00, 0x00, 0x02,
    // source endpoint 0x0051, destination endpoint 0x0200, Packet ID 9
    0x00, 0x51,  0x02, 0x00,  0x00, 0x00, 0x00, 0x09,
    // First Element 10, Element Count 5, Group Count 3, flags none
    0x00, 0x00, 0x00, 0x0a,  0x00, 0x05,  0x03,  0x00,
    // Body Length 64, Stream ID 2, reserved
    0x00, 0x40,  0x00, 0x02,  0x00, 0x00,
    // group 1: FP32 x2: 1.5, 2.0
    0x40, 0x00, 0x00, 0x02,  0x00, 0x00, 0xc0, 0x3f,  0x00, 0x00, 0x00, 0x40,
    // group 2: KULISCH, width field 34 (W = 280), count 1
    0x50, 0x22, 0x00, 0x01,
    // state FINITE, then the 35-byte integer 2^149 + 1 (= 1 + 2^-149), little-endian
    0x00,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00,
    // group 3: FP32 x2: 3.0, -0.5 (no padding: 36 and 8 value bytes are multiples of 4)
    0x40, 0x00, 0x00, 0x02,  0x00, 0x00, 0x40, 0x40,  0x00, 0x00, 0x00, 0xbf,
];

/// RESULT to rank 1 on result path 1: the last four elements, LAST set.
#[rustfmt::skip]
pub const RESULT_FP32_LAST: [u8; 76] = [
    // Ethernet: dst rank1, src switch
    0x02, 0x00, 0x00, 0x00, 0x00, 0x11,  0x02, 0x00, 0x00, 0x00, 0x00, 0x50,  0x88, 0xb5,
    // version 1.0, class RESULT
    0x10, 0x03,
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  0x00, 0x10,  0x00, 0x01,  0x00, 0x07,  0x00, 0x00, 0x00, 0x02,
    // source endpoint 0x0101, destination endpoint rank1 0x1001, Packet ID 3
    0x01, 0x01,  0x10, 0x01,  0x00, 0x00, 0x00, 0x03,
    // First Element 996, Element Count 4, Group Count 1, flags LAST
    0x00, 0x00, 0x03, 0xe4,  0x00, 0x04,  0x01,  0x01,
    // Body Length 20, Stream ID (result path) 1, reserved
    0x00, 0x14,  0x00, 0x01,  0x00, 0x00,
    0x40, 0x00, 0x00, 0x04,
    // 4.0, +inf, canonical NaN, subnormal 2^-149
    0x00, 0x00, 0x80, 0x40,  0x00, 0x00, 0x80, 0x7f,  0x00, 0x00, 0xc0, 0x7f,  0x01, 0x00, 0x00, 0x00,
];

/// ACCUMULATION_INEXACT: terminal RESULT with LAST, no elements, groups or body.
#[rustfmt::skip]
pub const RESULT_INEXACT: [u8; 60] = [
    0x02, 0x00, 0x00, 0x00, 0x00, 0x11,  0x02, 0x00, 0x00, 0x00, 0x00, 0x50,  0x88, 0xb5,
    0x10, 0x03,
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  0x00, 0x10,  0x00, 0x01,  0x00, 0x07,  0x00, 0x00, 0x00, 0x02,
    0x01, 0x01,  0x10, 0x01,  0x00, 0x00, 0x00, 0x04,
    // First Element 0, Element Count 0, Group Count 0, flags LAST | ACCUMULATION_INEXACT
    0x00, 0x00, 0x00, 0x00,  0x00, 0x00,  0x00,  0x03,
    // Body Length 0, Stream ID 1, reserved
    0x00, 0x00,  0x00, 0x01,  0x00, 0x00,
    // Ethernet padding (56 -> 60 bytes)
    0x00, 0x00, 0x00, 0x00,
];

/// PROGRESS to rank 0 with two holes.
#[rustfmt::skip]
pub const PROGRESS_TWO_HOLES: [u8; 76] = [
    // Ethernet: dst rank0, src switch
    0x02, 0x00, 0x00, 0x00, 0x00, 0x10,  0x02, 0x00, 0x00, 0x00, 0x00, 0x50,  0x88, 0xb5,
    // version 1.0, class PROGRESS
    0x10, 0x04,
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  0x00, 0x10,  0x00, 0x01,  0x00, 0x07,  0x00, 0x00, 0x00, 0x02,
    // source endpoint 0x0100, destination endpoint 0x1000, Stream ID 0, Packet ID 5
    0x01, 0x00,  0x10, 0x00,  0x00, 0x00,  0x00, 0x00, 0x00, 0x05,
    // Committed Element 726, Interval Credits 6, Byte Credits 9000
    0x00, 0x00, 0x02, 0xd6,  0x00, 0x06,  0x00, 0x00, 0x23, 0x28,
    // status ACCEPTED, flags none, Hole Count 2, reserved
    0x00, 0x00,  0x00, 0x02,  0x00, 0x00,
    // hole 1: elements 1089..1452; hole 2: elements 1815..2178
    0x00, 0x00, 0x04, 0x41,  0x00, 0x00, 0x01, 0x6b,
    0x00, 0x00, 0x07, 0x17,  0x00, 0x00, 0x01, 0x6b,
];

/// An ARP request: not PRISM, takes the Layer-2 path.
#[rustfmt::skip]
pub const ARP_REQUEST: [u8; 60] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  0x02, 0x00, 0x00, 0x00, 0x00, 0x10,  0x08, 0x06,
    0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01,
    0x02, 0x00, 0x00, 0x00, 0x00, 0x10,  0x0a, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  0x0a, 0x00, 0x00, 0x02,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
];

fn eth(dst: Mac, src: Mac) -> EthernetRepr {
    EthernetRepr { dst, src, ethertype: ETHERTYPE }
}

fn frame(eth: EthernetRepr, p: PrismRepr<'_>) -> Vec<u8> {
    let mut buf = vec![0xa5; p.frame_len()];
    p.emit_frame(&eth, &mut buf);
    buf
}

fn control(txn: u32, command: Command, body: ControlBody<'_>, frag: (u8, u8)) -> ControlRepr<'_> {
    let to_am = matches!(command, Command::ACK | Command::CAPS_RESPONSE);
    let (src_ep, dst_ep) = if to_am { (SWITCH_EP, AM_EP) } else { (AM_EP, SWITCH_EP) };
    ControlRepr { identity: IDENTITY, txn, src_ep, dst_ep, command, frag_index: frag.0, frag_count: frag.1, body }
}

fn control_frame(txn: u32, command: Command, body: ControlBody<'_>, frag: (u8, u8)) -> Vec<u8> {
    let to_am = matches!(command, Command::ACK | Command::CAPS_RESPONSE);
    let e = if to_am { eth(AM_MAC, SWITCH_MAC) } else { eth(SWITCH_MAC, AM_MAC) };
    frame(e, PrismRepr::Control(control(txn, command, body, frag)))
}

/// A DATA/RESULT frame of one or more groups, LAST derived from `vector_len`.
fn data_frame(class: Class, first: u32, groups: &[GroupRepr<'_>], vector_len: u32, packet_id: u32) -> Vec<u8> {
    let mut body = vec![0xa5; groups_len(groups)];
    emit_groups(groups, &mut body);
    let count: u32 = groups.iter().map(|g| g.count as u32).sum();
    let last = first + count == vector_len;
    let (e, src_ep, dst_ep, stream) = if class == Class::DATA { (eth(SWITCH_MAC, RANK0_MAC), 0x1000, 0x0100, 0) } else { (eth(RANK1_MAC, SWITCH_MAC), 0x0101, 0x1001, 1) };
    let repr = DataRepr {
        class,
        identity: IDENTITY,
        src_ep,
        dst_ep,
        packet_id,
        first_element: first,
        element_count: count as u16,
        group_count: groups.len() as u8,
        flags: if last { codes::flags::LAST } else { 0 },
        stream_id: stream,
        body: &body,
    };
    frame(e, PrismRepr::Data(repr))
}

/// Deterministic value bytes: `n` values of `format`, none of them special.
pub fn pattern_values(format: NumFormat, n: usize, seed: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * format.value_bytes());
    for i in 0..n as u32 {
        let x = i.wrapping_mul(2654435761).wrapping_add(seed);
        match format {
            NumFormat::Int8 => out.push((x >> 24) as u8),
            // Exponent fields kept in the finite range: 0x3c00-ish for FP16, 0x3f80-ish for BF16.
            NumFormat::Fp16 => out.extend_from_slice(&((0x3000 | (x & 0x0fff)) as u16 ^ ((x >> 16) as u16 & 0x8000)).to_le_bytes()),
            NumFormat::Bf16 => out.extend_from_slice(&((0x3f00 | (x & 0x00ff)) as u16 ^ ((x >> 16) as u16 & 0x8000)).to_le_bytes()),
            NumFormat::Fp32 => out.extend_from_slice(&f32::to_bits((i as f32 - n as f32 / 2.0) * 0.25 + (x % 7) as f32 / 8.0).to_le_bytes()),
            NumFormat::Kulisch { width_bits } => {
                let mut v = vec![0u8; 1 + width_bits as usize / 8];
                v[1..5].copy_from_slice(&(x | 1).to_le_bytes());
                if x & 0x8000 != 0 {
                    // Negative: sign-extend through the top byte.
                    for b in &mut v[5..] {
                        *b = 0xff;
                    }
                }
                out.extend_from_slice(&v);
            }
        }
    }
    out
}

fn one_group(format: NumFormat, values: &[u8]) -> GroupRepr<'_> {
    GroupRepr { format, count: (values.len() / format.value_bytes()) as u16, values }
}

/// Six Kulisch-280 values, one per state: FINITE -3·2^-149, +0, -0, +inf, -inf, NaN.
fn kulisch_states() -> Vec<u8> {
    let mut v = Vec::new();
    let mut finite = vec![0xffu8; 36];
    finite[0] = u8::from(KulischState::FINITE);
    finite[1] = 0xfd; // -3 in two's complement
    v.extend_from_slice(&finite);
    for s in [KulischState::POS_ZERO, KulischState::NEG_ZERO, KulischState::POS_INF, KulischState::NEG_INF, KulischState::NAN] {
        let mut z = vec![0u8; 36];
        z[0] = s.into();
        v.extend_from_slice(&z);
    }
    v
}

/// A capability record for FP32 in with `accumulator`, as the SINGLE node advertises it.
pub fn sample_capability(input: FormatCode, accumulator: AccumulatorPolicy, output: OutputFormat) -> CapabilityRecord {
    let kulisch = accumulator == AccumulatorPolicy::KULISCH_FIXED;
    CapabilityRecord {
        input_format: input,
        accumulator,
        partial: PartialPolicy::NONE,
        output,
        roles: codes::caps_bits::ROLE_SINGLE,
        semantics: codes::caps_bits::SEM_REDUCE | codes::caps_bits::SEM_ALLREDUCE,
        mtus: codes::caps_bits::MTU_576 | codes::caps_bits::MTU_1500 | codes::caps_bits::MTU_9000,
        max_vector: u32::MAX,
        max_terms: 64,
        kulisch_min: if kulisch { 280 } else { 0 },
        kulisch_max: if kulisch { 4096 } else { 0 },
        max_contributors: 64,
        max_result_paths: 64,
        window_elements: 2904,
        window_intervals: 8,
        replay_depth: 0,
        window_bytes: 12000,
    }
}

/// Every golden frame, in the order of `testdata/golden.pcap`.
pub fn frames() -> Vec<Golden> {
    let g = |name, bytes: &[u8]| Golden { name, bytes: bytes.to_vec() };
    let mut out = vec![
        g("stage_single_reduce", &STAGE),
        g("ack_stage_ok", &ACK_STAGE_OK),
        g("commit", &COMMIT),
        g("data_fp32", &DATA_FP32),
        g("data_mixed_partial", &DATA_MIXED_PARTIAL),
        g("result_fp32_last", &RESULT_FP32_LAST),
        g("result_inexact", &RESULT_INEXACT),
        g("progress_two_holes", &PROGRESS_TWO_HOLES),
        g("arp_not_prism", &ARP_REQUEST),
    ];
    let empty = ControlBody::Empty;
    out.push(Golden { name: "complete", bytes: control_frame(3, Command::COMPLETE, empty, (0, 1)) });
    out.push(Golden { name: "release", bytes: control_frame(4, Command::RELEASE, empty, (0, 1)) });
    out.push(Golden { name: "abort", bytes: control_frame(5, Command::ABORT, empty, (0, 1)) });
    out.push(Golden { name: "caps_query", bytes: control_frame(6, Command::CAPS_QUERY, empty, (0, 1)) });
    let caps = [
        sample_capability(FormatCode::FP32, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::FP32),
        sample_capability(FormatCode::FP32, AccumulatorPolicy::FP32_ARRIVAL, OutputFormat::AUTO),
        sample_capability(FormatCode::FP32, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::AUTO),
    ];
    out.push(Golden { name: "caps_response", bytes: control_frame(6, Command::CAPS_RESPONSE, ControlBody::Caps(Records::Typed(&caps)), (0, 1)) });
    // Paging at MTU 576: 15 records fill page 0, the 16th goes on page 1.
    let many: Vec<CapabilityRecord> = (0..16u32).map(|i| CapabilityRecord { max_vector: 1000 + i, ..caps[(i % 3) as usize] }).collect();
    let per_page = (576 - codes::offsets::control::BODY) / codes::CAPABILITY_RECORD_LEN;
    for (page, chunk) in many.chunks(per_page).enumerate() {
        let name = if page == 0 { "caps_response_page0_mtu576" } else { "caps_response_page1_mtu576" };
        out.push(Golden { name, bytes: control_frame(7, Command::CAPS_RESPONSE, ControlBody::Caps(Records::Typed(chunk)), (page as u8, 2)) });
    }
    for status in AckStatus::ALL.iter().copied().filter(|s| *s != AckStatus::OK) {
        let detail = if status == AckStatus::INVALID_BINDING { 2 } else { 0 };
        let body = ControlBody::Ack { status, body: AckBody { command: Command::STAGE, detail } };
        let name: &'static str = match status {
            AckStatus::INVALID => "ack_invalid",
            AckStatus::UNSUPPORTED => "ack_unsupported",
            AckStatus::NO_RESOURCES => "ack_no_resources",
            AckStatus::BAD_STATE => "ack_bad_state",
            AckStatus::STALE_GENERATION => "ack_stale_generation",
            AckStatus::TXN_CONFLICT => "ack_txn_conflict",
            _ => "ack_invalid_binding",
        };
        out.push(Golden { name, bytes: control_frame(1, Command::ACK, body, (0, 1)) });
    }
    // One frame per number format.
    let int8: Vec<u8> = [0i8, 1, -1, 127, -128, 42, -7].iter().map(|&v| v as u8).collect();
    out.push(Golden { name: "data_int8", bytes: data_frame(Class::DATA, 0, &[one_group(NumFormat::Int8, &int8)], 1000, 1) });
    // FP16: 1.0, -2.0, 65504 (max), 2^-24 (smallest subnormal), +inf, -0
    let fp16: Vec<u8> = [0x3c00u16, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x8000].iter().flat_map(|v| v.to_le_bytes()).collect();
    out.push(Golden { name: "data_fp16", bytes: data_frame(Class::DATA, 7, &[one_group(NumFormat::Fp16, &fp16)], 1000, 2) });
    // BF16: 1.0, -3.0, 1e38-ish 0x7f00, smallest subnormal 0x0001, -inf, canonical NaN
    let bf16: Vec<u8> = [0x3f80u16, 0xc040, 0x7f00, 0x0001, 0xff80, 0x7fc0].iter().flat_map(|v| v.to_le_bytes()).collect();
    out.push(Golden { name: "data_bf16", bytes: data_frame(Class::DATA, 13, &[one_group(NumFormat::Bf16, &bf16)], 1000, 3) });
    let k280 = NumFormat::Kulisch { width_bits: 280 };
    out.push(Golden { name: "data_kulisch280_states", bytes: data_frame(Class::DATA, 19, &[one_group(k280, &kulisch_states())], 1000, 4) });
    // Full-capacity frames.
    let full = |name, format: NumFormat, mtu: u16, class: Class| {
        let n = capacity(format, mtu);
        let values = pattern_values(format, n, mtu as u32);
        Golden { name, bytes: data_frame(class, 0, &[one_group(format, &values)], n as u32, 0) }
    };
    out.push(full("data_int8_full_mtu576", NumFormat::Int8, 576, Class::DATA));
    out.push(full("data_int8_full_mtu1500", NumFormat::Int8, 1500, Class::DATA));
    out.push(full("data_fp16_full_mtu1500", NumFormat::Fp16, 1500, Class::DATA));
    out.push(full("data_bf16_full_mtu1500", NumFormat::Bf16, 1500, Class::DATA));
    out.push(full("data_fp32_full_mtu1500", NumFormat::Fp32, 1500, Class::DATA));
    out.push(full("data_kulisch280_full_mtu1500", k280, 1500, Class::DATA));
    out.push(full("data_kulisch4096_full_mtu1500", NumFormat::Kulisch { width_bits: 4096 }, 1500, Class::DATA));
    out.push(full("data_int8_full_mtu9000", NumFormat::Int8, 9000, Class::DATA));
    out.push(full("result_fp32_full_mtu9000", NumFormat::Fp32, 9000, Class::RESULT));
    // PROGRESS with the most holes: 32 holes of 10 elements every 20 elements.
    let holes: Vec<Hole> = (0..32u32).map(|i| Hole { first: 100 + 20 * i, count: 10 }).collect();
    let progress = ProgressRepr {
        identity: IDENTITY,
        src_ep: 0x0100,
        dst_ep: 0x1000,
        stream_id: 0,
        packet_id: 77,
        committed: 100,
        interval_credits: 1,
        byte_credits: 1500,
        status: ProgressStatus::ACCEPTED,
        flags: 0,
        holes: Records::Typed(&holes),
    };
    out.push(Golden { name: "progress_32_holes", bytes: frame(eth(RANK0_MAC, SWITCH_MAC), PrismRepr::Progress(progress)) });
    let done = ProgressRepr { packet_id: 3, committed: 1000, interval_credits: 8, byte_credits: 12000, flags: codes::progress_flags::COMPLETE, holes: Records::Typed(&[]), ..progress };
    out.push(Golden { name: "progress_complete", bytes: frame(eth(RANK0_MAC, SWITCH_MAC), PrismRepr::Progress(done)) });
    // The receiver's window moved (no packet acknowledged): Packet ID 0, one hole left.
    let hole = [Hole { first: 726, count: 363 }];
    let update = ProgressRepr { packet_id: 0, committed: 363, interval_credits: 15, byte_credits: 22770, flags: codes::progress_flags::WINDOW_UPDATE, holes: Records::Typed(&hole), ..progress };
    out.push(Golden { name: "progress_window_update", bytes: frame(eth(RANK0_MAC, SWITCH_MAC), PrismRepr::Progress(update)) });
    out
}

fn find(name: &str) -> Vec<u8> {
    frames().into_iter().find(|g| g.name == name).map(|g| g.bytes).unwrap_or_default()
}

/// One broken frame per reject reason the frame alone can show.
pub fn malformed() -> Vec<Malformed> {
    use codes::offsets as o;
    const B: usize = ETH_HEADER_LEN;
    let mut out = Vec::new();
    let mut add = |name, bytes: Vec<u8>, reason, offset| out.push(Malformed { name, bytes, error: Error::new(reason, offset) });
    let data = || DATA_FP32.to_vec();
    let with_data = |f: &dyn Fn(&mut DataPacket<&mut [u8]>)| {
        let mut v = data();
        f(&mut DataPacket::new_unchecked(&mut v[B..]));
        v
    };
    let with_control = |src: &[u8], f: &dyn Fn(&mut ControlPacket<&mut [u8]>)| {
        let mut v = src.to_vec();
        f(&mut ControlPacket::new_unchecked(&mut v[B..]));
        v
    };
    let body = B + o::data::BODY;

    add("truncated_ethernet", DATA_FP32[..10].to_vec(), Reason::TruncatedEthernet, 10);
    add("truncated_header", DATA_FP32[..40].to_vec(), Reason::TruncatedHeader, 40);
    add("body_length_longer_than_frame", with_data(&|p| p.set_body_len(24)), Reason::BodyLengthMismatch, B + o::data::BODY_LEN.start);
    let mut trailing = data();
    trailing.extend_from_slice(&[0, 0, 0, 0]);
    add("bytes_after_declared_end", trailing, Reason::BodyLengthMismatch, B + o::data::BODY_LEN.start);
    // 8960 INT8 values: PRISM length 42 + 4 + 8960 = 9006 > 9000.
    let big = vec![1u8; 8960];
    let mut huge = data_frame(Class::DATA, 0, &[one_group(NumFormat::Int8, &big)], 10_000, 0);
    DataPacket::new_unchecked(&mut huge[B..]).set_element_count(8960);
    add("exceeds_mtu", huge, Reason::ExceedsMtu, B + o::data::BODY_LEN.start);
    add(
        "group_overrun",
        with_data(&|p| {
            p.body_mut()[3] = 5;
            p.set_element_count(5)
        }),
        Reason::GroupOverrun,
        body,
    );
    add("version_2_0", with_data(&|p| p.set_version(0x20)), Reason::VersionMismatch, B);
    add("unknown_class", with_data(&|p| p.set_class_code(0x09)), Reason::UnknownClass, B + 1);
    add("unknown_command", with_control(&COMMIT, &|p| p.set_command_code(0x09)), Reason::UnknownCommand, B + o::control::COMMAND);
    add(
        "commit_with_body",
        {
            let mut v = with_control(&COMMIT, &|p| p.set_body_len(4));
            v.truncate(B + o::control::BODY + 4);
            v.resize(60, 0);
            v
        },
        Reason::BadBodyLength,
        B + o::control::BODY_LEN.start,
    );
    add("unknown_ack_status", with_control(&ACK_STAGE_OK, &|p| p.set_status(0x20)), Reason::UnknownStatus, B + o::control::STATUS);
    add("status_in_request", with_control(&COMMIT, &|p| p.set_status(0x01)), Reason::ReservedNonZero, B + o::control::STATUS);
    add("bad_fragment", with_control(&COMMIT, &|p| p.set_frag_count(2)), Reason::BadFragment, B + o::control::FRAG_INDEX);
    add("unknown_format", with_data(&|p| p.body_mut()[0] = 0x70), Reason::UnknownFormat, body);
    add("reserved_header_field", with_data(&|p| p.set_reserved(1)), Reason::ReservedNonZero, B + o::data::RESERVED.start);
    add("reserved_flag_bit", with_data(&|p| p.set_flags(0x80)), Reason::ReservedNonZero, B + o::data::FLAGS);
    add("width_on_native_format", with_data(&|p| p.body_mut()[1] = 0x22), Reason::ReservedNonZero, body + 1);
    let int8 = [1u8, 2, 3];
    let mut padded = data_frame(Class::DATA, 0, &[one_group(NumFormat::Int8, &int8)], 1000, 0);
    let last = padded.len() - 1;
    padded[last] = 0xff;
    add("padding_nonzero", padded, Reason::PaddingNonZero, last);
    add(
        "inexact_without_last",
        {
            let mut v = RESULT_INEXACT.to_vec();
            DataPacket::new_unchecked(&mut v[B..]).set_flags(codes::flags::INEXACT);
            v
        },
        Reason::InexactMalformed,
        B + o::data::FLAGS,
    );
    add("inexact_with_elements", with_data(&|p| p.set_flags(codes::flags::INEXACT | codes::flags::LAST)), Reason::InexactMalformed, B + o::data::FLAGS);
    add("empty_packet", with_data(&|p| p.set_element_count(0)), Reason::EmptyPacket, B + o::data::ELEMENT_COUNT.start);
    add("empty_group", with_data(&|p| p.body_mut()[3] = 0), Reason::EmptyGroup, body + 2);
    add("more_groups_declared", with_data(&|p| p.set_group_count(2)), Reason::GroupCountMismatch, B + o::data::GROUP_COUNT);
    let mut two = DATA_MIXED_PARTIAL.to_vec();
    DataPacket::new_unchecked(&mut two[B..]).set_group_count(2);
    add("fewer_groups_declared", two, Reason::GroupCountMismatch, body + 12 + 40);
    add("element_count_mismatch", with_data(&|p| p.set_element_count(3)), Reason::ElementCountMismatch, B + o::data::ELEMENT_COUNT.start);
    add("element_range_overflow", with_data(&|p| p.set_first_element(0xffff_fffe)), Reason::ElementRangeOverflow, B + o::data::FIRST_ELEMENT.start);
    let mut narrow = DATA_MIXED_PARTIAL.to_vec();
    narrow[body + 12 + 1] = 0x00; // width field 0: W = 8
    add("kulisch_width_8", narrow, Reason::BadKulischWidth, body + 12);
    let mut state = DATA_MIXED_PARTIAL.to_vec();
    state[body + 16] = 0x07;
    add("kulisch_unknown_state", state, Reason::BadKulischValue, body + 16);
    let mut nan_payload = find("data_kulisch280_states");
    let nan_at = body + 4 + 5 * 36;
    nan_payload[nan_at + 1] = 1;
    add("kulisch_nan_with_integer", nan_payload, Reason::BadKulischValue, nan_at);
    let mut holes = PROGRESS_TWO_HOLES.to_vec();
    ProgressPacket::new_unchecked(&mut holes[B..]).set_hole_count(33);
    add("too_many_holes", holes, Reason::TooManyHoles, B + o::progress::HOLE_COUNT.start);
    let mut order = PROGRESS_TWO_HOLES.to_vec();
    order[B + o::progress::HOLES + 8..B + o::progress::HOLES + 12].copy_from_slice(&1000u32.to_be_bytes());
    add("holes_out_of_order", order, Reason::BadHoles, B + o::progress::HOLES + 8);
    let mut below = PROGRESS_TWO_HOLES.to_vec();
    ProgressPacket::new_unchecked(&mut below[B..]).set_committed(2000);
    add("hole_below_watermark", below, Reason::BadHoles, B + o::progress::HOLES);
    let mut flag = PROGRESS_TWO_HOLES.to_vec();
    ProgressPacket::new_unchecked(&mut flag[B..]).set_flags(0x04);
    add("progress_reserved_flag", flag, Reason::ReservedNonZero, B + o::progress::FLAGS);
    out
}

/// The golden and malformed frames as captures, one millisecond apart.
pub fn captures() -> (Vec<crate::pcap::Captured>, Vec<crate::pcap::Captured>) {
    let at = |i: usize| std::time::Duration::from_millis(i as u64);
    let good = frames().into_iter().enumerate().map(|(i, g)| crate::pcap::Captured { ts: at(i), data: g.bytes }).collect();
    let bad = malformed().into_iter().enumerate().map(|(i, m)| crate::pcap::Captured { ts: at(i), data: m.bytes }).collect();
    (good, bad)
}

/// The verbose decoder listing of a capture (testdata/*.txt).
pub fn listing(frames: &[crate::pcap::Captured]) -> String {
    let v = crate::decode::Verbosity { fields: true, all_values: false };
    frames.iter().enumerate().map(|(i, f)| crate::decode::describe(i + 1, f.ts, &f.data, v)).collect()
}
