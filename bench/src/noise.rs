//! The host's own interruptions of a polling core, measured beside the
//! switch's residence time so that a report can tell the switch's tail from
//! the machine's.
//!
//! A thread pinned to the core spins reading the TSC; any gap between two
//! consecutive reads longer than `THRESHOLD_NS` is time the core was taken
//! away (timer ticks, interrupts, the hypervisor). A busy-polling switch on
//! that core loses the same time, at the same rate, wherever it happens to
//! be; a residence sample that spans a gap carries it whole.

use hdrhistogram::Histogram;
use prism_dataplane::dpdk::rdtsc;
use std::time::{Duration, Instant};

/// Gaps shorter than this are the loop's own cost and cache misses, not interruptions.
pub const THRESHOLD_NS: u64 = 1_000;

/// What a spinning, pinned thread saw.
#[derive(Debug, Clone)]
pub struct Noise {
    pub cpu: usize,
    pub seconds: f64,
    /// Every gap of at least `THRESHOLD_NS`, in ns.
    pub gaps: Histogram<u64>,
    /// Sum of those gaps, ns.
    pub lost_ns: u64,
}

impl Noise {
    pub fn per_second(&self) -> f64 {
        self.gaps.len() as f64 / self.seconds.max(1e-9)
    }

    /// Fraction of the time the core was away.
    pub fn lost_fraction(&self) -> f64 {
        self.lost_ns as f64 / (self.seconds * 1e9).max(1.0)
    }

    /// The chance that an interval of `ns` (a residence time) overlaps a gap
    /// that starts within it: the gaps' rate times the interval, for
    /// independent arrivals.
    pub fn chance_within(&self, ns: f64) -> f64 {
        (self.per_second() * ns * 1e-9).min(1.0)
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "cpu": self.cpu,
            "seconds": self.seconds,
            "threshold_ns": THRESHOLD_NS,
            "gaps": self.gaps.len(),
            "gaps_per_s": self.per_second(),
            "lost_fraction": self.lost_fraction(),
            "gap_ns": {
                "p50": self.gaps.value_at_quantile(0.5),
                "p99": self.gaps.value_at_quantile(0.99),
                "max": self.gaps.max(),
            },
        })
    }

    /// One line for a report.
    pub fn describe(&self) -> String {
        if self.gaps.is_empty() {
            return format!("no gap of {} ns or more in {:.1} s on CPU {}", THRESHOLD_NS, self.seconds, self.cpu);
        }
        format!(
            "{} gaps of {} ns or more in {:.1} s on CPU {} ({:.0}/s, {:.3}% of the time): p50 {:.1} us, p99 {:.1} us, max {:.1} us",
            self.gaps.len(),
            THRESHOLD_NS,
            self.seconds,
            self.cpu,
            self.per_second(),
            self.lost_fraction() * 100.0,
            self.gaps.value_at_quantile(0.5) as f64 / 1e3,
            self.gaps.value_at_quantile(0.99) as f64 / 1e3,
            self.gaps.max() as f64 / 1e3,
        )
    }
}

/// The TSC's rate against the monotonic clock, over `d` of spinning (no
/// EAL needed: the probe runs before the switch and pktgen start theirs).
fn tsc_hz(d: Duration) -> u64 {
    let (t0, c0) = (Instant::now(), rdtsc());
    while t0.elapsed() < d {
        std::hint::spin_loop();
    }
    let (c1, secs) = (rdtsc(), t0.elapsed().as_secs_f64());
    (c1.wrapping_sub(c0) as f64 / secs.max(1e-9)) as u64
}

/// Spins for `duration` on `cpu` (pinned, when the CPU exists) and records
/// every gap between consecutive TSC reads of at least `THRESHOLD_NS`.
pub fn probe(cpu: usize, duration: Duration) -> Noise {
    let handle = std::thread::spawn(move || {
        if let Some(id) = core_affinity::get_core_ids().and_then(|ids| ids.into_iter().find(|c| c.id == cpu)) {
            core_affinity::set_for_current(id);
        }
        let mut gaps = crate::histogram(10_000_000_000);
        let hz = tsc_hz(Duration::from_millis(50)).max(1) as u128;
        let threshold = (THRESHOLD_NS as u128 * hz / 1_000_000_000) as u64;
        let mut lost = 0u64;
        let start = Instant::now();
        let mut prev = rdtsc();
        // The clock is read once per 4,096 spins: Instant itself is a few tens of ns.
        'outer: loop {
            for _ in 0..4096 {
                let now = rdtsc();
                let d = now.wrapping_sub(prev);
                if d >= threshold {
                    let ns = (d as u128 * 1_000_000_000 / hz) as u64;
                    gaps.saturating_record(ns.max(1));
                    lost += ns;
                }
                prev = now;
            }
            if start.elapsed() >= duration {
                break 'outer;
            }
            // The elapsed() call is not an interruption.
            prev = rdtsc();
        }
        (gaps, lost, start.elapsed().as_secs_f64())
    });
    let (gaps, lost_ns, seconds) = handle.join().unwrap_or_else(|_| (crate::histogram(10_000_000_000), 0, duration.as_secs_f64()));
    Noise { cpu, seconds, gaps, lost_ns }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(gaps_ns: &[u64], seconds: f64) -> Noise {
        let mut gaps = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).unwrap();
        for &g in gaps_ns {
            gaps.record(g).unwrap();
        }
        Noise { cpu: 0, seconds, gaps, lost_ns: gaps_ns.iter().sum() }
    }

    #[test]
    fn rates_and_chances_follow_the_gaps() {
        let n = noise(&[2_000, 4_000, 20_000, 50_000], 2.0);
        assert_eq!(n.per_second(), 2.0);
        assert!((n.lost_fraction() - 76_000.0 / 2e9).abs() < 1e-12);
        // 2 gaps a second, a 1 ms window: 0.2% of windows see one.
        assert!((n.chance_within(1e6) - 0.002).abs() < 1e-12);
        assert_eq!(n.chance_within(1e12), 1.0);
        let j = n.to_json();
        assert_eq!(j["gaps"], 4);
        assert!(n.describe().contains("4 gaps"));
    }

    #[test]
    fn a_quiet_core_says_so() {
        let n = noise(&[], 1.0);
        assert!(n.describe().starts_with("no gap"));
        assert_eq!(n.per_second(), 0.0);
    }
}
