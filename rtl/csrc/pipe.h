// Shared by the shims of the pipelined units: a model with its own context,
// one clock edge, and the batch loop that streams items through a unit with
// en, s_valid and m_valid (one item a cycle while en is high).
#pragma once
#include "verilated.h"
#include <cstddef>
#include <cstdint>
#include <vector>

template <class Top> struct Model {
    VerilatedContext ctx;
    Top top{&ctx};
};

template <class Top> void tick(Top &t) {
    t.clk = 0;
    t.eval();
    t.clk = 1;
    t.eval();
}

// en for the next cycle: always high with seed 0, else low on about one
// cycle in four (an xorshift sequence).
struct Stall {
    uint64_t x;
    bool next() {
        if (!x) return true;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return (x & 3) != 0;
    }
};

// Streams items 0..n through a unit whose item comes in two parts, after
// draining what an earlier batch left in flight: put(i) drives item i's
// first part (put(n) the idle inputs once all are in), put_late(i) its
// second part `delay` enabled cycles later (put_late(-1) idle inputs: no
// item's second part is due; delay 0: no second part), take(j) reads
// result j when m_valid presents it (outputs change only on enabled
// edges, so each is read once). Returns the results collected; *cycles is
// the clock cycles from the first item in to the last result.
template <class Top, class Put, class PutLate, class Take>
size_t stream_delayed(Top &t, size_t n, size_t delay, uint64_t stall_seed, uint64_t *cycles, Put put, PutLate put_late,
                      Take take) {
    Stall stall{stall_seed};
    size_t in = 0, out = 0;
    uint64_t c = 0;
    std::vector<long> first;  // the item whose first part each enabled edge took (-1: none)
    t.s_valid = 0;
    t.en = 1;
    put(n);
    put_late(-1);
    for (int i = 0; i < 16; i++) tick(t);
    while (out < n && c < 64 * (uint64_t)n + 1000) {
        bool en = stall.next();
        bool have = in < n;
        t.en = en;
        t.s_valid = have;
        put(in);
        put_late(delay > 0 && first.size() >= delay ? first[first.size() - delay] : -1);
        tick(t);
        c++;
        if (en && delay > 0) first.push_back(have ? (long)in : -1);
        if (en && have) in++;
        if (en && t.m_valid && out < n) take(out++);
    }
    *cycles = c;
    return out;
}

// Drains what an earlier batch left in flight, then streams items 0..n in:
// put(i) drives item i's inputs (put(n) the idle inputs once all are in),
// take(j) reads result j when m_valid presents it (outputs change only on
// enabled edges, so each is read once). Returns the results collected;
// *cycles is the clock cycles from the first item in to the last result.
template <class Top, class Put, class Take>
size_t stream(Top &t, size_t n, uint64_t stall_seed, uint64_t *cycles, Put put, Take take) {
    return stream_delayed(t, n, 0, stall_seed, cycles, put, [](long) {}, take);
}
