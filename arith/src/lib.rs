//! PRISM arithmetic: number formats, Kulisch accumulation, FP32 round-on-arrival,
//! final rounding and the AUTO encoder (issue 3). Not yet implemented beyond
//! the shared format enumeration used by the wire module.

/// The concrete number formats a NumberGroup can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NumFormat {
    Int8,
    Fp16,
    Bf16,
    Fp32,
    /// Kulisch fixed point: one state byte and a `width_bits`-bit signed integer in units of 2^-149.
    Kulisch { width_bits: u16 },
}

impl NumFormat {
    /// Bytes one value occupies on the wire.
    pub const fn value_bytes(self) -> usize {
        match self {
            NumFormat::Int8 => 1,
            NumFormat::Fp16 | NumFormat::Bf16 => 2,
            NumFormat::Fp32 => 4,
            NumFormat::Kulisch { width_bits } => 1 + width_bits as usize / 8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_bytes_match_the_seed() {
        assert_eq!(NumFormat::Kulisch { width_bits: 280 }.value_bytes(), 36);
        assert_eq!(NumFormat::Kulisch { width_bits: 4096 }.value_bytes(), 513);
        assert_eq!(NumFormat::Bf16.value_bytes(), 2);
    }
}
