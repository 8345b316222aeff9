//! Device steering of PRISM operations: a NIC rule per operation that puts
//! its frames on its owner core's RX queue, installed when the owner sees
//! the operation's STAGE and removed at its RELEASE or ABORT. Without it a
//! NIC puts every PRISM frame on one queue (RSS does not hash a custom
//! EtherType) and the switch hands them between cores, which costs more
//! than summing them (docs/switch.md). The device is a trait, so the
//! bookkeeping is tested without DPDK; prism-switch gives it `rte_flow`.

use crate::wire::codes::offsets;
use crate::wire::{Class, Command, Mac, ETHERTYPE, ETH_HEADER_LEN};
use std::collections::HashMap;

/// The PRISM header's bytes 2..16 (Job, Group, Group generation, Operation
/// ID): what a rule matches, the generation masked out by the device.
pub type OperationKey = [u8; 14];

/// Where rules go.
pub trait FlowDevice {
    type Rule;
    /// Frames of `key` arriving on `port` to RX queue `queue`.
    fn install(&mut self, port: usize, key: OperationKey, queue: u16) -> Result<Self::Rule, String>;
    fn remove(&mut self, port: usize, rule: Self::Rule) -> Result<(), String>;
}

/// Counters of one core's rules.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FlowStats {
    pub installed: u64,
    pub failed: u64,
    pub removed: u64,
}

/// One core's rules: per port, the queue this core polls there if the
/// device steers (None: no rules on that port).
pub struct OperationFlows<R> {
    mac: Mac,
    queues: Vec<Option<u16>>,
    rules: HashMap<OperationKey, Vec<(usize, R)>>,
    pub stats: FlowStats,
    /// The last failure, in the device's words.
    pub last_error: Option<String>,
}

impl<R> OperationFlows<R> {
    pub fn new(mac: Mac, queues: Vec<Option<u16>>) -> Self {
        OperationFlows { mac, queues, rules: HashMap::new(), stats: FlowStats::default(), last_error: None }
    }

    /// Whether any port takes rules.
    pub fn active(&self) -> bool {
        self.queues.iter().any(Option::is_some)
    }

    /// Rules in place now.
    pub fn live(&self) -> usize {
        self.rules.values().map(Vec::len).sum()
    }

    /// A frame this core handles as the owner of its operation: a STAGE to
    /// this node installs the operation's rules (once; retries and later
    /// generations match the same rules), a RELEASE or ABORT removes them.
    /// Called before the engine sees the frame; what the engine makes of
    /// it does not matter here (a refused STAGE leaves rules that its
    /// ABORT or the next STAGE's operation reuses).
    pub fn on_frame(&mut self, frame: &[u8], dev: &mut impl FlowDevice<Rule = R>) {
        let Some((command, key)) = self.control(frame) else { return };
        match command {
            Command::STAGE if !self.rules.contains_key(&key) => {
                let mut placed = Vec::new();
                for (port, q) in self.queues.iter().enumerate() {
                    let Some(q) = *q else { continue };
                    match dev.install(port, key, q) {
                        Ok(r) => {
                            self.stats.installed += 1;
                            placed.push((port, r));
                        }
                        Err(e) => {
                            self.stats.failed += 1;
                            self.last_error = Some(format!("port {port}: {e}"));
                        }
                    }
                }
                self.rules.insert(key, placed);
            }
            Command::RELEASE | Command::ABORT => self.remove(key, dev),
            _ => {}
        }
    }

    fn remove(&mut self, key: OperationKey, dev: &mut impl FlowDevice<Rule = R>) {
        for (port, r) in self.rules.remove(&key).unwrap_or_default() {
            match dev.remove(port, r) {
                Ok(()) => self.stats.removed += 1,
                Err(e) => {
                    self.stats.failed += 1;
                    self.last_error = Some(format!("port {port}: {e}"));
                }
            }
        }
    }

    /// Removes every rule (at stop).
    pub fn clear(&mut self, dev: &mut impl FlowDevice<Rule = R>) {
        let keys: Vec<OperationKey> = self.rules.keys().copied().collect();
        for k in keys {
            self.remove(k, dev);
        }
    }

