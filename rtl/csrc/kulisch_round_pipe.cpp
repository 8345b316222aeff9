// C ABI over the Verilator model of prism_kulisch_round_pipe (six register
// stages, KW = 320 bits: ten 32-bit words a slot, least significant first).
#include "Vprism_kulisch_round_pipe.h"
#include "pipe.h"

using RoundPipeModel = Model<Vprism_kulisch_round_pipe>;

extern "C" {
void *prism_kulisch_round_pipe_new() { return new RoundPipeModel(); }
void prism_kulisch_round_pipe_free(void *p) { delete static_cast<RoundPipeModel *>(p); }
uint32_t prism_kulisch_round_pipe_latency() { return 6; }

// Streams the n slots in (acc: 10 words each), one a cycle while en is high,
// and collects the results in the order m_valid presents them. stall_seed !=
// 0: en is low on about one cycle in four. Returns the results collected;
// *cycles is the clock cycles from the first slot to the last result.
size_t prism_kulisch_round_pipe_batch(void *p, const uint32_t *acc, const uint8_t *flags, uint32_t *fp32, uint8_t *exact, size_t n,
                                      uint64_t stall_seed, uint64_t *cycles) {
    auto &t = static_cast<RoundPipeModel *>(p)->top;
    return stream(
        t, n, stall_seed, cycles,
        [&](size_t i) {
            for (int w = 0; w < 10; w++) t.acc[w] = i < n ? acc[10 * i + w] : 0;
            t.flags = i < n ? flags[i] : 0;
        },
        [&](size_t j) {
            fp32[j] = t.fp32;
            exact[j] = t.exact;
        });
}
}
