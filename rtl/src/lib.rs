//! Rust side of the SystemVerilog pipeline (issue 6).
//!
//! Today: the SV package generated from the wire module (`svpkg`), and the
//! frame checker `rtl/sv/prism_rx_check.sv` built with Verilator and driven
//! beat by beat from Rust (`RxCheck`).

pub mod svpkg;
mod model;

pub use model::{RxCheck, Verdict};
