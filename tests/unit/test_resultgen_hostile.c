// SPDX-License-Identifier: MIT
/*
 * The results generator on folders from outside (issue 10, defect 6): each
 * case here hung, leaked a file from outside the folder, or left a test
 * without a result before the generator was hardened. A case that could
 * hang runs in a child with an alarm, so that a hang fails the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeroot.h"
#include "resultgen/resultgen.h"
#include "resultgen/internal.h"
#include "uring.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HANG_SECONDS 30

static char generated[1 << 16];
static char error_text[1024];

static int generate(struct fakeroot *root, size_t max_file)
{
	struct bci_resultgen_options options = { .max_file = max_file };
	char dir[PATH_MAX + 8], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	assert_non_null(f);
	options.warnings = fopen("/dev/null", "w");
	snprintf(dir, sizeof(dir), "%s/res", root->dir);
	ret = bci_resultgen_write_options(dir, f, &options, error_text, sizeof(error_text));
	fclose(f);
	fclose(options.warnings);
	snprintf(generated, sizeof(generated), "%.*s", (int)len, buf ? buf : "");
	free(buf);
	return ret;
}

/* generate() in a child that must end within HANG_SECONDS: its return, or -ETIMEDOUT. */
static int generate_bounded(struct fakeroot *root, size_t max_file)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(HANG_SECONDS);
		_exit(-generate(root, max_file));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGALRM ? -ETIMEDOUT : -EINTR;
	return -WEXITSTATUS(status);
}

static void tree(struct fakeroot *root)
{
	fakeroot_create(root, "");
	fakeroot_write(root, "/res/metadata.txt", "name : hostile\n");
	fakeroot_write(root, "/res/joblist.txt", "bin\n");
	fakeroot_write(root, "/res/0/journal.txt", "exit:0 (1.000s)\n");
	fakeroot_write(root, "/res/0/out.txt", "hello\n");
	fakeroot_write(root, "/res/0/err.txt", "");
	fakeroot_write(root, "/res/0/dmesg.txt", "");
	fakeroot_write(root, "/secret.txt", "SECRET from outside the folder\n");
}

static void path_of(struct fakeroot *root, const char *rel, char *path, size_t size)
{
	if ((size_t)snprintf(path, size, "%.4000s%s", root->dir, rel) >= size)
		fail_msg("path too long");
}

