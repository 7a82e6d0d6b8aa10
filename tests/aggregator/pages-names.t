#!/usr/bin/env bash
# Test names as the store holds them (names.h: anything but control bytes):
# non-ASCII, '/', '%' and '?' in a subtest's name. A run with such names is
# ingested, and every link the pages give to it opens: the matrix's result
# cells, the history links, the result pages' history link, and the API's
# logs of that result; what is dangerous is still refused.
set -uo pipefail
# shellcheck source=tests/aggregator/pages-lib.sh
. "$SRC/tests/aggregator/pages-lib.sh"
plan 15

"$aggregator" build add names-1 --tree t --commit c --tier fast --data "$data" >>"$work/setup.log" 2>&1 &&
	"$gen" "$work/runs/n" 'kms_names@café=pass' 'kms_names@a/b=fail' 'kms_names@100%?x#y=pass' \
		'kms_names@plain=skip' &&
	"$aggregator" ingest --data "$data" --machine lab-1 --run-id n1 --build names-1 "$work/runs/n" \
		>>"$work/setup.log" 2>&1
check "a run whose test names hold UTF-8, '/', '%', '?' and '#' ingested" test $? = 0
add_machine lab-1 token-1
start_server

get() { curl -s -o "$work/body" -w '%{http_code}' "$base$1"; }

code=$(get /builds/names-1)
check "the matrix: 200" test "$code" = 200
cp "$work/body" "$work/matrix.html"

# Every link of the matrix to a result or a history, opened as a browser would.
grep -o 'href="/\(machines\|tests\)/[^"]*"' "$work/matrix.html" | sed 's/^href="//; s/"$//' >"$work/links"
count=$(wc -l <"$work/links")
check "... 9 links to results, histories and the machine (4 tests), got $count" test "$count" = 9
bad=
while read -r link; do
	code=$(get "$link")
	[ "$code" = 200 ] || bad="$bad $link:$code"
done <"$work/links"
check "... every one answers 200${bad:+ (not:$bad)}" test -z "$bad"

href=$(grep -o 'href="/machines/lab-1/runs/n1/results/[^"]*a%2Fb"' "$work/matrix.html" | sed 's/^href="//; s/"$//')
check "the result of igt@kms_names@a/b is linked with '/' as %2F ($href)" \
	test "$href" = /machines/lab-1/runs/n1/results/igt@kms_names@a%2Fb
code=$(get "$href")
check "... its page: 200" test "$code" = 200
check "... names the test" grep -qF '<h1>igt@kms_names@a/b' "$work/body"
check "... shows its output" grep -qF 'Starting subtest: a/b' "$work/body"
check "... links to its history" grep -qF 'href="/tests/igt@kms_names@a%2Fb"' "$work/body"

code=$(get /tests/igt@kms_names@caf%C3%A9)
check "the history of igt@kms_names@café: 200" test "$code" = 200
check "... its row links to the result" \
	grep -qF 'href="/machines/lab-1/runs/n1/results/igt@kms_names@caf%C3%A9"' "$work/body"

code=$(get '/tests/igt@kms_names@100%25%3Fx%23y')
check "the history of igt@kms_names@100%?x#y: 200" test "$code" = 200

code=$(curl -s -o "$work/body" -w '%{http_code}' -H 'Authorization: Bearer token-1' \
	"$(run_url lab-1 n1)/results/igt@kms_names@a%2Fb/out")
check "the API gives the out of igt@kms_names@a/b: 200" \
	sh -c "test '$code' = 200 && grep -qF 'Starting subtest: a/b' '$work/body'"

code=$(get /tests/igt@kms_names@a%0Ab)
check "a test name with a line break: 400" test "$code" = 400
code=$(get /tests/igt@kms_names@plain%00x)
check "a test name with a NUL: 400, not the page of the name before it" test "$code" = 400
stop_server
