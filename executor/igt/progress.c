// SPDX-License-Identifier: MIT
/* The console's progress lines, for people watching a run (results.json is the authority). */
#include "igt.h"

#include "fsutil.h"
#include "progress_marker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void format_duration(long seconds, char *buf, size_t size)
{
	if (seconds >= 3600)
		snprintf(buf, size, "%ldh%02ldm", seconds / 3600, seconds / 60 % 60);
	else if (seconds >= 60)
		snprintf(buf, size, "%ldm%02lds", seconds / 60, seconds % 60);
	else
		snprintf(buf, size, "%lds", seconds);
}

/* The run's start (starttime.txt), or now when it cannot be read. */
static time_t run_started_at(struct bci_executor *ex)
{
	char path[PATH_MAX], *text = NULL;
	time_t t = (time_t)(bci_clock_ms(ex, CLOCK_REALTIME) / 1000);

	if (bci_igt_rundir_path(ex, path, BCI_RESULTS_STARTTIME) == 0 && bci_read_file(path, &text, NULL, 64) == 0) {
		long long v = strtoll(text, NULL, 10);
		if (v > 0 && v <= (long long)t)
			t = (time_t)v;
	}
	free(text);
	return t;
}

/* An estimate needs no seconds once it is minutes away: `41m`, `2h05m`. */
static void format_eta(long seconds, char *buf, size_t size)
{
	if (seconds >= 3600)
		snprintf(buf, size, "%ldh%02ldm", seconds / 3600, seconds / 60 % 60);
	else if (seconds >= 60)
		snprintf(buf, size, "%ldm", (seconds + 30) / 60);
	else
		snprintf(buf, size, "%lds", seconds);
}

/* What the results generator says of one job's folder: its tests and their results. */
struct job_verdict {
	size_t tests;
	char first_name[BCI_IGT_NAME_SIZE];
	char first_result[32];
	unsigned long counts[BCI_IGT_RESULT_COUNT];
	unsigned long other;	/* a result name outside igt_runner's totals keys */
};

static int verdict_add(enum bci_results_event event, const struct bci_results_run *run,
		       const struct bci_results_test *test, void *ctx)
{
	struct job_verdict *v = ctx;
	int k;

	(void)run;
	if (event != BCI_RESULTS_TEST)
		return 0;
	if (v->tests++ == 0) {
		snprintf(v->first_name, sizeof(v->first_name), "%s", test->name);
		snprintf(v->first_result, sizeof(v->first_result), "%s", test->result);
	}
	k = bci_igt_result_index(test->result);
	if (k >= 0)
		v->counts[k]++;
	else
		v->other++;
	return 0;
}

/* The generator's warnings about the job, on the console like every other line. */
static void say_warnings(char *text, size_t len)
{
	char *line = text, *end = text + len, *nl;

	for (; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			nl = end;
		*nl = '\0';
		if (*line)
			bci_warn("results: %s", strncmp(line, "warning: ", 9) == 0 ? line + 9 : line);
	}
}

/*
 * Job @index judged by the results generator, as results.json will judge it:
 * the console never keeps a second opinion. -errno (said on the console) when
 * the folder cannot be judged.
 */
static int judge_job(struct bci_igt_progress *p, unsigned index, struct job_verdict *v)
{
	char err[512], *warnings = NULL;
	size_t warnings_len = 0;
	FILE *w;
	int ret;

	memset(v, 0, sizeof(*v));
	if (!p->reader)
		return -ENOENT;
	w = open_memstream(&warnings, &warnings_len);
	ret = bci_results_job_walk(p->reader, index, w, verdict_add, v, err, sizeof(err));
	if (w) {
		fclose(w);
		say_warnings(warnings, warnings_len);
	}
	free(warnings);
	if (ret < 0)
		bci_warn("job %u: cannot judge its results: %s", index + 1, err);
	return ret;
}

/* `pass`, or for a job of many tests `60 pass, 9 skip` in igt_runner's totals order. */
static void format_verdict(const struct job_verdict *v, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	if (v->tests == 1) {
		snprintf(buf, size, "%s", v->first_result);
		return;
	}
	if (v->tests == 0) {
		snprintf(buf, size, "no result");
		return;
	}
	for (int k = 0; k < BCI_IGT_RESULT_COUNT && n < size; k++)
		if (v->counts[k])
			n += (size_t)snprintf(buf + n, size - n, "%s%lu %s", n ? ", " : "", v->counts[k],
					      bci_igt_result_names[k]);
	if (v->other && n < size)
		snprintf(buf + n, size - n, "%s%lu other", n ? ", " : "", v->other);
}

