// prism_held_table: prism_node's contributors and the DATA packets each one
// has in the window (held until the window moves past them): the state the
// DATA admission decides on, and the coverage the readiness check reads.
//
// Per contributor (MAX_CONTRIB rows, the first `n` in use): its stream,
// local and peer endpoint, port and source MAC (from STAGE), the element
// it covers up to, the bytes it holds, and MAX_HELD held packets (packet ID,
// body CRC-32C, first and end element, bytes).
//
// Lookup: `l_stream` is looked up every cycle and the contributor's row is
// registered (m_found, m_idx, m_lep .. m_bytes, and the held packets), so
// a decision a cycle later reads registers. The query outputs (m_hit ..
// m_cov) are that row against the frame on q_*: a held packet with the same
// ID (and whether it is the same packet), one overlapping the frame, how
// many are held, and the coverage once the frame is admitted.
//
// Writes, one a cycle (the node's engine gives at most one): `i_en` installs
// a STAGE's contributors (every held packet dropped, coverage and bytes 0);
// `r_en` releases the packets wholly below `r_end` (the window moved there);
// `a_en` admits the frame on q_* into the registered row (its first free
// held slot), its bytes `a_len` counted and its coverage m_cov. The row is
// registered a cycle before it is used: the writer must not write in the
// cycle before an admission's decision (prism_node checks it).

