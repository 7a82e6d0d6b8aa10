#!/usr/bin/env bash
# Build names that clean to the same characters ("a b", "a-b", "a=20b") keep
# apart: each has its own folder of `report --html` and its own Message-ID
# in the reply (names.h, bci_name_folder()); a name too long for a folder is
# refused at `build add`, saying why.
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

aggregator=$BUILD/host/bin/bootci-aggregator
gen=$SRC/tests/aggregator/report-runs.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=$work/data
plan 8

i=0
for build in "a b" a-b a=20b; do
	i=$((i + 1))
	"$aggregator" build add "$build" --tree t --commit c --tier fast --data "$data" >>"$work/log" 2>&1 &&
		"$gen" "$work/runs/$i" "kms_x@y$i=pass" >/dev/null &&
		"$aggregator" ingest --data "$data" --machine lab-1 --run-id "r$i" --build "$build" \
			"$work/runs/$i" >>"$work/log" 2>&1 &&
		"$aggregator" report --build "$build" --data "$data" --html "$work/html" \
			--mbox "$work/$i.mbox" --url https://ci.example --date 1764763200 >>"$work/log" 2>&1
	check "build '$build': registered, a run ingested, reported" test $? = 0
done

folders=$(find "$work/html" -mindepth 1 -maxdepth 1 -type d | wc -l)
check "three folders of pages, one per build, got $folders ($(ls "$work/html" | tr '\n' ' '))" test "$folders" = 3
check "... each matrix shows its own build's test" sh -c "
	grep -q 'kms_x@y1' '$work/html/a=20b/index.html' &&
	grep -q 'kms_x@y2' '$work/html/a-b/index.html' &&
	grep -q 'kms_x@y3' '$work/html/a=3D20b/index.html'"
ids=$(grep -h '^Message-ID:' "$work"/[123].mbox | sort -u | wc -l)
check "three Message-IDs, got $ids" test "$ids" = 3
check "... each reply links to its own build's page on serve" sh -c "
	grep -q '^Matrix: https://ci.example/builds/a%20b\$' '$work/1.mbox' &&
	grep -q '^Matrix: https://ci.example/builds/a-b\$' '$work/2.mbox' &&
	grep -q '^Matrix: https://ci.example/builds/a%3D20b\$' '$work/3.mbox'"

long=$(printf 'x%.0s' $(seq 250))
"$aggregator" build add "$long     x" --tree t --commit c --tier fast --data "$data" >"$work/long.out" 2>&1
status=$?
check "a name whose folder would pass 255 bytes: exit 2, saying why" \
	sh -c "test $status = 2 && grep -q 'at most 255 bytes as a folder name' '$work/long.out'"
