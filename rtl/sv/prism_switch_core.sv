// prism_switch_core: the SINGLE-node PRISM switch on PORTS 512-bit
// AXI4-Stream port pairs, with each port's bus flat (port p at
// [p*DATA_W +: DATA_W]) — one frame validator (prism_rx_validate) per
// ingress port and the engine (prism_node) behind them. Each validator sees
// exactly the beats the node takes on its port, so its verdicts (a fixed
// number of cycles after each tlast: see prism_rx_validate) come in that
// port's frame order. The node has a sender per egress port: ports send in
// parallel, and frames never interleave on a port.
//
// The synthesis top (rtl/synth_switch.sh): Yosys 0.23 reads no ports of
// unpacked arrays, which prism_switch, the Verilator models' top, has.

`default_nettype none

module prism_switch_core #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int MTU = 1500,
    parameter int PORTS = 2,
    parameter int MAX_CONTRIB = 8,
    parameter int MAX_PATHS = 8,
    parameter int MAX_HELD = 16,
    // 0 leaves KULISCH_FIXED (its lanes and rounding units) or AUTO output
    // (its planner and encoder) out of the build and out of the capability
    // ROM; AUTO needs KULISCH. Both 0: the FP32-only switch.
    parameter int KULISCH_ENABLE = 1,
    parameter int AUTO_ENABLE = 1
) (
    input  wire logic                    clk,
    input  wire logic                    rst,
    input  wire logic [47:0]             node_mac,
    input  wire logic [47:0]             am_mac,
    input  wire logic [15:0]             control_ep,

    input  wire logic [PORTS*DATA_W-1:0] s_axis_tdata,
    input  wire logic [PORTS*KEEP_W-1:0] s_axis_tkeep,
    input  wire logic [PORTS-1:0]        s_axis_tvalid,
    input  wire logic [PORTS-1:0]        s_axis_tlast,
    output logic [PORTS-1:0]             s_axis_tready,

    output logic [PORTS*DATA_W-1:0]      m_axis_tdata,
    output logic [PORTS*KEEP_W-1:0]      m_axis_tkeep,
    output logic [PORTS-1:0]             m_axis_tvalid,
    output logic [PORTS-1:0]             m_axis_tlast,
    input  wire logic [PORTS-1:0]        m_axis_tready,

    output logic [32*prism_pkg::CNT_TOTAL-1:0] m_counters,   // counter i at [32*i +: 32]
    output logic                         m_idle
);
    initial begin
        if (PORTS < 1) $error("prism_switch_core: PORTS must be at least 1");
        if (KULISCH_ENABLE != 0 && KULISCH_ENABLE != 1) $error("prism_switch_core: KULISCH_ENABLE must be 0 or 1");
        if (AUTO_ENABLE != 0 && AUTO_ENABLE != 1) $error("prism_switch_core: AUTO_ENABLE must be 0 or 1");
        if (AUTO_ENABLE != 0 && KULISCH_ENABLE == 0) $error("prism_switch_core: AUTO_ENABLE needs KULISCH_ENABLE");
    end

    logic [PORTS-1:0]   v_valid, v_prism, v_ok, v_walk;
    logic [PORTS*8-1:0] v_reason;

    genvar gp;
    generate
        for (gp = 0; gp < PORTS; gp++) begin : g_port
            /* verilator lint_off PINCONNECTEMPTY */
            prism_rx_validate #(.DATA_W(DATA_W), .KEEP_W(KEEP_W), .MTU(MTU)) validate (
                .clk, .rst, .local_mac(node_mac),
                .s_axis_tdata(s_axis_tdata[DATA_W*gp +: DATA_W]), .s_axis_tkeep(s_axis_tkeep[KEEP_W*gp +: KEEP_W]),
                .s_axis_tvalid(s_axis_tvalid[gp] && s_axis_tready[gp]), .s_axis_tlast(s_axis_tlast[gp]),
                .s_axis_tready(),
                .m_verdict_valid(v_valid[gp]), .m_verdict_prism(v_prism[gp]), .m_verdict_local(),
                .m_verdict_ok(v_ok[gp]), .m_verdict_body_walk(v_walk[gp]), .m_verdict_class(),
                .m_verdict_reason(v_reason[8*gp +: 8]), .m_verdict_offset()
            );
            /* verilator lint_on PINCONNECTEMPTY */
        end
    endgenerate

    prism_node #(
        .DATA_W(DATA_W), .KEEP_W(KEEP_W), .MTU(MTU),
        .MAX_CONTRIB(MAX_CONTRIB), .MAX_PATHS(MAX_PATHS), .MAX_HELD(MAX_HELD), .PORTS(PORTS),
        .KULISCH_ENABLE(KULISCH_ENABLE), .AUTO_ENABLE(AUTO_ENABLE)
    ) node (
        .clk, .rst, .node_mac, .am_mac, .am_port(16'd0), .control_ep,
        .s_axis_tdata, .s_axis_tkeep, .s_axis_tvalid, .s_axis_tlast, .s_axis_tready,
        .v_valid, .v_prism, .v_ok, .v_body_walk(v_walk), .v_reason,
        .m_axis_tdata, .m_axis_tkeep, .m_axis_tvalid, .m_axis_tlast, .m_axis_tready,
        .m_counters, .m_idle
    );
endmodule

`default_nettype wire
