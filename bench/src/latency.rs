//! Software vs hardware switch on the same scenario (issue 7).
//!
//! A scenario (configs/bench/*.toml) becomes one pktgen job: the same seed
//! gives the same DATA frames for both switches (recorded once as
//! `scenario.pcap`). pktgen runs it as Aggregation Manager and ranks against
//! (a) prism-switch over DPDK's net_af_packet on a veth pair (or the
//! in-process engine with `--software sim`) and (b) the RTL switch under
//! Verilator, verifying every RESULT exactly. Latency per RESULT frame is
//! from the send of the last DATA frame covering its range to the RESULT's
//! arrival: wall time (TSC-backed `Instant`) for software, simulated cycles
//! times the clock period for hardware.

use hdrhistogram::Histogram;
use prism_dataplane::wire::*;
use prism_pktgen::link::Link;
use prism_pktgen::process::{switch_command, Spawned};
use prism_pktgen::{AfPacketLink, Job, Packetization, Pattern, RunOptions, SimLink};
use prism_rtl::RtlLink;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// One benchmark scenario, as written in configs/bench/*.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub ranks: u16,
    /// "reduce" or "allreduce".
    pub semantics: String,
    /// "fp32-arrival" or "kulisch".
    #[serde(default = "default_policy")]
    pub policy: String,
    /// "fp32" (the hardware's only input today), "fp16", "bf16", "int8".
    #[serde(default = "default_fp32")]
    pub input: String,
    #[serde(default = "default_fp32")]
    pub output: String,
    #[serde(default = "default_mtu")]
    pub mtu: u16,
    pub vector_len: u32,
    /// Operations run one after the other (each a new generation).
    #[serde(default = "default_one")]
    pub operations: u32,
    /// DATA packets per second over all ranks; absent: as fast as the window allows.
    pub rate_pps: Option<f64>,
    #[serde(default)]
    pub seed: u64,
    /// "full", "random" or "multi-group".
    #[serde(default = "default_packetization")]
    pub packetization: String,
    /// pktgen pattern: "gradient[:sigma]", "uniform", "full-range", "integers".
    #[serde(default = "default_pattern")]
    pub pattern: String,
    /// Hardware clock for cycles-to-time (a 100 GbE MAC clock by default).
    #[serde(default = "default_clock")]
    pub clock_mhz: f64,
}

fn default_policy() -> String {
    "fp32-arrival".into()
}
fn default_fp32() -> String {
    "fp32".into()
}
fn default_mtu() -> u16 {
    1500
}
fn default_one() -> u32 {
    1
}
fn default_packetization() -> String {
    "full".into()
}
fn default_pattern() -> String {
    "gradient".into()
}
fn default_clock() -> f64 {
    prism_rtl::DEFAULT_CLOCK_MHZ
}

use crate::BenchError;
use prism_dataplane::fixtures::{SwitchToml, SWITCH_EP};

