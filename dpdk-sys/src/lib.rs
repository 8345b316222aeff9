//! Raw bindings to the system DPDK 22.11 through `csrc/shim.c`.
//!
//! DPDK's structs stay on the C side: Rust sees opaque pointers and the
//! shim's flat functions. The safe layer is `dataplane::dpdk`.

#![allow(non_camel_case_types)]

use libc::{c_char, c_int, c_uint, c_void, size_t};

/// Opaque `struct rte_mempool`.
#[repr(C)]
pub struct rte_mempool {
    _private: [u8; 0],
}

/// Opaque `struct rte_mbuf`.
#[repr(C)]
pub struct rte_mbuf {
    _private: [u8; 0],
}

/// `struct prism_port_stats` of the shim.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct prism_port_stats {
    pub ipackets: u64,
    pub opackets: u64,
    pub ibytes: u64,
    pub obytes: u64,
    pub imissed: u64,
    pub ierrors: u64,
    pub oerrors: u64,
    pub rx_nombuf: u64,
}

extern "C" {
    pub fn prism_eal_init(argc: c_int, argv: *mut *mut c_char) -> c_int;
    pub fn prism_eal_cleanup() -> c_int;
    pub fn prism_errno() -> c_int;
    pub fn prism_strerror(e: c_int) -> *const c_char;

    pub fn prism_pool_create(name: *const c_char, n: c_uint, cache: c_uint, data_room: u16, socket: c_int) -> *mut rte_mempool;
    pub fn prism_pool_free(mp: *mut rte_mempool);
    pub fn prism_pool_avail(mp: *mut rte_mempool) -> c_uint;

    pub fn prism_port_count() -> u16;
    pub fn prism_port_by_name(name: *const c_char, port: *mut u16) -> c_int;
    pub fn prism_port_name(port: u16, out: *mut c_char, len: size_t) -> c_int;
    pub fn prism_port_socket(port: u16) -> c_int;
    pub fn prism_port_info(port: u16, max_rx: *mut u16, max_tx: *mut u16, driver: *mut c_char, len: size_t) -> c_int;
    pub fn prism_port_link_up(port: u16, speed_mbps: *mut u32) -> c_int;
    pub fn prism_port_configure(port: u16, nrx: u16, ntx: u16, mtu: u16) -> c_int;
    pub fn prism_rx_queue_setup(port: u16, q: u16, desc: u16, mp: *mut rte_mempool) -> c_int;
    pub fn prism_tx_queue_setup(port: u16, q: u16, desc: u16) -> c_int;
    pub fn prism_port_start(port: u16) -> c_int;
    pub fn prism_port_stop(port: u16) -> c_int;
    pub fn prism_port_close(port: u16) -> c_int;
    pub fn prism_port_promiscuous(port: u16) -> c_int;
    pub fn prism_port_mac(port: u16, out: *mut u8) -> c_int;
    pub fn prism_port_stats(port: u16, s: *mut prism_port_stats) -> c_int;

    pub fn prism_rx_burst(port: u16, q: u16, pkts: *mut *mut rte_mbuf, n: u16) -> u16;
    pub fn prism_tx_burst(port: u16, q: u16, pkts: *mut *mut rte_mbuf, n: u16) -> u16;

    pub fn prism_mbuf_alloc(mp: *mut rte_mempool) -> *mut rte_mbuf;
    pub fn prism_mbuf_alloc_bulk(mp: *mut rte_mempool, out: *mut *mut rte_mbuf, n: c_uint) -> c_int;
    pub fn prism_mbuf_free(m: *mut rte_mbuf);
    pub fn prism_mbuf_data(m: *mut rte_mbuf) -> *mut c_void;
    pub fn prism_mbuf_data_len(m: *const rte_mbuf) -> u16;
    pub fn prism_mbuf_pkt_len(m: *const rte_mbuf) -> u32;
    pub fn prism_mbuf_nb_segs(m: *const rte_mbuf) -> u16;
    pub fn prism_mbuf_tailroom(m: *const rte_mbuf) -> u16;
    pub fn prism_mbuf_set_len(m: *mut rte_mbuf, len: u16) -> *mut c_void;
    pub fn prism_mbuf_refcnt_inc(m: *mut rte_mbuf);
    pub fn prism_tx_replay(port: u16, q: u16, pkts: *mut *mut rte_mbuf, n: u16) -> u16;
    pub fn prism_mbuf_refcnt_add(m: *mut rte_mbuf, delta: i16) -> u16;

    pub fn prism_flow_operation(port: u16, dst: *const u8, key: *const u8, queue: u16, validate_only: c_int, handle: *mut *mut c_void, msg: *mut c_char, len: size_t) -> c_int;
    pub fn prism_flow_destroy(port: u16, handle: *mut c_void) -> c_int;

    pub fn prism_lcore_id() -> c_uint;
    pub fn prism_thread_register() -> c_int;
    pub fn prism_thread_unregister();
    pub fn prism_rdtsc() -> u64;
    pub fn prism_tsc_hz() -> u64;
}
