//! prism-switch: the DPDK software PRISM switch.
//!
//! `prism-switch [EAL options] -- --config configs/NAME.toml [options]`

use clap::Parser;
use prism_dataplane::dpdk::{rdtsc, DpdkError, Eal, Mbuf, MbufSink, Mempool, Port};
use prism_dataplane::engine::DataReject;
use prism_dataplane::switch::config::SwitchConfig;
use prism_dataplane::switch::{signals, Action, L2Drop, SwitchCore};
use prism_dataplane::wire::Reason;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The PRISM software switch on DPDK. EAL options come first, then `--`, then these.
#[derive(Parser, Debug)]
#[command(version, about, after_help = "Example (no NIC, no hugepages):\n  prism-switch --no-huge --no-pci -l 0 --vdev net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap -- --config configs/single-pcap.toml --idle-exit-ms 500")]
struct Args {
    /// Switch configuration (TOML).
    #[arg(long)]
    config: PathBuf,
    /// Seconds between rate lines (0: none).
    #[arg(long, default_value_t = 1)]
    stats_interval: u64,
    /// Exit after this many milliseconds without a received frame (0: run until SIGINT/SIGTERM).
    #[arg(long, default_value_t = 0)]
    idle_exit_ms: u64,
    /// Write the JSON stats here at exit and on SIGUSR1 (default: stdout at exit).
    #[arg(long)]
    stats_json: Option<PathBuf>,
}

fn split_args() -> (Vec<String>, Vec<String>) {
    let all: Vec<String> = std::env::args().collect();
    let prog = all.first().cloned().unwrap_or_else(|| "prism-switch".into());
    match all.iter().position(|a| a == "--") {
        Some(i) => (all[..i].to_vec(), std::iter::once(prog).chain(all[i + 1..].iter().cloned()).collect()),
        // No `--`: everything is ours (so --help works without EAL).
        None => (vec![prog.clone()], all),
    }
}

struct Stats {
    rx: Vec<u64>,
    tx: Vec<u64>,
    tx_dropped: Vec<u64>,
    no_mbuf: u64,
}

fn stats_json(core: &SwitchCore, ports: &[Port], s: &Stats, pool: &Mempool) -> Value {
    let c = &core.node.counters;
    let named = |names: &mut dyn Iterator<Item = (&'static str, u64)>| -> Value {
        let mut m = Map::new();
        for (k, v) in names {
            m.insert(k.into(), json!(v));
        }
        Value::Object(m)
    };
    let ports: Vec<Value> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let d = p.stats();
            json!({"port": i, "device": p.name(), "rx": s.rx[i], "tx": s.tx[i], "tx_dropped": s.tx_dropped[i],
                   "dev_ipackets": d.ipackets, "dev_opackets": d.opackets, "dev_imissed": d.imissed, "dev_ierrors": d.ierrors, "dev_rx_nombuf": d.rx_nombuf})
        })
        .collect();
    json!({
        "ports": ports,
        "engine": {
            "control_accepted": c.accepted,
            "control_retries_answered": c.retries_answered,
            "control_untrusted_source": c.untrusted_source,
            "control_refused_by_status": c.refused.to_vec(),
            "malformed": named(&mut Reason::ALL.iter().map(|r| (r.name(), c.malformed[r.index()]))),
            "data_applied": c.data_applied,
            "data_duplicates": c.data_duplicates,
            "data_rejected": named(&mut DataReject::ALL.iter().map(|r| (r.name(), c.data_rejected[r.index()]))),
            "results_sent": c.results_sent,
            "progress_ignored": c.progress_ignored,
            "not_for_us": c.not_for_us,
        },
        "l2": {
            "forwarded": core.l2.forwarded,
            "flooded": core.l2.flooded,
            "dropped": named(&mut L2Drop::ALL.iter().map(|d| (d.name(), core.l2.dropped[*d as usize]))),
        },
        "no_mbuf": s.no_mbuf,
        "mbufs_available": pool.available(),
    })
}

fn write_stats(path: &Option<PathBuf>, v: &Value) {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    match path {
        Some(p) => {
            if let Err(e) = std::fs::write(p, text + "\n") {
                tracing::error!("cannot write stats to {}: {e}", p.display());
            }
        }
        None => println!("{text}"),
    }
}

