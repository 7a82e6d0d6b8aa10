#!/usr/bin/env bash
# Recovery by power cycling, in the lab: a master (`serve` on 127.0.0.1, tests/lab/loop.sh) that
# powers two QEMU machines through their BMCs (LOOP_POWER=ipmi: each machine has its own
# OpenIPMI ipmi_sim, `lab bmc`; the master's ipmi driver runs ipmitool), power-cycles = 1.
# The master powers them on too (`schedule power NAME on`): the lab script never does.
#   pc-hang  netboots its job, whose only test (igt_timing@silent-hang) hangs without a word for
#            an hour: the machine never uploads nor asks again. Past its deadline (60 s) serve
#            cycles it through its BMC (read back: on); QEMU is restarted, the firmware netboots
#            and the machine asks for its job again (boot 2 of the same job).
#   pc-dead  a board that takes power but never runs (QEMU started paused, -S, by its BMC at
#            every power on): it never asks. Past its deadline (15 s) it is power cycled once,
#            stays silent, and past the next deadline it is taken out of the schedule: the
#            schedule's JSON says so and its netboot gets `exit`. Then it is powered off (as a
#            machine taken out may power itself off) and `schedule return` powers it back on.
# Asserted on serve's log, GET /api/v1/schedule/machines, the QEMU processes and the consoles.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"
# shellcheck source=tests/lab/master.sh
. "$(dirname "$0")/master.sh"
# shellcheck source=tests/lab/loop.sh
. "$(dirname "$0")/loop.sh"

AGGREGATOR=${BOOTCI_AGGREGATOR:-$BUILD/host/bin/bootci-aggregator}
TEST_IMAGE=${LAB_TEST_IMAGE:-$BUILD/images/test}
LOOP_WORK=$BUILD/lab/power-cycle
LOOP_NAMES=(pc-hang pc-dead)
LOOP_GROUP=""
LOOP_TREE=power-tree
LOOP_TREE_FULL=never
LOOP_POWER_CYCLES=1
LOOP_DEADLINES=(60s 15s)
LOOP_POWER=ipmi
export BOOTCI_SCHEDULE_TICK=1
hang=$(loop_dir pc-hang)
dead=$(loop_dir pc-dead)

rm -rf "$LOOP_WORK"
mkdir -p "$LOOP_WORK"
printf 'igt@igt_timing@silent-hang\n' >"$LOOP_WORK/hang.testlist"
trap 'loop_stop' EXIT

# wait_log REGEX TIMEOUT: until a line of serve's log matches REGEX (printed as a TAP comment)
wait_log() {
	local until=$((SECONDS + $2)) line
	while :; do
		line=$(grep -a -E -- "$1" "$LOOP_WORK/master.log" | head -n 1)
		if [ -n "$line" ]; then
			echo "$line" | diag
			return 0
		fi
		if [ $SECONDS -ge "$until" ]; then
			echo "no line of serve's log matches '$1' after $2 s; it ends:" | diag
			tail -n 15 "$LOOP_WORK/master.log" | diag
			return 1
		fi
		sleep 1
	done
}

# machine_json NAME: the machine's object in GET /api/v1/schedule/machines, one line
machine_json() {
	curl -fsS --max-time 10 "$LOOP_MASTER/api/v1/schedule/machines" |
		python3 -c 'import json, sys
for m in json.load(sys.stdin)["machines"]:
    if m["name"] == sys.argv[1]:
        print(json.dumps(m, sort_keys=True))' "$1"
}

# json_is NAME PYTHON_EXPRESSION: the expression on the machine's object m is true
json_is() {
	local json
	json=$(machine_json "$1")
	echo "$1: $json" | diag
	python3 -c 'import json, sys
m = json.loads(sys.argv[1])
sys.exit(0 if eval(sys.argv[2]) else 1)' "$json" "$2"
}

# boot_segment DIR N: the console of the machine's Nth power-on (lab netboot), from 1
boot_segment() {
	awk -v n="$2" '/^=== lab netboot / { seg++ } seg == n' "$1/console.log"
}

# segment_has DIR N REGEX: boot N's console has a line matching REGEX (its tail to the TAP log when not)
segment_has() {
	boot_segment "$1" "$2" | grep -a -E -- "$3" >/dev/null && return 0
	echo "boot $2 of $1 has no line matching '$3'; its last lines:" | diag
	boot_segment "$1" "$2" | tail -n 15 | cut -c1-200 | diag
	return 1
}

# qemu_pid_of DIR: the machine's QEMU pid (QEMU's own pid file)
qemu_pid_of() {
	cat "$1/qemu.pid" 2>/dev/null
}

# qemu_wait DIR [OLD_PID]: until the machine's QEMU has written its pid file, and it is not
# OLD_PID (the BMC reads on once it started the machine's lab script, which then becomes QEMU),
# at most 10 s
qemu_wait() {
	local tries=0
	while { [ -z "$(qemu_pid_of "$1")" ] || [ "$(qemu_pid_of "$1")" = "${2:-}" ]; } && [ $tries -lt 100 ]; do
		sleep 0.1
		tries=$((tries + 1))
	done
}

