#!/usr/bin/env bash
# serve's pages in a real browser: Debian's chromium --headless loads them
# from a running serve on 127.0.0.1 and the test reads the DOM it built
# (--dump-dom, after the page's script ran): a test output holding <script>
# and </pre><img onerror=...> stays text (no element made of it, the title
# untouched), the matrix has its cells with their status classes, the
# server's filter answers ?status= from the URL, and a screenshot is taken.
set -uo pipefail
# shellcheck source=tests/aggregator/pages-lib.sh
. "$SRC/tests/aggregator/pages-lib.sh"
browser=$(command -v chromium || true)
if [ -z "$browser" ]; then
	echo "1..0 # SKIP chromium is not installed (builder/setup/host-deps.sh installs it)"
	exit 0
fi
plan 11

# A profile of its own in $work; no sandbox: the tests may run as root.
chrome() {
	timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$work/profile" --virtual-time-budget=3000 "$@" 2>>"$work/chrome.log"
}

pages_store
check "builds and runs ingested" test $? = 0
add_machine lab-1 token-1
start_server

result=$(curl -s "$base/builds/drm-tip-2" | grep -o 'href="/machines/lab-1/runs/[^"]*/results/igt@kms_evil@markup"' | head -1 | sed 's/^href="//; s/"$//')
chrome --dump-dom "$base$result" >"$work/result.dom"
check "chromium dumped the result page's DOM" grep -q 'igt@kms_evil@markup' "$work/result.dom"
check "... no img element came from the output" sh -c "! grep -qi '<img' '$work/result.dom'"
check "... the only script-like text is escaped text" sh -c "! grep -q '<script>document' '$work/result.dom'"
check "... the title is the test's, not the output's" grep -q '<title>igt@kms_evil@markup</title>' "$work/result.dom"
check "... the output is text inside the out <pre>" \
	grep -qF '&lt;/pre&gt;&lt;img src=x onerror="document.title=1"&gt;' "$work/result.dom"

chrome --dump-dom "$base/builds/drm-tip-2" >"$work/matrix.dom"
check "the matrix: 8 result cells" test "$(grep -o '<a href="/machines/[^"]*/results/' "$work/matrix.dom" | wc -l)" = 8
check "... lab-2's failure has the fail and new classes" grep -q '<td class="fail new"' "$work/matrix.dom"

chrome --dump-dom "$base/builds/drm-tip-2?status=fail" >"$work/filtered.dom"
rows=$(grep -o '<tr class="r">' "$work/filtered.dom" | wc -l)
check "?status=fail: the server sends the 1 row with a fail cell (got $rows)" test "$rows" = 1
check "... and counts 1 of 4" grep -q '<span id="f-shown">1</span> of 4 tests match' "$work/filtered.dom"

chrome --window-size=1000,600 --screenshot="$work/matrix.png" "$base/builds/drm-tip-2" >/dev/null
check "a screenshot of the matrix (a PNG)" sh -c "head -c 8 '$work/matrix.png' | od -An -c | grep -q 'P   N   G'"
stop_server
