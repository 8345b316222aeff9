//! The Wireshark dissector (tools/wireshark/prism.lua) decodes every golden
//! frame with the Rust parser's field values and rejects every malformed frame
//! with the same reason at the same byte. Needs tshark (the README's test
//! command installs it); a missing tshark fails the test.

use prism_arith::NumFormat;
use prism_dataplane::wire::*;
use prism_dataplane::{golden, pcap};
use std::path::Path;
use std::process::Command as Proc;

const FIELDS: &[&str] = &[
    "class",
    "job",
    "group",
    "group_gen",
    "op",
    "op_gen",
    "src_ep",
    "dst_ep",
    "txn",
    "command",
    "status",
    "frag_index",
    "frag_count",
    "stage.role",
    "stage.vector_len",
    "stage.binding_count",
    "binding.stream_id",
    "binding.peer_mac",
    "binding.port",
    "ack.command",
    "ack.detail",
    "caps.input_format",
    "caps.max_vector",
    "packet_id",
    "first_element",
    "element_count",
    "group_count",
    "flags",
    "stream_id",
    "group.format",
    "group.count",
    "group.kulisch_width",
    "value.int8",
    "value.bits",
    "kulisch.state",
    "committed",
    "interval_credits",
    "byte_credits",
    "progress_status",
    "hole.first",
    "hole.count",
    "reject",
    "reject_offset",
];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn tshark(capture: &str) -> Vec<Vec<String>> {
    let mut cmd = Proc::new("tshark");
    cmd.current_dir(root()).args(["-X", "lua_script:tools/wireshark/prism.lua", "-r", capture, "-T", "fields"]).args(["-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"]);
    for f in FIELDS {
        cmd.args(["-e", &format!("prismcoll.{f}")]);
    }
    let out = cmd.output().expect("tshark must be installed (scripts/test.sh installs it)");
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Lua: Error"), "dissector failed to load: {stderr}");
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.split('\t').map(str::to_string).collect()).collect()
}