# the steps, as functions so that their output goes to the TAP log
publish_hang() {
	loop_publish hang "$TEST_IMAGE" "$BUILD/images/test.manifest" "$LOOP_WORK/hang.testlist" - \
		--commit 3333333 --tier fast 2>&1 | diag
	return "${PIPESTATUS[0]}"
}
both_on() {
	[ -n "$dead_pid" ] && [ -n "$(qemu_pid_of "$hang")" ]
}
dead_restarted() {
	local now
	qemu_wait "$dead" "$dead_pid"
	now=$(qemu_pid_of "$dead")
	echo "pc-dead's QEMU: pid $dead_pid before the cycle, ${now:-none} after" | diag
	[ -n "$now" ] && [ "$now" != "$dead_pid" ]
}
inventory_ipmi() {
	diag <"$LOOP_DATA/machines.conf"
	[ "$(grep -c '^power = ipmi$' "$LOOP_DATA/machines.conf")" = 2 ] &&
		[ "$(grep -c -F "$LAB" "$LOOP_DATA/machines.conf")" = 0 ]
}
# returned: pc-dead, powered off while out, returned: powered back on by its BMC, a new QEMU
returned() {
	local out before
	before=$(qemu_pid_of "$dead")
	"$AGGREGATOR" schedule --data "$LOOP_DATA" power pc-dead off 2>&1 | diag
	[ "$("$LAB" power "$dead" status)" = off ] || { echo "pc-dead's QEMU still runs after power off" | diag; return 1; }
	out=$("$AGGREGATOR" schedule --data "$LOOP_DATA" return pc-dead 2>&1)
	printf '%s\n' "$out" | diag
	printf '%s\n' "$out" | grep -E '^schedule: pc-dead: powered back on: BMC 127\.0\.0\.1:[0-9]+: chassis power on \(it was off\); reads on$' >/dev/null &&
		qemu_wait "$dead" "$before" && [ -n "$(qemu_pid_of "$dead")" ] && [ "$(qemu_pid_of "$dead")" != "$before" ]
}
answers_exit() {
	local script
	script=$(curl -fsS --max-time 10 "$LOOP_MASTER/api/v1/boot/$1") || return 1
	printf '%s\n' "$script" | diag
	[ "$(printf '%s\n' "$script" | grep -cx exit)" = 1 ]
}

plan 17
started=$SECONDS
for name in "${LOOP_NAMES[@]}"; do
	mkdir -p "$(loop_dir "$name")"
	"$LAB" disk "$(loop_dir "$name")" >"$LOOP_WORK/disk-$name.log" 2>&1 ||
		{ diag <"$LOOP_WORK/disk-$name.log"; exit 1; }
done
check "the master started (power-cycles = 1, deadlines 60 s and 15 s)" loop_master_start || exit 1
check "its inventory powers both machines through their BMCs (power = ipmi)" inventory_ipmi
# pc-dead on first: its 15 s deadline runs from serve's first turn.
loop_tftp >/dev/null
export LOOP_POWER_TIMEOUT=900
LAB_QEMU_EXTRA=-S loop_machine_on 1 2>&1 | diag
qemu_wait "$dead"
dead_pid=$(qemu_pid_of "$dead")
check "a build whose fast tier hangs published over HTTP" publish_hang
loop_machine_on 0 2>&1 | diag
qemu_wait "$hang"
check "both machines powered on by the master through their BMCs (pc-dead's QEMU paused)" both_on

# pc-dead: cycled once by its power command, then taken out.
check "pc-dead silent past its deadline: serve power cycled it" \
	wait_log '^schedule: pc-dead: silent for [0-9]+ s \(deadline 15 s\): power cycle 1 of 1$' 60
check "through its BMC, the state read back" \
	wait_log '^schedule: pc-dead: power cycle 1: BMC 127\.0\.0\.1:[0-9]+: chassis power cycle \(it was on\); reads on$' 60
check "its BMC restarted its QEMU (another process)" dead_restarted
check "silent after its cycle: taken out of the schedule" \
	wait_log '^schedule: pc-dead: silent for [0-9]+ s after 1 power cycle\(s\): taken out of the schedule$' 60
check "the schedule's JSON: pc-dead out, 1 power cycle, the note says why" \
	json_is pc-dead 'm["state"] == "out" and m["power_cycles"] == 1 and "taken out" in m["note"]'
check "pc-dead's netboot answer is exit" answers_exit "$(loop_mac 1)"
check "pc-dead powered off while out, then returned: its BMC powers it back on" returned

# pc-hang: netbooted its job, hung in the test, cycled, asked for the same job again.
check "pc-hang netbooted its job" wait_log '^schedule: boot: pc-hang: \S+ \(first boot, boot 1\)$' 180
check "pc-hang silent past its deadline: serve power cycled it through its BMC" \
	wait_log '^schedule: pc-hang: power cycle 1: BMC 127\.0\.0\.1:[0-9]+: chassis power cycle \(it was on\); reads on$' 240
check "before the cycle its console shows the job's test hanging" \
	segment_has "$hang" 1 'starting subtest silent-hang'
check "the machine came back and asked for the same job again" \
	wait_log '^schedule: boot: pc-hang: \S+ \(handed out again, boot 2\)$' 180
check "the schedule's JSON: pc-hang ready, its cycles forgiven, its last cycle kept" \
	json_is pc-hang 'm["state"] == "ready" and m["power_cycles"] == 0 and m["last_cycle"] and m["last_seen"] >= m["last_cycle"]'
echo "took $((SECONDS - started)) s" | diag
loop_stop
left=$(loop_leftovers)
[ -z "$left" ] || echo "left behind: $left" | diag
check "no QEMU, BMC or serve left behind" [ -z "$left" ]
