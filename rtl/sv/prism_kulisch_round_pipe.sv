// prism_kulisch_round_pipe: prism_kulisch_round (a Kulisch slot rounded once
// to FP32: RNE, subnormals kept, overflow to infinity, canonical NaN, -0 only
// when every term was -0) cut into LATENCY register stages so that no
// register-to-register path is deeper than about 5 logic levels on
// UltraScale+ (rtl/timing.sh checks it with logic-depth).
//
// A pure pipeline: one slot in every cycle that `en` is high, its FP32 value
// and exactness LATENCY enabled cycles later (with `s_valid` carried
// alongside as `m_valid`). Same bits as the combinational prism_kulisch_round
// (the tests compare both against the big-integer oracle).
//
// The integer is cut into 16-bit blocks. Only the 48 bits around the
// leading one are ever made a magnitude: the blocks' flags say where that
// is, so the 320-bit negation, and a leading-one search a block, are not
// built (1,719 LUTs before, rtl/timing.sh).
// Stages (each ends in a register):
//  1 which blocks of the slot are all zeros or all ones; the special
//    results from the flags
//  2 the index of the magnitude's top non-zero block, from prefix ORs of
//    those flags; each block's carry-in (a negative slot's +1 passes a
//    block only when every block below is zero, so the carries are block
//    flags, not a 320-bit chain); anything non-zero below each block
//  3 coarse select by that index: the slot's 48 bits of the top block and
//    the two below, made a magnitude (ones' complement and the blocks'
//    carries); the sticky of the blocks below those
//  4 the leading one inside the top block; whether the value is below 2^24
//  5 fine shift: significand and guard, sticky inside the window, exponent
//  6 round (add the round-up bit to {exponent, fraction}), overflow, and
//    select special results (NaN, infinity, overflow, zero, below 2^24)

