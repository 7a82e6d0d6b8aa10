/* SPDX-License-Identifier: MIT */
/*
 * bootci's run journal: runs/<run_id>/bootci-journal.txt, beside igt_runner's
 * files. One line per event, each fdatasync'ed before the event it announces
 * begins, so that after any crash the next boot knows exactly where the run
 * stood. The lines are lib/results_dir.h's (struct bci_run_journal_line):
 * this module keeps the run's state from them and appends them durably.
 */
#ifndef BCI_JOURNAL_H
#define BCI_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "results_dir.h"

struct bci_job_state {
	unsigned starts;        /* "start" lines */
	bool finished;          /* exit, timeout or capped */
	bool capped;
	char **dynamic;         /* "subtest@dynamic" started, in order (NULL-terminated) */
	size_t dynamic_count;
};

struct bci_journal {
	int fd;
	unsigned boots;
	bool done, aborted;
	int in_flight;          /* job started and not finished, or -1 */
	struct bci_job_state *jobs;
	size_t job_count;
};

/* Opens (creating) @path and replays it for @job_count jobs; a malformed line is an error
 * naming it. 0, or -errno said on the console. */
int bci_journal_open(struct bci_journal *journal, const char *path, size_t job_count);
void bci_journal_close(struct bci_journal *journal);
/*
 * Appends the line @kind (of job @job when the kind names one; @rest: what
 * follows, NULL for nothing) and fdatasyncs it; also updates the in-memory
 * state. 0, or -errno said on the console: the line is not durable, and what
 * it announces must not start.
 */
int bci_journal_append(struct bci_journal *journal, enum bci_run_journal_kind kind,
		       unsigned long job, const char *rest);
/* The same, @rest formatted. */
int bci_journal_appendf(struct bci_journal *journal, enum bci_run_journal_kind kind,
			unsigned long job, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Replays text (for tests and fuzzing): same rules as bci_journal_open. */
int bci_journal_replay(struct bci_journal *journal, const char *origin, const char *text,
		       size_t len, char *err, size_t err_size);

#endif
