// prism_auto_plan: AUTO's lookahead as a pipeline (docs/wire-format.md
// section 8). For a position p of the vector it takes the rounded values p ..
// p + n - 1 (n = LOOK, fewer at the vector's end) and gives the choice the
// encoder makes at p for every state it can be in there: the format a new
// group would take (m_nf), and for each open group's format f and byte count
// mod 4 m whether value p continues that group (m_cont[4*f + m]). The choice
// depends on the values only, so positions are worked out ahead of the
// engine, one a cycle, and queued; the engine's per-value step is a lookup.
//
// Costs are bytes. to_go[i][f][m] is the fewest bytes for window values i ..
// n - 1 after value i - 1 left group format f open with m bytes mod 4 (a group
// open at the window's end pays its padding): continuing costs the value's
// width, a new group of another format its padding, a 4-byte descriptor and
// the width. One backward step a value (STEPS of them, four stages each:
// option costs, two rounds of minimums, the result), then the choice at
// value 0 (five stages). The engine breaks ties as the scan over options in
// order did: continuing wins a tie, then the lowest format.
//
// Flow: s_valid with s_ready takes a position, whose window (s_win, s_n)
// comes the cycle after, as a registered memory read gives it, and is
// registered before it is decoded (from the store's read and its bank
// rotation, the decode was 6.75 to 7.00 levels in the switch); m_valid /
// m_ready pop the oldest. s_ready counts the queue's entries and every
// position in flight, so the pipeline never stalls. rst drops everything
// (a new context).

