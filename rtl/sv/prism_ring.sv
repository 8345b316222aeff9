// prism_ring: prism_node's accumulator ring — RING slots, each an FP32_ARRIVAL
// value, a KW-bit KULISCH_FIXED integer and its five flags — in banks of
// synchronous-read memory (prism_ram_sdp: block RAM or UltraRAM).
//
// Banks. Slot s is in bank s mod NBANK, row s / NBANK, so a run of up to
// NBANK consecutive slots from any offset reads (or writes) each bank at most
// once. Bank b's row for a run from slot s is s / NBANK, plus one when
// b < s mod NBANK; a barrel rotation by s mod NBANK puts run order (value j
// of the run is slot s + j) into bank order for a write, and back for a read.
//
// Reads: the lanes' run of FLANES (KLANES) slots from `lane_slot`, its data
// on the outputs the cycle after the slots are given (the memories'
// registered read); and the egress run of EG slots from `eg_slot` (the
// RESULT builder's line or AUTO's rounder and encoder; prism_node never
// needs both in one context), its data on the outputs two cycles after the
// slots are given (the registered read, then the memories' output register
// with the rest bits registered beside it: the rotation into run order and the
// at-rest mask start from a register, not from the memory's read). Either
// read's data is what the slots held in the cycle they were given, and
// stays on the outputs until that port's next read.
//
// The egress run's FP32 values come in run order (a rotation of 33 bits a
// slot), its Kulisch words in block order: the EG-slot aligned block of the
// run's last slot, word p its slot block * EG + p (a 4:1 select of bank
// groups, not a 64:1 rotation of KW + 5 bits a slot, which was most of the
// ring's logic). The run's slots in that block are read as they were; its
// slots in the block before (a run that crosses a block boundary, eg_cross)
// are not on these outputs, and prism_egress takes them from the previous
// read's roundings, which read that block: it rounds in block order and
// puts the results into run order (eg_phase: the run's first slot mod EG).
// The block's other words, and its words at rest, are zero. eg_k0 is
// the run's first slot's Kulisch word, for a run inside one block (AUTO's
// encoder reads one slot).
// Each has a copy of its own of every bank, written alike: a block RAM has
// one read port beside its write port, and the two readers are busy in the
// same cycles (lanes in D_RUN while the builder streams a packet out), so
// sharing one copy by turns would cost the engine its rate. `*_n` is how
// many slots of the run are used (0: no read).
//
// Writes. The lanes' sums are the memories' only writes: the `fw_n` FP32
// sums from `fw_slot` or the `kw_n` Kulisch sums from `kw_slot` (a context
// runs one kind, so never both in a cycle), one word a bank. A STAGE's
// fresh accumulator (`clr_en`: the NBANK slots from `clr_slot`, while no
// sum is in flight) writes only their tags, marking them not summed.
// Every sum names the lap of its run's first slot (`fw_lap`, `kw_lap`; see
// the tags): no slot is ever cleared after it is read. The memories hold
// no meaning after reset until a STAGE's clear.
//
// prism_node never reads a slot in the cycle a sum for it is written
// (prism_lane_track holds such reads), so a read never meets its own
// slot's write; simulation checks it.
// Slot i of a flat port is at [i*WIDTH +: WIDTH].

