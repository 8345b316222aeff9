// prism_txn_table: prism_node's CONTROL transaction records and retired
// generations, with a pipelined lookup (issue 26: 6 logic levels a cycle).
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
// high for that cycle; the outputs hold until the next answer):
//   stage 1  the request registered (q_*), so nothing of the caller's
//            decode (the header fields) is in front of the compares;
//   stage 2  every record's compares against it, registered a record each:
//            key (96 bits, with the valid bit), txn, crc and len, gen older;
//            every retired key's: key (with valid), gen at or below it;
//   stage 3  the reductions: hit = some record with key and txn, same =
//            that record's crc and len, its status and detail (an AND-OR
//            mux over the hit vector), stale = some retired key with a
//            generation at or above the request's. Registered: the answer.
// A 96 + 32-bit compare over 16 records, a priority encode, a mux and two
// more compares were one cycle in the node (far more than 6 levels).
//
// At most one record has a request's (key, txn): the engine inserts one
// only when its lookup missed, and a lookup sees every earlier insert. So
// the hit vector is one-hot or zero and needs no priority encoder (the
// node's loop took the highest index; with one hit it is the same record).
// Simulation checks it.
//
// Writes. They apply to the last lookup's request, so the caller passes no
// key: the engine handles one CONTROL frame at a time, looks it up first,
// and writes the tables only for that frame, after its answer.
//   w_insert  record {q_key, q_txn, q_gen, q_crc, q_len, w_status, w_detail}
//             in the next record slot (round robin);
//   w_purge   invalidate the records of q_key older than q_gen (a STAGE whose
//             generation is installed); the insert of the same cycle wins
//             over it for its slot (it never matches: its slot's old record
//             was compared, the new one is of q_gen);
//   w_retire  retire q_key at q_gen: every retired entry of q_key takes
//             q_gen; with none, it goes into the next retired slot.
// Purge and retire use stage 2's registered match vectors, taken at the
// lookup: nothing else writes the entries they select between the lookup
// and the write (retire writes only the retired table, insert and purge
// only the records, and only one frame's writes happen between lookups).
//
// A lookup after a write: a write takes effect at its clock edge and the
// compares read the tables a cycle after l_valid (stage 1 is in between),
// so a lookup presented in the same cycle as a write, or any later cycle,
// sees it. m_busy is high while a lookup's compares and answer are in
// flight (the cycles after l_valid: stage 2, and stage 3, which reads the
// records' status and detail straight from the tables): a write must not
// be given then, nor a second lookup if the first's match vectors are to
// be used for writes.

