// prism_kulisch_lane_pipe: prism_kulisch_lane (one KULISCH_FIXED lane: an
// FP32 term or a Kulisch value added exactly to a KW-bit two's-complement
// slot, with its special-value flags) cut into LATENCY = 8 register stages,
// its alignment and adds in DSP48E2 slices (prism_dsp_mul_add,
// prism_dsp_add48), so that no register-to-register path is deeper than 6
// logic levels on UltraScale+ (rtl/timing.sh checks it with logic-depth).
// LATENCY is a localparam: results come LATENCY enabled cycles after their
// term, one a cycle; the node must not feed a slot's result back in before
// it is out (forward or stall for back-to-back adds to one slot).
//
// A pure pipeline with two entry points: the term (s_valid, is_kulisch,
// fp32, kstate) in every cycle that `en` is high, and the slot it adds to
// (acc, flags, acc_rest) with the Kulisch integer (kint) ACC_DELAY = 3
// enabled cycles later, when the term's alignment is done; its result
// LATENCY enabled cycles after the term on acc_o/flags_o (with `s_valid`
// carried alongside as `m_valid`). So the slot need not wait in the lane:
// the node reads the ring ACC_DELAY cycles later instead (a slot's delay
// here was 336 SRL16E a lane). Same bits as the combinational
// prism_kulisch_lane, wrap-around included (the tests compare both, and
// both against a big-integer oracle).
//
// Stages (each ends in a register):
//  1 classify the term, its flags; the FP32 significand and 2^e[3:0] (2^1
//    for a subnormal) into a slice's multiplier; the word position (the
//    exponent's top three bits) one-hot and e[4], into the slice's C (they
//    come out of P above the product)
//  2 the slice's product (its M register), the word position beside it (C)
//  3 the slice's P: the significand shifted by e[3:0], the word position
//    and e[4] above it
//  4 shifted by 16 more when e[4] is set; the slot (with the flags it
//    holds) and the Kulisch integer, given now, registered
//  5 place the aligned significand at its word (at most two candidates a
//    bit: a LUT, not a 151-bit barrel shifter), pick the Kulisch integer or
//    the term (negated as ~mag, its +1 the first segment's carry-in): into
//    the input registers of one slice a 48-bit segment
//  6 each segment's sum with carry-in 0 (the slice's P), its carry out,
//    and whether it would pass a carry in (the sum all ones: the slice's
//    pattern detector)
//  7 each segment's carry-in from the segments below (a lookahead over
//    the registered carries), into a second slice a segment
//  8 the segment incremented by it (that slice's P; segment 0, whose
//    carry-in is the term's own, is only delayed)
//
// In fabric (up to session 63) the same lane was 3 stages: 32-bit segments
// added by CARRY8 chains and incremented by a second chain, about a LUT a
// bit for each (779 LUTs alone, 977 in the switch's synthesis); session 64
// moved the adds into slices (531 LUTs: the alignment by e[4:0] 155 of
// them), session 65 the alignment's shift by e[3:0] (docs/rtl.md,
// "Resources: the Kulisch lanes' alignment in DSP48E2").

