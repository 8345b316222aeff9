//! The switch's per-frame decisions, without I/O: PRISM frames for this node
//! go to the engine; everything else follows the Layer-2 policy.

pub mod config;
pub mod flows;
pub mod impair;
pub mod queues;
pub mod residence;
pub mod signals;
pub mod stats;

use crate::engine::{Node, Run, Sink};
use crate::wire::{EthernetFrame, Mac, ETH_HEADER_LEN};
use config::{L2Mode, SwitchConfig};
use std::collections::HashMap;

/// What to do with a received frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Taken by the engine (its replies are in the output list).
    Consumed,
    /// Send the same frame out of this port.
    Forward(u16),
    /// Send a copy out of every port but the ingress one.
    Flood,
    /// Dropped, with the reason.
    Drop(L2Drop),
}

/// Why the Layer-2 path dropped a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2Drop {
    Runt,
    Chained,
    SamePort,
    UnknownDestination,
    PolicyDrop,
}

impl L2Drop {
    pub const ALL: [L2Drop; 5] = [L2Drop::Runt, L2Drop::Chained, L2Drop::SamePort, L2Drop::UnknownDestination, L2Drop::PolicyDrop];
    pub fn name(self) -> &'static str {
        match self {
            L2Drop::Runt => "runt",
            L2Drop::Chained => "chained_mbuf",
            L2Drop::SamePort => "same_port",
            L2Drop::UnknownDestination => "unknown_destination",
            L2Drop::PolicyDrop => "l2_policy_drop",
        }
    }
}

/// Layer-2 counters.
#[derive(Debug, Clone, Default)]
pub struct L2Counters {
    pub forwarded: u64,
    pub flooded: u64,
    pub dropped: [u64; 5],
}

/// The switch's decisions.
pub struct SwitchCore {
    pub node: Node,
    mac: Mac,
    mode: L2Mode,
    table: HashMap<Mac, u16>,
    pub l2: L2Counters,
    now: u64,
}

impl SwitchCore {
    pub fn new(cfg: &SwitchConfig) -> Self {
        let table = cfg.l2.table.iter().filter_map(|e| e.mac.parse().ok().map(|m| (m, e.port))).collect();
        let mut node = Node::new(cfg.node_config());
        node.set_rto(cfg.node.rto_us.saturating_mul(1000));
        SwitchCore { node, mac: cfg.node_mac(), mode: cfg.l2.mode, table, l2: L2Counters::default(), now: 0 }
    }

    /// The polling core's clock (nanoseconds): stamps what the engine sends,
    /// and runs the retransmission timers that expired.
    pub fn tick(&mut self, now_ns: u64, out: &mut impl Sink) {
        self.now = now_ns;
        if self.node.poll_timeout().is_some_and(|d| d <= now_ns) {
            self.node.handle_timeout(now_ns, out);
        }
    }

    fn drop(&mut self, why: L2Drop) -> Action {
        self.l2.dropped[why as usize] += 1;
        Action::Drop(why)
    }

    /// Decides one frame received on `port`; engine replies go to `out`.
    pub fn rx(&mut self, port: u16, frame: &[u8], out: &mut impl Sink) -> Action {
        if frame.len() < ETH_HEADER_LEN {
            return self.drop(L2Drop::Runt);
        }
        let eth = EthernetFrame::new_unchecked(frame);
        let (dst, src) = (eth.dst(), eth.src());
        if dst == self.mac {
            // Ours: PRISM goes to the engine (which counts anything it refuses).
            self.node.handle_at(self.now, port, frame, out);
            return Action::Consumed;
        }
        match self.mode {
            L2Mode::Drop => self.drop(L2Drop::PolicyDrop),
            L2Mode::Learning | L2Mode::Static => {
                if self.mode == L2Mode::Learning && !src.is_multicast() {
                    self.table.insert(src, port);
                }
                match self.table.get(&dst) {
                    Some(&p) if p == port => self.drop(L2Drop::SamePort),
                    Some(&p) => {
                        self.l2.forwarded += 1;
                        Action::Forward(p)
                    }
                    None if self.mode == L2Mode::Learning => {
                        self.l2.flooded += 1;
                        Action::Flood
                    }
                    None => self.drop(L2Drop::UnknownDestination),
                }
            }
        }
    }

