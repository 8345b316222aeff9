// prism_rx_check: ownership and header validation of one received frame.
//
// Takes a frame as 512-bit AXI4-Stream beats (byte i of a beat in
// tdata[8*i +: 8], tkeep marking valid bytes, tlast on the final beat) and,
// LATENCY cycles after tlast, gives a verdict: PRISM or not, addressed to this
// node or not, and either "accepted so far" or the first reject reason with
// the frame offset where it was found -- the same reason and offset as the
// Rust parser (dataplane/src/wire). It checks the Ethernet header, the control
// word, declared length against the tkeep/tlast length (Ethernet padding
// allowed only up to 60 bytes), the MTU, and every field of the class header
// and the fixed parts of CONTROL bodies. The per-record walks (NumberGroups of
// DATA and RESULT, STAGE bindings, capability records, PROGRESS holes) follow
// in a body checker; `m_verdict_body_walk` says that one is still needed.
//
// Never stalls: s_axis_tready is 1. A pure pipeline: a frame's captured
// header moves down the stages, so back-to-back frames (a 1-beat frame every
// cycle) give one verdict each, in frame order, each LATENCY cycles after its
// tlast. Stages (each ends in a register; about 5 logic levels apiece):
//  0 capture the first two beats at tlast; popcount of tkeep per 8-byte lane
//  1 every header field checked on its own (class, command, statuses,
//    reserved fields, lengths declared by each class); the beat's byte count
//  2 second steps of the wider checks (STAGE bindings length, CAPS records
//    length modulo 36, element range overflow); the frame length
//  3 the checks against the frame length; the first failing check of the
//    class body in the parser's order
//  4 the first failing check overall, in the parser's order: the verdict

