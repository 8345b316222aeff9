//! Human-readable frame summaries for `prism-decode` (one line a frame, like tcpdump).

use crate::wire::*;
use prism_arith::NumFormat;
use std::fmt::Write;

/// How much to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verbosity {
    /// Print every header field and the groups.
    pub fields: bool,
    /// Print every value (otherwise the first 16 of a group).
    pub all_values: bool,
}

fn id(i: &Identity) -> String {
    format!("job {:#018x} group {}/{} op {}/{}", i.job, i.group, i.group_gen, i.op, i.op_gen)
}

fn flag_names(f: u8) -> String {
    let mut v = Vec::new();
    if f & codes::flags::LAST != 0 {
        v.push("LAST");
    }
    if f & codes::flags::INEXACT != 0 {
        v.push("ACCUMULATION_INEXACT");
    }
    if v.is_empty() {
        "-".into()
    } else {
        v.join("|")
    }
}

fn format_name(f: NumFormat) -> String {
    match f {
        NumFormat::Int8 => "INT8".into(),
        NumFormat::Fp16 => "FP16".into(),
        NumFormat::Bf16 => "BF16".into(),
        NumFormat::Fp32 => "FP32".into(),
        NumFormat::Kulisch { width_bits } => format!("KULISCH{width_bits}"),
    }
}

/// One value as text: floats in Rust's shortest round-trip form, Kulisch as state and hex integer.
pub fn value_text(format: NumFormat, v: &[u8]) -> String {
    match format {
        NumFormat::Int8 => (v[0] as i8).to_string(),
        NumFormat::Fp16 => format!("{}", half::f16::from_le_bytes([v[0], v[1]])),
        NumFormat::Bf16 => format!("{}", half::bf16::from_le_bytes([v[0], v[1]])),
        NumFormat::Fp32 => format!("{:?}", f32::from_le_bytes([v[0], v[1], v[2], v[3]])),
        NumFormat::Kulisch { .. } => match KulischState::from(v[0]) {
            KulischState::FINITE => {
                let negative = v[v.len() - 1] & 0x80 != 0;
                // Two's complement magnitude, printed big-endian in hex without leading zeros.
                let mut mag: Vec<u8> = v[1..].to_vec();
                if negative {
                    let mut carry = true;
                    for b in mag.iter_mut() {
                        *b = !*b;
                        if carry {
                            let (s, c) = b.overflowing_add(1);
                            *b = s;
                            carry = c;
                        }
                    }
                }
                let hex: String = mag.iter().rev().map(|b| format!("{b:02x}")).collect();
                let hex = hex.trim_start_matches('0');
                format!("{}0x{}*2^-149", if negative { "-" } else { "" }, if hex.is_empty() { "0" } else { hex })
            }
            s => s.name().to_string(),
        },
    }
}

fn data_line(d: &DataRepr<'_>) -> String {
    format!(
        "{} {} ep {:#06x}>{:#06x} stream {} pkt {} elems [{},{}) groups {} flags {}",
        d.class.name(),
        id(&d.identity),
        d.src_ep,
        d.dst_ep,
        d.stream_id,
        d.packet_id,
        d.first_element,
        d.end_element(),
        d.group_count,
        flag_names(d.flags)
    )
}

fn control_line(c: &ControlRepr<'_>) -> String {
    let mut s = format!("CONTROL {} {} txn {} ep {:#06x}>{:#06x}", c.command.name(), id(&c.identity), c.txn, c.src_ep, c.dst_ep);
    match &c.body {
        ControlBody::Stage { context: x, bindings } => {
            let _ = write!(
                s,
                " {} {} in {} acc {} partial {} out {} len {} bindings {}",
                x.role.name(),
                x.semantics.name(),
                x.input_format.name(),
                x.accumulator.name(),
                x.partial.name(),
                x.output.name(),
                x.vector_len,
                bindings.len()
            );
        }
        ControlBody::Ack { status, body } => {
            let _ = write!(s, " of {} status {}", body.command.name(), status.name());
            if body.detail != 0 {
                let _ = write!(s, " detail {}", body.detail);
            }
        }
        ControlBody::Caps(r) => {
            let _ = write!(s, " page {}/{} records {}", c.frag_index + 1, c.frag_count, r.len());
        }
        ControlBody::Empty => {}
    }
    s
}

