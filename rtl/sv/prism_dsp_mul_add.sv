// prism_dsp_mul_add: p = c + a*b + ci, or c - (a*b + ci), in one
// UltraScale+ DSP48E2 slice: its 27 x 18 multiplier and its ALU. With b a
// power of two the product is a shift, so an FP32 lane aligns its smaller
// operand and adds or subtracts it here (prism_fp32_add_pipe), where fabric
// spent a barrel shifter, its sticky OR and a 28-bit adder (~180 LUTs).
//
// Three register stages, all the slice's own: a and b (AREG, BREG), the
// product (MREG) beside c, sub and ci (CREG, ALUMODEREG, CARRYINREG), and
// P (PREG). So c, sub and ci are given a cycle after the a and b they go
// with; p comes out LATENCY = 3 enabled cycles after a and b (2 after c),
// one a cycle; `en` drives every clock enable. a and b are signed (27 and
// 18 bits); the product is sign-extended to 48 bits; p wraps at 48 bits.
//
// Synthesis (SYNTHESIS defined, as Yosys does) instantiates the primitive;
// simulation (Verilator) runs the behavioural twin below it, which
// rtl/check_dsp.sh checks against an independent expectation and, given
// Xilinx's simulation model, the primitive too. The settings, from UG579:
// USE_MULT MULTIPLY (A x B, no pre-adder: INMODE 00000, AMULTSEL A,
// BMULTSEL B); OPMODE W = 0, Z = C, Y = X = M; ALUMODE 0000 (Z + W + X +
// Y + CIN) or 0011 (Z - (W + X + Y + CIN)), the only two it switches
// between; CARRYINSEL 000 (the CARRYIN pin); no pattern detector.

`default_nettype none

module prism_dsp_mul_add (
    input  wire logic        clk,
    input  wire logic        en,
    input  wire logic [26:0] a,
    input  wire logic [17:0] b,
    input  wire logic [47:0] c,      // a cycle after its a and b, as sub and ci
    input  wire logic        sub,
    input  wire logic        ci,
    output logic      [47:0] p
);
    localparam int LATENCY = 3;
    initial begin
        if (LATENCY != 3) $error("prism_dsp_mul_add: LATENCY must match the slice's three registers");
    end

`ifdef SYNTHESIS
    /* verilator lint_off PINCONNECTEMPTY */
    DSP48E2 #(
        .USE_MULT("MULTIPLY"), .USE_SIMD("ONE48"), .USE_WIDEXOR("FALSE"),
        .AMULTSEL("A"), .BMULTSEL("B"), .PREADDINSEL("A"),
        .A_INPUT("DIRECT"), .B_INPUT("DIRECT"),
        .AREG(1), .ACASCREG(1), .BREG(1), .BCASCREG(1), .MREG(1), .CREG(1),
        .CARRYINREG(1), .ALUMODEREG(1), .PREG(1),
        .DREG(0), .ADREG(0), .INMODEREG(0), .OPMODEREG(0), .CARRYINSELREG(0),
        .USE_PATTERN_DETECT("NO_PATDET"), .AUTORESET_PATDET("NO_RESET")
    ) dsp (
        .CLK(clk),
        .A({{3{a[26]}}, a}), .B(b), .C(c), .D(27'd0),
        .CARRYIN(ci), .CARRYINSEL(3'b000),
        // W = 0 (8:7), Z = C (6:4), Y = M (3:2), X = M (1:0)
        .OPMODE({2'b00, 3'b011, 2'b01, 2'b01}),
        .ALUMODE({2'b00, sub, sub}), .INMODE(5'b00000),
        .ACIN(30'd0), .BCIN(18'd0), .PCIN(48'd0), .CARRYCASCIN(1'b0), .MULTSIGNIN(1'b0),
        .CEA1(1'b0), .CEA2(en), .CEB1(1'b0), .CEB2(en), .CEM(en), .CEC(en),
        .CECARRYIN(en), .CEALUMODE(en), .CEP(en),
        .CEAD(1'b0), .CED(1'b0), .CEINMODE(1'b0), .CECTRL(1'b0),
        .RSTA(1'b0), .RSTB(1'b0), .RSTC(1'b0), .RSTD(1'b0), .RSTM(1'b0), .RSTP(1'b0),
        .RSTALLCARRYIN(1'b0), .RSTALUMODE(1'b0), .RSTCTRL(1'b0), .RSTINMODE(1'b0),
        .P(p),
        .ACOUT(), .BCOUT(), .PCOUT(), .CARRYCASCOUT(), .MULTSIGNOUT(), .OVERFLOW(), .UNDERFLOW(),
        .CARRYOUT(), .PATTERNDETECT(), .PATTERNBDETECT(), .XOROUT()
    );
    /* verilator lint_on PINCONNECTEMPTY */
`else
    logic signed [26:0] a_q;
    logic signed [17:0] b_q;
    logic signed [44:0] m_q;
    logic        [47:0] c_q;
    logic               sub_q, ci_q;
    always_ff @(posedge clk) if (en) begin
        logic [47:0] m;
        a_q <= a;
        b_q <= b;
        m_q <= a_q * b_q;
        c_q <= c;
        sub_q <= sub;
        ci_q <= ci;
        m = {{3{m_q[44]}}, m_q};
        p <= sub_q ? c_q - (m + 48'(ci_q)) : c_q + m + 48'(ci_q);
    end
`endif
endmodule

`default_nettype wire
