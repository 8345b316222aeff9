//! Shared by the pktgen tests: a switch config and a job.
#![allow(dead_code)]

use prism_dataplane::switch::config::SwitchConfig;
use prism_dataplane::wire::*;
use prism_pktgen::*;
pub fn config() -> SwitchConfig {
    SwitchConfig::parse(&prism_pktgen::link::default_sim_config().to_string()).unwrap()
}

pub fn job(ranks: u16, semantics: Semantics, acc: AccumulatorPolicy, output: OutputFormat) -> Job {
    Job { dest_rank: ranks - 1, output, packetization: Packetization::Random, seed: 11, rank_ports: vec![0, 1], ..Job::new(ranks, semantics, acc, 3000) }
}
