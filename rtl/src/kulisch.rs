//! The Verilator models of `prism_kulisch_lane` and `prism_kulisch_round`
//! (KW = 320: a slot is ten 32-bit words, least significant first).

use std::ffi::c_void;

extern "C" {
    fn prism_kulisch_new() -> *mut c_void;
    fn prism_kulisch_free(m: *mut c_void);
    #[allow(clippy::too_many_arguments)]
    fn prism_kulisch_add(m: *mut c_void, acc: *const u32, flags: u8, is_kulisch: i32, fp32: u32, kstate: u8, kint: *const u32, acc_o: *mut u32, flags_o: *mut u8);
    fn prism_kulisch_round(m: *mut c_void, acc: *const u32, flags: u8, exact: *mut i32) -> u32;
}

/// A slot: the 320-bit two's-complement integer in units of 2^-149 and its
/// flags {any, not -0, NaN, +inf, -inf} from bit 4 down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Slot {
    pub words: [u32; 10],
    pub flags: u8,
}

/// A term for the lane: an FP32 value, or a Kulisch value (state and integer).
#[derive(Debug, Clone, Copy)]
pub enum Term {
    Fp32(u32),
    Kulisch { state: u8, words: [u32; 10] },
}

/// Both simulated units.
pub struct KulischUnits {
    model: *mut c_void,
}

impl Default for KulischUnits {
    fn default() -> Self {
        Self::new()
    }
}

impl KulischUnits {
    pub fn new() -> Self {
        // SAFETY: the shim allocates the models and returns an owned pointer, freed in Drop.
        KulischUnits { model: unsafe { prism_kulisch_new() } }
    }

    /// The slot after adding one term.
    pub fn add(&mut self, s: &Slot, t: Term) -> Slot {
        let (is_k, fp32, state, kint) = match t {
            Term::Fp32(b) => (0, b, 0, [0u32; 10]),
            Term::Kulisch { state, words } => (1, 0, state, words),
        };
        let mut out = Slot::default();
        // SAFETY: model is live; every array holds ten words; out-pointers are valid.
        unsafe { prism_kulisch_add(self.model, s.words.as_ptr(), s.flags, is_k, fp32, state, kint.as_ptr(), out.words.as_mut_ptr(), &mut out.flags) };
        out
    }

    /// The slot rounded once to FP32, and whether that is its exact value.
    pub fn round(&mut self, s: &Slot) -> (u32, bool) {
        let mut exact = 0;
        // SAFETY: model is live; ten words; exact is a valid out-pointer.
        let bits = unsafe { prism_kulisch_round(self.model, s.words.as_ptr(), s.flags, &mut exact) };
        (bits, exact != 0)
    }
}

impl Drop for KulischUnits {
    fn drop(&mut self) {
        // SAFETY: created by prism_kulisch_new, freed once.
        unsafe { prism_kulisch_free(self.model) }
    }
}
