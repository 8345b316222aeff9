//! The `Link` (prism-dataplane's, the one pktgen drives) over the simulated
//! hardware switch: a job runs through the RTL exactly as through
//! prism-switch, on simulated time (cycles of the clock period), so that
//! pktgen's latency histogram is in hardware time.
//!
//! It also measures the switch's residence time per RESULT frame the way
//! prism-switch does: from the cycle of the last beat of the DATA frame that
//! completed the RESULT's range (the last DATA of that operation overlapping
//! the range to arrive before the RESULT left) to the RESULT's first beat.
//! Under AUTO output a RESULT also waits for the encoder's lookahead, the
//! LOOKAHEAD elements past its end, so those count as its range too.

use crate::switch::{Egress, RtlSwitch};
use prism_dataplane::link::{Link, Rx};
use prism_dataplane::wire::{parse_frame, Class, Command, ControlBody, Identity, Limits, Mac, OutputFormat, ParsedFrame, PrismRepr};
use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

/// A 100 GbE MAC clock: 322.265625 MHz.
pub const DEFAULT_CLOCK_MHZ: f64 = 322.265625;

/// Whether the design supports that clock, said wherever a figure in ns is:
/// rtl/timing.sh checks the units (in CI), rtl/synth_switch.sh the whole
/// switch (docs/rtl.md, Timing).
pub const CLOCK_STATUS: &str = "the clock the design's depth supports: rtl/synth_switch.sh (Yosys 0.23, synth_xilinx -family xcup, flattened) finds no register-to-register path over 6 logic levels, the 322 MHz budget on UltraScale+ -2; a synthesis proxy, not a place-and-route";

/// The RTL switch behind one port, as a pktgen link.
pub struct RtlLink {
    sw: RtlSwitch,
    t0: Instant,
    period_ps: f64,
    out: Vec<Egress>,
    queue: VecDeque<Rx>,
    /// Cycles to simulate without a frame out before `recv` gives up.
    pub idle_limit: u64,
    /// Beats taken in and given out (throughput figures).
    pub beats_in: u64,
    pub beats_out: u64,
    /// DATA frames taken in, newest last, for the residence time.
    data_in: VecDeque<DataIn>,
    /// Residence time of every RESULT frame out, in cycles, in order.
    pub residence_cycles: Vec<u64>,
    /// The same for the first RESULT frame of each range only (the other
    /// paths' copies also wait for the ones sent before them on the port).
    pub first_residence_cycles: Vec<u64>,
    /// Ranges whose first RESULT has left (operation, first element).
    results_seen: std::collections::HashSet<(Identity, u64)>,
    /// Operations staged with AUTO output (their RESULTs wait for the lookahead).
    auto_ops: Vec<Identity>,
}

/// A DATA frame the switch took: its operation, element range and the cycle of its last beat.
struct DataIn {
    identity: Identity,
    first: u64,
    end: u64,
    last_cycle: u64,
}

/// How many DATA frames are remembered for the residence time: far more
/// than a window (16 packets a contributor, 8 contributors) holds.
const DATA_KEPT: usize = 4096;

/// What the residence time needs of a frame.
enum Seen {
    /// A DATA or RESULT frame: its operation and element range.
    Range(Class, Identity, u64, u64),
    /// A STAGE of an operation with AUTO output.
    AutoStage(Identity),
}

fn seen(frame: &[u8]) -> Option<Seen> {
    match parse_frame(frame, &Limits { mtu: 9000 }) {
        Ok(ParsedFrame { prism: Some(PrismRepr::Data(d)), .. }) => Some(Seen::Range(d.class, d.identity, d.first_element as u64, d.end_element())),
        Ok(ParsedFrame { prism: Some(PrismRepr::Control(c)), .. }) => match c.body {
            ControlBody::Stage { context, .. } if c.command == Command::STAGE && context.output == OutputFormat::AUTO => Some(Seen::AutoStage(c.identity)),
            _ => None,
        },
        _ => None,
    }
}

