// prism_delay_ram: a wide word delayed by DELAY cycles in block RAM, for
// pipelines that carry hundreds of bits past stages that do not read them
// (prism_group_walk's element counts, byte flags, exits and errors). As a
// chain of registers Yosys and Vivado map such a delay to shift-register
// LUTs (SRL16E), one LUT a bit; here it is a block RAM (prism_ram_sdp with
// its output register on) and two pointers.
//
// `q` is `d` of DELAY cycles before, as after DELAY registers in a row:
// every cycle writes `d` at the pointer and reads the word written DELAY - 2
// cycles before into the memory's output stage. No enable: the word moves
// every cycle, as the walker's stages do.

`default_nettype none

module prism_delay_ram #(
    parameter int W = 64,
    parameter int DELAY = 4,
    parameter int DEPTH = 2 ** $clog2(DELAY)
) (
    input  wire logic         clk,
    input  wire logic         rst,
    input  wire logic [W-1:0] d,
    output logic      [W-1:0] q
);
    localparam int AW = $clog2(DEPTH);

    initial begin
        if (W < 1) $error("prism_delay_ram: W must be at least 1");
        // The write, a read at least an edge after it, the output register.
        if (DELAY < 3) $error("prism_delay_ram: DELAY must be at least 3");
        if (DEPTH < DELAY || 2 ** AW != DEPTH) $error("prism_delay_ram: DEPTH must be a power of two, at least DELAY");
    end

    logic [AW-1:0] wp, rp;
    always_ff @(posedge clk) begin
        if (rst) begin
            wp <= '0;
            rp <= AW'(DEPTH - (DELAY - 2));
        end else begin
            wp <= wp + AW'(1);
            rp <= rp + AW'(1);
        end
    end

    prism_ram_sdp #(.W(W), .DEPTH(DEPTH), .STYLE(0), .OREG(1)) line (
        .clk, .we(1'b1), .waddr(wp), .wdata(d), .re(1'b1), .raddr(rp), .orst(1'b0), .rdata(q)
    );
endmodule

`default_nettype wire
