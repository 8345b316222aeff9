//! What to run: the operation, the ranks' vectors and how they are cut into packets.

use prism_arith::NumFormat;
use prism_dataplane::wire::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};
use std::path::{Path, PathBuf};

/// Synthetic inputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pattern {
    /// Normal with this sigma (gradient-like).
    Gradient(f32),
    /// Uniform in [-1, 1).
    Uniform,
    /// Any finite FP32 value.
    FullRange,
    /// Every element this value.
    Constant(f32),
    /// Integers in [-8, 8] (INT8 inputs).
    Integers,
}

/// A `--pattern` or `--packetization` that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("pattern '{text}': {source}")]
    PatternValue { text: String, source: std::num::ParseFloatError },
    #[error("unknown pattern '{0}' (gradient[:sigma], uniform, full-range, constant[:v], integers)")]
    UnknownPattern(String),
    #[error("unknown packetization '{0}' (full, random, multi-group)")]
    UnknownPacketization(String),
}

impl std::str::FromStr for Pattern {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let (name, arg) = s.split_once(':').map_or((s, None), |(a, b)| (a, Some(b)));
        let num = |d: f32| arg.map_or(Ok(d), |a| a.parse::<f32>().map_err(|source| ParseError::PatternValue { text: s.into(), source }));
        Ok(match name {
            "gradient" => Pattern::Gradient(num(1e-3)?),
            "uniform" => Pattern::Uniform,
            "full-range" => Pattern::FullRange,
            "constant" => Pattern::Constant(num(1.0)?),
            "integers" => Pattern::Integers,
            _ => return Err(ParseError::UnknownPattern(s.into())),
        })
    }
}

/// How ranks cut their vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packetization {
    /// As many values as the MTU allows, one group.
    Full,
    /// Random packet boundaries.
    Random,
    /// Random boundaries and several groups a packet.
    MultiGroup,
}

impl std::str::FromStr for Packetization {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        match s {
            "full" => Ok(Packetization::Full),
            "random" => Ok(Packetization::Random),
            "multi-group" => Ok(Packetization::MultiGroup),
            _ => Err(ParseError::UnknownPacketization(s.into())),
        }
    }
}

/// One collective operation and its traffic.
#[derive(Debug, Clone)]
pub struct Job {
    pub ranks: u16,
    pub semantics: Semantics,
    pub dest_rank: u16,
    pub accumulator: AccumulatorPolicy,
    pub output: OutputFormat,
    pub input: NumFormat,
    pub vector_len: u32,
    pub mtu: u16,
    pub pattern: Pattern,
    pub packetization: Packetization,
    pub seed: u64,
    pub identity: Identity,
    /// Frames each stream keeps until PROGRESS acknowledges them; 0: no
    /// PROGRESS and no retransmission (the SINGLE prototype).
    pub replay_depth: u16,
    /// The switch's MAC and, per rank, its port on the switch.
    pub switch_mac: Mac,
    pub rank_ports: Vec<u16>,
    pub am_mac: Mac,
    pub am_port: u16,
    /// Each rank's vector as wire values (from files), instead of `pattern`.
    pub given: Option<Vec<Vec<u8>>>,
    /// Operations the collective is striped over: stripe k is operation
    /// `identity.op + k` over its own element range (`Job::striped`), so a
    /// switch with several polling cores runs the stripes on different cores.
    pub stripes: u16,
}

/// The addresses a job uses unless told otherwise (`prism_dataplane::fixtures`).
pub use prism_dataplane::fixtures::{rank_mac, AM_EP, AM_MAC, SWITCH_EP, SWITCH_MAC};

impl Job {
    /// A job with the usual defaults: FP32 in and out, MTU 1500, gradient-like
    /// data, full packets, one port, destination rank 0, seed 1, generation 1.
    pub fn new(ranks: u16, semantics: Semantics, accumulator: AccumulatorPolicy, vector_len: u32) -> Job {
        Job {
            ranks,
            semantics,
            dest_rank: 0,
            accumulator,
            output: OutputFormat::FP32,
            input: NumFormat::Fp32,
            vector_len,
            mtu: 1500,
            pattern: Pattern::Gradient(1e-3),
            packetization: Packetization::Full,
            seed: 1,
            identity: Identity { job: 1, group: 1, group_gen: 1, op: 1, op_gen: 1 },
            replay_depth: 0,
            switch_mac: SWITCH_MAC,
            rank_ports: vec![0],
            am_mac: AM_MAC,
            am_port: 0,
            given: None,
            stripes: 1,
        }
    }

