//! DATA and RESULT: the 40-byte header and a NumberGroup body.

use super::codes::{descriptor, flags, offsets as o, Class, FormatCode, CONTROL_WORD_LEN, DATA_HEADER_LEN, GROUP_DESCRIPTOR_LEN, MAX_GROUPS, VERSION};
use super::group::{GroupIter, GroupRepr, ValidGroups};
use super::{at, packet_view, view_fields, Error, Identity, Reason, Result};
use prism_arith::NumFormat;

const HEADER_END: usize = CONTROL_WORD_LEN + DATA_HEADER_LEN;

packet_view!(
    /// Zero-copy view of a DATA or RESULT packet, starting at the control word.
    DataPacket
);

impl<T: AsRef<[u8]>> DataPacket<T> {
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_END {
            return Err(Error::new(Reason::TruncatedHeader, len));
        }
        if len != HEADER_END + self.body_len() as usize {
            return Err(Error::new(Reason::BodyLengthMismatch, o::data::BODY_LEN.start));
        }
        Ok(())
    }
    pub fn class(&self) -> Class {
        Class::from(self.class_code())
    }
    pub fn body(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = (HEADER_END + self.body_len() as usize).min(b.len());
        &b[HEADER_END..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> DataPacket<T> {
    pub fn body_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_END..]
    }
}

view_fields!(DataPacket {
    version / set_version: u8 = at(o::VERSION);
    class_code / set_class_code: u8 = at(o::CLASS);
    src_ep / set_src_ep: u16 = o::data::SRC_EP;
    dst_ep / set_dst_ep: u16 = o::data::DST_EP;
    packet_id / set_packet_id: u32 = o::data::PACKET_ID;
    first_element / set_first_element: u32 = o::data::FIRST_ELEMENT;
    element_count / set_element_count: u16 = o::data::ELEMENT_COUNT;
    group_count / set_group_count: u8 = at(o::data::GROUP_COUNT);
    flags / set_flags: u8 = at(o::data::FLAGS);
    body_len / set_body_len: u16 = o::data::BODY_LEN;
    stream_id / set_stream_id: u16 = o::data::STREAM_ID;
    reserved / set_reserved: u16 = o::data::RESERVED;
});

/// A validated DATA or RESULT packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataRepr<'a> {
    /// `Class::DATA` or `Class::RESULT`.
    pub class: Class,
    pub identity: Identity,
    pub src_ep: u16,
    pub dst_ep: u16,
    pub packet_id: u32,
    pub first_element: u32,
    pub element_count: u16,
    pub group_count: u8,
    pub flags: u8,
    pub stream_id: u16,
    /// The validated groups, back to back.
    pub body: &'a [u8],
}

