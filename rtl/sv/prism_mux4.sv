// prism_mux4: a W-bit 4:1 select, one LUT6 a bit.
//
// A module of its own so that a synthesis that maps each module apart
// (rtl/synth_switch.sh) keeps it one level: inside prism_frame_buf, ABC
// merged the word select's steps into trees of 4 to 5 levels behind the
// memories, where two of these and the port's 2:1 are 3.

`default_nettype none

module prism_mux4 #(
    parameter int W = 32
) (
    input  wire logic [4*W-1:0] d,      // input i at [i*W +: W]
    input  wire logic [1:0]     s,
    output logic      [W-1:0]   y
);
    initial
        if (W < 1) $error("prism_mux4: W must be at least 1");

    always_comb
        case (s)
            2'd0: y = d[0 +: W];
            2'd1: y = d[W +: W];
            2'd2: y = d[2*W +: W];
            default: y = d[3*W +: W];
        endcase
endmodule

`default_nettype wire
