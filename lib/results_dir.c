// SPDX-License-Identifier: MIT
/* The results directory's names and line formats: see results_dir.h. */
#include "results_dir.h"
#include "strv.h"

#include "igt_output_strings.h"
#include "igt_protocol.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bci_results_job_files[BCI_RESULTS_FILE_COUNT] = {
	[BCI_RESULTS_FILE_JOURNAL] = BCI_RESULTS_JOB_JOURNAL,
	[BCI_RESULTS_FILE_OUT] = BCI_RESULTS_JOB_OUT,
	[BCI_RESULTS_FILE_ERR] = BCI_RESULTS_JOB_ERR,
	[BCI_RESULTS_FILE_DMESG] = BCI_RESULTS_JOB_DMESG,
};

int bci_results_boot_dir_parse(const char *name, unsigned *number)
{
	unsigned long n = 0;
	const char *p;

	if (strncmp(name, "boot-", 5) != 0 || !name[5])
		return 0;
	for (p = name + 5; *p; p++) {
		if (!isdigit((unsigned char)*p) || n > 99999999)
			return 0;
		n = n * 10 + (unsigned long)(*p - '0');
	}
	*number = (unsigned)n;
	return 1;
}

/* ---- journal.txt ---- */

/* "CODE" or "CODE (SECONDSs)" after BCI_IGT_EXECUTOR_EXIT or _TIMEOUT. */
static int parse_exit(const char *rest, bool strict, int *code, double *time)
{
	const char *paren = strchr(rest, '(');
	char *end;
	long n;

	*time = 0.0;
	if (!strict) {
		*code = atoi(rest);
		if (paren)
			*time = bci_strtod(paren + 1, NULL);
		return 0;
	}
	errno = 0;
	n = strtol(rest, &end, 10);
	if (end == rest || errno || n < -100000 || n > 100000)
		return -EINVAL;
	*code = (int)n;
	if (*end == '\0')
		return 0;
	if (end[0] != ' ' || end[1] != '(')
		return -EINVAL;
	rest = end + 2;
	*time = bci_strtod(rest, &end);
	if (end == rest || strcmp(end, "s)") != 0)
		return -EINVAL;
	return 0;
}

int bci_job_journal_parse_line(const char *line, bool terminated,
			       struct bci_job_journal_line *out)
{
	static const char exit_prefix[] = BCI_IGT_EXECUTOR_EXIT;
	static const char timeout_prefix[] = BCI_IGT_EXECUTOR_TIMEOUT;

	memset(out, 0, sizeof(*out));
	if (!strncmp(line, exit_prefix, sizeof(exit_prefix) - 1)) {
		out->kind = BCI_JOB_JOURNAL_EXIT;
		return parse_exit(line + sizeof(exit_prefix) - 1, terminated, &out->code, &out->time);
	}
	if (!strncmp(line, timeout_prefix, sizeof(timeout_prefix) - 1)) {
		out->kind = BCI_JOB_JOURNAL_TIMEOUT;
		return parse_exit(line + sizeof(timeout_prefix) - 1, terminated, &out->code,
				  &out->time);
	}
	out->kind = line[0] ? BCI_JOB_JOURNAL_SUBTEST : BCI_JOB_JOURNAL_EMPTY;
	out->subtest = line;
	return 0;
}

int bci_job_journal_format_exit(char *buf, size_t size, bool timeout, int code, double seconds)
{
	return snprintf(buf, size, "%s%d (%.3fs)\n",
			timeout ? BCI_IGT_EXECUTOR_TIMEOUT : BCI_IGT_EXECUTOR_EXIT, code, seconds);
}

const char *bci_job_journal_result(int code)
{
	if (code == BCI_RESULTS_EXIT_INCOMPLETE)
		return "incomplete";
	if (code == BCI_RESULTS_EXIT_GRACEFUL)
		return "notrun";
	return bci_igt_result_from_exit(code);
}

/* ---- bootci-journal.txt ---- */

