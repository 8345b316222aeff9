//! The Verilator model of `prism_fp32_add`, one FP32_ARRIVAL lane.

use std::ffi::c_void;

extern "C" {
    fn prism_fp32_add_new() -> *mut c_void;
    fn prism_fp32_add_free(m: *mut c_void);
    fn prism_fp32_add_batch(m: *mut c_void, a: *const u32, b: *const u32, sums: *mut u32, n: usize);
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
