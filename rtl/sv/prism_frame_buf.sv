// prism_frame_buf: prism_node's frame buffers — BPP buffers a port, each a
// whole frame of up to LINES beats — in banks of synchronous-read memory
// (prism_ram_sdp: block RAM by default), with one explicit read port: a
// VIEW_BYTES-byte view of one buffer from any byte offset.
//
// Ingress. One AXI4-Stream sink a port: the port's beats fill its buffers in
// turn (fill_slot, beat fill_beat; beats past LINES are taken but not
// kept). A buffer is busy from the frame's tlast until the engine frees it
// (free_en, free_buf); s_axis_tready is low while the port's next buffer is
// busy. Buffer {port, slot} is `busy` bit {port, slot}.
//
// Banks. NBANK_VIEW banks (the lines a view from any offset spans), each a
// copy of every line: bank j keeps line l at row {slot, (l - j) mod
// FB_LINES}, so a beat writes every bank once. A view from line L reads row
// {slot, L} of every bank, where bank j holds line L + j: the lines are in
// distinct banks and already in order, and the read address is the view's
// line itself, the same in every bank (no add between the engine's next
// offset and the memories). Every port has banks of its own:
// the ports write a beat each in the same cycle, and a block RAM has one
// write port.
//
// The read (registered: the view is on m_view the cycle after rd_buf and
// rd_off are given, when rd_en is 1; it holds otherwise). Bank j reads line
// rd_off / 64 + j; the port's banks side by side are lines rd_off / 64 on,
// and view byte i is their byte rd_off mod 64 + i: the port select, then
// one byte shift by rd_off mod 64, the largest step first (the later stages
// keep only VIEW_BYTES + step - 1 bytes). Line indices wrap at FB_LINES, as
// a line-indexed array would. m_head is lines 0 and 1 of the buffer when
// rd_off is below 64 (the header at dispatch: the engine's first read of a
// frame is at its body's first descriptor). Only the first ANY_BYTES bytes
// of the view are exact at every offset; the rest are exact when rd_off is
// a multiple of 4 (the shift's last, byte step is built for the first
// ANY_BYTES alone: the engine's runs of values start 4-byte aligned, and
// it reads at most 64 bytes of anything else).
//
// Side bits. Every 4-byte word of a beat may carry SIDE_W bits beside it
// (s_axis_tside, worked out by the user from the beat as it arrives),
// kept in a memory of their own beside bank 0 and read with m_word
// (m_side): what the user would decode from an aligned word after the
// read is decoded before the write, off the read's path.
//
// The engine reads only buffers that are busy (whole frames), and ingress
// writes only a buffer that is not, so a read never meets a write of its
// own buffer.

