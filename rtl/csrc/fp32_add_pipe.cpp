// C ABI over the Verilator model of prism_fp32_add_pipe (nine register stages).
#include "Vprism_fp32_add_pipe.h"
#include "verilated.h"
#include <cstdint>

struct PipeModel {
    VerilatedContext ctx;
    Vprism_fp32_add_pipe top{&ctx};
};

static void tick(PipeModel *m) {
    m->top.clk = 0;
    m->top.eval();
    m->top.clk = 1;
    m->top.eval();
}

extern "C" {
void *prism_fp32_add_pipe_new() { return new PipeModel(); }
void prism_fp32_add_pipe_free(void *p) { delete static_cast<PipeModel *>(p); }
uint32_t prism_fp32_add_pipe_latency() { return 9; }

// Streams the n pairs in, one a cycle while en is high, and collects the
// sums in the order m_valid presents them. stall_seed != 0: en is low on
// about one cycle in four (an xorshift sequence). Returns the sums
// collected; *cycles is the clock cycles from the first pair to the last sum.
size_t prism_fp32_add_pipe_batch(void *p, const uint32_t *a, const uint32_t *b, uint32_t *sums, size_t n, uint64_t stall_seed, uint64_t *cycles) {
    PipeModel *m = static_cast<PipeModel *>(p);
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
        m->top.a = in < n ? a[in] : 0;
        m->top.b = in < n ? b[in] : 0;
        tick(m);
        c++;
        if (en && in < n) in++;
        // Outputs change only on enabled edges: read each new one once.
        if (en && m->top.m_valid && out < n) sums[out++] = m->top.sum;
    }
    *cycles = c;
    return out;
}
}
