#!/usr/bin/env bash
# Faults in what names a run and in what replays it, on the host binary booting
# fake trees (`bootci-executor --root DIR`, black box): a run_id or another
# value joined into a path that would leave its folder is refused, said and
# handed over, nothing written outside; a torn last line of bootci-journal.txt
# is cut and the boots after replay cleanly; a garbage line in the middle is
# skipped, quoted whole, noted in the run folder, and the run goes on with the
# job whose end it lost marked incomplete; a damaged start of it (garbage in place
# of its first lines, or of all of them) runs no job twice: the job folders say
# which jobs ended and which one was in flight.
set -uo pipefail
# shellcheck source=tests/claims/fake-tree.sh
. "$SRC/tests/claims/fake-tree.sh"

base="console=ttyS0 bootci.testlist=/etc/bootci/testlist bootci.watchdog_timeout=off bootci.on_finish=poweroff"
testlist=$'igt@igt_basic@pass\nigt@igt_basic@skip\nigt@igt_basic@fail'

# no_line FILE REGEX: no line of FILE matches REGEX (the matches go to the TAP log)
no_line() {
	grep -qE -- "$2" "$1" || return 0
	grep -E -- "$2" "$1" | diag
	return 1
}

# nothing_outside DIR: nothing of a run was written beside runs/, at the partition's root or in
# the image's /etc (where run_id=../escaped, .. and ../../etc would have put it)
nothing_outside() {
	test ! -e "$1/results/escaped" && test ! -e "$1/results/joblist.txt" &&
		test ! -e "$1/etc/joblist.txt" && test ! -e "$1/results/runs/joblist.txt" &&
		test ! -e "$1/results/bootci-journal.txt"
}

# refused NAME DIR VALUE-IN-MESSAGE: the boot refused a configuration value as it refuses any
# bad value: said on the console naming the key and the value, no run, the error ending
refused() {
	local name=$1 t=$2 said=$3
	check "$name: the boot ends (status 0)" test "$boot_status" = 0
	check "$name: the console names the key and the value" log_has "$t" "bootci: error: .*$said"
	check "$name: no test ran" no_line "$t.log" "igt@|run .* recorded"
	check "$name: the boot takes the error ending (on_error)" \
		log_has "$t" "^dry-run: (reboot|power off)"
}

# ---- run_id that would leave runs/: three forms, from the command line
n=0
for id in '../../etc' '../escaped' '..'; do
	n=$((n + 1))
	t=$work/runid-$n
	fake_tree "$t" "$base bootci.run_id=$id"
	printf '%s\n' "$testlist" >"$t/etc/bootci/testlist"
	boot "$t"
	boot_status=$?
	refused "run_id=$id" "$t" "kernel command line: run_id: '${id//./\\.}' is not a name"
	check "run_id=$id: nothing written beside runs/ or in the image" nothing_outside "$t"
done

# ---- the same from executor.conf, with the file and line named
t=$work/runid-conf
fake_tree "$t" "$base"
printf '%s\n' "$testlist" >"$t/etc/bootci/testlist"
printf '# the run\nrun_id = ../escaped\n' >"$t/etc/bootci/executor.conf"
boot "$t"
boot_status=$?
refused "run_id in executor.conf" "$t" \
	"/etc/bootci/executor.conf:2: run_id: '\.\./escaped' is not a name"
check "run_id in executor.conf: nothing written beside runs/" nothing_outside "$t"

# ---- another key joined into a path: the RTC of suspend cycles (/dev/<rtc>, /sys/class/rtc/<rtc>)
t=$work/rtc
fake_tree "$t" "$base bootci.run_id=t bootci.suspend_rtc=../../../tmp/x"
printf 'igt@igt_basic@pass\nbootci@suspend@mem@1\n' >"$t/etc/bootci/testlist"
boot "$t"
boot_status=$?
refused "suspend_rtc=../../../tmp/x" "$t" "suspend_rtc: '(\.\./){3}tmp/x' is not a name"

# ---- and a path in the image: the testlist
t=$work/testlist
fake_tree "$t" "${base/\/etc\/bootci\/testlist//etc/bootci/../../../../tmp/list} bootci.run_id=t"
boot "$t"
boot_status=$?
refused "testlist with .. components" "$t" "testlist: '/etc/bootci/(\.\./){4}tmp/list' has a '\.\.' component"

