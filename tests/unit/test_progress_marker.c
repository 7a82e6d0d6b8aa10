// SPDX-License-Identifier: MIT
/* lib/progress_marker.c: the executor's progress lines written, then read back as a console shows them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "progress_marker.h"
#include "testlist.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* @text as a serial console shows it: the kernel's stamp, then @prefix and @text. */
static void console_line(char *line, size_t size, const char *prefix, const char *text)
{
	snprintf(line, size, "[    3.416269] %s%s", prefix, text);
}

static void expect(const char *line, enum bci_progress_kind kind, unsigned number, unsigned total,
		   const char *name, const char *text)
{
	struct bci_progress_marker m;

	memset(&m, 0, sizeof(m));
	if (bci_progress_parse(line, strlen(line), &m) != kind)
		fail_msg("'%s': not read as kind %d", line, kind);
	if (kind == BCI_PROGRESS_NONE)
		return;
	assert_int_equal(m.kind, kind);
	assert_int_equal(m.number, number);
	assert_int_equal(m.total, total);
	assert_int_equal(m.name_len, strlen(name));
	assert_memory_equal(m.text, name, m.name_len);
	assert_int_equal(m.text_len, strlen(text));
	assert_memory_equal(m.text, text, m.text_len);
}

static void start_round_trip(void **state)
{
	char text[256], line[300];
	int n;

	(void)state;
	n = bci_progress_format_start(text, sizeof(text), 12, 340, "igt@kms_flip@basic", NULL, NULL);
	assert_int_equal(n, strlen("[12/340] igt@kms_flip@basic\n"));
	assert_string_equal(text, "[12/340] igt@kms_flip@basic\n");
	console_line(line, sizeof(line), BCI_PROGRESS_KMSG_PREFIX, text);
	expect(line, BCI_PROGRESS_START, 12, 340, "igt@kms_flip@basic", "igt@kms_flip@basic");

	bci_progress_format_start(text, sizeof(text), 13, 340, "igt@kms_flip@wf", "wf", "pipe-B");
	assert_string_equal(text, "[13/340] igt@kms_flip@wf (resumed: wf --dynamic-subtest pipe-B)\n");
	console_line(line, sizeof(line), BCI_PROGRESS_KMSG_PREFIX, text);
	expect(line, BCI_PROGRESS_START, 13, 340, "igt@kms_flip@wf",
	       "igt@kms_flip@wf (resumed: wf --dynamic-subtest pipe-B)");

	bci_progress_format_start(text, sizeof(text), 1, 1, "igt@a@b", "b,c", NULL);
	assert_string_equal(text, "[1/1] igt@a@b (resumed: b,c)\n");
	/* As dmesg.txt holds the record: no stamp, the record's header before it. */
	snprintf(line, sizeof(line), "6,812,3416269,-;" BCI_PROGRESS_KMSG_PREFIX "%s", text);
	expect(line, BCI_PROGRESS_START, 1, 1, "igt@a@b", "igt@a@b (resumed: b,c)");
}

static void end_round_trip(void **state)
{
	char text[256], line[300];

	(void)state;
	bci_progress_format_end(text, sizeof(text), 12, 340, "igt@kms_flip@basic", "pass", 1.24,
				"3m02s", "41m");
	assert_string_equal(text, "[12/340] igt@kms_flip@basic pass 1.2s (elapsed 3m02s, ETA 41m)");
	console_line(line, sizeof(line), BCI_PROGRESS_CONSOLE_PREFIX, text);
	strcat(line, "\r\n");
	expect(line, BCI_PROGRESS_END, 12, 340, "igt@kms_flip@basic", text + 9);

	bci_progress_format_end(text, sizeof(text), 3, 3, "igt@gem_exec (3 subtests)",
				"2 pass, 1 skip", 0.8, "0s", "0s");
	console_line(line, sizeof(line), BCI_PROGRESS_CONSOLE_PREFIX, text);
	expect(line, BCI_PROGRESS_END, 3, 3, "igt@gem_exec", text + 6);
}

static void format_refuses_and_cuts(void **state)
{
	char text[16];

	(void)state;
	assert_int_equal(bci_progress_format_start(text, sizeof(text), 0, 3, "igt@a", NULL, NULL),
			 -EINVAL);
	assert_int_equal(bci_progress_format_start(text, sizeof(text), 4, 3, "igt@a", NULL, NULL),
			 -EINVAL);
	assert_int_equal(bci_progress_format_end(text, sizeof(text), 1, 0, "igt@a", "pass", 0, "", ""),
			 -EINVAL);
	/* Cut to fit: what is kept still starts with its number. */
	assert_int_equal(bci_progress_format_start(text, sizeof(text), 1, 3, "igt@a_long_name@x",
						   NULL, NULL),
			 -ENOSPC);
	assert_string_equal(text, "[1/3] igt@a_lon");
}

