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
# One closing line over every test binary (cargo ends on its last, often empty, doc-test run).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) s += $i } }
     END { printf "total: %d passed, %d failed, %d skipped\n", p, f, s }' "$log_file"
exit "$status"
