//! Rust side of the SystemVerilog pipeline (issue 6).
//!
//! The SV package generated from the wire module (`svpkg`); Verilator models
//! of the frame validator (`RxCheck`), of the FP32_ARRIVAL lane adder
//! (`Fp32Adder`) and of the whole SINGLE switch (`RtlSwitch`), driven from Rust.

// Library code reports bad input as errors: no unwrap, expect or panic
// outside tests (issue 29's lint policy; clippy runs with -D warnings).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub use prism_dataplane::svpkg;
mod crc;
mod fp32;
mod kulisch;
mod kulisch_pipe;
mod kulisch_round_pipe;
mod link;
mod model;
mod switch;
mod txn_table;

pub use crc::{Crc32c512, CrcBeat, CrcDigest, CRC_BEAT_BYTES};
pub use fp32::{Fp32Adder, Fp32PipeAdder, PipeRun};
pub use kulisch::{KulischUnits, Slot, Term};
pub use kulisch_pipe::KulischLanePipe;
pub use kulisch_round_pipe::KulischRoundPipe;
pub use link::{RtlLink, CLOCK_STATUS, DEFAULT_CLOCK_MHZ};
pub use model::{RxCheck, Verdict};
pub use switch::{Egress, Ingress, RtlSwitch};
pub use txn_table::{TxnIn, TxnOut, TxnTable};
