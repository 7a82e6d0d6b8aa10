# shellcheck shell=bash
# Sourced by tests/lab/*.t: TAP output and the steps the lab scenarios share.
# The harness (tests/run-tests.sh) sets BUILD and SRC to absolute paths; LAB_KERNEL,
# LAB_INITRD and LAB_BOOT_TIMEOUT override what is booted and for how long at most.
: "${BUILD:?BUILD: the absolute build directory}" "${SRC:?SRC: the absolute source directory}"

LAB=$SRC/tests/lab/lab
# shellcheck disable=SC2034 # KERNEL, INITRD, BOOT_TIMEOUT: used by the sourcing scripts
KERNEL=${LAB_KERNEL:-$BUILD/kernel/vmlinuz}
# shellcheck disable=SC2034
INITRD=${LAB_INITRD:-$BUILD/initramfs/initrd.img}
# shellcheck disable=SC2034
BOOT_TIMEOUT=${LAB_BOOT_TIMEOUT:-300}
# shellcheck source=tests/tap.sh
. "$SRC/tests/tap.sh"

# fresh_machine NAME [lab disk options]: an empty machine under $BUILD/lab; prints its directory
fresh_machine() {
	local dir=$BUILD/lab/$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	"$LAB" disk "$dir" "$@" >"$dir/disk.log" 2>&1 || { diag <"$dir/disk.log" >&2; return 1; }
	echo "$dir"
}

# last_console MACHINE_DIR: the console of the machine's last boot
last_console() {
	awk '/^=== lab (boot|netboot|diskboot) / { n++; delete lines; c = 0 } { lines[c++] = $0 }
	     END { for (i = 0; i < c; i++) print lines[i] }' "$1/console.log"
}

# console_has MACHINE_DIR REGEX: the last boot's console has a line matching REGEX; when
# not, the head and tail of that console go to the TAP log, so a failure in CI explains itself
console_has() {
	last_console "$1" | grep -E -- "$2" >/dev/null && return 0
	{
		echo "no line of the last boot's console ($1/console.log) matches: $2"
		echo "its first 12 and last 20 lines:"
		last_console "$1" | head -n 12 | cut -c1-240
		echo "..."
		last_console "$1" | tail -n 20 | cut -c1-240
	} | diag
	return 1
}

# console_lacks MACHINE_DIR REGEX: no line of the last boot's console matches REGEX; the
# lines that do match go to the TAP log
console_lacks() {
	local found
	found=$(last_console "$1" | grep -E -- "$2") || return 0
	{
		echo "the last boot's console ($1/console.log) has lines matching: $2"
		printf '%s\n' "$found" | head -n 10 | cut -c1-240
	} | diag
	return 1
}

# console_order MACHINE_DIR REGEX1 REGEX2: a line matching REGEX2 follows one matching REGEX1
console_order() {
	last_console "$1" | awk -v first="$2" -v second="$3" '
		$0 ~ first { seen = 1 } seen && $0 ~ second { found = 1 } END { exit !found }'
}

# exited_by_itself STATUS MACHINE_DIR: QEMU ended on its own (no timeout, status 0)
exited_by_itself() {
	if [ "$1" != 0 ]; then
		echo "lab exited with status $1 (124: timeout); last console lines:" | diag
		last_console "$2" | tail -n 30 | diag
		return 1
	fi
}

# check_exit_with_run MACHINE_DIR RUN_ID: the console and the results partition of a
# boot that ran `exit-with 3` (6 TAP lines)
check_exit_with_run() {
	local dir=$1 run=$2 out=$1/results
	check "console shows the executor running the fixture" \
		console_has "$dir" 'bootci: running .*fixtures/exit-with 3'
	check "console shows the fixture's exit status" \
		console_has "$dir" 'bootci: test program exited with status 3'
	check "results partition read back" "$LAB" read "$dir" "$out"
	check "runs/$run/test/result.txt says exit-status 3" \
		grep -qx 'exit-status 3' "$out/runs/$run/test/result.txt"
	check "runs/$run/test/out.txt holds the fixture's stdout" \
		grep -qx 'exit-with: stdout line' "$out/runs/$run/test/out.txt"
	check "runs/$run/test/err.txt holds the fixture's stderr" \
		grep -qx 'exit-with: stderr line' "$out/runs/$run/test/err.txt"
	if [ -d "$out/runs/$run" ]; then
		echo "files of run $run:" | diag
		(cd "$out" && find "runs/$run" -type f | sort) | diag
	fi
}

