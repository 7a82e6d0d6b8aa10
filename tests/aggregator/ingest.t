#!/usr/bin/env bash
# `bootci-aggregator ingest` on the command line (SQLite store in a temporary
# data folder): exit codes, what it says, rows counted with the sqlite3 tool
# against reference.json, the same run twice, the kept archive given back,
# refusals with their messages. The library behind it has its own suites
# (tests/unit/test_ingest.c, test_store.c).
set -uo pipefail
: "${BUILD:?}" "${SRC:?}"
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

aggregator=$BUILD/host/bin/bootci-aggregator
# igt_runner's own normal run (several binaries and subtests) when the conformance data is there.
scenario=$SRC/../shared/conformance/igt-runner-results/normal-run
[ -d "$scenario" ] || scenario=$SRC/tests/resultgen/scenarios/piglit-style-default-level
name=$(basename "$scenario")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
plan 22

"$aggregator" ingest >"$work/usage.out" 2>&1
check "no folder or archive: usage, exit 2" test $? = 2

"$aggregator" ingest --data "$work/data" --machine lab-1 "$scenario" >"$work/first.out" 2>"$work/first.err"
status=$?
check "a results folder is stored (exit 0)" test "$status" = 0
tests=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tests"]))' "$scenario/reference.json")
rows=$(sqlite3 "$work/data/bootci.sqlite" "SELECT COUNT(*) FROM results JOIN runs ON runs.id = results.run WHERE runs.run_id = '$name'")
check "one result row per test of reference.json ($rows, $tests)" test "$rows" = "$tests"
check "it says what it stored" grep -q "machine lab-1, run $name: stored $tests results" "$work/first.out"

"$aggregator" ingest --data "$work/data" --machine lab-1 "$scenario" >"$work/again.out" 2>&1
status=$?
check "the same folder again: exit 0" test "$status" = 0
check "... and nothing added" grep -q "already stored" "$work/again.out"

archive=$(ls "$work/data/archives/"*.tar.zst)
BOOTCI_STORE=sqlite:$work/other.sqlite "$aggregator" ingest --data "$work/data" "$archive" >"$work/env.out" 2>&1
status=$?
check "its kept archive into another store named by BOOTCI_STORE (machine from the manifest)" \
	test "$status" = 0 -a "$(sqlite3 "$work/other.sqlite" 'SELECT name FROM machines')" = lab-1

"$aggregator" ingest --store "sqlite:$work/third.sqlite" --data "$work/data" --machine lab-2 "$archive" >"$work/other-machine.out" 2>&1
status=$?
check "the archive as another machine's: refused (exit 1)" test "$status" = 1
check "... naming the manifest's machine" grep -q "machine lab-1's, not lab-2's" "$work/other-machine.out"

"$aggregator" ingest --store "mysql://db" --data "$work/data" --machine lab-1 "$scenario" >"$work/url.out" 2>&1
status=$?
check "an unknown store URL: exit 1 naming it" test "$status" = 1 -a -n "$(grep 'mysql://db' "$work/url.out")"

"$aggregator" ingest --data "$work/data" --machine lab-1 "$work/missing" >"$work/missing.out" 2>&1
status=$?
check "a path that is not there: exit 1 naming it" test "$status" = 1 -a -n "$(grep "$work/missing" "$work/missing.out")"

# Several runs in one call, two at a time as serve's workers: each its own transaction, a bad one
# named without losing the others.
mkdir "$work/two"
cp -r "$scenario" "$work/two/run-a"
cp -r "$scenario" "$work/two/run-b"
printf 'not a tar\n' >"$work/two/bad.tar"
"$aggregator" ingest --data "$work/data" --machine lab-1 --jobs 2 "$work/two/run-a" \
	"$work/two/bad.tar" "$work/two/run-b" "$archive" >"$work/two.out" 2>"$work/two.err"
status=$?
check "several runs, one of them not an archive: exit 1" test "$status" = 1
check "... the bad one named" grep -q "$work/two/bad.tar" "$work/two.err"
runs=$(sqlite3 "$work/data/bootci.sqlite" "SELECT group_concat(run_id, ' ') FROM (SELECT run_id FROM runs ORDER BY run_id)")
check "... the good ones stored, each with its results ($runs)" test "$runs" = "$name run-a run-b" -a \
	"$(sqlite3 "$work/data/bootci.sqlite" "SELECT COUNT(*) FROM results JOIN runs ON runs.id = results.run WHERE runs.run_id = 'run-b'")" = "$tests"
check "... and the one already there said so" grep -q "already stored" "$work/two.out"

"$aggregator" ingest --data "$work/data" --machine lab-1 --run-id x "$work/two/run-a" "$work/two/run-b" >"$work/two-id.out" 2>&1
status=$?
check "--run-id with two runs: refused (exit 2), saying why" test "$status" = 2 -a \
	-n "$(grep -- '--run-id names one run' "$work/two-id.out")"
"$aggregator" ingest --data "$work/data" --jobs 0 "$archive" >"$work/jobs.out" 2>&1
status=$?
check "--jobs 0: refused (exit 2), naming it" test "$status" = 2 -a -n "$(grep -- '--jobs 0' "$work/jobs.out")"
"$aggregator" ingest --data "$work/data" --jobs many "$archive" >"$work/jobs.out" 2>&1
status=$?
check "--jobs many: refused (exit 2), saying what is taken" test "$status" = 2 -a \
	-n "$(grep -- '--jobs many: not a number from 1 to 64, nor auto' "$work/jobs.out")"
# auto: serve's default workers (the CPUs plus one); on one CPU that is two, as strace shows.
mkdir "$work/auto"
for r in a b c; do cp -r "$scenario" "$work/auto/run-$r"; done
taskset -c 0 strace -f -e trace=clone,clone3 -o "$work/auto.trace" "$aggregator" ingest \
	--data "$work/auto-data" --machine lab-1 --jobs auto "$work/auto"/run-* >"$work/auto.out" 2>&1
status=$?
check "--jobs auto on one CPU: exit 0, three runs stored" test "$status" = 0 -a \
	"$(sqlite3 "$work/auto-data/bootci.sqlite" 'SELECT COUNT(*) FROM runs')" = 3
check "... in two threads of one process (one started beside the main one)" \
	test "$(grep -cE 'clone3?\(' "$work/auto.trace")" = 1

# The same folder four times, two at a time: each packed under its own name (two threads of one
# process once packed it under one, and the other found it gone), stored once.
"$aggregator" ingest --data "$work/same" --machine lab-1 --jobs 2 "$scenario" "$scenario" \
	"$scenario" "$scenario" >"$work/same.out" 2>"$work/same.err"
status=$?
check "one folder given four times, two at a time: exit 0" test "$status" = 0
check "... stored once, the others already stored" test \
	"$(grep -c ': stored ' "$work/same.out")/$(grep -c 'already stored' "$work/same.out")/$(sqlite3 "$work/same/bootci.sqlite" 'SELECT COUNT(*) FROM runs')" = 1/3/1
