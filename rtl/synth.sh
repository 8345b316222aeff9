#!/usr/bin/env bash
# Yosys synth_xilinx resources of single RTL modules (Debian's Yosys 0.23;
# about 3 minutes without prism_node, which alone takes much longer: docs/rtl.md).
# The whole switch's total is rtl/synth_switch.sh's.
# Yosys 0.23 does not read `import pkg::*`, so the package's constants are
# inlined into a temporary copy of each module first (rtl/lib.sh).
#   rtl/synth.sh            the modules below
#   rtl/synth.sh MODULE     one module
#   SYNTH_LOGS=DIR rtl/synth.sh ...   also keep each module's Yosys log in DIR
#   SYNTH_JSON=DIR rtl/synth.sh ...   also write each netlist as DIR/MODULE.json (for logic-depth)
# A module that runs longer than a minute prints the Yosys pass it is in
# every minute (prism_node took two hours on a 2-core VM: docs/rtl.md).
set -euo pipefail
cd "$(dirname "$0")"
command -v yosys >/dev/null || { echo "yosys not found: apt-get install yosys" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. ./lib.sh
pkg_params "$tmp"
modules=${1:-prism_rx_check prism_group_walk prism_fp32_add_pipe prism_kulisch_lane_pipe prism_kulisch_round_pipe prism_kulisch_round prism_node}
# A parameter's default in a module, evaluated with DATA_W = 512.
param() { local e; e=$(sed -n "s/^ *parameter int $2 = \([^,]*\),\{0,1\}$/\1/p" "sv/$1.sv" | head -1); echo $(( ${e//DATA_W/512} )); }
# prism_node as prism_switch instantiates it (PORTS).
ports=$(param prism_switch PORTS)
declare -A LUT FF BRAM DSP
for m in $modules; do
    # Yosys 0.23 cannot size a port from an inlined package constant: m_counters gets a literal width.
    inline_pkg "sv/$m.sv" "$tmp/$m.sv" -e "s/parameter int PORTS = 1,/parameter int PORTS = $ports,/"
    libs=""
    # prism_node's own logic: every unit it instantiates is read as a black box (-lib). The
    # arithmetic lanes and rounding units are counted in the rows of the total, the ring and frame
    # buffers in the storage table below; prism_egress, prism_txn_table, prism_held_table,
    # prism_auto_store, prism_auto_plan, prism_auto_body and the two prism_lane_track are
    # counted nowhere here (their own counts:
    # rtl/timing.sh and docs/rtl.md, "Resources").
    # The ones that import the package get it inlined like the module.
    if [ "$m" = prism_node ]; then
        libs="read_verilog -sv -lib"
        for u in prism_fp32_add_pipe prism_lane_track prism_kulisch_lane_pipe prism_kulisch_round_pipe prism_crc32c_512 \
                 prism_ring prism_auto_store prism_auto_plan prism_auto_body prism_held_table prism_frame_buf prism_mux4 \
                 prism_txn_table prism_egress; do
            inline_pkg "sv/$u.sv" "$tmp/lib_$u.sv"
            libs="$libs $tmp/lib_$u.sv"
        done
        libs="$libs;"
    fi
    # The units a module instantiates (no package import), synthesised with it.
    deps=""
    case "$m" in
        prism_group_walk) deps="sv/prism_delay_ram.sv sv/prism_ram_sdp.sv" ;;
        prism_fp32_add_pipe) deps="sv/prism_dsp_mul_add.sv" ;;
        prism_kulisch_lane_pipe) deps="sv/prism_dsp_mul_add.sv sv/prism_dsp_add48.sv" ;;
        prism_rx_validate) deps="sv/prism_delay_ram.sv sv/prism_ram_sdp.sv" ;;
    esac
    [ -z "$deps" ] || libs="$libs read_verilog -sv $deps;"
    start=$(date +%s)
    flow="synth_xilinx -top $m"
    # With its units flattened in, so that the statistics are the module's whole.
    [ -z "$deps" ] || flow="synth_xilinx -flatten -top $m"
    # synth_xilinx's coarse stage (opt with opt_reduce) did not finish on
    # prism_node in 30 minutes: the same passes with the fast optimisations,
    # then synth_xilinx's own memory, fine, cell and LUT mapping.
    if [ "$m" = prism_node ]; then
        flow="read_verilog -lib -specify +/xilinx/cells_sim.v; read_verilog -lib +/xilinx/cells_xtra.v; hierarchy -check -top $m"
        flow+="; proc; opt -fast; wreduce; peepopt; opt_clean; alumacc; opt -fast; memory -nomap; opt_clean"
        flow+="; synth_xilinx -top $m -run map_memory:fine; opt -fast -full; xilinx_srl -variable -minlen 3"
        flow+="; techmap -map +/techmap.v -D LUT_SIZE=6 -map +/xilinx/arith_map.v; opt -fast; synth_xilinx -top $m -run map_cells:check"
    fi
    json=""
    [ -z "${SYNTH_JSON:-}" ] || { mkdir -p "$SYNTH_JSON"; json="; write_json $SYNTH_JSON/$m.json"; }
    yosys -p "$libs read_verilog -sv $tmp/$m.sv; $flow; stat$json" > "$tmp/$m.log" 2>&1 &
    pid=$!
    while kill -0 $pid 2>/dev/null; do
        for _ in $(seq 60); do kill -0 $pid 2>/dev/null && sleep 1; done
        kill -0 $pid 2>/dev/null || break
        pass=$(grep -E '^[0-9.]+ Executing' "$tmp/$m.log" | tail -1 | cut -c1-70 || true)
        echo "   $m: $(( $(date +%s) - start )) s, in ${pass:-the frontend}" >&2
    done
    rc=0; wait $pid || rc=$?
    [ -z "${SYNTH_LOGS:-}" ] || { mkdir -p "$SYNTH_LOGS"; cp "$tmp/$m.log" "$SYNTH_LOGS/"; }
    [ $rc -eq 0 ] || { tail -20 "$tmp/$m.log"; echo "yosys failed on $m (exit $rc)" >&2; exit 1; }
    echo "== $m: $(( $(date +%s) - start )) s" >&2
    echo "== $m (synth_xilinx)"
    # The first statistics block only (Yosys prints the top module twice).
    sed -n '/Printing statistics/,$p' "$tmp/$m.log" | awk '/Number of cells/ && seen++ {exit} {print}' > "$tmp/$m.stat"
    grep -E "Number of cells|LUT|FD|CARRY|MUXF|RAM|SRL|DSP" "$tmp/$m.stat" | sed 's/^ */  /'
    # LUTs used as memory (distributed RAM, shift registers), as a 7-series slice counts them.
    lutram=$(awk '/ (RAM64M|RAM32M|RAM128X1D|RAM256X1S) / {s+=4*$2} / (RAM64X1D|RAM32X1D|RAM128X1S) / {s+=2*$2}
                  / (RAM64X1S|RAM32X1S|SRL16E|SRLC32E) / {s+=$2} / (RAM64M8|RAM32M16) / {s+=8*$2} END {print s+0}' "$tmp/$m.stat")
    LUT[$m]=$(awk -v mem="$lutram" '/LUT[1-6] / {s+=$2} END {print s+mem}' "$tmp/$m.stat")
    FF[$m]=$(awk '/FD[RSCP]E / {s+=$2} END {print s+0}' "$tmp/$m.stat")
    BRAM[$m]=$(awk '/RAMB/ {s+=$2} END {print s+0}' "$tmp/$m.stat")
    DSP[$m]=$(awk '/DSP/ {s+=$2} END {print s+0}' "$tmp/$m.stat")
    echo "  total: ${LUT[$m]} LUTs ($lutram of them as memory), ${FF[$m]} flip-flops, ${BRAM[$m]} BRAM, ${DSP[$m]} DSP"
done
# The switch's total is one synthesis of the whole hierarchy: rtl/synth_switch.sh
# (this script's sum of instance counts times module counts was an estimate
# that missed the units prism_node instantiates).
[ $# -eq 0 ] || exit 0
echo
echo "the whole switch's total: rtl/synth_switch.sh (docs/rtl.md, Resources)"
