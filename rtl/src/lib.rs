//! Rust side of the SystemVerilog pipeline (issue 6). Empty until the RTL lands.
