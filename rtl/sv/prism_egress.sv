// prism_egress: prism_node's egress. It holds the request slots, builds
// the RESULT lines out of the ring, and sends each port's frames.
//
// Requests. The engine issues a request with req_en and its fields. These
// are the engine's registers, and the request goes into the next of RQ (2)
// slots at the next edge. req_free says whether the engine may issue in
// this cycle. It looks past a request not yet taken. A request is one of:
//   CONTROL  the reply in cbuf (q_len bytes). The engine builds it only
//            while tx_idle is high, and keeps it until tx_idle is high again;
//   RESULT   an FP32 RESULT (FP32_ARRIVAL or KULISCH_FIXED) of req_count
//            values from ring slot req_base, for every path;
//   INEXACT  the terminal INEXACT RESULT, for every path;
//   AUTO     an AUTO RESULT whose body is in obytes (req_blen bytes,
//            req_groups groups). The engine keeps obytes until tx_idle.
//
// The builder. It reads an FP32 RESULT's values out of the ring, a line
// (LANES values) a cycle, and clears the ring slots it reads. The read is
// eg_slot with eg_qn slots when eg_go is high, and the clears are eg_clear.
// A line waits while eg_hit says one of its slots has a sum in flight. The
// node answers eg_hit from eg_slot and eg_qn in the same cycle. The ring
// gives the values EG_LAT cycles after the read (eg_acc). Under
// KULISCH_FIXED they are integers (eg_acck, eg_accf), rounded once to FP32
// by prism_kulisch_round_pipe, R_LAT cycles more. The line's values go into
// the slot's lines (rbuf) and are counted in rq_lines.
//
// The senders. There is one a port, with an AXI4-Stream master (m_axis_*,
// port p at [p*DATA_W +: DATA_W]). Each sends the slots' frames for its
// port in request order, a RESULT's paths in path order. It sends a whole
// frame at a time. It waits for the builder's lines (rq_lines), so it may
// be a line behind the builder. A slot is retired once it is built and every
// port has sent it.
//
// Context. The RESULT header comes from the context (ctx_*, the paths p_*,
// n_paths). The engine changes them only while tx_idle is high.

