//! What can go wrong in a benchmark run: the library's one error type. The
//! `prism-bench` binary prints it with the command that failed.

use crate::latency::ScenarioError;
use prism_dataplane::dpdk::DpdkError;
use prism_dataplane::switch::config::ConfigError;
use prism_pktgen::dpdk::ReplayError;
use prism_pktgen::process::ProcessError;
use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A file or directory could not be read, written or made.
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: io::Error },
    #[error("{}: {source}", path.display())]
    Capture { path: PathBuf, source: prism_dataplane::pcap::CaptureError },
    /// A file's text is not the JSON expected.
    #[error("{}: {source}", path.display())]
    Json { path: PathBuf, source: serde_json::Error },
    /// A switch or pktgen did not start, get ready or stop cleanly.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// This binary could not be started.
    #[error("{}: {source}", binary.display())]
    Spawn { binary: PathBuf, source: ProcessError },
    #[error(transparent)]
    Dpdk(#[from] DpdkError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An AF_PACKET interface could not be opened.
    #[error("{iface}: {source}")]
    Interface { iface: String, source: io::Error },
    #[error("ip: {0} (apt-get install iproute2)")]
    NoIp(io::Error),
    /// An `ip` command (its arguments) failed.
    #[error("`ip {0}` failed (veth pairs need root; or use --software sim)")]
    Ip(String),
    #[error("dpdk-testpmd: {0} (apt-get install dpdk-dev)")]
    NoTestpmd(io::Error),
    /// A histogram could not be made or subtracted.
    #[error("{what}: {detail}")]
    Histogram { what: &'static str, detail: String },
    /// A figure could not be drawn.
    #[error("{0}")]
    Plot(String),
    /// A command-line value the bench does not know.
    #[error("{0}")]
    Usage(String),
    /// What a run found wrong: results not exact, a switch that exited, a
    /// measurement that did not come.
    #[error("{0}")]
    Run(String),
}

impl BenchError {
    pub(crate) fn file(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> BenchError {
        let path = path.into();
        move |source| BenchError::File { path, source }
    }
}
