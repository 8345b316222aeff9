//! The pipelined Kulisch lane (prism_kulisch_lane_pipe) against the
//! independent big-integer oracle (arith/tests/oracle): each (slot, term)
//! streamed one a cycle must give the slot's integer plus the term's exact
//! value, wrapped to 320-bit two's complement, and the flags by the flag
//! rules; with `en` dropped on random cycles nothing is lost or repeated;
//! and chained rounds of terms give the oracle's exact sums. As a second
//! check every result is also compared bit for bit with the combinational
//! prism_kulisch_lane (KulischUnits).

mod slots;
use slots::{int_of_words, oracle, value_of, words_of};

use num_bigint::BigInt;
use num_traits::Zero;
use oracle::V;
use prism_rtl::{KulischLanePipe, KulischUnits, PipeRun, Slot, Term};

mod common;
use common::Rng;

/// The term's exact value, by the oracle (FP32 through f64, Kulisch by its state).
fn term_value(t: &Term) -> V {
    match t {
        Term::Fp32(b) => oracle::of_f32_bits(*b),
        Term::Kulisch { state, words } => match state {
            0 => V::Finite(int_of_words(words)),
            1 => V::Zero(false),
            2 => V::Zero(true),
            3 => V::Inf(false),
            4 => V::Inf(true),
            _ => V::NaN,
        },
    }
}

/// One lane step by the oracle: the integer plus the term's (wrapped), and
/// the flags {any, not -0, NaN, +inf, -inf} the term sets.
fn expected(s: &Slot, t: &Term) -> Slot {
    let v = term_value(t);
    let mut flags = s.flags | 0b10000;
    let mut k = int_of_words(&s.words);
    match &v {
        V::NaN => flags |= 0b01100,
        V::Inf(false) => flags |= 0b01010,
        V::Inf(true) => flags |= 0b01001,
        V::Zero(true) => {}
        V::Zero(false) => flags |= 0b01000,
        V::Finite(x) => {
            flags |= 0b01000;
            k += x;
        }
    }
    Slot { words: words_of(&k), flags }
}

fn random_words(r: &mut Rng) -> [u32; 10] {
    let mut w = [0u32; 10];
    for x in &mut w {
        *x = r.next() as u32;
    }
    w
}

/// An accumulator: random, small, carry-chain patterns (runs of ones and
/// zeros that a carry or borrow must cross), and near +-2^319.
fn random_acc(r: &mut Rng) -> BigInt {
    let one = BigInt::from(1);
    let top = &one << 319usize;
    let small = BigInt::from(r.next() % 1000) - 500;
    match r.next() % 10 {
        0 | 1 => int_of_words(&random_words(r)),
        2 => small,
        3 => &top - 1 - (BigInt::from(r.next() % 4) << (r.next() % 300) as usize),
        4 => -&top + (BigInt::from(r.next() % 4) << (r.next() % 300) as usize),
        5 => (&one << (r.next() % 320) as usize) - 1,
        6 => -(&one << (r.next() % 320) as usize),
        7 => {
            // A run of ones over a segment boundary with random bits around.
            let lo = (r.next() % 300) as usize;
            let len = 1 + (r.next() % 100) as usize;
            let run = ((&one << len) - 1) << lo;
            run ^ (BigInt::from(r.next() % 256) << (lo + len).min(310))
        }
        8 => BigInt::from(r.next()) << (r.next() % 256) as usize,
        _ => int_of_words(&random_words(r)) >> (r.next() % 320) as usize,
    }
}

/// An FP32 term over the whole range.
fn random_fp32(r: &mut Rng) -> u32 {
    let sign = (r.next() as u32) & 0x8000_0000;
    match r.next() % 16 {
        0 => sign,
        1 => 0x7F80_0000 | sign,
        2 => sign | 0x7F80_0000 | ((r.next() as u32) & 0x7F_FFFF).max(1),
        3 | 4 => sign | ((r.next() as u32) & 0x7F_FFFF),
        5 | 6 => sign | (0xFE << 23) | ((r.next() as u32) & 0x7F_FFFF),
        7 => sign | [0x7F7F_FFFF, 0x0000_0001, 0x0080_0000, 0x007F_FFFF, 0x3F80_0000][(r.next() % 5) as usize],
        8..=11 => sign | (((r.next() % 255) as u32) << 23) | ((r.next() as u32) & 0x7F_FFFF),
        _ => r.next() as u32,
    }
}

