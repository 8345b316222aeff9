// prism_kulisch_round: a Kulisch slot (KW-bit integer in units of 2^-149 and
// its flags) rounded once to FP32: round to nearest even, subnormals kept,
// overflow to infinity, canonical NaN, -0 only when every term was -0.
//
// Below 2^24 units the integer is already the FP32 bit pattern (subnormals
// and the first normal binade share the unit 2^-149). Above, with p the top
// bit, the significand is bits p..p-23, the exponent field p - 22, and the
// bits below decide the rounding; the round-up is added to the whole
// pattern so that a carry moves the exponent (and reaches infinity).

module prism_kulisch_round #(
    parameter int KW = 320
) (
    input  logic [KW-1:0] acc,
    input  logic [4:0]    flags,
    output logic [31:0]   fp32,
    // The FP32 value is the slot's value exactly (AUTO's candidate rule).
    output logic          exact
);
    localparam int F_ANY = 4, F_NOT_NEGZERO = 3, F_NAN = 2, F_POS_INF = 1, F_NEG_INF = 0;
    localparam int PB = $clog2(KW);

    logic          neg;
    logic [KW-1:0] mag, low;
    logic [PB-1:0] p, sh;
    logic [23:0]   mant;
    logic          g, st, up;
    logic [31:0]   r;

    always_comb begin
        neg = acc[KW-1];
        mag = neg ? -acc : acc;
        p = '0;
        for (int i = 0; i < KW; i++) if (mag[i]) p = PB'(i);
        sh = p - PB'(23);
        mant = 24'(mag >> sh);
        low = mag & ((KW'(1) << sh) - KW'(1));
        g = sh != 0 && mag[sh - PB'(1)];
        st = sh > 1 && (low & ((KW'(1) << (sh - PB'(1))) - KW'(1))) != 0;
        up = g & (st | mant[0]);
        r = 32'(sh) * 32'h0080_0000 + {8'b0, mant} + {31'b0, up};
        exact = 1'b1;
        if (flags[F_NAN] || (flags[F_POS_INF] && flags[F_NEG_INF])) fp32 = 32'h7FC0_0000;
        else if (flags[F_POS_INF]) fp32 = 32'h7F80_0000;
        else if (flags[F_NEG_INF]) fp32 = 32'hFF80_0000;
        else if (mag == 0) fp32 = (flags[F_ANY] && !flags[F_NOT_NEGZERO]) ? 32'h8000_0000 : 32'h0;
        else if (p < PB'(24)) fp32 = {neg, mag[30:0]};
        else if ({1'b0, p} >= (PB + 1)'(24 + 254) || r >= 32'h7F80_0000) begin
            fp32 = {neg, 31'h7F80_0000};
            exact = 1'b0;
        end else begin
            fp32 = {neg, r[30:0]};
            exact = !g && !st;
        end
    end
endmodule
