//! Shared by the pktgen tests: a switch config and a job.
#![allow(dead_code)]

use prism_arith::NumFormat;
use prism_dataplane::switch::config::SwitchConfig;
use prism_dataplane::wire::*;
use prism_pktgen::*;
pub fn config() -> SwitchConfig {
    SwitchConfig::parse(prism_pktgen::link::DEFAULT_SIM_CONFIG).unwrap()
}

pub fn job(ranks: u16, semantics: Semantics, acc: AccumulatorPolicy, output: OutputFormat) -> Job {
    Job {
        ranks,
        semantics,
        dest_rank: ranks - 1,
        accumulator: acc,
        output,
        input: NumFormat::Fp32,
        vector_len: 3000,
        mtu: 1500,
        pattern: Pattern::Gradient(1e-3),
        packetization: Packetization::Random,
        seed: 11,
        identity: Identity { job: 1, group: 1, group_gen: 1, op: 1, op_gen: 1 },
        switch_mac: "02:00:00:00:00:50".parse().unwrap(),
        rank_ports: vec![0, 1],
        am_mac: "02:00:00:00:00:a0".parse().unwrap(),
        am_port: 0,
        given: None,
    }
}

