#!/usr/bin/env bash
# Direct kernel boot (QEMU -kernel) of the test image on a machine with a results
# partition: the executor runs `exit-with 3` and records it on the partition.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"

plan 8
machine=$(fresh_machine boot-run)
check "disk with results partition created" [ -n "$machine" ] || exit 1
status=0
"$LAB" boot "$machine" --kernel "$KERNEL" --initrd "$INITRD" \
	--append "console=ttyS0 panic=-1 bootci.run_id=lab1" \
	--timeout "$BOOT_TIMEOUT" --no-reboot 2>&1 | diag || status=${PIPESTATUS[0]}
check "QEMU exited by itself" exited_by_itself "$status" "$machine"
check_exit_with_run "$machine" lab1
