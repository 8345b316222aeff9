//! The Verilator model of `prism_kulisch_round_pipe`: a Kulisch slot rounded
//! once to FP32 in six register stages (KW = 320), one slot a cycle.

use std::ffi::c_void;

use crate::{PipeRun, Slot};

extern "C" {
    fn prism_kulisch_round_pipe_new() -> *mut c_void;
    fn prism_kulisch_round_pipe_free(m: *mut c_void);
    fn prism_kulisch_round_pipe_latency() -> u32;
    #[allow(clippy::too_many_arguments)]
    fn prism_kulisch_round_pipe_batch(m: *mut c_void, acc: *const u32, flags: *const u8, fp32: *mut u32, exact: *mut u8, n: usize, stall_seed: u64, cycles: *mut u64) -> usize;
}

/// The pipelined rounding: each slot's FP32 value and exactness `LATENCY`
/// enabled cycles after it went in.
pub struct KulischRoundPipe {
    model: *mut c_void,
}

impl Default for KulischRoundPipe {
    fn default() -> Self {
        Self::new()
    }
}

impl KulischRoundPipe {
    pub fn new() -> Self {
        // SAFETY: the shim allocates a model and returns an owned pointer, freed in Drop.
        KulischRoundPipe { model: unsafe { prism_kulisch_round_pipe_new() } }
    }

    /// The module's LATENCY parameter.
    pub fn latency() -> u32 {
        // SAFETY: reads a constant of the model.
        unsafe { prism_kulisch_round_pipe_latency() }
    }

    /// Each slot rounded to FP32 (bits, exact), streamed one slot a cycle.
    /// With a non-zero `stall_seed`, `en` drops on pseudo-random cycles (the
    /// pipeline must hold, not lose or repeat, what is in flight). Results
    /// that did not come out are left as (0, false); `PipeRun::sums` counts
    /// those that did.
    pub fn round(&mut self, slots: &[Slot], stall_seed: u64) -> (Vec<(u32, bool)>, PipeRun) {
        let n = slots.len();
        let acc: Vec<u32> = slots.iter().flat_map(|s| s.words).collect();
        let flags: Vec<u8> = slots.iter().map(|s| s.flags).collect();
        let mut fp32 = vec![0u32; n];
        let mut exact = vec![0u8; n];
        let mut cycles = 0u64;
        // SAFETY: model is live; acc holds 10 * n words, the other slices n
        // elements each; cycles is a valid out-pointer.
        let got = unsafe { prism_kulisch_round_pipe_batch(self.model, acc.as_ptr(), flags.as_ptr(), fp32.as_mut_ptr(), exact.as_mut_ptr(), n, stall_seed, &mut cycles) };
        let out = fp32.into_iter().zip(exact).map(|(b, x)| (b, x != 0)).collect();
        (out, PipeRun { cycles, sums: got })
    }
}

impl Drop for KulischRoundPipe {
    fn drop(&mut self) {
        // SAFETY: created by prism_kulisch_round_pipe_new, freed once.
        unsafe { prism_kulisch_round_pipe_free(self.model) }
    }
}
