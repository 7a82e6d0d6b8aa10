#!/usr/bin/env bash
# Faults inside a job, on the host binary booting fake trees (`bootci-executor --root DIR`,
# black box, as tests/claims/executor.t): a results partition that fills up during a job or
# is full before the run (a real ext4 of fixed size, the tree's own sda1 image loop-mounted
# where the dry run only prints its mount), processes a test leaves behind (in its group and
# out of it), and a job whose exit reached its journal.txt but not bootci's journal.
set -uo pipefail
# shellcheck source=tests/claims/fake-tree.sh
. "$SRC/tests/claims/fake-tree.sh"

igt_cmdline="console=ttyS0 bootci.testlist=/etc/bootci/testlist bootci.watchdog_timeout=off bootci.run_id=t bootci.on_finish=poweroff"

# leftover_tree DIR MODE: a tree whose test `leftover` leaves misbehave's MODE behind, warning
# into the tree's /dev/kmsg for 20 s, then `quiet`, a test without subtests that takes 1 s
# and warns nothing itself (without subtests, all of its kernel log is its own)
leftover_tree() {
	fake_tree "$1" "$igt_cmdline"
	: >"$1/dev/kmsg"
	mkdir -p "$1/opt/igt"
	cat >"$1/opt/igt/leftover" <<EOF
#!/bin/sh
[ "\${1:-}" = --list-subtests ] && exit 79
exec $fixtures/misbehave $2 20 $1/dev/kmsg
EOF
	cat >"$1/opt/igt/quiet" <<EOF
#!/bin/sh
[ "\${1:-}" = --list-subtests ] && exit 79
sleep 1
exec $fixtures/igt_simple
EOF
	chmod +x "$1/opt/igt/leftover" "$1/opt/igt/quiet"
	echo "$igt_cmdline bootci.test_dir=/opt/igt" >"$1/proc/cmdline"
	printf 'igt@leftover\nigt@quiet\n' >"$1/etc/bootci/testlist"
}

# ---- leftovers: one that stays in the test's group holding its pipes, one that setsid()s
for mode in leftover leftover-setsid; do
	t=$work/$mode
	leftover_tree "$t" "$mode"
	boot "$t"
	check "$mode: the boot ends with status 0" test $? = 0
	pid=$(cat "$t/dev/kmsg.pid" 2>/dev/null)
	check "$mode: the fixture left a process (pid ${pid:-none})" test -n "$pid"
	alive=no
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=yes
	check "$mode: it does not outlive its job" test "$alive" = no
	[ "$alive" = yes ] && kill "$pid"
	check "$mode: the job's out.txt names it, killed" \
		grep -q "^bootci: the test left 1 process running, killed when it ended: $pid (misbehave)$" \
		"$t/results/runs/t/0/out.txt"
	check "$mode: the console says so" log_has "$t" "job 1: the test left 1 process running"
	"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
	check "$mode: results.json made" test $? = 0 || diag <"$t.err"
	check "$mode: its warnings do not make the next job dmesg-warn" \
		test "$(result_of "$t.json" igt@quiet)" = pass
	check "$mode: the next job's dmesg.txt has none of them" \
		test "$(grep -c "misbehave's leftover" "$t/results/runs/t/1/dmesg.txt")" = 0
done

# ---- single-program mode (bootci.test=, no testlist): the same rule for what the program leaves
for mode in leftover leftover-setsid; do
	t=$work/program-$mode
	fake_tree "$t" "console=ttyS0 bootci.run_id=p bootci.on_finish=poweroff bootci.watchdog_timeout=off"
	: >"$t/dev/kmsg"
	echo "console=ttyS0 bootci.run_id=p bootci.on_finish=poweroff bootci.watchdog_timeout=off bootci.test=\"$fixtures/misbehave $mode 20 $t/dev/kmsg\"" >"$t/proc/cmdline"
	boot "$t"
	check "program $mode: the boot ends with status 0" test $? = 0
	pid=$(cat "$t/dev/kmsg.pid" 2>/dev/null)
	check "program $mode: the program left a process (pid ${pid:-none})" test -n "$pid"
	alive=no
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=yes
	check "program $mode: it does not outlive the program" test "$alive" = no
	[ "$alive" = yes ] && kill "$pid"
	check "program $mode: test/out.txt names it, killed" \
		grep -q "^bootci: the program left 1 process running, killed when it ended: $pid (misbehave)$" \
		"$t/results/runs/p/test/out.txt"
	check "program $mode: the console says so" log_has "$t" "test program: the program left 1 process running"
	check "program $mode: the program's own result is kept (exit 0)" \
		has_line "$t/results/runs/p/test/result.txt" "exit-status 0"
