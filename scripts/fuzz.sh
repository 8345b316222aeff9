#!/usr/bin/env bash
# Fuzz the parser (parse, emit, reparse) seeded with the golden frames.
# Usage: scripts/fuzz.sh [SECONDS]   (default 600). Needs a nightly toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need_rust
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
cargo run -q -p prism-dataplane --bin prism-golden -- --out target/golden-tmp --corpus fuzz/corpus/parse
cargo +nightly fuzz run parse fuzz/corpus/parse -- -max_total_time="${1:-600}" -max_len=9100
