#!/usr/bin/env bash
# Boots that never reach a run (issue 34, points 1 and 5). One machine run by a master
# (tests/lab/loop.sh), two builds queued before it is on:
#   ep  its kernel panics at every boot before the executor starts (rdinit= names no
#       program: the kernel finds no root and panics), so no run folder is ever made.
#       The master ends the run at its boot cap and sends the machine to its known-good
#       image, whose collect has no run to ask about but says hello: the disk boots, the
#       verdict names the kernel, nothing is re-deployed.
#   np  the executor starts but finds no results partition (a label no disk has) at every
#       boot: each boot ends in error before its run begins and is counted in the EFI
#       variable; at error_boots (2 here) the known-good image's collect tells the master,
#       which takes the machine out, and the machine powers itself off (collect exits 3,
#       test_poweroff_status=3) instead of netbooting into the same failure for ever.
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
LOOP_WORK=$BUILD/lab/early-panic
LOOP_NAMES=(early-1)
LOOP_GROUP=""
LOOP_TREE=early-tree
LOOP_TREE_FULL=never
LOOP_DEADLINE=10m
LOOP_POWER_TIMEOUT=1500

rm -rf "$LOOP_WORK"
mkdir -p "$LOOP_WORK"
printf 'igt@igt_basic@pass\n' >"$LOOP_WORK/one.testlist"
trap 'loop_stop' EXIT

publish_known_good() {
	loop_publish_known_good kg-1 "$known_good" "$BUILD/images/known-good.manifest" | diag
}
publish() {
	loop_publish "$@" | diag
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds (every 3 s), 1 when the time is up
wait_for() {
	local until=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt "$until" ] || return 1
		sleep 3
	done
}

judged() {
	loop_job_field ep note | grep -q -F 'said hello): the disk boots, the kernel under test did not'
}

machine_off() {
	[ "$("$LAB" power "$(loop_dir early-1)" status)" = off ]
}

machine_line() {
	"$AGGREGATOR" schedule --data "$LOOP_DATA" machines | grep '^early-1 '
}

no_redeploy() {
	! grep -a -E 'disk damaged|re-deploy' "$LOOP_WORK/master.log" &&
		! "$AGGREGATOR" schedule --data "$LOOP_DATA" machines | grep -q ' disk '
}

plan 11
check "the master started with the inventory" loop_master_start || exit 1
check "the known-good image published over HTTP as kg-1" publish_known_good
check "the machine's disk written from the master's kg-1, entry made, enrolled" \
	loop_machines_prepare kg-1 || exit 1
check "a test image whose kernel panics before the executor, and one that finds no partition" \
	eval 'loop_image ep "rdinit=/bootci-no-such-init" &&
		loop_image np "bootci.results_label=BOOTCI-NONE bootci.results_wait=1 bootci.error_boots=2"'
check "both builds published (their jobs queued, ep first)" \
	eval 'publish ep "$LOOP_WORK/ep-image" "$LOOP_WORK/ep.manifest" "$LOOP_WORK/one.testlist" - \
		--commit 1111111 --tier fast &&
	      publish np "$LOOP_WORK/np-image" "$LOOP_WORK/np.manifest" "$LOOP_WORK/one.testlist" - \
		--commit 2222222 --tier fast'
check "the machine powered on (netboot, the fixed chain script)" loop_power_on
check "the master ended the early-panic run at its cap, and judged it once collect said hello" \
	wait_for 1200 judged
loop_jobs ep | diag
check "its verdict names the kernel, never the disk (no re-deploy)" \
	eval 'loop_job_field ep note | grep -q -F "the kernel under test never finished the run" &&
		grep -a -q "early-1: its known-good image started: 1 run the master ended" \
			"$LOOP_WORK/master.log" && no_redeploy'
check "the machine whose boots end before their run powered itself off" wait_for 900 machine_off
machine_line | diag
check "the master took it out with the machine's reason" \
	eval 'machine_line | grep -E -q " out .*the machine reported: 2 boots in a row ended before run np-fast began: .*BOOTCI-NONE"'
grep -a -E "collect: (the master|hello)|powering off|test program asked" "$(loop_dir early-1)/console.log" | tail -n 6 | diag
loop_stop
left=$(loop_leftovers)
[ -z "$left" ] || echo "left behind: $left" | diag
check "no QEMU or serve left behind" [ -z "$left" ]
