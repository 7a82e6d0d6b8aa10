// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the master's console writer (aggregator/master/serve/console_log.c):
 * the input is a console's bytes, its first byte the size of the reads they come in.
 * Without a limit in reach and without notes, the boots put end to end are the
 * input, byte for byte, however it was cut; with a small limit, no boot's file
 * grows past the limit and its notes.
 */
#include "../../aggregator/master/serve/console_log.h"
#include "fsutil.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SMALL_LIMIT 256
/* Room for the cut's and the drop's notes past the limit. */
#define NOTES_MAX 400

static char dir[64];

static void feed_all(struct bci_console_log *log, const uint8_t *data, size_t size, size_t chunk)
{
	double now = 1.0;

	for (size_t at = 0; at < size; at += chunk) {
		if (bci_console_log_feed(log, data + at, size - at < chunk ? size - at : chunk, now) < 0)
			abort();
		/* Now and then a pause long enough for the held line start to be written. */
		now += data[at] == '\r' ? 0.6 : 0.01;
		if (bci_console_log_tick(log, now) < 0)
			abort();
	}
}

static void remove_dir(void)
{
	bci_remove_tree(dir);
}

/* In memory when the host has /dev/shm: the writer's syncs are what it does, not what is tried. */
static void fresh_dir(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/bootci-fuzz-console-XXXXXX",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
	}
	bci_remove_tree(dir);
}

/* A boot's run and the run's boot, read from its head: a word, a number in range. */
static void run_check(const char *path)
{
	char run_id[BCI_CONSOLE_RUN_MAX + 1];
	unsigned boot = 7;
	int fd = open(path, O_RDONLY | O_CLOEXEC), found;

	if (fd < 0)
		abort();
	found = bci_console_log_run_boot(fd, run_id, &boot);
	close(fd);
	if (found < 0 || (found == 0 && boot) || boot > 999999)
		abort();
	if (found == 1 && (!run_id[0] || strlen(run_id) > BCI_CONSOLE_RUN_MAX ||
			   strpbrk(run_id, " \r\n")))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_console_log *log;
	struct bci_console_boot *boots;
	size_t chunk, count, total = 0;
	char err[300], path[PATH_MAX];

	if (size < 1)
		return 0;
	chunk = data[0] % 97 + 1;
	data++;
	size--;

	/* Whole: the boots together are the input. */
	fresh_dir();
	if (bci_console_log_open(dir, "fuzz", 1ULL << 30, NULL, NULL, &log, err, sizeof(err)) < 0)
		abort();
	feed_all(log, data, size, chunk);
	bci_console_log_close(log);
	if (bci_console_log_list(dir, &boots, &count) < 0)
		abort();
	for (size_t i = 0; i < count; i++) {
		char *text;
		size_t len;

		if (boots[i].number != i + 1)
			abort();
		snprintf(path, sizeof(path), "%s/%06u.log", dir, boots[i].number);
		if (bci_read_file(path, &text, &len, 1 << 24) < 0)
			abort();
		if (!len || total + len > size || memcmp(text, data + total, len))
			abort();
		total += len;
		free(text);
		run_check(path);
	}
	if (total != size)
		abort();
	free(boots);

	/* Bounded: no boot past its limit and its notes. */
	fresh_dir();
	if (bci_console_log_open(dir, "fuzz", SMALL_LIMIT, NULL, NULL, &log, err, sizeof(err)) < 0)
		abort();
	feed_all(log, data, size, chunk);
	bci_console_log_close(log);
	if (bci_console_log_list(dir, &boots, &count) < 0)
		abort();
	for (size_t i = 0; i < count; i++)
		if (boots[i].size > SMALL_LIMIT + NOTES_MAX)
			abort();
	free(boots);
	return 0;
}
