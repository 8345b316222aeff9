//! Why a frame was refused, and where.
//!
//! Length errors (the frame's bytes disagree with its declared sizes) are kept
//! apart from content errors (the sizes agree but a field is not allowed). Every
//! reason has a stable snake_case name that counters and the decoder print.

use core::fmt;

/// Whether a reject is about sizes or about values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Length,
    Content,
}

macro_rules! reasons {
    ($( $kind:ident $var:ident => $name:literal : $doc:literal ),+ $(,)?) => {
        /// The reason a frame was refused.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Reason { $( #[doc = $doc] $var, )+ }
        impl Reason {
            pub const ALL: &'static [Reason] = &[$(Reason::$var),+];
            pub const COUNT: usize = Reason::ALL.len();
            /// Stable snake_case name, used by counters and the decoder.
            pub fn name(self) -> &'static str { match self { $(Reason::$var => $name,)+ } }
            pub fn kind(self) -> ErrorKind { match self { $(Reason::$var => ErrorKind::$kind,)+ } }
            pub fn describe(self) -> &'static str { match self { $(Reason::$var => $doc,)+ } }
            /// Dense index, for counter arrays.
            pub fn index(self) -> usize { self as usize }
        }
    };
}

reasons! {
    Length TruncatedEthernet => "truncated_ethernet": "frame shorter than an Ethernet header",
    Length TruncatedHeader => "truncated_header": "frame ends inside the control word or class header",
    Length BodyLengthMismatch => "body_length_mismatch": "frame length differs from the declared length",
    Length ExceedsMtu => "exceeds_mtu": "PRISM length is larger than the MTU",
    Length GroupOverrun => "group_overrun": "a descriptor, value or padding crosses the end of the body",
    Length BadBodyLength => "bad_body_length": "CONTROL body length does not fit the command",
    Content VersionMismatch => "version_mismatch": "major version is not 1",
    Content UnknownClass => "unknown_class": "class code is not CONTROL, DATA, RESULT or PROGRESS",
    Content UnknownCommand => "unknown_command": "CONTROL command code is not defined",
    Content UnknownStatus => "unknown_status": "ACK or PROGRESS status is not defined",
    Content UnknownFormat => "unknown_format": "NumberGroup format code is not defined",
    Content ReservedNonZero => "reserved_nonzero": "a reserved field or bit is not zero",
    Content PaddingNonZero => "padding_nonzero": "group padding is not zero",
    Content BadFragment => "bad_fragment": "fragment index/count invalid for the command",
    Content InexactMalformed => "inexact_malformed": "ACCUMULATION_INEXACT frame is not LAST with zero elements, groups and body",
    Content EmptyPacket => "empty_packet": "DATA/RESULT without elements or groups",
    Content EmptyGroup => "empty_group": "NumberGroup with a count of zero",
    Content GroupCountMismatch => "group_count_mismatch": "groups in the body differ from the declared group count",
    Content ElementCountMismatch => "element_count_mismatch": "group counts do not add up to the element count",
    Content ElementRangeOverflow => "element_range_overflow": "first element plus count passes 2^32",
    Content BadKulischWidth => "bad_kulisch_width": "Kulisch width not a multiple of 8 in 280..4096",
    Content BadKulischValue => "bad_kulisch_value": "Kulisch state unknown or not canonical",
    Content TooManyHoles => "too_many_holes": "PROGRESS with more than 32 holes",
    Content BadHoles => "bad_holes": "PROGRESS holes unordered, overlapping, empty or below the watermark",
    Content RangeOutsideVector => "range_outside_vector": "packet range passes the operation's vector length",
    Content LastFlagMismatch => "last_flag_mismatch": "LAST set on a packet not ending the vector, or missing on one that does",
    Content KulischWidthMismatch => "kulisch_width_mismatch": "Kulisch width differs from the operation's",
}

/// A refused frame: the reason and the frame byte offset where it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error {
    pub reason: Reason,
    /// Offset from the start of the Ethernet frame.
    pub offset: usize,
}

impl Error {
    pub const fn new(reason: Reason, offset: usize) -> Self {
        Error { reason, offset }
    }
    pub fn kind(&self) -> ErrorKind {
        self.reason.kind()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}: {}", self.reason.name(), self.offset, self.reason.describe())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = core::result::Result<T, Error>;
