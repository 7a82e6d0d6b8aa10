#!/usr/bin/env bash
# bootci-executor(8)'s claims about its console line and its kernel-log marker, on the
# host binary booting a fake tree: each job's line gives the result results.json gives
# (the results generator's judgement of the job's folder, not a second opinion), and the
# marker `[bootci] [N/M] ...` numbers the job as the console does.
set -uo pipefail
# shellcheck source=tests/claims/fake-tree.sh
. "$SRC/tests/claims/fake-tree.sh"

cmdline="console=ttyS0 bootci.testlist=/etc/bootci/testlist bootci.watchdog_timeout=off bootci.run_id=t bootci.on_finish=poweroff bootci.per_test_timeout=2 bootci.kill_grace=1 bootci.test_dir=/opt/igt"

# console_result LOG NAME: the result word of NAME's progress line, `[N/M] NAME RESULT 1.2s (...)`
console_result() {
	sed -nE "s/^\[ *[0-9.]+\] bootci: \[[0-9]+\/[0-9]+\] $2 (.*) [0-9]+\.[0-9]s \(elapsed .*/\1/p" "$1"
}

# test_tree DIR: the fixtures, and `kwarn`, a test that passes after a kernel warning: the tree's
# /dev/kmsg is a plain file, where the executor's markers land and whence each job's records
# are read, so kwarn appends a record in the kernel's read-back format.
test_tree() {
	fake_tree "$1" "$cmdline"
	mkdir -p "$1/opt/igt"
	ln -s "$fixtures"/* "$1/opt/igt/"
	: >"$1/dev/kmsg"
	cat >"$1/opt/igt/kwarn" <<KWARN
#!/bin/sh
[ "\${1:-}" = --list-subtests ] && exit 79
echo "IGT-Version: 1.27.1 (x86_64) (Linux: test)"
echo '4,900,1000000,-;bootci-claims: a deliberate kernel warning' >>$1/dev/kmsg
echo "SUCCESS (0.001s)"
KWARN
	chmod +x "$1/opt/igt/kwarn"
}

t=$work/verdicts
test_tree "$t"
# A job killed by SIGSEGV in a dynamic subtest whose subtest still said SUCCESS (as IGT's
# kms_plane_scaling did), one that exits 112 (abort, last: the run stops after it), a kernel
# warning, a timeout, and plain outcomes between them.
jobs="igt@igt_dynamic@with-crash igt@kwarn igt@igt_timing@sleep-long
igt@igt_basic@crash igt@igt_basic@pass igt@igt_basic@warn-stderr igt@igt_basic@abort"
printf '%s\n' $jobs >"$t/etc/bootci/testlist"
boot "$t"
check "verdicts: the boot ends with status 0" test $? = 0 || tail -n 20 "$t.log" | diag
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "verdicts: results.json made" test $? = 0 || diag <"$t.err"
n=0
for name in $jobs; do
	n=$((n + 1))
	# Its one test is the dynamic subtest (the subtest pruned, as igt_runner does).
	[ "$name" = igt@igt_dynamic@with-crash ] && name=$name@dyn-crash
	want=$(result_of "$t.json" "$name")
	got=$(console_result "$t.log" "$name")
	check "verdicts: job $n $name: the console says '$got', results.json '$want'" \
		test -n "$want" -a "$got" = "$want"
done
check "verdicts: the ones this is about have the results igt_runner gives them" \
	test "$(result_of "$t.json" igt@igt_dynamic@with-crash@dyn-crash) $(result_of "$t.json" igt@igt_basic@abort) $(result_of "$t.json" igt@kwarn) $(result_of "$t.json" igt@igt_timing@sleep-long)" = "crash abort dmesg-warn timeout"


# A job of several tests: the count of each result, in igt_runner's totals order.
t=$work/several
test_tree "$t"
printf 'igt@igt_dynamic@mixed\n' >"$t/etc/bootci/testlist"
boot "$t"
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "several: results.json has dyn-pass pass, dyn-fail fail, dyn-skip skip" \
	test "$(for d in pass fail skip; do result_of "$t.json" "igt@igt_dynamic@mixed@dyn-$d"; done | xargs)" = "pass fail skip"
check "several: the console line counts them as results.json does" \
	test "$(console_result "$t.log" igt@igt_dynamic@mixed)" = "1 pass, 1 skip, 1 fail"

# The marker, in the first tree's kernel log.
t=$work/verdicts
for n in 1 3 7; do
	name=$(printf '%s\n' $jobs | sed -n "${n}p")
	check "marker: job $n's kernel-log marker carries the console's [$n/7] and its name" \
		grep -qF "[bootci] [$n/7] $name" "$t/dev/kmsg" ||
		{ grep -a 'bootci' "$t/dev/kmsg" | head -n 10 | diag; false; }
	[ "$name" = igt@igt_dynamic@with-crash ] && name=$name@dyn-crash
	check "marker: the console's line for job $n is [$n/7] $name" \
		grep -qE "bootci: \[$n/7\] $name " "$t.log"
done
check "marker: no kernel-log marker numbers a job from 0 ([bootci] [0/7] or [bootci] job 0)" \
	test "$(grep -acE '\[bootci\] (\[0/|job 0\b)' "$t/dev/kmsg")" = 0

done_testing
