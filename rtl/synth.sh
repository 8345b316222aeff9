#!/usr/bin/env bash
# Yosys synth_xilinx resource estimate of the RTL modules (Debian's Yosys 0.23).
# Yosys 0.23 does not read `import pkg::*`, so the package's constants are
# inlined into a temporary copy of each module first.
#   rtl/synth.sh            all modules
#   rtl/synth.sh MODULE     one module
set -euo pipefail
cd "$(dirname "$0")"
command -v yosys >/dev/null || { echo "yosys not found: apt-get install yosys" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -n '/^  localparam/p' sv/prism_pkg.sv > "$tmp/params.svh"
modules=${1:-prism_rx_check prism_fp32_add prism_kulisch_lane prism_kulisch_round}
for m in $modules; do
    sed -e '/import prism_pkg::\*;/r '"$tmp/params.svh" -e 's/import prism_pkg::\*;//' "sv/$m.sv" > "$tmp/$m.sv"
    yosys -p "read_verilog -sv $tmp/$m.sv; synth_xilinx -top $m; stat" > "$tmp/$m.log" 2>&1 || { tail -20 "$tmp/$m.log"; exit 1; }
    echo "== $m (synth_xilinx)"
    # The first statistics block only (Yosys prints the top module twice).
    sed -n '/Printing statistics/,$p' "$tmp/$m.log" | awk '/Number of cells/ && seen++ {exit} {print}' > "$tmp/$m.stat"
    grep -E "Number of cells|LUT|FD|CARRY|MUXF|RAMB|URAM|DSP" "$tmp/$m.stat" | sed 's/^ */  /'
    luts=$(awk '/LUT[1-6] / {s+=$2} END {print s+0}' "$tmp/$m.stat")
    ffs=$(awk '/FD[RSCP]E / {s+=$2} END {print s+0}' "$tmp/$m.stat")
    brams=$(awk '/RAMB/ {s+=$2} END {print s+0}' "$tmp/$m.stat")
    dsps=$(awk '/DSP/ {s+=$2} END {print s+0}' "$tmp/$m.stat")
    echo "  total: $luts LUTs, $ffs flip-flops, $brams BRAM, $dsps DSP"
done
