// C ABI over the Verilator model of prism_rx_check.
#include "Vprism_rx_validate.h"
#include "verilated.h"
#include <cstdint>
#include <cstring>

struct Model {
    VerilatedContext ctx;
    Vprism_rx_validate top{&ctx};
    uint64_t cycle = 0;
};

struct Verdict {
    uint8_t valid, prism, local, ok, body_walk, cls, reason, _pad;
    uint16_t offset;
    uint64_t cycle;
};

static void tick(Model *m) {
    m->top.clk = 0;
    m->top.eval();
    m->top.clk = 1;
    m->top.eval();
    m->cycle++;
}

static void read_verdict(Model *m, Verdict *v) {
    v->valid = m->top.m_verdict_valid;
    v->prism = m->top.m_verdict_prism;
    v->local = m->top.m_verdict_local;
    v->ok = m->top.m_verdict_ok;
    v->body_walk = m->top.m_verdict_body_walk;
    v->cls = m->top.m_verdict_class;
    v->reason = m->top.m_verdict_reason;
    v->offset = m->top.m_verdict_offset;
    v->cycle = m->cycle;
}

extern "C" {
void *prism_rx_new(const uint8_t mac[6]) {
    Model *m = new Model();
    uint64_t x = 0;
    for (int i = 0; i < 6; i++) x = (x << 8) | mac[i];
    m->top.local_mac = x;
    m->top.rst = 1;
    m->top.s_axis_tvalid = 0;
    tick(m);
    tick(m);
    m->top.rst = 0;
    return m;
}

void prism_rx_free(void *p) { delete static_cast<Model *>(p); }

// One clock with an optional beat (valid = 0 for an idle cycle); fills `v` from the outputs after the edge.
void prism_rx_cycle(void *p, int valid, const uint8_t data[64], uint64_t keep, int last, Verdict *v) {
    Model *m = static_cast<Model *>(p);
    m->top.s_axis_tvalid = valid;
    if (valid) {
        for (int w = 0; w < 16; w++) {
            uint32_t word;
            std::memcpy(&word, data + 4 * w, 4);
            m->top.s_axis_tdata[w] = word;
        }
        m->top.s_axis_tkeep = keep;
        m->top.s_axis_tlast = last;
    }
    tick(m);
    read_verdict(m, v);
}
}
