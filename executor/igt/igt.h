/* SPDX-License-Identifier: MIT */
/*
 * The IGT engine, executor/igt/: its modules' declarations, shared among the
 * files of this folder only; executor.h holds the engine's one entry point,
 * bci_igt_run(). One role per file:
 *
 *   run.c       the run: set-up, the loop over the jobs, collection
 *   plan.c      testlist -> joblist (include/exclude, --list-subtests, cycles)
 *   rundir.c    the igt_runner results directory: created once, loaded on resume
 *   job.c       one job, the test's life: its command line, its start, the
 *               I/O loop, collection, its resources parked (the test binary
 *               started with lib/spawn, reaped by signals.c)
 *   outputs.c   the job's output files: its pipes read into them, opened
 *               (after a resume too), made durable, journal.txt's lines, a
 *               failed write (full partition)
 *   subtests.c  the test's protocol lines: journals, timers, results, taints
 *   kill.c      the test stopped: timeouts, SIGQUIT then SIGKILL, leftovers
 *   stream.c    a test's stdout/stderr into out.txt/err.txt: lines, limit, tail
 *   comms.c     igt_runner's socket protocol: the job's socket and its comms file
 *   resume.c    after a boot that died: crash attribution, what is left to run
 *   abort.c     the abort conditions (taints, lockdep, requests): aborted.txt
 *   progress.c  the console's progress lines
 *   trace.c     the gap trace (BOOTCI_GAP_TRACE=1): each step between two jobs timed
 *
 * Like the rest of the executor, these functions say a failure on the console
 * where it happens and return -errno.
 */
#ifndef BCI_EXECUTOR_IGT_H
#define BCI_EXECUTOR_IGT_H

#include "executor.h"

#include "igt_protocol.h"
#include "journal.h"
#include "results_dir.h"
#include "resultgen/resultgen.h"
#include "spawn.h"
#include "testlist.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* ---- rundir.c ---- */