/*
 * The kernel log's marker as job @job starts, `[bootci] [12/340] igt@kms_flip@basic`
 * (lib/progress_marker.h): the same `[N/M]` and name as its console line, so that one grep
 * finds the job in the serial console, in dmesg and in a pstore dump, and the master finds
 * the job a boot died in. A resumed job says what is left of it.
 */
void bci_igt_progress_mark(const struct bci_igt_job *job, const struct bci_igt_selection *what)
{
	char name[BCI_PROGRESS_NAME_SIZE], text[1024];
	bool resumed = what && (what->left || what->dynamic_filter);

	bci_progress_job_name(job->entry, name, sizeof(name));
	/* Cut to fit (-ENOSPC) is still the marker: its number and name come first. */
	if (bci_progress_format_start(text, sizeof(text), job->index + 1, job->journal->job_count,
				      name, resumed ? job->argv_subtests : NULL,
				      resumed ? what->dynamic_filter : NULL) == -EINVAL)
		return;
	bci_kmsg_mark(job->ex, 6, "%s", text);
}

/*
 * The console line of a finished job, for people:
 * `[12/340] igt@kms_flip@basic pass 1.2s (elapsed 3m02s, ETA 41m)`. The result is
 * the results generator's judgement of the job's folder (results.json's word),
 * the number is the job's joblist line counted from 1, as in the kernel log's
 * `[bootci] [12/340] ...` marker. Elapsed counts from the run's first boot; the
 * ETA is this boot's pace over the jobs the whole run has left.
 */
static void report(struct bci_igt_progress *p, unsigned index,
		   const struct bci_joblist_entry *entry, double seconds)
{
	struct bci_executor *ex = p->ex;
	char name[BCI_PROGRESS_NAME_SIZE], elapsed[32], eta[32], result[256], line[1024];
	long spent = (bci_clock_ms(ex, CLOCK_BOOTTIME) - p->boot_start) / 1000;
	long since_start = (long)(bci_clock_ms(ex, CLOCK_REALTIME) / 1000 - p->run_started_at);
	struct job_verdict v;

	if (judge_job(p, index, &v) < 0)
		snprintf(result, sizeof(result), "unjudged");
	else
		format_verdict(&v, result, sizeof(result));
	if (v.tests == 1)
		snprintf(name, sizeof(name), "%s", v.first_name);
	else
		bci_progress_job_name(entry, name, sizeof(name));
	format_duration(since_start > spent ? since_start : spent, elapsed, sizeof(elapsed));
	if (p->done_now > 0 && p->total > p->done_total)
		format_eta(spent * (long)(p->total - p->done_total) / (long)p->done_now, eta,
			   sizeof(eta));
	else
		snprintf(eta, sizeof(eta), "0s");
	if (bci_progress_format_end(line, sizeof(line), index + 1, p->total, name, result, seconds,
				    elapsed, eta) != -EINVAL)
		bci_say("%s", line);
}

void bci_igt_progress_ended(struct bci_igt_progress *p, const struct bci_igt_job *job)
{
	bci_igt_progress_flush(p);
	p->done_now++;
	p->done_total = 0;
	for (size_t k = 0; k < p->journal->job_count; k++)
		p->done_total += p->journal->jobs[k].finished;
	p->pending = true;
	p->pending_index = job->index;
	p->pending_entry = job->entry;
	p->pending_seconds = job->seconds;
}

void bci_igt_progress_flush(struct bci_igt_progress *p)
{
	if (!p || !p->pending)
		return;
	p->pending = false;
	/* Judged from its folder: its journal.txt end first, once its outputs are durable. */
	if (p->journal->end_fd >= 0 && p->journal->end_job == p->pending_index)
		bci_journal_pay_end(p->journal);
	report(p, p->pending_index, p->pending_entry, p->pending_seconds);
}

void bci_igt_progress_start(struct bci_igt_progress *p, struct bci_executor *ex,
			    struct bci_journal *journal, size_t total)
{
	char err[512];
	int ret;

	*p = (struct bci_igt_progress){
		.ex = ex,
		.journal = journal,
		.total = total,
		.boot_start = bci_clock_ms(ex, CLOCK_BOOTTIME),
		.run_started_at = run_started_at(ex),
	};
	/* The run's settings and joblist, read once per boot (they do not change during a run). */
	ret = bci_results_job_reader_new(ex->run_dir, NULL, &p->reader, err, sizeof(err));
	if (ret < 0)
		bci_warn("the console cannot judge jobs: %s", err);
}

void bci_igt_progress_stop(struct bci_igt_progress *p)
{
	bci_igt_progress_flush(p);
	bci_results_job_reader_free(p->reader);
	p->reader = NULL;
}
