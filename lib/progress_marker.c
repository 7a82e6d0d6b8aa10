// SPDX-License-Identifier: MIT
/* The executor's progress lines (progress_marker.h): the writer, then the reader. */
#include "progress_marker.h"

#include "igt_protocol.h"
#include "testlist.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

void bci_progress_job_name(const struct bci_joblist_entry *entry, char *name, size_t size)
{
	if (entry->count == 1 && !strchr(entry->subtests[0], '@'))
		bci_igt_piglit_name(entry->binary, entry->subtests[0], name, size);
	else if (entry->count == 1)
		snprintf(name, size, "igt@%s@%s", entry->binary, entry->subtests[0]);
	else if (entry->count > 1)
		snprintf(name, size, "igt@%s (%zu subtests)", entry->binary, entry->count);
	else
		snprintf(name, size, "igt@%s", entry->binary);
}

static int formatted(int n, size_t size)
{
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= size ? -ENOSPC : n;
}

int bci_progress_format_start(char *buf, size_t size, unsigned number, size_t total,
			      const char *name, const char *resumed, const char *dynamic_filter)
{
	if (!number || number > total || total > UINT_MAX)
		return -EINVAL;
	if (!resumed)
		return formatted(snprintf(buf, size, "[%u/%zu] %s\n", number, total, name), size);
	return formatted(snprintf(buf, size, "[%u/%zu] %s (resumed: %s%s%s)\n", number, total, name,
				  resumed, dynamic_filter ? " --dynamic-subtest " : "",
				  dynamic_filter ? dynamic_filter : ""),
			 size);
}

int bci_progress_format_end(char *buf, size_t size, unsigned number, size_t total,
			    const char *name, const char *result, double seconds,
			    const char *elapsed, const char *eta)
{
	if (!number || number > total || total > UINT_MAX)
		return -EINVAL;
	return formatted(snprintf(buf, size, "[%u/%zu] %s %s %.1fs (elapsed %s, ETA %s)", number,
				  total, name, result, seconds, elapsed, eta),
			 size);
}

/* Decimal digits at *@p (before @end), at most UINT_MAX: 1 with the value and *@p past them. */
static int number_at(const char **p, const char *end, unsigned *value)
{
	unsigned long long v = 0;
	const char *q = *p;

	if (q >= end || *q < '0' || *q > '9')
		return 0;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		v = v * 10 + (unsigned)(*q - '0');
		if (v > UINT_MAX)
			return 0;
	}
	*value = (unsigned)v;
	*p = q;
	return 1;
}

/* `[N/M] ` at *@p: 1 with the numbers and *@p past it; 0 when absent or not 1 <= N <= M. */
static int job_numbers(const char **p, const char *end, unsigned *number, unsigned *total)
{
	const char *q = *p;

	if (q >= end || *q++ != '[')
		return 0;
	if (!number_at(&q, end, number) || q >= end || *q++ != '/')
		return 0;
	if (!number_at(&q, end, total) || end - q < 2 || q[0] != ']' || q[1] != ' ')
		return 0;
	if (!*number || *number > *total)
		return 0;
	*p = q + 2;
	return 1;
}

enum bci_progress_kind bci_progress_parse(const char *line, size_t len,
					  struct bci_progress_marker *out)
{
	static const char start_prefix[] = BCI_PROGRESS_KMSG_PREFIX;
	static const char end_prefix[] = BCI_PROGRESS_CONSOLE_PREFIX;
	const char *end, *at, *other, *p;
	enum bci_progress_kind kind;
	size_t window;

	/* The line ends at its first NUL, CR or LF: a marker is one line. */
	for (end = line; end < line + len && *end && *end != '\n' && *end != '\r'; end++)
		;
	window = (size_t)(end - line) < BCI_PROGRESS_PREFIX_WINDOW ? (size_t)(end - line) :
								      BCI_PROGRESS_PREFIX_WINDOW;
	/* The prefix that comes first is the line's: the name after it may hold the other. */
	at = memmem(line, window, start_prefix, sizeof(start_prefix) - 1);
	other = memmem(line, window, end_prefix, sizeof(end_prefix) - 1);
	if (at && (!other || at < other)) {
		kind = BCI_PROGRESS_START;
		p = at + sizeof(start_prefix) - 1;
	} else if (other) {
		kind = BCI_PROGRESS_END;
		p = other + sizeof(end_prefix) - 1;
	} else {
		return BCI_PROGRESS_NONE;
	}
	if (!job_numbers(&p, end, &out->number, &out->total))
		return BCI_PROGRESS_NONE;
	out->kind = kind;
	out->text = p;
	out->text_len = (size_t)(end - p);
	at = memchr(p, ' ', out->text_len);
	out->name_len = at ? (size_t)(at - p) : out->text_len;
	return kind;
}

bool bci_progress_job_runs(const char *name, size_t name_len, const char *test)
{
	const char *space = memchr(name, ' ', name_len);

	/* The job's test, or its binary ("igt@kms_flip (3 subtests)") and one of its tests. */
	if (space)
		name_len = (size_t)(space - name);
	return name_len && !strncmp(name, test, name_len) &&
	       (test[name_len] == '\0' || test[name_len] == '@');
}
