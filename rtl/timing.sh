#!/usr/bin/env bash
# The RTL's timing check: each module synthesised for UltraScale+ by Yosys
# (`synth_xilinx -family xcup -flatten`), its deepest register-to-register
# path counted in logic levels by ../shared/tools/logic-depth (a module's
# inputs and outputs count as registers, as they are where it is used).
# Budget: 6 levels stand for 322.265625 MHz (the 100 GbE MAC clock).
#
#   rtl/timing.sh              the modules that close timing (a unit inside a
#                              closed composition through it, COVERED); exit 1
#                              when any path is deeper than its budget (CI)
#   rtl/timing.sh --all        every module, closed or not (the table in
#                              docs/rtl.md); exit 1 when any misses 6 levels
#   rtl/timing.sh MODULE...    these modules against the budget
#
# TIMING_JOBS (default 2) modules are synthesised at once; TIMING_BUDGET
# (default 6) is the budget in levels; TIMING_KEEP=DIR keeps each module's
# netlist (MODULE.json) and its 40 deepest endpoints (MODULE.depth) there.
#
# prism_ring is synthesised with KW (its Kulisch integer's width) 8 instead
# of 320 (`chparam`, below): the same banks, rows, flags, enables and
# rotations, narrower data words. It is in
# CLOSED since 2026-12-03: 5.25 levels at KW 8 once the egress read went
# through the memories' output register (its output bits were 6.50: block
# RAM read > rotation > at-rest mask) and the lanes' sums took their flags
# down a cycle late (their write-enable compare into the flags was 6.50 in
# that run). Since session 49 its egress port's Kulisch words come in
# block order (a 4:1 select, not a 64:1 rotation): 383 s beside a test
# build, 1,592 s in a clean-clone CI run; the held table was the
# check's slowest module (1,952 s there; scripts/test.sh gives the whole
# check 4,800 s) until its rows went into distributed RAM (session 53:
# 25,454 LUT instead of 33,327, 522 to 856 s beside other runs).
#
# Modules still built as one combinational step per cycle (the cycle model
# that issue 26 turns into a pipeline) are listed in OPEN; they leave that
# list when they meet the budget, and never return to it.
set -euo pipefail
cd "$(dirname "$0")"
budget=${TIMING_BUDGET:-6}
. ./lib.sh
find_logic_depth
command -v yosys >/dev/null || { echo "yosys not found: apt-get install yosys" >&2; exit 1; }

CLOSED="prism_fp32_add_pipe prism_kulisch_lane_pipe prism_kulisch_round_pipe prism_rx_check prism_lane_track prism_group_walk prism_crc32c_512 prism_frame_buf prism_rx_validate prism_txn_table prism_ring prism_egress prism_auto_store prism_auto_plan prism_auto_body prism_held_table"
OPEN="prism_fp32_add prism_kulisch_lane prism_kulisch_round"
# Closed units that a closed composition synthesises whole: CI checks the
# composition (every path of the unit, and those between it and its
# neighbours), not the unit again. prism_group_walk alone took 820 s of
# the 2,039 s check in the CI run of 2026-12-04; prism_rx_validate holds it.
COVERED="prism_rx_check prism_group_walk"
case "${1:-}" in
    --all) modules="$CLOSED $OPEN" ;;
    "") modules=""
        for m in $CLOSED; do
            case " $COVERED " in *" $m "*) ;; *) modules="$modules $m" ;; esac
        done ;;
    *) modules="$*" ;;
esac

tmp=$(mktemp -d)
# Background jobs ignore SIGINT: on any exit, stop the syntheses still running.
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
pkg_params "$tmp"
# Modules are synthesised TIMING_JOBS at a time (default 2, the machine's
# cores), the slowest (prism_ring, prism_held_table) first so the others run beside them; each
# in a directory of its own, and the rows printed in the list's order.
jobs_max=${TIMING_JOBS:-2}
case "$jobs_max" in
    ''|*[!0-9]*|0) echo "TIMING_JOBS must be a positive integer, not '$jobs_max'" >&2; exit 2 ;;
