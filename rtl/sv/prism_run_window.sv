// prism_run_window: the runs prism_node's D_RUN dispatched in the last few
// cycles, and D_RUN's cycle-ahead hazard query against them.
//
// D_RUN holds a run while one of its slots has a sum in flight, and asks a
// cycle ahead with a window that holds the run: 2^QSHIFT slots from a
// register, or twice that (`q_dbl`). Runs of two lane kinds share the
// entries: a run pushed with `push_short` is in flight for SHORT cycles,
// any other for LONG (the node's FP32 and Kulisch lanes, whose runs never
// mix: a context has one kind, and CONTROL waits for the lanes to drain).
// So one OR over LONG entries answers for both kinds, and a power-of-two
// window makes "a run starts inside the query" a test of the difference's
// high bits, not a compare with a length (these were 8.25 levels into the
// node's run_hold_q as two prism_lane_track instances).
//
// A run is `push_n` consecutive slots from `push_slot`, modulo 2^RB; entry
// 0 was pushed a cycle ago. Runs of no slots are never in flight.

`default_nettype none

module prism_run_window #(
    parameter int LONG = 10,     // cycles in flight of a run not pushed short
    parameter int SHORT = 3,     // of a run pushed with push_short
    parameter int RB = 12,       // slot index bits: the ring has 2^RB slots
    parameter int NW = 7,        // run length bits
    parameter int QSHIFT = 6,    // a query is 2^QSHIFT slots, or 2^(QSHIFT+1)
    parameter int Q = 1          // queries
) (
    input  wire logic            clk,
    input  wire logic            rst,

    input  wire logic            push,
    input  wire logic            push_short,
    input  wire logic [RB-1:0]   push_slot,
    input  wire logic [NW-1:0]   push_n,

    input  wire logic [Q*RB-1:0] q_slot,     // query i at [i*RB +: RB]
    input  wire logic [Q-1:0]    q_dbl,      // query i is 2^(QSHIFT+1) slots
    output logic [Q-1:0]         q_hit
);
    initial begin
        if (LONG < 1 || SHORT < 1 || SHORT > LONG) $error("prism_run_window: need 1 <= SHORT <= LONG");
        if (QSHIFT < 1 || QSHIFT + 1 >= RB) $error("prism_run_window: a query must be shorter than half the ring");
        if ((1 << NW) + (1 << (QSHIFT + 1)) > (1 << RB)) $error("prism_run_window: a run and a query together must fit the ring");
    end

    // In flight (pushed with slots, within its kind's cycles), start, end
    // slot and whether it wraps past the ring's last slot, kind.
    logic [LONG-1:0]    t_v;
    logic [LONG*RB-1:0] t_slot;
    logic [LONG*RB-1:0] t_end;
    logic [LONG-1:0]    t_wrap;
    logic [LONG-1:0]    t_short;
    always_ff @(posedge clk) begin
        logic [RB:0] e;
        e = {1'b0, push_slot} + (RB + 1)'(push_n);
        if (rst) t_v <= '0;
        else
            for (int i = 0; i < LONG; i++)
                if (i == 0) t_v[i] <= push && push_n != 0;
                else t_v[i] <= t_v[i-1] && !(t_short[i-1] && i >= SHORT);
        t_slot <= (LONG*RB)'({t_slot, push_slot});
        t_end <= (LONG*RB)'({t_end, e[RB-1:0]});
        t_wrap <= LONG'({t_wrap, e[RB]});
        t_short <= LONG'({t_short, push_short});
    end

    // Two runs of consecutive slots modulo 2^RB (together no longer than
    // the ring) overlap when one starts inside the other.
    always_comb
        for (int q = 0; q < Q; q++) begin
            logic [RB-1:0] s, d, t, te;
            logic          ge, lt, in_run, starts_in;
            s = q_slot[q*RB +: RB];
            q_hit[q] = 1'b0;
            for (int e = 0; e < LONG; e++) begin
                t = t_slot[e*RB +: RB];
                te = t_end[e*RB +: RB];
                // The query starts inside run e: s in [t, te) modulo 2^RB.
                ge = s >= t;
                lt = s < te;
                in_run = t_wrap[e] ? ge || lt : ge && lt;
                // Run e starts inside the query: (t - s) mod 2^RB below its length.
                d = t - s;
                starts_in = d[RB-1:QSHIFT+1] == '0 && (!d[QSHIFT] || q_dbl[q]);
                if (t_v[e] && (in_run || starts_in)) q_hit[q] = 1'b1;
            end
        end

`ifndef SYNTHESIS
    // The answer as subtracts and compares with lengths, over every run
    // pushed in the last LONG cycles kept whole, each counted by its kind.
    logic [LONG-1:0]    r_push, r_short;
    logic [LONG*RB-1:0] r_slot;
    logic [LONG*NW-1:0] r_n;
    always_ff @(posedge clk) begin
        r_push <= rst ? '0 : LONG'({r_push, push});
        r_short <= LONG'({r_short, push_short});
        r_slot <= (LONG*RB)'({r_slot, push_slot});
        r_n <= (LONG*NW)'({r_n, push_n});
    end
    always_ff @(posedge clk)
        for (int q = 0; q < Q; q++) begin
            logic h;
            logic [RB:0] qn;
            qn = (RB + 1)'(1) << (q_dbl[q] ? QSHIFT + 1 : QSHIFT);
            h = 1'b0;
            for (int e = 0; e < LONG; e++)
                if (r_push[e] && e < (r_short[e] ? SHORT : LONG) && r_n[e*NW +: NW] != 0
                    && ((RB + 1)'(RB'(q_slot[q*RB +: RB] - r_slot[e*RB +: RB])) < (RB + 1)'(r_n[e*NW +: NW])
                        || (RB + 1)'(RB'(r_slot[e*RB +: RB] - q_slot[q*RB +: RB])) < qn))
                    h = 1'b1;
            if (!rst && h != q_hit[q]) $error("prism_run_window: query %0d's answer %0d is not the subtracts'", q, q_hit[q]);
        end
`endif
endmodule

`default_nettype wire
