/* SPDX-License-Identifier: MIT */
/*
 * The boot fault note: how many boots in a row ended in error before their
 * run could begin (the run folder could not be made, the results partition
 * not mounted...), kept where a damaged results partition cannot lose it:
 * an EFI variable, BootciBootFault-BCI_BOOT_FAULT_GUID (through lib/efi).
 * The executor writes it at each such ending and removes it once its run
 * begins; the known-good image's collect reads it and, once the count
 * reached the cap, sends the reason to the master (which takes the machine
 * out) and removes it. This module is the format's only reader and writer.
 *
 * The variable's data, text, one "key value" per line, in this order:
 *
 *   run lab-42                 the run id those boots were for ("-" unknown)
 *   boots 3                    boots in a row that ended so (1 or more)
 *   cap 3                      the executor's error_boots: at boots >= cap the
 *                              machine reports it
 *   reason cannot create ...   the last one's reason (one line, may be empty)
 *
 * Strict: another key or order, a number out of range or written otherwise
 * (a sign, a leading zero) is -EINVAL.
 */
#ifndef BCI_BOOT_FAULT_H
#define BCI_BOOT_FAULT_H

#include <stdbool.h>
#include <stddef.h>

#define BCI_BOOT_FAULT_NAME "BootciBootFault"
#define BCI_BOOT_FAULT_GUID "298edbf6-7cf3-48a1-969d-eca01623e23c"
/* The longest reason kept (bytes); a longer one is cut. */
#define BCI_BOOT_FAULT_REASON_MAX 200

struct bci_boot_fault {
	char run[129];
	unsigned boots;
	unsigned cap;
	char reason[BCI_BOOT_FAULT_REASON_MAX + 1];
};

/* Reads the note under @root ("" on the machine): 0, -ENOENT none, -EINVAL malformed, -errno. */
int bci_boot_fault_read(const char *root, struct bci_boot_fault *fault);
/* Writes it (non-volatile); the reason's newlines become spaces. 0 or -errno. */
int bci_boot_fault_write(const char *root, const struct bci_boot_fault *fault);
/* Removes it: 0, also when there was none; -errno. */
int bci_boot_fault_clear(const char *root);

/* @text (@len bytes) parsed into @fault: 0 or -EINVAL. */
int bci_boot_fault_parse(const char *text, size_t len, struct bci_boot_fault *fault);
/* @fault as the variable's text into @buf: its length, or -ENOBUFS. */
int bci_boot_fault_format(const struct bci_boot_fault *fault, char *buf, size_t size);

/* Whether the machine reports it: the count reached the cap. */
bool bci_boot_fault_due(const struct bci_boot_fault *fault);

#endif
