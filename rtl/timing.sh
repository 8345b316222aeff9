#!/usr/bin/env bash
# The RTL's timing check: each module synthesised for UltraScale+ by Yosys
# (`synth_xilinx -family xcup -flatten`), its deepest register-to-register
# path counted in logic levels by ../shared/tools/logic-depth (a module's
# inputs and outputs count as registers, as they are where it is used).
# Budget: 6 levels stand for 322.265625 MHz (the 100 GbE MAC clock).
#
#   rtl/timing.sh              the modules that close timing; exit 1 when any
#                              path is deeper than its budget (CI runs this)
#   rtl/timing.sh --all        every module, closed or not (the table in
#                              docs/rtl.md); exit 1 when any misses 6 levels
#   rtl/timing.sh MODULE...    these modules against the budget
#
# prism_ring is synthesised with KW (its Kulisch integer's width) 8 instead
# of 320 (`chparam`, below): the same banks, rows, flags, enables and
# rotations, narrower data words (4.3 min of CPU instead of 17). It is in
# CLOSED since 2026-12-03: 5.25 levels at KW 8 once the egress read went
# through the memories' output register (its output bits were 6.50: block
# RAM read > rotation > at-rest mask) and the lanes' sums took their flags
# down a cycle late (their write-enable compare into the flags was 6.50 in
# that run). It is the slowest module here: 590 s at load 4, 1,394 s at
# load 7 (scripts/test.sh gives the whole check 2,700 s).
#
# Modules still built as one combinational step per cycle (the cycle model
# that issue 26 turns into a pipeline) are listed in OPEN; they leave that
# list when they meet the budget, and never return to it.
set -euo pipefail
cd "$(dirname "$0")"
budget=${TIMING_BUDGET:-6}
# logic-depth lives in the workplace's shared tools, beside the checkout.
depth=${LOGIC_DEPTH:-}
for d in "$(cd .. && pwd)/../shared/tools/logic-depth" /work/shared/tools/logic-depth; do
    [ -n "$depth" ] || { [ -f "$d" ] && depth=$d; }
done
[ -n "$depth" ] && [ -f "$depth" ] || { echo "logic-depth not found (looked in ../shared/tools beside the checkout and /work/shared/tools; set LOGIC_DEPTH)" >&2; exit 1; }
command -v yosys >/dev/null || { echo "yosys not found: apt-get install yosys" >&2; exit 1; }

CLOSED="prism_fp32_add_pipe prism_kulisch_lane_pipe prism_kulisch_round_pipe prism_rx_check prism_lane_track prism_group_walk prism_crc32c_512 prism_frame_buf prism_rx_validate prism_txn_table prism_ring"
OPEN="prism_fp32_add prism_kulisch_lane prism_kulisch_round"
case "${1:-}" in
    --all) modules="$CLOSED $OPEN" ;;
    "") modules=$CLOSED ;;
    *) modules="$*" ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Yosys 0.23 does not read `import pkg::*`: the package's constants are inlined.
sed -n '/^  localparam/p' sv/prism_pkg.sv > "$tmp/params.svh"
printf '  %-24s %8s %6s %6s %6s  %s\n' module levels LUTs FFs CARRY "levels (rounded up): endpoints"
fail=0
# sv/MODULE.sv with the package's constants in place of its import, into $tmp.
inline_pkg() {
    sed -e '/import prism_pkg::\*;/r '"$tmp/params.svh" -e 's/import prism_pkg::\*;//' "sv/$1.sv" > "$tmp/$1.sv"
}
for m in $modules; do
    inline_pkg "$m"
    # The modules it instantiates, synthesised with it (their memories inferred).
    deps=""
    case "$m" in
        prism_ring|prism_frame_buf) deps="sv/prism_ram_sdp.sv" ;;
        # A port's whole validation: the two checkers composed with their verdict FIFOs.
        prism_rx_validate) deps="prism_rx_check prism_group_walk" ;;
    esac
    # Reduced parameters for modules whose full size is too slow for CI.
    chp=""
    case "$m" in
        # The ring at its default RING 4096, NBANK 64 and EG 16 (every
        # address, enable, flag and rotation path as in the node), its
        # Kulisch integer 8 bits wide instead of 320: only the data words
        # narrow (45 bits instead of 357), no path gets shorter. Full size
        # took 1,017 s on the 2-core VM.
        prism_ring) chp="chparam -set KW 8 prism_ring;" ;;
    esac
    # A dependency named by module (not path) imports the package too: inline it the same way.
    files=""
    for d in $deps; do
        case "$d" in
            *.sv) files="$files $d" ;;
            *) inline_pkg "$d"; files="$files $tmp/$d.sv" ;;
        esac
    done
    deps=$files
    start=$(date +%s)
    if ! yosys -q -p "read_verilog -sv $deps $tmp/$m.sv; $chp synth_xilinx -family xcup -flatten -top $m; write_json $tmp/$m.json" > "$tmp/$m.log" 2>&1; then
        tail -20 "$tmp/$m.log" >&2
        echo "yosys failed on $m" >&2
        exit 1
    fi
    rc=0
    python3 "$depth" --max "$budget" "$tmp/$m.json" > "$tmp/$m.depth" || rc=$?
    levels=$(sed -n 's/.*deepest path \([0-9.]*\) levels.*/\1/p' "$tmp/$m.depth")
    dist=$(sed -n 's/.*levels (rounded up) : endpoints *//p' "$tmp/$m.depth")
    read -r luts ffs carry < <(sed -n 's/.*cells: \([0-9]*\) LUT, \([0-9]*\) FF, \([0-9]*\) CARRY.*/\1 \2 \3/p' "$tmp/$m.depth")
    verdict=ok
    if [ "$rc" -ne 0 ]; then
        verdict="over $budget"
        fail=1
    fi
    printf '  %-24s %8s %6s %6s %6s  %s  [%s, %d s]\n' "$m" "$levels" "$luts" "$ffs" "$carry" "$dist" "$verdict" $(( $(date +%s) - start ))
    [ "$rc" -eq 0 ] || sed -n '3,4p' "$tmp/$m.depth" | cut -c1-200 | sed 's/^/      /'
done
[ "$fail" -eq 0 ] || echo "timing: some paths are deeper than $budget levels" >&2
exit "$fail"