impl<'a> DataRepr<'a> {
    /// Validates everything the frame alone can prove (docs/wire-format.md 5.4).
    /// `base` is the frame offset of the control word, for error offsets.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &DataPacket<&'a T>, base: usize) -> Result<Self> {
        let bytes: &'a [u8] = <T as AsRef<[u8]>>::as_ref(packet.buffer);
        // The header read from a fixed-size array: its fields need no bounds checks.
        let Some(head) = bytes.first_chunk::<HEADER_END>() else {
            return Err(Error::new(Reason::TruncatedHeader, base + bytes.len()));
        };
        let p = DataPacket::new_unchecked(&head[..]);
        let err = |r, off: usize| Err(Error::new(r, base + off));
        if bytes.len() != HEADER_END + p.body_len() as usize {
            return err(Reason::BodyLengthMismatch, o::data::BODY_LEN.start);
        }
        if p.reserved() != 0 {
            return err(Reason::ReservedNonZero, o::data::RESERVED.start);
        }
        let fl = p.flags();
        if fl & flags::RESERVED != 0 {
            return err(Reason::ReservedNonZero, o::data::FLAGS);
        }
        let (count, groups) = (p.element_count(), p.group_count());
        if fl & flags::INEXACT != 0 {
            if fl & flags::LAST == 0 || count != 0 || groups != 0 || p.body_len() != 0 {
                return err(Reason::InexactMalformed, o::data::FLAGS);
            }
        } else if groups == 0 || count == 0 {
            let off = if count == 0 { o::data::ELEMENT_COUNT.start } else { o::data::GROUP_COUNT };
            return err(Reason::EmptyPacket, off);
        }
        if p.first_element() as u64 + count as u64 > 1u64 << 32 {
            return err(Reason::ElementRangeOverflow, o::data::FIRST_ELEMENT.start);
        }
        let body: &'a [u8] = &bytes[HEADER_END..];
        let mut walk = GroupIter::new(body, base + HEADER_END);
        // One FP32 group of exactly the header's count filling the body
        // (nearly every DATA frame) is valid as it stands: FP32 values need
        // no check and 4-byte values no padding. One compare of the
        // descriptor word instead of the walk, which would accept it too.
        let fp32_desc = ((u8::from(FormatCode::FP32) as u32) << descriptor::FORMAT_SHIFT) | count as u32;
        let (seen, elements) =
            if groups == 1 && body.len() == GROUP_DESCRIPTOR_LEN + 4 * count as usize && body.first_chunk::<GROUP_DESCRIPTOR_LEN>().is_some_and(|w| u32::from_be_bytes(*w) == fp32_desc) {
                (1, count as u32)
            } else if groups == 1 && !body.is_empty() {
                // One group (nearly every packet): the walk below, unrolled.
                let g = walk.next_group()?;
                if walk.remaining() > 0 {
                    return Err(Error::new(Reason::GroupCountMismatch, walk.offset()));
                }
                (1, g.count as u32)
            } else {
                let mut seen = 0usize;
                let mut elements = 0u32;
                while walk.remaining() > 0 {
                    if seen == groups as usize {
                        return Err(Error::new(Reason::GroupCountMismatch, walk.offset()));
                    }
                    match walk.next() {
                        Some(Ok(g)) => {
                            seen += 1;
                            elements += g.count as u32;
                        }
                        Some(Err(e)) => return Err(e),
                        None => break,
                    }
                }
                (seen, elements)
            };
        if seen != groups as usize {
            return err(Reason::GroupCountMismatch, o::data::GROUP_COUNT);
        }
        if elements != count as u32 {
            return err(Reason::ElementCountMismatch, o::data::ELEMENT_COUNT.start);
        }
        Ok(DataRepr {
            class: p.class(),
            identity: p.identity(),
            src_ep: p.src_ep(),
            dst_ep: p.dst_ep(),
            packet_id: p.packet_id(),
            first_element: p.first_element(),
            element_count: count,
            group_count: groups,
            flags: fl,
            stream_id: p.stream_id(),
            body,
        })
    }

    /// The groups of a validated packet.
    pub fn groups(&self) -> impl Iterator<Item = GroupRepr<'a>> + 'a {
        ValidGroups::new(self.body)
    }

    /// The one group of a validated packet whose body is a single FP32
    /// group (nearly every DATA packet), read by one compare of its
    /// descriptor word; `None` for any other body (read it with `groups`).
    #[inline]
    pub fn single_fp32_group(&self) -> Option<GroupRepr<'a>> {
        if self.group_count != 1 {
            return None;
        }
        let (desc, values) = self.body.split_first_chunk::<GROUP_DESCRIPTOR_LEN>()?;
        let count = self.element_count;
        let want = ((u8::from(FormatCode::FP32) as u32) << descriptor::FORMAT_SHIFT) | count as u32;
        if u32::from_be_bytes(*desc) != want {
            return None;
        }
        let values = values.get(..4 * count as usize)?;
        Some(GroupRepr { format: NumFormat::Fp32, count, values })
    }

    pub fn is_last(&self) -> bool {
        self.flags & flags::LAST != 0
    }
    pub fn is_inexact(&self) -> bool {
        self.flags & flags::INEXACT != 0
    }
    /// One past the last element position this packet covers.
    pub fn end_element(&self) -> u64 {
        self.first_element as u64 + self.element_count as u64
    }

    /// Checks that need the operation: range inside the vector and LAST where it ends.
    pub fn check_against_vector(&self, vector_len: u32, base: usize) -> Result<()> {
        if self.is_inexact() {
            return Ok(());
        }
        if self.end_element() > vector_len as u64 {
            return Err(Error::new(Reason::RangeOutsideVector, base + o::data::FIRST_ELEMENT.start));
        }
        if self.is_last() != (self.end_element() == vector_len as u64) {
            return Err(Error::new(Reason::LastFlagMismatch, base + o::data::FLAGS));
        }
        Ok(())
    }

    pub fn buffer_len(&self) -> usize {
        HEADER_END + self.body.len()
    }

    /// Writes control word, header and body into `buf[..buffer_len()]`.
    pub fn emit(&self, buf: &mut [u8]) {
        self.emit_filled(buf, self.body.len(), |b| b.copy_from_slice(self.body));
    }

    /// Bytes of the packet with a body of `body_len` bytes.
    pub fn len_with_body(body_len: usize) -> usize {
        HEADER_END + body_len
    }

    /// Writes control word and header for a body of `body_len` bytes (not
    /// `self.body`) into `buf[..len_with_body(body_len)]`, and lets `fill`
    /// write the body in place: a body built straight into the frame is
    /// never copied.
    pub fn emit_filled(&self, buf: &mut [u8], body_len: usize, fill: impl FnOnce(&mut [u8])) {
        debug_assert!(self.group_count as usize <= MAX_GROUPS);
        let mut p = DataPacket::new_unchecked(&mut buf[..HEADER_END + body_len]);
        p.set_version(VERSION);
        p.set_class_code(self.class.into());
        p.set_identity(&self.identity);
        p.set_src_ep(self.src_ep);
        p.set_dst_ep(self.dst_ep);
        p.set_packet_id(self.packet_id);
        p.set_first_element(self.first_element);
        p.set_element_count(self.element_count);
        p.set_group_count(self.group_count);
        p.set_flags(self.flags);
        p.set_body_len(body_len as u16);
        p.set_stream_id(self.stream_id);
        p.set_reserved(0);
        fill(p.body_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{emit_groups, groups_len};

    fn repr<'a>(body: &'a [u8], count: u16, groups: u8) -> DataRepr<'a> {
        let identity = Identity { job: 1, group: 2, group_gen: 3, op: 4, op_gen: 5 };
        DataRepr { class: Class::DATA, identity, src_ep: 1, dst_ep: 2, packet_id: 0, first_element: 0, element_count: count, group_count: groups, flags: 0, stream_id: 1, body }
    }

    #[test]
    fn single_fp32_group_is_the_first_group_or_none() {
        let (f, i, k) = ([7u8; 12], [1u8, 2, 3], [0u8; 36]);
        let fp32 = GroupRepr { format: NumFormat::Fp32, count: 3, values: &f };
        let int8 = GroupRepr { format: NumFormat::Int8, count: 3, values: &i };
        let kul = GroupRepr { format: NumFormat::Kulisch { width_bits: 288 }, count: 1, values: &k };
        for (groups, fast) in [(vec![fp32], true), (vec![int8], false), (vec![kul], false), (vec![fp32, int8], false), (vec![int8, fp32], false)] {
            let mut body = vec![0xa5; groups_len(&groups)];
            emit_groups(&groups, &mut body);
            let count = groups.iter().map(|g| g.count).sum();
            let d = repr(&body, count, groups.len() as u8);
            let got = d.single_fp32_group();
            assert_eq!(got, if fast { d.groups().next() } else { None }, "{groups:?}");
            if fast {
                assert_eq!(got, Some(fp32));
            }
        }
        // A descriptor whose count differs from the header's is not taken.
        let mut body = vec![0; groups_len(&[fp32])];
        emit_groups(&[fp32], &mut body);
        assert_eq!(repr(&body, 2, 1).single_fp32_group(), None);
        // The parse takes such a body by its descriptor: the same packet back,
        // and the walk's own errors for the bodies it does not take.
        let mut buf = vec![0; DataRepr::len_with_body(body.len())];
        repr(&body, 3, 1).emit(&mut buf);
        assert_eq!(DataRepr::parse(&DataPacket::new_unchecked(&buf[..]), 0), Ok(repr(&body, 3, 1)));
        let at = HEADER_END + 3;
        buf[at] = 2; // descriptor count 2 under a header count of 3
        assert_eq!(DataRepr::parse(&DataPacket::new_unchecked(&buf[..]), 0).map_err(|e| e.reason), Err(Reason::GroupCountMismatch));
        buf[at] = 3;
        buf[HEADER_END] = 0x10; // INT8: three values, then a pad byte that is not zero
        assert_eq!(DataRepr::parse(&DataPacket::new_unchecked(&buf[..]), 0).map_err(|e| e.reason), Err(Reason::PaddingNonZero));
        // A body cut short is not read past its end.
        assert_eq!(repr(&body[..8], 3, 1).single_fp32_group(), None);
        assert_eq!(repr(&body[..2], 3, 1).single_fp32_group(), None);
    }
}
