// SPDX-License-Identifier: MIT
/* lib/fsutil.c: a file written whole through a stream, or not at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fsutil.h"
#include "message.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The writer's bytes: @size of them, each its offset's low byte mixed, in odd-sized writes. */
struct pattern {
	size_t size;
	int fail_at;		/* after this many writes, fail with -ENOSPC; 0: never */
};

static unsigned char pattern_byte(size_t i)
{
	return (unsigned char)(i * 31 + (i >> 12));
}

static int pattern_write(FILE *out, const void *ctx, char *err, size_t err_size)
{
	const struct pattern *p = ctx;
	unsigned char chunk[7001];
	size_t done = 0;
	int writes = 0;

	while (done < p->size) {
		size_t n = p->size - done < sizeof(chunk) ? p->size - done : sizeof(chunk);

		if (p->fail_at && ++writes > p->fail_at) {
			snprintf(err, err_size, "the writer gave up");
			return -ENOSPC;
		}
		for (size_t i = 0; i < n; i++)
			chunk[i] = pattern_byte(done + i);
		if (fwrite(chunk, 1, n, out) != n)
			return -EIO;
		done += n;
	}
	return 0;
}

static char *temp_dir(void)
{
	char *dir = strdup("/tmp/bci-fsutil-XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

/* How many entries @dir holds besides . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Past several writeback chunks (4 MiB each) and the stream's buffer: every byte, in order. */
static void stream_writes_every_byte(void **state)
{
	struct pattern p = { .size = ((size_t)13 << 20) + 12345 };
	char *dir = temp_dir(), path[256], err[256] = "";
	unsigned char *back;
	struct stat st;
	FILE *in;

	(void)state;
	snprintf(path, sizeof(path), "%s/page.html", dir);
	assert_int_equal(bci_atomic_write_stream(path, 0644, pattern_write, &p, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, p.size);
	assert_int_equal(st.st_mode & 0777, 0644);
	back = malloc(p.size);
	assert_non_null(back);
	in = fopen(path, "rb");
	assert_non_null(in);
	assert_int_equal(fread(back, 1, p.size, in), p.size);
	fclose(in);
	for (size_t i = 0; i < p.size; i++)
		if (back[i] != pattern_byte(i))
			fail_msg("byte %zu is %u, not %u", i, back[i], pattern_byte(i));
	free(back);
	/* Only the file: no temporary left beside it. */
	assert_int_equal(entries(dir), 1);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* A writer that fails (past the first chunk) leaves the old file as it was, and no temporary. */
static void stream_failure_keeps_the_old_file(void **state)
{
	struct pattern p = { .size = (size_t)9 << 20, .fail_at = 900 };
	char *dir = temp_dir(), path[256], err[256] = "", old[16] = "";
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/page.html", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("the old page", f);
	fclose(f);
	assert_int_equal(bci_atomic_write_stream(path, 0644, pattern_write, &p, err, sizeof(err)),
			 -ENOSPC);
	assert_string_equal(err, "the writer gave up");
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(old, sizeof(old), f));
	fclose(f);
	assert_string_equal(old, "the old page");
	assert_int_equal(entries(dir), 1);
	unlink(path);
	rmdir(dir);
	free(dir);
}

/* A folder that is not there: refused with the path named, nothing made. */
static void stream_into_missing_folder(void **state)
{
	struct pattern p = { .size = 10 };
	char err[256] = "";

	(void)state;
	assert_int_equal(bci_atomic_write_stream("/nonexistent-bci/page.html", 0644, pattern_write,
						 &p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent-bci/page.html"));
}

/*
 * An error the C library has no text for keeps its name: musl says "No error
 * information" for EUCLEAN, which hid why a damaged run folder could not be
 * made (issue 34, point 5).
 */
static void error_text_keeps_the_errno(void **state)
{
	(void)state;
	assert_string_equal(bci_strerror(EUCLEAN), "Structure needs cleaning (EUCLEAN)");
	assert_string_equal(bci_strerror(ENOENT), strerror(ENOENT));
	assert_string_equal(bci_strerror(4095), "unknown error (errno 4095)");
	assert_string_equal(bci_strerror(0), "unknown error (errno 0)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stream_writes_every_byte),
		cmocka_unit_test(error_text_keeps_the_errno),
		cmocka_unit_test(stream_failure_keeps_the_old_file),
		cmocka_unit_test(stream_into_missing_folder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
