#!/usr/bin/env bash
# A re-deploy in the lab (issue 13, "Recovery"), cut twice by power cuts (issue 34, point 2).
# A machine enrolled on a known-good disk from the master (its disk bigger than the image, as
# every real disk is), with a finished run on its results partition that was never uploaded,
# has its partition table overwritten (LBA 0-33 zeroed: no protective MBR, no primary GPT).
# Marked damaged by `schedule redeploy`, it netboots the deploy job through serve: the
# executor salvages the old results filesystem at the offset the image gives it (its identity
# and the runs) into the salvage area past the image, synced and read back, then writes the
# known-good image streamed from the master. The power is cut during that write: the master
# has no record of the deploy, so the machine's next boot gets the same deploy job, which
# finds the salvage of its own deploy on the disk and salvages nothing from the half-written
# one; the power is cut again during its read-back, when nothing of the old results partition
# is left. The third attempt verifies the image, re-reads the table, registers the
# bootci-known-good entry, puts the salvage back, clears the area, writes the deploy's record
# run and hands over. The known-good image then boots from the disk and uploads, with the
# salvaged identity (nobody enrols the machine again), the salvaged runs and the deploy's
# record; its reboot's boot request clears the master's mark (the queued job, which gave the
# deploy job its kernel, is handed out then: the test stops there, loop.t runs jobs).
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
# What the disk has past the image: room for the salvage area (the results partition is 256 MiB,
# the salvage here a few KiB).
ROOM_MIB=64

rm -rf "$LOOP_WORK"
mkdir -p "$LOOP_WORK"
printf 'igt@igt_basic@pass\n' >"$LOOP_WORK/base.testlist"
trap 'loop_stop' EXIT

# wait_log TIMEOUT REGEX: the master's log gets a line matching REGEX
wait_log() {
	local until=$((SECONDS + $1))
	while [ $SECONDS -lt "$until" ]; do
		grep -aE -- "$2" "$LOOP_WORK/master.log" >/dev/null && return 0
		sleep 2
	done
	tail -n 15 "$LOOP_WORK/master.log" | diag
	return 1
}

# wait_console OFFSET TIMEOUT REGEX: the console written past byte OFFSET gets a line matching
# REGEX (1 when the time is up or QEMU is gone first)
wait_console() {
	local offset=$1 until=$((SECONDS + $2))
	while [ $SECONDS -lt "$until" ]; do
		tail -c +$((offset + 1)) "$dir/console.log" | grep -aE -- "$3" >/dev/null && return 0
		[ "$("$LAB" power "$dir" status)" = on ] || break
		sleep 0.2
	done
	{
		echo "no console line matching $3; the console ends:"
		tail -c +$((offset + 1)) "$dir/console.log" | tail -n 20 | cut -c1-200
	} | diag
	return 1
}

# power_cut_after OFFSET REGEX DELAY: once the console past OFFSET says REGEX, DELAY seconds
# later QEMU is SIGKILLed (the machine loses power: what QEMU had not issued to the disk image
# is gone), and what that boot printed goes to $LOOP_WORK/attempt-N.log
attempts=0
power_cut_after() {
	local pid
	wait_console "$1" 420 "$2" || return 1
	sleep "$3"
	pid=$(cat "$dir/qemu.pid" 2>/dev/null)
	if [ -z "$pid" ] || ! grep -q '^qemu-system' "/proc/$pid/comm" 2>/dev/null; then
		echo "no QEMU to cut" | diag
		return 1
	fi
	kill -KILL "$pid"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	attempts=$((attempts + 1))
	tail -c +$(($1 + 1)) "$dir/console.log" >"$LOOP_WORK/attempt-$attempts.log"
	# The lab's wrapper says how QEMU ended before the next power on writes its header.
	sleep 1
	printf '\n=== redeploy.t: power cut %s s after "%s" ===\n' "$3" "$2" >>"$dir/console.log"
}

# power_on_again: the machine powered on as its power switch would (its remembered netboot)
power_on_again() {
	"$LAB" power "$dir" on >/dev/null
}

# console_size: where the console ends now (the next boot's lines come after it)
console_size() {
	stat -c %s "$dir/console.log" 2>/dev/null || echo 0
}

# attempt_has N REGEX: the boot of deploy attempt N (cut) printed a line matching REGEX
attempt_has() {
	grep -aE -- "$2" "$LOOP_WORK/attempt-$1.log" >/dev/null && return 0
	{ echo "attempt $1's console has no line matching $2; it ends:"; tail -n 15 "$LOOP_WORK/attempt-$1.log"; } | diag
	return 1
}

