//! The Verilator model of `prism_crc32c_512`: prism_node's frame digest
//! (bitwise reflected CRC-32C over every bit of every 512-bit beat, from 0,
//! no final xor) pipelined to one beat a cycle.

use std::ffi::c_void;

extern "C" {
    fn prism_crc32c_512_new() -> *mut c_void;
    fn prism_crc32c_512_free(m: *mut c_void);
    fn prism_crc32c_512_latency() -> u32;
    fn prism_crc32c_512_run(m: *mut c_void, data: *const u8, last: *const u8, idle_before: *const u32, n: usize, crcs: *mut u32, cycles: *mut u64, max_out: usize) -> usize;
}

/// Bytes in a beat (DATA_W = 512).
pub const CRC_BEAT_BYTES: usize = 64;

/// One beat as the module sees it: already masked by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrcBeat {
    /// tdata, byte b on bits 8b..8b+7.
    pub data: [u8; CRC_BEAT_BYTES],
    /// tlast: the frame's last beat.
    pub last: bool,
    /// Cycles with tvalid low (and garbage on tdata/tlast) before this beat.
    pub idle_before: u32,
}

/// A digest as it left the module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrcDigest {
    /// m_crc.
    pub crc: u32,
    /// The cycle m_crc_valid was high in (cycle 0: the first after reset).
    pub cycle: u64,
}

/// The simulated digest unit.
pub struct Crc32c512 {
    model: *mut c_void,
}

impl Default for Crc32c512 {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc32c512 {
    pub fn new() -> Self {
        // SAFETY: the shim allocates a model and returns an owned pointer, freed in Drop.
        Crc32c512 { model: unsafe { prism_crc32c_512_new() } }
    }

    /// The module's LATENCY: a frame's digest is out this many cycles after
    /// the cycle of its tlast beat.
    pub fn latency() -> u32 {
        // SAFETY: reads a constant of the model.
        unsafe { prism_crc32c_512_latency() }
    }

    /// Resets the module, streams `beats` (cycle 0 is the first after
    /// reset, each beat after its idle cycles), drains the pipeline and
    /// returns every digest the module gave, in order.
    pub fn run(&mut self, beats: &[CrcBeat]) -> Vec<CrcDigest> {
        let n = beats.len();
        let data: Vec<u8> = beats.iter().flat_map(|b| b.data).collect();
        let last: Vec<u8> = beats.iter().map(|b| u8::from(b.last)).collect();
        let idle: Vec<u32> = beats.iter().map(|b| b.idle_before).collect();
        // At most one digest a cycle: room for every cycle the run can take.
        let room = n + idle.iter().map(|&g| g as usize).sum::<usize>() + 16;
        let mut crcs = vec![0u32; room];
        let mut cycles = vec![0u64; room];
        // SAFETY: model is live; data holds 64 * n bytes, last and idle n
        // entries, crcs and cycles `room` entries each.
        let seen = unsafe { prism_crc32c_512_run(self.model, data.as_ptr(), last.as_ptr(), idle.as_ptr(), n, crcs.as_mut_ptr(), cycles.as_mut_ptr(), room) };
        crcs.iter().zip(&cycles).take(seen.min(room)).map(|(&crc, &cycle)| CrcDigest { crc, cycle }).collect()
    }
}

impl Drop for Crc32c512 {
    fn drop(&mut self) {
        // SAFETY: created by prism_crc32c_512_new, freed once.
        unsafe { prism_crc32c_512_free(self.model) }
    }
}
