// The C ABI over a Verilator model of prism_switch, one call a clock, for
// each build of the switch: the including shim defines PRISM_TOP (the model
// class, its header included) and PRISM_FN(name) (the exported names).
// Its types are in an anonymous namespace: two shims in one binary must not
// share the inline members of a SwitchModel of another model.
#pragma once
#include "verilated.h"
#include <cstdint>
#include <cstring>

namespace {
struct SwitchModel {
    VerilatedContext ctx;
    PRISM_TOP top{&ctx};
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

} // namespace

extern "C" {
void *PRISM_FN(new)(const uint8_t node_mac[6], const uint8_t am_mac[6], uint16_t control_ep) {
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

// Verilator keeps a context per thread (set when a context is constructed)
// and uses it when a model erases its scopes and on $error: a model made
// before another one in the same thread, freed after that one, would reach
// a freed context. Every call that runs the model names its own first.
void PRISM_FN(free)(void *p) {
    SwitchModel *m = static_cast<SwitchModel *>(p);
    Verilated::threadContextp(&m->ctx);
    delete m;
}

int PRISM_FN(ports)(void *p) { return nports(static_cast<SwitchModel *>(p)); }

// One clock. `in[i]` offers a beat on port i (in[i].valid); bit i of the
// result says port i took it. `out[i]` receives the egress beat taken on
// port i on this clock (out[i].valid); bit i of `out_ready` is that port's
// m_axis_tready. Both arrays hold PRISM_FN(ports)() entries.
uint32_t PRISM_FN(cycle)(void *p, const Beat *in, uint32_t out_ready, Beat *out, uint64_t *cycle) {
    SwitchModel *m = static_cast<SwitchModel *>(p);
    Verilated::threadContextp(&m->ctx);
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
int PRISM_FN(idle)(void *p) { return static_cast<SwitchModel *>(p)->top.m_idle; }

// Advances the cycle count without clocking: only for a quiet switch, whose
// state cannot change without input (there are no timers in it).
void PRISM_FN(skip)(void *p, uint64_t cycles) { static_cast<SwitchModel *>(p)->cycle += cycles; }

// The node's counters (prism_pkg::CNT_* layout); returns how many.
int PRISM_FN(counters)(void *p, uint32_t *dst, int n) {
    SwitchModel *m = static_cast<SwitchModel *>(p);
    int total = sizeof(m->top.m_counters) / sizeof(m->top.m_counters[0]);
    for (int i = 0; i < total && i < n; i++) dst[i] = m->top.m_counters[i];
    return total;
}
}
