// prism_switch: the SINGLE-node PRISM switch — frame validation
// (prism_rx_validate) and the engine (prism_node) on one 512-bit
// AXI4-Stream port pair. The validator sees exactly the beats the node takes;
// its verdicts (two cycles after each tlast) come in frame order.

module prism_switch #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int MTU = 1500,
    parameter int MAX_CONTRIB = 8,
    parameter int MAX_PATHS = 8,
    parameter int MAX_HELD = 8
) (
    input  logic              clk,
    input  logic              rst,
    input  logic [47:0]       node_mac,
    input  logic [47:0]       am_mac,
    input  logic [15:0]       control_ep,

    input  logic [DATA_W-1:0] s_axis_tdata,
    input  logic [KEEP_W-1:0] s_axis_tkeep,
    input  logic              s_axis_tvalid,
    input  logic              s_axis_tlast,
    output logic              s_axis_tready,

    output logic [DATA_W-1:0] m_axis_tdata,
    output logic [KEEP_W-1:0] m_axis_tkeep,
    output logic              m_axis_tvalid,
    output logic              m_axis_tlast,
    input  logic              m_axis_tready,

    output logic [31:0]       m_counters [prism_pkg::CNT_TOTAL],
    output logic              m_idle
);
    logic        beat;
    logic        v_valid, v_prism, v_ok, v_walk;
    logic [7:0]  v_reason;
    logic [15:0] m_port;
    logic        unused;

    assign beat = s_axis_tvalid && s_axis_tready;

    /* verilator lint_off PINCONNECTEMPTY */
    prism_rx_validate #(.DATA_W(DATA_W), .KEEP_W(KEEP_W), .MTU(MTU)) validate (
        .clk, .rst, .local_mac(node_mac),
        .s_axis_tdata, .s_axis_tkeep, .s_axis_tvalid(beat), .s_axis_tlast, .s_axis_tready(),
        .m_verdict_valid(v_valid), .m_verdict_prism(v_prism), .m_verdict_local(),
        .m_verdict_ok(v_ok), .m_verdict_body_walk(v_walk), .m_verdict_class(),
        .m_verdict_reason(v_reason), .m_verdict_offset()
    );
    /* verilator lint_on PINCONNECTEMPTY */

    prism_node #(
        .DATA_W(DATA_W), .KEEP_W(KEEP_W), .MTU(MTU),
        .MAX_CONTRIB(MAX_CONTRIB), .MAX_PATHS(MAX_PATHS), .MAX_HELD(MAX_HELD), .PORTS(1)
    ) node (
        .clk, .rst, .node_mac, .am_mac, .am_port(16'd0), .control_ep,
        .s_axis_tdata, .s_axis_tkeep, .s_axis_tvalid, .s_axis_tlast, .s_axis_tready, .s_port(16'd0),
        .v_valid, .v_prism, .v_ok, .v_body_walk(v_walk), .v_reason,
        .m_axis_tdata, .m_axis_tkeep, .m_axis_tvalid, .m_axis_tlast, .m_axis_tready, .m_port,
        .m_counters, .m_idle
    );

    // One port: every frame leaves on it.
    assign unused = ^m_port;
endmodule
