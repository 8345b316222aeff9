#!/usr/bin/env bash
# The README's main job on its embedded default: decode the golden capture
# (every PRISM class, command and number format) with prism-decode -v.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need_rust
log "building prism-decode (release)"
cargo build --release --locked -q -p prism-dataplane --bin prism-decode
./target/release/prism-decode -v "$@"
