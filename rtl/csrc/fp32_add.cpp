// C ABI over the Verilator model of prism_fp32_add (combinational).
#include "Vprism_fp32_add.h"
#include "verilated.h"
#include <cstdint>

struct AddModel {
    VerilatedContext ctx;
    Vprism_fp32_add top{&ctx};
};

extern "C" {
void *prism_fp32_add_new() { return new AddModel(); }
void prism_fp32_add_free(void *p) { delete static_cast<AddModel *>(p); }

// sums[i] = a[i] + b[i] through the model.
void prism_fp32_add_batch(void *p, const uint32_t *a, const uint32_t *b, uint32_t *sums, size_t n) {
    AddModel *m = static_cast<AddModel *>(p);
    for (size_t i = 0; i < n; i++) {
        m->top.a = a[i];
        m->top.b = b[i];
        m->top.eval();
        sums[i] = m->top.sum;
    }
}
}