/// Why a scenario file is not one: unreadable or not TOML (the file), or a
/// field's value the bench does not know (its content).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Toml { path: PathBuf, source: toml::de::Error },
    #[error("{field} '{value}' ({allowed})")]
    Value { field: &'static str, value: String, allowed: &'static str },
    #[error("mtu {0} (576, 1500, 9000)")]
    Mtu(u16),
    #[error(transparent)]
    Parse(#[from] prism_pktgen::job::ParseError),
    #[error("ranks, vector_len and operations must be at least 1")]
    Zero,
    /// What is wrong with the file at `path`.
    #[error("{}: {source}", path.display())]
    In { path: PathBuf, source: Box<ScenarioError> },
}

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read { path: path.into(), source })?;
        let s: Scenario = toml::from_str(&text).map_err(|source| ScenarioError::Toml { path: path.into(), source })?;
        let zero = s.operations == 0 || s.vector_len == 0 || s.ranks == 0;
        match s.job() {
            Err(e) => Err(e),
            Ok(_) if zero => Err(ScenarioError::Zero),
            Ok(_) => Ok(s),
        }
        .map_err(|e| ScenarioError::In { path: path.into(), source: Box::new(e) })
    }

    /// The pktgen job of the first operation.
    pub fn job(&self) -> Result<Job, ScenarioError> {
        let bad = |field, value: &str, allowed| ScenarioError::Value { field, value: value.into(), allowed };
        let semantics = match self.semantics.as_str() {
            "reduce" => Semantics::REDUCE,
            "allreduce" => Semantics::ALLREDUCE,
            s => return Err(bad("semantics", s, "reduce, allreduce")),
        };
        let accumulator = match self.policy.as_str() {
            "fp32-arrival" => AccumulatorPolicy::FP32_ARRIVAL,
            "kulisch" => AccumulatorPolicy::KULISCH_FIXED,
            s => return Err(bad("policy", s, "fp32-arrival, kulisch")),
        };
        let input = match self.input.as_str() {
            "fp32" => prism_arith::NumFormat::Fp32,
            "fp16" => prism_arith::NumFormat::Fp16,
            "bf16" => prism_arith::NumFormat::Bf16,
            "int8" => prism_arith::NumFormat::Int8,
            s => return Err(bad("input", s, "fp32, fp16, bf16, int8")),
        };
        let output = match self.output.as_str() {
            "fp32" => OutputFormat::FP32,
            "fp16" => OutputFormat::FP16,
            "bf16" => OutputFormat::BF16,
            "int8" => OutputFormat::INT8,
            "auto" => OutputFormat::AUTO,
            "kulisch" => OutputFormat::KULISCH,
            s => return Err(bad("output", s, "fp32, fp16, bf16, int8, auto, kulisch")),
        };
        if ![576, 1500, 9000].contains(&self.mtu) {
            return Err(ScenarioError::Mtu(self.mtu));
        }
        let pattern: Pattern = self.pattern.parse()?;
        let packetization: Packetization = self.packetization.parse()?;
        let mut job = Job { output, input, mtu: self.mtu, pattern, packetization, seed: self.seed, ..Job::new(self.ranks, semantics, accumulator, self.vector_len) };
        job.identity.job = 0x5052_4953_4d42_0001;
        Ok(job)
    }
}

/// What one switch did over all operations of a scenario.
pub struct Side {
    pub name: &'static str,
    /// What the latency is and which clock measured it.
    pub clock: String,
    pub target: String,
    /// Per RESULT frame, in ns.
    pub latency: Histogram<u64>,
    /// Per operation, first DATA in to last RESULT out, in ns.
    pub operation: Histogram<u64>,
    pub results: u64,
    pub frames_sent: u64,
    pub operations_passed: u32,
    pub failures: Vec<String>,
    pub elements: u64,
    /// Sum of operation times, ns.
    pub busy_ns: u64,
    /// The switch's own residence time per RESULT frame (ns), where the
    /// switch measures it: from the receive burst of the completing DATA
    /// to the transmit burst of the RESULT.
    pub residence: Option<Histogram<u64>>,
    /// Where the software residence time goes, one sample per DATA frame
    /// that queued RESULTs (ns): from its receive burst to the engine taking
    /// it, and the engine's work on it.
    pub residence_parts: Option<[Histogram<u64>; 2]>,
    /// The same in clock cycles, where the switch counts cycles (the RTL:
    /// from the completing DATA's last beat in to the RESULT's first beat out).
    pub residence_cycles: Option<Histogram<u64>>,
    /// The residence time in cycles of each range's first RESULT frame
    /// (the RTL; the later paths' copies also wait for the ones before them).
    pub first_residence_cycles: Option<Histogram<u64>>,
    /// DATA frames of the operations run (each rank's packets, once).
    pub data_frames: u64,
    /// The same case through the switch core in this process (memif runs):
    /// the benchmark's cycles per DATA packet and rate of one core, next to
    /// the real binaries' rate; or why it was not measured.
    pub in_process: Option<Result<InProcess, String>>,
    /// The interruptions of the switch's polling core, measured on it just
    /// before the switch started (memif runs).
    pub noise: Option<crate::noise::Noise>,
    /// What pktgen's and the switch's busy threads lost to other tasks on
    /// their CPUs over the operations, and which tasks ran (memif runs).
    pub run_queue: Option<crate::runqueue::RunQueue>,
}

