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

#define MAX_LINE 1024


static int parse_job(const char *text, const struct bci_journal *journal, unsigned *job)
{
	char *end;
	unsigned long v;

	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	v = strtoul(text, &end, 10);
	if (*end != '\0' || v >= journal->job_count)
		return -EINVAL;
	*job = (unsigned)v;
	return 0;
}

/* Applies one line (modified in place) to the state. */
static int apply_line(struct bci_journal *journal, char *line)
{
	char *save = NULL;
	char *word = strtok_r(line, " ", &save);
	char *a = strtok_r(NULL, " ", &save);
	char *b = strtok_r(NULL, " ", &save);
	unsigned job;

	if (!word)
		return -EINVAL;
	if (strcmp(word, "boot") == 0) {
		if (!a)
			return -EINVAL;
		journal->boots++;
		return 0;
	}
	if (strcmp(word, "done") == 0) {
		journal->done = true;
		return 0;
	}
	if (strcmp(word, "abort") == 0) {
		journal->aborted = true;
		return 0;
	}
	if (parse_job(a, journal, &job) < 0)
		return -EINVAL;
	struct bci_job_state *state = &journal->jobs[job];
	if (strcmp(word, "start") == 0) {
		state->starts++;
		journal->in_flight = (int)job;
	} else if (strcmp(word, "exit") == 0 || strcmp(word, "timeout") == 0 ||
		   strcmp(word, "capped") == 0) {
		if (!b)
			return -EINVAL;
		state->finished = true;
		state->capped = word[0] == 'c';
		if (journal->in_flight == (int)job)
			journal->in_flight = -1;
	} else if (strcmp(word, "incomplete") == 0) {
		if (!b)
			return -EINVAL;
		if (journal->in_flight == (int)job)
			journal->in_flight = -1;
	} else if (strcmp(word, "dynamic") == 0) {
		char **list;
		if (!b || !strchr(b, '@'))
			return -EINVAL;
		list = realloc(state->dynamic, (state->dynamic_count + 2) * sizeof(char *));
		if (!list)
			return -ENOMEM;
		state->dynamic = list;
		list[state->dynamic_count] = strdup(b);
		if (!list[state->dynamic_count])
			return -ENOMEM;
		list[++state->dynamic_count] = NULL;
	} else {
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
		char line[MAX_LINE];
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
		ret = apply_line(journal, line);
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

int bci_journal_append(struct bci_journal *journal, const char *fmt, ...)
{
	char line[MAX_LINE], copy[MAX_LINE];
	va_list ap;
	int n, ret;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1) {
		bci_error("journal: a line of %d bytes is over the limit of %d", n, MAX_LINE - 2);
		return -EINVAL;
	}
	memcpy(copy, line, (size_t)n + 1);
	ret = apply_line(journal, copy);
	if (ret < 0) {
		bci_error("journal: malformed line '%.80s' not written", line);
		return ret;
	}
	line[n++] = '\n';
	ret = bci_write_all(journal->fd, line, (size_t)n);
	if (ret == 0 && fdatasync(journal->fd) < 0)
		ret = -errno;
	if (ret < 0)
		bci_error("the journal cannot be made durable (line '%.*s'): %s: the run stops",
			  n - 1, line, strerror(-ret));
	return ret;
}
