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
// Banks. Line l of a buffer is in bank l mod NBANK of its port (row {slot,
// l / NBANK}), so the NBANK_VIEW lines a view spans are in distinct banks.
// Every port has banks of its own: the ports write a beat each in the same
// cycle, and a block RAM has one write port.
//
// The read (registered: the view is on m_view the cycle after rd_buf and
// rd_off are given, when rd_en is 1; it holds otherwise). Bank b reads its
// line in [rd_off / 64, rd_off / 64 + NBANK), so the lines from rd_off / 64
// on are in banks (rd_off / 64 + k) mod NBANK. After the read, line k of
// the view is one select over the port's and the line's bank (the line
// rotation explicit), and the NBANK_VIEW lines are shifted down by
// rd_off mod 64 bytes. Line indices wrap at FB_LINES, as a line-indexed
// array would. m_head is lines 0 and 1 of the buffer when rd_off is below
// 64 (the header at dispatch: the engine's first read of a frame is at its
// body's first descriptor).
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
    parameter int STYLE = 0,            // prism_ram_sdp STYLE: 0 block RAM, 1 UltraRAM, 2 distributed
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
    output logic      [2*DATA_W-1:0]        m_head        // lines 1 and 0 (rd_off below 64)
);
    localparam int LB = DATA_W / 8;                       // bytes a line
    localparam int LS = $clog2(LB);
    localparam int FB = $clog2(FB_LINES);
    localparam int NBANK_VIEW = (VIEW_BYTES + LB - 2) / LB + 1;   // lines a view from any offset spans
    localparam int NBANK = 2 ** $clog2(NBANK_VIEW);
    localparam int SB = $clog2(NBANK);
    localparam int ROWS = BPP * FB_LINES / NBANK;
    localparam int RW = $clog2(ROWS);

    initial begin
        if (DATA_W < 16 || 2 ** LS != LB || LB * 8 != DATA_W) $error("prism_frame_buf: DATA_W must be a power of two number of bytes, at least 2");
        if (PORTS < 1) $error("prism_frame_buf: PORTS must be at least 1");
        if (BPP < 2 || 2 ** BW != BPP) $error("prism_frame_buf: BPP must be a power of two, at least 2");
        if (LINES < 2 || FB_LINES < LINES || 2 ** FB != FB_LINES) $error("prism_frame_buf: FB_LINES must be a power of two, at least LINES (at least 2)");
        if (FB_LINES < 2 * NBANK) $error("prism_frame_buf: FB_LINES must be at least twice the view's banks");
        if (VIEW_BYTES < 2 || VIEW_BYTES > (FB_LINES - 1) * LB) $error("prism_frame_buf: VIEW_BYTES must be 2 bytes to (FB_LINES - 1) lines");
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
                        busy[{PW'(p), slot[p]}] <= 1'b1;
                        slot[p] <= slot[p] + BW'(1);
                        beat[p] <= '0;
                    end else beat[p] <= beat[p] + 16'd1;
                end
            if (free_en) busy[free_buf] <= 1'b0;
        end
    end

    // ---------------------------------------------------------------- banks
    // The read's row in bank b: its line's row, plus one for banks below the
    // line's bank (they hold the lines after it).
    logic [PW-1:0] r_port;
    logic [BW-1:0] r_slot;
    logic [FB-1:0] r_line;
    assign r_port = rd_buf[NBW-1:BW];
    assign r_slot = rd_buf[BW-1:0];
    assign r_line = rd_off[LS +: FB];
    logic [RW-1:0] r_row [NBANK];
    always_comb
        for (int b = 0; b < NBANK; b++)
            r_row[b] = {r_slot, (FB - SB)'(r_line[FB-1:SB] + (FB - SB)'(SB'(b) < r_line[SB-1:0]))};

    logic [DATA_W-1:0] q [PORTS][NBANK];
    genvar gp, gb;
    generate
        for (gp = 0; gp < PORTS; gp++) begin : g_port
            logic          w_on;
            logic [RW-1:0] w_row;
            logic [FB-1:0] w_line;
            assign w_on = take[gp] && $signed(32'(beat[gp])) < LINES;
            assign w_line = FB'(beat[gp]);
            assign w_row = {slot[gp], w_line[FB-1:SB]};
            for (gb = 0; gb < NBANK; gb++) begin : g_bank
                prism_ram_sdp #(.W(DATA_W), .DEPTH(ROWS), .STYLE(STYLE)) ram (
                    .clk, .we(w_on && w_line[SB-1:0] == SB'(gb)), .waddr(w_row), .wdata(s_axis_tdata[DATA_W*gp +: DATA_W]),
                    .re(rd_en), .raddr(r_row[gb]), .rdata(q[gp][gb])
                );
            end
        end
    endgenerate

    // Registered with the read: its port, line mod NBANK and byte in the line.
    logic [PW-1:0] q_port;
    logic [SB-1:0] q_line;
    logic [LS-1:0] q_byte;
    always_ff @(posedge clk)
        if (rd_en) begin
            q_port <= r_port;
            q_line <= r_line[SB-1:0];
            q_byte <= rd_off[LS-1:0];
        end

    // ---------------------------------------------------------------- view
    // Three selects, each a small run-time index (Yosys maps those to
    // LUT6 + MUXF7/MUXF8, about 1.25 to 1.5 levels each): line k of the view
    // (the read's line + k) is bank (line + k) mod NBANK of the read's port,
    // one select over 2^PW x NBANK banks (the line rotation and the port
    // together); then the lines are shifted down by the byte in the line,
    // 8 bytes a step (bits 5:3), then a byte a step (bits 2:0).
    localparam int HB = LS / 2;                          // the byte shift's low bits
    localparam int NV = NBANK_VIEW * LB;                 // bytes of the view's lines
    localparam int T = VIEW_BYTES + (1 << HB) - 1;       // bytes after the coarse shift
    logic [DATA_W-1:0] qf [(2 ** PW) * NBANK];           // bank b of port p at [p*NBANK + b]
    always_comb
        for (int p = 0; p < 2 ** PW; p++)
            for (int b = 0; b < NBANK; b++) qf[NBANK*p + b] = q[p < PORTS ? p : 0][b];
    logic [NBANK_VIEW*DATA_W-1:0] ln;                    // line k at [k*DATA_W +: DATA_W]
    always_comb
        for (int k = 0; k < NBANK_VIEW; k++) ln[DATA_W*k +: DATA_W] = qf[{q_port, SB'(q_line + SB'(k))}];
    assign m_head = ln[2*DATA_W-1:0];
    logic [7:0] coarse [T][2 ** (LS - HB)];              // byte i of the coarse shift by j steps of 2^HB
    logic [7:0] fine [VIEW_BYTES][2 ** HB];              // view byte i for a fine shift of j
    logic [7:0] t [T];
    always_comb begin
        for (int i = 0; i < T; i++) begin
            for (int j = 0; j < 2 ** (LS - HB); j++)
                coarse[i][j] = i + (j << HB) < NV ? ln[8 * (i + (j << HB)) +: 8] : 8'd0;
            t[i] = coarse[i][q_byte[LS-1:HB]];
        end
        for (int i = 0; i < VIEW_BYTES; i++) begin
            for (int j = 0; j < 2 ** HB; j++) fine[i][j] = t[i + j];
            m_view[8*i +: 8] = fine[i][q_byte[HB-1:0]];
        end
    end

    // What the read does not use of the offset (it wraps at FB_LINES lines).
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused;
    assign unused = ^{rd_off};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule

`default_nettype wire