`default_nettype none

module prism_kulisch_lane_pipe #(
    parameter int KW = 320
) (
    input  wire logic          clk,
    input  wire logic          en,
    // The term.
    input  wire logic          s_valid,
    input  wire logic          is_kulisch,
    input  wire logic [31:0]   fp32,
    input  wire logic [7:0]    kstate,
    // ACC_DELAY enabled cycles after its term: the slot.
    input  wire logic [KW-1:0] acc,
    input  wire logic [4:0]    flags,
    // The slot is at rest (prism_ring's lap tag): acc and flags read as 0,
    // whatever they hold. Applied as stage 4's register reset, so the ring
    // needs no LUT a bit to mask them.
    input  wire logic          acc_rest,
    // ACC_DELAY enabled cycles after its term: zero unless is_kulisch with
    // kstate FINITE; stage 5 ORs it into the term. prism_node masks it once
    // for its 64 lanes; masked here (a register reset a lane), Yosys's
    // xilinx_dffopt gave each of the 320 resets a LUT of its own in the
    // switch's synthesis.
    input  wire logic [KW-1:0] kint,
    output logic               m_valid,
    output logic [KW-1:0]      acc_o,
    output logic [4:0]         flags_o
);
    localparam int LATENCY = 8;
    localparam int ACC_DELAY = 3;
    localparam int F_ANY = 4, F_NOT_NEGZERO = 3, F_NAN = 2, F_POS_INF = 1, F_NEG_INF = 0;
    // Segment width of the add: a DSP48E2 slice's ALU.
    localparam int SEG = 48;
    localparam int NSEG = (KW + SEG - 1) / SEG;
    localparam int W = NSEG * SEG;
    // Stage 1's partial alignment: the 24-bit significand shifted by the
    // exponent's low five bits (0..31); stage 2 places it at a multiple of 32.
    localparam int FW = 24 + 31;
    localparam int NJ = 8;           // word positions (the exponent's top three bits)

    // ---- 1: classify, flags; the significand and 2^e[3:0] into a slice ----
    // The term's own flags (tf): OR-ed into the slot's at stage 4.
    logic          s1_v, s1_neg, s1_hi;
    logic [NJ-1:0] s1_j;
    logic [4:0]    s1_tf;
    always_ff @(posedge clk) if (en) begin
        logic [7:0] e;
        logic fin;
        logic [4:0] f;
        e = fp32[30:23];
        // A finite FP32 term (else the FP32 part adds nothing).
        fin = !is_kulisch && e != 8'hFF;
        f = '0;
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
        s1_tf <= f;
        s1_neg <= fin && fp32[31];
        s1_j <= NJ'(1) << e[7:5];
        s1_hi <= e[4];
    end
    // The term is m << (e - 1) for a normal, frac << 0 for a subnormal:
    // stages 1-4 make f = m << e[4:0] (or frac << 1: a subnormal's
    // significand has no hidden bit and its shift is 2^1), stage 5 places f
    // at word e[7:5] and drops bit 0. The slice's P is m << e[3:0]: at
    // most 24 + 15 bits.
    logic [26:0] mul_a;
    logic [17:0] mul_b;
    // The product is below 2^39: the word position and e[4] ride above it
    // through the slice (C, a cycle after A and B, as stage 1's registers
    // are), not in two registers of their own a lane (nine SRL16E).
    logic [47:0] mul_p;
    always_comb begin
        logic [7:0] e;
        e = fp32[30:23];
        mul_a = !is_kulisch && e != 8'hFF ? {3'b0, e != 8'd0, fp32[22:0]} : 27'd0;
        mul_b = 18'(1) << (e == 8'd0 ? 4'd1 : e[3:0]);
    end
    prism_dsp_mul_add shift (.clk, .en, .a(mul_a), .b(mul_b), .c({s1_j, s1_hi, 39'd0}), .sub(1'b0), .ci(1'b0), .p(mul_p));

    // ---- 2, 3: the product; ---- 4: by 16 more, the slot and kint ----
    logic          m2_v, m2_neg, m3_v, m3_neg, s4_v, s4_neg;
    logic [NJ-1:0] s4_j;
    logic [4:0]    m2_tf, m3_tf, s4_flags;
    logic [FW-1:0] s4_f;
    logic [KW-1:0] s4_acc, s4_kint;
    always_ff @(posedge clk) if (en) begin
        {m2_v, m2_neg, m2_tf} <= {s1_v, s1_neg, s1_tf};
        {m3_v, m3_neg, m3_tf} <= {m2_v, m2_neg, m2_tf};
        {s4_v, s4_neg} <= {m3_v, m3_neg};
        s4_j <= mul_p[40 +: NJ];
        s4_f <= mul_p[39] ? FW'({mul_p[38:0], 16'd0}) : FW'(mul_p[38:0]);
        s4_flags <= (acc_rest ? 5'd0 : flags) | m3_tf;
        s4_acc <= acc_rest ? '0 : acc;
        s4_kint <= kint;
    end

    // ---- 5: place the term at its word, pick; into the slices ----
    // The term and acc enter each segment's first slice (its input
    // registers are this stage's); the slices' P registers are stage 6.
    logic [W-1:0]  term_w, acc_w;
    always_comb begin
        // u is the term times two: m << e. Its bit 0 is always 0 (s4_f's
        // bit 0 is a fraction bit only when e[4:0] = 0, and then e = 0, a
        // subnormal, or the word is not 0); it is dropped.
        /* verilator lint_off UNUSEDSIGNAL */
        logic [KW:0] u;
        /* verilator lint_on UNUSEDSIGNAL */
        logic [KW-1:0] term;
        u = '0;
        for (int j = 0; j < NJ; j++) if (s4_j[j]) u = u | ((KW + 1)'(s4_f) << (32 * j));
        // ~mag for a negative FP32 term: the +1 is segment 0's carry-in.
        term = s4_kint | (u[KW:1] ^ {KW{s4_neg}});
        term_w = W'(term);
        acc_w = W'(s4_acc);
    end
    logic          s5_v, s6_v, s7_v;
    logic [4:0]    s5_flags, s6_flags, s7_flags;
    always_ff @(posedge clk) if (en) begin
        s5_v <= s4_v;
        s5_flags <= s4_flags;
        s6_v <= s5_v;
        s6_flags <= s5_flags;
        s7_v <= s6_v;
        s7_flags <= s6_flags;
        m_valid <= s7_v;
        flags_o <= s7_flags;
    end

    // ---- 6: each segment's sum with carry-in 0 (segment 0: the term's
    // +1), its carry out, and whether it would pass a carry in (all ones);
    // ---- 7: each segment's carry-in from the segments below, into the
    // second slice's input registers; ---- 8: the segment incremented.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [W-1:0]    s6_s0, sum;     // bits at and above KW (a padded last segment) are dropped
    logic [NSEG-1:0] s6_g, s6_p;     // the last segment's are not needed
    logic [NSEG-1:0] cin;            // segment 0's is 0
    /* verilator lint_on UNUSEDSIGNAL */
    always_comb begin
        logic c;
        c = 1'b0;                    // segment 0's carry-in is in s6_s0 already
        for (int k = 0; k < NSEG; k++) begin
            cin[k] = c;
            c = s6_g[k] | (s6_p[k] & c);
        end
    end
    logic [SEG-1:0] s7_s0, s8_s0;    // segment 0 needs no increment: a delay
    always_ff @(posedge clk) if (en) begin
        s7_s0 <= s6_s0[0 +: SEG];
        s8_s0 <= s7_s0;
    end
    assign sum[0 +: SEG] = s8_s0;
    genvar gk;
    generate
        for (gk = 0; gk < NSEG; gk++) begin : g_seg
            prism_dsp_add48 add (
                .clk, .en, .ab(term_w[gk*SEG +: SEG]), .c(acc_w[gk*SEG +: SEG]), .ci(gk == 0 ? s4_neg : 1'b0),
                .p(s6_s0[gk*SEG +: SEG]), .co(s6_g[gk]), .ones(s6_p[gk])
            );
            if (gk > 0) begin : g_inc
                /* verilator lint_off PINCONNECTEMPTY */
                prism_dsp_add48 #(.AB_ENABLE(0)) inc (
                    .clk, .en, .ab(48'd0), .c(s6_s0[gk*SEG +: SEG]), .ci(cin[gk]),
                    .p(sum[gk*SEG +: SEG]), .co(), .ones()
                );
                /* verilator lint_on PINCONNECTEMPTY */
            end
        end
    endgenerate
    assign acc_o = sum[KW-1:0];

    initial begin
        if (KW < 280) $error("prism_kulisch_lane_pipe: KW must be at least 280 (a 277-bit FP32 term and room for carries)");
        if (LATENCY != 8) $error("prism_kulisch_lane_pipe: LATENCY must match its stage count (8)");
        if (ACC_DELAY != 3) $error("prism_kulisch_lane_pipe: ACC_DELAY must be the slice's three stages before stage 4");
    end
endmodule

`default_nettype wire