# ---- a torn last line: cut, said, and every later boot replays cleanly
t=$work/torn
fake_tree "$t" "$base bootci.run_id=t"
printf '%s\n' "$testlist" >"$t/etc/bootci/testlist"
boot "$t"
check "torn: the first boot ends (status 0)" test $? = 0
journal=$t/results/runs/t/bootci-journal.txt
# The machine died while job 1's start line was written: the journal up to job 0's end, then
# a fragment; job 1 and 2 never ran.
sed -n '1,/^exit 0 /p' "$journal" >"$t/j" && printf 'star' >>"$t/j" && mv "$t/j" "$journal"
rm -rf "$t/results/runs/t/1" "$t/results/runs/t/2" "$t/results/runs/t/endtime.txt"
boot "$t"
check "torn: the boot after ends (status 0)" test $? = 0
check "torn: the console says the torn line was cut" \
	log_has "$t" "warning: bootci-journal.txt: cut a torn last line 'star' \(4 bytes"
check "torn: the run went on to its end" log_has "$t" "run t complete"
check "torn: the journal ends in a newline" test "$(tail -c 1 "$journal" | od -An -c | tr -d ' ')" = '\n'
check "torn: the fragment is gone from the journal" no_line "$journal" "^star$"
check "torn: the repair is noted in the run folder" \
	grep -q "^boot 2: bootci-journal.txt: cut a torn last line 'star'" \
	"$t/results/runs/t/bootci-journal-repairs.txt"
boot "$t"
check "torn: the third boot ends (status 0)" test $? = 0
check "torn: the third boot replays cleanly" no_line "$t.log" "malformed|cut a torn|repair"
check "torn: and finds the run complete" log_has "$t" "run t is already complete"
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "torn: results.json made" test $? = 0 || diag <"$t.err"
check "torn: the jobs after the tear ran" test "$(result_of "$t.json" igt@igt_basic@fail)" = fail

# ---- a garbage line in the middle: skipped and quoted whole, the run goes on
t=$work/garbage
fake_tree "$t" "$base bootci.run_id=t"
printf '%s\n' "$testlist" >"$t/etc/bootci/testlist"
boot "$t"
check "garbage: the first boot ends (status 0)" test $? = 0
journal=$t/results/runs/t/bootci-journal.txt
# Job 1's end line is garbage (with bytes that are not text), its own journal.txt lost its
# exit too (cut before it reached the disk): the job was in flight; job 2 never ran.
sed -n '1,/^start 1$/p' "$journal" >"$t/j"
printf 'stort 1 0 0.105 \001written by nobody\n' >>"$t/j"
mv "$t/j" "$journal"
grep -vE '^(exit|timeout):' "$t/results/runs/t/1/journal.txt" >"$t/j1"
check "garbage: job 1's journal.txt had its exit" \
	test "$(wc -l <"$t/j1")" -lt "$(wc -l <"$t/results/runs/t/1/journal.txt")"
mv "$t/j1" "$t/results/runs/t/1/journal.txt"
rm -rf "$t/results/runs/t/2" "$t/results/runs/t/endtime.txt"
boot "$t"
check "garbage: the boot after ends (status 0)" test $? = 0
check "garbage: the console quotes the whole line, escaped" \
	log_has "$t" "malformed line 'stort 1 0 0\.105 \\\\x01written by nobody' \(34 bytes\) skipped"
check "garbage: the console says the run goes on" log_has "$t" "1 malformed line skipped: the run goes on"
check "garbage: the note in the run folder quotes it too" \
	grep -qF "boot 2: bootci-journal.txt:5: malformed line 'stort 1 0 0.105 \\x01written by nobody'" \
	"$t/results/runs/t/bootci-journal-repairs.txt"
check "garbage: the job in flight is incomplete" grep -qx 'incomplete 1 1' "$journal"
check "garbage: the run went on to its end" log_has "$t" "run t complete"
check "garbage: the journal says done" grep -qx 'done' "$journal"
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "garbage: results.json made" test $? = 0 || diag <"$t.err"
check "garbage: the job after the garbage ran" test "$(result_of "$t.json" igt@igt_basic@fail)" = fail
boot "$t"
check "garbage: the third boot ends (status 0)" test $? = 0
check "garbage: and finds the run complete" log_has "$t" "run t is already complete"

