#!/usr/bin/env bash
# tests/run-tests.sh, the harness of `make check`, on small fake TAP scripts:
# it holds each one to its plan (missing plan, fewer or more results than
# planned), counts a non-zero exit once, and adds up cmocka's per-group plans;
# its one skip rule (cmocka's `not ok N # SKIP`, `1..0 # SKIP`, a builder
# script without a kernel); a test killed by a signal, a missing one, and one
# that hangs past its kind's time limit while a stray process holds its output;
# the two lanes (the lab scenarios beside the rest, never two lab ones at once,
# each test's output whole).
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
# WANT_LINE (unless empty), with one lane and with two (or with the TEST_LANES
# the case sets). Its output, TAP itself, stays out of this TAP; so do the names
# of the cases, which say "SKIP" without the "#" of a TAP directive.
harness() {
	local name=$1 want_status=$2 want_last=$3 want_line=$4 status last lanes
	shift 4
	for lanes in ${TEST_LANES:-1 2}; do
		# The bound only keeps a harness that would hang from hanging this script.
		timeout -k 5 300 env TEST_LANES="$lanes" BUILD="$work/build" SRC="$SRC" "$runner" "$@" >"$work/out" 2>&1
		status=$?
		last=$(tail -n 1 "$work/out")
		if [ "$status" != "$want_status" ]; then
			not_ok "$name: with $lanes lane(s), run-tests.sh exit status $status, wanted $want_status"
		elif [ "$last" != "$want_last" ]; then
			not_ok "$name: with $lanes lane(s), last line '$last', wanted '$want_last'"
		elif [ -n "$want_line" ] && ! grep -qxF -- "$want_line" "$work/out"; then
			not_ok "$name: with $lanes lane(s), no line '$want_line'"
		else
			continue
		fi
		diag <"$work/out"
		return 1
	done
	ok "$name: $last"
}

plan 31

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

# ---- skips: one rule for every form
script cmocka-skip 'echo 1..3; echo "ok 1 - a"; echo "not ok 2 # SKIP needs a GPU"; echo "ok 3 - c"'
harness "cmocka's not ok N, SKIP directive, is a skip" 0 "2 passed, 0 failed, 1 skipped" \
	"#   $work/cmocka-skip.t: 1 skipped (first: needs a GPU)" "cmocka:$work/cmocka-skip.t"

script whole-skip 'echo "1..0 # SKIP no kernel here"'
harness "plan 1..0 with SKIP, status 0: one skip" 0 "0 passed, 0 failed, 1 skipped" \
	"#   $work/whole-skip.t: 1 skipped (first: no kernel here)" "tap:$work/whole-skip.t"

script whole-skip-fails 'echo "1..0 # SKIP no kernel here"; exit 3'
harness "plan 1..0 with SKIP and a non-zero status fails" 1 "0 passed, 1 failed" \
	"not ok - $work/whole-skip-fails.t exited with status 3" "tap:$work/whole-skip-fails.t"

script plan-zero 'echo 1..0'
harness "1..0 without SKIP is no test, a failure" 1 "0 passed, 1 failed" \
	"not ok - $work/plan-zero.t reported no test" "tap:$work/plan-zero.t"

# The builder scripts that need the kernel, on a build tree without one: one skip each.
mkdir -p "$work/build"
harness "builder script without a kernel (kernel-setup.sh): one skip" 0 "0 passed, 0 failed, 1 skipped" "" \
	"tap:$SRC/tests/builder/images.t"
harness "modules.t without a kernel: one skip" 0 "0 passed, 0 failed, 1 skipped" "" \
	"tap:$SRC/tests/builder/modules.t"

# ---- tests that end abnormally
script killed 'echo 1..1; echo "ok 1 - a"; kill -TERM $$'
harness "a script killed by a signal fails, even after its plan" 1 "1 passed, 1 failed" \
	"not ok - $work/killed.t killed by signal 15 (SIGTERM)" "tap:$work/killed.t"

script killed-bin 'echo 1..2; echo "ok 1 - a"; echo "not ok 2 - b"; kill -KILL $$'
harness "a cmocka binary killed by SIGKILL: its failure and one more" 1 "1 passed, 2 failed" \
	"not ok - $work/killed-bin.t killed by signal 9 (SIGKILL)" "cmocka:$work/killed-bin.t"

harness "a missing test binary fails" 1 "0 passed, 1 failed" \
	"not ok - $work/no-such-test is missing or not executable: not run" "cmocka:$work/no-such-test"

script not-executable 'echo 1..1; echo "ok 1 - a"'
chmod -x "$work/not-executable.t"
harness "a test script that is not executable fails" 1 "2 passed, 1 failed" \
	"not ok - $work/not-executable.t is missing or not executable: not run" \
	"tap:$work/good.t" "tap:$work/not-executable.t"

# ---- time limits, per kind. The hung script leaves a process in its own session holding its
# output open: the harness must not wait for it.
script hangs "echo 1..2; echo 'ok 1 - a'; setsid sleep 120 & echo \$! >$work/stray.pid
sleep 120 & echo \$! >$work/main.pid; wait"
TEST_TIMEOUT_TAP=2 harness "a TAP script past TEST_TIMEOUT_TAP fails" 1 "1 passed, 1 failed" \
	"not ok - $work/hangs.t timed out: killed after its limit of 2 s (TEST_TIMEOUT_TAP)" "tap:$work/hangs.t"
