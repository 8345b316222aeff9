//! The Verilator model of `prism_switch`, driven frame by frame from Rust.

use crate::svpkg::{cnt, counters_from};
use prism_dataplane::engine::Counters;
use std::collections::VecDeque;
use std::ffi::c_void;

#[repr(C)]
#[derive(Clone, Copy)]
struct Beat {
    data: [u8; 64],
    keep: u64,
    valid: u8,
    last: u8,
    _pad: [u8; 6],
}

impl Default for Beat {
    fn default() -> Self {
        Beat { data: [0; 64], keep: 0, valid: 0, last: 0, _pad: [0; 6] }
    }
}

extern "C" {
    fn prism_switch_new(node_mac: *const u8, am_mac: *const u8, control_ep: u16) -> *mut c_void;
    fn prism_switch_free(m: *mut c_void);
    fn prism_switch_cycle(m: *mut c_void, inp: *const Beat, out_ready: i32, out: *mut Beat, cycle: *mut u64) -> i32;
    fn prism_switch_counters(m: *mut c_void, dst: *mut u32, n: i32) -> i32;
    fn prism_switch_idle(m: *mut c_void) -> i32;
    fn prism_switch_skip(m: *mut c_void, cycles: u64);
}

/// A frame that left the switch, with the cycles of its first and last beat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Egress {
    pub frame: Vec<u8>,
    pub first_cycle: u64,
    pub last_cycle: u64,
}

/// A frame the switch took, with the cycle of its last beat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ingress {
    pub first_cycle: u64,
    pub last_cycle: u64,
}

/// One simulated switch (one port pair).
pub struct RtlSwitch {
    model: *mut c_void,
    cycle: u64,
    partial: Vec<u8>,
    partial_first: u64,
    /// Cycles with m_axis_tready low, as a repeating pattern (backpressure).
    pub out_stall: Vec<bool>,
}

impl RtlSwitch {
    pub fn new(node_mac: [u8; 6], am_mac: [u8; 6], control_ep: u16) -> Self {
        // SAFETY: the shim allocates a model and returns an owned pointer, freed in Drop.
        let model = unsafe { prism_switch_new(node_mac.as_ptr(), am_mac.as_ptr(), control_ep) };
        RtlSwitch { model, cycle: 0, partial: Vec::new(), partial_first: 0, out_stall: Vec::new() }
    }

    /// The current cycle count.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    fn clock(&mut self, inp: &Beat, out: &mut Vec<Egress>) -> bool {
        let stalled = !self.out_stall.is_empty() && self.out_stall[(self.cycle as usize) % self.out_stall.len()];
        let mut o = Beat::default();
        let mut c = 0u64;
        // SAFETY: model is live; inp and o are valid Beat structs; c a valid out-pointer.
        let took = unsafe { prism_switch_cycle(self.model, inp, (!stalled) as i32, &mut o, &mut c) } != 0;
        self.cycle = c + 1;
        if o.valid != 0 {
            if self.partial.is_empty() {
                self.partial_first = c;
            }
            let n = (o.keep.count_ones() as usize).min(64);
            self.partial.extend_from_slice(&o.data[..n]);
            if o.last != 0 {
                out.push(Egress { frame: std::mem::take(&mut self.partial), first_cycle: self.partial_first, last_cycle: c });
            }
        }
        took
    }

    /// Offers a frame beat by beat (with `gap` idle cycles between beats),
    /// waiting while the switch is busy; egress frames seen meanwhile go to `out`.
    pub fn send(&mut self, frame: &[u8], gap: usize, out: &mut Vec<Egress>) -> Ingress {
        let mut beats: VecDeque<Beat> = frame
            .chunks(64)
            .map(|c| {
                // Bytes past the frame are garbage on a real bus.
                let mut b = Beat { data: [0xa5; 64], valid: 1, ..Beat::default() };
                b.data[..c.len()].copy_from_slice(c);
                b.keep = if c.len() == 64 { u64::MAX } else { (1u64 << c.len()) - 1 };
                b
            })
            .collect();
        if let Some(b) = beats.back_mut() {
            b.last = 1;
        }
        let mut first = None;
        let mut last = 0;
        while let Some(b) = beats.front().copied() {
            let c = self.cycle;
            if self.clock(&b, out) {
                first.get_or_insert(c);
                last = c;
                beats.pop_front();
                for _ in 0..gap {
                    self.clock(&Beat::default(), out);
                }
            }
        }
        Ingress { first_cycle: first.unwrap_or(last), last_cycle: last }
    }

    /// Whether nothing is in flight (no frame buffered, engine and sender idle).
    pub fn quiet(&self) -> bool {
        // SAFETY: model is live.
        self.partial.is_empty() && unsafe { prism_switch_idle(self.model) } != 0
    }

    /// Idle cycles until a frame leaves (true) or `max` cycles passed (false).
    /// Once the switch is quiet the rest of the wait is skipped, not
    /// simulated: without input its state cannot change.
    pub fn idle_until_output(&mut self, max: u64, out: &mut Vec<Egress>) -> bool {
        let before = out.len();
        for n in 0..max {
            if self.quiet() {
                // SAFETY: model is live.
                unsafe { prism_switch_skip(self.model, max - n) };
                self.cycle += max - n;
                return false;
            }
            self.clock(&Beat::default(), out);
            if out.len() > before {
                return true;
            }
        }
        false
    }

    /// Idle cycles until no frame has left for `quiet` cycles.
    pub fn drain(&mut self, quiet: u64, out: &mut Vec<Egress>) {
        let mut idle = 0;
        while idle < quiet {
            let before = out.len() + self.partial.len();
            self.clock(&Beat::default(), out);
            idle = if out.len() + self.partial.len() == before { idle + 1 } else { 0 };
        }
    }

    /// The node's counters, as the software engine names them.
    pub fn counters(&self) -> Counters {
        let mut raw = vec![0u32; cnt::TOTAL];
        // SAFETY: model is live; raw holds cnt::TOTAL entries.
        let n = unsafe { prism_switch_counters(self.model, raw.as_mut_ptr(), raw.len() as i32) };
        assert_eq!(n as usize, cnt::TOTAL, "counter layout differs between the RTL and prism_rtl::svpkg");
        counters_from(&raw)
    }
}

impl Drop for RtlSwitch {
    fn drop(&mut self) {
        // SAFETY: created by prism_switch_new, freed once.
        unsafe { prism_switch_free(self.model) }
    }
}
