//! The sans-IO PRISM node (issue 4). Frames and time go in, frames come out;
//! no I/O, no clocks, no threads, so the DPDK switch, pktgen's simulator and
//! the RTL differential tests can all drive the same code.
//!
//! This first part is the control plane: CONTROL from the configured
//! Aggregation Manager only, STAGE validation against the capability records,
//! COMMIT/ABORT/RELEASE, idempotent retries by Transaction ID, generations,
//! and CAPS_QUERY paging. The data path lands next.

mod control;

pub use control::{ControlPlane, Counters, NodeConfig, OpState, Sent};
