//! prism-pktgen: PRISM rank traffic with in-band setup and exact verification.

use clap::{Parser, ValueEnum};
use prism_arith::NumFormat;
use prism_dataplane::pcap;
use prism_dataplane::switch::config::SwitchConfig;
use prism_dataplane::wire::*;
use prism_pktgen::args::{Op, PolicyArg};
use prism_pktgen::*;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum OutArg {
    Fp32,
    Auto,
    Fp16,
    Bf16,
    Int8,
    Kulisch,
}
#[derive(Clone, Copy, Debug, ValueEnum)]
enum InArg {
    Fp32,
    Fp16,
    Bf16,
    Int8,
}

/// Play the Aggregation Manager and N ranks against a PRISM switch, verify
/// every RESULT exactly, and report latency.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// `sim` (the in-process engine), `afpacket:IF0[,IF1...]` (raw sockets; IFn faces switch port n),
    /// or `dpdk:DEV0[,DEV1...]` (DPDK devices; EAL options in --eal).
    #[arg(long, default_value = "sim")]
    switch: String,
    /// EAL options for `--switch dpdk:...`, e.g. "--no-huge --no-pci -l 0 --vdev net_null0".
    #[arg(long, default_value = "--no-huge --no-pci -l 0")]
    eal: String,
    /// Instead of a verified job: replay the job's DATA frames (pre-built mbufs) on
    /// DPDK port 0 for this many seconds and report the generation rate.
    #[arg(long)]
    blast: Option<f64>,
    /// Burst size of --blast.
    #[arg(long, default_value_t = 32)]
    burst: usize,
    /// Generating cores of --blast, each with its own TX queue on port 0.
    #[arg(long, default_value_t = 1)]
    tx_cores: usize,
    /// Rate in Gb/s on the wire (frame + 24 bytes of preamble, FCS and gap).
    #[arg(long)]
    rate_gbps: Option<f64>,
    /// Switch configuration for `--switch sim` (default: configs/single-pcap.toml's node).
    #[arg(long)]
    config: Option<PathBuf>,
    #[arg(long, default_value_t = 2)]
    ranks: u16,
    #[arg(long, value_enum, default_value = "allreduce")]
    op: Op,
    /// Destination rank of a REDUCE.
    #[arg(long, default_value_t = 0)]
    dest: u16,
    #[arg(long, value_enum, default_value = "kulisch")]
    policy: PolicyArg,
    #[arg(long, value_enum, default_value = "fp32")]
    output: OutArg,
    #[arg(long, value_enum, default_value = "fp32")]
    input: InArg,
    /// Elements per rank.
    #[arg(long, default_value_t = 100_000)]
    len: u32,
    #[arg(long, default_value_t = 1500)]
    mtu: u16,
    /// gradient[:sigma], uniform, full-range, constant[:v], integers.
    #[arg(long, default_value = "gradient")]
    pattern: Pattern,
    /// Read each rank's vector from a file instead of --pattern: a path containing
    /// `{rank}` (e.g. `data/rank{rank}.npy`); .npy or raw little-endian values.
    #[arg(long)]
    input_file: Option<String>,
    /// full, random, multi-group.
    #[arg(long, default_value = "full")]
    packetization: Packetization,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// DATA packets per second over all ranks (default: as fast as the window allows).
    #[arg(long)]
    rate: Option<f64>,
    /// Switch ports of the ranks, cycled (e.g. `0,1`).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    rank_ports: Vec<u16>,
    /// Switch port of the Aggregation Manager.
    #[arg(long, default_value_t = 0)]
    am_port: u16,
    #[arg(long, default_value = "02:00:00:00:00:50")]
    switch_mac: String,
    #[arg(long, default_value = "02:00:00:00:00:a0")]
    am_mac: String,
    /// Operation ID and generation.
    #[arg(long, default_value_t = 1)]
    op_id: u16,
    #[arg(long, default_value_t = 1)]
    generation: u32,
    /// Stripe the collective over this many operations (IDs op-id..op-id+K),
    /// each over its own contiguous element range, run at once and verified
    /// as one: a switch with K polling cores runs one stripe on each.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    stripes: u16,
    /// `--switch dpdk:...`: RX and TX queues on every port, every RX queue
    /// polled (default: --stripes). A switch with N polling cores answers
    /// from N TX queues: on net_memif give it N here.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    queues: Option<u16>,
    /// PROGRESS and local retransmission on every stream, each keeping up to
    /// this many frames until acknowledged (0: none, the SINGLE prototype).
    #[arg(long, default_value_t = 0)]
    replay_depth: u16,
    /// Give up after this many ms without progress.
    #[arg(long, default_value_t = 5000)]
    timeout_ms: u64,
    /// `--switch dpdk:...`: wait this long for every port's link to come up
    /// (a NIC's autonegotiation, a memif client's connection to its server).
    #[arg(long, default_value_t = 10_000)]
    link_timeout_ms: u64,
    /// Write every frame sent and received to this pcap.
    #[arg(long)]
    pcap_out: Option<PathBuf>,
    /// Send the frames of this pcap to port 0 instead of running a job, and report what comes back.
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Write the first receiver's result vector (float64) to this .npy file.
    #[arg(long)]
    npy_out: Option<PathBuf>,
    /// Write the per-RESULT latency histogram as an HdrHistogram log.
    #[arg(long)]
    hdr_log: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Also write the JSON summary to this file once the job has ended
    /// (written whole, then renamed into place: a reader never sees half).
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// After the summary, keep the links open without polling them until
    /// SIGTERM or SIGINT, then exit with the verdict's code. For a net_memif
    /// switch: DPDK 22.11's memif PMD frees the shared rings when its peer
    /// leaves without waiting for the cores polling them, so the switch must
    /// stop polling (stop) before pktgen disconnects.
    #[arg(long)]
    linger: bool,
    /// Test hook for `--switch sim`: corrupt this element's value in every RESULT.
    #[arg(long, hide = true)]
    corrupt_element: Option<u64>,
}

