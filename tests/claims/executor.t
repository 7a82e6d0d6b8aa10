#!/usr/bin/env bash
# bootci-executor(8)'s claims, on the host binary booting fake
# trees (`bootci-executor --root DIR`, black box): a boot end to end, the sysrq
# dumps on a timeout, /etc/bootci/image-id in the run identity, `previous
# watchdog reset`, ramoops as a pstore back end, a stop requested by a signal,
# the taints outside igt_runner's set, and a test that survives SIGKILL.
set -uo pipefail
# shellcheck source=tests/claims/fake-tree.sh
. "$SRC/tests/claims/fake-tree.sh"

igt_cmdline="console=ttyS0 bootci.testlist=/etc/bootci/testlist bootci.watchdog_timeout=off bootci.run_id=t bootci.on_finish=poweroff"

# ---- one boot end to end: a single test program
t=$work/single
fake_tree "$t" "console=ttyS0 bootci.test=$fixtures/exit-with bootci.run_id=single bootci.on_finish=poweroff"
boot "$t"
status=$?
check "--root: a single-program boot ends with status 0" test "$status" = 0 || tail -n 20 "$t.log" | diag
check "--root: the results partition is found by its label and its mount printed" \
	log_has "$t" "^dry-run: mount -t ext4 $t/dev/sda1 $t/results "
check "--root: the test program ran" log_has "$t" "bootci: test program exited with status 0"
check "--root: its result is recorded" has_line "$t/results/runs/single/test/result.txt" "exit-status 0"
check "--root: the boot record says first boot" \
	has_line "$t/results/runs/single/boot-0001/boot.txt" "previous none (first boot of the run)"
check "--root: on_finish=poweroff ends in a power-off, printed not made" log_has "$t" "^dry-run: power off$"

# ---- an IGT run with a per-test timeout: SIGQUIT, then sysrq t and m for the kernel log
t=$work/timeout
fake_tree "$t" "$igt_cmdline bootci.per_test_timeout=2 bootci.kill_grace=2"
printf 'igt@igt_basic@pass\nigt@igt_timing@sleep-long\nigt@igt_basic@skip\n' >"$t/etc/bootci/testlist"
sysrq_fifo "$t"
boot "$t"
check "timeout: the boot ends with status 0" test $? = 0
check "timeout: sysrq t (tasks) then m (memory) were written once, for the one timeout" \
	test "$(sysrq_read)" = tm
check "timeout: the job was killed with SIGQUIT" log_has "$t" "Per-test timeout exceeded: sending SIGQUIT"
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "timeout: results.json made" test $? = 0 || diag <"$t.err"
check "timeout: the job is timeout" test "$(result_of "$t.json" igt@igt_timing@sleep-long)" = timeout
check "timeout: the run went on" test "$(result_of "$t.json" igt@igt_basic@skip)" = skip

# ---- /etc/bootci/image-id in the run identity: another image is another run
t=$work/image
fake_tree "$t" "$igt_cmdline"
printf 'igt@igt_basic@pass\n' >"$t/etc/bootci/testlist"
echo "image-A 2026-12-01" >"$t/etc/bootci/image-id"
boot "$t"
check "image-id: first boot ends with status 0" test $? = 0
check "image-id: bootci-identity.txt records the image" has_line "$t/results/runs/t/bootci-identity.txt" "image image-A 2026-12-01"
echo "image-B 2026-12-02" >"$t/etc/bootci/image-id"
boot "$t"
check "image-id: a boot of another image ends with status 0" test $? = 0
check "image-id: the first image's run is kept aside" \
	has_line "$t/results/runs/t.superseded-1/bootci-identity.txt" "image image-A 2026-12-01"
check "image-id: a new run started for the second" has_line "$t/results/runs/t/bootci-identity.txt" "image image-B 2026-12-02"
check "image-id: the console names the difference" log_has "$t" "warning: .*image"
rm "$t/etc/bootci/image-id"
boot "$t"
check "image-id: an image without one is another identity too (a second run kept aside)" \
	test -d "$t/results/runs/t.superseded-2"

