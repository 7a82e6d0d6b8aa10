// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the known-issue filter file (aggregator/master/report/filters.c),
 * which the lab's people edit by hand: any input is parsed; a refusal names
 * its line, and what is accepted is matched against a few subjects (with
 * logs) so the compiled regexes run too.
 */
#include "../../aggregator/master/report/report.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *log_of(const char *which, void *ctx)
{
	(void)ctx;
	return !strcmp(which, "dmesg") ? "<3> GPU HANG\nwarn\n" : "Subtest a: FAIL\n";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *tags[] = { "tgl", "shard-1", NULL };
	struct bci_filter_subject s = { .test = "igt@kms_flip@basic", .machine = "lab-1",
					.tags = tags, .log = log_of };
	struct bci_filters *filters;
	char err[512];
	int ret = bci_filters_parse("fuzz", (const char *)data, size, &filters, err, sizeof(err));

	if (ret < 0) {
		if (strncmp(err, "fuzz:", 5))
			abort();
		return 0;
	}
	if (ret != bci_filters_count(filters))
		abort();
	for (int status = 0; status < BCI_STATUS_COUNT; status++) {
		s.status = status;
		bci_filters_match(filters, &s);
	}
	bci_filters_free(filters);
	return 0;
}
