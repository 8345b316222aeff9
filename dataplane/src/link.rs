//! How a traffic generator reaches a switch: the `Link` trait (frames to and
//! from the switch's ports, on the link's clock), beside the engine's `Sink`
//! (how the engine hands out the frames it sends). Its implementations that
//! need no DPDK live here: the in-process engine, and raw sockets on Linux
//! interfaces (a veth to prism-switch's net_af_packet, or a real NIC). The
//! DPDK link is prism-pktgen's (`dpdk` feature), the simulated hardware
//! switch prism-rtl's; prism-pktgen re-exports this module as its `link`.

use crate::engine::{Node, Sent};
use crate::fixtures::SwitchToml;
use crate::switch::config::SwitchConfig;
use crate::switch::SwitchCore;
use crate::wire::{offsets, parse_frame, Class, Limits, ParsedFrame, PrismRepr, ETH_HEADER_LEN, GROUP_DESCRIPTOR_LEN};
use prism_arith::NumFormat;
use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

/// A received frame: the switch port it came from, its bytes, when it arrived.
#[derive(Debug, Clone)]
pub struct Rx {
    pub port: u16,
    pub frame: Vec<u8>,
    pub at: Instant,
}

/// A way to exchange frames with a switch's ports.
pub trait Link {
    fn send(&mut self, port: u16, frame: &[u8]) -> io::Result<()>;
    /// Waits up to `timeout` for one frame.
    fn recv(&mut self, timeout: Duration) -> io::Result<Option<Rx>>;
    fn describe(&self) -> String;
    /// Sends that found the device's queue full and waited for room.
    fn tx_full_waits(&self) -> u64 {
        0
    }
    /// The link's clock: wall time, or simulated time for a simulated switch
    /// (send times and `Rx::at` must come from the same clock).
    fn now(&self) -> Instant {
        Instant::now()
    }
    /// A received frame's buffer, given back once its frame is read: a link
    /// may fill it with a later frame instead of allocating one.
    fn recycle(&mut self, frame: Vec<u8>) {
        drop(frame);
    }
}

/// The switch `--switch sim` runs when no config is given: MTU 9000, two ports,
/// the AM behind port 0.
pub fn default_sim_config() -> SwitchToml {
    SwitchToml::new(&["sim0", "sim1"]).mtu(9000)
}

/// The in-process engine (`--switch sim`): the same SwitchCore prism-switch runs.
pub struct SimLink {
    core: SwitchCore,
    queue: VecDeque<Rx>,
    out: Vec<Sent>,
    /// Test-only fault: flip this element's first RESULT value byte.
    pub corrupt_element: Option<u64>,
}

impl SimLink {
    pub fn new(cfg: &SwitchConfig) -> Self {
        SimLink { core: SwitchCore::new(cfg), queue: VecDeque::new(), out: Vec::new(), corrupt_element: None }
    }
    pub fn node(&self) -> &Node {
        &self.core.node
    }
}

impl Link for SimLink {
    fn send(&mut self, port: u16, frame: &[u8]) -> io::Result<()> {
        self.core.rx(port, frame, &mut self.out);
        let at = Instant::now();
        for s in self.out.drain(..) {
            let mut frame = s.frame;
            if let Some(e) = self.corrupt_element {
                corrupt(&mut frame, e);
            }
            self.queue.push_back(Rx { port: s.port, frame, at });
        }
        Ok(())
    }
    fn recv(&mut self, _timeout: Duration) -> io::Result<Option<Rx>> {
        Ok(self.queue.pop_front())
    }
    fn describe(&self) -> String {
        "in-process engine (--switch sim)".into()
    }
}

/// Test fault for `--switch sim`: changes the first byte of `element`'s value if this RESULT holds it.
pub fn corrupt(frame: &mut [u8], element: u64) {
    let Ok(ParsedFrame { prism: Some(PrismRepr::Data(d)), .. }) = parse_frame(frame, &Limits::default()) else { return };
    if d.class != Class::RESULT || d.is_inexact() || element < d.first_element as u64 || element >= d.end_element() {
        return;
    }
    let mut pos = d.first_element as u64;
    let mut at = ETH_HEADER_LEN + offsets::data::BODY;
    let mut target = None;
    for g in d.groups() {
        let w = g.format.value_bytes();
        at += GROUP_DESCRIPTOR_LEN;
        if element < pos + g.count as u64 {
            // Kulisch: flip an integer byte (the state byte must stay valid).
            target = Some(at + (element - pos) as usize * w + usize::from(matches!(g.format, NumFormat::Kulisch { .. })));
            break;
        }
        pos += g.count as u64;
        at += g.values.len() + (4 - g.values.len() % 4) % 4;
    }
    if let Some(off) = target {
        frame[off] ^= 0x02;
    }
}