/// `prism-bench switch`'s in-process figure for a scenario's case.
#[derive(Debug, Clone)]
pub struct InProcess {
    pub cycles_per_packet: f64,
    pub data_pps: f64,
    /// The switch core's share of the residence time (cycles), one sample
    /// per DATA frame that completes a range (`residence_in_process`).
    pub residence_cycles: Histogram<u64>,
    pub tsc_hz: u64,
}

impl InProcess {
    /// A quantile of the in-process residence time, in ns.
    pub fn residence_ns(&self, q: f64) -> f64 {
        self.residence_cycles.value_at_quantile(q) as f64 * 1e9 / self.tsc_hz.max(1) as f64
    }
}

impl Side {
    fn new(name: &'static str, clock: String, target: String) -> Side {
        Side {
            name,
            clock,
            target,
            latency: crate::histogram(600_000_000_000),
            operation: crate::histogram(600_000_000_000),
            results: 0,
            frames_sent: 0,
            operations_passed: 0,
            failures: Vec::new(),
            elements: 0,
            busy_ns: 0,
            residence: None,
            residence_parts: None,
            residence_cycles: None,
            first_residence_cycles: None,
            data_frames: 0,
            in_process: None,
            noise: None,
            run_queue: None,
        }
    }

    pub fn passed(&self, operations: u32) -> bool {
        self.failures.is_empty() && self.operations_passed == operations
    }

    /// Elements reduced per second of operation time.
    pub fn elements_per_s(&self) -> f64 {
        if self.busy_ns == 0 {
            0.0
        } else {
            self.elements as f64 * 1e9 / self.busy_ns as f64
        }
    }

    /// DATA frames per second of operation time: the rate the switch sustained.
    pub fn data_pps(&self) -> f64 {
        if self.busy_ns == 0 {
            0.0
        } else {
            self.data_frames as f64 * 1e9 / self.busy_ns as f64
        }
    }
}

/// Runs every operation of the scenario through one link.
fn run_side(sc: &Scenario, side: &mut Side, link: &mut dyn Link, first_gen: u32, progress: bool) {
    let base = match sc.job() {
        Ok(j) => j,
        Err(e) => {
            side.failures.push(e.to_string());
            return;
        }
    };
    let opts = RunOptions { rate_pps: sc.rate_pps, timeout: Duration::from_secs(10), capture: false, progress: false };
    let vectors = base.vectors();
    let data_per_op: u64 = (0..base.ranks).map(|r| base.packets(r, &vectors[r as usize]).len() as u64).sum();
    for op in 0..sc.operations {
        let mut job = base.clone();
        job.identity.op_gen = first_gen + op;
        if progress {
            eprint!("\r  {:<8} operation {}/{}   ", side.name, op + 1, sc.operations);
        }
        match prism_pktgen::run(&job, link, &opts) {
            Ok(report) => {
                side.frames_sent += report.frames_sent;
                side.results += report.latency.len();
                let _ = side.latency.add(&report.latency);
                let ns = report.operation.as_nanos().max(1) as u64;
                let _ = side.operation.record(ns);
                side.busy_ns += ns;
                side.elements += sc.vector_len as u64;
                side.data_frames += data_per_op;
                if report.passed() {
                    side.operations_passed += 1;
                } else {
                    side.failures.push(format!(
                        "operation {}: {} mismatches, {} elements missing{}",
                        op + 1,
                        report.mismatches().len(),
                        report.missing(),
                        if report.timed_out { ", timed out" } else { "" }
                    ));
                }
            }
            Err(e) => side.failures.push(format!("operation {}: {e}", op + 1)),
        }
    }
    if progress {
        eprintln!("\r  {:<8} {} operations, {} RESULT frames{}", side.name, sc.operations, side.results, if side.failures.is_empty() { ", all exact" } else { ", FAILED" });
    }
}

/// Where the software switch runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Software {
    /// prism-switch (DPDK) and this process (the ranks, DPDK too) joined by
    /// net_memif shared memory, each on its own core: no kernel on the path.
    Memif,
    /// prism-switch (DPDK, net_af_packet) on a veth pair; needs root.
    Veth,
    /// The same engine in-process (no DPDK, no kernel path).
    Sim,
    /// A switch already running behind this Linux interface (prism-switch on
    /// a real NIC, cabled or looped to this port); its MAC must be SWITCH_MAC
    /// and its AM port 0.
    Interface(String),
}