    /// The collective as its stripes: (first element in the whole vector,
    /// the stripe's own job). Each stripe is an operation of its own
    /// (operation ID `identity.op + k`, elements from 0) over a contiguous
    /// slice of every rank's vector; the cuts fall on whole DATA frames of
    /// full packetization, so striping adds no partial frame but the last.
    pub fn striped(&self, vectors: &[Vec<u8>]) -> Vec<(u32, Job)> {
        let k = self.stripes.max(1) as u32;
        let cap = capacity(self.input, self.mtu) as u32;
        let frames = self.vector_len.div_ceil(cap.max(1));
        let w = self.input.value_bytes();
        let cut = |i: u32| ((frames as u64 * i as u64 / k as u64) as u32 * cap).min(self.vector_len);
        let ranges = (0..k).map(|i| (cut(i), if i + 1 == k { self.vector_len } else { cut(i + 1) }));
        // More stripes than frames: the surplus ones would be empty and are left out.
        ranges
            .filter(|(a, b)| a < b || k == 1)
            .enumerate()
            .map(|(i, (a, b))| {
                let mut j = self.clone();
                j.stripes = 1;
                j.identity.op = self.identity.op.wrapping_add(i as u16);
                j.vector_len = b - a;
                j.given = Some(vectors.iter().map(|v| v[a as usize * w..b as usize * w].to_vec()).collect());
                (a, j)
            })
            .collect()
    }

    /// A CONTROL frame from the job's AM (endpoint `AM_EP`) to the switch (`SWITCH_EP`).
    pub fn control(&self, txn: u32, command: Command, body: ControlBody<'_>) -> Vec<u8> {
        prism_dataplane::fixtures::control_frame(self.identity, self.am_mac, self.switch_mac, txn, command, body)
    }

    /// The switch port rank `r` is behind.
    pub fn rank_port(&self, r: u16) -> u16 {
        self.rank_ports[r as usize % self.rank_ports.len()]
    }

    pub fn kulisch_width(&self) -> u16 {
        prism_dataplane::fixtures::kulisch_width(self.accumulator, self.ranks as u32)
    }

    /// Ranks that receive RESULT.
    pub fn receivers(&self) -> Vec<u16> {
        if self.semantics == Semantics::REDUCE {
            vec![self.dest_rank]
        } else {
            (0..self.ranks).collect()
        }
    }

    /// The bindings the AM installs (one per rank).
    pub fn bindings(&self) -> Vec<BindingRecord> {
        let receivers = self.receivers();
        (0..self.ranks).map(|r| prism_dataplane::fixtures::rank_binding(r, receivers.contains(&r), self.rank_port(r))).collect()
    }

    pub fn window_elements(&self) -> u32 {
        single_window_elements(self.mtu) as u32
    }

    pub fn context(&self) -> ContextRecord {
        let single = prism_dataplane::fixtures::single_context(self.semantics, self.accumulator, self.output, self.ranks, self.dest_rank, self.vector_len, self.mtu);
        ContextRecord { replay_depth: self.replay_depth, ..single }
    }

    /// Each rank's vector as wire values of the input format.
    pub fn vectors(&self) -> Vec<Vec<u8>> {
        if let Some(v) = &self.given {
            return v.clone();
        }
        let mut rng = StdRng::seed_from_u64(self.seed);
        let w = self.input.value_bytes();
        (0..self.ranks)
            .map(|_| {
                let mut v = Vec::with_capacity(self.vector_len as usize * w);
                for _ in 0..self.vector_len {
                    let x: f32 = match self.pattern {
                        Pattern::Gradient(sigma) => Normal::new(0.0, sigma).map(|d| d.sample(&mut rng)).unwrap_or(0.0),
                        Pattern::Uniform => rng.gen_range(-1.0..1.0),
                        Pattern::FullRange => loop {
                            let f = f32::from_bits(rng.gen());
                            if f.is_finite() {
                                break f;
                            }
                        },
                        Pattern::Constant(c) => c,
                        Pattern::Integers => rng.gen_range(-8..=8) as f32,
                    };
                    match self.input {
                        NumFormat::Int8 => v.push(x.clamp(-128.0, 127.0) as i8 as u8),
                        NumFormat::Fp16 => v.extend(half::f16::from_f32(x).to_le_bytes()),
                        NumFormat::Bf16 => v.extend(half::bf16::from_f32(x).to_le_bytes()),
                        _ => v.extend(x.to_le_bytes()),
                    }
                }
                v
            })
            .collect()
    }