# ---- a job's journal.txt torn in its exit line: the job without subtests has its end, so it
# is not run again (issue 10 defect 5), and the fragment is read as the exit it says
t=$work/job-torn
fake_tree "$t" "$base bootci.run_id=t"
printf 'igt@igt_simple\nigt@igt_basic@pass\n' >"$t/etc/bootci/testlist"
boot "$t"
check "job journal: the first boot ends (status 0)" test $? = 0
journal=$t/results/runs/t/bootci-journal.txt
sed -n '1,/^start 0$/p' "$journal" >"$t/j" && mv "$t/j" "$journal"
printf 'exit:0 (0.0' >"$t/results/runs/t/0/journal.txt"
rm -rf "$t/results/runs/t/1" "$t/results/runs/t/endtime.txt"
boot "$t"
check "job journal: the boot after ends (status 0)" test $? = 0
check "job journal: the run went on to its end" log_has "$t" "run t complete"
check "job journal: the job with its end is not run again" \
	test "$(grep -c '^exit:' "$t/results/runs/t/0/journal.txt")" = 1
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "job journal: results.json made" test $? = 0 || diag <"$t.err"
check "job journal: the job without subtests passes" test "$(result_of "$t.json" igt@igt_simple)" = pass

# ---- a job's journal.txt torn in its first subtest line, the job resumed: the fragment is
# cut before the resumed run appends (ended, it is a line no reader knows)
t=$work/job-torn-subtest
fake_tree "$t" "$base bootci.run_id=t"
printf 'igt@igt_basic@pass\nigt@igt_simple\n' >"$t/etc/bootci/testlist"
boot "$t"
check "job journal (subtest): the first boot ends (status 0)" test $? = 0
journal=$t/results/runs/t/bootci-journal.txt
sed -n '1,/^start 0$/p' "$journal" >"$t/j" && mv "$t/j" "$journal"
printf 'pa' >"$t/results/runs/t/0/journal.txt"
rm -rf "$t/results/runs/t/1" "$t/results/runs/t/endtime.txt"
boot "$t"
check "job journal (subtest): the boot after ends (status 0)" test $? = 0
check "job journal (subtest): the torn fragment is gone" no_line "$t/results/runs/t/0/journal.txt" '^pa(pass.*)?$'
"$aggregator" results "$t/results/runs/t" -o "$t.json" 2>"$t.err"
check "job journal (subtest): results.json made" test $? = 0 || diag <"$t.err"
check "job journal (subtest): the resumed subtest passes" test "$(result_of "$t.json" igt@igt_basic@pass)" = pass

# ---- the start of the run journal damaged (issue 34 point 3): its first lines garbage, the
# run cut in a later job. The job folders are the second record of what ran: no job whose
# journal.txt has its end runs again, and the one in flight is found from its folder when the
# journal lost its start too.
damaged_testlist=$'igt@igt_basic@pass\nigt@igt_basic@fail\nigt@igt_simple\nigt@igt_dynamic@mixed\nigt@igt_basic@skip\nigt@igt_timing@quick-000\nigt@igt_timing@quick-001\nigt@igt_basic@warn-stderr'
# garbage N: N bytes that are no journal (NUL bytes, control bytes, newlines), the same each run
garbage() {
	python3 -c 'import random, sys
r = random.Random(34)
sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(int(sys.argv[1]))))' "$1"
}
# damaged_run DIR LOST: a run of damaged_testlist cut while job 5 (quick-000) ran, then the
# first LOST bytes of its run journal replaced by garbage ("all": the whole journal), booted again
damaged_run() {
	local t=$1 r=$1/results/runs/t lost=$2
	fake_tree "$t" "$base bootci.run_id=t"
	printf '%s\n' "$damaged_testlist" >"$t/etc/bootci/testlist"
	boot "$t" || return 1
	# The cut: bootci's journal up to job 5's start, its journal.txt without an end, the jobs
	# after it never started, the boot without its end record.
	sed -i '/^start 5$/q' "$r/bootci-journal.txt"
	sed -i '/^exit:/d' "$r/5/journal.txt"
	rm -rf "$r/6" "$r/7" "$r/endtime.txt" "$r/boot-0001/end.txt"
	[ "$lost" = all ] && lost=$(stat -c %s "$r/bootci-journal.txt")
	{ garbage "$lost"; tail -c +$((lost + 1)) "$r/bootci-journal.txt"; } >"$t/j" &&
		mv "$t/j" "$r/bootci-journal.txt"
	boot "$t"
}
# ran_once DIR: every job's out.txt holds one run of its test (one IGT-Version line) and every
# journal.txt at most one end; those that do not go to the TAP log
ran_once() {
	local bad=0 job
	for job in "$1"/results/runs/t/[0-9]*; do
		[ "$(grep -c '^IGT-Version' "$job/out.txt")" = 1 ] ||
			{ echo "${job##*/}/out.txt holds $(grep -c '^IGT-Version' "$job/out.txt") runs" | diag; bad=1; }
		[ "$(grep -cE '^(exit|timeout):' "$job/journal.txt")" -le 1 ] ||
			{ echo "${job##*/}/journal.txt has $(grep -cE '^(exit|timeout):' "$job/journal.txt") ends" | diag; bad=1; }
	done
	return "$bad"
}
# damaged_results DIR NAME: what results.json says of the run: every job once, as it ended
damaged_results() {
	"$aggregator" results "$1/results/runs/t" -o "$1.json" 2>"$1.err" || { diag <"$1.err"; return 1; }
	local got want='pass fail pass pass fail skip skip pass pass warn'
	got=$(for name in igt_basic@pass igt_basic@fail igt_simple igt_dynamic@mixed@dyn-pass \
		igt_dynamic@mixed@dyn-fail igt_dynamic@mixed@dyn-skip igt_basic@skip \
		igt_timing@quick-000 igt_timing@quick-001 igt_basic@warn-stderr; do
		result_of "$1.json" "igt@$name"
	done | xargs)
	[ "$got" = "$want" ] && return 0
	echo "$2: results $got, want $want" | diag
	return 1
}