/// A Kulisch value of any state (0 FINITE .. 5 NaN and the other NaN codes),
/// with random or extreme integers (ignored by the lane unless FINITE).
fn random_kulisch(r: &mut Rng) -> Term {
    let state = match r.next() % 10 {
        0..=3 => 0u8,
        4 => 1,
        5 => 2,
        6 => 3,
        7 => 4,
        8 => 5,
        _ => 6 + (r.next() % 250) as u8,
    };
    let one = BigInt::from(1);
    let k = match r.next() % 8 {
        0 | 1 => int_of_words(&random_words(r)),
        2 => (&one << 319usize) - 1,
        3 => -(&one << 319usize),
        4 => BigInt::from(-1),
        5 => BigInt::zero(),
        6 => BigInt::from(r.next()) << (r.next() % 256) as usize,
        _ => -(BigInt::from(r.next()) << (r.next() % 256) as usize),
    };
    Term::Kulisch { state, words: words_of(&k) }
}

fn random_ops(r: &mut Rng, n: usize) -> Vec<(Slot, Term)> {
    (0..n)
        .map(|_| {
            let slot = Slot { words: words_of(&random_acc(r)), flags: (r.next() % 32) as u8 };
            let term = if r.next().is_multiple_of(3) { random_kulisch(r) } else { Term::Fp32(random_fp32(r)) };
            (slot, term)
        })
        .collect()
}

/// Every exponent, both signs, edge significands, on accumulators that make
/// carries and borrows cross every segment (0, -1, +-2^319 edges).
fn sweep_ops(r: &mut Rng) -> Vec<(Slot, Term)> {
    let one = BigInt::from(1);
    let accs = [BigInt::zero(), BigInt::from(-1), (&one << 319usize) - 1, -(&one << 319usize), int_of_words(&random_words(r))];
    let mut ops = Vec::new();
    for e in 0..256u32 {
        for sign in [0, 0x8000_0000u32] {
            for frac in [0u32, 1, 0x7F_FFFF, (r.next() as u32) & 0x7F_FFFF] {
                for acc in &accs {
                    let slot = Slot { words: words_of(acc), flags: (r.next() % 32) as u8 };
                    ops.push((slot, Term::Fp32(sign | (e << 23) | frac)));
                }
            }
        }
    }
    ops
}

/// Streams `ops` through the pipelined lane and checks every result against
/// the oracle, then against the combinational lane.
fn check(ops: &[(Slot, Term)], stall_seed: u64, what: &str) -> PipeRun {
    let (got, run) = KulischLanePipe::new().add(ops, stall_seed);
    assert_eq!(run.sums, ops.len(), "{what}: every operation gives one result, none lost or repeated");
    let mut bad = 0;
    for (i, ((s, t), g)) in ops.iter().zip(&got).enumerate() {
        let want = expected(s, t);
        if *g != want {
            if bad < 5 {
                eprintln!(
                    "{what} #{i}: acc {} flags {:05b} + {t:?}: pipe {} flags {:05b}, oracle {} flags {:05b}",
                    int_of_words(&s.words),
                    s.flags,
                    int_of_words(&g.words),
                    g.flags,
                    int_of_words(&want.words),
                    want.flags
                );
            }
            bad += 1;
        }
    }
    assert_eq!(bad, 0, "{what}: {bad} of {} results differ from the oracle", ops.len());
    let mut comb = KulischUnits::new();
    for (i, ((s, t), g)) in ops.iter().zip(&got).enumerate() {
        assert_eq!(*g, comb.add(s, *t), "{what} #{i}: pipelined and combinational lanes differ");
    }
    run
}

#[test]
fn pipelined_lane_matches_the_oracle_at_one_result_a_cycle() {
    let mut r = Rng(0x6A09_E667_F3BC_C908);
    let ops = random_ops(&mut r, 20_000);
    let run = check(&ops, 0, "random");
    // The first result LATENCY cycles after the first operation, then one a cycle.
    assert_eq!(run.cycles, ops.len() as u64 + u64::from(KulischLanePipe::latency()) - 1, "one operation a cycle");
    let ops = sweep_ops(&mut r);
    let run = check(&ops, 0, "exponent sweep");
    assert_eq!(run.cycles, ops.len() as u64 + u64::from(KulischLanePipe::latency()) - 1, "one operation a cycle");
}

