//! The typed parts of prism-switch's stats JSON (`--stats-json`), for the
//! switch that writes them and the tests and benchmarks that read them back:
//! the engine's `Counters` under `"engine"` and each core's share under
//! `"per_worker"`.

use crate::engine::Counters;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What one worker (core) did: an entry of `"per_worker"`. A collective
/// striped over cores shows on each.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerShare {
    /// Frames received on its RX queues.
    pub rx: u64,
    pub control_accepted: u64,
    pub data_applied: u64,
    pub results_sent: u64,
    pub steered_to_other_core: u64,
}

impl WorkerShare {
    /// The share of a worker whose engine counted `c` and that received `rx` frames.
    pub fn new(c: &Counters, rx: u64, steered_to_other_core: u64) -> Self {
        WorkerShare { rx, control_accepted: c.accepted, data_applied: c.data_applied, results_sent: c.results_sent, steered_to_other_core }
    }
}

/// The engine's counters (summed over workers in the whole switch's stats).
pub fn engine(stats: &Value) -> Result<Counters, serde_json::Error> {
    Counters::deserialize(&stats["engine"])
}

/// Each worker's share, in worker order.
pub fn per_worker(stats: &Value) -> Result<Vec<WorkerShare>, serde_json::Error> {
    Vec::deserialize(&stats["per_worker"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_back_what_the_switch_writes() {
        let c = Counters { accepted: 7, data_applied: 3, results_sent: 2, progress_sent: 9, ..Counters::default() };
        let w = WorkerShare::new(&c, 11, 1);
        let stats = json!({ "engine": c, "per_worker": [w, WorkerShare::default()] });
        assert_eq!(engine(&stats).unwrap(), c);
        assert_eq!(per_worker(&stats).unwrap(), [w, WorkerShare::default()]);
        assert_eq!(stats["per_worker"][0]["control_accepted"], json!(7));
        assert!(engine(&json!({})).is_err(), "no engine object");
    }
}