t=$work/damaged-start
r=$t/results/runs/t
# 300 bytes: the boot line and the lines of jobs 0 to 3, cut inside one of job 3's lines.
damaged_run "$t" 300
check "damaged start: the boot after ends (status 0)" test $? = 0
check "damaged start: the console says the malformed lines were skipped" \
	log_has "$t" "malformed lines? skipped: the run goes on"
check "damaged start: no job ran twice into its folder (one run in each out.txt, one end in each journal.txt)" \
	ran_once "$t"
check "damaged start: the console says why the ended jobs are not run again" \
	log_has "$t" "job 1: its journal.txt has its end and bootci's journal lacks it: not run again"
check "damaged start: bootci's journal gets each lost end from journal.txt" \
	test "$(grep -cE '^exit [0-4] ' "$r/bootci-journal.txt")" = 5
check "damaged start: the job in flight is incomplete" grep -qx 'incomplete 5 [0-9]*' "$r/bootci-journal.txt"
check "damaged start: the run went on to its end" log_has "$t" "run t complete"
check "damaged start: results.json has every job once, as it ended" damaged_results "$t" "damaged start"

t=$work/damaged-all
r=$t/results/runs/t
damaged_run "$t" all
check "damaged journal: the boot after ends (status 0)" test $? = 0
check "damaged journal: no job ran twice into its folder (one run in each out.txt, one end in each journal.txt)" \
	ran_once "$t"
check "damaged journal: the job in flight is found from its folder" \
	log_has "$t" "job 6: bootci's journal lost its start, its folder shows it started: it was in flight"
check "damaged journal: the job in flight is incomplete" grep -qx 'incomplete 5 [0-9]*' "$r/bootci-journal.txt"
check "damaged journal: the run went on to its end" log_has "$t" "run t complete"
check "damaged journal: results.json has every job once, as it ended" damaged_results "$t" "damaged journal"
boot "$t"
check "damaged journal: the third boot finds the run complete" log_has "$t" "run t is already complete"

# ---- the whole journal damaged after the run was aborted (aborted.txt written, bootci's journal
# lost with its `abort` line): the boot records say it is no first boot, the run stays aborted
t=$work/damaged-abort
r=$t/results/runs/t
fake_tree "$t" "$base bootci.run_id=t"
printf 'igt@igt_basic@pass\nigt@igt_basic@skip\n' >"$t/etc/bootci/testlist"
boot "$t"
check "damaged journal after an abort: the first boot ends (status 0)" test $? = 0
sed -i '/^exit 0 /q' "$r/bootci-journal.txt"
printf 'Aborted after: igt_basic (pass)\n\nKernel badly tainted (0x80, 0x80) (check dmesg for details)\n' >"$r/aborted.txt"
rm -rf "$r/1" "$r/boot-0001/end.txt" "$r/endtime.txt"
garbage "$(stat -c %s "$r/bootci-journal.txt")" >"$t/j" && mv "$t/j" "$r/bootci-journal.txt"
boot "$t"
check "damaged journal after an abort: the boot after ends (status 0)" test $? = 0
check "damaged journal after an abort: the run stays aborted, the journal says so" \
	grep -qx 'abort condition' "$r/bootci-journal.txt"
check "damaged journal after an abort: no job after the abort ran" test ! -d "$r/1"
check "damaged journal after an abort: the job before it ran once" \
	test "$(grep -c '^IGT-Version' "$r/0/out.txt")" = 1

done_testing
