#!/usr/bin/env bash
# The test harness of `make check`: runs each test given as KIND:PATH, shows its
# output as it comes, counts TAP results, and ends with `N passed, M failed`
# (`, K skipped` when there are skips).
#   cmocka:BIN  a cmocka binary (run with TAP output)
#   fuzz:BIN    a libFuzzer target: every committed corpus and crash input of
#               tests/fuzz/{corpus,crashes}/NAME re-run, then FUZZ_SECONDS of
#               fuzzing from a scratch copy of the corpus
#   tap:SCRIPT  a script printing TAP
#
# The rule, the same for every kind:
# - `ok N` is a pass, `not ok N` a failure, and a result whose directive is
#   `# SKIP` is a skip whether it says ok or not ok (cmocka prints
#   `not ok N # SKIP`). A test that prints the plan `1..0 # SKIP reason`, no
#   result, and exits 0 is one skip. A skip is neither a pass nor a failure;
#   the summary names each test that skipped and why.
# - One failure more, once per test, when the test is missing or not
#   executable, ran past its time limit, was killed by a signal (an exit status
#   of 128+N, as the shell reports one), exited non-zero without reporting a
#   failure, reported nothing, printed no plan (1..N), or printed another number
#   of results than it planned (a script that stops early with status 0 passes
#   every check it reached). Plans are summed: cmocka prints one per group.
# - Every test has a time limit, per kind, in seconds: TEST_TIMEOUT_CMOCKA
#   (default 600), TEST_TIMEOUT_FUZZ (default FUZZ_SECONDS + 600: the replay and
#   the fuzzing), TEST_TIMEOUT_TAP (default 5400: a lab script boots QEMU under
#   TCG several times). Past it the test's process group gets SIGTERM, then
#   SIGKILL 10 s later, and the harness moves on even if a stray process still
#   holds the test's output open.
#
# Two lanes at once (TEST_LANES, default 2 on a machine of two or more cores, else
# 1): the QEMU lab scenarios (tests/lab/), each of which keeps one core busy with
# TCG, one after another in one lane, and every other test one after another in
# the other, so no two virtual machines ever run at once. With two lanes each test's
# output is shown whole when it ends, one test at a time; with one lane, as it
# comes. Either way each test's output ends with its time, `# NAME: N s`, and the
# summary counts the tests in the order given.
set -uo pipefail

: "${BUILD:?}" "${SRC:?}"
export BUILD SRC
: "${FUZZ_SECONDS:=5}" "${TEST_TIMEOUT_CMOCKA:=600}" "${TEST_TIMEOUT_TAP:=5400}"
: "${TEST_TIMEOUT_FUZZ:=$((FUZZ_SECONDS + 600))}"
export FUZZ_SECONDS
if [ -z "${TEST_LANES:-}" ]; then
	TEST_LANES=1
	[ "$(nproc 2>/dev/null || echo 1)" -lt 2 ] || TEST_LANES=2
fi
case $TEST_LANES in
1 | 2) ;;
*) echo "run-tests: TEST_LANES must be 1 or 2, not '$TEST_LANES'" >&2; exit 2 ;;
esac
passed=0
failed=0
skipped=0
failures=()
failed_logs=()
skips=()
log_dir=$BUILD/tests/logs
mkdir -p "$log_dir"
# One record per test (records/N, N its place in the order given), written by the
# lane that ran it and summed at the end; the lock keeps two tests' output apart.
state=$(mktemp -d "${TMPDIR:-/tmp}/bootci-run-tests.XXXXXX")
mkdir "$state/records"

# count NAME LOG STATUS NOTE RECORD: counts the TAP lines of LOG by the rule
# above into RECORD (passed, failed and skipped on its first line, then the
# failure and the skip to name, or empty lines), and appends the harness's own
# `not ok` lines to LOG. NOTE, when not empty, is why the test ended abnormally
# (missing, timed out, killed by a signal): one failure, whatever the test
# reported.
count() {
	local name=$1 log=$2 status=$3 note=$4 record=$5 results ok not_ok skip planned ran problem=0 reason whole_skip=
	local failure= skip_line=
	results=$(grep -E '^(not )?ok [0-9]+' "$log")
	skip=$(grep -ciE '^(not )?ok [0-9]+[^#]*# *skip' <<<"$results")
	not_ok=$(($(grep -cE '^not ok' <<<"$results") - $(grep -ciE '^not ok [0-9]+[^#]*# *skip' <<<"$results")))
	ran=$(grep -c . <<<"$results")
	ok=$((ran - skip - not_ok))
	planned=$(sed -nE 's/^1\.\.([0-9]+)([^0-9].*)?$/\1/p' "$log" | awk '{ n += $1; c++ } END { if (c) print n }')
	if [ -n "$note" ]; then
		problem=1
		echo "not ok - $name $note" >>"$log"
	elif [ "$status" = 0 ] && [ "$ran" = 0 ] && grep -qiE '^1\.\.0 *# *skip' "$log"; then
		whole_skip=1
		skip=1
	else
		if [ "$status" != 0 ] && [ "$not_ok" = 0 ]; then
			problem=1
			echo "not ok - $name exited with status $status" >>"$log"
		fi
		if [ "$ran" = 0 ]; then
			problem=1
			echo "not ok - $name reported no test" >>"$log"
		fi
	fi
	if [ -z "$note" ] && [ -z "$whole_skip" ]; then
		if [ -z "$planned" ]; then
			problem=1
			echo "not ok - $name printed no plan (1..N)" >>"$log"
		elif [ "$planned" != "$ran" ]; then
			problem=1
			echo "not ok - $name planned $planned tests, ran $ran" >>"$log"
		fi
	fi
	not_ok=$((not_ok + problem))
	[ "$not_ok" = 0 ] || failure="$name (log: $log)"
	if [ "$skip" -gt 0 ]; then
		reason=$(grep -iE '^(not )?ok [0-9]+[^#]*# *skip|^1\.\.0 *# *skip' "$log" | head -n1 |
			sed -E 's/^[^#]*# *[Ss][Kk][Ii][Pp] *//')
		skip_line="$name: $skip skipped${reason:+ (first: $reason)}"
	fi
	printf '%s %s %s\n%s\n%s\n%s\n' "$ok" "$not_ok" "$skip" "$failure" "$log" "$skip_line" >"$record.tmp"
	mv "$record.tmp" "$record"
}

