//! The Verilator model of `prism_txn_table`: prism_node's CONTROL
//! transaction records and retired generations, a lookup answered
//! `LATENCY` cycles after it is presented. Driven a cycle at a time.

use std::ffi::c_void;

/// One cycle's inputs (the module's ports; every field 0 is an idle cycle).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxnIn {
    /// l_key ({job, group, op}), least significant 32-bit word first.
    pub key: [u32; 3],
    pub txn: u32,
    pub crc: u32,
    /// l_gen (48 bits).
    pub gen: u64,
    pub len: u16,
    pub w_detail: u16,
    pub rst: u8,
    pub l_valid: u8,
    pub w_insert: u8,
    pub w_purge: u8,
    pub w_retire: u8,
    pub w_status: u8,
}

/// The outputs sampled in a cycle, before its clock edge.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxnOut {
    pub detail: u16,
    pub valid: u8,
    pub busy: u8,
    pub hit: u8,
    pub same: u8,
    pub status: u8,
    pub stale: u8,
}

extern "C" {
    fn prism_txn_table_new() -> *mut c_void;
    fn prism_txn_table_free(m: *mut c_void);
    fn prism_txn_table_latency() -> u32;
    fn prism_txn_table_cycle(m: *mut c_void, inp: *const TxnIn, out: *mut TxnOut);
}

/// The simulated table.
pub struct TxnTable {
    model: *mut c_void,
}

impl Default for TxnTable {
    fn default() -> Self {
        Self::new()
    }
}

impl TxnTable {
    pub fn new() -> Self {
        // SAFETY: the shim allocates a model and returns an owned pointer, freed in Drop.
        TxnTable { model: unsafe { prism_txn_table_new() } }
    }

    /// The module's LATENCY: m_valid is high this many cycles after l_valid.
    pub fn latency() -> u32 {
        // SAFETY: reads a constant of the model.
        unsafe { prism_txn_table_latency() }
    }

    /// One clock cycle: `inp` driven, the outputs sampled, then the edge.
    pub fn cycle(&mut self, inp: &TxnIn) -> TxnOut {
        let mut out = TxnOut::default();
        // SAFETY: model is live; both pointers are to live repr(C) values laid out as the shim's.
        unsafe { prism_txn_table_cycle(self.model, inp, &mut out) };
        out
    }
}

impl Drop for TxnTable {
    fn drop(&mut self) {
        // SAFETY: created by prism_txn_table_new, freed once.
        unsafe { prism_txn_table_free(self.model) }
    }
}
