//! The sender and receiver of a direct stream (engine::stream) alone, over a
//! lossy, reordering channel driven by a seeded RNG: the replay queue never
//! holds more than its depth, no frame is sent after its acknowledgement,
//! every frame is delivered (and sent for the first time once), and an idle
//! stream has no timer.

use prism_dataplane::engine::stream::{emit_progress, Credit};
use prism_dataplane::engine::{Replay, RxWindow, Sent};
use prism_dataplane::golden::IDENTITY;
use prism_dataplane::wire::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};

/// A frame of the stream: Packet ID and element range in the payload (no PRISM header needed here).
fn frame(pid: u32, first: u64, end: u64) -> Vec<u8> {
    let mut f = pid.to_le_bytes().to_vec();
    f.extend(first.to_le_bytes());
    f.extend(end.to_le_bytes());
    f
}

fn read(f: &[u8]) -> (u32, u64, u64) {
    (u32::from_le_bytes(f[0..4].try_into().unwrap()), u64::from_le_bytes(f[4..12].try_into().unwrap()), u64::from_le_bytes(f[12..20].try_into().unwrap()))
}

fn progress(rx: &mut RxWindow, pid: u32, status: ProgressStatus, flags: u8, credit: Credit) -> Vec<u8> {
    let b = BindingRecord { directions: 0, peer_kind: PeerKind::RANK, stream_id: 0, local_ep: 1, peer_ep: 2, peer_mac: Mac([2, 0, 0, 0, 0, 1]), port: 0, rank: 0, terms: 1 };
    let cov = rx.coverage();
    let mut out: Vec<Sent> = Vec::new();
    emit_progress(&mut out, IDENTITY, Mac([2, 0, 0, 0, 0, 2]), &b, pid, status, flags, &cov, credit);
    out.pop().unwrap().frame
}

#[test]
fn replay_invariants_over_a_lossy_reordering_channel() {
    for seed in 0..200u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let depth = rng.gen_range(1..12usize);
        let max_held = rng.gen_range(2..20usize);
        let frames_total = rng.gen_range(1..150u64);
        let loss = rng.gen_range(0.0..0.3);
        let mut tx = Replay::new(0, depth, 64, max_held as u32, 1 << 20, 1_000);
        let mut rx = RxWindow::new(max_held);
        let mut acked: BTreeSet<u32> = BTreeSet::new();
        let mut ranges: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
        let mut wire_to_rx: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut wire_to_tx: Vec<(u64, Vec<u8>)> = Vec::new();
        let (mut next, mut now) = (0u64, 0u64);
        let mut out: Vec<Sent> = Vec::new();
        for step in 0..200_000 {
            if rx.committed() >= frames_total * 10 && tx.is_idle() {
                break;
            }
            assert!(step < 199_999, "seed {seed}: not delivered (committed {}, pending {})", rx.committed(), tx.pending());
            now += rng.gen_range(1..300);
            while tx.has_room() && next < frames_total {
                let (first, end) = (next * 10, next * 10 + 10);
                tx.push(now, &mut out, Some((first, end)), 20, |pid, buf| {
                    buf.copy_from_slice(&frame(pid, first, end));
                    ranges.insert(pid, (first, end));
                });
                next += 1;
            }
            assert!(tx.pending() <= depth, "seed {seed}: {} frames kept, depth {depth}", tx.pending());
            if tx.deadline().is_some_and(|d| d <= now) {
                tx.on_timeout(now, &mut out);
            }
            // What the sender put on the wire: never an acknowledged frame.
            for s in out.drain(..) {
                let (pid, first, end) = read(&s.frame);
                assert!(!acked.contains(&pid), "seed {seed}: packet {pid} sent after its acknowledgement");
                assert_eq!(ranges[&pid], (first, end));
                if !rng.gen_bool(loss) {
                    wire_to_rx.push((now + rng.gen_range(1..2_000), s.frame));
                }
            }
            // Deliver what is due, in random order.
            wire_to_rx.sort_by_key(|w| w.0);
            let due: Vec<Vec<u8>> = {
                let k = wire_to_rx.partition_point(|w| w.0 <= now);
                let mut d: Vec<Vec<u8>> = wire_to_rx.drain(..k).map(|w| w.1).collect();
                let n = d.len();
                for i in 0..n {
                    d.swap(i, rng.gen_range(i..n));
                }
                d
            };
            for f in due {
                let (pid, first, end) = read(&f);
                let status = match rx.check(pid, first, end, 0) {
                    Ok(true) => {
                        rx.record(pid, first, end, 0);
                        ProgressStatus::ACCEPTED
                    }
                    Ok(false) => ProgressStatus::DUPLICATE,
                    Err(_) => ProgressStatus::REJECTED,
                };
                let credit = Credit { intervals: rx.free_intervals(), bytes: 1 << 20 };
                let p = progress(&mut rx, pid, status, 0, credit);
                if !rng.gen_bool(loss) {
                    wire_to_tx.push((now + rng.gen_range(1..2_000), p));
                }
            }
            wire_to_tx.sort_by_key(|w| w.0);
            let k = wire_to_tx.partition_point(|w| w.0 <= now);
            for (_, p) in wire_to_tx.drain(..k).collect::<Vec<_>>() {
                let Some(PrismRepr::Progress(pr)) = parse_frame(&p, &Limits::default()).unwrap().prism else { panic!() };
                let mut sent = Vec::new();
                tx.on_progress(now, &pr, &mut sent);
                if matches!(pr.status, ProgressStatus::ACCEPTED | ProgressStatus::DUPLICATE) {
                    acked.insert(pr.packet_id);
                }
                for (&pid, &(_, end)) in &ranges {
                    if end <= pr.committed as u64 {
                        acked.insert(pid);
                    }
                }
                // Frames this PROGRESS released were sent before later acknowledgements arrive.
                for s in &sent {
                    assert!(!acked.contains(&read(&s.frame).0), "seed {seed}: packet {} sent in answer to its own acknowledgement", read(&s.frame).0);
                }
                for s in sent {
                    if !rng.gen_bool(loss) {
                        wire_to_rx.push((now + rng.gen_range(1..2_000), s.frame));
                    }
                }
            }
        }
        assert_eq!(rx.committed(), frames_total * 10, "seed {seed}: every element delivered");
        assert!(tx.is_idle() && tx.deadline().is_none(), "seed {seed}: an idle stream has no timer");
        assert_eq!(tx.stats.sent, frames_total, "seed {seed}: each frame sent once for the first time");
    }
}
