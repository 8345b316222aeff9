// prism_group_walk: walks the NumberGroups of a DATA or RESULT frame as its
// 512-bit beats go by and reports the first structural error with the same
// reason and frame offset as the Rust parser: group overrun, reserved
// descriptor bits, unknown format, Kulisch width, empty group, non-zero
// padding, more or fewer groups than declared, group counts that do not add up
// to the element count. Kulisch values' state bytes are not checked here
// (`m_kulisch_seen` says a group of them was present).
//
// Groups are 4-byte aligned from the body start (frame offset 56), so every
// descriptor sits in one 32-bit word of one beat; the walk visits the words of
// a beat in order within one cycle. The verdict is valid one cycle after
// tlast (prism_rx_validate delays it by one to meet prism_rx_check's).

module prism_group_walk #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8
) (
    input  logic              clk,
    input  logic              rst,

    input  logic [DATA_W-1:0] s_axis_tdata,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [KEEP_W-1:0] s_axis_tkeep,  // lengths are prism_rx_check's job
    /* verilator lint_on UNUSEDSIGNAL */
    input  logic              s_axis_tvalid,
    input  logic              s_axis_tlast,

    output logic              m_walk_valid,
    output logic              m_walk_applies,   // a DATA/RESULT frame with a body was walked
    output logic              m_walk_ok,
    output logic              m_kulisch_seen,
    output logic [7:0]        m_walk_reason,
    output logic [15:0]       m_walk_offset
);
    import prism_pkg::*;

    localparam int WORDS = DATA_W / 32;

    // Walk state between beats (offsets are frame offsets).
    logic        first_q;
    logic [31:0] beat_off_q, body_end_q, next_desc_q, val_end_q, elems_q, count_q;
    logic [8:0]  groups_q, group_count_q;
    logic        applies_q, err_q, kseen_q;
    // Not a state machine: Yosys would try to extract one from it (with
    // every descriptor check as a control input) and never finish.
    (* fsm_encoding = "none" *) logic [7:0] reason_q;
    logic [31:0] off_q;

    // The state after this beat.
    logic [31:0] beat_off, body_end_n, next_desc_n, val_end_n, elems_n, count_n, off_n;
    logic [8:0]  groups_n, group_count_n;
    logic        applies_n, err_n, kseen_n;
    logic [7:0]  reason_n;

    function automatic logic [7:0] byte_at(input logic [DATA_W-1:0] d, input int i);
        byte_at = d[8*i +: 8];
    endfunction

    always_comb begin
        logic [7:0]  cls, flags, b0, b1;
        logic [31:0] o, vlen, gend, gcount;
        logic [9:0]  wbytes;
        logic [3:0]  fmt;
        logic [8:0]  wfield;
        cls = 8'd0; flags = 8'd0; b0 = 8'd0; b1 = 8'd0;
        o = 32'd0; vlen = 32'd0; wbytes = 10'd0; gend = 32'd0; gcount = 32'd0;
        fmt = 4'd0; wfield = 9'd0;
        beat_off      = first_q ? 32'd0 : beat_off_q;
        body_end_n    = body_end_q;
        next_desc_n   = next_desc_q;
        val_end_n     = val_end_q;
        groups_n      = groups_q;
        group_count_n = group_count_q;
        elems_n       = elems_q;
        count_n       = count_q;
        applies_n     = applies_q;
        err_n         = err_q;
        kseen_n       = kseen_q;
        reason_n      = reason_q;
        off_n         = off_q;
        if (first_q) begin
            // The class header is in the first beat.
            cls   = byte_at(s_axis_tdata, 15);
            flags = byte_at(s_axis_tdata, 32'(OFF_DATA_FLAGS));
            applies_n = {byte_at(s_axis_tdata, 12), byte_at(s_axis_tdata, 13)} == ETHERTYPE
                        && (cls == CLASS_DATA || cls == CLASS_RESULT)
                        && (flags & FLAG_INEXACT) == 8'd0;
            body_end_n    = 32'(DATA_BODY) + 32'({byte_at(s_axis_tdata, 32'(OFF_DATA_BODY_LEN)), byte_at(s_axis_tdata, 32'(OFF_DATA_BODY_LEN) + 1)});
            group_count_n = {1'b0, byte_at(s_axis_tdata, 32'(OFF_DATA_GROUPS))};
            count_n       = 32'({byte_at(s_axis_tdata, 32'(OFF_DATA_COUNT)), byte_at(s_axis_tdata, 32'(OFF_DATA_COUNT) + 1)});
            next_desc_n   = 32'(DATA_BODY);
            val_end_n     = 32'(DATA_BODY);
            groups_n      = 9'd0;
            elems_n       = 32'd0;
            err_n         = 1'b0;
            kseen_n       = 1'b0;
            reason_n      = 8'd0;
            off_n         = 32'd0;
        end
        for (int w = 0; w < WORDS; w++) begin
            o = beat_off + 32'(4 * w);
            if (applies_n && !err_n && o >= 32'(DATA_BODY) && o < body_end_n) begin
                if (o == next_desc_n) begin
                    // A descriptor: format nibble, 3 reserved bits, 9-bit width field, count.
                    b0 = byte_at(s_axis_tdata, 4 * w);
                    b1 = byte_at(s_axis_tdata, 4 * w + 1);
                    gcount = 32'({byte_at(s_axis_tdata, 4 * w + 2), byte_at(s_axis_tdata, 4 * w + 3)});
                    fmt = b0[7:4];
                    wfield = {b0[0], b1};
                    wbytes = (fmt == FMT_INT8) ? 10'd1 : (fmt == FMT_FP16 || fmt == FMT_BF16) ? 10'd2 : (fmt == FMT_FP32) ? 10'd4 : 10'(wfield) + 10'd2;
                    vlen = 32'(gcount[15:0] * wbytes);   // at most 65,535 x 513: 26 bits
                    gend = o + 32'd4 + ((vlen + 32'd3) & ~32'd3);
                    if (groups_n == group_count_n) begin
                        err_n = 1'b1; reason_n = R_GROUP_COUNT_MISMATCH; off_n = o;
                    end else if (o + 32'd4 > body_end_n) begin
                        err_n = 1'b1; reason_n = R_GROUP_OVERRUN; off_n = o;
                    end else if ((b0 & 8'h0E) != 8'd0) begin
                        err_n = 1'b1; reason_n = R_RESERVED_NONZERO; off_n = o;
                    end else if (fmt == FMT_KULISCH && wfield < 9'd34) begin
                        err_n = 1'b1; reason_n = R_BAD_KULISCH_WIDTH; off_n = o;
                    end else if (fmt != FMT_INT8 && fmt != FMT_FP16 && fmt != FMT_BF16 && fmt != FMT_FP32 && fmt != FMT_KULISCH) begin
                        err_n = 1'b1; reason_n = R_UNKNOWN_FORMAT; off_n = o;
                    end else if (fmt != FMT_KULISCH && wfield != 9'd0) begin
                        err_n = 1'b1; reason_n = R_RESERVED_NONZERO; off_n = o + 32'd1;
                    end else if (gcount == 32'd0) begin
                        err_n = 1'b1; reason_n = R_EMPTY_GROUP; off_n = o + 32'd2;
                    end else if (gend > body_end_n) begin
                        err_n = 1'b1; reason_n = R_GROUP_OVERRUN; off_n = o;
                    end else begin
                        val_end_n   = o + 32'd4 + vlen;
                        next_desc_n = gend;
                        groups_n    = groups_n + 9'd1;
                        elems_n     = elems_n + gcount;
                        kseen_n     = kseen_n || fmt == FMT_KULISCH;
                    end
                end else if (val_end_n > o && val_end_n < o + 32'd4 && next_desc_n == o + 32'd4) begin
                    // The last value word of a group: its tail bytes are padding.
                    for (int k = 1; k < 4; k++) begin
                        if (!err_n && o + 32'(k) >= val_end_n && byte_at(s_axis_tdata, 4 * w + k) != 8'd0) begin
                            err_n = 1'b1; reason_n = R_PADDING_NONZERO; off_n = o + 32'(k);
                        end
                    end
                end
            end
        end
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            first_q        <= 1'b1;
            beat_off_q     <= '0;
            m_walk_valid   <= 1'b0;
            applies_q      <= 1'b0;
            m_walk_applies <= 1'b0;
            m_walk_ok      <= 1'b1;
            m_kulisch_seen <= 1'b0;
            m_walk_reason  <= '0;
            m_walk_offset  <= '0;
        end else begin
            m_walk_valid <= 1'b0;
            if (s_axis_tvalid) begin
                body_end_q    <= body_end_n;
                next_desc_q   <= next_desc_n;
                val_end_q     <= val_end_n;
                groups_q      <= groups_n;
                group_count_q <= group_count_n;
                elems_q       <= elems_n;
                count_q       <= count_n;
                applies_q     <= applies_n;
                err_q         <= err_n;
                kseen_q       <= kseen_n;
                reason_q      <= reason_n;
                off_q         <= off_n;
                first_q       <= s_axis_tlast;
                beat_off_q    <= s_axis_tlast ? 32'd0 : beat_off + 32'(KEEP_W);
                if (s_axis_tlast) begin
                    m_walk_valid   <= 1'b1;
                    m_walk_applies <= applies_n && body_end_n > 32'(DATA_BODY);
                    m_kulisch_seen <= kseen_n;
                    // After the walk: the declared counts.
                    if (err_n) begin
                        m_walk_ok <= 1'b0; m_walk_reason <= reason_n; m_walk_offset <= off_n[15:0];
                    end else if (groups_n != group_count_n) begin
                        m_walk_ok <= 1'b0; m_walk_reason <= R_GROUP_COUNT_MISMATCH; m_walk_offset <= OFF_DATA_GROUPS;
                    end else if (elems_n != count_n) begin
                        m_walk_ok <= 1'b0; m_walk_reason <= R_ELEMENT_COUNT_MISMATCH; m_walk_offset <= OFF_DATA_COUNT;
                    end else begin
                        m_walk_ok <= 1'b1; m_walk_reason <= 8'd0; m_walk_offset <= 16'd0;
                    end
                end
            end
        end
    end
endmodule