fn mac(name: &str, s: &str) -> Result<Mac, String> {
    s.parse().map_err(|e| format!("--{name}: {e}"))
}

fn job_of(a: &Args) -> Result<Job, String> {
    let input = match a.input {
        InArg::Fp32 => NumFormat::Fp32,
        InArg::Fp16 => NumFormat::Fp16,
        InArg::Bf16 => NumFormat::Bf16,
        InArg::Int8 => NumFormat::Int8,
    };
    if a.ranks == 0 || a.len == 0 {
        return Err("--ranks and --len must be at least 1".into());
    }
    if a.dest >= a.ranks {
        return Err(format!("--dest {} is not a rank (0..{})", a.dest, a.ranks));
    }
    if ![576, 1500, 9000].contains(&a.mtu) {
        return Err(format!("--mtu {} is not 576, 1500 or 9000", a.mtu));
    }
    Ok(Job {
        ranks: a.ranks,
        semantics: a.op.semantics(),
        dest_rank: a.dest,
        accumulator: a.policy.accumulator(),
        output: match a.output {
            OutArg::Fp32 => OutputFormat::FP32,
            OutArg::Auto => OutputFormat::AUTO,
            OutArg::Fp16 => OutputFormat::FP16,
            OutArg::Bf16 => OutputFormat::BF16,
            OutArg::Int8 => OutputFormat::INT8,
            OutArg::Kulisch => OutputFormat::KULISCH,
        },
        input,
        vector_len: a.len,
        mtu: a.mtu,
        pattern: a.pattern,
        packetization: a.packetization,
        seed: a.seed,
        identity: Identity { job: 1, group: 1, group_gen: 1, op: a.op_id, op_gen: a.generation },
        replay_depth: a.replay_depth,
        switch_mac: mac("switch-mac", &a.switch_mac)?,
        rank_ports: a.rank_ports.clone(),
        am_mac: mac("am-mac", &a.am_mac)?,
        am_port: a.am_port,
        given: None,
        stripes: a.stripes,
    })
    .and_then(|mut j| {
        if let Some(pattern) = &a.input_file {
            if !pattern.contains("{rank}") {
                return Err(format!("--input-file '{pattern}' must contain {{rank}}"));
            }
            let v: Vec<Vec<u8>> = (0..j.ranks)
                .map(|r| prism_pktgen::job::read_vector(std::path::Path::new(&pattern.replace("{rank}", &r.to_string())), j.input))
                .collect::<Result<_, _>>()
                .map_err(|e| format!("--input-file: {e}"))?;
            let len = v[0].len();
            if v.iter().any(|x| x.len() != len) {
                return Err("--input-file: the ranks' vectors differ in length".into());
            }
            j.vector_len = (len / j.input.value_bytes()) as u32;
            j.given = Some(v);
        }
        Ok(j)
    })
}

