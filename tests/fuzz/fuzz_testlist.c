// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the run-state parsers: the same input is read as a testlist,
 * as igt_runner's joblist.txt (which must then format and parse back to the
 * same jobs) and as bootci's run journal. Then its first three lines are read
 * as suspend_before, suspend_between and suspend_after and the rest as a
 * planned joblist the cycles are inserted into.
 */
#include "igt_protocol.h"
#include "journal.h"
#include "testlist.h"

#include <errno.h>
#include <stdbool.h>
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

static bool is_suspend(const struct bci_joblist_entry *e)
{
	return strcmp(e->binary, BCI_IGT_SUSPEND_BINARY) == 0;
}

/* A cycle job as bci_joblist_add_cycles() renumbers it. */
static bool is_cycle(const struct bci_joblist_entry *e)
{
	const char *dash;

	if (!is_suspend(e) || e->count != 1)
		return false;
	dash = strrchr(e->subtests[0], '-');
	return dash && dash > e->subtests[0] && dash - e->subtests[0] < 256;
}

/*
 * Lines 1-3: the cycle values; the rest: a plan. The tests keep their order,
 * a failure leaves the plan alone, and cycle names stay unique.
 */
static void add_cycles(const char *text, size_t size)
{
	struct bci_joblist plan = { 0 }, jobs = { 0 };
	char values[3][512] = { "", "", "" }, err[512] = "";
	const char *p = text, *end = text + size;
	size_t i = 0, j = 0;
	int ret;

	for (int k = 0; k < 3 && p < end; k++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n >= sizeof(values[k]) || memchr(p, '\0', n))
			return;
		memcpy(values[k], p, n);
		p += n + (nl ? 1 : 0);
	}
	if (bci_joblist_parse("plan", p, (size_t)(end - p), &plan, err, sizeof(err)) != 0 ||
	    bci_joblist_parse("plan", p, (size_t)(end - p), &jobs, err, sizeof(err)) != 0)
		goto out;
	err[0] = '\0';
	ret = bci_joblist_add_cycles(&jobs, values[0], values[1], values[2], err, sizeof(err));
	if (ret < 0 && (jobs.count != plan.count || (ret != -ENOMEM && !err[0])))
		abort();
	for (;; i++, j++) {
		while (i < jobs.count && is_suspend(&jobs.entries[i]))
			i++;
		while (j < plan.count && is_suspend(&plan.entries[j]))
			j++;
		if (i == jobs.count || j == plan.count)
			break;
		if (strcmp(jobs.entries[i].binary, plan.entries[j].binary) != 0 ||
		    jobs.entries[i].count != plan.entries[j].count)
			abort();
	}
	if (i != jobs.count || j != plan.count)
		abort();
	/* Once renumbered (something added), no two cycles share a name. */
	for (i = 0; ret == 0 && jobs.count > plan.count && jobs.count <= 500 && i < jobs.count; i++)
		for (j = i + 1; j < jobs.count; j++)
			if (is_cycle(&jobs.entries[i]) && is_cycle(&jobs.entries[j]) &&
			    strcmp(jobs.entries[i].subtests[0], jobs.entries[j].subtests[0]) == 0)
				abort();
out:
	bci_joblist_clear(&jobs);
	bci_joblist_clear(&plan);
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
		bci_journal_replay(&journal, "fuzz", text, size);
		if (journal.in_flight >= (int)journal.job_count)
			abort();
		bci_journal_close(&journal);
	}
	bci_joblist_clear(&jobs);

	add_cycles(text, size);
	return 0;
}