`default_nettype none

module prism_rx_check #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int MTU = 9000,
    // Not a knob: the cycles from the edge that takes tlast to the one that
    // shows its verdict. A parent that sizes anything by it passes what it
    // assumes, and elaboration fails here when that is not the stage count.
    parameter int LATENCY = 4
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

    localparam int HDR_BYTES = 2 * KEEP_W;
    localparam int LANES = (KEEP_W + 7) / 8;      // tkeep popcount lanes of 8 bits
    localparam int BW = $clog2(KEEP_W + 1);       // a beat's byte count

    initial begin
        if (KEEP_W != DATA_W / 8 || DATA_W % 8 != 0)
            $error("prism_rx_check: KEEP_W must be DATA_W / 8");
        // The last header byte checked is the STAGE context's reserved field.
        if (HDR_BYTES < 32'(OFF_CTX_RESERVED) + 2)
            $error("prism_rx_check: the first two beats must hold the header (%0d bytes)", 32'(OFF_CTX_RESERVED) + 2);
        if (MTU < 1 || MTU > 65535)
            $error("prism_rx_check: MTU must fit the 16-bit length arithmetic");
        // Shifts stand for these products (no multiplier on the path).
        if (HOLE_LEN != 16'd8 || BINDING_LEN != 16'd20 || CONTEXT_LEN != 16'd36 || CAPS_RECORD_LEN != 16'd36)
            $error("prism_rx_check: HOLE_LEN, BINDING_LEN, CONTEXT_LEN or CAPS_RECORD_LEN changed: redo their shift forms");
        if (LATENCY != 4) $error("prism_rx_check: LATENCY must match its stage count (4)");
    end

    assign s_axis_tready = 1'b1;

    // ---------------------------------------------------------------- stage 0
    // Capture: the first two beats of the frame in flight, and its header when
    // tlast comes; the beat's flags and its tkeep popcount per lane.
    logic [2*DATA_W-1:0] cap_q;
    logic                beat1_q;  // the next beat is the second one
    logic                first_q;  // the next beat starts a frame
    logic [2*DATA_W-1:0] hdr_q;
    logic                v0_q;     // hdr_q took a frame's header at the last edge
    logic [3:0]          pc0_q [LANES];
    logic                bv0_q, bf0_q;  // a beat, the first of its frame

    logic [2*DATA_W-1:0] merged;
    assign merged = first_q ? {{DATA_W{1'b0}}, s_axis_tdata}
                  : beat1_q ? {s_axis_tdata, cap_q[DATA_W-1:0]}
                  : cap_q;

    // Population count of an 8-bit lane in plain logic (LUTs, no carry chain).
    function automatic logic [3:0] pop8(input logic [7:0] x);
        logic [1:0] a, b, c, d;
        logic [2:0] l, h;
        a = {x[0] & x[1], x[0] ^ x[1]};
        b = {x[2] & x[3], x[2] ^ x[3]};
        c = {x[4] & x[5], x[4] ^ x[5]};
        d = {x[6] & x[7], x[6] ^ x[7]};
        l = {a[1] & b[1], (a[1] ^ b[1]) ^ (a[0] & b[0]), a[0] ^ b[0]};
        l[2] = l[2] | ((a[1] ^ b[1]) & a[0] & b[0]);
        h = {c[1] & d[1], (c[1] ^ d[1]) ^ (c[0] & d[0]), c[0] ^ d[0]};
        h[2] = h[2] | ((c[1] ^ d[1]) & c[0] & d[0]);
        pop8 = 4'(l) + 4'(h);
    endfunction

    always_ff @(posedge clk) begin
        if (rst) begin
            cap_q   <= '0;
            beat1_q <= 1'b0;
            first_q <= 1'b1;
            v0_q    <= 1'b0;
            bv0_q   <= 1'b0;
        end else begin
            v0_q  <= s_axis_tvalid && s_axis_tlast;
            bv0_q <= s_axis_tvalid;
            if (s_axis_tvalid) begin
                if (s_axis_tlast) begin
                    first_q <= 1'b1;
                    beat1_q <= 1'b0;
                end else begin
                    cap_q   <= merged;
                    beat1_q <= first_q;
                    first_q <= 1'b0;
                end
            end
        end
        if (s_axis_tvalid && s_axis_tlast) hdr_q <= merged;
        bf0_q <= first_q;
        for (int j = 0; j < LANES; j++) begin
            logic [7:0] lane;
            lane = '0;
            for (int i = 0; i < 8; i++)
                if (8 * j + i < KEEP_W) lane[i] = s_axis_tkeep[8 * j + i];
            pc0_q[j] <= pop8(lane);
        end
    end

    // Byte and big-endian field access into the captured header.
    // (Assignments to the function name rather than `return`: Yosys 0.23 reads these too.)
    function automatic logic [7:0] b8(input logic [2*DATA_W-1:0] h, input int i);
        b8 = h[8*i +: 8];
    endfunction
    function automatic logic [15:0] b16(input logic [2*DATA_W-1:0] h, input int i);
        b16 = {h[8*i +: 8], h[8*(i+1) +: 8]};
    endfunction
    function automatic logic [31:0] b32(input logic [2*DATA_W-1:0] h, input int i);
        b32 = {h[8*i +: 8], h[8*(i+1) +: 8], h[8*(i+2) +: 8], h[8*(i+3) +: 8]};
    endfunction
    // x % 9 == 0 for x < 256: a constant table, one LUT level or two.
    function automatic logic mult9(input logic [7:0] x);
        mult9 = 1'b0;
        for (int k = 0; k < 256; k += 9)
            if (x == 8'(k)) mult9 = 1'b1;
    endfunction

    // ---------------------------------------------------------------- stage 1
    // Every field on its own. Names: c_ CONTROL, p_ PROGRESS, d_ DATA/RESULT.
    logic        v1_q, eth1_q, local1_q, ver_bad1_q, is_c1_q, is_d1_q, is_p1_q;
    logic [7:0]  cls1_q;
    logic        c_cmd_bad1_q, c_ack1_q, c_stage1_q, c_caps1_q, c_st_gt1_q, c_st_nz1_q, c_frag_bad1_q;
    logic        c_lt36_1_q, c_ne4_1_q, c_nz1_q, c_m4_1_q, c_ctx_res1_q, c_ack_res1_q, c_nbind_nz1_q, c_mtu1_q;
    logic [13:0] c_quad1_q;      // body length / 4 - 9: the bindings part of a STAGE body / 4
    logic [18:0] c_bind5_1_q;    // 5 * bindings (= 20 * bindings / 4)
    logic [7:0]  c_m9sum1_q;     // congruent to the body length modulo 9
    logic [15:0] c_decl1_q, d_decl1_q, p_decl1_q;  // declared frame lengths
    logic        p_gt1_q, p_nz1_q, p_mtu1_q, p_res1_q, p_flags1_q, p_status1_q;
    logic        d_res1_q, d_flags1_q, d_inexact1_q, d_inexact_bad1_q, d_count_z1_q, d_groups_z1_q, d_nz1_q, d_mtu1_q;
    logic [32:0] d_range1_q;     // first element + count
    // The byte count of the beat taken at the last edge but one.
    logic [BW-1:0] bb1_q;
    logic          bv1_q, bf1_q;

    always_ff @(posedge clk) begin
        logic [7:0]  cls, cmd, status, fi, fc, flags;
        logic [15:0] blc, bld, blp, count, nbind;
        cls    = b8(hdr_q, 15);
        cmd    = b8(hdr_q, 32'(OFF_CTRL_COMMAND));
        status = b8(hdr_q, 32'(OFF_CTRL_STATUS));
        fi     = b8(hdr_q, 32'(OFF_CTRL_FRAG_INDEX));
        fc     = b8(hdr_q, 32'(OFF_CTRL_FRAG_COUNT));
        flags  = b8(hdr_q, 32'(OFF_DATA_FLAGS));
        count  = b16(hdr_q, 32'(OFF_DATA_COUNT));
        nbind  = b16(hdr_q, 32'(OFF_CTX_BINDINGS));
        blc    = b16(hdr_q, 32'(OFF_CTRL_BODY_LEN));
        bld    = b16(hdr_q, 32'(OFF_DATA_BODY_LEN));
        blp    = b16(hdr_q, 32'(OFF_PROG_HOLES));

        eth1_q     <= b16(hdr_q, 12) == ETHERTYPE;
        local1_q   <= {b8(hdr_q, 0), b8(hdr_q, 1), b8(hdr_q, 2), b8(hdr_q, 3), b8(hdr_q, 4), b8(hdr_q, 5)} == local_mac;
        cls1_q     <= cls;
        is_c1_q    <= cls == CLASS_CONTROL;
        is_d1_q    <= cls == CLASS_DATA || cls == CLASS_RESULT;
        is_p1_q    <= cls == CLASS_PROGRESS;
        ver_bad1_q <= hdr_q[8*14+4 +: 4] != VERSION_MAJOR;

        c_cmd_bad1_q  <= cmd == 8'd0 || cmd > CMD_CAPS_RESPONSE;
        c_ack1_q      <= cmd == CMD_ACK;
        c_stage1_q    <= cmd == CMD_STAGE;
        c_caps1_q     <= cmd == CMD_CAPS_RESPONSE;
        c_st_gt1_q    <= status > ACK_INVALID_BINDING;
        c_st_nz1_q    <= status != 8'd0;
        c_frag_bad1_q <= cmd == CMD_CAPS_RESPONSE ? !(fc >= 8'd1 && fi < fc) : !(fi == 8'd0 && fc == 8'd1);
        c_lt36_1_q    <= blc < CONTEXT_LEN;
        c_ne4_1_q     <= blc != ACK_BODY_LEN;
        c_nz1_q       <= blc != 16'd0;
        c_m4_1_q      <= blc[1:0] != 2'd0;
        // A STAGE body is 36 + 20 * bindings bytes: with 36 <= length (checked
        // first), that is length % 4 == 0 and length / 4 - 9 == 5 * bindings.
        c_quad1_q     <= blc[15:2] - 14'd9;
        c_bind5_1_q   <= {1'b0, nbind, 2'b0} + 19'(nbind);
        // 64 is 1 modulo 9: the 6-bit digits of the length add up to it modulo 9.
        c_m9sum1_q    <= 8'(blc[5:0]) + 8'(blc[11:6]) + 8'(blc[15:12]);
        c_ctx_res1_q  <= b16(hdr_q, 32'(OFF_CTX_RESERVED)) != 16'd0;
        c_ack_res1_q  <= b8(hdr_q, 32'(OFF_ACK_RESERVED)) != 8'd0;
        c_nbind_nz1_q <= nbind != 16'd0;
        // declared - 14 > MTU in 16 bits, as the length check has it.
        c_decl1_q     <= CONTROL_BODY + blc;
        c_mtu1_q      <= 16'(blc + (CONTROL_BODY - ETH_HDR_LEN)) > 16'(MTU);

        p_gt1_q     <= blp > MAX_HOLES;
        p_nz1_q     <= blp != 16'd0;
        p_decl1_q   <= PROGRESS_HOLES + {blp[12:0], 3'b000};
        p_mtu1_q    <= 16'({blp[12:0], 3'b000} + (PROGRESS_HOLES - ETH_HDR_LEN)) > 16'(MTU);
        p_res1_q    <= b16(hdr_q, 32'(OFF_PROG_RESERVED)) != 16'd0;
        p_flags1_q  <= (b8(hdr_q, 32'(OFF_PROG_FLAGS)) & PROG_FLAGS_RESERVED) != 8'd0;
        p_status1_q <= b8(hdr_q, 32'(OFF_PROG_STATUS)) > PROG_UNKNOWN_OPERATION;

        d_res1_q         <= b16(hdr_q, 32'(OFF_DATA_RESERVED)) != 16'd0;
        d_flags1_q       <= (flags & FLAGS_RESERVED) != 8'd0;
        d_inexact1_q     <= (flags & FLAG_INEXACT) != 8'd0;
        d_inexact_bad1_q <= (flags & FLAG_LAST) == 8'd0 || count != 16'd0 || b8(hdr_q, 32'(OFF_DATA_GROUPS)) != 8'd0 || bld != 16'd0;
        d_count_z1_q     <= count == 16'd0;
        d_groups_z1_q    <= b8(hdr_q, 32'(OFF_DATA_GROUPS)) == 8'd0;
        d_nz1_q          <= bld != 16'd0;
        d_decl1_q        <= DATA_BODY + bld;
        d_mtu1_q         <= 16'(bld + (DATA_BODY - ETH_HDR_LEN)) > 16'(MTU);
        d_range1_q       <= {1'b0, b32(hdr_q, 32'(OFF_DATA_FIRST))} + 33'(count);

        // The byte count: a balanced tree of the lane counts.
        begin
            logic [BW-1:0] s [2*LANES];
            for (int j = 0; j < LANES; j++) s[LANES + j] = BW'(pc0_q[j]);
            for (int j = LANES - 1; j >= 1; j--) s[j] = s[2*j] + s[2*j + 1];
            bb1_q <= s[1];
        end
        bv1_q <= bv0_q;
        bf1_q <= bf0_q;
    end

    always_ff @(posedge clk) begin
        if (rst) v1_q <= 1'b0;
        else     v1_q <= v0_q;
    end

    // ---------------------------------------------------------------- stage 2
    logic        v2_q, eth2_q, local2_q, ver_bad2_q, is_c2_q, is_d2_q, is_p2_q;
    logic [7:0]  cls2_q;
    logic        c_cmd_bad2_q, c_ack2_q, c_stage2_q, c_caps2_q, c_st_gt2_q, c_st_nz2_q, c_frag_bad2_q;
    logic        c_lt36_2_q, c_ne4_2_q, c_nz2_q, c_ctx_res2_q, c_ack_res2_q, c_mtu2_q;
    logic        c_bind_bad2_q, c_caps_bad2_q;
    logic [15:0] c_decl2_q, d_decl2_q, p_decl2_q;
    logic        c_lt60_2_q, d_lt60_2_q, p_lt60_2_q;
    logic        p_gt2_q, p_mtu2_q, p_res2_q, p_flags2_q, p_status2_q;
    logic        d_res2_q, d_flags2_q, d_inexact2_q, d_inexact_bad2_q, d_count_z2_q, d_groups_z2_q, d_mtu2_q, d_range2_q;
    logic        walk2_q;   // the body needs walking (if the frame passes)
    // The frame length, and the length so far of the frame in flight.
    logic [15:0] flen2_q, len_q;

    always_ff @(posedge clk) begin
        logic [15:0] sum;
        eth2_q <= eth1_q; local2_q <= local1_q; ver_bad2_q <= ver_bad1_q;
        is_c2_q <= is_c1_q; is_d2_q <= is_d1_q; is_p2_q <= is_p1_q; cls2_q <= cls1_q;
        c_cmd_bad2_q <= c_cmd_bad1_q; c_ack2_q <= c_ack1_q; c_stage2_q <= c_stage1_q; c_caps2_q <= c_caps1_q;
        c_st_gt2_q <= c_st_gt1_q; c_st_nz2_q <= c_st_nz1_q; c_frag_bad2_q <= c_frag_bad1_q;
        c_lt36_2_q <= c_lt36_1_q; c_ne4_2_q <= c_ne4_1_q; c_nz2_q <= c_nz1_q; c_ctx_res2_q <= c_ctx_res1_q; c_ack_res2_q <= c_ack_res1_q;
        c_mtu2_q <= c_mtu1_q;
        c_bind_bad2_q <= c_m4_1_q || {5'b0, c_quad1_q} != c_bind5_1_q;
        c_caps_bad2_q <= c_m4_1_q || !mult9(c_m9sum1_q);
        walk2_q <= (is_c1_q && ((c_stage1_q && c_nbind_nz1_q) || (c_caps1_q && c_nz1_q)))
                || (is_p1_q && p_nz1_q) || (is_d1_q && d_nz1_q);
        c_decl2_q <= c_decl1_q; d_decl2_q <= d_decl1_q; p_decl2_q <= p_decl1_q;
        c_lt60_2_q <= c_decl1_q < ETH_MIN_FRAME;
        d_lt60_2_q <= d_decl1_q < ETH_MIN_FRAME;
        p_lt60_2_q <= p_decl1_q < ETH_MIN_FRAME;
        p_gt2_q <= p_gt1_q; p_mtu2_q <= p_mtu1_q; p_res2_q <= p_res1_q; p_flags2_q <= p_flags1_q; p_status2_q <= p_status1_q;
        d_res2_q <= d_res1_q; d_flags2_q <= d_flags1_q; d_inexact2_q <= d_inexact1_q; d_inexact_bad2_q <= d_inexact_bad1_q;
        d_count_z2_q <= d_count_z1_q; d_groups_z2_q <= d_groups_z1_q; d_mtu2_q <= d_mtu1_q;
        d_range2_q <= d_range1_q[32] && d_range1_q[31:0] != 32'd0;

        sum = (bf1_q ? 16'd0 : len_q) + 16'(bb1_q);
        flen2_q <= sum;
        if (bv1_q) len_q <= sum;
    end

    always_ff @(posedge clk) begin
        if (rst) v2_q <= 1'b0;
        else     v2_q <= v1_q;
    end

    // ---------------------------------------------------------------- stage 3
    // The checks on the frame length, in the parser's order (f3_q[0] first),
    // each with its offset; then the class body's first failure.
    localparam int NF = 12;
    logic          v3_q, eth3_q, local3_q, walk3_q;
    logic [7:0]    cls3_q;
    logic [NF-1:0] f3_q;
    logic [15:0]   flen3_q;
    logic          body_bad3_q;
    logic [7:0]    body_reason3_q;
    logic [15:0]   body_off3_q;

    always_ff @(posedge clk) begin
        logic lt_hdr, mm_c, mm_d, mm_p, eq60;
        eq60   = flen2_q == ETH_MIN_FRAME;
        lt_hdr = is_c2_q ? flen2_q < CONTROL_BODY : is_p2_q ? flen2_q < PROGRESS_HOLES : flen2_q < DATA_BODY;
        // Ethernet pads short frames up to 60 bytes.
        mm_c = !(flen2_q == c_decl2_q || (c_lt60_2_q && eq60));
        mm_d = !(flen2_q == d_decl2_q || (d_lt60_2_q && eq60));
        mm_p = !(flen2_q == p_decl2_q || (p_lt60_2_q && eq60));
        f3_q[0]  <= flen2_q < ETH_HDR_LEN;
        f3_q[1]  <= eth2_q && flen2_q < ETH_HDR_LEN + 16'd2;
        f3_q[2]  <= eth2_q && ver_bad2_q;
        f3_q[3]  <= eth2_q && !(is_c2_q || is_d2_q || is_p2_q);
        f3_q[4]  <= eth2_q && lt_hdr;
        f3_q[5]  <= eth2_q && is_p2_q && p_gt2_q;
        f3_q[6]  <= eth2_q && is_c2_q && mm_c;
        f3_q[7]  <= eth2_q && is_d2_q && mm_d;
        f3_q[8]  <= eth2_q && is_p2_q && mm_p;
        f3_q[9]  <= eth2_q && is_c2_q && c_mtu2_q;
        f3_q[10] <= eth2_q && is_d2_q && d_mtu2_q;
        f3_q[11] <= eth2_q && is_p2_q && p_mtu2_q;
        flen3_q  <= flen2_q;
        eth3_q   <= eth2_q;
        local3_q <= local2_q;
        cls3_q   <= cls2_q;
        walk3_q  <= eth2_q && walk2_q;

        // The class body: the classes exclude each other, and so do the commands.
        body_bad3_q    <= eth2_q;
        body_reason3_q <= 8'd0;
        body_off3_q    <= 16'd0;
        if (is_c2_q) begin
            if (c_cmd_bad2_q)                    begin body_reason3_q <= R_UNKNOWN_COMMAND;  body_off3_q <= OFF_CTRL_COMMAND; end
            else if (c_ack2_q && c_st_gt2_q)     begin body_reason3_q <= R_UNKNOWN_STATUS;   body_off3_q <= OFF_CTRL_STATUS; end
            else if (!c_ack2_q && c_st_nz2_q)    begin body_reason3_q <= R_RESERVED_NONZERO; body_off3_q <= OFF_CTRL_STATUS; end
            else if (c_frag_bad2_q)              begin body_reason3_q <= R_BAD_FRAGMENT;     body_off3_q <= OFF_CTRL_FRAG_INDEX; end
            else if (c_stage2_q && c_lt36_2_q)   begin body_reason3_q <= R_BAD_BODY_LENGTH;  body_off3_q <= OFF_CTRL_BODY_LEN; end
            else if (c_stage2_q && c_bind_bad2_q) begin body_reason3_q <= R_BAD_BODY_LENGTH; body_off3_q <= OFF_CTRL_BODY_LEN; end
            else if (c_stage2_q && c_ctx_res2_q) begin body_reason3_q <= R_RESERVED_NONZERO; body_off3_q <= OFF_CTX_RESERVED; end
            else if (c_ack2_q && c_ne4_2_q)      begin body_reason3_q <= R_BAD_BODY_LENGTH;  body_off3_q <= OFF_CTRL_BODY_LEN; end
            else if (c_ack2_q && c_ack_res2_q)   begin body_reason3_q <= R_RESERVED_NONZERO; body_off3_q <= OFF_ACK_RESERVED; end
            else if (c_caps2_q && c_caps_bad2_q) begin body_reason3_q <= R_BAD_BODY_LENGTH;  body_off3_q <= OFF_CTRL_BODY_LEN; end
            else if (!c_stage2_q && !c_ack2_q && !c_caps2_q && c_nz2_q)
                                                 begin body_reason3_q <= R_BAD_BODY_LENGTH;  body_off3_q <= OFF_CTRL_BODY_LEN; end
            else body_bad3_q <= 1'b0;
        end else if (is_p2_q) begin
            if (p_res2_q)                        begin body_reason3_q <= R_RESERVED_NONZERO; body_off3_q <= OFF_PROG_RESERVED; end
            else if (p_flags2_q)                 begin body_reason3_q <= R_RESERVED_NONZERO; body_off3_q <= OFF_PROG_FLAGS; end
            else if (p_status2_q)                begin body_reason3_q <= R_UNKNOWN_STATUS;   body_off3_q <= OFF_PROG_STATUS; end
            else body_bad3_q <= 1'b0;
        end else if (is_d2_q) begin
            if (d_res2_q)                        begin body_reason3_q <= R_RESERVED_NONZERO; body_off3_q <= OFF_DATA_RESERVED; end
            else if (d_flags2_q)                 begin body_reason3_q <= R_RESERVED_NONZERO; body_off3_q <= OFF_DATA_FLAGS; end
            else if (d_inexact2_q && d_inexact_bad2_q) begin body_reason3_q <= R_INEXACT_MALFORMED; body_off3_q <= OFF_DATA_FLAGS; end
            else if (!d_inexact2_q && d_count_z2_q)    begin body_reason3_q <= R_EMPTY_PACKET; body_off3_q <= OFF_DATA_COUNT; end
            else if (!d_inexact2_q && d_groups_z2_q)   begin body_reason3_q <= R_EMPTY_PACKET; body_off3_q <= OFF_DATA_GROUPS; end
            else if (d_range2_q)                 begin body_reason3_q <= R_ELEMENT_RANGE_OVERFLOW; body_off3_q <= OFF_DATA_FIRST; end
            else body_bad3_q <= 1'b0;
        end else body_bad3_q <= 1'b0;
    end

    always_ff @(posedge clk) begin
        if (rst) v3_q <= 1'b0;
        else     v3_q <= v2_q;
    end

    // ---------------------------------------------------------------- stage 4
    // The first failing check wins, in the parser's order.
    logic        v_ok, v_walk;
    logic [7:0]  v_reason;
    logic [15:0] v_off;
    always_comb begin
        v_ok     = 1'b0;
        v_reason = 8'd0;
        v_off    = 16'd0;
        if (f3_q[0])       begin v_reason = R_TRUNCATED_ETHERNET;   v_off = flen3_q; end
        else if (f3_q[1])  begin v_reason = R_TRUNCATED_HEADER;     v_off = flen3_q; end
        else if (f3_q[2])  begin v_reason = R_VERSION_MISMATCH;     v_off = OFF_VERSION; end
        else if (f3_q[3])  begin v_reason = R_UNKNOWN_CLASS;        v_off = OFF_CLASS; end
        else if (f3_q[4])  begin v_reason = R_TRUNCATED_HEADER;     v_off = flen3_q; end
        else if (f3_q[5])  begin v_reason = R_TOO_MANY_HOLES;       v_off = OFF_PROG_HOLES; end
        else if (f3_q[6])  begin v_reason = R_BODY_LENGTH_MISMATCH; v_off = OFF_CTRL_BODY_LEN; end
        else if (f3_q[7])  begin v_reason = R_BODY_LENGTH_MISMATCH; v_off = OFF_DATA_BODY_LEN; end
        else if (f3_q[8])  begin v_reason = R_BODY_LENGTH_MISMATCH; v_off = OFF_PROG_HOLES; end
        else if (f3_q[9])  begin v_reason = R_EXCEEDS_MTU;          v_off = OFF_CTRL_BODY_LEN; end
        else if (f3_q[10]) begin v_reason = R_EXCEEDS_MTU;          v_off = OFF_DATA_BODY_LEN; end
        else if (f3_q[11]) begin v_reason = R_EXCEEDS_MTU;          v_off = OFF_PROG_HOLES; end
        else if (body_bad3_q) begin v_reason = body_reason3_q;      v_off = body_off3_q; end
        else v_ok = 1'b1;
        v_walk = v_ok && walk3_q;
    end

    always_ff @(posedge clk) begin
        if (rst) m_verdict_valid <= 1'b0;
        else     m_verdict_valid <= v3_q;
        m_verdict_prism     <= eth3_q && !f3_q[0];
        m_verdict_local     <= eth3_q && !f3_q[0] && local3_q;
        m_verdict_class     <= eth3_q && !f3_q[0] ? cls3_q : 8'd0;
        m_verdict_ok        <= v_ok;
        m_verdict_body_walk <= v_walk;
        m_verdict_reason    <= v_reason;
        m_verdict_offset    <= v_off;
    end
endmodule

`default_nettype wire