    /// Decides a burst of received frames, each `(port, frame)`, in order:
    /// the same decisions, frames out and counters as `rx` on each in turn
    /// (`action` hears each frame's index and `Action` right after it is
    /// decided, with the sink: what the frame made is the last the sink
    /// took). What a burst
    /// saves: a run of fast-path DATA frames for one operation (`Node::
    /// run_data`) looks the operation up, checks its state and sets its
    /// clock once, and counts what it sent once; each frame is still
    /// checked in full (shape, template, window, credit) and refused with
    /// its own reason. The next frame's header is prefetched while one is
    /// handled (a driver's burst is not all in L1).
    pub fn rx_burst<'a, S: Sink>(&mut self, frames: impl IntoIterator<Item = (u16, &'a [u8])>, out: &mut S, mut action: impl FnMut(usize, Action, &mut S)) {
        let mut run = Run::default();
        // The engine's MAC is the switch's (as `new` makes it): only then is
        // a frame the engine takes one `rx` would have given it.
        let engine_first = self.node.mac() == self.mac;
        let mut frames = frames.into_iter().enumerate();
        let mut next = frames.next();
        while let Some((i, (port, frame))) = next {
            next = frames.next();
            if let Some((_, (_, f))) = &next {
                prefetch(f);
            }
            if engine_first && self.node.run_data(&mut run, self.now, port, frame, out) {
                action(i, Action::Consumed, out);
                continue;
            }
            self.node.end_run(&mut run);
            let a = self.rx(port, frame, out);
            action(i, a, out);
        }
        self.node.end_run(&mut run);
    }

    /// Which of `workers` cores owns a locally addressed PRISM frame's operation
    /// (all of its CONTROL and DATA), or `None` for frames any core may handle.
    ///
    /// `(hash(Job, Group) + Operation ID) mod workers`: the jobs spread over
    /// the cores by the hash, and within one job consecutive operation IDs
    /// go to consecutive cores, so the K stripes of one collective (operation
    /// IDs `op..op+K`, `docs/switch.md`) run on K different cores when K is at
    /// most the number of workers.
    pub fn owner(&self, frame: &[u8], workers: usize) -> Option<usize> {
        if frame.len() < 6 || frame[..6] != self.mac.0 {
            return None;
        }
        operation_owner(frame, workers)
    }

    /// Counts a frame the driver could not give as one segment.
    pub fn chained(&mut self) {
        self.l2.dropped[L2Drop::Chained as usize] += 1;
    }
}

/// Asks for the first two cache lines of a frame (its headers and group
/// descriptor), a hint with no effect on what is computed.
#[inline(always)]
fn prefetch(frame: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of x86_64; a prefetch reads nothing into the
        // program and never faults, and both addresses lie inside `frame`.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(frame.as_ptr() as *const i8);
            if let Some(second) = frame.get(64..) {
                _mm_prefetch::<_MM_HINT_T0>(second.as_ptr() as *const i8);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = frame;
}

/// The core of `workers` that owns a PRISM frame's operation, by the frame
/// alone (`SwitchCore::owner` without the destination check), or `None`
/// for a frame that is not PRISM or when there is one worker. A sender that
/// can choose the queue a frame arrives on (a memif client, a NIC rule)
/// uses it to deliver each operation to its owner's queue, so the switch
/// never hands a frame between cores.
pub fn operation_owner(frame: &[u8], workers: usize) -> Option<usize> {
    if workers <= 1 || frame.len() < ETH_HEADER_LEN + 16 || frame[12..14] != crate::wire::ETHERTYPE.to_be_bytes() {
        return None;
    }
    // (Job, Group): frame bytes 16..26; the Operation ID: 28..30.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &frame[16..26] {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    let op = u16::from_be_bytes([frame[28], frame[29]]) as u64;
    Some(((h % workers as u64 + op) % workers as u64) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{AM_MAC, SWITCH_MAC};
    use crate::wire::{Command, ControlBody, Identity};

    fn core() -> SwitchCore {
        let cfg = SwitchConfig::parse(&crate::fixtures::SwitchToml::new(&["p0"]).to_string()).expect("config");
        SwitchCore::new(&cfg)
    }

    fn frame(dst: Mac, job: u64, op: u16) -> Vec<u8> {
        crate::fixtures::control_frame(Identity { job, group: 3, group_gen: 1, op, op_gen: 9 }, AM_MAC, dst, 1, Command::COMMIT, ControlBody::Empty)
    }

    #[test]
    fn consecutive_operations_of_a_job_go_to_consecutive_cores() {
        let c = core();
        let mac = SWITCH_MAC;
        for job in [1u64, 7, 0xdead_beef] {
            for workers in [2usize, 3, 4] {
                let first = c.owner(&frame(mac, job, 10), workers).expect("a PRISM frame for us has an owner");
                for k in 0..workers as u16 * 2 {
                    let o = c.owner(&frame(mac, job, 10 + k), workers);
                    assert_eq!(o, Some((first + k as usize) % workers), "job {job}, {workers} workers, stripe {k}");
                }
            }
        }
        // The generation does not move an operation (its retries and next generation stay on one core).
        let mut f = frame(mac, 1, 10);
        let o = c.owner(&f, 2);
        f[ETH_HEADER_LEN + 16..ETH_HEADER_LEN + 20].copy_from_slice(&77u32.to_be_bytes());
        assert_eq!(c.owner(&f, 2), o);
        // Not ours, or one worker: any core.
        assert_eq!(c.owner(&frame(Mac([2, 0, 0, 0, 0, 0x51]), 1, 10), 2), None);
        assert_eq!(c.owner(&frame(mac, 1, 10), 1), None);
    }
}
