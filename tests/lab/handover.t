#!/usr/bin/env bash
# The hand-over to the known-good image by EFI BootNext, on a machine whose disk
# is the builder's known-good disk image and whose boot order puts the network
# first (iPXE, then the disk):
#   1. provisioning (direct kernel boot of the test image): bootci-efi, run as
#      the executor's test program, registers `bootci-known-good` =
#      HD(1,GPT,...)/File(\EFI\bootci\known-good.efi) at the end of BootOrder;
#   2. a run (netboot of the builder's test image as it is) ends: the executor
#      writes BootNext=Boot#### and reboots;
#   3. the firmware boots that entry instead of the network: the known-good
#      UKI from the disk, whose executor sees BootCurrent = the entry and
#      BootNext gone (consumed by the firmware), and does not hand over again;
#   4. bootci-efi list on the next boot shows the entry kept and BootNext absent.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"

test_image=${LAB_TEST_IMAGE:-$BUILD/images/test}
known_good=${LAB_KNOWN_GOOD:-$BUILD/images/known-good}
label=bootci-known-good

# boot_step NAME LAB_ARGS...: one lab boot ending by itself; its wall time goes to the TAP log
boot_step() {
	local name=$1 status=0 started=$SECONDS
	shift
	"$LAB" "$@" --timeout "$BOOT_TIMEOUT" 2>&1 | diag || status=${PIPESTATUS[0]}
	echo "$name: $((SECONDS - started)) s wall" | diag
	exited_by_itself "$status" "$machine"
}

plan 16
machine=$(fresh_machine handover --disk-image "$known_good/disk.img")
check "machine disk is the builder's known-good disk.img" [ -n "$machine" ] || exit 1
total_started=$SECONDS

# ---- 1. provisioning: the entry is made on the machine, by the machine's firmware interface
provision="/usr/sbin/bootci-efi create-entry --label $label --disk /dev/vda --partition 1"
provision="$provision --loader /EFI/bootci/known-good.efi --last"
check "provisioning boot ran and powered off" boot_step provisioning boot "$machine" \
	--kernel "$test_image/vmlinuz" --initrd "$test_image/initrd.img" \
	--append "console=ttyS0 panic=-1 bootci.run_id=provision bootci.on_finish=poweroff bootci.test=\"$provision\""
check "bootci-efi create-entry exited 0" console_has "$machine" 'bootci: test program exited with status 0'
check "a power-off ending does not hand over" console_lacks "$machine" 'hand-over'
check "results partition read back" "$LAB" read "$machine" "$machine/provision"
out=$machine/provision/runs/provision/test/out.txt
check "the entry is HD(partition 1 of the disk by its GPT GUID)/File(loader)" grep -qE \
	"^Boot[0-9A-F]{4}\\* $label	HD\\(1,GPT,6b6f6f62-6369-4b47-8000-000000000002,0x800,0x20000\\)/File\\(\\\\EFI\\\\bootci\\\\known-good.efi\\) \\(created\\)$" "$out"
[ ! -f "$out" ] || diag <"$out"
entry=$(sed -n "s/^\\(Boot[0-9A-F]\\{4\\}\\)\\* $label	.*/\\1/p" "$out" 2>/dev/null)
entry=${entry:-Boot????}

# ---- 2. a run of the test image, netbooted as the builder made it, ends in the hand-over
check "netbooted run ended by itself" boot_step run netboot "$machine" --tftp "$test_image" --no-reboot
check "iPXE booted the test image" console_has "$machine" 'Command line: .*initrd=initrd.img console=ttyS0 panic=-1'
check "the run was recorded before the hand-over" console_order "$machine" 'bootci: run default recorded' "bootci: hand-over: BootNext=$entry \\($label\\)"
check "hand-over line, then the reboot" console_order "$machine" "bootci: hand-over: BootNext=$entry \\($label\\)" 'bootci: rebooting'

# ---- 3. the next boot (network first in the boot order) is the known-good image from the disk
check "the next boot ended by itself" boot_step known-good netboot "$machine" --tftp "$test_image" --no-reboot
check "the firmware did not netboot (BootNext won over the boot order)" console_lacks "$machine" 'initrd=initrd.img'
check "the known-good UKI booted from the disk (its embedded command line)" \
	console_has "$machine" 'Command line: .*bootci_image=known-good'
check "its executor: BootCurrent is the entry, BootNext consumed, no second hand-over" \
	console_has "$machine" "bootci: hand-over: this boot is $entry \\($label\\), the known-good entry; BootNext absent"

# ---- 4. what the firmware kept
check "bootci-efi list ran" boot_step list boot "$machine" \
	--kernel "$test_image/vmlinuz" --initrd "$test_image/initrd.img" \
	--append "console=ttyS0 panic=-1 bootci.run_id=list bootci.on_finish=poweroff bootci.test=\"/usr/sbin/bootci-efi list\""
rm -rf "$machine/list"
"$LAB" read "$machine" "$machine/list" >/dev/null 2>&1
out=$machine/list/runs/list/test/out.txt
[ ! -f "$out" ] || diag <"$out"
check "BootNext absent and the entry still registered" \
	eval "grep -qx 'BootNext: absent' '$out' && grep -q '^$entry\\* $label	HD(1,GPT,' '$out'"
echo "hand-over scenario: $((SECONDS - total_started)) s wall for 4 boots" | diag
