// prism_crc32c_512: the digest prism_node keeps of a frame's hashed bytes
// (its `crc32c` function chained over the beats), one DATA_W-bit beat a
// cycle, in LATENCY = 2 register stages (3.25 logic levels measured by
// rtl/timing.sh at DATA_W = 512).
//
// The digest: the bitwise reflected CRC (POLY, 0x82F63B78 = CRC-32C) over
// all DATA_W bits of every beat, bit 0 of byte 0 first, initial value 0 at
// a frame's first beat, no final xor. The caller masks: bytes outside the
// hashed range or not kept are already zero in s_axis_tdata (prism_node's
// `masked`, which needs the frame offset of every byte; its comparators can
// sit in the caller's register stage before this module).
//
// The CRC is linear over GF(2): over one beat d it is
//   crc' = A * crc ^ F * d
// with A (32 x 32) advancing a CRC over DATA_W zero bits and F (32 x DATA_W)
// the CRC from 0 of each single data bit. Both are computed at elaboration
// from POLY (functions below). F * d does not depend on crc, so it is
// pipelined; only A * crc ^ (the beat's term) closes the loop:
//  1 F * d as NCH partial sums a CRC bit (one per CHUNK data bits),
//    registered with the beat's flags
//  2 crc <= (first ? 0 : A * crc) ^ (the bit's NCH partials); the register
//    loads only on a valid beat (idle cycles mid-frame hold it)
//
// Interface: always ready (no tready; feed it tvalid && tready). The first
// beat of a frame is the first valid beat after reset or after a tlast
// beat (the module keeps that history itself, as prism_node's in_beat == 0
// does). m_crc_valid pulses for one cycle per frame, LATENCY clock edges
// after the edge that takes the frame's tlast beat, with m_crc the digest;
// back-to-back frames (one-beat frames every cycle) and idle gaps both work.

`default_nettype none

module prism_crc32c_512 #(
    parameter int          DATA_W = 512,
    parameter logic [31:0] POLY   = 32'h82F6_3B78
) (
    input  wire logic              clk,
    input  wire logic              rst,
    input  wire logic [DATA_W-1:0] s_axis_tdata,
    input  wire logic              s_axis_tvalid,
    input  wire logic              s_axis_tlast,
    output logic                   m_crc_valid,
    output logic [31:0]            m_crc
);
    localparam int LATENCY = 2;
    // Data bits a partial sum: stage 1 is then about 24 inputs a partial,
    // stage 2 about 20 CRC bits, `first` and NCH = 11 partials, both two
    // LUT levels for ABC. Measured (levels / LUTs / FFs): 32: 3.25 / 2483 /
    // 549; 48: 3.25 / 2482 / 389; 64: 3.50 / 2971 / 293; 128: 4.00 / 2385 /
    // 165; 216 written as 6-input XOR trees: 4.50 / 2552 / 133 (ABC maps
    // LUT7-9 as LUT6 + MUXF7/8/9, one level to it, up to 1.75 here; `keep`
    // on the trees' levels: 4.00 / 3597 LUTs).
    localparam int CHUNK = 48;
    localparam int NCH = (DATA_W + CHUNK - 1) / CHUNK;
    localparam int RW = NCH * CHUNK;

    // One zero bit through the reflected LFSR (feedback x[0]).
    function automatic logic [31:0] step(input logic [31:0] x);
        step = x[0] ? (x >> 1) ^ POLY : x >> 1;
    endfunction

    // F by rows (RW bits a row, zero past DATA_W): bit RW*k + i is 1 when
    // data bit i flips CRC bit k. Data bit i alone, from 0: its step leaves
    // POLY, then DATA_W-1-i zero steps follow; so the columns come from POLY
    // stepped, last bit first.
    function automatic logic [32*RW-1:0] f_rows();
        logic [31:0] c;
        c = POLY;
        for (int i = RW - 1; i >= 0; i--) begin
            for (int k = 0; k < 32; k++) f_rows[RW*k + i] = i < DATA_W && c[k];
            if (i < DATA_W) c = step(c);
        end
    endfunction

    // A by rows: bit 32*k + j is 1 when CRC bit j, advanced over DATA_W
    // zero bits, flips CRC bit k. A step takes bit j > 0 to bit j - 1 and
    // bit 0 to POLY, so CRC bit j after DATA_W steps is POLY after
    // DATA_W - 1 - j more steps: F's column j (DATA_W >= 32). Taken from F:
    // a loop of DATA_W steps a column took Yosys 0.23 minutes to evaluate.
    function automatic logic [32*32-1:0] a_rows(input logic [32*RW-1:0] f);
        for (int k = 0; k < 32; k++) a_rows[32*k +: 32] = f[RW*k +: 32];
    endfunction

    localparam logic [32*RW-1:0]     FR = f_rows();
    localparam logic [32*32-1:0]     AR = a_rows(FR);

    // ---- 1: F * d in NCH partial sums a CRC bit ----
    logic                       mid;        // a frame's first beat has been taken, not its last
    logic                       s1_v, s1_first, s1_last;
    logic [32*NCH-1:0]          s1_part;    // bit NCH*k + c: chunk c's share of CRC bit k
    logic [RW-1:0]              d_pad;
    assign d_pad = RW'(s_axis_tdata);
    // One partial per (CRC bit, chunk): the chunk's data bits that F uses
    // (24 of 48 on average), XORed; ABC maps each in two LUT levels.
    for (genvar k = 0; k < 32; k++) begin : g_row
        for (genvar c = 0; c < NCH; c++) begin : g_chunk
            localparam logic [CHUNK-1:0] M = FR[RW*k + CHUNK*c +: CHUNK];
            logic p;
            always_ff @(posedge clk) if (s_axis_tvalid) p <= ^(d_pad[CHUNK*c +: CHUNK] & M);
            assign s1_part[NCH*k + c] = p;
        end
    end
    always_ff @(posedge clk) begin
        if (s_axis_tvalid) begin
            s1_first <= !mid;
            s1_last <= s_axis_tlast;
        end
        if (rst) begin
            s1_v <= 1'b0;
            mid <= 1'b0;
        end else begin
            s1_v <= s_axis_tvalid;
            if (s_axis_tvalid) mid <= !s_axis_tlast;
        end
    end

    // ---- 2: crc <= (first ? 0 : A * crc) ^ F * d ----
    logic [31:0] crc;
    always_ff @(posedge clk) begin
        if (s1_v) begin
            for (int k = 0; k < 32; k++)
                crc[k] <= ^(s1_first ? 32'd0 : crc & AR[32*k +: 32]) ^ ^s1_part[NCH*k +: NCH];
        end
        if (rst) m_crc_valid <= 1'b0;
        else m_crc_valid <= s1_v && s1_last;
    end
    assign m_crc = crc;

    initial begin
        if (DATA_W < 32 || DATA_W % 32 != 0) $error("prism_crc32c_512: DATA_W must be a positive multiple of 32");
        if (!POLY[31]) $error("prism_crc32c_512: POLY must be a reflected polynomial (bit 31, the x^0 term, set)");
        if (LATENCY != 2) $error("prism_crc32c_512: LATENCY must match its stage count (2)");
    end
endmodule

`default_nettype wire
