// prism_held_table: prism_node's contributors and the DATA packets each one
// has in the window (held until the window moves past them): the state the
// DATA admission decides on, and the coverage the readiness check reads.
//
// Per contributor (MAX_CONTRIB rows, the first `n` in use): its stream,
// local and peer endpoint, port and source MAC (from STAGE), the element
// it covers up to, the bytes it holds, and MAX_HELD held packets (packet ID,
// body CRC-32C, first and end element, bytes).
//
// Lookup: a stream is looked up every cycle and the contributor's row is
// registered (m_found, m_lep .. m_bytes, and the held packets: those by
// the registered read of a distributed RAM a slot), so a decision a cycle
// later reads registers. m_count (how many are held) is that row's, a
// register a row kept a cycle behind its packets (m_quiet waits for it); the
// query outputs m_hit (a held packet with the frame's ID on q_*), m_same
// (it is the same packet) and m_overlap (one overlaps the frame) are
// registers a cycle after it: that row against q_*. q_pid is compared
// with the looked-up row's IDs in the lookup's cycle (their memories read
// at the row's index), so it must be the frame's from the cycle the lookup
// picks its stream.
//
// The lookup is pipelined across the node's own pick of the stream: the
// node names NCAND candidate streams (its frame buffers', l_cand) and, a
// cycle ahead, the two it may pick (l_ia, l_ib); the table registers every
// candidate's match with every row, then those two candidates' matches and
// row indices, and l_pick (the node's choice, a register) selects one: the
// row's read address is a 2:1 select of registers, not a 16-bit compare
// and an OR behind one (6.25 levels in the whole switch). The matches are
// two cycles behind the candidates and the rows: an install (then the
// node's C_CLEAR, RING / FLANES cycles) and a buffer's stream written on
// its first beat (its verdict 16 cycles after its last) are not seen by a
// lookup for two cycles, and no decision reads a lookup that soon after
// (l_stream, the picked stream, is for the simulation's check of that).
//
// Writes (the node's engine gives at most one a cycle; rst wins over each,
// so i_en may be high in a reset cycle): `i_en` installs a
// STAGE's contributors (every held packet dropped, coverage and bytes 0);
// `r_en` releases the packets wholly below `r_end` (the window moved
// there); `a_en` admits the frame on q_* into the registered row (its first
// free held slot) and counts its bytes `a_len`; the row (the stream and the
// table) must be the same as in the cycle before a_en, since the held
// registers' write enables are registered a cycle ahead (wsel_q; checked
// in simulation; the node's D_CHK -> D_OP gives it). A release and an
// admission's coverage write the table over the next cycles (a release:
// its packets a cycle later, the row's m_bytes five; the coverage a walk
// of a cycle a packet it joins and two more, three cycles for a frame in
// order, readiness two after it; an install's zero bytes reach m_bytes in
// four), so:
//   - m_quiet says the registered row is the table as it stands (its
//     count too), its bytes perhaps before a release or an install still
//     under way: an admission's decision waits for it;
//   - m_bytes_exact says m_bytes has every release and install in it: a
//     refusal for bytes waits for it (with either under way m_bytes can
//     only be more than the truth, so a frame that fits, fits);
//   - m_settled says m_ready has every admission in it: a readiness
//     decision waits for it (a release does not move readiness).
// An install waits for all three (checked in simulation).

