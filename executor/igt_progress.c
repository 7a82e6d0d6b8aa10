// SPDX-License-Identifier: MIT
/* The console's progress lines, for people watching a run (results.json is the authority). */
#include "igt.h"

#include "fsutil.h"

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

/*
 * The console line of a finished job, for people:
 * `[12/340] igt@kms_flip@basic pass 1.2s (elapsed 3m02s, ETA 41m)`. Elapsed counts from the
 * run's first boot; the ETA is this boot's pace over the jobs the whole run has left.
 */
void bci_igt_progress_report(struct bci_igt_progress *p, const struct bci_igt_job *job,
			     const struct bci_journal *journal)
{
	const struct bci_joblist_entry *e = job->entry;
	struct bci_executor *ex = job->ex;
	char name[512], elapsed[32], eta[32], result[64];
	long spent = (bci_clock_ms(ex, CLOCK_BOOTTIME) - p->boot_start) / 1000;
	long since_start = (long)(bci_clock_ms(ex, CLOCK_REALTIME) / 1000 - p->run_started_at);
	int status = job->status;

	p->done_now++;
	p->done_total = 0;
	for (size_t k = 0; k < journal->job_count; k++)
		p->done_total += journal->jobs[k].finished;

	if (e->count == 1 && !strchr(e->subtests[0], '@'))
		bci_igt_piglit_name(e->binary, e->subtests[0], name, sizeof(name));
	else if (e->count == 1)
		snprintf(name, sizeof(name), "igt@%s@%s", e->binary, e->subtests[0]);
	else if (e->count > 1)
		snprintf(name, sizeof(name), "igt@%s (%zu subtests)", e->binary, e->count);
	else
		snprintf(name, sizeof(name), "igt@%s", e->binary);
	/* A live summary; results.json (the results generator) is the authority. */
	if (job->timed_out)
		snprintf(result, sizeof(result), "timeout");
	else if (job->results > 1)
		snprintf(result, sizeof(result), "%u pass, %u fail, %u skip, %u crash", job->passes,
			 job->fails, job->skips, job->crashes);
	else if (job->results == 1)
		snprintf(result, sizeof(result), "%s", job->last_result);
	else if (status == 0)
		snprintf(result, sizeof(result), "pass");
	else if (status == BCI_IGT_EXIT_SKIP)
		snprintf(result, sizeof(result), "skip");
	else if (status < 0)
		snprintf(result, sizeof(result), "crash (signal %d)", -status);
	else
		snprintf(result, sizeof(result), "fail (exit %d)", status);
	format_duration(since_start > spent ? since_start : spent, elapsed, sizeof(elapsed));
	if (p->done_now > 0 && p->total > p->done_total)
		format_eta(spent * (long)(p->total - p->done_total) / (long)p->done_now, eta,
			   sizeof(eta));
	else
		snprintf(eta, sizeof(eta), "0s");
	bci_say("[%u/%zu] %s %s %.1fs (elapsed %s, ETA %s)", job->index + 1, p->total, name, result,
		job->seconds, elapsed, eta);
}

void bci_igt_progress_start(struct bci_igt_progress *p, struct bci_executor *ex, size_t total)
{
	*p = (struct bci_igt_progress){
		.total = total,
		.boot_start = bci_clock_ms(ex, CLOCK_BOOTTIME),
		.run_started_at = run_started_at(ex),
	};
}
