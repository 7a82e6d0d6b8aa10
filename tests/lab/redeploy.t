#!/usr/bin/env bash
# A re-deploy in the lab (issue 13, "Recovery"): a machine enrolled on a known-good disk from
# the master, with a run on its results partition that was never uploaded, has its partition
# table overwritten (LBA 0-33 zeroed: no protective MBR, no primary GPT). Marked damaged by
# `schedule redeploy`, it netboots the deploy job through serve: the executor salvages the old
# results filesystem at the offset the image gives it (its identity and the run), writes the
# known-good disk image streamed from the master, reads it back against the plan's digest,
# re-reads the partition table, registers the bootci-known-good entry and hands over to it.
# The known-good image then boots from the disk and uploads the salvaged run that is over with the
# salvaged identity, and its reboot's boot request clears the master's mark (the queued job, which
# gave the deploy job its kernel, is handed out then: the test stops there, loop.t runs jobs).
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source=tests/lab/master.sh
. "$(dirname "$0")/master.sh"
# shellcheck source=tests/lab/loop.sh
. "$(dirname "$0")/loop.sh"
PATH=$PATH:/usr/sbin:/sbin

AGGREGATOR=${BOOTCI_AGGREGATOR:-$BUILD/host/bin/bootci-aggregator}
TEST_IMAGE=${LAB_TEST_IMAGE:-$BUILD/images/test}
known_good=${LAB_KNOWN_GOOD:-$BUILD/images/known-good}
LOOP_WORK=$BUILD/lab/redeploy
LOOP_NAMES=(deploy-1)
LOOP_GROUP=""
LOOP_TREE=redeploy-tree
LOOP_TREE_FULL=never
LOOP_DEADLINE=10m
LOOP_POWER_TIMEOUT=600
dir=$LOOP_WORK/machines/deploy-1
# The deploy initrd carries the 322 MiB disk image: iPXE holds it and the kernel's EFI stub
# copies it (EFI_OUT_OF_RESOURCES in 1 GiB), then the kernel unpacks it into its rootfs. The
# machine (and the power command serve runs, which inherits this) gets 2 GiB.
export LAB_QEMU_EXTRA="${LAB_QEMU_EXTRA:-} -m 2048"

rm -rf "$LOOP_WORK"
mkdir -p "$LOOP_WORK"
printf 'igt@igt_basic@pass\n' >"$LOOP_WORK/base.testlist"
trap 'loop_stop' EXIT

# wait_back TIMEOUT: the master's log says the machine asked for a boot after its re-deploy
wait_back() {
	local until=$((SECONDS + $1))
	while [ $SECONDS -lt "$until" ]; do
		grep -a "deploy-1: back after its re-deploy" "$LOOP_WORK/master.log" >/dev/null && return 0
		sleep 2
	done
	tail -n 15 "$LOOP_WORK/master.log" | diag
	return 1
}

# uploaded RUN: the master holds RUN of deploy-1 (uploaded with the machine's token)
uploaded() {
	master_run_state "$LOOP_PORT" deploy-1 "$(cat "$LOOP_WORK/tokens/deploy-1")" "$1" | grep -F '"stored"' >/dev/null
}

# plant_run: runs/never-uploaded/notes.txt on the machine's results partition (debugfs on a copy
# of the partition, written back in place): a run the deploy must not lose
plant_run() {
	local start size
	read -r start size < <(awk '$1 == "results" { print $2, $3 }' "$dir/layout")
	dd if="$dir/disk.img" of="$LOOP_WORK/results.img" bs=1M iflag=skip_bytes,count_bytes \
		skip="$start" count="$size" status=none || return 1
	printf 'a run the deploy salvages\n' >"$LOOP_WORK/notes.txt"
	printf 'mkdir runs\nmkdir runs/never-uploaded\nwrite %s runs/never-uploaded/notes.txt\n' \
		"$LOOP_WORK/notes.txt" >"$LOOP_WORK/plant.debugfs"
	debugfs -w -f "$LOOP_WORK/plant.debugfs" "$LOOP_WORK/results.img" >/dev/null 2>&1 || return 1
	dd if="$LOOP_WORK/results.img" of="$dir/disk.img" bs=1M oflag=seek_bytes seek="$start" \
		conv=notrunc,sparse status=none
}

