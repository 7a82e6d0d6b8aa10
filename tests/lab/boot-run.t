#!/usr/bin/env bash
# Direct kernel boot (QEMU -kernel) of the test image on a machine with a results
# partition: the executor runs `exit-with 3` and records it on the partition,
# with the machine's environment in the boot's folder (lib/machine_env.h). The
# configuration names no device driver: coldplug loads the disk's (virtio_pci,
# then virtio_blk for the virtio device it makes appear) and the watchdog's by
# modalias, or the partition is never found.
set -uo pipefail
# shellcheck source=tests/lab/tap.sh
. "$(dirname "$0")/tap.sh"

plan 19
machine=$(fresh_machine boot-run)
check "disk with results partition created" [ -n "$machine" ] || exit 1
status=0
"$LAB" boot "$machine" --kernel "$KERNEL" --initrd "$INITRD" \
	--append "console=ttyS0 panic=-1 bootci.run_id=lab1 bootci.modules=crc32c_generic,ext4,efivarfs" \
	--timeout "$BOOT_TIMEOUT" --no-reboot 2>&1 | diag || status=${PIPESTATUS[0]}
check "QEMU exited by itself" exited_by_itself "$status" "$machine"
check_exit_with_run "$machine" lab1
check "console: coldplug loaded virtio_pci, virtio_blk and i6300esb by modalias" \
	console_has "$machine" 'bootci: coldplug: loaded [0-9]+ modules by modalias \((.* )?virtio_pci( .*)? virtio_blk'
check "console: i6300esb among them" \
	console_has "$machine" 'bootci: coldplug: loaded .* by modalias \(.*i6300esb'

# has_line FILE REGEX: a whole line of FILE matches the extended REGEX; when not, the file to the log
has_line() {
	grep -Eqx -- "$2" "$1" 2>/dev/null && return 0
	echo "no line of $1 matches: $2" | diag
	[ ! -f "$1" ] || head -n 40 "$1" | diag
	return 1
}
env=$machine/results/runs/lab1/boot-0001/environment.txt
check "boot-0001/environment.txt is a format 1 record" has_line "$env" 'format 1'
check "it names QEMU as the system vendor (DMI)" has_line "$env" 'dmi\.sys_vendor QEMU'
check "it has the kernel's command line" \
	has_line "$env" 'kernel\.cmdline console=ttyS0 panic=-1 bootci\.run_id=lab1 bootci\.modules=crc32c_generic,ext4,efivarfs( .*)?'
check "it has the CPU count" has_line "$env" 'cpu\.count [1-9][0-9]*'
check "it has the memory size" has_line "$env" 'memory\.kib [1-9][0-9]*'
check "it lists the virtio disk's PCI function with virtio-pci bound" \
	has_line "$env" 'pci 0000:00:[0-9a-f]{2}\.[0-7] 1af4:1001 1af4:0002 010000 00 virtio-pci'
check "it lists virtio_blk among the modules loaded" has_line "$env" 'module virtio_blk'
check "it lists i6300esb among the modules loaded" has_line "$env" 'module i6300esb'
check "it lists the watchdog's PCI function with its driver (a name with a space)" \
	has_line "$env" 'pci 0000:00:[0-9a-f]{2}\.[0-7] 8086:25ab [0-9a-f]{4}:[0-9a-f]{4} 088000 [0-9a-f]{2} i6300ESB timer'
