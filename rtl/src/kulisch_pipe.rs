//! The Verilator model of `prism_kulisch_lane_pipe`: the KULISCH_FIXED lane
//! in eight register stages (KW = 320), one (slot, term) a cycle; the shim
//! gives each slot three cycles after its term, as the node does.

use std::ffi::c_void;

use crate::{PipeRun, Slot, Term};

extern "C" {
    fn prism_kulisch_lane_pipe_new() -> *mut c_void;
    fn prism_kulisch_lane_pipe_free(m: *mut c_void);
    fn prism_kulisch_lane_pipe_latency() -> u32;
    #[allow(clippy::too_many_arguments)]
    fn prism_kulisch_lane_pipe_batch(
        m: *mut c_void,
        acc: *const u32,
        flags: *const u8,
        acc_rest: *const u8,
        is_kulisch: *const u8,
        fp32: *const u32,
        kstate: *const u8,
        kint: *const u32,
        acc_o: *mut u32,
        flags_o: *mut u8,
        n: usize,
        stall_seed: u64,
        cycles: *mut u64,
    ) -> usize;
}

/// The pipelined lane: each slot plus its term `LATENCY` enabled cycles later.
pub struct KulischLanePipe {
    model: *mut c_void,
}

impl Default for KulischLanePipe {
    fn default() -> Self {
        Self::new()
    }
}

impl KulischLanePipe {
    pub fn new() -> Self {
        // SAFETY: the shim allocates a model and returns an owned pointer, freed in Drop.
        KulischLanePipe { model: unsafe { prism_kulisch_lane_pipe_new() } }
    }

    /// The module's LATENCY parameter.
    pub fn latency() -> u32 {
        // SAFETY: reads a constant of the shim.
        unsafe { prism_kulisch_lane_pipe_latency() }
    }

    /// Each `slot + term`, streamed one a cycle. With a non-zero
    /// `stall_seed`, `en` drops on pseudo-random cycles (the pipeline must
    /// hold, not lose or repeat, what is in flight). `PipeRun::sums` counts
    /// the results that came out.
    pub fn add(&mut self, ops: &[(Slot, Term)], stall_seed: u64) -> (Vec<Slot>, PipeRun) {
        self.add_at_rest(ops, &vec![false; ops.len()], stall_seed)
    }

    /// As `add`, with operation i's slot at rest where `rest[i]` (the
    /// ring's flag: its words and flags must read as 0, whatever they hold).
    pub fn add_at_rest(&mut self, ops: &[(Slot, Term)], rest: &[bool], stall_seed: u64) -> (Vec<Slot>, PipeRun) {
        assert_eq!(rest.len(), ops.len(), "a rest flag an operation");
        let n = ops.len();
        let rest: Vec<u8> = rest.iter().map(|&r| u8::from(r)).collect();
        let mut acc = Vec::with_capacity(10 * n);
        let mut kint = Vec::with_capacity(10 * n);
        let (mut flags, mut is_k, mut fp32, mut kstate) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        for (s, t) in ops {
            acc.extend_from_slice(&s.words);
            flags.push(s.flags);
            match t {
                Term::Fp32(b) => {
                    is_k.push(0u8);
                    fp32.push(*b);
                    kstate.push(0u8);
                    kint.extend_from_slice(&[0u32; 10]);
                }
                Term::Kulisch { state, words } => {
                    is_k.push(1u8);
                    fp32.push(0);
                    kstate.push(*state);
                    // The lane's kint is zero unless FINITE (prism_node masks it).
                    kint.extend_from_slice(if *state == 0 { words } else { &[0u32; 10] });
                }
            }
        }
        let mut acc_o = vec![0u32; 10 * n];
        let mut flags_o = vec![0u8; n];
        let mut cycles = 0u64;
        // SAFETY: model is live; acc, kint and acc_o hold 10 n words, the
        // other arrays n elements; cycles is a valid out-pointer.
        let got = unsafe {
            prism_kulisch_lane_pipe_batch(
                self.model,
                acc.as_ptr(),
                flags.as_ptr(),
                rest.as_ptr(),
                is_k.as_ptr(),
                fp32.as_ptr(),
                kstate.as_ptr(),
                kint.as_ptr(),
                acc_o.as_mut_ptr(),
                flags_o.as_mut_ptr(),
                n,
                stall_seed,
                &mut cycles,
            )
        };
        let out = (0..n)
            .map(|i| {
                let mut words = [0u32; 10];
                words.copy_from_slice(&acc_o[10 * i..10 * i + 10]);
                Slot { words, flags: flags_o[i] }
            })
            .collect();
        (out, PipeRun { cycles, sums: got })
    }
}

impl Drop for KulischLanePipe {
    fn drop(&mut self) {
        // SAFETY: created by prism_kulisch_lane_pipe_new, freed once.
        unsafe { prism_kulisch_lane_pipe_free(self.model) }
    }
}
