// SPDX-License-Identifier: MIT
/*
 * Fuzz target for lib/progress_marker.c, the executor's progress lines as the
 * master reads them from a serial console: the input, line by line. A marker
 * read lies inside its line, says 1 <= N <= M, and formatted again from what
 * was read (the start's text as its name, the end's name with a result) it
 * reads back the same.
 */
#include "progress_marker.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_back(const struct bci_progress_marker *m)
{
	char text[1200], line[1300], *name = strndup(m->text, m->text_len);
	struct bci_progress_marker again;
	int n;

	if (!name)
		abort();
	if (m->kind == BCI_PROGRESS_START) {
		n = bci_progress_format_start(text, sizeof(text), m->number, m->total, name, NULL, NULL);
		snprintf(line, sizeof(line), "[    1.000000] " BCI_PROGRESS_KMSG_PREFIX "%s", text);
	} else {
		name[m->name_len] = '\0';
		n = bci_progress_format_end(text, sizeof(text), m->number, m->total, name, "pass", 0.5,
					    "0s", "0s");
		snprintf(line, sizeof(line), BCI_PROGRESS_CONSOLE_PREFIX "%s", text);
	}
	if (n < 0)
		abort();
	if (bci_progress_parse(line, strlen(line), &again) != m->kind || again.number != m->number ||
	    again.total != m->total || again.name_len != m->name_len ||
	    memcmp(again.text, m->text, m->name_len))
		abort();
	if (m->kind == BCI_PROGRESS_START &&
	    (again.text_len != m->text_len || memcmp(again.text, m->text, m->text_len)))
		abort();
	/* Its name runs the test it names. */
	name[m->name_len] = '\0';
	if (m->name_len && !bci_progress_job_runs(m->text, m->text_len, name))
		abort();
	free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl + 1 : end) - p);
		struct bci_progress_marker m;
		enum bci_progress_kind kind = bci_progress_parse(p, len, &m);

		if (kind != BCI_PROGRESS_NONE) {
			if (m.kind != kind || !m.number || m.number > m.total)
				abort();
			if (m.text < p || m.text + m.text_len > p + len || m.name_len > m.text_len ||
			    memchr(m.text, '\n', m.text_len) || memchr(m.text, '\r', m.text_len) ||
			    memchr(m.text, '\0', m.text_len) || memchr(m.text, ' ', m.name_len))
				abort();
			read_back(&m);
		}
		p += len;
	}
	return 0;
}
