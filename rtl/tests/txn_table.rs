//! prism_txn_table (prism_node's CONTROL transaction records and retired
//! generations) against a reference written here from the node's former
//! one-cycle tables: the lookup's answer LATENCY cycles after it, writes
//! that apply to the last lookup's request, round robin replacement,
//! a STAGE's purge of older generations and the retire rule. Driven as the
//! engine drives it: a lookup (repeated while a frame waits), its answer,
//! then that frame's writes, the next lookup as early as the cycle of the
//! last write.

use prism_rtl::{TxnIn, TxnOut, TxnTable};

mod common;
use common::Rng;

const TXN_SLOTS: usize = 16;
const RETIRED_SLOTS: usize = 8;

#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Req {
    key: [u32; 3],
    txn: u32,
    gen: u64,
    crc: u32,
    len: u16,
}

#[derive(Clone, Copy, Debug)]
struct Rec {
    req: Req,
    status: u8,
    detail: u16,
}

/// The tables as prism_node kept them before (a loop over the records, the
/// highest matching index taken).
#[derive(Default)]
struct Reference {
    t: [Option<Rec>; TXN_SLOTS],
    t_next: usize,
    r: [Option<([u32; 3], u64)>; RETIRED_SLOTS],
    r_next: usize,
}

#[derive(Debug, PartialEq, Eq)]
struct Answer {
    hit: bool,
    same: bool,
    status: u8,
    detail: u16,
    stale: bool,
}

impl Reference {
    fn lookup(&self, q: &Req) -> Answer {
        let mut a = Answer { hit: false, same: false, status: 0, detail: 0, stale: false };
        for rec in self.t.iter().flatten() {
            if rec.req.key == q.key && rec.req.txn == q.txn {
                a = Answer { hit: true, same: rec.req.crc == q.crc && rec.req.len == q.len, status: rec.status, detail: rec.detail, stale: false };
            }
        }
        a.stale = self.r.iter().flatten().any(|&(k, g)| k == q.key && q.gen <= g);
        a
    }

    fn insert(&mut self, q: &Req, status: u8, detail: u16) {
        self.t[self.t_next] = Some(Rec { req: *q, status, detail });
        self.t_next = (self.t_next + 1) % TXN_SLOTS;
    }

    fn purge(&mut self, q: &Req) {
        for e in &mut self.t {
            if e.is_some_and(|r| r.req.key == q.key && r.req.gen < q.gen) {
                *e = None;
            }
        }
    }

    fn retire(&mut self, q: &Req) {
        let mut found = false;
        for e in self.r.iter_mut().flatten() {
            if e.0 == q.key {
                e.1 = q.gen;
                found = true;
            }
        }
        if !found {
            self.r[self.r_next] = Some((q.key, q.gen));
            self.r_next = (self.r_next + 1) % RETIRED_SLOTS;
        }
    }
}

fn input(q: &Req) -> TxnIn {
    TxnIn { key: q.key, txn: q.txn, crc: q.crc, gen: q.gen, len: q.len, ..TxnIn::default() }
}

/// A request from small pools, so that keys, transactions, CRCs and
/// generations repeat (hits, conflicts, purges, stale keys), generations
/// sometimes at the top of the 48 bits.
fn request(rng: &mut Rng) -> Req {
    let k = rng.next() % 10;
    // A retired key's generation only grows (a retire needs a newer one), so
    // the 48-bit edges are rare: after one, that key is stale until a reset.
    let gen = match rng.next() % 128 {
        0 => 0xFFFF_FFFF_FFFF - rng.next() % 3,
        1 => 0x8000_0000_0000 + rng.next() % 3,
        _ => rng.next() % 8,
    };
    Req {
        key: [0x1000 + k as u32, if k % 4 == 1 { 0xDEAD_BEEF } else { 7 }, 0x0101_0000 * (k as u32 % 3)],
        txn: (rng.next() % 12) as u32 | if rng.next() % 16 == 0 { 0x8000_0000 } else { 0 },
        gen,
        crc: (rng.next() % 3) as u32 * 0x1234_5678,
        len: 48 + (rng.next() % 2) as u16 * 16,
    }
}

fn answer(o: &TxnOut) -> Answer {
    Answer { hit: o.hit != 0, same: o.same != 0, status: o.status, detail: o.detail, stale: o.stale != 0 }
}

