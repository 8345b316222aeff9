//! How many RX queues a port gets, decided before any is configured.
//!
//! A queue that receives frames but is polled by nobody loses them silently:
//! the device counts nothing (the frames never reach a descriptor ring we
//! read) and neither does the engine. So the plan is checked against what
//! each device reports, and a device that would have a blind queue is
//! refused at start, with the option that fixes it.

use std::fmt;

/// What a device offers, read before it is configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortInfo {
    pub max_rx_queues: u16,
    pub max_tx_queues: u16,
    pub driver: String,
}

impl PortInfo {
    /// Whether the device spreads received frames over every queue it was
    /// created with, configured or not. An AF_PACKET device opens one socket
    /// a queue pair in a kernel fanout group, and AF_XDP binds its kernel
    /// queues: a queue nobody polls loses what the kernel puts on it. Such a
    /// device must have all its queues polled. (A NIC spreads only over the
    /// queues it was configured with; memif, ring and pcap devices deliver
    /// where their peer or file puts frames.)
    pub fn spreads_over_all_queues(&self) -> bool {
        matches!(self.driver.as_str(), "net_af_packet" | "net_af_xdp")
    }
}

/// Why the switch will not start with the queues asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueuePlanError {
    /// The device spreads frames over more queues than would be polled.
    BlindQueues { port: usize, device: String, driver: String, has: u16, polled: u16 },
    /// The device cannot offer the queues asked for.
    TooFew { port: usize, device: String, what: &'static str, has: u16, want: u16 },
}

impl fmt::Display for QueuePlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueuePlanError::BlindQueues { port, device, driver, has, polled } => write!(
                f,
                "port {port} ({device}, {driver}) receives on all its {has} queues but only {polled} would be polled, and frames on the others would be lost: \
                 set `[dataplane] rx_queues = {has}` (or `--rx-queues {has}`), or create the device with qpairs={polled}"
            ),
            QueuePlanError::TooFew { port, device, what, has, want } => write!(
                f,
                "port {port} ({device}) offers {has} {what} queues, {want} needed (one TX queue a worker; RX queues from `[dataplane] rx_queues` / `--rx-queues`, default one a worker; net_af_packet: qpairs={want})"
            ),
        }
    }
}

impl std::error::Error for QueuePlanError {}

/// RX queues per port: `asked` (the config or command line) or else one a
/// worker, capped at what every device offers only when nothing was asked;
/// a device that spreads over all its queues gets all of them polled or is
/// refused. `devices` pairs each port's name with what it reported.
pub fn plan_rx_queues(workers: usize, asked: Option<u16>, devices: &[(String, PortInfo)]) -> Result<u16, QueuePlanError> {
    let workers = workers.clamp(1, u16::MAX as usize) as u16;
    let rxq = match asked {
        Some(q) => q.max(1),
        // Unasked: one queue a worker where every device has that many, and
        // exactly the device's own count where it spreads over all of them.
        None => {
            let spread: Vec<u16> = devices.iter().filter(|(_, i)| i.spreads_over_all_queues()).map(|(_, i)| i.max_rx_queues).collect();
            match spread.iter().max() {
                Some(&m) => m.max(1),
                None => workers.min(devices.iter().map(|(_, i)| i.max_rx_queues.max(1)).min().unwrap_or(1)),
            }
        }
    };
    for (port, (device, info)) in devices.iter().enumerate() {
        if info.max_rx_queues < rxq {
            return Err(QueuePlanError::TooFew { port, device: device.clone(), what: "RX", has: info.max_rx_queues, want: rxq });
        }
        if info.max_tx_queues < workers {
            return Err(QueuePlanError::TooFew { port, device: device.clone(), what: "TX", has: info.max_tx_queues, want: workers });
        }
        if info.spreads_over_all_queues() && info.max_rx_queues > rxq {
            return Err(QueuePlanError::BlindQueues { port, device: device.clone(), driver: info.driver.clone(), has: info.max_rx_queues, polled: rxq });
        }
    }
    Ok(rxq)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(driver: &str, rx: u16, tx: u16) -> (String, PortInfo) {
        (format!("{driver}0"), PortInfo { max_rx_queues: rx, max_tx_queues: tx, driver: driver.into() })
    }

    #[test]
    fn unasked_queues_follow_the_workers_or_the_spreading_device() {
        // A NIC with 64 queues and 2 workers: 2 queues.
        assert_eq!(plan_rx_queues(2, None, &[dev("net_ice", 64, 64), dev("net_ice", 64, 64)]), Ok(2));
        // AF_PACKET created with qpairs=2 and one worker: both sockets polled (by the one worker).
        assert_eq!(plan_rx_queues(1, None, &[dev("net_af_packet", 2, 2)]), Ok(2));
        assert_eq!(plan_rx_queues(2, None, &[dev("net_af_packet", 2, 2), dev("net_af_packet", 2, 2)]), Ok(2));
        // A one-queue device and two workers: one queue each port (the workers share the ports).
        assert_eq!(plan_rx_queues(2, None, &[dev("net_memif", 1, 2), dev("net_memif", 1, 2)]), Ok(1));
    }

    #[test]
    fn a_blind_queue_is_refused_with_the_option_that_fixes_it() {
        let e = plan_rx_queues(2, Some(1), &[dev("net_af_packet", 2, 2)]).unwrap_err();
        assert_eq!(e, QueuePlanError::BlindQueues { port: 0, device: "net_af_packet0".into(), driver: "net_af_packet".into(), has: 2, polled: 1 });
        let text = e.to_string();
        assert!(text.contains("rx_queues = 2") && text.contains("--rx-queues 2"), "{text}");
        // The same on a NIC is fine: it spreads only over configured queues.
        assert_eq!(plan_rx_queues(2, Some(1), &[dev("net_ice", 64, 64)]), Ok(1));
    }

    #[test]
    fn too_few_queues_name_the_device() {
        assert!(matches!(plan_rx_queues(1, Some(4), &[dev("net_af_packet", 2, 2)]), Err(QueuePlanError::TooFew { what: "RX", has: 2, want: 4, .. })));
        assert!(matches!(plan_rx_queues(2, None, &[dev("net_af_packet", 1, 1)]), Err(QueuePlanError::TooFew { what: "TX", has: 1, want: 2, .. })));
    }
}