# run_limited LIMIT LOG COMMAND...: runs COMMAND, its output into LOG (and shown
# as it comes with one lane), for at most LIMIT seconds (SIGTERM to its process
# group, SIGKILL 10 s later). Following the file rather than a pipe lets the
# harness go on when a stray process of the test keeps the output open. Returns
# COMMAND's status (124 or 137 when timed out, 128+N when killed by signal N).
running=
run_limited() {
	local limit=$1 log=$2 status follower=
	shift 2
	: >"$log"
	timeout -k 10 "$limit" "$@" >"$log" 2>&1 </dev/null &
	running=$!
	if [ "$TEST_LANES" = 1 ]; then
		tail -s 0.2 -n +1 -f --pid="$running" "$log" &
		follower=$!
	fi
	wait "$running"
	status=$?
	[ -z "$follower" ] || wait "$follower"
	running=
	return "$status"
}

run_fuzz() {
	local bin=$1 name
	name=$(basename "$bin")
	name=${name#fuzz_}
	local inputs=() n=0 scratch
	for d in "$SRC/tests/fuzz/corpus/$name" "$SRC/tests/fuzz/crashes/$name"; do
		[ -d "$d" ] || continue
		while IFS= read -r -d '' f; do inputs+=("$f"); done < <(find "$d" -type f -print0 | sort -z)
	done
	if [ ${#inputs[@]} -gt 0 ]; then
		n=$((n + 1))
		if "$bin" "${inputs[@]}" >"$log_dir/fuzz-$name-replay.log" 2>&1; then
			echo "ok $n - fuzz $name: ${#inputs[@]} committed inputs replayed"
		else
			echo "not ok $n - fuzz $name: a committed input fails (see $log_dir/fuzz-$name-replay.log)"
		fi
	fi
	scratch=$(mktemp -d)
	# Stopped at the time limit (SIGTERM to the whole group): the scratch corpus goes too.
	trap 'rm -rf "$scratch"; exit 143' TERM
	[ ! -d "$SRC/tests/fuzz/corpus/$name" ] || cp -r "$SRC/tests/fuzz/corpus/$name/." "$scratch/"
	n=$((n + 1))
	if "$bin" -max_total_time="${FUZZ_SECONDS:-5}" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$log_dir/fuzz-$name-" "$scratch" >"$log_dir/fuzz-$name.log" 2>&1; then
		echo "ok $n - fuzz $name: ${FUZZ_SECONDS:-15}s without a finding ($(grep -o 'Done [0-9]* runs' "$log_dir/fuzz-$name.log" | tail -n1))"
	else
		echo "not ok $n - fuzz $name: finding saved under $log_dir/fuzz-$name-* (add it to tests/fuzz/crashes/$name/)"
	fi
	rm -rf "$scratch"
	echo "1..$n"
}

export -f run_fuzz
export log_dir

# run_one INDEX SPEC: runs one test, shows its output and time, writes its record.
run_one() {
	local index=$1 spec=$2 kind path name log limit limit_name cmd note status start
	kind=${spec%%:*}
	path=${spec#*:}
	name=${path#"$BUILD"/}
	name=${name#"$SRC"/}
	log=$log_dir/$(echo "$name" | tr '/' '_').log
	case $kind in
	cmocka) limit=$TEST_TIMEOUT_CMOCKA limit_name=TEST_TIMEOUT_CMOCKA cmd=(env CMOCKA_MESSAGE_OUTPUT=TAP "$path") ;;
	fuzz) limit=$TEST_TIMEOUT_FUZZ limit_name=TEST_TIMEOUT_FUZZ cmd=(bash -c "run_fuzz \"\$1\"" run_fuzz "$path") ;;
	tap) limit=$TEST_TIMEOUT_TAP limit_name=TEST_TIMEOUT_TAP cmd=("$path") ;;
	esac
	[ "$TEST_LANES" = 2 ] || echo "# --- $name"
	current=$name current_log=$log
	note=
	status=0
	start=$SECONDS
	if [ ! -f "$path" ] || [ ! -x "$path" ]; then
		: >"$log"
		note="is missing or not executable: not run"
		status=127
	else
		run_limited "$limit" "$log" "${cmd[@]}"
		status=$?
		if { [ "$status" = 124 ] || [ "$status" = 137 ]; } && [ $((SECONDS - start)) -ge "$limit" ]; then
			note="timed out: killed after its limit of $limit s ($limit_name)"
		elif [ "$status" -gt 128 ] && [ "$status" -le 192 ]; then
			note="killed by signal $((status - 128)) (SIG$(kill -l $((status - 128)) 2>/dev/null || echo '?'))"
		fi
	fi
	local size
	size=$(stat -c %s "$log")
	count "$name" "$log" "$status" "$note" "$state/records/$index"
	{
		flock 9
		if [ "$TEST_LANES" = 2 ]; then
			echo "# --- $name"
			cat "$log"
		else
			tail -c +$((size + 1)) "$log"
		fi
		echo "# $name: $((SECONDS - start)) s"
	} 9>"$state/lock"
	current=
}

# lane_stop STATUS: a lane stopped (^C, CI cancelling the job): the test in flight
# goes too (its process group gets SIGTERM, SIGKILL 10 s later), and what it had
# printed is shown, so the end of the output says which test was running.
current=
lane_stop() {
	if [ -n "$running" ]; then
		kill -TERM "$running" 2>/dev/null
		wait "$running" 2>/dev/null
	fi
	if [ -n "$current" ] && [ "$TEST_LANES" = 2 ]; then
		{
			flock 9
			echo "# --- $current"
			cat "$current_log"
			echo "# $current: interrupted"
		} 9>"$state/lock"
	elif [ -n "$current" ]; then
		echo "# $current: interrupted"
	fi
	exit "$1"
}

# run_lane INDEX:SPEC...: the tests one after another.
run_lane() {
	trap 'lane_stop 130' INT
	trap 'lane_stop 143' TERM
	trap 'lane_stop 129' HUP
	local item
	for item in "$@"; do
		run_one "${item%%:*}" "${item#*:}"
	done
}

lab=()
rest=()
index=0
for spec in "$@"; do
	index=$((index + 1))
	case ${spec%%:*} in
	cmocka | fuzz | tap) ;;
	*) echo "run-tests: unknown test kind '${spec%%:*}' in '$spec'" >&2; rm -rf "$state"; exit 2 ;;
	esac
	case $TEST_LANES:${spec#*:} in
	2:*/tests/lab/* | 2:tests/lab/*) lab+=("$index:$spec") ;;
	*) rest+=("$index:$spec") ;;
	esac
done
lanes=()
# stop STATUS: the lanes stop their tests and end, then the harness.
stop() {
	[ ${#lanes[@]} = 0 ] || kill -TERM "${lanes[@]}" 2>/dev/null
	wait
	rm -rf "$state"
	exit "$1"
}
trap 'stop 130' INT
trap 'stop 143' TERM
trap 'stop 129' HUP
if [ ${#lab[@]} -gt 0 ]; then
	run_lane "${lab[@]}" &
	lanes+=($!)
fi
if [ ${#rest[@]} -gt 0 ]; then
	run_lane "${rest[@]}" &
	lanes+=($!)
fi
wait "${lanes[@]}"
lanes=()

for ((i = 1; i <= index; i++)); do
	record=$state/records/$i
	if [ ! -f "$record" ]; then
		failed=$((failed + 1))
		failures+=("test $i of $index (${!i}): its lane ended without a record")
		continue
	fi
	{
		read -r ok not_ok skip
		IFS= read -r failure
		IFS= read -r log
		IFS= read -r skip_line
	} <"$record"
	passed=$((passed + ok))
	failed=$((failed + not_ok))
	skipped=$((skipped + skip))
	[ -z "$failure" ] || { failures+=("$failure"); failed_logs+=("$log"); }
	[ -z "$skip_line" ] || skips+=("$skip_line")
done
rm -rf "$state"

# The failures again, each `not ok` line with the comments around it, so that
# the end of the output (all a CI page may show) says what failed and why.
if [ ${#failed_logs[@]} -gt 0 ]; then
	echo "# ==== what failed ===="
	for log in "${failed_logs[@]}"; do
		echo "# --- $log"
		awk '/^not ok/ { for (i = 0; i < c; i++) print before[i]; c = 0; n = 40; print; next }
		     /^#/ { if (n > 0) { print; n--; next } if (c < 40) before[c++] = $0; next }
		     { c = 0; n = 0 }' "$log" | head -n 200
	done
fi
if [ ${#failures[@]} -gt 0 ]; then
	echo "# failed:"
	printf '#   %s\n' "${failures[@]}"
fi
if [ ${#skips[@]} -gt 0 ]; then
	echo "# skipped:"
	printf '#   %s\n' "${skips[@]}"
fi
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