`default_nettype none

module prism_frame_buf #(
    parameter int DATA_W = 512,
    parameter int PORTS = 2,
    parameter int BPP = 4,              // buffers a port
    parameter int LINES = 24,           // beats kept of a frame
    parameter int FB_LINES = 32,        // lines a buffer (a power of two, at least LINES)
    parameter int VIEW_BYTES = 256,
    parameter int ANY_BYTES = VIEW_BYTES,   // view bytes exact at any offset (the rest at multiples of 4)
    parameter int STYLE = 0,            // prism_ram_sdp STYLE: 0 block RAM, 1 UltraRAM, 2 distributed
    parameter int SIDE_W = 0,           // side bits a 4-byte word (m_side); 0: none kept
    parameter int SW1 = SIDE_W > 0 ? SIDE_W : 1,
    parameter int BW = $clog2(BPP),
    parameter int PW = PORTS > 1 ? $clog2(PORTS) : 1,
    parameter int NBW = PW + BW,
    parameter int NB = BPP * (2 ** PW)
) (
    input  wire logic                       clk,
    input  wire logic                       rst,

    // Ingress, port p at [p*DATA_W +: DATA_W].
    input  wire logic [PORTS*DATA_W-1:0]    s_axis_tdata,
    input  wire logic [PORTS-1:0]           s_axis_tvalid,
    input  wire logic [PORTS-1:0]           s_axis_tlast,
    input  wire logic [PORTS*DATA_W/32*SW1-1:0] s_axis_tside,   // word w of port p at [(p*DATA_W/32 + w)*SIDE_W +: SIDE_W]
    output logic      [PORTS-1:0]           s_axis_tready,
    output logic      [PORTS*BW-1:0]        fill_slot,    // port p's buffer being filled, at [p*BW +: BW]
    output logic      [PORTS*16-1:0]        fill_beat,    // and its next beat, at [p*16 +: 16]
    output logic      [NB-1:0]              busy,
    input  wire logic                       free_en,
    input  wire logic [NBW-1:0]             free_buf,

    // The read port.
    input  wire logic                       rd_en,
    input  wire logic [NBW-1:0]             rd_buf,       // {port, slot}
    input  wire logic [15:0]                rd_off,       // byte offset in the frame
    output logic      [8*VIEW_BYTES-1:0]    m_view,       // byte i: frame byte rd_off + i
    output logic      [31:0]                m_word,       // the view's first 4 bytes when rd_off is a multiple of 4
    output logic      [SW1-1:0]             m_side,       // and their side bits (0 when SIDE_W is 0)
    output logic      [2*DATA_W-1:0]        m_head        // lines 1 and 0 (rd_off below 64)
);
    localparam int LB = DATA_W / 8;                       // bytes a line
    localparam int LS = $clog2(LB);
    localparam int FB = $clog2(FB_LINES);
    localparam int NBANK_VIEW = (VIEW_BYTES + LB - 2) / LB + 1;   // lines a view from any offset spans
    localparam int ROWS = BPP * FB_LINES;                 // a bank's rows: BPP buffers' FB_LINES lines
    localparam int RW = $clog2(ROWS);
    localparam int CB = NBANK_VIEW * LB;                  // bytes in the banks a view reads

    initial begin
        if (DATA_W < 32 || 2 ** LS != LB || LB * 8 != DATA_W) $error("prism_frame_buf: DATA_W must be a power of two number of bytes, at least 4 (m_word)");
        if (PORTS < 1) $error("prism_frame_buf: PORTS must be at least 1");
        if (BPP < 2 || 2 ** BW != BPP) $error("prism_frame_buf: BPP must be a power of two, at least 2");
        if (LINES < 2 || FB_LINES < LINES || 2 ** FB != FB_LINES) $error("prism_frame_buf: FB_LINES must be a power of two, at least LINES (at least 2)");
        if (VIEW_BYTES < 2 || VIEW_BYTES > (FB_LINES - 1) * LB) $error("prism_frame_buf: VIEW_BYTES must be 2 bytes to (FB_LINES - 1) lines");
        if (ANY_BYTES < 4 || ANY_BYTES > VIEW_BYTES) $error("prism_frame_buf: ANY_BYTES must be 4 to VIEW_BYTES");
        if (SIDE_W < 0) $error("prism_frame_buf: SIDE_W must be at least 0");
        if (DATA_W != 512) $error("prism_frame_buf: DATA_W must be 512 (the word select is two 4:1 steps)");
        if (FB + LS > 16) $error("prism_frame_buf: a buffer must be addressable by 16-bit byte offsets");
    end

    // ---------------------------------------------------------------- ingress
    logic [BW-1:0] slot [PORTS];
    logic [15:0]   beat [PORTS];
    logic [PORTS-1:0] take;
    always_comb
        for (int p = 0; p < PORTS; p++) begin
            s_axis_tready[p] = !busy[{PW'(p), slot[p]}];
            take[p] = s_axis_tvalid[p] && s_axis_tready[p];
            fill_slot[BW*p +: BW] = slot[p];
            fill_beat[16*p +: 16] = beat[p];
        end
    // The busy flags each by its own decode (a variable-index bit write
    // becomes a shifted mask with carries in Yosys).
    always_ff @(posedge clk) begin
        if (rst) begin
            busy <= '0;
            for (int p = 0; p < PORTS; p++) begin
                slot[p] <= '0;
                beat[p] <= '0;
            end
        end else begin
            for (int p = 0; p < PORTS; p++)
                if (take[p]) begin
                    if (s_axis_tlast[p]) begin
                        slot[p] <= slot[p] + BW'(1);
                        beat[p] <= '0;
                    end else beat[p] <= beat[p] + 16'd1;
                end
            for (int i = 0; i < NB; i++) begin
                for (int p = 0; p < PORTS; p++)
                    if (take[p] && s_axis_tlast[p] && NBW'(i) == {PW'(p), slot[p]}) busy[i] <= 1'b1;
                if (free_en && free_buf == NBW'(i)) busy[i] <= 1'b0;
            end
        end
    end

    // ---------------------------------------------------------------- banks
    // Bank j's row of line l is {slot, l - j}: the subtraction on the write
    // side (from the beat counter, a register), none on the read side.
    logic [PW-1:0] r_port;
    logic [BW-1:0] r_slot;
    logic [FB-1:0] r_line;
    logic [RW-1:0] r_row;
    assign r_port = rd_buf[NBW-1:BW];
    assign r_slot = rd_buf[BW-1:0];
    assign r_line = rd_off[LS +: FB];
    assign r_row = {r_slot, r_line};

    logic [DATA_W-1:0] q [PORTS][NBANK_VIEW];
    localparam int WPL = DATA_W / 32;                     // words a line
    logic [WPL*SW1-1:0] qs [PORTS];
    genvar gp, gb;
    generate
        for (gp = 0; gp < PORTS; gp++) begin : g_port
            logic          w_on;
            logic [FB-1:0] w_line;
            assign w_on = take[gp] && $signed(32'(beat[gp])) < LINES;
            assign w_line = FB'(beat[gp]);
            for (gb = 0; gb < NBANK_VIEW; gb++) begin : g_bank
                logic [FB-1:0] w_m;         // line w_line - gb: the row bank gb keeps w_line at
                assign w_m = w_line - FB'(gb);
                prism_ram_sdp #(.W(DATA_W), .DEPTH(ROWS), .STYLE(STYLE)) ram (
                    .clk, .we(w_on), .waddr({slot[gp], w_m}), .wdata(s_axis_tdata[DATA_W*gp +: DATA_W]),
                    .re(rd_en), .raddr(r_row), .orst(1'b0), .rdata(q[gp][gb])
                );
            end
            // The side bits, addressed as bank 0 (the line m_word is in).
            if (SIDE_W > 0) begin : g_side
                prism_ram_sdp #(.W(WPL * SIDE_W), .DEPTH(ROWS), .STYLE(STYLE)) side_ram (
                    .clk, .we(w_on), .waddr({slot[gp], w_line}),
                    .wdata(s_axis_tside[WPL*SIDE_W*gp +: WPL*SIDE_W]),
                    .re(rd_en), .raddr(r_row), .orst(1'b0), .rdata(qs[gp])
                );
            end else begin : g_no_side
                assign qs[gp] = '0;
            end
        end
    endgenerate

    // Registered with the read: its port and byte shift.
    logic [PW-1:0] q_port;
    logic [LS-1:0] q_sh;
    always_ff @(posedge clk)
        if (rd_en) begin
            q_port <= r_port;
            q_sh <= rd_off[LS-1:0];
        end

    // ---------------------------------------------------------------- view
    logic [8*CB-1:0] cat;                    // the read port's banks, lines L to L + NBANK_VIEW - 1
    always_comb begin
        for (int b = 0; b < NBANK_VIEW; b++) cat[DATA_W*b +: DATA_W] = q[0][b];
        for (int p = 1; p < PORTS; p++)
            if (q_port == PW'(p))
                for (int b = 0; b < NBANK_VIEW; b++) cat[DATA_W*b +: DATA_W] = q[p][b];
    end
    assign m_head = cat[2*DATA_W-1:0];
    // A 4-byte aligned word is in the view's first line (bank 0), its side
    // bits beside it (the engine's descriptors are aligned, and its run
    // figures follow one). Both are selected together, by q_sh[5:2] in two
    // prism_mux4 steps, then by the port: as one select inside this
    // module, ABC built 4 to 5 levels behind the memories (6.50 into the
    // engine's run figures, 6.75 into its descriptor's).
    localparam int WW = 32 + SW1;              // a word and its side bits
    logic [WW-1:0] ws2 [PORTS];
    generate
        for (gp = 0; gp < PORTS; gp++) begin : g_wsel
            logic [WPL*WW-1:0] s0;              // the port's line 0, each word with its side bits
            logic [4*WW-1:0]   s1;              // each four words' word by q_sh[3:2]
            always_comb
                for (int w = 0; w < WPL; w++) s0[WW*w +: WW] = {qs[gp][SW1*w +: SW1], q[gp][0][32*w +: 32]};
            for (gb = 0; gb < 4; gb++) begin : g_s1
                prism_mux4 #(.W(WW)) m1 (.d(s0[4*WW*gb +: 4*WW]), .s(q_sh[3:2]), .y(s1[WW*gb +: WW]));
            end
            prism_mux4 #(.W(WW)) m2 (.d(s1), .s(q_sh[5:4]), .y(ws2[gp]));
        end
    endgenerate
    logic [WW-1:0] wq;
    always_comb begin
        wq = ws2[0];
        for (int p = 1; p < PORTS; p++) if (q_port == PW'(p)) wq = ws2[p];
    end
    assign m_word = wq[31:0];
    assign m_side = SIDE_W > 0 ? wq[WW-1:32] : '0;
`ifndef SYNTHESIS
    // The reference: the port's line 0 and side bits, then the word.
    logic [DATA_W-1:0] q0_ref;
    logic [WPL*SW1-1:0] qs_ref;
    always_comb begin
        q0_ref = q[0][0];
        qs_ref = qs[0];
        for (int p = 1; p < PORTS; p++)
            if (q_port == PW'(p)) begin
                q0_ref = q[p][0];
                qs_ref = qs[p];
            end
    end
    always_ff @(posedge clk)
        if (!rst && (m_word != q0_ref[32 * q_sh[LS-1:2] +: 32]
                     || (SIDE_W > 0 && m_side != qs_ref[SW1 * q_sh[LS-1:2] +: SW1])))
            $error("prism_frame_buf: m_word or m_side is not the word of the read's port and offset");
`endif
    // View byte i = cat byte q_sh + i, the shift in 4:1 steps (a LUT6
    // each): stage k takes bits 2k+1 and 2k of q_sh from the top, shifting
    // down by 0 to 3 times its step, and keeps only VIEW_BYTES + step - 1
    // bytes (the bytes later stages can still reach); an odd LS ends with
    // one 2:1 step. The last stage (bits 1 and 0) shifts only the first
    // ANY_BYTES bytes and passes the others: about 1,500 LUTs fewer at 64 of 256.
    localparam int NST = (LS + 1) / 2;
`define PFB_LO(k) (LS - 2 * ((k) + 1) < 0 ? 0 : LS - 2 * ((k) + 1))   // stage k's low bit of q_sh
`define PFB_ST(k) (1 << `PFB_LO(k))                                     // and its step
    always_comb begin
        logic [7:0] x [NST+1][CB];
        for (int i = 0; i < CB; i++) x[0][i] = cat[8*i +: 8];
        for (int k = 0; k < NST; k++)
            for (int i = 0; i < CB; i++)
                if (i < VIEW_BYTES + `PFB_ST(k) - 1)
                    case (LS - 2 * (k + 1) < 0 ? {1'b0, q_sh[0]} : 2'(q_sh >> `PFB_LO(k)))
                        2'd0: x[k+1][i] = x[k][i];
                        2'd1: x[k+1][i] = x[k][(i + `PFB_ST(k)) % CB];
                        2'd2: x[k+1][i] = x[k][(i + 2 * `PFB_ST(k)) % CB];
                        default: x[k+1][i] = x[k][(i + 3 * `PFB_ST(k)) % CB];
                    endcase
                else x[k+1][i] = 8'd0;
        for (int i = 0; i < VIEW_BYTES; i++) m_view[8*i +: 8] = i < ANY_BYTES ? x[NST][i] : x[NST-1][i];
    end
`undef PFB_LO
`undef PFB_ST

    // What the read does not use of the offset (it wraps at FB_LINES lines).
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused;
    assign unused = ^{rd_off, s_axis_tside, qs[0]};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule

`default_nettype wire
