#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs every
# test binary (all of them, even after a failure), each step with a time
# limit, and ends with one total line.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need_rust
need_apt tshark libdpdk-dev dpdk dpdk-dev pkg-config iproute2 verilator g++ yosys python3
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT
status=0
log "cargo build --workspace (tests and every binary the tests start)"
run_step "${PRISM_BUILD_TIMEOUT:-2400}" "$log_dir/build.log" cargo build --workspace --tests --locked || { echo "error: the build failed" >&2; exit 1; }
log "cargo test --workspace --no-fail-fast"
run_step "${PRISM_TEST_TIMEOUT:-1800}" "$log_dir/test.log" cargo test --workspace --locked --no-fail-fast || status=1
sweep_leftovers || status=1
# The AVX-512 kernels, which this machine's CPU may lack, on an emulated one.
log "AVX-512 kernels on an emulated CPU (tools/avx512-emu)"
need_avx512_emu
cargo build --release --locked -p prism-avx512-emu
run_step 600 "$log_dir/emu.log" env LD_PRELOAD="$EMU_DIR/libisoc23.so" "$EMU_DIR/venv/bin/python" tools/avx512-emu/run.py target/release/libprism_avx512_emu.so || status=1
sweep_leftovers || status=1
# The RTL modules that close timing must keep closing it (rtl/timing.sh, docs/rtl.md).
log "RTL timing check (Yosys synth_xilinx + logic-depth, 6 levels)"
run_step 1500 "$log_dir/timing.log" bash rtl/timing.sh || status=1
# One closing line over every test binary (cargo ends on its last, often empty, doc-test run).
binaries=$(grep -cE '^ +(Running|Doc-tests) ' "$log_dir/test.log" || true)
cat "$log_dir/test.log" "$log_dir/emu.log" | awk -v bins="$binaries" '/^(test result:|avx512-emu:)/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     END { printf "total: %d passed, %d failed, %d skipped, in %d test binaries\n", p, f, s, bins }'
exit "$status"