done

# ---- a lost exit line: the machine died after journal.txt had the job's exit, before
# bootci-journal.txt did. The job (without subtests) is not run again into its folder.
t=$work/lostexit
fake_tree "$t" "$igt_cmdline"
printf 'igt@igt_simple\nigt@igt_basic@pass\n' >"$t/etc/bootci/testlist"
boot "$t"
check "lost exit: the first boot ends with status 0" test $? = 0
journal=$t/results/runs/t/bootci-journal.txt
# Back to the moment after job 0's journal.txt had its exit: bootci's journal cut after
# `start 0`, no end of boot recorded, job 1 never started.
sed -i '/^exit 0 /,$d' "$journal"
rm -rf "$t/results/runs/t/1" "$t/results/runs/t/boot-0001/end.txt" "$t/results/runs/t/endtime.txt"
boot "$t"
check "lost exit: the second boot ends with status 0" test $? = 0
check "lost exit: journal.txt of job 0 holds one exit line" \
	test "$(grep -c '^exit:' "$t/results/runs/t/0/journal.txt")" = 1
check "lost exit: its out.txt holds its output once" \
	test "$(grep -c 'A test without subtests, passing' "$t/results/runs/t/0/out.txt")" = 1
check "lost exit: the console says why it is not run again" log_has "$t" "job 1: its journal.txt has its end"
own_exit=$(sed -n 's/^exit:\([0-9-]*\) .*/\1/p' "$t/results/runs/t/0/journal.txt")
check "lost exit: bootci-journal.txt gets the exit journal.txt has ($own_exit), not -1" \
	grep -q "^exit 0 $own_exit " "$journal"
check "lost exit: the job that had ended is not called incomplete in bootci-journal.txt" \
	test "$(grep -c '^incomplete 0 ' "$journal")" = 0
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "lost exit: job 0 keeps its result (pass), job 1 ran" \
	test "$(result_of "$t.json" igt@igt_simple):$(result_of "$t.json" igt@igt_basic@pass)" = pass:pass

# ---- a dynamic subtest's start in one of its two records only: bootci's journal line is
# durable before the test's output is synced, and a cut between the two keeps either side.
# dyn_cut DIR KEEP_JOURNAL_UNTIL OUT_UNTIL: job 0 (igt_dynamic@mixed: dyn-pass, dyn-fail,
# dyn-skip) as a cut leaves it: bootci-journal.txt up to its line matching KEEP_JOURNAL_UNTIL,
# out.txt up to (without) its line matching OUT_UNTIL, err.txt lost, no exit anywhere
dyn_cut() {
	local r=$1/results/runs/t n
	fake_tree "$1" "$igt_cmdline"
	printf 'igt@igt_dynamic@mixed\nigt@igt_basic@pass\n' >"$1/etc/bootci/testlist"
	boot "$1" || return 1
	sed -i "/$2/q" "$r/bootci-journal.txt"
	n=$(grep -n "$3" "$r/0/out.txt" | cut -d: -f1)
	[ -n "$n" ] || return 1
	head -n $((n - 1)) "$r/0/out.txt" >"$r/0/out.cut" && mv "$r/0/out.cut" "$r/0/out.txt"
	: >"$r/0/err.txt"
	sed -i '/^exit:/d' "$r/0/journal.txt"
	rm -rf "$r/1" "$r/boot-0001/end.txt" "$r/endtime.txt"
	boot "$1"
}
t=$work/dynjournal
dyn_cut "$t" '^dynamic 0 mixed@dyn-fail' 'Starting dynamic subtest: dyn-fail'
check "dynamic start only in the journal: the second boot ends with status 0" test $? = 0
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "dynamic start only in the journal: it is in results.json, incomplete (not lost)" \
	test "$(result_of "$t.json" igt@igt_dynamic@mixed@dyn-fail)" = incomplete
check "dynamic start only in the journal: the ones before and after keep their results" \
	test "$(result_of "$t.json" igt@igt_dynamic@mixed@dyn-pass):$(result_of "$t.json" igt@igt_dynamic@mixed@dyn-skip)" = pass:skip
check "dynamic start only in the journal: out.txt starts it once" \
	test "$(grep -c '^Starting dynamic subtest: dyn-fail$' "$t/results/runs/t/0/out.txt")" = 1

t=$work/dynout
dyn_cut "$t" '^dynamic 0 mixed@dyn-pass' 'Dynamic subtest dyn-fail: FAIL'
check "dynamic start only in out.txt: the second boot ends with status 0" test $? = 0
check "dynamic start only in out.txt: it is not run again (out.txt starts it once)" \
	test "$(grep -c '^Starting dynamic subtest: dyn-fail$' "$t/results/runs/t/0/out.txt")" = 1