/* A cut line running to the end of the range: the line reader skipped it for ever. */
static void unending_cut_lines_end(void **state)
{
	struct fakeroot root;
	char path[PATH_MAX + 64];
	FILE *f;

	(void)state;
	tree(&root);
	/* out.txt over a 1 KiB limit, its last 20 KB one line without a newline. */
	path_of(&root, "/res/0/out.txt", path, sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("Starting subtest: a\n", f);
	for (int i = 0; i < 20000; i++)
		fputc('x', f);
	fclose(f);
	fakeroot_write(&root, "/res/0/journal.txt", "a\nexit:0 (1.000s)\n");
	assert_int_equal(generate_bounded(&root, 1024), 0);

	/* dmesg.txt (no limit needed): a 100 KB record without a newline at its end. */
	fakeroot_write(&root, "/res/0/out.txt", "hello\n");
	path_of(&root, "/res/0/dmesg.txt", path, sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("6,1,1,-;", f);
	for (int i = 0; i < 100000; i++)
		fputc('y', f);
	fclose(f);
	assert_int_equal(generate_bounded(&root, 0), 0);
	fakeroot_remove(&root);
}

static void expect_refused(struct fakeroot *root, const char *what)
{
	assert_int_equal(generate(root, 0), -ELOOP);
	if (!strstr(error_text, what) || !strstr(error_text, "symbolic link"))
		fail_msg("error '%s' does not name '%s' as a link", error_text, what);
	assert_null(strstr(generated, "SECRET"));
}

/* Links out of the folder (or anywhere below it) are refused, named. */
static void symlinks_are_refused(void **state)
{
	struct fakeroot root;
	char path[PATH_MAX + 64], target[PATH_MAX + 64];

	(void)state;
	tree(&root);
	path_of(&root, "/secret.txt", target, sizeof(target));

	path_of(&root, "/res/0/out.txt", path, sizeof(path));
	unlink(path);
	assert_int_equal(symlink(target, path), 0);
	expect_refused(&root, "0/out.txt");
	unlink(path);
	assert_int_equal(symlink("../../secret.txt", path), 0);
	expect_refused(&root, "0/out.txt");
	fakeroot_write(&root, "/res/0/out.txt", "hello\n");

	/* A job folder that is a link to a folder outside. */
	fakeroot_write(&root, "/elsewhere/journal.txt", "exit:0 (1.000s)\n");
	fakeroot_write(&root, "/elsewhere/out.txt", "SECRET job\n");
	fakeroot_write(&root, "/elsewhere/err.txt", "");
	fakeroot_write(&root, "/elsewhere/dmesg.txt", "");
	fakeroot_write(&root, "/res/joblist.txt", "bin\nother\n");
	path_of(&root, "/elsewhere", target, sizeof(target));
	path_of(&root, "/res/1", path, sizeof(path));
	assert_int_equal(symlink(target, path), 0);
	expect_refused(&root, "/res/1");
	unlink(path);

	/* joblist.txt itself. */
	fakeroot_write(&root, "/elsewhere/joblist.txt", "SECRET\n");
	path_of(&root, "/res/joblist.txt", path, sizeof(path));
	unlink(path);
	path_of(&root, "/elsewhere/joblist.txt", target, sizeof(target));
	assert_int_equal(symlink(target, path), 0);
	expect_refused(&root, "joblist.txt");

	/* /dev/zero was read until the limit and reported as "0 bytes, over the limit". */
	fakeroot_write(&root, "/res/joblist.txt", "bin\n");
	path_of(&root, "/res/0/err.txt", path, sizeof(path));
	unlink(path);
	assert_int_equal(symlink("/dev/zero", path), 0);
	expect_refused(&root, "0/err.txt");
	assert_null(strstr(error_text, "0 bytes"));
	fakeroot_remove(&root);
}

/* A FIFO blocked open() for ever: only regular files are read. */
static void fifos_are_refused(void **state)
{
	struct fakeroot root;
	char path[PATH_MAX + 64];

	(void)state;
	tree(&root);
	path_of(&root, "/res/0/out.txt", path, sizeof(path));
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(generate_bounded(&root, 0), -EINVAL);
	assert_int_equal(generate(&root, 0), -EINVAL);
	if (!strstr(error_text, "0/out.txt: not a regular file"))
		fail_msg("error '%s'", error_text);
	fakeroot_remove(&root);
}

/* The string value of "result" in test @test, or NULL. */
static const char *result_of(const char *test)
{
	static char value[64];
	char pattern[512];
	const char *obj, *end, *p;

	snprintf(pattern, sizeof(pattern), "\n    \"%s\": {", test);
	obj = strstr(generated, pattern);
	if (!obj)
		return NULL;
	end = strstr(obj + 1, "\n    }");
	p = strstr(obj, "\"result\": \"");
	if (!p || p > end)
		return NULL;
	p += strlen("\"result\": \"");
	snprintf(value, sizeof(value), "%.*s", (int)strcspn(p, "\""), p);
	return value;
}

/* No journal.txt: read as an empty journal, every test gets a result (piglit needs one). */
static void every_test_has_a_result(void **state)
{
	struct fakeroot root;
	char path[PATH_MAX + 64];

	(void)state;
	tree(&root);
	path_of(&root, "/res/0/journal.txt", path, sizeof(path));
	unlink(path);
	fakeroot_write(&root, "/res/0/dmesg.txt",
		       "6,1,1,-;[IGT] bin: starting subtest ghost\n6,2,2,-;more\n");
	assert_int_equal(generate(&root, 0), 0);
	assert_non_null(result_of("igt@bin"));
	assert_string_equal(result_of("igt@bin"), "incomplete");
	/* A subtest only the kernel log names. */
	assert_non_null(result_of("igt@bin@ghost"));
	assert_string_equal(result_of("igt@bin@ghost"), "incomplete");
	/* With subtests asked for, the first one is what was in flight. */
	fakeroot_write(&root, "/res/joblist.txt", "bin a,b\n");
	fakeroot_write(&root, "/res/0/dmesg.txt", "");
	assert_int_equal(generate(&root, 0), 0);
	assert_string_equal(result_of("igt@bin@a"), "incomplete");
	fakeroot_remove(&root);
}

/* The same refusals where the kernel has no openat2: O_NOFOLLOW per component. */
static void refusals_without_openat2(void **state)
{
	setenv("BCI_RESULTGEN_NO_OPENAT2", "1", 1);
	symlinks_are_refused(state);
	fifos_are_refused(state);
	unsetenv("BCI_RESULTGEN_NO_OPENAT2");
}

/*
 * The same refusals whether job folders are read ahead by threads (through
 * their io_uring, or with a system call each: BCI_RESULTGEN_NO_URING) or
 * one at a time.
 */
static void refusals_read_ahead_and_in_sequence(void **state)
{
	static const char *const threads[] = { "0", "1", "2" };

	for (int ring = 0; ring < 2; ring++) {
		if (ring)
			unsetenv("BCI_RESULTGEN_NO_URING");
		else
			setenv("BCI_RESULTGEN_NO_URING", "1", 1);
		for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
			setenv("BCI_RESULTGEN_THREADS", threads[i], 1);
			symlinks_are_refused(state);
			fifos_are_refused(state);
			every_test_has_a_result(state);
		}
	}
	unsetenv("BCI_RESULTGEN_THREADS");
}

/* The whole results.json with BCI_RESULTGEN_THREADS=@threads, malloc'd; its return in *@ret. */
static char *generate_whole(struct fakeroot *root, const char *threads, int *ret)
{
	char dir[PATH_MAX + 8], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct bci_resultgen_options options = { 0 };

	assert_non_null(f);
	options.warnings = f;	/* the warnings are compared too */
	setenv("BCI_RESULTGEN_THREADS", threads, 1);
	snprintf(dir, sizeof(dir), "%s/res", root->dir);
	*ret = bci_resultgen_write_options(dir, f, &options, error_text, sizeof(error_text));
	unsetenv("BCI_RESULTGEN_THREADS");
	fclose(f);
	return buf;
}

/* Whether this kernel gives the threads an io_uring (else they read with system calls). */
static bool kernel_has_uring(void)
{
	struct bci_uring r;

	if (bci_uring_init(&r, 4) < 0)
		return false;
	bci_uring_free(&r);
	return true;
}

/*
 * Read ahead or not, the same bytes: 150 jobs (more than the threads'
 * window), some without a folder or with a file for one, a file larger
 * than the threads read (left to the walk), an incomplete one, a comms
 * dump of exec packets only.
 */
static void read_ahead_gives_the_same_bytes(void **state)
{
	struct fakeroot root;
	char rel[64], path[PATH_MAX + 64], *one, *ahead, *two, *plain;
	int ret_one, ret_ahead, ret_two, ret_plain, fds;
	unsigned long chunks;
	FILE *f;

	(void)state;
	fakeroot_create(&root, "");
	fakeroot_write(&root, "/res/metadata.txt", "name : ahead\n");
	path_of(&root, "/res/joblist.txt", path, sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 150; i++)
		fprintf(f, "bin%d s%d\n", i / 10, i);
	fclose(f);
	for (int i = 0; i < 150; i++) {
		if (i % 37 == 5 || i == 77)
			continue;	/* never ran; 77: below */
		snprintf(rel, sizeof(rel), "/res/%d/journal.txt", i);
		fakeroot_write(&root, rel, i % 3 ? "s\nexit:0 (1.000s)\n" : "exit:1 (0.500s)\n");
		snprintf(rel, sizeof(rel), "/res/%d/out.txt", i);
		fakeroot_write(&root, rel, "Starting subtest: s\nSubtest s: SUCCESS (0.100s)\n");
		snprintf(rel, sizeof(rel), "/res/%d/err.txt", i);
		fakeroot_write(&root, rel, i % 4 ? "" : "stray\n");
		snprintf(rel, sizeof(rel), "/res/%d/dmesg.txt", i);
		fakeroot_write(&root, rel, "4,1,10,-;WARNING: at x.c\n6,2,20,-;[IGT] bin: exiting\n");
	}
	/* A file for a folder. */
	path_of(&root, "/res/77", path, sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	fakeroot_write(&root, "/res/100/bootci-incomplete.txt", "out.txt 10 ENOSPC\n");
	fakeroot_write(&root, "/res/101/comms", "");
	/* Larger than the threads read ahead (256 KiB). */
	path_of(&root, "/res/64/out.txt", path, sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 40000; i++)
		fputs("a line of output\n", f);
	fclose(f);

	fds = fakeroot_open_fds();
	one = generate_whole(&root, "0", &ret_one);
	ahead = generate_whole(&root, "1", &ret_ahead);
	chunks = gen_prefetch_ring_chunks();
	two = generate_whole(&root, "2", &ret_two);
	/* Where the kernel has io_uring, the threads read through it: 150 jobs, 19 chunks. */
	if (kernel_has_uring())
		assert_int_equal(gen_prefetch_ring_chunks() - chunks, 19);
	/* The threads with a system call each instead of their io_uring. */
	setenv("BCI_RESULTGEN_NO_URING", "1", 1);
	chunks = gen_prefetch_ring_chunks();
	plain = generate_whole(&root, "2", &ret_plain);
	assert_int_equal(gen_prefetch_ring_chunks(), chunks);
	unsetenv("BCI_RESULTGEN_NO_URING");
	/* Every file and folder the threads and the walk opened is closed. */
	assert_int_equal(fakeroot_open_fds(), fds);
	assert_int_equal(ret_one, 0);
	assert_int_equal(ret_ahead, 0);
	assert_int_equal(ret_two, 0);
	assert_int_equal(ret_plain, 0);
	assert_non_null(strstr(one, "a line of output"));
	assert_string_equal(one, ahead);
	assert_string_equal(one, two);
	assert_string_equal(one, plain);
	free(one);
	free(ahead);
	free(two);
	free(plain);
	fakeroot_remove(&root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unending_cut_lines_end),
		cmocka_unit_test(symlinks_are_refused),
		cmocka_unit_test(fifos_are_refused),
		cmocka_unit_test(refusals_without_openat2),
		cmocka_unit_test(every_test_has_a_result),
		cmocka_unit_test(refusals_read_ahead_and_in_sequence),
		cmocka_unit_test(read_ahead_gives_the_same_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
