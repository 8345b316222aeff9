// prism_ring: prism_node's accumulator ring — RING slots, each an FP32_ARRIVAL
// value, a KW-bit KULISCH_FIXED integer and its five flags — with the reads
// the engine needs and every write in one process.
//
// Reads (combinational): the lanes' run of FLANES (KLANES) consecutive slots
// from `lane_slot`, the RESULT builder's LANES slots and AUTO's LOOK
// lookahead slots. Writes, in this order within a cycle (a later write to a
// slot wins): the builder's clears of the slots it read, a fresh accumulator
// FLANES slots at a time from `clr_slot`, the Kulisch lanes' sums on the
// `kw_n` slots from `kw_slot` and the FP32 lanes' sums on the `fw_n` slots
// from `fw_slot` (distinct slots, so distinct banks), and AUTO's clear of
// the value it just wrote (`au_slot` 0). A lane write is the run the lanes
// read `LATENCY` cycles earlier (prism_lane_track in prism_node): the write
// slots are not the read slots of the same cycle.
//
// A slot at rest is FP32 -0 and a Kulisch zero with no flags. Apart from
// prism_node so that synthesis can count the ring on its own: at the default
// sizes it is 4,096 x 357 bits written 64 (48) slots a cycle, which hardware
// keeps in banked block RAM, not in flip-flops.
// Slot i of a flat port is at [i*WIDTH +: WIDTH].

module prism_ring #(
    parameter int RING = 4096,
    parameter int KW = 320,
    parameter int FLANES = 64,
    parameter int KLANES = 48,
    parameter int LANES = 16,
    parameter int LOOK = 8,
    parameter int RB = $clog2(RING),
    parameter int RN_W = $clog2(FLANES + 1)
) (
    input  logic                  clk,
    input  logic                  rst,

    input  logic [RB-1:0]         lane_slot,
    output logic [FLANES*32-1:0]  lane_acc,
    output logic [KLANES*KW-1:0]  lane_acck,
    output logic [KLANES*5-1:0]   lane_accf,

    input  logic [LANES*RB-1:0]   bl_slot,
    input  logic [LANES-1:0]      bl_clear,
    output logic [LANES*32-1:0]   bl_acc,
    output logic [LANES*KW-1:0]   bl_acck,
    output logic [LANES*5-1:0]    bl_accf,

    input  logic [LOOK*RB-1:0]    au_slot,
    input  logic                  au_clear,
    output logic [LOOK*32-1:0]    au_acc,
    output logic [LOOK*KW-1:0]    au_acck,
    output logic [LOOK*5-1:0]     au_accf,

    input  logic                  clr_en,
    input  logic [RB-1:0]         clr_slot,

    input  logic                  fw_en,
    input  logic [RB-1:0]         fw_slot,
    input  logic [RN_W-1:0]       fw_n,
    input  logic [FLANES*32-1:0]  lane_sum,
    input  logic                  kw_en,
    input  logic [RB-1:0]         kw_slot,
    input  logic [RN_W-1:0]       kw_n,
    input  logic [KLANES*KW-1:0]  klane_sum,
    input  logic [KLANES*5-1:0]   klane_f
);
    localparam logic [31:0] NEG_ZERO = 32'h8000_0000;

    logic [31:0]   acc [RING];
    logic [KW-1:0] acc_k [RING];
    logic [4:0]    acc_f [RING];

    always_comb begin
        for (int j = 0; j < FLANES; j++) lane_acc[32*j +: 32] = acc[RB'(lane_slot + RB'(j))];
        for (int j = 0; j < KLANES; j++) begin
            lane_acck[KW*j +: KW] = acc_k[RB'(lane_slot + RB'(j))];
            lane_accf[5*j +: 5] = acc_f[RB'(lane_slot + RB'(j))];
        end
        for (int j = 0; j < LANES; j++) begin
            bl_acc[32*j +: 32] = acc[bl_slot[RB*j +: RB]];
            bl_acck[KW*j +: KW] = acc_k[bl_slot[RB*j +: RB]];
            bl_accf[5*j +: 5] = acc_f[bl_slot[RB*j +: RB]];
        end
        for (int j = 0; j < LOOK; j++) begin
            au_acc[32*j +: 32] = acc[au_slot[RB*j +: RB]];
            au_acck[KW*j +: KW] = acc_k[au_slot[RB*j +: RB]];
            au_accf[5*j +: 5] = acc_f[au_slot[RB*j +: RB]];
        end
    end

    always_ff @(posedge clk)
        if (!rst) begin
            for (int j = 0; j < LANES; j++)
                if (bl_clear[j]) begin
                    acc[bl_slot[RB*j +: RB]] <= NEG_ZERO;
                    acc_k[bl_slot[RB*j +: RB]] <= '0;
                    acc_f[bl_slot[RB*j +: RB]] <= '0;
                end
            if (clr_en)
                for (int j = 0; j < FLANES; j++) begin
                    acc[RB'(clr_slot + RB'(j))] <= NEG_ZERO;
                    acc_k[RB'(clr_slot + RB'(j))] <= '0;
                    acc_f[RB'(clr_slot + RB'(j))] <= '0;
                end
            if (kw_en)
                for (int j = 0; j < KLANES; j++)
                    if (RN_W'(j) < kw_n) begin
                        acc_k[RB'(kw_slot + RB'(j))] <= klane_sum[KW*j +: KW];
                        acc_f[RB'(kw_slot + RB'(j))] <= klane_f[5*j +: 5];
                    end
            if (fw_en)
                for (int j = 0; j < FLANES; j++)
                    if (RN_W'(j) < fw_n) acc[RB'(fw_slot + RB'(j))] <= lane_sum[32*j +: 32];
            if (au_clear) begin
                acc[au_slot[0 +: RB]] <= NEG_ZERO;
                acc_k[au_slot[0 +: RB]] <= '0;
                acc_f[au_slot[0 +: RB]] <= '0;
            end
        end
endmodule
