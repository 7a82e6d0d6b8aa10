#!/usr/bin/env bash
# The lab boots images made by bootci-builder alone: the test image's own
# output folder (vmlinuz, initrd.img, boot.ipxe) served as the TFTP folder and
# netbooted through OVMF + iPXE; the known-good disk image booted from the disk
# by the firmware (\EFI\BOOT\BOOTX64.EFI, the UKI with its embedded command line).
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"

test_image=${LAB_TEST_IMAGE:-$BUILD/images/test}
known_good=${LAB_KNOWN_GOOD:-$BUILD/images/known-good}

plan 14
# ---- the test image, netbooted from the builder's folder as it is
machine=$(fresh_machine builder-netboot)
check "disk with results partition created" [ -n "$machine" ] || exit 1
check "the builder's test image has boot.ipxe, vmlinuz, initrd.img" \
	test -f "$test_image/boot.ipxe" -a -f "$test_image/vmlinuz" -a -f "$test_image/initrd.img"
status=0
"$LAB" netboot "$machine" --tftp "$test_image" --timeout "$BOOT_TIMEOUT" --no-reboot 2>&1 | diag ||
	status=${PIPESTATUS[0]}
check "QEMU exited by itself" exited_by_itself "$status" "$machine"
check "iPXE ran the builder's boot.ipxe" console_has "$machine" 'Command line: .*initrd=initrd.img console=ttyS0 panic=-1'
check_exit_with_run "$machine" default

# ---- the known-good image, booted from its disk
machine=$(fresh_machine builder-known-good --disk-image "$known_good/disk.img")
check "machine disk is the builder's known-good disk.img" [ -n "$machine" ] || exit 1
status=0
"$LAB" diskboot "$machine" --timeout "$BOOT_TIMEOUT" --no-reboot 2>&1 | diag || status=${PIPESTATUS[0]}
check "QEMU exited by itself" exited_by_itself "$status" "$machine"
check "the UKI's embedded command line was used (booted from the disk)" \
	console_has "$machine" 'Command line: .*bootci_image=known-good'
check "the known-good executor mounted its results partition and ended" \
	console_order "$machine" 'results partition LABEL=BOOTCI-RESULTS is /dev/vda2' 'bootci: rebooting'
