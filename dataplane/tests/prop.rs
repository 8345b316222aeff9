//! Property tests: parse(emit(x)) == x for generated packets; arbitrary bytes never panic.

use prism_arith::NumFormat;
use prism_dataplane::golden;
use prism_dataplane::wire::*;
use proptest::prelude::*;

fn format() -> impl Strategy<Value = NumFormat> {
    prop_oneof![Just(NumFormat::Int8), Just(NumFormat::Fp16), Just(NumFormat::Bf16), Just(NumFormat::Fp32), (35u16..=64).prop_map(|b| NumFormat::Kulisch { width_bits: b * 8 }),]
}

/// A group of valid values: Kulisch values get a canonical state byte.
fn group() -> impl Strategy<Value = (NumFormat, Vec<u8>)> {
    (format(), 1usize..40).prop_flat_map(|(f, n)| {
        let w = f.value_bytes();
        proptest::collection::vec(any::<u8>(), n * w).prop_map(move |mut v| {
            if let NumFormat::Kulisch { .. } = f {
                for chunk in v.chunks_exact_mut(w) {
                    let state = chunk[0] % 7;
                    if state == 0 || state == 6 {
                        chunk[0] = 0;
                        chunk[1] |= 1; // finite and non-zero
                    } else {
                        chunk.fill(0);
                        chunk[0] = state; // POS_ZERO..NAN (1..=5)
                    }
                }
            }
            (f, v)
        })
    })
}

fn identity() -> impl Strategy<Value = Identity> {
    (any::<u64>(), any::<u16>(), any::<u16>(), any::<u16>(), any::<u32>()).prop_map(|(job, group, group_gen, op, op_gen)| Identity { job, group, group_gen, op, op_gen })
}

fn frame_of(p: &PrismRepr<'_>) -> Vec<u8> {
    let eth = EthernetRepr { dst: golden::SWITCH_MAC, src: golden::RANK0_MAC, ethertype: ETHERTYPE };
    let mut buf = vec![0xa5; p.frame_len()];
    p.emit_frame(&eth, &mut buf);
    buf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn data_round_trips(
        groups in proptest::collection::vec(group(), 1..6),
        id in identity(),
        first in 0u32..1_000_000,
        packet_id in any::<u32>(),
        stream in any::<u16>(),
        eps in (any::<u16>(), any::<u16>()),
        result in any::<bool>(),
        last in any::<bool>(),
    ) {
        let reprs: Vec<GroupRepr<'_>> = groups.iter().map(|(f, v)| GroupRepr { format: *f, count: (v.len() / f.value_bytes()) as u16, values: v }).collect();
        let mut body = vec![0xa5; groups_len(&reprs)];
        emit_groups(&reprs, &mut body);
        let count: u16 = reprs.iter().map(|g| g.count).sum();
        let repr = DataRepr {
            class: if result { Class::RESULT } else { Class::DATA },
            identity: id,
            src_ep: eps.0,
            dst_ep: eps.1,
            packet_id,
            first_element: first,
            element_count: count,
            group_count: reprs.len() as u8,
            flags: if last { codes::flags::LAST } else { 0 },
            stream_id: stream,
            body: &body,
        };
        let bytes = frame_of(&PrismRepr::Data(repr));
        let parsed = parse_frame(&bytes, &Limits::default()).unwrap().prism.unwrap();
        prop_assert_eq!(parsed, PrismRepr::Data(repr));
        let PrismRepr::Data(d) = parsed else { unreachable!() };
        prop_assert_eq!(d.groups().collect::<Vec<_>>(), reprs);
    }

    #[test]
    fn stage_round_trips(
        id in identity(),
        txn in any::<u32>(),
        raw in proptest::collection::vec(any::<u8>(), 36),
        bindings in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 20), 0..20),
    ) {
        let mut context = ContextRecord::read(&raw);
        context.binding_count = bindings.len() as u16;
        let bindings: Vec<BindingRecord> = bindings.iter().map(|b| {
            let mut r = BindingRecord::read(b);
            r.directions &= 0x0f;
            r
        }).collect();
        let repr = ControlRepr {
            identity: id, txn, src_ep: 1, dst_ep: 2, command: Command::STAGE, frag_index: 0, frag_count: 1,
            body: ControlBody::Stage { context, bindings: Records::Typed(&bindings) },
        };
        let bytes = frame_of(&PrismRepr::Control(repr));
        let parsed = parse_frame(&bytes, &Limits::default()).unwrap().prism.unwrap();
        prop_assert_eq!(parsed, PrismRepr::Control(repr));
    }

    #[test]
    fn progress_round_trips(
        id in identity(),
        committed in 0u32..1000,
        gaps in proptest::collection::vec((1u32..50, 1u32..50), 0..=32),
        credits in (any::<u16>(), any::<u32>()),
        complete in any::<bool>(),
    ) {
        let mut at = committed;
        let holes: Vec<Hole> = gaps.iter().map(|&(skip, count)| { let h = Hole { first: at + skip, count }; at = h.first + count; h }).collect();
        let repr = ProgressRepr {
            identity: id, src_ep: 3, dst_ep: 4, stream_id: 5, packet_id: 6, committed,
            interval_credits: credits.0, byte_credits: credits.1, status: ProgressStatus::DUPLICATE,
            flags: if complete { codes::progress_flags::COMPLETE } else { 0 }, holes: Records::Typed(&holes),
        };
        let bytes = frame_of(&PrismRepr::Progress(repr));
        let parsed = parse_frame(&bytes, &Limits::default()).unwrap().prism.unwrap();
        prop_assert_eq!(parsed, PrismRepr::Progress(repr));
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600), prism in any::<bool>(), class in 0u8..6) {
        let mut b = bytes;
        if prism && b.len() >= 16 {
            b[12] = 0x88; b[13] = 0xb5; b[14] = 0x10; b[15] = class;
        }
        let _ = parse_frame(&b, &Limits::default());
        let _ = prism_dataplane::decode::describe(1, std::time::Duration::ZERO, &b, prism_dataplane::decode::Verbosity { fields: true, all_values: true });
    }

    #[test]
    fn mutated_golden_frames_never_panic(which in 0usize..39, edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8), cut in any::<Option<usize>>()) {
        let frames = golden::frames();
        let mut b = frames[which % frames.len()].bytes.clone();
        for (at, v) in edits {
            let i = at % b.len();
            b[i] = v;
        }
        if let Some(c) = cut { b.truncate(c % (b.len() + 1)); }
        if let Ok(ParsedFrame { eth, prism: Some(p) }) = parse_frame(&b, &Limits::default()) {
            // Whatever parses re-emits to the same bytes (padding aside).
            let mut out = vec![0xa5; p.frame_len()];
            let n = p.emit_frame(&eth, &mut out);
            let declared = ETH_HEADER_LEN + p.buffer_len();
            let mut want = b[..declared].to_vec();
            want[ETH_HEADER_LEN] &= 0xf0; // minor versions are read as 1.0 and re-emitted as 1.0
            prop_assert_eq!(&out[..declared], &want[..]);
            prop_assert!(n >= declared);
        }
    }
}
