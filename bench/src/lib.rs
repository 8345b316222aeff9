//! The benchmark harness: software vs hardware switch latency reports
//! (`latency`, `report`), and the software switch's cycles per DATA packet
//! against DPDK testpmd (`switch_throughput`), and one collective striped
//! over several cores (`collective`).

// Library code reports bad input as errors: no unwrap, expect or panic
// outside tests (issue 29's lint policy; clippy runs with -D warnings).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod collective;
pub mod error;
pub mod kept;
pub mod latency;
pub mod loads;
pub mod noise;
pub mod report;
pub mod runqueue;
pub mod switch_throughput;

pub use error::BenchError;

/// An HDR histogram from 1 to `high` (at least 2) at 3 significant digits.
/// The bounds are this crate's constants, so the construction cannot fail;
/// a test builds every one the crate uses.
#[allow(clippy::expect_used)]
pub(crate) fn histogram(high: u64) -> hdrhistogram::Histogram<u64> {
    hdrhistogram::Histogram::new_with_bounds(1, high.max(2), 3).expect("1 <= 2 <= high and 3 digits are valid bounds")
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_histogram_bound_is_valid() {
        for high in [2, 1 << 40, 10_000_000_000, 600_000_000_000] {
            assert!(super::histogram(high).high() >= high);
        }
    }
}
