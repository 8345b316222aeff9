//! A link impairment stage for tests of recovery: it drops, duplicates,
//! corrupts (cuts short, as a frame with a bad FCS that a MAC passed on would
//! look to the parser) and reorders received frames at given probabilities,
//! from a seeded generator so a run can be repeated. Sans-IO: it only decides.

use std::str::FromStr;

/// Probabilities per received frame, and the generator's seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImpairSpec {
    pub drop: f64,
    pub duplicate: f64,
    pub corrupt: f64,
    pub reorder: f64,
    pub seed: u64,
}

impl FromStr for ImpairSpec {
    type Err = String;
    /// `drop=0.01,dup=0.01,corrupt=0.01,reorder=0.01,seed=7`; any key may be left out.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut spec = ImpairSpec { drop: 0.0, duplicate: 0.0, corrupt: 0.0, reorder: 0.0, seed: 1 };
        for part in s.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| format!("impairment `{part}`: expected key=value"))?;
            if k == "seed" {
                spec.seed = v.parse().map_err(|_| format!("impairment seed `{v}` is not an integer"))?;
                continue;
            }
            let p: f64 = v.parse().map_err(|_| format!("impairment {k}=`{v}` is not a number"))?;
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("impairment {k}={p}: a probability is between 0 and 1"));
            }
            match k {
                "drop" | "loss" => spec.drop = p,
                "dup" | "duplicate" => spec.duplicate = p,
                "corrupt" => spec.corrupt = p,
                "reorder" => spec.reorder = p,
                _ => return Err(format!("impairment key `{k}`: known keys are drop, dup, corrupt, reorder, seed")),
            }
        }
        Ok(spec)
    }
}

/// What to do with one received frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Deliver,
    Drop,
    /// Deliver it twice.
    Duplicate,
    /// Deliver only its first `n` bytes.
    Cut(usize),
    /// Hold it back and deliver it after the next frame.
    Hold,
}

/// Counts of what the stage did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImpairCounters {
    pub dropped: u64,
    pub duplicated: u64,
    pub corrupted: u64,
    pub reordered: u64,
}

#[derive(Debug, Clone)]
pub struct Impairment {
    spec: ImpairSpec,
    state: u64,
    pub counters: ImpairCounters,
}

impl Impairment {
    pub fn new(spec: ImpairSpec) -> Self {
        Impairment { spec, state: spec.seed ^ 0x9e37_79b9_7f4a_7c15, counters: ImpairCounters::default() }
    }

    /// SplitMix64: small, seedable, good enough for link faults.
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// The fate of a received frame of `len` bytes.
    pub fn decide(&mut self, len: usize) -> Verdict {
        if self.chance(self.spec.drop) {
            self.counters.dropped += 1;
            return Verdict::Drop;
        }
        if self.chance(self.spec.corrupt) && len > 14 {
            self.counters.corrupted += 1;
            let keep = 14 + (self.next() % (len as u64 - 14)) as usize;
            return Verdict::Cut(keep);
        }
        if self.chance(self.spec.duplicate) {
            self.counters.duplicated += 1;
            return Verdict::Duplicate;
        }
        if self.chance(self.spec.reorder) {
            self.counters.reordered += 1;
            return Verdict::Hold;
        }
        Verdict::Deliver
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_parses_and_refuses_with_reasons() {
        let s: ImpairSpec = "drop=0.01,dup=0.02,corrupt=0.03,reorder=0.04,seed=9".parse().unwrap();
        assert_eq!((s.drop, s.duplicate, s.corrupt, s.reorder, s.seed), (0.01, 0.02, 0.03, 0.04, 9));
        assert!("drop=2".parse::<ImpairSpec>().unwrap_err().contains("between 0 and 1"));
        assert!("jitter=0.1".parse::<ImpairSpec>().unwrap_err().contains("known keys"));
        assert!("drop".parse::<ImpairSpec>().unwrap_err().contains("key=value"));
    }

    #[test]
    fn rates_follow_the_spec_and_runs_repeat() {
        let spec: ImpairSpec = "drop=0.1,dup=0.05,corrupt=0.05,reorder=0.1,seed=3".parse().unwrap();
        let run = || {
            let mut i = Impairment::new(spec);
            let v: Vec<Verdict> = (0..100_000).map(|_| i.decide(1514)).collect();
            (v, i.counters)
        };
        let (a, c) = run();
        assert_eq!(a, run().0, "same seed, same decisions");
        let near = |n: u64, p: f64| (n as f64 - p * 100_000.0).abs() < 0.15 * p * 100_000.0;
        assert!(near(c.dropped, 0.1), "{c:?}");
        assert!(near(c.corrupted, 0.9 * 0.05), "{c:?}");
        assert!(a.iter().all(|v| !matches!(v, Verdict::Cut(n) if *n < 14 || *n >= 1514)));
    }
}
