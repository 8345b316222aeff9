//! The Verilator model of `prism_switch`, driven frame by frame from Rust.

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
    fn prism_switch_ports(m: *mut c_void) -> i32;
    fn prism_switch_cycle(m: *mut c_void, inp: *const Beat, out_ready: u32, out: *mut Beat, cycle: *mut u64) -> u32;
    fn prism_switch_counters(m: *mut c_void, dst: *mut u32, n: i32) -> i32;
    fn prism_switch_idle(m: *mut c_void) -> i32;
    fn prism_switch_skip(m: *mut c_void, cycles: u64);
    fn prism_switch_fp32_new(node_mac: *const u8, am_mac: *const u8, control_ep: u16) -> *mut c_void;
    fn prism_switch_fp32_free(m: *mut c_void);
    fn prism_switch_fp32_ports(m: *mut c_void) -> i32;
    fn prism_switch_fp32_cycle(m: *mut c_void, inp: *const Beat, out_ready: u32, out: *mut Beat, cycle: *mut u64) -> u32;
    fn prism_switch_fp32_counters(m: *mut c_void, dst: *mut u32, n: i32) -> i32;
    fn prism_switch_fp32_idle(m: *mut c_void) -> i32;
    fn prism_switch_fp32_skip(m: *mut c_void, cycles: u64);
}

/// One build's C ABI (csrc/switch_impl.h): the same calls for each model.
struct Api {
    new: unsafe extern "C" fn(*const u8, *const u8, u16) -> *mut c_void,
    free: unsafe extern "C" fn(*mut c_void),
    ports: unsafe extern "C" fn(*mut c_void) -> i32,
    cycle: unsafe extern "C" fn(*mut c_void, *const Beat, u32, *mut Beat, *mut u64) -> u32,
    counters: unsafe extern "C" fn(*mut c_void, *mut u32, i32) -> i32,
    idle: unsafe extern "C" fn(*mut c_void) -> i32,
    skip: unsafe extern "C" fn(*mut c_void, u64),
}

/// `prism_switch` with every feature.
static FULL: Api =
    Api { new: prism_switch_new, free: prism_switch_free, ports: prism_switch_ports, cycle: prism_switch_cycle, counters: prism_switch_counters, idle: prism_switch_idle, skip: prism_switch_skip };

/// `prism_switch_fp32`: built without KULISCH_FIXED and AUTO.
static FP32_ONLY: Api = Api {
    new: prism_switch_fp32_new,
    free: prism_switch_fp32_free,
    ports: prism_switch_fp32_ports,
    cycle: prism_switch_fp32_cycle,
    counters: prism_switch_fp32_counters,
    idle: prism_switch_fp32_idle,
    skip: prism_switch_fp32_skip,
};

/// A frame that left the switch, with its port and the cycles of its first and last beat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Egress {
    pub port: u16,
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

/// One simulated switch.
pub struct RtlSwitch {
    api: &'static Api,
    model: *mut c_void,
    ports: usize,
    cycle: u64,
    /// Egress beats gathered so far, per port.
    partial: Vec<Vec<u8>>,
    /// The beats offered and taken on one clock, one a port (kept, not reallocated every cycle).
    ins: Vec<Beat>,
    outs: Vec<Beat>,
    partial_first: Vec<u64>,
    /// Cycles with m_axis_tready low, as a repeating pattern (backpressure); port p runs it 5p cycles later.
    pub out_stall: Vec<bool>,
}

impl RtlSwitch {
    pub fn new(node_mac: [u8; 6], am_mac: [u8; 6], control_ep: u16) -> Self {
        Self::build(&FULL, node_mac, am_mac, control_ep)
    }

    /// The FP32-only build (`prism_switch_fp32`: KULISCH_ENABLE and
    /// AUTO_ENABLE 0), whose capability ROM has the FP32_ARRIVAL record only.
    pub fn fp32_only(node_mac: [u8; 6], am_mac: [u8; 6], control_ep: u16) -> Self {
        Self::build(&FP32_ONLY, node_mac, am_mac, control_ep)
    }

