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

use crate::am::control::{find_record, Control, Peer, Retry};
use crate::am::ranks::{drive, linger, Drive, Flow, Operation, Rank, Receiver};
use crate::am::{AmError, Session};
use crate::feedback;
use crate::link::Link;
use crate::verify::oracle::{self, F32, V};
use prism_dataplane::engine::stream::StreamStats;
use prism_dataplane::engine::Replay;
use prism_dataplane::switch::impair::ImpairSpec;
use prism_dataplane::wire::*;
use std::time::Duration;

use prism_dataplane::fixtures::{control_frame, leaf_mac, rank_binding, rank_mac, AM_MAC, ROOT_MAC};

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
        prism_dataplane::fixtures::kulisch_width(self.accumulator, self.ranks() as u32)
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
                let mut b: Vec<BindingRecord> = (0..self.ranks()).filter(|&r| self.leaf_of(r) == i).map(|r| rank_binding(r, self.gets_result(r), 0)).collect();
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
        control_frame(self.identity, AM_MAC, node.mac(), txn, command, body)
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
                    if total.is_nan() {
                        0x7fc0_0000
                    } else {
                        total.to_bits()
                    }
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
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TreeError {
    #[error("I/O: {0}")]
    Io(String),
    #[error("{node} did not answer {command} ({} tries)", RETRY.tries)]
    NoAnswer { node: String, command: &'static str },
    #[error("{node} refused {command}: {status} (detail {detail})")]
    Refused { node: String, command: &'static str, status: &'static str, detail: u16 },
    #[error("no capability record of {node} covers the tree's whole tuple")]
    Unsupported { node: String },
    /// The job's results could not be checked exactly (nothing was sent).
    #[error("{0}")]
    Unverifiable(&'static str),
    /// The data phase stopped making progress; every node was sent ABORT.
    #[error("no progress for the timeout after {:.3} s; ABORT sent everywhere{}", elapsed.as_secs_f64(), not_rolled_back(rollback, ", all rolled back"))]
    Stalled { elapsed: Duration, rollback: Vec<String> },
    /// Setup failed; every node already staged was sent ABORT.
    #[error("setup failed: {cause}{}{}", aborted(staged), not_rolled_back(rollback, ""))]
    Setup { cause: Box<TreeError>, staged: Vec<String>, rollback: Vec<String> },
}

fn not_rolled_back(rollback: &[String], clean: &str) -> String {
    if rollback.is_empty() {
        clean.into()
    } else {
        format!("; not rolled back: {}", rollback.join(", "))
    }
}

fn aborted(staged: &[String]) -> String {
    if staged.is_empty() {
        String::new()
    } else {
        format!("; ABORT sent to {}", staged.join(", "))
    }
}

/// The data phase's failures: the link's.
impl From<AmError> for TreeError {
    fn from(e: AmError) -> Self {
        match e {
            AmError::Io(e) => TreeError::Io(e),
            other => TreeError::Io(other.to_string()),
        }
    }
}

impl TreeError {
    /// What the AM's request to `node` came to.
    fn at(node: TreeNode, e: AmError) -> TreeError {
        match e {
            AmError::Io(e) => TreeError::Io(e),
            AmError::NoAnswer { command, .. } => TreeError::NoAnswer { node: node.name(), command },
            AmError::Refused { command, status, detail } => TreeError::Refused { node: node.name(), command, status, detail },
        }
    }
}

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

/// How the tree's CONTROL is retried. A request to the root and its ACK
/// cross three switch ingresses: at 4% loss each (`--impair` drop and
/// corrupt at 2%), three tries all fail for about one job in a hundred, six
/// for one in a million.
const RETRY: Retry = Retry { tries: 6, spacing: Duration::from_millis(300) };

/// The AM of every node of the tree. Each request has a Transaction ID of
/// its own: a COMPLETE asked again after BAD_STATE must not be answered
/// from the node's record of the last one.
struct TreeAm<'j> {
    job: &'j TreeJob,
    control: Control,
    txn: u32,
}

impl<'j> TreeAm<'j> {
    /// Transaction IDs from `op_gen * 1000 + base`, so that setup (0),
    /// completion (500) and an abort from outside (900) never share one.
    fn new(job: &'j TreeJob, base: u32) -> Self {
        TreeAm { job, control: Control { identity: job.identity, am_mac: AM_MAC, retry: RETRY }, txn: job.identity.op_gen.wrapping_mul(1000).wrapping_add(base) }
    }

    /// The ACK (or CAPS_RESPONSE pages) that answers one request to `node`.
    fn request(&mut self, s: &mut Session<'_>, node: TreeNode, command: Command, body: ControlBody<'_>) -> Result<Vec<Vec<u8>>, TreeError> {
        self.txn = self.txn.wrapping_add(1);
        self.control.transact(s, Peer { mac: node.mac(), port: node.link_port() }, self.txn, command, body).map_err(|e| TreeError::at(node, e))
    }

    /// ABORT on every node given; what did not roll back.
    fn abort_all(&mut self, s: &mut Session<'_>, nodes: &[TreeNode]) -> Vec<String> {
        let mut failed = Vec::new();
        for &n in nodes {
            match self.request(s, n, Command::ABORT, ControlBody::Empty) {
                // No operation there (its STAGE never arrived): nothing to roll back.
                Ok(_) | Err(TreeError::Refused { status: "BAD_STATE", .. }) => {}
                Err(e) => failed.push(format!("{}: {e}", n.name())),
            }
        }
        failed
    }

    /// CAPS_QUERY everywhere with whole-tuple matching, STAGE everywhere,
    /// COMMIT everywhere; on any failure, ABORT of everything staged.
    fn setup(&mut self, s: &mut Session<'_>) -> Result<(), TreeError> {
        let job = self.job;
        for node in job.nodes() {
            let pages = self.request(s, node, Command::CAPS_QUERY, ControlBody::Empty)?;
            let (x, b) = job.stage(node);
            // Every stream of the tree has PROGRESS: the node must keep the replay asked for.
            let fits = |r: &CapabilityRecord| r.covers(&x) && x.window_elements <= r.window_elements && b.len() as u16 <= r.max_contributors.saturating_add(1) && x.replay_depth <= r.replay_depth;
            if find_record(&pages, fits).is_none() {
                return Err(TreeError::Unsupported { node: node.name() });
            }
        }
        let mut staged = Vec::new();
        let fail = |am: &mut Self, s: &mut Session<'_>, staged: &[TreeNode], e: TreeError| {
            let rollback = am.abort_all(s, staged);
            TreeError::Setup { cause: Box::new(e), staged: staged.iter().map(|n| n.name()).collect(), rollback }
        };
        for node in job.nodes() {
            let (context, bindings) = job.stage(node);
            match self.request(s, node, Command::STAGE, ControlBody::Stage { context, bindings: Records::Typed(&bindings) }) {
                Ok(_) => staged.push(node),
                // A STAGE that may have been applied without its ACK reaching us is rolled back too.
                Err(e @ TreeError::NoAnswer { .. }) => {
                    staged.push(node);
                    return Err(fail(self, s, &staged, e));
                }
                Err(e) => return Err(fail(self, s, &staged, e)),
            }
        }
        for node in job.nodes() {
            if let Err(e) = self.request(s, node, Command::COMMIT, ControlBody::Empty) {
                return Err(fail(self, s, &staged, e));
            }
        }
        Ok(())
    }

    /// Every node finishes on its own time: COMPLETE is asked of each until
    /// accepted (or the timeout), and only then RELEASE of each. A node
    /// released early no longer acknowledges a copy of a frame whose
    /// PROGRESS was lost (the root, a leaf's partial; a leaf, the root's
    /// RESULT), and its neighbour could never complete. What failed, per node.
    fn finish(&mut self, s: &mut Session<'_>, ops: &mut [Operation]) -> Result<Vec<String>, TreeError> {
        let mut failed = Vec::new();
        for node in self.job.nodes() {
            let until = s.now() + self.job.timeout;
            loop {
                match self.request(s, node, Command::COMPLETE, ControlBody::Empty) {
                    Ok(_) => break,
                    Err(TreeError::Refused { status: "BAD_STATE", .. }) if s.now() < until => linger(s, ops, Duration::from_millis(20), &Limits::default()).map_err(|e| TreeError::at(node, e))?,
                    Err(e) => {
                        failed.push(format!("{} COMPLETE: {e}", node.name()));
                        break;
                    }
                }
            }
        }
        for node in self.job.nodes() {
            if let Err(e) = self.request(s, node, Command::RELEASE, ControlBody::Empty) {
                failed.push(format!("{} RELEASE: {e}", node.name()));
            }
        }
        Ok(failed)
    }
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

/// `run_tree`, telling `observe` how far it got as it goes (about every 10 ms).
pub fn run_tree_observed(job: &TreeJob, link: &mut dyn Link, observe: &mut dyn FnMut(&TreeProgress)) -> Result<TreeReport, TreeError> {
    let v = job.vectors();
    let want = job.expected(&v)?;
    let mut s = Session::new(link, false);
    TreeAm::new(job, 0).setup(&mut s)?;
    let ranks = (0..job.ranks())
        .map(|r| {
            let leaf = job.leaf_of(r);
            let stream = Replay::new(leaf, job.replay_depth as usize, 1518, job.window_intervals as u32, job.window_bytes(), job.rto.as_nanos() as u64);
            let receiver = job.gets_result(r).then(|| Receiver::new(job.vector_len, feedback::to_switch(r, leaf_mac(leaf), leaf)));
            Rank::new(r, leaf, job.packets(r, &v[r as usize]), stream, receiver)
        })
        .collect();
    let mut ops = [Operation { identity: job.identity, flow: Flow::Feedback, ranks }];
    let mut tell = |st: &crate::am::ranks::Status| observe(&TreeProgress { elapsed: st.elapsed, data_acked: st.data_acked, result_frames: st.result_frames });
    let how = Drive { rate_pps: None, timeout: job.timeout, limits: Limits::default(), impair: job.impair, observe_every: Duration::from_millis(10), observe: &mut tell };
    let outcome = drive(&mut s, &mut ops, how).map_err(TreeError::from)?;
    let op = &ops[0];
    let elapsed = outcome.end.saturating_duration_since(outcome.data_start);
    if outcome.timed_out {
        let rollback = TreeAm::new(job, 900).abort_all(&mut s, &job.nodes());
        return Err(TreeError::Stalled { elapsed, rollback });
    }
    let mut report = TreeReport { elapsed, elements_per_s: job.vector_len as f64 / elapsed.as_secs_f64().max(1e-9), ..TreeReport::default() };
    for rank in &op.ranks {
        report.ranks.add(&rank.stream.stats);
        let Some(x) = &rank.receiver else { continue };
        report.result_frames += x.results.len() as u64;
        report.result_duplicates += x.duplicates;
        report.inexact |= x.reassembly.inexact;
        if !x.reassembly.inexact {
            report.missing += x.reassembly.received.iter().filter(|&&c| c == 0).count() as u64;
        }
        for frame in x.results.iter() {
            let Ok(ParsedFrame { prism: Some(PrismRepr::Data(d)), .. }) = parse_frame(frame, &Limits::default()) else { continue };
            let mut pos = d.first_element as usize;
            for g in d.groups() {
                for val in g.values.chunks_exact(g.format.value_bytes()) {
                    let got = oracle::decode(g.format, val);
                    let exp = oracle::of_f32_bits(want[pos]);
                    if got != exp && report.mismatches.len() < 16 {
                        report.mismatches.push(format!("rank {} element {pos}: got {got:?}, want {exp:?}", rank.id));
                    }
                    pos += 1;
                }
            }
        }
    }
    report.rollback = TreeAm::new(job, 500).finish(&mut s, &mut ops)?;
    Ok(report)
}

/// ABORT on every node of the job; what could not be rolled back.
pub fn am_abort(link: &mut dyn Link, job: &TreeJob) -> Vec<String> {
    let mut s = Session::new(link, false);
    TreeAm::new(job, 900).abort_all(&mut s, &job.nodes())
}
