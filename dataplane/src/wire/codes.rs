//! Every PRISM code, size and offset, in one place.
//!
//! `docs/wire-format.md` is the prose for this module; the parser, emitters,
//! decoder, pktgen and the RTL package all take their numbers from here.

/// EtherType of PRISM frames.
pub const ETHERTYPE: u16 = 0x88B5;
/// Version 1.0: major in the high nibble, minor in the low nibble.
pub const VERSION: u8 = 0x10;
pub const VERSION_MAJOR: u8 = VERSION >> 4;

pub const ETH_HEADER_LEN: usize = 14;
/// Shortest Ethernet frame without FCS; shorter PRISM packets are padded up to it.
pub const ETH_MIN_FRAME: usize = 60;
pub const CONTROL_WORD_LEN: usize = 2;
pub const CONTROL_HEADER_LEN: usize = 32;
pub const DATA_HEADER_LEN: usize = 40;
pub const PROGRESS_HEADER_LEN: usize = 44;
pub const HOLE_LEN: usize = 8;
pub const MAX_HOLES: usize = 32;
pub const GROUP_DESCRIPTOR_LEN: usize = 4;
pub const MAX_GROUPS: usize = 255;
pub const CONTEXT_RECORD_LEN: usize = 36;
pub const BINDING_RECORD_LEN: usize = 20;
pub const ACK_BODY_LEN: usize = 4;
pub const CAPABILITY_RECORD_LEN: usize = 36;

pub const MTU_DEFAULT: u16 = 1500;
/// The MTUs the protocol defines.
pub const MTUS: [u16; 3] = [576, 1500, 9000];
pub const KULISCH_MIN_WIDTH: u16 = 280;
pub const KULISCH_MAX_WIDTH: u16 = 4096;
/// ALLREDUCE has no destination rank.
pub const NO_RANK: u16 = 0xFFFF;

/// Declares a `u8`-coded enum whose unknown values survive a round trip.
macro_rules! code_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $val:expr),+ $(,)? }) => {
        $(#[$m])*
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $var,)+
            Unknown(u8),
        }
        impl From<u8> for $name {
            fn from(v: u8) -> Self {
                match v { $($val => $name::$var,)+ other => $name::Unknown(other) }
            }
        }
        impl From<$name> for u8 {
            fn from(v: $name) -> u8 {
                match v { $($name::$var => $val,)+ $name::Unknown(other) => other }
            }
        }
        impl $name {
            /// Every known code, for tables and generated packages.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            pub fn is_known(self) -> bool { !matches!(self, $name::Unknown(_)) }
            /// Stable upper-case name (the one `docs/wire-format.md` uses).
            pub fn name(self) -> &'static str {
                match self { $($name::$var => stringify!($var),)+ $name::Unknown(_) => "UNKNOWN" }
            }
        }
    };
}

code_enum!(
    /// The packet class in the second byte of the control word.
    Class { CONTROL = 0x01, DATA = 0x02, RESULT = 0x03, PROGRESS = 0x04 }
);

code_enum!(
    /// CONTROL command (fixed by the seed).
    Command {
        STAGE = 0x01, COMMIT = 0x02, COMPLETE = 0x03, RELEASE = 0x04,
        ACK = 0x05, ABORT = 0x06, CAPS_QUERY = 0x07, CAPS_RESPONSE = 0x08,
    }
);

code_enum!(
    /// Status of a CONTROL ACK.
    AckStatus {
        OK = 0x00, INVALID = 0x01, UNSUPPORTED = 0x02, NO_RESOURCES = 0x03,
        BAD_STATE = 0x04, STALE_GENERATION = 0x05, TXN_CONFLICT = 0x06, INVALID_BINDING = 0x07,
    }
);

code_enum!(
    /// NumberGroup format code (the descriptor's high nibble).
    FormatCode { INT8 = 0x1, FP16 = 0x2, BF16 = 0x3, FP32 = 0x4, KULISCH = 0x5 }
);

code_enum!(
    /// State byte of a Kulisch value.
    KulischState {
        FINITE = 0x00, POS_ZERO = 0x01, NEG_ZERO = 0x02, POS_INF = 0x03, NEG_INF = 0x04, NAN = 0x05,
    }
);

code_enum!(
    /// Accumulator policy; 0x02 is unassigned for ever.
    AccumulatorPolicy { FP32_ARRIVAL = 0x01, KULISCH_FIXED = 0x03 }
);

code_enum!(
    /// Format of partials a node sends to its parent.
    PartialPolicy { NONE = 0x00, FP32 = 0x01, KULISCH = 0x02, AUTO = 0x03 }
);