# gone: no such process, or a zombie (PID 1 of a container may never reap it)
gone() { [ -n "$1" ] && { [ ! -e "/proc/$1/stat" ] || [ "$(awk '{ print $3 }' "/proc/$1/stat")" = Z ]; }; }
check "... its process group went with it" gone "$(cat "$work/main.pid" 2>/dev/null)"
[ ! -s "$work/stray.pid" ] || kill "$(cat "$work/stray.pid")" 2>/dev/null

script hangs-bin 'echo 1..1; exec sleep 120'
TEST_TIMEOUT_CMOCKA=2 harness "a cmocka binary past TEST_TIMEOUT_CMOCKA fails; the TAP limit is another" 1 \
	"2 passed, 1 failed" \
	"not ok - $work/hangs-bin.t timed out: killed after its limit of 2 s (TEST_TIMEOUT_CMOCKA)" \
	"cmocka:$work/hangs-bin.t" "tap:$work/good.t"

script slow 'sleep 3; echo 1..1; echo "ok 1 - a"'
TEST_TIMEOUT_CMOCKA=1 harness "the cmocka limit does not apply to a TAP script" 0 "1 passed, 0 failed" "" "tap:$work/slow.t"

# ---- lanes. A lab scenario (a path under tests/lab/) and another test meet: each waits for
# the other's mark, which only a run at the same time gives.
mkdir -p "$work/tests/lab"
# lab NAME BODY: a fake lab scenario $work/tests/lab/NAME.t running BODY
lab() {
	printf '#!/bin/sh\n%s\n' "$2" >"$work/tests/lab/$1.t"
	chmod +x "$work/tests/lab/$1.t"
}
# meet MINE THEIRS: TAP of one test that leaves its mark and waits 10 s for the other's
meet() {
	echo "echo 1..1; touch $work/$1.mark; i=0
while [ ! -e $work/$2.mark ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
if [ -e $work/$2.mark ]; then echo 'ok 1 - met'; else echo 'not ok 1 - alone'; fi"
}
lab meet "$(meet lab rest)"
script meet-rest "$(meet rest lab)"
TEST_LANES=2 harness "two lanes: a lab scenario runs beside another test" 0 "2 passed, 0 failed" "" \
	"tap:$work/meet-rest.t" "tap:$work/tests/lab/meet.t"

# Two lab scenarios never overlap (one virtual machine at a time), and each test's output is
# shown whole: its lines are not mixed with the other lane's.
for n in 1 2; do
	lab vm$n "echo 1..1; echo vm$n-start
if mkdir $work/vm 2>/dev/null; then sleep 1; rmdir $work/vm; echo 'ok 1 - alone'; else echo 'not ok 1 - overlap'; fi"
done
script chatty 'echo 1..1; echo chatty-start; sleep 1.5; echo chatty-end; echo "ok 1 - a"'
TEST_LANES=2 harness "two lab scenarios run one after the other" 0 "3 passed, 0 failed" "" \
	"tap:$work/tests/lab/vm1.t" "tap:$work/chatty.t" "tap:$work/tests/lab/vm2.t"
# adjacent A B: line B comes right after line A in the output
adjacent() { awk -v a="$1" -v b="$2" 'prev == a && $0 == b { found = 1 } { prev = $0 } END { exit !found }' "$work/out"; }
check "... each test's output is whole" eval 'adjacent vm1-start "ok 1 - alone" && adjacent chatty-start chatty-end && adjacent vm2-start "ok 1 - alone"'
check "... and ends with its time" grep -qE "^# .*/chatty\.t: [0-9]+ s$" "$work/out"

# The order of the summary is the order given, whatever the lanes: the failures in it.
script fail-a 'echo 1..1; sleep 1; echo "not ok 1 - a"'
lab fail-b 'echo 1..1; echo "not ok 1 - b"'
TEST_LANES=2 harness "the summary in the order given" 1 "0 passed, 2 failed" "" \
	"tap:$work/fail-a.t" "tap:$work/tests/lab/fail-b.t"
check "... failures named in that order" eval "sed -n '/^# failed:/,\$p' '$work/out' | grep -o 'fail-[ab]\.t (' | tr -d '\n' | grep -qxF 'fail-a.t (fail-b.t ('"

TEST_LANES=3 harness "TEST_LANES other than 1 or 2 is refused" 2 \
	"run-tests: TEST_LANES must be 1 or 2, not '3'" "" "tap:$work/good.t"

# ---- stopped (CI cancelling the job): the test in flight goes, is named, and the harness exits
# 128 + the signal, with one lane and with two.
script sleeper "echo 1..1; echo sleeper-started; echo \$\$ >$work/sleeper.pid; sleep 60; echo 'ok 1 - a'"
for lanes in 1 2; do
	rm -f "$work/sleeper.pid"
	env TEST_LANES=$lanes BUILD="$work/build" SRC="$SRC" "$runner" "tap:$work/good.t" "tap:$work/sleeper.t" \
		>"$work/stopped.out" 2>&1 &
	harness_pid=$!
	for ((i = 0; i < 100; i++)); do [ -s "$work/sleeper.pid" ] && break; sleep 0.1; done
	kill -TERM "$harness_pid"
	wait "$harness_pid"
	status=$?
	check "SIGTERM with $lanes lane(s): exit 143, the test in flight gone, named with its output" \
		eval "[ $status = 143 ] && gone '$(cat "$work/sleeper.pid" 2>/dev/null)' &&
			grep -qx '# .*sleeper.t: interrupted' '$work/stopped.out' && grep -qx sleeper-started '$work/stopped.out'" ||
		diag <"$work/stopped.out"
done