fn run(args: Args, eal_args: Vec<String>) -> Result<(), Box<dyn std::error::Error>> {
    let cfg = SwitchConfig::load(&args.config)?;
    let eal = Eal::init(&eal_args)?;
    tracing::info!("EAL up: {} ports, TSC {} MHz", eal.port_count(), eal.tsc_hz() / 1_000_000);
    let data_room = (cfg.node.mtu as u32 + 14 + 128 + 64).max(2048 + 128) as u16;
    let pool = Mempool::new(&eal, "prism_mbufs", cfg.dataplane.mbufs, 256, data_room)?;
    let ports: Vec<Port> = cfg.ports.iter().map(|p| Port::by_name(&eal, &p.device)).collect::<Result<_, DpdkError>>()?;
    for p in &ports {
        p.start(&pool, 1, 1, cfg.dataplane.rx_desc.max(cfg.dataplane.tx_desc), cfg.node.mtu)?;
        tracing::info!("port {} = {} up, MAC {}", p.0, p.name(), prism_dataplane::wire::Mac(p.mac()));
    }
    signals::install();
    let mut core = SwitchCore::new(&cfg);
    let n = ports.len();
    let mut st = Stats { rx: vec![0; n], tx: vec![0; n], tx_dropped: vec![0; n], no_mbuf: 0 };
    let mut rxbuf: Vec<Mbuf> = Vec::with_capacity(64);
    let mut txq: Vec<Vec<Mbuf>> = (0..n).map(|_| Vec::with_capacity(256)).collect();
    let burst = cfg.dataplane.burst;
    let mut last_rx = Instant::now();
    let mut last_line = Instant::now();
    let (mut line_rx, mut line_tx) = (0u64, 0u64);
    let tsc_start = rdtsc();
    while !signals::stop_requested() {
        let mut got = 0;
        for (pi, port) in ports.iter().enumerate() {
            rxbuf.clear();
            got += port.rx_burst(0, &mut rxbuf, burst);
            for m in rxbuf.drain(..) {
                st.rx[pi] += 1;
                if m.is_chained() {
                    core.chained();
                    continue;
                }
                // Engine replies are built directly in mbufs on their port's TX queue.
                let mut sink = MbufSink { pool: &pool, txq: &mut txq, no_mbuf: 0 };
                let action = core.rx(pi as u16, m.data(), &mut sink);
                st.no_mbuf += sink.no_mbuf;
                match action {
                    Action::Consumed | Action::Drop(_) => drop(m),
                    Action::Forward(p) => txq[p as usize].push(m),
                    Action::Flood => {
                        for (q, buf) in txq.iter_mut().enumerate() {
                            if q != pi {
                                buf.push(m.share());
                            }
                        }
                    }
                }
            }
        }
        for (pi, port) in ports.iter().enumerate() {
            if !txq[pi].is_empty() {
                let want = txq[pi].len() as u64;
                let sent = port.tx_burst(0, &mut txq[pi]) as u64;
                st.tx[pi] += sent;
                st.tx_dropped[pi] += want - sent;
            }
        }
        let now = Instant::now();
        if got > 0 {
            last_rx = now;
        } else if args.idle_exit_ms > 0 && now.duration_since(last_rx) > Duration::from_millis(args.idle_exit_ms) {
            tracing::info!("idle for {} ms: stopping", args.idle_exit_ms);
            break;
        }
        if args.stats_interval > 0 && now.duration_since(last_line) >= Duration::from_secs(args.stats_interval) {
            let (rx, tx): (u64, u64) = (st.rx.iter().sum(), st.tx.iter().sum());
            let secs = now.duration_since(last_line).as_secs_f64();
            let c = &core.node.counters;
            tracing::info!(
                "rx {:.0} pps, tx {:.0} pps | applied {} dup {} results {} | rejected {} malformed {}",
                (rx - line_rx) as f64 / secs,
                (tx - line_tx) as f64 / secs,
                c.data_applied,
                c.data_duplicates,
                c.results_sent,
                c.data_rejected.iter().sum::<u64>(),
                c.malformed.iter().sum::<u64>()
            );
            (line_rx, line_tx, last_line) = (rx, tx, now);
        }
        if signals::take_dump_request() {
            write_stats(&args.stats_json, &stats_json(&core, &ports, &st, &pool));
        }
    }
    // Clean stop: every queued frame is sent before the ports stop.
    for (pi, port) in ports.iter().enumerate() {
        let want = txq[pi].len() as u64;
        let sent = port.tx_burst(0, &mut txq[pi]) as u64;
        st.tx[pi] += sent;
        st.tx_dropped[pi] += want - sent;
    }
    let cycles = rdtsc() - tsc_start;
    tracing::info!("stopped after {:.3} s", cycles as f64 / eal.tsc_hz() as f64);
    write_stats(&args.stats_json, &stats_json(&core, &ports, &st, &pool));
    for p in &ports {
        p.stop();
    }
    drop(pool);
    drop(eal);
    Ok(())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_target(false).init();
    let (eal_args, own) = split_args();
    let args = Args::parse_from(own);
    match run(args, eal_args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("prism-switch: {e}");
            ExitCode::from(1)
        }
    }
}
