#!/usr/bin/env bash
# Rows of the README's fault matrix that no other test proves, on the host executor
# booting fake trees (`bootci-executor --root DIR`, black box): a corrupted joblist.txt,
# a power cut while the run is created or while a job replaces one of its files, an oops
# (BUG/Oops records and TAINT_DIE) inside a subtest.
set -uo pipefail
# shellcheck source=tests/claims/fake-tree.sh
. "$SRC/tests/claims/fake-tree.sh"

igt_cmdline="console=ttyS0 bootci.testlist=/etc/bootci/testlist bootci.watchdog_timeout=off bootci.run_id=t bootci.on_finish=poweroff bootci.on_error=reboot"

# ---- a corrupted joblist.txt: the run that was in progress is not resumed from garbage
# and not overwritten; the boot says which line is bad and ends as for any error.
t=$work/joblist
fake_tree "$t" "$igt_cmdline"
printf 'igt@igt_basic@pass\nigt@igt_basic@skip\n' >"$t/etc/bootci/testlist"
boot "$t"
check "joblist: the first boot runs both jobs" test -d "$t/results/runs/t/1"
run=$t/results/runs/t
# The run as a power cut left it, in flight at its second job, and joblist.txt's second
# line turned to garbage (a bad block, a stray write).
sed -i '/^exit 1 /d; /^done$/d' "$run/bootci-journal.txt"
printf 'igt_basic pass\nigt_basic/../../x \x01\n' >"$run/joblist.txt"
cp "$run/joblist.txt" "$t.joblist"
cp "$run/bootci-journal.txt" "$t.journal"
sha256sum "$run/0/out.txt" "$run/0/journal.txt" >"$t.sums"
boot "$t"
status=$?
check "joblist corrupted: the boot still ends (status $status)" test "$status" = 0
check "joblist corrupted: the console names the file, the line and what is wrong" \
	log_has "$t" "bootci: error: joblist.txt:2: bad binary name"
check "joblist corrupted: the boot ends the on_error way (reboot, not on_finish's power-off)" log_has "$t" "^dry-run: reboot$"
check "joblist corrupted: joblist.txt is left as it was, not rewritten" cmp -s "$run/joblist.txt" "$t.joblist"
check "joblist corrupted: the run journal is left as it was" cmp -s "$run/bootci-journal.txt" "$t.journal"
check "joblist corrupted: the results of the job before are kept" sha256sum --quiet -c "$t.sums"

# ---- a power cut while the run is created, before joblist.txt (written last) was renamed into
# place, and one during a replacement in a job folder: the next boot creates the run afresh
# and removes the half-written temporaries (NAME.tmp.XXXXXX) instead of keeping them in it.
t=$work/creation
fake_tree "$t" "$igt_cmdline"
printf 'igt@igt_basic@pass\nigt@igt_basic@skip\n' >"$t/etc/bootci/testlist"
boot "$t"
run=$t/results/runs/t
check "creation cut: the first boot runs both jobs" test -d "$run/1"
cp "$run/joblist.txt" "$t.joblist"
# Back to the moment of the cut: the boot's record and the files written before joblist.txt
# are there, joblist.txt only as its temporary (a line and a half), no journal, no job.
rm -rf "$run/joblist.txt" "$run/bootci-journal.txt" "$run/endtime.txt" "$run"/[0-9]* "$run/boot-0001/end.txt"
printf 'igt_basic pass\nigt_ba' >"$run/joblist.txt.tmp.Xq3Zr7"
mkdir "$run/0"
printf 'exi' >"$run/0/journal.txt.tmp.a1B2c3"
boot "$t"
status=$?
check "creation cut: the next boot ends with status 0 ($status)" test "$status" = 0
check "creation cut: the run is created afresh, not resumed" log_has "$t" "bootci: run t: 2 jobs planned"
check "creation cut: joblist.txt is whole" cmp -s "$run/joblist.txt" "$t.joblist"
check "creation cut: the console says the temporaries were removed" \
	log_has "$t" "run t: removed 2 half-written temporaries"
left=$(cd "$run" && find . -name '*.tmp.*' | sort | xargs)
check "creation cut: no half-written temporary stays in the run${left:+ ($left)}" test -z "$left"
"$aggregator" results "$run" -o "$t.json" 2>"$t.err"
check "creation cut: results.json made" test $? = 0 || diag <"$t.err"
check "creation cut: both jobs ran to their results" \
	test "$(result_of "$t.json" igt@igt_basic@pass):$(result_of "$t.json" igt@igt_basic@skip)" = pass:skip
check "creation cut: the cut boot's record is kept beside the new one" \
	test -f "$run/boot-0001/boot.txt" -a -f "$run/boot-0002/boot.txt"

# ---- an oops in a subtest: the kernel logs BUG/Oops and taints itself with TAINT_DIE (bit 7).
# The test program stands in for a driver that oopses under it: it appends the kernel's
# records to the tree's /dev/kmsg (after IGT's own subtest marker, as a real IGT binary
# logs it) and sets kernel/tainted as the kernel would.
t=$work/oops
fake_tree "$t" "$igt_cmdline bootci.test_dir=/opt/oops bootci.abort_on=taint"
: >"$t/dev/kmsg"
echo 0 >"$t/proc/sys/kernel/tainted"
mkdir -p "$t/opt/oops"
cat >"$t/opt/oops/igt_oops" <<OOPS
#!/bin/sh
[ "\${1:-}" = --list-subtests ] && { echo oops; echo after; exit 0; }
echo "IGT-Version: 1.27.1 (x86_64) (Linux: test)"
echo "Starting subtest: \$2"
if [ "\$2" = oops ]; then
	printf '%s\n' '6,899,5000000,-;[IGT] igt_oops: starting subtest oops' \
		'1,900,5000001,-;BUG: kernel NULL pointer dereference, address: 0000000000000000' \
		'4,901,5000002,-;Oops: 0002 [#1] PREEMPT SMP NOPTI' >>$t/dev/kmsg
	echo 128 >$t/proc/sys/kernel/tainted
fi
echo "Subtest \$2: SUCCESS (0.010s)"
OOPS
chmod +x "$t/opt/oops/igt_oops"
printf 'igt@igt_oops@oops\nigt@igt_oops@after\n' >"$t/etc/bootci/testlist"
boot "$t"
check "oops: the boot ends with status 0" test $? = 0
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "oops: results.json made" test $? = 0 || diag <"$t.err"
check "oops: the subtest that oopsed is dmesg-warn, not pass" test "$(result_of "$t.json" igt@igt_oops@oops)" = dmesg-warn
check "oops: its dmesg.txt holds the BUG line" grep -q 'BUG: kernel NULL pointer dereference' "$t/results/runs/t/0/dmesg.txt"
check "oops: the taint (die) stops the run, aborted.txt says so" grep -qi 'taint' "$t/results/runs/t/aborted.txt"
check "oops: the job after it did not run" test "$(result_of "$t.json" igt@igt_oops@after)" = notrun

done_testing
