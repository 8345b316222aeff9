//! PRISM dataplane: the wire format, the node engine, the switch core, the
//! link to a switch (`link`) and the `prism-switch` binary. Only the `dpdk`
//! module and prism-switch need DPDK (feature `dpdk`, on by default).

// Library code reports bad input as errors: no unwrap, expect or panic
// outside tests (issue 29's lint policy; clippy runs with -D warnings).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod decode;
#[cfg(feature = "dpdk")]
pub mod dpdk;
pub mod engine;
pub mod files;
pub mod fixtures;
pub mod golden;
pub mod link;
pub mod pcap;
pub mod svpkg;
pub mod switch;
pub mod wire;
