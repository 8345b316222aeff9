// prism_kulisch_lane_pipe: prism_kulisch_lane (one KULISCH_FIXED lane: an
// FP32 term or a Kulisch value added exactly to a KW-bit two's-complement
// slot, with its special-value flags) cut into LATENCY = 3 register stages
// so that no register-to-register path is deeper than 5 logic levels on
// UltraScale+ (4.25 measured: rtl/timing.sh checks it with logic-depth).
// LATENCY is a localparam: results come LATENCY enabled cycles after their
// operation, one a cycle; the node must not feed a slot's result back in
// before it is out (forward or stall for back-to-back adds to one slot).
//
// A pure pipeline: one (acc, term) in every cycle that `en` is high, its
// result LATENCY enabled cycles later on acc_o/flags_o (with `s_valid`
// carried alongside as `m_valid`). Same bits as the combinational
// prism_kulisch_lane, wrap-around included (the tests compare both, and
// both against a big-integer oracle).
//
// Stages (each ends in a register):
//  1 classify, flags; align the FP32 significand by the exponent's low five
//    bits (0..31) and, for a subnormal, by its fixed 2^0; the word position
//    (the exponent's top three bits) one-hot
//  2 place the aligned significand at its word (at most two candidates a
//    bit: a LUT, not a 151-bit barrel shifter, which was a third of the
//    lane), pick the Kulisch integer or the term (negated as ~mag, its +1
//    the first segment's carry-in), add it to acc in SEG-bit segments with
//    carry-in 0; each segment's carry out, and whether it would pass a
//    carry in (a ^ b all ones)
//  3 each segment's carry-in from the segments below; the segment
//    incremented by it
//
// A carry chain is a quarter level per 4 bits (CARRY4 as Yosys maps it),
// so a 320-bit add is 20 levels in one piece: here no chain is longer than
// SEG + 2 bits (2.25 levels). Stage 3 increments (one carry chain a
// segment, 5.50 levels) instead of selecting between sums with carry-in 0
// and 1 (4.25 levels, but a second adder a segment): 784 LUTs against
// 1,340 with the barrel shifter and carry-select (rtl/timing.sh, Yosys 0.23).

