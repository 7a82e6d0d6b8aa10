// SPDX-License-Identifier: MIT
/*
 * A test's stdout or stderr on its way to out.txt or err.txt: cut into lines
 * (the protocol lines drive the job, job.c), written as they come up to
 * the output limit, then only the protocol lines (the results must stay
 * complete) and a ring of the last bytes, written with a note at the end.
 */
#include "igt.h"

#include "fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bci_igt_stream_init(struct bci_igt_stream *s, int file_fd, unsigned long long limit,
			size_t tail_size)
{
	*s = (struct bci_igt_stream){ .pipe_fd = -1, .file_fd = file_fd, .limit = limit,
				      .tail_size = tail_size };
	s->tail = malloc(tail_size);
	return s->tail ? 0 : -ENOMEM;
}

void bci_igt_stream_release(struct bci_igt_stream *s)
{
	if (s->pipe_fd >= 0)
		close(s->pipe_fd);
	s->pipe_fd = -1;
	free(s->tail);
	s->tail = NULL;
}

static void tail_add(struct bci_igt_stream *s, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		s->tail[s->tail_pos] = data[i];
		s->tail_pos = (s->tail_pos + 1) % s->tail_size;
		if (s->tail_used < s->tail_size)
			s->tail_used++;
	}
}

/*
 * Writes one line (with its newline) to the stream's file. Past the limit,
 * protocol lines still go to the file (results must stay complete) and the
 * rest only into the tail ring, written at the end of the job.
 */
static void stream_emit(struct bci_igt_stream *s, const char *line, size_t len)
{
	if (s->write_error) {
		/* The file is cut: what comes after must not eat the room left for the records. */
		s->lost += len;
		return;
	}
	if (s->written + len <= s->limit || bci_igt_line_classify(line, len) != BCI_IGT_LINE_OTHER) {
		int ret = bci_write_all(s->file_fd, line, len);
		if (ret == 0) {
			s->written += len;
		} else {
			s->write_error = ret;
			s->lost += len;
		}
		return;
	}
	s->dropped += len;
	tail_add(s, line, len);
}

void bci_igt_stream_feed(struct bci_igt_stream *s, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s->line_len < sizeof(s->line))
			s->line[s->line_len] = data[i];
		else
			s->line_overflow = true;
		s->line_len++;
		if (data[i] != '\n' && s->line_len < sizeof(s->line))
			continue;
		/* A very long line is written in pieces; only whole short lines can be protocol. */
		size_t n = s->line_len < sizeof(s->line) ? s->line_len : sizeof(s->line);
		/* The line goes to the file first, so the sync its handling does includes it. */
		stream_emit(s, s->line, n);
		if (data[i] == '\n' && !s->line_overflow && s->on_line)
			s->on_line(s->data, s->line, n - 1);
		if (data[i] == '\n')
			s->line_overflow = false;
		s->line_len = 0;
	}
}

void bci_igt_stream_finish(struct bci_igt_stream *s)
{
	char note[160];
	int n;

	if (s->line_len > 0) {
		stream_emit(s, s->line, s->line_len < sizeof(s->line) ? s->line_len : sizeof(s->line));
		s->line_len = 0;
	}
	if (s->dropped == 0 || s->write_error)
		return;
	n = snprintf(note, sizeof(note),
		     "\nbootci: output over the limit of %llu bytes: %llu bytes dropped, the last %zu follow\n",
		     s->limit + s->tail_size, s->dropped - s->tail_used, s->tail_used);
	size_t start = s->tail_used < s->tail_size ? 0 : s->tail_pos;
	size_t first = s->tail_used < s->tail_size ? s->tail_used : s->tail_size - start;
	int ret = bci_write_all(s->file_fd, note, (size_t)n);
	if (ret == 0)
		ret = bci_write_all(s->file_fd, s->tail + start, first);
	if (ret == 0 && s->tail_used == s->tail_size)
		ret = bci_write_all(s->file_fd, s->tail, start);
	/* Said by the job like any other failed write (outputs.c). */
	if (ret < 0)
		s->write_error = ret;
}