`default_nettype none

module prism_auto_plan #(
    parameter int LOOK = 8,
    parameter int DEPTH = 64,           // queued and in-flight positions
    parameter int NW = $clog2(LOOK + 1)
) (
    input  wire logic              clk,
    input  wire logic              rst,
    input  wire logic              kulisch,   // KULISCH_FIXED context: every value has format 4
    input  wire logic [8:0]        kwf,       // Kulisch width field (W/8 - 1): format 4's width is 2 + kwf bytes

    input  wire logic              s_valid,
    output logic                   s_ready,
    input  wire logic [LOOK*33-1:0] s_win,    // a cycle after the take: value i, {exact, FP32}, at [33*i +: 33]
    input  wire logic [NW-1:0]     s_n,       // a cycle after the take: values in the window (1 .. LOOK)

    output logic                   m_valid,
    input  wire logic              m_ready,
    output logic [2:0]             m_nf,
    output logic [19:0]            m_cont
);
    localparam int STEPS = LOOK - 1;         // to_go[LOOK-1] .. to_go[1]
    localparam int LAT = 4 + 4 * STEPS + 5;  // a take to the queue
    localparam int QB = $clog2(DEPTH);
    localparam logic [15:0] INF = 16'h4000;  // above any window's cost, and no sum on top of it wraps
    localparam int TW = 5 * 4 * 16;          // a cost table: entry (f, m) at [16*(4*f + m) +: 16]

    initial begin
        if (LOOK < 2) $error("prism_auto_plan: LOOK must be at least 2");
        if (DEPTH < LAT + 2 || 2 ** QB != DEPTH) $error("prism_auto_plan: DEPTH must be a power of two above the latency");
    end

    // Widths: fixed but for format 4's, which the context sets.
    logic [15:0] fwv [5];
    assign fwv[0] = 16'd1;
    assign fwv[1] = 16'd2;
    assign fwv[2] = 16'd2;
    assign fwv[3] = 16'd4;
    always_ff @(posedge clk) fwv[4] <= 16'd2 + {7'b0, kwf};

    function automatic logic [15:0] pad4(input logic [1:0] m);
        pad4 = {14'b0, 2'(3'd4 - {1'b0, m})};
    endfunction
    // Entry (g, m + w mod 4) of a cost table: a 4:1 select, never a shift
    // at a run-time offset (format 4's width is a register).
    function automatic logic [15:0] pick(input logic [TW-1:0] t, input int g, input logic [1:0] m, input logic [1:0] w);
        logic [1:0] r;
        r = m + w;
        case (r)
            2'd0: pick = t[16*(4*g) +: 16];
            2'd1: pick = t[16*(4*g + 1) +: 16];
            2'd2: pick = t[16*(4*g + 2) +: 16];
            default: pick = t[16*(4*g + 3) +: 16];
        endcase
    endfunction
    function automatic logic [15:0] min16(input logic [15:0] a, input logic [15:0] b);
        min16 = b < a ? b : a;
    endfunction

    // ------------------------------------------------------------ masks
    // Candidate formats of an exact value: FP32 always; FP16 in its normal
    // range with 13 low bits zero, or in its subnormal range (2^-24..2^-15)
    // a multiple of 2^-24; BF16 with 16 low bits zero; INT8 when integral in
    // -128..127 (not -0); NaN in every float format. Format 4 in a Kulisch
    // context. A value not exact has only format 4. Value i's mask is at
    // [5*i +: 5], bit g format g. Two stages: the fields and how many low
    // fraction bits are zero (lz[k]: bits k-1..0), then the mask; a
    // multiple of 2^-24 (FP16 subnormal) or an integer (INT8) is a number
    // of low zero bits that the exponent picks.
    logic           tk, tk2, va;
    logic [NW-1:0]  na, s_n_q;
    logic [LOOK*33-1:0] s_win_q;
    logic [LOOK-1:0] a_x, a_nan, a_zi, a_z, a_m128;
    logic [7:0]     a_ex [LOOK];
    logic [23:13]   a_lz [LOOK];
    always_ff @(posedge clk) begin
        tk <= !rst && s_valid && s_ready;
        tk2 <= !rst && tk;
        va <= !rst && tk2;
        s_win_q <= s_win;
        s_n_q <= s_n;
        na <= s_n_q;
        for (int i = 0; i < LOOK; i++) begin
            logic [31:0] v;
            v = s_win_q[33*i +: 32];
            a_x[i] <= s_win_q[33*i + 32];
            a_ex[i] <= v[30:23];
            a_nan[i] <= v[30:23] == 8'hFF && v[22:0] != 0;
            a_zi[i] <= v[30:0] == 0 || v[30:0] == 31'h7F80_0000;
            a_z[i] <= v == 32'h0;
            a_m128[i] <= v == 32'hC300_0000;
            for (int k = 13; k <= 23; k++) a_lz[i][k] <= (v[22:0] & ((23'd1 << k) - 23'd1)) == 0;
        end
    end
    logic           v0;
    logic [NW-1:0]  n0;
    logic [LOOK*5-1:0] m0;
    always_ff @(posedge clk) begin
        v0 <= !rst && va;
        n0 <= na;
        for (int i = 0; i < LOOK; i++) begin
            logic [7:0] ex;
            logic x, f16, i8, sub, int8;
            ex = a_ex[i];
            x = a_x[i];
            sub = 1'b0;
            for (int e = 103; e <= 112; e++) if (ex == 8'(e)) sub = a_lz[i][126 - e];
            int8 = 1'b0;
            for (int e = 127; e <= 133; e++) if (ex == 8'(e)) int8 = a_lz[i][150 - e];
            f16 = a_zi[i] || (ex >= 8'd113 && ex <= 8'd142 && a_lz[i][13]) || sub;
            i8 = a_z[i] || a_m128[i] || int8;
            m0[5*i +: 5] <= {kulisch, x, x && (a_nan[i] || a_lz[i][16]), x && (a_nan[i] || f16), x && i8};
        end
    end

    // ------------------------------------------------------------ steps
    // Step k computes to_go[i], i = LOOK - 1 - k, from to_go[i + 1] (the
    // terminal costs, padding only, for k = 0) and value i's candidates.
    // Every stage carries the valid bit, n and the masks. A cost table is
    // flat (TW).
    logic [STEPS-1:0]      ov;
    logic [STEPS*NW-1:0]   on;
    logic [STEPS*LOOK*5-1:0] om;
    logic [STEPS*TW-1:0]   otg;
    logic [TW-1:0]         tg_end;
    always_comb
        for (int f = 0; f < 5; f++)
            for (int m = 0; m < 4; m++) tg_end[16*(4*f + m) +: 16] = pad4(2'(m));

    genvar k;
    generate
        for (k = 0; k < STEPS; k++) begin : g_step
            localparam int I = LOOK - 1 - k;
            logic          iv;
            logic [NW-1:0] inn;
            logic [LOOK*5-1:0] im;
            logic [TW-1:0] itg;
            if (k == 0) begin : g_in
                assign iv = v0;
                assign inn = n0;
                assign im = m0;
                assign itg = tg_end;
            end else begin : g_in
                assign iv = ov[k-1];
                assign inn = on[NW*(k-1) +: NW];
                assign im = om[LOOK*5*(k-1) +: LOOK*5];
                assign itg = otg[TW*(k-1) +: TW];
            end
            // a: option costs. aA[g]: a new group of format g (its descriptor,
            // the value, the rest; without the padding of the group it
            // closes); aC: continuing format f with m bytes mod 4.
            logic          av, bv, cv;
            logic [NW-1:0] an, bn, cn;
            logic [LOOK*5-1:0] am, bm, cm;
            logic [15:0]   aA [5];
            logic [TW-1:0] aC, bC, cC;
            always_ff @(posedge clk) begin
                av <= !rst && iv;
                an <= inn;
                am <= im;
                for (int g = 0; g < 5; g++) begin
                    aA[g] <= im[5*I + g] ? fwv[g] + 16'd4 + pick(itg, g, 2'd0, fwv[g][1:0]) : INF;
                    for (int m = 0; m < 4; m++)
                        aC[16*(4*g + m) +: 16] <= im[5*I + g] ? fwv[g] + pick(itg, g, 2'(m), fwv[g][1:0]) : INF;
                end
            end
            // b, c: the least new group of a format other than f (continuing
            // f is priced apart), as pairs and then leave-one-out minimums.
            logic [15:0] p01, p23, q14, q04, q34, q24, e [5];
            always_ff @(posedge clk) begin
                bv <= !rst && av;
                bn <= an;
                bm <= am;
                bC <= aC;
                p01 <= min16(aA[0], aA[1]);
                p23 <= min16(aA[2], aA[3]);
                q14 <= min16(aA[1], aA[4]);
                q04 <= min16(aA[0], aA[4]);
                q34 <= min16(aA[3], aA[4]);
                q24 <= min16(aA[2], aA[4]);
                cv <= !rst && bv;
                cn <= bn;
                cm <= bm;
                cC <= bC;
                e[0] <= min16(q14, p23);
                e[1] <= min16(q04, p23);
                e[2] <= min16(p01, q34);
                e[3] <= min16(p01, q24);
                e[4] <= min16(p01, p23);
            end
            // d: to_go[I]; past the window's end only the padding.
            always_ff @(posedge clk) begin
                ov[k] <= !rst && cv;
                on[NW*k +: NW] <= cn;
                om[LOOK*5*k +: LOOK*5] <= cm;
                for (int f = 0; f < 5; f++)
                    for (int m = 0; m < 4; m++)
                        otg[TW*k + 16*(4*f + m) +: 16] <= 32'(cn) <= I ? pad4(2'(m))
                                                         : min16(cC[16*(4*f + m) +: 16], e[f] + pad4(2'(m)));
            end
        end
    endgenerate

    // ------------------------------------------------------------ choice
    // At value 0 every format is an option for a new group, the open
    // group's own included; the least, the lowest format on a tie; and
    // continuing where it costs no more.
    logic             sv_end;
    logic [4:0]       sm0;
    logic [TW-1:0]    t1;
    assign sv_end = ov[STEPS-1];
    assign sm0 = om[LOOK*5*(STEPS-1) +: 5];
    assign t1 = otg[TW*(STEPS-1) +: TW];
    // The last step's n and its masks but value 0's are not read.
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused;
    assign unused = ^{on[NW*(STEPS-1) +: NW], om[LOOK*5*(STEPS-1) + 5 +: LOOK*5 - 5]};
    /* verilator lint_on UNUSEDSIGNAL */
    logic          da, db, dc, dd, de;
    logic [4:0]    dam, dbm, dcm, ddm;
    logic [15:0]   dA [5];
    logic [TW-1:0] dC, dbC, dcC, ddC;
    logic [15:0]   d01, d23, d03, dN, dbA4, dcA4;
    logic [2:0]    i01, i23, i03, iN;
    logic [2:0]    e_nf;
    logic [19:0]   e_cont;
    always_ff @(posedge clk) begin
        da <= !rst && sv_end;
        dam <= sm0;
        for (int g = 0; g < 5; g++) begin
            dA[g] <= sm0[g] ? fwv[g] + 16'd4 + pick(t1, g, 2'd0, fwv[g][1:0]) : INF;
            for (int m = 0; m < 4; m++) dC[16*(4*g + m) +: 16] <= fwv[g] + pick(t1, g, 2'(m), fwv[g][1:0]);
        end
        db <= !rst && da;
        dbm <= dam;
        dbC <= dC;
        dbA4 <= dA[4];
        {d01, i01} <= dA[1] < dA[0] ? {dA[1], 3'd1} : {dA[0], 3'd0};
        {d23, i23} <= dA[3] < dA[2] ? {dA[3], 3'd3} : {dA[2], 3'd2};
        dc <= !rst && db;
        dcm <= dbm;
        dcC <= dbC;
        dcA4 <= dbA4;
        {d03, i03} <= d23 < d01 ? {d23, i23} : {d01, i01};
        dd <= !rst && dc;
        ddm <= dcm;
        ddC <= dcC;
        {dN, iN} <= dcA4 < d03 ? {dcA4, 3'd4} : {d03, i03};
        de <= !rst && dd;
        e_nf <= iN;
        for (int f = 0; f < 5; f++)
            for (int m = 0; m < 4; m++) e_cont[4*f + m] <= ddm[f] && ddC[16*(4*f + m) +: 16] <= dN + pad4(2'(m));
    end

    // ------------------------------------------------------------ queue
    logic [22:0]   q [DEPTH];
    logic [QB:0]   wp, rp, held;         // held: queued and in flight
    logic          pop;
    assign pop = m_valid && m_ready;
    // m_valid a register, from the pointers' next values (wp != rp was two
    // levels in front of the engine's state, 6.75 in the switch).
    logic          mv_q;
    assign m_valid = mv_q;
    always_ff @(posedge clk)
        if (rst) mv_q <= 1'b0;
        // (A push leaves entries; a pop without one empties the queue
        // when one was left: a compare of registers, picked by pop.)
        else mv_q <= pop ? de || wp != rp + (QB + 1)'(1) : de || mv_q;
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && mv_q != (wp != rp)) $error("prism_auto_plan: m_valid %0d is not a queue that holds entries", mv_q);
`endif
    assign {m_nf, m_cont} = q[rp[QB-1:0]];
    always_ff @(posedge clk) if (de) q[wp[QB-1:0]] <= {e_nf, e_cont};
    always_ff @(posedge clk) begin
        if (rst) begin
            wp <= '0;
            rp <= '0;
            held <= '0;
            s_ready <= 1'b0;
        end else begin
            wp <= wp + (QB + 1)'(de);
            rp <= rp + (QB + 1)'(pop);
            held <= held + (QB + 1)'(s_valid && s_ready) - (QB + 1)'(pop);
            // Registered: room for one more after this cycle's push.
            s_ready <= held + (QB + 1)'(s_valid && s_ready) - (QB + 1)'(pop) < (QB + 1)'(DEPTH);
        end
    end
endmodule

`default_nettype wire
