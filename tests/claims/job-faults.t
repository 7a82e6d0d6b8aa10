#!/usr/bin/env bash
# Faults inside a job, on the host binary booting fake trees (`bootci-executor --root DIR`,
# black box, as tests/claims/executor.t): processes a test leaves behind (in its group and
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
	check "$mode: the console says so" log_has "$t" "job 0: the test left 1 process running"
	"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
	check "$mode: results.json made" test $? = 0 || diag <"$t.err"
	check "$mode: its warnings do not make the next job dmesg-warn" \
		test "$(result_of "$t.json" igt@quiet)" = pass
	check "$mode: the next job's dmesg.txt has none of them" \
		test "$(grep -c "misbehave's leftover" "$t/results/runs/t/1/dmesg.txt")" = 0
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
check "lost exit: the console says why it is not run again" log_has "$t" "job 0: its journal.txt has its end"
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "lost exit: job 0 keeps its result (pass), job 1 ran" \
	test "$(result_of "$t.json" igt@igt_simple):$(result_of "$t.json" igt@igt_basic@pass)" = pass:pass

done_testing
