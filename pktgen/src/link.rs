//! How pktgen reaches a switch. The `Link` trait and its links that need no
//! DPDK (`SimLink`, `AfPacketLink`) live in prism-dataplane beside the
//! engine's `Sink`, so that the RTL model implements `Link` without depending
//! on pktgen; they are re-exported here, where pktgen's users have always
//! found them. The DPDK link is `crate::dpdk::DpdkLink` (feature `dpdk`).

pub use prism_dataplane::link::*;
