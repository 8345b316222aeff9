//! NumberGroups: a 4-byte descriptor, whole values, zero padding to 4 bytes.

use super::codes::{descriptor as d, FormatCode, KulischState, GROUP_DESCRIPTOR_LEN, KULISCH_MAX_WIDTH, KULISCH_MIN_WIDTH};
use super::{Error, Reason, Result};
use prism_arith::NumFormat;

/// One validated NumberGroup, borrowing its value bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupRepr<'a> {
    pub format: NumFormat,
    pub count: u16,
    /// `count * format.value_bytes()` bytes, without padding.
    pub values: &'a [u8],
}

/// Padding after `n` value bytes.
pub const fn pad4(n: usize) -> usize {
    (4 - n % 4) % 4
}

/// The wire code of a number format.
pub fn format_code(f: NumFormat) -> FormatCode {
    match f {
        NumFormat::Int8 => FormatCode::INT8,
        NumFormat::Fp16 => FormatCode::FP16,
        NumFormat::Bf16 => FormatCode::BF16,
        NumFormat::Fp32 => FormatCode::FP32,
        NumFormat::Kulisch { .. } => FormatCode::KULISCH,
    }
}

/// Whether `w` is a Kulisch width the wire allows.
pub fn kulisch_width_ok(w: u32) -> bool {
    w.is_multiple_of(8) && (KULISCH_MIN_WIDTH as u32..=KULISCH_MAX_WIDTH as u32).contains(&w)
}

impl<'a> GroupRepr<'a> {
    /// Bytes this group takes in a body: descriptor, values, padding.
    pub fn buffer_len(&self) -> usize {
        let v = self.values.len();
        GROUP_DESCRIPTOR_LEN + v + pad4(v)
    }

    pub fn descriptor(&self) -> u32 {
        let code = u8::from(format_code(self.format)) as u32;
        let width = match self.format {
            NumFormat::Kulisch { width_bits } => (width_bits as u32 / 8).saturating_sub(1) & d::WIDTH_MASK,
            _ => 0,
        };
        (code << d::FORMAT_SHIFT) | (width << d::WIDTH_SHIFT) | self.count as u32
    }

    /// Writes the group into `out[..buffer_len()]`, padding included.
    pub fn emit(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(&self.descriptor().to_be_bytes());
        let v = self.values.len();
        out[4..4 + v].copy_from_slice(self.values);
        out[4 + v..4 + v + pad4(v)].fill(0);
    }
}

/// Total body bytes for `groups`.
pub fn groups_len(groups: &[GroupRepr<'_>]) -> usize {
    groups.iter().map(GroupRepr::buffer_len).sum()
}

/// Writes `groups` back to back into `out`; returns the bytes written.
pub fn emit_groups(groups: &[GroupRepr<'_>], out: &mut [u8]) -> usize {
    let mut at = 0;
    for g in groups {
        let n = g.buffer_len();
        g.emit(&mut out[at..at + n]);
        at += n;
    }
    at
}

/// Walks a DATA/RESULT body group by group, validating each one.
///
/// Errors carry frame offsets: `base` is the frame offset of the body's first byte.
#[derive(Debug, Clone)]
pub struct GroupIter<'a> {
    body: &'a [u8],
    at: usize,
    base: usize,
    failed: bool,
}

impl<'a> GroupIter<'a> {
    pub fn new(body: &'a [u8], base: usize) -> Self {
        GroupIter { body, at: 0, base, failed: false }
    }

    /// Body bytes not yet walked.
    pub fn remaining(&self) -> usize {
        self.body.len() - self.at
    }

    /// Frame offset of the next byte to walk.
    pub fn offset(&self) -> usize {
        self.base + self.at
    }

    /// The next group, validated (the walk must not be at the body's end).
    pub(crate) fn next_group(&mut self) -> Result<GroupRepr<'a>> {
        let start = self.at;
        let off = self.base + start;
        let desc_bytes = self.body.get(start..start + GROUP_DESCRIPTOR_LEN).ok_or(Error::new(Reason::GroupOverrun, off))?;
        let word = u32::from_be_bytes([desc_bytes[0], desc_bytes[1], desc_bytes[2], desc_bytes[3]]);
        let width_field = (word >> d::WIDTH_SHIFT) & d::WIDTH_MASK;
        let count = (word & d::COUNT_MASK) as u16;
        if word & d::RESERVED_MASK != 0 {
            return Err(Error::new(Reason::ReservedNonZero, off));
        }
        let format = descriptor_format(word).map_err(|r| Error::new(r, off))?;
        if !matches!(format, NumFormat::Kulisch { .. }) && width_field != 0 {
            return Err(Error::new(Reason::ReservedNonZero, off + 1));
        }
        if count == 0 {
            return Err(Error::new(Reason::EmptyGroup, off + 2));
        }
        let vstart = start + GROUP_DESCRIPTOR_LEN;
        let vlen = count as usize * format.value_bytes();
        let end = vstart + vlen + pad4(vlen);
        if end > self.body.len() {
            return Err(Error::new(Reason::GroupOverrun, off));
        }
        let values = &self.body[vstart..vstart + vlen];
        if let Some(p) = self.body[vstart + vlen..end].iter().position(|&b| b != 0) {
            return Err(Error::new(Reason::PaddingNonZero, self.base + vstart + vlen + p));
        }
        if let NumFormat::Kulisch { .. } = format {
            let vb = format.value_bytes();
            for (i, v) in values.chunks_exact(vb).enumerate() {
                if !kulisch_value_ok(v) {
                    return Err(Error::new(Reason::BadKulischValue, self.base + vstart + i * vb));
                }
            }
        }
        self.at = end;
        Ok(GroupRepr { format, count, values })
    }
}