# gpt_unreadable: the kernel and sfdisk find no partition table on the disk any more
gpt_unreadable() {
	! sfdisk --dump "$dir/disk.img" >/dev/null 2>&1
}

# table FILE: FILE's partition table as sfdisk dumps it, without the file's name
table() {
	sfdisk --dump "$1" | sed -e '/^device:/d' -e 's/^[^ ]* : /: /'
}

# same_table: the disk's partition table is the known-good image's again
same_table() {
	local a b
	a=$(table "$dir/disk.img") && b=$(table "$LOOP_WORK/known-good-kg-1.img") || return 1
	[ -n "$a" ] && [ "$a" = "$b" ] && { printf '%s\n' "$a" | diag; }
}

plan 16
started=$SECONDS
check "the master started with the inventory" loop_master_start || exit 1
check "the known-good image published over HTTP as kg-1" \
	eval 'loop_publish_known_good kg-1 "$known_good" "$BUILD/images/known-good.manifest" | diag'
check "the machine's disk written from kg-1, its entry made, enrolled" \
	loop_machines_prepare kg-1 || exit 1
check "a run never uploaded planted on its results partition" plant_run
check "a build published, its fast tier queued for the machine" \
	eval 'loop_publish base "$TEST_IMAGE" "$BUILD/images/test.manifest" "$LOOP_WORK/base.testlist" - --commit 1111111 --tier fast | diag'
dd if=/dev/zero of="$dir/disk.img" bs=512 count=34 conv=notrunc status=none
check "the disk's partition table overwritten (LBA 0-33 zeroed)" gpt_unreadable
check "schedule redeploy marks it damaged" \
	eval '"$AGGREGATOR" schedule --data "$LOOP_DATA" redeploy deploy-1 2>&1 | diag'
check "the machine powered on (netboot)" loop_power_on
check "re-deployed, known-good booted, and the machine asked the master again" wait_back 300
echo "back $((SECONDS - started)) s after the test began" | diag
grep -a 'bootci: deploy:' "$dir/console.log" | cut -c1-200 | diag
check "the master handed out the deploy job, and cleared the mark at the next boot request" \
	eval 'grep -a "deploy-1: re-deployed with known-good kg-1" "$LOOP_WORK/master.log" >/dev/null &&
	      grep -a "deploy-1: back after its re-deploy" "$LOOP_WORK/master.log" >/dev/null'
check "the executor salvaged the old results through the image's offset, identity and run kept" \
	eval 'console_has "$dir" "deploy: salvage: the partition table is gone" &&
	      console_has "$dir" "deploy: salvage: 3 kept \(the machine.s identity among them\), 0 not salvaged"'
check "it wrote and verified the image, re-read the table and registered the entry" \
	eval 'console_has "$dir" "deploy: /dev/vda verified: sha256 [0-9a-f]{64}" &&
	      console_has "$dir" "deploy: the kernel re-read /dev/vda.s partition table" &&
	      console_has "$dir" "deploy: boot entry .bootci-known-good. is Boot[0-9A-F]{4}" &&
	      console_has "$dir" "hand-over: BootNext=Boot[0-9A-F]{4} \(bootci-known-good\)"'
check "the known-good image then booted from the disk and uploaded with the salvaged identity" \
	eval 'console_order "$dir" "bootci: deploy: done in" "collect: the master confirmed the archive" &&
	      uploaded provision'
loop_stop
"$LAB" read "$dir" "$LOOP_WORK/read" >/dev/null 2>&1
check "the disk has the image's partition table again" same_table
check "the salvaged run and the deploy's record are on the new results partition" \
	eval 'cmp -s "$LOOP_WORK/notes.txt" "$LOOP_WORK/read/runs/never-uploaded/notes.txt" &&
	      grep -x "salvaged=3" "$LOOP_WORK"/read/deploy/*.txt >/dev/null'
echo "redeploy.t took $((SECONDS - started)) s" | diag
left=$(loop_leftovers)
[ -z "$left" ] || echo "left behind: $left" | diag
check "no QEMU or serve left behind" [ -z "$left" ]
