//! Rust side of the SystemVerilog pipeline (issue 6).
//!
//! The SV package generated from the wire module (`svpkg`); Verilator models
//! of the frame validator (`RxCheck`) and of the FP32_ARRIVAL lane adder
//! (`Fp32Adder`), driven from Rust.

pub mod svpkg;
mod fp32;
mod model;

pub use fp32::Fp32Adder;
pub use model::{RxCheck, Verdict};