# ---- previous watchdog reset: a boot that left no end.txt, a watchdog that says it reset
t=$work/watchdog
fake_tree "$t" "$igt_cmdline"
printf 'igt@igt_basic@pass\n' >"$t/etc/bootci/testlist"
boot "$t"
rm -f "$t/results/runs/t/boot-0001/end.txt"
boot "$t"
check "watchdog: without a bootstatus, the previous end is unknown" \
	grep -q '^previous unknown' "$t/results/runs/t/boot-0002/boot.txt"
rm -f "$t/results/runs/t/boot-0002/end.txt"
mkdir -p "$t/sys/class/watchdog/watchdog0"
echo 32 >"$t/sys/class/watchdog/watchdog0/bootstatus"	# WDIOF_CARDRESET
boot "$t"
check "watchdog: bootstatus 32 makes it a watchdog reset" \
	has_line "$t/results/runs/t/boot-0003/boot.txt" "previous watchdog reset (bootstatus 32)"
check "watchdog: the console says so" log_has "$t" "previous boot: watchdog reset \(bootstatus 32\)"

# ---- ramoops as a pstore back end: loaded with its memory region, never without one
t=$work/ramoops
fake_tree "$t" "$igt_cmdline bootci.pstore_backends=ramoops bootci.ramoops_address=0x7f000000 bootci.ramoops_size=0x100000"
printf 'igt@igt_basic@pass\n' >"$t/etc/bootci/testlist"
boot "$t"
check "ramoops: the boot ends with status 0" test $? = 0
# The dry run prints the modules kmod would insert, not their options (executor/sys.c drops
# them): that ramoops gets mem_address= and mem_size= is not visible from outside.
check "ramoops: ramoops.ko is loaded, after its dependency reed_solomon" \
	console_order "$t" '^dry-run: insmod .*/reed_solomon\.ko$' '^dry-run: insmod .*/kernel/fs/pstore/ramoops\.ko'
fake_tree "$t" "$igt_cmdline bootci.pstore_backends=ramoops"
printf 'igt@igt_basic@pass\n' >"$t/etc/bootci/testlist"
boot "$t"
check "ramoops: without an address it is not loaded, and the console says why" \
	test "$(grep -c 'insmod .*ramoops' "$t.log"):$(grep -c 'ramoops: set ramoops_address and ramoops_size' "$t.log")" = 0:1
mkdir -p "$t/sys/fs/pstore"
printf 'Oops#1 Part1\n<4>[   12.5] BUG: unable to handle page fault\n' >"$t/sys/fs/pstore/dmesg-ramoops-0"
boot "$t"
check "ramoops: a dmesg-ramoops record is saved with the boot and erased" \
	test -f "$t/results/runs/t/boot-0002/pstore/dmesg-ramoops-0" -a ! -e "$t/sys/fs/pstore/dmesg-ramoops-0"

