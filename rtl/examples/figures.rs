//! Hardware figures of the RTL switch from cycle-accurate simulation:
//! throughput in beats per cycle with DATA back to back, and latency in
//! cycles from the last beat of the DATA frame that completes a range to the
//! first beat of its first RESULT (and in ns at the clock given).
//!
//!   cargo run --release -p prism-rtl --example prism-rtl-figures [-- --json]

use prism_dataplane::wire::*;
use prism_pktgen::Job;
use prism_rtl::{Egress, RtlSwitch, DEFAULT_CLOCK_MHZ};

fn job(ranks: u16, semantics: Semantics, accumulator: AccumulatorPolicy, ranges: u32) -> Job {
    Job { seed: 7, ..Job::new(ranks, semantics, accumulator, 363 * ranges) }
}

struct Figures {
    ports: usize,
    accumulator: AccumulatorPolicy,
    ranks: u16,
    semantics: Semantics,
    data_frames: usize,
    beats_in: u64,
    beats_out: u64,
    /// From the first DATA beat in to the last RESULT beat out.
    cycles: u64,
    /// From the first DATA beat in to the last DATA beat in.
    in_cycles: u64,
    latency: Vec<u64>,
}

impl Figures {
    /// Beats per cycle per busy port, over the whole run (fill and drain included).
    fn per_port(&self, beats: u64) -> f64 {
        beats as f64 / self.cycles as f64 / self.ports as f64
    }

    /// DATA beats per cycle per busy port while DATA was coming in: the sustained ingress rate.
    fn sustained(&self) -> f64 {
        self.beats_in as f64 / self.in_cycles as f64 / self.ports as f64
    }

    fn latency_range(&self) -> (u64, u64) {
        (self.latency.iter().copied().min().unwrap_or(0), self.latency.iter().copied().max().unwrap_or(0))
    }
}

/// A switch with `j`'s operation staged and committed (the hardware's
/// window: 8 intervals, 12,000 bytes a contributor), its two ACKs taken.
fn staged(j: &Job) -> RtlSwitch {
    let mut sw = RtlSwitch::new(j.switch_mac.0, j.am_mac.0, 0x0050);
    let mut out = Vec::new();
    let mut ctx = j.context();
    ctx.window_intervals = 8;
    ctx.window_bytes = 12000;
    let bindings = j.bindings();
    sw.send(&j.control(1, Command::STAGE, ControlBody::Stage { context: ctx, bindings: Records::Typed(&bindings) }), 0, &mut out);
    sw.send(&j.control(2, Command::COMMIT, ControlBody::Empty), 0, &mut out);
    sw.drain(1000, &mut out);
    assert_eq!(out.len(), 2, "two ACKs");
    sw
}

/// Ranks spread over `ports` ports (rank r on port r mod ports), every port's
/// DATA frames back to back, range by range.
fn measure(ranks: u16, semantics: Semantics, accumulator: AccumulatorPolicy, ports: usize) -> Figures {
    let mut j = job(ranks, semantics, accumulator, 64);
    j.rank_ports = (0..ports as u16).collect();
    let mut sw = staged(&j);
    let mut out = Vec::new();
    let vectors = j.vectors();
    let packets: Vec<Vec<(u64, u64, Vec<u8>)>> = (0..ranks).map(|r| j.packets(r, &vectors[r as usize])).collect();
    // Range by range on every port at once; the frame of a range that ends
    // last completes it.
    let mut per_port: Vec<Vec<Vec<u8>>> = vec![Vec::new(); ports];
    let mut beats_in = 0;
    for k in 0..packets[0].len() {
        for (r, p) in packets.iter().enumerate() {
            beats_in += p[k].2.len().div_ceil(64) as u64;
            per_port[r % ports].push(p[k].2.clone());
        }
    }
    let start = sw.cycle();
    let seen = sw.send_all(&per_port, &mut out);
    let ranks_on = |port: usize| (0..ranks as usize).filter(|r| r % ports == port).count();
    let ingress: Vec<u64> = (0..packets[0].len()).map(|k| (0..ports).filter(|&p| ranks_on(p) > 0).map(|p| seen[p][(k + 1) * ranks_on(p) - 1].last_cycle).max().unwrap_or(0)).collect();
    let in_first = seen.iter().flatten().map(|i| i.first_cycle).min().unwrap_or(start);
    let in_last = seen.iter().flatten().map(|i| i.last_cycle).max().unwrap_or(start);
    sw.drain(1000, &mut out);
    let results: Vec<&Egress> = out.iter().filter(|e| e.frame.get(15) == Some(&3)).collect();
    let end = results.last().map_or(sw.cycle(), |e| e.last_cycle);
    let paths = if semantics == Semantics::ALLREDUCE { ranks as usize } else { 1 };
    assert_eq!(results.len(), paths * packets[0].len(), "every RESULT");
    // The first RESULT of each range, against the last beat of the frame that completed it.
    let latency = results.chunks(paths).enumerate().map(|(k, r)| r.iter().map(|e| e.first_cycle).min().unwrap_or(ingress[k]) - ingress[k]).collect();
    Figures {
        ports,
        accumulator,
        ranks,
        semantics,
        data_frames: packets.iter().map(Vec::len).sum(),
        beats_in,
        beats_out: results.iter().map(|e| e.frame.len().div_ceil(64) as u64).sum(),
        cycles: end - start,
        in_cycles: in_last + 1 - in_first,
        latency,
    }
}

