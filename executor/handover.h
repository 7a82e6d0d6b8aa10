/* SPDX-License-Identifier: MIT */
/*
 * handover.c: the executor's way back to the known-good image (EFI BootNext,
 * through lib/efi) and the per-boot record of which entry booted. The EFI
 * variables themselves are lib/efi's (efi/efi.h); what is chosen here, and
 * what the console says, is the executor's policy.
 */
#ifndef BCI_HANDOVER_H
#define BCI_HANDOVER_H

#include <stddef.h>

#include "efi/efi.h"
#include "executor.h"

/*
 * Called when the boot is about to end. A reboot ending hands over: the entry
 * named by known_good_entry (a description, or Boot####) becomes BootNext,
 * the variable is synced, "bootci: hand-over: BootNext=Boot0003 (label)" is
 * said and BCI_END_REBOOT returned. Without EFI variables, without that
 * entry, or when BootNext cannot be written, the console says why and the
 * handover_fallback ending is returned. Left as they are: a power-off ending
 * (asked for by configuration), an empty known_good_entry (hand-over off), and
 * a boot that already is the known-good entry (BootCurrent; a BootNext to
 * itself would loop). Never blocks.
 */
enum bci_ending bci_handover(struct bci_executor *ex, enum bci_ending ending);

/*
 * One line (no newline) describing this boot for the run's journal:
 * "efi-boot-current=Boot0003 release=6.1.0-57-amd64 realtime=1712345678.123
 * cmdline=<the rest of the line is /proc/cmdline>"; efi-boot-current is
 * "none" without EFI or BootCurrent, release "unknown" when not known. Writes
 * nothing; returns the line's length, or -ENOBUFS when @size is too small.
 */
int bci_boot_record(struct bci_executor *ex, char *buf, size_t size);

#endif
