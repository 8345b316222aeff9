// C ABI over the Verilator model of prism_switch: one call is one clock.
#include "Vprism_switch.h"
#include "verilated.h"
#include <cstdint>
#include <cstring>

struct SwitchModel {
    VerilatedContext ctx;
    Vprism_switch top{&ctx};
    uint64_t cycle = 0;
};

struct Beat {
    uint8_t data[64];
    uint64_t keep;
    uint8_t valid, last, _pad[6];
};

static uint64_t mac_u64(const uint8_t m[6]) {
    uint64_t x = 0;
    for (int i = 0; i < 6; i++) x = (x << 8) | m[i];
    return x;
}

extern "C" {
void *prism_switch_new(const uint8_t node_mac[6], const uint8_t am_mac[6], uint16_t control_ep) {
    SwitchModel *m = new SwitchModel();
    m->top.node_mac = mac_u64(node_mac);
    m->top.am_mac = mac_u64(am_mac);
    m->top.control_ep = control_ep;
    m->top.s_axis_tvalid = 0;
    m->top.m_axis_tready = 1;
    m->top.rst = 1;
    for (int i = 0; i < 2; i++) {
        m->top.clk = 0;
        m->top.eval();
        m->top.clk = 1;
        m->top.eval();
    }
    m->top.rst = 0;
    return m;
}

void prism_switch_free(void *p) { delete static_cast<SwitchModel *>(p); }

// One clock. `in` offers a beat (in->valid); returns 1 when the switch took it.
// `out` receives the egress beat taken on this clock (out->valid), with
// `out_ready` as m_axis_tready.
int prism_switch_cycle(void *p, const Beat *in, int out_ready, Beat *out, uint64_t *cycle) {
    SwitchModel *m = static_cast<SwitchModel *>(p);
    m->top.s_axis_tvalid = in->valid;
    for (int w = 0; w < 16; w++) {
        uint32_t word;
        std::memcpy(&word, in->data + 4 * w, 4);
        m->top.s_axis_tdata[w] = word;
    }
    m->top.s_axis_tkeep = in->keep;
    m->top.s_axis_tlast = in->last;
    m->top.m_axis_tready = out_ready;
    m->top.clk = 0;
    m->top.eval();
    int took = in->valid && m->top.s_axis_tready;
    out->valid = m->top.m_axis_tvalid && out_ready;
    if (out->valid) {
        for (int w = 0; w < 16; w++) {
            uint32_t word = m->top.m_axis_tdata[w];
            std::memcpy(out->data + 4 * w, &word, 4);
        }
        out->keep = m->top.m_axis_tkeep;
        out->last = m->top.m_axis_tlast;
    }
    m->top.clk = 1;
    m->top.eval();
    *cycle = m->cycle++;
    return took;
}

// Whether nothing is in flight (a quiet switch stays quiet without input).
int prism_switch_idle(void *p) { return static_cast<SwitchModel *>(p)->top.m_idle; }

// Advances the cycle count without clocking: only for a quiet switch, whose
// state cannot change without input (there are no timers in it).
void prism_switch_skip(void *p, uint64_t cycles) { static_cast<SwitchModel *>(p)->cycle += cycles; }

// The node's counters (prism_pkg::CNT_* layout); returns how many.
int prism_switch_counters(void *p, uint32_t *dst, int n) {
    SwitchModel *m = static_cast<SwitchModel *>(p);
    int total = sizeof(m->top.m_counters) / sizeof(m->top.m_counters[0]);
    for (int i = 0; i < total && i < n; i++) dst[i] = m->top.m_counters[i];
    return total;
}
}
