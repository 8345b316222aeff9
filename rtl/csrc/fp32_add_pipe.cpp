// C ABI over the Verilator model of prism_fp32_add_pipe (ten register stages).
#include "Vprism_fp32_add_pipe.h"
#include "pipe.h"

using PipeModel = Model<Vprism_fp32_add_pipe>;

extern "C" {
void *prism_fp32_add_pipe_new() { return new PipeModel(); }
void prism_fp32_add_pipe_free(void *p) { delete static_cast<PipeModel *>(p); }
uint32_t prism_fp32_add_pipe_latency() { return 10; }

// Streams the n pairs in, one a cycle while en is high, and collects the
// sums in the order m_valid presents them. a_rest (null: none) is pair i's
// a_rest input (0 or 1: a reads as -0). stall_seed != 0: en is low on
// about one cycle in four. Returns the sums collected; *cycles is the clock
// cycles from the first pair to the last sum.
size_t prism_fp32_add_pipe_batch(void *p, const uint32_t *a, const uint8_t *a_rest, const uint32_t *b, uint32_t *sums, size_t n, uint64_t stall_seed, uint64_t *cycles) {
    auto &t = static_cast<PipeModel *>(p)->top;
    return stream(
        t, n, stall_seed, cycles,
        [&](size_t i) {
            t.a = i < n ? a[i] : 0;
            t.a_rest = i < n && a_rest ? a_rest[i] : 0;
            t.b = i < n ? b[i] : 0;
        },
        [&](size_t j) { sums[j] = t.sum; });
}
}
