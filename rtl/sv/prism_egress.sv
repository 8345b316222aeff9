// prism_egress: prism_node's egress. It holds the request slots, builds
// the RESULT lines out of the ring, and sends each port's frames.
//
// Requests. The engine issues a request with req_en and its fields. These
// are the engine's registers, and the request goes into the next of RQ (2)
// slots at the next edge. req_free says whether the engine may issue in
// this cycle. It looks past a request not yet taken. A request is one of:
//   CONTROL  the reply in cbuf (q_len bytes, set no later than req_en).
//            The engine builds it only while tx_idle is high, and keeps it
//            until tx_idle is high again;
//   RESULT   an FP32 RESULT (FP32_ARRIVAL or KULISCH_FIXED) of req_count
//            values from ring slot req_base, for every path;
//   INEXACT  the terminal INEXACT RESULT, for every path;
//   AUTO     an AUTO RESULT whose body is in the AUTO lines (req_blen
//            bytes, req_groups groups; written through ob_*). The engine
//            writes no AUTO line until tx_idle.
// What a slot's frames need of the request (its last line, the last
// beat's length, the builder's first counts) is worked out as it is taken.
//
// The builder. It reads an FP32 RESULT's values out of the ring, a line
// (LANES values) a cycle: the read is eg_slot with eg_qn slots when eg_go
// is high, and eg_lap, the lap of the line's first slot's element (the
// request's base is an element; the ring tells a slot at rest by its lap,
// so nothing clears what the builder reads), all from its registers. A
// line waits while a slot of it has a sum in flight.
// The node answers the query eg_slot, eg_hqn (the line and the next one)
// with eg_hit, which is registered here and used a cycle later: no sum
// for a request's slots starts after the request (the engine requests a
// packet once every run for it is dispatched), so an answer a cycle old
// can only say "wait" too often, never "go" too early. The first line of
// a request waits a cycle for its registers and one for its answer. The
// ring gives the values EG_LAT cycles after the read (eg_acc). Under
// KULISCH_FIXED they are integers (eg_acck, eg_accf), in block order (the
// aligned LANES-slot block of the read's last slot: see prism_ring),
// rounded once to FP32 by LANES prism_kulisch_round_pipe in that order; a
// register after them puts the roundings into run order (eg_phase), taking
// a line's slots in the block before (eg_cross) from the previous read's
// roundings, kept: the builder reads a RESULT's lines in ring order, and
// the previous line read that block when the hazard answer for its line
// covered the rest of that block too (no sum for it in flight, and none
// starts: the builder's query reaches to the end of its last line's
// block), so the kept values are final. R_LAT cycles in all. The line's
// values are written into the slot's lines, a block RAM a port
// (prism_ram_sdp), and counted in rq_lines.
//
// The senders. There is one a port, with an AXI4-Stream master (m_axis_*,
// port p at [p*DATA_W +: DATA_W]). Each sends the slots' frames for its
// port in request order, a RESULT's paths in path order, a whole frame at
// a time. A sender is a pipeline: it issues a beat (slot, path, line) when
// the line is built (rq_lines) and its FIFO will have room; the next stage
// reads the beat's sources (the header bytes, the CONTROL or AUTO bytes,
// the line's RAM); the next merges and masks them into the port's
// prism_axis_fifo, whose entry drives m_axis_*. A slot is retired once it
// is built and every port has issued its last beat; every source of that
// beat is read the cycle after, before the slot can be taken again or the
// engine may change cbuf, the AUTO lines or the context (tx_idle). out_idle says
// no beat is left in any sender.
//
// Context. The RESULT header comes from the context (ctx_*, the paths p_*,
// n_paths). The engine changes them only while tx_idle is high. Each port's
// paths (a mask) are registered from them, a cycle before any request
// taken after the change can be sent.

