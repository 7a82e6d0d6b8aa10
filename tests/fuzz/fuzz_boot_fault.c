// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the boot fault note's reader (lib/boot_fault.c): the data
 * of an EFI variable, which firmware keeps and anything may have written.
 * Whatever it accepts, the writer formats to the same bytes, and the reader
 * gives the same note back (one contract, both sides).
 */
#include "boot_fault.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_boot_fault fault, again;
	char text[512];
	int len;

	if (bci_boot_fault_parse((const char *)data, size, &fault) < 0)
		return 0;
	if (!fault.run[0] || fault.boots < 1 || fault.cap < 1 || strchr(fault.reason, '\n'))
		abort();
	len = bci_boot_fault_format(&fault, text, sizeof(text));
	if (len < 0 || (size_t)len != size || memcmp(text, data, size))
		abort();
	if (bci_boot_fault_parse(text, (size_t)len, &again) < 0 || memcmp(&fault, &again, sizeof(fault)))
		abort();
	return 0;
}
