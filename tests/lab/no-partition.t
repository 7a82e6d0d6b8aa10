#!/usr/bin/env bash
# A machine without a results partition: the executor says so on the console
# and reboots rather than leaving the machine stuck.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"

plan 5
machine=$(fresh_machine no-partition --no-results)
check "disk without results partition created" [ -n "$machine" ] || exit 1
status=0
"$LAB" boot "$machine" --kernel "$KERNEL" --initrd "$INITRD" \
	--append "console=ttyS0 panic=-1 bootci.run_id=lab-nopart bootci.results_wait=3" \
	--timeout "$BOOT_TIMEOUT" --no-reboot 2>&1 | diag || status=${PIPESTATUS[0]}
check "QEMU exited by itself" exited_by_itself "$status" "$machine"
check "console shows the missing partition error" \
	console_has "$machine" 'bootci: error: results partition .*not found'
check "the kernel restarts the machine after the error" \
	console_order "$machine" 'bootci: error: results partition .*not found' 'reboot: Restarting system'
check "the executor did not panic the kernel" \
	console_lacks "$machine" 'Kernel panic'
