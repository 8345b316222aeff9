//! CONTROL transactions of the AM with one node: a request sent again with
//! the identical bytes (the same Transaction ID) until it is answered, the
//! CAPS_RESPONSE pages gathered, and an ACK's status made a typed error.

use super::{AmError, Session};
use prism_dataplane::fixtures::control_frame;
use prism_dataplane::wire::*;
use std::time::Duration;

/// A node as its AM reaches it: the link port its CONTROL leaves on, and the
/// MAC it answers from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub mac: Mac,
    pub port: u16,
}

/// How often a request is sent before the node counts as silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    pub tries: u32,
    /// How long each try waits for its answer.
    pub spacing: Duration,
}

/// One operation's CONTROL as its AM sends it.
#[derive(Debug, Clone, Copy)]
pub struct Control {
    pub identity: Identity,
    pub am_mac: Mac,
    pub retry: Retry,
}

impl Control {
    /// One transaction: the ACK frame (status OK), or every CAPS_RESPONSE
    /// page. `txn` must be new for the node unless this is the same request
    /// again: a node answers a Transaction ID it has seen from its record.
    pub fn transact(&self, s: &mut Session<'_>, to: Peer, txn: u32, command: Command, body: ControlBody<'_>) -> Result<Vec<Vec<u8>>, AmError> {
        self.transact_with(s, to, txn, command, body, self.retry)
    }

    /// `transact` with its own tries, e.g. a first contact that waits for a switch still coming up.
    pub fn transact_with(&self, s: &mut Session<'_>, to: Peer, txn: u32, command: Command, body: ControlBody<'_>, retry: Retry) -> Result<Vec<Vec<u8>>, AmError> {
        let request = control_frame(self.identity, self.am_mac, to.mac, txn, command, body);
        let tries = retry.tries.max(1);
        for _ in 0..tries {
            s.send(to.port, &request)?;
            let deadline = s.now() + retry.spacing;
            let mut pages: Vec<Vec<u8>> = Vec::new();
            while s.now() < deadline {
                let Some(rx) = s.recv(Duration::from_millis(20))? else { continue };
                let Ok(ParsedFrame { eth, prism: Some(PrismRepr::Control(c)) }) = parse_frame(&rx.frame, &Limits::default()) else { continue };
                if eth.dst != self.am_mac || eth.src != to.mac || c.txn != txn || c.identity != self.identity {
                    continue;
                }
                match (c.command, c.body) {
                    (Command::ACK, ControlBody::Ack { status, body }) if status != AckStatus::OK => {
                        return Err(AmError::Refused { command: command.name(), status: status.name(), detail: body.detail });
                    }
                    (Command::ACK, _) => return Ok(vec![rx.frame]),
                    (Command::CAPS_RESPONSE, _) => {
                        let count = c.frag_count as usize;
                        if !pages.contains(&rx.frame) {
                            pages.push(rx.frame);
                        }
                        if pages.len() == count {
                            return Ok(pages);
                        }
                    }
                    _ => {}
                }
            }
        }
        Err(AmError::NoAnswer { command: command.name(), tries, spacing: retry.spacing })
    }
}