`default_nettype none

module prism_kulisch_lane_pipe #(
    parameter int KW = 320
) (
    input  wire logic          clk,
    input  wire logic          en,
    input  wire logic          s_valid,
    input  wire logic [KW-1:0] acc,
    input  wire logic [4:0]    flags,
    // The slot is at rest (prism_ring's lap tag): acc and flags read as 0,
    // whatever they hold. Applied as the first stage's register reset, so
    // the ring needs no LUT a bit to mask them.
    input  wire logic          acc_rest,
    input  wire logic          is_kulisch,
    input  wire logic [31:0]   fp32,
    input  wire logic [7:0]    kstate,
    // Zero unless is_kulisch with kstate FINITE: stage 2 ORs it into the
    // term. prism_node masks it once for its 64 lanes; masked here (a
    // register reset a lane), Yosys's xilinx_dffopt gave each of the 320
    // resets a LUT of its own in the switch's synthesis.
    input  wire logic [KW-1:0] kint,
    output logic               m_valid,
    output logic [KW-1:0]      acc_o,
    output logic [4:0]         flags_o
);
    localparam int LATENCY = 3;
    localparam int F_ANY = 4, F_NOT_NEGZERO = 3, F_NAN = 2, F_POS_INF = 1, F_NEG_INF = 0;
    // Segment width of the add: 4 CARRY8 (2 levels) per chain.
    localparam int SEG = 32;
    localparam int NSEG = (KW + SEG - 1) / SEG;
    localparam int W = NSEG * SEG;
    // Stage 1's partial alignment: the 24-bit significand shifted by the
    // exponent's low five bits (0..31); stage 2 places it at a multiple of 32.
    localparam int FW = 24 + 31;
    localparam int NJ = 8;           // word positions (the exponent's top three bits)

    // ---- 1: classify, flags, align by the low five exponent bits ----
    logic          s1_v, s1_neg;
    logic [FW-1:0] s1_f;
    logic [NJ-1:0] s1_j;
    logic [4:0]    s1_flags;
    logic [KW-1:0] s1_acc, s1_kint;
    always_ff @(posedge clk) if (en) begin
        logic [7:0] e;
        logic fin;
        logic [4:0] f;
        e = fp32[30:23];
        // A finite FP32 term (else the FP32 part adds nothing).
        fin = !is_kulisch && e != 8'hFF;
        f = acc_rest ? 5'd0 : flags;
        f[F_ANY] = 1'b1;
        if (is_kulisch) begin
            case (kstate)
                8'd0: f[F_NOT_NEGZERO] = 1'b1;                                // FINITE
                8'd1: f[F_NOT_NEGZERO] = 1'b1;                                // +0
                8'd2: ;                                                       // -0
                8'd3: begin f[F_POS_INF] = 1'b1; f[F_NOT_NEGZERO] = 1'b1; end
                8'd4: begin f[F_NEG_INF] = 1'b1; f[F_NOT_NEGZERO] = 1'b1; end
                default: begin f[F_NAN] = 1'b1; f[F_NOT_NEGZERO] = 1'b1; end
            endcase
        end else if (e == 8'hFF) begin
            f[F_NOT_NEGZERO] = 1'b1;
            if (fp32[22:0] != 0) f[F_NAN] = 1'b1;
            else if (fp32[31]) f[F_NEG_INF] = 1'b1;
            else f[F_POS_INF] = 1'b1;
        end else if (!(fp32[31] && fp32[30:0] == 0)) begin
            f[F_NOT_NEGZERO] = 1'b1;
        end
        s1_v <= s_valid;
        s1_flags <= f;
        s1_acc <= acc_rest ? '0 : acc;
        s1_kint <= kint;
        s1_neg <= fin && fp32[31];
        s1_j <= NJ'(1) << e[7:5];
        // The term is m << (e - 1) for a normal, frac << 0 for a subnormal:
        // stage 1 keeps f = m << e[4:0] (or frac << 1), stage 2 places f at
        // word e[7:5] and drops bit 0. Subnormals are a mux after the
        // shift, so the shifter waits for no e == 0 test.
        if (!fin) s1_f <= '0;
        else if (e == 8'd0) s1_f <= FW'({fp32[22:0], 1'b0});
        else s1_f <= FW'({1'b1, fp32[22:0]}) << e[4:0];
    end

    // ---- 2: place the term at its word, pick, add by segments ----
    logic          s2_v;
    logic [4:0]    s2_flags;
    logic [W-1:0]  s2_s0;            // each segment's sum with carry-in 0
    logic [NSEG-1:0] s2_g, s2_p;     // its carry out; it passes a carry in on
    always_ff @(posedge clk) if (en) begin
        // u is the term times two: m << e. Its bit 0 is always 0 (s1_f's
        // bit 0 is a fraction bit only when e[4:0] = 0, and then e = 0, a
        // subnormal, or the word is not 0); it is dropped.
        /* verilator lint_off UNUSEDSIGNAL */
        logic [KW:0] u;
        /* verilator lint_on UNUSEDSIGNAL */
        logic [KW-1:0] term;
        logic [W-1:0] a, b;
        logic [SEG+1:0] x0;
        u = '0;
        for (int j = 0; j < NJ; j++) if (s1_j[j]) u = u | ((KW + 1)'(s1_f) << (32 * j));
        a = W'(s1_acc);
        // ~mag for a negative FP32 term: the +1 is segment 0's carry-in.
        term = s1_kint | (u[KW:1] ^ {KW{s1_neg}});
        b = W'(term);
        for (int k = 0; k < NSEG; k++) begin
            if (k == 0) x0 = {1'b0, a[0 +: SEG], 1'b1} + {1'b0, b[0 +: SEG], s1_neg};
            else x0 = {1'b0, a[k*SEG +: SEG], 1'b0} + {1'b0, b[k*SEG +: SEG], 1'b0};
            s2_s0[k*SEG +: SEG] <= x0[SEG:1];
            s2_g[k] <= x0[SEG+1];
            s2_p[k] <= &(a[k*SEG +: SEG] ^ b[k*SEG +: SEG]);
        end
        s2_v <= s1_v;
        s2_flags <= s1_flags;
    end

    // ---- 3: carries between segments, increment ----
    /* verilator lint_off UNUSEDSIGNAL */
    logic [W-1:0] sum;               // bits at and above KW (a padded last segment) are dropped
    /* verilator lint_on UNUSEDSIGNAL */
    always_comb begin
        logic c;
        c = 1'b0;                    // segment 0's carry-in is in s2_s0 already
        for (int k = 0; k < NSEG; k++) begin
            sum[k*SEG +: SEG] = s2_s0[k*SEG +: SEG] + SEG'(c);
            c = s2_g[k] | (s2_p[k] & c);
        end
    end
    always_ff @(posedge clk) if (en) begin
        m_valid <= s2_v;
        acc_o <= sum[KW-1:0];
        flags_o <= s2_flags;
    end

    initial begin
        if (KW < 280) $error("prism_kulisch_lane_pipe: KW must be at least 280 (a 277-bit FP32 term and room for carries)");
        if (LATENCY != 3) $error("prism_kulisch_lane_pipe: LATENCY must match its stage count (3)");
    end
endmodule

`default_nettype wire
