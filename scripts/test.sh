#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need_rust
need_apt tshark
log "cargo test --workspace"
cargo test --workspace --locked
