//! Throughput of FP32_ARRIVAL and KULISCH_FIXED against a naive SIMD FP32 add of
//! the same stream, measured in one run; prints one JSON object. Also the
//! same stream added into f64 sums (`f64_add_ratio`, not exact): what 8
//! bytes of state per element cost with no other work, a reference point
//! for KULISCH_FIXED's f64 registers (in cache; at DRAM scale the
//! accumulators' prefetch can beat it).
//!
//! `cargo run --release -p prism-arith --example ratio -- --quick` (under a minute)
//! `cargo run --release -p prism-arith --example ratio` (adds the DRAM-scale run)
//! `-- --only gradient`, `fullrange`, `layered`, `cache`, `dram` or `n=8`, or several
//! joined by commas (`fullrange,n=64`): the cases matching all of them (for profiling)

use prism_arith::bench_support::*;
use prism_arith::{simd, Policy};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Best-of-rounds elements per second of each of `fs` over `elements`
/// elements, their rounds interleaved (one call of each in turn): this VM
/// changes clock speed within a run, and a change then reaches every
/// kernel alike instead of skewing the ratio of the ones timed before it
/// against the ones after.
fn rates<const K: usize>(elements: usize, budget: Duration, mut fs: [&mut dyn FnMut(); K]) -> [f64; K] {
    for f in fs.iter_mut() {
        f(); // warm-up
    }
    let mut best = [f64::MAX; K];
    let start = Instant::now();
    let mut rounds = 0;
    while rounds < 5 || (start.elapsed() < budget * K as u32 && rounds < 1000) {
        for (f, b) in fs.iter_mut().zip(best.iter_mut()) {
            // Untimed first, so that each timed call finds its own data in
            // cache, as in a run of that kernel alone.
            f();
            let t = Instant::now();
            f();
            *b = b.min(t.elapsed().as_secs_f64());
        }
        rounds += 1;
    }
    best.map(|b| elements as f64 / b)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).map(|s| s.to_ascii_lowercase());
    let budget = Duration::from_millis(if quick { 150 } else { 600 });
    let mut rows = Vec::new();
    let mut cases: Vec<(&str, Data, usize, usize)> = Vec::new();
    for data in [Data::Gradient, Data::FullRange, Data::Layered] {
        for n in [2usize, 8, 64] {
            cases.push(("cache", data, n, WINDOW));
        }
    }
    if !quick {
        // 64 MiB per contributor, streamed from DRAM through the window.
        cases.push(("dram", Data::Gradient, 2, 16 << 20));
        cases.push(("dram", Data::Gradient, 8, 16 << 20));
    }
    // `--only` words, all of which a case must match: a data class, a scale, or `n=N`.
    let words: Vec<String> = only.iter().flat_map(|o| o.split(',').map(str::to_owned).collect::<Vec<_>>()).collect();
    cases.retain(|c| words.iter().all(|o| format!("{:?}", c.1).to_ascii_lowercase() == *o || c.0 == o || *o == format!("n={}", c.2)));
    if cases.is_empty() {
        eprintln!("error: no case matches --only {}", only.as_deref().unwrap_or(""));
        std::process::exit(2);
    }
    for (scale, data, n, len) in cases {
        let c = contributions(data, n, len, 42 + n as u64);
        let bytes = as_bytes(&c);
        let elements = n * len;
        let mut acc = vec![0f32; WINDOW];
        let mut out = vec![0f32; len];
        let mut out_b = vec![0u8; 4 * len];
        let mut out_k = vec![0u8; 4 * len];
        let mut fp = window(Policy::Fp32Arrival);
        let mut k = window(Policy::Kulisch { width_bits: prism_arith::min_kulisch_width(n as u32) as u16 });
        let mut acc64 = vec![0f64; WINDOW];
        let mut out64 = vec![0f32; len];
        let [naive, f64_add, arrival, kulisch] = rates(
            elements,
            budget,
            [
                &mut || run_naive(black_box(&mut acc), black_box(&c), &mut out),
                &mut || run_naive_f64(black_box(&mut acc64), black_box(&c), &mut out64),
                &mut || run_policy(black_box(&mut fp), black_box(&bytes), &mut out_b),
                &mut || run_policy(black_box(&mut k), black_box(&bytes), &mut out_k),
            ],
        );
        rows.push(format!(
            "{{\"scale\":\"{scale}\",\"data\":\"{data:?}\",\"n\":{n},\"naive_elems_per_s\":{naive:.4e},\"fp32_arrival_elems_per_s\":{arrival:.4e},\"kulisch_elems_per_s\":{kulisch:.4e},\"fp32_arrival_ratio\":{:.3},\"kulisch_ratio\":{:.3},\"f64_add_ratio\":{:.3}}}",
            arrival / naive,
            kulisch / naive,
            f64_add / naive
        ));
    }
    println!("{{\"isa\":\"{:?}\",\"cases\":[\n  {}\n]}}", simd::detected(), rows.join(",\n  "));
}
