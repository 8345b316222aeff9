//! Ethernet II header.

use super::codes::ETH_HEADER_LEN;
use super::{view_fields, Error, Reason, Result};
use core::fmt;

/// A MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Mac(pub [u8; 6]);

impl Mac {
    pub const BROADCAST: Mac = Mac([0xff; 6]);
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 1 == 1
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
    }
}

impl core::str::FromStr for Mac {
    type Err = String;
    fn from_str(s: &str) -> core::result::Result<Self, String> {
        let mut out = [0u8; 6];
        let mut parts = s.split(':');
        for b in out.iter_mut() {
            let part = parts.next().ok_or_else(|| format!("MAC '{s}' has fewer than 6 octets"))?;
            *b = u8::from_str_radix(part, 16).map_err(|_| format!("MAC '{s}': bad octet '{part}'"))?;
        }
        if parts.next().is_some() {
            return Err(format!("MAC '{s}' has more than 6 octets"));
        }
        Ok(Mac(out))
    }
}

mod field {
    use core::ops::Range;
    pub const DST: Range<usize> = 0..6;
    pub const SRC: Range<usize> = 6..12;
    pub const ETHERTYPE: Range<usize> = 12..14;
}

/// Zero-copy view of an Ethernet II frame.
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < ETH_HEADER_LEN {
            return Err(Error::new(Reason::TruncatedEthernet, buffer.as_ref().len()));
        }
        Ok(EthernetFrame { buffer })
    }
    pub fn into_inner(self) -> T {
        self.buffer
    }
    pub fn dst(&self) -> Mac {
        let mut m = [0; 6];
        m.copy_from_slice(&self.buffer.as_ref()[field::DST]);
        Mac(m)
    }
    pub fn src(&self) -> Mac {
        let mut m = [0; 6];
        m.copy_from_slice(&self.buffer.as_ref()[field::SRC]);
        Mac(m)
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[ETH_HEADER_LEN..]
    }
}

view_fields!(EthernetFrame {
    ethertype / set_ethertype: u16 = field::ETHERTYPE;
});

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    pub fn set_dst(&mut self, m: Mac) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&m.0)
    }
    pub fn set_src(&mut self, m: Mac) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&m.0)
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[ETH_HEADER_LEN..]
    }
}

/// Parsed Ethernet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetRepr {
    pub dst: Mac,
    pub src: Mac,
    pub ethertype: u16,
}

impl EthernetRepr {
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> Self {
        EthernetRepr { dst: frame.dst(), src: frame.src(), ethertype: frame.ethertype() }
    }
    pub const fn buffer_len(&self) -> usize {
        ETH_HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut EthernetFrame<T>) {
        frame.set_dst(self.dst);
        frame.set_src(self.src);
        frame.set_ethertype(self.ethertype);
    }
}
