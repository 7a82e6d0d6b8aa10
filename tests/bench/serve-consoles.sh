#!/usr/bin/env bash
# What serve's console readers cost (issue 36 point 5): MACHINES consoles at 115200 baud
# (kernel and IGT console text, boots cut by the firmware's reset) and one flooding as fast as
# serve reads, fed over TCP as a console server (ser2net) would, while a client times serve's
# boot answers and small uploads; the same load without consoles, in the same run, is the peer.
# Prints p50/p99 per phase, serve's CPU seconds and storage writes, and the cost per
# machine-hour of console (tests/bench/console-load.py has the phases).
#
# usage: tests/bench/serve-consoles.sh [BUILD] [MACHINES] [SECONDS-PER-PHASE] [ROUNDS]
#        BENCH_MASTER_TUNABLES=VALUE: serve's GLIBC_TUNABLES (default: the service unit's)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
machines=${2:-40}
seconds=${3:-10}
rounds=${4:-3}
src=$(cd "$(dirname "$0")/../.." && pwd)
# The master runs as its service unit runs it: with the unit's GLIBC_TUNABLES.
unit_tunables=$(sed -n 's/^Environment=GLIBC_TUNABLES=//p' "$src/aggregator/master/bootci-serve.service")
[ -n "$unit_tunables" ] || { echo "bench: no Environment=GLIBC_TUNABLES= in bootci-serve.service" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
BENCH_SERVE_TUNABLES=${BENCH_MASTER_TUNABLES-$unit_tunables} \
	/usr/bin/python3 "$src/tests/bench/console-load.py" run "$build/host/bin/bootci-aggregator" "$work" \
	--machines "$machines" --seconds "$seconds" --rounds "$rounds"