impl std::str::FromStr for Software {
    type Err = BenchError;
    fn from_str(s: &str) -> Result<Self, BenchError> {
        match s {
            "memif" => Ok(Software::Memif),
            "veth" => Ok(Software::Veth),
            "sim" => Ok(Software::Sim),
            _ => match s.strip_prefix("afpacket:") {
                Some(i) if !i.is_empty() => Ok(Software::Interface(i.to_string())),
                _ => Err(BenchError::Usage(format!("software '{s}' (memif, veth, sim, afpacket:IFACE)"))),
            },
        }
    }
}

/// prism-switch on a fresh veth pair, stopped and torn down on drop.
struct VethSwitch {
    child: Option<Spawned>,
    ours: String,
    stats: PathBuf,
}

impl VethSwitch {
    fn start(binary: &Path, tag: &str) -> Result<(VethSwitch, String), BenchError> {
        let (ours, theirs) = (format!("{tag}s"), format!("{tag}p"));
        let _ = Command::new("ip").args(["link", "del", &ours]).stderr(Stdio::null()).status();
        let ip = |args: &[&str]| -> Result<(), BenchError> {
            let st = Command::new("ip").args(args).status().map_err(BenchError::NoIp)?;
            if st.success() {
                Ok(())
            } else {
                Err(BenchError::Ip(args.join(" ")))
            }
        };
        ip(&["link", "add", &ours, "type", "veth", "peer", "name", &theirs])?;
        for n in [&ours, &theirs] {
            let _ = Command::new("sysctl").args(["-qw", &format!("net.ipv6.conf.{n}.disable_ipv6=1")]).status();
            ip(&["link", "set", n, "up"])?;
        }
        let dir = std::env::temp_dir();
        let cfg = dir.join(format!("prism-bench-{tag}.toml"));
        let stats = dir.join(format!("prism-bench-{tag}.json"));
        let ready = dir.join(format!("prism-bench-{tag}.ready"));
        std::fs::write(&cfg, SwitchToml::new(&["net_af_packet0"]).mtu(9000).to_string()).map_err(BenchError::file(&cfg))?;
        let mut cmd = switch_command(binary, &format!("prism-bench-{tag}"), "0", &[format!("net_af_packet0,iface={ours}")], &cfg, &stats, &ready);
        let mut child = Spawned::spawn(&mut cmd, "prism-switch", &dir.join(format!("prism-bench-{tag}.log"))).map_err(|source| BenchError::Spawn { binary: binary.into(), source })?;
        let sw = match child.wait_ready(&ready, Duration::from_secs(30)) {
            Ok(_) => VethSwitch { child: Some(child), ours, stats },
            Err(e) => {
                let _ = Command::new("ip").args(["link", "del", &ours]).stderr(Stdio::null()).status();
                return Err(e.into());
            }
        };
        Ok((sw, theirs))
    }
}

impl Drop for VethSwitch {
    fn drop(&mut self) {
        if let Some(c) = self.child.take() {
            if let Err(e) = c.stop(Duration::from_secs(10)) {
                eprintln!("prism-bench: {e}");
            }
        }
        let _ = Command::new("ip").args(["link", "del", &self.ours]).status();
        let _ = std::fs::remove_file(&self.stats);
    }
}

/// prism-switch on one net_memif port (the server, pinned to CPU 0) and
/// this process's DPDK link to it (the client, EAL on CPU 1). Kept for the
/// whole process: EAL starts once per process. The switch dies with the
/// process (see `spawn_from_lasting_thread`).
struct MemifRig {
    switch: Spawned,
    link: prism_pktgen::dpdk::DpdkLink,
    hlog: PathBuf,
    noise: crate::noise::Noise,
}

static MEMIF: std::sync::Mutex<Option<MemifRig>> = std::sync::Mutex::new(None);

