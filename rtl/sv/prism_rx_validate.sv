// prism_rx_validate: the whole receive-side validation of one port — the
// header checker and the NumberGroup walker side by side on the same beats,
// one merged verdict per frame, in frame order. A header reject wins; then a
// group reject (DATA and RESULT); `m_verdict_body_walk` is left for the
// records still unchecked in hardware: Kulisch value states, STAGE bindings,
// capability records, PROGRESS holes.
//
// Latency: one cycle after the later of the two engines' verdicts on a frame,
// i.e. max(CHECK_LATENCY, WALK_LATENCY) + 1 cycles after tlast (counting
// the tlast cycle as 0, 16 today: the checker's LATENCY is 4, the walker's
// 16, its last stage registered on the 15th edge after tlast). Neither
// latency is assumed: each engine gives one verdict per frame in frame order,
// and whichever answers first waits in a small FIFO for the other's verdict on
// the same frame. With 1-beat frames back to back the early side runs ahead
// by the difference of the latencies, at most max(CHECK_LATENCY,
// WALK_LATENCY_MAX) verdicts: the FIFOs' depth. A walker deeper than
// WALK_LATENCY_MAX overflows them: simulation stops with an error.

`default_nettype none

module prism_rx_validate #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int MTU = 9000,
    // The most cycles after tlast that prism_group_walk may take to answer.
    parameter int WALK_LATENCY_MAX = 24
) (
    input  wire logic              clk,
    input  wire logic              rst,
    input  wire logic [47:0]       local_mac,

    input  wire logic [DATA_W-1:0] s_axis_tdata,
    input  wire logic [KEEP_W-1:0] s_axis_tkeep,
    input  wire logic              s_axis_tvalid,
    input  wire logic              s_axis_tlast,
    output logic                   s_axis_tready,

    output logic                   m_verdict_valid,
    output logic                   m_verdict_prism,
    output logic                   m_verdict_local,
    output logic                   m_verdict_ok,
    output logic                   m_verdict_body_walk,
    output logic [7:0]             m_verdict_class,
    output logic [7:0]             m_verdict_reason,
    output logic [15:0]            m_verdict_offset
);
    import prism_pkg::*;

    // prism_rx_check's latency (it checks that this is its stage count).
    localparam int CHECK_LATENCY = 4;
    // prism_group_walk's (it checks it too).
    localparam int WALK_LATENCY = 16;
    localparam int DEPTH = CHECK_LATENCY > WALK_LATENCY_MAX ? CHECK_LATENCY : WALK_LATENCY_MAX;
    localparam int AW = DEPTH > 1 ? $clog2(DEPTH) : 1;
    localparam int NW = $clog2(DEPTH + 1);
    localparam int CW = 36;   // a checker verdict
    localparam int WW = 27;   // a walker verdict

    initial begin
        if (WALK_LATENCY_MAX < WALK_LATENCY) $error("prism_rx_validate: WALK_LATENCY_MAX must be at least the walker's latency, %0d", WALK_LATENCY);
        if (DEPTH < 1) $error("prism_rx_validate: the FIFOs need a place at least");
    end

    logic        c_valid, c_prism, c_local, c_ok, c_walk;
    logic [7:0]  c_class, c_reason;
    logic [15:0] c_offset;
    logic        w_valid, w_applies, w_ok, w_kulisch;
    logic [7:0]  w_reason;
    logic [15:0] w_offset;

    prism_rx_check #(.DATA_W(DATA_W), .KEEP_W(KEEP_W), .MTU(MTU), .LATENCY(CHECK_LATENCY)) check (
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

    // One FIFO a side. The head is the oldest queued verdict, or the one
    // arriving now when none is queued; both heads are of the same frame, and
    // leave together (the arriving ones without being queued).
    function automatic logic [AW-1:0] next(input logic [AW-1:0] p);
        next = 32'(p) == DEPTH - 1 ? AW'(0) : p + AW'(1);
    endfunction

    logic [CW-1:0] c_in, c_head;
    logic [CW-1:0] c_mem [DEPTH];
    logic [AW-1:0] c_rd, c_wr;
    logic [NW-1:0] c_n;
    logic [WW-1:0] w_in, w_head;
    logic [WW-1:0] w_mem [DEPTH];
    logic [AW-1:0] w_rd, w_wr;
    logic [NW-1:0] w_n;
    logic          take, c_push, c_pop, w_push, w_pop;

    assign c_in   = {c_prism, c_local, c_ok, c_walk, c_class, c_reason, c_offset};
    assign w_in   = {w_applies, w_ok, w_kulisch, w_reason, w_offset};
    assign c_head = c_n != '0 ? c_mem[c_rd] : c_in;
    assign w_head = w_n != '0 ? w_mem[w_rd] : w_in;
    assign take   = (c_n != '0 || c_valid) && (w_n != '0 || w_valid);
    assign c_push = c_valid && !(take && c_n == '0);
    assign c_pop  = take && c_n != '0;
    assign w_push = w_valid && !(take && w_n == '0);
    assign w_pop  = take && w_n != '0;

    always_ff @(posedge clk) begin
        if (c_push) c_mem[c_wr] <= c_in;
        if (w_push) w_mem[w_wr] <= w_in;
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            c_rd <= '0; c_wr <= '0; c_n <= '0;
            w_rd <= '0; w_wr <= '0; w_n <= '0;
        end else begin
            if (c_push) c_wr <= next(c_wr);
            if (c_pop)  c_rd <= next(c_rd);
            c_n <= c_n + NW'(c_push) - NW'(c_pop);
            if (w_push) w_wr <= next(w_wr);
            if (w_pop)  w_rd <= next(w_rd);
            w_n <= w_n + NW'(w_push) - NW'(w_pop);
`ifndef SYNTHESIS
            if (c_push && !c_pop && 32'(c_n) == DEPTH)
                $error("prism_rx_validate: the walker lags the checker by more than %0d frames: raise WALK_LATENCY_MAX", DEPTH);
            if (w_push && !w_pop && 32'(w_n) == DEPTH)
                $error("prism_rx_validate: the walker is more than %0d frames ahead of the checker: raise WALK_LATENCY_MAX", DEPTH);
`endif
        end
    end

    // The merge of the two verdicts on one frame.
    logic        h_prism, h_local, h_ok, h_walk;
    logic [7:0]  h_class, h_reason;
    logic [15:0] h_offset;
    logic        g_applies, g_ok, g_kulisch;
    logic [7:0]  g_reason;
    logic [15:0] g_offset;
    assign {h_prism, h_local, h_ok, h_walk, h_class, h_reason, h_offset} = c_head;
    assign {g_applies, g_ok, g_kulisch, g_reason, g_offset} = w_head;

    logic        data_class;
    logic        v_ok, v_walk;
    logic [7:0]  v_reason;
    logic [15:0] v_offset;
    assign data_class = h_class == CLASS_DATA || h_class == CLASS_RESULT;

    always_comb begin
        v_ok     = h_ok;
        v_reason = h_reason;
        v_offset = h_offset;
        v_walk   = h_walk && !data_class;
        if (h_ok && h_prism && data_class && g_applies) begin
            if (!g_ok) begin
                v_ok     = 1'b0;
                v_reason = g_reason;
                v_offset = g_offset;
            end else begin
                v_walk = g_kulisch;
            end
        end
        if (!v_ok) v_walk = 1'b0;
    end

    always_ff @(posedge clk) begin
        if (rst) m_verdict_valid <= 1'b0;
        else     m_verdict_valid <= take;
        if (take) begin
            m_verdict_prism     <= h_prism;
            m_verdict_local     <= h_local;
            m_verdict_class     <= h_class;
            m_verdict_ok        <= v_ok;
            m_verdict_reason    <= v_reason;
            m_verdict_offset    <= v_offset;
            m_verdict_body_walk <= v_walk;
        end
    end
endmodule

`default_nettype wire