esac
# no_space DIR: says so when DIR's file system is (nearly) full, the usual
# reason for a netlist cut short.
no_space() {
    local avail
    avail=$(df -Pk "$1" | awk 'NR == 2 { print $4 }')
    if [ "${avail:-0}" -lt 262144 ]; then
        echo "error: $(df -Ph "$1" | awk 'NR == 2 { print $4 }') left on the file system of $1 (TMPDIR): free disk space and run again"
    fi
}
# One module: its row in $tmp/$m/row; exit 0 within budget, 1 over, 2 when Yosys fails.
check_one() {
    local m=$1 dir=$tmp/$1
    mkdir -p "$dir"
    inline_pkg "sv/$m.sv" "$dir/$m.sv"
    # The modules it instantiates, synthesised with it (their memories inferred).
    local deps=""
    case "$m" in
        prism_ring|prism_auto_store|prism_held_table|prism_txn_table) deps="sv/prism_ram_sdp.sv" ;;
        prism_kulisch_lane_pipe) deps="sv/prism_dsp_add48.sv sv/prism_dsp_mul_add.sv" ;;
        prism_fp32_add_pipe) deps="sv/prism_dsp_mul_add.sv" ;;
        prism_frame_buf) deps="sv/prism_ram_sdp.sv sv/prism_mux4.sv" ;;
        # A port's whole validation: the two checkers composed with their verdict FIFOs.
        prism_rx_validate) deps="prism_rx_check prism_group_walk sv/prism_delay_ram.sv sv/prism_ram_sdp.sv" ;;
        prism_group_walk) deps="sv/prism_delay_ram.sv sv/prism_ram_sdp.sv" ;;
        # The egress with its roundings (prism_kulisch_round_pipe, a lane each).
        prism_egress) deps="prism_kulisch_round_pipe sv/prism_ram_sdp.sv sv/prism_axis_fifo.sv" ;;
    esac
    # Reduced parameters for modules whose full size is too slow for CI.
    local chp=""
    case "$m" in
        # The ring at its default RING 4096, NBANK 64 and EG 16 (every
        # address, enable, flag and rotation path as in the node), its
        # Kulisch integer 8 bits wide instead of 320: only the data words
        # narrow (45 bits instead of 357), no path gets shorter. Full size
        # took 1,017 s on the 2-core VM.
        prism_ring) chp="chparam -set KW 8 prism_ring;" ;;
        # The egress with its 16 rounding units at a Kulisch width of 64
        # instead of 320: every egress path as at full size (the rounded
        # values' mux into the line RAM included); the units' own depth at
        # 320 bits is prism_kulisch_round_pipe's row. Full size took 957 s
        # (TIMING_EGRESS_FULL=1 for it).
        prism_egress) [ -n "${TIMING_EGRESS_FULL:-}" ] || chp="chparam -set KW 64 prism_egress;" ;;
        # The held table at the span the node gives it (WINDOW + MTU =
        # 2,904 + 1,500 at the node's defaults: 13-bit equalities, 14-bit
        # orders), not its standalone default of 65,535 (16 and 17 bits):
        # at 17 bits the overlap's compare and the OR over the slots read
        # 6.25 levels (session 64), a configuration the switch never builds.
        prism_held_table) chp="chparam -set SPAN 4404 prism_held_table;" ;;
        # (prism_frame_buf at its default, every view byte shifted: the
        # node's ANY_BYTES 64 takes bytes 64 on from the stage before the
        # last, a subset of these paths. Alone with chparam ANY_BYTES 64,
        # session 66: 9,287 LUTs, 6.50 levels at 5 output bits (ABC; the
        # default reads 6.00); the whole switch's synthesis is where the
        # node's configuration is measured: docs/rtl.md.)
    esac
    # A dependency named by module (not path) imports the package too: inline it the same way.
    local files="" d
    for d in $deps; do
        case "$d" in
            *.sv) files="$files $d" ;;
            *) inline_pkg "sv/$d.sv" "$dir/$d.sv"; files="$files $dir/$d.sv" ;;
        esac
    done
    local start; start=$(date +%s)
    if ! yosys -q -p "read_verilog -sv $files $dir/$m.sv; $chp synth_xilinx -family xcup -flatten -top $m; write_json $dir/$m.json" > "$dir/yosys.log" 2>&1; then
        { tail -20 "$dir/yosys.log"; no_space "$dir"; echo "yosys failed on $m"; } > "$dir/row"
        echo "timing: $m: yosys failed" >&2
        return 2
    fi
    local rc=0
    python3 "$depth" --max "$budget" "$dir/$m.json" > "$dir/depth" 2>&1 || rc=$?
    if [ -n "${TIMING_KEEP:-}" ]; then
        mkdir -p "$TIMING_KEEP"
        cp "$dir/$m.json" "$TIMING_KEEP/"
        python3 "$depth" --paths 40 "$dir/$m.json" > "$TIMING_KEEP/$m.depth" || true
    fi
    # The netlist is read: drop it (tens to hundreds of MB a module, two
    # modules at a time beside a test build; CI's machine ran out of disk
    # with them kept until the end, 2026-12-06).
    rm -f "$dir/$m.json"
    if ! grep -q 'deepest path' "$dir/depth"; then
        { tail -20 "$dir/depth"; no_space "$dir"; echo "logic-depth failed on $m"; } > "$dir/row"
        echo "timing: $m: logic-depth failed" >&2
        return 2
    fi
    local levels dist luts ffs carry verdict=ok
    levels=$(sed -n 's/.*deepest path \([0-9.]*\) levels.*/\1/p' "$dir/depth")
    dist=$(sed -n 's/.*levels (rounded up) : endpoints *//p' "$dir/depth")
    read -r luts ffs carry < <(sed -n 's/.*cells: \([0-9]*\) LUT, \([0-9]*\) FF, \([0-9]*\) CARRY.*/\1 \2 \3/p' "$dir/depth")
    [ "$rc" -eq 0 ] || verdict="over $budget"
    {
        printf '  %-24s %8s %6s %6s %6s  %s  [%s, %d s]\n' "$m" "$levels" "$luts" "$ffs" "$carry" "$dist" "$verdict" $(( $(date +%s) - start ))
        [ "$rc" -eq 0 ] || sed -n '3,4p' "$dir/depth" | cut -c1-200 | sed 's/^/      /'
    } > "$dir/row"
    # Progress as each module ends (the table comes at the end, in order):
    # a run stopped by a time limit still shows what it had done.
    echo "timing: $m done: $levels levels, $verdict, $(( $(date +%s) - start )) s" >&2
    [ "$rc" -eq 0 ] || return 1
}
# The slowest first (prism_ring, then prism_held_table: 529 s alone), so
# the short ones fill the other job beside them instead of one of them
# running alone at the end.
order=""
for slow in prism_ring prism_held_table; do
    case " $modules " in *" $slow "*) order="$order $slow" ;; esac
done
for m in $modules; do
    case " prism_ring prism_held_table " in *" $m "*) ;; *) order="$order $m" ;; esac
done
running=0
for m in $order; do
    if [ "$running" -ge "$jobs_max" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    check_one "$m" &
    running=$((running + 1))
done
wait
printf '  %-24s %8s %6s %6s %6s  %s\n' module levels LUTs FFs CARRY "levels (rounded up): endpoints"
fail=0
for m in $modules; do
    # A job that stopped before its row (an unknown module, logic-depth failing): say so, with its logs.
    if [ ! -f "$tmp/$m/row" ]; then
        echo "$m: no result" >&2
        tail -n 20 "$tmp/$m/depth" "$tmp/$m/yosys.log" >&2 2>/dev/null || true
        exit 1
    fi
    cat "$tmp/$m/row"
    if grep -qE "(yosys|logic-depth) failed on $m" "$tmp/$m/row"; then
        exit 1
    fi
    grep -q '\[ok, ' "$tmp/$m/row" || fail=1
done
[ "$fail" -eq 0 ] || echo "timing: some paths are deeper than $budget levels" >&2
exit "$fail"
