//! prism-pktgen as a library: jobs, links to switches, the run, verification.

// Library code reports bad input as errors: no unwrap, expect or panic
// outside tests (issue 29's lint policy; clippy runs with -D warnings).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod am;
pub mod args;
#[cfg(feature = "dpdk")]
pub mod dpdk;
pub mod feedback;
pub mod job;
pub mod lab;
pub mod link;
pub mod process;
pub mod run;
pub mod simtree;
pub mod tree;
pub mod verify;

pub use job::{Job, Packetization, Pattern};
pub use link::{AfPacketLink, Link, SimLink};
pub use run::{run, Report, RunError, RunOptions};
