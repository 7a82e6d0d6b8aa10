#!/usr/bin/env bash
# Power cuts at random moments of a run: QEMU is SIGKILLed (the machine loses power, the
# writes QEMU had not issued to the disk image are gone) POWER_CUTS times, each at a
# random moment after the executor mounted the results partition, and booted again until
# the run completes. After every cut the results partition is read back without mounting it:
# e2fsck -fn is clean once the ext4 journal is replayed (what the next mount does);
# after the next boot, everything journaled before the cut is still there (the run's and
# every job's journal lines, every settled verdict unchanged) and the journals hold only
# whole, well-formed lines that agree (tests/lab/power-cut.py); at the end no result is
# lost or doubled in results.json, no job ran twice, and ingest stores every result.
#
# POWER_CUTS (default 3: each costs a boot, ~20-30 s of TCG), POWER_CUT_WINDOW (seconds,
# default 6: each cut lands uniformly in that long after the mount; the 108 jobs take
# about 6 s on an idle machine, 13 s on a loaded one, and a run that ends before its first
# cut starts again on a fresh machine with half the window) and POWER_CUT_SEED (default:
# a new one each run) replay a failure: the seed and every cut's moment are printed. The
# issue's own trial was POWER_CUTS=19.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"
PATH=$PATH:/usr/sbin:/sbin

cuts=${POWER_CUTS:-3}
window=${POWER_CUT_WINDOW:-6}
seed=${POWER_CUT_SEED:-$(( $(date +%s%N) % 1000000 ))}
run=power-cut
checker=$SRC/tests/lab/power-cut.py
if ! [[ $cuts =~ ^[1-9][0-9]*$ && $window =~ ^[1-9][0-9]*$ && $seed =~ ^[0-9]+$ ]]; then
	not_ok "POWER_CUTS ($cuts), POWER_CUT_WINDOW ($window) and POWER_CUT_SEED ($seed) take whole numbers, the first two from 1"
	done_testing
	exit 1
fi
echo "# power cuts: POWER_CUTS=$cuts POWER_CUT_WINDOW=$window POWER_CUT_SEED=$seed"
RANDOM=$seed

# new_machine: a fresh machine in $m, with what the testlist's jobs end as when nothing cuts
# them (initramfs/testlists/lab-power-cut.txt) in $m/expected.txt
new_machine() {
	m=$(fresh_machine power-cut) || return 1
	{
		printf '%s\n' "igt@igt_basic@pass pass" "igt@igt_basic@fail fail" "igt@igt_basic@skip skip" \
			"igt@igt_basic@warn-stderr warn" "igt@igt_basic@dmesg-warn dmesg-warn" "igt@igt_simple pass" \
			"igt@igt_dynamic@mixed@dyn-pass pass" "igt@igt_dynamic@mixed@dyn-fail fail" \
			"igt@igt_dynamic@mixed@dyn-skip skip" "igt@igt_timing@sleep-1 pass"
		for i in $(seq 0 99); do printf 'igt@igt_timing@quick-%03d pass\n' "$i"; done
	} >"$m/expected.txt"
}
new_machine || { not_ok "a fresh machine"; done_testing; exit 1; }

# boot_until_cut DELAY_MS: boots the machine; with DELAY_MS, SIGKILLs QEMU that long after
# the executor mounted the results partition. Status 0: QEMU was cut; 1: it ended by itself first
# (powered off: status in $m/boot.status); 2: the boot never reached the mount.
boot_until_cut() {
	local delay_ms=$1 offset lab_pid pid waited=0
	touch "$m/console.log"
	offset=$(stat -c %s "$m/console.log")
	rm -f "$m/qemu.pid" "$m/boot.status"
	(
		status=0
		LAB_QEMU_EXTRA="${LAB_QEMU_EXTRA:-} -pidfile $m/qemu.pid" "$LAB" boot "$m" \
			--kernel "$KERNEL" --initrd "$INITRD" --timeout "$BOOT_TIMEOUT" \
			--append "$IGT_ARGS bootci.run_id=$run bootci.testlist=/etc/bootci/testlists/lab-power-cut.txt" \
			>>"$m/lab.log" 2>&1 || status=$?
		echo "$status" >"$m/boot.status"
	) &
	lab_pid=$!
	if [ -z "$delay_ms" ]; then
		wait "$lab_pid"
		return 1
	fi
	# The mount starts the clock (the partition is not written before it); a tenth of a
	# second's polling is noise next to the window.
	until tail -c +$((offset + 1)) "$m/console.log" | grep -a 'bootci: results partition .* mounted on' >/dev/null; do
		[ -e "$m/boot.status" ] && { wait "$lab_pid"; return 2; }
		sleep 0.1
	done
	sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
	pid=$(cat "$m/qemu.pid" 2>/dev/null)
	if [ -e "$m/boot.status" ] || [ -z "$pid" ] || ! grep -q '^qemu-system' "/proc/$pid/comm" 2>/dev/null; then
		wait "$lab_pid"
		return 1
	fi
	kill -KILL "$pid"
	while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 100 ]; do sleep 0.1; waited=$((waited + 1)); done
	printf '\n=== power-cut.t: SIGKILL %s ms after the mount (seed %s) ===\n' \
		"$delay_ms" "$seed" >>"$m/console.log"
	wait "$lab_pid"
	return 0
}