`default_nettype none

module prism_egress #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int MTU = 1500,
    parameter int RING = 4096,
    parameter int KW = 320,
    parameter int KULISCH_ENABLE = 1,
    // 0: no AUTO RESULT is ever requested (prism_node's AUTO_ENABLE), so
    // the AUTO body's memories are not built; ob_* are not read.
    parameter int AUTO_ENABLE = 1,
    parameter int MAX_PATHS = 8,
    parameter int PORTS = 1,
    // The ring's egress read: EG_LAT cycles from eg_go to eg_acc.
    parameter int EG_LAT = 2,
    // The roundings' latency, eg_acck to m_round_*: prism_kulisch_round_pipe's
    // (simulation checks it) and the run-order register. The node counts on
    // it for AUTO's roundings.
    parameter int R_LAT = 7,
    // Width of eg_qn and eg_hqn (the node's run counts, up to FLANES).
    parameter int RN_W = 7,
    // The AUTO body memories' address bits (a frame line / 2).
    parameter int OBA = $clog2(2 ** $clog2((MTU + 14 + 63) / 64 + 1)) - 1
) (
    input  wire logic              clk,
    input  wire logic              rst,

    // A request from the engine (registers of its process).
    input  wire logic              req_en,
    input  wire logic              req_ctl,
    input  wire logic              req_auto,
    input  wire logic              req_inexact,
    input  wire logic [32:0]       req_base,
    input  wire logic [15:0]       req_count,
    input  wire logic              req_last,
    input  wire logic [15:0]       req_olen,      // frame bytes of a RESULT
    input  wire logic [15:0]       req_port,      // a CONTROL reply's port
    input  wire logic [31:0]       req_pid,
    input  wire logic [7:0]        req_groups,    // AUTO
    input  wire logic [15:0]       req_blen,      // AUTO
    output logic                   req_free,      // the engine may issue this cycle
    output logic                   tx_idle,       // no request taken or pending
    output logic                   out_idle,      // no beat in any sender

    // The CONTROL reply (byte i at [8i +: 8]), and the AUTO body: its
    // frame lines (prism_auto_body's writes: line lw and lw + 1, the even
    // one at ob_addr_e, the odd one at ob_addr_o, each at line / 2; line
    // 0's bytes below the header's end are zero), kept here in memories
    // a port and parity.
    input  wire logic [8*192-1:0]  cbuf,
    input  wire logic [15:0]       q_len,
    input  wire logic              ob_we,
    input  wire logic [OBA-1:0]    ob_addr_e,
    input  wire logic [OBA-1:0]    ob_addr_o,
    input  wire logic [DATA_W-1:0] ob_data_e,
    input  wire logic [DATA_W-1:0] ob_data_o,

    // The context, for the RESULT header.
    input  wire logic [47:0]       node_mac,
    input  wire logic [63:0]       ctx_job,
    input  wire logic [15:0]       ctx_group,
    input  wire logic [15:0]       ctx_op,
    input  wire logic [47:0]       ctx_gen,
    input  wire logic              ctx_kulisch,
    input  wire logic [$clog2(MAX_PATHS+1)-1:0] n_paths,
    input  wire logic [MAX_PATHS*48-1:0] p_mac,   // path i at [48*i +: 48]
    input  wire logic [MAX_PATHS*16-1:0] p_lep,
    input  wire logic [MAX_PATHS*16-1:0] p_pep,
    input  wire logic [MAX_PATHS*16-1:0] p_stream,
    input  wire logic [MAX_PATHS*16-1:0] p_port,

    // The ring's egress read, and the hazard query.
    output logic [$clog2(RING)-1:0] eg_slot,
    output logic [RN_W-1:0]        eg_qn,         // slots of the line
    output logic [RN_W-1:0]        eg_hqn,        // slots of the line and the next (the hazard query)
    output logic [$clog2(RING):0]  eg_hqe,        // the query's end, eg_slot + eg_hqn, and its wrap past the ring's end
    input  wire logic              eg_hit,        // one has a sum in flight
    output logic                   eg_go,         // the line is read this cycle
    output logic                   eg_lap,        // eg_slot's element's lap (bit RB of the element)
    input  wire logic [DATA_W-1:0] eg_acc,        // value j at [32j +: 32]
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire logic [DATA_W/32*(KULISCH_ENABLE != 0 ? KW : 1)-1:0] eg_acck,
    input  wire logic [DATA_W/32*5-1:0] eg_accf,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire logic [3:0]        eg_phase,      // the read's first slot mod LANES, with its data
    input  wire logic              eg_cross,      // the read crosses into the next block
    input  wire logic              eg_valid,      // eg_* is a read's data this cycle
    // Every rounding, in run order, R_LAT cycles after the ring's egress
    // data (eg_acck, eg_accf) it rounds, whoever read it: prism_node's AUTO
    // reads the same port in contexts where the builder does not (each
    // read inside one block), and takes its roundings from here (0 without
    // KULISCH_ENABLE).
    output logic [DATA_W-1:0]      m_round_fp32,  // value j at [32j +: 32]
    output logic [DATA_W/32-1:0]   m_round_exact,

    // One egress stream a port.
    output logic [PORTS*DATA_W-1:0] m_axis_tdata,
    output logic [PORTS*KEEP_W-1:0] m_axis_tkeep,
    output logic [PORTS-1:0]       m_axis_tvalid,
    output logic [PORTS-1:0]       m_axis_tlast,
    input  wire logic [PORTS-1:0]  m_axis_tready
);
    import prism_pkg::*;

    localparam int LINES = (MTU + 14 + 63) / 64;
    localparam int FB = $clog2(2 ** $clog2(LINES + 1));
    localparam int PI_W = $clog2(MAX_PATHS + 1);
    localparam int PSLOTS = 2 ** PI_W;
    localparam int LANES = DATA_W / 32;          // RESULT values a line
    localparam int RB = $clog2(RING);
    localparam int RQ = 2;
    localparam int FDEPTH = 4;                   // a sender's FIFO (its pipeline holds 2 beats)
    localparam int FL_W = $clog2(FDEPTH + 1);

    initial begin
        if (DATA_W != 512) $error("prism_egress: DATA_W must be 512 (a RESULT header is 60 bytes of line 0)");
        if (KEEP_W != DATA_W / 8) $error("prism_egress: KEEP_W must be DATA_W / 8");
        if (PORTS < 1) $error("prism_egress: PORTS must be at least 1");
        if (EG_LAT < 1) $error("prism_egress: EG_LAT must be at least 1");
        if (R_LAT < 2) $error("prism_egress: R_LAT must be at least 2");
        if (KULISCH_ENABLE != 0 && KULISCH_ENABLE != 1) $error("prism_egress: KULISCH_ENABLE must be 0 or 1");
        if (AUTO_ENABLE != 0 && AUTO_ENABLE != 1) $error("prism_egress: AUTO_ENABLE must be 0 or 1");
        if (2 ** RB != RING) $error("prism_egress: RING must be a power of two");
        if (2 ** RN_W <= 2 * LANES) $error("prism_egress: RN_W must hold two lines' slots");
        if (16 * LINES < 16 + (MTU - 60) / 4) $error("prism_egress: LINES too few for the MTU's RESULT");
        if (LANES != 16) $error("prism_egress: a line is 16 values (the builder's counts)");
    end

    // ------------------------------------------------------------ slots
    // Toggles: issued (taken from the engine), built and retired, each port done.
    logic        rq_w;               // the next slot
    logic        rq_tog [RQ], bt_tog [RQ], rt_tog [RQ];
    logic [PORTS-1:0] pd_tog [RQ];
    logic        rq_valid [RQ], rq_built [RQ];
    logic [PORTS-1:0] rq_pdone [RQ];
    (* mem2reg *) logic        rq_ctl [RQ], rq_auto [RQ], rq_inexact [RQ], rq_last [RQ];
    (* mem2reg *) logic [32:0] rq_base [RQ];
    (* mem2reg *) logic [15:0] rq_count [RQ], rq_blen [RQ];
    (* mem2reg *) logic [31:0] rq_pid [RQ];
    (* mem2reg *) logic [7:0]  rq_groups [RQ];
    // Worked out as the request is taken: the frame's last line and the
    // bytes of its last beat, the CONTROL reply's port, and the builder's
    // first counts (below).
    (* mem2reg *) logic [FB-1:0] rq_ll [RQ];
    (* mem2reg *) logic [6:0]  rq_lrem [RQ];
    (* mem2reg *) logic [PORTS-1:0] rq_ctlp [RQ];
    // A RESULT's lines: each has its first ring slot, its values (1 in
    // line 0, then up to LANES), whether it is the last, the values after
    // it, the next line's values (nn: min(LANES, left), so below LANES the
    // next line takes every value left) and its index. Lines 0 and 1 of a
    // request are worked out as it is taken (line 0's slot is its base).
    (* mem2reg *) logic        rq_last0 [RQ], rq_last1 [RQ];
    (* mem2reg *) logic [15:0] rq_left0 [RQ], rq_left1 [RQ];
    (* mem2reg *) logic [4:0]  rq_nn0 [RQ], rq_nn1 [RQ];
    (* mem2reg *) logic [RB:0] rq_slot1 [RQ];    // with its lap
    // The slot after line 0 and after line 1, without the lap (a carry
    // past the ring's last slot instead): the builder's nx_e and cur_e.
    // After line 1 is slot 1 (base + 1, without the lap) for a count of 1
    // (rq_last0), slot 1 + the count - 1 up to 17 (rq_last1), else slot 1
    // + 16: each sum kept, and picked as line 1 is loaded (one sum behind
    // the count's compares was 7.25 levels: Yosys's `share` makes one add
    // of sums used one at a time).
    (* mem2reg *) logic [RB:0] rq_e0 [RQ], rq_e1c [RQ], rq_e17 [RQ];
    // The end of line 0's query (base + rq_hq0) the same way: rq_e0 for a
    // count of 1, rq_qa when the count reaches the block after line 1's
    // (rq_qbig), else rq_qc (as an add behind the slot's select it was the
    // last level too many, 6.25).
    (* mem2reg *) logic [RB:0] rq_qa [RQ], rq_qc [RQ];
    (* mem2reg *) logic        rq_qbig [RQ];
    function automatic logic [RB:0] q_end0(input logic s);
        q_end0 = rq_last0[s] ? rq_e0[s] : (rq_qbig[s] ? rq_qa[s] : rq_qc[s]);
    endfunction
    // The builder's hazard query counts, ready before the builder needs
    // them: slots of lines 0 and 1 (rq_hq0), of lines 1 and 2 (rq_hq1),
    // each with the rest of its last line's block inside the request (see
    // the builder); 32 and that rest (rq_x32, for the later lines); line 0
    // and the rest of its block inside the request (rq_h0r).
    (* mem2reg *) logic [5:0]  rq_hq0 [RQ], rq_hq1 [RQ], rq_x32 [RQ];
    (* mem2reg *) logic [4:0]  rq_h0r [RQ];
    logic [4:0]  h0r_new;            // the request's, as req_en writes it
    always_comb begin
        logic [3:0] x;               // (the rest of line 0's block, as below)
        x = ~req_base[3:0];
        h0r_new = req_count >= 16'd1 + 16'(x) ? 5'd1 + 5'(x) : req_count[4:0];
    end
    // Line 0 follows the previous request's last slot in the ring (the
    // builder's hazard query can then cover both in one range).
    (* mem2reg *) logic        rq_contig [RQ];
    logic [FB:0] rq_lines [RQ];      // lines of the slot's values built so far
    logic        sp_busy;            // a beat in some sender's pipeline or FIFO
    // No slot valid, a register: worked out from the toggles' next values
    // (tx_idle from the toggles' compares was 6.25 levels into the
    // engine's state).
    logic        rq_none_q;
    always_ff @(posedge clk) begin
        logic none;
        none = 1'b1;
        for (int s = 0; s < RQ; s++) begin
            logic rq_n, rt_n;
            rq_n = req_en && rq_w == 1'(s) ? !rq_tog[s] : rq_tog[s];
            rt_n = rq_valid[s] && rq_built[s] && rq_pdone[s] == '1 ? !rt_tog[s] : rt_tog[s];
            if (rq_n != rt_n) none = 1'b0;
        end
        rq_none_q <= rst || none;
    end
    always_comb begin
        tx_idle = !req_en && rq_none_q;
        for (int s = 0; s < RQ; s++) begin
            rq_valid[s] = rq_tog[s] != rt_tog[s];
            rq_built[s] = bt_tog[s] != rt_tog[s];
            rq_pdone[s] = pd_tog[s] ^ {PORTS{rt_tog[s]}};
        end
        // A request not yet taken goes into rq_w: the next one into the other slot.
        req_free = !rq_valid[rq_w ^ req_en];
        out_idle = !sp_busy;
    end
    always_ff @(posedge clk) begin
        if (rst) begin
            rq_w <= 1'b0;
            for (int s = 0; s < RQ; s++) rq_tog[s] <= 1'b0;
        end else if (req_en) begin
            rq_tog[rq_w] <= !rq_tog[rq_w];
            rq_w <= !rq_w;
        end
        if (req_en) begin
            logic [15:0] olen, om1;
            olen = req_ctl ? q_len : req_olen;
            om1 = olen - 16'd1;
            rq_ctl[rq_w] <= req_ctl;
            rq_auto[rq_w] <= req_auto;
            rq_inexact[rq_w] <= req_inexact;
            rq_base[rq_w] <= req_base;
            rq_count[rq_w] <= req_count;
            rq_last[rq_w] <= req_last;
            rq_pid[rq_w] <= req_pid;
            rq_groups[rq_w] <= req_groups;
            rq_blen[rq_w] <= req_blen;
            rq_ll[rq_w] <= FB'(om1 >> 6);
            rq_lrem[rq_w] <= {1'b0, om1[5:0]} + 7'd1;
            for (int p = 0; p < PORTS; p++) rq_ctlp[rq_w][p] <= req_ctl && req_port == 16'(p);
            // Each from the count directly (compares and a subtraction side
            // by side): line 1 holds values 1 to 16, line 2 from value 17.
            begin
                logic [4:0] cm1;
                // Every line ends at base + 1 + 16k: the rest of its block
                // is x = (-(base + 1)) mod 16 slots, the next line's first.
                logic [3:0] x;
                cm1 = req_count[4:0] - 5'd1;
                x = ~req_base[3:0];
                rq_last0[rq_w] <= req_count <= 16'd1;
                rq_left0[rq_w] <= req_count - 16'd1;
                rq_nn0[rq_w] <= req_count <= 16'd1 ? 5'd0 : (req_count >= 16'd17 ? 5'd16 : cm1);
                rq_slot1[rq_w] <= (RB + 1)'(req_base) + (RB + 1)'(1);
                rq_e0[rq_w] <= {1'b0, RB'(req_base)} + (RB + 1)'(1);
                // (From line 1's slot without its lap: line 1 of a RESULT
                // based at the ring's last slot starts at slot 0.)
                rq_e1c[rq_w] <= {1'b0, RB'(req_base) + RB'(1)} + (RB + 1)'(cm1);
                rq_e17[rq_w] <= {1'b0, RB'(req_base) + RB'(1)} + (RB + 1)'(16);
                rq_last1[rq_w] <= req_count <= 16'd17;
                rq_left1[rq_w] <= req_count >= 16'd17 ? req_count - 16'd17 : 16'd0;
                rq_nn1[rq_w] <= req_count >= 16'd33 ? 5'd16 : (req_count >= 16'd17 ? {1'b0, cm1[3:0]} : 5'd0);
                rq_hq0[rq_w] <= req_count <= 16'd1 ? 6'd1 : (req_count >= 16'd17 + 16'(x) ? 6'd17 + 6'(x) : req_count[5:0]);
                // base + rq_hq0 (the query's end for line 0 and 1): base + 1
                // (rq_e0), base + 17 + x = the block after next's start, or
                // base + the count.
                rq_qbig[rq_w] <= req_count >= 16'd17 + 16'(x);
                rq_qa[rq_w] <= {{1'b0, req_base[RB-1:4]} + (RB - 3)'(2), 4'b0};
                rq_qc[rq_w] <= {1'b0, RB'(req_base)} + (RB + 1)'(req_count[5:0]);
                rq_hq1[rq_w] <= req_count <= 16'd1 ? 6'd0 : (req_count >= 16'd33 + 16'(x) ? 6'd32 + 6'(x) : req_count[5:0] - 6'd1);
                rq_x32[rq_w] <= 6'd32 + 6'(x);
                rq_h0r[rq_w] <= h0r_new;
            end
            rq_contig[rq_w] <= RB'(req_base) == RB'(rq_base[!rq_w] + 33'(rq_count[!rq_w]));
        end
    end

    // ------------------------------------------------------------ builder
    // The current line (cur_*, of slot bl_s, when cv) and the line after it
    // (nx_*, when nv): the next line of the same RESULT, or line 0 of the
    // next request once it is taken. The hazard query is cur's slots and,
    // when nq, nx's (hq slots from cur_slot: nx follows cur in the ring),
    // so its answer covers the line the builder moves to: a RESULT's
    // lines, and RESULTs of consecutive ranges, go a line a cycle. Each
    // query also covers the rest of its last line's block inside that
    // line's request (the next line's first slots, at most 15): the line
    // after it takes them from that line's read (eg_cross), so they must
    // have no sum in flight when it is read. (Until session 65 they were
    // not in the query: a line could be read while a sum for the rest of
    // its block was in flight, and the next line then took a stale
    // rounding; switch_diff found it once the Kulisch lanes' latency was
    // 8.) Line 0 of a RESULT is one slot and crosses no block.
    logic        bl_s;
    logic        cv, nv, nq, hv;     // cur, nx, nx in the query, hit_r answers for cur
    logic [RB:0]   cur_slot, nx_slot;  // with their lap (bit RB)
    logic [4:0]  cur_n, nx_n, nx_nn;
    // cur_slot + cur_n and nx_slot + nx_n without the lap, registered with
    // them: the query's end across two contiguous RESULTs is one of them
    // plus the next request's rq_h0r (a three-operand add behind the
    // decision was 7.00 levels in the whole switch).
    logic [RB:0] cur_e, nx_e;
    logic [5:0]  hq_cur, hq_nx;      // cur_n, nx_n + the other request's rq_h0r
    // That rq_h0r (of slot o, the other slot), a register: the 2:1 select
    // by o in front of the add was the last level too many (6.25).
    logic [4:0]  h0r_o;
    logic        bl_flip;            // the builder moves to the other slot (bl_s <= o)
    logic [RB:0] he_cur, he_nx;      // cur_e, nx_e + the same
    logic        cur_last, nx_last;
    logic [15:0] nx_left;
    logic [FB-1:0] cur_idx, nx_idx;
    logic [5:0]  hq;
    // cur_slot + hq and its carry past the ring's last slot, registered
    // with them: the node's tracker compares slots with the query's end
    // instead of a subtract and a compare with hq (7.50 levels).
    logic [RB:0] hq_e;
    // nx_hq (nx, the line after it and the rest of that line's block) and
    // cur_x32 (32 and that rest for cur's RESULT): kept beside the counts,
    // so a query count within a RESULT is a choice among registers. Across
    // two contiguous RESULTs it is cur's or nx's count plus the next one's
    // rq_h0r, a 6-bit add behind the decision (egress at KW 64: 6.00
    // levels in rtl/timing.sh, 5.75 before).
    logic [5:0]  nx_hq, cur_x32;
    logic        hit_r;              // the answer to last cycle's query
    logic        bl_act, bl_fp, bl_go, o_rdy;
    logic        o;                  // the other slot
    logic [LANES-1:0] cur_in;        // value j is in the line
    logic [LANES-1:0] bl_has;        // value j of the line is read
    logic [DATA_W-1:0] bl_vals;
    always_comb begin
        o = !bl_s;
        bl_act = rq_valid[bl_s] && !rq_built[bl_s];
        bl_fp = bl_act && !rq_ctl[bl_s] && !rq_auto[bl_s] && !rq_inexact[bl_s];
        // The next request is taken, not built, an FP32 RESULT.
        o_rdy = rq_valid[o] && !rq_built[o] && !rq_ctl[o] && !rq_auto[o] && !rq_inexact[o];
        bl_go = cv && hv && !hit_r;
        hq_cur = 6'(cur_n) + 6'(h0r_o);
        hq_nx = 6'(nx_n) + 6'(h0r_o);
        he_cur = cur_e + (RB + 1)'(h0r_o);
        he_nx = nx_e + (RB + 1)'(h0r_o);
        bl_flip = (!cv && bl_act && !bl_fp) || (cv && bl_go && cur_last);
        for (int j = 0; j < LANES; j++) cur_in[j] = cur_n > 5'(j);
        bl_has = bl_go ? cur_in : '0;
    end
    assign eg_slot = RB'(cur_slot);
    assign eg_lap = cur_slot[RB];
`ifndef SYNTHESIS
    // The line read is its request's: line 0 the base's one value, line
    // k >= 1 from base + 1 + 16 (k - 1), slot and lap (the ring's tags).
    always_ff @(posedge clk)
        if (!rst && bl_go && cur_slot != (RB + 1)'(rq_base[bl_s] + (cur_idx == 0 ? 33'd0 : 33'(LANES) * (33'(cur_idx) - 33'd1) + 33'd1)))
            $error("prism_egress: line %0d of the request read from %0d, not its element's slot and lap", cur_idx, cur_slot);
    // cur_e and nx_e are their lines' ends, hq_e the query's.
    always_ff @(posedge clk) begin
        if (!rst && cv && hq_e != {1'b0, RB'(cur_slot)} + (RB + 1)'(hq))
            $error("prism_egress: hq_e %0d is not cur_slot %0d + hq %0d", hq_e, cur_slot, hq);
        if (!rst && cv && cur_e != {1'b0, RB'(cur_slot)} + (RB + 1)'(cur_n))
            $error("prism_egress: cur_e %0d is not cur_slot %0d + cur_n %0d", cur_e, cur_slot, cur_n);
        if (!rst && nv && nx_e != {1'b0, RB'(nx_slot)} + (RB + 1)'(nx_n))
            $error("prism_egress: nx_e %0d is not nx_slot %0d + nx_n %0d", nx_e, nx_slot, nx_n);
    end
`endif
    assign eg_qn = RN_W'(cur_n);
    assign eg_hqn = RN_W'(hq);
    assign eg_hqe = hq_e;
    assign eg_go = bl_go;

    // The ring's egress read takes EG_LAT cycles: an FP32 line is written
    // (and counted in rq_lines) EG_LAT cycles after the builder reads its
    // slots. Under KULISCH_FIXED a line's values leave the roundings R_LAT
    // cycles after that. The line's slot,
    // line and values follow it down rl_*, RL stages (an FP32 line leaves
    // at stage EG_LAT-1: fl_v). The builder goes on meanwhile. A sender
    // waits for rq_lines, so it never sends a line not yet written, and a
    // slot retires only after its last line is sent.
    localparam int RL = EG_LAT + R_LAT;
    logic [EG_LAT-1:0] fl_v;
    logic [RL-1:0] rl_v;
    logic        rl_s [RL];
    logic [FB-1:0] rl_line [RL];
    logic [LANES-1:0] rl_has [RL];
    logic [DATA_W-1:0] rl_vals;      // the line leaving the roundings
    logic        r_mv0;              // round pipe 0's m_valid (the latency check)
    // The roundings in block order (kr, kx), as they leave the pipes, with
    // their read's phase, crossing and validity (rd_*, down R_LAT - 1
    // stages beside them); the previous read's (kp_*); in run order (ro_*).
    logic [31:0] kr [LANES];
    logic        kx [LANES];
    logic [31:0] kp_r [LANES];
    logic        kp_x [LANES];
    logic [3:0]  rd_phase [R_LAT-1];
    logic        rd_cross [R_LAT-1];
    logic [R_LAT-2:0] rd_v;
    genvar gr;
    generate
        for (gr = 0; gr < LANES; gr++) begin : g_round
            if (KULISCH_ENABLE == 0) begin : g_none
                assign kr[gr] = '0;
                assign kx[gr] = 1'b0;
                if (gr == 0) begin : g_first
                    assign r_mv0 = 1'b0;
                end
            end else if (gr == 0) begin : g_first
                /* verilator lint_off PINCONNECTEMPTY */
                prism_kulisch_round_pipe #(.KW(KW)) round (.clk, .en(1'b1), .s_valid(rl_v[EG_LAT-1]),
                    .acc(eg_acck[KW*gr +: KW]), .flags(eg_accf[5*gr +: 5]), .m_valid(r_mv0), .fp32(kr[gr]), .exact(kx[gr]));
                /* verilator lint_on PINCONNECTEMPTY */
            end else begin : g_rest
                /* verilator lint_off PINCONNECTEMPTY */
                prism_kulisch_round_pipe #(.KW(KW)) round (.clk, .en(1'b1), .s_valid(rl_v[EG_LAT-1]),
                    .acc(eg_acck[KW*gr +: KW]), .flags(eg_accf[5*gr +: 5]), .m_valid(), .fp32(kr[gr]), .exact(kx[gr]));
                /* verilator lint_on PINCONNECTEMPTY */
            end
            assign rl_vals[32*gr +: 32] = rl_has[RL-1][gr] ? m_round_fp32[32*gr +: 32] : 32'd0;
        end
    endgenerate
    always_ff @(posedge clk) begin
        rd_phase[0] <= eg_phase;
        rd_cross[0] <= eg_cross;
        for (int i = 1; i < R_LAT - 1; i++) begin
            rd_phase[i] <= rd_phase[i-1];
            rd_cross[i] <= rd_cross[i-1];
        end
        if (rst) rd_v <= '0;
        else rd_v <= (R_LAT - 1)'({rd_v, eg_valid});
        // Value j of the run is the slot at phase + j of the block, or of
        // the block before (the previous read's) when the run crosses: in
        // a crossing run the block's positions from phase up are the block
        // before's. Each position picks its source first (a LUT), then the
        // run's values are a rotation by the phase (16:1 a bit), not a
        // 32:1 select of both reads.
        begin
            logic [31:0] sr [LANES];
            logic        sx [LANES];
            for (int p = 0; p < LANES; p++) begin
                logic from_kp;
                from_kp = rd_cross[R_LAT-2] && 4'(p) >= rd_phase[R_LAT-2];
                sr[p] = from_kp ? kp_r[p] : kr[p];
                sx[p] = from_kp ? kp_x[p] : kx[p];
            end
            for (int j = 0; j < LANES; j++) begin
                logic [3:0] i;
                i = rd_phase[R_LAT-2] + 4'(j);
                m_round_fp32[32*j +: 32] <= sr[i];
                m_round_exact[j] <= sx[i];
            end
        end
        if (rd_v[R_LAT-2])
            for (int p = 0; p < LANES; p++) begin
                kp_r[p] <= kr[p];
                kp_x[p] <= kx[p];
            end
    end
    always_ff @(posedge clk) begin
        if (rst) begin
            rl_v <= '0;
            fl_v <= '0;
        end else begin
            rl_v <= RL'({rl_v, eg_go && ctx_kulisch});
            fl_v <= EG_LAT'({fl_v, eg_go && !ctx_kulisch});
        end
        rl_s[0] <= bl_s;
        rl_line[0] <= cur_idx;
        rl_has[0] <= bl_has;
        for (int i = 1; i < RL; i++) begin
            rl_s[i] <= rl_s[i-1];
            rl_line[i] <= rl_line[i-1];
            rl_has[i] <= rl_has[i-1];
        end
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && r_mv0 != rl_v[RL-2]) $error("prism_egress: R_LAT is not prism_kulisch_round_pipe's latency and one");
`endif
    always_comb begin
        bl_vals = '0;
        for (int j = 0; j < LANES; j++) if (rl_has[EG_LAT-1][j]) bl_vals[32*j +: 32] = eg_acc[32*j +: 32];
    end
    // The line written this cycle (an FP32 line and a KULISCH_FIXED line
    // never meet: the context, and so the kind, changes only when egress is idle).
    logic          lw_en;
    logic          lw_s;
    logic [FB-1:0] lw_line;
    logic [DATA_W-1:0] lw_data;
    always_comb begin
        lw_en = fl_v[EG_LAT-1] || rl_v[RL-1];
        lw_s = fl_v[EG_LAT-1] ? rl_s[EG_LAT-1] : rl_s[RL-1];
        lw_line = fl_v[EG_LAT-1] ? rl_line[EG_LAT-1] : rl_line[RL-1];
        lw_data = fl_v[EG_LAT-1] ? bl_vals : rl_vals;
    end

    // nx as line 0 (1) of the request in slot r.
    task automatic load_nx0(input logic r);
        nx_slot <= (RB + 1)'(rq_base[r]);
        nx_n <= 5'd1;
        nx_e <= rq_e0[r];
        nx_last <= rq_last0[r];
        nx_left <= rq_left0[r];
        nx_nn <= rq_nn0[r];
        nx_idx <= '0;
        nx_hq <= rq_hq0[r];
    endtask
    task automatic load_nx1(input logic r);
        nx_slot <= rq_slot1[r];
        nx_n <= rq_nn0[r];
        nx_e <= rq_last0[r] ? {1'b0, RB'(rq_slot1[r])} : (rq_last1[r] ? rq_e1c[r] : rq_e17[r]);
        nx_last <= rq_last1[r];
        nx_left <= rq_left1[r];
        nx_nn <= rq_nn1[r];
        nx_idx <= FB'(1);
        nx_hq <= rq_hq1[r];
    endtask
    // h0r_o follows o and the writes of rq_h0r.
    always_ff @(posedge clk) begin
        logic o_n;
        o_n = rst ? 1'b1 : (bl_flip ? bl_s : o);
        h0r_o <= req_en && rq_w == o_n ? h0r_new : rq_h0r[o_n];
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && rq_valid[o] && h0r_o != rq_h0r[o])
            $error("prism_egress: h0r_o %0d is not the other slot's rq_h0r %0d", h0r_o, rq_h0r[o]);
`endif
    always_ff @(posedge clk) begin
        hit_r <= eg_hit;
        if (rst) begin
            bl_s <= 1'b0;
            cv <= 1'b0;
            nv <= 1'b0;
            nq <= 1'b0;
            hv <= 1'b0;
            for (int s = 0; s < RQ; s++) begin
                bt_tog[s] <= 1'b0;
                rq_lines[s] <= '0;
            end
        end else begin
            // This cycle's query answers for cur next cycle if it stays, for nx if the builder moves on.
            hv <= cv && (!bl_go || nq);
            if (!cv) begin
                if (bl_act && !bl_fp) begin
                    // Nothing to build: a CONTROL reply, an INEXACT, an AUTO body.
                    bt_tog[bl_s] <= !bt_tog[bl_s];
                    bl_s <= o;
                end else if (bl_fp) begin
                    // Line 0 of the request, line 1 after it.
                    cur_slot <= (RB + 1)'(rq_base[bl_s]);
                    cur_e <= rq_e0[bl_s];
                    hq_e <= q_end0(bl_s);
                    cur_n <= 5'd1;
                    cur_x32 <= rq_x32[bl_s];
                    cur_last <= rq_last0[bl_s];
                    cur_idx <= '0;
                    load_nx1(bl_s);
                    cv <= 1'b1;
                    nv <= !rq_last0[bl_s];
                    nq <= !rq_last0[bl_s];
                    hq <= rq_hq0[bl_s];
                end
            end else if (bl_go) begin
                cur_slot <= nx_slot;
                cur_e <= nx_e;
                cur_n <= nx_n;
                cur_last <= nx_last;
                cur_idx <= nx_idx;
                if (cur_last) begin
                    // The RESULT is read; nx, if any, is line 0 of the next one.
                    bt_tog[bl_s] <= !bt_tog[bl_s];
                    bl_s <= o;
                    cv <= nv;
                    load_nx1(o);
                    nv <= nv && !rq_last0[o];
                    nq <= nv && !rq_last0[o];
                    // (With nv, nx is line 0 of slot o's RESULT: nx_slot is
                    // its base. Without, the builder goes idle: an empty
                    // query from nx_slot, as hq_e must stay cur_slot + hq.)
                    hq <= nv ? rq_hq0[o] : 6'd0;
                    hq_e <= !nv ? {1'b0, RB'(nx_slot)} : q_end0(o);
                    cur_x32 <= rq_x32[o];
                end else if (!nx_last) begin
                    // The line after nx.
                    nx_slot <= nx_slot + (RB + 1)'(nx_n);
                    nx_e <= {1'b0, RB'(nx_e)} + (RB + 1)'(nx_nn);
                    nx_n <= nx_nn;
                    // nx_left's compares with constants as tests of its
                    // bits (as compares, ABC built carry chains of 16 bits
                    // in front of the selects: 6.25 levels).
                    nx_last <= nx_left[15:5] == 11'd0 && (!nx_left[4] || nx_left[3:0] == 4'd0);
                    nx_left <= nx_left - 16'(nx_nn);
                    nx_nn <= !nx_nn[4] ? 5'd0 : (nx_left[15:5] != 11'd0 ? 5'd16 : {1'b0, nx_left[3:0]});
                    nx_idx <= nx_idx + 1'b1;
                    // nx_nn is 16 or the RESULT's last line: no carry to add.
                    nx_hq <= !nx_nn[4] ? 6'(nx_nn) : (nx_left[15:6] != 10'd0 || nx_left[5:0] >= cur_x32 ? cur_x32 : nx_left[5:0]);
                    hq <= nx_hq;
                    hq_e <= {1'b0, RB'(nx_slot)} + (RB + 1)'(nx_hq);
                end else begin
                    // nx is the RESULT's last line: line 0 of the next request after it.
                    load_nx0(o);
                    nv <= o_rdy;
                    nq <= o_rdy && rq_contig[o];
                    hq <= o_rdy && rq_contig[o] ? hq_nx : 6'(nx_n);
                    hq_e <= o_rdy && rq_contig[o] ? he_nx : nx_e;
                end
            end else if (cur_last && !nv && o_rdy) begin
                // The next request came while cur is its RESULT's last line.
                load_nx0(o);
                nv <= 1'b1;
                nq <= rq_contig[o];
                hq <= rq_contig[o] ? hq_cur : 6'(cur_n);
                hq_e <= rq_contig[o] ? he_cur : cur_e;
            end
            if (lw_en) rq_lines[lw_s] <= {1'b0, lw_line} + 1'b1;
            // Retire a slot every port has sent.
            for (int s = 0; s < RQ; s++)
                if (rq_valid[s] && rq_built[s] && rq_pdone[s] == '1) rq_lines[s] <= '0;
        end
    end

    // ------------------------------------------------------------ senders
    // The paths, as arrays over every index the path counter can hold.
    logic [47:0] pm [PSLOTS];
    logic [15:0] pl [PSLOTS], pp [PSLOTS], ps [PSLOTS];
    always_comb
        for (int i = 0; i < PSLOTS; i++) begin
            pm[i] = i < MAX_PATHS ? p_mac[48*i +: 48] : '0;
            pl[i] = i < MAX_PATHS ? p_lep[16*i +: 16] : '0;
            pp[i] = i < MAX_PATHS ? p_pep[16*i +: 16] : '0;
            ps[i] = i < MAX_PATHS ? p_stream[16*i +: 16] : '0;
        end
    // Port p's paths (bit i: path i is bound and on port p), registered.
    logic [MAX_PATHS-1:0] pmask [PORTS];
    always_ff @(posedge clk)
        for (int p = 0; p < PORTS; p++)
            for (int i = 0; i < MAX_PATHS; i++)
                pmask[p][i] <= PI_W'(i) < n_paths && p_port[16*i +: 16] == 16'(p);
    // For a sender at path v: whether port p has a path from v on (pt_has),
    // a second one after it (pt_more), and the first (pt_pi); registered
    // from pmask, so a sender's step is a lookup by its path index, not a
    // priority search and a subtraction (the paths change only while
    // egress is idle).
    logic          pt_has [PORTS][PSLOTS];
    logic          pt_more [PORTS][PSLOTS];
    logic [PI_W-1:0] pt_pi [PORTS][PSLOTS];
    always_ff @(posedge clk)
        for (int p = 0; p < PORTS; p++)
            for (int v = 0; v < PSLOTS; v++) begin
                logic [MAX_PATHS-1:0] c;
                logic seen, two;
                logic [PI_W-1:0] first;
                for (int i = 0; i < MAX_PATHS; i++) c[i] = pmask[p][i] && i >= v;
                seen = 1'b0;
                two = 1'b0;
                first = '0;
                for (int i = 0; i < MAX_PATHS; i++) begin
                    if (c[i] && seen) two = 1'b1;
                    if (c[i] && !seen) first = PI_W'(i);
                    if (c[i]) seen = 1'b1;
                end
                pt_has[p][v] <= seen;
                pt_more[p][v] <= two;
                pt_pi[p][v] <= first;
            end

    // Header byte i of slot s's RESULT on path pi.
    function automatic logic [7:0] res_hdr_byte(input int i, input logic s, input logic [PI_W-1:0] pi);
        logic [7:0] v;
        logic [15:0] blen, cnt_;
        logic [32:0] rb;
        logic [31:0] pid;
        logic ix;
        ix = rq_inexact[s];
        cnt_ = rq_count[s];
        rb = rq_base[s];
        pid = rq_pid[s];
        blen = ix ? 16'd0 : (rq_auto[s] ? rq_blen[s] : 16'(4 + 4 * cnt_));
        case (i)
            0, 1, 2, 3, 4, 5: v = pm[pi][8*(5-i) +: 8];
            6, 7, 8, 9, 10, 11: v = node_mac[8*(11-i) +: 8];
            12: v = ETHERTYPE[15:8];
            13: v = ETHERTYPE[7:0];
            14: v = 8'h10;
            15: v = CLASS_RESULT;
            16, 17, 18, 19, 20, 21, 22, 23: v = ctx_job[8*(23-i) +: 8];
            24, 25: v = ctx_group[8*(25-i) +: 8];
            26, 27: v = ctx_gen[8*(31-i) +: 8];
            28, 29: v = ctx_op[8*(29-i) +: 8];
            30, 31, 32, 33: v = ctx_gen[8*(33-i) +: 8];
            34, 35: v = pl[pi][8*(35-i) +: 8];
            36, 37: v = pp[pi][8*(37-i) +: 8];
            38, 39, 40, 41: v = pid[8*(41-i) +: 8];
            42, 43, 44, 45: v = ix ? 8'd0 : rb[8*(45-i) +: 8];
            46, 47: v = ix ? 8'd0 : cnt_[8*(47-i) +: 8];
            48: v = ix ? 8'd0 : (rq_auto[s] ? rq_groups[s] : 8'd1);
            49: v = ix ? (FLAG_LAST | FLAG_INEXACT) : (rq_last[s] ? FLAG_LAST : 8'd0);
            50, 51: v = blen[8*(51-i) +: 8];
            52, 53: v = ps[pi][8*(53-i) +: 8];
            56: v = ix ? 8'd0 : {FMT_FP32, 4'b0};
            57: v = 8'd0;
            58, 59: v = ix ? 8'd0 : cnt_[8*(59-i) +: 8];
            default: v = 8'd0;
        endcase
        res_hdr_byte = v;
    endfunction


    // Stage 1 (issue): port p is on slot sp_s[p], at path sp_pi[p] or
    // after, line sp_line[p]; it issues the beat into d1_* when the line
    // is built and its FIFO has room for every beat in flight.
    logic        sp_s [PORTS];
    logic [PI_W-1:0] sp_pi [PORTS];
    logic [FB-1:0] sp_line [PORTS];
    logic        sx_live [PORTS];    // the slot is taken and the port not done with it
    logic        sx_has [PORTS];     // the slot has a frame for the port (from sp_pi on)
    logic        sx_more [PORTS];    // and another after it
    logic [PI_W-1:0] sx_pi [PORTS];  // its path
    logic        sx_last [PORTS];    // the beat is its frame's last
    logic        sx_go [PORTS];      // the beat is issued
    logic [FL_W-1:0] f_level [PORTS];
    // Stage 2 (sources) and stage 3 (merge into the FIFO).
    logic        d1_v [PORTS], d1_s [PORTS], d1_last [PORTS], d1_ctl [PORTS], d1_auto [PORTS], d1_ix [PORTS];
    logic [PI_W-1:0] d1_pi [PORTS];
    logic [FB-1:0] d1_line [PORTS];
    logic [6:0]  d1_lrem [PORTS];
    logic        d2_v [PORTS], d2_last [PORTS], d2_ram [PORTS], d2_l0 [PORTS];
    logic        d2_auto [PORTS], d2_odd [PORTS];   // an AUTO body's line, of odd index
    logic [DATA_W-1:0] d2_w [PORTS];
    logic [KEEP_W-1:0] d2_keep [PORTS];
    logic [DATA_W-1:0] lb_q [PORTS];  // the line's RAM, read in stage 2
    always_comb begin
        sp_busy = 1'b0;
        for (int p = 0; p < PORTS; p++) begin
            logic s;
            s = sp_s[p];
            sx_live[p] = rq_valid[s] && !rq_pdone[s][p];
            sx_pi[p] = pt_pi[p][sp_pi[p]];
            if (rq_ctl[s]) begin
                sx_has[p] = rq_ctlp[s][p] && sp_pi[p] == 0;
                sx_more[p] = 1'b0;
                sx_pi[p] = '0;
            end else begin
                sx_has[p] = pt_has[p][sp_pi[p]];
                sx_more[p] = pt_more[p][sp_pi[p]];
            end
            sx_last[p] = sp_line[p] == rq_ll[s];
            sx_go[p] = sx_live[p] && sx_has[p]
                && (rq_ctl[s] || rq_auto[s] || rq_inexact[s] || (FB + 1)'(sp_line[p]) < rq_lines[s])
                && f_level[p] + FL_W'(d1_v[p]) + FL_W'(d2_v[p]) < FL_W'(FDEPTH);
            if (d1_v[p] || d2_v[p] || f_level[p] != 0) sp_busy = 1'b1;
        end
    end

`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        logic any;
        any = 1'b0;
        for (int s = 0; s < RQ; s++) any = any || rq_valid[s];
        if (!rst && rq_none_q == any) $error("prism_egress: rq_none_q %0d is not every slot free", rq_none_q);
        if (!rst && AUTO_ENABLE == 0 && req_en && req_auto) $error("prism_egress: an AUTO request without AUTO_ENABLE");
    end
`endif
    always_ff @(posedge clk) begin
        if (rst) begin
            for (int s = 0; s < RQ; s++) begin
                rt_tog[s] <= 1'b0;
                pd_tog[s] <= '0;
            end
            for (int p = 0; p < PORTS; p++) begin
                sp_s[p] <= 1'b0;
                sp_pi[p] <= '0;
                sp_line[p] <= '0;
                d1_v[p] <= 1'b0;
                d2_v[p] <= 1'b0;
            end
        end else begin
            for (int p = 0; p < PORTS; p++) begin
                logic s;
                s = sp_s[p];
                d1_v[p] <= sx_go[p];
                d2_v[p] <= d1_v[p];
                if (sx_live[p] && !sx_has[p]) begin
                    // Nothing (more) for this port in the slot.
                    pd_tog[s][p] <= !pd_tog[s][p];
                    sp_s[p] <= !s;
                    sp_pi[p] <= '0;
                end else if (sx_go[p]) begin
                    if (!sx_last[p]) begin
                        sp_line[p] <= sp_line[p] + 1'b1;
                        sp_pi[p] <= sx_pi[p];
                    end else begin
                        sp_line[p] <= '0;
                        if (sx_more[p]) sp_pi[p] <= sx_pi[p] + 1'b1;
                        else begin
                            pd_tog[s][p] <= !pd_tog[s][p];
                            sp_s[p] <= !s;
                            sp_pi[p] <= '0;
                        end
                    end
                end
            end
            // Retire a slot every port has issued (its last beats' sources are read this cycle).
            for (int s = 0; s < RQ; s++)
                if (rq_valid[s] && rq_built[s] && rq_pdone[s] == '1) rt_tog[s] <= !rt_tog[s];
        end
        for (int p = 0; p < PORTS; p++) begin
            logic s;
            s = sp_s[p];
            d1_s[p] <= s;
            d1_pi[p] <= sx_pi[p];
            d1_line[p] <= sp_line[p];
            d1_last[p] <= sx_last[p];
            d1_lrem[p] <= rq_lrem[s];
            d1_ctl[p] <= rq_ctl[s];
            d1_auto[p] <= rq_auto[s];
            d1_ix[p] <= rq_inexact[s];
        end
        // Stage 2: the beat's bytes other than the line's values, and its keep.
        for (int p = 0; p < PORTS; p++) begin
            logic [DATA_W-1:0] w;
            w = '0;
            if (d1_ctl[p]) w = DATA_W'(cbuf >> (DATA_W * $signed(32'(d1_line[p][1:0]))));   // replies are at most three beats
            else if (d1_line[p] == 0) begin
                // (An AUTO body's line 0 brings its own bytes from 56 on.)
                for (int i = 0; i < 60; i++)
                    if (i < 56 || !d1_auto[p]) w[8*i +: 8] = res_hdr_byte(i, d1_s[p], d1_pi[p]);
            end
            d2_w[p] <= w;
            d2_ram[p] <= !d1_ctl[p] && !d1_auto[p] && !d1_ix[p];
            d2_auto[p] <= AUTO_ENABLE != 0 && d1_auto[p];
            d2_odd[p] <= d1_line[p][0];
            d2_l0[p] <= d1_line[p] == 0;
            d2_last[p] <= d1_last[p];
            for (int i = 0; i < KEEP_W; i++) d2_keep[p][i] <= !d1_last[p] || 7'(i) < d1_lrem[p];
        end
    end

    genvar gp;
    generate
        for (gp = 0; gp < PORTS; gp++) begin : g_port
            // The slots' lines for this port's sender: written by the
            // builder (every port's copy), read in stage 2.
            prism_ram_sdp #(.W(DATA_W), .DEPTH(RQ * 2 ** FB)) lines (
                .clk, .we(lw_en), .waddr({lw_s, lw_line}), .wdata(lw_data),
                .re(d1_v[gp]), .raddr({d1_s[gp], d1_line[gp]}), .orst(1'b0), .rdata(lb_q[gp])
            );
            // The AUTO body's lines for this port's sender (every port's
            // copy, by parity), read in stage 2 as the slots' lines are.
            logic [DATA_W-1:0] ob_q;
            if (AUTO_ENABLE != 0) begin : g_ob
                logic [DATA_W-1:0] ob_e, ob_o;
                logic ob_re;
                assign ob_re = d1_v[gp] && d1_auto[gp];
                prism_ram_sdp #(.W(DATA_W), .DEPTH(2 ** OBA), .STYLE(2)) ob_even (
                    .clk, .we(ob_we), .waddr(ob_addr_e), .wdata(ob_data_e),
                    .re(ob_re), .raddr(OBA'(d1_line[gp] >> 1)), .orst(1'b0), .rdata(ob_e)
                );
                prism_ram_sdp #(.W(DATA_W), .DEPTH(2 ** OBA), .STYLE(2)) ob_odd (
                    .clk, .we(ob_we), .waddr(ob_addr_o), .wdata(ob_data_o),
                    .re(ob_re), .raddr(OBA'(d1_line[gp] >> 1)), .orst(1'b0), .rdata(ob_o)
                );
                assign ob_q = d2_odd[gp] ? ob_o : ob_e;
            end else begin : g_no_ob
                assign ob_q = '0;
                /* verilator lint_off UNUSEDSIGNAL */
                logic unused_ob;
                /* verilator lint_on UNUSEDSIGNAL */
                assign unused_ob = ^{ob_we, ob_addr_e, ob_addr_o, ob_data_e, ob_data_o, d2_odd[gp]};
            end
            // Stage 3: the line's values (line 0: value 0 in bytes 60 to 63) and the mask.
            logic [DATA_W-1:0] v, d;
            always_comb begin
                v = d2_auto[gp] ? ob_q : !d2_ram[gp] ? '0 : (d2_l0[gp] ? {lb_q[gp][31:0], 480'b0} : lb_q[gp]);
                for (int i = 0; i < KEEP_W; i++) d[8*i +: 8] = d2_keep[gp][i] ? (d2_w[gp][8*i +: 8] | v[8*i +: 8]) : 8'd0;
            end
            prism_axis_fifo #(.DATA_W(DATA_W), .KEEP_W(KEEP_W), .DEPTH(FDEPTH), .LW(FL_W)) fifo (
                .clk, .rst,
                .s_axis_tdata(d), .s_axis_tkeep(d2_keep[gp]), .s_axis_tlast(d2_last[gp]), .s_axis_tvalid(d2_v[gp]),
                .m_axis_tdata(m_axis_tdata[DATA_W*gp +: DATA_W]), .m_axis_tkeep(m_axis_tkeep[KEEP_W*gp +: KEEP_W]),
                .m_axis_tlast(m_axis_tlast[gp]), .m_axis_tvalid(m_axis_tvalid[gp]), .m_axis_tready(m_axis_tready[gp]),
                .level(f_level[gp])
            );
        end
    endgenerate
`ifndef SYNTHESIS
    // A CONTROL reply's length is read as its request is taken: it must not change while the reply is out.
    logic [15:0] q_len_q;
    always_ff @(posedge clk) begin
        q_len_q <= q_len;
        for (int s = 0; s < RQ; s++)
            if (!rst && rq_valid[s] && rq_ctl[s] && q_len != q_len_q)
                $error("prism_egress: q_len changed while a CONTROL reply was out");
    end
    // The senders' path tables (pmask, then pt_*) follow n_paths and p_port
    // two cycles late: the paths may change only while no RESULT is taken,
    // and no RESULT may be requested in the two cycles after.
    logic [$clog2(MAX_PATHS+1)-1:0] n_paths_q;
    logic [MAX_PATHS*16-1:0] p_port_q;
    logic [1:0] paths_settling;
    logic paths_changed;
    assign paths_changed = n_paths != n_paths_q || p_port != p_port_q;
    always_ff @(posedge clk) begin
        n_paths_q <= n_paths;
        p_port_q <= p_port;
        paths_settling <= {paths_settling[0], paths_changed};
        if (!rst) begin
            for (int s = 0; s < RQ; s++)
                if (paths_changed && rq_valid[s] && !rq_ctl[s])
                    $error("prism_egress: the paths changed while a RESULT was taken");
            if (req_en && !req_ctl && (paths_changed || paths_settling != 2'b00))
                $error("prism_egress: a RESULT requested within two cycles of a path change");
        end
    end
`endif
endmodule

`default_nettype wire
