// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the deploy plan's reader (lib/deploy_plan.c): whatever it
 * accepts, the writer formats, and the reader must accept that again into
 * the same plan (one contract, both sides).
 */
#include "deploy_plan.h"
#include "sha256.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_deploy_plan plan, again;
	char err[512], *text;

	if (bci_deploy_plan_parse("fuzz", (const char *)data, size, &plan, err, sizeof(err)) < 0) {
		if (!err[0])
			abort();
		return 0;
	}
	if (!bci_sha256_hex_ok(plan.image_sha256) || plan.image_size == 0 ||
	    plan.image[0] != '/' || plan.esp_partition < 1 || plan.esp_partition > 128 ||
	    (plan.disk[0] && strncmp(plan.disk, "/dev/", 5)) || strstr(plan.image, "/../"))
		abort();
	if (bci_deploy_plan_format(&plan, &text, err, sizeof(err)) < 0)
		abort();
	if (bci_deploy_plan_parse("formatted", text, strlen(text), &again, err, sizeof(err)) < 0 ||
	    memcmp(&plan, &again, sizeof(plan)) != 0)
		abort();
	free(text);
	return 0;
}
