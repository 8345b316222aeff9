// Testbench for prism_dsp_mul_add (p = c +- (a*b + ci) in one DSP48E2),
// run by rtl/check_dsp.sh. Compiled with -DSYNTHESIS it checks the DSP48E2
// branch against Xilinx's own DSP48E2 simulation model (the unisim, which
// we do not ship: give check_dsp.sh its directory), without it the
// behavioural twin that the Verilator tests simulate.
//
// Expectation: independent arithmetic on the inputs captured at enabled
// edges: a and b at edge n-2, c, sub and ci at edge n-1, give p after
// edge n: c - (a*b + ci) when sub, else c + a*b + ci, a*b the signed
// 27 x 18 product, modulo 2^48. Outputs are checked on every cycle after
// the warm-up (they must hold through cycles with en low).
`timescale 1ns / 1ps
`default_nettype none

module prism_dsp_mul_add_tb;
    localparam int WARMUP = 40;            // cycles (400 ns > glbl GSR 100 ns)
    int unsigned NRAND;
    int unsigned seed;

    logic        clk = 1'b0;
    logic        en  = 1'b0;
    logic [26:0] a   = '0;
    logic [17:0] b   = '0;
    logic [47:0] c   = '0;
    logic        sub = 1'b0;
    logic        ci  = 1'b0;
    wire  [47:0] p;

    prism_dsp_mul_add dut (.clk(clk), .en(en), .a(a), .b(b), .c(c), .sub(sub), .ci(ci), .p(p));

    always #5 clk = ~clk;

    // Inputs at the last two enabled edges ([1] the newest).
    logic [26:0] h_a [0:1];
    logic [17:0] h_b [0:1];
    logic [47:0] h_c [0:1];
    logic        h_sub [0:1], h_ci [0:1];
    int unsigned n_en = 0, cyc = 0;
    function automatic logic [47:0] f(input logic [26:0] fa, input logic [17:0] fb, input logic [47:0] fc,
                                      input logic fsub, input logic fci);
        logic signed [47:0] prod;
        prod = 48'($signed(fa)) * 48'($signed(fb));
        return fsub ? fc - (prod + 48'(fci)) : fc + prod + 48'(fci);
    endfunction

    always @(posedge clk) begin
        cyc <= cyc + 1;
        if (en === 1'b1) begin
            h_a[0] <= h_a[1]; h_b[0] <= h_b[1]; h_c[0] <= h_c[1]; h_sub[0] <= h_sub[1]; h_ci[0] <= h_ci[1];
            h_a[1] <= a; h_b[1] <= b; h_c[1] <= c; h_sub[1] <= sub; h_ci[1] <= ci;
            n_en <= n_en + 1;
        end
    end
    // At enabled edge n, h_*[1] still holds edge n-1's inputs and h_*[0]
    // edge n-2's: the expectation for p after edge n, and what it came from.
    logic [47:0] exp_q = '0;
    logic [26:0] e_a;
    logic [17:0] e_b;
    logic [47:0] e_c;
    logic        e_sub, e_ci;
    always @(posedge clk) if (en === 1'b1) begin
        exp_q <= f(h_a[0], h_b[0], h_c[1], h_sub[1], h_ci[1]);
        e_a <= h_a[0]; e_b <= h_b[0]; e_c <= h_c[1]; e_sub <= h_sub[1]; e_ci <= h_ci[1];
    end

    int unsigned checks = 0, errors = 0, n_sub = 0, n_neg = 0;
    task automatic check_now();
        checks++;
        if (e_sub) n_sub++;
        if (exp_q[47]) n_neg++;
        if (p !== exp_q) begin
            errors++;
            if (errors <= 10)
                $display("MISMATCH cycle %0d (enabled edges %0d): a=%07h b=%05h c=%012h sub=%0b ci=%0b | expected p=%012h got %012h",
                         cyc, n_en, e_a, e_b, e_c, e_sub, e_ci, exp_q, p);
        end
    endtask

    task automatic drive(input logic e, input logic [26:0] da, input logic [17:0] db, input logic [47:0] dc,
                         input logic dsub, input logic dci);
        @(negedge clk);
        if (cyc >= WARMUP && n_en >= 3) check_now();
        en = e; a = da; b = db; c = dc; sub = dsub; ci = dci;
    endtask

    function automatic logic [47:0] r48();
        return {$urandom(), $urandom()};
    endfunction
    function automatic logic ren();
        return ($urandom % 4) != 0;
    endfunction
    // One directed vector: a and b now, c, sub and ci on the next enabled
    // edge (with the next vector's a and b), then a random freeze.
    task automatic directed(input logic [26:0] da, input logic [17:0] db, input logic [47:0] dc,
                            input logic dsub, input logic dci);
        drive(1'b1, da, db, r48(), $urandom % 2, $urandom % 2);
        drive(1'b1, 27'($urandom), 18'($urandom), dc, dsub, dci);
        repeat ($urandom % 3) drive(1'b0, 27'($urandom), 18'($urandom), r48(), $urandom % 2, $urandom % 2);
    endtask

    int k, s, mode;
    logic [26:0] ra;
    logic [17:0] rb;

    initial begin
`include "dsp_tb_start.svh"
        repeat (WARMUP) drive(1'b1, 27'($urandom), 18'($urandom), r48(), $urandom % 2, $urandom % 2);

        // ---- directed: the FP32 lane's use (powers of two), extremes, signs ----
        for (s = 0; s < 2; s++) begin
            for (k = 0; k < 18; k++) begin
                directed(27'hFF_FFFF, 18'(1) << k, 48'h00FF_FFFF_0000, s[0], 1'b0);
                directed(27'hFF_FFFF, 18'(1) << k, 48'h00FF_FFFF_0000, s[0], 1'b1);
                directed(27'($urandom) & 27'h0FF_FFFF, 18'(1) << k, {8'b0, 24'($urandom), 16'b0}, s[0], $urandom % 2);
                directed(27'h3FF_FFFF, 18'(1) << k, 48'd0, s[0], 1'b1);
            end
            directed(27'h400_0000, 18'h2_0000, 48'd0, s[0], 1'b0);   // most negative x most negative
            directed(27'h400_0000, 18'h1_FFFF, 48'd0, s[0], 1'b0);
            directed(27'h3FF_FFFF, 18'h2_0000, 48'hFFFF_FFFF_FFFF, s[0], 1'b1);
            directed(27'h7FF_FFFF, 18'h3_FFFF, 48'd0, s[0], 1'b1);     // -1 x -1
            directed(27'h7FF_FFFF, 18'h0_0001, 48'd0, s[0], 1'b0);     // -1 x 1
            directed(27'd0, 18'd0, 48'hFFFF_FFFF_FFFF, s[0], 1'b1);    // wrap
            directed(27'd0, 18'd0, 48'd0, s[0], 1'b1);                 // 0 - 1
        end
        // a long freeze, then resume
        drive(1'b1, 27'h123_4567, 18'h1_2345, 48'h0123_4567_89AB, 1'b1, 1'b1);
        repeat (20) drive(1'b0, 27'($urandom), 18'($urandom), r48(), 1'b0, 1'b0);
        drive(1'b1, 27'd5, 18'd7, 48'd100, 1'b0, 1'b1);
        repeat (5) drive(1'b0, 27'($urandom), 18'($urandom), r48(), 1'b1, 1'b0);
        drive(1'b1, 27'd0, 18'd0, 48'd0, 1'b0, 1'b0);

        // ---- random ----
        for (int unsigned i = 0; i < NRAND; i++) begin
            mode = $urandom % 4;
            case (mode)
                0: begin ra = 27'($urandom) & 27'h0FF_FFFF; rb = 18'(1) << ($urandom % 17); end  // the lane's shifts
                1: begin ra = 27'($urandom); rb = 18'(1) << ($urandom % 18); end
                default: begin ra = 27'($urandom); rb = 18'($urandom); end
            endcase
            drive(ren(), ra, rb, mode == 0 ? {8'b0, 24'($urandom), 16'b0} : r48(), $urandom % 2, $urandom % 2);
        end
        repeat (4) drive(1'b1, 27'd0, 18'd0, 48'd0, 1'b0, 1'b0);
        drive(1'b0, 27'd0, 18'd0, 48'd0, 1'b0, 1'b0);

        $display("RESULT: %0d cycles checked, %0d of them differences, %0d negative results, errors %0d -> %s",
                 checks, n_sub, n_neg, errors, errors == 0 ? "PASS" : "FAIL");
`ifdef SYNTHESIS
        $display("dut.dsp: OPMODE_mux=%b ALUMODE_DATA=%b AREG_BIN=%0d BREG_BIN=%0d MREG_BIN=%0d CREG_BIN=%0d PREG_BIN=%0d",
                 dut.dsp.OPMODE_mux, dut.dsp.ALUMODE_DATA, dut.dsp.AREG_BIN, dut.dsp.BREG_BIN, dut.dsp.MREG_BIN,
                 dut.dsp.CREG_BIN, dut.dsp.PREG_BIN);
`endif
        if (errors == 0 && checks > NRAND / 2) $display("ALL PASS");
        else $display("SOME FAIL");
        $finish;
    end
endmodule

`default_nettype wire
