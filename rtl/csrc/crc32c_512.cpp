// C ABI over the Verilator model of prism_crc32c_512 (DATA_W = 512: the
// frame digest of prism_node, one 64-byte beat a cycle, LATENCY = 2).
#include "Vprism_crc32c_512.h"
#include "pipe.h"

using CrcModel = Model<Vprism_crc32c_512>;

// Beat bytes onto tdata: byte b is tdata[8b +: 8] (little-endian words).
static void drive(CrcModel *m, const uint8_t *beat) {
    for (int w = 0; w < 16; w++) {
        const uint8_t *b = beat + 4 * w;
        m->top.s_axis_tdata[w] = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    }
}

extern "C" {
void *prism_crc32c_512_new() { return new CrcModel(); }
void prism_crc32c_512_free(void *p) { delete static_cast<CrcModel *>(p); }
uint32_t prism_crc32c_512_latency() { return 2; }

// Resets the module (so an earlier run's unfinished frame is forgotten),
// then drives n beats of 64 bytes (data), beat i after idle_before[i]
// cycles with tvalid low (tdata then random garbage, which must not count),
// tlast = last[i]; then LATENCY + 4 idle cycles. Cycle 0 is the first cycle
// after reset; in each cycle the outputs are sampled before the clock edge.
// Every m_crc_valid seen: its m_crc into crcs and its cycle into cycles
// (the first max_out of them). Returns how many were seen.
size_t prism_crc32c_512_run(void *p, const uint8_t *data, const uint8_t *last, const uint32_t *idle_before, size_t n, uint32_t *crcs, uint64_t *cycles, size_t max_out) {
    CrcModel *m = static_cast<CrcModel *>(p);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    uint8_t junk[64];
    m->top.rst = 1;
    m->top.s_axis_tvalid = 0;
    m->top.s_axis_tlast = 0;
    tick(m->top);
    tick(m->top);
    m->top.rst = 0;
    size_t seen = 0;
    uint64_t c = 0;
    auto cycle = [&](bool valid, const uint8_t *beat, bool tlast) {
        m->top.s_axis_tvalid = valid;
        m->top.s_axis_tlast = tlast;
        drive(m, beat);
        m->top.eval();
        if (m->top.m_crc_valid) {
            if (seen < max_out) {
                crcs[seen] = m->top.m_crc;
                cycles[seen] = c;
            }
            seen++;
        }
        tick(m->top);
        c++;
    };
    auto idle = [&](bool tlast) {
        for (int i = 0; i < 64; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            junk[i] = (uint8_t)x;
        }
        cycle(false, junk, tlast);
    };
    for (size_t i = 0; i < n; i++) {
        // Idle cycles carry garbage, tlast included: only tvalid qualifies.
        for (uint32_t g = 0; g < idle_before[i]; g++) idle((x & 0x100) != 0);
        cycle(true, data + 64 * i, last[i] != 0);
    }
    for (int i = 0; i < 2 + 4; i++) idle(false);
    return seen;
}
}
