// SPDX-License-Identifier: MIT
/*
 * bci_results_walk(): every test results.json has, with the same result,
 * time and texts, handed out one at a time with its job; the run's facts
 * before and after; a callback's error stops the walk.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeroot.h"
#include "resultgen/resultgen.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct seen {
	int begins, ends, tests;
	char names[16][BCI_IGT_NAME_SIZE];
	char results[16][16];
	size_t jobs[16];
	char out[16][128];
	double ends_at[16];
	bool has_time[16];
	char uname[64];
	bool aborted, any_totals;
	unsigned long passes, fails;
	char binaries[8][BCI_IGT_NAME_SIZE];
	size_t binary_count;
	int fail_at;			/* return -EIO at this test (1-based); 0: never */
};

static int collect(enum bci_results_event event, const struct bci_results_run *run,
		   const struct bci_results_test *test, void *ctx)
{
	struct seen *s = ctx;

	switch (event) {
	case BCI_RESULTS_RUN_BEGIN:
		s->begins++;
		snprintf(s->uname, sizeof(s->uname), "%.*s", (int)run->uname.len, run->uname.ptr);
		assert_int_equal(s->tests, 0);
		return 0;
	case BCI_RESULTS_TEST:
		assert_int_equal(s->begins, 1);
		assert_non_null(test->result);
		if (s->tests < 16) {
			snprintf(s->names[s->tests], sizeof(s->names[0]), "%s", test->name);
			snprintf(s->results[s->tests], sizeof(s->results[0]), "%s", test->result);
			s->jobs[s->tests] = test->job;
			snprintf(s->out[s->tests], sizeof(s->out[0]), "%.*s",
				 (int)test->out.len, test->out.ptr ? test->out.ptr : "");
			s->ends_at[s->tests] = test->time_end;
			s->has_time[s->tests] = test->has_time;
		}
		s->tests++;
		return s->tests == s->fail_at ? -EIO : 0;
	case BCI_RESULTS_RUN_END:
		s->ends++;
		s->aborted = run->aborted;
		s->any_totals = run->any_totals;
		s->passes = run->totals[bci_igt_result_index("pass")];
		s->fails = run->totals[bci_igt_result_index("fail")];
		for (size_t i = 0; i < run->binary_count && i < 8; i++)
			snprintf(s->binaries[i], sizeof(s->binaries[0]), "%s", run->binaries[i].name);
		s->binary_count = run->binary_count;
		return 0;
	}
	return -EINVAL;
}

static void make_run(struct fakeroot *root)
{
	fakeroot_create(root, "");
	fakeroot_write(root, "/res/metadata.txt", "name : walk\n");
	fakeroot_write(root, "/res/uname.txt", "Linux box\n");
	fakeroot_write(root, "/res/joblist.txt", "kms a,b\nsimple\n");
	fakeroot_write(root, "/res/0/journal.txt", "a\nb\nexit:98 (2.000s)\n");
	fakeroot_write(root, "/res/0/out.txt", "Starting subtest: a\nSubtest a: SUCCESS (0.500s)\n"
			"Starting subtest: b\nSubtest b: FAIL (1.000s)\n");
	fakeroot_write(root, "/res/0/err.txt", "");
	fakeroot_write(root, "/res/0/dmesg.txt", "");
	fakeroot_write(root, "/res/1/journal.txt", "exit:0 (3.000s)\n");
	fakeroot_write(root, "/res/1/out.txt", "hello\n");
	fakeroot_write(root, "/res/1/err.txt", "");
	fakeroot_write(root, "/res/1/dmesg.txt", "");
	fakeroot_write(root, "/res/aborted.txt", "stopped\n");
}

static void walk_hands_out_every_test(void **state)
{
	struct fakeroot root;
	struct seen s = { 0 };
	char dir[PATH_MAX + 8], err[256];
	struct bci_resultgen_options options = { .warnings = stderr };

	(void)state;
	make_run(&root);
	snprintf(dir, sizeof(dir), "%s/res", root.dir);
	assert_int_equal(bci_results_walk(dir, &options, collect, &s, err, sizeof(err)), 0);
	assert_int_equal(s.begins, 1);
	assert_int_equal(s.ends, 1);
	assert_string_equal(s.uname, "Linux box");
	assert_int_equal(s.tests, 4);
	assert_string_equal(s.names[0], "igt@kms@a");
	assert_string_equal(s.results[0], "pass");
	assert_int_equal(s.jobs[0], 0);
	assert_true(s.has_time[0] && s.ends_at[0] > 0.49 && s.ends_at[0] < 0.51);
	assert_string_equal(s.out[0], "Starting subtest: a\nSubtest a: SUCCESS (0.500s)\n");
	assert_string_equal(s.names[1], "igt@kms@b");
	assert_string_equal(s.results[1], "fail");
	assert_string_equal(s.names[2], "igt@simple");
	assert_string_equal(s.results[2], "pass");
	assert_int_equal(s.jobs[2], 1);
	assert_true(s.ends_at[2] > 2.99 && s.ends_at[2] < 3.01);
	assert_string_equal(s.names[3], "igt@runner@aborted");
	assert_string_equal(s.results[3], "fail");
	assert_true(s.jobs[3] == BCI_RESULTS_NO_JOB);
	assert_true(s.aborted && s.any_totals);
	assert_int_equal(s.passes, 2);
	assert_int_equal(s.fails, 2);
	assert_int_equal(s.binary_count, 3);
	assert_string_equal(s.binaries[0], "igt@kms");
	assert_string_equal(s.binaries[2], "igt@runner");
	fakeroot_remove(&root);
}

