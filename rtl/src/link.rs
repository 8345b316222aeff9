//! pktgen's `Link` over the simulated hardware switch: a job runs through the
//! RTL exactly as through prism-switch, on simulated time (cycles of the
//! clock period), so that pktgen's latency histogram is in hardware time.

use crate::switch::{Egress, RtlSwitch};
use prism_dataplane::wire::Mac;
use prism_pktgen::link::{Link, Rx};
use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

/// A 100 GbE MAC clock: 322.265625 MHz.
pub const DEFAULT_CLOCK_MHZ: f64 = 322.265625;

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
        }
    }

    /// The simulated time of a cycle.
    pub fn at(&self, cycle: u64) -> Instant {
        self.t0 + Duration::from_nanos((cycle as f64 * self.period_ps / 1000.0) as u64)
    }

    pub fn cycles(&self) -> u64 {
        self.sw.cycle()
    }

    pub fn switch(&self) -> &RtlSwitch {
        &self.sw
    }

    fn collect(&mut self) {
        for e in std::mem::take(&mut self.out) {
            self.beats_out += e.frame.len().div_ceil(64) as u64;
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
        self.sw.send_on(port as usize, frame, 0, &mut self.out);
        self.beats_in += frame.len().div_ceil(64) as u64;
        self.collect();
        Ok(())
    }

    fn recv(&mut self, _timeout: Duration) -> io::Result<Option<Rx>> {
        if self.queue.is_empty() {
            self.sw.idle_until_output(self.idle_limit, &mut self.out);
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
