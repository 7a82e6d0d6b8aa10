// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the results generator's folder walk (bci_results_walk,
 * the per-job walk bci_results_job_walk, and results.json), as the CI master meets uploaded folders: the input builds a
 * whole results folder, entry by entry, entries separated by "\n~~\n":
 *
 *   f NAME\nCONTENT     a regular file        d NAME     a folder
 *   l NAME TARGET       a symbolic link       p NAME     a FIFO
 *
 * NAME is a relative path of at most 3 components of [A-Za-z0-9._-] (no
 * "..", folders on the way are made). The walk must hand out only tests with
 * a known result, never hang (a FIFO, a link to /dev/zero), never read
 * outside the folder, and stop cleanly on what it refuses; the file limit
 * is 512 bytes so that condensing is explored.
 */
#include "fsutil.h"
#include "resultgen/resultgen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char base[] = "/tmp/fuzz_results_walk.XXXXXX";
static char *made;

static bool name_ok(const char *name)
{
	int components = 1;

	if (!name[0] || name[0] == '/' || strstr(name, "..") || strstr(name, "//"))
		return false;
	for (const char *p = name; *p; p++) {
		if (*p == '/')
			components++;
		else if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			   (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			return false;
	}
	return components <= 3 && name[strlen(name) - 1] != '/';
}

/* Makes the folders on the way to @path (inside the results folder). */
static void make_parents(char *path)
{
	for (char *slash = strchr(path + strlen(made) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
}

/* One entry: its first line says what, the rest is a file's content. */
static void make_entry(const char *dir, const char *entry, size_t len)
{
	const char *nl = memchr(entry, '\n', len);
	size_t head = nl ? (size_t)(nl - entry) : len;
	char line[256], name[128], target[128], path[PATH_MAX];
	FILE *f;
	int fd;

	if (head < 3 || head >= sizeof(line) || entry[1] != ' ')
		return;
	memcpy(line, entry, head);
	line[head] = '\0';
	target[0] = '\0';
	if (sscanf(line + 2, "%127s %127s", name, target) < 1 || !name_ok(name))
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	make_parents(path);
	switch (entry[0]) {
	case 'f':
		/*
		 * Not through an entry made before: a FIFO would block the
		 * open (no reader), a link would write outside the folder.
		 */
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC,
			  0644);
		if (fd < 0)
			return;
		f = fdopen(fd, "w");
		if (!f) {
			close(fd);
			return;
		}
		if (nl)
			fwrite(nl + 1, 1, len - head - 1, f);
		fclose(f);
		break;
	case 'd':
		mkdir(path, 0755);
		break;
	case 'l':
		if (target[0] && symlink(target, path) < 0 && errno != EEXIST)
			return;
		break;
	case 'p':
		mkfifo(path, 0600);
		break;
	}
}

static int check_test(enum bci_results_event event, const struct bci_results_run *run,
		      const struct bci_results_test *test, void *ctx)
{
	(void)ctx;
	if (!run || !run->name)
		abort();
	if (event != BCI_RESULTS_TEST)
		return 0;
	if (!test || !test->name[0] || !test->result || bci_igt_result_index(test->result) < 0)
		abort();
	/* Nothing from outside the folder (the target names a marker file there). */
	if (test->out.ptr && memmem(test->out.ptr, test->out.len, "OUTSIDE-SECRET", 14))
		abort();
	return 0;
}

/* The folder goes when the fuzzer exits. */
static void remove_base(void)
{
	bci_remove_tree(made);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_resultgen_options options = { .max_file = 512 };
	const char *p = (const char *)data, *end = p + size;
	struct bci_results_job_reader *reader;
	char dir[PATH_MAX], err[512];
	FILE *out;

	/* The marker must come from outside to mean a leak. */
	if (memmem(data, size, "OUTSIDE-SECRET", 14))
		return 0;
	if (!made) {
		char secret[PATH_MAX];
		FILE *f;

		made = mkdtemp(base);
		if (!made)
			abort();
		snprintf(secret, sizeof(secret), "%s/secret.txt", made);
		f = fopen(secret, "w");
		if (!f)
			abort();
		fputs("OUTSIDE-SECRET\n", f);
		fclose(f);
		atexit(remove_base);
	}
	snprintf(dir, sizeof(dir), "%s/res", made);
	bci_remove_tree(dir);
	if (mkdir(dir, 0755) < 0)
		abort();
	while (p < end) {
		const char *sep = memmem(p, (size_t)(end - p), "\n~~\n", 4);
		const char *stop = sep ? sep : end;

		make_entry(dir, p, (size_t)(stop - p));
		p = sep ? sep + 4 : end;
	}
	options.warnings = fopen("/dev/null", "w");
	bci_results_walk(dir, &options, check_test, NULL, err, sizeof(err));
	out = fopen("/dev/null", "w");
	if (!out || !options.warnings)
		abort();
	bci_resultgen_write_options(dir, out, &options, err, sizeof(err));
	fclose(out);
	/* One job at a time, as the executor's console asks: the same folders, the same checks. */
	if (bci_results_job_reader_new(dir, &options, &reader, err, sizeof(err)) == 0) {
		for (size_t job = 0; job < 4; job++)
			bci_results_job_walk(reader, job, NULL, check_test, NULL, err, sizeof(err));
		bci_results_job_reader_free(reader);
	}
	fclose(options.warnings);
	return 0;
}
