// prism_auto_store: AUTO's rounded store — RING words of W bits ({exact,
// FP32} of each ring slot, in prism_node) in banks of synchronous-read
// memory (prism_ram_sdp), so it is block RAM instead of RING x W flip-flops
// with N combinational read ports.
//
// Banks. Word s is in bank s mod NB, row s / NB, NB the power of two at or
// above N + RX: N consecutive words written, and N + RX read, from any offset
// touch each bank at most once. Bank b's row for a run from s is s / NB, plus one when
// b < s mod NB.
//
// Write: `wn` (0..N) consecutive words from `waddr`, word j of `wdata` to
// waddr + j. Read: the N + RX words from `raddr`, on `rdata` the cycle after
// (word i at [i*W +: W]), as the memories held them before that cycle's
// write: a word written in the cycle it is read comes back old. RX extra
// words let a cursor that may advance a cycle read a cycle ahead without
// knowing yet whether it advances; prism_node reads a window at a known
// position (RX = 0).

`default_nettype none

module prism_auto_store #(
    parameter int RING = 4096,
    parameter int N = 8,
    parameter int RX = 0,               // words read beyond N
    parameter int W = 33,
    parameter int STYLE = 0,            // prism_ram_sdp STYLE (0 block RAM, 1 UltraRAM, 2 distributed)
    parameter int RB = $clog2(RING),
    parameter int NW = $clog2(N + 1)
) (
    input  wire logic               clk,
    input  wire logic               we,
    input  wire logic [RB-1:0]      waddr,
    input  wire logic [NW-1:0]      wn,
    input  wire logic [N*W-1:0]     wdata,
    input  wire logic [RB-1:0]      raddr,
    output logic      [(N+RX)*W-1:0] rdata
);
    localparam int BB = $clog2(N + RX); // bank index bits
    localparam int NB = 2 ** BB;
    localparam int ROWS = RING / NB;
    localparam int RW = RB - BB;        // row bits

    initial begin
        if (N < 1 || RX < 0) $error("prism_auto_store: N must be at least 1, RX at least 0");
        if (W < 1) $error("prism_auto_store: W must be at least 1");
        if (2 ** RB != RING) $error("prism_auto_store: RING must be a power of two");
        if (ROWS < 2) $error("prism_auto_store: RING must be at least twice the banks (%0d)", 2 * NB);
    end

    logic [BB-1:0] rlo_q;               // the read's bank rotation, registered beside the memories' read
    always_ff @(posedge clk) rlo_q <= raddr[BB-1:0];

    // Bank b's row for a run from word s.
    function automatic logic [RW-1:0] bank_row(input logic [RB-1:0] s, input logic [BB-1:0] b);
        bank_row = s[RB-1:BB] + RW'(b < s[BB-1:0]);
    endfunction

    logic [W-1:0] bank_q [NB];
    for (genvar b = 0; b < NB; b++) begin : g_bank
        logic [BB-1:0] j;               // the written word this bank takes
        logic          b_we;
        logic [RW-1:0] w_row, r_row;
        logic [W-1:0]  b_wd;
        always_comb begin
            j = BB'(b) - waddr[BB-1:0];
            b_we = we && {1'b0, j} < (BB + 1)'(wn);
            b_wd = '0;
            for (int k = 0; k < N; k++)
                if (j == BB'(k)) b_wd = wdata[k*W +: W];
            w_row = bank_row(waddr, BB'(b));
            r_row = bank_row(raddr, BB'(b));
        end
        prism_ram_sdp #(.W(W), .DEPTH(ROWS), .STYLE(STYLE)) bank (
            .clk, .we(b_we), .waddr(w_row), .wdata(b_wd), .re(1'b1), .raddr(r_row), .orst(1'b0), .rdata(bank_q[b]));
    end

    always_comb
        for (int i = 0; i < N + RX; i++) rdata[i*W +: W] = bank_q[BB'(rlo_q + BB'(i))];
endmodule

`default_nettype wire
