//! Whole frames: Ethernet padding, declared lengths, MTU, class dispatch.

use super::codes::{
    offsets as o, Class, CONTROL_HEADER_LEN, CONTROL_WORD_LEN, DATA_HEADER_LEN, ETHERTYPE, ETH_HEADER_LEN, ETH_MIN_FRAME, GROUP_DESCRIPTOR_LEN, HOLE_LEN, MAX_HOLES, PROGRESS_HEADER_LEN, VERSION_MAJOR,
};
use super::group::pad4;
use super::{ControlPacket, ControlRepr, DataPacket, DataRepr, Error, EthernetFrame, EthernetRepr, FieldIo, ProgressPacket, ProgressRepr, Reason, Result};
use prism_arith::NumFormat;

/// What a receiver allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest PRISM length (control word to end of body) accepted.
    pub mtu: u16,
}

impl Default for Limits {
    /// The largest defined MTU: a decoder accepts every legal frame.
    fn default() -> Self {
        Limits { mtu: 9000 }
    }
}

/// A validated PRISM packet of any class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PrismRepr<'a> {
    Control(ControlRepr<'a>),
    /// DATA or RESULT; `DataRepr::class` tells which.
    Data(DataRepr<'a>),
    Progress(ProgressRepr<'a>),
}

impl PrismRepr<'_> {
    pub fn class(&self) -> Class {
        match self {
            PrismRepr::Control(_) => Class::CONTROL,
            PrismRepr::Data(d) => d.class,
            PrismRepr::Progress(_) => Class::PROGRESS,
        }
    }
    pub fn buffer_len(&self) -> usize {
        match self {
            PrismRepr::Control(c) => c.buffer_len(),
            PrismRepr::Data(d) => d.buffer_len(),
            PrismRepr::Progress(p) => p.buffer_len(),
        }
    }
    pub fn emit(&self, buf: &mut [u8]) {
        match self {
            PrismRepr::Control(c) => c.emit(buf),
            PrismRepr::Data(d) => d.emit(buf),
            PrismRepr::Progress(p) => p.emit(buf),
        }
    }
    /// Bytes of the whole Ethernet frame `emit_frame` writes (padded to 60).
    pub fn frame_len(&self) -> usize {
        (ETH_HEADER_LEN + self.buffer_len()).max(ETH_MIN_FRAME)
    }
    /// Writes Ethernet header, packet and zero Ethernet padding; returns the frame length.
    pub fn emit_frame(&self, eth: &EthernetRepr, buf: &mut [u8]) -> usize {
        let len = self.frame_len();
        let mut f = EthernetFrame::new_unchecked(&mut buf[..len]);
        eth.emit(&mut f);
        let n = self.buffer_len();
        self.emit(&mut f.payload_mut()[..n]);
        f.payload_mut()[n..].fill(0);
        len
    }
}

/// A frame after parsing: always the Ethernet header; the PRISM packet when it is one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParsedFrame<'a> {
    pub eth: EthernetRepr,
    /// `None` for non-PRISM EtherTypes (the Layer-2 path).
    pub prism: Option<PrismRepr<'a>>,
}

/// The PRISM length a packet declares (control word to end of body), from its class header.
/// `prism` must hold at least the control word and that class's header.
pub fn declared_prism_len(class: Class, prism: &[u8]) -> Option<usize> {
    let need = |h: usize| (prism.len() >= CONTROL_WORD_LEN + h).then_some(());
    match class {
        Class::CONTROL => need(CONTROL_HEADER_LEN).map(|_| CONTROL_WORD_LEN + CONTROL_HEADER_LEN + u16::get(prism, o::control::BODY_LEN) as usize),
        Class::DATA | Class::RESULT => need(DATA_HEADER_LEN).map(|_| CONTROL_WORD_LEN + DATA_HEADER_LEN + u16::get(prism, o::data::BODY_LEN) as usize),
        Class::PROGRESS => need(PROGRESS_HEADER_LEN).map(|_| CONTROL_WORD_LEN + PROGRESS_HEADER_LEN + u16::get(prism, o::progress::HOLE_COUNT) as usize * HOLE_LEN),
        Class::Unknown(_) => None,
    }
}

/// Parses and validates a whole Ethernet frame (FCS excluded).
///
/// Non-PRISM frames come back with `prism: None`. Errors carry frame offsets.
/// Ownership (is the destination MAC ours?) is the caller's decision.
pub fn parse_frame<'a>(frame: &'a [u8], limits: &Limits) -> Result<ParsedFrame<'a>> {
    let Envelope { eth, packet } = parse_envelope(frame, limits)?;
    let Some((class, packet)) = packet else { return Ok(ParsedFrame { eth, prism: None }) };
    let base = ETH_HEADER_LEN;
    let repr = match class {
        Class::CONTROL => PrismRepr::Control(ControlRepr::parse(&ControlPacket::new_unchecked(packet), base)?),
        Class::PROGRESS => PrismRepr::Progress(ProgressRepr::parse(&ProgressPacket::new_unchecked(packet), base)?),
        _ => PrismRepr::Data(DataRepr::parse(&DataPacket::new_unchecked(packet), base)?),
    };
    Ok(ParsedFrame { eth, prism: Some(repr) })
}