`default_nettype none

module prism_held_table #(
    parameter int MAX_CONTRIB = 8,
    parameter int MAX_HELD = 16,
    parameter int CI_W = $clog2(MAX_CONTRIB + 1),
    // The most elements between a held packet's first element and the
    // coverage (the node's window and its largest packet, an INT8 packet
    // of an MTU: WINDOW + MTU): the coverage's walk compares the low bits
    // that tell such values apart, not 33.
    parameter int SPAN = 65535,
    parameter int NCAND = 8,
    parameter int CA_W = NCAND > 1 ? $clog2(NCAND) : 1
) (
    input  wire logic                      clk,
    input  wire logic                      rst,
    // STAGE's contributors
    input  wire logic                      i_en,
    input  wire logic [CI_W-1:0]           i_n,
    input  wire logic [MAX_CONTRIB*16-1:0] i_stream,
    input  wire logic [MAX_CONTRIB*16-1:0] i_lep,
    input  wire logic [MAX_CONTRIB*16-1:0] i_pep,
    input  wire logic [MAX_CONTRIB*16-1:0] i_port,
    input  wire logic [MAX_CONTRIB*48-1:0] i_mac,
    // lookup, pipelined (above), its row registered
    input  wire logic [NCAND*16-1:0]       l_cand,
    input  wire logic [CA_W-1:0]           l_ia,
    input  wire logic [CA_W-1:0]           l_ib,
    input  wire logic                      l_pick,
    input  wire logic [15:0]               l_stream,
    output logic                           m_found,
    output logic [15:0]                    m_lep,
    output logic [15:0]                    m_pep,
    output logic [15:0]                    m_port,
    output logic [47:0]                    m_mac,
    output logic [31:0]                    m_bytes,
    // the frame against the registered row
    input  wire logic [31:0]               q_pid,
    input  wire logic [31:0]               q_crc,
    input  wire logic [32:0]               q_first,
    input  wire logic [32:0]               q_end,
    input  wire logic [32:0]               base,
    output logic                           m_hit,
    output logic                           m_same,
    output logic                           m_overlap,
    output logic [15:0]                    m_count,
    // admission of the frame, and the window's release
    input  wire logic                      a_en,
    input  wire logic [15:0]               a_len,
    input  wire logic                      r_en,
    input  wire logic [32:0]               r_end,
    // Registers: an admission (a_may) or a release (r_may) may come in
    // this cycle (a_en and r_en only then). m_quiet, m_bytes_exact and
    // m_settled drop on these, not on a_en and r_en, which are the
    // decisions' last results (the release's, behind egress's req_free,
    // into m_quiet was 7.00 levels).
    input  wire logic                      a_may,
    input  wire logic                      r_may,
    output logic                           m_quiet,
    output logic                           m_bytes_exact,
    output logic                           m_settled,
    // every element below this is covered by every contributor (or base)
    output logic [32:0]                    m_ready,
    // the least coverage alone (a register; m_ready is max(m_least, base))
    output logic [32:0]                    m_least,
    // m_least > base and m_least >= cmp_e, registered with m_least: of the
    // base and cmp_e of the cycle before (the compares were behind the
    // least's select; here they are each row's, and the select picks one)
    input  wire logic [32:0]               cmp_e,
    output logic                           m_gt_base,
    output logic                           m_ge_e,
    // m_least >= cmp_x, the same way (AUTO's lookahead: the least with the
    // plan queue's window end)
    input  wire logic [32:0]               cmp_x,
    output logic                           m_ge_x
);
    localparam int CR_W = MAX_CONTRIB > 1 ? $clog2(MAX_CONTRIB) : 1;
    localparam int HW = MAX_HELD > 1 ? $clog2(MAX_HELD) : 1;
    localparam int NQ = (MAX_HELD + 3) / 4;  // a row's bytes: sums of four slots, then of those
    // The low bits that tell apart two values less than SPAN apart: the
    // coverage walk's equalities compare EQ_W, the orders (the overlap, a
    // release's ends) LT_W.
    localparam int EQ_W = $clog2(SPAN + 1) < 33 ? $clog2(SPAN + 1) : 33;
    localparam int LT_W = EQ_W < 33 ? EQ_W + 1 : 33;

    initial begin
        if (MAX_CONTRIB < 2) $error("prism_held_table: MAX_CONTRIB must be at least 2");
        if (MAX_HELD < 2) $error("prism_held_table: MAX_HELD must be at least 2");
        if (2 ** CI_W <= MAX_CONTRIB) $error("prism_held_table: CI_W must hold MAX_CONTRIB");
        if (NCAND < 2 || 2 ** CA_W < NCAND) $error("prism_held_table: NCAND must be at least 2 and CA_W hold its indices");
        if (SPAN < 1) $error("prism_held_table: SPAN must be at least 1");
    end

    // Registers, every one read and written at constant indices (a row or
    // slot chosen by comparing its index): an array indexed at run time is
    // a memory to Yosys, and its memory passes ran out of 9.5 GB on this
    // table (its release reads all 128 slots at once). The memories that
    // are meant as memories (a slot's digest, range and IDs) are small,
    // one a slot, below.
    logic [CI_W-1:0] n;
    (* mem2reg *) logic [15:0] c_stream [MAX_CONTRIB], c_lep [MAX_CONTRIB], c_pep [MAX_CONTRIB], c_port [MAX_CONTRIB];
    (* mem2reg *) logic [47:0] c_mac [MAX_CONTRIB];
    (* mem2reg *) logic [32:0] c_covered [MAX_CONTRIB];
    // The bytes a contributor holds: its valid held packets' bytes summed,
    // a register a row (below).
    (* mem2reg *) logic [31:0] c_held [MAX_CONTRIB];
    // A flat vector: held slot k of contributor c at [MAX_HELD*c + k].
    logic [MAX_CONTRIB*MAX_HELD-1:0] h_valid;
    // A release reads every held packet's end at once, and the row's bytes
    // sum every packet's bytes: those are registers. The rest of a held
    // packet (its ID, digest, first element, and its end again) is read
    // only a row at a time: in distributed RAM, below. The end here is its
    // low LT_W bits: a held packet ends above base and at most SPAN past
    // it, and a release's end is within SPAN of base, so their order is
    // the sign of the low bits' difference (checked in simulation against
    // the 33-bit compare): 128 compares of LT_W bits (14 at the node's
    // SPAN), not 33.
    (* mem2reg *) logic [LT_W-1:0] h_end [MAX_CONTRIB][MAX_HELD];
    (* mem2reg *) logic [15:0] h_bytes [MAX_CONTRIB][MAX_HELD];

    // The looked-up row, registered.
    logic [CR_W-1:0] row_q;
    logic [MAX_HELD-1:0] t_valid;
    logic [31:0] t_crc [MAX_HELD];
    logic [32:0] t_first [MAX_HELD], t_end [MAX_HELD];
    logic [32:0] t_covered;
    logic [MAX_HELD-1:0] t_hv;       // held slot k of the row has the frame's packet ID (q_pid)
    // Streams are distinct among the contributors (STAGE refuses a binding
    // that repeats one), so the match is one-hot: the row is an OR of the
    // rows masked by their match, not a priority search then a select.
    logic [MAX_CONTRIB-1:0] hit_c;
    logic [CR_W-1:0] idx;            // the row's index (0 when none matches)
    // The row's first free slot (free, and one-hot: fsel) and, with the
    // row, the admission's slot over every row's (wsel); worked out below.
    // wsel is registered (wsel_q): the row an admission writes has been the
    // same since the node's D_CHK (nothing writes the table between its
    // quiet check and D_OP), so a held register's write enable is a_en and
    // a register. (fsel registered too, for the RAMs' write enables, took
    // this module alone from 6.00 to 6.25 levels on the lookup's path to
    // the RAMs' read, which it does not touch: ABC's mapping moved.)
    logic free_found;
    logic [HW-1:0] free;
    logic [MAX_HELD-1:0] fsel;
    logic [MAX_CONTRIB*MAX_HELD-1:0] wsel, wsel_q;
    // Every candidate against every row (cm_q: candidate j's entry, its
    // matches and their row index, at [CM_W*j +: CM_W]), then the two
    // candidates' entries (a_*, b_*), each a register; l_pick picks one.
    localparam int CM_W = MAX_CONTRIB + CR_W;
    logic [NCAND*CM_W-1:0] cm_q;
    logic [MAX_CONTRIB-1:0] a_hit, b_hit;
    logic [CR_W-1:0] a_idx, b_idx;
    always_ff @(posedge clk) begin
        for (int j = 0; j < NCAND; j++) begin
            logic [MAX_CONTRIB-1:0] h;
            logic [CR_W-1:0] r;
            r = '0;
            for (int i = 0; i < MAX_CONTRIB; i++) begin
                h[i] = CI_W'(i) < n && c_stream[i] == l_cand[16*j +: 16];
                if (h[i]) r = r | CR_W'(i);
            end
            cm_q[CM_W * j +: CM_W] <= {r, h};
        end
        {a_idx, a_hit} <= cm_q[CM_W * l_ia +: CM_W];
        {b_idx, b_hit} <= cm_q[CM_W * l_ib +: CM_W];
    end
    assign hit_c = l_pick ? a_hit : b_hit;
    assign idx = l_pick ? a_idx : b_idx;
`ifndef SYNTHESIS
    // The pipelined lookup against l_stream looked up directly: a mismatch
    // (an install or a buffer's stream under two cycles old) is flagged
    // with the row it gave (lk_stale, the cycle the row is registered);
    // the node checks that no decision reads such a row.
    /* verilator lint_off UNUSEDSIGNAL */
    logic lk_stale;   // read by prism_node's check
    /* verilator lint_on UNUSEDSIGNAL */
    always_ff @(posedge clk) begin
        logic [MAX_CONTRIB-1:0] d;
        for (int i = 0; i < MAX_CONTRIB; i++) d[i] = CI_W'(i) < n && c_stream[i] == l_stream;
        lk_stale <= d != hit_c;
    end
