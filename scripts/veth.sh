#!/usr/bin/env bash
# Veth pairs for configs/single-veth.toml (needs root):
#   scripts/veth.sh up     pvs0 <-> pvp0, pvs1 <-> pvp1 (the switch takes pvsN, pktgen pvpN)
#   scripts/veth.sh down   removes them
set -euo pipefail
case "${1:-}" in
    up)
        for i in 0 1; do
            ip link del pvs$i 2>/dev/null || true
            ip link add pvs$i type veth peer name pvp$i
            for n in pvs$i pvp$i; do
                sysctl -qw net.ipv6.conf.$n.disable_ipv6=1 || true
                ip link set $n up
            done
        done
        echo "pvs0 <-> pvp0, pvs1 <-> pvp1 up"
        ;;
    down)
        for i in 0 1; do ip link del pvs$i 2>/dev/null || true; done
        echo "pvs0, pvs1 removed"
        ;;
    *)
        echo "usage: $0 up|down" >&2
        exit 2
        ;;
esac
