//! Reading and writing classic pcap captures of Ethernet frames.

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::DataLink;
use std::borrow::Cow;
use std::io::{Read, Write};
use std::time::Duration;

/// One captured frame and its timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub ts: Duration,
    pub data: Vec<u8>,
}

/// Why a capture could not be read or written.
#[derive(Debug)]
pub struct CaptureError(pub String);

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for CaptureError {}

/// Reads every frame of an Ethernet pcap.
pub fn read_all<R: Read>(r: R) -> Result<Vec<Captured>, CaptureError> {
    let mut reader = PcapReader::new(r).map_err(|e| CaptureError(format!("not a pcap file: {e}")))?;
    let link = reader.header().datalink;
    if link != DataLink::ETHERNET {
        return Err(CaptureError(format!("link type {link:?} is not Ethernet")));
    }
    let mut out = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.map_err(|e| CaptureError(format!("frame {}: {e}", out.len() + 1)))?;
        out.push(Captured { ts: p.timestamp, data: p.data.into_owned() });
    }
    Ok(out)
}

/// Writes frames as an Ethernet pcap with microsecond timestamps.
pub fn write_all<W: Write>(w: W, frames: &[Captured]) -> Result<(), CaptureError> {
    let header = PcapHeader { datalink: DataLink::ETHERNET, snaplen: 65535, endianness: pcap_file::Endianness::Little, ..Default::default() };
    let mut writer = PcapWriter::with_header(w, header).map_err(|e| CaptureError(e.to_string()))?;
    for f in frames {
        let p = PcapPacket { timestamp: f.ts, orig_len: f.data.len() as u32, data: Cow::Borrowed(&f.data) };
        writer.write_packet(&p).map_err(|e| CaptureError(e.to_string()))?;
    }
    Ok(())
}