`default_nettype none

module prism_ring #(
    parameter int RING = 4096,
    parameter int KW = 320,
    parameter int KULISCH = 1,          // 0: no Kulisch words (lane_acck and friends read 0)
    parameter int NBANK = 64,
    parameter int EG = 16,
    parameter int LANE_STYLE = 0,       // prism_ram_sdp STYLE of the lanes' copy (0 block RAM, 1 UltraRAM)
    parameter int EG_STYLE = 0,         // and of the egress copy
    parameter int RB = $clog2(RING),
    parameter int RN_W = $clog2(NBANK + 1),
    parameter int EB = EG > 1 ? $clog2(EG) : 1
) (
    input  wire logic                  clk,
    input  wire logic                  rst,

    // The lanes' run, in bank order (bank b at [b*WIDTH +: WIDTH]).
    input  wire logic [RB-1:0]         lane_slot,
    input  wire logic                  lane_lap,      // lane_slot's element's lap (see the tags)
    input  wire logic [RN_W-1:0]       lane_n,
    output logic      [NBANK*32-1:0]   lane_acc,      // as stored: see lane_rest
    output logic      [NBANK*KW-1:0]   lane_acck,     // as stored: see lane_rest
    output logic      [NBANK*5-1:0]    lane_accf,
    output logic      [NBANK-1:0]      lane_rest,     // the bank's slot is at rest

    // The egress run, in run order (value j, slot eg_slot + j, at [j*WIDTH +: WIDTH]).
    input  wire logic [RB-1:0]         eg_slot,
    input  wire logic                  eg_lap,
    input  wire logic [RN_W-1:0]       eg_n,
    output logic      [EG*32-1:0]      eg_acc,
    output logic      [EG*KW-1:0]      eg_acck,       // block order (see above)
    output logic      [EG*5-1:0]       eg_accf,
    output logic      [KW-1:0]         eg_k0,         // the run's first slot's
    output logic      [4:0]            eg_f0,
    output logic      [EB-1:0]         eg_phase,      // the run's first slot mod EG
    output logic                       eg_cross,      // the run crosses into the next block
    output logic                       eg_valid,      // the outputs hold a read's data this cycle (its first)

    input  wire logic                  clr_en,
    input  wire logic [RB-1:0]         clr_slot,

    // The lanes' sums, in bank order.
    input  wire logic                  fw_en,
    input  wire logic [RB-1:0]         fw_slot,
    input  wire logic                  fw_lap,
    input  wire logic [RN_W-1:0]       fw_n,
    input  wire logic [NBANK*32-1:0]   lane_sum,
    input  wire logic                  kw_en,
    input  wire logic [RB-1:0]         kw_slot,
    input  wire logic                  kw_lap,
    input  wire logic [RN_W-1:0]       kw_n,
    input  wire logic [NBANK*KW-1:0]   klane_sum,
    input  wire logic [NBANK*5-1:0]    klane_f
);
    localparam int SB = $clog2(NBANK);          // bank bits
    localparam int ROWS = RING / NBANK;
    localparam int RW = ROWS > 1 ? $clog2(ROWS) : 1;
    localparam int KWX = KULISCH != 0 ? KW + 5 : 1;
    localparam int W = 32 + KWX;                 // a memory word: {flags, integer, FP32} (a spare bit without Kulisch)
    localparam logic [31:0] NEG_ZERO = 32'h8000_0000;

    initial begin
        if (RING < 2 * NBANK || 2 ** RB != RING) $error("prism_ring: RING must be a power of two, at least 2 x NBANK");
        if (NBANK < 2 || 2 ** SB != NBANK) $error("prism_ring: NBANK must be a power of two");
        if (EG < 2 || EG > NBANK || 2 ** EB != EG) $error("prism_ring: the egress run is a power of two, 2 to NBANK slots");
        if (EB != $clog2(EG)) $error("prism_ring: EB must be $clog2(EG)");
        if (KULISCH != 0 && KULISCH != 1) $error("prism_ring: KULISCH must be 0 or 1");
    end

    // Bank b's row, and whether it is in the run, for a run of n slots from s.
    function automatic logic [RW-1:0] bank_row(input logic [RB-1:0] s, input logic [SB-1:0] b);
        bank_row = s[RB-1:SB] + RW'(b < s[SB-1:0]);
    endfunction
    function automatic logic bank_in(input logic [SB-1:0] s, input logic [RN_W-1:0] n, input logic [SB-1:0] b);
        logic [SB-1:0] k;
        k = b - s;
        bank_in = (RN_W + 1)'(k) < (RN_W + 1)'(n);
    endfunction

    // ---------------------------------------------------------------- writes
    // The lanes' sums into the memories, each slot's tag beside them (see
    // the tags): {1, its lap} for a sum, {0, 0} in every bank at row
    // clr_slot / NBANK for a STAGE's clear (clr_en). The lanes' copy keeps
    // the tag in its memory word (two bits more: 359 of a RAMB36 pair's 360,
    // 35 of a RAMB18's 36 without Kulisch), so a clear writes that word
    // whole, its value bits whatever the sum inputs hold (a slot not summed
    // reads at rest); the egress copy's tags are a distributed RAM beside it
    // (its memories' output register loads zeros by the tag, which it needs
    // a cycle before that register). No clear selects a value: a select of
    // the identity word in front of every bank's data was 22.8k LUTs at KW
    // 320.
    logic [RB-1:0]   w_slot, t_slot;
    logic            w_lap;
    assign w_slot = fw_en ? fw_slot : kw_slot;
    assign w_lap = fw_en ? fw_lap : kw_lap;
    assign t_slot = clr_en ? clr_slot : w_slot;
    logic [W-1:0]     w_word [NBANK];
    logic [NBANK-1:0] w_en, t_en;
    logic [RW-1:0]    w_row [NBANK], t_row [NBANK];
    logic [1:0]       t_word [NBANK];
    always_comb
        for (int b = 0; b < NBANK; b++) begin
            w_word[b] = '0;
            w_word[b][31:0] = lane_sum[32*b +: 32];
            if (KULISCH != 0) w_word[b][W-1:32] = KWX'({klane_f[5*b +: 5], klane_sum[KW*b +: KW]});
            // Each kind's run decoded by itself, then the one selected.
            w_en[b] = fw_en ? bank_in(fw_slot[SB-1:0], fw_n, SB'(b)) : kw_en && bank_in(kw_slot[SB-1:0], kw_n, SB'(b));
            w_row[b] = bank_row(w_slot, SB'(b));
            t_en[b] = clr_en || w_en[b];
            t_row[b] = bank_row(t_slot, SB'(b));
            t_word[b] = clr_en ? 2'b00 : {1'b1, w_lap ^ bank_wraps(w_slot, SB'(b))};
        end

    // ---------------------------------------------------------------- lap tags
    // Slot s holds element e when e mod RING = s; e's lap is bit RB of e.
    // Each slot keeps a tag, {summed, lap}: whether its word holds a sum of
    // this operation, and the lap of the element it was last summed for (a
    // distributed RAM of ROWS x 2 a bank and reader beside the memories,
    // written with them). A reader names its run's first slot and that
    // slot's lap; a slot not summed, or whose tag is another lap, is at
    // rest (reads as -0 and a Kulisch zero without flags): its word is a
    // sum for an element RING before, whose RESULT has been read. So nothing
    // clears a slot after its RESULT is read, and a slot's first add of a
    // lap needs no clear ahead of it. A tag of the lap before last cannot be
    // met: a reader's element is at most the window above the oldest RESULT
    // being read (RING is the window plus two RESULT packets), every element
    // of an operation below it was summed (coverage), and a STAGE marks
    // every slot not summed (clr_en, RING / NBANK cycles). (Until session 62
    // a flag a slot in flip-flops, set by the RESULT builder's and AUTO's
    // clears and taken down by sums: 4,096 flags and their selects, about
    // 22k LUTs of the FP32-only ring's 25k.)
    function automatic logic bank_next(input logic [SB-1:0] s, input logic [SB-1:0] b);
        bank_next = b < s;                       // bank b's slot of a run from s mod NBANK is in the next row
    endfunction
    // Bank b's slot of a run from s is past the ring's last slot: its lap is one more.
    function automatic logic bank_wraps(input logic [RB-1:0] s, input logic [SB-1:0] b);
        bank_wraps = s[RB-1:SB] == RW'(ROWS - 1) && bank_next(s[SB-1:0], b);
    endfunction

    // ---------------------------------------------------------------- reads
    // Two copies of the banks, written alike: the lanes' (c 0) and the
    // egress run's (c 1), each with its registered read, and its tags read
    // (in the word, or beside it) and compared with the run's laps (q_rest,
    // a LUT after the read); the egress copy's memories have their output
    // register on (prism_ram_sdp OREG), and its rest bits and rotation are
    // registered again beside it (eg_*, below). Without it the egress bits
    // were 6.50 levels at KW 8: a block RAM's read (1.5) through the 64:1
    // rotation and the mask.
    logic [RB-1:0]   r_slot [2];
    logic [RN_W-1:0] r_n [2];
    logic            r_lap [2];
    assign r_slot[0] = lane_slot;
    assign r_slot[1] = eg_slot;
    assign r_n[0] = lane_n;
    assign r_n[1] = eg_n;
    assign r_lap[0] = lane_lap;
    assign r_lap[1] = eg_lap;
    logic [W-1:0]     q [2][NBANK];
    logic [NBANK-1:0] q_lap [2];                 // and the lap the read expects there
    logic [NBANK-1:0] q_rest [2];
    logic [NBANK-1:0] eg_orst;                   // the egress copy's output register loads zeros (see eg_acck)
    logic [SB-1:0]    q_rot;                     // the egress run's slot mod NBANK, registered with its read
    genvar gc, gb;
    generate
        for (gc = 0; gc < 2; gc++) begin : g_copy
            logic re;
            assign re = r_n[gc] != 0;
            for (gb = 0; gb < NBANK; gb++) begin : g_bank
                logic [RW-1:0] row;
                assign row = bank_row(r_slot[gc], SB'(gb));
                logic [1:0] tg;
                if (gc == 0) begin : g_lanes
                    logic [W+1:0] rd;
                    prism_ram_sdp #(.W(W + 2), .DEPTH(ROWS), .STYLE(LANE_STYLE)) ram (
                        .clk, .we(t_en[gb]), .waddr(t_row[gb]), .wdata({t_word[gb], w_word[gb]}),
                        .re, .raddr(row), .orst(1'b0), .rdata(rd)
                    );
                    assign tg = rd[W+1:W];
                    assign q[gc][gb] = rd[W-1:0];
                end else begin : g_egress
                    prism_ram_sdp #(.W(W), .DEPTH(ROWS), .STYLE(EG_STYLE), .OREG(1), .RST_LO(32)) ram (
                        .clk, .we(w_en[gb]), .waddr(w_row[gb]), .wdata(w_word[gb]),
                        .re, .raddr(row), .orst(eg_orst[gb]), .rdata(q[gc][gb])
                    );
                    prism_ram_sdp #(.W(2), .DEPTH(ROWS), .STYLE(2)) tag (
                        .clk, .we(t_en[gb]), .waddr(t_row[gb]), .wdata(t_word[gb]),
                        .re, .raddr(row), .orst(1'b0), .rdata(tg)
                    );
                end
                always_ff @(posedge clk)
                    if (re) q_lap[gc][gb] <= r_lap[gc] ^ bank_wraps(r_slot[gc], SB'(gb));
                assign q_rest[gc][gb] = !tg[1] || tg[0] != q_lap[gc][gb];
            end
`ifndef SYNTHESIS
            // A read never meets a write of its own slot (see above).
            always_ff @(posedge clk)
                if (!rst && re) begin
                    for (int b = 0; b < NBANK; b++)
                        if (w_en[b] && bank_in(r_slot[gc][SB-1:0], r_n[gc], SB'(b)) && bank_row(r_slot[gc], SB'(b)) == w_row[b])
                            $error("prism_ring: slot %0d read in the cycle it is written", {bank_row(r_slot[gc], SB'(b)), SB'(b)});
                    // Nothing reads during a STAGE's clear.
                    if (clr_en) $error("prism_ring: a read during the clear");
                end
`endif
        end
    endgenerate
    // The egress run's block: its first slot's offset in its block, whether
    // its last slot is in the next block, and that block's bank group,
    // worked out in the second stage from the run's slot and count
    // registered with its read (the slot and count come from the node's
    // logic: an add after them here was a path across the boundary).
    localparam int NG = NBANK / EG;
    localparam int GB = NG > 1 ? $clog2(NG) : 1;
    logic [RN_W-1:0] q_n;
    always_ff @(posedge clk)
        if (eg_n != 0) begin
            q_rot <= eg_slot[SB-1:0];
            q_n <= eg_n;
        end

    // The egress copy's second stage, beside its memories' output register
    // (loaded the cycle after a read, as that register is): the rest bits, the
    // block and the rotation. The output register of every bank outside the
    // block, and of every bank at rest, loads zeros in its Kulisch bits
    // (eg_orst, the register's reset), so a block word is the OR of its
    // bank group's four words (see eg_acck).
    logic             eg_re_q;                   // the egress run was read last cycle
    logic [NBANK-1:0] eg_rest;
    logic [SB-1:0]    eg_rot;
    logic             q_cross;
    logic [GB-1:0]    q_grp;
    assign q_cross = (RN_W + 1)'(q_rot[EB-1:0]) + (RN_W + 1)'(q_n) > (RN_W + 1)'(EG);
    assign q_grp = NG > 1 ? GB'(q_rot >> EB) + GB'(q_cross) : '0;
    always_comb
        for (int b = 0; b < NBANK; b++)
            eg_orst[b] = KULISCH == 0 || q_rest[1][b] || q_grp != GB'(b / EG);
    always_ff @(posedge clk) begin
        eg_re_q <= !rst && eg_n != 0;
        eg_valid <= !rst && eg_re_q;
        if (eg_re_q) begin
            eg_rest <= q_rest[1];
            eg_rot <= q_rot;
            eg_phase <= q_rot[EB-1:0];
            eg_cross <= q_cross;
        end
    end

    // The egress run into run order: value j is bank (slot + j) mod NBANK, a
    // rotation down by the slot mod NBANK, the largest step first (the later
    // stages need only the first EG + step - 1 banks).
    logic [32:0] eg_run [EG];                    // {at rest, FP32}
    always_comb begin
        logic [32:0] x [SB+1][NBANK];
        for (int b = 0; b < NBANK; b++) x[0][b] = {eg_rest[b], q[1][b][31:0]};
        for (int k = 0; k < SB; k++)
            for (int j = 0; j < NBANK; j++)
                x[k+1][j] = eg_rot[SB-1-k] ? x[k][(j + (1 << (SB-1-k))) & (NBANK - 1)] : x[k][j];
        for (int j = 0; j < EG; j++) eg_run[j] = x[SB][j];
    end

    // A slot at rest reads as -0 and a Kulisch zero without flags; the
    // lanes' words come as stored, with lane_rest, which
    // prism_fp32_add_pipe and prism_kulisch_lane_pipe apply as a register
    // set or reset (masking them here took a LUT a bit, 64 x 325, and put
    // the flag's select and the mask in front of the FP32 lanes' first
    // compares: 7.50 levels).
    assign lane_rest = q_rest[0];
    always_comb begin
        for (int b = 0; b < NBANK; b++)
            lane_acc[32*b +: 32] = q[0][b][31:0];
        for (int j = 0; j < EG; j++)
            eg_acc[32*j +: 32] = eg_run[j][32] ? NEG_ZERO : eg_run[j][31:0];
        /* verilator lint_off WIDTHCONCAT */
        lane_acck = '0;
        lane_accf = '0;
        eg_acck = '0;
        eg_accf = '0;
        eg_k0 = '0;
        eg_f0 = '0;
        /* verilator lint_on WIDTHCONCAT */
        if (KULISCH != 0) begin
            for (int b = 0; b < NBANK; b++)
                {lane_accf[5*b +: 5], lane_acck[KW*b +: KW]} = (KW+5)'(q[0][b][W-1:32]);
            // The block's words: word p is bank g * EG + p of the block's
            // group g, the other groups' words and words at rest being zero
            // (eg_orst). Both selects are AND-OR over constant indices: a
            // variable index here (eg_acck[KW*eg_phase +: KW], or
            // q[1][grp * EG + p]) reached Yosys as shifts of every
            // bank's word by a computed amount, and its techmap of them ran
            // for over half an hour at KW 320.
            for (int p = 0; p < EG; p++) begin
                logic [KW+4:0] w;
                w = '0;
                for (int g = 0; g < NG; g++) w = w | (KW+5)'(q[1][g * EG + p][W-1:32]);
                {eg_accf[5*p +: 5], eg_acck[KW*p +: KW]} = w;
            end
            begin
                logic [KW+4:0] w0;
                w0 = '0;
                for (int p = 0; p < EG; p++)
                    if (eg_phase == EB'(p)) w0 = w0 | {eg_accf[5*p +: 5], eg_acck[KW*p +: KW]};
                {eg_f0, eg_k0} = w0;
            end
        end
    end

`ifndef SYNTHESIS
    always_ff @(posedge clk)
        if (!rst) begin
            if (fw_en && kw_en) $error("prism_ring: FP32 and Kulisch sums in the same cycle");
            // A STAGE's clear runs while no sum is in flight.
            if (clr_en && (fw_en || kw_en)) $error("prism_ring: a sum written during the clear");
        end
`endif
endmodule

`default_nettype wire
