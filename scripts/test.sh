#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need_rust
need_apt tshark libdpdk-dev dpdk dpdk-dev pkg-config iproute2 verilator g++
log "cargo test --workspace"
log_file=$(mktemp)
trap 'rm -f "$log_file"' EXIT
status=0
cargo test --workspace --locked 2>&1 | tee "$log_file" || status=$?
# The AVX-512 kernels, which this machine's CPU may lack, on an emulated one.
log "AVX-512 kernels on an emulated CPU (tools/avx512-emu)"
need_avx512_emu
cargo build --release --locked -p prism-avx512-emu
LD_PRELOAD="$EMU_DIR/libisoc23.so" timeout 600 "$EMU_DIR/venv/bin/python" tools/avx512-emu/run.py target/release/libprism_avx512_emu.so 2>&1 | tee -a "$log_file" || status=$?
# One closing line over every test binary (cargo ends on its last, often empty, doc-test run).
awk '/^(test result:|avx512-emu:)/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     END { printf "total: %d passed, %d failed, %d skipped\n", p, f, s }' "$log_file"
exit "$status"
