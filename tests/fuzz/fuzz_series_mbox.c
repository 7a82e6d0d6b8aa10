// SPDX-License-Identifier: MIT
/*
 * Fuzz target for a series' mbox split into its patches
 * (aggregator/master/patchwork/series_mbox.c): a text split is whole, each
 * patch a stretch of it after the one before, the last ending at its end.
 */
#include "../../aggregator/master/patchwork/series_bisect.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_series_patch *patches = NULL;
	char err[256];
	size_t count = 0;

	if (bci_series_mbox_split((const char *)data, size, &patches, &count, err,
				  sizeof(err)) == 0) {
		if (!count || patches[0].start != 0 || patches[count - 1].end != size)
			abort();
		for (size_t i = 0; i < count; i++)
			if (patches[i].start >= patches[i].end ||
			    (i && patches[i].start != patches[i - 1].end) ||
			    !patches[i].subject || !patches[i].author || !patches[i].message_id)
				abort();
	}
	bci_series_patches_free(patches, count);
	return 0;
}
