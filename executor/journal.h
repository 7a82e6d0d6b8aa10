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
	bool incomplete;        /* an "incomplete" line after its last start */
	bool capped;
	char **dynamic;         /* "subtest@dynamic" started, in order (NULL-terminated) */
	size_t dynamic_count;
};

/* How many skipped lines a replay describes (it counts them all). */
#define BCI_JOURNAL_DAMAGE_KEPT 8

struct bci_journal {
	int fd;
	/* The boots so far: each "boot" line's number, or one more than before when it says less. */
	unsigned boots;
	bool done, aborted;
	int in_flight;          /* job started and not finished, or -1 */
	struct bci_job_state *jobs;
	size_t job_count;
	/* What the replay met besides whole lines: */
	unsigned skipped;       /* malformed lines skipped */
	char damage[BCI_JOURNAL_DAMAGE_KEPT][320]; /* "origin:N: malformed line '...'" */
	size_t torn_offset, torn_len; /* a last line without its newline (torn_len 0: none) */
	/*
	 * Called once when a line meets a full partition, to make room (the
	 * executor gives back its reserve); the line's written part is cut and
	 * the line written again. NULL: a full partition fails the line.
	 */
	void (*full)(void *ctx);
	void *full_ctx;
	bool unsynced;          /* a line written without its fdatasync yet (bci_journal_write) */
	/*
	 * Other files of the partition written since the last whole barrier that
	 * must be durable before something else (a job's outputs, bci_journal_owe):
	 * the next synced line, bci_journal_sync() and bci_journal_close() pay with syncfs().
	 */
	bool owes_fs;
	/*
	 * A job's journal.txt end, written only once a whole barrier has made
	 * the job's outputs durable (bci_journal_owe_end): journal.txt's fd
	 * (owned), its job and the line. end_fd -1: none owed.
	 */
	int end_fd;
	unsigned long end_job;
	char end_line[64];
	size_t end_len;
	/* The barrier (the executor's system-call table's); NULL: fdatasync and syncfs themselves. */
	int (*barrier)(int fd, bool whole_fs);
	/* The last `exit` or `timeout` line replayed or written: its job (-1: none) and rest. */
	long last_end;
	bool last_end_timeout;
	char last_end_rest[BCI_RUN_JOURNAL_LINE_MAX];
};

/*
 * Opens (creating) @path and replays it for @job_count jobs. The journal
 * never blocks its run: a torn last line (the machine died writing it) is
 * cut off the file (truncated to its last newline, fsynced) before anything
 * is appended; a malformed line (garbage, NUL bytes, a word or a job that
 * cannot be there) is skipped and what the valid lines say is kept; a job
 * they leave started and not finished besides the one in flight gets an
 * `incomplete` line. Each repair is said on the console and appended to
 * BCI_RESULTS_JOURNAL_REPAIRS beside the journal. 0, or -errno said on the
 * console (the file cannot be read, opened, cut or made durable; no memory).
 */
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
/*
 * Appends as bci_journal_appendf() without the fdatasync: for a line that
 * announces nothing yet (a job's end), or whose announced thing waits for
 * bci_journal_sync() (one barrier for the line and the files the job's start
 * creates). The next append, bci_journal_sync() or bci_journal_close() makes
 * it durable. 0, or -errno said on the console.
 */
int bci_journal_writef(struct bci_journal *journal, enum bci_run_journal_kind kind,
		       unsigned long job, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/*
 * Makes the lines written so far durable: with @whole_fs, syncfs() of the
 * journal's file system (every file written on it too, in one cache flush),
 * else fdatasync of the journal alone (nothing when no line waits). 0, or
 * -errno said on the console: what the lines announce must not start.
 */
int bci_journal_sync(struct bci_journal *journal, bool whole_fs);
/*
 * Other files of the journal's partition were written that must be durable
 * before something else (a job's outputs, before its journal.txt end): the
 * next whole barrier covers them; a synced line (abort, `done`) or the close
 * pays with one syncfs() first.
 */
void bci_journal_owe(struct bci_journal *journal);
/*
 * Job @job's journal.txt end (@line, @len bytes), to be appended to @fd (the
 * journal takes it) once a whole barrier has made the job's outputs durable:
 * an `exit:` on disk always has its outputs. Owes that barrier
 * (bci_journal_owe). The job's start pays it after its test has exec'ed
 * (bci_journal_pay_end); a synced line and the close pay it first.
 */
void bci_journal_owe_end(struct bci_journal *journal, unsigned long job, int fd, const char *line,
			 size_t len);
/*
 * The owed journal.txt end, if any: the whole barrier first if still owed,
 * then the line appended and fdatasync'ed, the fd closed. 0, or -errno said
 * on the console (the end is dropped: bootci's end, when durable, gives it
 * back at the next boot, igt/run.c).
 */
int bci_journal_pay_end(struct bci_journal *journal);
/* One barrier on @fd (fdatasync, or syncfs with @whole_fs) through the journal's table. */
int bci_journal_barrier(const struct bci_journal *journal, int fd, bool whole_fs);
/*
 * Replays @len bytes of journal @text into @journal (initialised for its
 * jobs, as bci_journal_open does; fd -1 for tests and fuzzing), naming lines
 * "@origin:N": malformed lines are skipped, counted and described in
 * journal->damage, a torn last line is left out and located by torn_offset
 * and torn_len. Prints nothing. 0, or -ENOMEM.
 */
int bci_journal_init(struct bci_journal *journal, size_t job_count);
int bci_journal_replay(struct bci_journal *journal, const char *origin, const char *text,
		       size_t len);

#endif
