#!/usr/bin/env bash
# serve's matrix page of a build run on MACHINES machines of RESULTS results
# each (default 40 x 10,000, a day of the seed's lab): how long serve takes to
# answer its default view (the changed tests first, one page of rows), from
# the store (the build's report against its baseline included) and then from
# its cache, and the whole matrix (?per_page=all); a result page; and how long
# Debian's headless Chromium takes to load and lay out (--dump-dom, after the
# load event) the default view, the changed rows (?status=changed), the whole
# matrix through serve, and its peer in the same run: the page as it was before
# serve paged it, the whole matrix with the filter script that hid rows in the
# browser (`report --html --results-url`, as serve answered /builds/BUILD).
# The runs and their baseline are generated in igt_runner's layout
# (report-runs.py) and ingested for real into SQLite, one run per machine
# (the same results on each: 1 test in 97 failing, against a passing base).
# usage: pages-matrix.sh BUILD_DIR [RESULTS] [MACHINES]
#        BENCH_MASTER_TUNABLES=VALUE: the aggregator's GLIBC_TUNABLES (default: the service unit's)
#        BENCH_CHROMIUM=0: no Chromium timings (only serve's)
set -euo pipefail
build=$(cd "$1" && pwd)
count=${2:-10000}
machines=${3:-40}
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
for ((m = 1; m <= machines; m++)); do
	master ingest --data "$work/data" --machine "bench-$m" --run-id "base-$m" --build base "$work/base" >/dev/null
	master ingest --data "$work/data" --machine "bench-$m" --run-id "new-$m" --build new "$work/new" >/dev/null
done
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
cp "$work/page" "$work/default.html"
cached=$(timed /builds/new)
full=$(timed '/builds/new?per_page=all')
cp "$work/page" "$work/full.html"
cells=$(grep -o '/results/' "$work/full.html" | wc -l)
result=$(timed "/machines/bench-1/runs/new-1/results/igt@bench_0@subtest_1")
printf 'pages-matrix: %d machines x %d results (%d cells): default view %d bytes, rendered %.3f s, from the cache %.3f s; whole matrix %d bytes, %.3f s; a result page %.3f s\n' \
	"$machines" "$count" "$cells" "$(stat -c %s "$work/default.html")" "$first" "$cached" \
	"$(stat -c %s "$work/full.html")" "$full" "$result"
[ "${BENCH_CHROMIUM:-1}" != 0 ] || exit 0

# The peer: the whole matrix as serve answered it before it paged, with its filter script.
master report --build new --data "$work/data" --html "$work/old" --results-url "$base" >/dev/null
browser=$(command -v chromium)
# chrome_seconds URL: the wall time of headless Chromium loading URL and dumping its DOM.
chrome_seconds() {
	local start end
	start=$(date +%s.%N)
	timeout 600 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$work/profile" --dump-dom "$1" >"$work/dom" 2>>"$work/chrome.log" || {
		echo "pages-matrix: chromium failed on $1" >&2
		exit 1
	}
	end=$(date +%s.%N)
	echo "$end - $start" | bc
}
blank=$(chrome_seconds "about:blank")
default=$(chrome_seconds "$base/builds/new")
default_rows=$(grep -c '<tr class="r">' "$work/dom")
changed=$(chrome_seconds "$base/builds/new?status=changed")
changed_rows=$(grep -c '<tr class="r">' "$work/dom")
whole=$(chrome_seconds "$base/builds/new?per_page=all")
old=$(chrome_seconds "file://$work/old/new/index.html")
old_rows=$(grep -c '<tr class="r"' "$work/dom")
printf 'pages-matrix: chromium --headless (--dump-dom, %.2f s for about:blank): default view (%d rows) %.2f s; ?status=changed (%d rows) %.2f s; whole matrix through serve %.2f s; peer, the page before paging (%d rows, its filter in the browser) %.2f s\n' \
	"$blank" "$default_rows" "$default" "$changed_rows" "$changed" "$whole" "$old_rows" "$old"
