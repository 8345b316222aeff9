//! The safe layer over `dpdk-sys`: EAL, mempools, ports and queues, and an
//! mbuf that frees itself. Every `unsafe` block of the dataplane lives here.

use dpdk_sys as sys;
use std::ffi::{CStr, CString};
use std::fmt;
use std::ptr::NonNull;

/// A failed DPDK call: what was attempted and DPDK's errno text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DpdkError {
    EalInit(String),
    Mempool(String),
    PortNotFound(String),
    Port {
        port: u16,
        call: &'static str,
        reason: String,
    },
    NoMbuf,
    BadArgument(String),
    LinkDown {
        port: u16,
        name: String,
        waited_ms: u64,
    },
    /// What went wrong with the device of this name (as the user gave it).
    Device {
        device: String,
        source: Box<DpdkError>,
    },
}

pub use crate::switch::queues::PortInfo;

impl fmt::Display for DpdkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DpdkError::EalInit(r) => write!(f, "EAL initialisation failed: {r}"),
            DpdkError::Mempool(r) => write!(f, "mbuf pool creation failed: {r}"),
            DpdkError::PortNotFound(n) => write!(f, "no DPDK port named '{n}' (check --vdev / -a and `dpdk-devbind.py --status`)"),
            DpdkError::Port { port, call, reason } => write!(f, "port {port}: {call} failed: {reason}"),
            DpdkError::NoMbuf => write!(f, "mbuf pool exhausted"),
            DpdkError::BadArgument(a) => write!(f, "bad argument: {a}"),
            DpdkError::LinkDown { port, name, waited_ms } => write!(f, "port {port} ({name}): link still down after {waited_ms} ms (cable, peer or memif server not there?)"),
            DpdkError::Device { device, source } => write!(f, "{device}: {source}"),
        }
    }
}
impl std::error::Error for DpdkError {}

fn errno_text(rc: i32) -> String {
    let e = if rc < 0 {
        -rc
    } else {
        // SAFETY: reads DPDK's thread-local errno; no preconditions.
        unsafe { sys::prism_errno() }
    };
    // SAFETY: rte_strerror returns a pointer to a static or thread-local NUL-terminated string.
    let s = unsafe { CStr::from_ptr(sys::prism_strerror(e)) };
    format!("{} (errno {e})", s.to_string_lossy())
}

fn check(port: u16, call: &'static str, rc: i32) -> Result<(), DpdkError> {
    if rc < 0 {
        Err(DpdkError::Port { port, call, reason: errno_text(rc) })
    } else {
        Ok(())
    }
}

/// An installed `rte_flow` rule; `destroy` removes it from the device.
#[derive(Debug)]
pub struct FlowRule {
    port: u16,
    handle: *mut libc::c_void,
}

// SAFETY: the handle is an opaque token the ethdev layer serialises (rte_flow takes its mutex for PMDs without thread-safe flow ops).
unsafe impl Send for FlowRule {}

impl FlowRule {
    pub fn destroy(self) -> Result<(), DpdkError> {
        // SAFETY: handle came from rte_flow_create on this port and is destroyed once (self is consumed).
        let rc = unsafe { sys::prism_flow_destroy(self.port, self.handle) };
        check(self.port, "rte_flow_destroy", rc)
    }
}

/// The initialised Environment Abstraction Layer. Create it once per process.
pub struct Eal {
    _private: (),
}

impl Eal {
    /// Initialises EAL with `args` (argv[0] first, EAL options after it).
    pub fn init(args: &[String]) -> Result<Eal, DpdkError> {
        let cargs: Vec<CString> = args.iter().map(|a| CString::new(a.as_str()).map_err(|_| DpdkError::BadArgument(a.clone()))).collect::<Result<_, _>>()?;
        // EAL may keep pointers into argv for the life of the process: leak them.
        let mut ptrs: Vec<*mut libc::c_char> = cargs.into_iter().map(|c| c.into_raw()).collect();
        let argv = ptrs.as_mut_ptr();
        let argc = ptrs.len() as i32;
        std::mem::forget(ptrs);
        // SAFETY: argv holds argc valid NUL-terminated strings that are never freed.
        let rc = unsafe { sys::prism_eal_init(argc, argv) };
        if rc < 0 {
            return Err(DpdkError::EalInit(errno_text(rc)));
        }
        Ok(Eal { _private: () })
    }

