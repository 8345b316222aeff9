//! Residence time: how long the switch holds the work of a range, from the
//! receive burst of the DATA frame that completes it to the transmit burst
//! that hands each of its RESULT frames to the driver. Both ends are TSC
//! readings taken next to the driver calls, so the interval is the switch
//! alone (no link, no peer), the same interval the RTL gives in cycles from
//! the last beat of the completing DATA in to the first RESULT beat out.
//!
//! One histogram a worker, preallocated: recording a sample allocates
//! nothing. The workers' histograms are merged for output.

use crate::wire::{Class, ETHERTYPE, ETH_HEADER_LEN};
use hdrhistogram::Histogram;

/// The PRISM class of a frame, read from its header without parsing it
/// (`None`: not PRISM or too short).
pub fn class_of(frame: &[u8]) -> Option<Class> {
    if frame.len() < ETH_HEADER_LEN + 2 || frame[12..14] != ETHERTYPE.to_be_bytes() {
        return None;
    }
    Some(Class::from(frame[ETH_HEADER_LEN + crate::wire::codes::offsets::CLASS]))
}

/// Residence times in nanoseconds, one sample a RESULT frame, and where
/// they go: one sample per DATA frame that queued RESULTs, from its receive
/// burst to the engine taking it (the frames before it in the burst, the
/// dispatch) and the engine's own work on it (to its RESULTs queued). What
/// is left of a residence time is the wait for the transmit call.
#[derive(Clone)]
pub struct Residence {
    hist: Histogram<u64>,
    before_engine: Histogram<u64>,
    engine: Histogram<u64>,
    tsc_hz: u64,
    /// Samples outside the histogram's range (more than 100 s): counted, not lost.
    pub out_of_range: u64,
}

/// The largest residence time kept, in ns (100 s).
const MAX_NS: u64 = 100_000_000_000;

impl Residence {
    pub fn new(tsc_hz: u64) -> Residence {
        // 3 significant digits from 1 ns to 100 s; the bounds are valid constants.
        let new = || Histogram::new_with_bounds(1, MAX_NS, 3).unwrap_or_else(|_| Histogram::new(3).unwrap_or_else(|_| unreachable!()));
        Residence { hist: new(), before_engine: new(), engine: new(), tsc_hz: tsc_hz.max(1), out_of_range: 0 }
    }

    fn ns(&self, from: u64, to: u64) -> u64 {
        let cycles = to.saturating_sub(from);
        ((cycles as u128 * 1_000_000_000 / self.tsc_hz as u128) as u64).max(1)
    }

    /// One RESULT frame handed to the driver at `tx_tsc` for a DATA burst received at `rx_tsc`.
    pub fn record(&mut self, rx_tsc: u64, tx_tsc: u64) {
        let ns = self.ns(rx_tsc, tx_tsc);
        if self.hist.record(ns).is_err() {
            self.out_of_range += 1;
        }
    }

    /// A DATA frame of the burst received at `rx_tsc`, taken by the engine
    /// at `start_tsc`, that had queued RESULT frames at `done_tsc`.
    pub fn record_engine(&mut self, rx_tsc: u64, start_tsc: u64, done_tsc: u64) {
        let (before, engine) = (self.ns(rx_tsc, start_tsc), self.ns(start_tsc, done_tsc));
        if self.before_engine.record(before).is_err() | self.engine.record(engine).is_err() {
            self.out_of_range += 1;
        }
    }

    pub fn merge(&mut self, other: &Residence) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.hist.add(&other.hist);
        let _ = self.before_engine.add(&other.before_engine);
        let _ = self.engine.add(&other.engine);
        self.out_of_range += other.out_of_range;
    }

    /// From the receive burst to the engine taking the completing frame (ns).
    pub fn before_engine(&self) -> &Histogram<u64> {
        &self.before_engine
    }

    /// The engine's work on a completing frame (ns).
    pub fn engine(&self) -> &Histogram<u64> {
        &self.engine
    }

    pub fn samples(&self) -> u64 {
        self.hist.len()
    }

    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }

    /// Percentiles in ns for the stats JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let part = |h: &Histogram<u64>| {
            let q = |x: f64| if h.is_empty() { 0 } else { h.value_at_quantile(x) };
            serde_json::json!({"samples": h.len(), "p50": q(0.5), "p99": q(0.99), "max": if h.is_empty() { 0 } else { h.max() }})
        };
        let h = &self.hist;
        let q = |x: f64| if h.is_empty() { 0 } else { h.value_at_quantile(x) };
        serde_json::json!({
            "samples": h.len(),
            "p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "p99_9": q(0.999),
            "max": if h.is_empty() { 0 } else { h.max() },
            "mean": if h.is_empty() { 0.0 } else { h.mean() },
            "out_of_range": self.out_of_range,
            "before_engine": part(&self.before_engine),
            "engine": part(&self.engine),
        })
    }

    /// The histograms as an HDR interval log (V2, values in ns), for
    /// `prism-bench` and HdrHistogram's own tools: the residence time first
    /// (tag `residence`), then its parts (`before-engine`, `engine`).
    pub fn write_hlog(&self, path: &std::path::Path, comment: &str) -> std::io::Result<()> {
        write_hlogs(path, &[(TAG_RESIDENCE, &self.hist), (TAG_BEFORE_ENGINE, &self.before_engine), (TAG_ENGINE, &self.engine)], comment)
    }
}