# snapshot NAME: the results partition as the next boot finds it, under $m/NAME: its bytes
# copied out of the disk, the ext4 journal replayed on the copy as a mount would (right
# after a kill, metadata may be in the journal only), then e2fsck -fn must find nothing
# to fix; the files dumped and results.json generated from the run folder.
snapshot() {
	local name=$1 range start size img=$m/$1.img status=0
	rm -rf "${m:?}/$name" "$img"
	range=$(awk '$1 == "results" { print $2, $3 }' "$m/layout")
	read -r start size <<<"$range"
	dd if="$m/disk.img" of="$img" bs=1M skip="$start" count="$size" \
		iflag=skip_bytes,count_bytes conv=sparse status=none
	e2fsck -E journal_only -p "$img" >"$m/$name.replay.log" 2>&1 || status=$?
	if [ "$status" -ge 4 ]; then
		echo "$name: the journal replay failed (e2fsck status $status)" | diag
		diag <"$m/$name.replay.log"
		return 1
	fi
	status=0
	e2fsck -fn "$img" >"$m/$name.fsck.log" 2>&1 || status=$?
	if [ "$status" != 0 ]; then
		echo "$name: e2fsck -fn status $status" | diag
		head -n 30 "$m/$name.fsck.log" | diag
		return 1
	fi
	mkdir -p "$m/$name"
	debugfs -R "rdump / $m/$name" "$img" >/dev/null 2>"$m/$name.debugfs.log" || return 1
	rm -f "$img"
	# The executor writes joblist.txt last when it creates a run: a cut before it leaves a
	# folder the next boot makes again, not yet a results directory.
	if [ ! -f "$m/$name/runs/$run/joblist.txt" ]; then
		[ -d "$m/$name/runs/$run" ] && echo "$name: run folder cut before its joblist.txt" | diag
		return 0
	fi
	"$BUILD/host/bin/bootci-aggregator" results "$m/$name/runs/$run" -o "$m/$name/results.json" \
		2>"$m/$name/results.err" || { diag <"$m/$name/results.err"; return 1; }
}

# kept BEFORE AFTER: everything journaled in snapshot BEFORE is in snapshot AFTER
kept() {
	local out status=0
	[ -f "$m/$1/results.json" ] || { echo "$1: no run folder yet: nothing journaled to keep" | diag; return 0; }
	out=$(python3 "$checker" kept "$m/$1" "$m/$2" "$run" 2>&1) || status=$?
	printf '%s\n' "$out" | diag
	return "$status"
}

# A machine faster than the window may finish the run before the first cut (a whole run
# takes ~6 s after the mount on an idle machine, ~13 s on a loaded one): then the run starts
# again on a fresh machine with half the window, down to 1 s, so that the cuts land in it.
window_ms=$((window * 1000))
while :; do
landed=0 previous="" boots=0 last=0
for cut in $(seq 1 "$cuts"); do
	delay_ms=$(( (RANDOM * 32768 + RANDOM) % window_ms ))
	boots=$((boots + 1))
	boot_until_cut "$delay_ms"
	last=$?
	case $last in
	0) landed=$((landed + 1)); echo "# cut $cut: QEMU SIGKILLed ${delay_ms} ms after the mount" ;;
	1) echo "# cut $cut (${delay_ms} ms): the run finished first"; break ;;
	*) not_ok "cut $cut: the boot reached the mount (lab status $(cat "$m/boot.status"))"
	   last_console "$m" | tail -n 30 | diag; break ;;
	esac
	check "cut $cut at ${delay_ms} ms: e2fsck -fn is clean after the journal replay" snapshot "cut-$cut"
	[ -z "$previous" ] ||
		check "cut $cut: everything journaled before cut $((cut - 1)) is kept, verdicts unchanged, journals well formed" kept "$previous" "cut-$cut"
	previous=cut-$cut
done
if [ "$last" = 1 ] && [ "$landed" = 0 ] && [ "$window_ms" -gt 1000 ]; then
	window_ms=$(( window_ms / 2 > 1000 ? window_ms / 2 : 1000 ))
	echo "# the run finished before its first cut: again on a fresh machine, the window ${window_ms} ms"
	new_machine || { not_ok "a fresh machine"; done_testing; exit 1; }
	continue
fi
break
done
# The run goes on without cuts until the executor powers the machine off.
if [ "$last" = 0 ]; then
	boots=$((boots + 1))
	boot_until_cut ""
fi
echo "# $landed of $cuts cuts landed in the run, $boots boots"
check "the run completed: the last boot powered off by itself" exited_by_itself "$(cat "$m/boot.status")" "$m"
check "at the end, e2fsck -fn is clean" snapshot final
[ -z "$previous" ] ||
	check "everything journaled before the last cut is kept, verdicts unchanged, journals well formed" kept "$previous" final
check "the cuts landed in the run (at least one; $landed of $cuts)" test "$landed" -ge 1
final_check() {
	local out status=0
	out=$(python3 "$checker" final "$m/final" "$run" "$m/expected.txt" 2>&1) || status=$?
	printf '%s\n' "$out" | diag
	return "$status"
}
check "no result lost or doubled in results.json, no job run twice" final_check
# The master's side of the finished run: its boot folders are as the cuts left them (a boot
# cut before its boot.txt, a boot without end.txt), and ingest stores every result all the same.
ingested() {
	local out status=0 want
	want=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["tests"]))' \
		"$m/final/results.json" 2>&1) || { echo "final/results.json: $want" | diag; return 1; }
	rm -rf "$m/master"
	out=$("$BUILD/host/bin/bootci-aggregator" ingest --data "$m/master" --machine lab \
		"$m/final/runs/$run" 2>&1) || status=$?
	printf '%s\n' "$out" | diag
	[ "$status" = 0 ] && [[ $out == *": stored $want results, "* ]]
}
check "the finished run ingests: every result of results.json stored" ingested
done_testing
