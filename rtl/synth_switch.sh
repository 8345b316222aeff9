#!/usr/bin/env bash
# The whole switch synthesised for UltraScale+ by Yosys 0.23 (Debian's),
# at its default parameters: the resource totals and the deepest
# register-to-register path of the flattened switch.
#
#   rtl/synth_switch.sh          every feature on (prism_switch_core's defaults)
#   rtl/synth_switch.sh --fp32   the FP32-only build (KULISCH_ENABLE = AUTO_ENABLE = 0)
#
# How: Yosys elaborates prism_switch_core (the switch with flat port buses;
# Yosys reads no unpacked-array ports) with every module at the parameters
# the hierarchy gives it; each distinct module is then synthesised once
# (`synth_xilinx -family xcup`, its submodules black boxes), SYNTH_JOBS at a
# time (default 2), the slowest first; the mapped modules are read back as
# one design: `stat -top` counts every instance, and the design flattened
# is what ../shared/tools/logic-depth measures (LUT-RAM write ports taken
# as the clocked endpoints they are: rtl/synth_switch.py cut). Modules are
# optimised each on its own, so logic is not merged or removed across
# their boundaries: the counts are an upper bound of a flattened run's.
# prism_node's own logic goes through the same passes as in rtl/synth.sh
# (synth_xilinx's coarse `opt` did not finish on it).
#
# SYNTH_KEEP=DIR keeps the elaborated design, each module's log and
# netlist, the flattened netlist and the depth report there;
# SYNTH_ELAB=FILE starts from such an elaborated design (elab.il), and
# SYNTH_REUSE=DIR takes each module's netlist from DIR (a SYNTH_KEEP of the
# same design) where it is there: for iterating on one module. A module's
# plain name is its base and a digest of its parameters
# (prism_ram_sdp_1f0c9a2e), the same from run to run; a netlist names its
# children by those names, as black boxes, so it is reused when it stands
# for the same parameters as in DIR (its `names`), its source file is the
# same (`sources`: a digest of rtl/sv/MODULE.sv with the package inlined,
# one module a file) and the design gives it the same children: an edit
# inside a child (a memory's width under the ring) re-synthesises the
# child, not the modules above it.
# Exit 1 when the deepest path exceeds SYNTH_BUDGET levels (default 6).
set -euo pipefail
cd "$(dirname "$0")"
fp32=0
case "${1:-}" in
    "") ;;
    --fp32) fp32=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: rtl/synth_switch.sh [--fp32]" >&2; exit 2 ;;
esac
budget=${SYNTH_BUDGET:-6}
# A reused directory names what each netlist stands for (checked before
# the minutes of elaboration).
if [ -n "${SYNTH_REUSE:-}" ] && [ ! -f "$SYNTH_REUSE/names" ]; then
    echo "SYNTH_REUSE=$SYNTH_REUSE has no 'names' (a SYNTH_KEEP of this script makes one)" >&2
    exit 2
fi
jobs_max=${SYNTH_JOBS:-2}
case "$jobs_max" in
    ''|*[!0-9]*|0) echo "SYNTH_JOBS must be a positive integer, not '$jobs_max'" >&2; exit 2 ;;
esac
. ./lib.sh
find_logic_depth
command -v yosys >/dev/null || { echo "yosys not found: apt-get install yosys" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }
# Prints a line a minute with the Yosys pass a log is in, while pid $1 runs.
watch() {
    local pid=$1 log=$2 what=$3 start; start=$(date +%s)
    while kill -0 "$pid" 2>/dev/null; do
        for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null && sleep 1; done
        kill -0 "$pid" 2>/dev/null || break
        local pass; pass=$(grep -E '^[0-9.]+ Executing' "$log" | tail -1 | cut -c1-70 || true)
        echo "   $what: $(( $(date +%s) - start )) s, in ${pass:-the frontend}" >&2
    done
}

# Sources with the package's constants inlined (Yosys 0.23 does not read
# `import pkg::*`, nor size a port from a package constant).
src=$tmp/src
mkdir -p "$src"
pkg_params "$tmp"
for f in sv/prism_*.sv; do
    case "$f" in sv/prism_pkg.sv|sv/prism_switch.sv|sv/prism_switch_fp32.sv) continue ;; esac
    inline_pkg "$f" "$src/$(basename "$f")"
done

# 1. Elaborate: every module derived at the parameters it is used with.
chp=""
[ $fp32 -eq 0 ] || chp="-chparam KULISCH_ENABLE 0 -chparam AUTO_ENABLE 0"
if [ -n "${SYNTH_ELAB:-}" ]; then
    # A design elaborated before (SYNTH_KEEP's elab.il), for a re-run of the rest.
    cp "$SYNTH_ELAB" "$tmp/elab.il"