`default_nettype none

module prism_txn_table #(
    parameter int TXN_SLOTS = 16,
    parameter int RETIRED_SLOTS = 8,
    // Cycles from l_valid to m_valid (its stage count; checked below).
    parameter int LATENCY = 3
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

    initial begin
        // Round robin by a wrapping counter: the slot counts are powers of two.
        if (TXN_SLOTS < 2 || 2 ** TW != TXN_SLOTS) $error("prism_txn_table: TXN_SLOTS must be a power of two, at least 2");
        if (RETIRED_SLOTS < 2 || 2 ** RW != RETIRED_SLOTS) $error("prism_txn_table: RETIRED_SLOTS must be a power of two, at least 2");
        if (LATENCY != 3) $error("prism_txn_table: LATENCY must match its stage count (3)");
    end

    // ------------------------------------------------------------ storage
    // Flat vectors for the valid bits (written by decode and by the purge
    // vector, so no variable-index bit write), arrays for the data.
    logic [TXN_SLOTS-1:0] t_valid;
    logic [95:0] t_key [TXN_SLOTS];
    logic [31:0] t_txn [TXN_SLOTS], t_crc [TXN_SLOTS];
    logic [47:0] t_gen [TXN_SLOTS];
    logic [15:0] t_len [TXN_SLOTS], t_detail [TXN_SLOTS];
    logic [7:0]  t_status [TXN_SLOTS];
    logic [TW-1:0] t_next;
    logic [RETIRED_SLOTS-1:0] r_valid;
    logic [95:0] r_key [RETIRED_SLOTS];
    logic [47:0] r_gen [RETIRED_SLOTS];
    logic [RW-1:0] r_next;

    // ------------------------------------------------------------ stage 1
    logic        a_v;
    logic [95:0] q_key;
    logic [31:0] q_txn, q_crc;
    logic [47:0] q_gen;
    logic [15:0] q_len;
    always_ff @(posedge clk) begin
        a_v <= !rst && l_valid;
        if (l_valid) begin
            q_key <= l_key;
            q_txn <= l_txn;
            q_gen <= l_gen;
            q_crc <= l_crc;
            q_len <= l_len;
        end
    end

    // ------------------------------------------------------------ stage 2
    logic                     b_v;
    logic [TXN_SLOTS-1:0]     tk, tt, ts, to;    // record: key (and valid), txn, crc and len, older gen
    logic [RETIRED_SLOTS-1:0] rk, rs;            // retired: key (and valid), gen at or above
    always_ff @(posedge clk) begin
        b_v <= !rst && a_v;
        if (a_v) begin
            for (int i = 0; i < TXN_SLOTS; i++) begin
                tk[i] <= t_valid[i] && t_key[i] == q_key;
                tt[i] <= t_txn[i] == q_txn;
                ts[i] <= t_crc[i] == q_crc && t_len[i] == q_len;
                to[i] <= t_gen[i] < q_gen;
            end
            for (int j = 0; j < RETIRED_SLOTS; j++) begin
                rk[j] <= r_valid[j] && r_key[j] == q_key;
                rs[j] <= q_gen <= r_gen[j];
            end
        end
    end

    // ------------------------------------------------------------ stage 3
    logic [TXN_SLOTS-1:0] hit;
    logic [7:0]  st_or;
    logic [15:0] de_or;
    always_comb begin
        hit = tk & tt;
        st_or = '0;
        de_or = '0;
        for (int i = 0; i < TXN_SLOTS; i++) begin
            st_or = st_or | (t_status[i] & {8{hit[i]}});
            de_or = de_or | (t_detail[i] & {16{hit[i]}});
        end
    end
    always_ff @(posedge clk) begin
        m_valid <= !rst && b_v;
        if (b_v) begin
            m_hit <= |hit;
            m_same <= |(hit & ts);
            m_status <= st_or;
            m_detail <= de_or;
            m_stale <= |(rk & rs);
        end
    end
    assign m_busy = a_v || b_v;
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && b_v && !$onehot0(hit)) $error("prism_txn_table: two records of one key and txn");
`endif

    // ------------------------------------------------------------ writes
    // Every write by decode of the slot (a variable-index write of a bit
    // vector is a shifter in Yosys). Reset clears the valid bits and the
    // pointers only; the data are written without it (a clock enable each).
    logic [TXN_SLOTS-1:0]     t_we;   // the insert's slot
    logic [RETIRED_SLOTS-1:0] r_we;   // the retire's: its key's entries, or the next slot
    always_comb begin
        for (int i = 0; i < TXN_SLOTS; i++) t_we[i] = w_insert && t_next == TW'(i);
        for (int j = 0; j < RETIRED_SLOTS; j++) r_we[j] = w_retire && (rk[j] || (rk == 0 && r_next == RW'(j)));
    end
    always_ff @(posedge clk) begin
        if (rst) begin
            t_valid <= '0;
            r_valid <= '0;
            t_next <= '0;
            r_next <= '0;
        end else begin
            // The insert after the purge: it wins for its slot.
            for (int i = 0; i < TXN_SLOTS; i++) begin
                if (w_purge && tk[i] && to[i]) t_valid[i] <= 1'b0;
                if (t_we[i]) t_valid[i] <= 1'b1;
            end
            if (w_insert) t_next <= t_next + 1'b1;
            r_valid <= r_valid | r_we;
            if (w_retire && rk == 0) r_next <= r_next + 1'b1;
        end
    end
    always_ff @(posedge clk) begin
        for (int i = 0; i < TXN_SLOTS; i++)
            if (t_we[i]) begin
                t_key[i] <= q_key;
                t_txn[i] <= q_txn;
                t_gen[i] <= q_gen;
                t_crc[i] <= q_crc;
                t_len[i] <= q_len;
                t_status[i] <= w_status;
                t_detail[i] <= w_detail;
            end
        for (int j = 0; j < RETIRED_SLOTS; j++)
            if (r_we[j]) begin
                r_key[j] <= q_key;
                r_gen[j] <= q_gen;
            end
    end
endmodule

`default_nettype wire