/// A slot at rest (the ring's flag) reads as 0 without flags whatever its
/// words and flags hold: the result is the term alone, by the oracle.
#[test]
fn a_slot_at_rest_reads_as_zero() {
    let mut r = Rng(0x510E_527F_ADE6_82D1);
    let ops = random_ops(&mut r, 8_000);
    let rest: Vec<bool> = (0..ops.len()).map(|_| r.next() % 2 == 0).collect();
    let (got, run) = KulischLanePipe::new().add_at_rest(&ops, &rest, 0x2545_F491);
    assert_eq!(run.sums, ops.len(), "every operation gives one result");
    let mut comb = KulischUnits::new();
    let mut at_rest = 0;
    for (i, (((s, t), g), &z)) in ops.iter().zip(&got).zip(&rest).enumerate() {
        let slot = if z { Slot::default() } else { *s };
        assert_eq!(*g, expected(&slot, t), "#{i} (at rest: {z}): the pipe differs from the oracle");
        assert_eq!(*g, comb.add(&slot, *t), "#{i}: pipelined and combinational lanes differ");
        at_rest += usize::from(z && (s.flags != 0 || s.words != [0; 10]));
    }
    assert!(at_rest > ops.len() / 4, "{at_rest} slots at rest held non-zero words or flags");
}

/// `en` low on about a quarter of the cycles: what is in flight holds.
#[test]
fn pipelined_lane_holds_its_stages_when_stalled() {
    let mut r = Rng(0xBB67_AE85_84CA_A73B);
    let ops = random_ops(&mut r, 12_000);
    let run = check(&ops, 0x9E37_79B9, "stalled");
    let n = ops.len() as u64;
    assert!(run.cycles > n + n / 8, "the stalls took cycles ({})", run.cycles);
    assert!(run.cycles < n + n / 2 + 64, "about a quarter of the cycles stalled ({})", run.cycles);
}

/// Each slot's terms fed back round after round (the lane as the node uses
/// it): the slot's meaning must be the oracle's exact sum, NaN, infinities
/// and signed zeros included.
#[test]
fn chained_rounds_give_the_oracles_exact_sums() {
    let mut r = Rng(0x3C6E_F372_FE94_F82B);
    let slots = 2_000;
    let mut state: Vec<Slot> = vec![Slot::default(); slots];
    let mut terms: Vec<Vec<V>> = vec![Vec::new(); slots];
    let mut finite = 0;
    for round in 0..8u64 {
        let mut ops = Vec::with_capacity(slots);
        for (i, s) in state.iter().enumerate() {
            // Few specials, so that most sums stay finite; Kulisch integers
            // below 2^300 so that eight of them cannot overflow 320 bits.
            let t = match r.next() % 40 {
                0 => Term::Kulisch { state: 1 + (r.next() % 5) as u8, words: random_words(&mut r) },
                1..=7 => {
                    let k = BigInt::from(r.next()) << (r.next() % 236) as usize;
                    Term::Kulisch { state: 0, words: words_of(&if r.next().is_multiple_of(2) { -k } else { k }) }
                }
                8 => Term::Fp32([0x8000_0000, 0, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000][(r.next() % 5) as usize]),
                _ => {
                    let b = random_fp32(&mut r);
                    Term::Fp32(if (b >> 23) & 0xFF == 0xFF { b & 0x807F_FFFF } else { b })
                }
            };
            terms[i].push(term_value(&t));
            ops.push((*s, t));
        }
        let seed = if round % 2 == 1 { 0x1234_5678 + round } else { 0 };
        let (out, run) = KulischLanePipe::new().add(&ops, seed);
        assert_eq!(run.sums, slots, "round {round}");
        state = out;
    }
    for (i, s) in state.iter().enumerate() {
        let want = oracle::sum(&terms[i]);
        assert_eq!(value_of(s), want, "slot {i}: terms {:?}", terms[i]);
        finite += matches!(want, V::Finite(_)) as usize;
    }
    assert!(finite > slots / 4, "{finite} finite sums");
}

/// The DSP48E2 wrappers by rtl/check_dsp.sh's testbenches: this lane's adds
/// (prism_dsp_add48) and the FP32 lane's alignment and add
/// (prism_dsp_mul_add), each behavioural twin (the branch every RTL test
/// simulates) against its testbench's own expectation with `en` dropped on
/// random cycles.
/// (Its DSP48E2 branch needs Xilinx's simulation model, which CI does not
/// have: docs/rtl.md gives that check's result.)
#[test]
fn the_dsp_wrappers_twins_pass_their_testbenches() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new("bash").arg(format!("{dir}/check_dsp.sh")).env("CHECK_DSP_CYCLES", "20000").output().expect("bash runs rtl/check_dsp.sh (scripts/test.sh installs iverilog)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "check_dsp.sh failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for m in ["prism_dsp_add48", "prism_dsp_mul_add"] {
        assert!(text.contains(&format!("check_dsp: {m}, the behavioural twin passed")), "{m} not checked:\n{text}");
    }
    assert!(text.contains("RESULT AB_ENABLE=1: ") && text.contains("differences, "), "{text}");
}