fn link_of(a: &Args) -> Result<Box<dyn Link>, String> {
    if a.switch == "sim" {
        let cfg = match &a.config {
            Some(p) => SwitchConfig::load(p).map_err(|e| e.to_string())?,
            None => SwitchConfig::parse(&prism_pktgen::link::default_sim_config().to_string()).map_err(|e| e.to_string())?,
        };
        let mut l = SimLink::new(&cfg);
        l.corrupt_element = a.corrupt_element;
        return Ok(Box::new(l));
    }
    #[cfg(feature = "dpdk")]
    if let Some(devs) = a.switch.strip_prefix("dpdk:") {
        let mut eal: Vec<String> = vec!["prism-pktgen".into()];
        eal.extend(a.eal.split_whitespace().map(str::to_string));
        let names: Vec<String> = devs.split(',').map(str::to_string).collect();
        let queues = a.queues.unwrap_or(a.stripes);
        return prism_pktgen::dpdk::DpdkLink::open_queues(&eal, &names, a.mtu, queues, queues, Duration::from_millis(a.link_timeout_ms))
            .map(|l| Box::new(l) as Box<dyn Link>)
            .map_err(|e| format!("--switch {}: {e}", a.switch));
    }
    if let Some(ifaces) = a.switch.strip_prefix("afpacket:") {
        let names: Vec<String> = ifaces.split(',').map(str::to_string).collect();
        return AfPacketLink::open(&names).map(|l| Box::new(l) as Box<dyn Link>).map_err(|e| e.to_string());
    }
    Err(format!("--switch '{}': use `sim` or `afpacket:IF0[,IF1...]`", a.switch))
}

fn write_npy(path: &PathBuf, v: &[f64]) -> std::io::Result<()> {
    let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({},), }}", v.len());
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(b"\x93NUMPY\x01\x00")?;
    f.write_all(&(header.len() as u16).to_le_bytes())?;
    f.write_all(header.as_bytes())?;
    for x in v {
        f.write_all(&x.to_le_bytes())?;
    }
    f.flush()
}

fn write_hdr_log(path: &PathBuf, h: &hdrhistogram::Histogram<u64>) -> Result<(), String> {
    use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
    use hdrhistogram::serialization::V2Serializer;
    let mut out = std::fs::File::create(path).map_err(|e| e.to_string())?;
    let mut ser = V2Serializer::new();
    let mut w = IntervalLogWriterBuilder::new().add_comment("prism-pktgen: last contributing DATA sent to RESULT received, ns").begin_log_with(&mut out, &mut ser).map_err(|e| e.to_string())?;
    w.write_histogram(h, Duration::ZERO, Duration::from_secs(1), None).map_err(|e| e.to_string())?;
    Ok(())
}