# ---- a stop requested by a signal: the job in flight ends, no other starts. The job in
# flight, `held`, runs until this script has sent the signal (no race with a slow machine):
# it says it started, waits for the file `go`, then passes as igt_simple.
t=$work/stop
fake_tree "$t" "$igt_cmdline bootci.test_dir=/opt/igt"
mkdir -p "$t/opt/igt"
ln -s "$fixtures"/* "$t/opt/igt/"
cat >"$t/opt/igt/held" <<HELD
#!/bin/sh
[ "\${1:-}" = --list-subtests ] && exit 79
: >$t/started
while [ ! -e $t/go ]; do sleep 0.05; done
exec $fixtures/igt_simple
HELD
chmod +x "$t/opt/igt/held"
printf 'igt@held\nigt@igt_basic@pass\nigt@igt_basic@skip\n' >"$t/etc/bootci/testlist"
timeout -k 5 300 "$executor" --root "$t" >"$t.log" 2>&1 &
pid=$!
# Bounded only by the executor's own 300 s: the wait is for the job, however slow the machine.
while [ ! -e "$t/started" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
kill -TERM "$pid"
# The signal is handled (the console says so) before the job is let go.
for _ in $(seq 600); do
	grep -q 'received Terminated' "$t.log" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
: >"$t/go"
wait "$pid"
check "stop: the executor still ends its boot normally (status 0)" test $? = 0
check "stop: the console says the signal was received" log_has "$t" "received Terminated: ending after the current step"
check "stop: aborted.txt gives the reason" grep -q 'Stop requested by a signal' "$t/results/runs/t/aborted.txt"
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>/dev/null
check "stop: the job in flight finished" test "$(result_of "$t.json" igt@held)" = pass
check "stop: the next ones did not run" \
	test "$(result_of "$t.json" igt@igt_basic@pass):$(result_of "$t.json" igt@igt_basic@skip)" = notrun:notrun

# ---- taints: every bit of a 6.1 kernel (0..18) outside igt_runner's set (4 machine check,
# 5 bad page, 7 die, 9 warn) is harmless; each bit of that set aborts the run at boot
t=$work/taint
harmless=$(( (1 << 19) - 1 & ~(1 << 4 | 1 << 5 | 1 << 7 | 1 << 9) ))
fake_tree "$t" "$igt_cmdline bootci.abort_on=taint"
printf 'igt@igt_basic@pass\nigt@igt_basic@skip\n' >"$t/etc/bootci/testlist"
echo "$harmless" >"$t/proc/sys/kernel/tainted"
boot "$t"
check "taint: all harmless bits at once ($harmless): no abort, both jobs ran" \
	test ! -e "$t/results/runs/t/aborted.txt" -a -d "$t/results/runs/t/1"
for bit in 4 5 7 9; do
	fake_tree "$t" "$igt_cmdline bootci.abort_on=taint"
	printf 'igt@igt_basic@pass\n' >"$t/etc/bootci/testlist"
	echo $((1 << bit | harmless)) >"$t/proc/sys/kernel/tainted"
	boot "$t"
	check "taint: bit $bit aborts the run at boot" grep -q 'Aborted at bootup' "$t/results/runs/t/aborted.txt"
done

# ---- a test that does not die even of SIGKILL: frozen by the cgroup v1 freezer (a frozen task
# stays in D state through SIGKILL until thawed), the run stops instead of waiting forever
freezer=/sys/fs/cgroup/freezer
if [ ! -w "$freezer" ] || ! mkdir "$freezer/bootci-claims.$$" 2>/dev/null; then
	skip "SIGKILL survivor: needs a writable cgroup v1 freezer (root)"
	skip "SIGKILL survivor: the run stops"
else
	cg=$freezer/bootci-claims.$$
	t=$work/unkillable
	# The per-test timeout leaves the script 5 s to freeze itself: one that a loaded machine
	# slows past it would die of the timeout's signals, not survive them.
	fake_tree "$t" "$igt_cmdline bootci.test_dir=/opt/stuck bootci.per_test_timeout=5 bootci.kill_grace=1"
	mkdir -p "$t/opt/stuck"
	cat >"$t/opt/stuck/stuck" <<STUCK
#!/bin/sh
[ "\${1:-}" = --list-subtests ] && exit 79
echo "IGT-Version: 1.27.1 (x86_64) (Linux: test)"
echo \$\$ >$cg/cgroup.procs
echo FROZEN >$cg/freezer.state
sleep 1
STUCK
	chmod +x "$t/opt/stuck/stuck"
	printf 'igt@stuck\nigt@igt_basic@pass\n' >"$t/etc/bootci/testlist"
	boot "$t"
	status=$?
	echo THAWED >"$cg/freezer.state"
	for _ in $(seq 50); do [ -z "$(cat "$cg/cgroup.procs")" ] && break; sleep 0.1; done
	rmdir "$cg" 2>/dev/null
	check "SIGKILL survivor: the executor gives up on it and ends its boot (status $status)" \
		log_has "$t" "does not die even after SIGKILL: stopping the run"
	check "SIGKILL survivor: the run stops (the next job never starts)" test ! -d "$t/results/runs/t/1"
fi

done_testing
