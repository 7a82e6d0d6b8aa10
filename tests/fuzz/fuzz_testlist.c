// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the run-state parsers: the same input is read as a testlist,
 * as igt_runner's joblist.txt (which must then format and parse back to the
 * same jobs) and as bootci's run journal.
 */
#include "journal.h"
#include "testlist.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_test(const struct bci_test_name *name, void *data)
{
	if (!bci_igt_name_valid(name->binary, 0))
		abort();
	(*(size_t *)data)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct bci_joblist jobs = { 0 }, again = { 0 };
	struct bci_journal journal;
	char err[512], *formatted;
	size_t tests = 0, len;

	bci_testlist_parse("fuzz", text, size, count_test, &tests, err, sizeof(err));

	if (bci_joblist_parse("fuzz", text, size, &jobs, err, sizeof(err)) == 0) {
		if (bci_joblist_format(&jobs, &formatted, &len) == 0) {
			if (bci_joblist_parse("again", formatted, len, &again, err, sizeof(err)) != 0 ||
			    again.count != jobs.count)
				abort();
			for (size_t i = 0; i < jobs.count; i++)
				if (strcmp(jobs.entries[i].binary, again.entries[i].binary) != 0 ||
				    jobs.entries[i].count != again.entries[i].count)
					abort();
			free(formatted);
		}
		bci_joblist_clear(&again);
	}

	/* The journal state for as many jobs as the joblist had (at least a few). */
	memset(&journal, 0, sizeof(journal));
	journal.fd = -1;
	journal.in_flight = -1;
	journal.job_count = jobs.count + 4;
	journal.jobs = calloc(journal.job_count, sizeof(*journal.jobs));
	if (journal.jobs) {
		bci_journal_replay(&journal, "fuzz", text, size, err, sizeof(err));
		if (journal.in_flight >= (int)journal.job_count)
			abort();
		bci_journal_close(&journal);
	}
	bci_joblist_clear(&jobs);
	return 0;
}
