//! The addresses every example, test and benchmark uses, one scheme a role,
//! and switch configurations written as TOML text (`SwitchToml`).
//!
//! The golden captures (`golden`, `testdata/`) keep their own rank MACs
//! (`golden::RANK0_MAC`, `golden::RANK1_MAC`): the capture files fix them.

pub mod sim;

use crate::switch::config::L2Mode;
use crate::wire::{
    direction, single_window_elements, AccumulatorPolicy, BindingRecord, Command, ContextRecord, ControlBody, ControlRepr, EthernetRepr, FormatCode, Identity, Mac, OutputFormat, PartialPolicy,
    PeerKind, PrismRepr, Role, Semantics, ETHERTYPE, NO_RANK,
};
use std::fmt;

/// The switch (a SINGLE node) and its CONTROL endpoint.
pub const SWITCH_MAC: Mac = Mac([0x02, 0, 0, 0, 0, 0x50]);
pub const SWITCH_EP: u16 = 0x0050;
/// The Aggregation Manager and its CONTROL endpoint.
pub const AM_MAC: Mac = Mac([0x02, 0, 0, 0, 0, 0xa0]);
pub const AM_EP: u16 = 0x00a0;

/// Rank `r` (SINGLE and trees alike): `02:00:00:01:hi:lo`.
pub fn rank_mac(r: u16) -> Mac {
    Mac([0x02, 0x00, 0x00, 0x01, (r >> 8) as u8, r as u8])
}

/// A tree's ROOT (`configs/tree/*.toml` use the same addresses).
pub const ROOT_MAC: Mac = Mac([0x02, 0, 0, 0, 0x02, 0x00]);

/// A tree's leaf `i`: `02:00:00:00:01:i`.
pub fn leaf_mac(i: u16) -> Mac {
    Mac([0x02, 0, 0, 0, 0x01, i as u8])
}

/// A tree's INTERNAL node `i` (between the root and the leaves): `02:00:00:00:03:i`.
pub fn internal_mac(i: u16) -> Mac {
    Mac([0x02, 0, 0, 0, 0x03, i as u8])
}

/// Rank `r`'s edge as its switch is staged with it (`0x1000 + r` at the
/// rank, `0x0100 + r` at the switch): DATA in, and RESULT out if it `receives`.
pub fn rank_binding(r: u16, receives: bool, port: u16) -> BindingRecord {
    BindingRecord {
        directions: direction::DATA_IN | if receives { direction::RESULT_OUT } else { 0 },
        peer_kind: PeerKind::RANK,
        stream_id: r,
        local_ep: 0x0100 + r,
        peer_ep: 0x1000 + r,
        peer_mac: rank_mac(r),
        port,
        rank: r,
        terms: 1,
    }
}

/// The Kulisch accumulator width `terms` need under KULISCH_FIXED (0 under any other policy).
pub fn kulisch_width(accumulator: AccumulatorPolicy, terms: u32) -> u16 {
    if accumulator == AccumulatorPolicy::KULISCH_FIXED {
        prism_arith::min_kulisch_width(terms) as u16
    } else {
        0
    }
}

/// A SINGLE node's context for `ranks` ranks, one binding each, FP32 in:
/// the usual window (16 packets of the MTU a contributor) and no replay.
pub fn single_context(semantics: Semantics, accumulator: AccumulatorPolicy, output: OutputFormat, ranks: u16, dest_rank: u16, vector_len: u32, mtu: u16) -> ContextRecord {
    ContextRecord {
        role: Role::SINGLE,
        semantics,
        input_format: FormatCode::FP32,
        accumulator,
        partial: PartialPolicy::NONE,
        output,
        kulisch_width: kulisch_width(accumulator, ranks as u32),
        vector_len,
        dest_rank: if semantics == Semantics::REDUCE { dest_rank } else { NO_RANK },
        mtu,
        terms: ranks as u32,
        window_elements: single_window_elements(mtu) as u32,
        window_intervals: 16,
        replay_depth: 0,
        window_bytes: 16 * (mtu as u32 + 18),
        binding_count: ranks,
    }
}

/// A CONTROL frame from an AM (`am`, endpoint `AM_EP`) to a node (`node`, endpoint `SWITCH_EP`).
pub fn control_frame(identity: Identity, am: Mac, node: Mac, txn: u32, command: Command, body: ControlBody<'_>) -> Vec<u8> {
    let p = PrismRepr::Control(ControlRepr { identity, txn, src_ep: AM_EP, dst_ep: SWITCH_EP, command, frag_index: 0, frag_count: 1, body });
    let mut f = vec![0; p.frame_len()];
    p.emit_frame(&EthernetRepr { dst: node, src: am, ethertype: ETHERTYPE }, &mut f);
    f
}

