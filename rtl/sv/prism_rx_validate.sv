// prism_rx_validate: the whole receive-side validation of one port — the
// header checker and the NumberGroup walker side by side on the same beats,
// one merged verdict per frame, two cycles after tlast. A header reject wins;
// then a group reject (DATA and RESULT); `m_verdict_body_walk` is left for the
// records still unchecked in hardware: Kulisch value states, STAGE bindings,
// capability records, PROGRESS holes.

module prism_rx_validate #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int MTU = 9000
) (
    input  logic              clk,
    input  logic              rst,
    input  logic [47:0]       local_mac,

    input  logic [DATA_W-1:0] s_axis_tdata,
    input  logic [KEEP_W-1:0] s_axis_tkeep,
    input  logic              s_axis_tvalid,
    input  logic              s_axis_tlast,
    output logic              s_axis_tready,

    output logic              m_verdict_valid,
    output logic              m_verdict_prism,
    output logic              m_verdict_local,
    output logic              m_verdict_ok,
    output logic              m_verdict_body_walk,
    output logic [7:0]        m_verdict_class,
    output logic [7:0]        m_verdict_reason,
    output logic [15:0]       m_verdict_offset
);
    import prism_pkg::*;

    logic        c_valid, c_prism, c_local, c_ok, c_walk;
    logic [7:0]  c_class, c_reason;
    logic [15:0] c_offset;
    logic        w_valid, w_applies, w_ok, w_kulisch;
    logic [7:0]  w_reason;
    logic [15:0] w_offset;
    // The walker answers one cycle before the checker: hold its verdict one cycle.
    logic        w_applies_q, w_ok_q, w_kulisch_q;
    logic [7:0]  w_reason_q;
    logic [15:0] w_offset_q;

    prism_rx_check #(.DATA_W(DATA_W), .KEEP_W(KEEP_W), .MTU(MTU)) check (
        .clk, .rst, .local_mac,
        .s_axis_tdata, .s_axis_tkeep, .s_axis_tvalid, .s_axis_tlast, .s_axis_tready,
        .m_verdict_valid(c_valid), .m_verdict_prism(c_prism), .m_verdict_local(c_local),
        .m_verdict_ok(c_ok), .m_verdict_body_walk(c_walk), .m_verdict_class(c_class),
        .m_verdict_reason(c_reason), .m_verdict_offset(c_offset)
    );

    prism_group_walk #(.DATA_W(DATA_W), .KEEP_W(KEEP_W)) walk (
        .clk, .rst,
        .s_axis_tdata, .s_axis_tkeep, .s_axis_tvalid, .s_axis_tlast,
        .m_walk_valid(w_valid), .m_walk_applies(w_applies), .m_walk_ok(w_ok),
        .m_kulisch_seen(w_kulisch), .m_walk_reason(w_reason), .m_walk_offset(w_offset)
    );

    always_ff @(posedge clk) begin
        if (w_valid) begin
            w_applies_q <= w_applies;
            w_ok_q      <= w_ok;
            w_kulisch_q <= w_kulisch;
            w_reason_q  <= w_reason;
            w_offset_q  <= w_offset;
        end
    end

    logic data_class;
    assign data_class = c_class == CLASS_DATA || c_class == CLASS_RESULT;

    always_comb begin
        m_verdict_valid     = c_valid;
        m_verdict_prism     = c_prism;
        m_verdict_local     = c_local;
        m_verdict_class     = c_class;
        m_verdict_ok        = c_ok;
        m_verdict_reason    = c_reason;
        m_verdict_offset    = c_offset;
        m_verdict_body_walk = c_walk && !data_class;
        if (c_ok && c_prism && data_class && w_applies_q) begin
            if (!w_ok_q) begin
                m_verdict_ok     = 1'b0;
                m_verdict_reason = w_reason_q;
                m_verdict_offset = w_offset_q;
            end else begin
                m_verdict_body_walk = w_kulisch_q;
            end
        end
        if (!m_verdict_ok) m_verdict_body_walk = 1'b0;
    end
endmodule
