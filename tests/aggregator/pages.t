#!/usr/bin/env bash
# serve's pages over real HTTP (pages.h): the builds, a build's matrix (a cell
# per result, a class per status, the change against the baseline marked),
# a result with its logs escaped, a test's history, a machine's suspend page,
# the metrics page and /api/v1/metrics; no token needed to read; bad names
# refused, paths that try to leave the data folder refused, a page rendered
# again after an ingest through the server.
set -uo pipefail
# shellcheck source=tests/aggregator/pages-lib.sh
. "$SRC/tests/aggregator/pages-lib.sh"
plan 37

pages_store
check "two builds, four runs ingested" test $? = 0
pages_crash_run
check "a run whose boot died ingested, with its pstore record" test $? = 0
add_machine lab-1 token-1
start_server

get() { curl -s -o "$work/body" -w '%{http_code}' "$base$1"; }

code=$(get /)
check "/ answers 200 without a token" test "$code" = 200
check "... listing both builds with links" grep -q 'href="/builds/drm-tip-2"' "$work/body"

code=$(get /builds/drm-tip-2)
check "the matrix of drm-tip-2: 200" test "$code" = 200
cells=$(grep -o '<a href="/machines/[^"]*/results/' "$work/body" | wc -l)
check "... 8 result cells (4 tests x 2 machines), got $cells" test "$cells" = 8
check "... lab-2's gem_exec@basic is a fail cell marked as a possible new issue" \
	grep -q '<td class="fail new" title="PASS -> FAIL: possible new issue"><a href="/machines/lab-2/runs/' "$work/body"
check "... skip cells have their class" grep -q '<td class="skip"><a href=' "$work/body"
check "... the filter script and its inputs are there" grep -q 'id="f-test"' "$work/body"

href=$(grep -o 'href="/machines/lab-1/runs/[^"]*/results/igt@kms_evil@markup"' "$work/body" | head -1 | sed 's/^href="//; s/"$//')
check "... a cell links to its result page" test -n "$href"
code=$(get "$href")
check "the result page: 200" test "$code" = 200
check "... the test's output is escaped (no <script> element)" \
	sh -c "! grep -q '<script>document' '$work/body'"
check "... the </pre><img of the output is text" \
	grep -qF '&lt;/pre&gt;&lt;img src=x onerror=&quot;document.title=1&quot;&gt;' "$work/body"
check "... out, err and dmesg sections" test "$(grep -c '<h2>\(out\|err\|dmesg\)</h2>' "$work/body")" = 3

code=$(get /machines/lab-3/runs/crash-run/results/igt@igt_b@crash)
check "the result whose boot died: 200" test "$code" = 200
check "... its status is incomplete" grep -q '<span class="incomplete">INCOMPLETE</span>' "$work/body"
check "... the crash record is shown with the boot that found it" \
	grep -q '<h2>crash record dmesg-efi_pstore-1 (pstore), found by boot 2</h2>' "$work/body"
check "... its text, escaped" grep -qF 'Kernel panic - not syncing: &lt;b&gt;Fatal&lt;/b&gt; exception' "$work/body"

code=$(get /tests/igt@gem_exec@basic)
check "the history of igt@gem_exec@basic: 200" test "$code" = 200
rows=$(grep -c '<tr><td>20' "$work/body")
check "... one row per stored result (4), got $rows" test "$rows" = 4

# An upload through this server: the cached history is rendered again at once
# (well within the cache's 10 s, so only the ingest can have made it stale).
"$gen" "$work/runs/up" kms_flip@basic=pass gem_exec@basic=fail >/dev/null
python3 "$tool" archive good "$work/up.tar.zst" --machine lab-1 --run up1 --dir "$work/runs/up" >/dev/null
up=$(python3 "$tool" put "$(run_url lab-1 up1)" "$work/up.tar.zst" --token token-1)
check "a run uploaded through serve: 201 ($up)" test "${up%% *}" = 201
code=$(get /tests/igt@gem_exec@basic)
check "... the history, cached before, now has its 5th row" test "$(grep -c '<tr><td>20' "$work/body")" = 5
check "... with the new run's result" grep -q 'href="/machines/lab-1/runs/up1/results/igt@gem_exec@basic">fail<' "$work/body"

code=$(get /machines/lab-1/suspend)
check "lab-1's suspend page: 200" test "$code" = 200
check "... says no run has a cycle" grep -q 'No run of this machine has a suspend cycle' "$work/body"

code=$(get "/api/v1/metrics?from=1764763200&to=$(($(date +%s) + 60))")
check "/api/v1/metrics: 200" test "$code" = 200
check "... three builds, 20 results (the uploaded run too), drm-tip-2 and crash-1 with a regression each" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
builds = {b["name"]: b for b in m["builds"]}
assert sorted(builds) == ["crash-1", "drm-tip-1", "drm-tip-2"], builds
assert m["results"] == 20, m["results"]
assert builds["drm-tip-2"]["regressions"] == 1 and builds["crash-1"]["regressions"] == 1, builds
assert m["regressions"] == 2, m["regressions"]
assert builds["crash-1"]["objective_met"] is True and builds["drm-tip-1"]["objective_met"] is False
assert m["objectives"]["fast"]["seconds"] == 1800 and m["objectives"]["fast"]["builds"] == 3
' "$work/body"
to=$(($(date +%s) + 60))
"$aggregator" metrics --data "$data" --from 1764763200 --to "$to" >"$work/cli.json" 2>"$work/cli.err"
check "metrics on the command line: exit 0" test $? = 0
curl -s "$base/api/v1/metrics?from=1764763200&to=$to" >"$work/api.json"
check "... the same numbers as /api/v1/metrics" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for k in ("results", "regressions", "builds", "machines", "tests_per_day", "objectives"):
    assert a[k] == b[k], k
' "$work/cli.json" "$work/api.json"
"$aggregator" metrics --data "$data" --from yesterday >/dev/null 2>"$work/cli.err"
status=$?
check "metrics --from yesterday: exit 2, naming it ($(cat "$work/cli.err"))" \
	sh -c "test $status = 2 && grep -q \"from 'yesterday'\" '$work/cli.err'"
"$aggregator" metrics --data "$data" --from 1764763200 --html "$work/metrics.html" >/dev/null 2>&1
check "metrics --html writes the page" grep -q '<h2>tests per day</h2>' "$work/metrics.html"
code=$(get '/api/v1/metrics?from=10&to=5')
check "a window that ends before it starts: 400" test "$code" = 400
check "... its reason as JSON" python3 -c '
import json, sys
assert "is after" in json.load(open(sys.argv[1]))["error"]
' "$work/body"

code=$(get /builds/no-such-build)
check "an unknown build: 404" test "$code" = 404
code=$(get /machines/lab-1/runs/..%2F..%2Fetc/results/x)
check "a run id with '/' (..%2F): 400, nothing read" test "$code" = 400
code=$(curl -s -o /dev/null -w '%{http_code}' --path-as-is "$base/machines/../../etc/passwd")
check "a path with .. segments: refused ($code)" test "$code" = 400 -o "$code" = 404
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/metrics")
check "POST to a page: 405" test "$code" = 405
stop_server
