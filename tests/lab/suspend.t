#!/usr/bin/env bash
# Suspend/resume cycles in the lab, on the real Debian kernel: five S3 cycles between
# tests, woken by the RTC alarm, and a pm_test cycle; then an s2idle cycle that never
# wakes (QEMU's RTC does not wake s2idle), which only the watchdog ends. Results are
# read back from the disk and generated as igt_runner would; the measured times are
# printed as TAP diagnostics.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"

# cycle_line MACHINE RUN CYCLE: the cycle's line in suspend-cycles.txt
cycle_line() {
	grep -E "^$3 " "$1/results/runs/$2/suspend-cycles.txt"
}

# suspended_at_least MACHINE RUN CYCLE SECONDS: the cycle slept at least that long
suspended_at_least() {
	local line
	line=$(cycle_line "$1" "$2" "$3") || { echo "$3: no record" | diag; return 1; }
	awk -v min="$4" '{ exit !($4 >= min) }' <<<"$line" && return 0
	echo "$3: $line" | diag
	return 1
}

# stats_counted MACHINE RUN CYCLE: the output of the job that ran CYCLE has one
# suspend_stats line, with the success count up by exactly one and the fail count
# unchanged (a line "success N -> N" would mean the kernel never suspended)
stats_counted() {
	local out
	out=$(grep -lx "Starting subtest: $3" "$1"/results/runs/"$2"/*/out.txt | head -n 1)
	[ -n "$out" ] || { echo "$3: no job output starts it" | diag; return 1; }
	awk '
		/^bootci-suspend: suspend_stats / {
			n++
			# bootci-suspend: suspend_stats success B -> A, fail B -> A
			if (!($3 == "success" && $5 == "->" && $7 == "fail" && $9 == "->")) { bad++; next }
			sub(",", "", $6)
			if ($6 + 0 != $4 + 1 || $10 + 0 != $8 + 0) bad++
		}
		END { exit !(n == 1 && !bad) }' "$out" && return 0
	echo "$3: want one suspend_stats line, success N -> N+1 and fail unchanged; $out has:" | diag
	grep 'suspend_stats' "$out" | diag
	return 1
}

# stamps_in_order MACHINE: in the last boot's serial console, no bootci line is stamped
# more than 50 ms before the line above it nor after the line below it (`[   12.345678] ...`,
# the kernel's format). The kernel stamps a record when it is logged and prints it when the
# console is free, while bootci writes its lines to the console itself: on a loaded host a
# record stamped a few milliseconds before a bootci line can come out after it (seen: 8 ms,
# `pstore: Using crash dump compression` printed after bootci's `pstore mounted`). Those
# steps are counted as console delays; a stamp on the wrong clock is off by far more (after
# a suspend cycle CLOCK_BOOTTIME is seconds ahead). The kernel's own lines may step back
# among themselves (early boot, while sched_clock moves from jiffies to the TSC): those steps
# are counted, not judged. The counts and the largest step back go to the TAP log.
stamps_in_order() {
	last_console "$1" | tr -d '\r' | awk '
		match($0, /^\[ *[0-9]+\.[0-9]+\] /) {
			t = substr($0, 2, RLENGTH - 3) + 0
			mine = index($0, "] bootci: ") > 0
			if (mine) b++; else k++
			if (n++ && t < last) {
				if (mine || last_mine) {
					if (last - t > 0.05) bad++; else delayed++
					if (last - t > worst) { worst = last - t; at = $0 }
				} else kernel_back++
			}
			last = t; last_mine = mine
		}
		END {
			printf "console stamps: %d kernel lines, %d bootci lines; %d steps back over 50 ms next to a bootci line, %d console delays under it (largest step %.6f s%s), %d among kernel lines\n",
				k, b, bad, delayed, worst, worst ? " at: " at : "", kernel_back
			exit !(k > 0 && b > 0 && !bad)
		}' | diag
	return "${PIPESTATUS[2]}"
}

# --- five S3 cycles between tests, and a pm_test cycle
# The watchdog (15 s in IGT_ARGS) is closed for S3 and re-armed after: QEMU resets every
# device on an S3 wake, the i6300esb included.
if m=$(igt_scenario suspend-s3 lab-suspend.txt "bootci.suspend_wake_after=5 bootci.suspend_mem_sleep=deep"); then ok "s3: the run completed and powered off"; else not_ok "s3: the run completed and powered off"; fi
check "s3: one boot" test "$(boots_of "$m")" = 1
check "s3: the test before the cycles passed" result_is_or_hpet "$m" igt@igt_basic@pass pass
for n in 0001 0002 0003 0004 0005; do
	check "s3: cycle mem-$n passed" result_is_or_hpet "$m" "bootci@suspend@mem@$n" pass
	check "s3: cycle mem-$n slept (>= 3 s)" suspended_at_least "$m" suspend-s3 "mem-$n" 3
	check "s3: cycle mem-$n counted by suspend_stats as one success" stats_counted "$m" suspend-s3 "mem-$n"
done
check "s3: the test between the cycles passed" result_is_or_hpet "$m" igt@igt_simple pass
check "s3: pm_test cycle passed" result_is_or_hpet "$m" "bootci@suspend@mem_devices@0001" pass
check "s3: pm_test cycle did not arm the RTC" grep -qE '^mem_devices-0001 pass .* pm_test$' \
	"$m/results/runs/suspend-s3/suspend-cycles.txt"
check "s3: no igt@bootci_suspend names" bash -c "! grep -q 'igt@bootci_suspend' '$m/results.json'"
check "s3: the cycles' kernel log shows the S3 entry" \
	grep -q 'PM: suspend entry (deep)' "$m"/results/runs/suspend-s3/1/dmesg.txt
check "s3: bootci's console lines and the kernel's sort by their stamps, across the cycles" \
	stamps_in_order "$m"
check "s3: the watchdog was re-armed after a cycle" console_order "$m" 'bootci: suspend mem-0001' 'watchdog armed'
check "s3: summary written" grep -qx 'cycles 6' "$m"/results/runs/suspend-s3/suspend-summary.txt
check "s3: results.json carries the summary" python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["bootci_suspend_summary"]
sys.exit(0 if s["cycles"] == 6 and s["suspended_seconds"]["min"] >= 3 else 1)' "$m/results.json"
if [ -f "$m/results/runs/suspend-s3/suspend-cycles.txt" ]; then
	echo "measured (cycle result wall suspended latency kernel-suspend kernel-resume wake):" | diag
	diag <"$m/results/runs/suspend-s3/suspend-cycles.txt"
	[ -f "$m/results/runs/suspend-s3/suspend-summary.txt" ] && diag <"$m/results/runs/suspend-s3/suspend-summary.txt"
fi

# --- s2idle never wakes under QEMU: the kept watchdog resets the machine
if m=$(igt_scenario suspend-s2idle lab-suspend-s2idle.txt "bootci.watchdog_timeout=20"); then ok "s2idle: the run completed"; else not_ok "s2idle: the run completed"; fi
check "s2idle: the watchdog reset the machine (two boots)" test "$(boots_of "$m")" = 2
check "s2idle: the cycle in flight is incomplete" result_is "$m" bootci@suspend@freeze@0001 incomplete
check "s2idle: the run went on after it" result_is_or_hpet "$m" igt@igt_basic@pass pass
check "s2idle: the cycle wrote its start before sleeping" \
	grep -qx 'Starting subtest: freeze-0001' "$m"/results/runs/suspend-s2idle/0/out.txt
check "s2idle: console shows the resume" console_has "$m" 'bootci: run suspend-s2idle: resuming'
check "s2idle: results.json's suspend summary counts the incomplete cycle" python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["bootci_suspend_summary"]
sys.exit(0 if s["results"]["incomplete"] == 1 else 1)' "$m/results.json"
done_testing
