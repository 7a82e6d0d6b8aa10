// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the journal replay every boot of a run does: the input as
 * bootci-journal.txt through executor/journal.c's replay (what the executor
 * calls at bci_journal_open) for a few job counts, and as a job's journal.txt
 * through lib/results_dir.c's line reader, whole lines and a torn last one.
 * The replay must never fail on bad bytes (only on memory), keep its state
 * within the run's jobs, locate a torn last line exactly, and describe the
 * lines it skipped as one printable line each.
 */
#include "journal.h"
#include "results_dir.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void replay(const char *text, size_t size, size_t job_count)
{
	struct bci_journal journal;

	if (bci_journal_init(&journal, job_count) < 0)
		return;
	if (bci_journal_replay(&journal, "bootci-journal.txt", text, size) < 0)
		goto out;
	if (journal.in_flight >= (int)job_count || journal.in_flight < -1)
		abort();
	if (journal.torn_len) {
		/* The torn line is what follows the last newline, up to the end. */
		if (journal.torn_offset + journal.torn_len != size ||
		    memchr(text + journal.torn_offset, '\n', journal.torn_len) ||
		    (journal.torn_offset && text[journal.torn_offset - 1] != '\n'))
			abort();
	} else if (size && text[size - 1] != '\n') {
		abort();
	}
	for (unsigned i = 0; i < journal.skipped && i < BCI_JOURNAL_DAMAGE_KEPT; i++)
		for (const char *p = journal.damage[i]; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
				abort();
out:
	bci_journal_close(&journal);
}

static void job_journal(const char *text, size_t size)
{
	const char *p = text, *end = text + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		char *line = strndup(p, n);
		struct bci_job_journal_line parsed;

		if (!line)
			return;
		if (bci_job_journal_parse_line(line, nl != NULL, &parsed) == 0 &&
		    parsed.kind == BCI_JOB_JOURNAL_SUBTEST && strcmp(parsed.subtest, line) != 0)
			abort();
		free(line);
		p = nl ? nl + 1 : end;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;

	replay(text, size, 0);
	replay(text, size, 3);
	replay(text, size, 1000);
	job_journal(text, size);
	return 0;
}
