//! The benchmark harness: software vs hardware switch latency reports
//! (`latency`, `report`), and the software switch's cycles per DATA packet
//! against DPDK testpmd (`switch_throughput`), and one collective striped
//! over several cores (`collective`).

pub mod collective;
pub mod error;
pub mod kept;
pub mod latency;
pub mod loads;
pub mod noise;
pub mod report;
pub mod switch_throughput;

pub use error::BenchError;
