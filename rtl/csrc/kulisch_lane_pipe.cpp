// C ABI over the Verilator model of prism_kulisch_lane_pipe (three register
// stages, KW = 320 bits: ten 32-bit words, least significant first).
#include "Vprism_kulisch_lane_pipe.h"
#include "verilated.h"
#include <cstdint>

struct KulischPipeModel {
    VerilatedContext ctx;
    Vprism_kulisch_lane_pipe top{&ctx};
};

static void tick(KulischPipeModel *m) {
    m->top.clk = 0;
    m->top.eval();
    m->top.clk = 1;
    m->top.eval();
}

extern "C" {
void *prism_kulisch_lane_pipe_new() { return new KulischPipeModel(); }
void prism_kulisch_lane_pipe_free(void *p) { delete static_cast<KulischPipeModel *>(p); }
uint32_t prism_kulisch_lane_pipe_latency() { return 3; }

// Streams n operations in, one a cycle while en is high, and collects the
// results in the order m_valid presents them. Operation i: acc[10i..10i+10),
// flags[i], is_kulisch[i] (0 or 1), fp32[i], kstate[i], kint[10i..10i+10);
// result i: acc_o[10i..10i+10), flags_o[i]. stall_seed != 0: en is low on
// about one cycle in four (an xorshift sequence). Returns the results
// collected; *cycles is the clock cycles from the first operation to the
// last result.
size_t prism_kulisch_lane_pipe_batch(void *p, const uint32_t *acc, const uint8_t *flags, const uint8_t *is_kulisch,
                                     const uint32_t *fp32, const uint8_t *kstate, const uint32_t *kint, uint32_t *acc_o,
                                     uint8_t *flags_o, size_t n, uint64_t stall_seed, uint64_t *cycles) {
    KulischPipeModel *m = static_cast<KulischPipeModel *>(p);
    uint64_t x = stall_seed;
    size_t in = 0, out = 0;
    uint64_t c = 0;
    // Drain whatever an earlier batch left in flight.
    m->top.s_valid = 0;
    m->top.en = 1;
    for (int i = 0; i < 16; i++) tick(m);
    while (out < n && c < 64 * (uint64_t)n + 1000) {
        bool en = true;
        if (x) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            en = (x & 3) != 0;
        }
        bool have = in < n;
        m->top.en = en;
        m->top.s_valid = have;
        for (int w = 0; w < 10; w++) {
            m->top.acc[w] = have ? acc[10 * in + w] : 0;
            m->top.kint[w] = have ? kint[10 * in + w] : 0;
        }
        m->top.flags = have ? flags[in] : 0;
        m->top.is_kulisch = have ? is_kulisch[in] : 0;
        m->top.fp32 = have ? fp32[in] : 0;
        m->top.kstate = have ? kstate[in] : 0;
        tick(m);
        c++;
        if (en && have) in++;
        // Outputs change only on enabled edges: read each new one once.
        if (en && m->top.m_valid && out < n) {
            for (int w = 0; w < 10; w++) acc_o[10 * out + w] = m->top.acc_o[w];
            flags_o[out] = m->top.flags_o;
            out++;
        }
    }
    *cycles = c;
    return out;
}
}
