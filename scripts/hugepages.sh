#!/usr/bin/env bash
# Hugepages for DPDK: reserve N 2 MiB pages (default 512 = 1 GiB) and mount hugetlbfs.
#   scripts/hugepages.sh [N]      reserve and mount
#   scripts/hugepages.sh release  give the pages back
# Without hugepages, run DPDK programs with --no-huge (and -m MB): every example
# in this repository does, at some cost in TLB misses (see docs/performance.md).
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "error: needs root" >&2; exit 1; }
if [ "${1:-}" = release ]; then
    echo 0 > /proc/sys/vm/nr_hugepages
    mountpoint -q /dev/hugepages && umount /dev/hugepages || true
    echo "hugepages released"
    exit 0
fi
n=${1:-512}
echo "$n" > /proc/sys/vm/nr_hugepages
got=$(cat /proc/sys/vm/nr_hugepages)
mkdir -p /dev/hugepages
mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages
echo "hugepages: $got of $n reserved ($(grep Hugepagesize /proc/meminfo | awk '{print $2, $3}') each), hugetlbfs on /dev/hugepages"
[ "$got" -ge "$n" ] || echo "warning: fewer pages than asked (memory fragmented?)" >&2