code_enum!(
    /// Format of final RESULT elements.
    OutputFormat { INT8 = 0x01, FP16 = 0x02, BF16 = 0x03, FP32 = 0x04, KULISCH = 0x05, AUTO = 0x06 }
);

code_enum!(
    /// A node's role in the logical tree.
    Role { SINGLE = 0x01, LEAF = 0x02, INTERNAL = 0x03, ROOT = 0x04 }
);

code_enum!(
    /// Collective semantics.
    Semantics { REDUCE = 0x01, ALLREDUCE = 0x02 }
);

code_enum!(
    /// Who is at the other end of a binding.
    PeerKind { RANK = 0x01, SWITCH = 0x02 }
);

code_enum!(
    /// Status of a PROGRESS frame.
    ProgressStatus { ACCEPTED = 0x00, DUPLICATE = 0x01, REJECTED = 0x02, UNKNOWN_OPERATION = 0x03 }
);

/// DATA/RESULT flag bits.
pub mod flags {
    pub const LAST: u8 = 0x01;
    pub const INEXACT: u8 = 0x02;
    pub const RESERVED: u8 = !(LAST | INEXACT);
}

/// PROGRESS flag bits.
pub mod progress_flags {
    pub const COMPLETE: u8 = 0x01;
    /// The receiver's window moved: no packet is acknowledged, the credits are current.
    pub const WINDOW_UPDATE: u8 = 0x02;
    pub const RESERVED: u8 = !(COMPLETE | WINDOW_UPDATE);
}

/// Binding direction bits.
pub mod direction {
    pub const DATA_IN: u8 = 0x01;
    pub const RESULT_OUT: u8 = 0x02;
    pub const DATA_OUT: u8 = 0x04;
    pub const RESULT_IN: u8 = 0x08;
    pub const RESERVED: u8 = 0xF0;
}

/// Capability record bit sets.
pub mod caps_bits {
    pub const ROLE_SINGLE: u8 = 0x01;
    pub const ROLE_LEAF: u8 = 0x02;
    pub const ROLE_INTERNAL: u8 = 0x04;
    pub const ROLE_ROOT: u8 = 0x08;
    pub const SEM_REDUCE: u8 = 0x01;
    pub const SEM_ALLREDUCE: u8 = 0x02;
    pub const MTU_576: u8 = 0x01;
    pub const MTU_1500: u8 = 0x02;
    pub const MTU_9000: u8 = 0x04;
}

/// NumberGroup descriptor word layout (big-endian u32).
pub mod descriptor {
    pub const FORMAT_SHIFT: u32 = 28;
    pub const RESERVED_MASK: u32 = 0x0E00_0000;
    pub const WIDTH_SHIFT: u32 = 16;
    pub const WIDTH_MASK: u32 = 0x1FF;
    pub const COUNT_MASK: u32 = 0xFFFF;
}

/// Byte ranges, relative to the start of the PRISM packet (the control word).
pub mod offsets {
    pub type Field = core::ops::Range<usize>;
    pub const VERSION: usize = 0;
    pub const CLASS: usize = 1;

    pub const JOB: Field = 2..10;
    pub const GROUP: Field = 10..12;
    pub const GROUP_GEN: Field = 12..14;
    pub const OP: Field = 14..16;
    pub const OP_GEN: Field = 16..20;

    pub mod control {
        use super::Field;
        pub const TXN: Field = 20..24;
        pub const SRC_EP: Field = 24..26;
        pub const DST_EP: Field = 26..28;
        pub const COMMAND: usize = 28;
        pub const STATUS: usize = 29;
        pub const BODY_LEN: Field = 30..32;
        pub const FRAG_INDEX: usize = 32;
        pub const FRAG_COUNT: usize = 33;
        pub const BODY: usize = 34;
    }

    pub mod data {
        use super::Field;
        pub const SRC_EP: Field = 20..22;
        pub const DST_EP: Field = 22..24;
        pub const PACKET_ID: Field = 24..28;
        pub const FIRST_ELEMENT: Field = 28..32;
        pub const ELEMENT_COUNT: Field = 32..34;
        pub const GROUP_COUNT: usize = 34;
        pub const FLAGS: usize = 35;
        pub const BODY_LEN: Field = 36..38;
        pub const STREAM_ID: Field = 38..40;
        pub const RESERVED: Field = 40..42;
        pub const BODY: usize = 42;
    }