    /// TSC ticks per second.
    pub fn tsc_hz(&self) -> u64 {
        // SAFETY: EAL is initialised (self exists).
        unsafe { sys::prism_tsc_hz() }
    }

    /// Number of ports EAL found.
    pub fn port_count(&self) -> u16 {
        // SAFETY: EAL is initialised.
        unsafe { sys::prism_port_count() }
    }
}

impl Drop for Eal {
    fn drop(&mut self) {
        // SAFETY: called once, after every port and lcore user is done (Eal outlives them in main).
        unsafe { sys::prism_eal_cleanup() };
    }
}

/// Registers the calling thread with EAL (an lcore id, so that mempool caches
/// apply to it) until the guard is dropped. Polling threads started with
/// `std::thread` call this first.
pub struct LcoreGuard(bool);

impl LcoreGuard {
    pub fn register(_eal: &Eal) -> LcoreGuard {
        // SAFETY: EAL is initialised; registration is per calling thread.
        LcoreGuard(unsafe { sys::prism_thread_register() } == 0)
    }
    /// The thread's lcore id (u32::MAX when registration failed).
    pub fn lcore(&self) -> u32 {
        // SAFETY: reads a thread-local.
        unsafe { sys::prism_lcore_id() }
    }
}

impl Drop for LcoreGuard {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: this thread registered itself in `register`.
            unsafe { sys::prism_thread_unregister() }
        }
    }
}

/// The machine's online CPUs. (Not the calling thread's affinity: EAL pins the
/// main thread to its first lcore, so threads spawned from it would inherit a
/// single CPU.)
pub fn online_cpus() -> Vec<core_affinity::CoreId> {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
    (0..n).map(|id| core_affinity::CoreId { id }).collect()
}

/// Reads the time-stamp counter.
pub fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no preconditions.
    unsafe { sys::prism_rdtsc() }
}

/// A packet-buffer pool. Lives as long as the program's ports use it.
pub struct Mempool {
    ptr: NonNull<sys::rte_mempool>,
}

// SAFETY: DPDK mempools are multi-producer, multi-consumer safe.
unsafe impl Send for Mempool {}
// SAFETY: as above; every operation on the pool is thread-safe.
unsafe impl Sync for Mempool {}

impl Mempool {
    pub fn new(_eal: &Eal, name: &str, mbufs: u32, cache: u32, data_room: u16) -> Result<Mempool, DpdkError> {
        let cname = CString::new(name).map_err(|_| DpdkError::BadArgument(name.into()))?;
        // SAFETY: EAL is initialised; name is a valid C string; -1 is SOCKET_ID_ANY.
        let p = unsafe { sys::prism_pool_create(cname.as_ptr(), mbufs, cache, data_room, -1) };
        NonNull::new(p).map(|ptr| Mempool { ptr }).ok_or_else(|| DpdkError::Mempool(errno_text(0)))
    }

    /// Allocates one mbuf.
    pub fn alloc(&self) -> Option<Mbuf> {
        // SAFETY: the pool pointer is valid for the program's life.
        NonNull::new(unsafe { sys::prism_mbuf_alloc(self.ptr.as_ptr()) }).map(Mbuf)
    }

    /// Mbufs free in the pool.
    pub fn available(&self) -> u32 {
        // SAFETY: valid pool.
        unsafe { sys::prism_pool_avail(self.ptr.as_ptr()) }
    }