/* Formats a path under the run folder into @buf (PATH_MAX); -ENAMETOOLONG when it does not fit. */
int bci_igt_rundir_path(const struct bci_executor *ex, char *buf, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Replaces run_dir/@name with @text (atomically). 0 or -errno. */
int bci_igt_rundir_write(const struct bci_executor *ex, const char *name, const char *text);
/* run_dir/@name: the time now, as igt_runner's starttime.txt and endtime.txt. */
int bci_igt_rundir_write_time(const struct bci_executor *ex, const char *name);
/*
 * Plans the run and creates its files (joblist.txt last: its presence says the
 * run exists). 0, or 1 when the testlist cannot be read: the run is created
 * aborted at bootup (aborted.txt says why, the joblist is empty), so it ends
 * and reaches the master with that error instead of never ending; -errno.
 */
int bci_igt_rundir_create(struct bci_executor *ex, struct bci_joblist *jobs);
/*
 * Loads joblist.txt into @jobs; *@exists false (and 0) when there is none yet.
 * First removes the temporaries (NAME.tmp.XXXXXX) that an earlier boot's cut
 * left in the run folder and its job folders.
 */
int bci_igt_rundir_load(struct bci_executor *ex, struct bci_joblist *jobs, bool *exists);

/* ---- plan.c ---- */

/*
 * The testlist, include/exclude and the configured suspend cycles as
 * igt_runner's joblist. -errno on error; when the testlist file cannot be
 * read, @unreadable (if not NULL, @unreadable_size bytes) says so.
 */
int bci_igt_plan_build(struct bci_executor *ex, struct bci_joblist *jobs, char *unreadable,
		       size_t unreadable_size);

/* ---- stream.c ---- */

#define BCI_IGT_LINE_MAX 4096

struct bci_igt_stream {
	int pipe_fd;              /* the child's end, read; -1 once closed */
	int file_fd;              /* out.txt or err.txt, borrowed */
	char line[BCI_IGT_LINE_MAX];
	size_t line_len;
	bool line_overflow;
	unsigned long long written, limit, dropped;
	int write_error;          /* -errno of the first failed write: nothing more is written */
	unsigned long long lost;  /* bytes not written since */
	/* The tail kept after the limit: a ring of the last bytes. */
	char *tail;
	size_t tail_size, tail_used, tail_pos;
	/* Each complete line (without its newline), once it is in the file; NULL for none. */
	void (*on_line)(void *data, const char *line, size_t len);
	void *data;
};

/* Up to @limit bytes in the file, then a tail of @tail_size bytes. 0 or -ENOMEM. */
int bci_igt_stream_init(struct bci_igt_stream *s, int file_fd, unsigned long long limit,
			size_t tail_size);
void bci_igt_stream_feed(struct bci_igt_stream *s, const char *data, size_t len);
/* Writes what is left: a last line without newline, the note on dropped bytes, the tail. */
void bci_igt_stream_finish(struct bci_igt_stream *s);
void bci_igt_stream_release(struct bci_igt_stream *s);

/* ---- comms.c ---- */

struct bci_igt_comms {
	int sock_fd;              /* the executor's end; -1 when none */
	int child_fd;             /* the test's end, open until the test is started */
	int file_fd;              /* the job folder's comms */
	off_t synced;             /* its size at its last fdatasync, -1 before */
	bool used;                /* a packet besides exec came: the test speaks the socket */
	unsigned long long log_bytes, log_dropped;
	char env[48];             /* IGT_RUNNER_SOCKET_FD=N for the test's environment */
	char *buf;                /* one datagram */
	/* Each (dynamic) subtest packet as the text protocol line it stands for (without its
	 * newline), once the packet is in the file; NULL for none. The job's, as a stream's. */
	void (*on_line)(void *data, const char *line, size_t len);
	void *data;
};

/* ---- job.c ---- */

/* What of a job runs: its subtests (all of them, or what a resume left), a dynamic filter. */
struct bci_igt_selection {
	char *const *subtests;
	size_t count;
	char **left;              /* owned: the subtests a resume left, or NULL */
	char *dynamic_filter;     /* owned: --dynamic-subtest of a resume, or NULL */
	/* A job not run again: the end its journal.txt has (-1 when none), for bootci's journal */
	int end_status;
	bool end_timed_out;
	double end_seconds;
};

struct bci_igt_job {
	struct bci_executor *ex;
	struct bci_journal *journal;
	struct bci_igt_progress *progress; /* the previous job's console line, said once this runs */
	unsigned index;
	const struct bci_joblist_entry *entry;
	int fds[BCI_RESULTS_FILE_COUNT];	/* by enum bci_results_job_file */
	off_t synced[BCI_RESULTS_FILE_COUNT]; /* each file's size at its last fdatasync, -1 before */
	struct bci_kmsg_budget dmesg_budget;
	struct bci_igt_stream out, err;
	struct bci_igt_comms comms;
	int kmsg_fd;
	/* the command line, built before the fork */
	char argv_path[PATH_MAX], argv_subtests[8192], argv_dynamic[256];
	const char *argv[8];
	pid_t pid;
	long start, last_activity, last_subtest;
	struct bci_spawn_kill kill; /* the escalation once the test must stop */
	int killed;               /* 0, SIGQUIT or SIGKILL: kill.sent */
	bool reaped, timed_out, unkillable;
	int wait_status;
	char subtest[256];
	char last_result[32];
	char abort_reason[256];   /* set when the job was stopped for an abort condition */
	int journal_error;        /* -errno of a bootci journal line that did not become durable */
	int end_error;            /* -errno of the previous job's journal.txt end (paid at this start) */
	/* Each file's size when the test's end was taken (BCI_RUN_JOURNAL_END_*, -1: no file). */
	long long end_bytes[BCI_RUN_JOURNAL_END_FILES];
	struct bci_spawn_proc leftovers[8]; /* what the test left behind, killed at its end */
	size_t leftover_count;    /* all of them, the first 8 named */
	int leftovers_alive;      /* still alive after SIGKILL */
	int write_error;          /* -errno of the first result file write that failed */
	unsigned results, passes, fails, skips, crashes;
	int status;               /* the igt exit status (>= 0, or -signal) */
	double seconds;
};

/*
 * Runs job @index (@what of it) and fills @job. 0 when the job ran (status and
 * seconds set), 1 when it had to be left running (unkillable: the run must
 * stop), -errno otherwise.
 */
int bci_igt_job_run(struct bci_igt_job *job, struct bci_executor *ex, struct bci_journal *journal,
		    struct bci_igt_progress *progress, unsigned index,
		    const struct bci_joblist_entry *entry, const struct bci_igt_selection *what);
/*
 * Releases what the last finished job still holds (its files, sockets and
 * buffers stay until the next test has exec'ed, out of the gap between the
 * two): the engine calls it then, and when the run ends.
 */
void bci_igt_job_release_parked(void);

/* comms.c, in the job's order: */
/* Opens the job's comms (after a crash's damaged tail), makes the socket pair. 0 or -errno.
 * The job sets job->comms.on_line before the test starts. */
int bci_igt_comms_open(struct bci_igt_job *job, const char *dir);
/* Appends the runner's exec packet (the command line): durable with the job's start (job.c). */
void bci_igt_comms_exec(struct bci_igt_job *job);
/*
 * A note of the runner's own (`runner: This test was killed ...`), where
 * igt_runner writes it when the test speaks the socket: a stdout log packet in
 * comms, durable. false when the test does not (the note goes to out.txt).
 */
bool bci_igt_comms_note(struct bci_igt_job *job, const char *text);
/* Closes the test's end in the executor once the test has it. */
void bci_igt_comms_started(struct bci_igt_job *job);
/* Takes every datagram waiting: into comms, and its protocol line to comms.on_line. */
void bci_igt_comms_read(struct bci_igt_job *job, long now);
/* After the loop (status and seconds set): what is left, the override and exit packets, made
 * durable with the job's outputs (job.c), before journal.txt's exit line. */
void bci_igt_comms_finish(struct bci_igt_job *job, long now);
void bci_igt_comms_close(struct bci_igt_comms *c);
/*
 * After a boot that died in job @index: when its test spoke the socket, the
 * text protocol lines its comms packets stand for (malloc'ed) and 1, for
 * finding the subtest in flight; 0 when it did not (out.txt has them).
 */
int bci_igt_comms_protocol_text(struct bci_executor *ex, unsigned index, char **text, size_t *len);
/*
 * When job @index's test spoke the socket: what was appended to its out.txt
 * (@out_path) from offset @from on (the crash's note, result line and dump),
 * appended to its comms as packets, durably (it is what results are read from).
 */
void bci_igt_comms_mirror(struct bci_executor *ex, unsigned index, const char *out_path, off_t from);

/* ---- outputs.c ---- */

/*
 * Creates job folder @dir, or reopens its files for append after a resume
 * (what a crash tore off their ends cut), into job->fds. 0 or -errno.
 */
int bci_igt_outputs_open(struct bci_igt_job *job, const char *dir);
/*
 * One read of the test's stdout (@file BCI_RESULTS_FILE_OUT) or stderr
 * (BCI_RESULTS_FILE_ERR) pipe into its file, without waiting; the pipe is
 * closed at its end. true when something was read.
 */
bool bci_igt_outputs_read(struct bci_igt_job *job, int file, long now);
/*
 * What the test's stderr pipe holds now, read into err.txt without waiting:
 * at a protocol line, before its barrier (bci_igt_outputs_sync), so that what
 * the test wrote to stderr before that line is durable with it.
 */
void bci_igt_outputs_drain_stderr(struct bci_igt_job *job);
/* The kernel log's new records into dmesg.txt (none once a result file failed). */
void bci_igt_outputs_drain_kmsg(struct bci_igt_job *job);
/* The test's stderr and the kernel log drained, then the outputs and comms that grew made
 * durable in one barrier. */
void bci_igt_outputs_sync(struct bci_igt_job *job);
/* After a barrier of the whole partition: every file of the job durable as it stands. */
void bci_igt_outputs_note_synced(struct bci_igt_job *job);
/* Each file's size as the test's end is taken: job->end_bytes. */
void bci_igt_outputs_end_sizes(struct bci_igt_job *job);
/* A line of journal.txt, fdatasync'ed when @sync (else durable with the next barrier). */
void bci_igt_outputs_write_journal(struct bci_igt_job *job, const char *text, size_t len,
				   bool sync);
/*
 * Result file @file (enum bci_results_job_file) could not be written, with
 * -errno @error; the first of the job's failures only: said on the console and
 * in out.txt, the reserve given back, bootci-incomplete.txt written, nothing
 * more of the output written, the test stopped (kill.c) and the run to abort
 * after it (job->abort_reason).
 */
void bci_igt_outputs_failed(struct bci_igt_job *job, int file, int error);
/* As bci_igt_outputs_failed(), for @name at @rel in the run folder, cut at @size. */
void bci_igt_outputs_failed_at(struct bci_igt_job *job, const char *name, const char *rel,
			       unsigned long long size, int error);

/* ---- subtests.c ---- */

/* A complete protocol line of the test's (without its newline): the job's stream and comms
 * on_line, with the job as @data. */
void bci_igt_subtests_handle_line(void *data, const char *text, size_t len);

/* ---- kill.c ---- */

/* The timeout a test not being stopped has passed at @now (its reason, igt_runner's words),
 * or NULL. */
const char *bci_igt_kill_timeout(struct bci_igt_job *job, long now);
/* Starts stopping the test for @reason (once): SIGQUIT, the kernel's task and memory dumps. */
void bci_igt_kill_start(struct bci_igt_job *job, const char *reason, long now);
/* One turn of a stop under way: SIGKILL after kill_grace. 1 when even that did not end the
 * test (job->unkillable), else 0. */
int bci_igt_kill_step(struct bci_igt_job *job, long now);
/* Once the test is reaped: what it left running killed, into job->leftovers. */
void bci_igt_kill_leftovers(struct bci_igt_job *job);
/* Names them in out.txt and on the console (nothing when there were none). */
void bci_igt_kill_note_leftovers(struct bci_igt_job *job);

/* ---- resume.c ---- */

/*
 * An abort decided by an earlier boot: aborted.txt is written before the
 * journal's `abort` line, and a boot that died between the two left the
 * reason without the journal knowing. The journal gets its line (the run
 * ends as it would have, no job after the abort runs). 0, or -errno when the
 * journal failed.
 */
int bci_igt_resume_abort(struct bci_executor *ex, struct bci_journal *journal);

/*
 * The job in flight when the previous boot died: the kernel crash attributed
 * to its subtest, the job journalled incomplete, and capped when it took the
 * machine down boot_cap times. 0, or -errno when the journal failed.
 */
int bci_igt_resume_in_flight(struct bci_executor *ex, struct bci_journal *journal,
			     const struct bci_joblist *jobs);
/* What of job @index is left to run after earlier boots: 0, or 1 when nothing is (the
 * job ends here), or -errno. */
int bci_igt_resume_select(struct bci_executor *ex, const struct bci_journal *journal,
			  unsigned index, const struct bci_joblist_entry *entry,
			  struct bci_igt_selection *what);
void bci_igt_selection_release(struct bci_igt_selection *what);

/* ---- abort.c ---- */

/* igt_runner's abort-on-taint bits set now; *@all gets every bit. */
unsigned long bci_igt_abort_bad_taints(struct bci_executor *ex, unsigned long *all);
/*
 * Checks the abort conditions after job @after (NULL: before the first), or
 * stops for @forced. When the run stops: aborted.txt written, "abort"
 * journalled, 1; 0 when it goes on; -errno when the journal failed.
 */
int bci_igt_abort_check(struct bci_executor *ex, struct bci_journal *journal,
			const struct bci_joblist_entry *after, const char *forced);
/* The two halves of bci_igt_abort_check(): whether the run must stop (@forced, or a
 * condition), with why in @reason; then the stop itself. */
bool bci_igt_abort_reason(struct bci_executor *ex, const char *forced, char *reason, size_t size);
int bci_igt_abort(struct bci_executor *ex, struct bci_journal *journal,
		  const struct bci_joblist_entry *after, const char *reason, bool forced);

/* ---- progress.c ---- */

/* Where the run stands, for the console's progress lines; it spans the boots of a resumed run. */
struct bci_igt_progress {
	struct bci_executor *ex;
	struct bci_journal *journal; /* pays a job's journal.txt end before judging it */
	size_t total;          /* jobs in the run */
	unsigned done_total;   /* jobs finished, this boot and earlier ones */
	unsigned done_now;     /* jobs finished in this boot */
	long boot_start;       /* this boot's jobs began (ms of CLOCK_BOOTTIME) */
	time_t run_started_at; /* starttime.txt: the run's first boot */
	struct bci_results_job_reader *reader; /* owned: the results generator, one job at a time */
	/* The job that ended last, said once the next one runs (bci_igt_progress_flush). */
	bool pending;
	unsigned pending_index;
	const struct bci_joblist_entry *pending_entry;
	double pending_seconds;
};

/* Where the run stands (@journal counts the finished jobs); bci_igt_progress_stop() says the
 * line still owed and releases what it holds. */
void bci_igt_progress_start(struct bci_igt_progress *p, struct bci_executor *ex,
			    struct bci_journal *journal, size_t total);
void bci_igt_progress_stop(struct bci_igt_progress *p);
/* Writes job @job's start marker into the kernel log: `[bootci] [12/340] igt@kms_flip@basic`;
 * @what: its selection (NULL: all of it). */
void bci_igt_progress_mark(const struct bci_igt_job *job, const struct bci_igt_selection *what);
/*
 * Counts job @job finished. Its console line, `[12/340] igt@kms_flip@basic pass 1.2s
 * (elapsed ..., ETA ...)` with the result results.json will give the job (the results
 * generator's judgement of its folder), is owed until bci_igt_progress_flush(): the engine
 * says it once the next test has exec'ed (its judgement is no part of the gap between two
 * tests), or before anything else it says or does (an abort, a suspend cycle, the run's end).
 */
void bci_igt_progress_ended(struct bci_igt_progress *p, const struct bci_igt_job *job);
/* Says the line owed, if any (NULL: nothing). */
void bci_igt_progress_flush(struct bci_igt_progress *p);

/* ---- trace.c ---- */

/* On when PID 1's environment has BOOTCI_GAP_TRACE=1; else every call below does nothing. */
void bci_igt_trace_start(void);
/* Job @job was reaped: a gap begins. */
void bci_igt_trace_reaped(unsigned job);
/* Step @step (a string literal) of the gap under way ended now. */
void bci_igt_trace(const char *step);
/* Job @next was forked: the gap ends. */
void bci_igt_trace_forked(unsigned next);
/* The console's summary and run_dir/bootci-gap-trace.txt. */
void bci_igt_trace_stop(const struct bci_executor *ex);

#endif