else
    echo "== elaborating prism_switch_core$([ $fp32 -eq 0 ] || echo ' (FP32-only)')" >&2
    yosys -p "read_verilog -defer -sv $src/prism_*.sv; hierarchy -top prism_switch_core $chp; write_rtlil $tmp/elab.il" > "$tmp/elab.log" 2>&1 &
    pid=$!
    watch $pid "$tmp/elab.log" elaboration
    wait $pid || { tail -20 "$tmp/elab.log"; echo "yosys failed to elaborate prism_switch_core" >&2; exit 1; }
    [ -z "${SYNTH_KEEP:-}" ] || { mkdir -p "$SYNTH_KEEP"; cp "$tmp/elab.il" "$SYNTH_KEEP/"; }
fi
python3 synth_switch.py modules "$tmp/elab.il" "$tmp/design.il" "$tmp/names" > "$tmp/modules"
# Each module's source file, as elaborated (the package inlined).
while read -r m y; do
    b=${y#*\\}
    b=${b%%\\*}
    echo "$m $(sha1sum < "$src/$b.sv" | cut -c1-16)"
done < "$tmp/names" > "$tmp/sources"
echo "   $(wc -l < "$tmp/modules") distinct modules, $(elapsed) s" >&2

# 2. Each module once, its children black boxes. The slowest first, so the
# small ones run beside them.
declare -A INST CHILDREN YNAME REUSE_YNAME SOURCE REUSE_SOURCE
order=""
while read -r m n kids; do
    INST[$m]=$n
    CHILDREN[$m]=$kids
done < "$tmp/modules"
while read -r m y; do YNAME[$m]=$y; done < "$tmp/names"
while read -r m d; do SOURCE[$m]=$d; done < "$tmp/sources"
if [ -n "${SYNTH_REUSE:-}" ]; then
    while read -r m y; do REUSE_YNAME[$m]=$y; done < "$SYNTH_REUSE/names"
    [ ! -f "$SYNTH_REUSE/sources" ] || while read -r m d; do REUSE_SOURCE[$m]=$d; done < "$SYNTH_REUSE/sources"
fi
# The module's netlist in SYNTH_REUSE stands for its parameters and its
# source here, and the black boxes it instantiates are its children here.
reusable() {
    local had now
    [ "${REUSE_YNAME[$1]:-}" = "${YNAME[$1]}" ] || return 1
    [ "${REUSE_SOURCE[$1]:-}" = "${SOURCE[$1]}" ] || return 1
    had=$(sed -n 's/^ *cell \\\(prism_[^ ]*\) .*/\1/p' "$SYNTH_REUSE/$1.mapped.il" | sort -u)
    now=$(for k in ${CHILDREN[$1]}; do echo "$k"; done | sort -u)
    [ "$had" = "$now" ]
}
for slow in prism_ring prism_held_table prism_node prism_egress; do
    for m in $(cut -d' ' -f1 "$tmp/modules"); do
        case "$m" in "$slow"|"$slow"_*) order="$order $m" ;; esac
    done
done
for m in $(cut -d' ' -f1 "$tmp/modules"); do
    case " $order " in *" $m "*) ;; *) order="$order $m" ;; esac
done
synth_one() {
    local m=$1 flow bb="" k lib=""
    for k in ${CHILDREN[$m]}; do bb="$bb blackbox $k;"; done
    flow="synth_xilinx -family xcup -noiopad -flatten -top $m"
    case "$m" in
        prism_node|prism_node_*)
            lib="read_verilog -lib -specify +/xilinx/cells_sim.v; read_verilog -lib +/xilinx/cells_xtra.v;"
            flow="proc; opt -fast; wreduce; peepopt; opt_clean; alumacc; opt -fast; memory -nomap; opt_clean"
            flow+="; synth_xilinx -family xcup -noiopad -top $m -run map_memory:fine; opt -fast -full; xilinx_srl -variable -minlen 3"
            flow+="; techmap -map +/techmap.v -D LUT_SIZE=6 -map +/xilinx/arith_map.v; opt -fast"
            flow+="; synth_xilinx -family xcup -noiopad -top $m -run map_cells:check" ;;
    esac
    local start; start=$(date +%s)
    if [ -n "${SYNTH_REUSE:-}" ] && [ -f "$SYNTH_REUSE/$m.mapped.il" ] && ! reusable "$m"; then
        echo "   $m: not reused (other parameters, source or children than in $SYNTH_REUSE)" >&2
    elif [ -n "${SYNTH_REUSE:-}" ] && [ -f "$SYNTH_REUSE/$m.mapped.il" ]; then
        cp "$SYNTH_REUSE/$m.mapped.il" "$tmp/"
        # A kept run holds every netlist it used, so it can be reused in turn.
        [ -z "${SYNTH_KEEP:-}" ] || { mkdir -p "$SYNTH_KEEP"; cp "$tmp/$m.mapped.il" "$SYNTH_KEEP/"; }
        echo "   $m (x${INST[$m]}): reused from $SYNTH_REUSE" >&2
        return 0
    fi
    yosys -p "$lib read_rtlil $tmp/design.il; hierarchy -top $m; $bb $flow; select $m; write_rtlil -selected $tmp/$m.mapped.il" > "$tmp/$m.log" 2>&1 &
    local p=$!
    watch $p "$tmp/$m.log" "$m"
    if ! wait $p; then
        tail -20 "$tmp/$m.log" >&2
        echo "yosys failed on $m" >&2
        return 1
    fi
    [ -z "${SYNTH_KEEP:-}" ] || cp "$tmp/$m.mapped.il" "$tmp/$m.log" "$SYNTH_KEEP/"
    echo "   $m (x${INST[$m]}): $(( $(date +%s) - start )) s" >&2
}
echo "== synthesising each module ($jobs_max at a time)" >&2
running=0
fail=0
for m in $order; do
    if [ "$running" -ge "$jobs_max" ]; then
        wait -n || fail=1
        running=$((running - 1))
    fi
    synth_one "$m" &
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
    wait -n || fail=1
    running=$((running - 1))