/// `Spawned::spawn` from a thread that lives as long as this process. A
/// child's parent-death signal (SIGKILL) fires when the thread that forked
/// it exits, and the memif rig outlives the thread that first needs it (a
/// test of several, a report's worker): spawned there, the switch was killed
/// when that test ended, under the next test using the rig ("the memif
/// switch has exited", its log ending at "ready"). The thread parks for
/// good, so the switch still dies with the process, however it ends.
fn spawn_from_lasting_thread(mut cmd: Command, name: &'static str, log: PathBuf) -> Result<Spawned, prism_pktgen::process::ProcessError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawner = std::thread::Builder::new().name("memif-switch-parent".into()).spawn(move || {
        let _ = tx.send(Spawned::spawn(&mut cmd, name, &log));
        loop {
            std::thread::park();
        }
    });
    let lost = |error| prism_pktgen::process::ProcessError::Spawn { name: name.to_string(), error };
    spawner.map_err(lost)?;
    rx.recv().map_err(|_| lost(std::io::Error::other("the spawning thread ended without an answer")))?
}

/// The rig lives as long as its process (a static, never dropped), so its
/// directory outlives it: each new rig removes those of processes that are gone.
fn remove_stale_rig_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("prism-bench-memif-")).and_then(|p| p.parse::<u32>().ok()) else { continue };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The memif rig's CPUs (switch, pktgen), if not 0 and 1.
static MEMIF_CPUS: std::sync::OnceLock<(usize, usize)> = std::sync::OnceLock::new();

/// Puts the memif rig's switch and pktgen on these CPUs (before its first run).
pub fn set_memif_cpus(switch: usize, pktgen: usize) -> Result<(), BenchError> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if switch == pktgen || switch >= n || pktgen >= n {
        return Err(BenchError::Run(format!("--memif-cpus {switch},{pktgen}: two different CPUs below {n} are needed")));
    }
    let want = (switch, pktgen);
    if *MEMIF_CPUS.get_or_init(|| want) != want {
        return Err(BenchError::Run("the memif rig's CPUs are already set".into()));
    }
    Ok(())
}

impl MemifRig {
    fn start(binary: &Path) -> Result<MemifRig, BenchError> {
        let pid = std::process::id();
        remove_stale_rig_dirs();
        let dir = std::env::temp_dir().join(format!("prism-bench-memif-{pid}"));
        std::fs::create_dir_all(&dir).map_err(BenchError::file(&dir))?;
        let sock = dir.join("memif.sock");
        let _ = std::fs::remove_file(&sock);
        let (cfg, ready, hlog, stats) = (dir.join("switch.toml"), dir.join("switch.ready"), dir.join("residence.hlog"), dir.join("switch.json"));
        std::fs::write(&cfg, SwitchToml::new(&["net_memif0"]).mtu(9000).to_string()).map_err(BenchError::file(&cfg))?;
        let vdev = |role: &str| format!("net_memif0,role={role},id=0,socket={}", sock.display());
        // The switch's core before the switch takes it: what the machine takes from any poller there.
        let (sw_cpu, pg_cpu) = *MEMIF_CPUS.get_or_init(|| (0, 1));
        let noise = crate::noise::probe(sw_cpu, Duration::from_secs(1));
        let mut cmd = switch_command(binary, &format!("prism-bench-sw{pid}"), &sw_cpu.to_string(), &[vdev("server")], &cfg, &stats, &ready);
        cmd.args(["--cpus", &sw_cpu.to_string(), "--tx-flush", "result", "--residence-hlog"]).arg(&hlog);
        let mut switch = spawn_from_lasting_thread(cmd, "prism-switch (memif)", dir.join("switch.log")).map_err(|source| BenchError::Spawn { binary: binary.into(), source })?;
        switch.wait_ready(&ready, Duration::from_secs(30))?;
        let eal: Vec<String> = ["prism-bench", "--no-huge", "--no-pci", "-l", &pg_cpu.to_string(), "-m", "256", "--log-level", "lib.eal:error"]
            .iter()
            .map(|s| s.to_string())
            .chain([format!("--file-prefix=prism-bench-pg{pid}"), format!("--vdev={}", vdev("client"))])
            .collect();
        let link = prism_pktgen::dpdk::DpdkLink::open_waiting(&eal, &["net_memif0".to_string()], 9000, 1, Duration::from_secs(20))?;
        Ok(MemifRig { switch, link, hlog, noise })
    }