`endif
    // The held packets' digest, first and end elements: a memory a slot,
    // row c at address c, read at the looked-up row (its registered read
    // is the row's register) and written by an admission at its slot. As
    // registers, the row was a 1,568-bit select over the rows. (The IDs
    // in this memory, compared after its registered read with the OR over
    // the slots into m_hit behind them, were 6.25 levels: they have
    // memories of their own with an asynchronous read, below.)
    localparam int HR_W = 32 + 33 + 33;
    logic [MAX_HELD*HR_W-1:0] hr;
    genvar gk;
    generate
        for (gk = 0; gk < MAX_HELD; gk++) begin : g_slot
            prism_ram_sdp #(.W(HR_W), .DEPTH(2 ** CR_W), .STYLE(2)) ram (
                .clk, .we(a_en && fsel[gk]), .waddr(row_q),
                .wdata({q_crc, q_first, q_end}),
                .re(1'b1), .raddr(idx), .orst(1'b0), .rdata(hr[HR_W*gk +: HR_W])
            );
        end
    endgenerate
    always_comb
        for (int k = 0; k < MAX_HELD; k++)
            {t_crc[k], t_first[k], t_end[k]} = hr[HR_W*k +: HR_W];
    // The held packets' IDs: a memory a slot, row c at address c, read
    // asynchronously at the lookup's row (idx: distributed RAM) and
    // compared with the frame's ID in the lookup's cycle, the compare
    // registered (t_hv). As registers they were compared in every row,
    // 128 compares of 32 bits and 4,096 flip-flops (4.2k LUTs with their
    // select); a registered read with the compare after it was 6.25 levels.
    logic [MAX_HELD-1:0] hv_slot;
    generate
        for (gk = 0; gk < MAX_HELD; gk++) begin : g_pid
            (* ram_style = "distributed" *) logic [31:0] pid_mem [2 ** CR_W];
            always_ff @(posedge clk)
                if (a_en && fsel[gk]) pid_mem[row_q] <= q_pid;
            assign hv_slot[gk] = pid_mem[idx] == q_pid;
        end
    endgenerate
`ifndef SYNTHESIS
    // The IDs as registers written with the same enables (wsel_q, as the
    // ends and bytes), and the looked-up row's compares against them.
    logic [31:0] pid_ref [MAX_CONTRIB][MAX_HELD];
    always_ff @(posedge clk) begin
        for (int c = 0; c < MAX_CONTRIB; c++)
            for (int k = 0; k < MAX_HELD; k++)
                if (a_en && wsel_q[MAX_HELD * c + k]) pid_ref[c][k] <= q_pid;
        if (!rst && hit_c != '0)
            for (int k = 0; k < MAX_HELD; k++)
                if (h_valid[MAX_HELD * 32'(idx) + k] && hv_slot[k] != (pid_ref[idx][k] == q_pid))
                    $error("prism_held_table: row %0d slot %0d: the ID memory's compare %0d is not the registers' %0d", idx, k, hv_slot[k], pid_ref[idx][k] == q_pid);
    end
`endif
    // A row's count of held packets, a register a row, a cycle behind its
    // flags (the row's register then selects it as it selects the rest):
    // the popcount after the row's select, with the node's compare behind
    // it, was 8.50 levels. m_quiet waits the extra cycle after a write.
    localparam int HC_W = $clog2(MAX_HELD + 1);
    logic [HC_W-1:0] c_cnt [MAX_CONTRIB];
    always_ff @(posedge clk)
        for (int c = 0; c < MAX_CONTRIB; c++) begin
            logic [HC_W-1:0] k;
            k = '0;
            for (int i = 0; i < MAX_HELD; i++) k = k + HC_W'(h_valid[MAX_HELD * c + i]);
            c_cnt[c] <= k;
        end
    always_ff @(posedge clk) begin
        logic [MAX_HELD-1:0] v;
        logic [HC_W-1:0] hc;
        logic [15:0] lep, pep, port;
        logic [47:0] mac;
        logic [32:0] cov;
        logic [31:0] hb;
        v = '0;
        lep = '0;
        pep = '0;
        port = '0;
        mac = '0;
        cov = '0;
        hb = '0;
        hc = '0;
        for (int c = 0; c < MAX_CONTRIB; c++)
            if (hit_c[c]) begin
                v = v | h_valid[MAX_HELD * c +: MAX_HELD];
                hc = hc | c_cnt[c];
                lep = lep | c_lep[c];
                pep = pep | c_pep[c];
                port = port | c_port[c];
                mac = mac | c_mac[c];
                cov = cov | c_covered[c];
                hb = hb | c_held[c];
            end
        m_found <= hit_c != 0;
        row_q <= idx;
        t_valid <= v;
        m_count <= 16'(hc);
        t_hv <= hv_slot;
        m_lep <= lep;
        m_pep <= pep;
        m_port <= port;
        m_mac <= mac;
        t_covered <= cov;
        m_bytes <= hb;
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && !$onehot0(hit_c)) $error("prism_held_table: stream %0d is in more than one row", l_stream);
`endif

    // The frame against the row's held packets, and the first free slot.
    // The answers the node decides on in D_OP (m_hit, m_overlap, m_same)
    // are registered: each is the row of the cycle before against q_*, as
    // the node's D_CHK registers its own conditions. m_same is a register
    // a slot (the held packet with the frame's ID has its digest and range
    // too: a 130-bit compare, 7 levels with the OR over the slots behind
    // it) and their OR.
    logic [MAX_HELD-1:0] sm_q;
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && m_quiet && m_count != 16'($countones(t_valid)))
            $error("prism_held_table: m_count %0d is not the quiet row's %0d held packets", m_count, $countones(t_valid));
`endif
    // The overlap's compares on the low LT_W bits: the node reads
    // m_overlap only for a frame inside the window ([base, base + window]),
    // and a held packet ends above base and starts at most a packet below
    // it, so the two sides of each compare are less than SPAN apart and
    // the difference's sign on LT_W bits is the order (simulation checks
    // it against the 33-bit compares where the node reads it). The 33-bit
    // compares and the OR over the slots behind them read 6.00 to 6.50
    // levels by ABC's mapping (session 64).
    // a < b for two values less than SPAN apart, given their low LT_W bits
    // (at LT_W 33, the values themselves).
    function automatic logic lt_low(input logic [LT_W-1:0] a, input logic [LT_W-1:0] b);
        logic [LT_W-1:0] d;
        d = a - b;
        lt_low = LT_W >= 33 ? a < b : d[LT_W-1];
    endfunction
    function automatic logic lt_near(input logic [32:0] a, input logic [32:0] b);
        lt_near = LT_W >= 33 ? a < b : lt_low(a[LT_W-1:0], b[LT_W-1:0]);
    endfunction
    always_ff @(posedge clk) begin
        logic hit, ovl;
        hit = 1'b0;
        ovl = 1'b0;
        for (int k = 0; k < MAX_HELD; k++) begin
            // Packet IDs are distinct among a row's held packets (an
            // admission is never a hit), so at most one matches.
            if (t_valid[k] && t_hv[k]) hit = 1'b1;
            if (t_valid[k] && lt_near(t_first[k], q_end) && lt_near(q_first, t_end[k])) ovl = 1'b1;
            sm_q[k] <= t_valid[k] && t_hv[k] && t_crc[k] == q_crc && t_first[k] == q_first && t_end[k] == q_end;
        end
        m_hit <= hit;
        m_overlap <= ovl;
    end
`ifndef SYNTHESIS
    // The 33-bit overlap, for the node's check where it reads m_overlap.
    /* verilator lint_off UNUSEDSIGNAL */
    logic m_overlap_full;
    /* verilator lint_on UNUSEDSIGNAL */
    always_ff @(posedge clk) begin
        logic ovl;
        ovl = 1'b0;
        for (int k = 0; k < MAX_HELD; k++)
            if (t_valid[k] && t_first[k] < q_end && q_first < t_end[k]) ovl = 1'b1;
        m_overlap_full <= ovl;
    end
`endif
    assign m_same = sm_q != 0;
    always_comb begin
        free_found = 1'b0;
        free = '0;
        for (int k = 0; k < MAX_HELD; k++)
            if (!t_valid[k] && !free_found) begin
                free_found = 1'b1;
                free = HW'(k);
            end
        for (int k = 0; k < MAX_HELD; k++) fsel[k] = free == HW'(k);
    end

    // Coverage once the frame is admitted: from c0 = max(covered, base)
    // through every held packet that continues it, the frame included, a
    // packet a cycle. The held packets and the frame are disjoint, so the
    // packet that continues the coverage at c starts at c (one that held c
    // from further below would overlap the packets that end at c). In the
    // admission's cycle the row's packets and the frame are taken as they
    // stand: their firsts' low EQ_W bits (wk_f), ends (wk_e) and valid
    // bits, and c0 as the walk's first place. Then each cycle the place
    // is compared with every packet's first (an equality of EQ_W bits) and
    // moves to the end of the one that starts there: 17 compares and an
    // AND-OR of registers. No such packet: the walk stops, and in the next
    // cycle (wk_wr) the last place (wk_cov, registered) is written. In order
    // that is three cycles (c0, the frame, then nothing); a frame that
    // closes a hole walks every packet it joins. Until session 63 every
    // candidate end was ordered against every other and against every
    // packet's first (about 12k LUTs); until session 68 every candidate's
    // end was compared with every first at the admission (a 18 x 17 matrix
    // of equalities, about 2k).
    localparam int CV = MAX_HELD + 1;    // the frame, then the row's held packets
    logic            wk_on;              // a walk under way (from the cycle after a_en)
    logic            wk_wr, wk_wr_q;     // its last cycle (the coverage written), and a cycle later
    logic [MAX_CONTRIB-1:0] wk_row;      // the admission's row, one-hot
    logic            wk_first;           // the walk's first cycle (its place c0)
    logic            wk_at;              // a later cycle with a place
    logic [32:0]     wk_pl;              // the place: c0 while no walk stands, then each step's end
    logic [32:0]     wk_cov;             // the place a cycle before
    logic [EQ_W-1:0] wk_f [CV];
    logic [32:0]     wk_e [CV];
    logic [CV-1:0]   wk_v;
    logic [CV-1:0]   wk_hit;             // the packet that starts at the place (at most one)
    logic [32:0]     wk_next;            // its end
    // a_en only loads the packets (clock enables) and the flags: the place
    // follows c0 while no walk stands (the node admits only then), so the
    // admission's c0 is in it in the walk's first cycle without a_en in
    // front of it (a_en's own logic in the node is deep: in front of the
    // place's load it was 6.75 levels).
    always_comb begin
        wk_next = '0;
        for (int k = 0; k < CV; k++) begin
            wk_hit[k] = wk_v[k] && wk_f[k] == wk_pl[EQ_W-1:0];
            if (wk_hit[k]) wk_next = wk_next | wk_e[k];
        end
        wk_wr = wk_on && !wk_first && !wk_at;
    end
    always_ff @(posedge clk) begin
        if (rst || i_en) wk_on <= 1'b0;
        else if (a_en) wk_on <= 1'b1;
        else if (wk_wr) wk_on <= 1'b0;
        wk_wr_q <= !rst && wk_wr;
        wk_cov <= wk_pl;
        wk_first <= !rst && !i_en && a_en;
        wk_at <= !rst && !i_en && (wk_first || wk_at) && wk_hit != '0;
        // Every value lies within SPAN of the window's base (a held packet
        // ends above it and starts at most SPAN below its window's end), so
        // two are equal when their low EQ_W bits are.
        wk_pl <= wk_first || wk_at ? wk_next : t_covered > base ? t_covered : base;
        if (a_en) begin
            for (int c = 0; c < MAX_CONTRIB; c++) wk_row[c] <= row_q == CR_W'(c);
            wk_f[0] <= q_first[EQ_W-1:0];
            wk_e[0] <= q_end;
            wk_v[0] <= 1'b1;
            for (int k = 0; k < MAX_HELD; k++) begin
                wk_f[k + 1] <= t_first[k][EQ_W-1:0];
                wk_e[k + 1] <= t_end[k];
                wk_v[k + 1] <= t_valid[k];
            end
        end
    end
`ifndef SYNTHESIS
    // The premises: no packet holds the coverage from below, and a low-bit
    // match is a match.
    logic [32:0] wk_ff [CV];
    always_ff @(posedge clk)
        if (a_en) begin
            wk_ff[0] <= q_first;
            for (int k = 0; k < MAX_HELD; k++) wk_ff[k + 1] <= t_first[k];
        end
    always_ff @(posedge clk)
        if (!rst && a_en && t_covered < base)
            $error("prism_held_table: an admission with the row's coverage %0d below base %0d", t_covered, base);
    always_ff @(posedge clk)
        if (!rst && wk_on && (wk_first || wk_at))
            for (int k = 0; k < CV; k++)
                if (wk_v[k] && wk_ff[k] < wk_pl && wk_pl < wk_e[k])
                    $error("prism_held_table: packet %0d [%0d, %0d) holds the coverage %0d from below", k, wk_ff[k], wk_e[k], wk_pl);
                else if (wk_hit[k] != (wk_v[k] && wk_ff[k] == wk_pl))
                    $error("prism_held_table: packet %0d [%0d, %0d) at the coverage %0d: low bits %0d, whole %0d (SPAN %0d too small?)",
                           k, wk_ff[k], wk_e[k], wk_pl, wk_hit[k], wk_ff[k] == wk_pl, SPAN);
    always_ff @(posedge clk)
        if (!rst && wk_on && (wk_first || wk_at) && !$onehot0(wk_hit))
            $error("prism_held_table: %0d packets start at the coverage %0d", $countones(wk_hit), wk_pl);
`endif

    // Readiness: the least coverage over the contributors in use, at least
    // base, i.e. max(least coverage, base). The least coverage is a
    // register two cycles behind the coverage: every pair compared, then
    // the one below or equal to all others (ties to the lowest) selected.
    // An install sets it at once (the engine samples readiness in CONTROL
    // states too) and holds it while the compares still see the old rows.
    logic [32:0] cmin;
    logic [32:0] mn_v [MAX_CONTRIB];
    logic [MAX_CONTRIB-1:0] mn_le [MAX_CONTRIB];  // [i][j]: row i's value <= row j's
    logic        inst_q;
    // The pairs' order on the coverages' low LT_W bits: a row in use covers
    // at least base and at most SPAN past it (its held packets' ends), so
    // two such are less than SPAN apart; a row not in use is above every
    // row in use and equal to the others not in use (its value, all ones).
    // (64 compares of 33 bits were 2.6k LUTs of the table's 18.8k.)
    always_ff @(posedge clk) begin
        for (int i = 0; i < MAX_CONTRIB; i++) begin
            mn_v[i] <= CI_W'(i) < n ? c_covered[i] : 33'h1_FFFF_FFFF;
            for (int j = 0; j < MAX_CONTRIB; j++)
                mn_le[i][j] <= CI_W'(i) < n ? CI_W'(j) >= n || !lt_low(c_covered[j][LT_W-1:0], c_covered[i][LT_W-1:0]) : CI_W'(j) >= n;
        end
        inst_q <= !rst && i_en;
        if (rst || (i_en && i_n == 0)) begin
            cmin <= 33'h1_FFFF_FFFF;
            m_gt_base <= base != 33'h1_FFFF_FFFF;
            m_ge_e <= 1'b1;
            m_ge_x <= 1'b1;
        end else if (i_en) begin
            cmin <= '0;
            m_gt_base <= 1'b0;
            m_ge_e <= cmp_e == 0;
            m_ge_x <= cmp_x == 0;
        end else if (inst_q) begin
            m_gt_base <= cmin > base;
            m_ge_e <= cmin >= cmp_e;
            m_ge_x <= cmin >= cmp_x;
        end else begin
            logic [32:0] m;
            logic        gt, ge, gx;
            m = '0;
            gt = 1'b0;
            ge = 1'b0;
            gx = 1'b0;
            for (int i = 0; i < MAX_CONTRIB; i++) begin
                logic least;
                least = 1'b1;
                for (int j = 0; j < MAX_CONTRIB; j++)
                    if (j < i ? !mn_le[i][j] || mn_le[j][i] : !mn_le[i][j]) least = 1'b0;
                if (least) begin
                    m = m | mn_v[i];
                    gt = gt | (mn_v[i] > base);
                    ge = ge | (mn_v[i] >= cmp_e);
                    gx = gx | (mn_v[i] >= cmp_x);
                end
            end
            cmin <= m;
            m_gt_base <= gt;
            m_ge_e <= ge;
            m_ge_x <= gx;
        end
    end
`ifndef SYNTHESIS
    // The low bits' order against the 33-bit one, for every pair.
    always_ff @(posedge clk)
        for (int i = 0; i < MAX_CONTRIB; i++)
            for (int j = 0; j < MAX_CONTRIB; j++)
                if (!rst && mn_le[i][j] != (mn_v[i] <= mn_v[j]))
                    $error("prism_held_table: rows %0d and %0d's coverages %0d and %0d ordered wrongly on their low bits (SPAN %0d too small?)", i, j, mn_v[i], mn_v[j], SPAN);
    logic [32:0] base_d, cmp_e_d, cmp_x_d;
    logic        rst_d;
    always_ff @(posedge clk) begin
        base_d <= base;
        cmp_e_d <= cmp_e;
        cmp_x_d <= cmp_x;
        rst_d <= rst;
        if (!rst && !rst_d && (m_gt_base != (cmin > base_d) || m_ge_e != (cmin >= cmp_e_d) || m_ge_x != (cmin >= cmp_x_d)))
            $error("prism_held_table: m_gt_base/m_ge_e/m_ge_x are not the least coverage's compares with the cycle before's base, cmp_e and cmp_x");
    end
`endif
    assign m_ready = cmin > base ? cmin : base;
    assign m_least = cmin;

    // The release, after r_en (its cycle r): in r + 1 the packets wholly
    // below r_end leave (their valid bits). One may start every cycle; each
    // takes the packets the ones before it left.
    logic        rv1, rv2, rv3, rv4;
    logic [32:0] rq;
    logic [MAX_CONTRIB*MAX_HELD-1:0] rel_clear, rq_clear;
    always_comb
        for (int c = 0; c < MAX_CONTRIB; c++)
            for (int k = 0; k < MAX_HELD; k++)
                rel_clear[MAX_HELD * c + k] = rv1 && h_valid[MAX_HELD * c + k] && !lt_low(rq[LT_W-1:0], h_end[c][k]);
    always_ff @(posedge clk) begin
        rv1 <= !rst && r_en;
        rv2 <= !rst && rv1;
        rv3 <= !rst && rv2;
        rv4 <= !rst && rv3;
        rq <= r_end;
        rq_clear <= rel_clear;
    end

    // The bytes a contributor holds, from its valid bits and its packets'
    // bytes as they stand: sums of four slots, then of those (a tree: a
    // chain of three adds was 8.75 levels), each a register. An admission
    // (or an install) is in c_held two cycles after it is in h_valid, a
    // release three: the packets it took count a cycle longer (rq_clear),
    // so that the row's m_bytes moves when it always has (r + 6, a + 4):
    // the node's checks and decisions are timed to it. Until session 68
    // the bytes were what admissions added less what releases took, each
    // release's freed bytes summed and taken off by carry-save adds.
    localparam int SQ_W = 16 + 2;                       // four slots' bytes
    localparam int SB_W = 16 + $clog2(MAX_HELD + 1);    // a row's
    logic [SQ_W-1:0] hq_sum [MAX_CONTRIB][NQ];
    always_ff @(posedge clk)
        for (int c = 0; c < MAX_CONTRIB; c++) begin
            logic [SB_W-1:0] t [NQ];
            for (int q = 0; q < NQ; q++) begin
                logic [SQ_W-1:0] m [4];
                for (int k = 0; k < 4; k++)
                    m[k] = 4 * q + k < MAX_HELD && (h_valid[MAX_HELD * c + 4 * q + k] || rq_clear[MAX_HELD * c + 4 * q + k]) ? SQ_W'(h_bytes[c][4 * q + k]) : '0;
                hq_sum[c][q] <= (m[0] + m[1]) + (m[2] + m[3]);
                t[q] = SB_W'(hq_sum[c][q]);
            end
            for (int w = 1; w < NQ; w = 2 * w)
                for (int q = 0; q + w < NQ; q = q + 2 * w) t[q] = t[q] + t[q + w];
            c_held[c] <= 32'(t[0]);
        end

    // Quiet: nothing written last cycle and nothing under way but a
    // release's bytes (the registered row is the table, m_bytes perhaps
    // still before the release: more, never fewer). Bytes exact: m_bytes is
    // after every release and install (the row's m_bytes has a release's
    // from r + 6 and an install's zeros from i + 4, counting the cycle of
    // r_en or i_en as r or i). Settled: readiness has every admission.
    logic inst_q2;
    always_ff @(posedge clk) begin
        inst_q2 <= !rst && inst_q;
        m_quiet <= !(rst || i_en || inst_q || a_may || r_may || rv1 || rv2 || wk_on);
        m_bytes_exact <= !(rst || i_en || inst_q || inst_q2 || r_may || rv1 || rv2 || rv3 || rv4);
        m_settled <= !(rst || a_may || wk_on || wk_wr_q);
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            n <= '0;
            h_valid <= '0;
        end else if (i_en) begin
            n <= i_n;
            h_valid <= '0;
            for (int i = 0; i < MAX_CONTRIB; i++) begin
                c_stream[i] <= i_stream[16*i +: 16];
                c_lep[i] <= i_lep[16*i +: 16];
                c_pep[i] <= i_pep[16*i +: 16];
                c_port[i] <= i_port[16*i +: 16];
                c_mac[i] <= i_mac[48*i +: 48];
                c_covered[i] <= '0;
            end
        end else begin
            if (rv1) h_valid <= h_valid & ~rel_clear;
            if (wk_wr)
                for (int c = 0; c < MAX_CONTRIB; c++)
                    if (wk_row[c]) c_covered[c] <= wk_cov;
            if (a_en) h_valid <= h_valid | wsel_q;
        end
    end
    // An admission's bytes are in h_bytes and its valid bit in h_valid a
    // cycle after a_en: c_held two cycles later and the row's m_bytes one
    // more, all before m_quiet rises again (a_may, then the coverage's walk).
    // An admission's slot, one-hot over every row's slots, from the row
    // and its first free slot, registered, so each held register's write
    // enable is a_en and one bit. Decoded after a_en they were 8.00
    // levels with a_en's own logic in the node; decoded from registers
    // but not registered, 7.75 (10,440 endpoints): synthesised apart from
    // the node, ABC takes a_en as early as any input and put it first.
    // The packets' ends and bytes are never reset or installed, only
    // written here (their IDs in g_pid, at the same slot).
    always_comb
        for (int c = 0; c < MAX_CONTRIB; c++)
            for (int k = 0; k < MAX_HELD; k++)
                wsel[MAX_HELD * c + k] = row_q == CR_W'(c) && free == HW'(k);
    always_ff @(posedge clk) wsel_q <= wsel;
    always_ff @(posedge clk)
        for (int c = 0; c < MAX_CONTRIB; c++)
            for (int k = 0; k < MAX_HELD; k++)
                if (a_en && wsel_q[MAX_HELD * c + k]) begin
                    h_end[c][k] <= q_end[LT_W-1:0];
                    h_bytes[c][k] <= a_len;
                end
`ifndef SYNTHESIS
    // The release on the ends' low bits against the 33-bit compare, for
    // every held packet it looks at.
    logic [32:0] h_end_full [MAX_CONTRIB][MAX_HELD];
    always_ff @(posedge clk)
        for (int c = 0; c < MAX_CONTRIB; c++)
            for (int k = 0; k < MAX_HELD; k++) begin
                if (a_en && wsel_q[MAX_HELD * c + k]) h_end_full[c][k] <= q_end;
                if (!rst && rv1 && h_valid[MAX_HELD * c + k] && rel_clear[MAX_HELD * c + k] != (h_end_full[c][k] <= rq))
                    $error("prism_held_table: the release to %0d on low bits %0s held packet %0d.%0d ending at %0d (SPAN %0d too small?)",
                           rq, rel_clear[MAX_HELD * c + k] ? "takes" : "keeps", c, k, h_end_full[c][k], SPAN);
            end
`endif
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst) begin
            if (32'(i_en) + 32'(r_en) + 32'(a_en) > 1) $error("prism_held_table: more than one write in a cycle");
            if (a_en && !m_quiet) $error("prism_held_table: an admission decided on a row that is not the table");
            if (a_en && !a_may) $error("prism_held_table: an admission without a_may");
            if (r_en && !r_may) $error("prism_held_table: a release without r_may");
            if (a_en && wsel_q != wsel) $error("prism_held_table: an admission's row or free slot changed since the cycle before");
            if (i_en && (rv1 || rv2 || rv3 || rv4 || wk_on)) $error("prism_held_table: an install while a release or a coverage is under way");
        end
`endif
endmodule

`default_nettype wire
