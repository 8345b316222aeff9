//! Criterion: 363-value FP32 packets from N contributors into the 2904-element
//! window, baseline (naive SIMD add) vs FP32_ARRIVAL vs KULISCH_FIXED with
//! final rounding. `examples/ratio.rs` prints the same ratios as JSON.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use prism_arith::bench_support::*;
use prism_arith::{min_kulisch_width, Policy};
use std::hint::black_box;

fn accumulate(c: &mut Criterion) {
    for data in [Data::Gradient, Data::FullRange] {
        let mut g = c.benchmark_group(format!("window_{data:?}"));
        for n in [2usize, 8, 64] {
            let contribs = contributions(data, n, WINDOW, 42 + n as u64);
            let bytes = as_bytes(&contribs);
            g.throughput(Throughput::Elements((n * WINDOW) as u64));
            let mut acc = vec![0f32; WINDOW];
            let mut out = vec![0f32; WINDOW];
            let mut out_b = vec![0u8; 4 * WINDOW];
            g.bench_with_input(BenchmarkId::new("naive_simd_add", n), &n, |b, _| b.iter(|| run_naive(black_box(&mut acc), black_box(&contribs), &mut out)));
            let mut fp = window(Policy::Fp32Arrival);
            g.bench_with_input(BenchmarkId::new("fp32_arrival", n), &n, |b, _| b.iter(|| run_policy(black_box(&mut fp), black_box(&bytes), &mut out_b)));
            let mut k = window(Policy::Kulisch { width_bits: min_kulisch_width(n as u32) as u16 });
            g.bench_with_input(BenchmarkId::new("kulisch_fixed", n), &n, |b, _| b.iter(|| run_policy(black_box(&mut k), black_box(&bytes), &mut out_b)));
        }
        g.finish();
    }
}

criterion_group!(benches, accumulate);
criterion_main!(benches);