    /// The switch's residence histograms so far (the residence time, the
    /// wait before the engine, the engine's work): SIGUSR1 makes it write
    /// the log (exact as of the signal), read back here.
    fn residence(&mut self) -> Result<[Histogram<u64>; 3], BenchError> {
        if !self.switch.running() {
            return Err(BenchError::Run(format!("the memif switch has exited; its log ends:\n{}", self.switch.log_tail(20))));
        }
        let _ = std::fs::remove_file(&self.hlog);
        self.switch.signal(libc::SIGUSR1);
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            use prism_dataplane::switch::residence::{read_hlog_tagged, TAG_BEFORE_ENGINE, TAG_ENGINE, TAG_RESIDENCE};
            let read = |tag| read_hlog_tagged(&self.hlog, Some(tag));
            if let (Ok(r), Ok(b), Ok(e)) = (read(TAG_RESIDENCE), read(TAG_BEFORE_ENGINE), read(TAG_ENGINE)) {
                return Ok([r, b, e]);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Err(BenchError::Run(format!("prism-switch wrote no residence histogram within 10 s of SIGUSR1 ({})", self.hlog.display())))
    }
}

/// prism-switch next to this binary (target/<profile>/), or on PATH.
pub fn switch_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    for dir in exe.ancestors().skip(1).take(2) {
        let p = dir.join("prism-switch");
        if p.exists() {
            return p;
        }
    }
    PathBuf::from("prism-switch")
}

/// Both sides of one scenario.
pub struct Outcome {
    pub scenario: Scenario,
    pub software: Side,
    pub hardware: Side,
    pub software_mode: Software,
}

/// Runs a scenario on both switches.
pub fn run(sc: &Scenario, software: Software, progress: bool) -> Result<Outcome, BenchError> {
    let sw = run_software(sc, &software, progress)?;
    let hw = run_hardware(sc, progress)?;
    Ok(Outcome { scenario: sc.clone(), software: sw, hardware: hw, software_mode: software })
}

/// Generations grow across runs: a long-lived prism-switch keeps retired
/// ones, so every run reserves its own, above every earlier one in this
/// process (and above the clock's seconds, for earlier processes).
fn reserve_generations(n: u32) -> u32 {
    use std::sync::atomic::Ordering;
    let base = (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(1) as u32) & 0x0FFF_FFFF;
    let mut cur = NEXT_GEN.load(Ordering::Relaxed);
    loop {
        let start = cur.max(base);
        match NEXT_GEN.compare_exchange_weak(cur, start + n, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return start,
            Err(now) => cur = now,
        }
    }
}

