// C ABI over the Verilator model of prism_kulisch_lane_pipe (eight register
// stages, KW = 320 bits: ten 32-bit words, least significant first; the
// slot and the Kulisch integer three enabled cycles after their term).
#include "Vprism_kulisch_lane_pipe.h"
#include "pipe.h"

using KulischPipeModel = Model<Vprism_kulisch_lane_pipe>;

extern "C" {
void *prism_kulisch_lane_pipe_new() { return new KulischPipeModel(); }
void prism_kulisch_lane_pipe_free(void *p) { delete static_cast<KulischPipeModel *>(p); }
uint32_t prism_kulisch_lane_pipe_latency() { return 8; }
static const size_t ACC_DELAY = 3;

// Streams n operations in, one a cycle while en is high, and collects the
// results in the order m_valid presents them. Operation i: acc[10i..10i+10),
// flags[i], acc_rest[i] (0 or 1: the slot at rest, acc and flags read as 0),
// is_kulisch[i] (0 or 1), fp32[i], kstate[i], kint[10i..10i+10);
// result i: acc_o[10i..10i+10), flags_o[i]. stall_seed != 0: en is low on
// about one cycle in four. Returns the results collected; *cycles is the
// clock cycles from the first operation to the last result.
size_t prism_kulisch_lane_pipe_batch(void *p, const uint32_t *acc, const uint8_t *flags, const uint8_t *acc_rest,
                                     const uint8_t *is_kulisch,
                                     const uint32_t *fp32, const uint8_t *kstate, const uint32_t *kint, uint32_t *acc_o,
                                     uint8_t *flags_o, size_t n, uint64_t stall_seed, uint64_t *cycles) {
    auto &t = static_cast<KulischPipeModel *>(p)->top;
    return stream_delayed(
        t, n, ACC_DELAY, stall_seed, cycles,
        [&](size_t i) {
            bool have = i < n;
            t.is_kulisch = have ? is_kulisch[i] : 0;
            t.fp32 = have ? fp32[i] : 0;
            t.kstate = have ? kstate[i] : 0;
        },
        [&](long i) {
            bool have = i >= 0;
            for (int w = 0; w < 10; w++) {
                t.acc[w] = have ? acc[10 * i + w] : 0;
                t.kint[w] = have ? kint[10 * i + w] : 0;
            }
            t.flags = have ? flags[i] : 0;
            t.acc_rest = have ? acc_rest[i] : 0;
        },
        [&](size_t j) {
            for (int w = 0; w < 10; w++) acc_o[10 * j + w] = t.acc_o[w];
            flags_o[j] = t.flags_o;
        });
}
}
