// prism_fp32_add_pipe: prism_fp32_add (IEEE binary32 addition, RNE,
// subnormals kept, canonical NaN) cut into LATENCY register stages so that
// no register-to-register path is deeper than about 5 logic levels on
// UltraScale+ (rtl/timing.sh checks it with logic-depth).
//
// A pure pipeline: one pair in every cycle that `en` is high, its sum
// LATENCY enabled cycles later on `sum` (with `s_valid` carried alongside
// as `m_valid`). Same bits as the combinational prism_fp32_add (the tests
// compare both against the CPU's f32 add). `a_rest` reads `a` as -0 (the
// ring's slot at rest: prism_ring's lap tag against the read's lap, a
// level after its register), applied as stage 0's register set/reset, so
// neither the tag's compare nor a mask is in front of stage 1's compares.
//
// Stages (each ends in a register):
//  0 the operands as given (a_rest applied)
//  1 classify (NaN, infinity), compare magnitudes, both exponent differences
//  2 swap into |x| >= |y|; y's significand and its power of two into the
//    DSP48E2 slice's A and B (prism_dsp_mul_add's input registers)
//  3 the slice's product: y aligned (its M register), x beside it (C)
//  4 the slice's sum or difference (its P register)
//  5 leading zeros, zero result, the exponent's room to shift left
//  6 normalisation distance (never below the subnormal exponent), and
//    the normalising shift as a second slice's A and B (its input registers)
//  7 the second slice's product (M), the adjusted exponent
//  8 its P: the significand normalised
//  9 round (add the round-up bit to {exponent, fraction}) and select
//    special results (NaN, infinity, overflow, zero)
// The first slice does what fabric did in stages 3 and 4 (a barrel
// shifter, its sticky OR, a 28-bit add): 521 -> 367 LUTs a lane, 64 lanes
// a node. The second does the normalising left shift (a 27-bit barrel
// shifter and the carry's right step) as a product by a power of two:
// 367 -> 348 LUTs alone. Its third register is paid for by rounding and
// selecting in one stage, so LATENCY stays 10 (11 took the node's two-port
// FP32 rate to 0.94 beats a cycle and its latency to 93 cycles: the lanes'
// hazard window a cycle longer).

