// prism_auto_body: writes an AUTO RESULT's body (docs/wire-format.md section
// 8) into the frame's lines egress sends from, one descriptor or value a
// cycle, in four stages: the inputs registered, the value in its wire
// format, its bytes (only the format's width; a descriptor big-endian),
// then the write.
//
// The lines are the frame's: body byte b is at frame byte BASE + b (BASE,
// 56, is the RESULT header's length), so frame line l is line l of the
// body's buffer and egress reads it whole. They are two memories in egress
// (even and odd lines, a write port each: m_*_e, m_*_o) instead of a
// register buffer with a 24:1 line select a bit in every sender. Line 0's
// bytes below BASE are zero.
//
// A body is written in order, each write starting where the last ended (a
// group's padding is the zero bytes the next write starts after), and a
// write at offset 0 starts a new body. So the writer keeps the two lines the
// body ends in (`win_e`, `win_o` by parity; the lower is line `wl`), ORs
// each write into them at its offset within the line, and writes both
// through to the memories (lines lw and lw + 1, one of each parity, every
// write): never a shift across the whole buffer, only within two lines.
// Bytes of a line past the body's end are zero; lines past its last are
// what they were. `busy` while a write is in a stage: the lines hold the
// body once it falls.

`default_nettype none

module prism_auto_body #(
    parameter int OB = 1536,            // the lines' bytes, whole lines
    parameter int BASE = 56,            // the body's first byte in the frame
    parameter int LA = 4,               // a memory's line address bits (line / 2)
    parameter int RKW = 320,            // Kulisch integer bits
    parameter int VB = (1 + (RKW + 7) / 8) > 4 ? 1 + (RKW + 7) / 8 : 4   // bytes a write at most
) (
    input  wire logic            clk,
    input  wire logic            rst,

    input  wire logic            s_valid,
    input  wire logic            s_desc,    // a group's descriptor (s_d), else a value
    input  wire logic [31:0]     s_d,
    input  wire logic [2:0]      s_f,       // the value's format: INT8, FP16, BF16, FP32, KULISCH
    input  wire logic [31:0]     s_v,       // its FP32 rounding (formats 0-3)
    input  wire logic [RKW-1:0]  s_acck,    // its Kulisch integer and flags (format 4)
    input  wire logic [4:0]      s_accf,
    input  wire logic [15:0]     s_w,       // its bytes
    input  wire logic [15:0]     s_off,     // where it starts in the body

    // The writes, every cycle a write falls: line lw (its parity's port)
    // and lw + 1 (the other), at line / 2.
    output logic                 m_we,
    output logic [LA-1:0]        m_addr_e,
    output logic [LA-1:0]        m_addr_o,
    output logic [8*64-1:0]      m_data_e,
    output logic [8*64-1:0]      m_data_o,
    output logic                 busy
);
    import prism_pkg::*;
    localparam int NL = OB / 64;

    initial begin
        if (OB % 64 != 0 || NL < 2) $error("prism_auto_body: OB must be two or more whole 64-byte lines");
        // A write and the padding after it (3 bytes at most) must leave the
        // next write's start inside the window's second line.
        if (VB > 61) $error("prism_auto_body: a write is at most 61 bytes (a Kulisch width of 480 bits)");
        if (NL > 1024) $error("prism_auto_body: a body offset is 16 bits");
        if (BASE < 0 || BASE > 63) $error("prism_auto_body: BASE must be inside line 0");
        if (2 ** LA < NL / 2 + 1) $error("prism_auto_body: LA must address every line pair");
    end

    // ---------------------------------------------------------- 0: inputs
    // Registered as they come: the Kulisch integer and flags are the ring's
    // egress read through its block and first-slot selects, and stage 1's
    // zero tests and state select behind those were 7.00 levels.
    logic             r_valid, r_desc;
    logic [31:0]      r_d, r_v;
    logic [2:0]       r_f;
    logic [RKW-1:0]   r_acck;
    logic [4:0]       r_accf;
    logic [15:0]      r_w, r_off;
    always_ff @(posedge clk) begin
        r_valid <= !rst && s_valid;
        r_desc <= s_desc;
        r_d <= s_d;
        r_f <= s_f;
        r_v <= s_v;
        r_acck <= s_acck;
        r_accf <= s_accf;
        r_w <= s_w;
        r_off <= s_off;
    end

    // ---------------------------------------------------------- 1: format
    logic             v1, d1, neg1;     // neg1: an INT8 value's byte is its magnitude, negated in stage 2
    // A finite or zero Kulisch slot: its state byte is decided in stage 2,
    // from the integer's nonzero 32-bit chunks (knz1) and the zero's sign.
    // The integer comes from the ring's egress read (its block select and
    // first-slot select): a 320-bit zero test after those, then the state
    // select, was 9.25 levels into ev1.
    localparam int NKC = (RKW + 31) / 32;
    logic             kfz1, kneg0;
    logic [NKC-1:0]   knz1;
    logic [31:0]      dw1;
    logic [15:0]      w1, off1;
    logic [8*VB-1:0]  ev1;
    always_ff @(posedge clk) begin
        logic [32*NKC-1:0] kp;
        v1 <= !rst && r_valid;
        d1 <= r_desc;
        dw1 <= r_d;
        w1 <= r_w;
        off1 <= r_off;
        ev1 <= '0;
        neg1 <= r_f == 3'd0 && r_v[31];
        kfz1 <= 1'b0;
        kneg0 <= r_accf[4] && !r_accf[3];
        kp = (32 * NKC)'(r_acck);
        for (int c = 0; c < NKC; c++) knz1[c] <= kp[32*c +: 32] != 0;
        case (r_f)
            3'd0: ev1[7:0] <= int8_mag(r_v);
            3'd1: ev1[15:0] <= (r_v[30:23] == 8'hFF && r_v[22:0] != 0) ? 16'h7E00 : fp16_trunc(r_v);
            3'd2: ev1[15:0] <= r_v[31:16];
            3'd3: ev1[31:0] <= r_v;
            default: begin
                if (r_accf[2] || (r_accf[1] && r_accf[0])) ev1[7:0] <= KSTATE_NAN;
                else if (r_accf[1]) ev1[7:0] <= KSTATE_POS_INF;
                else if (r_accf[0]) ev1[7:0] <= KSTATE_NEG_INF;
                else begin
                    // Zero or FINITE (stage 2); a zero's integer bytes are its zeros.
                    kfz1 <= 1'b1;
                    ev1[8 +: RKW] <= r_acck;
                end
            end
        endcase
    end

    // ---------------------------------------------------------- 2: bytes
    logic             v2;
    logic [15:0]      off2, pos2;        // pos2: the write's frame byte, off2 + BASE
    logic [8*VB-1:0]  b2;
    always_ff @(posedge clk) begin
        v2 <= !rst && v1;
        off2 <= off1;
        pos2 <= off1 + 16'(BASE);
        for (int i = 0; i < VB; i++)
            if (d1) b2[8*i +: 8] <= i < 4 ? dw1[8 * (3 - (i % 4)) +: 8] : 8'd0;
            else if (i == 0) begin
                if (kfz1) b2[7:0] <= knz1 != 0 ? KSTATE_FINITE : (kneg0 ? KSTATE_NEG_ZERO : KSTATE_POS_ZERO);
                else b2[7:0] <= neg1 ? 8'(-ev1[7:0]) : ev1[7:0];
            end
            else b2[8*i +: 8] <= 16'(i) < w1 ? ev1[8*i +: 8] : 8'd0;
    end

    // ---------------------------------------------------------- 3: write
    // The two lines are kept by parity (win_e the even one, win_o the odd),
    // so each line takes its data from one of them, never a mux:
    // a write into line L and L + 1 updates both, and the line the body
    // left (when L moved on by one) is the one cleared for line L + 1.
    logic [8*128-1:0] sh;
    logic [8*64-1:0]  win_e, win_o, nwin_e, nwin_o, src_e, src_o, sh_e, sh_o;
    logic [9:0]       wl, lw;
    always_comb begin
        lw = pos2[15:6];
        sh = (8*128)'(b2) << (8 * pos2[5:0]);
        {sh_o, sh_e} = lw[0] ? {sh[0 +: 8*64], sh[8*64 +: 8*64]} : sh;
        src_e = win_e;
        src_o = win_o;
        if (off2 == 0) begin
            src_e = '0;
            src_o = '0;
        end else if (lw != wl) begin
            if (wl[0]) src_o = '0;
            else src_e = '0;
        end
        nwin_e = src_e | sh_e;
        nwin_o = src_o | sh_o;
    end
    always_ff @(posedge clk)
        if (v2) begin
            win_e <= nwin_e;
            win_o <= nwin_o;
            wl <= lw;
        end
    // Lines lw and lw + 1: the odd one at lw / 2, the even one at lw / 2
    // plus lw's parity. (A line past NL is never read.)
    assign m_we = v2;
    assign m_addr_o = LA'(lw >> 1);
    assign m_addr_e = LA'(lw >> 1) + LA'(lw[0]);
    assign m_data_e = nwin_e;
    assign m_data_o = nwin_o;
    assign busy = r_valid || v1 || v2;

    // An INT8-exact FP32 value's (integral, -128..127) magnitude: the
    // significand's top bits, as many as the exponent says (a case on it,
    // not a shift by a difference); -128's is 0x80, its own negation.
    /* verilator lint_off UNUSEDSIGNAL */
    function automatic logic [7:0] int8_mag(input logic [31:0] v);   // an exact INT8 has no low bits
        logic [7:0] mag;
        case (v[30:23])
            8'd127: mag = 8'd1;
            8'd128: mag = 8'({1'b1, v[22]});
            8'd129: mag = 8'({1'b1, v[22:21]});
            8'd130: mag = 8'({1'b1, v[22:20]});
            8'd131: mag = 8'({1'b1, v[22:19]});
            8'd132: mag = 8'({1'b1, v[22:18]});
            8'd133: mag = 8'({1'b1, v[22:17]});
            8'd134: mag = 8'({1'b1, v[22:16]});
            default: mag = 8'd0;
        endcase
        int8_mag = mag;
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // FP32 to FP16 by truncation; exact values come back unchanged. The
    // exponent's cases are compares with constants; a subnormal's
    // significand a case on the exponent.
    function automatic logic [15:0] fp16_trunc(input logic [31:0] v);
        logic [7:0]  ex;
        logic [23:0] m;
        logic [9:0]  sub;
        ex = v[30:23];
        m = {1'b1, v[22:0]};
        sub = '0;
        for (int e = 102; e <= 112; e++)
            if (ex == 8'(e)) sub = 10'(m >> (126 - e));
        if (ex == 8'hFF) fp16_trunc = {v[31], 5'h1F, v[22:13]};
        else if (ex < 8'd102) fp16_trunc = {v[31], 15'b0};
        else if (ex > 8'd142) fp16_trunc = {v[31], 5'h1F, 10'b0};
        else if (ex >= 8'd113) fp16_trunc = {v[31], ~ex[4], ex[3:0], v[22:13]};   // ex - 112
        else fp16_trunc = {v[31], 5'b0, sub};
    endfunction
endmodule

`default_nettype wire