check "dynamic start only in out.txt: bootci-journal.txt gets its line" \
	test "$(grep -c '^dynamic 0 mixed@dyn-fail$' "$t/results/runs/t/bootci-journal.txt")" = 1
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "dynamic start only in out.txt: it is incomplete, the next one ran" \
	test "$(result_of "$t.json" igt@igt_dynamic@mixed@dyn-fail):$(result_of "$t.json" igt@igt_dynamic@mixed@dyn-skip)" = incomplete:skip

# ---- an abort whose journal line was lost: aborted.txt is written first, and the machine died
# before bootci-journal.txt said `abort` (after job 0, the kernel badly tainted)
t=$work/lostabort
fake_tree "$t" "$igt_cmdline"
printf 'igt@igt_basic@pass\nigt@igt_basic@skip\n' >"$t/etc/bootci/testlist"
boot "$t"
check "lost abort: the first boot ends with status 0" test $? = 0
r=$t/results/runs/t
sed -i '/^exit 0 /q' "$r/bootci-journal.txt"
printf 'Aborted after: igt_basic (pass)\n\nKernel badly tainted (0x80, 0x80) (check dmesg for details)\n' >"$r/aborted.txt"
rm -rf "$r/1" "$r/boot-0001/end.txt" "$r/endtime.txt"
boot "$t"
check "lost abort: the second boot ends with status 0" test $? = 0
check "lost abort: the run stays aborted, the journal says so" \
	test "$(grep -c '^abort condition$' "$r/bootci-journal.txt")" = 1
check "lost abort: no job after the abort ran" test ! -d "$r/1"
"$aggregator" results "$r" -o "$t.json" 2>"$t.err"
check "lost abort: results.json has the job before, the one after notrun" \
	test "$(result_of "$t.json" igt@igt_basic@pass):$(result_of "$t.json" igt@igt_basic@skip)" = pass:notrun

# ---- the results partition: the tree's ext4 image (8 MiB) mounted for real where the dry
# run only prints the mount
mounted=
mount_results() {
	mkdir -p "$1/results"
	mount -o loop "$1/dev/sda1" "$1/results" 2>/dev/null && mounted="$1/results"
}
umount_results() {
	[ -n "$mounted" ] && umount "$mounted"
	mounted=
}
trap 'umount_results; rm -rf "$work"' EXIT

t=$work/full
fake_tree "$t" "$igt_cmdline"
if [ "$(id -u)" != 0 ] || ! mount_results "$t"; then
	for what in "during a job" "before the run"; do
		skip "partition full $what: needs root and a loop device to mount a real filesystem"
	done
	done_testing
	exit 0
fi

# ---- full during a job: 16 MiB of output into 8 MiB
printf 'igt@igt_basic@pass\nigt@igt_basic@flood\nigt@igt_basic@skip\n' >"$t/etc/bootci/testlist"
export BOOTCI_FIXTURE_FLOOD_MIB=16
boot "$t"
status=$?
unset BOOTCI_FIXTURE_FLOOD_MIB
check "full during a job: the boot ends with status 0 (an orderly end)" test "$status" = 0
run=$t/results/runs/t
check "full during a job: the console names the file that could not be written" \
	log_has "$t" "job 2: cannot write out.txt after [0-9]+ bytes: No space left on device"
check "full during a job: the reserve is given back for the records" \
	log_has "$t" "results partition full: its 1024 KiB reserve is given back"
check "full during a job: the job folder has its incomplete marker" \
	grep -q '^out.txt [0-9]* No space left on device$' "$run/1/bootci-incomplete.txt"
check "full during a job: out.txt ends with a note saying so" \
	grep -q '^bootci: out.txt could not be written after [0-9]* bytes (No space left on device): the output of this job is incomplete$' "$run/1/out.txt"
check "full during a job: the run is aborted, and aborted.txt says why" \
	grep -q 'Results partition full: cannot write 1/out.txt' "$run/aborted.txt"
check "full during a job: the journal says done (the run is complete, not stuck)" \
	test "$(tail -n 1 "$run/bootci-journal.txt")" = "done"
check "full during a job: endtime.txt written" test -s "$run/endtime.txt"
check "full during a job: the boot's end is recorded" \
	has_line "$run/boot-0001/end.txt" "finished: results partition full"
check "full during a job: the boot ends by powering off as configured (hand-over path)" \
	log_has "$t" "^dry-run: power off$"
"$aggregator" results "$run" -o "$t.json" 2>"$t.err"
check "full during a job: results.json made" test $? = 0 || diag <"$t.err"
check "full during a job: the flood is not pass but incomplete" \
	test "$(result_of "$t.json" igt@igt_basic@flood)" = incomplete