/// AUTO output: `ranks` ranks on port 0 send one 363-value range that is
/// the whole vector; the cycles from the last beat of the last DATA frame to
/// the first beat of the first RESULT (the planner decides a value every
/// three cycles, so this is mostly the packet's planning and writing), and
/// the RESULTs.
fn auto_latency(ranks: u16, accumulator: AccumulatorPolicy) -> (u64, usize) {
    let mut j = job(ranks, Semantics::ALLREDUCE, accumulator, 1);
    j.output = OutputFormat::AUTO;
    j.rank_ports = vec![0];
    let mut sw = staged(&j);
    let mut out = Vec::new();
    let vectors = j.vectors();
    let frames: Vec<Vec<u8>> = (0..ranks).flat_map(|r| j.packets(r, &vectors[r as usize]).into_iter().map(|p| p.2)).collect();
    let seen = sw.send_all(&[frames], &mut out);
    sw.drain(1000, &mut out);
    let last_in = seen[0].last().map_or(0, |i| i.last_cycle);
    let results: Vec<&Egress> = out.iter().filter(|e| e.frame.get(15) == Some(&3)).collect();
    let first = results.iter().map(|e| e.first_cycle).min().expect("a RESULT");
    (first - last_in, results.len())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(bad) = args.iter().find(|a| a.as_str() != "--json") {
        eprintln!("prism-rtl-figures: unknown argument '{bad}'\nusage: prism-rtl-figures [--json]\n  throughput (beats per cycle per port) and DATA-to-RESULT latency (cycles, ns at {DEFAULT_CLOCK_MHZ} MHz)\n  of the simulated prism_switch, one and two ports busy, both accumulator policies");
        std::process::exit(2);
    }
    let json = !args.is_empty();
    let ns = 1e3 / DEFAULT_CLOCK_MHZ;
    let mut rows = Vec::new();
    for ports in [1usize, 2] {
        for accumulator in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
            for ranks in [2u16, 8] {
                for semantics in [Semantics::REDUCE, Semantics::ALLREDUCE] {
                    rows.push(measure(ranks, semantics, accumulator, ports));
                }
            }
        }
    }
    if json {
        let items: Vec<String> = rows
            .iter()
            .map(|f| {
                let (lo, hi) = f.latency_range();
                format!(
                    "{{\"ports\":{},\"accumulator\":\"{}\",\"ranks\":{},\"semantics\":\"{}\",\"data_frames\":{},\"beats_in_per_cycle\":{:.4},\"beats_in_per_cycle_sustained\":{:.4},\"beats_out_per_cycle\":{:.4},\"latency_cycles_min\":{lo},\"latency_cycles_max\":{hi}}}",
                    f.ports,
                    f.accumulator.name(),
                    f.ranks,
                    f.semantics.name(),
                    f.data_frames,
                    f.per_port(f.beats_in),
                    f.sustained(),
                    f.per_port(f.beats_out),
                )
            })
            .collect();
        println!("[{}]", items.join(","));
        return;
    }
    println!("prism_switch (FP32 in and out, MTU 1500, 363-value DATA frames back to back), clock {DEFAULT_CLOCK_MHZ} MHz");
    println!("| ports busy | accumulator | ranks | semantics | DATA frames | beats in / cycle / port (sustained) | beats in / cycle / port (whole run) | beats out / cycle / port | cycles / DATA frame | latency (cycles) | latency (ns) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let auto: Vec<(AccumulatorPolicy, u64, usize)> = [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED]
        .into_iter()
        .map(|a| {
            let (l, n) = auto_latency(2, a);
            (a, l, n)
        })
        .collect();
    for f in &rows {
        let (lo, hi) = f.latency_range();
        println!(
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.1} | {lo}..{hi} | {:.1}..{:.1} |",
            f.ports,
            f.accumulator.name(),
            f.ranks,
            f.semantics.name(),
            f.data_frames,
            f.sustained(),
            f.per_port(f.beats_in),
            f.per_port(f.beats_out),
            f.cycles as f64 / f.data_frames as f64,
            lo as f64 * ns,
            hi as f64 * ns
        );
    }
    println!();
    println!("AUTO output, 2 ranks on one port, one 363-value range (the whole vector)");
    println!("| accumulator | RESULT frames | latency to the first RESULT (cycles) | (ns) |");
    println!("|---|---|---|---|");
    for (a, l, n) in &auto {
        println!("| {} | {n} | {l} | {:.1} |", a.name(), *l as f64 * ns);
    }
}
