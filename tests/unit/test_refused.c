// SPDX-License-Identifier: MIT
/*
 * store/refused.c: the records of the uploads serve refused, in a temporary
 * data folder: written, counted, listed newest first, forgotten, as JSON, and
 * a record that is not one named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/store/refused.h"
#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIGEST "e743a498997ce2033a8de24e3932a711172bfa13df579ecc7da84ae6c493c2a4"

static int setup(void **state)
{
	char *dir = malloc(PATH_MAX);

	assert_non_null(dir);
	snprintf(dir, PATH_MAX, "/tmp/test_refused.XXXXXX");
	assert_non_null(mkdtemp(dir));
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	bci_remove_tree(*state);
	free(*state);
	return 0;
}

static void add(const char *dir, const char *machine, const char *run, int64_t time,
		const char *reason)
{
	struct bci_refused r = { .size = 11394, .time = time, .count = 99 };
	char err[PATH_MAX + 256];

	snprintf(r.machine, sizeof(r.machine), "%s", machine);
	snprintf(r.run_id, sizeof(r.run_id), "%s", run);
	snprintf(r.sha256, sizeof(r.sha256), "%s", DIGEST);
	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	if (bci_refused_add(dir, &r, err, sizeof(err)) < 0)
		fail_msg("%s", err);
}

static void test_records(void **state)
{
	const char *dir = *state;
	struct bci_refused *list;
	char err[PATH_MAX + 256], *json = NULL;
	size_t count, len = 0;
	FILE *f;

	/* No folder yet: nothing refused. */
	assert_int_equal(bci_refused_list(dir, NULL, &list, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 0);
	free(list);

	add(dir, "lab-01", "r1", 1000, "entry 9 '1/out.txt': more than 67108864 bytes once unpacked");
	add(dir, "lab-02", "r2", 3000, "entry 1: a GNU tar header");
	/* The same run again: one record, the last refusal's, counted twice (the count given is ignored). */
	add(dir, "lab-01", "r1", 2000, "a reason with \"quotes\", a tab\t and a Latin-1 byte \xe9");
	assert_int_equal(bci_refused_list(dir, NULL, &list, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 2);
	assert_string_equal(list[0].run_id, "r2");
	assert_int_equal(list[0].count, 1);
	assert_string_equal(list[1].machine, "lab-01");
	assert_int_equal(list[1].time, 2000);
	assert_int_equal(list[1].count, 2);
	assert_int_equal(list[1].size, 11394);
	assert_string_equal(list[1].sha256, DIGEST);
	/* JSON writes text as UTF-8: the Latin-1 byte comes back as é. */
	assert_string_equal(list[1].reason, "a reason with \"quotes\", a tab\t and a Latin-1 byte \xc3\xa9");

	f = open_memstream(&json, &len);
	assert_non_null(f);
	assert_int_equal(bci_refused_json(f, list, count), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(json, "\"refused\": ["));
	assert_non_null(strstr(json, "\"reason\": \"a reason with \\\"quotes\\\", a tab\\t and"));
	assert_true(strstr(json, "\"run_id\": \"r2\"") < strstr(json, "\"run_id\": \"r1\""));
	free(json);
	free(list);

	/* One machine's. */
	assert_int_equal(bci_refused_list(dir, "lab-02", &list, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 1);
	free(list);
	assert_int_equal(bci_refused_list(dir, "../x", &list, &count, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'../x' is not a machine name");

	/* A reason at the limit whose bytes are not UTF-8 comes back longer: cut, not refused. */
	{
		char reason[BCI_REFUSED_REASON_MAX + 1];

		memset(reason, 0xe9, BCI_REFUSED_REASON_MAX);
		reason[BCI_REFUSED_REASON_MAX] = '\0';
		add(dir, "lab-03", "r3", 500, reason);
		assert_int_equal(bci_refused_list(dir, "lab-03", &list, &count, err, sizeof(err)), 0);
		assert_int_equal(count, 1);
		assert_int_equal(strlen(list[0].reason), BCI_REFUSED_REASON_MAX);
		free(list);
		assert_int_equal(bci_refused_forget(dir, "lab-03", "r3"), 0);
	}

	/* Accepted later: forgotten (and forgetting nothing is no error). */
	assert_int_equal(bci_refused_forget(dir, "lab-01", "r1"), 0);
	assert_int_equal(bci_refused_forget(dir, "lab-01", "r1"), 0);
	assert_int_equal(bci_refused_list(dir, NULL, &list, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 1);
	assert_string_equal(list[0].machine, "lab-02");
	free(list);
}

static void test_bad_records(void **state)
{
	const char *dir = *state;
	struct bci_refused r = { .time = 1 }, *list;
	char err[PATH_MAX + 256], path[PATH_MAX + 64];
	size_t count;

	snprintf(r.machine, sizeof(r.machine), "..");
	snprintf(r.run_id, sizeof(r.run_id), "r1");
	assert_int_equal(bci_refused_add(dir, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "refused upload: '../r1' is not a machine and run");

	add(dir, "lab-01", "r1", 1000, "why");
	snprintf(path, sizeof(path), "%s/refused/lab-01/r2.json", dir);
	assert_int_equal(bci_write_file_atomic(path, "{\"machine\": 1}", 14, 0640), 0);
	assert_int_equal(bci_refused_list(dir, NULL, &list, &count, err, sizeof(err)), -EINVAL);
	assert_null(list);
	assert_non_null(strstr(err, "/refused/lab-01/r2.json: not a refused upload's record"));
	/* A record that cannot be read is replaced by the next refusal of its run. */
	add(dir, "lab-01", "r2", 2000, "why");
	assert_int_equal(bci_refused_list(dir, NULL, &list, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 2);
	assert_int_equal(list[0].count, 1);
	free(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