# uploaded RUN: the master holds RUN of deploy-1 (uploaded with the token it was enrolled with)
uploaded() {
	master_run_state "$LOOP_PORT" deploy-1 "$(cat "$LOOP_WORK/tokens/deploy-1")" "$1" | grep -F '"stored"' >/dev/null
}

# stored_file RUN PATH: PATH of RUN as the master keeps it (its archive), on stdout
stored_file() {
	local sha
	sha=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sha256"])' \
		"$LOOP_DATA/runs/deploy-1/$1.json") || return 1
	tar --zstd -xOf "$LOOP_DATA/archives/$sha.tar.zst" --wildcards "*$2"
}

# plant_run: runs/never-uploaded/ on the machine's results partition, a test program's run that
# finished (collect uploads it) and was never uploaded (debugfs on a copy of the partition,
# written back in place): a run the deploy must not lose
plant_run() {
	local start size
	read -r start size < <(awk '$1 == "results" { print $2, $3 }' "$dir/layout")
	dd if="$dir/disk.img" of="$LOOP_WORK/results.img" bs=1M iflag=skip_bytes,count_bytes \
		skip="$start" count="$size" status=none || return 1
	printf 'a run the deploy salvages\n' >"$LOOP_WORK/notes.txt"
	printf 'command salvage-me\nstate done\nexit-status 0\nduration 1.000\n' >"$LOOP_WORK/result.txt"
	printf '%s\n' 'mkdir runs' 'mkdir runs/never-uploaded' 'mkdir runs/never-uploaded/test' \
		"write $LOOP_WORK/notes.txt runs/never-uploaded/test/out.txt" \
		"write $LOOP_WORK/result.txt runs/never-uploaded/test/result.txt" >"$LOOP_WORK/plant.debugfs"
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
	sfdisk --dump "$1" 2>/dev/null | sed -e '/^device:/d' -e 's/^[^ ]* : /: /'
}

# same_table: the disk's partition table is the known-good image's again
same_table() {
	local a b
	a=$(table "$dir/disk.img") && b=$(table "$LOOP_WORK/known-good-kg-1.img") || return 1
	[ -n "$a" ] && [ "$a" = "$b" ] && { printf '%s\n' "$a" | diag; }
}

# area_cleared: the disk's last 4 KiB block (the salvage area's footer) is zeros again
area_cleared() {
	local size
	size=$(stat -c %s "$dir/disk.img")
	[ "$(tail -c 4096 "$dir/disk.img" | tr -d '\0' | wc -c)" = 0 ] && [ $((size % 4096)) = 0 ]
}

plan 20
started=$SECONDS
check "the master started with the inventory" loop_master_start || exit 1
check "the known-good image published over HTTP as kg-1" \
	eval 'loop_publish_known_good kg-1 "$known_good" "$BUILD/images/known-good.manifest" | diag'
check "the machine's disk written from kg-1, its entry made, enrolled" \
	loop_machines_prepare kg-1 || exit 1
truncate -s +"$ROOM_MIB"M "$dir/disk.img"
check "a finished run never uploaded planted on its results partition; the disk $ROOM_MIB MiB past the image" plant_run
check "a build published, its fast tier queued for the machine" \
	eval 'loop_publish base "$TEST_IMAGE" "$BUILD/images/test.manifest" "$LOOP_WORK/base.testlist" - --commit 1111111 --tier fast | diag'
dd if=/dev/zero of="$dir/disk.img" bs=512 count=34 conv=notrunc status=none
check "the disk's partition table overwritten (LBA 0-33 zeroed)" gpt_unreadable
check "schedule redeploy marks it damaged" \
	eval '"$AGGREGATOR" schedule --data "$LOOP_DATA" redeploy deploy-1 2>&1 | diag'

offset=$(console_size)
check "the machine powered on (netboot)" loop_power_on
check "power cut 1: during the deploy's write, once its salvage was durable" \
	power_cut_after "$offset" "bootci: deploy: writing the image to /dev/vda" 0.3
check "attempt 1 salvaged the old results through the image's offset into the area, identity and runs kept" \
	eval 'attempt_has 1 "deploy: salvage: the partition table is gone" &&
	      attempt_has 1 "deploy: salvage: 3 kept \(the machine.s identity among them\), 0 not salvaged; synced and read back" &&
	      ! grep -a "reading them back" "$LOOP_WORK/attempt-1.log" >/dev/null'
