//! AUTO: lossless, within budget, deterministic, and the documented choices.

use prism_arith::auto::{self, plan_packet, widths, C_KULISCH};
use prism_arith::window::auto_masks;
use prism_arith::*;
use rand::{Rng, SeedableRng};

fn acc_with(values: &[f32], extra_kulisch: &[(usize, Vec<u8>)], width: u16) -> Accumulator {
    let mut acc = Accumulator::new(Policy::Kulisch { width_bits: width }, values.len());
    let b: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    acc.accumulate(0, NumFormat::Fp32, &b).unwrap();
    for (slot, v) in extra_kulisch {
        acc.accumulate(*slot, NumFormat::Kulisch { width_bits: width }, v).unwrap();
    }
    acc
}

/// Kulisch value 2^-149 (not an FP32 sum with 1.0 in any narrower format).
fn tiny(width: u16) -> Vec<u8> {
    let mut v = vec![0u8; 1 + width as usize / 8];
    v[1] = 1;
    v
}

fn plan_all(acc: &mut Accumulator, budget: usize) -> Vec<auto::PacketPlan> {
    let n = acc.slots();
    let mut masks = vec![0u8; n];
    auto_masks(acc, 0, n, &mut masks).unwrap();
    let mut at = 0;
    let mut plans = Vec::new();
    while at < n {
        let p = plan_packet(&masks[at..], acc.kulisch_bits(), budget, true).unwrap().unwrap();
        at += p.values;
        plans.push(p);
    }
    plans
}

#[test]
fn the_documented_mixed_partial() {
    let mut acc = acc_with(&[1.5, 2.0, 1.0, 3.0, -0.5], &[(2, tiny(280))], 280);
    let plans = plan_all(&mut acc, 1458);
    assert_eq!(plans.len(), 1);
    let g: Vec<(u8, u16)> = plans[0].groups().iter().map(|g| (g.format, g.count)).collect();
    // FP16 x2, KULISCH x1, FP16 x2: 8 + 40 + 8 bytes.
    assert_eq!(g, [(1, 2), (4, 1), (1, 2)]);
    assert_eq!(plans[0].body_bytes, 56);
}

#[test]
fn small_integers_are_one_int8_group() {
    let vals: Vec<f32> = (0..100).map(|i| (i % 50) as f32 - 20.0).collect();
    let mut acc = acc_with(&vals, &[], 280);
    let plans = plan_all(&mut acc, 1458);
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0].groups().len(), 1);
    assert_eq!((plans[0].groups()[0].format, plans[0].groups()[0].count), (0, 100));
    assert_eq!(plans[0].body_bytes, 104);
}

#[test]
fn a_lone_fp32_value_among_integers_coalesces_when_cheaper() {
    // Integers alternating with FP32-only values: one FP32 group (24 bytes)
    // beats five groups (40 bytes).
    let mut acc = acc_with(&[1.0, 0.1, 2.0, 0.2, 3.0], &[], 280);
    let plans = plan_all(&mut acc, 1458);
    let g: Vec<(u8, u16)> = plans[0].groups().iter().map(|g| (g.format, g.count)).collect();
    assert_eq!(g, [(3, 5)]);
    // Runs of three integers around one FP32 value split: 8 + 8 + 8 bytes against 32.
    let mut acc = acc_with(&[1.0, 2.0, 3.0, 0.1, 4.0, 5.0, 6.0], &[], 280);
    let plans = plan_all(&mut acc, 1458);
    let g: Vec<(u8, u16)> = plans[0].groups().iter().map(|g| (g.format, g.count)).collect();
    assert_eq!(g, [(0, 3), (3, 1), (0, 3)]);
    // An exact tie (24 bytes either way) goes to the lower format code first.
    let mut acc = acc_with(&[1.0, 2.0, 0.1, 3.0, 4.0], &[], 280);
    let plans = plan_all(&mut acc, 1458);
    let g: Vec<(u8, u16)> = plans[0].groups().iter().map(|g| (g.format, g.count)).collect();
    assert_eq!(g, [(0, 2), (3, 3)]);
}

#[test]
fn fp32_arrival_never_dresses_a_value_as_kulisch() {
    let mut acc = Accumulator::new(Policy::Fp32Arrival, 4);
    acc.accumulate(0, NumFormat::Fp32, &[0.1f32, 1e30, -0.0, f32::NAN].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).unwrap();
    for slot in 0..4 {
        assert_eq!(acc.candidates(slot).unwrap() & C_KULISCH, 0);
    }
}

#[test]
fn waits_for_its_lookahead() {
    let masks = [0b11111u8; 5];
    assert!(plan_packet(&masks, 280, 1458, false).unwrap().is_none());
    assert!(plan_packet(&masks, 280, 1458, true).unwrap().is_some());
}

#[test]
fn lossless_within_budget_for_random_vectors() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for (mtu, width) in [(576u16, 280u16), (1500, 288), (9000, 4096), (1500, 4096)] {
        let n = 3000;
        let vals: Vec<f32> = (0..n)
            .map(|_| match rng.gen_range(0..5) {
                0 => rng.gen_range(-128..128) as f32,
                1 => half::f16::from_bits(rng.gen_range(0..0x7c00)).to_f32(),
                2 => f32::from_bits(rng.gen::<u32>() & 0xffff_0000 & 0x7f7f_ffff),
                3 => rng.gen::<f32>() * 1e10,
                _ => -0.0,
            })
            .collect();
        let extra: Vec<(usize, Vec<u8>)> = (0..n).filter(|_| rng.gen_bool(0.05)).map(|i| (i, tiny(width))).collect();
        let mut acc = acc_with(&vals, &extra, width);
        let budget = mtu as usize - 42;
        let plans = plan_all(&mut acc, budget);
        let w = widths(width);
        let mut slot = 0;
        for p in &plans {
            assert!(p.body_bytes <= budget);
            assert!(p.groups().len() <= 255);
            let bytes: usize = p
                .groups()
                .iter()
                .map(|g| {
                    let v = g.count as usize * w[g.format as usize] as usize;
                    4 + v.div_ceil(4) * 4
                })
                .sum();
            assert_eq!(bytes, p.body_bytes);
            for g in p.groups() {
                for _ in 0..g.count {
                    // Write the value in its chosen format, decode it alone, compare exactly.
                    let out = Output::from_index(g.format);
                    let mut buf = vec![0u8; 1 + width as usize / 8];
                    let len = acc.write(slot, out, &mut buf).unwrap();
                    let format = out.num_format(width);
                    let mut back = Accumulator::new(Policy::Kulisch { width_bits: width }, 1);
                    back.accumulate(0, format, &buf[..len]).unwrap();
                    let (mut a, mut b) = (vec![0u8; buf.len()], vec![0u8; buf.len()]);
                    back.write(0, Output::Kulisch, &mut a).unwrap();
                    acc.write(slot, Output::Kulisch, &mut b).unwrap();
                    assert_eq!(a, b, "slot {slot} as {out:?}");
                    slot += 1;
                }
            }
        }
        assert_eq!(slot, n);
    }
}
