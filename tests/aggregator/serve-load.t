#!/usr/bin/env bash
# Load: 40 machines upload at once on loopback (each a real results directory
# and 256 KiB of incompressible noise), bounded by a timeout: every upload is
# answered 201 with its own digest and ingested into the store, every run is
# kept exactly once, byte for byte, and none is lost.
set -uo pipefail
# shellcheck source=tests/aggregator/serve-lib.sh
. "$SRC/tests/aggregator/serve-lib.sh"

clients=40
mkdir -p "$work/tokens.d"
for i in $(seq -w 0 $((clients - 1))); do
	add_machine "load$i" "token-of-load$i"
	printf 'token-of-load%s\n' "$i" >"$work/tokens.d/load$i"
done
start_server --threads 4

timeout 300 python3 "$tool" load "$base" "$work/tokens.d" --clients $clients \
	--dir "$SRC/tests/resultgen/scenarios/piglit-style-default-level" >"$work/load.out" 2>&1
status=$?
answered=$(grep -c ' 201 ok ' "$work/load.out")
if [ "$status" = 0 ] && [ "$answered" = $clients ]; then
	ok "$clients uploads at once: all answered 201 with their digest, all ingested"
else
	not_ok "$clients uploads at once: status $status, $answered answered 201"
	diag <"$work/load.out"
fi

missing=
while read -r machine _ _ sha; do
	if [ ! -e "$work/data/runs/$machine/run1.json" ] ||
		! grep -q "\"sha256\": \"$sha\"" "$work/data/runs/$machine/run1.json" ||
		[ "$(sha256sum "$work/data/archives/$sha.tar.zst" 2>/dev/null | cut -d' ' -f1)" != "$sha" ]; then
		missing="$missing $machine"
	fi
done <"$work/load.out"
check "every run recorded with its digest and its archive intact${missing:+ (missing:$missing)}" test -z "$missing"
check "one archive per run: $(find "$work/data/archives" -type f | wc -l)" \
	test "$(find "$work/data/archives" -type f | wc -l)" = $clients
check "one log line per request: $(grep -c 'PUT /api/v1/machines/load' "$work/server.log")" \
	test "$(grep -c 'PUT /api/v1/machines/load' "$work/server.log")" = $clients
stop_server
check "SIGTERM after the load: exit 0" test "$server_status" = 0
done_testing
