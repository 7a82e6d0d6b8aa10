// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the scheduler's paths (aggregator/master/schedule/route.c): a path
 * it accepts is one serve hands it, its names are words (never '/', "." or
 * ".."), and the MAC of a boot path holds no '/'.
 */
#include "../../aggregator/master/schedule/serve_hook.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_schedule_route route;
	char *url = malloc(size + 1);

	if (!url)
		return 0;
	memcpy(url, data, size);
	url[size] = '\0';
	if (bci_schedule_route_parse(url, &route) == 0) {
		if (!bci_schedule_http_owns(url))
			abort();
		switch (route.kind) {
		case BCI_SCHEDULE_ROUTE_BOOT:
			if (!route.first[0] || strchr(route.first, '/'))
				abort();
			break;
		case BCI_SCHEDULE_ROUTE_BUILD_FILE:
		case BCI_SCHEDULE_ROUTE_KNOWN_GOOD_FILE:
		case BCI_SCHEDULE_ROUTE_JOB_INITRD:
		case BCI_SCHEDULE_ROUTE_DEPLOY_INITRD:
			if (!bci_manifest_word_ok(route.second))
				abort();
			/* fallthrough */
		case BCI_SCHEDULE_ROUTE_BUILD:
		case BCI_SCHEDULE_ROUTE_KNOWN_GOOD:
			if (!bci_manifest_word_ok(route.first))
				abort();
			break;
		case BCI_SCHEDULE_ROUTE_STATES:
			break;
		}
	}
	free(url);
	return 0;
}
