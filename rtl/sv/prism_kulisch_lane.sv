// prism_kulisch_lane: one KULISCH_FIXED accumulator lane — adds one term
// exactly to a slot's KW-bit two's-complement integer in units of 2^-149,
// and keeps the slot's special-value flags.
//
// A term is an FP32 value (INT8, FP16 and BF16 arrive widened exactly) or a
// Kulisch value (state byte and its integer, sign-extended to KW bits). An
// FP32 value m x 2^(e-150) is the integer m << (e - 1) (e = 1 for
// subnormals), at most 277 bits: with KW >= 278 + ceil(log2 N) the sum of
// N terms never overflows, which the STAGE width rule guarantees.
//
// Flags: {any term, a term other than -0, NaN, +inf, -inf}; the rounding
// (prism_kulisch_round) reads them: NaN or +inf with -inf give NaN, an exact
// zero is -0 only when every term was -0.

module prism_kulisch_lane #(
    parameter int KW = 320
) (
    input  logic [KW-1:0] acc,
    input  logic [4:0]    flags,
    input  logic          is_kulisch,
    input  logic [31:0]   fp32,
    input  logic [7:0]    kstate,
    input  logic [KW-1:0] kint,
    output logic [KW-1:0] acc_o,
    output logic [4:0]    flags_o
);
    localparam int F_ANY = 4, F_NOT_NEGZERO = 3, F_NAN = 2, F_POS_INF = 1, F_NEG_INF = 0;

    logic [7:0]    e;
    logic [23:0]   m;
    logic [KW-1:0] mag, term;

    always_comb begin
        e = fp32[30:23];
        m = {e != 0, fp32[22:0]};
        mag = KW'(m) << (e == 0 ? 8'd0 : e - 8'd1);
        term = '0;
        flags_o = flags;
        flags_o[F_ANY] = 1'b1;
        if (is_kulisch) begin
            case (kstate)
                8'd0: begin term = kint; flags_o[F_NOT_NEGZERO] = 1'b1; end   // FINITE
                8'd1: flags_o[F_NOT_NEGZERO] = 1'b1;                          // +0
                8'd2: ;                                                       // -0
                8'd3: begin flags_o[F_POS_INF] = 1'b1; flags_o[F_NOT_NEGZERO] = 1'b1; end
                8'd4: begin flags_o[F_NEG_INF] = 1'b1; flags_o[F_NOT_NEGZERO] = 1'b1; end
                default: begin flags_o[F_NAN] = 1'b1; flags_o[F_NOT_NEGZERO] = 1'b1; end
            endcase
        end else if (e == 8'hFF) begin
            flags_o[F_NOT_NEGZERO] = 1'b1;
            if (fp32[22:0] != 0) flags_o[F_NAN] = 1'b1;
            else if (fp32[31]) flags_o[F_NEG_INF] = 1'b1;
            else flags_o[F_POS_INF] = 1'b1;
        end else begin
            term = fp32[31] ? -mag : mag;
            if (!(fp32[31] && fp32[30:0] == 0)) flags_o[F_NOT_NEGZERO] = 1'b1;
        end
        acc_o = acc + term;
    end
endmodule
