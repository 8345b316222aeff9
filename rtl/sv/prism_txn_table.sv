// prism_txn_table: prism_node's CONTROL transaction records and retired
// generations, looked up by a scan of distributed RAM.
//
// Records (TXN_SLOTS): {key, txn, gen, crc, len, status, detail}, one per
// CONTROL request the engine answered, so that an identical retry gets the
// recorded answer and a changed one TXN_CONFLICT. Retired keys
// (RETIRED_SLOTS): {key, gen}, the generation a RELEASE or ABORT ended, so a
// request of that generation or older is STALE_GENERATION. Both tables are
// replaced round robin when full; reset empties them (valid bits only).
//
// Lookup: l_valid with the request {l_key, l_txn, l_gen, l_crc, l_len}.
// The answer is on the m_* outputs in the LATENCY'th cycle after it (m_valid
// high for that cycle; the outputs hold until the next answer). A lookup
// reads one record (and one retired key) a cycle from a distributed RAM
// with a registered read, so it takes TXN_SLOTS + 3 cycles:
//   the request registered (q_*), the scan's index at record 0;
//   every cycle, the record at the index read (rd_*), the index on;
//   the read record against the request, registered (c_*): key, txn,
//   crc and len, gen older; the retired key's: key, gen at or above;
//   folded into the answer (hit, same, status and detail of the hit,
//   stale), which the last record's fold registers on the m_* outputs.
// CONTROL frames are rare and the engine handles one at a time, so a
// lookup need not be one cycle: 16 records compared at once in flip-flops
// were 4.4k LUTs (every record's 224 bits against the request), the scan
// is a few hundred. A lookup given while one is in flight starts over
// (the engine looks a waiting frame up again each cycle; the last counts).
//
// At most one record has a request's (key, txn): the engine inserts one
// only when its lookup missed, and a lookup sees every earlier insert. So
// the answer's status and detail are the one hit's. At most one retired
// entry has a key: a retire updates it, or fills a slot when there is
// none. Simulation checks both.
//
// Writes. They apply to the last lookup's request, so the caller passes no
// key: the engine handles one CONTROL frame at a time, looks it up first,
// and writes the tables only for that frame, after its answer (not while
// a lookup is in flight, checked; a write may come in the cycle of the
// next lookup, which then sees it).
//   w_insert  record {q_key, q_txn, q_gen, q_crc, q_len, w_status, w_detail}
//             in the next record slot (round robin);
//   w_purge   invalidate the records of q_key older than q_gen (a STAGE whose
//             generation is installed); the insert of the same cycle wins
//             over it for its slot (it never matches: its slot's old record
//             was compared, the new one is of q_gen);
//   w_retire  retire q_key at q_gen: the retired entry of q_key takes
//             q_gen; with none, it goes into the next retired slot.
// Purge and retire use what the scan found (the records to purge, a flip-
// flop each; the retired entry of the key): nothing else writes the
// entries between the lookup and the write (retire writes only the
// retired table, insert and purge only the records, and only one frame's
// writes happen between lookups).

