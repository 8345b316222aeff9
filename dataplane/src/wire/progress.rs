//! PROGRESS: the 44-byte header and up to 32 holes.

use super::codes::{offsets as o, progress_flags, ProgressStatus, CONTROL_WORD_LEN, HOLE_LEN, MAX_HOLES, PROGRESS_HEADER_LEN, VERSION};
use super::{at, packet_view, view_fields, Class, Error, FieldIo, Identity, Reason, Record, Records, Result};

const HEADER_END: usize = CONTROL_WORD_LEN + PROGRESS_HEADER_LEN;

/// A missing element interval `[first, first + count)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hole {
    pub first: u32,
    pub count: u32,
}

impl Record for Hole {
    const LEN: usize = HOLE_LEN;
    fn read(b: &[u8]) -> Self {
        Hole { first: u32::get(b, 0..4), count: u32::get(b, 4..8) }
    }
    fn write(&self, b: &mut [u8]) {
        u32::set(b, 0..4, self.first);
        u32::set(b, 4..8, self.count);
    }
}

packet_view!(
    /// Zero-copy view of a PROGRESS packet, starting at the control word.
    ProgressPacket
);

impl<T: AsRef<[u8]>> ProgressPacket<T> {
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_END {
            return Err(Error::new(Reason::TruncatedHeader, len));
        }
        if len != HEADER_END + self.hole_count() as usize * HOLE_LEN {
            return Err(Error::new(Reason::BodyLengthMismatch, o::progress::HOLE_COUNT.start));
        }
        Ok(())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ProgressPacket<T> {
    pub fn holes_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_END..]
    }
}

view_fields!(ProgressPacket {
    version / set_version: u8 = at(o::VERSION);
    class_code / set_class_code: u8 = at(o::CLASS);
    src_ep / set_src_ep: u16 = o::progress::SRC_EP;
    dst_ep / set_dst_ep: u16 = o::progress::DST_EP;
    stream_id / set_stream_id: u16 = o::progress::STREAM_ID;
    packet_id / set_packet_id: u32 = o::progress::PACKET_ID;
    committed / set_committed: u32 = o::progress::COMMITTED;
    interval_credits / set_interval_credits: u16 = o::progress::INTERVAL_CREDITS;
    byte_credits / set_byte_credits: u32 = o::progress::BYTE_CREDITS;
    status / set_status: u8 = at(o::progress::STATUS);
    flags / set_flags: u8 = at(o::progress::FLAGS);
    hole_count / set_hole_count: u16 = o::progress::HOLE_COUNT;
    reserved / set_reserved: u16 = o::progress::RESERVED;
});

/// A validated PROGRESS packet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressRepr<'a> {
    pub identity: Identity,
    pub src_ep: u16,
    pub dst_ep: u16,
    pub stream_id: u16,
    pub packet_id: u32,
    pub committed: u32,
    pub interval_credits: u16,
    pub byte_credits: u32,
    pub status: ProgressStatus,
    pub flags: u8,
    pub holes: Records<'a, Hole>,
}

impl<'a> ProgressRepr<'a> {
    /// Validates the header and the holes. `base` is the frame offset of the control word.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &ProgressPacket<&'a T>, base: usize) -> Result<Self> {
        let bytes: &'a [u8] = <T as AsRef<[u8]>>::as_ref(packet.buffer);
        let p = ProgressPacket::new_unchecked(bytes);
        let err = |r, off: usize| Err(Error::new(r, base + off));
        if bytes.len() >= HEADER_END && p.hole_count() as usize > MAX_HOLES {
            return err(Reason::TooManyHoles, o::progress::HOLE_COUNT.start);
        }
        p.check_len().map_err(|e| Error::new(e.reason, e.offset + base))?;
        if p.reserved() != 0 {
            return err(Reason::ReservedNonZero, o::progress::RESERVED.start);
        }
        if p.flags() & progress_flags::RESERVED != 0 {
            return err(Reason::ReservedNonZero, o::progress::FLAGS);
        }
        let status = ProgressStatus::from(p.status());
        if !status.is_known() {
            return err(Reason::UnknownStatus, o::progress::STATUS);
        }
        let wire = &bytes[HEADER_END..];
        // Holes start at the watermark or above, ascend, and neither touch nor overlap.
        let mut floor = p.committed() as u64;
        for (i, h) in wire.chunks_exact(HOLE_LEN).map(Hole::read).enumerate() {
            let end = h.first as u64 + h.count as u64;
            if h.count == 0 || (h.first as u64) < floor || end > 1 << 32 {
                return err(Reason::BadHoles, o::progress::HOLES + i * HOLE_LEN);
            }
            floor = end + 1;
        }
        Ok(ProgressRepr {
            identity: p.identity(),
            src_ep: p.src_ep(),
            dst_ep: p.dst_ep(),
            stream_id: p.stream_id(),
            packet_id: p.packet_id(),
            committed: p.committed(),
            interval_credits: p.interval_credits(),
            byte_credits: p.byte_credits(),
            status,
            flags: p.flags(),
            holes: Records::Wire(wire),
        })
    }

    pub fn buffer_len(&self) -> usize {
        HEADER_END + self.holes.byte_len()
    }

    pub fn emit(&self, buf: &mut [u8]) {
        let len = self.buffer_len();
        let mut p = ProgressPacket::new_unchecked(&mut buf[..len]);
        p.set_version(VERSION);
        p.set_class_code(Class::PROGRESS.into());
        p.set_identity(&self.identity);
        p.set_src_ep(self.src_ep);
        p.set_dst_ep(self.dst_ep);
        p.set_stream_id(self.stream_id);
        p.set_packet_id(self.packet_id);
        p.set_committed(self.committed);
        p.set_interval_credits(self.interval_credits);
        p.set_byte_credits(self.byte_credits);
        p.set_status(self.status.into());
        p.set_flags(self.flags);
        p.set_hole_count(self.holes.len() as u16);
        p.set_reserved(0);
        self.holes.write(p.holes_mut());
    }
}
