//! `configs/*.toml`: the node, its Aggregation Manager, ports and Layer-2 policy.

use crate::engine::NodeConfig;
use crate::wire::{caps_bits, AccumulatorPolicy, CapabilityRecord, FormatCode, Mac, OutputFormat, PartialPolicy};
use serde::Deserialize;
use std::path::Path;

/// A whole switch configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    pub node: NodeSection,
    pub am: AmSection,
    /// DPDK device names, in the order that gives port numbers 0, 1, ...
    pub ports: Vec<PortSection>,
    #[serde(default)]
    pub l2: L2Section,
    #[serde(default)]
    pub dataplane: DataplaneSection,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSection {
    pub mac: String,
    #[serde(default = "default_control_ep")]
    pub control_endpoint: u16,
    #[serde(default = "default_mtu")]
    pub mtu: u16,
    #[serde(default = "default_max_ops")]
    pub max_ops: usize,
    /// First retransmission timeout of streams with PROGRESS, microseconds.
    #[serde(default = "default_rto_us")]
    pub rto_us: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AmSection {
    pub mac: String,
    pub port: u16,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortSection {
    /// EAL device name: `net_pcap0`, `net_af_packet0`, `0000:01:00.0`, ...
    pub device: String,
}

/// What happens to frames that are not for this node.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum L2Mode {
    /// Learn source MACs; flood unknown and broadcast destinations.
    #[default]
    Learning,
    /// Only the static table; unknown destinations are dropped.
    Static,
    /// Drop every frame not for this node.
    Drop,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct L2Section {
    #[serde(default)]
    pub mode: L2Mode,
    #[serde(default)]
    pub table: Vec<StaticEntry>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticEntry {
    pub mac: String,
    pub port: u16,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataplaneSection {
    #[serde(default = "default_burst")]
    pub burst: usize,
    #[serde(default = "default_desc")]
    pub rx_desc: u16,
    #[serde(default = "default_desc")]
    pub tx_desc: u16,
    #[serde(default = "default_mbufs")]
    pub mbufs: u32,
    /// Polling cores. Each polls its share of the ports' RX queues; operations
    /// are split across cores by (Job, Group, Operation ID).
    #[serde(default = "default_workers")]
    pub workers: usize,
    /// RX queues per port (RSS spreads flows over them where the device can).
    /// Unset: one a worker, so that every worker polls a queue of every port.
    #[serde(default)]
    pub rx_queues: Option<u16>,
}

impl Default for DataplaneSection {
    fn default() -> Self {
        DataplaneSection { burst: default_burst(), rx_desc: default_desc(), tx_desc: default_desc(), mbufs: default_mbufs(), workers: default_workers(), rx_queues: None }
    }
}

fn default_control_ep() -> u16 {
    0x0050
}
fn default_mtu() -> u16 {
    1500
}
fn default_max_ops() -> usize {
    16
}
fn default_rto_us() -> u64 {
    crate::engine::stream::DEFAULT_RTO_NS / 1000
}
/// `dataplane.burst` when the config does not say: frames a worker takes
/// from an RX queue at once (prism-bench switch measures the core so too).
pub const DEFAULT_BURST: usize = 32;

fn default_burst() -> usize {
    DEFAULT_BURST
}
fn default_desc() -> u16 {
    1024
}
fn default_mbufs() -> u32 {
    8191
}
fn default_workers() -> usize {
    1
}

/// A configuration error with the file and what is wrong.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ConfigError {}

fn mac(field: &str, s: &str) -> Result<Mac, ConfigError> {
    s.parse().map_err(|e| ConfigError(format!("{field}: {e}")))
}

impl SwitchConfig {
    pub fn load(path: &Path) -> Result<SwitchConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| ConfigError(format!("{}: {e}", path.display())))
    }

    pub fn parse(text: &str) -> Result<SwitchConfig, ConfigError> {
        let c: SwitchConfig = toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        c.validate()?;
        Ok(c)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        mac("node.mac", &self.node.mac)?;
        mac("am.mac", &self.am.mac)?;
        if self.ports.is_empty() {
            return Err(ConfigError("ports: at least one port is needed".into()));
        }
        if self.am.port as usize >= self.ports.len() {
            return Err(ConfigError(format!("am.port {} is not one of the {} ports", self.am.port, self.ports.len())));
        }
        if ![576, 1500, 9000].contains(&self.node.mtu) {
            return Err(ConfigError(format!("node.mtu {} is not 576, 1500 or 9000", self.node.mtu)));
        }
        for (i, e) in self.l2.table.iter().enumerate() {
            mac(&format!("l2.table[{i}].mac"), &e.mac)?;
            if e.port as usize >= self.ports.len() {
                return Err(ConfigError(format!("l2.table[{i}].port {} does not exist", e.port)));
            }
        }
        if self.dataplane.workers == 0 || self.dataplane.workers > 64 {
            return Err(ConfigError("dataplane.workers must be 1..64".into()));
        }
        if self.dataplane.rx_queues == Some(0) {
            return Err(ConfigError("dataplane.rx_queues must be at least 1".into()));
        }
        if self.dataplane.burst == 0 || self.dataplane.burst > 64 {
            return Err(ConfigError("dataplane.burst must be 1..64".into()));
        }
        Ok(())
    }

    pub fn node_mac(&self) -> Mac {
        self.node.mac.parse().unwrap_or_default()
    }

    /// The engine's configuration, with the node's built-in capability records.
    pub fn node_config(&self) -> NodeConfig {
        NodeConfig {
            mac: self.node_mac(),
            control_ep: self.node.control_endpoint,
            am_mac: self.am.mac.parse().unwrap_or_default(),
            am_port: self.am.port,
            ports: self.ports.len() as u16,
            mtu: self.node.mtu,
            max_ops: self.node.max_ops,
            caps: capabilities(self.node.mtu),
        }
    }
}

/// What the software node supports: FP32-domain inputs, both policies,
/// every output the engine emits; as SINGLE or ROOT without partials, and in
/// every tree role with each partial policy that keeps the accumulator's
/// promise (FP32 or AUTO under FP32_ARRIVAL, KULISCH or AUTO under
/// KULISCH_FIXED). Every stream may have PROGRESS with up to 64 frames of replay.
pub fn capabilities(mtu: u16) -> Vec<CapabilityRecord> {
    let mtus = match mtu {
        576 => caps_bits::MTU_576,
        1500 => caps_bits::MTU_576 | caps_bits::MTU_1500,
        _ => caps_bits::MTU_576 | caps_bits::MTU_1500 | caps_bits::MTU_9000,
    };
    let window = crate::wire::single_window_elements(mtu) as u32;
    let all_roles = caps_bits::ROLE_SINGLE | caps_bits::ROLE_LEAF | caps_bits::ROLE_INTERNAL | caps_bits::ROLE_ROOT;
    let mut v = Vec::new();
    for acc in [AccumulatorPolicy::FP32_ARRIVAL, AccumulatorPolicy::KULISCH_FIXED] {
        let kulisch = acc == AccumulatorPolicy::KULISCH_FIXED;
        let partials: &[(PartialPolicy, u8)] = if kulisch {
            &[(PartialPolicy::NONE, caps_bits::ROLE_SINGLE | caps_bits::ROLE_ROOT), (PartialPolicy::KULISCH, all_roles), (PartialPolicy::AUTO, all_roles)]
        } else {
            &[(PartialPolicy::NONE, caps_bits::ROLE_SINGLE | caps_bits::ROLE_ROOT), (PartialPolicy::FP32, all_roles), (PartialPolicy::AUTO, all_roles)]
        };
        for &(partial, roles) in partials {
            for out in [OutputFormat::FP32, OutputFormat::AUTO, OutputFormat::FP16, OutputFormat::BF16, OutputFormat::INT8, OutputFormat::KULISCH] {
                if !kulisch && out == OutputFormat::KULISCH {
                    continue;
                }
                v.push(CapabilityRecord {
                    input_format: FormatCode::FP32,
                    accumulator: acc,
                    partial,
                    output: out,
                    roles,
                    semantics: caps_bits::SEM_REDUCE | caps_bits::SEM_ALLREDUCE,
                    mtus,
                    max_vector: u32::MAX,
                    max_terms: 1024,
                    kulisch_min: if kulisch { 280 } else { 0 },
                    kulisch_max: if kulisch { 4096 } else { 0 },
                    max_contributors: 1024,
                    max_result_paths: 1024,
                    window_elements: window,
                    window_intervals: 64,
                    replay_depth: 64,
                    window_bytes: 64 * (mtu as u32 + 18),
                });
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped(name: &str) -> SwitchConfig {
        SwitchConfig::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs").join(name)).unwrap()
    }

    #[test]
    fn shipped_configs_load() {
        assert_eq!(shipped("single-pcap.toml").ports.len(), 1);
        assert_eq!(shipped("single-veth.toml").ports.len(), 2);
        let nic = shipped("single-nic.toml");
        assert_eq!(nic.node.mtu, 9000);
        assert_eq!(nic.dataplane.mbufs, 32767);
    }

    #[test]
    fn bad_configs_say_what_is_wrong() {
        let base = "[node]\nmac = \"02:00:00:00:00:50\"\n[am]\nmac = \"02:00:00:00:00:a0\"\nport = 0\n[[ports]]\ndevice = \"x\"\n";
        assert!(SwitchConfig::parse(base).is_ok());
        let e = SwitchConfig::parse(&base.replace("port = 0", "port = 3")).unwrap_err().0;
        assert!(e.contains("am.port 3"), "{e}");
        let e = SwitchConfig::parse(&base.replace("02:00:00:00:00:50", "02:00:00")).unwrap_err().0;
        assert!(e.contains("node.mac"), "{e}");
        let e = SwitchConfig::parse(&format!("{base}[node2]\n")).unwrap_err().0;
        assert!(e.contains("node2"), "{e}");
        let e = SwitchConfig::parse(&base.replace("[node]\n", "[node]\nmtu = 1000\n")).unwrap_err().0;
        assert!(e.contains("mtu"), "{e}");
    }
}
