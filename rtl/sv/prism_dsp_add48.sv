// prism_dsp_add48: a 48-bit add, p = c + ab + ci, in one UltraScale+
// DSP48E2 slice (its ALU, no multiplier), with the carry out of bit 47 and
// whether p is all ones (the pattern detector). Wide exact adds (the
// Kulisch lanes' 320 bits) are chains of these: in fabric, a 48-bit add
// and its increment cost a LUT a bit each; here none.
//
// Two register stages, both the slice's own: the inputs (AREG, BREG,
// CREG, CARRYINREG) and P (PREG, with CARRYOUT and PATTERNDETECT beside
// it), so p comes out LATENCY = 2 enabled cycles after its inputs, one a
// cycle; `en` drives every clock enable. AB_ENABLE = 0 leaves the A:B
// operand out (an increment: p = c + ci; ab is unused).
//
// Synthesis (SYNTHESIS defined, as Yosys does) instantiates the
// primitive; simulation (Verilator) runs the behavioural twin below it.
// The twin is what every RTL test exercises, so the primitive's settings
// were checked against Xilinx's own DSP48E2 simulation model (docs/rtl.md,
// "Resources: the Kulisch lanes' adds in DSP48E2"). The settings, from
// UG579: USE_MULT NONE; OPMODE W = 0, Z = C, Y = 0, X = A:B (or 0);
// ALUMODE 0000 (Z + W + X + Y + CIN); CARRYINSEL 000 (the CARRYIN pin);
// USE_SIMD ONE48, so CARRYOUT[3] is bit 47's carry; the pattern detector
// on P against all ones with no bit masked.

`default_nettype none

module prism_dsp_add48 #(
    parameter int AB_ENABLE = 1
) (
    input  wire logic        clk,
    input  wire logic        en,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire logic [47:0] ab,     // unused when AB_ENABLE = 0
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire logic [47:0] c,
    input  wire logic        ci,
    output logic      [47:0] p,
    output logic             co,     // carry out of bit 47
    output logic             ones    // p is all ones
);
    localparam int LATENCY = 2;
    initial begin
        if (AB_ENABLE != 0 && AB_ENABLE != 1) $error("prism_dsp_add48: AB_ENABLE must be 0 or 1");
        if (LATENCY != 2) $error("prism_dsp_add48: LATENCY must match the slice's two registers");
    end

`ifdef SYNTHESIS
    logic [3:0] carryout;
    /* verilator lint_off PINCONNECTEMPTY */
    DSP48E2 #(
        .USE_MULT("NONE"), .USE_SIMD("ONE48"), .USE_WIDEXOR("FALSE"),
        .A_INPUT("DIRECT"), .B_INPUT("DIRECT"),
        .AREG(1), .ACASCREG(1), .BREG(1), .BCASCREG(1), .CREG(1), .CARRYINREG(1),
        .DREG(0), .ADREG(0), .MREG(0), .PREG(1),
        .INMODEREG(0), .OPMODEREG(0), .ALUMODEREG(0), .CARRYINSELREG(0),
        .USE_PATTERN_DETECT("PATDET"), .SEL_PATTERN("PATTERN"), .SEL_MASK("MASK"),
        .PATTERN(48'hFFFF_FFFF_FFFF), .MASK(48'h0000_0000_0000),
        .AUTORESET_PATDET("NO_RESET")
    ) dsp (
        .CLK(clk),
        .A(ab[47:18]), .B(ab[17:0]), .C(c), .D(27'd0),
        .CARRYIN(ci), .CARRYINSEL(3'b000),
        // W = 0 (8:7), Z = C (6:4), Y = 0 (3:2), X = A:B or 0 (1:0)
        .OPMODE({2'b00, 3'b011, 2'b00, AB_ENABLE != 0 ? 2'b11 : 2'b00}),
        .ALUMODE(4'b0000), .INMODE(5'b00000),
        .ACIN(30'd0), .BCIN(18'd0), .PCIN(48'd0), .CARRYCASCIN(1'b0), .MULTSIGNIN(1'b0),
        .CEA1(en), .CEA2(en), .CEB1(en), .CEB2(en), .CEC(en), .CECARRYIN(en), .CEP(en),
        .CEAD(1'b0), .CED(1'b0), .CEM(1'b0), .CEINMODE(1'b0), .CECTRL(1'b0), .CEALUMODE(1'b0),
        .RSTA(1'b0), .RSTB(1'b0), .RSTC(1'b0), .RSTD(1'b0), .RSTM(1'b0), .RSTP(1'b0),
        .RSTALLCARRYIN(1'b0), .RSTALUMODE(1'b0), .RSTCTRL(1'b0), .RSTINMODE(1'b0),
        .P(p), .CARRYOUT(carryout), .PATTERNDETECT(ones),
        .ACOUT(), .BCOUT(), .PCOUT(), .CARRYCASCOUT(), .MULTSIGNOUT(), .OVERFLOW(), .UNDERFLOW(),
        .PATTERNBDETECT(), .XOROUT()
    );
    /* verilator lint_on PINCONNECTEMPTY */
    assign co = carryout[3];
`else
    logic [47:0] ab_q, c_q;
    logic        ci_q;
    always_ff @(posedge clk) if (en) begin
        logic [48:0] s;
        ab_q <= AB_ENABLE != 0 ? ab : 48'd0;
        c_q <= c;
        ci_q <= ci;
        s = {1'b0, c_q} + {1'b0, ab_q} + 49'(ci_q);
        p <= s[47:0];
        co <= s[48];
        ones <= &s[47:0];
    end
`endif
endmodule

`default_nettype wire