static const char *const run_journal_words[] = {
	[BCI_RUN_JOURNAL_BOOT] = "boot",
	[BCI_RUN_JOURNAL_START] = "start",
	[BCI_RUN_JOURNAL_DYNAMIC] = "dynamic",
	[BCI_RUN_JOURNAL_EXIT] = "exit",
	[BCI_RUN_JOURNAL_TIMEOUT] = "timeout",
	[BCI_RUN_JOURNAL_INCOMPLETE] = "incomplete",
	[BCI_RUN_JOURNAL_CAPPED] = "capped",
	[BCI_RUN_JOURNAL_ABORT] = "abort",
	[BCI_RUN_JOURNAL_DONE] = "done",
};

static bool has_job(enum bci_run_journal_kind kind)
{
	return kind != BCI_RUN_JOURNAL_BOOT && kind != BCI_RUN_JOURNAL_ABORT &&
	       kind != BCI_RUN_JOURNAL_DONE;
}

/* The next space-separated word of @p: its length, *@p moved past leading spaces. */
static size_t next_word(const char **p)
{
	while (**p == ' ')
		(*p)++;
	return strcspn(*p, " ");
}

/* Reads JOB (digits only) at *@p. */
static int parse_journal_job(const char **p, unsigned long *job)
{
	size_t n = next_word(p);
	char *end;

	if (n == 0 || !isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*job = strtoul(*p, &end, 10);
	if (errno || (size_t)(end - *p) != n)
		return -EINVAL;
	*p = end;
	return 0;
}

int bci_run_journal_parse_line(const char *line, struct bci_run_journal_line *out)
{
	const char *p = line;
	size_t n = next_word(&p), i, rest_len;

	memset(out, 0, sizeof(*out));
	if (strlen(line) >= BCI_RUN_JOURNAL_LINE_MAX || n == 0)
		return -EINVAL;
	for (i = 0; i < sizeof(run_journal_words) / sizeof(run_journal_words[0]); i++)
		if (strlen(run_journal_words[i]) == n && !strncmp(p, run_journal_words[i], n))
			break;
	if (i == sizeof(run_journal_words) / sizeof(run_journal_words[0]))
		return -EINVAL;
	out->kind = (enum bci_run_journal_kind)i;
	p += n;
	if (has_job(out->kind) && parse_journal_job(&p, &out->job) < 0)
		return -EINVAL;
	next_word(&p);
	rest_len = strlen(p);
	while (rest_len > 0 && p[rest_len - 1] == ' ')
		rest_len--;
	memcpy(out->rest, p, rest_len);
	out->rest[rest_len] = '\0';
	switch (out->kind) {
	case BCI_RUN_JOURNAL_START:
	case BCI_RUN_JOURNAL_DONE:
	case BCI_RUN_JOURNAL_ABORT:
		return 0;
	case BCI_RUN_JOURNAL_DYNAMIC:
		/* SUBTEST@DYNAMIC is one word with its '@'. */
		return memchr(out->rest, '@', strcspn(out->rest, " ")) ? 0 : -EINVAL;
	case BCI_RUN_JOURNAL_EXIT:
	case BCI_RUN_JOURNAL_TIMEOUT: {
		/* STATUS SECONDS [FILE=BYTES...]: a line whose end cannot be read is not one. */
		struct bci_run_journal_end end;
		return bci_run_journal_end_parse(out->rest, &end);
	}
	default:
		return out->rest[0] ? 0 : -EINVAL;
	}
}

int bci_run_journal_format_line(char *buf, size_t size, const struct bci_run_journal_line *line)
{
	const char *word = run_journal_words[line->kind];
	const char *sep = line->rest[0] ? " " : "";

	if (has_job(line->kind))
		return snprintf(buf, size, "%s %lu%s%s\n", word, line->job, sep, line->rest);
	return snprintf(buf, size, "%s%s%s\n", word, sep, line->rest);
}

const char *bci_run_journal_end_file(int i)
{
	if (i == BCI_RUN_JOURNAL_END_COMMS)
		return BCI_RESULTS_JOB_COMMS;
	return i > BCI_RESULTS_FILE_JOURNAL && i < BCI_RESULTS_FILE_COUNT ? bci_results_job_files[i]
									  : NULL;
}

/* The word an end's file @i is said with: its name without ".txt". */
static size_t end_word(int i, const char **word)
{
	*word = bci_run_journal_end_file(i);
	return *word ? strcspn(*word, ".") : 0;
}

int bci_run_journal_end_format(char *buf, size_t size, const struct bci_run_journal_end *end)
{
	int n = snprintf(buf, size, "%d %.3f", end->status, end->seconds);

	for (int i = 0; i < BCI_RUN_JOURNAL_END_FILES && n >= 0; i++) {
		const char *word;
		size_t len = end_word(i, &word);
		int more;

		if (!len || end->bytes[i] < 0)
			continue;
		more = snprintf(buf + ((size_t)n < size ? (size_t)n : size),
				(size_t)n < size ? size - (size_t)n : 0, " %.*s=%lld", (int)len, word,
				end->bytes[i]);
		n = more < 0 ? more : n + more;
	}
	return n;
}

int bci_run_journal_end_parse(const char *rest, struct bci_run_journal_end *end)
{
	const char *p = rest;
	char *stop;

	memset(end, 0, sizeof(*end));
	for (int i = 0; i < BCI_RUN_JOURNAL_END_FILES; i++)
		end->bytes[i] = -1;
	errno = 0;
	long status = strtol(p, &stop, 10);
	if (stop == p || *stop != ' ' || errno || status < INT_MIN || status > INT_MAX)
		return -EINVAL;
	end->status = (int)status;
	p = stop + 1;
	end->seconds = bci_strtod(p, &stop);
	if (stop == p || (*stop && *stop != ' ') || !(end->seconds > -1e9 && end->seconds < 1e9) ||
	    errno)
		return -EINVAL;
	for (p = stop; *p;) {
		size_t n = next_word(&p), len = 0;
		const char *word, *eq = memchr(p, '=', n);
		int i;

		if (!eq)
			return -EINVAL;
		for (i = 0; i < BCI_RUN_JOURNAL_END_FILES; i++)
			if ((len = end_word(i, &word)) > 0 && len == (size_t)(eq - p) &&
			    !strncmp(p, word, len))
				break;
		if (i == BCI_RUN_JOURNAL_END_FILES || end->bytes[i] >= 0 ||
		    !isdigit((unsigned char)eq[1]))
			return -EINVAL;
		end->bytes[i] = strtoll(eq + 1, &stop, 10);
		if (errno || stop != p + n)
			return -EINVAL;
		p = stop;
	}
	return 0;
}

/* ---- "key value" files ---- */

int bci_results_kv_next(char **cursor, char **key, char **value)
{
	char *line = *cursor;

	while (line && *line) {
		char *nl = strchr(line, '\n'), *space;

		if (nl)
			*nl++ = '\0';
		*cursor = nl;
		space = strchr(line, ' ');
		if (space && space != line) {
			*space = '\0';
			*key = line;
			*value = space + 1;
			return 1;
		}
		line = nl;
	}
	*cursor = NULL;
	return 0;
}

/* ---- test/result.txt ---- */

/* A whole decimal number in @text into *@out; false when it is not one. */
static bool parse_int(const char *text, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || (*end && *end != ' ') || v < -2147483647L || v > 2147483647L)
		return false;
	*out = (int)v;
	return true;
}