`default_nettype none

module prism_txn_table #(
    parameter int TXN_SLOTS = 16,
    parameter int RETIRED_SLOTS = 8,
    // Cycles from l_valid to m_valid (TXN_SLOTS + 3; checked below).
    parameter int LATENCY = TXN_SLOTS + 3
) (
    input  wire logic        clk,
    input  wire logic        rst,

    input  wire logic        l_valid,
    input  wire logic [95:0] l_key,      // {job, group, op}
    input  wire logic [31:0] l_txn,
    input  wire logic [47:0] l_gen,
    input  wire logic [31:0] l_crc,      // the request's CRC-32C
    input  wire logic [15:0] l_len,      // and length

    output logic             m_valid,
    output logic             m_busy,
    output logic             m_hit,      // a record of this key and txn
    output logic             m_same,     // ... with this crc and len
    output logic [7:0]       m_status,   // its status and detail (0 without a hit)
    output logic [15:0]      m_detail,
    output logic             m_stale,    // the key is retired at this gen or later

    input  wire logic        w_insert,
    input  wire logic [7:0]  w_status,
    input  wire logic [15:0] w_detail,
    input  wire logic        w_purge,
    input  wire logic        w_retire
);
    localparam int TW = TXN_SLOTS > 1 ? $clog2(TXN_SLOTS) : 1;
    localparam int RW = RETIRED_SLOTS > 1 ? $clog2(RETIRED_SLOTS) : 1;
    localparam int REC_W = 96 + 32 + 48 + 32 + 16 + 8 + 16;
    localparam int RET_W = 96 + 48;

    initial begin
        // Round robin by a wrapping counter: the slot counts are powers of two.
        if (TXN_SLOTS < 2 || 2 ** TW != TXN_SLOTS) $error("prism_txn_table: TXN_SLOTS must be a power of two, at least 2");
        if (RETIRED_SLOTS < 2 || 2 ** RW != RETIRED_SLOTS) $error("prism_txn_table: RETIRED_SLOTS must be a power of two, at least 2");
        // The retired keys are read beside the records, at the same index.
        if (RETIRED_SLOTS > TXN_SLOTS) $error("prism_txn_table: RETIRED_SLOTS must be at most TXN_SLOTS");
        if (LATENCY != TXN_SLOTS + 3) $error("prism_txn_table: LATENCY must match the scan (TXN_SLOTS + 3)");
    end

    // The request (registered with l_valid).
    logic [95:0] q_key;
    logic [31:0] q_txn, q_crc;
    logic [47:0] q_gen;
    logic [15:0] q_len;

    // ------------------------------------------------------------ storage
    // Valid bits in flip-flops (a purge clears several at once), the rest
    // in distributed RAM, written by the insert or the retire, read by the scan.
    logic [TXN_SLOTS-1:0]     t_valid;
    logic [RETIRED_SLOTS-1:0] r_valid;
    logic [TW-1:0] t_next;
    logic [RW-1:0] r_next;
    logic [TW-1:0] sc;                // the record the scan reads next
    logic          sc_on;
    logic [REC_W-1:0] rd_rec;
    logic [RET_W-1:0] rd_ret;
    logic          r_we;
    logic [RW-1:0] r_wa;
    prism_ram_sdp #(.W(REC_W), .DEPTH(TXN_SLOTS), .STYLE(2)) records (
        .clk, .we(w_insert), .waddr(t_next), .wdata({q_key, q_txn, q_gen, q_crc, q_len, w_status, w_detail}),
        .re(1'b1), .raddr(sc), .orst(1'b0), .rdata(rd_rec)
    );
    prism_ram_sdp #(.W(RET_W), .DEPTH(RETIRED_SLOTS), .STYLE(2)) retired (
        .clk, .we(r_we), .waddr(r_wa), .wdata({q_key, q_gen}),
        .re(1'b1), .raddr(sc[RW-1:0]), .orst(1'b0), .rdata(rd_ret)
    );

    // ------------------------------------------------------------ scan
    // rd_* is the record read in the cycle before (index rd_i), c_* its
    // compares. A new lookup drops whatever the one before had in flight.
    logic          rd_v, c_v;
    logic [TW-1:0] rd_i, c_i;
    logic          c_tv, c_key, c_txn, c_same, c_old;   // record: valid, key, txn, crc and len, older gen
    logic          c_rv, c_rkey, c_rge;                 // retired: valid (and in the table), key, gen at or above
    logic [7:0]    c_status;
    logic [15:0]   c_detail;
    always_ff @(posedge clk) begin
        if (rst) begin
            sc_on <= 1'b0;
            rd_v <= 1'b0;
            c_v <= 1'b0;
        end else begin
            if (l_valid) begin
                sc <= '0;
                sc_on <= 1'b1;
            end else if (sc_on) begin
                sc <= sc + 1'b1;
                if (sc == TW'(TXN_SLOTS - 1)) sc_on <= 1'b0;
            end
            rd_v <= sc_on && !l_valid;
            c_v <= rd_v && !l_valid;
        end
        if (l_valid) begin
            q_key <= l_key;
            q_txn <= l_txn;
            q_gen <= l_gen;
            q_crc <= l_crc;
            q_len <= l_len;
        end
        rd_i <= sc;
        c_i <= rd_i;
        begin
            logic [95:0] k, rk;
            logic [31:0] x, c;
            logic [47:0] g, rg;
            logic [15:0] n;
            {k, x, g, c, n} = rd_rec[REC_W-1:24];
            c_status <= rd_rec[23:16];
            c_detail <= rd_rec[15:0];
            {rk, rg} = rd_ret;
            c_tv <= t_valid[rd_i];
            c_key <= k == q_key;
            c_txn <= x == q_txn;
            c_same <= c == q_crc && n == q_len;
            c_old <= g < q_gen;
            c_rv <= 32'(rd_i) < RETIRED_SLOTS && r_valid[rd_i[RW-1:0]];
            c_rkey <= rk == q_key;
            c_rge <= q_gen <= rg;
        end
    end

    // ------------------------------------------------------------ fold
    // The answer so far (a_*), cleared by a lookup; the last record's fold
    // goes to the outputs. p_m: the records a purge would invalidate;
    // r_hit and r_at: the key's retired entry.
    logic          a_hit, a_same, a_stale, hit_i, rk_i;
    logic [7:0]    a_status;
    logic [15:0]   a_detail;
    logic [TXN_SLOTS-1:0] p_m;
    logic          r_hit;
    logic [RW-1:0] r_at;
    assign hit_i = c_v && c_tv && c_key && c_txn;
    assign rk_i = c_v && c_rv && c_rkey;
    always_ff @(posedge clk) begin
        if (rst || l_valid) begin
            a_hit <= 1'b0;
            a_same <= 1'b0;
            a_stale <= 1'b0;
            a_status <= '0;
            a_detail <= '0;
            p_m <= '0;
            r_hit <= 1'b0;
        end else if (c_v) begin
            if (hit_i) begin
                a_hit <= 1'b1;
                a_same <= c_same;
                a_status <= c_status;
                a_detail <= c_detail;
            end
            if (rk_i && c_rge) a_stale <= 1'b1;
            for (int i = 0; i < TXN_SLOTS; i++)
                if (c_i == TW'(i)) p_m[i] <= c_tv && c_key && c_old;
            if (rk_i) begin
                r_hit <= 1'b1;
                r_at <= c_i[RW-1:0];
            end
        end
        m_valid <= !rst && !l_valid && c_v && c_i == TW'(TXN_SLOTS - 1);
        if (!rst && !l_valid && c_v && c_i == TW'(TXN_SLOTS - 1)) begin
            m_hit <= a_hit || hit_i;
            m_same <= hit_i ? c_same : a_same;
            m_status <= hit_i ? c_status : a_status;
            m_detail <= hit_i ? c_detail : a_detail;
            m_stale <= a_stale || (rk_i && c_rge);
        end
    end
    assign m_busy = sc_on || rd_v || c_v;
`ifndef SYNTHESIS
    always_ff @(posedge clk) begin
        if (!rst && !l_valid && c_v && hit_i && a_hit) $error("prism_txn_table: two records of one key and txn");
        if (!rst && !l_valid && c_v && rk_i && r_hit) $error("prism_txn_table: two retired entries of one key");
        if (!rst && (w_insert || w_purge || w_retire) && m_busy) $error("prism_txn_table: a write while a lookup is in flight");
    end
`endif

    // ------------------------------------------------------------ writes
    assign r_we = w_retire;
    assign r_wa = r_hit ? r_at : r_next;
    always_ff @(posedge clk) begin
        if (rst) begin
            t_valid <= '0;
            r_valid <= '0;
            t_next <= '0;
            r_next <= '0;
        end else begin
            // The insert after the purge: it wins for its slot.
            for (int i = 0; i < TXN_SLOTS; i++) begin
                if (w_purge && p_m[i]) t_valid[i] <= 1'b0;
                if (w_insert && t_next == TW'(i)) t_valid[i] <= 1'b1;
            end
            if (w_insert) t_next <= t_next + 1'b1;
            for (int j = 0; j < RETIRED_SLOTS; j++)
                if (w_retire && r_wa == RW'(j)) r_valid[j] <= 1'b1;
            if (w_retire && !r_hit) r_next <= r_next + 1'b1;
        end
    end
endmodule

`default_nettype wire