fn replay(a: &Args, link: &mut dyn Link) -> Result<ExitCode, String> {
    let path = a.replay.as_ref().ok_or("no --replay")?;
    let frames = pcap::read_all(std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?).map_err(|e| e.to_string())?;
    let mut got = Vec::new();
    for f in &frames {
        link.send(0, &f.data).map_err(|e| e.to_string())?;
        while let Some(rx) = link.recv(Duration::from_millis(1)).map_err(|e| e.to_string())? {
            got.push(rx);
        }
    }
    while let Some(rx) = link.recv(Duration::from_millis(200)).map_err(|e| e.to_string())? {
        got.push(rx);
    }
    println!("replayed {} frames from {}, received {}", frames.len(), path.display(), got.len());
    if let Some(out) = &a.pcap_out {
        let caps: Vec<pcap::Captured> = got.iter().enumerate().map(|(i, r)| pcap::Captured { ts: Duration::from_micros(i as u64), data: r.frame.clone() }).collect();
        pcap::write_all(std::fs::File::create(out).map_err(|e| e.to_string())?, &caps).map_err(|e| e.to_string())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--blast`: pre-built DATA frames of every rank replayed on DPDK port 0.
#[cfg(feature = "dpdk")]
fn blast(a: &Args, job: &Job, secs: f64) -> Result<ExitCode, String> {
    let devs = a.switch.strip_prefix("dpdk:").ok_or("--blast needs --switch dpdk:DEV")?;
    let mut eal: Vec<String> = vec!["prism-pktgen".into()];
    eal.extend(a.eal.split_whitespace().map(str::to_string));
    let names: Vec<String> = devs.split(',').map(str::to_string).collect();
    let link = prism_pktgen::dpdk::DpdkLink::open_with(&eal, &names, a.mtu, a.tx_cores.max(1) as u16).map_err(|e| format!("--switch {}: {e}", a.switch))?;
    let vectors = job.vectors();
    let mut frames: Vec<Vec<u8>> = Vec::new();
    for r in 0..job.ranks {
        frames.extend(job.packets(r, &vectors[r as usize]).into_iter().map(|p| p.2).take(4096 / job.ranks as usize));
    }
    let wire_bytes = frames.iter().map(|f| f.len() as f64 + 24.0).sum::<f64>() / frames.len() as f64;
    let rate = a.rate.or(a.rate_gbps.map(|g| g * 1e9 / 8.0 / wire_bytes));
    let port = link.port(0).ok_or("no DPDK port")?;
    let r = prism_pktgen::dpdk::replay_cores(&link, port, &frames, Duration::from_secs_f64(secs), a.burst, rate, a.tx_cores).map_err(|e| format!("--blast: {e}"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json!({"packets": r.packets, "seconds": r.seconds, "pps": r.pps, "gbps_on_wire": r.gbps, "frame_bytes": wire_bytes - 24.0})).unwrap_or_default());
    } else {
        println!(
            "blast: {} frames in {:.2} s = {:.2} Mpps, {:.1} Gb/s on the wire ({:.0}-byte frames, burst {}, {} core(s))",
            r.packets,
            r.seconds,
            r.pps / 1e6,
            r.gbps,
            wire_bytes - 24.0,
            a.burst,
            a.tx_cores.max(1)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let a = Args::parse();
    match real_main(&a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("prism-pktgen: {e}");
            ExitCode::from(2)
        }
    }
}

fn real_main(a: &Args) -> Result<ExitCode, String> {
    if let Some(secs) = a.blast {
        #[cfg(feature = "dpdk")]
        return blast(a, &job_of(a)?, secs);
        #[cfg(not(feature = "dpdk"))]
        return Err(format!("--blast {secs}: prism-pktgen was built without DPDK (feature `dpdk`)"));
    }
    let mut link = link_of(a)?;
    if a.replay.is_some() {
        return replay(a, link.as_mut());
    }
    let job = job_of(a)?;
    let rate = a.rate.or(a.rate_gbps.map(|g| g * 1e9 / 8.0 / (a.mtu as f64 + 14.0 + 24.0)));
    let opts = RunOptions { rate_pps: rate, timeout: Duration::from_millis(a.timeout_ms), capture: a.pcap_out.is_some(), progress: !a.json && a.len >= 1_000_000 };
    if !a.json {
        let striped = if job.stripes > 1 { format!(" in {} stripes (operations {}..={})", job.stripes, job.identity.op, job.identity.op.wrapping_add(job.stripes - 1)) } else { String::new() };
        eprintln!(
            "prism-pktgen: {} ranks, {} {} -> {}, {} elements{striped}, MTU {}, via {}",
            job.ranks,
            job.semantics.name(),
            job.accumulator.name(),
            job.output.name(),
            job.vector_len,
            job.mtu,
            link.describe()
        );
    }
    let report = run(&job, link.as_mut(), &opts).map_err(|e| e.to_string())?;
    if a.linger {
        // Before the summary exists: a SIGTERM sent once it does is a clean stop.
        prism_dataplane::switch::signals::install();
    }
    if let Some(p) = &a.pcap_out {
        pcap::write_all(std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?, &report.capture).map_err(|e| e.to_string())?;
    }
    if let Some(p) = &a.npy_out {
        if let Some((_, r)) = report.per_rank.first() {
            write_npy(p, &r.values).map_err(|e| format!("{}: {e}", p.display()))?;
        }
    }
    if let Some(p) = &a.hdr_log {
        write_hdr_log(p, &report.latency)?;
    }
    let h = &report.latency;
    let pct = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    let mismatches = report.mismatches();
    let dup: u64 = report.per_rank.iter().map(|(_, r)| r.duplicates).sum();
    let malformed: u64 = report.per_rank.iter().map(|(_, r)| r.malformed).sum();
    let late: u64 = report.per_rank.iter().map(|(_, r)| r.late).sum();
    let checked: u64 = report.per_rank.iter().map(|(_, r)| r.checked).sum();
    let verdict = if report.passed() { "PASS" } else { "FAIL" };
    if a.json || a.json_out.is_some() {
        let v = json!({
            "verdict": verdict, "check": format!("{:?}", report.check), "checked_values": checked,
            "missing": report.missing(), "duplicates": dup, "malformed": malformed, "late": late,
            "inexact": report.inexact(), "timed_out": report.timed_out,
            "mismatches": mismatches.iter().map(|m| json!({"rank": m.rank, "element": m.element, "got": m.got, "want": m.want})).collect::<Vec<_>>(),
            "frames_sent": report.frames_sent, "frames_received": report.frames_received, "tx_full_waits": link.tx_full_waits(),
            "latency_us": {"samples": h.len(), "p50": pct(0.5), "p90": pct(0.9), "p99": pct(0.99), "p99_9": pct(0.999), "max": h.max() as f64 / 1000.0},
            "operation_us": report.operation.as_secs_f64() * 1e6,
        });
        let text = serde_json::to_string_pretty(&v).map_err(|e| format!("the JSON summary: {e}"))?;
        if let Some(p) = &a.json_out {
            prism_dataplane::files::write_whole(p, &text).map_err(|e| format!("--json-out {}: {e}", p.display()))?;
        }
        if a.json {
            println!("{text}");
        }
    }
    if !a.json {
        println!("verification: {verdict} ({:?}; {checked} values checked on {} receiving ranks)", report.check, report.per_rank.len());
        println!(
            "frames: {} sent, {} received; missing elements {}, duplicate {}, malformed {}, late {}{}",
            report.frames_sent,
            report.frames_received,
            report.missing(),
            dup,
            malformed,
            late,
            if report.inexact() { ", ACCUMULATION_INEXACT" } else { "" }
        );
        if link.tx_full_waits() > 0 {
            println!("backpressure: {} sends waited for room in a full TX queue", link.tx_full_waits());
        }
        for m in mismatches.iter().take(10) {
            println!("  mismatch: rank {} element {}: got {}, want {}", m.rank, m.element, m.got, m.want);
        }
        println!("latency per RESULT (us): p50 {:.2}  p90 {:.2}  p99 {:.2}  p99.9 {:.2}  max {:.2}  ({} samples)", pct(0.5), pct(0.9), pct(0.99), pct(0.999), h.max() as f64 / 1000.0, h.len());
        println!("operation: {:.3} ms from first DATA to last RESULT", report.operation.as_secs_f64() * 1e3);
        if report.timed_out {
            println!("timed out: no progress for {} ms", a.timeout_ms);
        }
    }
    if a.linger {
        linger();
    }
    Ok(if report.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `--linger`: the links stay open and unpolled until SIGTERM or SIGINT.
fn linger() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    while !prism_dataplane::switch::signals::stop_requested() {
        std::thread::sleep(Duration::from_millis(5));
    }
}