int bci_test_program_result_parse(char *text, struct bci_test_program_result *result, char *err,
				  size_t err_size)
{
	char *cursor = text, *key, *value, *end;
	bool has_state = false;

	*result = (struct bci_test_program_result){ .command = NULL, .duration = -1 };
	while (bci_results_kv_next(&cursor, &key, &value)) {
		if (!strcmp(key, "command")) {
			result->command = value;
		} else if (!strcmp(key, "state")) {
			if (!strcmp(value, "running"))
				result->state = BCI_TEST_PROGRAM_RUNNING;
			else if (!strcmp(value, "done"))
				result->state = BCI_TEST_PROGRAM_DONE;
			else if (!strcmp(value, "unkillable"))
				result->state = BCI_TEST_PROGRAM_UNKILLABLE;
			else if (!strcmp(value, "capped"))
				result->state = BCI_TEST_PROGRAM_CAPPED;
			else
				goto bad;
			has_state = true;
		} else if (!strcmp(key, "exit-status")) {
			if (!parse_int(value, &result->exit_status))
				goto bad;
			result->has_exit = true;
		} else if (!strcmp(key, "signal")) {
			if (!parse_int(value, &result->signal) || result->signal <= 0)
				goto bad;
		} else if (!strcmp(key, "timeout")) {
			result->timed_out = !strcmp(value, "yes");
		} else if (!strcmp(key, "incomplete")) {
			result->output_incomplete = true;
		} else if (!strcmp(key, "boot") || !strcmp(key, "starts")) {
			int n;

			if (!parse_int(value, &n) || n <= 0)
				goto bad;
			*(!strcmp(key, "boot") ? &result->boot : &result->starts) = (unsigned)n;
		} else if (!strcmp(key, "duration")) {
			errno = 0;
			result->duration = bci_strtod(value, &end);
			if (errno || end == value || *end || result->duration < 0)
				goto bad;
		}
		/* Other keys: written by a newer executor, not needed to judge the run. */
	}
	if (!result->command || !*result->command || !has_state) {
		snprintf(err, err_size, BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_TEST_RESULT
			 ": no %s line", !result->command || !*result->command ? "command" : "state");
		return -EINVAL;
	}
	return 0;
bad:
	snprintf(err, err_size, BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_TEST_RESULT ": bad line '%s %s'",
		 key, value);
	return -EINVAL;
}

