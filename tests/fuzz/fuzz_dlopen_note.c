// SPDX-License-Identifier: MIT
/*
 * Fuzz target for lib/dlopen_note.c: the input as an ELF dlopen note's
 * descriptor. What it reads has at least one name per library, none empty
 * or with a '/', and a known priority; on a refusal nothing is appended.
 */
#include "dlopen_note.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_dlopen_library *libs = NULL;
	size_t count = 0;
	char err[256];
	int ret = bci_dlopen_note_parse((const char *)data, size, &libs, &count, err, sizeof(err));

	if (ret < 0 && count)
		abort();
	for (size_t i = 0; i < count; i++) {
		if (!libs[i].count || libs[i].priority > BCI_DLOPEN_SUGGESTED)
			abort();
		for (size_t j = 0; j < libs[i].count; j++)
			if (!libs[i].sonames[j][0] || strchr(libs[i].sonames[j], '/'))
				abort();
	}
	bci_dlopen_libraries_free(libs, count);
	return 0;
}
