// prism_lane_track: the runs of accumulator slots whose sums are still in
// flight through a pipelined lane array, and the read-after-write hazard
// check of prism_node's ring readers against them.
//
// A run is `push_n` consecutive ring slots from `push_slot`, modulo 2^RB
// (the ring is a power of two). Its slots are read from the ring in the
// cycle it is pushed; its sums come out of the lanes LATENCY cycles later,
// the cycle it shows on `land`, and are written at that cycle's clock edge.
// Until then its slots hold stale values: query q (`q_slot`, `q_n` slots)
// hits when one of its slots belongs to a run pushed in the last LATENCY
// cycles, the run landing this cycle included. A reader holds while its
// query hits, so a slot is read again only after its last sum is written:
// the adds of a slot happen in the order their runs were pushed.
//
// The lane kind's LATENCY is the only parameter that matters: 9 for
// prism_fp32_add_pipe, 0 for combinational lanes (a run lands in the cycle
// it is pushed, nothing is ever in flight, no query hits).

`default_nettype none

module prism_lane_track #(
    parameter int LATENCY = 9,
    parameter int RB = 12,       // slot index bits: the ring has 2^RB slots
    parameter int NW = 7,        // run length bits
    parameter int Q = 1,         // queries
    parameter int QW = NW        // query length bits
) (
    input  wire logic            clk,
    input  wire logic            rst,

    input  wire logic            push,
    input  wire logic [RB-1:0]   push_slot,
    input  wire logic [NW-1:0]   push_n,

    output logic                 land,
    output logic [RB-1:0]        land_slot,
    output logic [NW-1:0]        land_n,

    input  wire logic [Q*RB-1:0] q_slot,     // query i at [i*RB +: RB]
    input  wire logic [Q*QW-1:0] q_n,
    output logic [Q-1:0]         q_hit,
    // A run is in flight.
    output logic                 busy
);
    initial begin
        if (LATENCY < 0) $error("prism_lane_track: LATENCY must be at least 0");
        if (NW > RB || QW > RB) $error("prism_lane_track: runs and queries must be shorter than the ring");
    end

    generate
        if (LATENCY == 0) begin : g_comb
            /* verilator lint_off UNUSEDSIGNAL */
            logic unused;
            assign unused = ^{clk, rst, q_slot, q_n};
            /* verilator lint_on UNUSEDSIGNAL */
            assign land = push;
            assign land_slot = push_slot;
            assign land_n = push_n;
            assign q_hit = '0;
            assign busy = 1'b0;
        end else begin : g_pipe
            // Entry 0 was pushed a cycle ago, entry LATENCY-1 lands now.
            logic [LATENCY-1:0]    t_v;
            logic [LATENCY*RB-1:0] t_slot;
            logic [LATENCY*NW-1:0] t_n;
            // Each run's end slot and whether it wraps past the ring's
            // last slot, worked out at its push: a query's slot inside a
            // run is then two compares side by side, not a subtract and a
            // compare behind it (8.00 levels into the node's run_hold_q).
            logic [LATENCY*RB-1:0] t_end;
            logic [LATENCY-1:0]    t_wrap;
            always_ff @(posedge clk) begin
                logic [RB:0] e;
                e = {1'b0, push_slot} + (RB + 1)'(push_n);
                if (rst) t_v <= '0;
                else t_v <= LATENCY'({t_v, push});
                t_slot <= (LATENCY*RB)'({t_slot, push_slot});
                t_n <= (LATENCY*NW)'({t_n, push_n});
                t_end <= (LATENCY*RB)'({t_end, e[RB-1:0]});
                t_wrap <= LATENCY'({t_wrap, e[RB]});
            end
            assign land = t_v[LATENCY-1];
            assign land_slot = t_slot[(LATENCY-1)*RB +: RB];
            assign land_n = t_n[(LATENCY-1)*NW +: NW];
            assign busy = |t_v;
            // Two runs of consecutive slots modulo 2^RB (together no longer
            // than the ring) overlap when one starts inside the other.
            always_comb
                for (int q = 0; q < Q; q++) begin
                    logic [RB-1:0] s, d_out, t, te;
                    logic [QW-1:0] n;
                    logic          ge, lt, in_run;
                    s = q_slot[q*RB +: RB];
                    n = q_n[q*QW +: QW];
                    q_hit[q] = 1'b0;
                    for (int e = 0; e < LATENCY; e++) begin
                        t = t_slot[e*RB +: RB];
                        te = t_end[e*RB +: RB];
                        // The query starts inside run e: s in [t, te) modulo 2^RB.
                        ge = s >= t;
                        lt = s < te;
                        in_run = t_wrap[e] ? ge || lt : ge && lt;
                        d_out = t - s;                      // run e starts inside the query
                        if (t_v[e] && n != 0 && t_n[e*NW +: NW] != 0 && (in_run || d_out < RB'(n)))
                            q_hit[q] = 1'b1;
                    end
                end
`ifndef SYNTHESIS
            // The query as a subtract and a compare, as it was.
            always_ff @(posedge clk)
                for (int q = 0; q < Q; q++) begin
                    logic h;
                    h = 1'b0;
                    for (int e = 0; e < LATENCY; e++)
                        if (t_v[e] && q_n[q*QW +: QW] != 0 && t_n[e*NW +: NW] != 0
                            && (RB'(q_slot[q*RB +: RB] - t_slot[e*RB +: RB]) < RB'(t_n[e*NW +: NW])
                                || RB'(t_slot[e*RB +: RB] - q_slot[q*RB +: RB]) < RB'(q_n[q*QW +: QW])))
                            h = 1'b1;
                    if (!rst && h != q_hit[q]) $error("prism_lane_track: query %0d's answer %0d is not the subtract's", q, q_hit[q]);
                end
`endif
        end
    endgenerate
endmodule

`default_nettype wire
