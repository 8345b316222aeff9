# What rtl/timing.sh, rtl/synth.sh and rtl/synth_switch.sh share; sourced
# from rtl/ (each script cds there first).

# $depth: the workplace's logic-depth (LOGIC_DEPTH, else ../shared/tools
# beside the checkout, else /work/shared/tools), or exit with where it looked.
find_logic_depth() {
    depth=${LOGIC_DEPTH:-}
    local d
    for d in "$(cd .. && pwd)/../shared/tools/logic-depth" /work/shared/tools/logic-depth; do
        [ -n "$depth" ] || { [ -f "$d" ] && depth=$d; }
    done
    [ -n "$depth" ] && [ -f "$depth" ] || { echo "logic-depth not found (looked in ../shared/tools beside the checkout and /work/shared/tools; set LOGIC_DEPTH)" >&2; exit 1; }
}

# Yosys 0.23 reads no `import pkg::*` and sizes no port from a package
# constant: the package's localparams are inlined where it is imported, and
# prism_pkg::CNT_TOTAL becomes its value.
# pkg_params DIR: DIR/params.svh and $cnt_total for inline_pkg.
pkg_params() {
    pkg_svh=$1/params.svh
    sed -n '/^  localparam/p' sv/prism_pkg.sv > "$pkg_svh"
    cnt_total=$(sed -n 's/^  localparam int CNT_TOTAL = \([0-9]*\);/\1/p' "$pkg_svh")
    [ -n "$cnt_total" ] || { echo "sv/prism_pkg.sv: no CNT_TOTAL" >&2; exit 1; }
}
# inline_pkg SRC DST [SED_ARGS...]: SRC with the package inlined, into DST.
inline_pkg() {
    local src=$1 dst=$2
    shift 2
    sed -e '/import prism_pkg::\*;/r '"$pkg_svh" -e 's/import prism_pkg::\*;//' \
        -e "s/prism_pkg::CNT_TOTAL/$cnt_total/g" "$@" "$src" > "$dst"
}
