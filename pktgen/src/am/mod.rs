//! The Aggregation Manager that SINGLE jobs (`run`) and tree jobs
//! (`run_tree`) share: the session on the link (`Session`, the one clock),
//! CONTROL transactions (`control`), and the ranks' traffic (`ranks`).
//! `run` and `tree` keep only what differs: which nodes to set up, and how
//! their results are judged.

pub mod control;
pub mod ranks;

use crate::link::{Link, Rx};
use prism_dataplane::engine::Sent;
use prism_dataplane::pcap::Captured;
use std::time::{Duration, Instant};

/// Why the AM could not finish a step with a node.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AmError {
    #[error("I/O: {0}")]
    Io(String),
    /// No answer to any of the request's tries.
    #[error("no answer to {command} ({tries} tries, {} ms apart)", spacing.as_millis())]
    NoAnswer { command: &'static str, tries: u32, spacing: Duration },
    /// An ACK with a status other than OK.
    #[error("{command} refused: {status} (detail {detail})")]
    Refused { command: &'static str, status: &'static str, detail: u16 },
}

/// The AM's side of the link: every frame it sends and receives, counted
/// (and kept with `capture`), and time as the link tells it.
pub struct Session<'a> {
    link: &'a mut dyn Link,
    start: Instant,
    capture: Option<Vec<Captured>>,
    pub sent: u64,
    pub received: u64,
}

impl<'a> Session<'a> {
    pub fn new(link: &'a mut dyn Link, capture: bool) -> Self {
        let start = link.now();
        Session { link, start, capture: capture.then(Vec::new), sent: 0, received: 0 }
    }

    /// The link's clock, the only one the AM reads: wall time, or simulated
    /// time for a simulated switch.
    pub fn now(&self) -> Instant {
        self.link.now()
    }

    pub fn send(&mut self, port: u16, frame: &[u8]) -> Result<(), AmError> {
        self.link.send(port, frame).map_err(|e| AmError::Io(format!("send on port {port}: {e}")))?;
        self.sent += 1;
        if let Some(c) = &mut self.capture {
            c.push(Captured { ts: self.link.now().saturating_duration_since(self.start), data: frame.to_vec() });
        }
        Ok(())
    }

    /// Sends every frame in `out`, emptying it.
    pub fn flush(&mut self, out: &mut Vec<Sent>) -> Result<(), AmError> {
        for f in out.drain(..) {
            self.send(f.port, &f.frame)?;
        }
        Ok(())
    }

    pub fn recv(&mut self, timeout: Duration) -> Result<Option<Rx>, AmError> {
        let r = self.link.recv(timeout).map_err(|e| AmError::Io(format!("receive: {e}")))?;
        if let Some(rx) = &r {
            self.received += 1;
            if let Some(c) = &mut self.capture {
                c.push(Captured { ts: rx.at.saturating_duration_since(self.start), data: rx.frame.clone() });
            }
        }
        Ok(r)
    }

    /// A received frame's buffer, for the link to fill again.
    pub fn recycle(&mut self, frame: Vec<u8>) {
        self.link.recycle(frame);
    }

    /// Every frame kept, sent and received, in order.
    pub fn take_capture(&mut self) -> Vec<Captured> {
        self.capture.take().unwrap_or_default()
    }
}