    /// A CONTROL frame to this node: its command and operation key.
    fn control(&self, frame: &[u8]) -> Option<(Command, OperationKey)> {
        let command_at = ETH_HEADER_LEN + offsets::control::COMMAND;
        if !self.active() || frame.len() <= command_at || frame[..6] != self.mac.0 || frame[12..14] != ETHERTYPE.to_be_bytes() {
            return None;
        }
        if Class::from(frame[ETH_HEADER_LEN + offsets::CLASS]) != Class::CONTROL {
            return None;
        }
        let mut key = [0u8; 14];
        key.copy_from_slice(&frame[ETH_HEADER_LEN + 2..ETH_HEADER_LEN + 16]);
        Some((Command::from(frame[command_at]), key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{AM_EP, AM_MAC, SWITCH_EP, SWITCH_MAC};
    use crate::wire::{ControlBody, ControlRepr, EthernetRepr, Identity, PrismRepr};

    const MAC: Mac = SWITCH_MAC;

    /// Port 1 refuses every rule, as a device without flow support would.
    #[derive(Default)]
    struct Fake {
        live: Vec<(usize, OperationKey, u16, u32)>,
        next: u32,
    }

    impl FlowDevice for Fake {
        type Rule = u32;
        fn install(&mut self, port: usize, key: OperationKey, queue: u16) -> Result<u32, String> {
            if port == 1 {
                return Err("no flow support".into());
            }
            self.next += 1;
            self.live.push((port, key, queue, self.next));
            Ok(self.next)
        }
        fn remove(&mut self, port: usize, rule: u32) -> Result<(), String> {
            let before = self.live.len();
            self.live.retain(|l| !(l.0 == port && l.3 == rule));
            if self.live.len() == before {
                Err("no such rule".into())
            } else {
                Ok(())
            }
        }
    }

    fn control(op: u16, gen: u32, command: Command, dst: Mac) -> Vec<u8> {
        let c = ControlRepr {
            identity: Identity { job: 9, group: 2, group_gen: 1, op, op_gen: gen },
            txn: 1,
            src_ep: AM_EP,
            dst_ep: SWITCH_EP,
            command,
            frag_index: 0,
            frag_count: 1,
            body: ControlBody::Empty,
        };
        let p = PrismRepr::Control(c);
        let mut f = vec![0xa5; p.frame_len()];
        p.emit_frame(&EthernetRepr { dst, src: AM_MAC, ethertype: ETHERTYPE }, &mut f);
        f
    }

    #[test]
    fn a_stage_installs_its_operations_rules_and_release_removes_them() {
        let mut dev = Fake::default();
        let mut flows = OperationFlows::new(MAC, vec![Some(3), Some(3), None]);
        flows.on_frame(&control(7, 1, Command::STAGE, MAC), &mut dev);
        assert_eq!(dev.live.len(), 1, "port 0 only: port 1 refuses, port 2 has no queue of this core");
        assert_eq!((dev.live[0].0, dev.live[0].2), (0, 3));
        assert_eq!(&dev.live[0].1[8..10], &[0, 2], "the key holds the group");
        assert_eq!(&dev.live[0].1[12..14], &[0, 7], "and the operation ID");
        assert_eq!(flows.stats, FlowStats { installed: 1, failed: 1, removed: 0 });
        assert!(flows.last_error.as_deref().is_some_and(|e| e.contains("port 1") && e.contains("no flow support")));
        // A retried STAGE or the next generation's: the same rule serves.
        flows.on_frame(&control(7, 1, Command::STAGE, MAC), &mut dev);
        flows.on_frame(&control(7, 2, Command::STAGE, MAC), &mut dev);
        assert_eq!(dev.live.len(), 1);
        // Another operation gets its own; not-ours and non-STAGE frames nothing.
        flows.on_frame(&control(8, 1, Command::STAGE, MAC), &mut dev);
        flows.on_frame(&control(9, 1, Command::STAGE, Mac([2, 0, 0, 0, 0, 0x51])), &mut dev);
        flows.on_frame(&control(9, 1, Command::COMMIT, MAC), &mut dev);
        assert_eq!(dev.live.len(), 2);
        assert_eq!(flows.live(), 2);
        flows.on_frame(&control(7, 2, Command::RELEASE, MAC), &mut dev);
        assert_eq!(dev.live.len(), 1);
        assert_eq!(dev.live[0].1[13], 8, "operation 8's rule stays");
        flows.on_frame(&control(8, 1, Command::ABORT, MAC), &mut dev);
        assert!(dev.live.is_empty());
        assert_eq!(flows.stats.removed, 2);
        // A RELEASE of an operation without rules removes nothing.
        flows.on_frame(&control(7, 3, Command::RELEASE, MAC), &mut dev);
        assert_eq!(flows.stats.removed, 2);
    }

    #[test]
    fn no_port_that_steers_means_no_work_and_clear_removes_what_is_left() {
        let mut dev = Fake::default();
        let mut off: OperationFlows<u32> = OperationFlows::new(MAC, vec![None, None]);
        assert!(!off.active());
        off.on_frame(&control(7, 1, Command::STAGE, MAC), &mut dev);
        assert_eq!(off.stats, FlowStats::default());
        let mut on = OperationFlows::new(MAC, vec![Some(0)]);
        for op in 1..=3 {
            on.on_frame(&control(op, 1, Command::STAGE, MAC), &mut dev);
        }
        assert_eq!(dev.live.len(), 3);
        on.clear(&mut dev);
        assert!(dev.live.is_empty());
        assert_eq!(on.live(), 0);
    }
}
