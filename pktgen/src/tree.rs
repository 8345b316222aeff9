//! A spine-leaf tree job: one ROOT over `leaves` LEAF switches with
//! `ranks_per_leaf` ranks under each. pktgen is the Aggregation Manager of
//! every node and all the ranks; every direct stream has PROGRESS and local
//! retransmission (the engine's `Replay` and `RxWindow`, the same code the
//! switches run), and every RESULT value is checked exactly.
//!
//! Wiring (link port `i` reaches leaf `i`'s port 0; the root only through the
//! leaves, which forward its CONTROL by Layer 2):
//! - leaf `i`: port 0 to pktgen (its ranks and the AM), port 1 up to the root;
//! - root: port `i` down to leaf `i`; its AM port is 0 (behind leaf 0).

use crate::feedback;
use crate::link::Link;
use crate::verify::oracle::{self, V, F32};
use prism_dataplane::engine::stream::StreamStats;
use prism_dataplane::engine::{Replay, RxWindow, Sent};
use prism_dataplane::switch::impair::{ImpairSpec, Impairment, Verdict};
use prism_dataplane::wire::*;
use std::time::{Duration, Instant};

use prism_dataplane::fixtures::{leaf_mac, rank_mac, AM_EP, AM_MAC, ROOT_MAC, SWITCH_EP};

/// A node of the tree: the root, or leaf `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeNode {
    Root,
    Leaf(u16),
}