    /// An mbuf of exactly `len` bytes (content unspecified), to build a frame in place.
    pub fn alloc_len(&self, len: usize) -> Option<Mbuf> {
        let m = self.alloc()?;
        let len = u16::try_from(len).ok()?;
        // SAFETY: reset + append on an mbuf we own.
        let p = unsafe { sys::prism_mbuf_set_len(m.0.as_ptr(), len) };
        (!p.is_null()).then_some(m)
    }

    /// An mbuf holding a copy of `frame`.
    pub fn frame(&self, frame: &[u8]) -> Option<Mbuf> {
        let mut m = self.alloc()?;
        m.set_data(frame).then_some(m)
    }
}

/// One packet buffer; freed when dropped.
pub struct Mbuf(NonNull<sys::rte_mbuf>);

// SAFETY: an mbuf is owned by exactly one Mbuf value and may move between threads.
unsafe impl Send for Mbuf {}

impl Mbuf {
    /// The first segment's bytes.
    pub fn data(&self) -> &[u8] {
        // SAFETY: mtod points at data_len initialised bytes owned by this mbuf.
        unsafe { std::slice::from_raw_parts(sys::prism_mbuf_data(self.0.as_ptr()) as *const u8, sys::prism_mbuf_data_len(self.0.as_ptr()) as usize) }
    }

    /// The first segment's bytes, writable.
    pub fn data_mut(&mut self) -> &mut [u8] {
        // SAFETY: mtod points at data_len bytes owned by this mbuf, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(sys::prism_mbuf_data(self.0.as_ptr()) as *mut u8, sys::prism_mbuf_data_len(self.0.as_ptr()) as usize) }
    }

    /// Whether the packet spans several segments (then `data` is only the first).
    pub fn is_chained(&self) -> bool {
        // SAFETY: valid mbuf.
        unsafe { sys::prism_mbuf_nb_segs(self.0.as_ptr()) > 1 }
    }

    /// Replaces the content with `bytes`; false if it does not fit one segment.
    pub fn set_data(&mut self, bytes: &[u8]) -> bool {
        let Ok(len) = u16::try_from(bytes.len()) else { return false };
        // SAFETY: reset + append on an mbuf we own; the returned pointer covers `len` bytes.
        unsafe {
            let p = sys::prism_mbuf_set_len(self.0.as_ptr(), len);
            if p.is_null() {
                return false;
            }
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p as *mut u8, bytes.len());
        }
        true
    }

    /// Another reference to the same packet (for flooding), sharing its data.
    pub fn share(&self) -> Mbuf {
        // SAFETY: bumping the refcount makes the second owner's free valid.
        unsafe { sys::prism_mbuf_refcnt_inc(self.0.as_ptr()) };
        Mbuf(self.0)
    }

    fn into_raw(self) -> *mut sys::rte_mbuf {
        let p = self.0.as_ptr();
        std::mem::forget(self);
        p
    }
}

impl Drop for Mbuf {
    fn drop(&mut self) {
        // SAFETY: this value owns one reference to the mbuf.
        unsafe { sys::prism_mbuf_free(self.0.as_ptr()) }
    }
}

/// Counters DPDK keeps for a port.
pub type PortStats = sys::prism_port_stats;

/// An Ethernet port found by EAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Port(pub u16);

impl Port {
    /// The port of a device name (`net_pcap0`, `0000:01:00.0`, ...).
    pub fn by_name(_eal: &Eal, name: &str) -> Result<Port, DpdkError> {
        let c = CString::new(name).map_err(|_| DpdkError::BadArgument(name.into()))?;
        let mut id = 0u16;
        // SAFETY: valid C string and out-pointer.
        let rc = unsafe { sys::prism_port_by_name(c.as_ptr(), &mut id) };
        if rc < 0 {
            return Err(DpdkError::PortNotFound(name.into()));
        }
        Ok(Port(id))
    }

