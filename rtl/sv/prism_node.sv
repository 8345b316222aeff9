// prism_node: the SINGLE-node engine behind the frame validator — the same
// rules as the Rust engine (dataplane/src/engine), frame for frame.
//
// A frame is buffered whole while prism_rx_validate checks it; nothing
// touches state before its verdict. Then one engine walks it:
//   CONTROL  trust check, transaction records (idempotent retries, conflicts),
//            STAGE validation in the engine's order, COMMIT/COMPLETE/RELEASE/
//            ABORT, CAPS_QUERY from the capability ROM; ACKs out.
//   DATA     binding, window, duplicate and overlap checks, then FP32_ARRIVAL
//            accumulation FLANES (64) lanes per cycle (prism_fp32_add_pipe,
//            10 stages), coverage, and canonical FP32 RESULT packets on every
//            result path; or KULISCH_FIXED: KLANES (64) exact KW-bit lanes
//            (prism_kulisch_lane_pipe, 8 stages, the slot read 3 after the
//            term), one rounding to FP32 per value on the way out (prism_kulisch_round_pipe, 6 stages, in the
//            RESULT builder; prism_kulisch_round in AUTO's lookahead). A 363-value frame takes 10 engine
//            cycles under either policy (dispatch, D_CHK, D_OP, 6 lane
//            cycles, the readiness check), more when the frame before it
//            was of the same range (the lanes' hazard, below): one engine
//            keeps up with two ports at one beat per cycle each.
//
// The lanes' read-modify-write hazard. A run of lanes reads its slots from
// the ring when it is dispatched (a Kulisch run K_RD cycles later) and
// writes their sums F_LAT cycles later (K_LAT for the Kulisch lanes);
// prism_lane_track keeps the runs in flight. The rule: nothing reads a ring
// slot while a sum for it is in flight. A run waits in D_RUN while one of
// its slots is in flight (so a slot's adds happen in arrival order, as the
// software rounds them); the RESULT builder waits before a line whose slots
// are in flight (the engine hands a completed packet to egress at once:
// coverage is decided from headers, and runs dispatched later are for
// slots above the packet); AUTO's planner waits while its lookahead slots
// are in flight (no run is dispatched while it plans or emits, so what it
// planned stays final); CONTROL frames wait for the lanes to drain (so a
// STAGE's clear, or a context's end, never races an in-flight sum); and
// m_idle includes the lanes.
// Frames leave through one 512-bit AXI4-Stream a port, a whole frame at a
// time on each (CONTROL replies and RESULTs never interleave); the ports
// send in parallel.
//
// Hardware limits, advertised through the capability ROM: one operation
// context, FP32 input, FP32_ARRIVAL or KULISCH_FIXED (widths 280..KW),
// FP32 output, SINGLE role, MAX_CONTRIB
// contributors, MAX_PATHS result paths, MAX_HELD packets held per
// contributor. Transaction and retired-generation records are kept in small
// tables (TXN_SLOTS, RETIRED_SLOTS) replaced round robin when full.
// Duplicates are told from changed retransmissions by a CRC-32C of the body.

// Big-endian fields of a header view (`hdr`, 128 bytes) or of the frame
// buffer's view (`win`, `wv_q`), as plain part selects: Yosys copies a function's 512- or 1,024-bit
// argument into a temporary of the calling process at every call, and every
// temporary of the engine's process is carried through each of its states.
`define PN_B8(h, i) h[8*(i) +: 8]
`define PN_B16(h, i) {h[8*(i) +: 8], h[8*((i)+1) +: 8]}
`define PN_B32(h, i) {`PN_B16(h, i), `PN_B16(h, (i)+2)}
`define PN_B48(h, i) {`PN_B16(h, i), `PN_B32(h, (i)+2)}