fn progress_line(p: &ProgressRepr<'_>) -> String {
    format!(
        "PROGRESS {} ep {:#06x}>{:#06x} stream {} pkt {} committed {} credits {} intervals {} bytes status {}{} holes {}",
        id(&p.identity),
        p.src_ep,
        p.dst_ep,
        p.stream_id,
        p.packet_id,
        p.committed,
        p.interval_credits,
        p.byte_credits,
        p.status.name(),
        match (p.flags & codes::progress_flags::COMPLETE != 0, p.flags & codes::progress_flags::WINDOW_UPDATE != 0) {
            (true, true) => " COMPLETE WINDOW_UPDATE",
            (true, false) => " COMPLETE",
            (false, true) => " WINDOW_UPDATE",
            (false, false) => "",
        },
        p.holes.len()
    )
}

fn verbose(out: &mut String, p: &PrismRepr<'_>, v: Verbosity) {
    match p {
        PrismRepr::Data(d) => {
            let _ = writeln!(out, "    body {} bytes", d.body.len());
            for (i, g) in d.groups().enumerate() {
                let _ = write!(out, "    group {i}: {} x{}:", format_name(g.format), g.count);
                let w = g.format.value_bytes();
                let shown = if v.all_values { g.count as usize } else { (g.count as usize).min(16) };
                for val in g.values.chunks_exact(w).take(shown) {
                    let _ = write!(out, " {}", value_text(g.format, val));
                }
                if shown < g.count as usize {
                    let _ = write!(out, " ...(+{} more)", g.count as usize - shown);
                }
                out.push('\n');
            }
        }
        PrismRepr::Control(c) => match &c.body {
            ControlBody::Stage { context: x, bindings } => {
                let _ = writeln!(
                    out,
                    "    context: kulisch width {} dest rank {} mtu {} terms {} window {} elements {} intervals {} bytes replay depth {}",
                    x.kulisch_width, x.dest_rank, x.mtu, x.terms, x.window_elements, x.window_intervals, x.window_bytes, x.replay_depth
                );
                for (i, b) in bindings.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "    binding {i}: dirs {:#04x} peer {} stream {} ep {:#06x}<->{:#06x} mac {} port {} rank {} terms {}",
                        b.directions,
                        b.peer_kind.name(),
                        b.stream_id,
                        b.local_ep,
                        b.peer_ep,
                        b.peer_mac,
                        b.port,
                        b.rank,
                        b.terms
                    );
                }
            }
            ControlBody::Caps(records) => {
                for (i, r) in records.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "    record {i}: in {} acc {} partial {} out {} roles {:#04x} sem {:#04x} mtus {:#04x} max vector {} terms {} kulisch {}..{} contributors {} paths {} window {}/{}/{} replay {}",
                        r.input_format.name(), r.accumulator.name(), r.partial.name(), r.output.name(), r.roles, r.semantics, r.mtus,
                        r.max_vector, r.max_terms, r.kulisch_min, r.kulisch_max, r.max_contributors, r.max_result_paths,
                        r.window_elements, r.window_intervals, r.window_bytes, r.replay_depth
                    );
                }
            }
            _ => {}
        },
        PrismRepr::Progress(p) => {
            for (i, h) in p.holes.iter().enumerate() {
                let _ = writeln!(out, "    hole {i}: [{},{})", h.first, h.first as u64 + h.count as u64);
            }
        }
    }
}

/// Describes one frame: a summary line, then (verbose) one line per detail.
pub fn describe(index: usize, ts: std::time::Duration, frame: &[u8], v: Verbosity) -> String {
    let mut out = format!("{:5} {}.{:06} ", index, ts.as_secs(), ts.subsec_micros());
    match parse_frame(frame, &Limits::default()) {
        Err(e) => {
            if frame.len() >= ETH_HEADER_LEN {
                let eth = EthernetRepr::parse(&EthernetFrame::new_unchecked(frame));
                let _ = write!(out, "{} > {} ", eth.src, eth.dst);
            }
            let _ = writeln!(out, "PRISM malformed ({} bytes): {e}", frame.len());
        }
        Ok(ParsedFrame { eth, prism: None }) => {
            let _ = writeln!(out, "{} > {} ethertype {:#06x} length {}", eth.src, eth.dst, eth.ethertype, frame.len());
        }
        Ok(ParsedFrame { eth, prism: Some(p) }) => {
            let line = match &p {
                PrismRepr::Data(d) => data_line(d),
                PrismRepr::Control(c) => control_line(c),
                PrismRepr::Progress(g) => progress_line(g),
            };
            let _ = writeln!(out, "{} > {} PRISM {line} length {}", eth.src, eth.dst, frame.len());
            if v.fields {
                verbose(&mut out, &p, v);
            }
        }
    }
    out
}