/// The first capability record in CAPS_RESPONSE `pages` that `fits`.
pub fn find_record(pages: &[Vec<u8>], fits: impl Fn(&CapabilityRecord) -> bool) -> Option<CapabilityRecord> {
    pages.iter().find_map(|f| match parse_frame(f, &Limits::default()) {
        Ok(ParsedFrame { prism: Some(PrismRepr::Control(ControlRepr { body: ControlBody::Caps(records), .. })), .. }) => records.iter().find(|r| fits(r)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{Link, Rx};
    use prism_dataplane::fixtures::{AM_EP, SWITCH_EP};
    use prism_dataplane::golden::sample_capability;
    use std::collections::VecDeque;
    use std::io;
    use std::time::Instant;

    use prism_dataplane::fixtures::{AM_MAC as AM, SWITCH_MAC as NODE};
    const IDENTITY: Identity = Identity { job: 7, group: 1, group_gen: 1, op: 1, op_gen: 1 };

    /// A node on simulated time: what the AM sent, and answers queued by the test.
    struct Scripted {
        sent: Vec<Vec<u8>>,
        answers: VecDeque<Vec<u8>>,
        t0: Instant,
        clock: Duration,
    }

    impl Scripted {
        fn new(answers: Vec<Vec<u8>>) -> Self {
            Scripted { sent: Vec::new(), answers: answers.into(), t0: Instant::now(), clock: Duration::ZERO }
        }
    }

    impl Link for Scripted {
        fn send(&mut self, _port: u16, frame: &[u8]) -> io::Result<()> {
            self.sent.push(frame.to_vec());
            Ok(())
        }
        /// An answer is there at once; without one the whole wait passes.
        fn recv(&mut self, timeout: Duration) -> io::Result<Option<Rx>> {
            match self.answers.pop_front() {
                Some(frame) => Ok(Some(Rx { port: 0, frame, at: self.now() })),
                None => {
                    self.clock += timeout;
                    Ok(None)
                }
            }
        }
        fn describe(&self) -> String {
            "scripted node".into()
        }
        fn now(&self) -> Instant {
            self.t0 + self.clock
        }
    }

    fn reply(txn: u32, command: Command, frag: (u8, u8), body: ControlBody<'_>) -> Vec<u8> {
        let p = PrismRepr::Control(ControlRepr { identity: IDENTITY, txn, src_ep: SWITCH_EP, dst_ep: AM_EP, command, frag_index: frag.0, frag_count: frag.1, body });
        let mut f = vec![0; p.frame_len()];
        p.emit_frame(&EthernetRepr { dst: AM, src: NODE, ethertype: ETHERTYPE }, &mut f);
        f
    }

    fn control(spacing: Duration) -> Control {
        Control { identity: IDENTITY, am_mac: AM, retry: Retry { tries: 3, spacing } }
    }
    const PEER: Peer = Peer { mac: NODE, port: 0 };

    #[test]
    fn a_silent_node_gets_the_identical_request_each_try_on_the_links_clock() {
        let mut link = Scripted::new(Vec::new());
        let wall = Instant::now();
        let mut s = Session::new(&mut link, false);
        let e = control(Duration::from_secs(10)).transact(&mut s, PEER, 17, Command::COMMIT, ControlBody::Empty).unwrap_err();
        assert_eq!(e, AmError::NoAnswer { command: "COMMIT", tries: 3, spacing: Duration::from_secs(10) });
        // Thirty seconds of the link's time, not of the wall's.
        assert!(wall.elapsed() < Duration::from_secs(10), "waited on the wall clock: {:?}", wall.elapsed());
        assert_eq!(link.sent.len(), 3);
        assert!(link.sent.iter().all(|f| f == &link.sent[0]), "every try is the same bytes");
        let Ok(ParsedFrame { prism: Some(PrismRepr::Control(c)), .. }) = parse_frame(&link.sent[0], &Limits::default()) else { panic!("not CONTROL") };
        assert_eq!((c.txn, c.command), (17, Command::COMMIT));
    }

    #[test]
    fn a_refusal_is_typed_and_answers_for_others_are_passed_over() {
        let refusal = |txn| reply(txn, Command::ACK, (0, 1), ControlBody::Ack { status: AckStatus::NO_RESOURCES, body: AckBody { command: Command::STAGE, detail: 4 } });
        // An ACK of another transaction comes first: it is not this one's answer.
        let mut link = Scripted::new(vec![refusal(5), refusal(6)]);
        let mut s = Session::new(&mut link, false);
        let e = control(Duration::from_millis(300)).transact(&mut s, PEER, 6, Command::STAGE, ControlBody::Empty).unwrap_err();
        assert_eq!(e, AmError::Refused { command: "STAGE", status: "NO_RESOURCES", detail: 4 });
        assert_eq!(link.sent.len(), 1, "answered on the first try");
    }

    #[test]
    fn caps_pages_are_gathered_once_each() {
        let records = [sample_capability(FormatCode::FP32, AccumulatorPolicy::KULISCH_FIXED, OutputFormat::FP32)];
        let page = |i| reply(9, Command::CAPS_RESPONSE, (i, 2), ControlBody::Caps(Records::Typed(&records)));
        let mut link = Scripted::new(vec![page(0), page(0), page(1)]);
        let mut s = Session::new(&mut link, false);
        let pages = control(Duration::from_millis(500)).transact(&mut s, PEER, 9, Command::CAPS_QUERY, ControlBody::Empty).unwrap();
        assert_eq!(pages, vec![page(0), page(1)]);
        assert_eq!(find_record(&pages, |r| r.accumulator == AccumulatorPolicy::KULISCH_FIXED), Some(records[0]));
        assert_eq!(find_record(&pages, |r| r.accumulator == AccumulatorPolicy::FP32_ARRIVAL), None);
    }
}