    pub fn name(&self) -> String {
        let mut buf = [0 as libc::c_char; 64];
        // SAFETY: buf is 64 bytes; the shim NUL-terminates within len.
        let rc = unsafe { sys::prism_port_name(self.0, buf.as_mut_ptr(), buf.len()) };
        if rc < 0 {
            return format!("port{}", self.0);
        }
        // SAFETY: NUL-terminated by the shim.
        unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
    }

    /// Asks the device to deliver every frame of one PRISM operation
    /// (`key`: the PRISM header's bytes 2..16, Job to Operation ID; the
    /// group generation is masked out) addressed to `dst` to RX queue
    /// `queue` (an `rte_flow` rule: ETH / RAW / QUEUE). `validate_only`:
    /// only whether the device could (None on success). The error says why
    /// not, in the PMD's words: most virtual devices have no flow support.
    pub fn steer_operation(&self, dst: [u8; 6], key: [u8; 14], queue: u16, validate_only: bool) -> Result<Option<FlowRule>, DpdkError> {
        let mut handle: *mut libc::c_void = std::ptr::null_mut();
        let mut msg = [0 as libc::c_char; 160];
        // SAFETY: dst and key are 6 and 14 readable bytes; handle and msg are valid out-pointers, msg NUL-terminated by snprintf within len.
        let rc = unsafe { sys::prism_flow_operation(self.0, dst.as_ptr(), key.as_ptr(), queue, validate_only as libc::c_int, &mut handle, msg.as_mut_ptr(), msg.len()) };
        if rc != 0 {
            // SAFETY: the shim wrote a NUL-terminated message on failure.
            let why = unsafe { CStr::from_ptr(msg.as_ptr()) }.to_string_lossy().into_owned();
            return Err(DpdkError::Port { port: self.0, call: "rte_flow", reason: format!("{why} (errno {})", -rc) });
        }
        Ok(if validate_only || handle.is_null() { None } else { Some(FlowRule { port: self.0, handle }) })
    }

    /// Queue limits and driver name, as the device reports them.
    pub fn info(&self) -> Result<PortInfo, DpdkError> {
        let (mut max_rx, mut max_tx) = (0u16, 0u16);
        let mut buf = [0 as libc::c_char; 64];
        // SAFETY: valid out-pointers; buf is 64 bytes and the shim NUL-terminates within len.
        let rc = unsafe { sys::prism_port_info(self.0, &mut max_rx, &mut max_tx, buf.as_mut_ptr(), buf.len()) };
        check(self.0, "dev_info_get", rc)?;
        // SAFETY: NUL-terminated by the shim.
        let driver = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
        Ok(PortInfo { max_rx_queues: max_rx, max_tx_queues: max_tx, driver })
    }

    /// The link's state now (no waiting): `Some(speed in Mb/s)` when up.
    pub fn link_up(&self) -> Option<u32> {
        let mut speed = 0u32;
        // SAFETY: valid out-pointer.
        let rc = unsafe { sys::prism_port_link_up(self.0, &mut speed) };
        (rc == 1).then_some(speed)
    }

