# Shared by the README's commands: install what is missing, nothing else. Safe to run twice.

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# need_apt PKG...: installs the Debian packages that are not installed yet.
need_apt() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "error: need root to install: ${missing[*]} (run as root or install them first)" >&2
        exit 1
    fi
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# need_rust: cargo on PATH, installing rustup's stable toolchain if there is none.
need_rust() {
    [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
    if ! command -v cargo >/dev/null 2>&1; then
        need_apt curl ca-certificates build-essential
        log "installing the Rust toolchain (rustup, stable)"
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
        . "$HOME/.cargo/env"
    fi
    need_apt build-essential pkg-config libdpdk-dev
}
