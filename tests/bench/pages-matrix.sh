#!/usr/bin/env bash
# How long serve takes to answer the matrix page of a 10,000-result run (the
# goal: within a second), rendered from the store (the build's report against
# its baseline included) and then from the cache; and a result page. The run
# and its baseline are generated in igt_runner's layout (report-runs.py) and
# ingested for real into SQLite.
# usage: pages-matrix.sh BUILD_DIR [RESULTS]
#        BENCH_MASTER_TUNABLES=VALUE: the aggregator's GLIBC_TUNABLES (default: the service unit's)
set -euo pipefail
build=$(cd "$1" && pwd)
count=${2:-10000}
src=$(cd "$(dirname "$0")/../.." && pwd)
aggregator=$build/host/bin/bootci-aggregator
gen=$src/tests/aggregator/report-runs.py
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

specs() {
	local i
	for ((i = 0; i < count; i++)); do
		if [ $((i % 97)) = 0 ] && [ "$1" = new ]; then echo "bench_$((i / 100))@subtest_$i=fail"
		elif [ $((i % 13)) = 0 ]; then echo "bench_$((i / 100))@subtest_$i=skip"
		else echo "bench_$((i / 100))@subtest_$i=pass"; fi
	done
}
master build add base --tree drm-tip --commit a --tier full --registered 1000 --data "$work/data" >/dev/null
master build add new --tree drm-tip --commit b --tier fast --registered 2000 --data "$work/data" >/dev/null
mapfile -t base_specs < <(specs base)
mapfile -t new_specs < <(specs new)
"$gen" "$work/base" "${base_specs[@]}"
"$gen" "$work/new" "${new_specs[@]}"
master ingest --data "$work/data" --machine bench-1 --build base "$work/base" >/dev/null
master ingest --data "$work/data" --machine bench-1 --build new "$work/new" >/dev/null
: >"$work/tokens"
# Not through master(): a function in the background is a subshell, and $! must be serve.
GLIBC_TUNABLES=$master_tunables "$aggregator" serve --data "$work/data" --listen 127.0.0.1:0 --tokens "$work/tokens" \
	--port-file "$work/port" >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
base=http://127.0.0.1:$(cat "$work/port")
# timed URL: "CODE SECONDS" of one GET; anything but 200 ends the bench.
timed() {
	local out
	out=$(curl -s -o "$work/page" -w '%{http_code} %{time_total}' "$base$1")
	if [ "${out%% *}" != 200 ]; then
		echo "pages-matrix: GET $1 answered ${out%% *}" >&2
		exit 1
	fi
	echo "${out#* }"
}
first=$(timed /builds/new)
cp "$work/page" "$work/matrix.html"
cached=$(timed /builds/new)
cells=$(grep -o '/results/' "$work/matrix.html" | wc -l)
run_id=$(grep -m1 -o 'href="/machines/bench-1/runs/[^/]*/' "$work/matrix.html" | cut -d/ -f5)
result=$(timed "/machines/bench-1/runs/$run_id/results/igt@bench_0@subtest_1")
printf 'pages-matrix: %d results (%d cells, %d bytes): matrix rendered %.3f s, from the cache %.3f s; a result page %.3f s (goal: matrix < 1 s)\n' \
	"$count" "$cells" "$(stat -c %s "$work/matrix.html")" "$first" "$cached" "$result"
