#!/usr/bin/env bash
# tests/lab/igt-compare.py, which tells igt-real.t and the igt-vs-runner bench
# which verdict differences between bootci and igt_runner have a known cause:
# each cause explains exactly its own pattern, and a look-alike that differs in
# one point (a dynamic subtest that is no copy, an err with stray text of its
# own, the other protocol) stays unexplained, so a real difference still fails.
# The inputs are written here by hand, as igt_results lays them out.
set -uo pipefail
: "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"
compare=$SRC/tests/lab/igt-compare.py

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

plan 7

# results FILE TESTS_JSON: a results.json holding TESTS_JSON as its tests
results() {
	printf '{"__type__": "TestrunResult", "results_version": 10, "tests": %s}\n' "$2" >"$work/$1"
}

# verdict NAME MODE PROTOCOL WANT_STATUS WANT_LINES...: the script's status and
# every one of WANT_LINES among its output lines
verdict() {
	local name=$1 mode=$2 protocol=$3 want_status=$4 status line
	shift 4
	python3 "$compare" "$work/ours.json" "$work/theirs.json" "$mode" "$protocol" >"$work/out" 2>&1
	status=$?
	for line in "$@"; do
		if ! grep -qxF -- "$line" "$work/out"; then
			not_ok "$name: no line '$line'"
			diag <"$work/out"
			return
		fi
	done
	if [ "$status" != "$want_status" ]; then
		not_ok "$name: exit status $status, wanted $want_status"
		diag <"$work/out"
		return
	fi
	ok "$name"
}

# kms_concurrent in multiple mode: pipe-A starts and its dynamic subtest fails;
# pipe-B is skipped before it starts. From text output igt_results gives pipe-B
# pipe-A's dynamic subtest, and drops pipe-B.
A_OUT='Starting dynamic subtest: Virtual-1\nDynamic subtest Virtual-1: FAIL (0.112s)\n'
results ours.json '{
 "igt@kms_concurrent@pipe-a@virtual-1": {"result": "fail", "out": "'"$A_OUT"'"},
 "igt@kms_concurrent@pipe-b": {"result": "skip", "out": "Pipe B does not exist\nSubtest pipe-B: SKIP (0.000s)\n"}}'
results theirs.json '{
 "igt@kms_concurrent@pipe-a@virtual-1": {"result": "fail", "out": "'"$A_OUT"'"},
 "igt@kms_concurrent@pipe-b@virtual-1": {"result": "fail", "out": "'"$A_OUT"'"}}'
verdict "a subtest skipped before it starts, given an earlier subtest's dynamic subtest: text-unstarted-dynamic" \
	multiple text 0 'explained text-unstarted-dynamic 2' 'unexplained 0'
verdict "the same against a socket run: unexplained" multiple socket 1 'unexplained 2'

# The copy is not a copy: pipe-B's dynamic subtest has an output of its own.
results theirs.json '{
 "igt@kms_concurrent@pipe-a@virtual-1": {"result": "fail", "out": "'"$A_OUT"'"},
 "igt@kms_concurrent@pipe-b@virtual-1": {"result": "fail", "out": "Starting dynamic subtest: Virtual-1\nPipe B: its own failure\n"}}'
verdict "a dynamic subtest of its own under the skipped subtest: unexplained" multiple text 1 \
	'unexplained 2' '  igt@kms_concurrent@pipe-b@virtual-1: bootci (absent), igt_runner fail'

# core_setmaster: from comms, the third subtest's err is cut at the second's offsets.
SHIFTED='op-set-user\nSubtest master-drop-set-user: SUCCESS (0.032s)\nStarting subtest: master-drop-set-sha'
THEIRS='{"igt@core_setmaster@master-drop-set-shared-fd": {"result": "pass", "err": "Starting subtest: master-drop-set-shared-fd\nSubtest master-drop-set-shared-fd: SUCCESS (0.011s)\n"}}'
results ours.json '{"igt@core_setmaster@master-drop-set-shared-fd": {"result": "warn", "err": "'"$SHIFTED"'"}}'
results theirs.json "$THEIRS"
verdict "a warn whose err is a neighbour's start and result lines, cut: comms-err-shift" multiple text 0 \
	'explained comms-err-shift 1' 'unexplained 0'
verdict "the same in single mode: unexplained" single text 1 'unexplained 1'

# The same, with a line of stray text of the test's own in its err.
results ours.json '{"igt@core_setmaster@master-drop-set-shared-fd": {"result": "warn", "err": "'"$SHIFTED"'\nstray text of its own"}}'
verdict "a shifted err with stray text of its own: unexplained" multiple text 1 'unexplained 1'

# An err that holds only its own subtest's lines: nothing shifted.
results ours.json '{"igt@core_setmaster@master-drop-set-shared-fd": {"result": "warn", "err": "Starting subtest: master-drop-set-shared-fd\nSubtest master-drop-set-shared-fd: SUCCESS (0.011s)\n"}}'
verdict "a warn with only its own lines in its err: unexplained" multiple text 1 'unexplained 1'