offset=$(console_size)
power_on_again
check "power cut 2: during the read-back of a second attempt, the same deploy handed out again" \
	eval 'power_cut_after "$offset" "deploy: [0-9]+ bytes written and synced in [0-9]+ ms; reading them back" 2 &&
	      grep -a "deploy-1: its re-deploy deploy-[^ ]* did not finish (no record came in): handed out again, try 2 of 3" "$LOOP_WORK/master.log" >/dev/null'
check "attempt 2 took the salvage of its own deploy from the area, nothing from the half-written disk" \
	eval 'attempt_has 2 "deploy: salvage: kept from an earlier attempt of this deploy \(deploy-[^)]*\): [0-9]+ entries" &&
	      ! grep -a "deploy: /dev/vda verified" "$LOOP_WORK/attempt-2.log" >/dev/null &&
	      ! grep -a "deploy: salvage: the old results partition\|deploy: salvage: the partition table is gone" "$LOOP_WORK/attempt-2.log" >/dev/null'
power_on_again
check "the third attempt finished, the known-good image booted, and the master took the deploy's record" \
	wait_log 420 "deploy-1: back after its re-deploy \(kg-1 \(was: asked for by a person\)\): its record deploy-[^ ]* came in"
echo "back $((SECONDS - started)) s after the test began" | diag
grep -a 'bootci: deploy:' "$dir/console.log" | cut -c1-200 | diag
grep -a 'deploy-1: ' "$LOOP_WORK/master.log" | grep -a 'deploy' | diag
deploy_id=$(grep -ao "its record deploy-[^ ]* came in" "$LOOP_WORK/master.log" | head -n 1 | cut -d' ' -f3)
check "the third attempt also used the area, wrote and verified the image, re-read the table, registered the entry" \
	eval 'console_has "$dir" "deploy: salvage: kept from an earlier attempt of this deploy" &&
	      console_has "$dir" "deploy: /dev/vda verified: sha256 [0-9a-f]{64}" &&
	      console_has "$dir" "deploy: the kernel re-read /dev/vda.s partition table" &&
	      console_has "$dir" "deploy: boot entry .bootci-known-good. is Boot[0-9A-F]{4}" &&
	      console_has "$dir" "deploy: salvage: 3 put back on the new results partition \(the machine.s identity among them\)" &&
	      console_has "$dir" "hand-over: BootNext=Boot[0-9A-F]{4} \(bootci-known-good\)"'
check "the known-good image uploaded with the salvaged identity: the salvaged runs and the deploy's record ($deploy_id)" \
	eval 'console_order "$dir" "bootci: deploy: done in" "collect: the master confirmed the archive" &&
	      uploaded provision && uploaded never-uploaded && [ -n "$deploy_id" ] && uploaded "$deploy_id"'
check "the master holds the salvaged run's bytes, and the deploy's record says where its salvage came from" \
	eval 'stored_file never-uploaded test/out.txt | cmp -s - "$LOOP_WORK/notes.txt" &&
	      stored_file "$deploy_id" test/out.txt | tee "$LOOP_WORK/record.txt" | grep -x "salvage=kept from an earlier attempt" >/dev/null &&
	      grep -x "salvaged=3" "$LOOP_WORK/record.txt" >/dev/null && grep -x "identity=yes" "$LOOP_WORK/record.txt" >/dev/null'
check "the master handed out the deploy job three times and cleared the mark after the record" \
	eval '[ "$(grep -ac "deploy-1: re-deployed with known-good kg-1\|deploy-1: its re-deploy .* handed out again" "$LOOP_WORK/master.log")" = 3 ] &&
	      [ ! -e "$LOOP_DATA/schedule/deploying/deploy-1" ]'
loop_stop
"$LAB" read "$dir" "$LOOP_WORK/read" >/dev/null 2>&1
check "the disk has the image's partition table again, the salvage area cleared" \
	eval 'same_table && area_cleared'
check "the deploy's record is on the new results partition too" \
	eval 'grep -x "salvaged=3" "$LOOP_WORK"/read/deploy/*.txt >/dev/null &&
	      grep -x "deploy_id=$deploy_id" "$LOOP_WORK"/read/deploy/*.txt >/dev/null'
echo "redeploy.t took $((SECONDS - started)) s" | diag
left=$(loop_leftovers)
[ -z "$left" ] || echo "left behind: $left" | diag
check "no QEMU or serve left behind" [ -z "$left" ]