/// Raw AF_PACKET sockets, one per switch port, bound to Linux interfaces.
pub struct AfPacketLink {
    fds: Vec<i32>,
    names: Vec<String>,
    buf: Vec<u8>,
}

impl AfPacketLink {
    /// Opens `ifaces[i]` as the link to switch port `i`.
    pub fn open(ifaces: &[String]) -> io::Result<Self> {
        let mut fds = Vec::new();
        for name in ifaces {
            let fd = open_raw(name).map_err(|e| io::Error::new(e.kind(), format!("interface {name}: {e}")))?;
            fds.push(fd);
        }
        Ok(AfPacketLink { fds, names: ifaces.to_vec(), buf: vec![0; 65536] })
    }
}

fn open_raw(name: &str) -> io::Result<i32> {
    let cname = std::ffi::CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad interface name"))?;
    // SAFETY: plain libc calls with valid arguments; the fd is closed in Drop.
    unsafe {
        let idx = libc::if_nametoindex(cname.as_ptr());
        if idx == 0 {
            return Err(io::Error::last_os_error());
        }
        let proto = (libc::ETH_P_ALL as u16).to_be() as i32;
        let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, proto);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut addr: libc::sockaddr_ll = std::mem::zeroed();
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = proto as u16;
        addr.sll_ifindex = idx as i32;
        // Bursts of RESULT frames must not overflow the default socket buffer
        // (root may force a larger one; otherwise the kernel's limit applies).
        let size: libc::c_int = 64 << 20;
        let sz = std::mem::size_of::<libc::c_int>() as u32;
        if libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &size as *const _ as *const libc::c_void, sz) < 0 {
            libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &size as *const _ as *const libc::c_void, sz);
        }
        if libc::bind(fd, &addr as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as u32) < 0 {
            let e = io::Error::last_os_error();
            libc::close(fd);
            return Err(e);
        }
        Ok(fd)
    }
}

impl Link for AfPacketLink {
    fn send(&mut self, port: u16, frame: &[u8]) -> io::Result<()> {
        let fd = *self.fds.get(port as usize).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("no interface for port {port}")))?;
        loop {
            // SAFETY: frame is a valid buffer of frame.len() bytes.
            let n = unsafe { libc::send(fd, frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
            if n >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::WouldBlock {
                return Err(e);
            }
            std::thread::yield_now();
        }
    }

    fn recv(&mut self, timeout: Duration) -> io::Result<Option<Rx>> {
        let mut pfds: Vec<libc::pollfd> = self.fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
        // SAFETY: pfds is a valid array of pollfd.
        let rc = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as u64, timeout.as_millis().min(i32::MAX as u128) as i32) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        for (port, p) in pfds.iter().enumerate() {
            if p.revents & libc::POLLIN != 0 {
                // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
                let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
                let mut len = std::mem::size_of::<libc::sockaddr_ll>() as u32;
                // SAFETY: buf and from are valid for the sizes given.
                let n = unsafe { libc::recvfrom(p.fd, self.buf.as_mut_ptr() as *mut libc::c_void, self.buf.len(), 0, &mut from as *mut _ as *mut libc::sockaddr, &mut len) };
                if n < 0 {
                    continue;
                }
                // Our own transmissions come back as PACKET_OUTGOING: skip them.
                if from.sll_pkttype == libc::PACKET_OUTGOING {
                    continue;
                }
                return Ok(Some(Rx { port: port as u16, frame: self.buf[..n as usize].to_vec(), at: Instant::now() }));
            }
        }
        Ok(None)
    }

    fn describe(&self) -> String {
        format!("AF_PACKET on {}", self.names.join(", "))
    }
}

impl Drop for AfPacketLink {
    fn drop(&mut self) {
        for &fd in &self.fds {
            // SAFETY: fds were opened by us and are closed once.
            unsafe { libc::close(fd) };
        }
    }
}
