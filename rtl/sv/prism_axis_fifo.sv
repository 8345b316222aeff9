// prism_axis_fifo: a small AXI4-Stream FIFO in flip-flops, the end of a
// pipeline that is allowed to start a beat only while the FIFO will have
// room for it (credits: `level` plus the beats in flight below DEPTH).
//
// m_axis_* come straight from the entry at the read pointer (one 4:1 or
// 8:1 select a bit), so the port's outputs start a cycle at a register,
// and tready reaches only the read pointer and the level, not the
// pipeline behind it. A write while full is a design error ($error).

`default_nettype none

module prism_axis_fifo #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int DEPTH = 4,
    parameter int LW = $clog2(DEPTH + 1)
) (
    input  wire logic              clk,
    input  wire logic              rst,

    input  wire logic [DATA_W-1:0] s_axis_tdata,
    input  wire logic [KEEP_W-1:0] s_axis_tkeep,
    input  wire logic              s_axis_tlast,
    input  wire logic              s_axis_tvalid,

    output logic      [DATA_W-1:0] m_axis_tdata,
    output logic      [KEEP_W-1:0] m_axis_tkeep,
    output logic                   m_axis_tlast,
    output logic                   m_axis_tvalid,
    input  wire logic              m_axis_tready,

    output logic      [LW-1:0]     level
);
    localparam int PW = DEPTH > 1 ? $clog2(DEPTH) : 1;

    initial begin
        if (DEPTH < 2 || 2 ** PW != DEPTH) $error("prism_axis_fifo: DEPTH must be a power of two, at least 2");
        if (KEEP_W != DATA_W / 8) $error("prism_axis_fifo: KEEP_W must be DATA_W / 8");
        if (2 ** LW <= DEPTH) $error("prism_axis_fifo: LW must hold DEPTH");
    end

    logic [DATA_W-1:0] e_data [DEPTH];
    logic [KEEP_W-1:0] e_keep [DEPTH];
    logic              e_last [DEPTH];
    logic [PW-1:0]     wp, rp;

    logic pop;
    assign pop = m_axis_tvalid && m_axis_tready;
    assign m_axis_tvalid = level != 0;
    assign m_axis_tdata = e_data[rp];
    assign m_axis_tkeep = e_keep[rp];
    assign m_axis_tlast = e_last[rp];

    always_ff @(posedge clk) begin
        if (s_axis_tvalid) begin
            e_data[wp] <= s_axis_tdata;
            e_keep[wp] <= s_axis_tkeep;
            e_last[wp] <= s_axis_tlast;
        end
        if (rst) begin
            wp <= '0;
            rp <= '0;
            level <= '0;
        end else begin
            if (s_axis_tvalid) wp <= wp + 1'b1;
            if (pop) rp <= rp + 1'b1;
            level <= level + LW'(s_axis_tvalid) - LW'(pop);
        end
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && s_axis_tvalid && !pop && level == LW'(DEPTH)) $error("prism_axis_fifo: a beat written while full");
`endif
endmodule

`default_nettype wire
