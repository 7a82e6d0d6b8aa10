#!/usr/bin/env bash
# tests/run-tests.sh, the harness of `make check`, on small fake TAP scripts:
# it holds each one to its plan (missing plan, fewer or more results than
# planned), counts a non-zero exit once, and adds up cmocka's per-group plans.
set -uo pipefail
: "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
runner=$SRC/tests/run-tests.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# script NAME BODY: an executable fake test $work/NAME.t running BODY
script() {
	printf '#!/bin/sh\n%s\n' "$2" >"$work/$1.t"
	chmod +x "$work/$1.t"
}

# harness NAME WANT_STATUS WANT_LAST WANT_LINE SPECS...: run-tests.sh on SPECS
# exits with WANT_STATUS, its last line is WANT_LAST and one of its lines is
# WANT_LINE (unless empty). Its output, TAP itself, stays out of this TAP.
harness() {
	local name=$1 want_status=$2 want_last=$3 want_line=$4 status last
	shift 4
	BUILD=$work/build SRC=$SRC "$runner" "$@" >"$work/out" 2>&1
	status=$?
	last=$(tail -n 1 "$work/out")
	if [ "$status" != "$want_status" ]; then
		not_ok "$name: run-tests.sh exit status $status, wanted $want_status"
	elif [ "$last" != "$want_last" ]; then
		not_ok "$name: last line '$last', wanted '$want_last'"
	elif [ -n "$want_line" ] && ! grep -qxF -- "$want_line" "$work/out"; then
		not_ok "$name: no line '$want_line'"
	else
		ok "$name: $last${want_line:+; $want_line}"
		return 0
	fi
	diag <"$work/out"
}

plan 8

script good 'echo 1..2; echo "ok 1 - a"; echo "ok 2 - b"'
harness "plan first, all ran" 0 "2 passed, 0 failed" "" "tap:$work/good.t"

script late 'echo "ok 1 - a"; echo "ok 2 # SKIP b"; echo 1..2'
harness "plan last (done_testing), a skip" 0 "1 passed, 0 failed, 1 skipped" "" "tap:$work/late.t"

script early 'echo 1..3; echo "ok 1 - a"; echo "ok 2 - b"; exit 0'
harness "stops early with status 0" 1 "2 passed, 1 failed" \
	"not ok - $work/early.t planned 3 tests, ran 2" "tap:$work/early.t"

script extra 'echo 1..1; echo "ok 1 - a"; echo "ok 2 - b"'
harness "more results than planned" 1 "2 passed, 1 failed" \
	"not ok - $work/extra.t planned 1 tests, ran 2" "tap:$work/extra.t"

script noplan 'echo "ok 1 - a"'
harness "no plan" 1 "1 passed, 1 failed" \
	"not ok - $work/noplan.t printed no plan (1..N)" "tap:$work/noplan.t"

script crash 'echo 1..3; echo "ok 1 - a"; exit 2'
harness "exits non-zero early: one failure" 1 "1 passed, 1 failed" \
	"not ok - $work/crash.t exited with status 2" "tap:$work/crash.t"

script failing 'echo 1..2; echo "ok 1 - a"; echo "not ok 2 - b"; exit 1'
harness "a reported failure is not counted twice" 1 "1 passed, 1 failed" "" "tap:$work/failing.t"

# cmocka prints one plan per group; CMOCKA_MESSAGE_OUTPUT is the harness's to set.
script groups 'echo 1..2; echo "ok 1 - a"; echo "ok 2 - b"; echo "# ok - g1"
echo 1..1; echo "ok 1 - c"; echo "# ok - g2"'
harness "cmocka, two groups" 0 "3 passed, 0 failed" "" "cmocka:$work/groups.t"