/// Frames as the engine handles them, against the reference: every answer,
/// its cycle, and the busy flag while it is in flight.
#[test]
fn lookups_and_writes_match_the_reference() {
    let lat = TxnTable::latency() as usize;
    let mut rng = Rng(0x05EE_D0F7_A81E);
    let mut hw = TxnTable::new();
    let mut sw = Reference::default();
    let reset = TxnIn { rst: 1, ..TxnIn::default() };
    hw.cycle(&reset);
    hw.cycle(&reset);
    // The writes of the frame before, to be given in the next frame's first cycle or before it.
    let mut pending: Vec<TxnIn> = Vec::new();
    let (mut hits, mut sames, mut stales, mut purges, mut retires, mut inserts) = (0, 0, 0, 0, 0, 0);
    for frame in 0..20_000 {
        if frame % 2_000 == 1_999 {
            // A reset empties both tables (and forgets any lookup in flight).
            for p in pending.drain(..) {
                hw.cycle(&p);
            }
            hw.cycle(&TxnIn { rst: 1, l_valid: 1, ..input(&request(&mut rng)) });
            sw = Reference::default();
        }
        let q = request(&mut rng);
        // The frame may wait in DISPATCH: its lookup is presented in each of those cycles.
        let waits = if rng.next() % 4 == 0 { 1 + rng.next() % 3 } else { 0 };
        for w in 0..=waits {
            let mut inp = input(&q);
            inp.l_valid = 1;
            // The last write of the frame before may share the lookup's first cycle.
            if w == 0 {
                if let Some(last) = pending.pop() {
                    for p in pending.drain(..) {
                        hw.cycle(&p);
                    }
                    inp.w_insert = last.w_insert;
                    inp.w_status = last.w_status;
                    inp.w_detail = last.w_detail;
                    inp.w_purge = last.w_purge;
                    inp.w_retire = last.w_retire;
                }
            }
            let o = hw.cycle(&inp);
            // A lookup starts over while one is in flight: none answers yet.
            assert_eq!(o.valid, 0, "frame {frame}, wait {w}: m_valid for an earlier lookup");
        }
        // Its answer: LATENCY cycles after the last lookup, busy until then.
        let mut o = TxnOut::default();
        for c in 1..=lat {
            o = hw.cycle(&TxnIn::default());
            assert_eq!(o.busy, u8::from(c < lat), "frame {frame}, cycle {c}: m_busy");
            // Only the last lookup answers (those before it, a wait in DISPATCH, started over).
            assert_eq!(o.valid, u8::from(c == lat), "frame {frame}, cycle {c}: m_valid");
        }
        let want = sw.lookup(&q);
        let got = answer(&o);
        if want.hit {
            assert_eq!(got, want, "frame {frame}: {q:?}");
        } else {
            // Without a hit only the flags say anything (status and detail are 0).
            assert_eq!(got, Answer { status: 0, detail: 0, ..want }, "frame {frame}: {q:?}");
        }
        hits += usize::from(want.hit);
        sames += usize::from(want.hit && want.same);
        stales += usize::from(want.stale);
        // The answer holds while idle cycles pass.
        for _ in 0..(rng.next() % 3) {
            let o2 = hw.cycle(&TxnIn::default());
            assert_eq!(answer(&o2), got, "frame {frame}: the answer must hold");
        }
        // The frame's writes (the engine's: a retire a cycle after C_APPLY,
        // an insert with the purge a cycle after C_REPLY; a hit writes nothing).
        if !want.hit && rng.next() % 8 != 0 {
            if !want.stale && rng.next() % 2 == 0 {
                pending.push(TxnIn { w_retire: 1, ..TxnIn::default() });
                sw.retire(&q);
                retires += 1;
                for _ in 0..(rng.next() % 2) {
                    pending.push(TxnIn::default());
                }
            }
            let status = (rng.next() % 14) as u8;
            let detail = rng.next() as u16;
            let purge = rng.next() % 3 == 0;
            pending.push(TxnIn { w_insert: 1, w_status: status, w_detail: detail, w_purge: u8::from(purge), ..TxnIn::default() });
            if purge {
                sw.purge(&q);
                purges += 1;
            }
            sw.insert(&q, status, detail);
            inserts += 1;
            // Sometimes idle cycles before the next frame's lookup.
            if rng.next() % 2 == 0 {
                for _ in 0..(1 + rng.next() % 2) {
                    pending.push(TxnIn::default());
                }
            }
        }
    }
    // The mix the run exercised: each case many times.
    let conflicts = hits - sames;
    eprintln!("hits {hits}, identical retries {sames}, conflicts {conflicts}, stale {stales}, purges {purges}, retires {retires}, inserts {inserts}");
    for (name, n) in [("hits", hits), ("identical retries", sames), ("conflicts", conflicts), ("stale", stales), ("purges", purges), ("retires", retires), ("inserts", inserts)] {
        assert!(n > 100, "{name}: {n}");
    }
}