/// A prism-switch configuration as the TOML text `--config` reads: the node,
/// its AM, its ports (device names, in port order) and its Layer-2 policy.
/// What it leaves out takes the defaults of `switch::config`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchToml {
    pub mac: Mac,
    pub mtu: u16,
    /// `node.max_ops`; None: the default.
    pub max_ops: Option<usize>,
    pub am_mac: Mac,
    pub am_port: u16,
    pub ports: Vec<String>,
    /// `l2.mode`; None: the default (learning).
    pub l2_mode: Option<L2Mode>,
    /// `l2.table`: static entries (MAC, port).
    pub l2_table: Vec<(Mac, u16)>,
}

impl SwitchToml {
    /// `SWITCH_MAC` at MTU 1500 on these devices, the AM (`AM_MAC`) behind port 0.
    pub fn new<S: AsRef<str>>(ports: &[S]) -> Self {
        SwitchToml { mac: SWITCH_MAC, mtu: 1500, max_ops: None, am_mac: AM_MAC, am_port: 0, ports: ports.iter().map(|p| p.as_ref().to_string()).collect(), l2_mode: None, l2_table: Vec::new() }
    }

    pub fn mac(self, mac: Mac) -> Self {
        SwitchToml { mac, ..self }
    }

    pub fn mtu(self, mtu: u16) -> Self {
        SwitchToml { mtu, ..self }
    }

    pub fn max_ops(self, max_ops: usize) -> Self {
        SwitchToml { max_ops: Some(max_ops), ..self }
    }

    pub fn l2(self, mode: L2Mode, table: &[(Mac, u16)]) -> Self {
        SwitchToml { l2_mode: Some(mode), l2_table: table.to_vec(), ..self }
    }
}

impl fmt::Display for SwitchToml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "[node]\nmac = \"{}\"\nmtu = {}", self.mac, self.mtu)?;
        if let Some(n) = self.max_ops {
            writeln!(f, "max_ops = {n}")?;
        }
        writeln!(f, "[am]\nmac = \"{}\"\nport = {}", self.am_mac, self.am_port)?;
        for p in &self.ports {
            writeln!(f, "[[ports]]\ndevice = \"{p}\"")?;
        }
        if self.l2_mode.is_some() || !self.l2_table.is_empty() {
            writeln!(f, "[l2]")?;
        }
        if let Some(mode) = self.l2_mode {
            let mode = match mode {
                L2Mode::Learning => "learning",
                L2Mode::Static => "static",
                L2Mode::Drop => "drop",
            };
            writeln!(f, "mode = \"{mode}\"")?;
        }
        for (mac, port) in &self.l2_table {
            writeln!(f, "[[l2.table]]\nmac = \"{mac}\"\nport = {port}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::config::SwitchConfig;

    #[test]
    fn switch_toml_parses_to_what_it_says() {
        let t = SwitchToml::new(&["p0", "p1"]).mac(leaf_mac(1)).mtu(9000).max_ops(4).l2(L2Mode::Static, &[(AM_MAC, 0), (ROOT_MAC, 1)]);
        let c = SwitchConfig::parse(&t.to_string()).expect("parses");
        assert_eq!(c.node_mac(), leaf_mac(1));
        assert_eq!((c.node.mtu, c.node.max_ops), (9000, 4));
        assert_eq!((c.am.mac.parse::<Mac>().unwrap(), c.am.port), (AM_MAC, 0));
        assert_eq!(c.ports.iter().map(|p| p.device.as_str()).collect::<Vec<_>>(), ["p0", "p1"]);
        assert_eq!(c.l2.mode, L2Mode::Static);
        let table: Vec<(Mac, u16)> = c.l2.table.iter().map(|e| (e.mac.parse().unwrap(), e.port)).collect();
        assert_eq!(table, [(AM_MAC, 0), (ROOT_MAC, 1)]);
        // Left out: the defaults.
        let d = SwitchConfig::parse(&SwitchToml::new(&["p0"]).to_string()).expect("parses");
        assert_eq!((d.node.mtu, d.node.max_ops, d.l2.mode, d.l2.table.len()), (1500, 16, L2Mode::Learning, 0));
    }

    #[test]
    fn one_scheme_a_role_and_no_collisions() {
        let mut all = vec![SWITCH_MAC, AM_MAC, ROOT_MAC];
        all.extend((0..4).map(leaf_mac));
        all.extend((0..4).map(internal_mac));
        all.extend([0, 1, 255, 256, 65535].map(rank_mac));
        let n = all.len();
        all.sort_by_key(|m| m.0);
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