const char *bci_test_program_result_name(const struct bci_test_program_result *result)
{
	if (result->timed_out)
		return "timeout";
	/* Its output is not whole: a fail may be the full partition's doing as well as the kernel's. */
	if (result->state != BCI_TEST_PROGRAM_DONE || result->output_incomplete)
		return "incomplete";
	return result->has_exit && result->exit_status == 0 && !result->signal ? "pass" : "fail";
}

int bci_test_program_result_format(char *buf, size_t size,
				   const struct bci_test_program_result *result)
{
	static const char *const states[] = {
		[BCI_TEST_PROGRAM_RUNNING] = "running",
		[BCI_TEST_PROGRAM_DONE] = "done",
		[BCI_TEST_PROGRAM_UNKILLABLE] = "unkillable",
	};
	char exit_line[32] = "", signal_line[64] = "", duration[40] = "";

	if (result->has_exit)
		snprintf(exit_line, sizeof(exit_line), "exit-status %d\n", result->exit_status);
	if (result->signal > 0)
		snprintf(signal_line, sizeof(signal_line), "signal %d %s\n", result->signal,
			 strsignal(result->signal));
	if (result->duration >= 0)
		snprintf(duration, sizeof(duration), "duration %.3f\n", result->duration);
	return snprintf(buf, size, "command %s\nstate %s\n%s%s%s%s", result->command,
			states[result->state], exit_line, signal_line,
			result->timed_out ? "timeout yes\n" : "", duration);
}

/* ---- suspend-cycles.txt ---- */

static void format_seconds(char *buf, size_t size, double seconds)
{
	if (seconds >= 0)
		snprintf(buf, size, "%.3f", seconds);
	else
		snprintf(buf, size, "-");
}

int bci_suspend_cycle_line_format(char *buf, size_t size, const struct bci_suspend_cycle_line *line)
{
	char kernel_suspend[32], kernel_resume[32];

	format_seconds(kernel_suspend, sizeof(kernel_suspend), line->kernel_suspend);
	format_seconds(kernel_resume, sizeof(kernel_resume), line->kernel_resume);
	return snprintf(buf, size, "%s %s %.3f %.3f %.3f %s %s %s\n", line->cycle, line->result,
			line->wall, line->suspended, line->latency, kernel_suspend, kernel_resume,
			line->wake[0] ? line->wake : "-");
}

static double parse_seconds(const char *text)
{
	return strcmp(text, "-") == 0 ? -1.0 : atof(text);
}

int bci_suspend_cycle_line_parse(const char *text, struct bci_suspend_cycle_line *line)
{
	char kernel_suspend[32], kernel_resume[32];

	memset(line, 0, sizeof(*line));
	if (sscanf(text, "%63s %15s %lf %lf %lf %31s %31s %31s", line->cycle, line->result,
		   &line->wall, &line->suspended, &line->latency, kernel_suspend, kernel_resume,
		   line->wake) != 8)
		return -EINVAL;
	line->kernel_suspend = parse_seconds(kernel_suspend);
	line->kernel_resume = parse_seconds(kernel_resume);
	if (strcmp(line->wake, "-") == 0)
		line->wake[0] = '\0';
	return 0;
}

