// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the builder manifest reader publish uses: every entry it
 * gives has a plain file name, 64 lowercase hex digits and a size; a refusal
 * always says why.
 */
#include "../../aggregator/master/publish/publish.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int entry_check(const struct bci_publish_entry *entry, void *ctx)
{
	(void)ctx;
	if (!bci_manifest_word_ok(entry->path) || strlen(entry->sha256) != 64)
		abort();
	for (int i = 0; i < 64; i++)
		if (!isxdigit((unsigned char)entry->sha256[i]) || isupper((unsigned char)entry->sha256[i]))
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";

	if (bci_publish_manifest_parse("fuzz", (const char *)data, size, entry_check, NULL, err,
				       sizeof(err)) < 0 && !err[0])
		abort();
	return 0;
}