    fn build(api: &'static Api, node_mac: [u8; 6], am_mac: [u8; 6], control_ep: u16) -> Self {
        // SAFETY: the shim allocates a model and returns an owned pointer, freed in Drop.
        let model = unsafe { (api.new)(node_mac.as_ptr(), am_mac.as_ptr(), control_ep) };
        // SAFETY: model is live.
        let ports = unsafe { (api.ports)(model) } as usize;
        RtlSwitch {
            api,
            model,
            ports,
            cycle: 0,
            partial: vec![Vec::new(); ports],
            ins: vec![Beat::default(); ports],
            outs: vec![Beat::default(); ports],
            partial_first: vec![0; ports],
            out_stall: Vec::new(),
        }
    }

    /// The number of port pairs the design was built with.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// The current cycle count.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// One clock, with an optional beat on one port; whether that port took it.
    fn clock(&mut self, inp: Option<(usize, &Beat)>, out: &mut Vec<Egress>) -> bool {
        self.ins.iter_mut().for_each(|b| b.valid = 0);
        if let Some((p, b)) = inp {
            self.ins[p] = *b;
        }
        let took = self.clock_ins(out);
        inp.is_some_and(|(p, _)| took >> p & 1 == 1)
    }

    /// One clock with the beats in `self.ins` (valid = 0: none on that port); the ports that took theirs.
    fn clock_ins(&mut self, out: &mut Vec<Egress>) -> u32 {
        // Port p follows the pattern 5p cycles later: the ports stall at different times.
        let mut ready = u32::MAX;
        if !self.out_stall.is_empty() {
            for p in 0..self.ports {
                if self.out_stall[(self.cycle as usize + 5 * p) % self.out_stall.len()] {
                    ready &= !(1 << p);
                }
            }
        }
        let mut c = 0u64;
        // SAFETY: model is live; both arrays hold `ports` Beats; c a valid out-pointer.
        let took = unsafe { (self.api.cycle)(self.model, self.ins.as_ptr(), ready, self.outs.as_mut_ptr(), &mut c) };
        self.cycle = c + 1;
        for (p, o) in self.outs.iter().enumerate() {
            if o.valid == 0 {
                continue;
            }
            if self.partial[p].is_empty() {
                self.partial_first[p] = c;
            }
            let n = (o.keep.count_ones() as usize).min(64);
            self.partial[p].extend_from_slice(&o.data[..n]);
            if o.last != 0 {
                out.push(Egress { port: p as u16, frame: std::mem::take(&mut self.partial[p]), first_cycle: self.partial_first[p], last_cycle: c });
            }
        }
        took
    }

    /// Every port's frames offered at once, back to back on each port (each
    /// list in order); returns each frame's ingress cycles, per port.
    pub fn send_all(&mut self, frames: &[Vec<Vec<u8>>], out: &mut Vec<Egress>) -> Vec<Vec<Ingress>> {
        let mut queues: Vec<VecDeque<VecDeque<Beat>>> = frames.iter().map(|fs| fs.iter().map(|f| beats(f)).collect()).collect();
        queues.resize_with(self.ports, VecDeque::new);
        let mut seen: Vec<Vec<Ingress>> = vec![Vec::new(); self.ports];
        let mut first: Vec<Option<u64>> = vec![None; self.ports];
        while queues.iter().any(|q| !q.is_empty()) {
            for (b, q) in self.ins.iter_mut().zip(&queues) {
                *b = q.front().and_then(|f| f.front().copied()).unwrap_or_default();
            }
            let c = self.cycle;
            let took = self.clock_ins(out);
            for (p, q) in queues.iter_mut().enumerate() {
                if took >> p & 1 == 0 {
                    continue;
                }
                let Some(f) = q.front_mut() else { continue };
                first[p].get_or_insert(c);
                f.pop_front();
                if f.is_empty() {
                    q.pop_front();
                    seen[p].push(Ingress { first_cycle: first[p].take().unwrap_or(c), last_cycle: c });
                }
            }
        }
        seen
    }