/* ---- suspend-summary.txt ---- */

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void spread_of(double *values, size_t count, struct bci_suspend_spread *spread)
{
	memset(spread, 0, sizeof(*spread));
	if (count == 0)
		return;
	qsort(values, count, sizeof(values[0]), compare_doubles);
	spread->count = count;
	spread->min = values[0];
	spread->max = values[count - 1];
	spread->median = count % 2 ? values[count / 2]
				   : (values[count / 2 - 1] + values[count / 2]) / 2;
}

int bci_suspend_summary_compute(const char *text, size_t len, struct bci_suspend_summary *summary)
{
	double *suspended, *latency, *resume;
	size_t lines = 1, sleeps = 0, resumes = 0, i;
	const char *line = text, *end = text + len;
	int ret = 0;

	memset(summary, 0, sizeof(*summary));
	for (i = 0; i < len; i++)
		lines += text[i] == '\n';
	suspended = calloc(lines, sizeof(double));
	latency = calloc(lines, sizeof(double));
	resume = calloc(lines, sizeof(double));
	if (!suspended || !latency || !resume) {
		ret = -ENOMEM;
		goto out;
	}
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = (size_t)((nl ? nl : end) - line);
		struct bci_suspend_cycle_line cycle;
		char copy[512];

		snprintf(copy, sizeof(copy), "%.*s", (int)(n < sizeof(copy) ? n : sizeof(copy) - 1),
			 line);
		line = nl ? nl + 1 : end;
		/* A line cut by a crash is not a cycle. */
		if (bci_suspend_cycle_line_parse(copy, &cycle) < 0)
			continue;
		summary->cycles++;
		if (strcmp(cycle.result, "pass") != 0) {
			summary->fail++;
			continue;
		}
		if (strcmp(cycle.wake, "pm_test") != 0)
			suspended[sleeps++] = cycle.suspended;
		latency[summary->pass++] = cycle.latency;
		if (cycle.kernel_resume >= 0)
			resume[resumes++] = cycle.kernel_resume;
	}
	spread_of(suspended, sleeps, &summary->suspended);
	spread_of(latency, summary->pass, &summary->latency);
	spread_of(resume, resumes, &summary->kernel_resume);
out:
	free(suspended);
	free(latency);
	free(resume);
	return ret;
}

static void format_spread(char *buf, size_t size, const struct bci_suspend_spread *spread)
{
	if (spread->count == 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3f/%.3f/%.3f", spread->min, spread->median, spread->max);
}

int bci_suspend_summary_format(char *buf, size_t size, const struct bci_suspend_summary *summary)
{
	char suspended[96], latency[96], resume[96];

	format_spread(suspended, sizeof(suspended), &summary->suspended);
	format_spread(latency, sizeof(latency), &summary->latency);
	format_spread(resume, sizeof(resume), &summary->kernel_resume);
	return snprintf(buf, size,
			"cycles %zu\npass %zu\nfail %zu\n"
			"suspended_seconds %s\nlatency_seconds %s\nkernel_resume_seconds %s\n",
			summary->cycles, summary->pass, summary->fail, suspended, latency, resume);
}

enum bci_summary_value_kind bci_suspend_summary_value(const char *value, long long *count,
						      struct bci_suspend_spread *spread)
{
	char *end;

	*count = strtoll(value, &end, 10);
	if (*value && *end == '\0')
		return BCI_SUMMARY_COUNT;
	memset(spread, 0, sizeof(*spread));
	if (sscanf(value, "%lf/%lf/%lf", &spread->min, &spread->median, &spread->max) == 3) {
		spread->count = 1;
		return BCI_SUMMARY_SPREAD;
	}
	return BCI_SUMMARY_TEXT;
}

/* ---- N/bootci-incomplete.txt ---- */

int bci_results_incomplete_format(char *buf, size_t size, const char *file,
				  unsigned long long written, int error)
{
	return snprintf(buf, size, "%s %llu %s\n", file, written, strerror(-error));
}