/// The interval log's tags (`Residence::write_hlog`).
pub const TAG_RESIDENCE: &str = "residence";
pub const TAG_BEFORE_ENGINE: &str = "before-engine";
pub const TAG_ENGINE: &str = "engine";

/// Writes a histogram of nanoseconds as an HdrHistogram interval log (one
/// interval, tagged), whole or not at all (written aside, then renamed).
pub fn write_hlog(path: &std::path::Path, h: &Histogram<u64>, comment: &str, tag: &str) -> std::io::Result<()> {
    write_hlogs(path, &[(tag, h)], comment)
}

/// Writes histograms of nanoseconds as one HdrHistogram interval log, an
/// interval each with its tag, whole or not at all.
pub fn write_hlogs(path: &std::path::Path, hists: &[(&str, &Histogram<u64>)], comment: &str) -> std::io::Result<()> {
    use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
    use hdrhistogram::serialization::V2Serializer;
    let mut buf = Vec::new();
    let mut ser = V2Serializer::new();
    {
        let mut w = IntervalLogWriterBuilder::new().add_comment(comment).add_comment("values in nanoseconds").with_max_value_divisor(1.0).begin_log_with(&mut buf, &mut ser)?;
        for (tag, h) in hists {
            let tag = Tag::new(tag).ok_or_else(|| std::io::Error::other(format!("'{tag}' cannot be an interval log tag")))?;
            w.write_histogram(h, std::time::Duration::ZERO, std::time::Duration::from_secs(1), Some(tag)).map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        }
    }
    crate::files::write_whole(path, buf)
}

/// The first histogram of an HDR interval log (what `write_hlog` writes).
pub fn read_hlog(path: &std::path::Path) -> std::io::Result<Histogram<u64>> {
    read_hlog_tagged(path, None)
}

/// The first histogram of an HDR interval log with this tag (`None`: any).
pub fn read_hlog_tagged(path: &std::path::Path, tag: Option<&str>) -> std::io::Result<Histogram<u64>> {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    let bytes = std::fs::read(path)?;
    let bad = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {what}", path.display()));
    for entry in IntervalLogIterator::new(&bytes) {
        if let Ok(LogEntry::Interval(h)) = entry {
            if tag.is_some_and(|t| h.tag().map(|x| x.as_str()) != Some(t)) {
                continue;
            }
            let raw = base64::engine::general_purpose::STANDARD.decode(h.encoded_histogram()).map_err(|e| bad(format!("histogram encoding: {e}")))?;
            return Deserializer::new().deserialize(&mut raw.as_slice()).map_err(|e| bad(format!("histogram: {e:?}")));
        }
    }
    Err(bad(match tag {
        Some(t) => format!("no histogram tagged {t} in the log"),
        None => "no histogram in the log".into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_become_nanoseconds_at_the_tsc_rate() {
        let mut r = Residence::new(2_000_000_000);
        r.record(1_000, 1_000 + 4_000); // 4,000 cycles at 2 GHz: 2 us
        r.record(10, 10 + 2_000_000); // 1 ms
        assert_eq!(r.samples(), 2);
        let h = r.histogram();
        assert!(h.equivalent(h.min(), 2_000), "{}", h.min());
        assert!(h.equivalent(h.max(), 1_000_000), "{}", h.max());
        // A TSC that went backwards (another core's reading) is not a huge sample.
        r.record(500, 400);
        assert_eq!(r.histogram().min(), 1);
        let mut m = Residence::new(2_000_000_000);
        m.merge(&r);
        assert_eq!(m.samples(), 3);
        assert_eq!(m.to_json()["samples"], 3);
        // The interval log reads back as the same histogram.
        let p = std::env::temp_dir().join(format!("prism-residence-test-{}.hlog", std::process::id()));
        m.write_hlog(&p, "test").unwrap();
        let back = read_hlog(&p).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back.max(), m.histogram().max());
        assert_eq!(back.value_at_quantile(0.5), m.histogram().value_at_quantile(0.5));
        // And its parts, by tag.
        let mut e = Residence::new(2_000_000_000);
        e.record_engine(1_000, 3_000, 9_000); // 1 us waiting, 3 us in the engine
        e.record(1_000, 9_500);
        e.write_hlog(&p, "test").unwrap();
        let before = read_hlog_tagged(&p, Some(TAG_BEFORE_ENGINE)).unwrap();
        let engine = read_hlog_tagged(&p, Some(TAG_ENGINE)).unwrap();
        assert!(before.equivalent(before.max(), 1_000) && engine.equivalent(engine.max(), 3_000), "{} {}", before.max(), engine.max());
        assert!(read_hlog(&p).unwrap().equivalent(read_hlog(&p).unwrap().max(), 4_250));
        assert_eq!(e.to_json()["engine"]["samples"], 1);
        assert!(read_hlog_tagged(&p, Some("nope")).unwrap_err().to_string().contains("no histogram tagged nope"));
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn class_of_reads_the_header_byte() {
        let mut f = vec![0u8; 64];
        f[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
        f[15] = 3;
        assert_eq!(class_of(&f), Some(Class::RESULT));
        f[15] = 2;
        assert_eq!(class_of(&f), Some(Class::DATA));
        f[12] = 0x08;
        assert_eq!(class_of(&f), None);
        assert_eq!(class_of(&f[..15]), None);
    }
}
