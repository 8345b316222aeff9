/* A narrow C ABI over DPDK 22.11 for the Rust side: the static-inline fast
 * path made linkable, and the few configuration calls the switch and pktgen
 * need, with DPDK's structs kept on this side. */
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_cycles.h>
#include <stdio.h>
#include <string.h>

int prism_eal_init(int argc, char **argv) { return rte_eal_init(argc, argv); }
int prism_eal_cleanup(void) { return rte_eal_cleanup(); }
int prism_errno(void) { return rte_errno; }
const char *prism_strerror(int e) { return rte_strerror(e); }

struct rte_mempool *prism_pool_create(const char *name, unsigned n, unsigned cache, uint16_t data_room, int socket) {
    return rte_pktmbuf_pool_create(name, n, cache, 0, data_room, socket);
}
void prism_pool_free(struct rte_mempool *mp) { rte_mempool_free(mp); }
unsigned prism_pool_avail(struct rte_mempool *mp) { return rte_mempool_avail_count(mp); }

uint16_t prism_port_count(void) { return rte_eth_dev_count_avail(); }
int prism_port_by_name(const char *name, uint16_t *port) { return rte_eth_dev_get_port_by_name(name, port); }
int prism_port_name(uint16_t port, char *out, size_t len) {
    char name[RTE_ETH_NAME_MAX_LEN];
    int rc = rte_eth_dev_get_name_by_port(port, name);
    if (rc == 0) { strncpy(out, name, len - 1); out[len - 1] = 0; }
    return rc;
}
int prism_port_socket(uint16_t port) { return rte_eth_dev_socket_id(port); }

/* What the device offers: queue limits and the driver's name. */
int prism_port_info(uint16_t port, uint16_t *max_rx, uint16_t *max_tx, char *driver, size_t len) {
    struct rte_eth_dev_info info;
    int rc = rte_eth_dev_info_get(port, &info);
    if (rc != 0) return rc;
    *max_rx = info.max_rx_queues;
    *max_tx = info.max_tx_queues;
    strncpy(driver, info.driver_name ? info.driver_name : "?", len - 1);
    driver[len - 1] = 0;
    return 0;
}
/* Link state without waiting: 1 up, 0 down, negative on error. */
int prism_port_link_up(uint16_t port, uint32_t *speed_mbps) {
    struct rte_eth_link link;
    memset(&link, 0, sizeof link);
    int rc = rte_eth_link_get_nowait(port, &link);
    if (rc != 0) return rc;
    *speed_mbps = link.link_speed;
    return link.link_status == RTE_ETH_LINK_UP;
}

/* Configures queues with defaults; max_rx_pktlen from the MTU. */
int prism_port_configure(uint16_t port, uint16_t nrx, uint16_t ntx, uint16_t mtu) {
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof conf);
    struct rte_eth_dev_info info;
    int rc = rte_eth_dev_info_get(port, &info);
    if (rc != 0) return rc;
    if (nrx > 1) conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_PROTO_MASK & info.flow_type_rss_offloads;
    if (conf.rx_adv_conf.rss_conf.rss_hf == 0) conf.rxmode.mq_mode = RTE_ETH_MQ_RX_NONE;
    rc = rte_eth_dev_configure(port, nrx, ntx, &conf);
    if (rc != 0) return rc;
    /* Virtual devices may not support MTU changes; that is not an error here. */
    (void)rte_eth_dev_set_mtu(port, mtu);
    return 0;
}
int prism_rx_queue_setup(uint16_t port, uint16_t q, uint16_t desc, struct rte_mempool *mp) {
    return rte_eth_rx_queue_setup(port, q, desc, rte_eth_dev_socket_id(port), NULL, mp);
}
int prism_tx_queue_setup(uint16_t port, uint16_t q, uint16_t desc) {
    return rte_eth_tx_queue_setup(port, q, desc, rte_eth_dev_socket_id(port), NULL);
}
int prism_port_start(uint16_t port) { return rte_eth_dev_start(port); }
int prism_port_stop(uint16_t port) { return rte_eth_dev_stop(port); }
int prism_port_close(uint16_t port) { return rte_eth_dev_close(port); }
int prism_port_promiscuous(uint16_t port) { return rte_eth_promiscuous_enable(port); }
int prism_port_mac(uint16_t port, uint8_t out[6]) {
    struct rte_ether_addr a;
    int rc = rte_eth_macaddr_get(port, &a);
    if (rc == 0) memcpy(out, a.addr_bytes, 6);
    return rc;
}

/* Port statistics, flattened. */
struct prism_port_stats { uint64_t ipackets, opackets, ibytes, obytes, imissed, ierrors, oerrors, rx_nombuf; };
int prism_port_stats(uint16_t port, struct prism_port_stats *s) {
    struct rte_eth_stats st;
    int rc = rte_eth_stats_get(port, &st);
    if (rc != 0) return rc;
    s->ipackets = st.ipackets; s->opackets = st.opackets; s->ibytes = st.ibytes; s->obytes = st.obytes;
    s->imissed = st.imissed; s->ierrors = st.ierrors; s->oerrors = st.oerrors; s->rx_nombuf = st.rx_nombuf;
    return 0;
}

uint16_t prism_rx_burst(uint16_t port, uint16_t q, struct rte_mbuf **pkts, uint16_t n) {
    return rte_eth_rx_burst(port, q, pkts, n);
}
uint16_t prism_tx_burst(uint16_t port, uint16_t q, struct rte_mbuf **pkts, uint16_t n) {
    return rte_eth_tx_burst(port, q, pkts, n);
}

