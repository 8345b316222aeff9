// prism_fp32_add: IEEE 754 binary32 addition, round to nearest even,
// subnormals kept (no flush), one FP32_ARRIVAL accumulator lane.
//
// Combinational. NaN results are the canonical quiet NaN 0x7FC00000 (the
// switch only ever sends canonical NaN, so payloads need not propagate).
// Zero results follow IEEE under RNE: -0 only for (-0) + (-0); an exact
// cancellation gives +0. Bit-identical to the x86 `f32` add the software
// switch uses (tests in rtl/tests/fp32_add.rs compare millions of pairs).
//
// Method: the operand of larger magnitude keeps its exponent; the other is
// aligned with guard, round and sticky bits (3 extra bits suffice for a
// correctly rounded sum and difference); normalise; round by adding the
// round-up bit to {exponent, fraction} so that a mantissa carry moves the
// exponent and a subnormal that rounds up becomes the least normal.

module prism_fp32_add (
    input  logic [31:0] a,
    input  logic [31:0] b,
    output logic [31:0] sum
);
    localparam logic [31:0] NAN = 32'h7FC0_0000;

    logic        a_nan, b_nan, a_inf, b_inf, swap;
    logic [31:0] x, y;              // |x| >= |y|
    logic [7:0]  xe, ye;            // effective exponents (subnormals: 1)
    logic [23:0] xm, ym;            // significands with the hidden bit
    logic [7:0]  d;                 // exponent difference
    logic [50:0] y_wide;            // {ym, 27 zero bits} shifted right by d
    logic [26:0] xg, yg;            // significand, guard, round, sticky
    logic [27:0] s;                 // sum or difference
    logic [9:0]  e;                 // result exponent while normalising
    logic [4:0]  lz;
    logic [4:0]  shl;
    logic [26:0] n;                 // normalised significand + G, R, S
    logic [7:0]  ef;                // exponent field before rounding
    logic        up;
    logic [30:0] mag;

    always_comb begin
        a_nan = a[30:23] == 8'hFF && a[22:0] != 0;
        b_nan = b[30:23] == 8'hFF && b[22:0] != 0;
        a_inf = a[30:23] == 8'hFF && a[22:0] == 0;
        b_inf = b[30:23] == 8'hFF && b[22:0] == 0;

        swap = b[30:0] > a[30:0];
        x = swap ? b : a;
        y = swap ? a : b;
        xe = x[30:23] == 0 ? 8'd1 : x[30:23];
        ye = y[30:23] == 0 ? 8'd1 : y[30:23];
        xm = {x[30:23] != 0, x[22:0]};
        ym = {y[30:23] != 0, y[22:0]};
        d = xe - ye;

        // Align y: bits shifted past the round bit collapse into sticky.
        y_wide = {ym, 27'b0} >> (d > 8'd27 ? 8'd27 : d);
        xg = {xm, 3'b000};
        yg = {y_wide[50:25], |y_wide[24:0]};

        if (x[31] == y[31]) s = {1'b0, xg} + {1'b0, yg};
        else                s = {1'b0, xg} - {1'b0, yg};

        e = {2'b00, xe};
        n = '0;
        lz = '0;
        shl = '0;
        if (s[27]) begin
            // Carry out: one step right, keeping sticky.
            n = {s[27:2], s[1] | s[0]};
            e = e + 10'd1;
        end else begin
            lz = 5'd27;
            for (int i = 0; i <= 26; i++) if (s[i]) lz = 5'(26 - i);
            // Never below the subnormal exponent: shift at most e - 1.
            shl = ({5'b0, lz} > e - 10'd1) ? 5'(e - 10'd1) : lz;
            n = s[26:0] << shl;
            e = e - {5'b0, shl};
        end
        // A significand without its hidden bit is subnormal: field 0.
        ef = n[26] ? e[7:0] : 8'd0;
        up = n[2] & (n[1] | n[0] | n[3]);
        mag = {ef, n[25:3]} + {30'b0, up};

        if (a_nan || b_nan || (a_inf && b_inf && a[31] != b[31])) sum = NAN;
        else if (a_inf) sum = a;
        else if (b_inf) sum = b;
        else if (e >= 10'd255) sum = {x[31], 8'hFF, 23'b0};
        else if (s == 0) sum = {x[31] & y[31], 31'b0};
        else sum = {x[31], mag};
    end
endmodule