static NEXT_GEN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Runs a scenario on the software switch only.
pub fn run_software(sc: &Scenario, software: &Software, progress: bool) -> Result<Side, BenchError> {
    let mut sw = match software {
        Software::Memif => Side::new(
            "software",
            "wall time (Instant, TSC-backed) in this process, the ranks' side of net_memif; the switch's residence time by its own TSC".into(),
            "prism-switch (DPDK 22.11, net_memif server, one polling core) and the ranks (DPDK, net_memif client) on the other core".into(),
        ),
        Software::Veth => Side::new(
            "software",
            "wall time (Instant, TSC-backed); includes AF_PACKET and the veth pair on both sides".into(),
            "prism-switch (DPDK 22.11, net_af_packet) on a veth pair, one polling core".into(),
        ),
        Software::Sim => Side::new("software", "wall time (Instant, TSC-backed); the engine's processing only".into(), "the prism-switch engine in-process (no DPDK, no kernel path)".into()),
        Software::Interface(i) => {
            Side::new("software", format!("wall time (Instant, TSC-backed) at this host; includes AF_PACKET on {i}, the NIC and the link"), format!("the switch behind interface {i}"))
        }
    };
    match software {
        Software::Memif => {
            let mut rig = MEMIF.lock().unwrap_or_else(|e| e.into_inner());
            if rig.is_none() {
                *rig = Some(MemifRig::start(&switch_binary())?);
            }
            let r = rig.as_mut().ok_or(BenchError::Run("no memif rig".into()))?;
            // Reserved under the rig's lock: runs reach the one switch in generation order.
            let first_gen = reserve_generations(sc.operations);
            let before = r.residence()?;
            // The busy threads' run-queue wait and who else ran, over the
            // operations (the poller's and the others' from the two /proc
            // walks bracketing them, a few ms each).
            let switch_pid = r.switch.pid();
            let snap0 = crate::runqueue::Snapshot::take();
            let (pg0, t0) = (crate::runqueue::SchedStat::this_thread(), std::time::Instant::now());
            run_side(sc, &mut sw, &mut r.link, first_gen, progress);
            let (seconds, pg1) = (t0.elapsed().as_secs_f64(), crate::runqueue::SchedStat::this_thread());
            let snap1 = crate::runqueue::Snapshot::take();
            let poller = switch_pid.and_then(|p| Some((p, snap1.busiest_since(&snap0, p)?)));
            let measured: Vec<(u32, u32)> = [Some((std::process::id(), crate::runqueue::SchedStat::this_tid())), poller].into_iter().flatten().collect();
            sw.run_queue = Some(crate::runqueue::RunQueue {
                seconds,
                pktgen: pg1.zip(pg0).map(|(a, b)| a.since(&b)),
                switch_poller: poller.and_then(|(p, t)| Some(snap1.thread(p, t)?.since(&snap0.thread(p, t)?))),
                others: snap1.others_since(&snap0, &measured, 3),
            });
            let [mut res, mut wait, mut engine] = r.residence()?;
            for (h, b) in [(&mut res, &before[0]), (&mut wait, &before[1]), (&mut engine, &before[2])] {
                h.subtract(b).map_err(|e| BenchError::Histogram { what: "residence histogram", detail: format!("{e:?}") })?;
            }
            sw.residence = Some(res);
            sw.residence_parts = Some([wait, engine]);
            sw.in_process = Some(in_process(sc, &r.link));
            sw.noise = Some(r.noise.clone());
        }
        Software::Interface(iface) => {
            let mut link = AfPacketLink::open(std::slice::from_ref(iface)).map_err(|source| BenchError::Interface { iface: iface.clone(), source })?;
            run_side(sc, &mut sw, &mut link, reserve_generations(sc.operations), progress);
        }
        Software::Veth => {
            let tag = format!("pb{}", std::process::id() % 10000);
            let (_switch, iface) = VethSwitch::start(&switch_binary(), &tag)?;
            let mut link = AfPacketLink::open(std::slice::from_ref(&iface)).map_err(|source| BenchError::Interface { iface: iface.clone(), source })?;
            run_side(sc, &mut sw, &mut link, reserve_generations(sc.operations), progress);
        }
        Software::Sim => {
            let cfg = prism_dataplane::switch::config::SwitchConfig::parse(&SwitchToml::new(&["sim0"]).mtu(9000).to_string())?;
            let mut link = SimLink::new(&cfg);
            run_side(sc, &mut sw, &mut link, reserve_generations(sc.operations), progress);
        }
    }
    Ok(sw)
}

/// The scenario's case through the switch core in this process, as
/// `prism-bench switch` measures it (0.3 s), with the memif rig's EAL and
/// mempool. That benchmark's frames are FP32 in and out at MTU 1500 in full
/// packets; other scenarios say why they have no such figure.
fn in_process(sc: &Scenario, link: &prism_pktgen::dpdk::DpdkLink) -> Result<InProcess, String> {
    let job = sc.job().map_err(|e| e.to_string())?;
    if job.mtu != 1500 || job.output != prism_dataplane::wire::OutputFormat::FP32 || job.input != prism_arith::NumFormat::Fp32 {
        return Err(format!("the in-process benchmark's frames are FP32 in and out at MTU 1500; this scenario is {:?} to {} at MTU {}", job.input, job.output.name(), job.mtu));
    }
    let case = crate::switch_throughput::Case { ranks: job.ranks, semantics: job.semantics, accumulator: job.accumulator, pattern: job.pattern };
    let tsc_hz = link.eal().tsc_hz();
    let m = crate::switch_throughput::measure_in_process(tsc_hz, link.pool(), &case, 0.3);
    let residence_cycles = crate::switch_throughput::residence_in_process(tsc_hz, link.pool(), &case, 0.3);
    Ok(InProcess { cycles_per_packet: m.cycles_per_packet, data_pps: m.mpps * 1e6, residence_cycles, tsc_hz })
}

