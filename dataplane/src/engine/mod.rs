//! The sans-IO PRISM node (issue 4). Frames and time go in, frames come out;
//! no I/O, no clocks, no threads, so the DPDK switch, pktgen's simulator and
//! the RTL differential tests can all drive the same code.
//!
//! What it does today (the SINGLE node): CONTROL from the configured
//! Aggregation Manager only, STAGE validation against the capability records,
//! COMMIT/COMPLETE/RELEASE/ABORT, idempotent retries by Transaction ID,
//! generations, CAPS_QUERY paging; DATA admitted against its binding into a
//! bounded per-contributor window, reduced by global element position, and
//! RESULT sent with the canonical packetization on every bound path.
//! PROGRESS and retransmission (issue 8) are not here yet: PROGRESS frames are
//! counted and dropped, and no deadlines exist.

mod control;
mod op;

pub use control::{Counters, Node, NodeConfig, OpState, Sent};
pub use op::{Admitted, DataReject};