# IGT_ARGS: the kernel command line of the IGT engine scenarios (fixtures as the IGT folder,
# short timeouts, the watchdog armed, power off at the end so QEMU ends by itself).
# shellcheck disable=SC2034
IGT_ARGS="console=ttyS0 panic=-1 bootci.test_dir=/usr/libexec/bootci/fixtures bootci.on_finish=poweroff bootci.per_test_timeout=5 bootci.kill_grace=3 bootci.watchdog_timeout=15 bootci.output_limit=256K"

# igt_scenario NAME TESTLIST [EXTRA_CMDLINE]: a fresh machine boots (rebooting as often as the
# kernel dies) until the executor powers it off; its results are read back to MACHINE/results
# and generated into MACHINE/results.json. Prints the machine directory; 1 when any step failed.
igt_scenario() {
	local name=$1 testlist=$2 extra=${3:-} machine status=0
	machine=$(fresh_machine "$name") || return 1
	"$LAB" boot "$machine" --kernel "$KERNEL" --initrd "$INITRD" \
		--append "$IGT_ARGS bootci.run_id=$name bootci.testlist=/etc/bootci/testlists/$testlist $extra" \
		--timeout "$BOOT_TIMEOUT" >"$machine/lab.log" 2>&1 || status=$?
	echo "$machine"
	if [ "$status" != 0 ]; then
		echo "lab boot ended with status $status (124: timeout); last console lines:" | diag >&2
		last_console "$machine" | tail -n 40 | diag >&2
		return 1
	fi
	"$LAB" read "$machine" "$machine/results" >/dev/null 2>&1 || return 1
	"$BUILD/host/bin/bootci-aggregator" results "$machine/results/runs/$name" \
		-o "$machine/results.json" 2>&1 | diag >&2
}

# result_is MACHINE TEST RESULT: TEST has RESULT in MACHINE/results.json
result_is() {
	local got
	got=$(python3 -c 'import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
print(tests.get(sys.argv[2], {}).get("result", "(absent)"))' "$1/results.json" "$2" 2>&1)
	[ "$got" = "$3" ] && return 0
	echo "$2: result '$got', expected '$3'" | diag
	return 1
}

# result_is_or_hpet MACHINE TEST EXPECTED: result_is, except that a pass may also be a
# dmesg-warn whose only warnings are "hpet: Lost N RTC interrupts": QEMU's HPET under TCG
# misses RTC interrupts when the host is loaded (tests/lab/README.md; the lab
# loop's master filters the same line, tests/lab/loop/known-issues.txt). Any other warning,
# or any other result, still fails; the forgiven lines go to the TAP log.
result_is_or_hpet() {
	local out got noise
	out=$(python3 -c 'import json, re, sys
test = json.load(open(sys.argv[1]))["tests"].get(sys.argv[2], {})
lines = test.get("dmesg-warnings", "").splitlines()
hpet = re.compile(r"^<[0-7]> \[ *[0-9.]+\] hpet: Lost [0-9]+ RTC interrupts$")
noise = bool(lines) and all(hpet.match(line) for line in lines)
print(test.get("result", "(absent)"), "hpet-only" if noise else "-")' "$1/results.json" "$2" 2>&1)
	got=${out% *}
	noise=${out##* }
	[ "$got" = "$3" ] && return 0
	if [ "$3" = pass ] && [ "$got" = dmesg-warn ] && [ "$noise" = hpet-only ]; then
		echo "$2: dmesg-warn from the lab's HPET noise only, taken as pass" | diag
		return 0
	fi
	echo "$2: result '$got', expected '$3'" | diag
	return 1
}

# boots_of MACHINE: how many boots the run's journal recorded
boots_of() {
	grep -c '^boot ' "$1"/results/runs/*/bootci-journal.txt
}