/// What `parse_envelope` gives: the Ethernet header, and for a PRISM frame
/// its class and packet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Envelope<'a> {
    pub eth: EthernetRepr,
    pub packet: Option<(Class, &'a [u8])>,
}

/// The first half of `parse_frame`: the Ethernet header, and for a PRISM
/// frame its class and its packet (control word to end of body, Ethernet
/// padding cut off) once the checks every class shares have passed
/// (version, known class, declared length, MTU). The class's own parse
/// (`DataRepr::parse` and so on, at frame offset `ETH_HEADER_LEN`) is the
/// rest; a caller that dispatches on the class itself (the node) skips
/// building the `PrismRepr`.
pub fn parse_envelope<'a>(frame: &'a [u8], limits: &Limits) -> Result<Envelope<'a>> {
    let eth_view = EthernetFrame::new_checked(frame)?;
    let eth = EthernetRepr::parse(&eth_view);
    if eth.ethertype != ETHERTYPE {
        return Ok(Envelope { eth, packet: None });
    }
    let prism = &frame[ETH_HEADER_LEN..];
    let base = ETH_HEADER_LEN;
    if prism.len() < CONTROL_WORD_LEN {
        return Err(Error::new(Reason::TruncatedHeader, frame.len()));
    }
    if prism[o::VERSION] >> 4 != VERSION_MAJOR {
        return Err(Error::new(Reason::VersionMismatch, base + o::VERSION));
    }
    let class = Class::from(prism[o::CLASS]);
    if !class.is_known() {
        return Err(Error::new(Reason::UnknownClass, base + o::CLASS));
    }
    let declared = declared_prism_len(class, prism).ok_or(Error::new(Reason::TruncatedHeader, frame.len()))?;
    let len_field = base
        + match class {
            Class::CONTROL => o::control::BODY_LEN.start,
            Class::PROGRESS => o::progress::HOLE_COUNT.start,
            _ => o::data::BODY_LEN.start,
        };
    if class == Class::PROGRESS && u16::get(prism, o::progress::HOLE_COUNT) as usize > MAX_HOLES {
        return Err(Error::new(Reason::TooManyHoles, len_field));
    }
    let exact = prism.len() == declared;
    let padded = ETH_HEADER_LEN + declared < ETH_MIN_FRAME && frame.len() == ETH_MIN_FRAME;
    if !(exact || padded) {
        return Err(Error::new(Reason::BodyLengthMismatch, len_field));
    }
    if declared > limits.mtu as usize {
        return Err(Error::new(Reason::ExceedsMtu, len_field));
    }
    Ok(Envelope { eth, packet: Some((class, &prism[..declared])) })
}

/// Most values of `format` one DATA/RESULT packet holds at `mtu` in a single group.
pub fn capacity(format: NumFormat, mtu: u16) -> usize {
    let body = (mtu as usize).saturating_sub(CONTROL_WORD_LEN + DATA_HEADER_LEN + GROUP_DESCRIPTOR_LEN);
    let w = format.value_bytes();
    let mut n = body / w;
    while n > 0 && n * w + pad4(n * w) > body {
        n -= 1;
    }
    n.min(u16::MAX as usize)
}

/// The SINGLE node's receive window: two maximal INT8 packets.
pub fn single_window_elements(mtu: u16) -> usize {
    2 * capacity(NumFormat::Int8, mtu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_capacities() {
        let k = |w| NumFormat::Kulisch { width_bits: w };
        assert_eq!(capacity(NumFormat::Int8, 1500), 1452);
        assert_eq!(capacity(NumFormat::Fp16, 1500), 726);
        assert_eq!(capacity(NumFormat::Bf16, 1500), 726);
        assert_eq!(capacity(NumFormat::Fp32, 1500), 363);
        assert_eq!(capacity(k(280), 1500), 40);
        assert_eq!(capacity(k(4096), 1500), 2);
        assert_eq!(capacity(NumFormat::Int8, 576), 528);
        assert_eq!(single_window_elements(1500), 2904);
        assert_eq!(single_window_elements(576), 1056);
    }

    #[test]
    fn capacity_matches_the_seed_formula_for_int8() {
        for mtu in [576u16, 1500, 9000] {
            assert_eq!(capacity(NumFormat::Int8, mtu), 4 * ((mtu as usize - 46) / 4));
        }
    }

    #[test]
    fn documented_table() {
        let k = |w| NumFormat::Kulisch { width_bits: w };
        let rows = [(NumFormat::Int8, [528, 1452, 8952]), (NumFormat::Fp16, [264, 726, 4476]), (NumFormat::Fp32, [132, 363, 2238]), (k(280), [14, 40, 248]), (k(4096), [1, 2, 17])];
        for (f, caps) in rows {
            for (mtu, cap) in [576u16, 1500, 9000].into_iter().zip(caps) {
                assert_eq!(capacity(f, mtu), cap, "{f:?} at {mtu}");
            }
        }
        assert_eq!(single_window_elements(9000), 17904);
    }
}
