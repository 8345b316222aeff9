//! PRISM wire format: zero-copy views, validating parsers and emitters.
//!
//! Views (`EthernetFrame`, `ControlPacket`, `DataPacket`, `ProgressPacket`)
//! read and write fields in place over any `AsRef<[u8]>` buffer, an mbuf
//! included. `Repr` types are the parsed, validated form: `parse` checks
//! everything `docs/wire-format.md` requires before anything is used,
//! `buffer_len` says how many bytes `emit` writes. Nothing here allocates.

pub mod codes;
mod control;
mod data;
mod error;
mod ethernet;
mod frame;
mod group;
mod progress;

pub use codes::*;
pub use control::{AckBody, BindingRecord, CapabilityRecord, ContextRecord, ControlBody, ControlPacket, ControlRepr};
pub use data::{DataPacket, DataRepr};
pub(crate) use error::Result;
pub use error::{Error, ErrorKind, Reason};
pub use ethernet::{EthernetFrame, EthernetRepr, Mac};
pub use frame::{capacity, declared_prism_len, parse_envelope, parse_frame, single_window_elements, Envelope, Limits, ParsedFrame, PrismRepr};
pub use group::{emit_groups, format_code, groups_len, GroupIter, GroupRepr};
pub use progress::{Hole, ProgressPacket, ProgressRepr};

/// Fixed-size records that are either borrowed wire bytes (after `parse`) or
/// typed values (to `emit`): parsing stays zero-copy and building stays easy.
#[derive(Debug, Clone, Copy)]
pub enum Records<'a, R> {
    Wire(&'a [u8]),
    Typed(&'a [R]),
}

/// A fixed-size record inside a CONTROL or PROGRESS body.
pub trait Record: Copy {
    const LEN: usize;
    /// Reads one record from exactly `LEN` bytes that were already validated.
    fn read(bytes: &[u8]) -> Self;
    fn write(&self, bytes: &mut [u8]);
}

impl<'a, R: Record> Records<'a, R> {
    pub fn len(&self) -> usize {
        match self {
            Records::Wire(b) => b.len() / R::LEN,
            Records::Typed(t) => t.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn get(&self, i: usize) -> Option<R> {
        match self {
            Records::Wire(b) => b.get(i * R::LEN..(i + 1) * R::LEN).map(R::read),
            Records::Typed(t) => t.get(i).copied(),
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = R> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }
    pub fn byte_len(&self) -> usize {
        self.len() * R::LEN
    }
    /// Writes every record into `out`, which holds exactly `byte_len()` bytes.
    pub fn write(&self, out: &mut [u8]) {
        match self {
            Records::Wire(b) => out[..b.len()].copy_from_slice(b),
            Records::Typed(t) => {
                for (r, chunk) in t.iter().zip(out.chunks_exact_mut(R::LEN)) {
                    r.write(chunk)
                }
            }
        }
    }
}

impl<'a, R: Record + PartialEq> PartialEq for Records<'a, R> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

/// Identity shared by every class (header offsets 0..18).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Identity {
    pub job: u64,
    pub group: u16,
    pub group_gen: u16,
    pub op: u16,
    pub op_gen: u32,
}

impl Identity {
    #[inline]
    pub(crate) fn read(p: &[u8]) -> Self {
        use codes::offsets as o;
        Identity { job: u64::get(p, o::JOB), group: u16::get(p, o::GROUP), group_gen: u16::get(p, o::GROUP_GEN), op: u16::get(p, o::OP), op_gen: u32::get(p, o::OP_GEN) }
    }
    #[inline]
    pub(crate) fn write(&self, p: &mut [u8]) {
        use codes::offsets as o;
        u64::set(p, o::JOB, self.job);
        u16::set(p, o::GROUP, self.group);
        u16::set(p, o::GROUP_GEN, self.group_gen);
        u16::set(p, o::OP, self.op);
        u32::set(p, o::OP_GEN, self.op_gen);
    }
    /// The generation pair, ordered lexicographically.
    pub fn generation(&self) -> (u16, u32) {
        (self.group_gen, self.op_gen)
    }
}

/// Big-endian field access by byte range.
pub(crate) trait FieldIo: Sized {
    fn get(b: &[u8], r: core::ops::Range<usize>) -> Self;
    fn set(b: &mut [u8], r: core::ops::Range<usize>, v: Self);
}
macro_rules! field_io {
    ($($t:ty),*) => {$(
        impl FieldIo for $t {
            #[inline]
            fn get(b: &[u8], r: core::ops::Range<usize>) -> Self {
                let mut a = [0u8; core::mem::size_of::<$t>()];
                a.copy_from_slice(&b[r]);
                <$t>::from_be_bytes(a)
            }
            #[inline]
            fn set(b: &mut [u8], r: core::ops::Range<usize>, v: Self) {
                b[r].copy_from_slice(&v.to_be_bytes())
            }
        }
    )*};
}
field_io!(u8, u16, u32, u64);

/// Generates in-place getters (any buffer) and setters (mutable buffers) for a view.
macro_rules! view_fields {
    ($view:ident { $( $get:ident / $set:ident : $ty:ty = $r:expr ;)* }) => {
        impl<T: AsRef<[u8]>> $view<T> {
            $( #[inline] pub fn $get(&self) -> $ty { <$ty as $crate::wire::FieldIo>::get(self.buffer.as_ref(), $r) } )*
        }
        impl<T: AsRef<[u8]> + AsMut<[u8]>> $view<T> {
            $( #[inline] pub fn $set(&mut self, v: $ty) { <$ty as $crate::wire::FieldIo>::set(self.buffer.as_mut(), $r, v) } )*
        }
    };
}
pub(crate) use view_fields;

/// Declares a PRISM packet view: the struct, constructors, and identity access.
/// Each view adds its own `check_len` (how its class declares its length).
macro_rules! packet_view {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Debug, Clone)]
        pub struct $name<T: AsRef<[u8]>> {
            buffer: T,
        }

        impl<T: AsRef<[u8]>> $name<T> {
            pub const fn new_unchecked(buffer: T) -> Self {
                $name { buffer }
            }
            /// Checks only that the header is there and the declared length matches the buffer.
            pub fn new_checked(buffer: T) -> Result<Self> {
                let p = Self::new_unchecked(buffer);
                p.check_len()?;
                Ok(p)
            }
            pub fn into_inner(self) -> T {
                self.buffer
            }
            pub fn identity(&self) -> Identity {
                Identity::read(self.buffer.as_ref())
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            pub fn set_identity(&mut self, id: &Identity) {
                id.write(self.buffer.as_mut())
            }
        }
    };
}
pub(crate) use packet_view;

/// One-byte field range at `off`.
pub(crate) const fn at(off: usize) -> core::ops::Range<usize> {
    off..off + 1
}
