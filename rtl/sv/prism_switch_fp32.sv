// prism_switch_fp32: prism_switch built FP32-only (KULISCH_ENABLE = 0,
// AUTO_ENABLE = 0): no Kulisch lanes, rounding units or AUTO planner, and
// a capability ROM of one record (FP32_ARRIVAL, FP32 output), so a STAGE
// for KULISCH_FIXED or AUTO is refused UNSUPPORTED. The top of the
// FP32-only Verilator model (rtl/build.rs) and of its resource count.

`default_nettype none

module prism_switch_fp32 #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int MTU = 1500,
    parameter int PORTS = 2,
    parameter int MAX_CONTRIB = 8,
    parameter int MAX_PATHS = 8,
    parameter int MAX_HELD = 16
) (
    input  wire logic              clk,
    input  wire logic              rst,
    input  wire logic [47:0]       node_mac,
    input  wire logic [47:0]       am_mac,
    input  wire logic [15:0]       control_ep,

    input  wire logic [DATA_W-1:0] s_axis_tdata [PORTS],
    input  wire logic [KEEP_W-1:0] s_axis_tkeep [PORTS],
    input  wire logic [PORTS-1:0]  s_axis_tvalid,
    input  wire logic [PORTS-1:0]  s_axis_tlast,
    output logic [PORTS-1:0]       s_axis_tready,

    output logic [DATA_W-1:0]      m_axis_tdata [PORTS],
    output logic [KEEP_W-1:0]      m_axis_tkeep [PORTS],
    output logic [PORTS-1:0]       m_axis_tvalid,
    output logic [PORTS-1:0]       m_axis_tlast,
    input  wire logic [PORTS-1:0]  m_axis_tready,

    output logic [31:0]            m_counters [prism_pkg::CNT_TOTAL],
    output logic                   m_idle
);
    prism_switch #(
        .DATA_W(DATA_W), .KEEP_W(KEEP_W), .MTU(MTU), .PORTS(PORTS),
        .MAX_CONTRIB(MAX_CONTRIB), .MAX_PATHS(MAX_PATHS), .MAX_HELD(MAX_HELD),
        .KULISCH_ENABLE(0), .AUTO_ENABLE(0)
    ) sw (
        .clk, .rst, .node_mac, .am_mac, .control_ep,
        .s_axis_tdata, .s_axis_tkeep, .s_axis_tvalid, .s_axis_tlast, .s_axis_tready,
        .m_axis_tdata, .m_axis_tkeep, .m_axis_tvalid, .m_axis_tlast, .m_axis_tready,
        .m_counters, .m_idle
    );
endmodule

`default_nettype wire
