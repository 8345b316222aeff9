//! PRISM dataplane: the wire format, the node engine, the switch core, the
//! link to a switch (`link`) and the `prism-switch` binary. Only the `dpdk`
//! module and prism-switch need DPDK (feature `dpdk`, on by default).

pub mod decode;
#[cfg(feature = "dpdk")]
pub mod dpdk;
pub mod engine;
pub mod fixtures;
pub mod golden;
pub mod link;
pub mod pcap;
pub mod svpkg;
pub mod switch;
pub mod wire;
