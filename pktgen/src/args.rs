//! Command-line values both binaries (prism-pktgen, prism-tree) take.

use clap::ValueEnum;
use prism_dataplane::wire::{AccumulatorPolicy, Semantics};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Op {
    Reduce,
    Allreduce,
}

impl Op {
    pub fn semantics(self) -> Semantics {
        match self {
            Op::Reduce => Semantics::REDUCE,
            Op::Allreduce => Semantics::ALLREDUCE,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PolicyArg {
    Fp32Arrival,
    Kulisch,
}

impl PolicyArg {
    pub fn accumulator(self) -> AccumulatorPolicy {
        match self {
            PolicyArg::Fp32Arrival => AccumulatorPolicy::FP32_ARRIVAL,
            PolicyArg::Kulisch => AccumulatorPolicy::KULISCH_FIXED,
        }
    }
}