    /// Polls the link until it is up or `timeout` has passed. A NIC's
    /// autonegotiation takes seconds; a memif client waits for its server.
    pub fn wait_link_up(&self, timeout: std::time::Duration) -> Result<u32, DpdkError> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(speed) = self.link_up() {
                return Ok(speed);
            }
            if std::time::Instant::now() >= deadline {
                return Err(DpdkError::LinkDown { port: self.0, name: self.name(), waited_ms: timeout.as_millis() as u64 });
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Configures `rxq` RX and `txq` TX queues with `desc` descriptors each, and starts the port.
    pub fn start(&self, pool: &Mempool, rxq: u16, txq: u16, desc: u16, mtu: u16) -> Result<(), DpdkError> {
        let p = self.0;
        // SAFETY (all calls below): EAL is initialised, the port id was returned by EAL,
        // and the pool outlives the port.
        unsafe {
            check(p, "configure", sys::prism_port_configure(p, rxq, txq, mtu)).map_err(|e| match e {
                DpdkError::Port { port, call, reason } if rxq > 1 || txq > 1 => DpdkError::Port {
                    port,
                    call,
                    reason: format!("{reason}; the device must offer {rxq} RX and {txq} TX queues (one TX queue per worker; net_af_packet: add qpairs={})", rxq.max(txq)),
                },
                e => e,
            })?;
            for q in 0..rxq {
                check(p, "rx_queue_setup", sys::prism_rx_queue_setup(p, q, desc, pool.ptr.as_ptr()))?;
            }
            for q in 0..txq {
                check(p, "tx_queue_setup", sys::prism_tx_queue_setup(p, q, desc))?;
            }
            check(p, "start", sys::prism_port_start(p))?;
            // Virtual devices may not support promiscuous mode; the switch still sees its own MACs.
            let _ = sys::prism_port_promiscuous(p);
        }
        Ok(())
    }

    pub fn stop(&self) {
        // SAFETY: valid port id; stopping twice is harmless.
        unsafe {
            sys::prism_port_stop(self.0);
            sys::prism_port_close(self.0);
        }
    }

    pub fn mac(&self) -> [u8; 6] {
        let mut m = [0u8; 6];
        // SAFETY: 6-byte out buffer.
        unsafe { sys::prism_port_mac(self.0, m.as_mut_ptr()) };
        m
    }

    pub fn stats(&self) -> PortStats {
        let mut s = PortStats::default();
        // SAFETY: valid out-pointer.
        unsafe { sys::prism_port_stats(self.0, &mut s) };
        s
    }

    /// Receives up to `out.capacity() - out.len()` packets (at most 64 per call) into `out`.
    pub fn rx_burst(&self, q: u16, out: &mut Vec<Mbuf>, max: usize) -> usize {
        let mut raw = [std::ptr::null_mut::<sys::rte_mbuf>(); 64];
        let n = max.min(64) as u16;
        // SAFETY: raw has room for n pointers; each returned pointer is an mbuf we now own.
        let got = unsafe { sys::prism_rx_burst(self.0, q, raw.as_mut_ptr(), n) } as usize;
        for &p in &raw[..got] {
            if let Some(nn) = NonNull::new(p) {
                out.push(Mbuf(nn));
            }
        }
        got
    }

    /// Sends `pkts` (drained); returns how many the device took. The rest are freed.
    pub fn tx_burst(&self, q: u16, pkts: &mut Vec<Mbuf>) -> usize {
        let mut sent_total = 0;
        while !pkts.is_empty() {
            let n = pkts.len().min(64);
            let mut raw = [std::ptr::null_mut::<sys::rte_mbuf>(); 64];
            for (slot, m) in raw.iter_mut().zip(pkts.drain(..n)) {
                *slot = m.into_raw();
            }
            // SAFETY: raw[..n] are owned mbufs; the device takes ownership of the first `sent`.
            let sent = unsafe { sys::prism_tx_burst(self.0, q, raw.as_mut_ptr(), n as u16) } as usize;
            for &p in &raw[sent..n] {
                // SAFETY: not taken by the device: still ours to free.
                unsafe { sys::prism_mbuf_free(p) };
            }
            sent_total += sent;
            if sent < n {
                break;
            }
        }
        pkts.clear();
        sent_total
    }
}

/// The engine's frames built straight into mbufs queued per port.
pub struct MbufSink<'a> {
    pub pool: &'a Mempool,
    pub txq: &'a mut [Vec<Mbuf>],
    /// Frames dropped because the pool was empty.
    pub no_mbuf: u64,
}

