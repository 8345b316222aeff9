#!/usr/bin/env bash
# The README's main job on its embedded default, no NIC needed:
#   1. decode the golden capture (every PRISM class, command and number format);
#   2. start prism-switch (DPDK, --no-huge) on two veth pairs through net_af_packet;
#   3. run prism-pktgen as the Aggregation Manager and 4 ranks against it:
#      REDUCE and ALLREDUCE, FP32_ARRIVAL and KULISCH_FIXED, every RESULT verified
#      exactly, latency percentiles printed;
#   4. stop the switch (SIGTERM) and print its counters;
#   5. software vs hardware: the same scenario (configs/bench/demo.toml) through
#      prism-switch on net_memif (two DPDK processes, CPUs 0 and 1) and
#      through the RTL switch (Verilator),
#      every RESULT exact on both, and the latency report with its plots;
#   6. a spine-leaf tree of three prism-switch processes (prism-tree): clean
#      links, 1% impaired links, and a leaf killed mid-operation.
# Needs root (veth pairs, network namespaces). Safe to run twice.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need_rust
need_apt libdpdk-dev dpdk pkg-config iproute2 verilator g++
log "building (release)"
cargo build --release --locked -q -p prism-dataplane -p prism-pktgen -p prism-bench
bin=target/release

log "1/5 golden capture (prism-decode, first frames)"
$bin/prism-decode 2>/dev/null | head -n 12

log "2/5 prism-switch on veth pairs prdm0 <-> prdm0p, prdm1 <-> prdm1p"
cleanup() {
    [ -n "${sw:-}" ] && kill -TERM "$sw" 2>/dev/null && wait "$sw" 2>/dev/null || true
    ip link del prdm0 2>/dev/null || true
    ip link del prdm1 2>/dev/null || true
}
trap cleanup EXIT
for i in 0 1; do
    ip link del prdm$i 2>/dev/null || true
    ip link add prdm$i type veth peer name prdm${i}p
    for n in prdm$i prdm${i}p; do
        sysctl -qw net.ipv6.conf.$n.disable_ipv6=1 || true
        ip link set $n up
    done
done
stats=$(mktemp --suffix=.json)
ready=$(mktemp -u --suffix=.ready)
$bin/prism-switch --no-huge --no-pci -l 0 -m 256 --log-level lib.eal:error --file-prefix prism-demo \
    --vdev net_af_packet0,iface=prdm0 --vdev net_af_packet1,iface=prdm1 \
    -- --config configs/single-veth.toml --stats-interval 0 --stats-json "$stats" --ready-file "$ready" 2>/tmp/prism-demo-switch.log &
sw=$!
wait_ready "$ready" "$sw" 30 || { cat /tmp/prism-demo-switch.log >&2; exit 1; }

log "3/5 prism-pktgen: 4 ranks on two ports, 1,000,000 elements each"
gen=$(date +%s)
for op in reduce allreduce; do
    for policy in fp32-arrival kulisch; do
        gen=$((gen + 1))
        echo "--- $op, $policy, output fp32"
        $bin/prism-pktgen --switch afpacket:prdm0p,prdm1p --rank-ports 0,1 --ranks 4 --op $op --dest 1 \
            --policy $policy --output fp32 --len 1000000 --op-id 1 --generation $gen 2>/dev/null
    done
done
kill -TERM "$sw"
wait "$sw" || true
sw=
log "switch counters ($stats)"
grep -E '"(data_applied|data_duplicates|results_sent|control_accepted)"' "$stats" | sed 's/^ */  /'

log "4/5 software vs hardware switch, same frames: prism-bench report configs/bench/demo.toml"
$bin/prism-bench report configs/bench/demo.toml --out bench/out
log "report: bench/out/demo/report.html (and report.md, summary.json, *.hlog, *.svg)"

log "5/5 a spine-leaf tree: three prism-switch processes (S0 over L0, L1), 4 ranks, PROGRESS and retransmission, clean and 1% impaired links, a leaf killed mid-operation"
$bin/prism-tree --len 300000 --impair drop=0.01,dup=0.01,corrupt=0.01,reorder=0.01 --kill 2>&1 | grep -vE "INFO|EAL:|TELEMETRY"
