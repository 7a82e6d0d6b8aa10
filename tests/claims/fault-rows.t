#!/usr/bin/env bash
# Rows of the README's fault matrix that no other test proves, on the host executor
# booting fake trees (`bootci-executor --root DIR`, black box).
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

done_testing