/* The callback's error ends the walk at once and is what it returns. */
static void walk_stops_at_a_callback_error(void **state)
{
	struct fakeroot root;
	struct seen s = { .fail_at = 2 };
	char dir[PATH_MAX + 8], err[256];

	(void)state;
	make_run(&root);
	snprintf(dir, sizeof(dir), "%s/res", root.dir);
	assert_int_equal(bci_results_walk(dir, NULL, collect, &s, err, sizeof(err)), -EIO);
	assert_int_equal(s.tests, 2);
	assert_int_equal(s.ends, 0);
	fakeroot_remove(&root);
}

/* The walk and results.json agree: every test walked is in the document with its result. */
static void walk_and_results_json_agree(void **state)
{
	struct fakeroot root;
	struct seen s = { 0 };
	char dir[PATH_MAX + 8], err[256], *json = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	make_run(&root);
	snprintf(dir, sizeof(dir), "%s/res", root.dir);
	assert_int_equal(bci_results_walk(dir, NULL, collect, &s, err, sizeof(err)), 0);
	f = open_memstream(&json, &len);
	assert_int_equal(bci_resultgen_write(dir, f, err, sizeof(err)), 0);
	fclose(f);
	for (int i = 0; i < s.tests; i++) {
		char key[BCI_IGT_NAME_SIZE + 16], result[64];
		const char *at;

		snprintf(key, sizeof(key), "\n    \"%s\": {", s.names[i]);
		at = strstr(json, key);
		assert_non_null(at);
		snprintf(result, sizeof(result), "\"result\": \"%s\"", s.results[i]);
		assert_non_null(strstr(at, result));
	}
	free(json);
	fakeroot_remove(&root);
}

/* Counts BCI_RESULTS_TEST events only: a per-job walk hands out no run events. */
static int collect_tests(enum bci_results_event event, const struct bci_results_run *run,
			 const struct bci_results_test *test, void *ctx)
{
	struct seen *s = ctx;

	assert_int_equal(event, BCI_RESULTS_TEST);
	s->begins = 1;	/* collect() wants a begin before any test */
	return collect(event, run, test, ctx);
}

/*
 * One job at a time gives each job's tests exactly as the whole walk does; the joblist
 * and settings are read once, so a job folder written after the reader opened is read
 * as it is at each walk; a job past the joblist is an error naming it.
 */
static void job_walk_gives_the_whole_walks_judgement(void **state)
{
	struct bci_results_job_reader *reader;
	struct fakeroot root;
	struct seen whole = { 0 }, one = { 0 };
	char dir[PATH_MAX + 8], err[256];

	(void)state;
	make_run(&root);
	snprintf(dir, sizeof(dir), "%s/res", root.dir);
	assert_int_equal(bci_results_walk(dir, NULL, collect, &whole, err, sizeof(err)), 0);
	assert_int_equal(bci_results_job_reader_new(dir, NULL, &reader, err, sizeof(err)), 0);
	for (size_t job = 0; job < 2; job++)
		assert_int_equal(bci_results_job_walk(reader, job, NULL, collect_tests, &one, err,
						      sizeof(err)), 0);
	/* The whole walk's last test is igt@runner@aborted, which belongs to no job. */
	assert_int_equal(one.tests, whole.tests - 1);
	for (int i = 0; i < one.tests; i++) {
		assert_string_equal(one.names[i], whole.names[i]);
		assert_string_equal(one.results[i], whole.results[i]);
		assert_int_equal(one.jobs[i], whole.jobs[i]);
		assert_string_equal(one.out[i], whole.out[i]);
	}
	/* Job 1 rewritten (it ran again, and skipped): the next walk judges what is there now. */
	fakeroot_write(&root, "/res/1/journal.txt", "exit:77 (0.100s)\n");
	memset(&one, 0, sizeof(one));
	assert_int_equal(bci_results_job_walk(reader, 1, NULL, collect_tests, &one, err, sizeof(err)), 0);
	assert_int_equal(one.tests, 1);
	assert_string_equal(one.names[0], "igt@simple");
	assert_string_equal(one.results[0], "skip");
	assert_int_equal(bci_results_job_walk(reader, 2, NULL, collect_tests, &one, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "joblist.txt: no job 2"));
	bci_results_job_reader_free(reader);
	fakeroot_remove(&root);
}

/* A reader of a folder that is no results directory says why. */
static void job_reader_names_what_is_missing(void **state)
{
	struct bci_results_job_reader *reader = (void *)1;
	struct fakeroot root;
	char dir[PATH_MAX + 8], err[256];

	(void)state;
	fakeroot_create(&root, "");
	fakeroot_write(&root, "/res/joblist.txt", "kms a\n");
	snprintf(dir, sizeof(dir), "%s/res", root.dir);
	assert_int_equal(bci_results_job_reader_new(dir, NULL, &reader, err, sizeof(err)), -ENOENT);
	assert_null(reader);
	assert_non_null(strstr(err, "metadata.txt: missing"));
	fakeroot_write(&root, "/res/metadata.txt", "name : walk\n");
	fakeroot_write(&root, "/res/joblist.txt", "kms a\n\n");
	assert_int_equal(bci_results_job_reader_new(dir, NULL, &reader, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "joblist.txt:2: no test binary named"));
	fakeroot_remove(&root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(walk_hands_out_every_test),
		cmocka_unit_test(walk_stops_at_a_callback_error),
		cmocka_unit_test(walk_and_results_json_agree),
		cmocka_unit_test(job_walk_gives_the_whole_walks_judgement),
		cmocka_unit_test(job_reader_names_what_is_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