/// The row tshark must print for a frame, from the Rust parser.
fn expected(frame: &[u8]) -> Vec<String> {
    let mut row = vec![String::new(); FIELDS.len()];
    let mut set = |name: &str, v: String| {
        let i = FIELDS.iter().position(|f| *f == name).unwrap();
        row[i] = v;
    };
    let join = |it: &mut dyn Iterator<Item = String>| it.collect::<Vec<_>>().join(",");
    let parsed = match parse_frame(frame, &Limits::default()) {
        Ok(p) => p,
        Err(e) => {
            // Fields read before the reject are printed too; the test compares only the reject here.
            set("reject", e.reason.name().to_string());
            set("reject_offset", e.offset.to_string());
            return row;
        }
    };
    let Some(p) = parsed.prism else { return row };
    set("class", u8::from(p.class()).to_string());
    let id = match &p {
        PrismRepr::Control(c) => c.identity,
        PrismRepr::Data(d) => d.identity,
        PrismRepr::Progress(g) => g.identity,
    };
    set("job", id.job.to_string());
    set("group", id.group.to_string());
    set("group_gen", id.group_gen.to_string());
    set("op", id.op.to_string());
    set("op_gen", id.op_gen.to_string());
    match p {
        PrismRepr::Control(c) => {
            set("src_ep", c.src_ep.to_string());
            set("dst_ep", c.dst_ep.to_string());
            set("txn", c.txn.to_string());
            set("command", u8::from(c.command).to_string());
            set("status", u8::from(c.status()).to_string());
            set("frag_index", c.frag_index.to_string());
            set("frag_count", c.frag_count.to_string());
            match c.body {
                ControlBody::Stage { context, bindings } => {
                    set("stage.role", u8::from(context.role).to_string());
                    set("stage.vector_len", context.vector_len.to_string());
                    set("stage.binding_count", context.binding_count.to_string());
                    set("binding.stream_id", join(&mut bindings.iter().map(|b| b.stream_id.to_string())));
                    set("binding.peer_mac", join(&mut bindings.iter().map(|b| b.peer_mac.to_string())));
                    set("binding.port", join(&mut bindings.iter().map(|b| b.port.to_string())));
                }
                ControlBody::Ack { body, .. } => {
                    set("ack.command", u8::from(body.command).to_string());
                    set("ack.detail", body.detail.to_string());
                }
                ControlBody::Caps(r) => {
                    set("caps.input_format", join(&mut r.iter().map(|x| u8::from(x.input_format).to_string())));
                    set("caps.max_vector", join(&mut r.iter().map(|x| x.max_vector.to_string())));
                }
                ControlBody::Empty => {}
            }
        }
        PrismRepr::Data(d) => {
            set("src_ep", d.src_ep.to_string());
            set("dst_ep", d.dst_ep.to_string());
            set("packet_id", d.packet_id.to_string());
            set("first_element", d.first_element.to_string());
            set("element_count", d.element_count.to_string());
            set("group_count", d.group_count.to_string());
            set("flags", d.flags.to_string());
            set("stream_id", d.stream_id.to_string());
            let groups: Vec<_> = d.groups().collect();
            set("group.format", join(&mut groups.iter().map(|g| u8::from(format_code(g.format)).to_string())));
            set("group.count", join(&mut groups.iter().map(|g| g.count.to_string())));
            let widths = groups.iter().filter_map(|g| match g.format {
                NumFormat::Kulisch { width_bits } => Some(width_bits.to_string()),
                _ => None,
            });
            set("group.kulisch_width", join(&mut widths.into_iter()));
            let mut int8 = Vec::new();
            let mut bits = Vec::new();
            let mut states = Vec::new();
            for g in &groups {
                let w = g.format.value_bytes();
                for v in g.values.chunks_exact(w) {
                    match g.format {
                        NumFormat::Int8 => int8.push((v[0] as i8).to_string()),
                        NumFormat::Kulisch { .. } => states.push(v[0].to_string()),
                        _ => bits.push(v.iter().rev().fold(0u32, |a, &b| (a << 8) | b as u32).to_string()),
                    }
                }
            }
            set("value.int8", int8.join(","));
            set("value.bits", bits.join(","));
            set("kulisch.state", states.join(","));
        }
        PrismRepr::Progress(g) => {
            set("src_ep", g.src_ep.to_string());
            set("dst_ep", g.dst_ep.to_string());
            set("stream_id", g.stream_id.to_string());
            set("packet_id", g.packet_id.to_string());
            set("committed", g.committed.to_string());
            set("interval_credits", g.interval_credits.to_string());
            set("byte_credits", g.byte_credits.to_string());
            set("progress_status", u8::from(g.status).to_string());
            set("hole.first", join(&mut g.holes.iter().map(|h| h.first.to_string())));
            set("hole.count", join(&mut g.holes.iter().map(|h| h.count.to_string())));
        }
    }
    row
}

#[test]
fn dissector_decodes_every_golden_frame_with_our_values() {
    let (good, _) = golden::captures();
    let rows = tshark("testdata/golden.pcap");
    assert_eq!(rows.len(), good.len());
    for (i, (row, frame)) in rows.iter().zip(&good).enumerate() {
        let want = expected(&frame.data);
        for (k, name) in FIELDS.iter().enumerate() {
            assert_eq!(row.get(k).map(String::as_str).unwrap_or(""), want[k], "frame {} field prismcoll.{name}", i + 1);
        }
    }
}

#[test]
fn dissector_rejects_every_malformed_frame_like_we_do() {
    let frames = pcap::read_all(std::fs::File::open(root().join("testdata/malformed.pcap")).unwrap()).unwrap();
    let rows = tshark("testdata/malformed.pcap");
    assert_eq!(rows.len(), frames.len());
    let reject = FIELDS.iter().position(|f| *f == "reject").unwrap();
    for (i, (row, frame)) in rows.iter().zip(&frames).enumerate() {
        let want = expected(&frame.data);
        if frame.data.len() < ETH_HEADER_LEN {
            // Wireshark's own Ethernet dissector refuses it before PRISM is reached.
            assert_eq!(row[reject], "", "frame {}", i + 1);
            continue;
        }
        assert_eq!(row[reject], want[reject], "frame {} reason", i + 1);
        assert_eq!(row[reject + 1], want[reject + 1], "frame {} offset", i + 1);
    }
}
