// prism_ram_sdp: a simple dual-port memory with a registered read — one
// write port and one read port on one clock, as block RAM (RAMB36E2/RAMB18E2)
// and UltraRAM (URAM288) offer them, so synthesis infers one of those.
//
// The read is synchronous: `rdata` is the word at the `raddr` of the
// previous cycle's edge (when `re` was 1). A read of the word being written
// in the same cycle returns the old word. STYLE picks the memory: 0 block
// RAM, 1 UltraRAM, 2 distributed (LUT) RAM (Yosys's ram_style attribute).
//
// OREG 1 adds the memories' output register (DOB_REG of a block RAM, OREG
// of an UltraRAM): `rdata` a cycle later (the word read two edges before),
// loaded only the cycle after a read, so it holds between reads as without
// it. The read then starts its cycle from a register instead of 1.5 levels
// into it. Yosys 0.23 does not turn the memories' register on (its maps
// leave DOB_REG 0): it builds the register in flip-flops, which is the same
// path for counting levels; Vivado moves it into the memory.
//
// `orst` (OREG 1 only) loads zeros into that register's bits RST_LO and up
// instead of the read, in the cycle it would load the read: the block RAM's
// RSTREG, a flip-flop's reset pin instead of a LUT a bit to mask the word.

`default_nettype none

module prism_ram_sdp #(
    parameter int W = 32,
    parameter int DEPTH = 64,
    parameter int STYLE = 0,
    parameter int OREG = 0,
    parameter int RST_LO = 0,
    parameter int AW = DEPTH > 1 ? $clog2(DEPTH) : 1
) (
    input  wire logic          clk,
    input  wire logic          we,
    input  wire logic [AW-1:0] waddr,
    input  wire logic [W-1:0]  wdata,
    input  wire logic          re,
    input  wire logic [AW-1:0] raddr,
    input  wire logic          orst,
    output logic      [W-1:0]  rdata
);
    initial begin
        if (W < 1) $error("prism_ram_sdp: W must be at least 1");
        if (DEPTH < 2 || 2 ** AW != DEPTH) $error("prism_ram_sdp: DEPTH must be a power of two, at least 2");
        if (STYLE < 0 || STYLE > 2) $error("prism_ram_sdp: STYLE must be 0 (block), 1 (ultra) or 2 (distributed)");
        if (OREG != 0 && OREG != 1) $error("prism_ram_sdp: OREG must be 0 or 1");
        if (RST_LO < 0 || RST_LO >= W) $error("prism_ram_sdp: RST_LO must be a bit of the word");
    end

    logic [W-1:0] rd;                // the memory's read

    generate
        if (STYLE == 1) begin : g_ultra
            (* ram_style = "ultra" *) logic [W-1:0] mem [DEPTH];
            always_ff @(posedge clk) begin
                if (we) mem[waddr] <= wdata;
                if (re) rd <= mem[raddr];
            end
        end else if (STYLE == 2) begin : g_lut
            (* ram_style = "distributed" *) logic [W-1:0] mem [DEPTH];
            always_ff @(posedge clk) begin
                if (we) mem[waddr] <= wdata;
                if (re) rd <= mem[raddr];
            end
        end else begin : g_block
            (* ram_style = "block" *) logic [W-1:0] mem [DEPTH];
            always_ff @(posedge clk) begin
                if (we) mem[waddr] <= wdata;
                if (re) rd <= mem[raddr];
            end
        end
        if (OREG != 0) begin : g_oreg
            logic re_q, zero;
            // The reset as its own signal, ahead of the enable: a reset
            // that acts only under the enable is not a flip-flop's reset
            // pin (FDRE's R wins over CE), and Yosys built it as a LUT a
            // bit (325 a bank at KW 320).
            assign zero = re_q && orst;
            always_ff @(posedge clk) re_q <= re;
            always_ff @(posedge clk)
                if (zero) rdata[W-1:RST_LO] <= '0;
                else if (re_q) rdata[W-1:RST_LO] <= rd[W-1:RST_LO];
            if (RST_LO > 0) begin : g_low
                always_ff @(posedge clk) if (re_q) rdata[RST_LO-1:0] <= rd[RST_LO-1:0];
            end
        end else begin : g_no_oreg
            assign rdata = rd;
            logic unused_orst;
            assign unused_orst = orst;
        end
    endgenerate
endmodule

`default_nettype wire
