#!/usr/bin/env bash
# A damaged start of the run journal (issue 34 point 3): a run cut by a panic after 18 jobs,
# then the first KiB of its bootci-journal.txt overwritten with garbage on the disk (debugfs on
# the results partition, between two boots), then resumed. The job folders are the second
# record of what ran: no job runs twice into its folder, every verdict in results.json is the
# one the job ended with, the panic is still attributed to the subtest in flight.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"
PATH=$PATH:/usr/sbin:/sbin

run=journal-damage
args="$IGT_ARGS bootci.run_id=$run bootci.testlist=/etc/bootci/testlists/lab-journal-damage.txt"
m=$(fresh_machine "$run") || { not_ok "a fresh machine"; done_testing; exit 1; }

# The first boot: the jobs before the panic, then the panic's reset ends QEMU (--no-reboot).
"$LAB" boot "$m" --kernel "$KERNEL" --initrd "$INITRD" --append "$args" \
	--timeout "$BOOT_TIMEOUT" --no-reboot >"$m/lab.log" 2>&1
status=$?
check "the first boot ends in the panic (QEMU exits on the reset)" exited_by_itself "$status" "$m"
check "the panic cut the run" console_has "$m" 'Kernel panic - not syncing'

# damage: the results partition copied out of the disk, its ext4 journal replayed (the panic
# left metadata there), the first KiB of the run journal replaced by bytes that are no
# journal (the same each run), and the partition written back.
damage() {
	local range start size img=$m/results.img status=0
	range=$(awk '$1 == "results" { print $2, $3 }' "$m/layout")
	read -r start size <<<"$range"
	dd if="$m/disk.img" of="$img" bs=1M skip="$start" count="$size" \
		iflag=skip_bytes,count_bytes conv=sparse status=none || return 1
	e2fsck -fy "$img" >"$m/fsck.log" 2>&1 || status=$?
	[ "$status" -lt 4 ] || { diag <"$m/fsck.log"; return 1; }
	rm -f "$m/journal.before"
	debugfs -R "dump /runs/$run/bootci-journal.txt $m/journal.before" "$img" >/dev/null 2>&1
	[ "$(stat -c %s "$m/journal.before" 2>/dev/null || echo 0)" -gt 1024 ] ||
		{ echo "the run journal before the damage is 1 KiB or less" | diag; return 1; }
	{
		python3 -c 'import random, sys
r = random.Random(34)
sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(1024)))'
		tail -c +1025 "$m/journal.before"
	} >"$m/journal.damaged" || return 1
	printf '%s\n' "rm /runs/$run/bootci-journal.txt" \
		"write $m/journal.damaged /runs/$run/bootci-journal.txt" >"$m/damage.debugfs"
	debugfs -w -f "$m/damage.debugfs" "$img" >"$m/debugfs.log" 2>&1 || { diag <"$m/debugfs.log"; return 1; }
	dd if="$img" of="$m/disk.img" bs=1M seek="$start" oflag=seek_bytes conv=notrunc,sparse \
		status=none || return 1
	rm -f "$img"
}
check "the start of the run journal is overwritten on the disk" damage
# What the garbage took: the boot's line and the lines of the first jobs, ends included; the
# panic's start is left (the job in flight known from the journal, as in the issue's trial).
lost_ends() {
	local n
	n=$(head -c 1024 "$m/journal.before" | grep -ac '^exit ')
	echo "the garbage took the ends of $n jobs" | diag
	[ "$n" -ge 10 ]
}
check "the garbage took the ends of at least 10 jobs that ended" lost_ends
check "the panic's start is after the garbage" \
	grep -qx 'start 18' <(tail -c +1025 "$m/journal.before")

# The second boot resumes and runs the rest, until the executor powers the machine off.
"$LAB" boot "$m" --kernel "$KERNEL" --initrd "$INITRD" --append "$args" \
	--timeout "$BOOT_TIMEOUT" >>"$m/lab.log" 2>&1
status=$?
check "the resumed run completes and powers off" exited_by_itself "$status" "$m"
check "the console says the damaged lines were skipped" console_has "$m" 'malformed lines? skipped: the run goes on'
check "the console says why a job that ended is not run again" \
	console_has "$m" "job 1: its journal.txt has its end and bootci's journal lacks it: not run again"
rm -rf "$m/results"
check "the results partition is read back" "$LAB" read "$m" "$m/results"
"$BUILD/host/bin/bootci-aggregator" results "$m/results/runs/$run" -o "$m/results.json" 2>&1 | diag

# ran_once: every job folder holds one run: one IGT-Version line in out.txt, at most one end in
# journal.txt; the folders that do not are named in the TAP log
ran_once() {
	local bad=0 job runs ends
	for job in "$m/results/runs/$run"/[0-9]*; do
		runs=$(grep -ac '^IGT-Version' "$job/out.txt")
		ends=$(grep -acE '^(exit|timeout):' "$job/journal.txt")
		[ "$runs" = 1 ] && [ "$ends" -le 1 ] && continue
		echo "${job##*/}: $runs runs in out.txt, $ends ends in journal.txt" | diag
		bad=1
	done
	return "$bad"
}
check "no job ran twice into its folder (one run in each out.txt, one end in each journal.txt)" ran_once
check "every job has its folder" test "$(find "$m/results/runs/$run" -maxdepth 1 -name '[0-9]*' | wc -l)" = 21
check "the results: pass" result_is_or_hpet "$m" igt@igt_basic@pass pass
check "the results: fail" result_is "$m" igt@igt_basic@fail fail
check "the results: skip" result_is "$m" igt@igt_basic@skip skip
check "the results: warn" result_is "$m" igt@igt_basic@warn-stderr warn
check "the results: the job without subtests" result_is_or_hpet "$m" igt@igt_simple pass
check "the results: the dynamic subtests" \
	test "$(for d in pass fail skip; do result_is "$m" "igt@igt_dynamic@mixed@dyn-$d" "$d" && echo y; done | wc -l)" = 3
quick_pass() {
	local i bad=0
	for i in $(seq 0 13); do
		result_is_or_hpet "$m" "$(printf 'igt@igt_timing@quick-%03d' "$i")" pass || bad=1
	done
	return "$bad"
}
check "the results: every quick job passes, before the damage's end and after the panic" quick_pass
check "the results: the panic is crash" result_is "$m" igt@igt_kernel@panic crash
check "the results: the panic's record carries its dump" grep -q 'sysrq triggered crash' "$m/results.json"
check "two boots" test "$(find "$m/results/runs/$run" -maxdepth 1 -name 'boot-*' | wc -l)" = 2
done_testing
