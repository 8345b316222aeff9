// prism_group_walk: walks the NumberGroups of a DATA or RESULT frame as its
// 512-bit beats go by and reports the first structural error with the same
// reason and frame offset as the Rust parser: group overrun, reserved
// descriptor bits, unknown format, Kulisch width, empty group, non-zero
// padding, more or fewer groups than declared, group counts that do not add up
// to the element count. Kulisch values' state bytes are not checked here
// (`m_kulisch_seen` says a group of them was present).
//
// Groups are 4-byte aligned from the body start (frame offset 56), so every
// descriptor sits in one 32-bit word of one beat. One beat a cycle, back to
// back, never stalling; the verdict comes LATENCY cycles after tlast.
//
// The only state carried from beat to beat is where the next descriptor is
// (its word, and how many beats ahead) and the padding its group left
// pending. Everything else is computed per beat in a pipeline that does not
// depend on it:
//   decode    every word read as a descriptor: fields, checks, value bytes;
//   mul       value length = count x value bytes (a DSP), the body end;
//   next      the overrun check and where that group ends, relative to the beat;
//   pad       the padding check when the group's last value word is in this beat;
//   node      each word as a node: terminal (error, or past the body), next
//             word in this beat, or leaving the beat (beats ahead, word, padding);
//   jump      pointer jumping, WB-1 rounds (a chain has at most WORDS/2 nodes):
//             for every entry word, the words it reaches and where it ends;
//   sel       the one carried step: the entry word picks its chain's end and
//             that node's exit (two 16:1 selects, about 4 levels: a stage
//             that looked every entry's exit up first was 1.7k LUTs);
//             the descriptors reached and the entry's pending padding go on;
//   cnt/rank  descriptors reached, each one's rank, elements (an adder tree);
//   acc       groups so far: which reached descriptor is one too many;
//   mism/err  the beat's first error, the frame's first error, element total;
//   out       the verdict, with the declared group and element counts.
// Fields that ride past stages that do not read them (counts, flags, exits,
// errors: hundreds of bits) wait in block RAM (prism_delay_ram), not in a
// shift-register LUT a bit.

