#!/usr/bin/env bash
# Yosys synth_xilinx resource estimate of the RTL modules (Debian's Yosys 0.23,
# about 3 minutes, most of it prism_group_walk),
# then the switch's total: each module times its instance count in
# prism_switch's defaults, plus the storage prism_node keeps.
# Yosys 0.23 does not read `import pkg::*`, so the package's constants are
# inlined into a temporary copy of each module first.
#   rtl/synth.sh            all modules and the total
#   rtl/synth.sh MODULE     one module
set -euo pipefail
cd "$(dirname "$0")"
command -v yosys >/dev/null || { echo "yosys not found: apt-get install yosys" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -n '/^  localparam/p' sv/prism_pkg.sv > "$tmp/params.svh"
modules=${1:-prism_rx_check prism_group_walk prism_fp32_add prism_kulisch_lane prism_kulisch_round}
declare -A LUT FF BRAM DSP
for m in $modules; do
    sed -e '/import prism_pkg::\*;/r '"$tmp/params.svh" -e 's/import prism_pkg::\*;//' "sv/$m.sv" > "$tmp/$m.sv"
    yosys -p "read_verilog -sv $tmp/$m.sv; synth_xilinx -top $m; stat" > "$tmp/$m.log" 2>&1 || { tail -20 "$tmp/$m.log"; exit 1; }
    echo "== $m (synth_xilinx)"
    # The first statistics block only (Yosys prints the top module twice).
    sed -n '/Printing statistics/,$p' "$tmp/$m.log" | awk '/Number of cells/ && seen++ {exit} {print}' > "$tmp/$m.stat"
    grep -E "Number of cells|LUT|FD|CARRY|MUXF|RAMB|URAM|DSP" "$tmp/$m.stat" | sed 's/^ */  /'
    LUT[$m]=$(awk '/LUT[1-6] / {s+=$2} END {print s+0}' "$tmp/$m.stat")
    FF[$m]=$(awk '/FD[RSCP]E / {s+=$2} END {print s+0}' "$tmp/$m.stat")
    BRAM[$m]=$(awk '/RAMB/ {s+=$2} END {print s+0}' "$tmp/$m.stat")
    DSP[$m]=$(awk '/DSP/ {s+=$2} END {print s+0}' "$tmp/$m.stat")
    echo "  total: ${LUT[$m]} LUTs, ${FF[$m]} flip-flops, ${BRAM[$m]} BRAM, ${DSP[$m]} DSP"
done
[ $# -eq 0 ] || exit 0

# A parameter's default in a module, evaluated with DATA_W = 512.
param() { local e; e=$(sed -n "s/^ *parameter int $2 = \([^,]*\),\{0,1\}$/\1/p" "sv/$1.sv" | head -1); echo $(( ${e//DATA_W/512} )); }
ports=$(param prism_switch PORTS)
flanes=$(param prism_node FLANES)
klanes=$(param prism_node KLANES)
kw=$(param prism_node KW)
mtu=$(param prism_node MTU)
# RING's default: 2^clog2(10 * ((MTU - 46) / 4)) (the window and two packets being built).
ring=1; while [ $ring -lt $((10 * ((mtu - 46) / 4))) ]; do ring=$((ring * 2)); done
lanes=16            # RESULT values a 512-bit line: the builder's rounding units
look=8              # AUTO's eight-value lookahead: its rounding units
echo
echo "== prism_switch total (PORTS=$ports, FLANES=$flanes, KLANES=$klanes, KW=$kw, MTU=$mtu): arithmetic and checks"
printf '  %-22s %5s %9s %9s %5s %4s\n' module count LUTs FFs BRAM DSP
tl=0; tf=0; tb=0; td=0
for row in "prism_rx_check $ports" "prism_group_walk $ports" "prism_fp32_add $flanes" "prism_kulisch_lane $klanes" "prism_kulisch_round $((lanes + look))"; do
    set -- $row
    l=$(( ${LUT[$1]} * $2 )); f=$(( ${FF[$1]} * $2 )); b=$(( ${BRAM[$1]} * $2 )); d=$(( ${DSP[$1]} * $2 ))
    printf '  %-22s %5d %9d %9d %5d %4d\n' "$1" "$2" $l $f $b $d
    tl=$((tl + l)); tf=$((tf + f)); tb=$((tb + b)); td=$((td + d))
done
printf '  %-22s %5s %9d %9d %5d %4d\n' total "" $tl $tf $tb $td
# prism_node's storage, in bits and 36 Kbit block RAMs (a lower bound: the
# rings are written FLANES (KLANES) slots a cycle, so they are banked).
lines=$(( (mtu + 14 + 63) / 64 ))
fb_lines=1; while [ $fb_lines -lt $((lines + 1)) ]; do fb_lines=$((fb_lines * 2)); done
pw=1; while [ $((1 << pw)) -lt $ports ]; do pw=$((pw + 1)); done
echo "== prism_node storage"
printf '  %-44s %9s %6s\n' store bits BRAM36
for row in "FP32 accumulator ring ($ring x 32) $((ring * 32))" \
           "Kulisch accumulator ring ($ring x $((kw + 5))) $((ring * (kw + 5)))" \
           "frame buffers ($((2 * (1 << pw))) x $fb_lines x 512) $((2 * (1 << pw) * fb_lines * 512))" \
           "RESULT line buffers (2 x $lines x 512) $((2 * lines * 512))"; do
    bits=${row##* }; name=${row% *}
    printf '  %-44s %9d %6d\n' "$name" "$bits" $(( (bits + 36863) / 36864 ))
done
echo "  not in the total: prism_node's own control logic (Yosys 0.23 does not finish its processes yet; see docs/rtl.md)"
