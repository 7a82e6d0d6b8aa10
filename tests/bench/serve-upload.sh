#!/usr/bin/env bash
# Upload throughput of `bootci-aggregator serve` on loopback: one large run
# (SIZE MiB of incompressible data) uploaded alone, then CLIENTS machines
# uploading real runs at once; prints MB/s end to end (body received, digest
# checked, archive validated, kept durably, ingested) and serve's peak memory.
#
# usage: tests/bench/serve-upload.sh [BUILD] [SIZE-MiB] [CLIENTS]
#        BENCH_MASTER_TUNABLES=VALUE: serve's GLIBC_TUNABLES (default: the service unit's)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
size=${2:-200}
clients=${3:-40}
src=$(cd "$(dirname "$0")/../.." && pwd)
aggregator=$build/host/bin/bootci-aggregator
tool=$src/tests/aggregator/serve-tool.py
# The master runs as its service unit runs it (aggregator/master/bootci-serve.service): with
# the unit's GLIBC_TUNABLES (malloc in transparent huge pages), read from the unit.
# BENCH_MASTER_TUNABLES=VALUE runs it with another value (empty: glibc's defaults), for a
# before/after. The peers (piglit, tar, curl) run with the environment as it is.
unit_tunables=$(sed -n 's/^Environment=GLIBC_TUNABLES=//p' "$src/aggregator/master/bootci-serve.service")
[ -n "$unit_tunables" ] || { echo "bench: no Environment=GLIBC_TUNABLES= in bootci-serve.service" >&2; exit 1; }
master_tunables=${BENCH_MASTER_TUNABLES-$unit_tunables}
# master ARGS...: the aggregator as the unit runs it
master() { GLIBC_TUNABLES=$master_tunables "$aggregator" "$@"; }
work=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

printf 'bench sha256:%s\n' "$(printf %s bench-token | sha256sum | cut -d' ' -f1)" >"$work/tokens"
mkdir -p "$work/tokens.d"
# Two digits, as serve-tool.py names its clients (seq -w pads to the widest number only).
for i in $(seq 0 $((clients - 1)) | xargs printf '%02d '); do
	printf 'load%s sha256:%s\n' "$i" "$(printf %s "token-of-load$i" | sha256sum | cut -d' ' -f1)" >>"$work/tokens"
	printf 'token-of-load%s\n' "$i" >"$work/tokens.d/load$i"
done
# Not through master(): a function in the background is a subshell, and $! must be serve.
GLIBC_TUNABLES=$master_tunables "$aggregator" serve --data "$work/data" --listen 127.0.0.1:0 --tokens "$work/tokens" \
	--port-file "$work/port" 2>"$work/server.log" &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
base=http://127.0.0.1:$(cat "$work/port")

mkdir -p "$work/run"
cp -r "$src/tests/resultgen/scenarios/piglit-style-default-level/." "$work/run/"
head -c "${size}M" /dev/urandom >"$work/run/big.bin"
python3 "$tool" archive good "$work/big.tar.zst" --machine bench --run big --dir "$work/run" >/dev/null
sha=$(sha256sum "$work/big.tar.zst" | cut -d' ' -f1)
bytes=$(stat -c %s "$work/big.tar.zst")
start=$(date +%s.%N)
code=$(curl -s -o /dev/null -w '%{http_code}' -T "$work/big.tar.zst" -H 'Expect:' \
	-H 'Authorization: Bearer bench-token' -H "X-Bootci-Sha256: $sha" \
	"$base/api/v1/machines/bench/runs/big")
end=$(date +%s.%N)
[ "$code" = 201 ] || { echo "serve-upload: the upload got $code" >&2; exit 1; }
python3 -c "import sys; b,s,e=map(float,sys.argv[1:]); print('serve: one %.0f MB upload: %.2f s, %.1f MB/s end to end' % (b/1e6, e-s, b/1e6/(e-s)))" "$bytes" "$start" "$end"

start=$(date +%s.%N)
python3 "$tool" load "$base" "$work/tokens.d" --clients "$clients" \
	--dir "$src/tests/resultgen/scenarios/piglit-style-default-level" >"$work/load.out"
end=$(date +%s.%N)
total=$(du -cb "$work"/data/archives/*.tar.zst | tail -1 | cut -f1)
python3 -c "import sys; n,b,s,e,big=sys.argv[1:]; b=float(b)-float(big); t=float(e)-float(s); print('serve: %s uploads at once (each client packing its 256 KiB run first): %.2f s, %.1f MB/s together' % (n, t, b/1e6/t))" \
	"$clients" "$total" "$start" "$end" "$bytes"
echo "serve: peak memory $(grep VmHWM "/proc/$pid/status" | awk '{print $2, $3}')"
