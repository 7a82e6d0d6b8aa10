#!/usr/bin/env bash
# The same run as boot-run.t, but the way a test machine gets it: OVMF + iPXE
# netboot from a TFTP folder holding vmlinuz, initrd.img and boot.ipxe.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"

plan 9
machine=$(fresh_machine netboot)
check "disk with results partition created" [ -n "$machine" ] || exit 1
check "tftp folder written" "$LAB" tftp "$machine/tftp" --kernel "$KERNEL" --initrd "$INITRD" \
	--append "console=ttyS0 panic=-1 bootci.run_id=lab1"
status=0
"$LAB" netboot "$machine" --tftp "$machine/tftp" \
	--timeout "$BOOT_TIMEOUT" --no-reboot 2>&1 | diag || status=${PIPESTATUS[0]}
check "QEMU exited by itself" exited_by_itself "$status" "$machine"
check_exit_with_run "$machine" lab1