done
[ $fail -eq 0 ] || { echo "synthesis failed" >&2; exit 1; }
echo "   every module mapped, $(elapsed) s" >&2

# 3. The mapped modules as one design: totals, then the flattened netlist's depth.
reads=""
for m in $order; do reads="$reads read_rtlil $tmp/$m.mapped.il;"; done
yosys -p "read_verilog -lib -specify +/xilinx/cells_sim.v; read_verilog -lib +/xilinx/cells_xtra.v; $reads
          hierarchy -top prism_switch_core; tee -o $tmp/stat.txt stat -top prism_switch_core;
          flatten; blackbox =A:whitebox; setattr -unset src; write_json $tmp/switch.json" > "$tmp/join.log" 2>&1 \
    || { tail -20 "$tmp/join.log"; echo "yosys failed to join the modules" >&2; exit 1; }
python3 synth_switch.py cut "$tmp/switch.json" "$tmp/switch_cut.json"
rc=0
python3 "$depth" --top prism_switch_core --max "$budget" --paths 20 "$tmp/switch_cut.json" > "$tmp/depth" || rc=$?

# The whole design's cell counts: the last block of `stat -top`.
awk '/=== design hierarchy ===/ {h=1} h' "$tmp/stat.txt" > "$tmp/total"
lutram=$(awk '/ (RAM64M|RAM32M|RAM128X1D|RAM256X1S) / {s+=4*$2} / (RAM64X1D|RAM32X1D|RAM128X1S) / {s+=2*$2}
              / (RAM64X1S|RAM32X1S|SRL16E|SRLC32E) / {s+=$2} / (RAM64M8|RAM32M16) / {s+=8*$2} END {print s+0}' "$tmp/total")
luts=$(awk -v mem="$lutram" '/ LUT[1-6] / {s+=$2} END {print s+mem}' "$tmp/total")
ffs=$(awk '/ FD[RSCP]E / {s+=$2} END {print s+0}' "$tmp/total")
bram36=$(awk '/ RAMB36E2 / {s+=$2} END {print s+0}' "$tmp/total")
bram18=$(awk '/ RAMB18E2 / {s+=$2} END {print s+0}' "$tmp/total")
uram=$(awk '/ URAM288 / {s+=$2} END {print s+0}' "$tmp/total")
dsp=$(awk '/ DSP48E2 / {s+=$2} END {print s+0}' "$tmp/total")
echo "== prism_switch_core$([ $fp32 -eq 0 ] || echo ' FP32-only') (Yosys 0.23, synth_xilinx -family xcup, $(elapsed) s)"
echo "  $luts LUTs ($lutram as memory), $ffs flip-flops, $bram36 RAMB36E2, $bram18 RAMB18E2, $uram URAM288, $dsp DSP48E2"
echo "  per module (LUTs each x instances):"
for m in $order; do
    l=$(awk '/ LUT[1-6] / {s+=$2} END {print s+0}' <(sed -n "/^=== $m ===/,/^===/p" "$tmp/stat.txt"))
    printf '    %-28s %8d x %d\n' "$m" "$l" "${INST[$m]}"
done
sed -n '1,2p' "$tmp/depth" | sed 's/^/  /'
sed -n '4,$p' "$tmp/depth" | head -10 | cut -c1-220 | sed 's/^/  /'
if [ -n "${SYNTH_KEEP:-}" ]; then
    mkdir -p "$SYNTH_KEEP"
    cp "$tmp"/*.log "$tmp/switch_cut.json" "$tmp/stat.txt" "$tmp/depth" "$tmp/modules" "$tmp/names" "$tmp/sources" "$SYNTH_KEEP/"
fi
[ "$rc" -eq 0 ] || { echo "deepest path over $budget levels" >&2; exit 1; }
