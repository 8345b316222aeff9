#!/usr/bin/env bash
# The DSP48E2 wrappers against independent expectations, by simulation with
# Icarus Verilog: prism_dsp_add48 (the Kulisch lanes' 48-bit adds) and
# prism_dsp_mul_add (the FP32 lanes' alignment and add), each with its
# testbench in tb/:
#
#   rtl/check_dsp.sh                 the behavioural twin (what the Verilator
#                                    tests simulate)
#   rtl/check_dsp.sh UNISIMS_DIR     the twin, and the DSP48E2 branch (what
#                                    synthesis builds) with Xilinx's own
#                                    simulation model: UNISIMS_DIR holds
#                                    DSP48E2.v and glbl.v (Vivado's
#                                    data/verilog/src/unisims with ../glbl.v
#                                    copied in, or a clone of
#                                    github.com/Xilinx/XilinxUnisimLibrary's
#                                    verilog/src/unisims, the same)
#
# CHECK_DSP_CYCLES random cycles (default 60000), CHECK_DSP_SEED (default 1).
# Exit 0 when every run prints ALL PASS. The model is not in this repository
# (Xilinx's licence; CI has no network): the result of the branch's check is
# in docs/rtl.md, "Resources: the Kulisch lanes' adds in DSP48E2" and
# "Resources: the FP32 lanes' alignment and add in DSP48E2".
set -euo pipefail
case "${1:-}" in
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
[ $# -le 1 ] || { echo "usage: rtl/check_dsp.sh [UNISIMS_DIR] (--help for more)" >&2; exit 2; }
# A relative UNISIMS_DIR is the caller's: made absolute before the cd.
dir=${1:-}
if [ -n "$dir" ]; then
    for f in DSP48E2.v glbl.v; do
        [ -f "$dir/$f" ] || { echo "$dir/$f not found: UNISIMS_DIR must hold DSP48E2.v and glbl.v" >&2; exit 2; }
    done
    dir=$(cd "$dir" && pwd)
fi
cd "$(dirname "$0")"
command -v iverilog >/dev/null || { echo "iverilog not found: apt-get install iverilog" >&2; exit 1; }
n=${CHECK_DSP_CYCLES:-60000}
seed=${CHECK_DSP_SEED:-1}
case "$n$seed" in *[!0-9]*) echo "CHECK_DSP_CYCLES and CHECK_DSP_SEED must be non-negative integers" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# run WHAT MODULE [IVERILOG_ARGS...]: MODULE under tb/MODULE_tb.sv.
run() {
    local what=$1 m=$2; shift 2
    iverilog -g2012 -I tb -s "${m}_tb" -o "$tmp/sim.vvp" "$@" "tb/${m}_tb.sv" "sv/$m.sv"
    vvp -n "$tmp/sim.vvp" +n="$n" +seed="$seed" | tee "$tmp/out"
    grep -q '^ALL PASS$' "$tmp/out" || { echo "check_dsp: $m, $what FAILED" >&2; exit 1; }
    echo "check_dsp: $m, $what passed"
}
for m in prism_dsp_add48 prism_dsp_mul_add; do
    run "the behavioural twin" "$m"
    if [ -n "$dir" ]; then
        run "the DSP48E2 branch with $dir/DSP48E2.v" "$m" -DSYNTHESIS -s glbl "$dir/DSP48E2.v" "$dir/glbl.v"
    else
        echo "check_dsp: $m, the DSP48E2 branch not checked (no UNISIMS_DIR given)"
    fi
done