impl crate::engine::Sink for MbufSink<'_> {
    fn buffer(&mut self, port: u16, len: usize) -> Option<&mut [u8]> {
        let Some(m) = self.pool.alloc_len(len) else {
            self.no_mbuf += 1;
            return None;
        };
        let q = self.txq.get_mut(port as usize)?;
        q.push(m);
        q.last_mut().map(Mbuf::data_mut)
    }

    fn copies_last(&self) -> bool {
        true
    }

    fn copy_last(&mut self, from: u16, port: u16) -> Option<&mut [u8]> {
        let src = self.txq.get(from as usize)?.last()?.data();
        let Some(mut m) = self.pool.alloc_len(src.len()) else {
            self.no_mbuf += 1;
            return None;
        };
        m.data_mut().copy_from_slice(src);
        let q = self.txq.get_mut(port as usize)?;
        q.push(m);
        q.last_mut().map(Mbuf::data_mut)
    }
}

/// Pre-built frames sent again and again without copying (pktgen's line-rate path).
///
/// Each mbuf carries a stock of references granted in advance (one per future
/// send), so that a send costs no atomic operation of ours: the driver's free
/// consumes one reference. The stock is topped up in blocks; on drop the
/// references never used are taken back, so buffers still in a device's TX
/// ring are freed when the device is done with them.
pub struct Replayer {
    mbufs: Vec<Mbuf>,
    raw: Vec<*mut sys::rte_mbuf>,
    /// Per mbuf: references granted but not yet sent.
    stock: Vec<u16>,
    at: usize,
}

// SAFETY: the raw pointers are the same mbufs `mbufs` owns; the Replayer moves as a whole.
unsafe impl Send for Replayer {}

const GRANT: u16 = 16384;

impl Replayer {
    /// Copies each frame into an mbuf once.
    pub fn new(pool: &Mempool, frames: &[Vec<u8>]) -> Option<Replayer> {
        let mbufs: Vec<Mbuf> = frames.iter().map(|f| pool.frame(f)).collect::<Option<_>>()?;
        if mbufs.is_empty() {
            return None;
        }
        let raw: Vec<_> = mbufs.iter().map(|m| m.0.as_ptr()).collect();
        for &m in &raw {
            // SAFETY: a live mbuf we own; the added references are tracked in `stock`.
            unsafe { sys::prism_mbuf_refcnt_add(m, GRANT as i16) };
        }
        let stock = vec![GRANT; raw.len()];
        Some(Replayer { mbufs, raw, stock, at: 0 })
    }

    /// Sends the next `burst` frames (wrapping around); returns how many the device took.
    pub fn send(&mut self, port: Port, queue: u16, burst: usize) -> usize {
        let n = burst.min(64).min(self.raw.len());
        let mut batch = [std::ptr::null_mut::<sys::rte_mbuf>(); 64];
        let mut idx = [0usize; 64];
        for i in 0..n {
            let k = self.at;
            if self.stock[k] == 0 {
                // SAFETY: a live mbuf we own; the grant is recorded right after.
                unsafe { sys::prism_mbuf_refcnt_add(self.raw[k], GRANT as i16) };
                self.stock[k] = GRANT;
            }
            batch[i] = self.raw[k];
            idx[i] = k;
            self.at = (self.at + 1) % self.raw.len();
        }
        // SAFETY: batch[..n] are live mbufs, each with a granted reference for the
        // device to consume; packets not taken keep theirs (stock unchanged).
        let sent = unsafe { sys::prism_tx_burst(port.0, queue, batch.as_mut_ptr(), n as u16) } as usize;
        for &k in &idx[..sent] {
            self.stock[k] -= 1;
        }
        if sent < n {
            // Resume with the first packet the device did not take.
            self.at = idx[sent];
        }
        sent
    }

    pub fn len(&self) -> usize {
        self.mbufs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mbufs.is_empty()
    }
}

impl Drop for Replayer {
    fn drop(&mut self) {
        for (&m, &left) in self.raw.iter().zip(&self.stock) {
            if left > 0 {
                // SAFETY: takes back exactly the references granted and never sent;
                // our own reference is released when `mbufs` drops.
                unsafe { sys::prism_mbuf_refcnt_add(m, -(left as i32) as i16) };
            }
        }
    }
}