static void not_markers(void **state)
{
	(void)state;
	expect("[    3.4] [bootci] console lines are stamped on this log's clock", BCI_PROGRESS_NONE, 0,
	       0, "", "");
	expect("[    3.4] bootci: warning: results: job 3", BCI_PROGRESS_NONE, 0, 0, "", "");
	expect("[bootci] [0/3] igt@a", BCI_PROGRESS_NONE, 0, 0, "", "");
	expect("[bootci] [4/3] igt@a", BCI_PROGRESS_NONE, 0, 0, "", "");
	expect("[bootci] [1/3]igt@a", BCI_PROGRESS_NONE, 0, 0, "", "");
	expect("[bootci] [1/] igt@a", BCI_PROGRESS_NONE, 0, 0, "", "");
	expect("[bootci] [1/99999999999] igt@a", BCI_PROGRESS_NONE, 0, 0, "", "");
	expect("[bootci] [1/3", BCI_PROGRESS_NONE, 0, 0, "", "");
	expect("[bootci] \n[1/3] igt@a", BCI_PROGRESS_NONE, 0, 0, "", "");
	/* The prefix past the line's first BCI_PROGRESS_PREFIX_WINDOW bytes is someone's text. */
	expect("a test wrote this on the serial console, then [bootci] [1/3] igt@a", BCI_PROGRESS_NONE,
	       0, 0, "", "");
	expect("[    3.416269][    T1] [bootci] [1/3] igt@a", BCI_PROGRESS_START, 1, 3, "igt@a",
	       "igt@a");
	expect("", BCI_PROGRESS_NONE, 0, 0, "", "");
	/* The first prefix is the line's, whatever its text holds. */
	expect("[ 3.1] bootci: [1/2] [bootci] [2/2] x pass 0.1s", BCI_PROGRESS_END, 1, 2, "[bootci]",
	       "[bootci] [2/2] x pass 0.1s");
	expect("[ 3.1] [bootci] [1/2] bootci: [2/2] x", BCI_PROGRESS_START, 1, 2, "bootci:",
	       "bootci: [2/2] x");
	/* The name ends at the line's end, a NUL too. */
	expect("[bootci] [1/3] igt@a\r\nnext", BCI_PROGRESS_START, 1, 3, "igt@a", "igt@a");
	expect("[bootci] [1/3] \n", BCI_PROGRESS_START, 1, 3, "", "");
	{
		struct bci_progress_marker m;
		static const char nul[] = "[bootci] [2/3] igt@a\0@b";

		assert_int_equal(bci_progress_parse(nul, sizeof(nul) - 1, &m), BCI_PROGRESS_START);
		assert_int_equal(m.text_len, 5);
	}
}

static void job_names(void **state)
{
	char *one[] = { "flip-vs-panning", NULL }, *dynamic[] = { "wf@pipe-A", NULL },
	     *three[] = { "a", "b", "c", NULL }, *none[] = { NULL };
	struct bci_joblist_entry e = { .binary = "kms_flip", .subtests = one, .count = 1 };
	char name[BCI_PROGRESS_NAME_SIZE];

	(void)state;
	bci_progress_job_name(&e, name, sizeof(name));
	assert_string_equal(name, "igt@kms_flip@flip-vs-panning");
	e.subtests = dynamic;
	bci_progress_job_name(&e, name, sizeof(name));
	assert_string_equal(name, "igt@kms_flip@wf@pipe-A");
	e.subtests = three;
	e.count = 3;
	bci_progress_job_name(&e, name, sizeof(name));
	assert_string_equal(name, "igt@kms_flip (3 subtests)");
	e.subtests = none;
	e.count = 0;
	bci_progress_job_name(&e, name, sizeof(name));
	assert_string_equal(name, "igt@kms_flip");
}

static bool runs(const char *name, const char *test)
{
	return bci_progress_job_runs(name, strlen(name), test);
}

static void which_tests_a_job_runs(void **state)
{
	(void)state;
	assert_true(runs("igt@kms_flip@basic", "igt@kms_flip@basic"));
	assert_true(runs("igt@kms_flip@basic (resumed: basic)", "igt@kms_flip@basic"));
	assert_true(runs("igt@kms_flip (3 subtests)", "igt@kms_flip@basic"));
	assert_true(runs("igt@kms_flip@basic", "igt@kms_flip@basic@pipe-A"));
	assert_false(runs("igt@kms_flip@basic", "igt@kms_flip@basic-vs"));
	assert_false(runs("igt@kms_flip", "igt@kms_flipper@x"));
	assert_false(runs("igt@kms_flip@basic", "igt@kms_flip"));
	assert_false(runs("", "igt@a@b"));
	/* Only @name_len bytes are the name. */
	assert_true(bci_progress_job_runs("igt@a@bc", 7, "igt@a@b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(start_round_trip),
		cmocka_unit_test(end_round_trip),
		cmocka_unit_test(format_refuses_and_cuts),
		cmocka_unit_test(not_markers),
		cmocka_unit_test(job_names),
		cmocka_unit_test(which_tests_a_job_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
