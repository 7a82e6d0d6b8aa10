// SPDX-License-Identifier: MIT
/*
 * The IGT engine: a testlist becomes igt_runner's joblist.txt (written once,
 * before the first job), every job runs under the monitor, and the run folder
 * is an igt_runner results directory with bootci-journal.txt beside it. After
 * any crash or reset, the next boot reads that journal and carries on exactly
 * where the machine died. This file is the run: its set-up, the loop over the
 * jobs and the collection at the end; igt.h lists the modules it drives.
 *
 * A journal line that cannot be made durable stops the run (DESIGN's
 * durability rules: nothing starts that the journal has not announced):
 * bci_journal_append() says why on the console, the run ends without its
 * `done` line, and the executor ends the boot as for any error, handing over
 * to the known-good image.
 */
#include "igt.h"

#include "config.h"
#include "fsutil.h"
#include "suspend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct igt_run {
	struct bci_executor *ex;
	struct bci_joblist jobs;
	struct bci_journal journal;
	bool journal_open;
	bool exists;               /* an earlier boot created the run */
	long start;                /* this boot's engine began (ms of CLOCK_BOOTTIME) */
	unsigned long overall;     /* overall_timeout, seconds; 0 for none */
	struct bci_igt_progress progress;
};

/* The run journal met a full partition: the reserve is given back, and the run stops after it. */
static void journal_full(void *ctx)
{
	bci_reserve_release(ctx, "Results partition full: bootci-journal.txt could not be written");
}

/* The run's files (created or loaded), its journal replayed, this boot journalled. */
static int run_setup(struct igt_run *run)
{
	struct bci_executor *ex = run->ex;
	char path[PATH_MAX];
	int ret, aborted = 0;

	run->start = bci_clock_ms(ex, CLOCK_BOOTTIME);
	run->overall = bci_config_get_seconds(ex->config, "overall_timeout");
	ret = bci_igt_rundir_load(ex, &run->jobs, &run->exists);
	if (ret == 0 && !run->exists)
		ret = aborted = bci_igt_rundir_create(ex, &run->jobs);
	if (ret < 0)
		return ret;
	ret = bci_igt_rundir_path(ex, path, BCI_RESULTS_BOOTCI_JOURNAL);
	if (ret < 0) {
		bci_error("run folder %s: path too long", ex->run_dir);
		return ret;
	}
	ret = bci_journal_open(&run->journal, path, run->jobs.count);
	if (ret < 0)
		return ret;
	run->journal_open = true;
	run->journal.barrier = ex->sys->barrier;
	run->journal.full = journal_full;
	run->journal.full_ctx = ex;
	ret = bci_journal_appendf(&run->journal, BCI_RUN_JOURNAL_BOOT, 0, "%u %ld %s",
				  run->journal.boots + 1, bci_clock_ms(ex, CLOCK_REALTIME) / 1000,
				  ex->release);
	/* Created aborted (aborted.txt written): the journal says so, the run ends. */
	if (ret == 0 && aborted == 1)
		ret = bci_journal_append(&run->journal, BCI_RUN_JOURNAL_ABORT, 0, "testlist");
	return ret;
}

/* Why the run has to stop before job @j starts, or NULL. */
static const char *stop_reason(const struct igt_run *run)
{
	if (run->ex->stop_requested)
		return "Stop requested by a signal";
	/* Full before the run, or filled by a job: what still fits is the record of that. */
	if (run->ex->results_full[0])
		return run->ex->results_full;
	if (run->overall &&
	    bci_clock_ms(run->ex, CLOCK_BOOTTIME) - run->start > (long)run->overall * 1000)
		return "Overall timeout exceeded";
	return NULL;
}

/*
 * Job @j: what is left of it, its start journalled, the job, its end
 * journalled and reported, the abort conditions checked. 0 to go on, 1 when
 * the run stops (aborted.txt written), -errno when it cannot go on.
 */