check "full during a job: its out in results.json carries the note" \
	python3 -c 'import json, sys
out = json.load(open(sys.argv[1]))["tests"]["igt@igt_basic@flood"]["out"]
sys.exit(0 if "bootci: the output of this job is incomplete" in out else 1)' "$t.json"
check "full during a job: the job before keeps pass, the one after did not run" \
	test "$(result_of "$t.json" igt@igt_basic@pass):$(result_of "$t.json" igt@igt_basic@skip)" = pass:notrun

# ---- full during a single program: 16 MiB of output into 8 MiB, the program passing anyway
umount_results
t=$work/fullprogram
fake_tree "$t" "console=ttyS0 bootci.run_id=p bootci.on_finish=poweroff bootci.watchdog_timeout=off"
echo "console=ttyS0 bootci.run_id=p bootci.on_finish=poweroff bootci.watchdog_timeout=off bootci.test=\"$fixtures/igt_basic --run-subtest flood\"" >"$t/proc/cmdline"
mount_results "$t"
export BOOTCI_FIXTURE_FLOOD_MIB=16
boot "$t"
status=$?
unset BOOTCI_FIXTURE_FLOOD_MIB
check "full during a program: the boot ends with status 0 (an orderly end)" test "$status" = 0
run=$t/results/runs/p
check "full during a program: the console names the file that could not be written" \
	log_has "$t" "test program: cannot write out.txt after [0-9]+ bytes: No space left on device"
check "full during a program: the reserve is given back for the records" \
	log_has "$t" "results partition full: its 1024 KiB reserve is given back"
check "full during a program: out.txt ends with a note saying so" \
	grep -q '^bootci: out.txt could not be written after [0-9]* bytes (No space left on device): the output of this program is incomplete$' "$run/test/out.txt"
check "full during a program: result.txt marks its output incomplete" \
	grep -q '^incomplete out.txt [0-9]* No space left on device$' "$run/test/result.txt"
check "full during a program: the boot's end is recorded" \
	has_line "$run/boot-0001/end.txt" "finished: results partition full"
"$aggregator" ingest --data "$work/fullprogram-data" --machine lab-1 "$run" >"$t.ingest" 2>&1
check "full during a program: the aggregator ingests the run" test $? = 0 || diag <"$t.ingest"
check "full during a program: the aggregator judges it incomplete, not pass" \
	test "$(sqlite3 "$work/fullprogram-data/bootci.sqlite" "SELECT result FROM results" 2>&1)" = incomplete

# ---- full before the run: the partition filled up (runs not uploaded yet, say) while the
# reserve an earlier boot made is still held; the next run finds it full
umount_results
t=$work/fullbefore
fake_tree "$t" "${igt_cmdline/run_id=t/run_id=first}"
mount_results "$t"
printf 'igt@igt_basic@pass\n' >"$t/etc/bootci/testlist"
boot "$t"
check "full before the run: a first run on the partition ends with status 0" test $? = 0
check "full before the run: it left the reserve" test -s "$t/results/bootci-reserve"
dd if=/dev/zero of="$t/results/filler" bs=64k 2>/dev/null
sync
sed -i 's/bootci.run_id=first /bootci.run_id=second /' "$t/proc/cmdline"
boot "$t"
check "full before the run: the boot ends with status 0" test $? = 0
check "full before the run: the console says so" log_has "$t" "Results partition full before the run"
run=$t/results/runs/second
check "full before the run: aborted.txt records it" \
	grep -q 'Results partition full before the run' "$run/aborted.txt"
check "full before the run: no job ran" test ! -d "$run/0"
check "full before the run: the boot's record and end are written" \
	test -s "$run/boot-0001/boot.txt" -a -s "$run/boot-0001/end.txt"
"$aggregator" results "$run" -o "$t.json" 2>"$t.err"
check "full before the run: results.json says notrun and igt@runner@aborted" \
	test "$(result_of "$t.json" igt@igt_basic@pass):$(result_of "$t.json" igt@runner@aborted)" = notrun:fail
# The reserve is spent and what it gave back is filled too: a next boot can record
# nothing, and says so on the console.
dd if=/dev/zero of="$t/results/filler-2" bs=4k 2>/dev/null
sync
sed -i 's/bootci.run_id=second /bootci.run_id=third /' "$t/proc/cmdline"
boot "$t"
check "full, reserve spent: the console says there is no room even for the reserve" \
	log_has "$t" "Results partition full before the run: no room for the 1024 KiB reserve"
check "full, reserve spent: the boot still ends by its configured path" log_has "$t" "^dry-run: (power off|reboot)"
umount_results

done_testing