`default_nettype none

module prism_group_walk #(
    parameter int DATA_W = 512,
    parameter int KEEP_W = DATA_W / 8,
    // Cycles from a frame's tlast beat to its verdict, fixed by the stages
    // below; the instantiating module states what it expects.
    parameter int LATENCY = 16
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
    localparam int WB = $clog2(WORDS);
    localparam int OW = 15;                        // word offsets: (56 + 65,535) / 4 < 2^15
    localparam int BI = OW - WB;                   // beat index
    localparam int ENTRY = 32'(DATA_BODY) / 4;     // the first descriptor's word in beat 0
    localparam int ROUNDS = WB - 1;
    localparam int GRP = WORDS / 4;                // rank: groups of four words
    localparam int ESW = 16 + WB;                  // a beat's element sum

    // Stages (registers of stage s hold the beat that entered s + 1 cycles ago).
    localparam int S_DEC = 1, S_NEXT = 3, S_NODE = 5;   // 2: mul, 4: pad
    localparam int S_JUMP = 6;                     // rounds S_JUMP .. S_END
    localparam int S_END = S_JUMP + ROUNDS - 1;
    localparam int S_SEL = S_END + 1;
    localparam int S_CNT = S_SEL + 1, S_RANK = S_CNT + 1, S_ACC = S_RANK + 1;
    localparam int S_MISM = S_ACC + 1, S_ERR = S_MISM + 1, S_OUT = S_ERR + 1;

    initial begin
        if (DATA_W % 32 != 0 || WORDS < 16 || (1 << WB) != WORDS)
            $error("prism_group_walk: DATA_W must be 32 times a power of two, at least 512");
        if (KEEP_W != DATA_W / 8) $error("prism_group_walk: KEEP_W must be DATA_W / 8");
        // The byte flags' registers (nzb1_q .. nzb3_q) reach S_NEXT.
        if (S_NEXT != S_DEC + 2) $error("prism_group_walk: S_NEXT must be two stages after decode");
        if (LATENCY != S_OUT + 1) $error("prism_group_walk: its latency is %0d, not %0d", S_OUT + 1, LATENCY);
    end

    // Errors inside the pipeline: a code, the word of the beat and the byte.
    localparam logic [2:0] E_NONE = 3'd0, E_OVERRUN = 3'd1, E_RESERVED = 3'd2, E_KWIDTH = 3'd3,
                           E_FORMAT = 3'd4, E_EMPTY = 3'd5, E_PADDING = 3'd6, E_GROUPS = 3'd7;
    localparam int ERW = 3 + WB + 2;

    // Padding of a group's last value word: its last `p` bytes must be zero
    // (nz[i]: byte i + 1 of the word is not). {error, byte}.
    function automatic logic [2:0] padchk(input logic [2:0] nz, input logic [1:0] p);
        padchk = 3'b000;
        if (p == 2'd3 && nz[0]) padchk = {1'b1, 2'd1};
        else if (p >= 2'd2 && nz[1]) padchk = {1'b1, 2'd2};
        else if (p >= 2'd1 && nz[2]) padchk = {1'b1, 2'd3};
    endfunction

    // Yosys 0.23 reads neither packed arrays of more than one dimension nor
    // arrays of registers well: per-word values are flat vectors, word w of
    // an N-bit field at [N*w +: N], stage s of a riding field at [N*WORDS*s +: N*WORDS].

    // ------------------------------------------------------------ per-beat tag
    // {count, group count, body non-empty, applies, beat index, start, last}
    localparam int T_LAST = 0, T_SOF = 1, T_B = 2, T_APP = 2 + BI, T_BODY = 3 + BI, T_GC = 4 + BI, T_CNT = 12 + BI;
    localparam int TAGW = 28 + BI;
    logic [S_ERR:0]            v_q;
    /* verilator lint_off UNUSEDSIGNAL */     // not every field is read at every stage
    logic [TAGW*(S_ERR+1)-1:0] tag_q;
    /* verilator lint_on UNUSEDSIGNAL */
`define GW_TAG(st, f, n) tag_q[TAGW*(st) + (f) +: (n)]

    // ------------------------------------------------------------ stage 0: the beat
    logic              first_q;         // the next beat starts a frame
    logic [BI-1:0]     beat_q;          // its index
    logic [DATA_W-1:0] d0_q;
    logic [OW-1:0]     bewf0_q;         // body end / 4, rounded down
    logic              part0_q;         // the body ends inside a word

    always_ff @(posedge clk) begin
        if (rst) begin
            first_q <= 1'b1;
            beat_q  <= '0;
        end else if (s_axis_tvalid) begin
            first_q <= s_axis_tlast;
            beat_q  <= s_axis_tlast ? '0 : beat_q + BI'(1);
        end
        d0_q <= s_axis_tdata;
        if (s_axis_tvalid) begin
            `GW_TAG(0, T_LAST, 1) <= s_axis_tlast;
            `GW_TAG(0, T_SOF, 1)  <= first_q;
            `GW_TAG(0, T_B, BI)   <= beat_q;
            // The class header is in the first beat; later beats keep it.
            if (first_q) begin
                logic [7:0]  cls, flags;
                logic [15:0] blen;
                cls   = s_axis_tdata[8*15 +: 8];
                flags = s_axis_tdata[8*32'(OFF_DATA_FLAGS) +: 8];
                blen  = {s_axis_tdata[8*32'(OFF_DATA_BODY_LEN) +: 8], s_axis_tdata[8*(32'(OFF_DATA_BODY_LEN) + 1) +: 8]};
                `GW_TAG(0, T_APP, 1)  <= {s_axis_tdata[8*12 +: 8], s_axis_tdata[8*13 +: 8]} == ETHERTYPE
                                         && (cls == CLASS_DATA || cls == CLASS_RESULT) && (flags & FLAG_INEXACT) == 8'd0;
                `GW_TAG(0, T_BODY, 1) <= blen != 16'd0;
                `GW_TAG(0, T_GC, 8)   <= s_axis_tdata[8*32'(OFF_DATA_GROUPS) +: 8];
                `GW_TAG(0, T_CNT, 16) <= {s_axis_tdata[8*32'(OFF_DATA_COUNT) +: 8], s_axis_tdata[8*(32'(OFF_DATA_COUNT) + 1) +: 8]};
                bewf0_q <= OW'(ENTRY) + OW'(blen[15:2]);
                part0_q <= blen[1:0] != 2'd0;
            end
        end
    end

    // The tag and valid bit follow each beat through every stage.
    always_ff @(posedge clk) begin
        if (rst) v_q <= '0;
        else v_q <= {v_q[S_ERR-1:0], s_axis_tvalid};
        tag_q[TAGW*(S_ERR+1)-1:TAGW] <= tag_q[TAGW*S_ERR-1:0];
    end

    // Per-word data that rides along from decode: element counts, Kulisch
    // formats, which of bytes 1..3 of a word are non-zero (padding). Read
    // at decode's next stage, at S_NEXT (the byte flags) and at S_END and
    // S_SEL: between them (7 cycles, 320 bits) in block RAM, not in
    // shift-register LUTs (prism_delay_ram).
    logic [16*WORDS-1:0] gcnt1_q, gcnt_end, gcnt_sel_q;
    logic [WORDS-1:0]    isk1_q, isk_end, isk_sel_q;
    logic [3*WORDS-1:0]  nzb1_q, nzb2_q, nzb3_q, nzb_end;
    prism_delay_ram #(.W(20 * WORDS), .DELAY(S_END - S_DEC)) ride_dec (
        .clk, .rst, .d({gcnt1_q, isk1_q, nzb1_q}), .q({gcnt_end, isk_end, nzb_end})
    );
    always_ff @(posedge clk) begin
        nzb2_q     <= nzb1_q;
        nzb3_q     <= nzb2_q;
        gcnt_sel_q <= gcnt_end;
        isk_sel_q  <= isk_end;
    end

    // ------------------------------------------------------------ stage 1: decode
    logic [10*WORDS-1:0] vbytes1_q;
    logic [5*WORDS-1:0]  derr1_q;           // {code, byte} of the first field error
    logic [16:0]         lim1_q;            // body end / 4 - 16 x beat (signed): body words from this beat's start
    logic                part1_q;

    always_ff @(posedge clk) begin
        lim1_q  <= {2'b00, bewf0_q} - {2'b00, `GW_TAG(0, T_B, BI), WB'(0)};
        part1_q <= part0_q;
        for (int w = 0; w < WORDS; w++) begin
            logic [7:0]  b0, b1;
            logic [3:0]  fmt;
            logic [8:0]  wfield;
            logic [15:0] cnt;
            logic        isk;
            b0     = d0_q[32*w +: 8];
            b1     = d0_q[32*w + 8 +: 8];
            cnt    = {d0_q[32*w + 16 +: 8], d0_q[32*w + 24 +: 8]};
            fmt    = b0[7:4];
            wfield = {b0[0], b1};
            isk    = fmt == FMT_KULISCH;
            gcnt1_q[16*w +: 16] <= cnt;
            isk1_q[w]           <= isk;
            nzb1_q[3*w +: 3]    <= {d0_q[32*w + 24 +: 8] != 8'd0, d0_q[32*w + 16 +: 8] != 8'd0, b1 != 8'd0};
            vbytes1_q[10*w +: 10] <= (fmt == FMT_INT8) ? 10'd1 : (fmt == FMT_FP16 || fmt == FMT_BF16) ? 10'd2
                                   : (fmt == FMT_FP32) ? 10'd4 : 10'(wfield) + 10'd2;
            // The parser's order (the body end's checks come first, in stage 2).
            if ((b0 & 8'h0E) != 8'd0)        derr1_q[5*w +: 5] <= {E_RESERVED, 2'd0};
            else if (isk && wfield < 9'd34)  derr1_q[5*w +: 5] <= {E_KWIDTH, 2'd0};
            else if (!(isk || fmt == FMT_INT8 || fmt == FMT_FP16 || fmt == FMT_BF16 || fmt == FMT_FP32))
                                             derr1_q[5*w +: 5] <= {E_FORMAT, 2'd0};
            else if (!isk && wfield != 9'd0) derr1_q[5*w +: 5] <= {E_RESERVED, 2'd1};
            else if (cnt == 16'd0)           derr1_q[5*w +: 5] <= {E_EMPTY, 2'd2};
            else                             derr1_q[5*w +: 5] <= {E_NONE, 2'd0};
        end
    end

    // ------------------------------------------------------------ stage 2: value length, body end
    logic [26*WORDS-1:0] vlen2_q;           // count x value bytes (at most 65,535 x 513)
    logic [WORDS-1:0]    desc2_q;           // inside the body: a descriptor if the walk comes here
    logic [5*WORDS-1:0]  derr2_q;
    logic [17*WORDS-1:0] room2_q;           // whole body words after the descriptor (signed)

    always_ff @(posedge clk) begin
        for (int w = 0; w < WORDS; w++) begin
            logic below, at;
            below = !lim1_q[16] && lim1_q[15:0] > 16'(w);
            at    = !lim1_q[16] && lim1_q[15:0] == 16'(w);
            vlen2_q[26*w +: 26] <= 26'(gcnt1_q[16*w +: 16]) * 26'(vbytes1_q[10*w +: 10]);
            desc2_q[w] <= below || (part1_q && at);
            // The descriptor itself crosses the body end.
            derr2_q[5*w +: 5] <= (part1_q && at) ? {E_OVERRUN, 2'd0} : derr1_q[5*w +: 5];
            room2_q[17*w +: 17] <= lim1_q - 17'(w + 1);
        end
    end

    // ------------------------------------------------------------ stage 3: overrun, group end
    logic [WORDS-1:0]    desc3_q;
    logic [5*WORDS-1:0]  derr3_q;
    logic [17*WORDS-1:0] r3_q;              // the next descriptor's word relative to the next beat (signed)
    logic [2*WORDS-1:0]  p3_q;              // padding bytes of the group's last word

    always_ff @(posedge clk) begin
        for (int w = 0; w < WORDS; w++) begin
            logic [25:0] vlen;
            logic [16:0] room;
            logic        over;
            vlen = vlen2_q[26*w +: 26];
            room = room2_q[17*w +: 17];
            // Values and padding end after the body: vlen rounded up to 4 > 4 x room.
            over = room[16] || vlen > {8'd0, room[15:0], 2'b00};
            desc3_q[w] <= desc2_q[w];
            derr3_q[5*w +: 5] <= derr2_q[5*w + 2 +: 3] != E_NONE ? derr2_q[5*w +: 5] : over ? {E_OVERRUN, 2'd0} : {E_NONE, 2'd0};
            // The next descriptor's word is 16 x beat + w + 1 + ceil(vlen / 4);
            // here relative to the next beat's first word (without overrun: < 2^15).
            r3_q[17*w +: 17] <= 17'(vlen[16:2]) + (vlen[1:0] != 2'd0 ? 17'(w) - 17'd14 : 17'(w) - 17'd15);
            p3_q[2*w +: 2] <= 2'd0 - vlen[1:0];
        end
    end

    // ------------------------------------------------------------ stage 4: padding in this beat
    logic [WORDS-1:0]      desc4_q, inbeat4_q, zero4_q;
    logic [ERW*WORDS-1:0]  err4_q;
    logic [OW*WORDS-1:0]   r4_q;           // r3 when not negative
    logic [2*WORDS-1:0]    p4_q;

    always_ff @(posedge clk) begin
        logic [3*WORDS-1:0] nzprev;
        // Byte flags of the word before each word: a group's last value word.
        nzprev = {nzb3_q[3*WORDS-4:0], nzb3_q[3*WORDS-1 -: 3]};
        for (int w = 0; w < WORDS; w++) begin
            logic [16:0]   r;
            logic [WB-1:0] rw;
            logic [2:0]    pc;
            logic          le0;
            r   = r3_q[17*w +: 17];
            rw  = r[WB-1:0];
            pc  = padchk(nzprev[3*rw +: 3], p3_q[2*w +: 2]);
            le0 = r[16] || r == 17'd0;
            desc4_q[w]   <= desc3_q[w];
            inbeat4_q[w] <= r[16];
            zero4_q[w]   <= r == 17'd0;
            if (!desc3_q[w])
                err4_q[ERW*w +: ERW] <= '0;
            else if (derr3_q[5*w + 2 +: 3] != E_NONE)
                err4_q[ERW*w +: ERW] <= {derr3_q[5*w + 2 +: 3], WB'(w), derr3_q[5*w +: 2]};
            else if (le0 && pc[2])
                err4_q[ERW*w +: ERW] <= {E_PADDING, rw - WB'(1), pc[1:0]};
            else
                err4_q[ERW*w +: ERW] <= '0;
            r4_q[OW*w +: OW] <= r[OW-1:0];
            p4_q[2*w +: 2]   <= p3_q[2*w +: 2];
        end
    end

    // ------------------------------------------------------------ stage 5: nodes
    // A node's exit: {the next beat has the next descriptor, the one after
    // has it, its word, beats ahead, padding bytes left to check}.
    localparam int XW = 2 + WB + BI + 2;
    localparam int NJ = S_END - S_NODE + 1; // stages of j and m
    logic [WB*WORDS*NJ-1:0]    j_q;
    logic [WORDS*WORDS*NJ-1:0] m_q;
    // Exits and errors are read at S_END only: the jump rounds' 3 cycles
    // (448 bits) in block RAM.
    logic [XW*WORDS-1:0]       x_q, x_end;
    logic [ERW*WORDS-1:0]      err_q, err_end;
`define GW_J(st, i, n) j_q[WB*WORDS*((st) - S_NODE) + (i) +: (n)]
`define GW_M(st, i, n) m_q[WORDS*WORDS*((st) - S_NODE) + (i) +: (n)]
    prism_delay_ram #(.W((XW + ERW) * WORDS), .DELAY(S_END - S_NODE)) ride_node (
        .clk, .rst, .d({x_q, err_q}), .q({x_end, err_end})
    );

    always_ff @(posedge clk) begin
        for (int w = 0; w < WORDS; w++) begin
            logic          term;
            logic [OW-1:0] r;
            logic [BI-1:0] ahead;
            r     = r4_q[OW*w +: OW];
            term  = !desc4_q[w] || err4_q[ERW*w + ERW - 3 +: 3] != E_NONE;
            ahead = r[WB +: BI];
            j_q[WB*w +: WB]       <= (!term && inbeat4_q[w]) ? r[WB-1:0] : WB'(w);
            m_q[WORDS*w +: WORDS] <= desc4_q[w] ? WORDS'(1) << w : '0;
            if (term)
                x_q[XW*w +: XW] <= {2'b00, WB'(0), {BI{1'b1}}, 2'd0};
            else
                x_q[XW*w +: XW] <= {ahead == BI'(0), ahead == BI'(1), r[WB-1:0], ahead, zero4_q[w] ? 2'd0 : p4_q[2*w +: 2]};
        end
        err_q <= err4_q;
    end

    // ------------------------------------------------------------ stages 6..: pointer jumping
    // After round r, m[w] holds the descriptors among the first 2^r nodes of
    // the chain from w, and j[w] the node 2^r steps on (an end node points to
    // itself). The last round moves j only: its masks would be m[w] | m[j[w]]
    // for every w (16 selects of up to 16 bits), and the carried step needs
    // that of one word, so it keeps the round before's masks and j (jh) and
    // takes its entry's two there (about 400 LUTs fewer a walker).
    logic [WB*WORDS-1:0] jh_q;
    always_ff @(posedge clk) begin
        for (int s = S_JUMP; s <= S_END; s++) begin
            // Copies of the stage's tables, so that the selects below are
            // 16-way muxes, not shifters over every stage's bits.
            logic [WB*WORDS-1:0]    jt;
            logic [WORDS*WORDS-1:0] mt;
            jt = `GW_J(s-1, 0, WB*WORDS);
            mt = `GW_M(s-1, 0, WORDS*WORDS);
            for (int w = 0; w < WORDS; w++) begin
                logic [WB-1:0]    jw;
                logic [WORDS-1:0] mm;
                jw = jt[WB*w +: WB];
                mm = mt[WORDS*w +: WORDS] | mt[WORDS*jw +: WORDS];
                for (int k = 0; k < w; k++) mm[k] = 1'b0;   // chains only go forward
                `GW_J(s, WB*w, WB)       <= jt[WB*jw +: WB];
                `GW_M(s, WORDS*w, WORDS) <= s == S_END ? mt[WORDS*w +: WORDS] : mm;
            end
            if (s == S_END) jh_q <= jt;
        end
    end

    // ------------------------------------------------------------ sel: the carried step
    // Where the next descriptor is: in this beat at word st_e (st_hit), or
    // st_ahead beats on (st_one: in the next beat); st_p padding bytes of the
    // word before it are still to check.
    logic          st_hit, st_one;
    logic [WB-1:0] st_e;
    logic [BI-1:0] st_ahead;
    logic [1:0]    st_p;
    logic [WORDS-1:0] mask_q;               // descriptors reached in this beat
    logic [ERW-1:0]   eend_q;               // error at the end of the walk in this beat
    logic [ERW-1:0]   epad_q;               // padding of a group that ended before the walk entered

    // The last round's tables: each word's chain end (jl), each node's exit
    // (xl) and error (el), each word's descriptors among the first half of
    // its chain (ml, the round before's: with jh_q, above).
    logic [WB*WORDS-1:0]    jl;
    logic [XW*WORDS-1:0]    xl;
    logic [ERW*WORDS-1:0]   el;
    logic [WORDS*WORDS-1:0] ml;
    assign jl = `GW_J(S_END, 0, WB*WORDS);
    assign xl = x_end;
    assign el = err_end;
    assign ml = `GW_M(S_END, 0, WORDS*WORDS);
    logic [WB-1:0] st_j;                    // the entry's chain end
    assign st_j = jl[WB*st_e +: WB];

    always_ff @(posedge clk) begin
        if (rst) begin
            st_hit <= 1'b1; st_one <= 1'b0; st_e <= WB'(ENTRY); st_ahead <= '0; st_p <= 2'd0;
        end else if (v_q[S_END]) begin
            if (`GW_TAG(S_END, T_LAST, 1)) begin
                st_hit <= 1'b1; st_one <= 1'b0; st_e <= WB'(ENTRY); st_ahead <= '0; st_p <= 2'd0;
            end else if (st_hit) begin
                {st_hit, st_one, st_e, st_ahead, st_p} <= xl[XW*st_j +: XW];
            end else begin
                st_hit   <= st_one;
                st_one   <= st_ahead == BI'(2);
                st_ahead <= st_ahead - BI'(1);
            end
        end
    end

    always_ff @(posedge clk) begin
        logic [3*WORDS-1:0] nzprev;
        logic [2:0] pc;
        nzprev = {nzb_end[3*WORDS-4:0], nzb_end[3*WORDS-1 -: 3]};
        pc = padchk(nzprev[3*st_e +: 3], st_p);
        mask_q <= st_hit ? ml[WORDS*st_e +: WORDS] | ml[WORDS*jh_q[WB*st_e +: WB] +: WORDS] : '0;
        eend_q <= st_hit ? el[ERW*st_j +: ERW] : '0;
        // The group's last word is the one before the entry word: in this beat,
        // or the last word of this beat when the walk enters the next at word 0.
        if (pc[2] && (st_hit ? st_e != WB'(0) : st_one && st_e == WB'(0)))
            epad_q <= {E_PADDING, st_e - WB'(1), pc[1:0]};
        else
            epad_q <= '0;
    end

    // ------------------------------------------------------------ cnt: popcounts, element sums
    logic [WORDS-1:0]       mask_c, mask_r, mask_a;
    logic [2*WORDS-1:0]     lpre_c;         // reached descriptors before w in its group of four
    logic [3*GRP-1:0]       gtot_c;
    logic [17*WORDS/2-1:0]  es_c;
    logic                   ks_c, ks_r, ks_a, ks_m;
    logic [ERW-1:0]         eend_c, eend_r, eend_a, eend_m, epad_c, epad_r, epad_a, epad_m;

    always_ff @(posedge clk) begin
        for (int g = 0; g < GRP; g++) begin
            logic [2:0] n;
            n = 3'd0;
            for (int k = 0; k < 4; k++) begin
                lpre_c[2*(4*g + k) +: 2] <= n[1:0];
                n = n + 3'(mask_q[4*g + k]);
            end
            gtot_c[3*g +: 3] <= n;
        end
        for (int i = 0; i < WORDS / 2; i++)
            es_c[17*i +: 17] <= (mask_q[2*i] ? 17'(gcnt_sel_q[32*i +: 16]) : 17'd0)
                              + (mask_q[2*i+1] ? 17'(gcnt_sel_q[32*i + 16 +: 16]) : 17'd0);
        ks_c   <= (mask_q & isk_sel_q) != '0;
        mask_c <= mask_q;
        eend_c <= eend_q;
        epad_c <= epad_q;
    end

    // ------------------------------------------------------------ rank
    logic [WB*WORDS-1:0]   rank_r;          // reached descriptors before w
    logic [WB:0]           ndesc_r;
    logic [18*WORDS/4-1:0] es_r;

    always_ff @(posedge clk) begin
        logic [WB:0] pre;
        pre = '0;
        for (int g = 0; g < GRP; g++) begin
            for (int k = 0; k < 4; k++) rank_r[WB*(4*g + k) +: WB] <= WB'(pre) + WB'(lpre_c[2*(4*g + k) +: 2]);
            pre = pre + (WB + 1)'(gtot_c[3*g +: 3]);
        end
        ndesc_r <= pre;
        for (int i = 0; i < WORDS / 4; i++) es_r[18*i +: 18] <= 18'(es_c[34*i +: 17]) + 18'(es_c[34*i + 17 +: 17]);
        mask_r <= mask_c;
        ks_r   <= ks_c;
        eend_r <= eend_c;
        epad_r <= epad_c;
    end

    // ------------------------------------------------------------ acc: groups so far
    logic [8:0]            groups_q;        // descriptors reached in earlier beats of the frame
    logic [8:0]            gafter_a;        // ... and in this one
    logic [9:0]            ith_a;           // declared groups - groups before: the one too many (signed)
    logic [WB*WORDS-1:0]   rank_a;
    logic [19*WORDS/8-1:0] es_a;

    always_ff @(posedge clk) begin
        logic [8:0] gbefore;
        gbefore = `GW_TAG(S_RANK, T_SOF, 1) ? 9'd0 : groups_q;
        if (v_q[S_RANK]) groups_q <= gbefore + 9'(ndesc_r);
        gafter_a <= gbefore + 9'(ndesc_r);
        ith_a    <= {2'b00, `GW_TAG(S_RANK, T_GC, 8)} - {1'b0, gbefore};
        for (int i = 0; i < WORDS / 8; i++) es_a[19*i +: 19] <= 19'(es_r[36*i +: 18]) + 19'(es_r[36*i + 18 +: 18]);
        rank_a <= rank_r;
        mask_a <= mask_r;
        ks_a   <= ks_r;
        eend_a <= eend_r;
        epad_a <= epad_r;
    end

    // ------------------------------------------------------------ mism: the descriptor one too many
    logic [WORDS-1:0] toomany_m;
    logic [8:0]       gafter_m, gafter_e;
    logic [ESW-1:0]   es_m;

    always_ff @(posedge clk) begin
        logic [ESW-1:0] sum;
        for (int w = 0; w < WORDS; w++)
            toomany_m[w] <= mask_a[w] && !ith_a[9] && ith_a[8:WB] == '0 && rank_a[WB*w +: WB] == ith_a[WB-1:0];
        sum = '0;
        for (int i = 0; i < WORDS / 8; i++) sum = sum + ESW'(es_a[19*i +: 19]);
        es_m     <= sum;
        gafter_m <= gafter_a;
        ks_m     <= ks_a;
        eend_m   <= eend_a;
        epad_m   <= epad_a;
    end

    // ------------------------------------------------------------ err: first error of the frame
    (* fsm_encoding = "none" *) logic [2:0] ferr_code_q;
    logic [OW-1:0] ferr_at_q;               // {beat, word}
    logic [1:0]    ferr_byte_q;
    logic [23:0]   elems_q;
    logic          kseen_q;

    always_ff @(posedge clk) begin
        logic [ERW-1:0] be;
        logic [WB-1:0]  tw;
        logic           first;
        tw = '0;
        for (int w = 0; w < WORDS; w++) if (toomany_m[w]) tw = tw | WB'(w);
        // In frame order: padding before the entry word, a descriptor one too
        // many (before the checks of its own fields), the walk's end.
        be = epad_m[ERW-1 -: 3] != E_NONE ? epad_m : toomany_m != '0 ? {E_GROUPS, tw, 2'd0} : eend_m;
        first = `GW_TAG(S_MISM, T_SOF, 1);
        if (v_q[S_MISM]) begin
            if (first || ferr_code_q == E_NONE) begin
                ferr_code_q <= be[ERW-1 -: 3];
                ferr_at_q   <= {`GW_TAG(S_MISM, T_B, BI), be[2 +: WB]};
                ferr_byte_q <= be[1:0];
            end
            elems_q <= (first ? 24'd0 : elems_q) + 24'(es_m);
            kseen_q <= (first ? 1'b0 : kseen_q) || ks_m;
        end
        gafter_e <= gafter_m;
    end

    // ------------------------------------------------------------ out: the verdict
    logic [15:0] ferr_off;
    assign ferr_off = 16'({ferr_at_q, ferr_byte_q});
    always_ff @(posedge clk) begin
        if (rst) begin
            m_walk_valid   <= 1'b0;
            m_walk_applies <= 1'b0;
            m_walk_ok      <= 1'b1;
            m_kulisch_seen <= 1'b0;
            m_walk_reason  <= '0;
            m_walk_offset  <= '0;
        end else begin
            m_walk_valid <= v_q[S_ERR] && `GW_TAG(S_ERR, T_LAST, 1);
            if (v_q[S_ERR] && `GW_TAG(S_ERR, T_LAST, 1)) begin
                m_walk_applies <= `GW_TAG(S_ERR, T_APP, 1) && `GW_TAG(S_ERR, T_BODY, 1);
                m_kulisch_seen <= kseen_q;
                m_walk_ok      <= 1'b0;
                m_walk_offset  <= ferr_off;
                case (ferr_code_q)
                    E_OVERRUN:  m_walk_reason <= R_GROUP_OVERRUN;
                    E_RESERVED: m_walk_reason <= R_RESERVED_NONZERO;
                    E_KWIDTH:   m_walk_reason <= R_BAD_KULISCH_WIDTH;
                    E_FORMAT:   m_walk_reason <= R_UNKNOWN_FORMAT;
                    E_EMPTY:    m_walk_reason <= R_EMPTY_GROUP;
                    E_PADDING:  m_walk_reason <= R_PADDING_NONZERO;
                    E_GROUPS:   m_walk_reason <= R_GROUP_COUNT_MISMATCH;
                    default: begin
                        // After the walk: the declared counts.
                        if (gafter_e != {1'b0, `GW_TAG(S_ERR, T_GC, 8)}) begin
                            m_walk_reason <= R_GROUP_COUNT_MISMATCH; m_walk_offset <= OFF_DATA_GROUPS;
                        end else if (elems_q != 24'(`GW_TAG(S_ERR, T_CNT, 16))) begin
                            m_walk_reason <= R_ELEMENT_COUNT_MISMATCH; m_walk_offset <= OFF_DATA_COUNT;
                        end else begin
                            m_walk_ok <= 1'b1; m_walk_reason <= 8'd0; m_walk_offset <= 16'd0;
                        end
                    end
                endcase
            end
        end
    end
`undef GW_TAG
`undef GW_J
`undef GW_M
endmodule
