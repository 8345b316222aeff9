//! The benchmark harness (issue 7 grows it into software vs hardware reports).
//! Today: the software switch's cycles per DATA packet against DPDK testpmd.

pub mod switch_throughput;
