// SPDX-License-Identifier: MIT
/*
 * Fuzz target for serve's archive checks (validate.h): any bytes as an
 * uploaded archive of machine m1's run r1. An accepted archive's manifest
 * must name that run and hold only safe paths.
 */
#include "../../aggregator/master/serve/validate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_archive_limits limits;
	struct bci_manifest *m;
	char err[512];

	bci_archive_limits_default(&limits);
	/* Small limits keep each input fast; the checks are the same. */
	limits.max_entries = 64;
	limits.max_unpacked = 1 << 20;
	limits.max_manifest = 64 << 10;
	if (bci_archive_validate_memory(data, size, &limits, "m1", "r1", &m, err, sizeof(err)) < 0)
		return 0;
	if (strcmp(m->machine, "m1") || strcmp(m->run_id, "r1"))
		abort();
	for (size_t i = 0; i < m->file_count; i++)
		if (!bci_manifest_path_ok(m->files[i].path, err, sizeof(err)))
			abort();
	bci_manifest_free(m);
	return 0;
}
