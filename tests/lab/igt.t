#!/usr/bin/env bash
# The IGT engine in the lab, on the real Debian kernel with the fixtures as the
# IGT folder: mixed results, a timeout and an output flood in one boot; a panic
# in a subtest; a panic in a dynamic subtest; a dead kernel that only the
# watchdog brings back; a job that kills the kernel at every boot (capped).
# Results are read back from the disk and generated as igt_runner would.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"

# --- mixed results, timeout, flood: one boot
# The flood is 2 MiB (an environment variable for init, from the command line); the
# per-test timeout leaves it ample time even on a loaded TCG host.
if m=$(igt_scenario igt-mixed lab-mixed.txt "BOOTCI_FIXTURE_FLOOD_MIB=2 bootci.per_test_timeout=20"); then ok "mixed: the run completed and powered off"; else not_ok "mixed: the run completed and powered off"; fi
check "mixed: pass" result_is "$m" igt@igt_basic@pass pass
check "mixed: fail" result_is "$m" igt@igt_basic@fail fail
check "mixed: skip" result_is "$m" igt@igt_basic@skip skip
check "mixed: stray stderr is warn" result_is "$m" igt@igt_basic@warn-stderr warn
check "mixed: kernel warning is dmesg-warn" result_is "$m" igt@igt_basic@dmesg-warn dmesg-warn
check "mixed: segfault is crash" result_is "$m" igt@igt_basic@crash crash
check "mixed: test without subtests" result_is "$m" igt@igt_simple pass
check "mixed: dynamic subtest pass" result_is "$m" igt@igt_dynamic@mixed@dyn-pass pass
check "mixed: dynamic subtest fail" result_is "$m" igt@igt_dynamic@mixed@dyn-fail fail
check "mixed: per-test timeout" result_is "$m" igt@igt_timing@sleep-long timeout
check "mixed: the timeout left a [bootci] marker in the kernel log" \
	grep -q '\[bootci\] Per-test timeout exceeded' "$m"/results/runs/igt-mixed/*/dmesg.txt
check "mixed: flood passes" result_is "$m" igt@igt_basic@flood pass
check "mixed: flood output capped, tail kept" \
	grep -q 'bootci: output over the limit of 262144 bytes' "$m"/results/runs/igt-mixed/9/out.txt
check "mixed: flood output under 512 KiB" \
	test "$(stat -c %s "$m"/results/runs/igt-mixed/9/out.txt)" -lt 524288
check "mixed: console shows the job lines" console_has "$m" 'bootci: \[10/10\] igt@igt_basic@flood pass'

# --- a panic inside a subtest
if m=$(igt_scenario igt-panic lab-panic.txt); then ok "panic: the run completed"; else not_ok "panic: the run completed"; fi
check "panic: two boots" test "$(boots_of "$m")" = 2
check "panic: the subtest in flight is crash (efi-pstore dump attributed)" result_is "$m" igt@igt_kernel@panic crash
check "panic: its record carries the dump" grep -q 'sysrq triggered crash' "$m/results.json"
check "panic: boot 2 saved the dump" grep -q '^previous kernel crash (pstore: dmesg-efi' "$m"/results/runs/igt-panic/boot-0002/boot.txt
check "panic: console shows the resume" console_has "$m" 'bootci: run igt-panic: resuming'
# One more boot of the finished run: it runs nothing and finds no dump left in NVRAM.
"$LAB" boot "$m" --kernel "$KERNEL" --initrd "$INITRD" \
	--append "$IGT_ARGS bootci.run_id=igt-panic bootci.testlist=/etc/bootci/testlists/lab-panic.txt" \
	--timeout "$BOOT_TIMEOUT" >"$m/lab3.log" 2>&1
status=$?
check "panic: the third boot of the finished run powers off by itself" exited_by_itself "$status" "$m"
rm -rf "$m/results3"
check "panic: its results partition is read back" "$LAB" read "$m" "$m/results3"
check "panic: no dump-type0 variable is left in the variable store" \
	grep -qx 'efi_dump_variables 0' "$m"/results3/runs/igt-panic/boot-0003/boot.txt
check "panic: and no pstore record" grep -qx 'pstore_records 0' "$m"/results3/runs/igt-panic/boot-0003/boot.txt
check "panic: the job before it passed" result_is "$m" igt@igt_basic@pass pass
check "panic: the run went on after it" result_is "$m" igt@igt_basic@skip skip

# --- a panic inside a dynamic subtest
if m=$(igt_scenario igt-dynamic-panic lab-dynamic-panic.txt); then ok "dynamic panic: the run completed"; else not_ok "dynamic panic: the run completed"; fi
check "dynamic panic: the dynamic subtest before it passed" result_is "$m" igt@igt_dynamic@with-panic@dyn-pass pass
check "dynamic panic: the one in flight is crash" result_is "$m" igt@igt_dynamic@with-panic@dyn-panic crash
check "dynamic panic: the run resumed at the next dynamic subtest" result_is "$m" igt@igt_dynamic@with-panic@dyn-after pass
check "dynamic panic: the next job ran" result_is "$m" igt@igt_basic@pass pass

# --- a dead kernel: only the watchdog brings the machine back
if m=$(igt_scenario igt-hang lab-hang.txt); then ok "hang: the run completed"; else not_ok "hang: the run completed"; fi
check "hang: the watchdog reset the machine (two boots)" test "$(boots_of "$m")" = 2
check "hang: the subtest in flight is crash (the panic before the hang was dumped)" result_is "$m" igt@igt_kernel@hang crash
check "hang: the run went on after it" result_is "$m" igt@igt_basic@pass pass

# --- a job that kills the kernel at every boot
if m=$(igt_scenario igt-cap lab-cap.txt bootci.boot_cap=2); then ok "cap: the run completed"; else not_ok "cap: the run completed"; fi
check "cap: three boots (two crashes, then capped)" test "$(boots_of "$m")" = 3
check "cap: the journal says capped" grep -qx 'capped 0 2' "$m"/results/runs/igt-cap/bootci-journal.txt
check "cap: the crashing job is incomplete" result_is "$m" igt@igt_kernel@panic-at-start incomplete
check "cap: the run went on after it" result_is "$m" igt@igt_basic@pass pass
done_testing
