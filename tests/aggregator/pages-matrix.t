#!/usr/bin/env bash
# The served matrix in pages (report.h, struct bci_matrix_query): the rows a
# query selects (?test= a POSIX extended regex, ?status= a status or
# changed), the changed tests first, one page of them (?page=, ?per_page=,
# default 200, "all" for the whole matrix) with links between the pages;
# a bad value is a 400 naming it, and so is a regex too costly to compile.
set -uo pipefail
# shellcheck source=tests/aggregator/pages-lib.sh
. "$SRC/tests/aggregator/pages-lib.sh"
plan 19

pages_store
check "two builds, four runs ingested" test $? = 0
add_machine lab-1 token-1
start_server

get() { curl -s -o "$work/body" -w '%{http_code}' "$base$1"; }
# rows: the tests of the page in $work/body, in order, one a line.
rows() { grep -o '<tr class="r"><td class="t"><a href="/tests/[^"]*">[^<]*' "$work/body" | sed 's/.*>//'; }

code=$(get /builds/drm-tip-2)
check "the default view: 200" test "$code" = 200
check "... the changed test first (gem_exec@basic failed on lab-2), then by name" \
	test "$(rows | tr '\n' ' ')" = "igt@gem_exec@basic igt@core_hotunplug@unplug igt@kms_evil@markup igt@kms_flip@basic "
check "... says how many match and which page" \
	grep -qF '<span id="f-shown">4</span> of 4 tests match, changed first; rows 1 to 4, page 1 of 1.' "$work/body"
check "... no script: the filters are the server's" sh -c "! grep -q '<script' '$work/body'"

code=$(get '/builds/drm-tip-2?per_page=1')
check "?per_page=1: 200, one row" sh -c "test $code = 200 && test \"\$(grep -c '<tr class=\"r\">' '$work/body')\" = 1"
# Follow the "next" links from the first page to the last: every test once, in the same order.
: >"$work/walked"
url='/builds/drm-tip-2?per_page=1'
pages=0
while [ -n "$url" ] && [ "$pages" -lt 10 ]; do
	get "$url" >/dev/null
	rows >>"$work/walked"
	pages=$((pages + 1))
	url=$(grep -o '<a rel="next" href="[^"]*"' "$work/body" | sed 's/.*href="//; s/"$//; s/&amp;/\&/g')
done
check "... its next links walk 4 pages, each test once in the default order ($pages pages)" \
	test "$(tr '\n' ' ' <"$work/walked")" = "igt@gem_exec@basic igt@core_hotunplug@unplug igt@kms_evil@markup igt@kms_flip@basic "
check "... the last page links back to the first and previous" sh -c \
	"grep -qF 'rel=\"first\" href=\"/builds/drm-tip-2?test=&amp;status=&amp;page=1&amp;per_page=1\"' '$work/body' &&
	 grep -qF 'rel=\"prev\" href=\"/builds/drm-tip-2?test=&amp;status=&amp;page=3&amp;per_page=1\"' '$work/body'"
check "... and to the whole matrix on one page" \
	grep -qF 'rel="alternate" href="/builds/drm-tip-2?test=&amp;status=&amp;per_page=all"' "$work/body"

get '/builds/drm-tip-2?per_page=1&page=99' >/dev/null
check "?page=99 of 4: the last page" test "$(rows)" = igt@kms_flip@basic
get '/builds/drm-tip-2?per_page=all' >/dev/null
check "?per_page=all: the 4 rows" test "$(rows | wc -l)" = 4
get '/builds/drm-tip-2?status=changed' >/dev/null
check "?status=changed: the 1 changed row" test "$(rows)" = igt@gem_exec@basic
get '/builds/drm-tip-2?test=%5Eigt%40kms_&status=pass' >/dev/null
check "?test=^igt@kms_&status=pass: kms_evil and kms_flip" \
	test "$(rows | tr '\n' ' ')" = 'igt@kms_evil@markup igt@kms_flip@basic '
check "... the form keeps both values" sh -c \
	"grep -qF 'value=\"^igt@kms_\"' '$work/body' && grep -qF '<option value=\"pass\" selected>' '$work/body'"

code=$(get '/builds/drm-tip-2?test=(')
check "?test=( : 400, naming the regex" sh -c "test $code = 400 && grep -q 'not a POSIX extended regex' '$work/body'"
code=$(get '/builds/drm-tip-2?test=x%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B%2B')
check "?test=x++++...: 400, a regex too costly to compile" sh -c "test $code = 400 && grep -q 'too costly' '$work/body'"
code=$(get '/builds/drm-tip-2?status=bogus')
check "?status=bogus: 400" test "$code" = 400
code=$(get '/builds/drm-tip-2?page=0')
check "?page=0: 400" test "$code" = 400
code=$(get '/builds/drm-tip-2?per_page=100001')
check "?per_page past the most: 400" test "$code" = 400
stop_server
