//! The Verilator model of `prism_rx_validate` (`prism_rx_check` and
//! `prism_group_walk`), driven beat by beat.

use std::ffi::c_void;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct RawVerdict {
    valid: u8,
    prism: u8,
    local: u8,
    ok: u8,
    body_walk: u8,
    cls: u8,
    reason: u8,
    _pad: u8,
    offset: u16,
    cycle: u64,
}

extern "C" {
    fn prism_rx_new(mac: *const u8) -> *mut c_void;
    fn prism_rx_free(m: *mut c_void);
    fn prism_rx_cycle(m: *mut c_void, valid: i32, data: *const u8, keep: u64, last: i32, v: *mut RawVerdict);
}

/// The checker's verdict on one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub prism: bool,
    pub local: bool,
    pub ok: bool,
    /// Header checks passed; the body's records still need walking.
    pub body_walk: bool,
    pub class: u8,
    /// `Reason::index()` when not ok.
    pub reason: u8,
    pub offset: u16,
    /// Cycle the verdict appeared on.
    pub cycle: u64,
}

/// One instance of the simulated checker.
pub struct RxCheck {
    model: *mut c_void,
    /// The cycle of the last beat with tlast.
    tlast: u64,
}

impl RxCheck {
    /// Cycles from a frame's last beat to its verdict, as this model counts
    /// them (prism_group_walk's pipeline is the longer of the two engines;
    /// prism_rx_validate merges their verdicts a cycle after the later);
    /// rtl/tests/rx_check.rs pins it on the model.
    pub const LATENCY: u64 = 16;

    pub fn new(local_mac: [u8; 6]) -> Self {
        // SAFETY: the shim allocates a model and returns an owned pointer, freed in Drop.
        RxCheck { model: unsafe { prism_rx_new(local_mac.as_ptr()) }, tlast: 0 }
    }

    /// The cycle (as in `Verdict::cycle`) of the last frame's last beat.
    pub fn tlast_cycle(&self) -> u64 {
        self.tlast
    }

    fn cycle(&mut self, beat: Option<(&[u8; 64], u64, bool)>) -> RawVerdict {
        let mut v = RawVerdict::default();
        let zero = [0u8; 64];
        let (data, keep, last, valid) = match beat {
            Some((d, k, l)) => (d, k, l, 1),
            None => (&zero, 0, false, 0),
        };
        // SAFETY: model is live; data is 64 bytes; v is a valid out-pointer.
        unsafe { prism_rx_cycle(self.model, valid, data.as_ptr(), keep, last as i32, &mut v) };
        v
    }

    /// Sends a frame with `gap` idle cycles between beats; returns every verdict seen meanwhile.
    pub fn send(&mut self, frame: &[u8], gap: usize) -> Vec<Verdict> {
        let mut seen = Vec::new();
        let beats = frame.chunks(64).count().max(1);
        for (i, chunk) in frame.chunks(64).enumerate() {
            let mut data = [0u8; 64];
            // Bytes past the frame are garbage on a real bus: fill them so the design cannot rely on zeros.
            data.fill(0xa5);
            data[..chunk.len()].copy_from_slice(chunk);
            let keep = if chunk.len() == 64 { u64::MAX } else { (1u64 << chunk.len()) - 1 };
            let v = self.cycle(Some((&data, keep, i + 1 == beats)));
            if i + 1 == beats {
                self.tlast = v.cycle;
            }
            seen.extend(Self::take(v));
            for _ in 0..gap {
                seen.extend(Self::take(self.cycle(None)));
            }
        }
        seen
    }

    /// Idle cycles until the pipeline has given every pending verdict, and one
    /// more (where a verdict too many would show).
    pub fn drain(&mut self) -> Vec<Verdict> {
        (0..=Self::LATENCY).filter_map(|_| Self::take(self.cycle(None))).collect()
    }

    fn take(v: RawVerdict) -> Option<Verdict> {
        (v.valid != 0).then_some(Verdict { prism: v.prism != 0, local: v.local != 0, ok: v.ok != 0, body_walk: v.body_walk != 0, class: v.cls, reason: v.reason, offset: v.offset, cycle: v.cycle })
    }
}

impl Drop for RxCheck {
    fn drop(&mut self) {
        // SAFETY: created by prism_rx_new, freed once.
        unsafe { prism_rx_free(self.model) }
    }
}
