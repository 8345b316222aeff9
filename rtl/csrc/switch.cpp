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

static int nports(SwitchModel *m) { return sizeof(m->top.s_axis_tkeep) / sizeof(m->top.s_axis_tkeep[0]); }

extern "C" {
void *prism_switch_new(const uint8_t node_mac[6], const uint8_t am_mac[6], uint16_t control_ep) {
    SwitchModel *m = new SwitchModel();
    m->top.node_mac = mac_u64(node_mac);
    m->top.am_mac = mac_u64(am_mac);
    m->top.control_ep = control_ep;
    m->top.s_axis_tvalid = 0;
    m->top.m_axis_tready = 0;
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

int prism_switch_ports(void *p) { return nports(static_cast<SwitchModel *>(p)); }

// One clock. `in[i]` offers a beat on port i (in[i].valid); bit i of the
// result says port i took it. `out[i]` receives the egress beat taken on
// port i on this clock (out[i].valid); bit i of `out_ready` is that port's
// m_axis_tready. Both arrays hold prism_switch_ports() entries.
uint32_t prism_switch_cycle(void *p, const Beat *in, uint32_t out_ready, Beat *out, uint64_t *cycle) {
    SwitchModel *m = static_cast<SwitchModel *>(p);
    int n = nports(m);
    uint32_t valid = 0, last = 0;
    for (int i = 0; i < n; i++) {
        for (int w = 0; w < 16; w++) {
            uint32_t word;
            std::memcpy(&word, in[i].data + 4 * w, 4);
            m->top.s_axis_tdata[i][w] = word;
        }
        m->top.s_axis_tkeep[i] = in[i].keep;
        valid |= (uint32_t)(in[i].valid != 0) << i;
        last |= (uint32_t)(in[i].last != 0) << i;
    }
    m->top.s_axis_tvalid = valid;
    m->top.s_axis_tlast = last;
    m->top.m_axis_tready = out_ready;
    m->top.clk = 0;
    m->top.eval();
    uint32_t took = valid & m->top.s_axis_tready;
    for (int i = 0; i < n; i++) {
        out[i].valid = ((m->top.m_axis_tvalid >> i) & 1) && ((out_ready >> i) & 1);
        if (out[i].valid) {
            for (int w = 0; w < 16; w++) {
                uint32_t word = m->top.m_axis_tdata[i][w];
                std::memcpy(out[i].data + 4 * w, &word, 4);
            }
            out[i].keep = m->top.m_axis_tkeep[i];
            out[i].last = (m->top.m_axis_tlast >> i) & 1;
        }
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