    pub mod progress {
        use super::Field;
        pub const SRC_EP: Field = 20..22;
        pub const DST_EP: Field = 22..24;
        pub const STREAM_ID: Field = 24..26;
        pub const PACKET_ID: Field = 26..30;
        pub const COMMITTED: Field = 30..34;
        pub const INTERVAL_CREDITS: Field = 34..36;
        pub const BYTE_CREDITS: Field = 36..40;
        pub const STATUS: usize = 40;
        pub const FLAGS: usize = 41;
        pub const HOLE_COUNT: Field = 42..44;
        pub const RESERVED: Field = 44..46;
        pub const HOLES: usize = 46;
    }

    /// Offsets inside the STAGE context record.
    pub mod context {
        use super::Field;
        pub const ROLE: usize = 0;
        pub const SEMANTICS: usize = 1;
        pub const INPUT_FORMAT: usize = 2;
        pub const ACCUMULATOR: usize = 3;
        pub const PARTIAL: usize = 4;
        pub const OUTPUT: usize = 5;
        pub const KULISCH_WIDTH: Field = 6..8;
        pub const VECTOR_LEN: Field = 8..12;
        pub const DEST_RANK: Field = 12..14;
        pub const MTU: Field = 14..16;
        pub const TERMS: Field = 16..20;
        pub const WINDOW_ELEMENTS: Field = 20..24;
        pub const WINDOW_INTERVALS: Field = 24..26;
        pub const REPLAY_DEPTH: Field = 26..28;
        pub const WINDOW_BYTES: Field = 28..32;
        pub const BINDING_COUNT: Field = 32..34;
        pub const RESERVED: Field = 34..36;
    }

    /// Offsets inside one binding record.
    pub mod binding {
        use super::Field;
        pub const DIRECTIONS: usize = 0;
        pub const PEER_KIND: usize = 1;
        pub const STREAM_ID: Field = 2..4;
        pub const LOCAL_EP: Field = 4..6;
        pub const PEER_EP: Field = 6..8;
        pub const PEER_MAC: Field = 8..14;
        pub const PORT: Field = 14..16;
        pub const RANK: Field = 16..18;
        pub const TERMS: Field = 18..20;
    }

    /// Offsets inside the ACK body.
    pub mod ack {
        use super::Field;
        pub const COMMAND: usize = 0;
        pub const RESERVED: usize = 1;
        pub const DETAIL: Field = 2..4;
    }

    /// Offsets inside one capability record.
    pub mod caps {
        use super::Field;
        pub const INPUT_FORMAT: usize = 0;
        pub const ACCUMULATOR: usize = 1;
        pub const PARTIAL: usize = 2;
        pub const OUTPUT: usize = 3;
        pub const ROLES: usize = 4;
        pub const SEMANTICS: usize = 5;
        pub const MTUS: usize = 6;
        pub const RESERVED: usize = 7;
        pub const MAX_VECTOR: Field = 8..12;
        pub const MAX_TERMS: Field = 12..16;
        pub const KULISCH_MIN: Field = 16..18;
        pub const KULISCH_MAX: Field = 18..20;
        pub const MAX_CONTRIBUTORS: Field = 20..22;
        pub const MAX_RESULT_PATHS: Field = 22..24;
        pub const WINDOW_ELEMENTS: Field = 24..28;
        pub const WINDOW_INTERVALS: Field = 28..30;
        pub const REPLAY_DEPTH: Field = 30..32;
        pub const WINDOW_BYTES: Field = 32..36;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sizes_add_up() {
        assert_eq!(offsets::control::BODY, CONTROL_WORD_LEN + CONTROL_HEADER_LEN);
        assert_eq!(offsets::data::BODY, CONTROL_WORD_LEN + DATA_HEADER_LEN);
        assert_eq!(offsets::progress::HOLES, CONTROL_WORD_LEN + PROGRESS_HEADER_LEN);
        assert_eq!(offsets::context::RESERVED.end, CONTEXT_RECORD_LEN);
        assert_eq!(offsets::binding::TERMS.end, BINDING_RECORD_LEN);
        assert_eq!(offsets::caps::WINDOW_BYTES.end, CAPABILITY_RECORD_LEN);
        // The first 64-byte beat holds Ethernet + control word + header + 8 body bytes.
        assert_eq!(ETH_HEADER_LEN + offsets::data::BODY + 8, 64);
    }

    #[test]
    fn unknown_codes_round_trip() {
        for v in 0..=255u8 {
            assert_eq!(u8::from(Class::from(v)), v);
            assert_eq!(u8::from(Command::from(v)), v);
            assert_eq!(u8::from(AccumulatorPolicy::from(v)), v);
        }
        assert_eq!(AccumulatorPolicy::from(0x02), AccumulatorPolicy::Unknown(0x02));
    }
}
