// prism_ram_sdp: a simple dual-port memory with a registered read — one
// write port and one read port on one clock, as block RAM (RAMB36E2/RAMB18E2)
// and UltraRAM (URAM288) offer them, so synthesis infers one of those.
//
// The read is synchronous: `rdata` is the word at the `raddr` of the
// previous cycle's edge (when `re` was 1). A read of the word being written
// in the same cycle returns the old word. STYLE picks the memory: 0 block
// RAM, 1 UltraRAM, 2 distributed (LUT) RAM (Yosys's ram_style attribute).

`default_nettype none

module prism_ram_sdp #(
    parameter int W = 32,
    parameter int DEPTH = 64,
    parameter int STYLE = 0,
    parameter int AW = DEPTH > 1 ? $clog2(DEPTH) : 1
) (
    input  wire logic          clk,
    input  wire logic          we,
    input  wire logic [AW-1:0] waddr,
    input  wire logic [W-1:0]  wdata,
    input  wire logic          re,
    input  wire logic [AW-1:0] raddr,
    output logic      [W-1:0]  rdata
);
    initial begin
        if (W < 1) $error("prism_ram_sdp: W must be at least 1");
        if (DEPTH < 2 || 2 ** AW != DEPTH) $error("prism_ram_sdp: DEPTH must be a power of two, at least 2");
        if (STYLE < 0 || STYLE > 2) $error("prism_ram_sdp: STYLE must be 0 (block), 1 (ultra) or 2 (distributed)");
    end

    generate
        if (STYLE == 1) begin : g_ultra
            (* ram_style = "ultra" *) logic [W-1:0] mem [DEPTH];
            always_ff @(posedge clk) begin
                if (we) mem[waddr] <= wdata;
                if (re) rdata <= mem[raddr];
            end
        end else if (STYLE == 2) begin : g_lut
            (* ram_style = "distributed" *) logic [W-1:0] mem [DEPTH];
            always_ff @(posedge clk) begin
                if (we) mem[waddr] <= wdata;
                if (re) rdata <= mem[raddr];
            end
        end else begin : g_block
            (* ram_style = "block" *) logic [W-1:0] mem [DEPTH];
            always_ff @(posedge clk) begin
                if (we) mem[waddr] <= wdata;
                if (re) rdata <= mem[raddr];
            end
        end
    endgenerate
endmodule

`default_nettype wire
