// prism_rx_validate: the whole receive-side validation of one port — the
// header checker and the NumberGroup walker side by side on the same beats,
// one merged verdict per frame, WALK_LATENCY (17) cycles after tlast. A header reject wins;
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
    // The walker answers WALK_LATENCY cycles after tlast, the checker
    // CHECK_LATENCY: the checker's verdict waits in a delay line for the
    // walker's (both give one verdict per frame, in frame order).
    localparam int CHECK_LATENCY = 2, WALK_LATENCY = 17, DELAY = WALK_LATENCY - CHECK_LATENCY;
    localparam int CW = 4 + 8 + 8 + 16;     // {prism, local, ok, walk, class, reason, offset}; valid apart
    logic [DELAY-1:0]    cd_valid;
    logic [CW*DELAY-1:0] cd_data;
    logic                d_valid, d_prism, d_local, d_ok, d_walk;
    logic [7:0]          d_class, d_reason;
    logic [15:0]         d_offset;
    logic                unused_w_valid;

    prism_rx_check #(.DATA_W(DATA_W), .KEEP_W(KEEP_W), .MTU(MTU)) check (
        .clk, .rst, .local_mac,
        .s_axis_tdata, .s_axis_tkeep, .s_axis_tvalid, .s_axis_tlast, .s_axis_tready,
        .m_verdict_valid(c_valid), .m_verdict_prism(c_prism), .m_verdict_local(c_local),
        .m_verdict_ok(c_ok), .m_verdict_body_walk(c_walk), .m_verdict_class(c_class),
        .m_verdict_reason(c_reason), .m_verdict_offset(c_offset)
    );

    prism_group_walk #(.DATA_W(DATA_W), .KEEP_W(KEEP_W), .LATENCY(WALK_LATENCY)) walk (
        .clk, .rst,
        .s_axis_tdata, .s_axis_tkeep, .s_axis_tvalid, .s_axis_tlast,
        .m_walk_valid(w_valid), .m_walk_applies(w_applies), .m_walk_ok(w_ok),
        .m_kulisch_seen(w_kulisch), .m_walk_reason(w_reason), .m_walk_offset(w_offset)
    );

    always_ff @(posedge clk) begin
        if (rst) cd_valid <= '0;
        else cd_valid <= DELAY'({cd_valid, c_valid});
        cd_data <= (CW*DELAY)'({cd_data, c_prism, c_local, c_ok, c_walk, c_class, c_reason, c_offset});
    end
    assign d_valid = cd_valid[DELAY-1];
    assign {d_prism, d_local, d_ok, d_walk, d_class, d_reason, d_offset} = cd_data[CW*(DELAY-1) +: CW];
    // The walker's valid coincides with d_valid.
    assign unused_w_valid = w_valid;

    logic data_class;
    assign data_class = d_class == CLASS_DATA || d_class == CLASS_RESULT;

    always_comb begin
        m_verdict_valid     = d_valid;
        m_verdict_prism     = d_prism;
        m_verdict_local     = d_local;
        m_verdict_class     = d_class;
        m_verdict_ok        = d_ok;
        m_verdict_reason    = d_reason;
        m_verdict_offset    = d_offset;
        m_verdict_body_walk = d_walk && !data_class;
        if (d_ok && d_prism && data_class && w_applies) begin
            if (!w_ok) begin
                m_verdict_ok     = 1'b0;
                m_verdict_reason = w_reason;
                m_verdict_offset = w_offset;
            end else begin
                m_verdict_body_walk = w_kulisch;
            end
        end
        if (!m_verdict_ok) m_verdict_body_walk = 1'b0;
    end
endmodule
