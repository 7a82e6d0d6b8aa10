#!/usr/bin/env bash
# The test harness of `make check`: runs each test given as KIND:PATH, shows its
# output as it comes, counts TAP results, and ends with `N passed, M failed`.
#   cmocka:BIN  a cmocka binary (run with TAP output)
#   fuzz:BIN    a libFuzzer target: every committed corpus and crash input of
#               tests/fuzz/{corpus,crashes}/NAME re-run, then FUZZ_SECONDS of
#               fuzzing from a scratch copy of the corpus
#   tap:SCRIPT  a script printing TAP
# A test that exits non-zero without reporting a failure, or whose plan line
# (1..N) is missing or does not match the results it printed, counts as one
# failure; `ok N # SKIP` lines count as skipped, not passed.
set -uo pipefail

: "${BUILD:?}" "${SRC:?}"
export BUILD SRC
passed=0
failed=0
skipped=0
failures=()
failed_logs=()
log_dir=$BUILD/tests/logs
mkdir -p "$log_dir"

# count NAME LOG STATUS: adds the TAP lines of LOG to the totals. Beyond the
# `not ok` lines, one failure for a test that exited non-zero, reported no
# result, printed no plan, or ran another number of tests than it planned (a
# script that stops early with status 0 passes every check it reached). Plans
# are summed: a cmocka binary prints one per group.
count() {
	local name=$1 log=$2 status=$3 ok not_ok skip planned ran problem=0
	skip=$(grep -cE '^ok [0-9]+ # SKIP' "$log")
	ok=$(($(grep -cE '^ok [0-9]+' "$log") - skip))
	not_ok=$(grep -cE '^not ok [0-9]+' "$log")
	ran=$((ok + skip + not_ok))
	planned=$(sed -nE 's/^1\.\.([0-9]+)([^0-9].*)?$/\1/p' "$log" | awk '{ n += $1; c++ } END { if (c) print n }')
	if [ "$status" != 0 ] && [ "$not_ok" = 0 ]; then
		problem=1
		echo "not ok - $name exited with status $status" | tee -a "$log"
	fi
	if [ "$ran" = 0 ]; then
		problem=1
		echo "not ok - $name reported no test" | tee -a "$log"
	fi
	if [ -z "$planned" ]; then
		problem=1
		echo "not ok - $name printed no plan (1..N)" | tee -a "$log"
	elif [ "$planned" != "$ran" ]; then
		problem=1
		echo "not ok - $name planned $planned tests, ran $ran" | tee -a "$log"
	fi
	not_ok=$((not_ok + problem))
	passed=$((passed + ok))
	skipped=$((skipped + skip))
	failed=$((failed + not_ok))
	[ "$not_ok" = 0 ] || { failures+=("$name (log: $log)"); failed_logs+=("$log"); }
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
	[ ! -d "$SRC/tests/fuzz/corpus/$name" ] || cp -r "$SRC/tests/fuzz/corpus/$name/." "$scratch/"
	n=$((n + 1))
	if "$bin" -max_total_time="${FUZZ_SECONDS:-15}" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$log_dir/fuzz-$name-" "$scratch" >"$log_dir/fuzz-$name.log" 2>&1; then
		echo "ok $n - fuzz $name: ${FUZZ_SECONDS:-15}s without a finding ($(grep -o 'Done [0-9]* runs' "$log_dir/fuzz-$name.log" | tail -n1))"
	else
		echo "not ok $n - fuzz $name: finding saved under $log_dir/fuzz-$name-* (add it to tests/fuzz/crashes/$name/)"
	fi
	rm -rf "$scratch"
	echo "1..$n"
}

for spec in "$@"; do
	kind=${spec%%:*}
	path=${spec#*:}
	name=${path#"$BUILD"/}
	name=${name#"$SRC"/}
	log=$log_dir/$(echo "$name" | tr '/' '_').log
	echo "# --- $name"
	case $kind in
	cmocka) CMOCKA_MESSAGE_OUTPUT=TAP "$path" 2>&1 | tee "$log" ;;
	fuzz) run_fuzz "$path" 2>&1 | tee "$log" ;;
	tap) "$path" 2>&1 | tee "$log" ;;
	*) echo "run-tests: unknown test kind '$kind' in '$spec'" >&2; exit 2 ;;
	esac
	count "$name" "$log" "${PIPESTATUS[0]}"
done

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
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