impl RtlLink {
    /// A fresh switch with this identity; the AM sits behind port 0.
    pub fn new(node_mac: Mac, am_mac: Mac, control_ep: u16, clock_mhz: f64) -> Self {
        RtlLink {
            sw: RtlSwitch::new(node_mac.0, am_mac.0, control_ep),
            t0: Instant::now(),
            period_ps: 1e6 / clock_mhz,
            out: Vec::new(),
            queue: VecDeque::new(),
            idle_limit: 20_000,
            beats_in: 0,
            beats_out: 0,
            data_in: VecDeque::new(),
            residence_cycles: Vec::new(),
            first_residence_cycles: Vec::new(),
            results_seen: std::collections::HashSet::new(),
            auto_ops: Vec::new(),
        }
    }

    /// The simulated time of a cycle.
    pub fn at(&self, cycle: u64) -> Instant {
        self.t0 + Duration::from_nanos((cycle as f64 * self.period_ps / 1000.0) as u64)
    }

    pub fn cycles(&self) -> u64 {
        self.sw.cycle()
    }

    /// The clock period in ns.
    pub fn period_ns(&self) -> f64 {
        self.period_ps / 1000.0
    }

    pub fn switch(&self) -> &RtlSwitch {
        &self.sw
    }

    fn collect(&mut self) {
        for e in std::mem::take(&mut self.out) {
            self.beats_out += e.frame.len().div_ceil(64) as u64;
            if let Some(Seen::Range(Class::RESULT, id, first, end)) = seen(&e.frame) {
                let end = if self.auto_ops.contains(&id) { end + prism_arith::auto::LOOKAHEAD as u64 } else { end };
                let completing = self.data_in.iter().filter(|d| d.identity == id && d.first < end && first < d.end && d.last_cycle <= e.first_cycle).map(|d| d.last_cycle).max();
                if let Some(c) = completing {
                    self.residence_cycles.push(e.first_cycle - c);
                    if self.results_seen.insert((id, first)) {
                        self.first_residence_cycles.push(e.first_cycle - c);
                    }
                }
            }
            let at = self.at(e.last_cycle);
            self.queue.push_back(Rx { port: e.port, frame: e.frame, at });
        }
    }
}

impl Link for RtlLink {
    fn send(&mut self, port: u16, frame: &[u8]) -> io::Result<()> {
        if port as usize >= self.sw.ports() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("the RTL switch has {} ports, no port {port}", self.sw.ports())));
        }
        let ingress = self.sw.send_on(port as usize, frame, 0, &mut self.out);
        self.beats_in += frame.len().div_ceil(64) as u64;
        match seen(frame) {
            Some(Seen::Range(Class::DATA, identity, first, end)) => {
                if self.data_in.len() == DATA_KEPT {
                    self.data_in.pop_front();
                }
                self.data_in.push_back(DataIn { identity, first, end, last_cycle: ingress.last_cycle });
            }
            Some(Seen::AutoStage(id)) if !self.auto_ops.contains(&id) => self.auto_ops.push(id),
            _ => {}
        }
        self.collect();
        Ok(())
    }

    /// Simulates until a frame leaves, for at most `timeout` of simulated
    /// time (and `idle_limit` cycles): a paced sender gets the clock back
    /// when its next frame is due, as on a real link.
    fn recv(&mut self, timeout: Duration) -> io::Result<Option<Rx>> {
        if self.queue.is_empty() {
            let cycles = (timeout.as_nanos() as f64 * 1000.0 / self.period_ps).ceil() as u64;
            self.sw.idle_until_output(cycles.min(self.idle_limit), &mut self.out);
            self.collect();
        }
        Ok(self.queue.pop_front())
    }

    fn describe(&self) -> String {
        format!("RTL switch (prism_switch under Verilator, {:.3} MHz)", 1e6 / self.period_ps)
    }

    fn now(&self) -> Instant {
        self.at(self.sw.cycle())
    }
}
