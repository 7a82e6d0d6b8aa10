#!/usr/bin/env bash
# The lab loop of `make demo`, shorter (tests/lab/loop.sh does the lab side of both): one
# machine run by a master (`serve` on 127.0.0.1) that powers it through its BMC (ipmi_sim,
# `lab bmc`; the inventory's ipmi driver),
# the known-good image published over HTTP and written to the machine's disk from the
# master, one fixed iPXE script chaining to /api/v1/boot/${net0/mac}; a base build whose
# fast tier is one passing subtest, then a patched build whose fast tier adds a subtest that
# panics the kernel (no full tier: the tree says never). The machine netboots each job,
# hands over, uploads; after the panic it netboots the same job again and resumes. The
# patched build's reply must name exactly the panicked subtest as its possible new issue.
# Both builds are published before the machine is on: the patched build's job is queued
# behind the base's, so the machine takes it at its first netboot after the base's upload.
# (Published once the base was done, it raced that netboot: when it lost, the machine went
# through `exit`, a known-good boot and a reboot first, a minute more under TCG.)
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
LOOP_WORK=$BUILD/lab/loop
LOOP_NAMES=(loop-1)
LOOP_GROUP=""
LOOP_TREE=loop-tree
LOOP_TREE_FULL=never
LOOP_DEADLINE=10m
LOOP_POWER_TIMEOUT=900
LOOP_POWER=ipmi
LOOP_CONSOLE=ser2net
panicked=igt@igt_kernel@panic

rm -rf "$LOOP_WORK"
mkdir -p "$LOOP_WORK"
printf 'igt@igt_basic@pass\n' >"$LOOP_WORK/base.testlist"
printf 'igt@igt_basic@pass\n%s\n' "$panicked" >"$LOOP_WORK/regression.testlist"
trap 'loop_stop' EXIT

# wait_tier BUILD TIER TIMEOUT: loop_wait_tier, its progress as TAP comments
wait_tier() {
	loop_wait_tier "$@" 2>&1 | diag
	return "${PIPESTATUS[0]}"
}

# the steps whose output goes to the TAP log
publish_known_good() {
	loop_publish_known_good kg-1 "$known_good" "$BUILD/images/known-good.manifest" | diag
}
publish() {
	loop_publish "$@" | diag
}

# tags_are MACHINE "TAG TAG ": the store's tags of MACHINE, in name order
tags_are() {
	local tags
	tags=$("$AGGREGATOR" machine --data "$LOOP_DATA" tags "$1" | tr '\n' ' ')
	echo "$1's tags in the store: $tags" | diag
	[ "$tags" = "$2" ]
}

# reply_new_issues MBOX: "TEST MACHINE" per possible new issue of the reply, sorted
reply_new_issues() {
	python3 - "$1" <<'PY'
import email, re, sys
data = open(sys.argv[1], "rb").read()
body = email.message_from_bytes(data[data.index(b"\n") + 1:]).get_payload(decode=True).decode()
section = re.search(r"^== Possible new issues ==\n(.*?)(?=^== |\Z)", body, re.S | re.M)
for test, lines in re.findall(r"^  \* (\S+):\n((?:    - .*\n)+)", section.group(1) if section else "", re.M):
    for machine in re.findall(r"^    - (\S+):", lines, re.M):
        print(test, machine)
PY
}

plan 14
check "the master started with the inventory" loop_master_start || exit 1
check "the known-good image published over HTTP as kg-1" \
	publish_known_good
check "the machine's disk written from the master's kg-1, entry made, enrolled" \
	loop_machines_prepare kg-1 || exit 1
check "the base build published over HTTP (its fast tier queued)" \
	publish base "$TEST_IMAGE" "$BUILD/images/test.manifest" "$LOOP_WORK/base.testlist" - \
	--commit 1111111 --tier fast
check "the patched build published on the base (its job queued behind the base's)" \
	publish series "$TEST_IMAGE" "$BUILD/images/test.manifest" "$LOOP_WORK/regression.testlist" - \
	--commit 2222222 --tier fast --base base --series-title "a series that panics" \
	--message-id "<loop.1@lab.example>"
check "the inventory's tags are the machine's in the store (the matrix groups by them)" \
	tags_are loop-1 "lab qemu "
check "the machine powered on by the master through its BMC (netboot, the fixed chain script)" \
	loop_power_on
check "the base build's fast tier done: netbooted, run, handed over, uploaded" \
	wait_tier base fast 900
loop_jobs base | diag
check "no full tier: the tree never runs it" \
	eval "[ \"\$(loop_wait_gate base 60)\" = 'base: full tier not run (tree $LOOP_TREE: full = never)' ]"
check "the patched build's fast tier done despite the panic" wait_tier series fast 900
loop_jobs series | diag
check "after the panic the machine netbooted the same job again" \
	grep -a -E "boot: loop-1: series-fast \\(handed out again, boot 2\\)" "$LOOP_WORK/master.log"
"$AGGREGATOR" report --build series --data "$LOOP_DATA" --mbox "$LOOP_WORK/series.mbox" \
	--date 2000000000 2>&1 | diag
new=$(reply_new_issues "$LOOP_WORK/series.mbox")
echo "possible new issues: $new" | diag
check "the reply's possible new issues are exactly $panicked on loop-1" \
	[ "$new" = "$panicked loop-1" ]
check "the master kept the machine's console per boot, through ser2net, the panic in one" \
	eval '[ "$(ls "$LOOP_DATA/consoles/loop-1"/*.log | wc -l)" -ge 3 ] &&
		grep -a -l -F "Kernel panic - not syncing" "$LOOP_DATA/consoles/loop-1"/*.log >/dev/null'
loop_stop
left=$(loop_leftovers)
[ -z "$left" ] || echo "left behind: $left" | diag
check "no QEMU, BMC, ser2net or serve left behind" [ -z "$left" ]
