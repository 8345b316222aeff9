// Testbench for prism_dsp_add48 (both AB_ENABLE=1 and AB_ENABLE=0), run by
// rtl/check_dsp.sh. Compiled with -DSYNTHESIS it checks the DSP48E2
// branch against Xilinx's own DSP48E2 simulation model (the unisim, which
// we do not ship: give check_dsp.sh its directory), without it the
// behavioural twin that the Verilator tests simulate.
//
// Expectation: independent 49-bit arithmetic on the inputs captured at the
// enabled edges. After the n-th enabled clock edge (n >= 2) the outputs must
// be f(x_{n-1}) where x_k are the inputs sampled at enabled edge k, and they
// must hold through cycles with en low. Outputs are checked on every cycle
// (enabled or not) after the warm-up; enabled-cycle checks are counted apart.
`timescale 1ns / 1ps
`default_nettype none

module prism_dsp_add48_tb;
    localparam int     WARMUP  = 40;        // cycles (400 ns > glbl GSR 100 ns)
    localparam longint ALL1    = 48'hFFFF_FFFF_FFFF;
    int unsigned NRAND;
    int unsigned seed;

    logic        clk = 1'b0;
    logic        en  = 1'b0;
    logic [47:0] ab  = 48'd0;
    logic [47:0] c   = 48'd0;
    logic        ci  = 1'b0;

    wire  [47:0] p1, p0;
    wire         co1, co0, ones1, ones0;

    prism_dsp_add48 #(.AB_ENABLE(1)) dut1 (.clk(clk), .en(en), .ab(ab), .c(c), .ci(ci), .p(p1), .co(co1), .ones(ones1));
    prism_dsp_add48 #(.AB_ENABLE(0)) dut0 (.clk(clk), .en(en), .ab(ab), .c(c), .ci(ci), .p(p0), .co(co0), .ones(ones0));

    always #5 clk = ~clk;

    // ---- reference: inputs of the last two enabled edges -------------------
    logic [47:0] h_ab [0:1];   // [1] = newest enabled edge, [0] = the one before
    logic [47:0] h_c  [0:1];
    logic        h_ci [0:1];
    int unsigned n_en = 0;     // enabled edges seen
    int unsigned cyc  = 0;     // clock edges seen

    always @(posedge clk) begin
        cyc <= cyc + 1;
        if (en === 1'b1) begin
            h_ab[0] <= h_ab[1]; h_c[0] <= h_c[1]; h_ci[0] <= h_ci[1];
            h_ab[1] <= ab;      h_c[1] <= c;      h_ci[1] <= ci;
            n_en    <= n_en + 1;
        end
    end

    function automatic logic [48:0] expsum(input logic [47:0] a, input logic [47:0] cc, input logic cin, input bit use_ab);
        logic [48:0] s;
        s = {1'b0, cc} + (use_ab ? {1'b0, a} : 49'd0) + {48'd0, cin};
        return s;
    endfunction

    // ---- checking -----------------------------------------------------------
    int unsigned checks[0:1], en_checks[0:1], errors[0:1];
    int unsigned n_ones[0:1], n_co[0:1];
    bit          last_en;       // en during the most recent edge

    task automatic check_one(input int cfg, input logic [47:0] p, input logic co, input logic ones);
        logic [48:0] s;
        logic        e_ones;
        s      = expsum(h_ab[0], h_c[0], h_ci[0], cfg == 1);
        e_ones = (s[47:0] == ALL1[47:0]);
        checks[cfg]++;
        if (last_en) en_checks[cfg]++;
        if (e_ones) n_ones[cfg]++;
        if (s[48])  n_co[cfg]++;
        if (p !== s[47:0] || co !== s[48] || ones !== e_ones) begin
            errors[cfg]++;
            if (errors[cfg] <= 10)
                $display("MISMATCH AB_ENABLE=%0d cycle %0d (en_edges %0d, en_last %0b): inputs ab=%012h c=%012h ci=%0b | expected p=%012h co=%0b ones=%0b | got p=%012h co=%0b ones=%0b",
                         cfg, cyc, n_en, last_en, h_ab[0], h_c[0], h_ci[0], s[47:0], s[48], e_ones, p, co, ones);
        end
    endtask

    // ---- stimulus -----------------------------------------------------------
    task automatic drive(input logic e, input logic [47:0] a, input logic [47:0] cc, input logic cin);
        @(negedge clk);
        // check the outputs produced by the previous edge, then apply new inputs
        if (cyc >= WARMUP && n_en >= 2) begin
            check_one(1, p1, co1, ones1);
            check_one(0, p0, co0, ones0);
        end
        en = e; ab = a; c = cc; ci = cin;
    endtask
    always @(posedge clk) last_en <= (en === 1'b1);

    function automatic logic [47:0] r48();
        return {$urandom(), $urandom()} & ALL1[47:0];
    endfunction

    // random en: low on ~1 cycle in 4
    function automatic logic ren();
        return ($urandom % 4) != 0;
    endfunction

    task automatic directed(input logic [47:0] a, input logic [47:0] cc, input logic cin);
        // each directed vector: once enabled, then a random-length freeze
        drive(1'b1, a, cc, cin);
        repeat ($urandom % 3) drive(1'b0, r48(), r48(), $urandom % 2);
    endtask

    logic [47:0] ra, rc, t;
    int k, mode;

    initial begin
`include "dsp_tb_start.svh"

        // warm-up (GSR of glbl, attribute decode at t=2ps, X at start)
        repeat (WARMUP) drive(1'b1, r48(), r48(), $urandom % 2);

        // ---- directed corner cases ----
        directed(48'd0, 48'd0, 1'b0);                       // 0
        directed(48'd0, ALL1, 1'b0);                        // all ones: ones=1
        directed(48'd0, ALL1, 1'b1);                        // wrap to 0, co=1
        directed(ALL1, ALL1, 1'b1);                         // max: 2^49-1 -> p=all1 co=1 ones=1
        directed(ALL1, ALL1, 1'b0);                         // p=...FE co=1
        directed(48'd1, ALL1, 1'b0);                        // carry out, p=0
        directed(ALL1, 48'd0, 1'b1);                        // AB: wrap, co=1; c-only: p=1
        directed(48'd0, ALL1 ^ 48'd1, 1'b1);                // c+ci = all ones
        for (k = 0; k < 48; k++) begin
            ra = r48();
            directed(ra, ALL1, 1'b1);                       // c = 2^48-1, ci=1
            directed(~ra & ALL1[47:0], ra, 1'b0);           // ab = ~c: all ones
            directed(~ra & ALL1[47:0], ra, 1'b1);           // ab = ~c, ci: 0 with co
            directed((~ra + 48'd1) & ALL1[47:0], ra, 1'b0); // ab = -c: 0 with co (c!=0)
            t = (48'd1 << k);
            directed(48'd1, t - 48'd1, 1'b0);               // carry ripples into bit k
            directed(48'd0, t - 48'd1, 1'b1);               // same via ci
            directed(t, t, 1'b0);                           // single-bit doubling (k=47: co)
            directed(48'd0, ALL1 ^ t, 1'b0);                // all ones but bit k: ones=0
            directed(t, ALL1 ^ t, 1'b0);                    // AB: all ones; c-only: not
            directed(ALL1 ^ t, 48'd0, 1'b1);
            directed((ALL1 << k) & ALL1[47:0], ((48'd1 << k) - 48'd1), 1'b1); // carry into bit k from ci
        end
        // SIMD lane boundaries (12/24/36) explicitly
        directed(48'h000_000_000_001, 48'h000_000_000_FFF, 1'b0);
        directed(48'h000_000_000_001, 48'h000_000_FFF_FFF, 1'b0);
        directed(48'h000_000_000_001, 48'h000_FFF_FFF_FFF, 1'b0);
        directed(48'h000_000_000_000, 48'h000_FFF_FFF_FFF, 1'b1);
        directed(48'h800_000_000_000, 48'h800_000_000_000, 1'b1);
        directed(48'h7FF_FFF_FFF_FFF, 48'h800_000_000_000, 1'b1);
        directed(48'h7FF_FFF_FFF_FFF, 48'h800_000_000_000, 1'b0);
        // long freeze then resume
        drive(1'b1, 48'h123456789ABC, 48'hFEDCBA987654, 1'b1);
        repeat (20) drive(1'b0, r48(), r48(), 1'b1);
        drive(1'b1, 48'h0, 48'h0, 1'b0);
        repeat (5) drive(1'b0, r48(), r48(), 1'b0);
        drive(1'b1, 48'h0, 48'h0, 1'b0);

        // ---- random ----
        for (int unsigned i = 0; i < NRAND; i++) begin
            mode = $urandom % 8;
            rc = r48();
            case (mode)
                0, 1, 2, 3: ra = r48();                                   // uniform
                4: ra = (~rc) & ALL1[47:0];                               // sum all ones (+ci)
                5: begin t = 48'($urandom % 5); ra = (~rc + t - 48'd2) & ALL1[47:0]; end // near 2^48
                6: begin rc = ALL1[47:0] ^ ($urandom % 4); ra = $urandom % 4; end
                default: begin ra = r48() >> ($urandom % 48); rc = r48() >> ($urandom % 48); end
            endcase
            drive(ren(), ra, rc, $urandom % 2);
        end
        // flush: two enabled edges, then the final check
        drive(1'b1, 48'd0, 48'd0, 1'b0);
        drive(1'b1, 48'd0, 48'd0, 1'b0);
        drive(1'b0, 48'd0, 48'd0, 1'b0);

        for (int cfg = 1; cfg >= 0; cfg--)
            $display("RESULT AB_ENABLE=%0d: %0d cycles checked (%0d right after an enabled edge, %0d frozen), ones=1 in %0d, co=1 in %0d, errors %0d -> %s",
                     cfg, checks[cfg], en_checks[cfg], checks[cfg] - en_checks[cfg], n_ones[cfg], n_co[cfg], errors[cfg],
                     errors[cfg] == 0 ? "PASS" : "FAIL");
`ifdef SYNTHESIS
        // prove the primitive model is what was simulated, and show its decoded settings
        $display("dut1.dsp: OPMODE_mux=%b ALUMODE_DATA=%b CARRYINSEL_mux=%b USE_SIMD_BIN=%0d AREG_BIN=%0d BREG_BIN=%0d CREG_BIN=%0d PREG_BIN=%0d CARRYINREG_BIN=%0d pattern=%h mask=%h",
                 dut1.dsp.OPMODE_mux, dut1.dsp.ALUMODE_DATA, dut1.dsp.CARRYINSEL_mux, dut1.dsp.USE_SIMD_BIN, dut1.dsp.AREG_BIN,
                 dut1.dsp.BREG_BIN, dut1.dsp.CREG_BIN, dut1.dsp.PREG_BIN, dut1.dsp.CARRYINREG_BIN, dut1.dsp.the_pattern, dut1.dsp.the_mask);
        $display("dut0.dsp: OPMODE_mux=%b", dut0.dsp.OPMODE_mux);
`endif
        if (errors[0] == 0 && errors[1] == 0) $display("ALL PASS");
        else $display("SOME FAIL");
        $finish;
    end
endmodule

`default_nettype wire
