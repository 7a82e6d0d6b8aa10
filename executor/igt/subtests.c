// SPDX-License-Identifier: MIT
/*
 * The subtests as the test says them, in its protocol lines (printed on
 * stdout, or sent on igt_runner's socket and turned into the same lines by
 * comms.c): each start in igt_runner's journal.txt (durable as soon as its
 * name is known) and each dynamic one in bootci's journal, the per-test
 * timer restarted, each result counted, and the kernel's taints checked
 * before the next subtest starts, as igt_runner does. At each start and
 * result the job's outputs are made durable (outputs.c).
 */
#include "igt.h"

#include "config.h"
#include "fsutil.h"
#include "igt_output_strings.h"

#include <stdio.h>
#include <string.h>

static void count_result(struct bci_igt_job *job, const struct bci_igt_line *line)
{
	double t;
	const char *result = bci_igt_result_from_word(line->text, line->text_len, &t);

	snprintf(job->last_result, sizeof(job->last_result), "%s", result);
	job->results++;
	if (strcmp(result, "pass") == 0)
		job->passes++;
	else if (strcmp(result, "fail") == 0)
		job->fails++;
	else if (strcmp(result, "skip") == 0)
		job->skips++;
	else
		job->crashes++;
}

/*
 * Between subtests too, as igt_runner does: a subtest that tainted the kernel
 * stops the job before the next one starts on a broken kernel. The taints when
 * it does, else 0.
 */
static unsigned long taint_before_start(struct bci_igt_job *job)
{
	unsigned long taints = 0, bad;

	if (job->results == 0 || job->killed || job->abort_reason[0] ||
	    !strstr(bci_config_get(job->ex->config, "abort_on"), "taint"))
		return 0;
	bad = bci_igt_abort_bad_taints(job->ex, &taints);
	if (!bad)
		return 0;
	snprintf(job->abort_reason, sizeof(job->abort_reason),
		 "Kernel badly tainted (%#lx, %#lx) (check dmesg for details)", taints, bad);
	return taints;
}

/* A complete line of the test's stdout (or a packet's, comms.c): the protocol lines drive the
 * journals and timers. */
void bci_igt_subtests_handle_line(void *data, const char *text, size_t len)
{
	struct bci_igt_job *job = data;
	long now = bci_clock_ms(job->ex, CLOCK_BOOTTIME);
	unsigned long taints = 0;
	struct bci_igt_line line;
	char entry[300];
	int ret, n;

	switch (bci_igt_line_parse(text, len, &line)) {
	case BCI_IGT_LINE_SUBTEST_START:
		taints = taint_before_start(job);
		n = line.name_len < sizeof(job->subtest) ? (int)line.name_len
							 : (int)sizeof(job->subtest) - 1;
		snprintf(job->subtest, sizeof(job->subtest), "%.*s", n, line.name);
		/* igt_runner's journal: the subtest's name, durable as soon as it is known. */
		n = snprintf(entry, sizeof(entry), "%s\n", job->subtest);
		bci_igt_outputs_write_journal(job, entry, (size_t)n, true);
		job->last_subtest = now;
		bci_igt_outputs_sync(job);
		break;
	case BCI_IGT_LINE_DYNAMIC_START:
		taints = taint_before_start(job);
		/* igt_runner cannot resume inside a subtest; bootci's journal remembers dynamic ones. */
		ret = bci_journal_appendf(job->journal, BCI_RUN_JOURNAL_DYNAMIC, job->index, "%s@%.*s",
					  job->subtest[0] ? job->subtest : "-", (int)line.name_len,
					  line.name);
		if (ret < 0 && !job->journal_error) {
			/* The run cannot go on blind: stop the test, then the run (run.c). */
			job->journal_error = ret;
			bci_igt_kill_start(job, "bootci journal not durable", now);
		}
		job->last_subtest = now;
		bci_igt_outputs_sync(job);
		break;
	case BCI_IGT_LINE_SUBTEST_RESULT:
		/* A subtest skipped in its binary's igt_fixture prints its result with no
		 * start line. igt_runner journals it anyway ("result for a test that didn't
		 * ever start"); without it the subtest has no result in multiple mode. */
		if (line.name_len != strlen(job->subtest) ||
		    memcmp(line.name, job->subtest, line.name_len) != 0) {
			n = line.name_len < sizeof(job->subtest) ? (int)line.name_len
								 : (int)sizeof(job->subtest) - 1;
			n = snprintf(entry, sizeof(entry), "%.*s\n", n, line.name);
			bci_igt_outputs_write_journal(job, entry, (size_t)n, true);
			job->subtest[0] = '\0';
		}
		count_result(job, &line);
		bci_igt_outputs_sync(job);
		break;
	case BCI_IGT_LINE_DYNAMIC_RESULT:
		bci_igt_outputs_sync(job);
		break;
	default:
		break;
	}
	if (taints) {
		/* The subtest that starts on a tainted kernel is journalled, then stopped, and its
		 * output says why, as igt_runner writes it: in comms when the test speaks the
		 * socket (the results come from there), else in out.txt. */
		char note[128];
		n = snprintf(note, sizeof(note), BCI_IGT_RUNNER_KILLED_TAINT, taints);
		if (!bci_igt_comms_note(job, note + 1))
			bci_write_all(job->fds[BCI_RESULTS_FILE_OUT], note, (size_t)n);
		bci_igt_kill_start(job, "Kernel tainted", now);
		job->timed_out = false;
	}
}
