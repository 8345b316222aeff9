// C ABI over the Verilator model of prism_kulisch_round_pipe (six register
// stages, KW = 320 bits: ten 32-bit words a slot, least significant first).
#include "Vprism_kulisch_round_pipe.h"
#include "verilated.h"
#include <cstdint>

struct RoundPipeModel {
    VerilatedContext ctx;
    Vprism_kulisch_round_pipe top{&ctx};
};

static void tick(RoundPipeModel *m) {
    m->top.clk = 0;
    m->top.eval();
    m->top.clk = 1;
    m->top.eval();
}

extern "C" {
void *prism_kulisch_round_pipe_new() { return new RoundPipeModel(); }
void prism_kulisch_round_pipe_free(void *p) { delete static_cast<RoundPipeModel *>(p); }
uint32_t prism_kulisch_round_pipe_latency() { return 6; }

// Streams the n slots in (acc: 10 words each), one a cycle while en is high,
// and collects the results in the order m_valid presents them. stall_seed !=
// 0: en is low on about one cycle in four (an xorshift sequence). Returns
// the results collected; *cycles is the clock cycles from the first slot to
// the last result.
size_t prism_kulisch_round_pipe_batch(void *p, const uint32_t *acc, const uint8_t *flags, uint32_t *fp32, uint8_t *exact, size_t n,
                                      uint64_t stall_seed, uint64_t *cycles) {
    RoundPipeModel *m = static_cast<RoundPipeModel *>(p);
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
        m->top.en = en;
        m->top.s_valid = in < n;
        for (int w = 0; w < 10; w++) m->top.acc[w] = in < n ? acc[10 * in + w] : 0;
        m->top.flags = in < n ? flags[in] : 0;
        tick(m);
        c++;
        if (en && in < n) in++;
        // Outputs change only on enabled edges: read each new one once.
        if (en && m->top.m_valid && out < n) {
            fp32[out] = m->top.fp32;
            exact[out] = m->top.exact;
            out++;
        }
    }
    *cycles = c;
    return out;
}
}