impl TreeNode {
    pub fn mac(self) -> Mac {
        match self {
            TreeNode::Root => ROOT_MAC,
            TreeNode::Leaf(i) => leaf_mac(i),
        }
    }
    /// The link port CONTROL for this node leaves on.
    fn link_port(self) -> u16 {
        match self {
            TreeNode::Root => 0,
            TreeNode::Leaf(i) => i,
        }
    }
    pub fn name(self) -> String {
        match self {
            TreeNode::Root => "root".into(),
            TreeNode::Leaf(i) => format!("leaf {i}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TreeJob {
    pub leaves: u16,
    pub ranks_per_leaf: u16,
    pub semantics: Semantics,
    pub dest_rank: u16,
    pub accumulator: AccumulatorPolicy,
    pub partial: PartialPolicy,
    pub vector_len: u32,
    pub replay_depth: u16,
    pub window_intervals: u16,
    pub identity: Identity,
    pub seed: u64,
    /// Values over the whole FP32 exponent range instead of gradient-like ones.
    pub full_range: bool,
    /// First retransmission timeout of the ranks' streams.
    pub rto: Duration,
    /// Give up when nothing new arrives for this long.
    pub timeout: Duration,
    /// Impairment of the frames the ranks receive (the switches impair theirs).
    pub impair: Option<ImpairSpec>,
}

impl TreeJob {
    pub fn new(semantics: Semantics, accumulator: AccumulatorPolicy, partial: PartialPolicy, vector_len: u32) -> TreeJob {
        TreeJob {
            leaves: 2,
            ranks_per_leaf: 2,
            semantics,
            dest_rank: 1,
            accumulator,
            partial,
            vector_len,
            replay_depth: 16,
            window_intervals: 32,
            identity: Identity { job: 0x7472_6565, group: 1, group_gen: 1, op: 1, op_gen: 1 },
            seed: 1,
            full_range: false,
            rto: Duration::from_millis(5),
            timeout: Duration::from_secs(10),
            impair: None,
        }
    }

    pub fn ranks(&self) -> u16 {
        self.leaves * self.ranks_per_leaf
    }
    pub fn leaf_of(&self, r: u16) -> u16 {
        r / self.ranks_per_leaf
    }
    pub fn gets_result(&self, r: u16) -> bool {
        self.semantics == Semantics::ALLREDUCE || r == self.dest_rank
    }
    pub fn kulisch_width(&self) -> u16 {
        if self.accumulator == AccumulatorPolicy::KULISCH_FIXED { prism_arith::min_kulisch_width(self.ranks() as u32) as u16 } else { 0 }
    }
    pub fn nodes(&self) -> Vec<TreeNode> {
        std::iter::once(TreeNode::Root).chain((0..self.leaves).map(TreeNode::Leaf)).collect()
    }
    fn window_bytes(&self) -> u32 {
        self.window_intervals as u32 * 1518
    }

    fn context(&self, role: Role, bindings: usize) -> ContextRecord {
        ContextRecord {
            role,
            semantics: self.semantics,
            input_format: FormatCode::FP32,
            accumulator: self.accumulator,
            partial: self.partial,
            output: OutputFormat::FP32,
            kulisch_width: self.kulisch_width(),
            vector_len: self.vector_len,
            dest_rank: if self.semantics == Semantics::REDUCE { self.dest_rank } else { NO_RANK },
            mtu: 1500,
            terms: self.ranks() as u32,
            window_elements: single_window_elements(1500) as u32,
            window_intervals: self.window_intervals,
            replay_depth: self.replay_depth,
            window_bytes: self.window_bytes(),
            binding_count: bindings as u16,
        }
    }

    /// One node's context and bindings (only its own edges).
    pub fn stage(&self, node: TreeNode) -> (ContextRecord, Vec<BindingRecord>) {
        let leaf_results = |i: u16| (0..self.ranks()).any(|r| self.leaf_of(r) == i && self.gets_result(r));
        match node {
            TreeNode::Root => {
                let b: Vec<BindingRecord> = (0..self.leaves)
                    .map(|i| BindingRecord {
                        directions: direction::DATA_IN | if leaf_results(i) { direction::RESULT_OUT } else { 0 },
                        peer_kind: PeerKind::SWITCH,
                        stream_id: 0x100 + i,
                        local_ep: 0x0300 + i,
                        peer_ep: 0x0200 + i,
                        peer_mac: leaf_mac(i),
                        port: i,
                        rank: NO_RANK,
                        terms: self.ranks_per_leaf as u32 as u16,
                    })
                    .collect();
                (self.context(Role::ROOT, b.len()), b)
            }
            TreeNode::Leaf(i) => {
                let mut b: Vec<BindingRecord> = (0..self.ranks())
                    .filter(|&r| self.leaf_of(r) == i)
                    .map(|r| BindingRecord {
                        directions: direction::DATA_IN | if self.gets_result(r) { direction::RESULT_OUT } else { 0 },
                        peer_kind: PeerKind::RANK,
                        stream_id: r,
                        local_ep: 0x0100 + r,
                        peer_ep: 0x1000 + r,
                        peer_mac: rank_mac(r),
                        port: 0,
                        rank: r,
                        terms: 1,
                    })
                    .collect();
                b.push(BindingRecord {
                    directions: direction::DATA_OUT | if leaf_results(i) { direction::RESULT_IN } else { 0 },
                    peer_kind: PeerKind::SWITCH,
                    stream_id: 0x100 + i,
                    local_ep: 0x0200 + i,
                    peer_ep: 0x0300 + i,
                    peer_mac: ROOT_MAC,
                    port: 1,
                    rank: NO_RANK,
                    terms: self.ranks_per_leaf,
                });
                (self.context(Role::LEAF, b.len()), b)
            }
        }
    }

    pub fn control(&self, node: TreeNode, txn: u32, command: Command, body: ControlBody<'_>) -> Vec<u8> {
        let c = ControlRepr { identity: self.identity, txn, src_ep: AM_EP, dst_ep: SWITCH_EP, command, frag_index: 0, frag_count: 1, body };
        let p = PrismRepr::Control(c);
        let mut f = vec![0; p.frame_len()];
        p.emit_frame(&EthernetRepr { dst: node.mac(), src: AM_MAC, ethertype: ETHERTYPE }, &mut f);
        f
    }

    /// Each rank's FP32 values (bit patterns), from the seed.
    pub fn vectors(&self) -> Vec<Vec<u32>> {
        let mut s = self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        (0..self.ranks())
            .map(|_| {
                (0..self.vector_len)
                    .map(|_| {
                        let r = next();
                        let sign = (r >> 63) as u32 * 0x8000_0000;
                        if self.full_range {
                            sign | ((r >> 8) as u32 % 0x7f80_0000)
                        } else {
                            // Gradient-like: sum of four uniforms (about normal), sigma about 1e-3.
                            let u: f32 = (0..4).map(|k| ((r >> (k * 16)) & 0xffff) as f32 / 65536.0 - 0.5).sum();
                            sign ^ (u * 1.7e-3).to_bits()
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The exact expected FP32 result per element. KULISCH_FIXED: the exact
    /// sum rounded once. FP32_ARRIVAL with at most two inputs per node: one
    /// rounded addition per node, which no arrival order can change.
    pub fn expected(&self, v: &[Vec<u32>]) -> Result<Vec<u32>, TreeError> {
        let n = self.ranks() as usize;
        if self.accumulator == AccumulatorPolicy::FP32_ARRIVAL && (self.ranks_per_leaf > 2 || self.leaves > 2) {
            return Err(TreeError::Unverifiable("FP32_ARRIVAL trees are checked exactly only with at most two inputs per node"));
        }
        Ok((0..self.vector_len as usize)
            .map(|pos| {
                if self.accumulator == AccumulatorPolicy::KULISCH_FIXED {
                    let terms: Vec<V> = (0..n).map(|r| oracle::of_f32_bits(v[r][pos])).collect();
                    oracle::round(&oracle::sum(&terms), F32)
                } else {
                    // The CPU's binary32 adder rounds to nearest even, as the policy requires.
                    let leaf = |i: usize| {
                        let rs = i * self.ranks_per_leaf as usize..(i + 1) * self.ranks_per_leaf as usize;
                        rs.map(|r| f32::from_bits(v[r][pos])).fold(None, |a: Option<f32>, x| Some(a.map_or(x, |a| a + x))).unwrap_or(0.0)
                    };
                    let total = (0..self.leaves as usize).map(leaf).fold(None, |a: Option<f32>, x| Some(a.map_or(x, |a| a + x))).unwrap_or(0.0);
                    if total.is_nan() { 0x7fc0_0000 } else { total.to_bits() }
                }
            })
            .collect())
    }

    /// DATA frames of rank `r`: random packetization of 1..=363 values, Packet ID set when queued.
    fn packets(&self, r: u16, v: &[u32]) -> Vec<(u64, u64, Vec<u8>)> {
        let mut s = (self.seed ^ ((r as u64 + 1) * 0x2545_f491_4f6c_dd1d)) | 1;
        let mut out = Vec::new();
        let mut at = 0usize;
        while at < v.len() {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let n = (1 + (s % 363) as usize).min(v.len() - at);
            let bytes: Vec<u8> = v[at..at + n].iter().flat_map(|b| b.to_le_bytes()).collect();
            let g = [GroupRepr { format: prism_arith::NumFormat::Fp32, count: n as u16, values: &bytes }];
            let mut body = vec![0; groups_len(&g)];
            emit_groups(&g, &mut body);
            let d = DataRepr {
                class: Class::DATA,
                identity: self.identity,
                src_ep: 0x1000 + r,
                dst_ep: 0x0100 + r,
                packet_id: 0,
                first_element: at as u32,
                element_count: n as u16,
                group_count: 1,
                flags: if at + n == v.len() { flags::LAST } else { 0 },
                stream_id: r,
                body: &body,
            };
            let p = PrismRepr::Data(d);
            let mut f = vec![0; p.frame_len()];
            p.emit_frame(&EthernetRepr { dst: leaf_mac(self.leaf_of(r)), src: rank_mac(r), ethertype: ETHERTYPE }, &mut f);
            out.push((at as u64, (at + n) as u64, f));
            at += n;
        }
        out
    }
}

/// Why a tree job failed.
#[derive(Debug, Clone, PartialEq)]
pub enum TreeError {
    Io(String),
    NoAnswer { node: String, command: &'static str },
    Refused { node: String, command: &'static str, status: &'static str, detail: u16 },
    Unsupported { node: String },
    /// The job's results could not be checked exactly (nothing was sent).
    Unverifiable(&'static str),
    /// The data phase stopped making progress; every node was sent ABORT.
    Stalled { elapsed: Duration, rollback: Vec<String> },
    /// Setup failed; every node already staged was sent ABORT.
    Setup { cause: Box<TreeError>, staged: Vec<String>, rollback: Vec<String> },
}

impl std::fmt::Display for TreeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TreeError::Io(e) => write!(f, "I/O: {e}"),
            TreeError::NoAnswer { node, command } => write!(f, "{node} did not answer {command} (3 tries)"),
            TreeError::Refused { node, command, status, detail } => write!(f, "{node} refused {command}: {status} (detail {detail})"),
            TreeError::Unsupported { node } => write!(f, "no capability record of {node} covers the tree's whole tuple"),
            TreeError::Unverifiable(why) => f.write_str(why),
            TreeError::Stalled { elapsed, rollback } => {
                write!(f, "no progress for the timeout after {:.3} s; ABORT sent everywhere", elapsed.as_secs_f64())?;
                if rollback.is_empty() { write!(f, ", all rolled back") } else { write!(f, "; not rolled back: {}", rollback.join(", ")) }
            }
            TreeError::Setup { cause, staged, rollback } => {
                write!(f, "setup failed: {cause}")?;
                if !staged.is_empty() {
                    write!(f, "; ABORT sent to {}", staged.join(", "))?;
                }
                if rollback.is_empty() { Ok(()) } else { write!(f, "; not rolled back: {}", rollback.join(", ")) }
            }
        }
    }
}
impl std::error::Error for TreeError {}

/// What a tree job did.
#[derive(Debug, Clone, Default)]
pub struct TreeReport {
    pub elapsed: Duration,
    /// Elements reduced per second (vector length / data phase time).
    pub elements_per_s: f64,
    /// The ranks' streams: DATA sent, retransmitted, acknowledged.
    pub ranks: StreamStats,
    pub result_frames: u64,
    pub result_duplicates: u64,
    pub mismatches: Vec<String>,
    pub missing: u64,
    pub inexact: bool,
    /// What the AM could not roll back or release (empty: clean).
    pub rollback: Vec<String>,
}

impl TreeReport {
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty() && self.missing == 0 && !self.inexact
    }
}

/// The AM's side of the link: requests with retries (same Transaction ID and bytes).
struct Am<'a> {
    link: &'a mut dyn Link,
    job: &'a TreeJob,
    txn: u32,
}

impl Am<'_> {
    /// Sends `frame` up to three times; the ACK (or CAPS_RESPONSE pages) that answers it.
    fn request(&mut self, node: TreeNode, command: Command, body: ControlBody<'_>) -> Result<Vec<Vec<u8>>, TreeError> {
        self.txn += 1;
        let txn = self.txn;
        let frame = self.job.control(node, txn, command, body);
        let name = node.name();
        for _ in 0..3 {
            self.link.send(node.link_port(), &frame).map_err(|e| TreeError::Io(e.to_string()))?;
            let deadline = Instant::now() + Duration::from_millis(300);
            let mut pages: Vec<Vec<u8>> = Vec::new();
            while Instant::now() < deadline {
                let Some(rx) = self.link.recv(Duration::from_millis(20)).map_err(|e| TreeError::Io(e.to_string()))? else { continue };
                let Ok(p) = parse_frame(&rx.frame, &Limits::default()) else { continue };
                let Some(PrismRepr::Control(c)) = p.prism else { continue };
                if p.eth.dst != AM_MAC || p.eth.src != node.mac() || c.txn != txn || c.identity != self.job.identity {
                    continue;
                }
                if c.command == Command::CAPS_RESPONSE {
                    let count = c.frag_count as usize;
                    if !pages.iter().any(|f| f == &rx.frame) {
                        pages.push(rx.frame.clone());
                    }
                    if pages.len() == count {
                        return Ok(pages);
                    }
                    continue;
                }
                if c.status() != AckStatus::OK {
                    let detail = match c.body {
                        ControlBody::Ack { body, .. } => body.detail,
                        _ => 0,
                    };
                    return Err(TreeError::Refused { node: name, command: command.name(), status: c.status().name(), detail });
                }
                return Ok(vec![rx.frame.clone()]);
            }
        }
        Err(TreeError::NoAnswer { node: name, command: command.name() })
    }

    /// ABORT on every node given; what did not roll back.
    fn abort_all(&mut self, nodes: &[TreeNode]) -> Vec<String> {
        let mut failed = Vec::new();
        for &n in nodes {
            if let Err(e) = self.request(n, Command::ABORT, ControlBody::Empty) {
                failed.push(format!("{}: {e}", n.name()));
            }
        }
        failed
    }

    /// CAPS_QUERY everywhere with whole-tuple matching, STAGE everywhere,
    /// COMMIT everywhere; on any failure, ABORT of everything staged.
    fn setup(&mut self) -> Result<(), TreeError> {
        let job = self.job;
        for node in job.nodes() {
            let pages = self.request(node, Command::CAPS_QUERY, ControlBody::Empty)?;
            let role = if node == TreeNode::Root { caps_bits::ROLE_ROOT } else { caps_bits::ROLE_LEAF };
            let (x, b) = job.stage(node);
            let covered = pages.iter().any(|f| {
                let Ok(p) = parse_frame(f, &Limits { mtu: 9000 }) else { return false };
                let Some(PrismRepr::Control(c)) = p.prism else { return false };
                let ControlBody::Caps(recs) = c.body else { return false };
                let found = recs.iter().any(|r| {
                    r.input_format == x.input_format
                        && r.accumulator == x.accumulator
                        && r.partial == x.partial
                        && r.output == x.output
                        && r.roles & role != 0
                        && r.mtus & caps_bits::MTU_1500 != 0
                        && x.vector_len <= r.max_vector
                        && x.terms <= r.max_terms
                        && b.len() as u16 <= r.max_contributors.saturating_add(1)
                        && x.replay_depth <= r.replay_depth
                        && (x.kulisch_width == 0 || (r.kulisch_min..=r.kulisch_max).contains(&x.kulisch_width))
                });
                found
            });
            if !covered {
                return Err(TreeError::Unsupported { node: node.name() });
            }
        }
        let mut staged = Vec::new();
        let fail = |am: &mut Self, staged: &[TreeNode], e: TreeError| {
            let rollback = am.abort_all(staged);
            TreeError::Setup { cause: Box::new(e), staged: staged.iter().map(|n| n.name()).collect(), rollback }
        };
        for node in job.nodes() {
            let (context, bindings) = job.stage(node);
            match self.request(node, Command::STAGE, ControlBody::Stage { context, bindings: Records::Typed(&bindings) }) {
                Ok(_) => staged.push(node),
                // A STAGE that may have been applied without its ACK reaching us is rolled back too.
                Err(e @ TreeError::NoAnswer { .. }) => {
                    staged.push(node);
                    return Err(fail(self, &staged, e));
                }
                Err(e) => return Err(fail(self, &staged, e)),
            }
        }
        for node in job.nodes() {
            if let Err(e) = self.request(node, Command::COMMIT, ControlBody::Empty) {
                return Err(fail(self, &staged, e));
            }
        }
        Ok(())
    }
}

/// One rank of the tree job.
struct Rank {
    r: u16,
    pending: Vec<(u64, u64, Vec<u8>)>,
    replay: Replay,
    results: RxWindow,
    got: Vec<bool>,
    to_leaf: BindingRecord,
    inexact: bool,
}

/// Where a running tree job stands (given to the observer about every 10 ms).
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeProgress {
    pub elapsed: Duration,
    /// DATA frames the leaves acknowledged, over all ranks.
    pub data_acked: u64,
    /// RESULT frames taken, over all receiving ranks.
    pub result_frames: u64,
}

/// Runs a tree job: setup as AM, the ranks' DATA, RESULT verification,
/// COMPLETE and RELEASE everywhere (ABORT everywhere when it stalls).
pub fn run_tree(job: &TreeJob, link: &mut dyn Link) -> Result<TreeReport, TreeError> {
    run_tree_observed(job, link, &mut |_| {})
}

/// `run_tree`, telling `observe` how far it got as it goes.
pub fn run_tree_observed(job: &TreeJob, link: &mut dyn Link, observe: &mut dyn FnMut(&TreeProgress)) -> Result<TreeReport, TreeError> {
    let v = job.vectors();
    let want = job.expected(&v)?;
    let mut am = Am { link, job, txn: job.identity.op_gen.wrapping_mul(1000) };
    am.setup()?;
    let link = &mut *am.link;
    let start = Instant::now();
    let ns = |t: Instant| t.duration_since(start).as_nanos() as u64;
    let mut ranks: Vec<Rank> = (0..job.ranks())
        .map(|r| {
            let mut pending = job.packets(r, &v[r as usize]);
            pending.reverse();
            Rank {
                r,
                pending,
                replay: Replay::new(job.leaf_of(r), job.replay_depth as usize, 1518, job.window_intervals as u32, job.window_bytes(), job.rto.as_nanos() as u64),
                results: RxWindow::new(64),
                got: vec![false; job.vector_len as usize],
                to_leaf: feedback::to_switch(r, leaf_mac(job.leaf_of(r)), job.leaf_of(r)),
                inexact: false,
            }
        })
        .collect();
    let mut report = TreeReport::default();
    let mut impair = job.impair.map(Impairment::new);
    let mut out: Vec<Sent> = Vec::new();
    let flush = |link: &mut dyn Link, out: &mut Vec<Sent>| -> Result<(), TreeError> {
        for s in out.drain(..) {
            link.send(s.port, &s.frame).map_err(|e| TreeError::Io(e.to_string()))?;
        }
        Ok(())
    };
    let fill = |rank: &mut Rank, now: u64, out: &mut Vec<Sent>| {
        while rank.replay.has_room() && !rank.pending.is_empty() {
            let (first, end, f) = rank.pending.pop().unwrap_or_default();
            feedback::queue(&mut rank.replay, now, out, first, end, &f);
        }
    };
    for rank in &mut ranks {
        fill(rank, 0, &mut out);
    }
    flush(link, &mut out)?;
    let mut last_progress = Instant::now();
    let mut held: Option<Vec<u8>> = None;
    let done = |ranks: &[Rank]| ranks.iter().all(|k| k.pending.is_empty() && k.replay.is_idle() && (!job.gets_result(k.r) || k.inexact || k.results.committed() >= job.vector_len as u64));
    let mut last_observed = Instant::now();
    while !done(&ranks) {
        if last_observed.elapsed() >= Duration::from_millis(10) {
            last_observed = Instant::now();
            let data_acked = ranks.iter().map(|k| k.replay.stats.acked).sum();
            observe(&TreeProgress { elapsed: start.elapsed(), data_acked, result_frames: report.result_frames });
        }
        if last_progress.elapsed() > job.timeout {
            let rollback = am_abort(link, job);
            return Err(TreeError::Stalled { elapsed: start.elapsed(), rollback });
        }
        let now = ns(Instant::now());
        for rank in &mut ranks {
            if rank.replay.deadline().is_some_and(|d| d <= now) {
                rank.replay.on_timeout(now, &mut out);
            }
        }
        flush(link, &mut out)?;
        let rx = link.recv(Duration::from_millis(1)).map_err(|e| TreeError::Io(e.to_string()))?;
        let mut frames: Vec<Vec<u8>> = Vec::new();
        match rx {
            Some(rx) => match impair.as_mut().map_or(Verdict::Deliver, |i| i.decide(rx.frame.len())) {
                Verdict::Deliver => {
                    frames.push(rx.frame);
                    frames.extend(held.take());
                }
                Verdict::Drop => {}
                Verdict::Duplicate => frames.extend([rx.frame.clone(), rx.frame]),
                Verdict::Cut(n) => frames.push(rx.frame[..n].to_vec()),
                Verdict::Hold => frames.extend(held.replace(rx.frame)),
            },
            None => frames.extend(held.take()),
        }
        let now = ns(Instant::now());
        for f in frames {
            let Ok(p) = parse_frame(&f, &Limits::default()) else { continue };
            let Some(rank) = ranks.iter_mut().find(|k| rank_mac(k.r) == p.eth.dst) else { continue };
            match p.prism {
                Some(PrismRepr::Progress(pr)) if pr.identity == job.identity && pr.stream_id == rank.r => {
                    let before = rank.replay.stats.acked;
                    rank.replay.on_progress(now, &pr, &mut out);
                    if rank.replay.stats.acked > before {
                        last_progress = Instant::now();
                    }
                    fill(rank, now, &mut out);
                }
                Some(PrismRepr::Data(d)) if d.class == Class::RESULT && d.identity == job.identity && d.stream_id == rank.r => {
                    let status = feedback::take_result(&mut rank.results, &d);
                    if d.is_inexact() {
                        rank.inexact = true;
                        report.inexact = true;
                    } else if status == ProgressStatus::ACCEPTED {
                        report.result_frames += 1;
                        last_progress = Instant::now();
                        let mut pos = d.first_element as usize;
                        for g in d.groups() {
                            for val in g.values.chunks_exact(g.format.value_bytes()) {
                                let got = oracle::decode(g.format, val);
                                let exp = oracle::of_f32_bits(want[pos]);
                                if got != exp && report.mismatches.len() < 16 {
                                    report.mismatches.push(format!("rank {} element {pos}: got {got:?}, want {exp:?}", rank.r));
                                }
                                rank.got[pos] = true;
                                pos += 1;
                            }
                        }
                    } else if status == ProgressStatus::DUPLICATE {
                        report.result_duplicates += 1;
                    }
                    feedback::answer(&mut out, job.identity, rank_mac(rank.r), &rank.to_leaf, &mut rank.results, d.packet_id, status);
                }
                _ => {}
            }
        }
        flush(link, &mut out)?;
    }
    report.elapsed = start.elapsed();
    report.elements_per_s = job.vector_len as f64 / report.elapsed.as_secs_f64().max(1e-9);
    for rank in &ranks {
        report.ranks.add(&rank.replay.stats);
        if job.gets_result(rank.r) && !rank.inexact {
            report.missing += rank.got.iter().filter(|g| !**g).count() as u64;
        }
    }
    // Every node finishes on its own time: COMPLETE is asked until accepted, then RELEASE.
    let mut am = Am { link, job, txn: job.identity.op_gen.wrapping_mul(1000) + 500 };
    for node in job.nodes() {
        let until = Instant::now() + job.timeout;
        loop {
            match am.request(node, Command::COMPLETE, ControlBody::Empty) {
                Ok(_) => break,
                Err(TreeError::Refused { status: "BAD_STATE", .. }) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    report.rollback.push(format!("{} COMPLETE: {e}", node.name()));
                    break;
                }
            }
        }
        if let Err(e) = am.request(node, Command::RELEASE, ControlBody::Empty) {
            report.rollback.push(format!("{} RELEASE: {e}", node.name()));
        }
    }
    Ok(report)
}

/// ABORT on every node of the job; what could not be rolled back.
pub fn am_abort(link: &mut dyn Link, job: &TreeJob) -> Vec<String> {
    let mut am = Am { link, job, txn: job.identity.op_gen.wrapping_mul(1000) + 900 };
    am.abort_all(&job.nodes())
}
