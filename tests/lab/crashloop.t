#!/usr/bin/env bash
# A kernel that crashes at every boot reaches the master whole, named as the kernel's fault
# (issue 34 point 1). One machine run by a master (tests/lab/loop.sh), two builds queued
# before it is on:
#   test-program  a single-program build: its image's command line names a test= program
#                 that panics the kernel before it prints anything (igt_kernel panic-at-start),
#                 at every boot. The executor caps the run after boot_cap (3) crashed boots:
#                 the 4th boot writes `state capped` and hands over; the known-good image
#                 uploads the run with its 4 boot records and the 3 crash captures (the
#                 program prints nothing before its panic: keeping each crashed boot's
#                 output is test_executor.c's runner_rerun_keeps_the_crashed_boots_output).
#   igt           an IGT run whose two jobs each panic at start: 3 + 3 + 1 boots, more than
#                 the 5 after which the master used to blame the disk and re-deploy it.
# Both runs reach the master whole, the master counts each job's boots, its verdict names
# the kernel under test, and the disk is never re-deployed.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source=tests/lab/master.sh
. "$(dirname "$0")/master.sh"
# shellcheck source=tests/lab/loop.sh
. "$(dirname "$0")/loop.sh"

AGGREGATOR=${BOOTCI_AGGREGATOR:-$BUILD/host/bin/bootci-aggregator}
TEST_IMAGE=${LAB_TEST_IMAGE:-$BUILD/images/test}
known_good=${LAB_KNOWN_GOOD:-$BUILD/images/known-good}
LOOP_WORK=$BUILD/lab/crashloop
LOOP_NAMES=(crash-1)
LOOP_GROUP=""
LOOP_TREE=crash-tree
LOOP_TREE_FULL=never
LOOP_DEADLINE=10m
LOOP_POWER_TIMEOUT=1500
program='/usr/libexec/bootci/fixtures/igt_kernel --run-subtest panic-at-start'

rm -rf "$LOOP_WORK"
mkdir -p "$LOOP_WORK"
printf 'igt@igt_basic@pass\n' >"$LOOP_WORK/program.testlist"
printf 'igt@igt_kernel@panic-at-start\nigt@igt_kernel@panic-at-start\n' >"$LOOP_WORK/igt.testlist"
trap 'loop_stop' EXIT

wait_tier() {
	loop_wait_tier "$@" 2>&1 | diag
	return "${PIPESTATUS[0]}"
}
publish_known_good() {
	loop_publish_known_good kg-1 "$known_good" "$BUILD/images/known-good.manifest" | diag
}
publish() {
	loop_publish "$@" | diag
}

# run_archive RUN: the master's archive of RUN (by the digest serve answers)
run_archive() {
	local sha
	sha=$(master_run_state "$LOOP_PORT" crash-1 "$(cat "$LOOP_WORK/tokens/crash-1")" "$1" |
		python3 -c 'import json, sys; print(json.load(sys.stdin).get("sha256", ""))')
	[ -n "$sha" ] && find "$LOOP_DATA" -name "$sha.tar.zst" | head -n 1
}

# archive_has RUN PATTERN...: every extended regex matches a path of RUN's archive
archive_has() {
	local run=$1 archive list p
	shift
	archive=$(run_archive "$run") && [ -n "$archive" ] || { echo "no archive of $run" | diag; return 1; }
	list=$(tar --zstd -tf "$archive")
	for p in "$@"; do
		printf '%s\n' "$list" | grep -E -q "$p" || { echo "$run: nothing matches $p" | diag; return 1; }
	done
}

# archive_file RUN PATH: a file of RUN's archive (the run folder is its root or one folder down)
archive_file() {
	local archive
	archive=$(run_archive "$1") || return 1
	tar --zstd -xOf "$archive" --wildcards "*$2" 2>/dev/null
}

# crashes RUN: how many boot records of RUN carry a pstore capture
crashes() {
	tar --zstd -tf "$(run_archive "$1")" | grep -E -o 'boot-[0-9]{4}/pstore/' | sort -u | wc -l
}

no_redeploy() {
	! grep -a -E 'disk damaged|re-deploy' "$LOOP_WORK/master.log" &&
		! "$AGGREGATOR" schedule --data "$LOOP_DATA" machines | grep -q ' disk '
}

plan 16
check "the master started with the inventory" loop_master_start || exit 1
check "the known-good image published over HTTP as kg-1" publish_known_good
check "the machine's disk written from the master's kg-1, entry made, enrolled" \
	loop_machines_prepare kg-1 || exit 1
check "a test image whose command line runs a program that panics at every boot" \
	loop_image program "bootci.boot_cap=3 bootci.test=\"$program\""
check "the single-program build published (its job queued)" \
	publish tp "$LOOP_WORK/program-image" "$LOOP_WORK/program.manifest" \
	"$LOOP_WORK/program.testlist" - --commit 1111111 --tier fast
check "the IGT build published (two jobs that each panic at start, queued behind)" \
	publish ig "$TEST_IMAGE" "$BUILD/images/test.manifest" "$LOOP_WORK/igt.testlist" - \
	--commit 2222222 --tier fast
check "the machine powered on (netboot, the fixed chain script)" loop_power_on
check "the single-program run reached the master" wait_tier tp fast 1200
loop_jobs tp | diag
check "its job was booted 4 times: 3 crashes, then the boot that capped it" \
	[ "$(loop_job_field tp boots)" = 4 ]
check "the master's verdict names the kernel" \
	eval "loop_job_field tp note | grep -F 'the kernel under test crashed at every boot: 3 of the run' >/dev/null"
archive_file tp-fast test/result.txt | diag
check "its 4 boot records and 3 crash captures reached the master, the run capped" \
	eval 'archive_has tp-fast "boot-0001/boot.txt" "boot-0004/end.txt" &&
		[ "$(crashes tp-fast)" = 3 ] &&
		archive_file tp-fast test/result.txt | grep -q "^state capped$"'
check "the IGT run reached the master whole" wait_tier ig fast 1500
loop_jobs ig | diag
check "its job was booted 7 times (3 + 3 + 1), more than the 5 that once meant a bad disk" \
	[ "$(loop_job_field ig boots)" = 7 ]
check "its 7 boot records, 6 crash captures and both jobs capped reached the master" \
	eval 'archive_has ig-fast "boot-0007/end.txt" "(^|/)0/out.txt" "(^|/)1/out.txt" &&
		[ "$(crashes ig-fast)" = 6 ] &&
		[ "$(archive_file ig-fast bootci-journal.txt | grep -c "^capped ")" = 2 ]'
check "the master's verdicts name the kernel, never the disk (no re-deploy)" \
	eval "loop_job_field ig note | grep -F 'the kernel under test crashed at every boot: 6 of the run' >/dev/null && no_redeploy"
loop_stop
left=$(loop_leftovers)
[ -z "$left" ] || echo "left behind: $left" | diag
check "no QEMU or serve left behind" [ -z "$left" ]
