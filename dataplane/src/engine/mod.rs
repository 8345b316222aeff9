//! The sans-IO PRISM node (issue 4). Frames and time go in, frames come out;
//! no I/O, no clocks, no threads, so the DPDK switch, pktgen's simulator and
//! the RTL differential tests can all drive the same code.
//!
//! What it does today (the SINGLE node): CONTROL from the configured
//! Aggregation Manager only, STAGE validation against the capability records,
//! COMMIT/COMPLETE/RELEASE/ABORT, idempotent retries by Transaction ID,
//! generations, CAPS_QUERY paging; DATA admitted against its binding into a
//! bounded per-contributor window, reduced by global element position, and
//! RESULT sent with the canonical packetization on every bound path.
//! Trees: LEAF and INTERNAL nodes send partials to their parent and forward
//! the RESULT that comes back; ROOT completes the reduction. With a replay
//! depth above zero every direct stream has PROGRESS and local retransmission
//! (`stream`), and the node has deadlines: `poll_timeout` says when to call
//! `handle_timeout`. Time is the caller's, in nanoseconds.

mod control;
mod counters;
pub mod digest;
mod op;
pub mod stream;

pub use control::{Node, NodeConfig, OpState, Run, Sent};
pub use counters::{CounterField, Counters};

/// Where the engine writes the frames it sends: the switch hands out mbufs
/// (the frame is built in place, no copy), tests and simulators collect `Vec`s.
pub trait Sink {
    /// A buffer of exactly `len` bytes for a frame to `port`, or `None` when
    /// nothing is free (the frame is dropped and the sink counts it).
    fn buffer(&mut self, port: u16, len: usize) -> Option<&mut [u8]>;

    /// Sends a frame that already exists as bytes.
    fn copy(&mut self, port: u16, frame: &[u8]) {
        if let Some(b) = self.buffer(port, frame.len()) {
            b.copy_from_slice(frame);
        }
    }

    /// Whether `copy_last` works: the sink can read back the frames it
    /// handed out during one call into the engine.
    fn copies_last(&self) -> bool {
        false
    }

    /// A buffer for a frame to `port` holding a copy of the frame `buffer`
    /// (or this method) last handed out for port `from` in the same call
    /// into the engine (which rewrites its header: a RESULT's body built
    /// once, on every path without a scratch copy). `None` when nothing is
    /// free (the frame is dropped and the sink counts it), as `buffer`.
    /// Called only when `copies_last` says so.
    fn copy_last(&mut self, from: u16, port: u16) -> Option<&mut [u8]> {
        let _ = (from, port);
        None
    }
}

impl Sink for Vec<Sent> {
    fn buffer(&mut self, port: u16, len: usize) -> Option<&mut [u8]> {
        self.push(Sent { port, frame: vec![0; len] });
        self.last_mut().map(|s| s.frame.as_mut_slice())
    }

    fn copies_last(&self) -> bool {
        true
    }

    fn copy_last(&mut self, from: u16, port: u16) -> Option<&mut [u8]> {
        let frame = self.iter().rev().find(|s| s.port == from)?.frame.clone();
        self.push(Sent { port, frame });
        self.last_mut().map(|s| s.frame.as_mut_slice())
    }
}
pub use op::{Admitted, DataReject, ProgressRefusal, Tally};
pub use stream::{Replay, RxWindow, StreamStats};