    /// Cuts rank `r`'s vector into DATA frames: (first element, end element, frame).
    pub fn packets(&self, r: u16, values: &[u8]) -> Vec<(u64, u64, Vec<u8>)> {
        let mut rng = StdRng::seed_from_u64(self.seed ^ (0x5eed_0000 + r as u64));
        let w = self.input.value_bytes();
        let n = values.len() / w;
        let cap = capacity(self.input, self.mtu);
        let mut out = Vec::new();
        let mut at = 0usize;
        let mut packet_id = 0u32;
        let eth = EthernetRepr { dst: self.switch_mac, src: rank_mac(r), ethertype: ETHERTYPE };
        while at < n {
            let count = match self.packetization {
                Packetization::Full => cap,
                _ => rng.gen_range(1..=cap),
            }
            .min(n - at);
            // Several groups: split the run at random points (each group costs a descriptor).
            let mut cuts = vec![count];
            if self.packetization == Packetization::MultiGroup && count > 8 {
                let k = rng.gen_range(1..4);
                cuts = (0..k).map(|_| rng.gen_range(1..count)).collect();
                cuts.push(count);
                cuts.sort_unstable();
                cuts.dedup();
            }
            let mut groups = Vec::new();
            let mut prev = 0;
            for c in &cuts {
                groups.push(GroupRepr { format: self.input, count: (c - prev) as u16, values: &values[(at + prev) * w..(at + c) * w] });
                prev = *c;
            }
            // Extra descriptors may push the body over the MTU: then fall back to one group.
            if groups_len(&groups) > self.mtu as usize - offsets::data::BODY {
                groups = vec![GroupRepr { format: self.input, count: count as u16, values: &values[at * w..(at + count) * w] }];
            }
            let mut body = vec![0; groups_len(&groups)];
            emit_groups(&groups, &mut body);
            let d = DataRepr {
                class: Class::DATA,
                identity: self.identity,
                src_ep: 0x1000 + r,
                dst_ep: 0x0100 + r,
                packet_id,
                first_element: at as u32,
                element_count: count as u16,
                group_count: groups.len() as u8,
                flags: if at + count == n { flags::LAST } else { 0 },
                stream_id: r,
                body: &body,
            };
            let p = PrismRepr::Data(d);
            let mut f = vec![0; p.frame_len()];
            p.emit_frame(&eth, &mut f);
            out.push((at as u64, (at + count) as u64, f));
            packet_id += 1;
            at += count;
        }
        out
    }
}

/// Why `read_vector` refused a file: unreadable, a `.npy` header it cannot
/// take (content), or a payload that is not whole values (length).
#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: {why}", path.display())]
    Header { path: PathBuf, why: String },
    #[error("{}: {len} bytes is not a whole number of {width}-byte values", path.display())]
    Length { path: PathBuf, len: usize, width: usize },
}

/// Reads one rank's vector: a `.npy` file (dtype `<f4`, `<f2` or `|i1`/`<i1`,
/// one dimension, C order) or raw little-endian values of `format`.
pub fn read_vector(path: &Path, format: NumFormat) -> Result<Vec<u8>, VectorError> {
    let bytes = std::fs::read(path).map_err(|source| VectorError::Read { path: path.into(), source })?;
    let w = format.value_bytes();
    let data = if bytes.starts_with(b"\x93NUMPY") {
        let bad = |why: &str| VectorError::Header { path: path.into(), why: why.into() };
        if bytes.len() < 10 {
            return Err(bad("truncated .npy header"));
        }
        let (hlen, start) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            2 | 3 => {
                if bytes.len() < 12 {
                    return Err(bad("truncated .npy header"));
                }
                (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
            }
            v => return Err(bad(&format!(".npy version {v} is not supported"))),
        };
        let header = std::str::from_utf8(bytes.get(start..start + hlen).ok_or_else(|| bad("truncated .npy header"))?).map_err(|_| bad("header is not text"))?;
        let want = match format {
            NumFormat::Fp32 => vec!["'<f4'"],
            NumFormat::Fp16 => vec!["'<f2'"],
            NumFormat::Int8 => vec!["'|i1'", "'<i1'"],
            _ => return Err(bad("BF16 has no .npy dtype: give raw little-endian values")),
        };
        if !want.iter().any(|d| header.contains(d)) {
            return Err(bad(&format!("dtype must be {} for {format:?} input (header: {header})", want.join(" or "))));
        }
        if header.contains("'fortran_order': True") {
            return Err(bad("Fortran-ordered arrays are not supported"));
        }
        bytes[start + hlen..].to_vec()
    } else {
        bytes
    };
    if data.is_empty() || data.len() % w != 0 {
        return Err(VectorError::Length { path: path.into(), len: data.len(), width: w });
    }
    Ok(data)
}
