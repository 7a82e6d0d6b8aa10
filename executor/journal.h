/* SPDX-License-Identifier: MIT */
/*
 * bootci's run journal: runs/<run_id>/bootci-journal.txt, beside igt_runner's
 * files. One line per event, each fdatasync'ed before the event it announces
 * begins, so that after any crash the next boot knows exactly where the run
 * stood. Lines (fields separated by one space):
 *
 *   boot <n> <unix time> <kernel release>    a boot of the test machine began
 *   start <job>                              job <job> (0-based, joblist order) is about to run
 *   dynamic <job> <subtest>@<dynamic>        a dynamic subtest of that job started
 *   exit <job> <status> <seconds>            the job ended by itself
 *   timeout <job> <status> <seconds>         the job was killed for time
 *   incomplete <job> <boot>                  the job was in flight when boot <boot> died
 *   capped <job> <starts>                    the job took the machine down <starts> times: skipped
 *   abort <reason>                           the run stops early (igt_runner's aborted.txt says why)
 *   done                                     results are complete
 */
#ifndef BCI_JOURNAL_H
#define BCI_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

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
/* Appends one line and fdatasyncs it; also updates the in-memory state. 0, or -errno said on
 * the console: the line is not durable, and what it announces must not start. */
int bci_journal_append(struct bci_journal *journal, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Replays text (for tests and fuzzing): same rules as bci_journal_open. */
int bci_journal_replay(struct bci_journal *journal, const char *origin, const char *text,
		       size_t len, char *err, size_t err_size);

#endif