`default_nettype none

module prism_egress #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    parameter int MTU = 1500,
    parameter int RING = 4096,
    parameter int KW = 320,
    parameter int KULISCH_ENABLE = 1,
    parameter int MAX_PATHS = 8,
    parameter int PORTS = 1,
    // The ring's egress read: EG_LAT cycles from eg_go to eg_acc.
    parameter int EG_LAT = 2,
    // Width of eg_qn (the node's run counts, up to FLANES).
    parameter int RN_W = 7
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

    // The CONTROL reply (byte i at [8i +: 8]), and the AUTO body.
    input  wire logic [8*192-1:0]  cbuf,
    input  wire logic [15:0]       q_len,
    input  wire logic [8*64*((MTU-42+63)/64+1)-1:0] obytes,   // AUTO body, line-padded

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

    // The ring's egress read.
    output logic [$clog2(RING)-1:0] eg_slot,
    output logic [RN_W-1:0]        eg_qn,         // slots of the line (the hazard query)
    input  wire logic              eg_hit,        // one has a sum in flight
    output logic                   eg_go,         // the line is read this cycle
    output logic [DATA_W/32-1:0]   eg_clear,
    input  wire logic [DATA_W-1:0] eg_acc,        // value j at [32j +: 32]
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire logic [DATA_W/32*(KULISCH_ENABLE != 0 ? KW : 1)-1:0] eg_acck,
    input  wire logic [DATA_W/32*5-1:0] eg_accf,
    /* verilator lint_on UNUSEDSIGNAL */

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

    initial begin
        if (DATA_W != 512) $error("prism_egress: DATA_W must be 512 (a RESULT header is 60 bytes of line 0)");
        if (KEEP_W != DATA_W / 8) $error("prism_egress: KEEP_W must be DATA_W / 8");
        if (PORTS < 1) $error("prism_egress: PORTS must be at least 1");
        if (EG_LAT < 1) $error("prism_egress: EG_LAT must be at least 1");
        if (KULISCH_ENABLE != 0 && KULISCH_ENABLE != 1) $error("prism_egress: KULISCH_ENABLE must be 0 or 1");
        if (2 ** RB != RING) $error("prism_egress: RING must be a power of two");
        if (2 ** RN_W <= LANES) $error("prism_egress: RN_W must hold LANES");
        if (16 * LINES < 16 + (MTU - 60) / 4) $error("prism_egress: LINES too few for the MTU's RESULT");
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
    (* mem2reg *) logic [15:0] rq_count [RQ], rq_blen [RQ], rq_olen [RQ], rq_port [RQ];
    (* mem2reg *) logic [31:0] rq_pid [RQ];
    (* mem2reg *) logic [7:0]  rq_groups [RQ];
    logic [DATA_W-1:0] rbuf [RQ][LINES];
    logic [15:0] rq_lines [RQ];      // lines of the slot's values built so far
    always_comb begin
        tx_idle = !req_en;
        for (int s = 0; s < RQ; s++) begin
            rq_valid[s] = rq_tog[s] != rt_tog[s];
            rq_built[s] = bt_tog[s] != rt_tog[s];
            rq_pdone[s] = pd_tog[s] ^ {PORTS{rt_tog[s]}};
            if (rq_valid[s]) tx_idle = 1'b0;
        end
        // A request not yet taken goes into rq_w: the next one into the other slot.
        req_free = !rq_valid[rq_w ^ req_en];
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
            rq_ctl[rq_w] <= req_ctl;
            rq_auto[rq_w] <= req_auto;
            rq_inexact[rq_w] <= req_inexact;
            rq_base[rq_w] <= req_base;
            rq_count[rq_w] <= req_count;
            rq_last[rq_w] <= req_last;
            rq_olen[rq_w] <= req_olen;
            rq_port[rq_w] <= req_port;
            rq_pid[rq_w] <= req_pid;
            rq_groups[rq_w] <= req_groups;
            rq_blen[rq_w] <= req_blen;
        end
    end

    // ------------------------------------------------------------ builder
    // Line bl_line of slot bl_s.
    logic        bl_s;
    logic [15:0] bl_line;
    logic        bl_on;              // an FP32 RESULT line is built (and its slots cleared) this cycle
    logic        bl_end;             // its last line
    logic [15:0] bl_idx [LANES];
    logic [RB-1:0] bl_slot [LANES];
    logic [LANES-1:0] bl_in;         // value j is in the line
    logic        bl_wait;            // a slot of the line has a sum in flight: the builder waits
    logic [LANES-1:0] bl_has;        // value j of the line is read (and its slot cleared)
    logic [DATA_W-1:0] bl_vals;
    // The ring's egress read takes EG_LAT cycles: an FP32 line is written
    // (and counted in rq_lines) EG_LAT cycles after the builder reads its
    // slots. Under KULISCH_FIXED a line's values leave
    // prism_kulisch_round_pipe R_LAT cycles after that. The line's slot,
    // line and values follow it down rl_*, RL stages (an FP32 line leaves
    // at stage EG_LAT-1: fl_v). The builder goes on meanwhile. A sender
    // waits for rq_lines, so it never sends a line not yet written, and a
    // slot retires only after its last line is sent.
    localparam int R_LAT = 6;
    localparam int RL = EG_LAT + R_LAT;
    logic [EG_LAT-1:0] fl_v;
    logic [RL-1:0] rl_v;
    logic        rl_s [RL];
    logic [15:0] rl_line [RL];
    logic [LANES-1:0] rl_has [RL];
    logic [DATA_W-1:0] rl_vals;      // the line leaving the rounding pipes
    logic        r_mv0;              // round pipe 0's m_valid (the latency check)
    genvar gr;
    generate
        for (gr = 0; gr < LANES; gr++) begin : g_round
            logic [31:0] kr;
            if (KULISCH_ENABLE == 0) begin : g_none
                assign kr = '0;
                if (gr == 0) begin : g_first
                    assign r_mv0 = 1'b0;
                end
            end else if (gr == 0) begin : g_first
                /* verilator lint_off PINCONNECTEMPTY */
                prism_kulisch_round_pipe #(.KW(KW)) round (.clk, .en(1'b1), .s_valid(rl_v[EG_LAT-1]),
                    .acc(eg_acck[KW*gr +: KW]), .flags(eg_accf[5*gr +: 5]), .m_valid(r_mv0), .fp32(kr), .exact());
                /* verilator lint_on PINCONNECTEMPTY */
            end else begin : g_rest
                /* verilator lint_off PINCONNECTEMPTY */
                prism_kulisch_round_pipe #(.KW(KW)) round (.clk, .en(1'b1), .s_valid(rl_v[EG_LAT-1]),
                    .acc(eg_acck[KW*gr +: KW]), .flags(eg_accf[5*gr +: 5]), .m_valid(), .fp32(kr), .exact());
                /* verilator lint_on PINCONNECTEMPTY */
            end
            assign rl_vals[32*gr +: 32] = rl_has[RL-1][gr] ? kr : 32'd0;
        end
    endgenerate
    always_ff @(posedge clk) begin
        if (rst) begin
            rl_v <= '0;
            fl_v <= '0;
        end else begin
            rl_v <= RL'({rl_v, eg_go && ctx_kulisch});
            fl_v <= EG_LAT'({fl_v, eg_go && !ctx_kulisch});
        end
        rl_s[0] <= bl_s;
        rl_line[0] <= bl_line;
        rl_has[0] <= bl_has;
        for (int i = 1; i < RL; i++) begin
            rl_s[i] <= rl_s[i-1];
            rl_line[i] <= rl_line[i-1];
            rl_has[i] <= rl_has[i-1];
        end
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && r_mv0 != rl_v[RL-1]) $error("prism_egress: R_LAT is not prism_kulisch_round_pipe's latency");
`endif
    always_comb begin
        bl_on = rq_valid[bl_s] && !rq_built[bl_s] && !rq_ctl[bl_s] && !rq_auto[bl_s] && !rq_inexact[bl_s];
        bl_end = 16'(64) * (bl_line + 16'd1) >= 16'd60 + 16'd4 * rq_count[bl_s];
        for (int j = 0; j < LANES; j++) begin
            bl_idx[j] = 16'(16 * $signed(32'(bl_line)) - 15 + j);
            bl_slot[j] = bl_line == 0 ? RB'(rq_base[bl_s]) : RB'(rq_base[bl_s] + 33'(bl_idx[j]));
            bl_in[j] = bl_line == 0 ? j == 0 : bl_idx[j] < rq_count[bl_s];
        end
    end
    // The hazard query reads the line's slots (consecutive from bl_slot[0]).
    assign eg_slot = bl_slot[0];
    assign eg_qn = RN_W'($countones(bl_in));
    assign eg_clear = bl_has;
    always_comb begin
        bl_wait = bl_on && eg_hit;
        eg_go = rq_valid[bl_s] && !rq_built[bl_s] && bl_on && !bl_wait;
        for (int j = 0; j < LANES; j++) bl_has[j] = bl_on && !bl_wait && bl_in[j];
    end
    always_comb begin
        bl_vals = '0;
        for (int j = 0; j < LANES; j++) if (rl_has[EG_LAT-1][j]) bl_vals[32*j +: 32] = eg_acc[32*j +: 32];
    end

    // ------------------------------------------------------------ senders
    // The paths, as arrays over every index the path counter can hold.
    logic [47:0] pm [PSLOTS];
    logic [15:0] pl [PSLOTS], pp [PSLOTS], ps [PSLOTS], pt [PSLOTS];
    always_comb
        for (int i = 0; i < PSLOTS; i++) begin
            pm[i] = i < MAX_PATHS ? p_mac[48*i +: 48] : '0;
            pl[i] = i < MAX_PATHS ? p_lep[16*i +: 16] : '0;
            pp[i] = i < MAX_PATHS ? p_pep[16*i +: 16] : '0;
            ps[i] = i < MAX_PATHS ? p_stream[16*i +: 16] : '0;
            pt[i] = i < MAX_PATHS ? p_port[16*i +: 16] : '0;
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

    // Port p is on slot sp_s[p], at path sp_pi[p] or after, line sp_line[p].
    logic        sp_s [PORTS];
    logic [PI_W-1:0] sp_pi [PORTS];
    logic [15:0] sp_line [PORTS];
    logic        sx_has [PORTS];     // the slot has a frame for the port (from sp_pi on)
    logic        sx_more [PORTS];    // and another after it
    logic [PI_W-1:0] sx_pi [PORTS];  // its path
    always_comb
        for (int p = 0; p < PORTS; p++) begin
            logic s;
            logic [15:0] o_len, rem;
            logic [DATA_W-1:0] d;
            s = sp_s[p];
            sx_has[p] = 1'b0;
            sx_more[p] = 1'b0;
            sx_pi[p] = '0;
            if (rq_ctl[s]) sx_has[p] = rq_port[s] == 16'(p) && sp_pi[p] == 0;
            else
                for (int i = MAX_PATHS - 1; i >= 0; i--)
                    if (PI_W'(i) < n_paths && PI_W'(i) >= sp_pi[p] && pt[i] == 16'(p)) begin
                        if (sx_has[p]) sx_more[p] = 1'b1;
                        sx_has[p] = 1'b1;
                        sx_pi[p] = PI_W'(i);
                    end
            m_axis_tvalid[p] = rq_valid[s] && !rq_pdone[s][p] && sx_has[p]
                && (rq_ctl[s] || rq_auto[s] || rq_inexact[s] || sp_line[p] < rq_lines[s]);
            o_len = rq_ctl[s] ? q_len : rq_olen[s];
            rem = o_len - 16'(64 * $signed(32'(sp_line[p])));
            d = '0;
            if (rq_ctl[s]) d = DATA_W'(cbuf >> (DATA_W * $signed(32'(sp_line[p][1:0]))));   // replies are at most three beats
            else if (sp_line[p] == 0) begin
                for (int i = 0; i < 60; i++) d[8*i +: 8] = res_hdr_byte(i, s, sx_pi[p]);
                if (rq_auto[s]) d[448 +: 64] = obytes[63:0];
                else if (!rq_inexact[s]) d[480 +: 32] = rbuf[s][0][31:0];
            end else if (rq_auto[s]) d = obytes[8 * (64 * $signed(32'(sp_line[p])) - 56) +: DATA_W];
            else d = rbuf[s][FB'(sp_line[p])];
            for (int i = 0; i < 64; i++) if (16'(i) >= rem) d[8*i +: 8] = 8'd0;
            m_axis_tdata[DATA_W*p +: DATA_W] = d;
            m_axis_tlast[p] = rem <= 16'd64;
            m_axis_tkeep[KEEP_W*p +: KEEP_W] = rem >= 16'd64 ? '1 : KEEP_W'((65'(1) << rem) - 65'(1));
        end

    always_ff @(posedge clk) begin
        if (rst) begin
            bl_s <= 1'b0;
            bl_line <= '0;
            for (int s = 0; s < RQ; s++) begin
                bt_tog[s] <= 1'b0;
                rt_tog[s] <= 1'b0;
                pd_tog[s] <= '0;
                rq_lines[s] <= '0;
            end
            for (int p = 0; p < PORTS; p++) begin
                sp_s[p] <= 1'b0;
                sp_pi[p] <= '0;
                sp_line[p] <= '0;
            end
        end else begin
            // Build (a line waits while one of its slots has a sum in flight).
            if (rq_valid[bl_s] && !rq_built[bl_s] && !bl_wait) begin
                if (!bl_on || bl_end) begin
                    bt_tog[bl_s] <= !bt_tog[bl_s];
                    bl_s <= !bl_s;
                    bl_line <= '0;
                end else bl_line <= bl_line + 16'd1;
            end
            // An FP32 line out of the ring, or a KULISCH_FIXED line out of
            // the rounding pipes (the context, and so the kind, changes only
            // when egress is idle).
            if (fl_v[EG_LAT-1]) begin
                rbuf[rl_s[EG_LAT-1]][FB'(rl_line[EG_LAT-1])] <= bl_vals;
                rq_lines[rl_s[EG_LAT-1]] <= rl_line[EG_LAT-1] + 16'd1;
            end
            if (rl_v[RL-1]) begin
                rbuf[rl_s[RL-1]][FB'(rl_line[RL-1])] <= rl_vals;
                rq_lines[rl_s[RL-1]] <= rl_line[RL-1] + 16'd1;
            end
            // Send.
            for (int p = 0; p < PORTS; p++) begin
                logic s;
                s = sp_s[p];
                if (rq_valid[s] && !rq_pdone[s][p]) begin
                    if (!sx_has[p]) begin
                        // Nothing (more) for this port in the slot.
                        pd_tog[s][p] <= !pd_tog[s][p];
                        sp_s[p] <= !s;
                        sp_pi[p] <= '0;
                    end else if (m_axis_tvalid[p] && m_axis_tready[p]) begin
                        if (!m_axis_tlast[p]) begin
                            sp_line[p] <= sp_line[p] + 16'd1;
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
            end
            // Retire a slot every port has sent.
            for (int s = 0; s < RQ; s++)
                if (rq_valid[s] && rq_built[s] && rq_pdone[s] == '1) begin
                    rt_tog[s] <= !rt_tog[s];
                    rq_lines[s] <= '0;
                end
        end
    end
endmodule

`default_nettype wire
