//! The Verilator models of `prism_fp32_add` (combinational) and
//! `prism_fp32_add_pipe` (the same lane in ten register stages).

use std::ffi::c_void;

extern "C" {
    fn prism_fp32_add_new() -> *mut c_void;
    fn prism_fp32_add_free(m: *mut c_void);
    fn prism_fp32_add_batch(m: *mut c_void, a: *const u32, b: *const u32, sums: *mut u32, n: usize);
    fn prism_fp32_add_pipe_new() -> *mut c_void;
    fn prism_fp32_add_pipe_free(m: *mut c_void);
    fn prism_fp32_add_pipe_latency() -> u32;
    fn prism_fp32_add_pipe_batch(m: *mut c_void, a: *const u32, a_rest: *const u8, b: *const u32, sums: *mut u32, n: usize, stall_seed: u64, cycles: *mut u64) -> usize;
}

/// The simulated adder.
pub struct Fp32Adder {
    model: *mut c_void,
}

impl Default for Fp32Adder {
    fn default() -> Self {
        Self::new()
    }
}

impl Fp32Adder {
    pub fn new() -> Self {
        // SAFETY: the shim allocates a model and returns an owned pointer, freed in Drop.
        Fp32Adder { model: unsafe { prism_fp32_add_new() } }
    }

    /// `a[i] + b[i]` as bit patterns, through the RTL.
    pub fn add(&mut self, a: &[u32], b: &[u32]) -> Vec<u32> {
        let n = a.len().min(b.len());
        let mut sums = vec![0u32; n];
        // SAFETY: model is live; the three slices hold at least n elements.
        unsafe { prism_fp32_add_batch(self.model, a.as_ptr(), b.as_ptr(), sums.as_mut_ptr(), n) };
        sums
    }
}

impl Drop for Fp32Adder {
    fn drop(&mut self) {
        // SAFETY: created by prism_fp32_add_new, freed once.
        unsafe { prism_fp32_add_free(self.model) }
    }
}

/// The pipelined adder: one pair a cycle in, each sum `LATENCY` enabled
/// cycles later.
pub struct Fp32PipeAdder {
    model: *mut c_void,
}

impl Default for Fp32PipeAdder {
    fn default() -> Self {
        Self::new()
    }
}

/// What a pipelined batch took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipeRun {
    /// Clock cycles from the first pair in to the last sum out.
    pub cycles: u64,
    /// Sums that came out (with `m_valid`).
    pub sums: usize,
}

impl Fp32PipeAdder {
    pub fn new() -> Self {
        // SAFETY: the shim allocates a model and returns an owned pointer, freed in Drop.
        Fp32PipeAdder { model: unsafe { prism_fp32_add_pipe_new() } }
    }

    /// The module's LATENCY parameter.
    pub fn latency() -> u32 {
        // SAFETY: reads a constant of the model.
        unsafe { prism_fp32_add_pipe_latency() }
    }

    /// `a[i] + b[i]` as bit patterns, streamed one pair a cycle. With a
    /// non-zero `stall_seed`, `en` drops on pseudo-random cycles (the
    /// pipeline must hold, not lose or repeat, what is in flight).
    pub fn add(&mut self, a: &[u32], b: &[u32], stall_seed: u64) -> (Vec<u32>, PipeRun) {
        self.run(a, None, b, stall_seed)
    }

    /// As [`add`](Self::add), with `a_rest[i]` on the `a_rest` input: a
    /// pair whose flag is set adds `b` to -0, whatever `a[i]` holds (the
    /// ring's slot at rest).
    pub fn add_at_rest(&mut self, a: &[u32], a_rest: &[bool], b: &[u32], stall_seed: u64) -> (Vec<u32>, PipeRun) {
        let flags: Vec<u8> = a_rest.iter().map(|&r| u8::from(r)).collect();
        self.run(a, Some(&flags), b, stall_seed)
    }

    fn run(&mut self, a: &[u32], a_rest: Option<&[u8]>, b: &[u32], stall_seed: u64) -> (Vec<u32>, PipeRun) {
        let n = a.len().min(b.len()).min(a_rest.map_or(usize::MAX, <[u8]>::len));
        let mut sums = vec![0u32; n];
        let mut cycles = 0u64;
        let rest = a_rest.map_or(std::ptr::null(), <[u8]>::as_ptr);
        // SAFETY: model is live; a, b, sums (and a_rest when not null) hold at least n elements; cycles is a valid out-pointer.
        let got = unsafe { prism_fp32_add_pipe_batch(self.model, a.as_ptr(), rest, b.as_ptr(), sums.as_mut_ptr(), n, stall_seed, &mut cycles) };
        (sums, PipeRun { cycles, sums: got })
    }
}

impl Drop for Fp32PipeAdder {
    fn drop(&mut self) {
        // SAFETY: created by prism_fp32_add_pipe_new, freed once.
        unsafe { prism_fp32_add_pipe_free(self.model) }
    }
}
