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
// line in [rd_off / 64, rd_off / 64 + NBANK); the port's banks side by side
// are then a circular window of NBANK lines, and view byte i is its byte
// (rd_off + i) mod (64 NBANK): one rotation by rd_off mod (64 NBANK) bytes
// (the line rotation and the byte shift in one), the largest step first
// (the later stages keep only VIEW_BYTES + step - 1 bytes). Line indices
// wrap at FB_LINES, as a line-indexed array would. m_head is lines 0 and 1
// of the buffer when rd_off is below 64 (the header at dispatch: the
// engine's first read of a frame is at its body's first descriptor).
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
    localparam int CB = NBANK * LB;                       // bytes in the banks' circular window
    localparam int SH = LS + SB;                          // rotation bits

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

    // Registered with the read: its port and rotation.
    logic [PW-1:0] q_port;
    logic [SH-1:0] q_rot;
    always_ff @(posedge clk)
        if (rd_en) begin
            q_port <= r_port;
            q_rot <= rd_off[SH-1:0];
        end

    // ---------------------------------------------------------------- view
    logic [8*CB-1:0] cat;                    // the read port's banks, bank b at [b*DATA_W +: DATA_W]
    always_comb begin
        for (int b = 0; b < NBANK; b++) cat[DATA_W*b +: DATA_W] = q[0][b];
        for (int p = 1; p < PORTS; p++)
            if (q_port == PW'(p))
                for (int b = 0; b < NBANK; b++) cat[DATA_W*b +: DATA_W] = q[p][b];
    end
    assign m_head = cat[2*DATA_W-1:0];
    // View byte i = cat byte (q_rot + i) mod CB: stage k rotates down by
    // 2^(SH-1-k) bytes when that bit of q_rot is set.
    always_comb begin
        logic [7:0] x [SH+1][CB];
        for (int i = 0; i < CB; i++) x[0][i] = cat[8*i +: 8];
        for (int k = 0; k < SH; k++)
            for (int i = 0; i < CB; i++)
                if (i < VIEW_BYTES + (1 << (SH - 1 - k)) - 1)
                    x[k+1][i] = q_rot[SH-1-k] ? x[k][(i + (1 << (SH - 1 - k))) % CB] : x[k][i];
                else x[k+1][i] = 8'd0;
        for (int i = 0; i < VIEW_BYTES; i++) m_view[8*i +: 8] = x[SH][i];
    end

    // What the read does not use of the offset (it wraps at FB_LINES lines).
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused;
    assign unused = ^{rd_off};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule

`default_nettype wire
