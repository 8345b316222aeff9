//! PRISM dataplane: the wire format (no DPDK dependency), and later the node
//! engine and the `prism-switch` binary.

pub mod decode;
#[cfg(feature = "dpdk")]
pub mod dpdk;
pub mod engine;
pub mod golden;
pub mod pcap;
pub mod switch;
pub mod wire;
