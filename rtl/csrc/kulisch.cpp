// C ABI over the Verilator models of prism_kulisch_lane and prism_kulisch_round
// (combinational, KW = 320 bits: ten 32-bit words, least significant first).
#include "Vprism_kulisch_lane.h"
#include "Vprism_kulisch_round.h"
#include "verilated.h"
#include <cstdint>

struct KulischModels {
    VerilatedContext ctx;
    Vprism_kulisch_lane lane{&ctx};
    Vprism_kulisch_round round{&ctx};
};

extern "C" {
void *prism_kulisch_new() { return new KulischModels(); }
void prism_kulisch_free(void *p) { delete static_cast<KulischModels *>(p); }

// acc_o = acc + term; flags_o. `kint` is a Kulisch value's integer (is_kulisch), else `fp32` is the term.
void prism_kulisch_add(void *p, const uint32_t acc[10], uint8_t flags, int is_kulisch, uint32_t fp32, uint8_t kstate,
                       const uint32_t kint[10], uint32_t acc_o[10], uint8_t *flags_o) {
    KulischModels *m = static_cast<KulischModels *>(p);
    for (int w = 0; w < 10; w++) {
        m->lane.acc[w] = acc[w];
        m->lane.kint[w] = kint[w];
    }
    m->lane.flags = flags;
    m->lane.is_kulisch = is_kulisch;
    m->lane.fp32 = fp32;
    m->lane.kstate = kstate;
    m->lane.eval();
    for (int w = 0; w < 10; w++) acc_o[w] = m->lane.acc_o[w];
    *flags_o = m->lane.flags_o;
}

// The slot rounded to FP32, and whether that is exact.
uint32_t prism_kulisch_round(void *p, const uint32_t acc[10], uint8_t flags, int *exact) {
    KulischModels *m = static_cast<KulischModels *>(p);
    for (int w = 0; w < 10; w++) m->round.acc[w] = acc[w];
    m->round.flags = flags;
    m->round.eval();
    *exact = m->round.exact;
    return m->round.fp32;
}
}