module prism_node #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int MTU = 1500,
    // Accumulator slots: the window (eight packets of the MTU's FP32 capacity)
    // plus two RESULT packets the builder may still be reading: 4,096 at 1500.
    parameter int RING = 2 ** $clog2(10 * ((MTU - 46) / 4)),
    parameter int KW = 320,
    parameter int WINDOW = 8 * ((MTU - 46) / 4),
    parameter int WINDOW_BYTES = 24576,
    parameter int MAX_CONTRIB = 8,
    parameter int MAX_PATHS = 8,
    parameter int MAX_HELD = 16,
    parameter int TXN_SLOTS = 16,
    parameter int RETIRED_SLOTS = 8,
    parameter int PORTS = 1,
    // FP32_ARRIVAL lanes: values added a cycle (four beats' worth, so that
    // one engine keeps up with two busy ports).
    parameter int FLANES = 4 * DATA_W / 32,
    // KULISCH_FIXED lanes (each a KW-bit exact adder).
    parameter int KLANES = 4 * DATA_W / 32,
    // Features (1 on, 0 off): with KULISCH_ENABLE 0 the Kulisch lanes and
    // every rounding unit are not built, with AUTO_ENABLE 0 the AUTO planner
    // and encoder; the capability ROM advertises only what is built, so a
    // STAGE for the rest is refused UNSUPPORTED. AUTO needs KULISCH.
    parameter int KULISCH_ENABLE = 1,
    parameter int AUTO_ENABLE = 1
) (
    input  logic              clk,
    input  logic              rst,
    input  logic [47:0]       node_mac,
    input  logic [47:0]       am_mac,
    input  logic [15:0]       am_port,
    input  logic [15:0]       control_ep,

    // One ingress stream a port (port p at [p*DATA_W +: DATA_W]), each with its validator's verdicts.
    input  logic [PORTS*DATA_W-1:0] s_axis_tdata,
    input  logic [PORTS*KEEP_W-1:0] s_axis_tkeep,
    input  logic [PORTS-1:0]  s_axis_tvalid,
    input  logic [PORTS-1:0]  s_axis_tlast,
    output logic [PORTS-1:0]  s_axis_tready,

    input  logic [PORTS-1:0]  v_valid,
    input  logic [PORTS-1:0]  v_prism,
    input  logic [PORTS-1:0]  v_ok,
    input  logic [PORTS-1:0]  v_body_walk,
    input  logic [PORTS*8-1:0] v_reason,

    // One egress stream a port: each sends its frames whole, in request order.
    output logic [PORTS*DATA_W-1:0] m_axis_tdata,
    output logic [PORTS*KEEP_W-1:0] m_axis_tkeep,
    output logic [PORTS-1:0]  m_axis_tvalid,
    output logic [PORTS-1:0]  m_axis_tlast,
    input  logic [PORTS-1:0]  m_axis_tready,

    output logic [32*prism_pkg::CNT_TOTAL-1:0] m_counters,   // counter i at [32*i +: 32]
    // Nothing in flight: no frame buffered, the engine and the senders idle.
    output logic              m_idle
);
    import prism_pkg::*;

    // The frame buffer's view bytes exact at any offset (prism_frame_buf):
    // the Kulisch walk's chunk. Runs of values start 4-byte aligned (a
    // group's first value is, and a run that is not its group's last is
    // FLANES values); a Kulisch value (its state byte and integer) and
    // CONTROL's records are shorter.
    localparam int ANY_BYTES = 64;

    initial begin
        if (KULISCH_ENABLE != 0 && KULISCH_ENABLE != 1) $error("prism_node: KULISCH_ENABLE must be 0 or 1");
        if (AUTO_ENABLE != 0 && AUTO_ENABLE != 1) $error("prism_node: AUTO_ENABLE must be 0 or 1");
        if (AUTO_ENABLE != 0 && KULISCH_ENABLE == 0) $error("prism_node: AUTO_ENABLE needs KULISCH_ENABLE (AUTO is advertised for both policies)");
        if (2 ** $clog2(FLANES) != FLANES) $error("prism_node: FLANES must be a power of two (the ring's banks)");
        if (KLANES > FLANES) $error("prism_node: KLANES must be at most FLANES");
        // The frame buffer's view is exact at any offset for its first
        // ANY_BYTES: a Kulisch value's state byte and integer (and the byte
        // after, its sign's) must fit there, and the view must hold them.
        if (4 * FLANES < ANY_BYTES || (KW + 7) / 8 + 2 > ANY_BYTES)
            $error("prism_node: FLANES must be at least %0d and KW at most %0d (the frame buffer's exact bytes)", ANY_BYTES / 4, 8 * (ANY_BYTES - 2));
    end
    // The Kulisch slots' width as the ring stores them (1 when there are none).
    localparam int RKW = KULISCH_ENABLE != 0 ? KW : 1;

    localparam int LINES = (MTU + 14 + 63) / 64;
    localparam int FB_LINES = 2 ** $clog2(LINES + 1);
    localparam int MAX_BINDINGS = (MTU - 70) / 20;
    localparam int BSLOTS = 2 ** $clog2(MAX_BINDINGS);
    localparam int BB = $clog2(BSLOTS);
    // Index widths that also hold the counts; arrays sized to the index range.
    localparam int CI_W = $clog2(MAX_CONTRIB + 1);
    // A staged contributor's row: its count narrowed to the rows there are.
    localparam int CR_W = MAX_CONTRIB > 1 ? $clog2(MAX_CONTRIB) : 1;
    localparam int PI_W = $clog2(MAX_PATHS + 1);
    localparam int PSLOTS = 2 ** PI_W;
    localparam int LANES = DATA_W / 32;          // RESULT values a line
    localparam int RN_W = $clog2(FLANES + 1);
    localparam int RB = $clog2(RING);

    // ---------------------------------------------------------------- helpers
    // A native value as FP32 (exact for INT8, FP16, BF16), in two steps
    // with a register between: the INT8 magnitude and the leading ones
    // (cv_prep), then the exponent and the shifted significand (cv_fp32).
    // The two values that need normalising, an INT8 magnitude and an FP16
    // subnormal's significand, share one 10-bit shift (the magnitude two
    // bits up): a run has one format, so a lane shifts one or the other.
    // (A 23-bit shift each, by 23 minus the leading one's place, was about
    // a third of the node's own LUTs in the FP32-only build.)
    function automatic logic [14:0] cv_prep(input logic [31:0] raw);   // {INT8 magnitude, its top bit, FP16 significand's top bit}
        logic [7:0] mag;
        logic [2:0] p8;
        logic [3:0] p16;
        mag = raw[7] ? 8'(-raw[7:0]) : raw[7:0];
        p8 = '0;
        for (int i = 0; i < 8; i++) if (mag[i]) p8 = 3'(i);
        p16 = '0;
        for (int i = 0; i < 10; i++) if (raw[i]) p16 = 4'(i);
        cv_prep = {mag, p8, p16};
    endfunction
    function automatic logic [31:0] cv_fp32(input logic [3:0] fmt, input logic [31:0] raw, input logic [14:0] pr);
        logic [31:0] r, sub;
        logic [7:0]  mag;
        logic [9:0]  m, n;
        /* verilator lint_off UNUSEDSIGNAL */
        logic [9:0]  sh;             // (its bit 9 is the leading one)
        /* verilator lint_on UNUSEDSIGNAL */
        logic [2:0]  p8;
        logic [3:0]  p16, p;
        logic        is8;
        {mag, p8, p16} = pr;
        m = raw[9:0];
        is8 = fmt == FMT_INT8;
        // The value to normalise and its leading one's place (0..9).
        n = is8 ? {mag, 2'b0} : m;
        p = is8 ? {1'b0, p8} + 4'd2 : p16;
        sh = n << (4'd9 - p);
        // INT8: 2^p8 = 2^(p - 2), biased 125 + p; an FP16 subnormal: 2^(p - 24), 103 + p.
        sub = {is8 ? raw[7] : raw[15], (is8 ? 8'd125 : 8'd103) + {4'b0, p}, sh[8:0], 14'b0};
        r = raw;
        case (fmt)
            FMT_INT8: r = mag == 0 ? 32'h0 : sub;
            FMT_FP16:
                if (raw[14:10] == 5'h1F) r = {raw[15], 8'hFF, m, 13'b0};
                else if (raw[14:10] != 0) r = {raw[15], 8'({3'b0, raw[14:10]} + 8'd112), m, 13'b0};
                else if (m == 0) r = {raw[15], 31'b0};
                else r = sub;
            FMT_BF16: r = {raw[15:0], 16'b0};
            default: r = raw;
        endcase
        cv_fp32 = r;
    endfunction

    // ---------------------------------------------------------------- state
    // One-hot by hand: a state is a bit of st (st[D_RUN]), so a test of the
    // state is a wire, not a 6-bit compare in front of every path that asks
    // (the node's flow runs no fsm pass, and fsm_detect did not take st).
    typedef enum logic [4:0] {
        IDLE, DISPATCH,
        PREWALK, ROUTE, C_TXN, C_APPLY, C_BIND, C_BIND_END, C_INSTALL, C_CLEAR, C_REPLY,
        D_KWALK, D_CHK, D_OP, D_DESC, D_RUN, D_READY, A_PLAN, A_FIT, A_REC, A_EMIT,
        DONE
    } st_t;
    localparam int NST = 32'(DONE) + 1;
    logic [NST-1:0] st;
    // Only ever called with a constant: from a variable index Yosys builds a
    // shifter (a negate and a shift were 13.00 levels into st).
    function automatic logic [NST-1:0] oh(input st_t s);
        oh = '0;
        oh[s] = 1'b1;
    endfunction
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && !$onehot(st)) $error("prism_node: the state %b is not one-hot", st);
`endif

    // BPP frame buffers a port ({port, slot}), filled in turn: ingress fills
    // one while earlier frames wait for their verdict (prism_rx_validate
    // answers 16 cycles after tlast) or for the engine. Two were enough with
    // a verdict a cycle after tlast; with the pipelined validator a 24-beat
    // frame's buffer is busy about 24 + 16 + 10 cycles, so two a port would
    // stall ingress every other frame: four keep one beat a cycle.
    localparam int BPP = 4;
    localparam int BW = $clog2(BPP);
    localparam int PW = PORTS > 1 ? $clog2(PORTS) : 1;
    localparam int NB = BPP * (2 ** PW);
    localparam int NBW = PW + BW;
    logic [BW-1:0]     in_slot [PORTS];    // buffer being filled, per port (prism_frame_buf's)
    logic [BW-1:0]     v_slot [PORTS];     // buffer the port's next verdict is for (frames fill them in turn)
    logic [15:0]       in_beat [PORTS];    // and its next beat
    // The hashed byte range of the frame coming in: from byte 14 (CONTROL,
    // hs_ctl) or 56 (the DATA body) to hs_end.
    logic              hs_ctl [PORTS];
    logic [15:0]       hs_end [PORTS];
    // The frame digest (CRC-32C of the hashed range): each port's beat is
    // registered as taken (ci_*, with the frame's hashed range in hs_*),
    // then masked to that range and registered again (cr_*), then
    // prism_crc32c_512 (2 stages) gives the digest C_LAT cycles after the
    // edge that takes tlast; digests come in the port's frame order, into
    // the buffer after the last one (c_slot). The mask in the cycle the
    // beat is taken was 8 levels (the range's add from the beat's own
    // bytes, then 64 compares of byte offsets against it). A byte outside
    // the range is a flip-flop's reset (ci_kill): the range's start is in
    // the first beat, its end a compare of its line with the beat's and a
    // byte's place in the line with its low bits (64 compares of 16-bit
    // offsets, then a mask, were about 1.7k LUTs for two ports).
    localparam int C_LAT = 4;
    logic [DATA_W-1:0] ci_data [PORTS];
    logic [KEEP_W-1:0] ci_keep [PORTS];
    logic [15:0]       ci_beat [PORTS];
    logic [PORTS-1:0]  ci_valid, ci_last;
    logic [PORTS-1:0]  ci_first;           // the beat is its frame's first (modulo 1,024: 16-bit offsets)
    logic [KEEP_W-1:0] ci_kill [PORTS];    // the byte is outside the hashed range (or not in the beat)
    // A beat's bytes (each half's) and buffer, for its frame's length a
    // cycle after its tlast (counted from the port and added in the same
    // cycle: 7.75 levels; 64 bits counted in one: 7.25).
    localparam int ONES_W = $clog2(KEEP_W / 2 + 1);
    logic [ONES_W-1:0]    ci_ones [PORTS], ci_ones2 [PORTS];
    logic [NBW-1:0]    ci_id [PORTS];
    logic [DATA_W-1:0] cr_data [PORTS];
    logic [PORTS-1:0]  cr_valid, cr_last, cd_valid;
    logic [31:0]       cd_crc [PORTS];
    logic [BW-1:0]     c_slot [PORTS];     // buffer the port's next digest is for
    logic              b_crcd [NB];        // the buffer's digest is in b_crc
    logic [NB-1:0]     b_busy;             // a whole frame in the buffer, not yet freed (prism_frame_buf's)
    logic              b_ready [NB];
    logic [15:0]       b_len [NB];
    logic [15:0]       b_sid [NB];         // a DATA frame's stream (bytes 52-53, in its first beat)
    logic [31:0]       b_pid [NB];         // and its packet ID (bytes 38-41): the held table's keys
    logic [31:0]       b_crc [NB];
    logic              b_ok [NB], b_prism [NB], b_walk [NB];
    // DISPATCH's tests of the class and the destination, made on the
    // frame's first beat as it is taken (behind the frame buffer's view,
    // then DISPATCH's choices, they were 8.25 levels). node_mac is a
    // strap: it does not change while frames are buffered.
    // {CONTROL, PROGRESS, DATA or RESULT, for this node}
    logic [3:0]        b_head [NB];
    // The engine takes a buffer when its verdict and its digest are both in
    // (the digest comes first: C_LAT against the validator's 5 or more).
    logic              b_go [NB];
    always_comb for (int b = 0; b < NB; b++) b_go[b] = b_ready[b] && b_crcd[b];
    logic [7:0]        b_reason [NB];
    logic              free_buf;           // pulse from the engine: free_id is done
    logic [NBW-1:0]    free_id;
    // Frames in arrival order (ports in index order within a cycle): the
    // engine takes them oldest first, as the software engine sees them.
    localparam int QW = $clog2(NB);
    logic [NBW-1:0]    order [NB];
    logic [QW:0]       o_head, o_tail;     // o_head is the engine's, o_tail ingress's
    logic [QW:0]       o_head_n;           // o_head's next value (the frame buffer is read a cycle ahead)
    logic              fin;                // the engine is done with the frame (finish_frame)
    logic [NBW-1:0]    proc_buf, proc_buf_n;
    logic [PW-1:0]     cur_port;           // port of the frame being handled
    // proc_buf is a register, order[o_head] as of the cycle before: every
    // select by it (the buffer's length, digest and verdict below) starts
    // at a register, not behind the queue's 2^QW:1 select. An entry is
    // written in the cycle its frame's last beat is taken, so the engine
    // sees the queue's tail a cycle late (o_tail_d): proc_buf has the entry
    // by then. (A frame's verdict and digest come cycles after its last
    // beat, so the engine never waits for that cycle.)
    logic [NBW-1:0]    buf_cur, buf_nxt;   // order[o_head], order[o_head + 1]
    logic [QW:0]       o_tail_d;
    assign o_head_n = o_head + (QW + 1)'(fin);
    always_comb begin
        logic [QW-1:0] h1;
        h1 = o_head[QW-1:0] + QW'(1);
        buf_cur = order[o_head[QW-1:0]];
        buf_nxt = order[h1];
    end
    assign proc_buf_n = fin ? buf_nxt : buf_cur;
    assign cur_port = proc_buf[NBW-1:BW];
    logic [32*CNT_TOTAL-1:0] cnt;   // counter i at [32*i +: 32] (a flat vector)
    // The engine's counts, applied two cycles later: the engine sets a
    // counter's bit (or, for RESULTs sent, their paths), the counters
    // decode it (cnt_q) and add it the cycle after, in their own process,
    // so no counter's adder sits behind the engine's decisions or a
    // decode. m_idle waits for them.
    logic [CNT_TOTAL-1:0] cnt_inc;
    // A count whose reason is a run-time value (a malformed frame's, a
    // DATA refusal's, a CONTROL refusal's): the group and the reason,
    // registered, and decoded by the counters (the engine adding the
    // reason to the group's first index put a 32-bit add and a decode of
    // its sum behind its decisions: 14.25 levels).
    localparam logic [1:0] CG_MALFORMED = 2'd1, CG_REFUSED = 2'd2, CG_REJECTED = 2'd3;
    logic [1:0]  cnt_grp;            // 0: none
    logic        cnt_dup;            // hd_same beside cnt_why: a CHANGED_RETRANSMIT that is a duplicate
    logic [7:0]  cnt_why;
    logic        cnt_rs;
    logic [PI_W-1:0] cnt_rs_n;
    logic [CNT_TOTAL-1:0] cnt_q;     // the increments, decoded (added the next cycle)
    logic        cnt_rs_q;
    logic [PI_W-1:0] cnt_rs_nq;

    // The frame being handled.
    // Its length, digest and verdict, registered with proc_buf (each a
    // select by the current and by the next entry, then fin's 2:1).
    logic [15:0]       rx_len, rx_port, rx_stream;
    logic [31:0]       rx_pid;
    logic [31:0]       rx_crc;
    logic              rx_ok, rx_prism, rx_walk;
    logic              dh_ctl, dh_prog, dh_data, dh_forus;   // b_head's, for the frame being handled
    logic [7:0]        rx_reason;
    assign rx_port = 16'(cur_port);
    always_ff @(posedge clk) begin
        proc_buf <= proc_buf_n;
        o_tail_d <= rst ? '0 : o_tail;
        rx_len <= fin ? b_len[buf_nxt] : b_len[buf_cur];
        rx_crc <= fin ? b_crc[buf_nxt] : b_crc[buf_cur];
        rx_stream <= fin ? b_sid[buf_nxt] : b_sid[buf_cur];
        rx_pid <= fin ? b_pid[buf_nxt] : b_pid[buf_cur];
        rx_ok <= fin ? b_ok[buf_nxt] : b_ok[buf_cur];
        rx_prism <= fin ? b_prism[buf_nxt] : b_prism[buf_cur];
        rx_walk <= fin ? b_walk[buf_nxt] : b_walk[buf_cur];
        rx_reason <= fin ? b_reason[buf_nxt] : b_reason[buf_cur];
        {dh_ctl, dh_prog, dh_data, dh_forus} <= fin ? b_head[buf_nxt] : b_head[buf_cur];
    end

    // The next frame: the one after the head once the head is done.
    logic          next_ok;
    always_comb begin
        logic [QW:0] h;
        h = o_head + (QW + 1)'(1);
        next_ok = h != o_tail && b_go[order[h[QW-1:0]]];
    end

    // The frame buffers (prism_frame_buf: block RAM, a registered read).
    // The engine's one read is a view of the frame being handled from byte
    // `off`: FLANES * 4 bytes. In the view's own cycle the engine reads
    // only its first four bytes (win: a descriptor, a Kulisch value's
    // state); everything else reads it registered (wv_q), a cycle later,
    // so nothing deep sits behind the frame buffer's 5.5-level view. The
    // read is registered, so it is given the next
    // cycle's buffer and offset (proc_buf_n, off_n: every change of `off`
    // is computed in off_n's process, below); a frame is entered at
    // DISPATCH with `off` at its body (DATA_BODY), and that first read
    // also gives its first two beats, the header the engine checks: `hdr`
    // in DISPATCH, registered (hdr_q) for the frame's later states.
    logic [15:0]       off, off_n;         // byte offset of the view, and its next value
    logic [31:0]       win;
    logic [31:0]       dwin;               // the view's first word when `off` is aligned (a descriptor)
    // A DATA group's run figures, decoded from every 4-byte word as it
    // arrives (fb_side) and read with the word (dside), so entering a
    // group is a select, not a decode behind the frame buffer's read
    // (dwin to the run figures was the switch's deepest path, 9.75-10
    // levels). The figures a word would give as a descriptor, for the
    // lanes' cut (FLANES; KLANES beside it when that differs, so the
    // default build selects nothing by the context's kind): its first
    // run's values and bytes, whether it is the group's last and whether
    // more than two runs' values are left; and the group's bytes + 3
    // (vb3, the last run's when it is the first). Byte counts are VBW
    // bits (at most 4 x FLANES, or a Kulisch value's 2 + 511, + 3).
    localparam int VBW = $clog2((4 * FLANES > 516 ? 4 * FLANES : 516) + 1);
    localparam int CUT_W = VBW + RN_W + 2;
    localparam int TWO_CUTS = KLANES != FLANES ? 1 : 0;
    localparam int SIDE_W = VBW + CUT_W * (1 + TWO_CUTS);
    localparam int WPL = DATA_W / 32;
    // (Its bits, low first: vb3, then a cut's bytes, values, last, more;
    // the word's bits 27-25 are reserved in a descriptor.)
    /* verilator lint_off UNUSEDSIGNAL */
    // v values' bytes in format f (a native value: INT8 1, FP32 4, FP16
    // and BF16 2): a shift, not a multiply (a 16-bit multiply by the width
    // was several levels on the run's paths). One value's is the width.
    function automatic logic [15:0] times_width(input logic [15:0] v, input logic [3:0] f);
        times_width = f == FMT_INT8 ? v : (f == FMT_FP32 ? {v[13:0], 2'b0} : {v[14:0], 1'b0});
    endfunction
    // The group's bytes + 3 (vw3 of a count and a format).
    function automatic logic [15:0] times_width3(input logic [15:0] v, input logic [3:0] f);
        times_width3 = f == FMT_INT8 ? v + 16'd3 : (f == FMT_FP32 ? {v[13:0], 2'b11} : {v[14:0] + 15'd1, 1'b1});
    endfunction
    function automatic logic [CUT_W-1:0] cut_of(input logic [15:0] vl, input logic [3:0] f, input logic [15:0] vb, input int lanes);
        logic isk, big;
        logic [15:0] lb;
        isk = f == FMT_KULISCH;
        big = !isk && vl > 16'(lanes);
        lb = times_width(16'(lanes), f);
        cut_of = {!isk && vl > 16'(2 * lanes), isk ? vl == 16'd1 : !big,
                  isk ? RN_W'(1) : (big ? RN_W'(lanes) : RN_W'(vl)), big ? VBW'(lb) : VBW'(vb)};
    endfunction
    function automatic logic [SIDE_W-1:0] side_of(input logic [31:0] d);
        logic [3:0]  f;
        logic [15:0] vl, kw, vb, vb3;
        logic        isk;
        f = d[31:28];
        vl = d[15:0];
        kw = 16'(d[24:16]);
        isk = f == FMT_KULISCH;
        vb = isk ? 16'd2 + kw : times_width(vl, f);
        vb3 = isk ? 16'd5 + kw : times_width3(vl, f);
        if (TWO_CUTS != 0) side_of = SIDE_W'({cut_of(vl, f, vb, KLANES), cut_of(vl, f, vb, FLANES), VBW'(vb3)});
        else side_of = SIDE_W'({cut_of(vl, f, vb, FLANES), VBW'(vb3)});
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */
    logic [PORTS*WPL*SIDE_W-1:0] fb_side;
    always_comb
        for (int p = 0; p < PORTS; p++)
            for (int w = 0; w < WPL; w++)
                fb_side[(p*WPL + w)*SIDE_W +: SIDE_W] = side_of(`PN_B32(s_axis_tdata, DATA_W/8*p + 4*w));
    logic [SIDE_W-1:0] dside;
    logic [32*FLANES-1:0] wv;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [2*DATA_W-1:0] hdr, hdr_q, fb_head;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [PORTS*BW-1:0] fb_slot;
    logic [PORTS*16-1:0] fb_beat;
    always_comb
        for (int p = 0; p < PORTS; p++) begin
            in_slot[p] = fb_slot[BW*p +: BW];
            in_beat[p] = fb_beat[16*p +: 16];
        end
    prism_frame_buf #(.DATA_W(DATA_W), .PORTS(PORTS), .BPP(BPP), .LINES(LINES), .FB_LINES(FB_LINES), .VIEW_BYTES(4 * FLANES),
                      .ANY_BYTES(ANY_BYTES), .SIDE_W(SIDE_W)) fbuf (
        .clk, .rst,
        .s_axis_tdata, .s_axis_tvalid, .s_axis_tlast, .s_axis_tready, .s_axis_tside(fb_side), .m_side(dside),
        .fill_slot(fb_slot), .fill_beat(fb_beat), .busy(b_busy), .free_en(free_buf), .free_buf(free_id),
        .rd_en(1'b1), .rd_buf(proc_buf_n), .rd_off(off_n), .m_view(wv), .m_word(dwin), .m_head(fb_head)
    );
    assign win = wv[31:0];
`ifndef SYNTHESIS
    // The view is exact beyond its first ANY_BYTES bytes only at a multiple
    // of 4: a run of values that reads further starts aligned.
    always_ff @(posedge clk)
        if (!rst && (f_push || k_push) && g_fmt != FMT_KULISCH && off[1:0] != 2'd0 && 32'(rq_b) > ANY_BYTES)
            $error("prism_node: a run of %0d bytes reads the view from offset %0d, not a multiple of 4", rq_b, off);
`endif
    // Every state after DISPATCH reads the header from hdr_q (a register);
    // DISPATCH itself reads fb_head (d_* below), and so do the lookups
    // made there.
    assign hdr = hdr_q;
    logic [7:0]  d_class, d_groups;
    logic [47:0] d_dst_mac;
    always_comb begin
        d_dst_mac = `PN_B48(fb_head, 0);
        d_class   = `PN_B8(fb_head, 15);
        d_groups  = `PN_B8(fb_head, 48);
    end
    always_ff @(posedge clk) if (st[DISPATCH]) hdr_q <= fb_head;
`ifndef SYNTHESIS
    // DISPATCH's tests from the frame's first beat (dh_*) against its view.
    always_ff @(posedge clk)
        if (!rst && st[DISPATCH] && rx_ok && rx_prism && {dh_ctl, dh_prog, dh_data, dh_forus} != {d_class == CLASS_CONTROL, d_class == CLASS_PROGRESS,
                                                                             d_class == CLASS_DATA || d_class == CLASS_RESULT, d_dst_mac == node_mac})
            $error("prism_node: DISPATCH's registered head flags are not the view's");
`endif

    // Fields of the frame being handled.
    logic [7:0]  f_class, f_cmd;
    logic [63:0] f_job;
    logic [15:0] f_group, f_op, f_ggen;
    logic [31:0] f_ogen, f_first;
    logic [47:0] f_gen, f_src_mac, f_dst_mac;
    logic        am_src_q;         // the frame is from the Aggregation Manager (registered)
    logic [15:0] f_src_ep, f_dst_ep, f_body_len, f_bcount;
    logic [7:0]  f_groups, f_flags;
    logic [32:0] f_end;
    always_comb begin
        f_dst_mac  = `PN_B48(hdr, 0);
        f_src_mac  = `PN_B48(hdr, 6);
        f_class    = `PN_B8(hdr, 15);
        f_job      = {`PN_B32(hdr, 16), `PN_B32(hdr, 20)};
        f_group    = `PN_B16(hdr, 24);
        f_ggen     = `PN_B16(hdr, 26);
        f_op       = `PN_B16(hdr, 28);
        f_ogen     = `PN_B32(hdr, 30);
        f_gen      = {f_ggen, f_ogen};
        f_cmd      = `PN_B8(hdr, 42);
        f_bcount   = `PN_B16(hdr, 80);
        f_src_ep   = f_class == CLASS_CONTROL ? `PN_B16(hdr, 38) : `PN_B16(hdr, 34);
        f_dst_ep   = f_class == CLASS_CONTROL ? `PN_B16(hdr, 40) : `PN_B16(hdr, 36);
        f_first    = `PN_B32(hdr, 42);
        f_groups   = `PN_B8(hdr, 48);
        f_flags    = `PN_B8(hdr, 49);
        f_body_len = f_class == CLASS_CONTROL ? `PN_B16(hdr, 44) : `PN_B16(hdr, 50);
    end
    always_ff @(posedge clk) if (st[DISPATCH]) f_end <= {1'b0, `PN_B32(fb_head, 42)} + {17'b0, `PN_B16(fb_head, 46)};

    // The operation context.
    logic        ctx_valid, ctx_active, ctx_failed;
    logic        ctx_kulisch, ctx_kul_q;   // KULISCH_FIXED (constant 0 without KULISCH_ENABLE)
    assign ctx_kulisch = KULISCH_ENABLE != 0 && ctx_kul_q;
    logic [8:0]  ctx_kwf;            // Kulisch width field: W/8 - 1
    logic [63:0] ctx_job;
    logic [15:0] ctx_group, ctx_op;
    logic [47:0] ctx_gen;
    logic [31:0] ctx_vlen, ctx_wel, ctx_wby;
    logic [15:0] ctx_wint;
    logic [32:0] base;
    logic [31:0] next_pid;
    logic [PI_W-1:0] n_paths;
    (* mem2reg *) logic [15:0] p_lep [PSLOTS], p_pep [PSLOTS], p_port [PSLOTS], p_stream [PSLOTS];
    (* mem2reg *) logic [47:0] p_mac [PSLOTS];
    logic        ctx_key_match;
    assign ctx_key_match = ctx_valid && ctx_job == f_job && ctx_group == f_group && ctx_op == f_op;

    // Staging copy of a STAGE's bindings while it is validated.
    (* mem2reg *) logic [15:0] s_stream [MAX_CONTRIB], s_lep [MAX_CONTRIB], s_pep [MAX_CONTRIB], st_port [MAX_CONTRIB];
    (* mem2reg *) logic [47:0] s_mac [MAX_CONTRIB];
    (* mem2reg *) logic [15:0] sp_lep [PSLOTS], sp_pep [PSLOTS], sp_port [PSLOTS], sp_stream [PSLOTS];
    (* mem2reg *) logic [47:0] sp_mac [PSLOTS];
    logic [15:0] bi;
    logic [31:0] terms_sum;
    logic [15:0] contribs, paths, dest_paths;

    // Transaction records and retired generations: prism_txn_table (below,
    // with the checks), looked up in DISPATCH, answered by C_TXN.
    logic        t_hit, t_same, retired_stale, tl_busy;
    logic [7:0]  t_status;
    logic [15:0] t_detail;
    logic        tl_insert, tl_purge, tl_retire;   // registered write pulses of the engine

    // Reply being built.
    logic [7:0]  ack_status;
    logic [15:0] ack_detail;

    // The accumulator ring (prism_ring: FP32_ARRIVAL values, and KULISCH_FIXED
    // integers with their flags, in FLANES banks of block RAM: slot s in bank
    // s mod FLANES) and the lanes on its run of slots. The lanes are in bank
    // order: lane b adds into bank b's slot of the run, so the ring's wide
    // words go into the lanes and back without a rotation; the run's values
    // (32 bits each) are rotated to their banks instead. A run's view is
    // registered in its dispatch cycle (wv_q: the frame buffer's view is
    // 5.5 levels deep at its output, and its width select and the
    // rotation after it were 11.25), its values rotated the cycle after,
    // converted to FP32 in the two after that (the conversion and the
    // rotation were 14 levels in one cycle), and enter the lanes the cycle
    // after, beside the ring's registered read of the run, made CV_LAT
    // cycles after dispatch. The Kulisch integer (kint) is cut from the
    // registered view too.
    // Under KULISCH_FIXED a run is KLANES slots, but any FLANES-slot window
    // of banks may hold it, so there is a Kulisch lane per bank.
    logic [FLANES*32-1:0] lane_acc, lane_sum;
    logic [FLANES*RKW-1:0] lane_acck, klane_sum;
    logic [FLANES*5-1:0]  lane_accf, klane_f;
    logic [FLANES-1:0]    lane_rest;       // a lane's slot is at rest (its words read as -0 and 0)
    logic [KW-1:0] kint;
    logic [RB-1:0] lane_slot;
    logic          lane_lap;         // lane_slot's element's lap (prism_ring's tags)
    logic [32*FLANES-1:0] wv_q;      // the run's view, registered at dispatch
    logic [3:0]    vq_w;             // with its values' width,
    logic [8:0]    vq_kw;            // and its Kulisch integer's bytes (its first slot: lr_slot0)
    logic [31:0] lane_in [FLANES];   // value j of the run, its width's bytes (from wv_q)
    logic [31:0] lane_inb [FLANES];  // bank b's value of the run
    // The conversion's stages after dispatch: the values rotated to their
    // banks (lane_rv), then their leading ones (lane_cp with lane_cr),
    // then FP32 (lane_inq) beside the ring's read, which is CV_LAT cycles
    // after dispatch (lr_*).
    logic [31:0]   lane_rv [FLANES], lane_cr [FLANES];
    logic [14:0]   lane_cp [FLANES];
    logic [3:0]    cv_fmt0, cv_fmt1, cv_fmt2;
    logic [RB-1:0] lr_slot0, lr_slot1, lr_slot;
    logic          lr_lap0, lr_lap1, lr_lap;
    logic [RN_W-1:0] lr_n0, lr_n1, lr_n;
    // A Kulisch context's ring reads, K_RD cycles later (K_LAT below), and
    // the Kulisch integer with them.
    logic [RB-1:0] lk_slot [K_RD];
    logic          lk_lap [K_RD];
    logic [RN_W-1:0] lk_n [K_RD];
    logic [KW-1:0] kint_l [K_RD];
    logic          f_push_q0, k_push_q0, f_push_q1, k_push_q1, f_push_q, k_push_q, kisk_q0, kisk_q1, kisk_q2;
    logic [7:0]    kst_q1, kst_q2;
    logic [KW-1:0] kint_q1, kint_q2;
    // Registered with the ring's read: what enters the lanes.
    logic          f_go, k_go;
    logic [31:0]   lane_inq [FLANES];
    logic          kisk_q;
    logic [7:0]    kst_q;
    logic [KW-1:0] kint_q;
    // Cycles from a run's dispatch to the write of its sums: the
    // conversion's register (CV_LAT), the ring's registered read, then the
    // FP32 lanes (prism_fp32_add_pipe) or the Kulisch lanes
    // (prism_kulisch_lane_pipe) (their LATENCY; each checked in simulation
    // against the lanes' m_valid). The hazard logic follows from these.
    localparam int CV_LAT = 3;   // the stages written out below (lr_*0, lr_*1, f_push_q0, f_push_q1, cv_fmt0, wv_q, lane_rv/lane_cp ...)
    initial if (CV_LAT != 3) $error("prism_node: CV_LAT must match the conversion's three written-out stages");
    localparam int RING_LAT = 1;
    // The ring's egress read (the builder's line, AUTO's reads): the
    // registered read, then the memories' output register (prism_ring).
    localparam int EG_LAT = 2;
    localparam int F_LAT = 10;
    localparam int K_LAT = 8;
    // The Kulisch lanes take their slot (and kint) K_RD cycles after the
    // term (prism_kulisch_lane_pipe's ACC_DELAY: the term is aligned in a
    // slice first), so a Kulisch run's ring read is K_RD cycles later than
    // an FP32 run's (lr_*: the read is a register either way). Its read and
    // its sums' write move together: a run's window from read to write is
    // RING_LAT + K_LAT - K_RD.
    localparam int K_RD = 3;
    // Hazard queries of the ring's egress readers against the runs in
    // flight (prism_lane_track): 0 the builder's line, 1 AUTO's lookahead
    // (D_RUN's own query is below, r_win).
    localparam int HQ = 2;
    logic [HQ*RB-1:0]   hz_slot;
    logic [HQ*RN_W-1:0] hz_n;
    logic [HQ*(RB+1)-1:0] hz_end;   // each query's end and wrap (the asker's registers)
    logic [HQ-1:0]      hz_hit;
    logic          f_push, k_push, f_land, k_land, lanes_busy;
    logic [RB-1:0] f_land_slot, k_land_slot;
    logic          f_land_lap, k_land_lap;
    logic [RN_W-1:0] f_land_n, k_land_n;
    logic          run_hold;         // D_RUN waits: a slot of its run has a sum in flight
    logic          f_mv0, k_mv0;     // lane 0's m_valid (the latency checks)
    // The run's values to their banks: bank b takes value (b - slot) mod
    // FLANES (a rotation up, one stage a bit of the slot).
    always_comb begin
        logic [31:0] x [$clog2(FLANES)+1][FLANES];
        for (int j = 0; j < FLANES; j++) x[0][j] = lane_in[j];
        for (int k = 0; k < $clog2(FLANES); k++)
            for (int i = 0; i < FLANES; i++)
                x[k+1][i] = lr_slot0[k] ? x[k][(i - (1 << k)) & (FLANES - 1)] : x[k][i];
        for (int i = 0; i < FLANES; i++) lane_inb[i] = x[$clog2(FLANES)][i];
    end
    always_ff @(posedge clk) begin
        if (rst) begin
            f_push_q0 <= 1'b0;
            k_push_q0 <= 1'b0;
            f_push_q1 <= 1'b0;
            k_push_q1 <= 1'b0;
            f_push_q <= 1'b0;
            k_push_q <= 1'b0;
            f_go <= 1'b0;
            k_go <= 1'b0;
            lr_n0 <= '0;
            lr_n1 <= '0;
            lr_n <= '0;
        end else begin
            f_push_q0 <= f_push;
            k_push_q0 <= k_push;
            f_push_q1 <= f_push_q0;
            k_push_q1 <= k_push_q0;
            f_push_q <= f_push_q1;
            k_push_q <= k_push_q1;
            f_go <= f_push_q;
            k_go <= k_push_q;
            lr_n0 <= f_push || k_push ? rq_n : '0;
            lr_n1 <= lr_n0;
            for (int i = 0; i < K_RD; i++) lk_n[i] <= i == 0 ? lr_n1 : lk_n[i - 1];
            lr_n <= ctx_kulisch ? lk_n[K_RD - 1] : lr_n1;
        end
        wv_q <= wv;
        vq_w <= g_w;
        vq_kw <= g_kw;
        lr_slot0 <= lane_slot;
        lr_slot1 <= lr_slot0;
        lr_lap0 <= lane_lap;
        lr_lap1 <= lr_lap0;
        for (int i = 0; i < K_RD; i++) begin
            lk_slot[i] <= i == 0 ? lr_slot1 : lk_slot[i - 1];
            lk_lap[i] <= i == 0 ? lr_lap1 : lk_lap[i - 1];
            kint_l[i] <= i == 0 ? kint_q : kint_l[i - 1];
        end
        lr_slot <= ctx_kulisch ? lk_slot[K_RD - 1] : lr_slot1;
        lr_lap <= ctx_kulisch ? lk_lap[K_RD - 1] : lr_lap1;
        cv_fmt0 <= g_fmt;
        cv_fmt1 <= cv_fmt0;
        cv_fmt2 <= cv_fmt1;
        // (One assignment a loop: Verilator 5.006 takes no more with arrays.)
        for (int i = 0; i < FLANES; i++) lane_rv[i] <= lane_inb[i];
        for (int i = 0; i < FLANES; i++) lane_cr[i] <= lane_rv[i];
        for (int i = 0; i < FLANES; i++) lane_cp[i] <= cv_prep(lane_rv[i]);
        for (int i = 0; i < FLANES; i++) lane_inq[i] <= cv_fp32(cv_fmt2, lane_cr[i], lane_cp[i]);
        kisk_q0 <= g_fmt == FMT_KULISCH;
        kisk_q1 <= kisk_q0;
        kst_q1 <= wv_q[7:0];
        kint_q1 <= kint;
        kisk_q2 <= kisk_q1;
        kst_q2 <= kst_q1;
        kint_q2 <= kint_q1;
        kisk_q <= kisk_q2;
        kst_q <= kst_q2;
        // Zero unless a finite Kulisch value (prism_kulisch_lane_pipe's kint).
        kint_q <= kisk_q2 && kst_q2 == 8'd0 ? kint_q2 : '0;
    end
    genvar gl;
    generate
        for (gl = 0; gl < FLANES; gl++) begin : g_lane
            if (gl == 0) begin : g_first
                prism_fp32_add_pipe add (.clk, .en(1'b1), .s_valid(f_go), .a(lane_acc[32*gl +: 32]), .a_rest(lane_rest[gl]), .b(lane_inq[gl]),
                                         .m_valid(f_mv0), .sum(lane_sum[32*gl +: 32]));
            end else begin : g_rest
                /* verilator lint_off PINCONNECTEMPTY */
                prism_fp32_add_pipe add (.clk, .en(1'b1), .s_valid(f_go), .a(lane_acc[32*gl +: 32]), .a_rest(lane_rest[gl]), .b(lane_inq[gl]),
                                         .m_valid(), .sum(lane_sum[32*gl +: 32]));
                /* verilator lint_on PINCONNECTEMPTY */
            end
        end
        if (KULISCH_ENABLE != 0) begin : g_kul
        for (gl = 0; gl < FLANES; gl++) begin : g_klane
            if (gl == 0) begin : g_first
                prism_kulisch_lane_pipe #(.KW(KW)) kadd (
                    .clk, .en(1'b1), .s_valid(k_go),
                    .acc(lane_acck[KW*gl +: KW]), .flags(lane_accf[5*gl +: 5]), .acc_rest(lane_rest[gl]),
                    .is_kulisch(kisk_q), .fp32(lane_inq[gl]), .kstate(kst_q), .kint(kint_l[K_RD - 1]),
                    .m_valid(k_mv0), .acc_o(klane_sum[KW*gl +: KW]), .flags_o(klane_f[5*gl +: 5])
                );
            end else begin : g_rest
                /* verilator lint_off PINCONNECTEMPTY */
                prism_kulisch_lane_pipe #(.KW(KW)) kadd (
                    .clk, .en(1'b1), .s_valid(k_go),
                    .acc(lane_acck[KW*gl +: KW]), .flags(lane_accf[5*gl +: 5]), .acc_rest(lane_rest[gl]),
                    .is_kulisch(kisk_q), .fp32(lane_inq[gl]), .kstate(kst_q), .kint(kint_l[K_RD - 1]),
                    .m_valid(), .acc_o(klane_sum[KW*gl +: KW]), .flags_o(klane_f[5*gl +: 5])
                );
                /* verilator lint_on PINCONNECTEMPTY */
            end
        end
        end else begin : g_no_kul
            assign klane_sum = '0;
            assign klane_f = '0;
            assign k_mv0 = 1'b0;
            // What only the Kulisch lanes read.
            /* verilator lint_off UNUSEDSIGNAL */
            logic unused;
            assign unused = ^{lane_acck, lane_accf, kint_l[K_RD - 1], kisk_q, kst_q, eg_acck, eg_accf, k_go};
            /* verilator lint_on UNUSEDSIGNAL */
        end
    endgenerate

    // DATA walk.
    logic [7:0]  groups_left;
    logic [15:0] vals_left;
    // The Kulisch walk's values left in its group: its own register, so
    // vals_left's loads are the group's entry and D_RUN's runs only (five
    // sources put a second level behind the frame buffer's word: 7.00).
    logic [15:0] kw_vals;
    logic [3:0]  g_fmt;
    logic [32:0] pos;
    logic [RB-1:0] clr_slot;
    logic [15:0] clr_left;
    logic [15:0] k_left;             // Kulisch walk: bytes of the integer left
    // k_left > 64, kept with it: the walk's chunk (at most 64 bytes) is a
    // select, not a compare, in front of the view's next offset (the
    // compare, the select and the add were 6.50 levels into the frame
    // buffer's read address).
    logic        k_big;
    // groups_left, k_left and kw_vals other than zero, kept with them (the
    // view's next offset is selected by them: their compares were a level
    // or two in front of the select). gl_nz is written where D_DESC's
    // groups are counted (D_OP, D_DESC) only: D_DESC reads it, and D_OP
    // comes before it in every frame.
    logic        gl_nz, kl_nz, kw_nz;
    // The Kulisch walk's value check, two cycles behind the walk (kv*):
    // stage 1 the chunk's bytes (the registered view wv_q) to nonzero
    // flags, stage 2 the value's OR (kv_nz) and, at its last chunk, the
    // verdict, which ends the frame (DONE) from there. The walk goes on
    // meanwhile and waits for the stages to drain before it leaves
    // D_KWALK. In the walk's own cycle the check was 11 to 13 levels (the
    // frame buffer's view, 64 byte compares, the verdict, the state).
    logic        kv1_v, kv1_first, kv1_last, kv2_v, kv2_first, kv2_last, kv_nz;
    logic [6:0]  kv1_n;
    logic [7:0]  kv1_state, kv2_state;
    // The chunk's nonzero bytes ORed by fours (registered: the OR over 64
    // flags in stage 2, then the verdict, was 6.25 levels into st's enable).
    logic [15:0] kv2_b;
    logic        kv_bad;              // stage 2's verdict: the value is malformed
    logic [1:0]  bp;                  // C_BIND's, PREWALK's and D_KWALK's phase (see there)
    logic [15:0] kd_skip;             // the Kulisch walk's step over a descriptor (and its group, if native)
    always_comb begin
        logic nz;
        nz = |kv2_b || (!kv2_first && kv_nz);
        kv_bad = kv2_v && kv2_last && (kv2_state > KSTATE_NAN || ((kv2_state == KSTATE_FINITE) != nz));
    end
    always_ff @(posedge clk) begin
        if (rst) begin
            kv2_v <= 1'b0;
        end else begin
            kv2_v <= kv1_v;
            if (kv2_v) kv_nz <= |kv2_b || (!kv2_first && kv_nz);
        end
        for (int g = 0; g < 16; g++) begin
            logic b;
            b = 1'b0;
            for (int i = 4 * g; i < 4 * g + 4; i++) b = b || (7'(i) < kv1_n && wv_q[8*i +: 8] != 0);
            kv2_b[g] <= b;
        end
        // Stage 1: a chunk of the integer is walked this cycle (its view is in wv_q next cycle).
        kv1_v <= !rst && st[D_KWALK] && bp == 2'd0 && k_left != 0;
        kv1_n <= k_big ? 7'd64 : 7'(k_left);
        kv1_first <= k_left == {7'b0, g_kw} + 16'd1;
        kv1_last <= !k_big;
        kv1_state <= k_state;
        kv2_first <= kv1_first;
        kv2_last <= kv1_last;
        kv2_state <= kv1_state;
    end
    logic        k_bad;              // this frame has a Kulisch group the operation does not take (cleared as it ends)
    logic [7:0]  k_state;
    logic [8:0]  g_kw;
    logic [15:0] ctx_cap;            // FP32 values per RESULT packet at the context's MTU
    logic        ctx_auto, ctx_auto_q;   // AUTO output (constant 0 without AUTO_ENABLE)
    logic        st_emit;
    assign st_emit = st[A_EMIT];
    assign ctx_auto = AUTO_ENABLE != 0 && ctx_auto_q;
    logic [15:0] ctx_budget;         // RESULT body bytes: MTU - 42

    // ---------------------------------------------------------------- egress
    // prism_egress: the request slots, the RESULT builder and a sender a
    // port. The engine issues a request (a CONTROL reply in cbuf, built
    // only while egress is idle; a RESULT packet for every path; an AUTO
    // body in egress's AUTO lines) through its registers req_*, taken by egress at the
    // next edge. rq_free says the engine may issue; tx_idle that egress
    // holds no request. The builder reads the ring's egress port (eb_*,
    // below) and the lanes' hazard query 0. The engine goes on meanwhile.
    logic [8*192-1:0] cbuf;          // a CONTROL reply, built whole, byte i at [8i +: 8]
    logic [15:0] q_len;              // its length
    logic        req_en, req_ctl, req_auto, req_inexact, req_last;
    logic [32:0] req_base;
    logic [15:0] req_count, req_olen, req_port, req_blen;
    logic [31:0] req_pid;
    logic [7:0]  req_groups;
    logic        tx_idle, out_idle, rq_free;
    // The ring's egress run (the builder's line, or AUTO's slots), EG_LAT cycles after its read.
    logic [LANES*32-1:0] eg_acc;
    logic [LANES*RKW-1:0] eg_acck;   // in block order (prism_ring)
    logic [LANES*5-1:0]  eg_accf;
    logic [RKW-1:0]      eg_k0;      // the run's first slot's (a run inside one block)
    logic [4:0]          eg_f0;
    logic [3:0]          eg_phase;
    logic                eg_cross, eg_valid;
    // The builder's read of the ring, and its hazard query.
    logic [RB-1:0] eb_slot;
    logic          eb_lap;            // its element's lap (prism_ring's tags)
    logic [RN_W-1:0] eb_qn, eb_hqn;   // the line's slots; it and the next line's (the query)
    logic [RB:0]     eb_qend;         // the query's end and wrap
    logic        eb_go;
    // The roundings after the ring's egress read (prism_kulisch_round_pipe's
    // latency, checked in simulation, and prism_egress's register that puts
    // them into run order), in egress's builder and AUTO's store.
    localparam int R_LAT = 7;
    localparam int RL = EG_LAT + R_LAT;

    always_comb begin
        m_idle = st[IDLE] && tx_idle && out_idle && !lanes_busy && !ro_pend && cnt_inc == 0 && cnt_grp == 0 && !cnt_rs && cnt_q == 0 && !cnt_rs_q;
        for (int p = 0; p < PORTS; p++) begin
            if (in_beat[p] != 0) m_idle = 1'b0;
            for (int k = 0; k < BPP; k++) if (b_busy[{PW'(p), BW'(k)}]) m_idle = 1'b0;
        end
    end
    assign m_counters = cnt;

    // ---------------------------------------------------------------- lanes
    // Up to LANES values of the current group from byte offset `off`.
    // run_n and run_bytes are what D_RUN's run is, worked out from
    // vals_left in the run's cycle; the engine uses them registered
    // (rq_*, below), and simulation checks the two agree.
    logic [RN_W-1:0] run_n;
    logic [15:0] run_bytes;
    logic [3:0]  g_w;
    // D_RUN's run, registered: its values (rq_n), its bytes (rq_b, and
    // plus 3: rq_b3, kept for a group's last run only) and whether it is
    // its group's last (rq_last), worked
    // out when the group is entered (run_first, from its descriptor) and at
    // each run for the next (run_next). From vals_left in the run's cycle,
    // the offset's next value was 8.75 levels into the frame buffer's read
    // address (a compare, the multiply by the width, two adds, the select).
    logic [RN_W-1:0] rq_n;
    logic [15:0]     rq_b, rq_b3;
    logic            rq_last;
    logic            rq_more;        // a native group: more than two runs' values left (from the run's start)
    // FP32_ARRIVAL runs FLANES lanes; KULISCH_FIXED its KLANES exact lanes.
    logic [15:0] run_lanes;
    assign run_lanes = ctx_kulisch ? 16'(KLANES) : 16'(FLANES);
    always_comb begin
        g_w = 4'(times_width(16'd1, g_fmt));
        run_n = vals_left > run_lanes ? RN_W'(run_lanes) : RN_W'(vals_left);
        run_bytes = times_width(16'(run_n), g_fmt);
        // A Kulisch value a cycle: state byte, then W = vq_kw + 1 bytes
        // sign-extended to KW (0 when W bytes do not fit), from the run's
        // registered view: each bit the view's or the sign, by a compare of
        // its byte index (a shift up and an arithmetic shift down by a
        // computed amount were 10.25 levels).
        begin
            logic sgn, fits;
            sgn = 1'b0;
            for (int b = 0; b < (KW + 7) / 8; b++)
                if (9'(b) == vq_kw && 8 * b + 15 < 32 * FLANES) sgn = wv_q[8 * b + 15];
            fits = 8 * ($signed(32'(vq_kw)) + 1) <= KW;
            for (int j = 0; j < KW; j++)
                kint[j] = fits && (9'(j / 8) <= vq_kw ? wv_q[8 + j] : sgn);
        end
        if (g_fmt == FMT_KULISCH) begin
            run_n = RN_W'(1);
            run_bytes = 16'd2 + {7'b0, g_kw};
        end
        for (int j = 0; j < FLANES; j++) begin
            logic [31:0] raw;
            case (vq_w)
                4'd1: raw = {24'b0, wv_q[8*j +: 8]};
                4'd2: raw = {16'b0, wv_q[16*j +: 16]};
                default: raw = wv_q[32*j +: 32];
            endcase
            lane_in[j] = raw;
        end
        lane_slot = RB'(pos);
        lane_lap = pos[RB];
    end

    // ---------------------------------------------------------------- checks
    // Transaction lookup (prism_txn_table, TL_LAT cycles: a scan of its
    // records). A CONTROL frame is looked up in DISPATCH (in every cycle it
    // waits there; the last lookup, in the cycle it leaves, is the one
    // answered), and C_TXN waits for the answer (tl_busy).
    // The engine writes the table a cycle after C_APPLY (a retire) and
    // C_REPLY (an insert, and a STAGE's purge of older generations), by
    // registered pulses; the table applies them to the key, txn, gen, CRC
    // and length it was last looked up with, this frame's.
    localparam int TL_LAT = TXN_SLOTS + 3;
    // (Its key, transaction, generation and length from fb_head: l_valid is DISPATCH's.)
    logic [15:0] req_len;
    logic [95:0] d_key;
    logic [31:0] d_txn;
    logic [47:0] d_gen;
    assign req_len = 16'(34) + `PN_B16(fb_head, 44);
    assign d_key = {`PN_B32(fb_head, 16), `PN_B32(fb_head, 20), `PN_B16(fb_head, 24), `PN_B16(fb_head, 28)};
    assign d_txn = `PN_B32(fb_head, 34);
    assign d_gen = {`PN_B16(fb_head, 26), `PN_B32(fb_head, 30)};
    prism_txn_table #(.TXN_SLOTS(TXN_SLOTS), .RETIRED_SLOTS(RETIRED_SLOTS), .LATENCY(TL_LAT)) txns (
        .clk, .rst,
        .l_valid(st[DISPATCH] && dh_ctl),
        .l_key(d_key), .l_txn(d_txn), .l_gen(d_gen), .l_crc(rx_crc), .l_len(req_len),
        /* verilator lint_off PINCONNECTEMPTY */
        .m_valid(),
        /* verilator lint_on PINCONNECTEMPTY */
        .m_busy(tl_busy), .m_hit(t_hit), .m_same(t_same), .m_status(t_status), .m_detail(t_detail), .m_stale(retired_stale),
        .w_insert(tl_insert), .w_status(ack_status), .w_detail(ack_detail), .w_purge(tl_purge), .w_retire(tl_retire)
    );

    // STAGE context record (frame offsets 48..83).
    logic [7:0]  x_role, x_sem, x_in, x_acc, x_part, x_out;
    logic [15:0] x_kw, x_dest, x_mtu, x_wint;
    logic [31:0] x_vlen, x_terms, x_wel, x_wby;
    logic [15:0] x_single_window;
    always_comb begin
        x_role = `PN_B8(hdr, 48);
        x_sem  = `PN_B8(hdr, 49);
        x_in   = `PN_B8(hdr, 50);
        x_acc  = `PN_B8(hdr, 51);
        x_part = `PN_B8(hdr, 52);
        x_out  = `PN_B8(hdr, 53);
        x_kw   = `PN_B16(hdr, 54);
        x_vlen = `PN_B32(hdr, 56);
        x_dest = `PN_B16(hdr, 60);
        x_mtu  = `PN_B16(hdr, 62);
        x_terms = `PN_B32(hdr, 64);
        x_wel  = `PN_B32(hdr, 68);
        x_wint = `PN_B16(hdr, 72);
        x_wby  = `PN_B32(hdr, 76);
        x_single_window = 16'(8) * ((x_mtu - 16'd46) >> 2);
    end
    logic x_known, x_mtu_ok, x_mtu_run;
    assign x_known = x_role >= 8'd1 && x_role <= 8'd4 && (x_sem == SEM_REDUCE || x_sem == SEM_ALLREDUCE)
        && x_in >= 8'd1 && x_in <= 8'd5 && (x_acc == ACC_FP32_ARRIVAL || x_acc == ACC_KULISCH_FIXED)
        && x_part <= 8'd3 && x_out >= 8'd1 && x_out <= 8'd6;
    assign x_mtu_ok = x_mtu == 16'd576 || x_mtu == 16'd1500 || x_mtu == 16'd9000;
    assign x_mtu_run = x_mtu <= 16'(MTU);
    // min_kulisch_width(terms) = ceil8(278 + ceil(log2 N)): 280 up to N = 4
    // (ceil(log2 N) <= 2), 288 up to 2^10, 296 up to 2^18, 304 up to 2^26,
    // else 312 (four compares with constants, not a search for the top bit).
    // Each width compared with its constant beside the terms' (a selected
    // minimum, then its compare, were 8.50 levels into xq_apply), and
    // registered a stage before xq_apply.
    logic x_kw_short, xq_kbad;
    assign x_kw_short = x_kw < 16'd280 || (x_terms > 32'd4 && x_kw < 16'd288) || (x_terms > 32'd1 << 10 && x_kw < 16'd296)
                        || (x_terms > 32'd1 << 18 && x_kw < 16'd304) || (x_terms > 32'd1 << 26 && x_kw < 16'd312);
    always_ff @(posedge clk) xq_kbad <= x_kw[2:0] != 0 || x_kw_short || x_kw > 16'd4096;
`ifndef SYNTHESIS
    // The rule as written (min_kulisch_width), against the register C_APPLY reads.
    always_ff @(posedge clk)
        if (!rst && st[C_APPLY]) begin
            logic [15:0] km;
            km = x_terms <= 32'd4 ? 16'd280 : x_terms <= 32'd1 << 10 ? 16'd288 : x_terms <= 32'd1 << 18 ? 16'd296
                 : x_terms <= 32'd1 << 26 ? 16'd304 : 16'd312;
            if (xq_kbad != (x_kw[2:0] != 0 || x_kw < km || x_kw > 16'd4096))
                $error("prism_node: xq_kbad %0d for width %0d, %0d terms", xq_kbad, x_kw, x_terms);
        end
`endif
    // The capability ROM: one record (see the module comment).
    logic caps_ok;
    logic [7:0] xq_apply;
    logic       xq_caps, xq_win_bad, xq_win_big;
    logic [7:0] mtu_bit;
    assign mtu_bit = x_mtu == 16'd576 ? CAPS_MTU_576 : (x_mtu == 16'd1500 ? CAPS_MTU_1500 : CAPS_MTU_9000);
    localparam logic [7:0] ROM_MTUS = MTU >= 9000 ? (CAPS_MTU_576 | CAPS_MTU_1500 | CAPS_MTU_9000)
                                     : (MTU >= 1500 ? (CAPS_MTU_576 | CAPS_MTU_1500) : CAPS_MTU_576);
    assign caps_ok = xq_caps && contribs <= 16'(MAX_CONTRIB) && paths <= 16'(MAX_PATHS);

    // The STAGE checks that read the header and the context only, registered
    // every cycle (the header is stable from DISPATCH; C_APPLY and
    // C_BIND_END come cycles later, and the context changes in neither's
    // frame before them): C_APPLY's answer (ACK_OK: go on to the bindings),
    // the capability match and C_BIND_END's window checks.
    always_ff @(posedge clk) begin
        if (ctx_key_match) xq_apply <= f_gen <= ctx_gen ? ACK_STALE_GENERATION : ACK_BAD_STATE;
        else if (!x_known || x_vlen == 0 || f_bcount == 0 || x_terms == 0) xq_apply <= ACK_INVALID;
        else if (!x_mtu_ok || !x_mtu_run) xq_apply <= ACK_UNSUPPORTED;
        else if (x_acc == ACC_KULISCH_FIXED && xq_kbad) xq_apply <= ACK_INVALID;
        else xq_apply <= ACK_OK;
        xq_caps <= x_in == 8'(FMT_FP32) && x_part == PART_NONE && (x_out == OUT_FP32 || (AUTO_ENABLE != 0 && x_out == OUT_AUTO))
            && (x_acc == ACC_FP32_ARRIVAL || (KULISCH_ENABLE != 0 && x_acc == ACC_KULISCH_FIXED && x_kw >= 16'd280 && x_kw <= 16'(KW)))
            && x_role == ROLE_SINGLE && (ROM_MTUS & mtu_bit) != 0 && x_terms <= 32'(MAX_CONTRIB);
        xq_win_bad <= x_wel < {16'b0, x_single_window} || x_wint == 0 || x_wby < {16'b0, x_mtu} + 32'd14;
        xq_win_big <= x_wel > 32'(WINDOW) || x_wint > 16'(MAX_HELD) || x_wby > 32'(WINDOW_BYTES);
    end

    // The capability records as bytes (CAPS_RESPONSE): record 0 FP32_ARRIVAL,
    // record 1 KULISCH_FIXED (widths 280..KW); the same limits otherwise.
    // Records 2 and 3: the same two policies with AUTO output. A build
    // without AUTO has records 0 and 1, one without KULISCH record 0 only.
    localparam int ROM_RECORDS = AUTO_ENABLE != 0 ? 4 : (KULISCH_ENABLE != 0 ? 2 : 1);
    function automatic logic [7:0] rom_byte(input int rec, input int i);
        logic [7:0] v;
        case (i)
            0: v = 8'(FMT_FP32);
            1: v = rec % 2 == 0 ? ACC_FP32_ARRIVAL : ACC_KULISCH_FIXED;
            16: v = rec % 2 == 0 ? 8'd0 : 8'(280 >> 8);
            17: v = rec % 2 == 0 ? 8'd0 : 8'(280 & 255);
            18: v = rec % 2 == 0 ? 8'd0 : 8'(KW >> 8);
            19: v = rec % 2 == 0 ? 8'd0 : 8'(KW & 255);
            2: v = PART_NONE;
            3: v = rec < 2 ? OUT_FP32 : OUT_AUTO;
            4: v = CAPS_ROLE_SINGLE;
            5: v = CAPS_SEM_REDUCE | CAPS_SEM_ALLREDUCE;
            6: v = ROM_MTUS;
            8, 9, 10, 11: v = 8'hFF;
            15: v = 8'(MAX_CONTRIB);
            21: v = 8'(MAX_CONTRIB);
            23: v = 8'(MAX_PATHS);
            24, 25, 26, 27: v = 8'(WINDOW >> (8 * (27 - i)));
            29: v = 8'(MAX_HELD);
            32, 33, 34, 35: v = 8'(WINDOW_BYTES >> (8 * (35 - i)));
            default: v = 8'd0;
        endcase
        rom_byte = v;
    endfunction
    logic [8*36*ROM_RECORDS-1:0] caps_body;
    always_comb
        for (int r = 0; r < ROM_RECORDS; r++)
            for (int i = 0; i < 36; i++) caps_body[8*(36 * r + i) +: 8] = rom_byte(r, i);

    // One binding record at the view's offset, from the registered view
    // (wv_q): C_BIND takes four phases a binding (bp: 0 the view is
    // registered, 1 the checks are registered and the scan for an earlier
    // binding of the same stream or local endpoint starts, 2 until the scan
    // is done, then its answer and the rest in bd_bad_q, 3 the binding is
    // applied and the next one's offset given), so neither the checks nor
    // the tables' writes sit behind the frame buffer's view (they were up
    // to 17 levels with it, the switch's deepest paths). The bindings so
    // far are in a block RAM (b_mem: stream and local endpoint), read one a
    // cycle: a binding takes bi + 5 cycles (4 before). STAGE is a control path: cycles
    // there cost nothing on DATA, and the MAX_BINDINGS earlier bindings
    // compared at once were about 2k LUTs in flip-flops and compares.
    logic [7:0]  bd_dir, bd_kind;
    logic [15:0] bd_stream, bd_lep, bd_pep, bd_port, bd_rank, bd_terms;
    logic [47:0] bd_mac;
    logic        bd_bad, bd_bad1, bd_bad_q;
    logic        bs_go, bs_on, bs_rv, bd_dup, bs_busy;
    logic [BB-1:0] bs_i;
    logic [31:0] bs_rd;              // b_mem's word read in the cycle before: {stream, local endpoint}
    logic        b_we;               // C_BIND applies the binding (bp 3): bi's word
    assign bs_go = st[C_BIND] && bp == 2'd1;
    assign b_we = st[C_BIND] && bp == 2'd3 && !bd_bad_q;
    assign bs_busy = bs_go || bs_on || bs_rv;
    prism_ram_sdp #(.W(32), .DEPTH(BSLOTS), .STYLE(0)) b_mem (
        .clk, .we(b_we), .waddr(BB'(bi)), .wdata({bd_stream, bd_lep}),
        .re(bs_on), .raddr(bs_i), .orst(1'b0), .rdata(bs_rd)
    );
    always_ff @(posedge clk) begin
        if (rst) begin
            bs_on <= 1'b0;
            bs_rv <= 1'b0;
        end else begin
            if (bs_go) begin
                bs_i <= '0;
                bs_on <= bi != 16'd0;
            end else if (bs_on) begin
                bs_i <= bs_i + 1'b1;
                if (16'(bs_i) + 16'd1 == bi) bs_on <= 1'b0;
            end
            bs_rv <= bs_on;
        end
        if (bs_go) bd_dup <= 1'b0;
        else if (bs_rv && (bs_rd[31:16] == bd_stream || bs_rd[15:0] == bd_lep)) bd_dup <= 1'b1;
        bd_bad1 <= bd_bad;
        bd_bad_q <= bd_bad1 || bd_dup;
    end
    // PREWALK's records (PROGRESS holes, STAGE bindings' reserved bits,
    // capability records) the same way, from wv_q in three cycles a record
    // (bp), after a first cycle (pw_seek) that moves the view to them: the
    // record's refusal (pw_bad_q) and a hole's end (pw_he2_q), registered.
    logic        pw_seek, pw_bad_q;
    logic [32:0] pw_he2_q;
    // Past the last record, from bi and off as they are in bp 0 (an add,
    // a compare and their select into st were 9.00 levels).
    logic        pw_end_q;
    logic [15:0] pw_lim;             // the records' end (below)
    // A record's length, a register (selected in the step's cycle, it was
    // in front of the add into the frame buffer's read address: 8.00 levels).
    logic [15:0] pw_step;
    always_ff @(posedge clk) pw_step <= f_class == CLASS_PROGRESS ? HOLE_LEN : (f_cmd == CMD_STAGE ? BINDING_LEN : CAPS_RECORD_LEN);
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && st[PREWALK] && !pw_seek && (pw_step != (f_class == CLASS_PROGRESS ? HOLE_LEN : (f_cmd == CMD_STAGE ? BINDING_LEN : CAPS_RECORD_LEN))
                                                || pw_lim != CONTROL_BODY + f_body_len))
            $error("prism_node: pw_step or pw_lim is not this frame's");
`endif
    // The records' end (a register: the header is the frame's from DISPATCH on).
    always_ff @(posedge clk) begin
        pw_lim <= CONTROL_BODY + f_body_len;
        pw_end_q <= f_class == CLASS_PROGRESS ? bi == `PN_B16(hdr, 56)
                    : f_cmd == CMD_STAGE ? bi == f_bcount
                    : f_cmd == CMD_CAPS_RESPONSE ? off >= pw_lim : 1'b1;
    end
    // A hole's end past 2^32 (he2 > 2^32): the add's carry and its low
    // bits not all zero, the zero test made without the carries (a + b is 0
    // mod 2^32 when every bit's carry in, a ^ b, is the bit below's carry
    // out, a | b): after the add, the 32-bit zero test was 6.50 levels.
    logic h_zero;
    always_comb begin
        logic [31:0] ha, hb;
        ha = `PN_B32(wv_q, 0);
        hb = `PN_B32(wv_q, 4);
        h_zero = ha[0] == hb[0] && ((ha[30:0] | hb[30:0]) == (ha[31:1] ^ hb[31:1]));
    end
    always_ff @(posedge clk) begin
        logic [32:0] hf, he2;
        hf = {1'b0, `PN_B32(wv_q, 0)};
        he2 = hf + {1'b0, `PN_B32(wv_q, 4)};
        pw_he2_q <= he2;
`ifndef SYNTHESIS
        if (!rst && h_zero != (he2[31:0] == 0)) $error("prism_node: h_zero %0d is not %0d + %0d == 0 mod 2^32", h_zero, hf, he2 - hf);
`endif
        if (f_class == CLASS_PROGRESS) pw_bad_q <= `PN_B32(wv_q, 4) == 0 || hf < pos || (he2[32] && !h_zero);
        else if (f_cmd == CMD_STAGE) pw_bad_q <= (wv_q[7:0] & DIR_RESERVED) != 0;
        else pw_bad_q <= wv_q[8*7 +: 8] != 0;
    end
    always_comb begin
        bd_dir    = wv_q[7:0];
        bd_kind   = wv_q[15:8];
        bd_stream = `PN_B16(wv_q, 2);
        bd_lep    = `PN_B16(wv_q, 4);
        bd_pep    = `PN_B16(wv_q, 6);
        bd_mac    = {`PN_B16(wv_q, 8), `PN_B32(wv_q, 10)};
        bd_port   = `PN_B16(wv_q, 14);
        bd_rank   = `PN_B16(wv_q, 16);
        bd_terms  = `PN_B16(wv_q, 18);
        // The binding is refused (C_BIND), but for a duplicate (bd_dup).
        bd_bad = $signed(32'(bd_port)) >= PORTS || !(bd_kind == PEER_RANK || bd_kind == PEER_SWITCH) || bd_dir == 0;
        if (x_role == ROLE_SINGLE && (bd_kind != PEER_RANK || (bd_dir & (DIR_DATA_OUT | DIR_RESULT_IN)) != 0)) bd_bad = 1'b1;
        if ((bd_dir & DIR_RESULT_OUT) != 0 && x_sem == SEM_REDUCE && bd_rank != x_dest) bd_bad = 1'b1;
        if (x_sem == SEM_ALLREDUCE && (bd_dir & DIR_DATA_IN) != 0 && bd_kind == PEER_RANK && (bd_dir & DIR_RESULT_OUT) == 0) bd_bad = 1'b1;
    end

    // DATA: the frame's contributor and its held packets (prism_held_table,
    // below the engine's DATA checks). The contributor is looked up from the
    // header every cycle and its row of the table registered, so D_CHK, a
    // cycle or more after DISPATCH, registers the checks' conditions from
    // registers and D_OP decides on those. Only C_INSTALL,
    // D_OP and the window's release write the table; a release and an
    // admission's coverage take a few cycles, so D_CHK waits for hd_quiet
    // and D_READY for hd_settled (CONTROL for both).
    logic        c_found, hd_hit, hd_same, hd_overlap;
    logic        hd_quiet, hd_bexact, hd_settled;   // the row is the table; its bytes too; readiness has every admission
    logic [15:0] ct_lep, ct_pep, ct_port, hd_count;
    logic [47:0] ct_mac;
    logic [31:0] ct_bytes;
    // Every element below `ready_now` is delivered by every contributor.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [32:0] ready_now;          // (AUTO's rounder reads it; its lookahead reads hd_least)
    /* verilator lint_on UNUSEDSIGNAL */
    logic [32:0] hd_least;           // the least coverage alone

    // ---------------------------------------------------------------- AUTO
    // The lossless encoder of docs/wire-format.md section 8: a value decided
    // every three cycles (A_PLAN, A_FIT, A_REC) from the choice prism_auto_plan
    // worked out ahead for its position (the eight-value lookahead, from
    // the rounded store), the packet's groups kept until it closes; then its
    // body is written a value a cycle (a slot read is at rest at its next
    // lap: prism_ring's tags) by
    // prism_auto_body into egress's AUTO lines and handed to egress, which sends the same
    // bytes on every path.
    //
    // The rounded store. A background rounder reads LOOK ring slots a cycle
    // as they complete and writes each value's FP32 rounding and exactness
    // into rs (KULISCH_FIXED: LOOK prism_kulisch_round_pipe, R_LAT cycles
    // later; FP32_ARRIVAL: the value itself, at once), in element order up
    // to ro_done. A slot is complete below rr_lim, the readiness (ready_now)
    // sampled when every run for the slots below it has been dispatched (not
    // while a frame's runs are being dispatched: coverage moves at the end
    // of its D_OP cycle and readiness a cycle later, both before its runs
    // end), and once no sum for it is in flight (hazard query 1). rs is
    // prism_auto_store (block RAM, a registered read). It is the planner
    // producer's (one window a cycle, from pp, once the store holds it)
    // except in A_EMIT, which reads a cycle ahead the FP32 value it emits;
    // a Kulisch group's state and integer come from the ring (au_slot 0,
    // then base + e_k).
    localparam int LOOK = 8;
    localparam int OB = 64 * ((MTU - 42 + 63) / 64 + 1);   // body bytes, line-padded
    logic [15:0] a_i;                // values of the packet decided so far (from base)
    logic        a_open;             // a group is open
    logic [2:0]  a_f;                // its format index (INT8, FP16, BF16, FP32, KULISCH)
    logic [16:0] a_bytes, a_count;   // its value bytes and values
    logic [15:0] a_used;             // body bytes so far (open group's padding not yet)
    logic [8:0]  a_ng;               // groups in the packet
    logic [2:0]  a_gf [256];
    logic [15:0] a_gc [256];
    // The AUTO body's writes into egress's lines (prism_auto_body).
    localparam int OBA = $clog2(FB_LINES) - 1;
    logic            ob_we;
    logic [OBA-1:0]  ob_addr_e, ob_addr_o;
    logic [DATA_W-1:0] ob_data_e, ob_data_o;
    // Emission.
    logic [8:0]  e_g;                // group being written
    logic [15:0] e_k, e_off;         // value in packet, byte offset
    logic        e_end;              // e_g == a_ng: every group is written
    // The group being written, taken from a_gf / a_gc in its descriptor's
    // cycle: its format, width, width plus its padding (after its last
    // value), values left after this one, and whether this is its last.
    logic [2:0]  ge_f;
    logic [15:0] ge_w, ge_wp, e_left;
    logic        em_last;
    logic        e_desc;             // the group's descriptor is written
    // The slot after the value's (base + e_k + 1), a register counted with
    // e_k (base does not move in A_EMIT), and the slot A_EMIT reads a cycle
    // ahead (e_rd: base + e_k + 1 after a descriptor, else base + e_k), a
    // register too, from the emission's own steps: the ring's egress slot
    // is then a select of registers by registers. Both with their lap (bit
    // RB: prism_ring's tags). (As an add behind e_desc into the ring's
    // flags, 6.25 levels; as a select of two slots by e_desc and e_end,
    // 6.50 across the ring's row and flag selects.)
    logic [RB:0]   e_slot1;          // with its lap (bit RB)
    /* verilator lint_off UNUSEDSIGNAL */
    logic [RB:0]   e_rd;             // (AUTO's reads: none without AUTO_ENABLE)
    /* verilator lint_on UNUSEDSIGNAL */
    always_ff @(posedge clk)
        if (st_emit) begin
            if (!e_end && e_desc) e_slot1 <= e_slot1 + (RB + 1)'(1);
            // The next cycle's value: after a descriptor its group's first
            // (e_k + 1 with e_desc set); after a group's last value the next
            // descriptor's or the end's (e_k + 1, e_desc clear); after any
            // other value the next (e_k + 2).
            if (!e_end) e_rd <= !e_desc || em_last ? e_slot1 : e_slot1 + (RB + 1)'(1);
        end else begin
            e_slot1 <= (RB + 1)'(base + 33'd1);
            e_rd <= (RB + 1)'(base);
        end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && st_emit && (e_slot1 != (RB + 1)'(base + {17'b0, e_k} + 33'd1)
                                || e_rd != (RB + 1)'(base + {17'b0, e_k} + {32'b0, e_desc && !e_end})))
            $error("prism_node: e_slot1 or e_rd is not base + e_k (+ 1 after a descriptor) in A_EMIT");
`endif

    // AUTO's reads of the ring (its egress run, which the builder does not
    // use in an AUTO context): the rounder's LOOK slots from ro_ptr, or in
    // A_EMIT the slot of the value the next cycle emits (read a cycle ahead;
    // its data comes EG_LAT cycles after the read, with the value's
    // registers em2_*, below, a cycle behind the emission's state; the body
    // writer's stages follow). au_* is the data, EG_LAT cycles after the read.
    logic [RB-1:0] au_slot, au_qslot;   // the read's first slot, and the rounder's (hazard query 1)
    logic          au_lap;           // au_slot's element's lap (prism_ring's tags)
    logic [RB:0]   au_qend;          // the rounder's query's end and wrap (its slot plus ro_n, in phase 2)
    logic [RN_W-1:0] au_qn;          // its count: ro_n in phase 2, else no query
    logic [RN_W-1:0] au_n;           // slots read (0: none)
    logic [LOOK*32-1:0] au_acc;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [DATA_W-1:0] eg_round;     // the egress's roundings of its ring data (AUTO's, in its contexts)
    logic [DATA_W/32-1:0] eg_round_x;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [RKW-1:0]     au_acck;     // the first value's Kulisch integer and flags (the body writer's)
    logic [4:0]         au_accf;
    assign au_acc = eg_acc[LOOK*32-1:0];
    assign au_acck = eg_k0;
    assign au_accf = eg_f0;
    logic [31:0] au_v0;              // the emitted value's FP32 rounding, from rs (read a cycle ahead)
    logic [RN_W-1:0] ro_n;           // slots the rounder's next read takes (a register: its hazard query's count)
    logic        ro_pend;            // rounding still to do or in flight (CONTROL waits for it, as for the lanes)
    // The planner's queue (prism_auto_plan): its head is the choice at
    // base + a_i for every state the encoder can be in there.
    logic        pl_valid, pl_pop;
    logic [2:0]  pl_nf;
    logic [19:0] pl_cont;
    logic        pl_wait;            // the queue will reach base + a_i without another frame
    logic        pl_wait_ok;         // pl_wait is this cycle's (no pop or install in the last two cycles)
    // The lookahead's wait from registers: the held table compares the
    // least coverage with pw_m (min(pq8, the vector's end), registered) as
    // it registers the least (hd_ge_x), so pl_wait is an AND of registers;
    // its compares were 7.00-7.25 levels into st. The answer is this
    // cycle's once pq has not moved for two cycles (pl_wait_ok); A_PLAN
    // waits for that before it decides the lookahead needs another frame.
    logic [32:0] pw_m;
    logic        hd_ge_x;
    logic        pl_end;             // base + a_i is the vector's end
    generate
        if (AUTO_ENABLE != 0) begin : g_auto
            logic [RB-1:0] rs_ra;
            logic [LOOK*33-1:0] rs_win;
            logic        w_en;
            logic [RB-1:0] w_at;
            logic [$clog2(LOOK+1)-1:0] w_n;   // a rounder's read is at most LOOK slots
            logic [LOOK*33-1:0] w_data;
            // The write registered before the store (from the egress's
            // read, the select and the store's bank rotation were 8.00
            // levels into its memories): ro_done follows the registered write.
            logic        w_en_q;
            logic [RB-1:0] w_at_q;
            logic [$clog2(LOOK+1)-1:0] w_n_q;
            logic [LOOK*33-1:0] w_data_q;
            logic [32:0] w_end_q;
            logic [32:0] ro_ptr, rr_lim;
            logic [4:0]  ro_room;    // slots left in ro_ptr's block
            logic [32:0] ro_done;    // the store holds every value below this (a read this cycle sees them)
            logic        ro_go;
            // The rounder reads in four phases, each from registers: 0
            // its count (ro_n, from ro_ptr and rr_lim), 1 its end (ro_ptr_n),
            // 2 its hazard query on the lanes' runs in flight (answer in
            // ro_hit), 3 the read. In one cycle they were the switch's
            // deepest path, 16.25 levels from the trackers' registers into
            // the ring's read enables; in three, the query's subtract and
            // compare were 7.00 levels into ro_hit (its end a register, the
            // tracker compares slots). The answer of phase 2 holds in phase
            // 3: the slots are below rr_lim, so no run for them can be
            // pushed any more, and a run in flight can only land. At most
            // LOOK values in four cycles is still faster than the planner
            // takes them (one in three).
            logic [1:0]  ro_ph;
            logic        ro_hit;
            logic [RN_W-1:0] ro_nc;
            // After the ring's read (RL stages: the read, then the rounding):
            // FP32_ARRIVAL values are written EG_LAT cycles after (ro_fv),
            // KULISCH_FIXED roundings RL cycles after (ro_v).
            logic [EG_LAT-1:0] ro_fv;
            logic [RL-1:0] ro_v;
            logic [RB-1:0] ro_at [RL];   // the read's first slot (the store's write address)
            logic [32:0] ro_e [RL];  // the read's end, added as the read goes out
            logic [32:0] w_end;
            logic [RN_W-1:0] ro_nn [RL];
            logic [31:0] ro_kr [LOOK];
            logic        ro_kx [LOOK];
            // The planner's producer: position pp is taken by the plan
            // (pr_go) as its window is read from rs, which the plan gets the
            // cycle after.
            logic [32:0] pp, pp8;    // pp8 = pp + LOOK
            logic [32:0] pp9;        // pp + LOOK + 1
            logic        pr_ok_q;    // pp's window is in the store (below)
            logic        pr_go, pl_ready;
            logic [$clog2(LOOK+1)-1:0] pr_n;
            // The queue's head, base + a_i, counted as the plan pops (a
            // register: from base + a_i, an add and a compare came before
            // the wait's, 9.50 levels into st); pq8 = pq + LOOK.
            logic [32:0] pq, pq8;
            // pl_end as a register: pq == the vector's end, worked out as pq
            // moves (from pq + 1, a register too). The compare behind pq was
            // 6.25 levels into st's enable in the whole switch.
            logic [32:0] pq1;
            logic        pl_end_q;
            logic        pq_lt_q;    // pq < the vector's end, a cycle late
            logic [1:0]  pw_pop;     // pq moved (a pop or an install) one and two cycles ago
            always_ff @(posedge clk)
                if (rst || st[C_INSTALL]) begin
                    pq <= '0;
                    pq1 <= 33'd1;
                    pq8 <= 33'(LOOK);
                    pl_end_q <= !rst && x_vlen == 32'd0;
                end else if (pl_pop) begin
                    pq <= pq1;
                    pq1 <= pq1 + 33'd1;
                    pq8 <= pq8 + 33'd1;
                    pl_end_q <= pq1 == {1'b0, ctx_vlen};
                end
            assign pl_end = pl_end_q;
`ifndef SYNTHESIS
            always_ff @(posedge clk)
                if (!rst && ctx_valid && (pl_end_q != (pq == {1'b0, ctx_vlen}) || pq1 != pq + 33'd1))
                    $error("prism_node: the AUTO plan's end flag %0d is not pq %0d == the vector's end %0d", pl_end_q, pq, ctx_vlen);
`endif
            // Phase 0's count from a register: rr_lim - ro_ptr worked out
            // in phase 3 for the ro_ptr phase 0 has (after the read, when
            // ro_go: ro_ptr_n = ro_ptr + ro_n), both differences side by
            // side. rr_lim is then a cycle old; it only grows, so the count
            // is at most the truth. (The subtract and the compares behind
            // it in phase 0 were 8.00 levels into ro_n.)
            logic [33:0] ro_av_q;
            logic [32:0] ro_ptr_n;
            // ro_ptr < rr_lim as a register: this cycle's ro_ptr against
            // rr_lim's next value (ready_now = max(hd_least, base) outside
            // D_DESC and D_RUN), the compares side by side and the select
            // last. After a read (ro_go) it is a cycle behind ro_ptr's move,
            // and then the read itself is in flight (ro_v or ro_fv), so
            // ro_pend is as from the compare. (Behind the compare of the
            // two, ro_pend into CONTROL's wait, ctl_idle_q, was 6.25 levels;
            // with ro_ptr's next value beside it, 6.50.)
            logic        ro_lt_q;
            always_ff @(posedge clk)
                if (rst || st[C_INSTALL]) ro_lt_q <= 1'b0;
                else if (!st[D_DESC] && !st[D_RUN]) ro_lt_q <= ro_ptr < hd_least || ro_ptr < base;
                else ro_lt_q <= ro_ptr < rr_lim;
`ifndef SYNTHESIS
            always_ff @(posedge clk)
                if (!rst && ro_pend != (ro_v != 0 || ro_fv != 0 || w_en_q || (ctx_valid && ctx_auto && ro_ptr < rr_lim)))
                    $error("prism_node: ro_pend from ro_lt_q is not ro_pend from ro_ptr < rr_lim");
`endif
            always_ff @(posedge clk) begin
                logic [33:0] a0, a1;
                a0 = {1'b0, rr_lim} - {1'b0, ro_ptr};
                a1 = {1'b0, rr_lim} - {1'b0, ro_ptr_n};
                ro_ptr_n <= ro_ptr + 33'(ro_n);
                ro_av_q <= rst || st[C_INSTALL] ? '0 : (ro_go ? a1 : a0);
            end
            always_comb begin
                logic [RN_W-1:0] la;
                logic            none, many;
                // Up to LOOK slots, inside one of the ring's egress blocks
                // (LANES slots): the roundings of a read come from its block.
                ro_room = 5'(LANES) - 5'(ro_ptr[3:0]);
                none = ro_av_q[33] || ro_av_q == '0;
                many = ro_av_q[32:$clog2(LOOK)+1] != '0;
                la = many ? RN_W'(LOOK) : (ro_av_q[$clog2(LOOK):0] > ($clog2(LOOK)+1)'(LOOK) ? RN_W'(LOOK) : RN_W'(ro_av_q[$clog2(LOOK):0]));
                ro_nc = RN_W'(ro_room) < la ? RN_W'(ro_room) : la;
                if (none) ro_nc = '0;
                // Emission has the ring's AUTO port; hz_hit[1] is the query on the rounder's slots.
                ro_go = ro_ph == 2'd3 && ctx_valid && ctx_auto && !st_emit && ro_n != 0 && !ro_hit;
                ro_pend = ro_v != 0 || ro_fv != 0 || w_en_q || (ctx_valid && ctx_auto && ro_lt_q);
            end
            // A_EMIT reads a cycle ahead: the slot of the value emitted next
            // cycle (after a value, the next value; after a descriptor, its
            // group's first), when the next cycle emits a value; its data
            // comes with that value's registers (em2_*). Otherwise the store
            // is the producer's: a position once its LOOK values (fewer at
            // the vector's end) are in the store, while the queue has room.
            logic        e_val_next;
            always_comb begin
                e_val_next = !e_end && (!e_desc || !em_last);
                au_qslot = RB'(ro_ptr);
                au_qend = {ro_ptr_n[RB] ^ ro_ptr[RB], ro_ptr_n[RB-1:0]};
                au_qn = ro_ph == 2'd2 ? ro_n : '0;
                au_slot = st_emit ? RB'(e_rd) : RB'(ro_ptr);
                au_lap = st_emit ? e_rd[RB] : ro_ptr[RB];
                au_n = st_emit ? RN_W'(e_val_next) : (ro_go ? ro_n : '0);
                pr_go = ctx_valid && ctx_auto && !st_emit && !st[C_INSTALL] && pl_ready && pr_ok_q;
                rs_ra = st_emit ? RB'(e_rd) : RB'(pp);
                // The queue's head comes without another frame once
                // readiness covers its window. ready_now is max(hd_least,
                // base), so each compare with it is the least coverage's (a
                // register) or base's: base is below pq + LOOK, and at or
                // above the vector's end only where pq is too. (From
                // ready_now, the table's compare and select came first.)
                pl_wait = pq_lt_q && hd_ge_x;
            end
            always_ff @(posedge clk) begin
                pw_m <= pq8 < {1'b0, ctx_vlen} ? pq8 : {1'b0, ctx_vlen};
                pq_lt_q <= pq < {1'b0, ctx_vlen};
                pw_pop <= {pw_pop[0], rst || st[C_INSTALL] || pl_pop};
            end
            assign pl_wait_ok = pw_pop == 2'b00;
`ifndef SYNTHESIS
            always_ff @(posedge clk)
                if (!rst && ctx_auto && pl_wait_ok && pl_wait != (pq < {1'b0, ctx_vlen} && (ready_now >= pq + 33'(LOOK) || ready_now >= {1'b0, ctx_vlen})))
                    $error("prism_node: pl_wait is not the lookahead's wait from ready_now");
            // The queue's head is the value the planner decides.
            always_ff @(posedge clk)
                if (!rst && ctx_auto && !st[C_INSTALL] && (pq != base + {17'b0, a_i} || pq8 != pq + 33'(LOOK)))
                    $error("prism_node: the AUTO plan's head %0d is not base + a_i %0d", pq, base + {17'b0, a_i});
`endif
            // The store's one write port: FP32_ARRIVAL values as read,
            // KULISCH_FIXED roundings as they leave the pipes.
            always_comb begin
                w_en = ctx_kulisch ? ro_v[RL-1] : ro_fv[EG_LAT-1];
                w_at = ctx_kulisch ? ro_at[RL-1] : ro_at[EG_LAT-1];
                w_n = w_en ? $clog2(LOOK+1)'(ctx_kulisch ? ro_nn[RL-1] : ro_nn[EG_LAT-1]) : '0;
                w_end = ctx_kulisch ? ro_e[RL-1] : ro_e[EG_LAT-1];
                for (int g = 0; g < LOOK; g++)
                    w_data[33*g +: 33] = ctx_kulisch ? {ro_kx[g], ro_kr[g]} : {1'b1, au_acc[32*g +: 32]};
            end
            prism_auto_store #(.RING(RING), .N(LOOK), .W(33)) rs (
                .clk, .we(w_en_q), .waddr(w_at_q), .wn(w_n_q), .wdata(w_data_q), .raddr(rs_ra), .rdata(rs_win));
            always_ff @(posedge clk) begin
                w_en_q <= !rst && !st[C_INSTALL] && w_en;
                w_at_q <= w_at;
                w_n_q <= w_n;
                w_data_q <= w_data;
                w_end_q <= w_end;
            end
            assign au_v0 = rs_win[31:0];
            // Whether pp's window is in the store, registered from pp's and
            // ro_done's next values (the compares in pr_go, then the plan's
            // credit count, were 8.75 levels): each compare is of registers
            // (pp_lt and pp1_lt kept with pp; ro_done's next value, w_end_q
            // or ro_done, each compared), pr_go and w_en_q picking after
            // them (the select of ro_done's next value before the compares
            // was 6.50 levels).
            // The four outcomes are whole before the select, a prism_mux4
            // of its own, each one compare and flags: the compares with
            // the value count are registers kept with their operands (pp_lt
            // and pp1_lt with pp, rd_ge with ro_done, we_ge with
            // w_end_q; ctx_vlen changes only in C_INSTALL, where they are
            // set afresh). With three compares a candidate, ABC put two
            // compares' chains and the select in one path of 6.50 to 7.00.
            logic ok_gw, ok_gr, ok_nw, ok_nr, pr_ok_n;
            logic pp_lt, pp1_lt, rd_ge, we_ge;
            logic [32:0] pp2;
            // The window compares are registers too (c_r8: ro_done >= pp8,
            // c_w9: w_end_q >= pp9, ...), each from its operands' next
            // values: ro_done's is w_end_q or itself, pp8's pp9 or itself,
            // so most are last cycle's flags, picked; the rest compare
            // registers (pp10, and the two sources of w_end) and pick
            // after. The c_w* are read only when w_en_q (never the cycle
            // after C_INSTALL, so they need no reset value).
            logic c_r8, c_r9, c_w8, c_w9, c_r8_n, c_r9_n, c_w8_n, c_w9_n;
            logic [32:0] pp10;
            always_comb begin
                ok_gw = pp1_lt && (c_w9 || we_ge);
                ok_gr = pp1_lt && (c_r9 || rd_ge);
                ok_nw = pp_lt && (c_w8 || we_ge);
                ok_nr = pp_lt && (c_r8 || rd_ge);
            end
            prism_mux4 #(.W(1)) c_r8_sel (.d({c_w9, c_w8, c_r9, c_r8}), .s({w_en_q, pr_go}), .y(c_r8_n));
            prism_mux4 #(.W(1)) c_r9_sel (.d({w_end_q >= pp10, c_w9, ro_done >= pp10, c_r9}), .s({w_en_q, pr_go}), .y(c_r9_n));
            prism_mux4 #(.W(1)) c_w8_sel (.d({ro_e[RL-1] >= pp9, ro_e[EG_LAT-1] >= pp9, ro_e[RL-1] >= pp8, ro_e[EG_LAT-1] >= pp8}),
                                          .s({pr_go, ctx_kulisch}), .y(c_w8_n));
            prism_mux4 #(.W(1)) c_w9_sel (.d({ro_e[RL-1] >= pp10, ro_e[EG_LAT-1] >= pp10, ro_e[RL-1] >= pp9, ro_e[EG_LAT-1] >= pp9}),
                                          .s({pr_go, ctx_kulisch}), .y(c_w9_n));
            always_ff @(posedge clk) begin
                c_w8 <= c_w8_n;
                c_w9 <= c_w9_n;
                if (rst || st[C_INSTALL]) begin
                    c_r8 <= 1'b0;          // ro_done 0, below pp8 = LOOK
                    c_r9 <= 1'b0;
                    pp10 <= 33'(LOOK + 2);
                end else begin
                    c_r8 <= c_r8_n;
                    c_r9 <= c_r9_n;
                    if (pr_go) pp10 <= pp10 + 33'd1;
                end
            end
`ifndef SYNTHESIS
            always_ff @(posedge clk)
                if (!rst && ctx_valid && !st[C_INSTALL]
                    && (c_r8 != (ro_done >= pp8) || c_r9 != (ro_done >= pp9) || pp10 != pp9 + 33'd1
                        || (w_en_q && (c_w8 != (w_end_q >= pp8) || c_w9 != (w_end_q >= pp9)))))
                    $error("prism_node: the plan's window compares (%0d %0d %0d %0d) are not their compares", c_r8, c_r9, c_w8, c_w9);
`endif
            always_ff @(posedge clk) begin
                we_ge <= w_end >= {1'b0, ctx_vlen};
                if (rst || st[C_INSTALL]) begin
                    pp2 <= 33'd2;
                    pp_lt <= x_vlen != 0;
                    pp1_lt <= x_vlen > 32'd1;
                    rd_ge <= x_vlen == 0;
                end else begin
                    if (pr_go) begin
                        pp2 <= pp2 + 33'd1;
                        pp_lt <= pp1_lt;
                        pp1_lt <= pp2 < {1'b0, ctx_vlen};
                    end
                    if (w_en_q) rd_ge <= we_ge;
                end
            end
`ifndef SYNTHESIS
            always_ff @(posedge clk)
                if (!rst && ctx_valid && !st[C_INSTALL]
                    && (pp_lt != (pp < {1'b0, ctx_vlen}) || pp1_lt != (pp + 33'd1 < {1'b0, ctx_vlen}) || pp2 != pp + 33'd2
                        || rd_ge != (ro_done >= {1'b0, ctx_vlen}) || (w_en_q && we_ge != (w_end_q >= {1'b0, ctx_vlen}))))
                    $error("prism_node: the plan's window flags (%0d %0d %0d %0d) are not their compares", pp_lt, pp1_lt, rd_ge, we_ge);
`endif
            prism_mux4 #(.W(1)) pr_ok_sel (.d({ok_gw, ok_gr, ok_nw, ok_nr}), .s({pr_go, w_en_q}), .y(pr_ok_n));
            // (Reset and C_INSTALL as the register's reset, off the D path.)
            always_ff @(posedge clk)
                if (rst || st[C_INSTALL]) pr_ok_q <= 1'b0;
                else pr_ok_q <= pr_ok_n;
`ifndef SYNTHESIS
            always_ff @(posedge clk)
                if (!rst && ctx_valid && ctx_auto && !st[C_INSTALL]
                    && pr_ok_q != (pp < {1'b0, ctx_vlen} && (ro_done >= pp8 || ro_done >= {1'b0, ctx_vlen})))
                    $error("prism_node: pr_ok_q is not whether the plan's window is in the store");
`endif
            always_ff @(posedge clk) begin
                pr_n <= pp8 > {1'b0, ctx_vlen} ? $clog2(LOOK+1)'({1'b0, ctx_vlen} - pp) : $clog2(LOOK+1)'(LOOK);
                if (rst || st[C_INSTALL]) begin
                    pp <= '0;
                    pp8 <= 33'(LOOK);
                    pp9 <= 33'(LOOK + 1);
                end else if (pr_go) begin
                    pp <= pp + 33'd1;
                    pp8 <= pp8 + 33'd1;
                    pp9 <= pp9 + 33'd1;
                end
            end
            prism_auto_plan #(.LOOK(LOOK)) plan (
                .clk, .rst(rst || st[C_INSTALL]), .kulisch(ctx_kulisch), .kwf(ctx_kwf),
                .s_valid(pr_go), .s_ready(pl_ready), .s_win(rs_win), .s_n(pr_n),
                .m_valid(pl_valid), .m_ready(pl_pop), .m_nf(pl_nf), .m_cont(pl_cont));
            // The roundings are the egress's rounding units': they round
            // whatever the ring's egress port gives, and in an AUTO context
            // the builder does not read it, so the first LOOK of them round
            // AUTO's reads, R_LAT cycles after its data (au_*).
            always_comb
                for (int g = 0; g < LOOK; g++) begin
                    ro_kr[g] = eg_round[32*g +: 32];
                    ro_kx[g] = eg_round_x[g];
                end

            // The rounder's state. A STAGE's install starts from element 0
            // (CONTROL waits for ro_pend).
            always_ff @(posedge clk) begin
                ro_at[0] <= RB'(ro_ptr);
                ro_nn[0] <= ro_n;
                ro_e[0] <= ro_ptr + 33'(ro_n);
                for (int i = 1; i < RL; i++) begin
                    ro_at[i] <= ro_at[i-1];
                    ro_nn[i] <= ro_nn[i-1];
                    ro_e[i] <= ro_e[i-1];
                end
                if (rst || st[C_INSTALL]) begin
                    ro_v <= '0;
                    ro_fv <= '0;
                    ro_ptr <= '0;
                    ro_done <= '0;
                    rr_lim <= '0;
                    ro_ph <= '0;
                    ro_n <= '0;
                    ro_hit <= 1'b1;
                end else begin
                    ro_ph <= ro_ph + 2'd1;
                    if (ro_ph == 2'd0) ro_n <= ro_nc;
                    if (ro_ph == 2'd2) ro_hit <= hz_hit[1];
                    ro_v <= RL'({ro_v, ro_go && ctx_kulisch});
                    ro_fv <= EG_LAT'({ro_fv, ro_go && !ctx_kulisch});
                    if (ro_go) ro_ptr <= ro_ptr + 33'(ro_n);
                    if (w_en_q) ro_done <= w_end_q;
                    if (!st[D_DESC] && !st[D_RUN]) rr_lim <= ready_now;
                end
            end
`ifndef SYNTHESIS
            // Phase 0's count is the count from rr_lim as it was a cycle
            // before (the one from this cycle's rr_lim when it has not moved).
            logic [32:0] rr_lim_d;
            always_ff @(posedge clk) begin
                logic [32:0] av;
                logic [RN_W-1:0] c;
                rr_lim_d <= rr_lim;
                av = rr_lim_d - ro_ptr;
                c = av > 33'(LOOK) ? RN_W'(LOOK) : RN_W'(av);
                if (c > RN_W'(ro_room)) c = RN_W'(ro_room);
                if (ro_ptr >= rr_lim_d) c = '0;
                if (!rst && !st[C_INSTALL] && ro_ph == 2'd0 && ctx_valid && ctx_auto && rr_lim_d <= rr_lim && ro_nc != c)
                    $error("prism_node: the rounder's count %0d is not %0d (rr_lim a cycle before)", ro_nc, c);
            end
            always_ff @(posedge clk) begin
                if (!rst && pr_go && RB'(pp) == RB'(ro_done) && ro_done < {1'b0, ctx_vlen})
                    $error("prism_node: the AUTO plan read a window the store does not hold");
            end
`endif
        end else begin : g_no_auto
            assign au_slot = '0;
            assign au_lap = 1'b0;
            assign au_qslot = '0;
            assign au_qend = '0;
            assign au_qn = '0;
            assign au_n = '0;
            assign au_v0 = '0;
            assign ro_n = '0;
            assign ro_pend = 1'b0;
            assign pl_valid = 1'b0;
            assign pl_nf = '0;
            assign pl_cont = '0;
            assign pl_wait = 1'b0;
            assign pl_wait_ok = 1'b1;
            assign pw_m = '0;
            assign pl_end = 1'b0;
        end
    endgenerate

    /* verilator lint_off UNUSEDSIGNAL */
    function automatic logic [15:0] pad4(input logic [16:0] b);
        pad4 = {14'b0, 2'(3'd4 - {1'b0, b[1:0]})};
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // Bytes a value takes in each format.
    function automatic logic [15:0] fw(input int f);
        case (f)
            0: fw = 16'd1;
            1, 2: fw = 16'd2;
            3: fw = 16'd4;
            default: fw = 16'd2 + {7'b0, ctx_kwf};
        endcase
    endfunction
    logic [15:0] fwv [5];
    always_comb for (int f = 0; f < 5; f++) fwv[f] = fw(f);

    // The planner's step for value a_i, in three cycles. A_PLAN takes the
    // choice for the encoder's state from the queue's head (pd_*); A_FIT
    // works out whether it fits the packet's budget; A_REC records it (and
    // pops the head) or closes the packet.
    //
    // The fit: the body bytes before the value (pd_x: a_used, or for a new
    // group a_used, the open group's padding and a descriptor), its width
    // and its group's padding after it at most the budget; a compare of a
    // register with a limit kept for each format and padding (f_lim), so
    // no sum is on the compare's path. A_PLAN registers what A_FIT needs
    // (pd_x, the format's four limits, the padding, the group count's
    // room): the limits' select by format and the padding's add in front
    // of the compares were 7.25 levels into pd_fits.
    logic        pd_cont, pd_fits;
    logic [2:0]  pd_f;
    logic [15:0] af_nu, pd_nu, pd_x;
    logic [16:0] af_nb, pd_nb;
    logic        af_fits;
    logic [3:0]  af_fitp;            // [p]: the value fits with a padding of p bytes
    logic [1:0]  pd_pad;
    logic [15:0] pd_lim [4];         // f_lim of pd_f
    logic [3:0]  pd_limv;
    logic        pd_ngok;            // a new group has room in the descriptor table
    logic [15:0] f_lim [20];         // [4*f + p]: ctx_budget - width(f) - p
    logic [19:0] f_limv;             // that limit is not negative
    always_ff @(posedge clk)
        for (int i = 0; i < 20; i++) f_lim[i] <= ctx_budget - fwv[i / 4] - 16'(i % 4);
    always_ff @(posedge clk)
        for (int i = 0; i < 20; i++) f_limv[i] <= {1'b0, ctx_budget} >= 17'(fwv[i / 4]) + 17'(i % 4);
    always_comb begin
        af_nu = pd_x + fwv[pd_f];
        af_nb = (pd_cont ? a_bytes : 17'd0) + 17'(fwv[pd_f]);
        // A compare for each padding, the padding picked after them: the
        // padding (an add, then pad4) in front of the limit's select and
        // the compare was 10.50 levels into pd_fits.
        for (int p = 0; p < 4; p++) af_fitp[p] = pd_limv[p] && pd_x <= pd_lim[p];
        af_fits = af_fitp[pd_pad] && pd_ngok;
    end
`ifndef SYNTHESIS
    // The fit as A_FIT worked it out from pd_cont and pd_f alone.
    always_ff @(posedge clk)
        if (!rst && AUTO_ENABLE != 0 && st[A_FIT]) begin
            logic [15:0] x;
            logic [1:0]  pad;
            x = pd_cont ? a_used : a_used + (a_open ? pad4(a_bytes) : 16'd0) + 16'd4;
            pad = 2'(pad4(af_nb));
            if (af_nu != x + fwv[pd_f] || af_fits != (f_limv[{pd_f, pad}] && x <= f_lim[{pd_f, pad}] && (pd_cont || a_ng < 9'd255)))
                $error("prism_node: AUTO's fit (%0d, %0d) is not its figures'", af_fits, af_nu);
        end
`endif
    assign pl_pop = AUTO_ENABLE != 0 && st[A_REC] && pd_fits;
    // The head says to continue the open group (for its format and bytes mod 4).
    logic        pl_cont_open;
    assign pl_cont_open = a_open && a_count < 17'd65535 && pl_cont[{a_f, a_bytes[1:0]}];
    // A packet's body is written from its first group.
    task automatic start_emit();
        e_g <= '0;
        e_end <= a_ng == 0;
        e_k <= '0;
        e_off <= '0;
        e_desc <= 1'b0;
        st <= oh(A_EMIT);
    endtask

    // The emission's registers, a cycle after the state that decides them:
    // a Kulisch value's state and integer come from the ring EG_LAT cycles
    // after its read, which A_EMIT gives a cycle ahead of the value (a
    // descriptor's cycle before a group's first value leaves room for it).
    // prism_auto_body writes them into egress's AUTO lines; the packet goes to egress
    // once its last write is done (a_done).
    logic        em2_on, em2_desc;
    logic [2:0]  em2_f;
    logic [31:0] em2_d, em2_v;
    logic [15:0] em2_w, em2_off;
    logic [2:0]  gr_f;               // the descriptor's group, as read
    logic [15:0] gr_c;
    // Read a cycle ahead, at the group e_g will be (0 outside the emission,
    // where start_emit sets it), and registered: read in the cycle they are
    // used, the group tables' LUT RAM came after the address's select of
    // A_REC's write (its planner's pop) and went on into em_last, e_left
    // and ge_wp (11.00 levels). The tables are written in A_REC only, never
    // while the emission runs.
    logic [7:0]  e_g_n;
    logic [31:0] em_d;
    logic        ab_busy, a_done;
    always_ff @(posedge clk) begin
        em2_on <= !rst && st_emit && !e_end;
        em2_desc <= e_desc;
        em2_f <= ge_f;
        em2_d <= em_d;
        em2_v <= au_v0;
        em2_w <= ge_w;
        em2_off <= e_off;
    end
    assign e_g_n = !st_emit ? 8'd0 : (!e_end && e_desc && em_last ? e_g[7:0] + 8'd1 : e_g[7:0]);
    always_ff @(posedge clk) begin
        gr_f <= a_gf[e_g_n];
        gr_c <= a_gc[e_g_n];
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && st_emit && !e_end && (gr_f != a_gf[e_g[7:0]] || gr_c != a_gc[e_g[7:0]]))
            $error("prism_node: the emission's group %0d read ahead (%0d, %0d) is not the table's (%0d, %0d)",
                   e_g, gr_f, gr_c, a_gf[e_g[7:0]], a_gc[e_g[7:0]]);
`endif
    always_comb begin
        em_d = {4'(gr_f) + 4'd1, 3'b0, gr_f == 3'd4 ? ctx_kwf : 9'd0, gr_c};
        a_done = AUTO_ENABLE != 0 && st_emit && e_end && !em2_on && !ab_busy;
    end
    generate
        if (AUTO_ENABLE != 0) begin : g_body
            prism_auto_body #(.OB(OB), .RKW(RKW), .BASE(56), .LA(OBA)) body (
                .clk, .rst, .s_valid(em2_on), .s_desc(!em2_desc), .s_d(em2_d), .s_f(em2_f), .s_v(em2_v),
                .s_acck(au_acck), .s_accf(au_accf), .s_w(em2_w), .s_off(em2_off),
                .m_we(ob_we), .m_addr_e(ob_addr_e), .m_addr_o(ob_addr_o), .m_data_e(ob_data_e), .m_data_o(ob_data_o),
                .busy(ab_busy));
        end else begin : g_no_body
            assign ob_we = 1'b0;
            assign ob_addr_e = '0;
            assign ob_addr_o = '0;
            assign ob_data_e = '0;
            assign ob_data_o = '0;
            assign ab_busy = 1'b0;
            // What only the AUTO encoder reads.
            /* verilator lint_off UNUSEDSIGNAL */
            logic unused;
            assign unused = ^{em2_on, em2_desc, em2_d, em2_f, em2_v, em2_w, em2_off, au_acc, au_acck, au_accf, a_count, a_f, a_open,
                              a_bytes, a_used, ctx_budget, hz_hit[1], pl_nf, pl_cont, pl_wait, pl_pop, af_nu, af_nb, ro_n, hd_ge_x};
            /* verilator lint_on UNUSEDSIGNAL */
        end
    endgenerate

    // Egress (its signals are declared above, with the ring's egress port).
    logic [MAX_PATHS*48-1:0] eg_pmac;
    logic [MAX_PATHS*16-1:0] eg_plep, eg_ppep, eg_pstream, eg_pport;
    always_comb
        for (int i = 0; i < MAX_PATHS; i++) begin
            eg_pmac[48*i +: 48] = p_mac[i];
            eg_plep[16*i +: 16] = p_lep[i];
            eg_ppep[16*i +: 16] = p_pep[i];
            eg_pstream[16*i +: 16] = p_stream[i];
            eg_pport[16*i +: 16] = p_port[i];
        end
    prism_egress #(.DATA_W(DATA_W), .KEEP_W(KEEP_W), .MTU(MTU), .RING(RING), .KW(KW), .KULISCH_ENABLE(KULISCH_ENABLE), .AUTO_ENABLE(AUTO_ENABLE),
                   .MAX_PATHS(MAX_PATHS), .PORTS(PORTS), .EG_LAT(EG_LAT), .R_LAT(R_LAT), .RN_W(RN_W), .OBA(OBA)) egress (
        .clk, .rst,
        .req_en, .req_ctl, .req_auto, .req_inexact, .req_base, .req_count, .req_last, .req_olen, .req_port,
        .req_pid, .req_groups, .req_blen, .req_free(rq_free), .tx_idle, .out_idle,
        .cbuf, .q_len, .ob_we, .ob_addr_e, .ob_addr_o, .ob_data_e, .ob_data_o,
        .node_mac, .ctx_job, .ctx_group, .ctx_op, .ctx_gen, .ctx_kulisch, .n_paths,
        .p_mac(eg_pmac), .p_lep(eg_plep), .p_pep(eg_ppep), .p_stream(eg_pstream), .p_port(eg_pport),
        .eg_slot(eb_slot), .eg_lap(eb_lap), .eg_qn(eb_qn), .eg_hqn(eb_hqn), .eg_hqe(eb_qend), .eg_hit(hz_hit[0]), .eg_go(eb_go),
        .eg_acc, .eg_acck, .eg_accf, .eg_phase, .eg_cross, .eg_valid, .m_round_fp32(eg_round), .m_round_exact(eg_round_x),
        .m_axis_tdata, .m_axis_tkeep, .m_axis_tvalid, .m_axis_tlast, .m_axis_tready
    );

    // The counters' increments: decoded from the engine's registers into
    // cnt_q, then added (decode and 32-bit add in one cycle were 8 levels).
    always_ff @(posedge clk)
        if (rst) begin
            cnt <= '0;
            cnt_q <= '0;
            cnt_rs_q <= 1'b0;
        end else begin
            for (int i = 0; i < CNT_TOTAL; i++) begin
                logic inc;
                inc = cnt_inc[i];
                if (i >= CNT_MALFORMED && i < CNT_UNTRUSTED_SOURCE && cnt_grp == CG_MALFORMED && cnt_why == 8'(i - CNT_MALFORMED)) inc = 1'b1;
                if (i >= CNT_REFUSED && i < CNT_DATA_APPLIED && cnt_grp == CG_REFUSED && cnt_why == 8'(i - CNT_REFUSED)) inc = 1'b1;
                if (i >= CNT_DATA_REJECTED && i < CNT_PROGRESS_IGNORED && cnt_grp == CG_REJECTED && cnt_why == 8'(i - CNT_DATA_REJECTED)
                    && !(cnt_dup && cnt_why == DR_CHANGED_RETRANSMIT)) inc = 1'b1;
                if (i == CNT_DATA_DUPLICATES && cnt_grp == CG_REJECTED && cnt_why == DR_CHANGED_RETRANSMIT && cnt_dup) inc = 1'b1;
                cnt_q[i] <= inc;
            end
            cnt_rs_q <= cnt_rs;
            cnt_rs_nq <= cnt_rs_n;
            for (int i = 0; i < CNT_TOTAL; i++)
                cnt[32*i +: 32] <= cnt[32*i +: 32] + (i == CNT_RESULTS_SENT && cnt_rs_q ? 32'(cnt_rs_nq) : 32'(cnt_q[i]));
        end

    always_ff @(posedge clk) cnt_dup <= hd_same;

    // ---------------------------------------------------------------- FSM
    /* verilator lint_off UNUSEDSIGNAL */
    task automatic count(input int i);
        cnt_inc[i] <= 1'b1;
    endtask
    // A count in group g for reason r (at most one a cycle).
    task automatic count_why(input logic [1:0] g, input logic [7:0] r);
        cnt_grp <= g;
        cnt_why <= r;
    endtask
    /* verilator lint_on UNUSEDSIGNAL */

    // The Ethernet and CONTROL header of a reply to the frame in the buffer:
    // to the AM, identity and Transaction ID repeated, endpoints swapped. The
    // bytes that do not depend on the reply are wired here, so the engine's
    // process writes whole fields only (no loop variables to carry).
    logic [8*48-1:0] rh_fixed;
    always_comb begin
        rh_fixed = '0;
        for (int i = 0; i < 6; i++) rh_fixed[8*i +: 8] = am_mac[8*(5-i) +: 8];
        for (int i = 0; i < 6; i++) rh_fixed[8*(6 + i) +: 8] = node_mac[8*(5-i) +: 8];
        rh_fixed[8*12 +: 16] = {ETHERTYPE[7:0], ETHERTYPE[15:8]};
        rh_fixed[8*14 +: 8] = 8'h10;
        rh_fixed[8*15 +: 8] = CLASS_CONTROL;
        rh_fixed[8*16 +: 8*22] = hdr[8*16 +: 8*22];   // identity and txn
        rh_fixed[8*38 +: 16] = {control_ep[7:0], control_ep[15:8]};
        rh_fixed[8*40 +: 16] = hdr[8*38 +: 16];
        rh_fixed[8*47 +: 8] = 8'd1;
    end
    task automatic reply_header(input logic [7:0] command, input logic [7:0] status, input logic [15:0] body_len);
        cbuf <= (8*192)'(rh_fixed);
        cbuf[8*(42) +: 8] <= command;
        cbuf[8*(43) +: 8] <= status;
        cbuf[8*(44) +: 8] <= body_len[15:8];
        cbuf[8*(45) +: 8] <= body_len[7:0];
    endtask

    // The ACK for the frame in the buffer, into cbuf.
    task automatic build_ack(input logic [7:0] status, input logic [15:0] detail);
        reply_header(CMD_ACK, status, ACK_BODY_LEN);
        cbuf[8*(48) +: 8] <= f_cmd;
        cbuf[8*(50) +: 8] <= detail[15:8];
        cbuf[8*(51) +: 8] <= detail[7:0];
        q_len <= ETH_MIN_FRAME;
    endtask

    // One CAPS_RESPONSE page with every capability record.
    task automatic build_caps();
        reply_header(CMD_CAPS_RESPONSE, 8'd0, 16'(ROM_RECORDS * CAPS_RECORD_LEN));
        cbuf[8*48 +: 8*36*ROM_RECORDS] <= caps_body;
        q_len <= 16'(48 + ROM_RECORDS * 36);
    endtask

    // A request into the next egress slot (free: the callers check): its
    // fields, then req_en. Egress reads the fields only with req_en, so a
    // caller may write them without a free slot (ready_check: egress's
    // slot test stays off the fields' write enables, 6.25 levels in the
    // FP32-only build with it). The packet ID counts the non-CONTROL
    // requests: next_pid moves a cycle after one (req_en, !req_ctl), and a
    // request in that cycle would take the ID after it (no state issues two
    // in a row today: D_READY waits a cycle after its release).
    task automatic issue_fields(input logic ctl, input logic auto_, input logic inexact, input logic [32:0] from,
                                input logic [15:0] count_, input logic last, input logic [15:0] olen);
        req_ctl <= ctl;
        req_auto <= auto_;
        req_inexact <= inexact;
        req_base <= from;
        req_count <= count_;
        req_last <= last;
        req_olen <= olen;
        req_port <= rx_port;
        req_pid <= next_pid + 32'(req_en && !req_ctl);
    endtask
    task automatic issue_go(input logic ctl);
        req_en <= 1'b1;
        if (!ctl) begin
            cnt_rs <= 1'b1;
            cnt_rs_n <= n_paths;
        end
    endtask
    task automatic issue(input logic ctl, input logic auto_, input logic inexact, input logic [32:0] from,
                         input logic [15:0] count_, input logic last, input logic [15:0] olen);
        issue_fields(ctl, auto_, inexact, from, count_, last, olen);
        issue_go(ctl);
    endtask

    // Hands the reply in cbuf to its port's sender (every slot is free: CONTROL waits for that).
    task automatic send(input logic [NST-1:0] ret);
        issue(1'b1, 1'b0, 1'b0, '0, '0, 1'b0, '0);
        st <= ret;
    endtask

    // A RESULT packet (or the terminal INEXACT) for every path.
    task automatic result_fields(input logic [32:0] from, input logic [32:0] to, input logic inexact);
        issue_fields(1'b0, 1'b0, inexact, from, 16'(to - from), to == {1'b0, ctx_vlen}, inexact ? ETH_MIN_FRAME : 16'd60 + 16'd4 * 16'(to - from));
    endtask
    task automatic send_result(input logic [32:0] from, input logic [32:0] to, input logic inexact);
        result_fields(from, to, inexact);
        issue_go(1'b0);
    endtask

    // The frame is done: its buffer goes back to its port, and the next frame
    // in arrival order is dispatched at once when its verdict is in.
    task automatic finish_frame();
        k_bad <= 1'b0;
        free_buf <= 1'b1;
        free_id <= proc_buf;
        o_head <= o_head_n;
        st <= next_ok ? oh(DISPATCH) : oh(IDLE);
`ifndef SYNTHESIS
        if (!fin) $error("prism_node: a frame finished where fin does not say so");
`endif
    endtask

    // The window moves to `rel_e`: packets wholly below it are released.
    // Where it moves to and what that frees are wired outside the engine's
    // process (the readiness check's packet end, or the end of the AUTO
    // packet just emitted), so the process only applies them.
    // The held table releases on rel_go, the cycles the engine calls
    // release_window (its own process moves base; a simulation check below).
    // The next RESULT packet's end, rc_e = min(base + capacity, vector
    // length), is a register: worked out from base every cycle, and at a
    // release from D_READY (base moves to rc_e) from itself, so it is
    // never behind there; rc_ok is low for the cycle after anything else
    // moves base or the context (AUTO's release, STAGE), and D_READY waits
    // for it. A RESULT is due (rdy) when readiness, max(least coverage,
    // base), is beyond base and reaches rc_e: compares registered a cycle
    // before (the least coverage's in the held table, with its select:
    // hd_gt_base, hd_ge_e), so readiness is read only when base and rc_e
    // have not moved since (rdy_ok: a cycle after a release, two after
    // anything else). From the compares, rdy went on into fin, the queue's
    // head and the frame buffer's read address (7.50-8.50 levels).
    logic [32:0] rc_e, rel_e;
    logic        rel_go, rel_dr, rc_ok, rdy_ok, rdy, hd_gt_base, hd_ge_e, base_ge_e;
    always_comb begin
        rdy = hd_gt_base && (hd_ge_e || base_ge_e);
        rel_e = st_emit ? base + 33'(a_i) : rc_e;
        rel_dr = st[D_READY] && hd_settled && rdy_ok && !ctx_auto && rdy && rq_free;
        rel_go = !rst && (rel_dr || a_done);
    end
    always_ff @(posedge clk) begin
        base_ge_e <= base >= rc_e;
        rdy_ok <= !rst && rc_ok && !rel_go && !st[C_INSTALL] && !a_done;
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && rdy_ok && (rdy != (hd_least > base && (hd_least >= rc_e || base >= rc_e)) || hd_gt_base != (hd_least > base)))
            $error("prism_node: readiness from the registered compares is not readiness (rdy_ok)");
`endif
    always_ff @(posedge clk) begin
        logic [32:0] er, eb;
        // Both ends side by side, the release choosing between them last.
        er = rc_e + 33'(ctx_cap);
        eb = base + 33'(ctx_cap);
        if (rel_dr) rc_e <= er > {1'b0, ctx_vlen} ? {1'b0, ctx_vlen} : er;
        else rc_e <= eb > {1'b0, ctx_vlen} ? {1'b0, ctx_vlen} : eb;
        rc_ok <= !rst && !st[C_INSTALL] && !a_done;
    end
    task automatic release_window();
        base <= rel_e;
    endtask
`ifndef SYNTHESIS
    logic        rel_go_q;
    logic [32:0] rel_e_q, base_q;
    always_ff @(posedge clk) begin
        rel_go_q <= rel_go;
        rel_e_q <= rel_e;
        base_q <= base;
        if (!rst && rel_go_q && base != rel_e_q) $error("prism_node: rel_go without the engine's release");
        if (!rst && !rel_go_q && base != base_q && base != 0) $error("prism_node: a release without rel_go");
    end
`endif

    // The next canonical RESULT packet, if every contributor covers it: handed
    // to egress (waiting for a free request slot), then released at once — the
    // window moves on; the slots it read are at rest at their next lap
    // (prism_ring's tags), so nothing clears them.
    task automatic ready_check();
        if (ctx_auto) st <= hd_gt_base ? oh(A_PLAN) : oh(DONE);
        else if (rdy) begin
            // The fields whether or not a slot is free (issue_fields).
            result_fields(base, rc_e, 1'b0);
            if (rq_free) begin
                issue_go(1'b0);
                release_window();
            end
            st <= oh(D_READY);
        end else finish_frame();
    endtask

    // ---------------------------------------------------------------- ingress
    // Per port: beats into the port's free buffer, and the beat with the
    // bytes outside the hashed range zeroed into the digest's register; the
    // port's validator gives verdicts in frame order, so each goes to the
    // buffer after the one the last verdict went to (and so do the digests).
    genvar gc;
    generate
        for (gc = 0; gc < PORTS; gc++) begin : g_crc
            prism_crc32c_512 #(.DATA_W(DATA_W)) digest (
                .clk, .rst, .s_axis_tdata(cr_data[gc]), .s_axis_tvalid(cr_valid[gc]), .s_axis_tlast(cr_last[gc]),
                .m_crc_valid(cd_valid[gc]), .m_crc(cd_crc[gc])
            );
        end
    endgenerate
`ifndef SYNTHESIS
    // C_LAT is the digest's latency: each port's digest comes C_LAT edges after its tlast.
    logic [C_LAT-1:0] cl_v [PORTS];
    always_ff @(posedge clk)
        for (int p = 0; p < PORTS; p++) begin
            cl_v[p] <= rst ? '0 : C_LAT'({cl_v[p], s_axis_tvalid[p] && s_axis_tready[p] && s_axis_tlast[p]});
            if (!rst && cd_valid[p] != cl_v[p][C_LAT-1]) $error("prism_node: C_LAT is not the digest's latency");
        end
`endif
    // Byte i of the beat at frame offset a = 64 x beat + i (16 bits) is
    // hashed when a >= 14 (CONTROL) or 56, and a < hs_end: a's line against
    // hs_end's, then i against its low six bits.
    always_comb
        for (int p = 0; p < PORTS; p++) begin
            logic gt, eq;
            gt = hs_end[p][15:6] > ci_beat[p][9:0];
            eq = hs_end[p][15:6] == ci_beat[p][9:0];
            for (int i = 0; i < KEEP_W; i++)
                ci_kill[p][i] = !ci_keep[p][i] || (ci_first[p] && (i < 14 || (i < 56 && !hs_ctl[p])))
                                || !(gt || (eq && 6'(i) < hs_end[p][5:0]));
        end
    // The masked beat: every cycle (the CRC reads it when cr_valid), so a
    // killed byte is the flip-flops' synchronous reset, not a LUT a bit.
    always_ff @(posedge clk)
        for (int p = 0; p < PORTS; p++)
            for (int i = 0; i < KEEP_W; i++)
                cr_data[p][8*i +: 8] <= ci_kill[p][i] ? 8'd0 : ci_data[p][8*i +: 8];
    always_ff @(posedge clk) begin
        if (rst) begin
            o_tail <= '0;
            for (int p = 0; p < PORTS; p++) begin
                v_slot[p] <= '0;
                c_slot[p] <= '0;
            end
            cr_valid <= '0;
            ci_valid <= '0;
            for (int b = 0; b < NB; b++) begin
                b_ready[b] <= 1'b0;
                b_crcd[b] <= 1'b0;
            end
        end else begin
            logic [QW:0] tail;
            tail = o_tail;
            for (int p = 0; p < PORTS; p++) begin
                logic [NBW-1:0] id;
                logic [15:0] he;
                logic [7:0]  cls;
                id = {PW'(p), in_slot[p]};
                ci_valid[p] <= s_axis_tvalid[p] && s_axis_tready[p];
                cr_valid[p] <= ci_valid[p];
                if (s_axis_tvalid[p] && s_axis_tready[p]) begin
                    if (in_beat[p] == 0) begin
                        // The hashed range: the CONTROL request, or the DATA body.
                        cls = `PN_B8(s_axis_tdata, KEEP_W*p + 15);
                        if (cls == CLASS_CONTROL) he = 16'd48 + {s_axis_tdata[DATA_W*p + 8*44 +: 8], s_axis_tdata[DATA_W*p + 8*45 +: 8]};
                        else he = 16'd56 + {s_axis_tdata[DATA_W*p + 8*50 +: 8], s_axis_tdata[DATA_W*p + 8*51 +: 8]};
                        hs_ctl[p] <= cls == CLASS_CONTROL;
                        hs_end[p] <= he;
                        b_sid[id] <= {s_axis_tdata[DATA_W*p + 8*52 +: 8], s_axis_tdata[DATA_W*p + 8*53 +: 8]};
                        b_head[id] <= {cls == CLASS_CONTROL, cls == CLASS_PROGRESS, cls == CLASS_DATA || cls == CLASS_RESULT,
                                       `PN_B48(s_axis_tdata, KEEP_W*p) == node_mac};
                        b_pid[id] <= {s_axis_tdata[DATA_W*p + 8*38 +: 8], s_axis_tdata[DATA_W*p + 8*39 +: 8],
                                      s_axis_tdata[DATA_W*p + 8*40 +: 8], s_axis_tdata[DATA_W*p + 8*41 +: 8]};
                    end
                    ci_data[p] <= s_axis_tdata[DATA_W*p +: DATA_W];
                    ci_keep[p] <= s_axis_tkeep[KEEP_W*p +: KEEP_W];
                    ci_ones[p] <= ONES_W'($countones(s_axis_tkeep[KEEP_W*p +: KEEP_W/2]));
                    ci_ones2[p] <= ONES_W'($countones(s_axis_tkeep[KEEP_W*p + KEEP_W/2 +: KEEP_W/2]));
                    ci_id[p] <= id;
                    ci_beat[p] <= in_beat[p];
                    ci_first[p] <= in_beat[p][9:0] == 10'd0;
                    ci_last[p] <= s_axis_tlast[p];
                    // The beat itself goes into the buffer (prism_frame_buf).
                    if (s_axis_tlast[p]) begin
                        order[tail[QW-1:0]] <= id;
                        tail = tail + (QW + 1)'(1);
                    end
                end
                // The beat taken last cycle, masked to its frame's hashed
                // range (hs_*, set as its first beat was taken).
                if (ci_valid[p]) begin
                    cr_last[p] <= ci_last[p];
                    // The engine reads it cycles later (after the verdict).
                    if (ci_last[p]) b_len[ci_id[p]] <= {ci_beat[p][9:0], 6'b0} + 16'(ci_ones[p]) + 16'(ci_ones2[p]);
                end
                // A verdict, for the oldest frame without one (the validator
                // sees exactly the beats taken here, and answers in order).
                if (v_valid[p]) begin
                    b_ok[{PW'(p), v_slot[p]}] <= v_ok[p];
                    b_prism[{PW'(p), v_slot[p]}] <= v_prism[p];
                    b_walk[{PW'(p), v_slot[p]}] <= v_body_walk[p];
                    b_reason[{PW'(p), v_slot[p]}] <= v_reason[8*p +: 8];
                    b_ready[{PW'(p), v_slot[p]}] <= 1'b1;
                    v_slot[p] <= v_slot[p] + BW'(1);
                end
                // The frame's digest, C_LAT cycles after its tlast.
                if (cd_valid[p]) begin
                    b_crc[{PW'(p), c_slot[p]}] <= cd_crc[p];
                    b_crcd[{PW'(p), c_slot[p]}] <= 1'b1;
                    c_slot[p] <= c_slot[p] + BW'(1);
                end
            end
            o_tail <= tail;
            if (free_buf) begin
                b_ready[free_id] <= 1'b0;
                b_crcd[free_id] <= 1'b0;
            end
        end
    end

    // The engine's DATA checks, window and held packets, in two cycles:
    // D_CHK, once the held table is quiet (its registered row is the
    // table), registers every check's condition, each a compare of
    // registers (the header, the context, base, the contributor's row and
    // the table's answers on it); D_OP decides from those registers in the
    // checks' order. Nothing the conditions read changes between the two
    // (only the engine writes the table, base and the context, and it is
    // in D_CHK or D_OP). An admitted packet goes to the lanes (its first
    // descriptor is in view). The verdict, wired (the view's next offset
    // depends on it too): the reason the frame is rejected (8'hFF none), or
    // a terminal INEXACT, a duplicate, or admitted.
    logic dq_result, dq_nokey, dq_gen, dq_gen_old, dq_inactive, dq_failed, dq_done, dq_nostream, dq_ep, dq_port,
          dq_mac, dq_inexact, dq_range, dq_last, dq_kbad, dq_below, dq_beyond,
          dq_ints, dq_bytes, dq_bexact;
    // The window's end, a register: base and the context are as they were
    // a cycle before D_CHK, too (the add before the compare was 7.75 levels).
    logic [32:0] base_wel;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [33:0] dq_bsum;           // only its sign is used
    /* verilator lint_on UNUSEDSIGNAL */
    assign dq_bsum = {2'b0, ct_bytes} + {18'b0, rx_len} + ~{2'b0, ctx_wby};
    always_ff @(posedge clk) base_wel <= base + {1'b0, ctx_wel};
`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && st[D_CHK] && base_wel != base + {1'b0, ctx_wel}) $error("prism_node: base_wel behind base in D_CHK");
        if (!rst && st[C_APPLY] && {dq_nokey, dq_gen, dq_gen_old, dq_done} != {!ctx_key_match, ctx_gen != f_gen, f_gen < ctx_gen, base >= {1'b0, ctx_vlen}})
            $error("prism_node: C_APPLY's registered generation and base compares are behind");
    end
`endif
    always_ff @(posedge clk) begin
        dq_result <= f_class == CLASS_RESULT;
        dq_nokey <= !ctx_key_match;
        dq_gen <= ctx_gen != f_gen;
        dq_gen_old <= f_gen < ctx_gen;
        dq_inactive <= !ctx_active;
        dq_failed <= ctx_failed;
        dq_done <= base >= {1'b0, ctx_vlen};
        dq_nostream <= !c_found;
        dq_ep <= f_dst_ep != ct_lep || f_src_ep != ct_pep;
        dq_port <= rx_port != ct_port;
        dq_mac <= f_src_mac != ct_mac;
        // C_TXN's source check, from a register: the header and the
        // frame's port are the frame's from DISPATCH on, and ROUTE comes
        // first (the 48-bit compare in C_TXN's cycle went through the
        // state's next-value logic: 6.25 levels into st[DONE], session 65).
        am_src_q <= f_src_mac == am_mac && rx_port == am_port;
        dq_inexact <= (f_flags & FLAG_INEXACT) != 0;
        dq_range <= f_end > {1'b0, ctx_vlen};
        dq_last <= ((f_flags & FLAG_LAST) != 0) != (f_end == {1'b0, ctx_vlen});
        dq_kbad <= k_bad;
        dq_below <= {1'b0, f_first} < base;
        dq_beyond <= f_end > base_wel;
        dq_ints <= hd_count >= ctx_wint;
        // ct_bytes + rx_len > ctx_wby as one three-operand sum's sign
        // (ct_bytes + rx_len - ctx_wby - 1 >= 0): a carry-save row and one
        // carry chain, not an add's chain and then a compare's (7.00 levels
        // in the FP32-only build).
        dq_bytes <= !dq_bsum[33];
        dq_bexact <= hd_bexact;
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && st[D_OP] && dq_bytes != (34'(ct_bytes) + 34'(rx_len) > 34'(ctx_wby)))
            $error("prism_node: dq_bytes is not the contributor's bytes and the frame's over the window's");
`endif
    logic [7:0] dop_r;
    logic       dop_go, dop_inexact, dop_dup, dop_acc;
    always_comb begin
        dop_r = 8'hFF;
        dop_go = 1'b1;
        dop_inexact = 1'b0;
        dop_dup = 1'b0;
        dop_acc = 1'b0;
        if (dq_result) dop_r = DR_RESULT_NOT_INPUT;
        else if (dq_nokey) dop_r = DR_NO_OPERATION;
        else if (dq_gen) dop_r = dq_gen_old ? DR_STALE_GENERATION : DR_NO_OPERATION;
        else if (dq_inactive) dop_r = DR_NOT_ACTIVE;
        else if (dq_failed) dop_r = DR_OPERATION_FAILED;
        else if (dq_done) dop_r = DR_OPERATION_DONE;
        else if (dq_nostream) dop_r = DR_UNKNOWN_STREAM;
        else if (dq_ep) dop_r = DR_ENDPOINT_MISMATCH;
        else if (dq_port) dop_r = DR_WRONG_PORT;
        else if (dq_mac) dop_r = DR_WRONG_SOURCE_MAC;
        else if (dq_inexact) dop_inexact = 1'b1;
        else if (dq_range) dop_r = DR_RANGE_OUTSIDE_VECTOR;
        else if (dq_last) dop_r = DR_LAST_FLAG_MISMATCH;
        else if (dq_kbad) dop_r = DR_FORMAT_NOT_ALLOWED;
        // The window and the contributor's held packets.
        // (hd_hit, hd_same, hd_overlap: the table's registers, a cycle after its row, as dq_*.)
        // A hit's reason does not wait for hd_same (the table's OR over its
        // slots): a duplicate is not counted as a refusal (data_op), and
        // only that count's enable is behind hd_same (the reason's value
        // behind it too was 7.00 levels).
        else if (hd_hit) begin
            dop_r = DR_CHANGED_RETRANSMIT;
            dop_dup = hd_same;
        end
        else if (dq_below) dop_r = DR_BELOW_WINDOW;
        else if (dq_beyond) dop_r = DR_BEYOND_WINDOW;
        else if (hd_overlap) dop_r = DR_OVERLAP;
        else if (dq_ints) dop_r = DR_INTERVALS_EXHAUSTED;
        else if (dq_bytes) begin
            // The bytes may be from before a release under way: a refusal waits for them (D_CHK again).
            if (dq_bexact) dop_r = DR_BYTES_EXHAUSTED;
            else dop_go = 1'b0;
        end
        else dop_acc = 1'b1;
    end
`ifndef SYNTHESIS
    // The held table's overlap compares its low bits: where data_op reads
    // it (the frame inside the window), it must be the 33-bit answer.
    always_ff @(posedge clk)
        if (!rst && st[D_OP] && !dq_below && !dq_beyond && hd_overlap != held.m_overlap_full)
            $error("prism_node: the held table's overlap %0d on its low bits is not the 33-bit %0d (SPAN too small?)",
                   hd_overlap, held.m_overlap_full);
    // data_op tests dop_acc before dop_dup: they must exclude each other.
    always_ff @(posedge clk)
        if (!rst && st[D_OP] && dop_acc && dop_dup)
            $error("prism_node: a DATA frame both accepted and a duplicate");
`endif
    // A group entered: its descriptor is the frame buffer's aligned word
    // (dwin) in D_OP (the view has been on the first descriptor since
    // DISPATCH) and in D_DESC. D_RUN's first run of it (ge_*) is selected
    // from the figures decoded at ingress (dside, beside dwin): the lanes'
    // count (FLANES or KLANES) picks the cut, and a cut run takes the
    // lanes' bytes in the value's width.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [31:0]     ge_d;           // (its bits 27-25 are reserved)
    /* verilator lint_on UNUSEDSIGNAL */
    logic [RN_W-1:0] ge_n;
    logic [15:0]     ge_b, ge_b3;
    logic            ge_last, ge_more;
    always_comb begin
        logic [CUT_W-1:0] c;
        logic [VBW-1:0]   b;
        ge_d = `PN_B32(dwin, 0);
        c = TWO_CUTS != 0 && ctx_kulisch ? dside[VBW + CUT_W * TWO_CUTS +: CUT_W] : dside[VBW +: CUT_W];
        {ge_more, ge_last, ge_n, b} = c;
        ge_b = 16'(b);
        ge_b3 = 16'(dside[VBW-1:0]);
    end
`ifndef SYNTHESIS
    // The figures as the descriptor gives them (ge_* before they were
    // decoded at ingress), checked in every cycle that enters a group.
    always_ff @(posedge clk) begin
        logic [15:0] vl, vw, vw3, lw, rb, rb3;
        logic [3:0]  f;
        logic        big, rl;
        logic [RN_W-1:0] rn;
        f = ge_d[31:28];
        vl = ge_d[15:0];
        vw = times_width(vl, f);
        vw3 = f == FMT_INT8 ? vl + 16'd3 : (f == FMT_FP32 ? {vl[13:0], 2'b11} : {vl[14:0] + 15'd1, 1'b1});
        lw = times_width(run_lanes, f);
        big = vl > run_lanes;
        if (f == FMT_KULISCH) begin
            rn = RN_W'(1);
            rb = 16'd2 + 16'(ge_d[24:16]);
            rb3 = 16'd5 + 16'(ge_d[24:16]);
            rl = vl == 16'd1;
        end else begin
            rn = big ? RN_W'(run_lanes) : RN_W'(vl);
            rb = big ? lw : vw;
            rb3 = vw3;
            rl = !big;
        end
        if (!rst && ((st[D_OP] && dop_go && dop_acc && !rx_walk) || (st[D_DESC] && groups_left != 0))
            && (ge_n != rn || ge_b != rb || (rl && ge_b3 != rb3) || ge_last != rl
                || ge_more != (f != FMT_KULISCH && vl > 2 * run_lanes)))
            $error("prism_node: the ingress-decoded run figures (%0d, %0d, %0d, %0d) of descriptor %h are not its own (%0d, %0d, %0d, %0d)",
                   ge_n, ge_b, ge_b3, ge_last, ge_d, rn, rb, rb3, rl);
    end
`endif
    task automatic group_enter();
        g_fmt <= ge_d[31:28];
        g_kw <= ge_d[24:16];
        vals_left <= ge_d[15:0];
        rq_n <= ge_n;
        rq_b <= ge_b;
        rq_b3 <= ge_b3;
        rq_last <= ge_last;
        rq_more <= ge_more;
    endtask
    // The run after D_RUN's run, which is not its group's last: so a
    // native run was a full one (lanes values), and the next is the last
    // when at most lanes are left after it (rq_more clear: a compare of
    // vals_left in the run's cycle was 7.25 levels into rq_b's enable).
    task automatic run_next();
        logic [15:0] vw, lw;
        vw = times_width(vals_left, g_fmt);
        lw = times_width(run_lanes, g_fmt);
        rq_more <= ctx_kulisch ? vals_left > 16'(3 * KLANES) : vals_left > 16'(3 * FLANES);
        if (g_fmt == FMT_KULISCH) rq_last <= vals_left == 16'd2;
        else if (!rq_more) begin
            rq_n <= RN_W'(vals_left - run_lanes);
            rq_b <= vw - lw;
            rq_b3 <= vw - (lw - 16'd3);
            rq_last <= 1'b1;
        end
    endtask

    task automatic data_op();
        st <= oh(DONE);
        if (dop_inexact) begin
            // A child's terminal INEXACT fails the whole operation (once egress is idle).
            if (!tx_idle) st <= oh(D_OP);
            else begin
                count(CNT_DATA_APPLIED);
                ctx_failed <= 1'b1;
                send_result(33'd0, 33'd0, 1'b1);
            end
        end
        // dop_acc before dop_dup (they exclude each other: a duplicate is a
        // hit, an accepted frame no hit), so pos's and the state's enables
        // do not wait for hd_same, the held table's OR over its slots (in
        // the FP32-only build hd_same -> dop_dup -> pos was 6.25 levels).
        else if (dop_acc) begin
            count(CNT_DATA_APPLIED);
            // The held table admits it (its a_en).
            pos <= {1'b0, f_first};
            if (rx_walk) begin
                // The Kulisch walk moved the view: read the first descriptor again (off_n).
                groups_left <= f_groups;
                gl_nz <= f_groups != 0;
                st <= oh(D_DESC);
            end else begin
                // The view is on the first descriptor already, and has been
                // since DISPATCH: its aligned word (dwin) is the
                // descriptor, entered in this cycle (D_OP's group_enter).
                // Straight to the lanes (off_n past it).
                groups_left <= f_groups - 8'd1;
                gl_nz <= f_groups != 8'd1;
                st <= oh(D_RUN);
            end
        end
        // A hit is counted as a refusal for a changed retransmission, and
        // the counters count it as a duplicate instead when it was the same
        // packet (cnt_dup): no enable here waits for hd_same, the held
        // table's OR over its slots (hd_same -> cnt_why was 6.25 levels).
        if (dop_r != 8'hFF) count_why(CG_REJECTED, dop_r);
    endtask

    logic [MAX_CONTRIB*16-1:0] i_stream, i_lep, i_pep, i_port;
    logic [MAX_CONTRIB*48-1:0] i_mac;
    always_comb
        for (int i = 0; i < MAX_CONTRIB; i++) begin
            i_stream[16*i +: 16] = s_stream[i];
            i_lep[16*i +: 16] = s_lep[i];
            i_pep[16*i +: 16] = s_pep[i];
            i_port[16*i +: 16] = st_port[i];
            i_mac[48*i +: 48] = s_mac[i];
        end
    // The table's lookup is pipelined across rx_stream's pick: every
    // buffer's stream, the two it may pick (a cycle ahead), and the pick.
    logic [NB*16-1:0] l_cand;
    logic             fin_q;
    always_comb for (int b = 0; b < NB; b++) l_cand[16*b +: 16] = b_sid[b];
    always_ff @(posedge clk) fin_q <= fin;
    // i_en is the state bit itself: the table gives rst priority over
    // every install write (an AND with !rst here was a LUT in front of
    // its deepest install path, 7.00 levels in one FP32-only mapping).
    prism_held_table #(.MAX_CONTRIB(MAX_CONTRIB), .MAX_HELD(MAX_HELD), .CI_W(CI_W), .SPAN(WINDOW + MTU), .NCAND(NB), .CA_W(NBW)) held (
        .clk, .rst,
        .i_en(st[C_INSTALL]), .i_n(CI_W'(contribs)),
        .i_stream, .i_lep, .i_pep, .i_port, .i_mac,
        .l_cand, .l_ia(buf_nxt), .l_ib(buf_cur), .l_pick(fin_q),
        .l_stream(rx_stream), .m_found(c_found), .m_lep(ct_lep), .m_pep(ct_pep), .m_port(ct_port), .m_mac(ct_mac), .m_bytes(ct_bytes),
        .q_pid(rx_pid), .q_crc(rx_crc), .q_first({1'b0, f_first}), .q_end(f_end), .base,
        .m_hit(hd_hit), .m_same(hd_same), .m_overlap(hd_overlap), .m_count(hd_count),
        .a_en(!rst && st[D_OP] && dop_acc), .a_len(rx_len),
        .r_en(rel_go), .r_end(rel_e),
        // (A release only in D_READY, or at the end of an AUTO packet's emission.)
        .a_may(st[D_OP]), .r_may(st[D_READY] || (st_emit && e_end)),
        .m_quiet(hd_quiet), .m_bytes_exact(hd_bexact), .m_settled(hd_settled),
        .m_ready(ready_now), .m_least(hd_least), .cmp_e(rc_e), .m_gt_base(hd_gt_base), .m_ge_e(hd_ge_e),
        .cmp_x(pw_m), .m_ge_x(hd_ge_x)
    );
`ifndef SYNTHESIS
    // The table checks that an admission decides on a quiet row; readiness
    // read before it has settled is lower than the truth (coverage only
    // grows), which the AUTO rounder's limit (rr_lim) may take: D_READY
    // waits for hd_settled.
    // D_OP decides on the row looked up two cycles before (through D_CHK's
    // registers, and the table's m_hit/m_same) and admits into the one of
    // the cycle before: neither may be a lookup the pipeline had not caught
    // up with (an install or a buffer's stream two cycles old).
    logic lk_stale_q;
    always_ff @(posedge clk) begin
        lk_stale_q <= held.lk_stale;
        if (!rst && st[D_OP] && (lk_stale_q || held.lk_stale))
            $error("prism_node: D_OP reads a held-table row looked up before its stream or the table was in the lookup's pipeline");
    end
`endif

    // The ring. Its egress run is the builder's line, or AUTO's slots in an
    // AUTO context (the builder builds no RESULT there, and AUTO reads
    // nothing in another context). Every read and sum names its run's lap
    // (the ring's tags say which slots are at rest); STAGE's fresh
    // accumulator is its only clear.
    logic [RB-1:0]   eg_slot;
    logic            eg_lap;
    logic [RN_W-1:0] eg_n;
    assign eg_slot = ctx_auto ? au_slot : eb_slot;
    assign eg_lap = ctx_auto ? au_lap : eb_lap;
    assign eg_n = ctx_auto ? au_n : (eb_go ? eb_qn : '0);
    prism_ring #(.RING(RING), .KW(RKW), .KULISCH(KULISCH_ENABLE), .NBANK(FLANES), .EG(LANES)) ring (
        .clk, .rst,
        .lane_slot(lr_slot), .lane_lap(lr_lap), .lane_n(lr_n), .lane_acc, .lane_acck, .lane_accf, .lane_rest,
        .eg_slot, .eg_lap, .eg_n, .eg_acc, .eg_acck, .eg_accf, .eg_k0, .eg_f0, .eg_phase, .eg_cross, .eg_valid,
        .clr_en(st[C_CLEAR]), .clr_slot,
        .fw_en(f_land), .fw_slot(f_land_slot), .fw_lap(f_land_lap), .fw_n(f_land_n), .lane_sum,
        .kw_en(k_land), .kw_slot(k_land_slot), .kw_lap(k_land_lap), .kw_n(k_land_n), .klane_sum, .klane_f
    );
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && eb_go && ctx_auto) $error("prism_node: the builder reads the ring in an AUTO context");
`endif

    // The runs in flight through each lane kind, and the hazard queries
    // against them (the rule is in the module comment). A run is pushed in
    // its dispatch cycle and lands CV_LAT + RING_LAT + F_LAT (K_LAT) cycles
    // later, when its sums are written. The ring reads a run's slots
    // CV_LAT cycles after its push, and a query made at the push counts
    // every run landing in that cycle or later as in flight, so a read
    // never sees a slot before its last sum is written.
    assign hz_slot = {au_qslot, eb_slot};
    assign hz_n = {au_qn, eb_hqn};
    assign hz_end = {au_qend, eb_qend};
    // D_RUN's own query is against the lanes' runs only, and a run's read
    // and its sums' write are both CV_LAT after its dispatch, so its window
    // is RING_LAT + the lanes' latency from the dispatches (r_win: a
    // prism_lane_track of power-of-two windows, both lane kinds in it);
    // the egress reads' windows run from a dispatch to its write
    // (l_track: a run is in flight from its dispatch).
    //
    // That query is made a cycle ahead and registered (run_hold_q): asked
    // in the run's cycle, its answer went through D_RUN's decisions into
    // the frame buffer's address, 13 levels. A cycle ahead the run is not
    // known yet, so the query is a window that holds it, from `pos` (the
    // frame's first element in D_OP, where pos is set): the held run's
    // FLANES slots, or 2 x FLANES (this run and the next: pos only grows
    // in a frame). Its entries are a cycle shorter than the window they
    // stand for (their last entry would be gone by the run's cycle), and
    // the run dispatched in the query's cycle is not in them: it is the
    // frame's previous run, whose slots the next run never shares. So the
    // answer is the run's own but for the slots past a run shorter than
    // FLANES (a group's last), which can hold a cycle longer.
    // The window's start is a register of its own (`hq_s`): f_first in
    // D_OP (set in D_CHK, the only way into D_OP), and pos from there on
    // (pos is set to f_first in D_OP and only D_RUN moves it in a frame).
    // Asking both and picking D_OP's answer after them was 7.00 levels
    // into run_hold_q; a pick in front of the subtract, 9.00.
    logic [0:0]    r_hit0;
    logic          run_hold_q;
    logic [RB-1:0] hq_s;
    always_ff @(posedge clk)
        if (st[D_CHK]) hq_s <= RB'(f_first);
        else if (st[D_RUN] && !run_hold) hq_s <= hq_s + RB'(rq_n);
    always_ff @(posedge clk) run_hold_q <= r_hit0[0];
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && (st[D_OP] ? hq_s != RB'(f_first) : (st[D_RUN] || st[D_DESC]) && hq_s != RB'(pos)))
            $error("prism_node: the run window's start is not D_OP's f_first or pos");
`endif
    assign run_hold = st[D_RUN] && run_hold_q;
    assign f_push = st[D_RUN] && !ctx_kulisch && !run_hold;
    assign k_push = st[D_RUN] && ctx_kulisch && !run_hold;
    // CONTROL waits in DISPATCH for egress, the lanes, AUTO's rounder and
    // the held table to drain, from registers: idle in each of the last
    // two cycles, so up to two cycles later than from the wires (the
    // compares were 8.25 levels into DISPATCH's registers). This rests on
    // two facts a change must keep: the states that lead to DISPATCH
    // (DONE, IDLE, D_READY's finish) issue no request and push no run, so
    // nothing gets busy in DISPATCH's own cycle; and nothing gets busy
    // while the engine waits but the rounder, whose limit takes readiness
    // the cycle after the table settles (the held table's readiness and
    // m_settled change in the same cycle): the second cycle covers that,
    // with no cycle to spare. Simulation checks the wires at every
    // CONTROL dispatch.
    logic ctl_busy, ctl_idle_q, ctl_idle_q2;
    assign ctl_busy = !tx_idle || lanes_busy || ro_pend || !hd_quiet || !hd_bexact || !hd_settled;
    always_ff @(posedge clk) begin
        ctl_idle_q <= !rst && !ctl_busy;
        ctl_idle_q2 <= !rst && ctl_idle_q;
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && st[DISPATCH] && rx_ok && rx_prism && dh_ctl && ctl_idle_q && ctl_idle_q2 && ctl_busy)
            $error("prism_node: CONTROL dispatched while egress, the lanes, the rounder or the held table are busy");
`endif
    // Both lane kinds' runs in one tracker (the Kulisch lanes' the short
    // kind): one OR over its entries answers the egress's and the
    // rounder's queries.
    prism_lane_track #(.LATENCY(CV_LAT + RING_LAT + F_LAT), .RB(RB), .NW(RN_W), .Q(HQ), .QW(RN_W),
                       .SHORT(KULISCH_ENABLE != 0 ? CV_LAT + RING_LAT + K_LAT : 0), .QEND(3)) l_track (
        .clk, .rst, .push(f_push || k_push), .push_slot(lane_slot), .push_n(rq_n), .push_short(k_push),
        .land(f_land), .land_slot(f_land_slot), .land_n(f_land_n),
        .sland(k_land), .sland_slot(k_land_slot), .sland_n(k_land_n),
        .q_slot(hz_slot), .q_n(hz_n), .q_end(hz_end), .q_hit(hz_hit), .busy(lanes_busy)
    );
    // A run's lap, from its push to its sums' write: the tracker's land
    // is exactly its LATENCY (SHORT) after the push, so a shift register
    // of one bit keeps it (prism_ring's tags; checked in simulation against
    // the tracker's slot).
    localparam int LAND_F = CV_LAT + RING_LAT + F_LAT;
    localparam int LAND_K = CV_LAT + RING_LAT + K_LAT;
    logic [LAND_F-1:0] lap_sr;
    always_ff @(posedge clk) lap_sr <= {lap_sr[LAND_F-2:0], lane_lap};
    assign f_land_lap = lap_sr[LAND_F-1];
    assign k_land_lap = lap_sr[LAND_K-1];
`ifndef SYNTHESIS
    // The lap register against the tracker's slot, and the lap against the
    // run's element (pos, 13 bits: slot and lap).
    logic [RB:0] slot_sr [LAND_F];
    always_ff @(posedge clk) begin
        slot_sr[0] <= (RB + 1)'(pos);
        for (int i = 1; i < LAND_F; i++) slot_sr[i] <= slot_sr[i-1];
        if (!rst && f_land && slot_sr[LAND_F-1] != {f_land_lap, f_land_slot}) $error("prism_node: the lap register is not the tracker's FP32 run");
        if (!rst && k_land && slot_sr[LAND_K-1] != {k_land_lap, k_land_slot}) $error("prism_node: the lap register is not the tracker's Kulisch run");
    end
    // What the ring's tags rest on: a run's element x finds its slot last
    // summed for x or x - RING, or not summed since the STAGE (so a tag
    // never meets a sum two laps old). The last element summed a slot, by
    // the runs' pushes (their sums land in push order).
    longint shadow [RING];
    /* verilator lint_off BLKSEQ */   // the check's own memory, read only here
    always_ff @(posedge clk) begin
        if (rst || st[C_CLEAR]) begin
            for (int i = 0; i < RING; i++) shadow[i] = -1;
        end else if (f_push || k_push)
            for (int j = 0; j < FLANES; j++)
                if (j < int'(rq_n)) begin
                    longint x;
                    logic [RB-1:0] k;
                    x = longint'(pos) + longint'(j);
                    k = RB'(pos + 33'(j));
                    if (shadow[k] != -1 && shadow[k] != x && shadow[k] != x - longint'(RING))
                        $error("prism_node: element %0d's slot was last summed for element %0d", x, shadow[k]);
                    shadow[k] = x;
                end
    end
    /* verilator lint_on BLKSEQ */
`endif
    // The window is FLANES slots while a run holds, else 2 x FLANES.
    /* verilator lint_off PINCONNECTEMPTY */
    prism_lane_track #(.LATENCY(RING_LAT + F_LAT - 1), .SHORT(RING_LAT + K_LAT - K_RD - 1), .RB(RB), .NW(RN_W),
                       .Q(1), .QW(1), .QSHIFT($clog2(FLANES))) r_win (
        .clk, .rst, .push(f_push || k_push), .push_short(k_push), .push_slot(lane_slot), .push_n(rq_n),
        .land(), .land_slot(), .land_n(), .sland(), .sland_slot(), .sland_n(),
        .q_slot(hq_s), .q_n(!run_hold), .q_end('0), .q_hit(r_hit0), .busy()
    );
    /* verilator lint_on PINCONNECTEMPTY */
`ifndef SYNTHESIS
    // F_LAT (K_LAT) is the lanes' latency: their valid comes out with the run.
    always_ff @(posedge clk)
        if (!rst) begin
            if (f_mv0 != f_land) $error("prism_node: F_LAT is not prism_fp32_add_pipe's latency");
            if (k_mv0 != k_land) $error("prism_node: K_LAT is not prism_kulisch_lane_pipe's latency");
        end
`endif

`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && st[C_TXN] && am_src_q != (f_src_mac == am_mac && rx_port == am_port))
            $error("prism_node: C_TXN's registered source check is not the frame's");
`endif

    // The engine is done with the frame this cycle (finish_frame: DONE, or
    // the readiness check with no packet to send).
    assign fin = st[DONE] || (st[D_READY] && hd_settled && rdy_ok && !ctx_auto && !rdy);

    // Every change of the view's offset, a cycle ahead of the engine's
    // process (the frame buffer's read is registered, so the read is given
    // off_n). A state whose next state does not read the view sets it to
    // DATA_BODY, where DISPATCH reads a frame's header and first descriptor.
    // Every candidate is worked out side by side and picked by an AND-OR
    // whose selects are one state bit and registers (gl_nz, kl_nz, kw_nz
    // stand for the counts' compares with zero): as a case over the
    // one-hot state, ABC built cascaded 32:1 selects behind the adds (6.75
    // levels with every feature, 8.25 in the FP32-only build, into the
    // frame buffer's read address). off_ref below is the case, checked
    // against it in simulation.
    logic [15:0] o_seek, o_pw, o_bd, o_kd, o_kn, o_k1, o_ka, o_dd, o_r3, o_rb;
    logic s_body, s_body4, s_seek, s_pw, s_84, s_bd, s_kd, s_kn, s_k1, s_ka, s_dd, s_r3, s_rb, s_hold;
    always_comb begin
        o_seek = f_class == CLASS_PROGRESS ? PROGRESS_HOLES : (f_cmd == CMD_STAGE ? 16'd84 : CONTROL_BODY);
        o_pw = off + pw_step;
        o_bd = off + BINDING_LEN;
        o_kd = off + kd_skip;
        o_kn = off + (k_big ? 16'd64 : k_left);
        o_k1 = off + 16'd1;
        o_ka = (off + 16'd3) & ~16'd3;
        o_dd = off + 16'd4;
        o_r3 = (off + rq_b3) & ~16'd3;
        o_rb = off + rq_b;
        s_body = st[IDLE] || st[D_READY] || st[A_PLAN] || st[A_FIT] || st[A_REC] || st[A_EMIT] || st[DONE]
                 || st[D_CHK] || (st[D_OP] && rx_walk);
        s_body4 = st[D_OP] && !rx_walk;
        s_seek = st[PREWALK] && pw_seek;
        s_pw = st[PREWALK] && !pw_seek && bp == 2'd2 && !pw_bad_q;
        s_84 = st[C_APPLY];
        s_bd = st[C_BIND] && bp == 2'd3 && !bd_bad_q;
        s_kd = st[D_KWALK] && bp == 2'd2;
        s_kn = st[D_KWALK] && bp == 2'd0 && kl_nz;
        s_k1 = st[D_KWALK] && bp == 2'd0 && !kl_nz && kw_nz;
        s_ka = st[D_KWALK] && bp == 2'd0 && !kl_nz && !kw_nz && off[1:0] != 0;
        s_dd = st[D_DESC] && gl_nz;
        s_r3 = st[D_RUN] && !run_hold_q && rq_last;
        s_rb = st[D_RUN] && !run_hold_q && !rq_last;
        // Every other case keeps the offset: the states that never move it,
        // and the listed ones when their conditions do not hold.
        s_hold = st[DISPATCH] || st[ROUTE] || st[C_TXN] || st[C_BIND_END] || st[C_INSTALL] || st[C_CLEAR] || st[C_REPLY]
                 || (st[PREWALK] && !pw_seek && !(bp == 2'd2 && !pw_bad_q))
                 || (st[C_BIND] && !(bp == 2'd3 && !bd_bad_q))
                 || (st[D_KWALK] && (bp == 2'd1 || bp == 2'd3 || (bp == 2'd0 && !kl_nz && !kw_nz && off[1:0] == 0)))
                 || (st[D_DESC] && !gl_nz)
                 || (st[D_RUN] && run_hold_q);
        off_n = ({16{s_body}} & DATA_BODY) | ({16{s_body4}} & (DATA_BODY + 16'd4)) | ({16{s_84}} & 16'd84)
              | ({16{s_seek}} & o_seek) | ({16{s_pw}} & o_pw) | ({16{s_bd}} & o_bd)
              | ({16{s_kd}} & o_kd) | ({16{s_kn}} & o_kn) | ({16{s_k1}} & o_k1) | ({16{s_ka}} & o_ka)
              | ({16{s_dd}} & o_dd) | ({16{s_r3}} & o_r3) | ({16{s_rb}} & o_rb) | ({16{s_hold}} & off);
    end
`ifndef SYNTHESIS
    // The reference: the same offsets as a case over the state.
    logic [15:0] off_ref;
    always_comb begin
        off_ref = off;
        (* parallel_case *) case (1'b1)
            st[IDLE], st[D_READY], st[A_PLAN], st[A_FIT], st[A_REC], st[A_EMIT], st[DONE]: off_ref = DATA_BODY;
            // DISPATCH stays at DATA_BODY whatever the frame (a DATA or
            // RESULT frame's first descriptor is there); PREWALK moves the
            // view to its records in its first cycle (pw_seek), so no
            // offset depends on the header read in DISPATCH.
            st[PREWALK]:
                if (pw_seek) off_ref = f_class == CLASS_PROGRESS ? PROGRESS_HOLES : (f_cmd == CMD_STAGE ? 16'd84 : CONTROL_BODY);
                else if (bp == 2'd2 && !pw_bad_q) off_ref = off + pw_step;
            // C_BIND's first binding (C_APPLY's other next state, C_REPLY, does not read the view).
            st[C_APPLY]: off_ref = 16'd84;
            st[C_BIND]: if (bp == 2'd3 && !bd_bad_q) off_ref = off + BINDING_LEN;
            // A descriptor takes three cycles (bp: its view registered, its
            // step worked out from wv_q into kd_skip, the step): the step
            // from the view in one cycle was the switch's deepest path.
            st[D_KWALK]:
                if (bp == 2'd2) off_ref = off + kd_skip;
                else if (bp != 2'd0) ;
                else if (k_left != 0) off_ref = off + (k_left > 16'd64 ? 16'd64 : k_left);
                else if (kw_vals != 0) off_ref = off + 16'd1;
                else if (off[1:0] != 0) off_ref = (off + 16'd3) & ~16'd3;
            // D_OP moves past the first descriptor whether or not the frame
            // is admitted (not behind dop_acc): a refused frame goes to
            // DONE and an INEXACT's wait stays in D_OP, neither reading the
            // view; D_CHK (D_OP's other wait) puts it back on DATA_BODY.
            st[D_OP]: off_ref = rx_walk ? DATA_BODY : DATA_BODY + 16'd4;
            st[D_CHK]: off_ref = DATA_BODY;
            st[D_DESC]: if (groups_left != 0) off_ref = off + 16'd4;
            st[D_RUN]: if (!run_hold_q) off_ref = rq_last ? (off + rq_b3) & ~16'd3 : off + rq_b;
            default: ;
        endcase
    end
    always_ff @(posedge clk)
        if (!rst && $countones(st) == 1 && off_n != off_ref)
            $error("prism_node: the view's next offset %0d is not the case's %0d (state %b)", off_n, off_ref, st);
`endif
    always_ff @(posedge clk) off <= off_n;
`ifndef SYNTHESIS
    // Every cycle that enters a group (group_enter) reads its descriptor
    // from the aligned word: D_OP's first (the view on DATA_BODY), D_DESC's later ones.
    always_ff @(posedge clk)
        if (!rst && ((st[D_OP] && dop_go && dop_acc && !rx_walk) || (st[D_DESC] && groups_left != 0))
            && ((st[D_OP] ? off != DATA_BODY : off[1:0] != 2'd0) || dwin != win))
            $error("prism_node: the aligned word %h a group is entered from is not the view's %h (offset %0d)", dwin, win, off);
    always_ff @(posedge clk)
        if (!rst && st[D_RUN] && (rq_n != run_n || rq_b != run_bytes || rq_last != (vals_left == 16'(run_n))
                                  || (rq_last && rq_b3 != rq_b + 16'd3)))
            $error("prism_node: D_RUN's registered run (%0d values, %0d bytes (+3: %0d), last %0d) is not its run (%0d, %0d, %0d)",
                   rq_n, rq_b, rq_b3, rq_last, run_n, run_bytes, vals_left == 16'(run_n));
    always_ff @(posedge clk) begin
        if (!rst && st[D_KWALK] && k_big != (k_left > 16'd64))
            $error("prism_node: the walk's k_big %0d is not k_left (%0d) > 64", k_big, k_left);
        if (!rst && st[D_KWALK] && (kl_nz != (k_left != 0) || kw_nz != (kw_vals != 0)))
            $error("prism_node: the walk's kl_nz %0d or kw_nz %0d is not k_left (%0d) or kw_vals (%0d) other than zero", kl_nz, kw_nz, k_left, kw_vals);
        if (!rst && st[D_DESC] && gl_nz != (groups_left != 0))
            $error("prism_node: gl_nz %0d is not groups_left (%0d) other than zero", gl_nz, groups_left);
    end
    always_ff @(posedge clk)
        if (!rst && st[D_RUN] && g_fmt != FMT_KULISCH && rq_more != (vals_left > 2 * run_lanes))
            $error("prism_node: D_RUN's rq_more %0d is not vals_left (%0d) > 2 x %0d", rq_more, vals_left, run_lanes);
`endif

    always_ff @(posedge clk) begin
        if (rst) begin
            st <= oh(IDLE);
            bp <= 2'd0;
            pw_seek <= 1'b0;
            o_head <= '0;
            k_bad <= 1'b0;
            free_buf <= 1'b0;
            ctx_valid <= 1'b0;
            ctx_active <= 1'b0;
            ctx_failed <= 1'b0;
            n_paths <= '0;
            tl_insert <= 1'b0;
            tl_purge <= 1'b0;
            tl_retire <= 1'b0;
            req_en <= 1'b0;
            ctx_auto_q <= 1'b0;
            a_i <= '0;
            a_open <= 1'b0;
            a_used <= '0;
            a_ng <= '0;
            cnt_inc <= '0;
            cnt_grp <= '0;
            cnt_rs <= 1'b0;
        end else begin
            free_buf <= 1'b0;
            cnt_inc <= '0;
            cnt_grp <= '0;
            cnt_rs <= 1'b0;
            req_en <= 1'b0;
            // The packet ID after a RESULT, INEXACT or AUTO request (issue_fields).
            if (req_en && !req_ctl) next_pid <= next_pid + 32'd1;
            tl_insert <= 1'b0;
            tl_purge <= 1'b0;
            tl_retire <= 1'b0;
            (* parallel_case *) case (1'b1)
            st[IDLE]: if (o_head != o_tail_d && b_go[proc_buf]) st <= oh(DISPATCH);
            // ---------------------------------------------------- dispatch
            st[DISPATCH]: begin
                st <= oh(DONE);
                // CONTROL waits for egress, the lanes and AUTO's rounder to drain (clears and context changes).
                if (rx_ok && rx_prism && dh_ctl && !(ctl_idle_q && ctl_idle_q2)) st <= oh(DISPATCH);
                else if (!rx_ok) count_why(CG_MALFORMED, rx_reason);
                else if (!rx_prism) count(CNT_NOT_FOR_US);
                else if (dh_prog) begin
                    // Holes are walked for the parser's rule before counting.
                    bi <= '0;
                    pos <= {1'b0, `PN_B32(fb_head, 44)};
                    pw_seek <= 1'b1;
                    st <= oh(PREWALK);
                end else if (dh_data) begin
                    // Kulisch values are checked by the walk; nothing else needs it.
                    groups_left <= d_groups;
                    k_left <= '0;
                    kl_nz <= 1'b0;
                    k_big <= 1'b0;
                    kw_vals <= '0;
                    kw_nz <= 1'b0;
                    // Without Kulisch groups (the validator's word) there is nothing to walk.
                    // D_CHK a cycle later, when the contributor's row is registered.
                    if (rx_walk) st <= oh(D_KWALK);
                    else if (!dh_forus) count(CNT_NOT_FOR_US);
                    else st <= oh(D_CHK);
                end else begin
                    // CONTROL: reserved bits of bindings and capability records first.
                    bi <= '0;
                    pw_seek <= 1'b1;
                    st <= oh(PREWALK);
                end
            end
            st[PREWALK]: begin
                // pw_seek: the view moves to the records (off_n). Then each
                // record: bp 0 its end test is registered (pw_end_q), 1 the
                // view is registered and the test read, 2 its checks are
                // (pw_bad_q) and it is taken.
                if (pw_seek) pw_seek <= 1'b0;
                else if (bp == 2'd0) bp <= 2'd1;
                else if (bp == 2'd1) begin
                    if (pw_end_q) begin
                        bp <= 2'd0;
                        st <= oh(ROUTE);
                    end else bp <= 2'd2;
                end else begin
                    bp <= 2'd0;
                    if (pw_bad_q) begin
                        if (f_class == CLASS_PROGRESS) count(CNT_MALFORMED + $signed(32'(R_BAD_HOLES)));
                        else count(CNT_MALFORMED + $signed(32'(R_RESERVED_NONZERO)));
                        st <= oh(DONE);
                    end else begin
                        if (f_class == CLASS_PROGRESS) pos <= pw_he2_q + 33'd1;
                        if (f_class == CLASS_PROGRESS || f_cmd == CMD_STAGE) bi <= bi + 16'd1;
                    end
                end
            end
            // ---------------------------------------------------- CONTROL
            st[C_TXN]: begin
                // The lookup's answer is in once no lookup is in flight.
                if (tl_busy) ;
                else if (!am_src_q) begin
                    count(CNT_UNTRUSTED_SOURCE);
                    st <= oh(DONE);
                end else if (f_cmd == CMD_CAPS_QUERY) begin
                    count(CNT_ACCEPTED);
                    build_caps();
                    send(oh(DONE));
                end else if (t_hit) begin
                    if (t_same) begin
                        count(CNT_RETRIES_ANSWERED);
                        build_ack(t_status, t_detail);
                    end else begin
                        count(CNT_REFUSED + $signed(32'(ACK_TXN_CONFLICT)));
                        build_ack(ACK_TXN_CONFLICT, 16'd0);
                    end
                    send(oh(DONE));
                end else st <= oh(C_APPLY);
            end
            st[C_APPLY]: begin
                ack_status <= ACK_OK;
                ack_detail <= '0;
                st <= oh(C_REPLY);
                if (retired_stale) ack_status <= ACK_STALE_GENERATION;
                else case (f_cmd)
                    CMD_STAGE: begin
                        if (xq_apply != ACK_OK) ack_status <= xq_apply;
                        else begin
                            bi <= '0;
                            terms_sum <= '0;
                            contribs <= '0;
                            paths <= '0;
                            dest_paths <= '0;
                            st <= oh(C_BIND);
                        end
                    end
                    CMD_COMMIT, CMD_COMPLETE, CMD_RELEASE, CMD_ABORT: begin
                        if (dq_nokey) ack_status <= ACK_BAD_STATE;
                        // The key's 96-bit compare, the 48-bit generation
                        // compares and base's are the DATA checks'
                        // registers (registered every cycle; their inputs
                        // are stable here): in this cycle the generation's
                        // were 7.50 levels, the key's 6.25 into ctx_valid.
                        else if (dq_gen) ack_status <= dq_gen_old ? ACK_STALE_GENERATION : ACK_BAD_STATE;
                        else if (f_cmd == CMD_COMMIT && !ctx_active) ctx_active <= 1'b1;
                        else if (f_cmd == CMD_COMPLETE && ctx_active && (ctx_failed || dq_done)) begin
                        end else if ((f_cmd == CMD_RELEASE && ctx_active) || f_cmd == CMD_ABORT) begin
                            ctx_valid <= 1'b0;
                            ctx_active <= 1'b0;
                            // The key retires at this generation (an entry of it takes it, or the next slot).
                            tl_retire <= 1'b1;
                        end else ack_status <= ACK_BAD_STATE;
                    end
                    default: ack_status <= ACK_INVALID;
                endcase
            end
            st[C_BIND]: begin
                if (bp == 2'd0) begin
                    if (bi == f_bcount) st <= oh(C_BIND_END);
                    else bp <= 2'd1;
                end else if (bp == 2'd2 && bs_busy) ;
                else if (bp != 2'd3) bp <= bp + 2'd1;
                else begin
                    bp <= 2'd0;
                    if (bd_bad_q) begin
                        ack_status <= ACK_INVALID_BINDING;
                        ack_detail <= bi + 16'd1;
                        st <= oh(C_REPLY);
                    end else begin
                        if ((bd_dir & DIR_DATA_IN) != 0) begin
                            terms_sum <= terms_sum + {16'b0, bd_terms};
                            contribs <= contribs + 16'd1;
                            if ($signed(32'(contribs)) < MAX_CONTRIB) begin
                                s_stream[CR_W'(contribs)] <= bd_stream;
                                s_lep[CR_W'(contribs)] <= bd_lep;
                                s_pep[CR_W'(contribs)] <= bd_pep;
                                st_port[CR_W'(contribs)] <= bd_port;
                                s_mac[CR_W'(contribs)] <= bd_mac;
                            end
                        end
                        if ((bd_dir & DIR_RESULT_OUT) != 0) begin
                            paths <= paths + 16'd1;
                            if (bd_rank == x_dest) dest_paths <= dest_paths + 16'd1;
                            if ($signed(32'(paths)) < MAX_PATHS) begin
                                sp_stream[PI_W'(paths)] <= bd_stream;
                                sp_lep[PI_W'(paths)] <= bd_lep;
                                sp_pep[PI_W'(paths)] <= bd_pep;
                                sp_port[PI_W'(paths)] <= bd_port;
                                sp_mac[PI_W'(paths)] <= bd_mac;
                            end
                        end
                        bi <= bi + 16'd1;
                    end
                end
            end
            st[C_BIND_END]: begin
                st <= oh(C_REPLY);
                if (terms_sum != x_terms || contribs == 0 || (x_sem == SEM_REDUCE && dest_paths != 1) || paths == 0)
                    ack_status <= ACK_INVALID_BINDING;
                else if (!caps_ok) ack_status <= ACK_UNSUPPORTED;
                else if (xq_win_bad) ack_status <= ACK_INVALID;
                else if (xq_win_big) ack_status <= ACK_NO_RESOURCES;
                else if (ctx_valid) ack_status <= ACK_NO_RESOURCES;
                else st <= oh(C_INSTALL);
            end
            st[C_INSTALL]: begin
                ctx_valid <= 1'b1;
                ctx_active <= 1'b0;
                ctx_failed <= 1'b0;
                ctx_job <= f_job;
                ctx_group <= f_group;
                ctx_op <= f_op;
                ctx_gen <= f_gen;
                ctx_vlen <= x_vlen;
                ctx_wel <= x_wel;
                ctx_wint <= x_wint;
                ctx_wby <= x_wby;
                ctx_cap <= (x_mtu - 16'd46) >> 2;
                ctx_auto_q <= x_out == OUT_AUTO;
                ctx_budget <= x_mtu - 16'd42;
                a_i <= '0;
                a_open <= 1'b0;
                a_used <= '0;
                a_ng <= '0;
                ctx_kul_q <= x_acc == ACC_KULISCH_FIXED;
                ctx_kwf <= 9'((x_kw >> 3) - 16'd1);
                base <= '0;
                next_pid <= '0;
                // The held table installs the contributors (C_INSTALL).
                n_paths <= PI_W'(paths);
                for (int i = 0; i < MAX_PATHS; i++) begin
                    p_stream[i] <= sp_stream[i];
                    p_lep[i] <= sp_lep[i];
                    p_pep[i] <= sp_pep[i];
                    p_port[i] <= sp_port[i];
                    p_mac[i] <= sp_mac[i];
                end
                clr_slot <= '0;
                clr_left <= 16'(RING);
                st <= oh(C_CLEAR);
            end
            st[C_CLEAR]: begin
                // A fresh accumulator: every slot's tag "not summed" (an
                // ABORT may have left values), FLANES a cycle (prism_ring).
                clr_slot <= RB'(clr_slot + RB'(FLANES));
                clr_left <= clr_left - 16'(FLANES);
                if (clr_left <= 16'(FLANES)) st <= oh(C_REPLY);
            end
            st[C_REPLY]: begin
                count(CNT_ACCEPTED);
                if (ack_status != ACK_OK) count_why(CG_REFUSED, 8'(ack_status));
                build_ack(ack_status, ack_detail);
                // A STAGE whose generation is installed drops older generations' records.
                if (f_cmd == CMD_STAGE && ctx_key_match && ctx_gen == f_gen) tl_purge <= 1'b1;
                // Record the transaction for idempotent retries (ack_status
                // and ack_detail hold in the next cycle, the pulse's).
                tl_insert <= 1'b1;
                send(oh(DONE));
            end
            // ---------------------------------------------------- DATA
            st[D_KWALK]: begin
                // Kulisch value states (the parser's last body check): a state
                // byte, then the integer 64 bytes a cycle (checked by kv*,
                // above); native groups are skipped whole.
                if (bp == 2'd1) begin
                    // The descriptor, from the registered view.
                    /* verilator lint_off UNUSEDSIGNAL */
                    logic [31:0] d;
                    /* verilator lint_on UNUSEDSIGNAL */
                    d = `PN_B32(wv_q, 0);
                    groups_left <= groups_left - 8'd1;
                    g_kw <= d[24:16];
                    if (d[31:28] == FMT_KULISCH) begin
                        if (!ctx_kulisch || d[24:16] != ctx_kwf) k_bad <= 1'b1;
                        kw_vals <= d[15:0];
                        kw_nz <= d[15:0] != 0;
                    end
                    kd_skip <= d[31:28] == FMT_KULISCH ? 16'd4 : 16'd4 + ((times_width(d[15:0], d[31:28]) + 16'd3) & ~16'd3);
                    bp <= 2'd2;
                end else if (bp == 2'd2) bp <= 2'd0;
                else if (k_left != 0) begin
                    logic [15:0] n;
                    n = k_big ? 16'd64 : k_left;
                    k_left <= k_left - n;
                    kl_nz <= k_big;
                    k_big <= k_left > 16'd128;
                    if (k_left == n) begin
                        kw_vals <= kw_vals - 16'd1;
                        kw_nz <= kw_vals != 16'd1;
                    end
                end else if (kw_vals != 0) begin
                    k_state <= win[7:0];
                    k_left <= {7'b0, g_kw} + 16'd1;
                    kl_nz <= 1'b1;
                    k_big <= g_kw >= 9'd64;
                end else if (off[1:0] != 0) begin
                    // Aligned to the next descriptor (off_n).
                end else if (groups_left == 0) begin
                    if (!kv1_v && !kv2_v) st <= oh(ROUTE);
                end else bp <= 2'd1;
                if (kv_bad) begin
                    count(CNT_MALFORMED + $signed(32'(R_BAD_KULISCH_VALUE)));
                    bp <= 2'd0;
                    st <= oh(DONE);
                end
            end
            st[ROUTE]: begin
                st <= oh(DONE);
                if (f_dst_mac != node_mac) count(CNT_NOT_FOR_US);
                else if (f_class == CLASS_PROGRESS) count(CNT_PROGRESS_IGNORED);
                else if (f_class == CLASS_CONTROL) st <= oh(C_TXN);
                else st <= oh(D_CHK);
            end
            // The checks' conditions, registered from a quiet row.
            st[D_CHK]: if (hd_quiet) st <= oh(D_OP);
            // D_OP and D_DESC enter a group in every cycle, whatever they
            // decide: the figures matter only in D_RUN, which only they
            // lead to, and only after one that enters (a condition on the
            // loads of rq_* and vals_left put one more level behind the
            // frame buffer's word and side bits: 7.00-7.50).
            st[D_OP]: begin
                group_enter();
                if (dop_go) data_op(); else st <= oh(D_CHK);
            end
            // A later group's descriptor, from the frame buffer's aligned
            // word (dwin: 2.5 levels in the frame buffer's own synthesis,
            // 3.25 in the switch's; from the view's byte shift its run's
            // figures were 11.75). The group is entered in this cycle:
            // registering the word first costs a cycle a group, and the
            // residence of multi-group frames goes over 64 cycles
            // (pktgen_rtl's 5 ranks, MultiGroup: median 79).
            st[D_DESC]: begin
                group_enter();
                if (groups_left == 0) st <= oh(D_READY);
                else begin
                    groups_left <= groups_left - 8'd1;
                    gl_nz <= groups_left != 8'd1;
                    st <= oh(D_RUN);
                end
            end
            st[D_RUN]: if (!run_hold) begin
                // The run enters the lanes; its sums go into the ring F_LAT
                // (K_LAT) cycles later (the ring's process, below).
                pos <= pos + 33'(rq_n);
                vals_left <= vals_left - 16'(rq_n);
                if (rq_last) st <= groups_left == 0 ? oh(D_READY) : oh(D_DESC);
                else run_next();
            end
            // Readiness once the table's coverage and minimum have every admission.
            st[D_READY]: if (hd_settled && rdy_ok) ready_check();
            // ---------------------------------------------------- AUTO
            st[A_PLAN]: if (AUTO_ENABLE != 0) begin
                if (pl_valid) begin
                    pd_cont <= pl_cont_open;
                    pd_f <= pl_cont_open ? a_f : pl_nf;
                    pd_x <= pl_cont_open ? a_used : a_used + (a_open ? pad4(a_bytes) : 16'd0) + 16'd4;
                    for (int p = 0; p < 4; p++) begin
                        pd_lim[p] <= pl_cont_open ? f_lim[{a_f, 2'(p)}] : f_lim[{pl_nf, 2'(p)}];
                        pd_limv[p] <= pl_cont_open ? f_limv[{a_f, 2'(p)}] : f_limv[{pl_nf, 2'(p)}];
                    end
                    pd_pad <= pl_cont_open ? 2'(pad4(17'(a_bytes) + 17'(fwv[a_f]))) : 2'(pad4(17'(fwv[pl_nf])));
                    pd_ngok <= pl_cont_open || a_ng < 9'd255;
                    st <= oh(A_FIT);
                end else if (pl_end && a_i != 0) begin
                    // The vector's end closes the packet.
                    if (tx_idle) start_emit();
                end else if (pl_wait_ok && !pl_wait) st <= oh(DONE);   // the lookahead needs another frame
            end
            st[A_FIT]: if (AUTO_ENABLE != 0) begin
                pd_nu <= af_nu;
                pd_nb <= af_nb;
                pd_fits <= af_fits;
                st <= oh(A_REC);
            end
            st[A_REC]: if (AUTO_ENABLE != 0) begin
                if (!pd_fits) begin
                    // The packet closes; this value starts the next one.
                    if (tx_idle) start_emit();
                end else begin
                    // Recorded; the head is popped (pl_pop).
                    if (pd_cont) begin
                        a_gc[8'(a_ng - 9'd1)] <= 16'(a_count) + 16'd1;
                        a_count <= a_count + 17'd1;
                    end else begin
                        a_gf[a_ng[7:0]] <= pd_f;
                        a_gc[a_ng[7:0]] <= 16'd1;
                        a_ng <= a_ng + 9'd1;
                        a_count <= 17'd1;
                    end
                    a_f <= pd_f;
                    a_open <= 1'b1;
                    a_bytes <= pd_nb;
                    a_used <= pd_nu;
                    a_i <= a_i + 16'd1;
                    st <= oh(A_PLAN);
                end
            end
            st[A_EMIT]: if (AUTO_ENABLE != 0) begin
                if (e_end) begin
                    // The body is complete once its last write is (a_done):
                    // to egress, and the window moves on.
                    if (a_done) begin
                        issue(1'b0, 1'b1, 1'b0, base, a_i, pl_end, 16'd56 + e_off);
                        req_groups <= a_ng[7:0];
                        req_blen <= e_off;
                        release_window();   // to base + a_i
                        a_i <= '0;
                        a_open <= 1'b0;
                        a_used <= '0;
                        a_ng <= '0;
                        st <= oh(D_READY);
                    end
                end else if (!e_desc) begin
                    // The descriptor; its group's figures for the values.
                    logic [1:0] cw;
                    cw = gr_c[1:0] * fwv[gr_f][1:0];   // the group's bytes mod 4
                    e_off <= e_off + 16'd4;
                    e_desc <= 1'b1;
                    ge_f <= gr_f;
                    ge_w <= fwv[gr_f];
                    ge_wp <= fwv[gr_f] + pad4({15'b0, cw});
                    e_left <= gr_c - 16'd1;
                    em_last <= gr_c == 16'd1;
                end else begin
                    e_k <= e_k + 16'd1;
                    e_left <= e_left - 16'd1;
                    em_last <= e_left == 16'd1;
                    if (em_last) begin
                        e_off <= e_off + ge_wp;
                        e_g <= e_g + 9'd1;
                        e_end <= e_g + 9'd1 == a_ng;
                        e_desc <= 1'b0;
                    end else e_off <= e_off + ge_w;
                end
            end
            // ---------------------------------------------------- next frame
            st[DONE]: finish_frame();
            default: ;
            endcase
        end
    end
endmodule

`undef PN_B8
`undef PN_B16
`undef PN_B32
`undef PN_B48