`default_nettype none

module prism_held_table #(
    parameter int MAX_CONTRIB = 8,
    parameter int MAX_HELD = 16,
    parameter int CI_W = $clog2(MAX_CONTRIB + 1)
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
    // lookup, registered
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
    output logic [32:0]                    m_cov,
    // admission of the frame, and the window's release
    input  wire logic                      a_en,
    input  wire logic [15:0]               a_len,
    input  wire logic                      r_en,
    input  wire logic [32:0]               r_end,
    // every element below this is covered by every contributor (or base)
    output logic [32:0]                    m_ready
);
    localparam int CR_W = MAX_CONTRIB > 1 ? $clog2(MAX_CONTRIB) : 1;
    localparam int HW = MAX_HELD > 1 ? $clog2(MAX_HELD) : 1;
    localparam int HP = 2 ** HW;         // leaves of the sums' trees (MAX_HELD and zeros)
    localparam int CP = 2 ** CR_W;       // and of the readiness's minimum

    initial begin
        if (MAX_CONTRIB < 2) $error("prism_held_table: MAX_CONTRIB must be at least 2");
        if (MAX_HELD < 2) $error("prism_held_table: MAX_HELD must be at least 2");
        if (2 ** CI_W <= MAX_CONTRIB) $error("prism_held_table: CI_W must hold MAX_CONTRIB");
    end

    // Registers, every one read and written at constant indices (a row or
    // slot chosen by comparing its index): an array indexed at run time is
    // a memory to Yosys, and its memory passes ran out of 9.5 GB on this
    // table (its release reads all 128 slots at once).
    logic [CI_W-1:0] n;
    (* mem2reg *) logic [15:0] c_stream [MAX_CONTRIB], c_lep [MAX_CONTRIB], c_pep [MAX_CONTRIB], c_port [MAX_CONTRIB];
    (* mem2reg *) logic [47:0] c_mac [MAX_CONTRIB];
    (* mem2reg *) logic [32:0] c_covered [MAX_CONTRIB];
    (* mem2reg *) logic [31:0] c_bytes [MAX_CONTRIB];
    // A flat vector: held slot k of contributor c at [MAX_HELD*c + k].
    logic [MAX_CONTRIB*MAX_HELD-1:0] h_valid;
    (* mem2reg *) logic [31:0] h_pid [MAX_CONTRIB][MAX_HELD], h_crc [MAX_CONTRIB][MAX_HELD];
    (* mem2reg *) logic [32:0] h_first [MAX_CONTRIB][MAX_HELD], h_end [MAX_CONTRIB][MAX_HELD];
    (* mem2reg *) logic [15:0] h_bytes [MAX_CONTRIB][MAX_HELD];

    // The looked-up row, registered.
    logic [CR_W-1:0] row_q;
    logic [MAX_HELD-1:0] t_valid;
    logic [31:0] t_pid [MAX_HELD], t_crc [MAX_HELD];
    logic [32:0] t_first [MAX_HELD], t_end [MAX_HELD];
    logic [32:0] t_covered;
    always_ff @(posedge clk) begin
        logic found;
        logic [CI_W-1:0] idx;
        found = 1'b0;
        idx = '0;
        for (int i = 0; i < MAX_CONTRIB; i++)
            if (CI_W'(i) < n && c_stream[i] == l_stream && !found) begin
                found = 1'b1;
                idx = CI_W'(i);
            end
        m_found <= found;
        row_q <= CR_W'(idx);
        // The row by its index (row 0 when none is found: m_found says so).
        for (int c = 0; c < MAX_CONTRIB; c++)
            if (idx == CI_W'(c)) begin
                for (int k = 0; k < MAX_HELD; k++) begin
                    t_valid[k] <= h_valid[MAX_HELD * c + k];
                    t_pid[k] <= h_pid[c][k];
                    t_crc[k] <= h_crc[c][k];
                    t_first[k] <= h_first[c][k];
                    t_end[k] <= h_end[c][k];
                end
                m_lep <= c_lep[c];
                m_pep <= c_pep[c];
                m_port <= c_port[c];
                m_mac <= c_mac[c];
                t_covered <= c_covered[c];
                m_bytes <= c_bytes[c];
            end
    end

    // The frame against the row's held packets, and the first free slot.
    logic free_found;
    logic [HW-1:0] free;
    // Sums and minimums are balanced trees (node i of a tree the sum of
    // nodes 2i and 2i + 1, the leaves from HP), not a chain over the slots.
    always_comb begin
        logic [15:0] cnt [2*HP];
        for (int i = 0; i < HP; i++) cnt[HP + i] = i < MAX_HELD ? 16'(t_valid[i]) : 16'd0;
        for (int i = HP - 1; i >= 1; i--) cnt[i] = cnt[2*i] + cnt[2*i + 1];
        m_count = cnt[1];
    end
    always_comb begin
        m_hit = 1'b0;
        m_same = 1'b0;
        m_overlap = 1'b0;
        free_found = 1'b0;
        free = '0;
        for (int k = 0; k < MAX_HELD; k++) begin
            if (t_valid[k]) begin
                if (t_pid[k] == q_pid) begin
                    m_hit = 1'b1;
                    m_same = t_crc[k] == q_crc && t_first[k] == q_first && t_end[k] == q_end;
                end
                if (t_first[k] < q_end && q_first < t_end[k]) m_overlap = 1'b1;
            end else if (!free_found) begin
                free_found = 1'b1;
                free = HW'(k);
            end
        end
    end

    // Coverage once the frame is admitted: from c0 = max(covered, base)
    // through every held packet that continues it, the frame included. That
    // is the first element at or above c0 that no packet holds, and it is c0
    // or a packet's end: the least candidate (c0, the frame's end, each held
    // packet's end) at or above c0 inside no packet. Every compare side by
    // side, not a chain of extensions a packet at a time.
    localparam int CV = MAX_HELD + 2;    // candidates: c0, then packet j-1's end (packet 0 the frame)
    always_comb begin
        logic [32:0] cp [CV];            // candidate values
        logic [32:0] pf [CV];            // packet j-1's first (j >= 1)
        logic        pv [CV];            // packet j-1 is held (the frame's always)
        logic        lt [CV][CV];        // cp[i] < cp[j]
        logic        ok [CV];            // a candidate inside no packet, at or above c0
        logic        least;
        cp[0] = t_covered > base ? t_covered : base;
        pf[0] = '0;
        pv[0] = 1'b1;
        cp[1] = q_end;
        pf[1] = q_first;
        pv[1] = 1'b1;
        for (int k = 0; k < MAX_HELD; k++) begin
            cp[k + 2] = t_end[k];
            pf[k + 2] = t_first[k];
            pv[k + 2] = t_valid[k];
        end
        for (int i = 0; i < CV; i++)
            for (int j = 0; j < CV; j++) lt[i][j] = cp[i] < cp[j];
        for (int j = 0; j < CV; j++) begin
            ok[j] = pv[j] && !lt[j][0];
            for (int k = 1; k < CV; k++)
                if (pv[k] && pf[k] <= cp[j] && lt[j][k]) ok[j] = 1'b0;
        end
        // The least of them (ties to the lowest index): one hot, then selected.
        m_cov = '0;
        for (int j = 0; j < CV; j++) begin
            least = ok[j];
            for (int i = 0; i < CV; i++)
                if (i != j && ok[i] && (i < j ? !lt[j][i] : lt[i][j])) least = 1'b0;
            if (least) m_cov = m_cov | cp[j];
        end
    end

    // Readiness: the least coverage over the contributors in use, at least
    // base, i.e. max(least coverage, base). The least coverage is a
    // register, a cycle behind the coverage: the cycle after an admission
    // must not read m_ready (prism_node's engine is in D_DESC or D_RUN
    // then; it checks that). base and an install move it at once.
    logic [32:0] cmin;
    always_ff @(posedge clk) begin
        logic [32:0] mn [2*CP];
        for (int i = 0; i < CP; i++) mn[CP + i] = i < MAX_CONTRIB && CI_W'(i) < n ? c_covered[i] : 33'h1_FFFF_FFFF;
        for (int i = CP - 1; i >= 1; i--) mn[i] = mn[2*i] < mn[2*i + 1] ? mn[2*i] : mn[2*i + 1];
        // An install's coverage at once (the engine samples readiness in CONTROL states too).
        if (rst || (i_en && i_n == 0)) cmin <= 33'h1_FFFF_FFFF;
        else if (i_en) cmin <= '0;
        else cmin <= mn[1];
    end
    assign m_ready = cmin > base ? cmin : base;

    // The release: packets wholly below r_end, and the bytes they free.
    logic [MAX_CONTRIB*MAX_HELD-1:0] rel_clear;
    logic [31:0] rel_freed [MAX_CONTRIB];
    always_comb begin
        logic [31:0] fr [2*HP];
        rel_clear = '0;
        for (int c = 0; c < MAX_CONTRIB; c++) begin
            for (int k = 0; k < HP; k++) fr[HP + k] = '0;
            for (int k = 0; k < MAX_HELD; k++)
                if (h_valid[MAX_HELD * c + k] && h_end[c][k] <= r_end) begin
                    rel_clear[MAX_HELD * c + k] = 1'b1;
                    fr[HP + k] = {16'b0, h_bytes[c][k]};
                end
            for (int i = HP - 1; i >= 1; i--) fr[i] = fr[2*i] + fr[2*i + 1];
            rel_freed[c] = fr[1];
        end
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
                c_bytes[i] <= '0;
            end
        end else if (r_en) begin
            h_valid <= h_valid & ~rel_clear;
            for (int c = 0; c < MAX_CONTRIB; c++) c_bytes[c] <= c_bytes[c] - rel_freed[c];
        end else if (a_en) begin
            for (int c = 0; c < MAX_CONTRIB; c++)
                if (row_q == CR_W'(c)) begin
                    for (int k = 0; k < MAX_HELD; k++)
                        if (free == HW'(k)) begin
                            h_valid[MAX_HELD * c + k] <= 1'b1;
                            h_pid[c][k] <= q_pid;
                            h_first[c][k] <= q_first;
                            h_end[c][k] <= q_end;
                            h_crc[c][k] <= q_crc;
                            h_bytes[c][k] <= a_len;
                        end
                    c_bytes[c] <= m_bytes + {16'b0, a_len};
                    c_covered[c] <= m_cov;
                end
        end
    end
`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst && 32'(i_en) + 32'(r_en) + 32'(a_en) > 1) $error("prism_held_table: more than one write in a cycle");
`endif
endmodule

`default_nettype wire
