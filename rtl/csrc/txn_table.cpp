// C ABI over the Verilator model of prism_txn_table (TXN_SLOTS 16,
// RETIRED_SLOTS 8, LATENCY TXN_SLOTS + 3): one call a clock cycle, the inputs driven,
// the outputs sampled before the edge, then the edge.
#include "Vprism_txn_table.h"
#include "pipe.h"

using TxnModel = Model<Vprism_txn_table>;

// Laid out as prism_rtl::TxnIn and TxnOut (repr(C)).
struct TxnIn {
    uint32_t key[3];   // l_key, least significant word first
    uint32_t txn, crc;
    uint64_t gen;      // 48 bits
    uint16_t len, w_detail;
    uint8_t rst, l_valid, w_insert, w_purge, w_retire, w_status;
};
struct TxnOut {
    uint16_t detail;
    uint8_t valid, busy, hit, same, status, stale;
};

extern "C" {
void *prism_txn_table_new() { return new TxnModel(); }
void prism_txn_table_free(void *p) { delete static_cast<TxnModel *>(p); }
uint32_t prism_txn_table_latency() { return 16 + 3; }

void prism_txn_table_cycle(void *p, const TxnIn *in, TxnOut *out) {
    auto &t = static_cast<TxnModel *>(p)->top;
    t.rst = in->rst;
    t.l_valid = in->l_valid;
    for (int w = 0; w < 3; w++) t.l_key[w] = in->key[w];
    t.l_txn = in->txn;
    t.l_gen = in->gen & 0xFFFFFFFFFFFFull;
    t.l_crc = in->crc;
    t.l_len = in->len;
    t.w_insert = in->w_insert;
    t.w_status = in->w_status;
    t.w_detail = in->w_detail;
    t.w_purge = in->w_purge;
    t.w_retire = in->w_retire;
    t.eval();
    out->valid = t.m_valid;
    out->busy = t.m_busy;
    out->hit = t.m_hit;
    out->same = t.m_same;
    out->status = t.m_status;
    out->detail = t.m_detail;
    out->stale = t.m_stale;
    tick(t);
}
}
