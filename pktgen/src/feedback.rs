//! A rank's side of direct streams with PROGRESS (replay depth > 0), shared by
//! the single-switch run and the tree run: its DATA through the engine's
//! `Replay`, and each RESULT it receives answered from an `RxWindow`.

use prism_dataplane::engine::digest::digest;
use prism_dataplane::engine::stream::{emit_progress, Credit};
use prism_dataplane::engine::{Replay, RxWindow, Sent};
use prism_dataplane::wire::*;

/// The edge between rank `r` and its switch, seen from the rank (the
/// endpoints of `Job::bindings` and `TreeJob::stage`, swapped).
pub fn to_switch(r: u16, switch_mac: Mac, port: u16) -> BindingRecord {
    BindingRecord { directions: 0, peer_kind: PeerKind::SWITCH, stream_id: r, local_ep: 0x1000 + r, peer_ep: 0x0100 + r, peer_mac: switch_mac, port, rank: NO_RANK, terms: 0 }
}

/// Queues one DATA frame of `[first, end)`; the stream sets its Packet ID.
pub fn queue(replay: &mut Replay, now: u64, out: &mut Vec<Sent>, first: u64, end: u64, frame: &[u8]) {
    replay.push(now, out, Some((first, end)), frame.len(), |pid, buf| {
        buf.copy_from_slice(frame);
        DataPacket::new_unchecked(&mut buf[ETH_HEADER_LEN..]).set_packet_id(pid);
    });
}

/// Takes a RESULT into the rank's window: ACCEPTED when new (or the terminal
/// INEXACT), DUPLICATE for a copy, REJECTED for an overlap or changed bytes.
pub fn take_result(rx: &mut RxWindow, d: &DataRepr<'_>) -> ProgressStatus {
    if d.is_inexact() {
        return ProgressStatus::ACCEPTED;
    }
    let (first, end) = (d.first_element as u64, d.end_element());
    let dg = digest(first, end, d.body);
    match rx.check(d.packet_id, first, end, dg) {
        Ok(true) => {
            rx.record(d.packet_id, first, end, dg);
            ProgressStatus::ACCEPTED
        }
        Ok(false) => ProgressStatus::DUPLICATE,
        Err(_) => ProgressStatus::REJECTED,
    }
}

/// The PROGRESS that answers a RESULT on the edge `b`.
pub fn answer(out: &mut Vec<Sent>, identity: Identity, rank_mac: Mac, b: &BindingRecord, rx: &mut RxWindow, packet_id: u32, status: ProgressStatus) {
    let cov = rx.coverage();
    emit_progress(out, identity, rank_mac, b, packet_id, status, 0, &cov, Credit { intervals: rx.free_intervals(), bytes: 1 << 24 });
}
