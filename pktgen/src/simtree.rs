//! The tree of `lab` in one process: the root and the leaves are the same
//! `SwitchCore`s prism-switch runs, wired as the lab wires them, on the wall
//! clock, or on a virtual clock that makes a run repeatable (tests). No root
//! privileges, no DPDK; for tests of the AM and the ranks, and for
//! `prism-tree --sim`.

use crate::lab::config_text;
use crate::link::{Link, Rx};
use crate::tree::TreeNode;
use prism_dataplane::engine::Sent;
use prism_dataplane::switch::config::{ConfigError, SwitchConfig};
use prism_dataplane::switch::impair::{ImpairSpec, Impairment, Verdict};
use prism_dataplane::switch::{Action, SwitchCore};
use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

/// What one poll of the virtual clock costs.
const POLL_NS: u64 = 1_000;

/// Link port `i` reaches leaf `i`'s port 0.
pub struct SimTreeLink {
    /// Index 0 the root, then leaf 0, leaf 1, ...
    cores: Vec<SwitchCore>,
    wire: VecDeque<(usize, u16, Vec<u8>)>,
    to_pktgen: VecDeque<Rx>,
    start: Instant,
    /// Nanoseconds since `start` on the virtual clock; None: the wall clock.
    virtual_ns: Option<u64>,
    /// Test hook: frames for pktgen that are lost, counted down.
    pub lose_to_pktgen: usize,
    /// Impairment of every frame a switch receives (as prism-switch --impair).
    impair: Option<Impairment>,
    held: Option<(usize, u16, Vec<u8>)>,
}

impl SimTreeLink {
    /// The root and `leaves` leaves; `edit` may change a node's configuration.
    pub fn new(leaves: u16, edit: impl Fn(TreeNode, &mut SwitchConfig)) -> Result<SimTreeLink, ConfigError> {
        let nodes = std::iter::once(TreeNode::Root).chain((0..leaves).map(TreeNode::Leaf));
        let cores = nodes
            .map(|n| {
                let mut cfg = SwitchConfig::parse(&config_text(n))?;
                edit(n, &mut cfg);
                Ok(SwitchCore::new(&cfg))
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        Ok(SimTreeLink { cores, wire: VecDeque::new(), to_pktgen: VecDeque::new(), start: Instant::now(), virtual_ns: None, lose_to_pktgen: 0, impair: None, held: None })
    }

    /// Runs on a virtual clock from now on: time moves only while pktgen
    /// waits for frames, straight to the next timer of a switch, so a run
    /// (and its impairment) is the same every time, however loaded the
    /// machine. Each poll costs `POLL_NS`, so a caller that only polls still
    /// reaches its timeouts.
    pub fn with_virtual_clock(mut self) -> Self {
        self.virtual_ns = Some(self.now_ns());
        self
    }

    /// Impairs every frame the switches receive from now on.
    pub fn impair(&mut self, spec: ImpairSpec) {
        self.impair = Some(Impairment::new(spec));
    }

    fn index(node: TreeNode) -> usize {
        match node {
            TreeNode::Root => 0,
            TreeNode::Leaf(i) => 1 + i as usize,
        }
    }

    pub fn core(&self, node: TreeNode) -> &SwitchCore {
        &self.cores[Self::index(node)]
    }

    /// A frame leaving switch `n` on `port`.
    fn route(&mut self, n: usize, port: u16, frame: Vec<u8>) {
        match (n, port) {
            (0, p) => self.wire.push_back((1 + p as usize, 1, frame)),
            (leaf, 1) => self.wire.push_back((0, (leaf - 1) as u16, frame)),
            (leaf, _) => {
                if self.lose_to_pktgen > 0 {
                    self.lose_to_pktgen -= 1;
                    return;
                }
                self.to_pktgen.push_back(Rx { port: (leaf - 1) as u16, frame, at: self.clock() });
            }
        }
    }

    fn now_ns(&self) -> u64 {
        self.virtual_ns.unwrap_or_else(|| self.start.elapsed().as_nanos() as u64)
    }

    fn clock(&self) -> Instant {
        self.start + Duration::from_nanos(self.now_ns())
    }

    /// The earliest timer of any switch.
    fn next_timer(&self) -> Option<u64> {
        self.cores.iter().filter_map(|c| c.node.poll_timeout()).min()
    }

    /// Delivers everything on the wires and runs expired timers.
    fn pump(&mut self) {
        let mut out: Vec<Sent> = Vec::new();
        loop {
            let now = self.now_ns();
            for n in 0..self.cores.len() {
                self.cores[n].tick(now, &mut out);
                for s in out.drain(..) {
                    self.route(n, s.port, s.frame);
                }
            }
            let Some((n, port, mut frame)) = self.wire.pop_front().or_else(|| self.held.take()) else { return };
            match self.impair.as_mut().map_or(Verdict::Deliver, |i| i.decide(frame.len())) {
                Verdict::Deliver => {}
                Verdict::Drop => continue,
                Verdict::Duplicate => self.wire.push_front((n, port, frame.clone())),
                Verdict::Cut(k) => frame.truncate(k),
                Verdict::Hold => {
                    if let Some(h) = self.held.replace((n, port, frame)) {
                        self.wire.push_back(h);
                    }
                    continue;
                }
            }
            let action = self.cores[n].rx(port, &frame, &mut out);
            for s in out.drain(..) {
                self.route(n, s.port, s.frame);
            }
            match action {
                Action::Forward(p) => self.route(n, p, frame),
                Action::Flood => {
                    for p in (0..2).filter(|&p| p != port) {
                        self.route(n, p, frame.clone());
                    }
                }
                Action::Consumed | Action::Drop(_) => {}
            }
        }
    }
}

impl Link for SimTreeLink {
    fn send(&mut self, port: u16, frame: &[u8]) -> io::Result<()> {
        if 1 + port as usize >= self.cores.len() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("no leaf behind port {port}")));
        }
        self.wire.push_back((1 + port as usize, 0, frame.to_vec()));
        Ok(())
    }

    fn recv(&mut self, timeout: Duration) -> io::Result<Option<Rx>> {
        if let Some(ns) = self.virtual_ns {
            let until = ns + timeout.as_nanos() as u64;
            self.virtual_ns = Some(ns + POLL_NS);
            loop {
                self.pump();
                if let Some(rx) = self.to_pktgen.pop_front() {
                    return Ok(Some(rx));
                }
                let now = self.now_ns();
                if now >= until {
                    return Ok(None);
                }
                let next = self.next_timer().filter(|&t| t > now).map_or(until, |t| t.min(until));
                self.virtual_ns = Some(next);
            }
        }
        let until = Instant::now() + timeout;
        loop {
            self.pump();
            if let Some(rx) = self.to_pktgen.pop_front() {
                return Ok(Some(rx));
            }
            if Instant::now() >= until {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    fn now(&self) -> Instant {
        self.clock()
    }

    fn describe(&self) -> String {
        "in-process tree (root and leaves as SwitchCores)".into()
    }
}
