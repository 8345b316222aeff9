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
    # The test command's lint step; rustup's minimal profile leaves clippy out.
    if ! cargo clippy --version >/dev/null 2>&1; then
        log "installing clippy (rustup component add clippy)"
        rustup component add clippy
    fi
    # The format check (rustfmt.toml); the minimal profile leaves it out too.
    if ! cargo fmt --version >/dev/null 2>&1; then
        log "installing rustfmt (rustup component add rustfmt)"
        rustup component add rustfmt
    fi
}

# need_avx512_emu: BochsCPU (bochscpu-python, from PyPI) in a venv under
# $EMU_DIR, and the shim its wheel needs on glibc 2.36 (isoc23.c), for
# tools/avx512-emu/run.py, which runs the AVX-512 kernels on an emulated CPU.
EMU_DIR=${PRISM_EMU_DIR:-/var/tmp/prism-avx512-emu}
need_avx512_emu() {
    need_apt python3 python3-venv gcc
    if ! "$EMU_DIR/venv/bin/python" -c 'import importlib.metadata as m; assert m.version("bochscpu-python") == "0.4.0"' >/dev/null 2>&1; then
        log "installing bochscpu-python 0.4.0 into $EMU_DIR/venv"
        mkdir -p "$EMU_DIR"
        python3 -m venv "$EMU_DIR/venv"
        "$EMU_DIR/venv/bin/pip" install -q bochscpu-python==0.4.0
    fi
    cc -shared -fPIC -O2 -o "$EMU_DIR/libisoc23.so" tools/avx512-emu/isoc23.c
}

# run_step SECONDS LOG CMD...: runs CMD with its output in LOG (shown live),
# killed after SECONDS with a message saying so. Output goes to a file, not
# a pipe, so a process that outlives CMD cannot keep this script waiting.
# Returns CMD's status (124 when it timed out).
# Each step's wall time goes to stderr and into STEP_TIMES (step_summary).
STEP_TIMES=()
run_step() {
    local secs=$1 log=$2 rc=0 start=$SECONDS
    shift 2
    : >"$log"
    timeout --kill-after=20 "$secs" "$@" >>"$log" 2>&1 &
    local pid=$!
    tail -n +1 -f --pid="$pid" "$log"
    wait "$pid" || rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "error: '$*' did not finish within $secs s: stopped" | tee -a "$log" >&2
    fi
    local took=$((SECONDS - start))
    STEP_TIMES+=("$(basename "$log" .log) ${took}s/${secs}s")
    log "$(basename "$log" .log): ${took} s (limit ${secs} s), exit ${rc}"
    return "$rc"
}

# disk_free [GB]: the space left where the build writes (target/) and where
# the timing check writes (TMPDIR), one line; with GB, a warning when either
# has less.
disk_free() {
    local need=${1:-0} t=${TMPDIR:-/tmp} line=""
    mkdir -p target
    for d in target "$t"; do
        line="$line $(df -Ph "$d" | awk 'NR == 2 { print $4 }') free under $d,"
        if [ "$need" -gt 0 ] && [ "$(df -Pk "$d" | awk 'NR == 2 { print $4 }')" -lt $((need * 1048576)) ]; then
            echo "warning: under $need GB free under $d; a clean run needs about that much (disk full fails the build or the timing check)" >&2
        fi
    done
    echo "disk:${line%,}" >&2
}

# step_summary: one line with every step's time against its limit.
step_summary() {
    [ ${#STEP_TIMES[@]} -eq 0 ] || echo "steps: ${STEP_TIMES[*]}"
}

# sweep_leftovers: kills every process still running from this checkout's
# target/ (a switch a test failed to stop), names each, and fails if any.
sweep_leftovers() {
    local root killed=() exe pid
    root=$(pwd -P)/target
    for p in /proc/[0-9]*; do
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        case "$exe" in
            "$root"/*)
                pid=${p#/proc/}
                kill -9 "$pid" 2>/dev/null && killed+=("$(basename "$exe")[$pid]")
                ;;
        esac
    done
    if [ ${#killed[@]} -gt 0 ]; then
        echo "error: processes outlived their tests and were killed: ${killed[*]}" >&2
        return 1
    fi
}

# wait_ready FILE PID SECONDS: waits for a switch's --ready-file, failing
# when the process exits first or the deadline passes.
wait_ready() {
    local file=$1 pid=$2 secs=$3 start=$SECONDS
    until [ -s "$file" ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "error: the switch (pid $pid) exited before it was ready" >&2
            return 1
        fi
        if [ $((SECONDS - start)) -ge "$secs" ]; then
            echo "error: the switch (pid $pid) was not ready after $secs s" >&2
            return 1
        fi
        sleep 0.05
    done
}
