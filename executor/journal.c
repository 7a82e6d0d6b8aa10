// SPDX-License-Identifier: MIT
/*
 * bootci's run journal (the format is in journal.h). Appending is the
 * executor's durability rule in one place: a line is written and
 * fdatasync'ed, or the failure is said on the console and returned, for the
 * engine to stop the run before anything the line would have announced.
 */
#include "journal.h"
#include "message.h"

#include "executor.h"

#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Applies one parsed line to the state. */
static int apply_line(struct bci_journal *journal, const struct bci_run_journal_line *line)
{
	struct bci_job_state *state;
	char **list;

	switch (line->kind) {
	case BCI_RUN_JOURNAL_BOOT:
		journal->boots++;
		return 0;
	case BCI_RUN_JOURNAL_DONE:
		journal->done = true;
		return 0;
	case BCI_RUN_JOURNAL_ABORT:
		journal->aborted = true;
		return 0;
	default:
		break;
	}
	/* Every other line names a job of this run. */
	if (line->job >= journal->job_count)
		return -EINVAL;
	state = &journal->jobs[line->job];
	switch (line->kind) {
	case BCI_RUN_JOURNAL_START:
		state->starts++;
		journal->in_flight = (int)line->job;
		break;
	case BCI_RUN_JOURNAL_EXIT:
	case BCI_RUN_JOURNAL_TIMEOUT:
	case BCI_RUN_JOURNAL_CAPPED:
		state->finished = true;
		state->capped = line->kind == BCI_RUN_JOURNAL_CAPPED;
		if (journal->in_flight == (int)line->job)
			journal->in_flight = -1;
		break;
	case BCI_RUN_JOURNAL_INCOMPLETE:
		if (journal->in_flight == (int)line->job)
			journal->in_flight = -1;
		break;
	case BCI_RUN_JOURNAL_DYNAMIC:
		list = realloc(state->dynamic, (state->dynamic_count + 2) * sizeof(char *));
		if (!list)
			return -ENOMEM;
		state->dynamic = list;
		list[state->dynamic_count] = strndup(line->rest, strcspn(line->rest, " "));
		if (!list[state->dynamic_count])
			return -ENOMEM;
		list[++state->dynamic_count] = NULL;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static int init_state(struct bci_journal *journal, size_t job_count)
{
	memset(journal, 0, sizeof(*journal));
	journal->fd = -1;
	journal->in_flight = -1;
	journal->job_count = job_count;
	journal->jobs = calloc(job_count ? job_count : 1, sizeof(*journal->jobs));
	return journal->jobs ? 0 : -ENOMEM;
}

int bci_journal_replay(struct bci_journal *journal, const char *origin, const char *text,
		       size_t len, char *err, size_t err_size)
{
	const char *p = text, *end = text + len;
	unsigned lineno = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[BCI_RUN_JOURNAL_LINE_MAX];
		struct bci_run_journal_line parsed;
		size_t n;
		int ret;

		/* A torn last line (no newline: the machine died mid-write) is ignored. */
		if (!nl)
			break;
		n = (size_t)(nl - p);
		lineno++;
		if (n >= sizeof(line) || memchr(p, '\0', n)) {
			bci_message(err, err_size, "%s:%u: malformed line", origin, lineno);
			return -EINVAL;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p = nl + 1;
		ret = bci_run_journal_parse_line(line, &parsed);
		if (ret == 0)
			ret = apply_line(journal, &parsed);
		if (ret < 0) {
			bci_message(err, err_size, "%s:%u: malformed line '%.80s'", origin, lineno, line);
			return ret;
		}
	}
	return 0;
}

int bci_journal_open(struct bci_journal *journal, const char *path, size_t job_count)
{
	char *text = NULL, last = '\n', err[512];
	size_t len = 0;
	int ret = init_state(journal, job_count);

	if (ret < 0) {
		bci_error("%s: no memory for the journal of %zu jobs", path, job_count);
		return ret;
	}
	ret = bci_read_file(path, &text, &len, 64 << 20);
	if (ret == 0) {
		ret = bci_journal_replay(journal, path, text, len, err, sizeof(err));
		if (len > 0)
			last = text[len - 1];
		free(text);
		if (ret < 0) {
			bci_error("%s", err);
			goto fail;
		}
	} else if (ret != -ENOENT) {
		bci_error("cannot read %s: %s", path, strerror(-ret));
		goto fail;
	}
	journal->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (journal->fd < 0) {
		ret = -errno;
		bci_error("cannot open %s: %s", path, strerror(-ret));
		goto fail;
	}
	/* Terminate a torn last line so the next one starts clean; the file's name durable too. */
	ret = 0;
	if (last != '\n')
		ret = bci_write_all(journal->fd, "\n", 1);
	if (ret == 0)
		ret = bci_fsync_parent(path);
	if (ret < 0) {
		bci_error("cannot make %s durable: %s", path, strerror(-ret));
		goto fail;
	}
	return 0;
fail:
	bci_journal_close(journal);
	return ret;
}

void bci_journal_close(struct bci_journal *journal)
{
	if (journal->fd >= 0)
		close(journal->fd);
	for (size_t i = 0; journal->jobs && i < journal->job_count; i++) {
		for (size_t j = 0; j < journal->jobs[i].dynamic_count; j++)
			free(journal->jobs[i].dynamic[j]);
		free(journal->jobs[i].dynamic);
	}
	free(journal->jobs);
	journal->jobs = NULL;
	journal->fd = -1;
}

int bci_journal_append(struct bci_journal *journal, enum bci_run_journal_kind kind,
		       unsigned long job, const char *rest)
{
	struct bci_run_journal_line line = { .kind = kind, .job = job };
	char text[BCI_RUN_JOURNAL_LINE_MAX + 32];
	int n, ret;

	if (rest && strlen(rest) >= sizeof(line.rest)) {
		bci_error("journal: a line of %zu bytes is over the limit of %zu", strlen(rest),
			  sizeof(line.rest) - 1);
		return -EINVAL;
	}
	snprintf(line.rest, sizeof(line.rest), "%s", rest ? rest : "");
	n = bci_run_journal_format_line(text, sizeof(text), &line);
	/* What is written must read back as the same line: the one format, both ways. */
	ret = n > 0 && n < (int)sizeof(text) ? 0 : -EINVAL;
	if (ret == 0) {
		text[n - 1] = '\0';
		ret = bci_run_journal_parse_line(text, &line);
		text[n - 1] = '\n';
	}
	if (ret == 0)
		ret = apply_line(journal, &line);
	if (ret < 0) {
		bci_error("journal: malformed line '%.*s' not written", n > 0 ? n - 1 : 0, text);
		return ret;
	}
	ret = bci_write_all(journal->fd, text, (size_t)n);
	if (ret == 0 && fdatasync(journal->fd) < 0)
		ret = -errno;
	if (ret < 0)
		bci_error("the journal cannot be made durable (line '%.*s'): %s: the run stops",
			  n - 1, text, strerror(-ret));
	return ret;
}

int bci_journal_appendf(struct bci_journal *journal, enum bci_run_journal_kind kind,
			unsigned long job, const char *fmt, ...)
{
	char rest[BCI_RUN_JOURNAL_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rest, sizeof(rest), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(rest)) {
		bci_error("journal: a line of %d bytes is over the limit of %zu", n, sizeof(rest) - 1);
		return -EINVAL;
	}
	return bci_journal_append(journal, kind, job, rest);
}
