// prism_rx_check: ownership and header validation of one received frame.
//
// Takes a frame as 512-bit AXI4-Stream beats (byte i of a beat in
// tdata[8*i +: 8], tkeep marking valid bytes, tlast on the final beat) and,
// one cycle after tlast, gives a verdict: PRISM or not, addressed to this node
// or not, and either "accepted so far" or the first reject reason with the
// frame offset where it was found -- the same reason and offset as the Rust
// parser (dataplane/src/wire). It checks the Ethernet header, the control word,
// declared length against the tkeep/tlast length (Ethernet padding allowed
// only up to 60 bytes), the MTU, and every field of the class header and the
// fixed parts of CONTROL bodies. The per-record walks (NumberGroups of DATA and
// RESULT, STAGE bindings, capability records, PROGRESS holes) follow in a body
// checker; `m_verdict_body_walk` says that one is still needed.
//
// Never stalls: s_axis_tready is 1. Back-to-back frames are fine.

module prism_rx_check #(
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

    localparam int HDR_BYTES = 2 * KEEP_W;

    // Capture: the first two beats and the running length of the frame in flight.
    logic [2*DATA_W-1:0] cap_q;
    logic [15:0]         len_q;
    logic                beat1_q;  // the next beat is the second one
    logic                first_q;  // the next beat starts a frame

    // Evaluation: the frame that ended last cycle.
    logic [2*DATA_W-1:0] hdr_q;
    logic [15:0]         flen_q;
    logic                eval_q;

    logic [15:0] beat_bytes;
    logic [2*DATA_W-1:0] merged;
    assign merged = first_q ? {{DATA_W{1'b0}}, s_axis_tdata}
                  : beat1_q ? {s_axis_tdata, cap_q[DATA_W-1:0]}
                  : cap_q;
    always_comb begin
        beat_bytes = 16'(0);
        for (int i = 0; i < KEEP_W; i++) beat_bytes = beat_bytes + 16'(s_axis_tkeep[i]);
    end

    assign s_axis_tready = 1'b1;

    always_ff @(posedge clk) begin
        if (rst) begin
            cap_q   <= '0;
            len_q   <= '0;
            beat1_q <= 1'b0;
            first_q <= 1'b1;
            hdr_q   <= '0;
            flen_q  <= '0;
            eval_q  <= 1'b0;
        end else begin
            eval_q <= 1'b0;
            if (s_axis_tvalid) begin
                if (s_axis_tlast) begin
                    hdr_q   <= merged;
                    flen_q  <= (first_q ? 16'(0) : len_q) + beat_bytes;
                    eval_q  <= 1'b1;
                    first_q <= 1'b1;
                    beat1_q <= 1'b0;
                    len_q   <= '0;
                end else begin
                    cap_q   <= merged;
                    len_q   <= (first_q ? 16'(0) : len_q) + beat_bytes;
                    beat1_q <= first_q;
                    first_q <= 1'b0;
                end
            end
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

    logic        v_prism, v_local, v_ok, v_walk;
    logic [7:0]  v_class, v_reason;
    logic [15:0] v_off;

    always_comb begin
        logic [7:0]  cls, cmd, status, flags, fi, fc, groups;
        logic [15:0] body_len, declared, hdr_end, len_field, count, nbind;
        logic [32:0] range_end;
        logic [3:0]  ver_major;
        logic        known_class, done;
        v_prism  = 1'b0;
        v_local  = 1'b0;
        v_ok     = 1'b1;
        v_walk   = 1'b0;
        v_class  = 8'(0);
        v_reason = 8'(0);
        v_off    = 16'(0);
        done     = 1'b0;
        cls      = b8(hdr_q, 15);
        ver_major = hdr_q[8*14+4 +: 4];
        cmd      = b8(hdr_q, 32'(OFF_CTRL_COMMAND));
        status   = b8(hdr_q, 32'(OFF_CTRL_STATUS));
        fi       = b8(hdr_q, 32'(OFF_CTRL_FRAG_INDEX));
        fc       = b8(hdr_q, 32'(OFF_CTRL_FRAG_COUNT));
        flags    = b8(hdr_q, 32'(OFF_DATA_FLAGS));
        groups   = b8(hdr_q, 32'(OFF_DATA_GROUPS));
        count    = b16(hdr_q, 32'(OFF_DATA_COUNT));
        nbind    = b16(hdr_q, 32'(OFF_CTX_BINDINGS));
        range_end = {1'b0, b32(hdr_q, 32'(OFF_DATA_FIRST))} + 33'(count);
        known_class = (cls == CLASS_CONTROL) || (cls == CLASS_DATA) || (cls == CLASS_RESULT) || (cls == CLASS_PROGRESS);
        hdr_end   = (cls == CLASS_CONTROL) ? CONTROL_BODY : (cls == CLASS_PROGRESS) ? PROGRESS_HOLES : DATA_BODY;
        len_field = (cls == CLASS_CONTROL) ? OFF_CTRL_BODY_LEN : (cls == CLASS_PROGRESS) ? OFF_PROG_HOLES : OFF_DATA_BODY_LEN;
        body_len  = b16(hdr_q, 32'(len_field));
        declared  = (cls == CLASS_PROGRESS) ? 16'(PROGRESS_HOLES) + 16'(body_len * HOLE_LEN) : hdr_end + body_len;

        // Reject helper: the first failure wins.
        `define REJECT(r, o) if (!done) begin v_ok = 1'b0; v_reason = r; v_off = 16'(o); done = 1'b1; end

        if (flen_q < ETH_HDR_LEN) begin
            `REJECT(R_TRUNCATED_ETHERNET, flen_q)
        end else if (b16(hdr_q, 12) == ETHERTYPE) begin
            v_prism = 1'b1;
            v_local = {b8(hdr_q, 0), b8(hdr_q, 1), b8(hdr_q, 2), b8(hdr_q, 3), b8(hdr_q, 4), b8(hdr_q, 5)} == local_mac;
            v_class = cls;
            if (flen_q < ETH_HDR_LEN + 2) `REJECT(R_TRUNCATED_HEADER, flen_q)
            if (ver_major != VERSION_MAJOR) `REJECT(R_VERSION_MISMATCH, OFF_VERSION)
            if (!known_class) `REJECT(R_UNKNOWN_CLASS, OFF_CLASS)
            if (flen_q < hdr_end) `REJECT(R_TRUNCATED_HEADER, flen_q)
            if (cls == CLASS_PROGRESS && body_len > MAX_HOLES) `REJECT(R_TOO_MANY_HOLES, len_field)
            if (!(flen_q == declared || (declared < ETH_MIN_FRAME && flen_q == ETH_MIN_FRAME)))
                `REJECT(R_BODY_LENGTH_MISMATCH, len_field)
            if (declared - ETH_HDR_LEN > 16'(MTU)) `REJECT(R_EXCEEDS_MTU, len_field)
            if (cls == CLASS_CONTROL) begin
                if (cmd == 8'd0 || cmd > CMD_CAPS_RESPONSE) `REJECT(R_UNKNOWN_COMMAND, OFF_CTRL_COMMAND)
                if (cmd == CMD_ACK && status > ACK_INVALID_BINDING) `REJECT(R_UNKNOWN_STATUS, OFF_CTRL_STATUS)
                if (cmd != CMD_ACK && status != 8'd0) `REJECT(R_RESERVED_NONZERO, OFF_CTRL_STATUS)
                if (cmd == CMD_CAPS_RESPONSE ? !(fc >= 8'd1 && fi < fc) : !(fi == 8'd0 && fc == 8'd1))
                    `REJECT(R_BAD_FRAGMENT, OFF_CTRL_FRAG_INDEX)
                if (cmd == CMD_STAGE) begin
                    if (body_len < CONTEXT_LEN) `REJECT(R_BAD_BODY_LENGTH, OFF_CTRL_BODY_LEN)
                    if (32'(body_len) != 32'(CONTEXT_LEN) + 32'(nbind) * 32'(BINDING_LEN)) `REJECT(R_BAD_BODY_LENGTH, OFF_CTRL_BODY_LEN)
                    if (b16(hdr_q, 32'(OFF_CTX_RESERVED)) != 16'd0) `REJECT(R_RESERVED_NONZERO, OFF_CTX_RESERVED)
                    v_walk = nbind != 16'd0;
                end else if (cmd == CMD_ACK) begin
                    if (body_len != ACK_BODY_LEN) `REJECT(R_BAD_BODY_LENGTH, OFF_CTRL_BODY_LEN)
                    if (b8(hdr_q, 32'(OFF_ACK_RESERVED)) != 8'd0) `REJECT(R_RESERVED_NONZERO, OFF_ACK_RESERVED)
                end else if (cmd == CMD_CAPS_RESPONSE) begin
                    if (body_len % CAPS_RECORD_LEN != 16'd0) `REJECT(R_BAD_BODY_LENGTH, OFF_CTRL_BODY_LEN)
                    v_walk = body_len != 16'd0;
                end else begin
                    if (body_len != 16'd0) `REJECT(R_BAD_BODY_LENGTH, OFF_CTRL_BODY_LEN)
                end
            end else if (cls == CLASS_PROGRESS) begin
                if (b16(hdr_q, 32'(OFF_PROG_RESERVED)) != 16'd0) `REJECT(R_RESERVED_NONZERO, OFF_PROG_RESERVED)
                if ((b8(hdr_q, 32'(OFF_PROG_FLAGS)) & PROG_FLAGS_RESERVED) != 8'd0) `REJECT(R_RESERVED_NONZERO, OFF_PROG_FLAGS)
                if (b8(hdr_q, 32'(OFF_PROG_STATUS)) > PROG_UNKNOWN_OPERATION) `REJECT(R_UNKNOWN_STATUS, OFF_PROG_STATUS)
                v_walk = body_len != 16'd0;
            end else if (known_class) begin
                if (b16(hdr_q, 32'(OFF_DATA_RESERVED)) != 16'd0) `REJECT(R_RESERVED_NONZERO, OFF_DATA_RESERVED)
                if ((flags & FLAGS_RESERVED) != 8'd0) `REJECT(R_RESERVED_NONZERO, OFF_DATA_FLAGS)
                if ((flags & FLAG_INEXACT) != 8'd0) begin
                    if ((flags & FLAG_LAST) == 8'd0 || count != 16'd0 || groups != 8'd0 || body_len != 16'd0)
                        `REJECT(R_INEXACT_MALFORMED, OFF_DATA_FLAGS)
                end else if (count == 16'd0) begin
                    `REJECT(R_EMPTY_PACKET, OFF_DATA_COUNT)
                end else if (groups == 8'd0) begin
                    `REJECT(R_EMPTY_PACKET, OFF_DATA_GROUPS)
                end
                if (range_end > 33'h1_0000_0000) `REJECT(R_ELEMENT_RANGE_OVERFLOW, OFF_DATA_FIRST)
                v_walk = body_len != 16'd0;
            end
        end
        `undef REJECT
        if (!v_ok) v_walk = 1'b0;
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            m_verdict_valid <= 1'b0;
        end else begin
            m_verdict_valid <= eval_q;
        end
        m_verdict_prism     <= v_prism;
        m_verdict_local     <= v_local;
        m_verdict_ok        <= v_ok;
        m_verdict_body_walk <= v_walk;
        m_verdict_class     <= v_class;
        m_verdict_reason    <= v_reason;
        m_verdict_offset    <= v_off;
    end

    // Only the first two beats are inspected.
    logic unused_ok;
    assign unused_ok = ^{HDR_BYTES};
endmodule