static int run_one(struct igt_run *run, unsigned j)
{
	const struct bci_joblist_entry *e = &run->jobs.entries[j];
	struct bci_journal *journal = &run->journal;
	struct bci_igt_selection what;
	struct bci_igt_job job;
	const char *stop, *forced;
	char reason[512], rest[256];
	int ret;

	ret = bci_igt_resume_select(run->ex, journal, j, e, &what);
	bci_igt_trace("resume_select");
	if (ret == 1) {
		/* Nothing of it is left to run: its end as its journal.txt has it, or none. */
		bci_igt_selection_release(&what);
		return bci_journal_appendf(journal, what.end_timed_out ? BCI_RUN_JOURNAL_TIMEOUT :
					   BCI_RUN_JOURNAL_EXIT, j, "%d %.3f", what.end_status,
					   what.end_seconds);
	}
	stop = stop_reason(run);
	if (ret == 0 && stop) {
		bci_igt_progress_flush(&run->progress);
		ret = bci_igt_abort_check(run->ex, journal, j ? &run->jobs.entries[j - 1] : NULL, stop);
	} else if (ret == 0) {
		/* Durable with the job's folder in one barrier, before the test starts (job.c). */
		ret = bci_journal_writef(journal, BCI_RUN_JOURNAL_START, j, "%s", "");
	}
	if (ret != 0 || stop) {
		bci_igt_selection_release(&what);
		return ret;
	}
	bci_igt_trace("journal_start");
	/* The previous job's console line is said once this one's test runs (job.c). */
	ret = bci_igt_job_run(&job, run->ex, journal, &run->progress, j, e, &what);
	bci_igt_selection_release(&what);
	bci_igt_progress_flush(&run->progress);
	if (ret < 0) {
		bci_error("job %u could not run: %s", j + 1, strerror(-ret));
		return ret;
	}
	if (ret == 1)
		return bci_igt_abort_check(run->ex, journal, e, "Child refuses to die");
	/* The previous job's journal.txt end was not durable: the run stops before this end. */
	if (job.end_error)
		return job.end_error;
	/*
	 * Announces nothing: durable with the job's outputs in the next whole
	 * barrier (the next job's start, an abort, `done`), before which the
	 * job's journal.txt exit is not even written. Lost in a crash before that,
	 * the job was in flight. Kept where journal.txt's was lost, journal.txt
	 * gets it, once the sizes it says show the outputs whole (repair_last_end).
	 */
	struct bci_run_journal_end end = { .status = job.status, .seconds = job.seconds };
	memcpy(end.bytes, job.end_bytes, sizeof(end.bytes));
	bci_run_journal_end_format(rest, sizeof(rest), &end);
	ret = bci_journal_writef(journal,
				 job.timed_out ? BCI_RUN_JOURNAL_TIMEOUT : BCI_RUN_JOURNAL_EXIT, j,
				 "%s", rest);
	if (ret < 0)
		return ret;
	bci_igt_trace("journal_exit");
	/* The job's own dynamic line could not be journalled: stopped, and the run with it. */
	if (job.journal_error)
		return job.journal_error;
	/* Its console line is owed: said once the next test runs, or before an abort. */
	bci_igt_progress_ended(&run->progress, &job);
	forced = job.abort_reason[0] ? job.abort_reason
		 : job.status == BCI_IGT_EXIT_ABORT ? "Test exited with IGT_EXIT_ABORT" : NULL;
	ret = 0;
	if (bci_igt_abort_reason(run->ex, forced, reason, sizeof(reason))) {
		bci_igt_progress_flush(&run->progress);
		ret = bci_igt_abort(run->ex, journal, e, reason, forced != NULL);
	}
	bci_igt_trace("abort_check");
	return ret;
}