struct rte_mbuf *prism_mbuf_alloc(struct rte_mempool *mp) { return rte_pktmbuf_alloc(mp); }
int prism_mbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **out, unsigned n) { return rte_pktmbuf_alloc_bulk(mp, out, n); }
void prism_mbuf_free(struct rte_mbuf *m) { rte_pktmbuf_free(m); }
void *prism_mbuf_data(struct rte_mbuf *m) { return rte_pktmbuf_mtod(m, void *); }
uint16_t prism_mbuf_data_len(const struct rte_mbuf *m) { return m->data_len; }
uint32_t prism_mbuf_pkt_len(const struct rte_mbuf *m) { return m->pkt_len; }
uint16_t prism_mbuf_nb_segs(const struct rte_mbuf *m) { return m->nb_segs; }
uint16_t prism_mbuf_tailroom(const struct rte_mbuf *m) { return rte_pktmbuf_tailroom(m); }
/* Makes the mbuf exactly `len` bytes of one segment; returns the data pointer or NULL. */
void *prism_mbuf_set_len(struct rte_mbuf *m, uint16_t len) {
    rte_pktmbuf_reset(m);
    return rte_pktmbuf_append(m, len);
}
void prism_mbuf_refcnt_inc(struct rte_mbuf *m) { rte_mbuf_refcnt_update(m, 1); }
/* Adds delta (may be negative) to an mbuf's reference count; returns the new count. */
uint16_t prism_mbuf_refcnt_add(struct rte_mbuf *m, int16_t delta) { return rte_mbuf_refcnt_update(m, delta); }

/* Sends pkts[0..n) again and again without copying: each gets one more
 * reference before the burst; references the device did not take are dropped. */
uint16_t prism_tx_replay(uint16_t port, uint16_t q, struct rte_mbuf **pkts, uint16_t n) {
    for (uint16_t i = 0; i < n; i++) rte_mbuf_refcnt_update(pkts[i], 1);
    uint16_t sent = rte_eth_tx_burst(port, q, pkts, n);
    for (uint16_t i = sent; i < n; i++) rte_pktmbuf_free(pkts[i]);
    return sent;
}

unsigned prism_lcore_id(void) { return rte_lcore_id(); }
/* Gives a thread EAL did not start an lcore id, so mempool caches work on it. */
int prism_thread_register(void) { return rte_thread_register(); }
void prism_thread_unregister(void) { rte_thread_unregister(); }
uint64_t prism_rdtsc(void) { return rte_rdtsc(); }
uint64_t prism_tsc_hz(void) { return rte_get_tsc_hz(); }

/* One PRISM operation to one RX queue: ETH (dst = the switch, type 0x88B5)
 * / RAW 14 bytes from the PRISM header's byte 2 (Job, Group, Group
 * generation, Operation ID; the generation masked out, so every generation
 * of the operation matches) / action QUEUE. validate_only: ask the PMD
 * whether it could, install nothing. 0 on success (the rule in *handle),
 * else a negative errno and the PMD's message in msg. */
int prism_flow_operation(uint16_t port, const uint8_t dst[6], const uint8_t key[14], uint16_t queue, int validate_only, void **handle, char *msg, size_t len) {
    static const uint8_t key_mask[14] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0xff, 0xff};
    struct rte_flow_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.ingress = 1;
    struct rte_flow_item_eth eth_spec, eth_mask;
    memset(&eth_spec, 0, sizeof eth_spec);
    memset(&eth_mask, 0, sizeof eth_mask);
    memcpy(eth_spec.hdr.dst_addr.addr_bytes, dst, 6);
    memset(eth_mask.hdr.dst_addr.addr_bytes, 0xff, 6);
    eth_spec.hdr.ether_type = rte_cpu_to_be_16(0x88B5);
    eth_mask.hdr.ether_type = 0xffff;
    struct rte_flow_item_raw raw_spec, raw_mask;
    memset(&raw_spec, 0, sizeof raw_spec);
    raw_spec.relative = 1;
    raw_spec.offset = 2;
    raw_spec.length = 14;
    raw_spec.pattern = key;
    raw_mask = rte_flow_item_raw_mask;
    raw_mask.pattern = key_mask;
    struct rte_flow_item pattern[3];
    memset(pattern, 0, sizeof pattern);
    pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
    pattern[0].spec = &eth_spec;
    pattern[0].mask = &eth_mask;
    pattern[1].type = RTE_FLOW_ITEM_TYPE_RAW;
    pattern[1].spec = &raw_spec;
    pattern[1].mask = &raw_mask;
    pattern[2].type = RTE_FLOW_ITEM_TYPE_END;
    struct rte_flow_action_queue to_queue = {.index = queue};
    struct rte_flow_action actions[2];
    memset(actions, 0, sizeof actions);
    actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
    actions[0].conf = &to_queue;
    actions[1].type = RTE_FLOW_ACTION_TYPE_END;
    struct rte_flow_error err;
    memset(&err, 0, sizeof err);
    int rc = rte_flow_validate(port, &attr, pattern, actions, &err);
    if (rc == 0 && !validate_only) {
        struct rte_flow *f = rte_flow_create(port, &attr, pattern, actions, &err);
        if (f == NULL) rc = -rte_errno; else *handle = f;
    }
    if (rc != 0 && len > 0) {
        snprintf(msg, len, "%s", err.message ? err.message : rte_strerror(-rc));
    }
    return rc;
}

int prism_flow_destroy(uint16_t port, void *handle) {
    struct rte_flow_error err;
    return rte_flow_destroy(port, (struct rte_flow *)handle, &err);
}