/// Runs a scenario on the simulated hardware switch only.
pub fn run_hardware(sc: &Scenario, progress: bool) -> Result<Side, BenchError> {
    let job = sc.job()?;
    let first_gen = reserve_generations(sc.operations);
    let mut hw = Side::new(
        "hardware",
        format!("simulated cycles of prism_switch (Verilator) x {:.3} ns ({} MHz; {})", 1e3 / sc.clock_mhz, sc.clock_mhz, prism_rtl::CLOCK_STATUS),
        "prism_switch (SystemVerilog) under Verilator, cycle-accurate".into(),
    );
    let mut link = RtlLink::new(job.switch_mac, job.am_mac, SWITCH_EP, sc.clock_mhz);
    run_side(sc, &mut hw, &mut link, first_gen, progress);
    let mut cycles = Histogram::new_with_bounds(1, 1 << 40, 3).map_err(|e| BenchError::Histogram { what: "histogram", detail: e.to_string() })?;
    let mut ns = Histogram::new_with_bounds(1, 600_000_000_000, 3).map_err(|e| BenchError::Histogram { what: "histogram", detail: e.to_string() })?;
    for &c in &link.residence_cycles {
        let _ = cycles.record(c.max(1));
        let _ = ns.record(((c as f64 * link.period_ns()).round() as u64).max(1));
    }
    let mut first = Histogram::new_with_bounds(1, 1 << 40, 3).map_err(|e| BenchError::Histogram { what: "histogram", detail: e.to_string() })?;
    for &c in &link.first_residence_cycles {
        let _ = first.record(c.max(1));
    }
    hw.residence = Some(ns);
    hw.residence_cycles = Some(cycles);
    hw.first_residence_cycles = Some(first);
    Ok(hw)
}

/// What a hardware wire-to-wire figure leaves out, added as a row of its
/// own: the RS-FEC engine of the UltraScale+ integrated 100G Ethernet
/// subsystem (AMD PG203 v3.1, table "RS-FEC Engine Latency": receive in
/// full-correction mode 114.8 ns, transmit 21.7 ns), once per link crossed,
/// and pktgen to switch and back is two links. The MAC, PCS and transceiver
/// are not in it (PG203 states no figure for them that we cite), nor the
/// cable, so the row is a lower bound of what a board adds.
pub const MAC_PHY_ALLOWANCE_NS: u64 = 2 * (114_800 + 21_700) / 1000;
pub const MAC_PHY_ALLOWANCE_SOURCE: &str = "RS-FEC of the UltraScale+ integrated 100G Ethernet subsystem (AMD PG203 v3.1, RS-FEC engine latency: RX 114.8 ns in full-correction mode, TX 21.7 ns) on each of the two links, pktgen to switch and back: 273 ns; MAC, PCS, transceivers and cable not included (a lower bound)";

/// The percentiles every report gives, in percent.
pub const PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// Writes a histogram as an HdrHistogram interval log (one interval).
pub fn write_hlog(path: &Path, h: &Histogram<u64>, comment: &str) -> Result<(), BenchError> {
    prism_dataplane::switch::residence::write_hlog(path, h, comment, "latency").map_err(BenchError::file(path))
}

/// Records the scenario's DATA frames (every rank, first operation) as a pcap.
pub fn write_scenario_pcap(sc: &Scenario, path: &Path) -> Result<usize, BenchError> {
    let job = sc.job()?;
    let vectors = job.vectors();
    let mut frames = Vec::new();
    for r in 0..job.ranks {
        for (i, (_, _, f)) in job.packets(r, &vectors[r as usize]).into_iter().enumerate() {
            frames.push(prism_dataplane::pcap::Captured { ts: Duration::from_micros(i as u64), data: f });
        }
    }
    let n = frames.len();
    let file = std::fs::File::create(path).map_err(BenchError::file(path))?;
    prism_dataplane::pcap::write_all(file, &frames).map_err(|source| BenchError::Capture { path: path.into(), source })?;
    Ok(n)
}