/* Does journal.txt @text (cut into lines in place) have the job's end? */
static bool job_text_ended(char *text)
{
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		struct bci_job_journal_line end;
		bool ended;

		if (nl)
			*nl = '\0';
		ended = bci_job_journal_parse_line(line, nl != NULL, &end) == 0 &&
			(end.kind == BCI_JOB_JOURNAL_EXIT || end.kind == BCI_JOB_JOURNAL_TIMEOUT);
		if (nl)
			*nl = '\n';
		if (ended)
			return true;
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/*
 * Whether job @j's files hold at least the sizes bootci's end of it says
 * (none said: nothing to check). Shorter, the barrier that was to make them
 * durable with that end did not complete: said on the console.
 */
static bool outputs_whole(struct igt_run *run, long j, const struct bci_run_journal_end *end)
{
	char path[PATH_MAX], rel[64];
	struct stat st;

	for (int i = 0; i < BCI_RUN_JOURNAL_END_FILES; i++) {
		long long have;

		if (end->bytes[i] < 0)
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", BCI_RESULTS_JOB_DIR, bci_run_journal_end_file(i));
		have = bci_igt_rundir_path(run->ex, path, rel, (unsigned)j) == 0 &&
				       stat(path, &st) == 0 ? (long long)st.st_size : -1;
		if (have >= end->bytes[i])
			continue;
		bci_warn("job %ld: its %s has %lld of the %lld bytes bootci's journal says it had at "
			 "its end: the machine died before they were durable; its journal.txt gets no "
			 "end (incomplete)", j + 1, bci_run_journal_end_file(i), have < 0 ? 0 : have,
			 end->bytes[i]);
		return false;
	}
	return true;
}

/*
 * bootci's end of a job is written before the barrier that makes its outputs
 * durable (the next job's start, job.c), and journal.txt's exit after it:
 * a cut may keep bootci's end and lose journal.txt's, which results.json
 * reads. Only the last job that ended can be so: its journal.txt gets the end
 * bootci's journal has, when its files are as long as that end says (else the
 * cut came before they were durable, and the job stays incomplete). Not for a
 * job bootci's journal says was in flight at a crash (`incomplete` since its
 * last start): its journal.txt has no end on purpose. 0, or -errno when the
 * end cannot be made durable.
 */
static int repair_last_end(struct igt_run *run)
{
	struct bci_journal *journal = &run->journal;
	long j = journal->last_end;
	char path[PATH_MAX], line[64], *text = NULL;
	struct bci_run_journal_end end;
	int fd = -1, n, ret;

	if (j < 0 || journal->jobs[j].incomplete || !journal->jobs[j].starts ||
	    bci_run_journal_end_parse(journal->last_end_rest, &end) < 0 ||
	    bci_igt_rundir_path(run->ex, path, BCI_RESULTS_JOB_DIR "/" BCI_RESULTS_JOB_JOURNAL,
				(unsigned)j) < 0)
		return 0;
	fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* A torn line (or the NUL bytes a cut leaves) would run into the end appended. */
	ret = bci_cut_torn_line(fd) < 0 ? -EIO : bci_read_file(path, &text, NULL, 1 << 20);
	if (ret < 0 || job_text_ended(text) || !outputs_whole(run, j, &end))
		goto out;
	bci_say("job %ld: bootci's journal has its end, its journal.txt lost it in the cut: "
		"written again", j + 1);
	n = bci_job_journal_format_exit(line, sizeof(line), journal->last_end_timeout, end.status,
					end.seconds);
	ret = bci_write_all(fd, line, (size_t)n);
	if (ret == 0)
		ret = bci_journal_barrier(journal, fd, false);
	if (ret < 0)
		bci_error("job %ld: cannot write its end in journal.txt: %s", j + 1, strerror(-ret));
out:
	free(text);
	close(fd);
	return ret < 0 && ret != -EIO ? ret : 0;
}

/* The jobs not finished yet, in joblist order, until the end or an abort. */
static int run_loop(struct igt_run *run)
{
	struct bci_executor *ex = run->ex;
	int ret;

	if (run->exists)
		bci_say("run %s: resuming (boot %u)", bci_config_get(ex->config, "run_id"),
			run->journal.boots);
	bci_igt_progress_start(&run->progress, ex, &run->journal, run->jobs.count);
	bci_igt_trace_start();
	bci_watchdog_open(ex);
	/* As igt_runner: a kernel already tainted before the first test makes no trustworthy run. */
	if (!run->exists) {
		ret = bci_igt_abort_check(ex, &run->journal, NULL, NULL);
		if (ret != 0)
			return ret;
	}
	/* The job in flight when the machine died: igt_runner's results say incomplete. */
	ret = repair_last_end(run);
	if (ret == 0)
		ret = bci_igt_resume_in_flight(ex, &run->journal, &run->jobs);
	for (unsigned j = 0; j < run->jobs.count && ret == 0; j++)
		if (!run->journal.jobs[j].finished)
			ret = run_one(run, j);
	/* The last job's line, before the run's end is said. */
	bci_igt_progress_flush(&run->progress);
	return ret;
}

/* The files of a finished (or aborted) run: the suspend summary, endtime.txt, `done`. */
static int run_collect(struct igt_run *run)
{
	struct bci_executor *ex = run->ex;
	int ret = 0;

	if (bci_suspend_summary_write(ex->run_dir) < 0)
		bci_warn("cannot write %s", BCI_RESULTS_SUSPEND_SUMMARY);
	ret = bci_igt_rundir_write_time(ex, BCI_RESULTS_ENDTIME);
	if (ret < 0)
		bci_error("cannot write %s: %s", BCI_RESULTS_ENDTIME, strerror(-ret));
	ret = 0;
	if (!run->journal.done)
		ret = bci_journal_append(&run->journal, BCI_RUN_JOURNAL_DONE, 0, NULL);
	if (ret == 0)
		bci_say("run %s complete", bci_config_get(ex->config, "run_id"));
	return ret;
}

int bci_igt_run(struct bci_executor *ex)
{
	struct igt_run run = { .ex = ex };
	int ret = run_setup(&run);

	if (ret == 0)
		ret = bci_igt_resume_abort(ex, &run.journal);
	if (ret == 0 && run.exists && (run.journal.done || run.journal.aborted))
		bci_say("run %s is already complete", bci_config_get(ex->config, "run_id"));
	else if (ret == 0 && !run.journal.aborted)
		ret = run_loop(&run);
	/* 1: aborted, aborted.txt says why; the run's files are completed as for its end. */
	if (ret >= 0)
		ret = run_collect(&run);
	else if (run.journal_open)
		bci_error("run %s stopped: the boot ends here", bci_config_get(ex->config, "run_id"));
	bci_igt_trace_stop(ex);
	bci_igt_progress_stop(&run.progress);
	bci_igt_job_release_parked();
	if (run.journal_open)
		bci_journal_close(&run.journal);
	bci_joblist_clear(&run.jobs);
	return ret;
}
