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
//
// A second lane kind of a shorter latency (SHORT, 0 for none) shares the
// entries: a run pushed with `push_short` lands SHORT cycles after its push
// (on `sland`) and leaves the entries there, so one OR over the entries
// answers a query for both kinds (two trackers' answers and an OR of them
// were 7.50 levels into egress's hit register).
//
// With QSHIFT > 0 a query not in QEND is a window of 2^QSHIFT slots, or
// 2^(QSHIFT+1) when its q_n is not 0 (never empty): "a run starts inside
// it" is a test of the difference's high bits, not a compare with a
// length (prism_node's D_RUN asks so a cycle ahead; a compare with the
// window's length and a pick of two queries were 8.25 levels).

`default_nettype none

module prism_lane_track #(
    parameter int LATENCY = 9,
    parameter int RB = 12,       // slot index bits: the ring has 2^RB slots
    parameter int NW = 7,        // run length bits
    parameter int Q = 1,         // queries
    parameter int QW = NW,       // query length bits
    parameter int SHORT = 0,     // the second kind's latency (0: none)
    parameter int QEND = 0,      // bit i: query i comes with its end (q_end)
    parameter int QSHIFT = 0     // > 0: the other queries are power-of-two windows (above)
) (
    input  wire logic            clk,
    input  wire logic            rst,

    input  wire logic            push,
    input  wire logic [RB-1:0]   push_slot,
    input  wire logic [NW-1:0]   push_n,
    input  wire logic            push_short,  // the run is of the second kind

    output logic                 land,
    output logic [RB-1:0]        land_slot,
    output logic [NW-1:0]        land_n,
    output logic                 sland,       // a run of the second kind lands
    output logic [RB-1:0]        sland_slot,
    output logic [NW-1:0]        sland_n,

    input  wire logic [Q*RB-1:0] q_slot,     // query i at [i*RB +: RB]
    input  wire logic [Q*QW-1:0] q_n,
    // Query i's end, q_slot + q_n modulo 2^RB, and whether it wraps past
    // the ring's last slot ({wrap, end} at [i*(RB+1) +: RB+1]), kept by
    // the asker beside its slot and count: "a run starts inside the
    // query" is then two compares side by side, not a subtract and a
    // compare behind it (7.50 levels into egress's hit register).
    input  wire logic [Q*(RB+1)-1:0] q_end,
    output logic [Q-1:0]         q_hit,
    // A run is in flight.
    output logic                 busy
);
    initial begin
        if (LATENCY < 0) $error("prism_lane_track: LATENCY must be at least 0");
        if (NW > RB || QW > RB) $error("prism_lane_track: runs and queries must be shorter than the ring");
        if (SHORT < 0 || SHORT > LATENCY || (LATENCY == 0 && SHORT != 0))
            $error("prism_lane_track: SHORT must be 0 or 1 to LATENCY");
        if (QSHIFT < 0 || (QSHIFT > 0 && (1 << NW) + (1 << (QSHIFT + 1)) > (1 << RB)))
            $error("prism_lane_track: a run and a window of 2^(QSHIFT+1) slots must fit the ring together");
    end

    generate
        if (LATENCY == 0) begin : g_comb
            /* verilator lint_off UNUSEDSIGNAL */
            logic unused;
            assign unused = ^{clk, rst, q_slot, q_n, q_end, push_short};
            /* verilator lint_on UNUSEDSIGNAL */
            assign land = push;
            assign land_slot = push_slot;
            assign land_n = push_n;
            assign sland = 1'b0;
            assign sland_slot = '0;
            assign sland_n = '0;
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
            logic [LATENCY-1:0]    t_short;
            logic [LATENCY-1:0]    t_q;        // in flight and with slots: what a query sees
            always_ff @(posedge clk) begin
                logic [RB:0] e;
                e = {1'b0, push_slot} + (RB + 1)'(push_n);
                if (rst) begin
                    t_v <= '0;
                    t_q <= '0;
                end else
                    for (int i = 0; i < LATENCY; i++)
                        if (i == 0) begin
                            t_v[i] <= push;
                            t_q[i] <= push && push_n != 0;
                        end else begin
                            t_v[i] <= t_v[i-1] && !(SHORT != 0 && t_short[i-1] && i >= SHORT);
                            t_q[i] <= t_q[i-1] && !(SHORT != 0 && t_short[i-1] && i >= SHORT);
                        end
                t_short <= SHORT == 0 ? '0 : LATENCY'({t_short, push_short});
                t_slot <= (LATENCY*RB)'({t_slot, push_slot});
                t_n <= (LATENCY*NW)'({t_n, push_n});
                t_end <= (LATENCY*RB)'({t_end, e[RB-1:0]});
                t_wrap <= LATENCY'({t_wrap, e[RB]});
            end
            assign land = t_v[LATENCY-1] && !t_short[LATENCY-1];
            assign land_slot = t_slot[(LATENCY-1)*RB +: RB];
            assign land_n = t_n[(LATENCY-1)*NW +: NW];
            localparam int SL = SHORT == 0 ? 0 : SHORT - 1;
            assign sland = SHORT != 0 && t_v[SL] && t_short[SL];
            assign sland_slot = t_slot[SL*RB +: RB];
            assign sland_n = t_n[SL*NW +: NW];
            assign busy = |t_v;
            // Two runs of consecutive slots modulo 2^RB (together no longer
            // than the ring) overlap when one starts inside the other.
            always_comb
                for (int q = 0; q < Q; q++) begin
                    logic [RB-1:0] s, d_out, t, te, qe;
                    logic [QW-1:0] n;
                    logic          ge, lt, in_run, qwrap, starts_in, win;
                    s = q_slot[q*RB +: RB];
                    n = q_n[q*QW +: QW];
                    {qwrap, qe} = q_end[q*(RB+1) +: RB+1];
                    win = QSHIFT > 0 && QEND[q] == 0;
                    q_hit[q] = 1'b0;
                    for (int e = 0; e < LATENCY; e++) begin
                        t = t_slot[e*RB +: RB];
                        te = t_end[e*RB +: RB];
                        // The query starts inside run e: s in [t, te) modulo 2^RB.
                        ge = s >= t;
                        lt = s < te;
                        in_run = t_wrap[e] ? ge || lt : ge && lt;
                        // Run e starts inside the query: t in [s, qe), or (t - s) mod 2^RB below n.
                        d_out = t - s;
                        if (QEND[q] != 0) starts_in = qwrap ? t >= s || t < qe : t >= s && t < qe;
                        else if (win) starts_in = d_out >> (QSHIFT + 1) == '0 && (!d_out[QSHIFT] || n != 0);
                        else starts_in = d_out < RB'(n);
                        if (t_q[e] && (win || n != 0) && (in_run || starts_in))
                            q_hit[q] = 1'b1;
                    end
                end
`ifndef SYNTHESIS
            // The query as a subtract and a compare, as it was.
            always_ff @(posedge clk)
                for (int q = 0; q < Q; q++) begin
                    logic h;
                    logic [RB:0] qn;
                    qn = QSHIFT > 0 && QEND[q] == 0 ? (RB + 1)'(1) << (q_n[q*QW +: QW] != 0 ? QSHIFT + 1 : QSHIFT)
                                                   : (RB + 1)'(q_n[q*QW +: QW]);
                    h = 1'b0;
                    for (int e = 0; e < LATENCY; e++)
                        if (t_v[e] && qn != 0 && t_n[e*NW +: NW] != 0
                            && (RB'(q_slot[q*RB +: RB] - t_slot[e*RB +: RB]) < RB'(t_n[e*NW +: NW])
                                || (RB + 1)'(RB'(t_slot[e*RB +: RB] - q_slot[q*RB +: RB])) < qn))
                            h = 1'b1;
                    if (!rst && h != q_hit[q]) $error("prism_lane_track: query %0d's answer %0d is not the subtract's", q, q_hit[q]);
                    if (!rst && QEND[q] != 0 && q_n[q*QW +: QW] != 0
                        && q_end[q*(RB+1) +: RB+1] != {1'b0, q_slot[q*RB +: RB]} + (RB + 1)'(q_n[q*QW +: QW]))
                        $error("prism_lane_track: query %0d's end is not its slot and count", q);
                end
`endif
        end
    endgenerate
endmodule

`default_nettype wire