`default_nettype none

module prism_fp32_add_pipe (
    input  wire logic        clk,
    input  wire logic        en,
    input  wire logic        s_valid,
    input  wire logic [31:0] a,
    input  wire logic        a_rest,
    input  wire logic [31:0] b,
    output logic             m_valid,
    output logic [31:0]      sum
);
    localparam int LATENCY = 10;
    localparam logic [31:0] NEG_ZERO = 32'h8000_0000;

    // What every stage carries about the special cases: the result is
    // fixed (NaN or an infinity) whatever the significands do.
    // (Three bits, not the 32-bit value: nine stages carry it.)
    typedef struct packed {
        logic        fixed;
        logic        nan;            // else an infinity of this sign
        logic        sign;
    } special_t;

    // ---- 0: the operands ----
    logic        s0_v;
    logic [31:0] s0_a, s0_b;
    always_ff @(posedge clk) if (en) begin
        s0_v <= s_valid;
        s0_a <= a_rest ? NEG_ZERO : a;
        s0_b <= b;
    end

    // ---- 1: classify, compare, exponent differences ----
    logic        s1_v;
    logic [31:0] s1_a, s1_b;
    logic        s1_swap;
    special_t    s1_sp;
    logic [7:0]  s1_dab, s1_dba;     // ae - be, be - ae (effective exponents)
    logic        s1_ah, s1_bh;       // hidden bits
    always_ff @(posedge clk) if (en) begin
        logic a_max, b_max, a_frac, b_frac;
        logic [7:0] ae, be;
        a_max = &s0_a[30:23];
        b_max = &s0_b[30:23];
        a_frac = |s0_a[22:0];
        b_frac = |s0_b[22:0];
        ae = s0_a[30:23] == 8'd0 ? 8'd1 : s0_a[30:23];
        be = s0_b[30:23] == 8'd0 ? 8'd1 : s0_b[30:23];
        s1_v <= s0_v;
        s1_a <= s0_a;
        s1_b <= s0_b;
        s1_swap <= s0_b[30:0] > s0_a[30:0];
        s1_dab <= ae - be;
        s1_dba <= be - ae;
        s1_ah <= s0_a[30:23] != 8'd0;
        s1_bh <= s0_b[30:23] != 8'd0;
        s1_sp.fixed <= a_max || b_max;
        s1_sp.nan <= (a_max && a_frac) || (b_max && b_frac) || (a_max && b_max && s0_a[31] != s0_b[31]);
        s1_sp.sign <= a_max ? s0_a[31] : s0_b[31];
    end

    // ---- 2: swap; y's alignment as a product, into the slice's A and B ----
    // The slice (prism_dsp_mul_add) computes P = C +- A*B: C holds x's
    // significand at P[39:16], A*B is y's significand at its exponent's
    // place, P[39:14] are x +- y with guard and round, P[13:0] below them.
    // An exponent difference d of 11 or more is split: y's significand
    // pre-shifted right by 9 (bits 8:0, below the sticky position there,
    // are `lost`), the product's power 25 - d; below 11 it is 16 - d. From
    // 26 on, y is only sticky (B = 0). For a difference, the lost bits come
    // off as the slice's carry in (x - (y + 1) borrows as x - y would).
    logic        s2_v, s2_xs, s2_sub, s2_lost;
    logic [7:0]  s2_xe;
    logic [23:0] s2_xm;
    special_t    s2_sp;
    logic [26:0] dsp_a;
    logic [17:0] dsp_b;
    logic [23:0] ym;                 // y's significand
    logic [7:0]  d;                  // the exponent difference
    logic        pre, far;
    always_comb begin
        ym = {s1_swap ? s1_ah : s1_bh, s1_swap ? s1_a[22:0] : s1_b[22:0]};
        d = s1_swap ? s1_dba : s1_dab;
        far = d >= 8'd26;
        pre = d >= 8'd11;
        dsp_a = {3'b0, pre ? {9'b0, ym[23:9]} : ym};
        dsp_b = '0;
        for (int k = 0; k <= 16; k++)
            if (!far && d == (pre ? 8'(25 - k) : 8'(16 - k))) dsp_b[k] = 1'b1;
    end
    always_ff @(posedge clk) if (en) begin
        logic [31:0] x;
        x = s1_swap ? s1_b : s1_a;
        s2_v <= s1_v;
        s2_xs <= x[31];
        s2_sub <= x[31] != (s1_swap ? s1_a[31] : s1_b[31]);
        s2_lost <= far ? |ym : (pre && |ym[8:0]);
        s2_xe <= x[30:23] == 8'd0 ? 8'd1 : x[30:23];
        s2_xm <= {s1_swap ? s1_bh : s1_ah, x[22:0]};
        s2_sp <= s1_sp;
    end

    // ---- 3, 4: the slice's product, then its sum or difference ----
    /* verilator lint_off UNUSEDSIGNAL */
    logic [47:0] dsp_p;              // x +- y < 2^41
    /* verilator lint_on UNUSEDSIGNAL */
    prism_dsp_mul_add align_add (.clk, .en, .a(dsp_a), .b(dsp_b), .c({8'b0, s2_xm, 16'b0}),
                                 .sub(s2_sub), .ci(s2_sub && s2_lost), .p(dsp_p));
    logic        s3_v, s3_xs, s3_zero_sign, s3_lost;
    logic [7:0]  s3_xe;
    special_t    s3_sp;
    logic        s4_v, s4_xs, s4_zero_sign, s4_lost;
    logic [7:0]  s4_xe;
    special_t    s4_sp;
    always_ff @(posedge clk) if (en) begin
        s3_v <= s2_v;
        s3_xs <= s2_xs;
        // An exact zero is -0 only when both operands are negative (RNE).
        s3_zero_sign <= s2_xs && !s2_sub;
        s3_lost <= s2_lost;
        s3_xe <= s2_xe;
        s3_sp <= s2_sp;
        s4_v <= s3_v;
        s4_xs <= s3_xs;
        s4_zero_sign <= s3_zero_sign;
        s4_lost <= s3_lost;
        s4_xe <= s3_xe;
        s4_sp <= s3_sp;
    end
    // The sum with guard, round and sticky: whatever lies below the round
    // bit, in P or lost, is sticky (after a borrow of the carry in too).
    logic [27:0] s4_s;
    assign s4_s = {dsp_p[40:14], |dsp_p[13:0] || s4_lost};

    // ---- 5: leading zeros, zero, room to shift ----
    logic        s5_v, s5_xs, s5_zero_sign, s5_zero;
    logic [7:0]  s5_xe, s5_room;     // room = xe - 1: never shift below the subnormal exponent
    logic [27:0] s5_s;
    logic [4:0]  s5_lz;
    special_t    s5_sp;
    always_ff @(posedge clk) if (en) begin
        logic [4:0] lz;
        // Sticky (bit 0) is never the leading one: y has bits below the
        // round position only when d >= 3, and then x - y > 3/4 x (checked
        // in simulation below). So neither lz nor the zero test waits for
        // the sticky OR over P.
        lz = 5'd27;
        for (int i = 1; i <= 26; i++) if (s4_s[i]) lz = 5'(26 - i);
        s5_v <= s4_v;
        s5_xs <= s4_xs;
        s5_zero_sign <= s4_zero_sign;
        s5_zero <= s4_s[27:1] == 27'd0;
        s5_xe <= s4_xe;
        s5_room <= s4_xe - 8'd1;
        s5_s <= s4_s;
        s5_lz <= lz;
        s5_sp <= s4_sp;
    end

    // ---- 6: normalisation distance; the shift into the second slice ----
    // The normalised significand is s << shl, or s >> 1 with sticky after a
    // carry out: P = A * 2^k. B is a signed 18-bit power of two (k <= 16),
    // so a shift of 16 or more is 16 of it in A. A's 27 bits are signed in
    // the slice; only P's low 27 bits are read, which a product's sign does
    // not change.
    logic        s6_v, s6_xs, s6_zero_sign, s6_zero, s6_carry;
    logic [7:0]  s6_xe;
    logic [4:0]  s6_shl;
    special_t    s6_sp;
    logic [26:0] nrm_a;
    logic [17:0] nrm_b;
    logic [4:0]  shl;
    always_comb begin
        shl = {3'b0, s5_lz} > s5_room ? s5_room[4:0] : s5_lz;
        nrm_a = s5_s[27] ? {s5_s[27:2], s5_s[1] | s5_s[0]} : shl[4] ? {s5_s[10:0], 16'b0} : s5_s[26:0];
        nrm_b = '0;
        for (int k = 0; k < 16; k++) nrm_b[k] = s5_s[27] ? k == 0 : shl[3:0] == 4'(k);
    end
    always_ff @(posedge clk) if (en) begin
        s6_v <= s5_v;
        s6_xs <= s5_xs;
        s6_zero_sign <= s5_zero_sign;
        s6_zero <= s5_zero;
        s6_carry <= s5_s[27];
        s6_xe <= s5_xe;
        s6_shl <= shl;
        s6_sp <= s5_sp;
    end

    // ---- 7, 8: the product, then P; the exponent beside them ----
    /* verilator lint_off UNUSEDSIGNAL */
    logic [47:0] nrm_p;              // P[26:0]: significand, guard, round, sticky
    /* verilator lint_on UNUSEDSIGNAL */
    prism_dsp_mul_add normalise (.clk, .en, .a(nrm_a), .b(nrm_b), .c(48'd0), .sub(1'b0), .ci(1'b0), .p(nrm_p));
    logic        s7_v, s7_xs, s7_zero_sign, s7_zero;
    logic [8:0]  s7_e;               // exponent (up to 255 after a carry)
    special_t    s7_sp;
    logic        s8_v, s8_xs, s8_zero_sign, s8_zero;
    logic [8:0]  s8_e;
    special_t    s8_sp;
    always_ff @(posedge clk) if (en) begin
        s7_v <= s6_v;
        s7_xs <= s6_xs;
        s7_zero_sign <= s6_zero_sign;
        s7_zero <= s6_zero;
        s7_e <= s6_carry ? {1'b0, s6_xe} + 9'd1 : {1'b0, s6_xe} - {4'b0, s6_shl};
        s7_sp <= s6_sp;
        s8_v <= s7_v;
        s8_xs <= s7_xs;
        s8_zero_sign <= s7_zero_sign;
        s8_zero <= s7_zero;
        s8_e <= s7_e;
        s8_sp <= s7_sp;
    end
    logic [26:0] s8_n;
    assign s8_n = nrm_p[26:0];

    // ---- 9: round, special results ----
    // Field by field, so that the specials are the registers' set and
    // reset rather than a select after the rounding's add: NaN (7FC00000),
    // an infinity ({sign, FF, 0}) for a fixed result or an overflow, a zero.
    always_ff @(posedge clk) if (en) begin
        logic [7:0]  ef;
        logic        up, ovf, special;
        logic [30:0] mag;
        // A significand without its hidden bit is subnormal: field 0.
        ef = s8_n[26] ? s8_e[7:0] : 8'd0;
        up = s8_n[2] & (s8_n[1] | s8_n[0] | s8_n[3]);
        mag = {ef, s8_n[25:3]} + {30'b0, up};
        ovf = s8_e >= 9'd255;
        special = s8_sp.fixed || ovf || s8_zero;
        m_valid <= s8_v;
        sum[31] <= s8_sp.fixed ? s8_sp.sign && !s8_sp.nan : !ovf && s8_zero ? s8_zero_sign : s8_xs;
        sum[30:23] <= s8_sp.fixed || ovf ? 8'hFF : s8_zero ? 8'h00 : mag[30:23];
        sum[22] <= special ? s8_sp.fixed && s8_sp.nan : mag[22];
        sum[21:0] <= special ? 22'd0 : mag[21:0];
    end

`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (en && s4_v && s4_s[27:1] == 27'd0 && s4_s[0])
            $error("prism_fp32_add_pipe: a sum of sticky alone (the leading-zero count assumes none)");
`endif

    initial begin
        if (LATENCY != 10) $error("prism_fp32_add_pipe: LATENCY must match its stage count (10)");
    end
endmodule

`default_nettype wire