/// The number format a descriptor word names, or why it names none.
fn descriptor_format(word: u32) -> std::result::Result<NumFormat, Reason> {
    Ok(match FormatCode::from((word >> d::FORMAT_SHIFT) as u8) {
        FormatCode::INT8 => NumFormat::Int8,
        FormatCode::FP16 => NumFormat::Fp16,
        FormatCode::BF16 => NumFormat::Bf16,
        FormatCode::FP32 => NumFormat::Fp32,
        FormatCode::KULISCH => {
            let w = (((word >> d::WIDTH_SHIFT) & d::WIDTH_MASK) + 1) * 8;
            if !kulisch_width_ok(w) {
                return Err(Reason::BadKulischWidth);
            }
            NumFormat::Kulisch { width_bits: w as u16 }
        }
        FormatCode::Unknown(_) => return Err(Reason::UnknownFormat),
    })
}

/// The groups of a body `GroupIter` has already validated, read without
/// checking again: the engine reads a DATA body's groups twice after its
/// parse. On a body that was never validated it stops at the first
/// descriptor it cannot read, and never reads past the body.
#[derive(Debug, Clone)]
pub struct ValidGroups<'a> {
    rest: &'a [u8],
}

impl<'a> ValidGroups<'a> {
    pub fn new(body: &'a [u8]) -> Self {
        ValidGroups { rest: body }
    }
}

impl<'a> Iterator for ValidGroups<'a> {
    type Item = GroupRepr<'a>;

    fn next(&mut self) -> Option<GroupRepr<'a>> {
        let (desc, after) = self.rest.split_first_chunk::<GROUP_DESCRIPTOR_LEN>()?;
        let word = u32::from_be_bytes(*desc);
        let format = descriptor_format(word).ok()?;
        let count = (word & d::COUNT_MASK) as u16;
        let vlen = count as usize * format.value_bytes();
        let values = after.get(..vlen)?;
        self.rest = after.get(vlen + pad4(vlen)..).unwrap_or(&[]);
        Some(GroupRepr { format, count, values })
    }
}

/// A Kulisch value is canonical: FINITE has a non-zero integer, every other state a zero one.
pub fn kulisch_value_ok(v: &[u8]) -> bool {
    let int_is_zero = v[1..].iter().all(|&b| b == 0);
    match KulischState::from(v[0]) {
        KulischState::FINITE => !int_is_zero,
        KulischState::Unknown(_) => false,
        _ => int_is_zero,
    }
}

impl<'a> Iterator for GroupIter<'a> {
    type Item = Result<GroupRepr<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.body.len() {
            return None;
        }
        let r = self.next_group();
        self.failed = r.is_err();
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(groups: &[GroupRepr<'_>]) -> Vec<u8> {
        let mut b = vec![0xa5; groups_len(groups)];
        emit_groups(groups, &mut b);
        b
    }

    #[test]
    fn valid_groups_reads_what_group_iter_validated() {
        let (v1, v2, v3) = ([1u8, 2, 3], [0u8; 8], [9u8; 2]);
        let gs =
            [GroupRepr { format: NumFormat::Int8, count: 3, values: &v1 }, GroupRepr { format: NumFormat::Fp32, count: 2, values: &v2 }, GroupRepr { format: NumFormat::Fp16, count: 1, values: &v3 }];
        let b = body(&gs);
        let checked: Vec<_> = GroupIter::new(&b, 0).map(|g| g.unwrap()).collect();
        assert_eq!(checked, gs);
        assert_eq!(ValidGroups::new(&b).collect::<Vec<_>>(), gs);
    }

    #[test]
    fn valid_groups_stops_inside_a_body_it_cannot_read() {
        let v = [7u8; 8];
        let b = body(&[GroupRepr { format: NumFormat::Fp32, count: 2, values: &v }]);
        // Cut anywhere: never a value past the end, never a panic.
        for cut in 0..b.len() {
            let gs: Vec<_> = ValidGroups::new(&b[..cut]).collect();
            assert!(gs.is_empty(), "cut {cut}: {gs:?}");
        }
        // An unknown format code ends the walk.
        let mut bad = b.clone();
        bad[0] = 0xf0;
        assert_eq!(ValidGroups::new(&bad).count(), 0);
        // A descriptor whose count runs past the body yields nothing.
        let mut long = b;
        long[3] = 200;
        assert_eq!(ValidGroups::new(&long).count(), 0);
    }
}
