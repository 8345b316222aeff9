//! The golden frames: on-disk captures match the module, every frame parses and
//! re-emits byte for byte, every malformed frame gets its exact error.

use prism_arith::NumFormat;
use prism_dataplane::golden::{self, *};
use prism_dataplane::pcap;
use prism_dataplane::wire::*;
use std::path::Path;

fn testdata(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata").join(name)
}

fn read(name: &str) -> Vec<pcap::Captured> {
    pcap::read_all(std::fs::File::open(testdata(name)).expect("open capture")).expect("read capture")
}

#[test]
fn checked_in_captures_match_the_module() {
    let (good, bad) = golden::captures();
    assert_eq!(read("golden.pcap"), good, "testdata/golden.pcap is stale: run `cargo run -p prism-dataplane --bin prism-golden`");
    assert_eq!(read("malformed.pcap"), bad, "testdata/malformed.pcap is stale");
    assert_eq!(std::fs::read_to_string(testdata("golden.txt")).unwrap(), golden::listing(&good));
    assert_eq!(std::fs::read_to_string(testdata("malformed.txt")).unwrap(), golden::listing(&bad));
}

#[test]
fn golden_set_covers_what_the_issue_asks() {
    let frames = golden::frames();
    let parsed: Vec<_> = frames.iter().filter_map(|g| parse_frame(&g.bytes, &Limits::default()).unwrap().prism).collect();
    for class in Class::ALL {
        assert!(parsed.iter().any(|p| p.class() == *class), "no {class:?} frame");
    }
    for cmd in Command::ALL {
        assert!(parsed.iter().any(|p| matches!(p, PrismRepr::Control(c) if c.command == *cmd)), "no {cmd:?}");
    }
    for status in AckStatus::ALL {
        assert!(parsed.iter().any(|p| matches!(p, PrismRepr::Control(c) if c.command == Command::ACK && c.status() == *status)), "no ACK {status:?}");
    }
    let formats: Vec<NumFormat> = parsed
        .iter()
        .filter_map(|p| match p {
            PrismRepr::Data(d) => Some(d.groups().map(|g| g.format).collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect();
    for f in [NumFormat::Int8, NumFormat::Fp16, NumFormat::Bf16, NumFormat::Fp32, NumFormat::Kulisch { width_bits: 280 }, NumFormat::Kulisch { width_bits: 4096 }] {
        assert!(formats.contains(&f), "no {f:?} group");
    }
    // Full-capacity frames are exactly at their MTU.
    for (name, mtu) in [("data_int8_full_mtu576", 576), ("data_fp32_full_mtu1500", 1500), ("data_int8_full_mtu9000", 9000)] {
        let g = frames.iter().find(|g| g.name == name).unwrap();
        assert!(g.bytes.len() - ETH_HEADER_LEN <= mtu && g.bytes.len() - ETH_HEADER_LEN + 4 > mtu, "{name}");
    }
    let holes = parsed.iter().find_map(|p| match p {
        PrismRepr::Progress(p) if p.holes.len() == MAX_HOLES => Some(()),
        _ => None,
    });
    assert!(holes.is_some(), "no PROGRESS with 32 holes");
    // Every reject reason the frame alone can show has a malformed frame.
    let context_only = [Reason::RangeOutsideVector, Reason::LastFlagMismatch, Reason::KulischWidthMismatch];
    let bad = golden::malformed();
    for r in Reason::ALL.iter().filter(|r| !context_only.contains(r)) {
        assert!(bad.iter().any(|m| m.error.reason == *r), "no malformed frame for {}", r.name());
    }
}

#[test]
fn every_golden_frame_reemits_byte_for_byte() {
    for g in golden::frames() {
        let parsed = parse_frame(&g.bytes, &Limits::default()).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        let Some(p) = parsed.prism else {
            assert_eq!(g.name, "arp_not_prism");
            continue;
        };
        let mut buf = vec![0xa5u8; g.bytes.len() + 32];
        let n = p.emit_frame(&parsed.eth, &mut buf);
        assert_eq!(&buf[..n], &g.bytes[..], "{}", g.name);
        assert!(buf[n..].iter().all(|&b| b == 0xa5), "{}: wrote past the frame", g.name);
    }
}

#[test]
fn every_malformed_frame_gets_its_exact_error() {
    for m in golden::malformed() {
        let got = parse_frame(&m.bytes, &Limits::default());
        assert_eq!(got.err(), Some(m.error), "{}", m.name);
    }
}

#[test]
fn hand_written_frames_equal_typed_emission() {
    let bindings = [
        BindingRecord { directions: direction::DATA_IN, peer_kind: PeerKind::RANK, stream_id: 0, local_ep: 0x0100, peer_ep: 0x1000, peer_mac: RANK0_MAC, port: 0, rank: 0, terms: 1 },
        BindingRecord {
            directions: direction::DATA_IN | direction::RESULT_OUT,
            peer_kind: PeerKind::RANK,
            stream_id: 1,
            local_ep: 0x0101,
            peer_ep: 0x1001,
            peer_mac: RANK1_MAC,
            port: 1,
            rank: 1,
            terms: 1,
        },
    ];
    let context = ContextRecord {
        role: Role::SINGLE,
        semantics: Semantics::REDUCE,
        input_format: FormatCode::FP32,
        accumulator: AccumulatorPolicy::FP32_ARRIVAL,
        partial: PartialPolicy::NONE,
        output: OutputFormat::FP32,
        kulisch_width: 0,
        vector_len: 1000,
        dest_rank: 1,
        mtu: 1500,
        terms: 2,
        window_elements: 2904,
        window_intervals: 8,
        replay_depth: 0,
        window_bytes: 12000,
        binding_count: 2,
    };
    let stage = ControlRepr {
        identity: IDENTITY,
        txn: 1,
        src_ep: AM_EP,
        dst_ep: SWITCH_EP,
        command: Command::STAGE,
        frag_index: 0,
        frag_count: 1,
        body: ControlBody::Stage { context, bindings: Records::Typed(&bindings) },
    };
    let eth = EthernetRepr { dst: SWITCH_MAC, src: AM_MAC, ethertype: ETHERTYPE };
    let mut buf = [0xa5u8; 200];
    let n = PrismRepr::Control(stage).emit_frame(&eth, &mut buf);
    assert_eq!(&buf[..n], &STAGE[..]);
    // And the parse of the hand-written bytes equals the typed repr.
    let parsed = parse_frame(&STAGE, &Limits::default()).unwrap().prism.unwrap();
    assert_eq!(parsed, PrismRepr::Control(stage));

    let values: Vec<u8> = [1.0f32, -2.5, 0.1, -0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let group = GroupRepr { format: NumFormat::Fp32, count: 4, values: &values };
    let mut body = [0xa5u8; 20];
    emit_groups(&[group], &mut body);
    let data =
        DataRepr { class: Class::DATA, identity: IDENTITY, src_ep: 0x1000, dst_ep: 0x0100, packet_id: 0, first_element: 0, element_count: 4, group_count: 1, flags: 0, stream_id: 0, body: &body };
    let eth = EthernetRepr { dst: SWITCH_MAC, src: RANK0_MAC, ethertype: ETHERTYPE };
    let n = PrismRepr::Data(data).emit_frame(&eth, &mut buf);
    assert_eq!(&buf[..n], &DATA_FP32[..]);

    let holes = [Hole { first: 1089, count: 363 }, Hole { first: 1815, count: 363 }];
    let progress = ProgressRepr {
        identity: IDENTITY,
        src_ep: 0x0100,
        dst_ep: 0x1000,
        stream_id: 0,
        packet_id: 5,
        committed: 726,
        interval_credits: 6,
        byte_credits: 9000,
        status: ProgressStatus::ACCEPTED,
        flags: 0,
        holes: Records::Typed(&holes),
    };
    let eth = EthernetRepr { dst: RANK0_MAC, src: SWITCH_MAC, ethertype: ETHERTYPE };
    let n = PrismRepr::Progress(progress).emit_frame(&eth, &mut buf);
    assert_eq!(&buf[..n], &PROGRESS_TWO_HOLES[..]);
}

#[test]
fn mixed_partial_groups_decode_by_position() {
    let p = parse_frame(&DATA_MIXED_PARTIAL, &Limits::default()).unwrap().prism.unwrap();
    let PrismRepr::Data(d) = p else { panic!("not DATA") };
    let groups: Vec<_> = d.groups().collect();
    assert_eq!(groups.len(), 3);
    assert_eq!(groups.iter().map(|g| g.count).collect::<Vec<_>>(), [2, 1, 2]);
    assert_eq!(groups[1].format, NumFormat::Kulisch { width_bits: 280 });
    assert_eq!(groups[1].values.len(), 36);
    assert_eq!(groups[2].values, &[0, 0, 0x40, 0x40, 0, 0, 0, 0xbf]);
    assert_eq!((d.first_element, d.end_element()), (10, 15));
}

#[test]
fn operation_checks_need_the_vector_length() {
    let p = parse_frame(&RESULT_FP32_LAST, &Limits::default()).unwrap().prism.unwrap();
    let PrismRepr::Data(d) = p else { panic!() };
    assert_eq!(d.check_against_vector(1000, 14), Ok(()));
    assert_eq!(d.check_against_vector(999, 14).unwrap_err().reason, Reason::RangeOutsideVector);
    assert_eq!(d.check_against_vector(1001, 14).unwrap_err().reason, Reason::LastFlagMismatch);
    let p = parse_frame(&DATA_FP32, &Limits::default()).unwrap().prism.unwrap();
    let PrismRepr::Data(d) = p else { panic!() };
    assert_eq!(d.check_against_vector(4, 14).unwrap_err().reason, Reason::LastFlagMismatch);
    assert_eq!(d.check_against_vector(5, 14), Ok(()));
}

#[test]
fn mtu_limit_is_the_receivers() {
    let frames = golden::frames();
    let full = &frames.iter().find(|g| g.name == "data_fp32_full_mtu1500").unwrap().bytes;
    assert!(parse_frame(full, &Limits { mtu: 1500 }).is_ok());
    assert_eq!(parse_frame(full, &Limits { mtu: 576 }).unwrap_err().reason, Reason::ExceedsMtu);
}

#[test]
fn ethernet_padding_is_never_read() {
    let mut padded = COMMIT;
    for b in &mut padded[48..] {
        *b = 0xee;
    }
    assert!(parse_frame(&padded, &Limits::default()).is_ok());
    // Padding only up to 60 bytes: one more byte is a length error.
    let mut long = COMMIT.to_vec();
    long.push(0);
    assert_eq!(parse_frame(&long, &Limits::default()).unwrap_err().reason, Reason::BodyLengthMismatch);
    // An unpadded short frame (as a host stack may capture it) is fine too.
    assert!(parse_frame(&COMMIT[..48], &Limits::default()).is_ok());
}

#[test]
fn views_set_and_get_every_data_field() {
    let mut f = DATA_FP32;
    let mut p = DataPacket::new_checked(&mut f[ETH_HEADER_LEN..]).unwrap();
    p.set_packet_id(0xdead_beef);
    p.set_stream_id(0x1234);
    p.set_identity(&Identity { job: 9, group: 8, group_gen: 7, op: 6, op_gen: 5 });
    assert_eq!(p.packet_id(), 0xdead_beef);
    assert_eq!(p.stream_id(), 0x1234);
    assert_eq!(p.identity(), Identity { job: 9, group: 8, group_gen: 7, op: 6, op_gen: 5 });
    assert_eq!(p.class(), Class::DATA);
    assert_eq!(p.body().len(), 20);
}

#[test]
fn minor_version_is_read_as_1_0_and_reemitted_as_1_0() {
    // Found by the fuzzer: a 1.2 frame parses; its re-emission says 1.0.
    let mut f = COMMIT;
    f[ETH_HEADER_LEN] = 0x12;
    let parsed = parse_frame(&f, &Limits::default()).unwrap();
    let mut out = [0xa5u8; 60];
    parsed.prism.unwrap().emit_frame(&parsed.eth, &mut out);
    assert_eq!(out[ETH_HEADER_LEN], VERSION);
    assert_eq!(&out[ETH_HEADER_LEN + 1..], &COMMIT[ETH_HEADER_LEN + 1..]);
}