`default_nettype none

module prism_kulisch_round_pipe #(
    parameter int KW = 320
) (
    input  wire logic          clk,
    input  wire logic          en,
    input  wire logic          s_valid,
    input  wire logic [KW-1:0] acc,
    input  wire logic [4:0]    flags,
    output logic               m_valid,
    output logic [31:0]        fp32,
    // The FP32 value is the slot's value exactly (AUTO's candidate rule).
    output logic               exact
);
    localparam int LATENCY = 6;
    localparam int F_ANY = 4, F_NOT_NEGZERO = 3, F_NAN = 2, F_POS_INF = 1, F_NEG_INF = 0;
    localparam int BW = 16;                 // block width
    localparam int NB = KW / BW;            // blocks
    localparam int BB = $clog2(NB);         // block index bits
    localparam logic [31:0] NAN = 32'h7FC0_0000;

    // What every stage carries about the special cases: the result is fixed
    // (NaN or an infinity) whatever the integer is; the sign of a zero.
    typedef struct packed {
        logic        fixed;
        logic [31:0] value;
        logic        zero_sign;
    } special_t;

    // ---- 1: block flags, specials ----
    // Only each block's own flags: the slot comes from the ring's egress
    // read (its output register, then a 4:1 select of bank groups), and
    // the flags' combinations over blocks after those were 8.25 to 8.50
    // levels in the switch.
    logic          s1_v, s1_neg;
    logic [KW-1:0] s1_acc;
    logic [NB-1:0] s1_z, s1_o;              // block of acc all zeros, all ones
    special_t      s1_sp;
    always_ff @(posedge clk) if (en) begin
        for (int b = 0; b < NB; b++) begin
            s1_z[b] <= acc[BW*b +: BW] == '0;
            s1_o[b] <= acc[BW*b +: BW] == '1;
        end
        s1_v <= s_valid;
        s1_neg <= acc[KW-1];
        s1_acc <= acc;
        if (flags[F_NAN] || (flags[F_POS_INF] && flags[F_NEG_INF])) s1_sp.value <= NAN;
        else if (flags[F_POS_INF]) s1_sp.value <= 32'h7F80_0000;
        else s1_sp.value <= 32'hFF80_0000;
        s1_sp.fixed <= flags[F_NAN] || flags[F_POS_INF] || flags[F_NEG_INF];
        s1_sp.zero_sign <= flags[F_ANY] && !flags[F_NOT_NEGZERO];
    end

    // ---- 2: the top magnitude block, carries ----
    // -acc = ~acc + 1: the +1 reaches block b when every block of acc below
    // it is zero (cin), so the carries are block flags, not a 320-bit
    // chain. The magnitude's low bits are non-zero exactly where acc's are
    // (x and -x have the same trailing zeros): the same flags give the
    // sticky of whole blocks (nzb).
    // The top non-zero block of the magnitude: for acc >= 0, acc's top
    // non-zero block. For acc < 0, with L acc's lowest non-zero block: the
    // blocks below L are zero and so are the magnitude's; L's is -acc_L,
    // not zero; above L, no carry reaches, so a block is ~acc_b, non-zero
    // unless acc_b is all ones. So the top is the highest block that is L
    // or above L and not all ones: three prefix ORs side by side
    // (non-zero below, not all ones above, non-zero above), not the
    // magnitude's block flags and then a search over them. The block is
    // registered as its index, one encoder for the whole select after it
    // (a one-hot AND-OR of 20 blocks a bit was 112 LUTs more, 1,169, and
    // an index from the one-hot of both signs 6.00 levels); each sign's
    // encoder on its own, the sign's select last: 1,048 LUTs, 5.75.
    logic          s2_v, s2_neg, s2_zero;
    logic [KW-1:0] s2_acc;
    logic [BB-1:0] s2_blk;                  // the block of the leading one
    logic [NB-1:0] s2_cin;                  // the magnitude's +1 reaches block b
    logic [NB-1:0] s2_nzb;                  // anything non-zero in acc below block b
    special_t      s2_sp;
    always_ff @(posedge clk) if (en) begin
        logic [NB:0] nzb;                   // [b]: a block below b is non-zero ([NB]: any)
        logic [NB-1:0] noa, nza;            // [b]: a block above b is not all ones, is non-zero
        logic [BB-1:0] top_neg, top_pos;    // the top block's index by the slot's sign
        nzb[0] = 1'b0;
        for (int b = 0; b < NB; b++) nzb[b + 1] = nzb[b] || !s1_z[b];
        noa[NB - 1] = 1'b0;
        nza[NB - 1] = 1'b0;
        for (int b = NB - 2; b >= 0; b--) begin
            noa[b] = noa[b + 1] || !s1_o[b + 1];
            nza[b] = nza[b + 1] || !s1_z[b + 1];
        end
        top_neg = '0;
        top_pos = '0;
        for (int b = 0; b < NB; b++) begin
            // b is L (non-zero, nothing below), or above L and not all ones; nothing like it above.
            if (((!s1_z[b] && !nzb[b]) || (!s1_o[b] && nzb[b])) && !noa[b] && nzb[b + 1]) top_neg = top_neg | BB'(b);
            if (!s1_z[b] && !nza[b]) top_pos = top_pos | BB'(b);
            s2_cin[b] <= s1_neg && !nzb[b];
        end
        s2_blk <= s1_neg ? top_neg : top_pos;
        s2_nzb <= nzb[NB-1:0];
        s2_zero <= !nzb[NB];
        s2_v <= s1_v;
        s2_neg <= s1_neg;
        s2_acc <= s1_acc;
        s2_sp <= s1_sp;
    end

    // ---- 3: coarse select by the top block, made a magnitude ----
    // The 25 bits from the leading one down (significand and guard) lie in
    // the top block and the two below it; what is below those is sticky.
    // Below block 0 the slot reads as its sign (a negative slot's ones'
    // complement of it is 0) with no carry: magnitude zeros.
    logic          s3_v, s3_neg, s3_zero, s3_st_low;
    logic [3*BW-1:0] s3_m;                  // magnitude: top block and the two below
    logic [BB-1:0] s3_blk;
    special_t      s3_sp;
    always_ff @(posedge clk) if (en) begin
        logic [KW+2*BW-1:0] padded;
        logic [NB+1:0] cpad;
        logic [3*BW-1:0] w;
        logic [2:0] c;
        padded = {s2_acc, {2 * BW{s2_neg}}};
        cpad = {s2_cin, 2'b00};
        w = padded[BW*s2_blk +: 3*BW];
        c = cpad[s2_blk +: 3];
        for (int i = 0; i < 3; i++) s3_m[BW*i +: BW] <= (w[BW*i +: BW] ^ {BW{s2_neg}}) + BW'(c[i]);
        s3_v <= s2_v;
        s3_neg <= s2_neg;
        s3_zero <= s2_zero;
        s3_blk <= s2_blk;
        s3_st_low <= s2_blk >= BB'(2) && s2_nzb[s2_blk - BB'(2)];
        s3_sp <= s2_sp;
    end

    // ---- 4: leading one inside the top block ----
    logic          s4_v, s4_neg, s4_zero, s4_small, s4_st_low;
    logic [3*BW-1:0] s4_w;                  // top block and the two below
    logic [3:0]    s4_lp;
    logic [BB-1:0] s4_blk;
    logic [23:0]   s4_low;                  // the whole value when below 2^24
    special_t      s4_sp;
    always_ff @(posedge clk) if (en) begin
        logic [3:0] lp;
        lp = '0;
        for (int i = 0; i < BW; i++) if (s3_m[2*BW + i]) lp = 4'(i);
        s4_v <= s3_v;
        s4_neg <= s3_neg;
        s4_zero <= s3_zero;
        // Leading one at or below bit 23 (block 0, or block 1 up to its bit
        // 7): the integer is already the FP32 pattern.
        s4_small <= s3_blk == '0 || (s3_blk == BB'(1) && !lp[3]);
        s4_w <= s3_m;
        s4_lp <= lp;
        s4_blk <= s3_blk;
        s4_st_low <= s3_st_low;
        // The magnitude's bits 23..0: block 0 is the window's top block, or
        // block 1 is (block 0 below it).
        s4_low <= s3_blk == '0 ? {8'b0, s3_m[2*BW +: BW]} : s3_m[BW +: 24];
        s4_sp <= s3_sp;
    end

    // ---- 5: fine shift, window sticky, exponent ----
    // With the leading one at p = 16 blk + lp (bit 32 + lp of the window),
    // the significand is window bits lp+32..lp+9, the guard lp+8; the
    // exponent field is p - 22.
    logic          s5_v, s5_neg, s5_zero, s5_small, s5_st, s5_ovf;
    logic [23:0]   s5_sg;                   // fraction (no hidden bit) and guard
    logic [7:0]    s5_e;
    logic [23:0]   s5_low;
    special_t      s5_sp;
    always_ff @(posedge clk) if (en) begin
        logic [9:0] p;
        logic st;
        p = 10'({s4_blk, s4_lp});
        st = s4_st_low;
        for (int j = 0; j < 8; j++) st = st | s4_w[j];
        for (int j = 8; j < 23; j++) if (4'(j - 8) < s4_lp) st = st | s4_w[j];
        s5_v <= s4_v;
        s5_neg <= s4_neg;
        s5_zero <= s4_zero;
        s5_small <= s4_small;
        s5_sg <= 24'(s4_w[3*BW-1:8] >> s4_lp);
        s5_st <= st;
        s5_e <= 8'(p - 10'd22);
        // Field p - 22 >= 255: infinity whatever the rounding.
        s5_ovf <= p >= 10'(22 + 255);
        s5_low <= s4_low;
        s5_sp <= s4_sp;
    end

    // ---- 6: round, special results ----
    always_ff @(posedge clk) if (en) begin
        logic g, up, ovf;
        logic [30:0] r;
        g = s5_sg[0];
        up = g & (s5_st | s5_sg[1]);
        // The round-up is added to {exponent, fraction}: a carry moves the
        // exponent; from field 254 with the fraction all ones it reaches 255.
        r = {s5_e, s5_sg[23:1]} + {30'b0, up};
        ovf = s5_ovf || (s5_e == 8'd254 && &s5_sg[23:1] && up);
        m_valid <= s5_v;
        exact <= 1'b1;
        if (s5_sp.fixed) fp32 <= s5_sp.value;
        else if (s5_zero) fp32 <= {s5_sp.zero_sign, 31'b0};
        else if (s5_small) fp32 <= {s5_neg, 7'b0, s5_low};
        else if (ovf) begin
            fp32 <= {s5_neg, 31'h7F80_0000};
            exact <= 1'b0;
        end else begin
            fp32 <= {s5_neg, r};
            exact <= !g && !s5_st;
        end
    end

    initial begin
        if (KW % BW != 0 || KW < 3 * BW || KW > 32 * BW) $error("prism_kulisch_round_pipe: KW must be a multiple of 16 from 48 to 512");
        if (LATENCY != 6) $error("prism_kulisch_round_pipe: LATENCY must match its stage count (6)");
    end
endmodule

`default_nettype wire
