// prism_switch: the SINGLE-node PRISM switch (prism_switch_core) with a port
// array for each AXI4-Stream bus: the top of the Verilator models, driven
// from Rust (rtl/src/switch.rs). The composition is in prism_switch_core.

module prism_switch #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int MTU = 1500,
    parameter int PORTS = 2,
    parameter int MAX_CONTRIB = 8,
    parameter int MAX_PATHS = 8,
    parameter int MAX_HELD = 16,
    // 0 leaves KULISCH_FIXED (its lanes and rounding units) or AUTO output
    // (its planner and encoder) out of the build and out of the capability
    // ROM; AUTO needs KULISCH. Both 0: the FP32-only switch (prism_switch_fp32).
    parameter int KULISCH_ENABLE = 1,
    parameter int AUTO_ENABLE = 1
) (
    input  logic              clk,
    input  logic              rst,
    input  logic [47:0]       node_mac,
    input  logic [47:0]       am_mac,
    input  logic [15:0]       control_ep,

    input  logic [DATA_W-1:0] s_axis_tdata [PORTS],
    input  logic [KEEP_W-1:0] s_axis_tkeep [PORTS],
    input  logic [PORTS-1:0]  s_axis_tvalid,
    input  logic [PORTS-1:0]  s_axis_tlast,
    output logic [PORTS-1:0]  s_axis_tready,

    output logic [DATA_W-1:0] m_axis_tdata [PORTS],
    output logic [KEEP_W-1:0] m_axis_tkeep [PORTS],
    output logic [PORTS-1:0]  m_axis_tvalid,
    output logic [PORTS-1:0]  m_axis_tlast,
    input  logic [PORTS-1:0]  m_axis_tready,

    output logic [31:0]       m_counters [prism_pkg::CNT_TOTAL],
    output logic              m_idle
);
    logic [PORTS*DATA_W-1:0] s_tdata, m_tdata;
    logic [PORTS*KEEP_W-1:0] s_tkeep, m_tkeep;
    logic [32*prism_pkg::CNT_TOTAL-1:0] counters;
    always_comb begin
        for (int p = 0; p < PORTS; p++) begin
            s_tdata[DATA_W*p +: DATA_W] = s_axis_tdata[p];
            s_tkeep[KEEP_W*p +: KEEP_W] = s_axis_tkeep[p];
            m_axis_tdata[p] = m_tdata[DATA_W*p +: DATA_W];
            m_axis_tkeep[p] = m_tkeep[KEEP_W*p +: KEEP_W];
        end
        for (int i = 0; i < prism_pkg::CNT_TOTAL; i++) m_counters[i] = counters[32*i +: 32];
    end

    prism_switch_core #(
        .DATA_W(DATA_W), .KEEP_W(KEEP_W), .MTU(MTU), .PORTS(PORTS),
        .MAX_CONTRIB(MAX_CONTRIB), .MAX_PATHS(MAX_PATHS), .MAX_HELD(MAX_HELD),
        .KULISCH_ENABLE(KULISCH_ENABLE), .AUTO_ENABLE(AUTO_ENABLE)
    ) core (
        .clk, .rst, .node_mac, .am_mac, .control_ep,
        .s_axis_tdata(s_tdata), .s_axis_tkeep(s_tkeep), .s_axis_tvalid, .s_axis_tlast, .s_axis_tready,
        .m_axis_tdata(m_tdata), .m_axis_tkeep(m_tkeep), .m_axis_tvalid, .m_axis_tlast, .m_axis_tready,
        .m_counters(counters), .m_idle
    );
endmodule