    /// Offers a frame on port 0 (see `send_on`).
    pub fn send(&mut self, frame: &[u8], gap: usize, out: &mut Vec<Egress>) -> Ingress {
        self.send_on(0, frame, gap, out)
    }

    /// Offers a frame on `port` beat by beat (with `gap` idle cycles between
    /// beats), waiting while the port is busy; egress frames seen meanwhile go to `out`.
    pub fn send_on(&mut self, port: usize, frame: &[u8], gap: usize, out: &mut Vec<Egress>) -> Ingress {
        assert!(port < self.ports, "port {port} of {}", self.ports);
        let mut beats = beats(frame);
        let mut first = None;
        let mut last = 0;
        while let Some(b) = beats.front().copied() {
            let c = self.cycle;
            if self.clock(Some((port, &b)), out) {
                first.get_or_insert(c);
                last = c;
                beats.pop_front();
                for _ in 0..gap {
                    self.clock(None, out);
                }
            }
        }
        Ingress { first_cycle: first.unwrap_or(last), last_cycle: last }
    }

    /// Whether nothing is in flight (no frame buffered, engine and sender idle).
    pub fn quiet(&self) -> bool {
        // SAFETY: model is live.
        self.partial.iter().all(Vec::is_empty) && unsafe { (self.api.idle)(self.model) } != 0
    }

    /// Idle cycles until a frame leaves (true) or `max` cycles passed (false).
    /// Once the switch is quiet the rest of the wait is skipped, not
    /// simulated: without input its state cannot change.
    pub fn idle_until_output(&mut self, max: u64, out: &mut Vec<Egress>) -> bool {
        let before = out.len();
        for n in 0..max {
            if self.quiet() {
                // SAFETY: model is live.
                unsafe { (self.api.skip)(self.model, max - n) };
                self.cycle += max - n;
                return false;
            }
            self.clock(None, out);
            if out.len() > before {
                return true;
            }
        }
        false
    }

    /// Idle cycles until the switch is quiet (every buffered frame handled,
    /// egress empty) and no frame has left for `quiet` cycles. A switch
    /// still busy after a million silent cycles is stuck: that panics.
    pub fn drain(&mut self, quiet: u64, out: &mut Vec<Egress>) {
        let mut idle = 0;
        while idle < quiet || !self.quiet() {
            assert!(idle < 1_000_000, "the switch is still busy after {idle} cycles without output");
            let pending = |s: &Self| s.partial.iter().map(Vec::len).sum::<usize>();
            let before = out.len() + pending(self);
            self.clock(None, out);
            idle = if out.len() + pending(self) == before { idle + 1 } else { 0 };
        }
    }

    /// The node's counters, as the software engine names them.
    pub fn counters(&self) -> Counters {
        let mut raw = vec![0u32; Counters::RTL_LEN];
        // SAFETY: model is live; raw holds Counters::RTL_LEN entries.
        let n = unsafe { (self.api.counters)(self.model, raw.as_mut_ptr(), raw.len() as i32) };
        assert_eq!(n as usize, Counters::RTL_LEN, "counter layout differs between the RTL and prism_rtl::svpkg");
        Counters::from_rtl(&raw)
    }
}

/// A frame as AXI4-Stream beats (bytes past the frame are garbage, as on a real bus).
fn beats(frame: &[u8]) -> VecDeque<Beat> {
    let mut beats: VecDeque<Beat> = frame
        .chunks(64)
        .map(|c| {
            let mut b = Beat { data: [0xa5; 64], valid: 1, ..Beat::default() };
            b.data[..c.len()].copy_from_slice(c);
            b.keep = if c.len() == 64 { u64::MAX } else { (1u64 << c.len()) - 1 };
            b
        })
        .collect();
    if let Some(b) = beats.back_mut() {
        b.last = 1;
    }
    beats
}

impl Drop for RtlSwitch {
    fn drop(&mut self) {
        // SAFETY: created by this build's `new`, freed once by its `free`.
        unsafe { (self.api.free)(self.model) }
    }
}
