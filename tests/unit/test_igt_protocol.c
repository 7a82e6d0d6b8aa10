// SPDX-License-Identifier: MIT
/*
 * lib/igt_protocol.c: the one classifier of IGT output lines. The first
 * table lists the lines on which the executor's own classifiers
 * (executor/igt.c handle_out_line and is_protocol_line, before they were
 * switched to this module) disagreed with the results generator, with what
 * each said then and the single answer now.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "igt_protocol.h"
#include "results_dir.h"

#include <stdio.h>
#include <string.h>

struct disagreement {
	const char *line;
	/* the executor then: handle_out_line counted a result / saw a start;
	 * is_protocol_line kept it past the output limit */
	bool old_counted_result, old_started, old_protocol;
	enum bci_igt_line_kind now;
};

static const struct disagreement disagreements[] = {
	/* Prose starting with "Subtest": the executor kept it as protocol past the limit. */
	{ "Subtest foo failed.", false, false, true, BCI_IGT_LINE_OTHER },
	{ "Dynamic subtest x went wrong", false, false, true, BCI_IGT_LINE_OTHER },
	/* Any "Subtest ...:" counted as a result (the name may not hold a space). */
	{ "Subtest foo bar: FAIL (1.000s)", true, false, true, BCI_IGT_LINE_OTHER },
	{ "Subtest : SUCCESS (0.100s)", true, false, true, BCI_IGT_LINE_OTHER },
	/* "a:b" has no ": ", yet the executor counted an empty word: a pass. */
	{ "Subtest a:b", true, false, true, BCI_IGT_LINE_OTHER },
	{ "Subtest x.y: SUCCESS (0.1s)", true, false, true, BCI_IGT_LINE_OTHER },
	/* A start with an empty name: the executor did not see it start. */
	{ "Starting subtest: ", false, false, true, BCI_IGT_LINE_SUBTEST_START },
	{ "Starting dynamic subtest: ", false, false, true, BCI_IGT_LINE_DYNAMIC_START },
};

static void executor_disagreements_have_one_answer(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(disagreements) / sizeof(disagreements[0]); i++) {
		const struct disagreement *d = &disagreements[i];
		enum bci_igt_line_kind kind = bci_igt_line_classify(d->line, strlen(d->line));
		bool result = kind == BCI_IGT_LINE_SUBTEST_RESULT;
		bool started = kind == BCI_IGT_LINE_SUBTEST_START || kind == BCI_IGT_LINE_DYNAMIC_START;
		bool protocol = kind != BCI_IGT_LINE_OTHER;

		if (kind != d->now)
			fail_msg("'%s': kind %d, expected %d", d->line, kind, d->now);
		/* Each line is listed because one old view differs from the answer. */
		if (result == d->old_counted_result && started == d->old_started &&
		    protocol == d->old_protocol)
			fail_msg("'%s': no disagreement to show", d->line);
	}
}

static void lines_and_their_parts(void **state)
{
	struct bci_igt_line l;

	(void)state;
	assert_int_equal(bci_igt_line_parse("Subtest basic-plain: FAIL (0.5s)\n", 33, &l),
			 BCI_IGT_LINE_SUBTEST_RESULT);
	assert_int_equal(l.name_len, 11);
	assert_memory_equal(l.name, "basic-plain", 11);
	assert_int_equal(l.text_len, 11);
	assert_memory_equal(l.text, "FAIL (0.5s)", 11);
	assert_int_equal(bci_igt_line_parse("Starting subtest: a b\nSubtest x: y", 34, &l),
			 BCI_IGT_LINE_SUBTEST_START);
	assert_int_equal(l.name_len, 3);
	assert_int_equal(bci_igt_line_classify("Dynamic subtest d-1: SKIP", 25),
			 BCI_IGT_LINE_DYNAMIC_RESULT);
	assert_int_equal(bci_igt_line_classify("IGT-Version: 1.28", 17), BCI_IGT_LINE_VERSION);
	/* The newline ends the line: what follows cannot make it a result. */
	assert_int_equal(bci_igt_line_classify("Subtest a\n: FAIL", 16), BCI_IGT_LINE_OTHER);
	assert_int_equal(bci_igt_line_classify("", 0), BCI_IGT_LINE_OTHER);
	assert_int_equal(bci_igt_line_classify(" Subtest a: FAIL", 16), BCI_IGT_LINE_OTHER);
}

/* The writer's line reads back as what it wrote. */
static void result_lines_round_trip(void **state)
{
	char line[128];
	struct bci_igt_line l;
	double t = 0;
	int n;

	(void)state;
	n = bci_igt_line_format_result(line, sizeof(line), false, "flip", "CRASH", 0.0);
	assert_string_equal(line, "Subtest flip: CRASH (0.000s)\n");
	assert_int_equal(bci_igt_line_parse(line, (size_t)n, &l), BCI_IGT_LINE_SUBTEST_RESULT);
	assert_string_equal(bci_igt_result_from_word(l.text, l.text_len, &t), "crash");
	n = bci_igt_line_format_result(line, sizeof(line), true, "pipe-A", "SUCCESS", 1.25);
	assert_int_equal(bci_igt_line_parse(line, (size_t)n, &l), BCI_IGT_LINE_DYNAMIC_RESULT);
	assert_string_equal(bci_igt_result_from_word(l.text, l.text_len, &t), "pass");
	assert_true(t > 1.249 && t < 1.251);
	n = bci_igt_line_format_start(line, sizeof(line), false, "flip");
	assert_string_equal(line, "Starting subtest: flip\n");
	assert_int_equal(bci_igt_line_parse(line, (size_t)n, &l), BCI_IGT_LINE_SUBTEST_START);
	n = bci_igt_line_format_start(line, sizeof(line), true, "pipe-A");
	assert_string_equal(line, "Starting dynamic subtest: pipe-A\n");
	assert_int_equal(bci_igt_line_parse(line, (size_t)n, &l), BCI_IGT_LINE_DYNAMIC_START);
}

static void exit_codes_and_result_names(void **state)
{
	(void)state;
	assert_string_equal(bci_igt_result_from_exit(BCI_IGT_EXIT_SUCCESS), "pass");
	assert_string_equal(bci_igt_result_from_exit(BCI_IGT_EXIT_SKIP), "skip");
	assert_string_equal(bci_igt_result_from_exit(BCI_IGT_EXIT_INVALID), "skip");
	assert_string_equal(bci_igt_result_from_exit(BCI_IGT_EXIT_ABORT), "abort");
	assert_string_equal(bci_igt_result_from_exit(BCI_IGT_EXIT_FAILURE), "fail");
	assert_string_equal(bci_igt_result_from_exit(-11), "fail");
	assert_string_equal(bci_job_journal_result(BCI_RESULTS_EXIT_INCOMPLETE), "incomplete");
	assert_string_equal(bci_job_journal_result(BCI_RESULTS_EXIT_GRACEFUL), "notrun");
	assert_int_equal(bci_igt_result_index("crash"), 0);
	assert_int_equal(bci_igt_result_index("warn"), BCI_IGT_RESULT_COUNT - 1);
	assert_int_equal(bci_igt_result_index("dmesg-warn"), 3);
	assert_int_equal(bci_igt_result_index("bogus"), -1);
}

/* The whole-file parser marks exactly the lines the classifier calls protocol. */
static void output_marks_follow_the_classifier(void **state)
{
	static const char out[] = "Subtest foo failed.\nStarting subtest: a\nSubtest a b: FAIL\n"
				  "Subtest a: SUCCESS (0.1s)\n";
	struct bci_igt_output o;
	struct bci_igt_span s;

	(void)state;
	assert_int_equal(bci_igt_output_parse(&o, out, sizeof(out) - 1), 0);
	assert_int_equal(o.mark_count, 2);
	bci_igt_output_subtest(&o, "a", &s);
	assert_string_equal(s.result, "pass");
	bci_igt_output_release(&o);
}

/*
 * The lookups of subtests_found_by_name() in @out, whose last line (mark
 * @last) is cut short.
 */
static void subtest_lookups(const char *out, long last)
{
	struct bci_igt_output o;
	struct bci_igt_span s;

	assert_int_equal(bci_igt_output_parse(&o, out, strlen(out)), 0);
	/* The first of two starts; a result naming "a: b" is that name's. */
	bci_igt_output_subtest(&o, "a", &s);
	assert_int_equal(s.start_mark, 0);
	assert_int_equal(s.result_mark, 1);
	bci_igt_output_subtest(&o, "a: b", &s);
	assert_int_equal(s.result_mark, 1);
	assert_string_equal(s.result, "fail");
	/* The last line, cut short, matches any name it is the beginning of. */
	bci_igt_output_subtest(&o, "longer", &s);
	assert_int_equal(s.start_mark, last);
	assert_int_equal(s.result_mark, -1);
	bci_igt_output_subtest(&o, "other", &s);
	assert_int_equal(s.start_mark, -1);
	bci_igt_output_release(&o);
}

/*
 * Found through the subtest index (an output with many protocol lines) as a
 * scan of every line finds them (an output with a few, which is not indexed).
 */
static void subtests_found_by_name(void **state)
{
	static const char head[] = "Starting subtest: a\nSubtest a: b: FAIL (1.0s)\n"
				   "Starting subtest: a\nSubtest a: SUCCESS (2.0s)\n";
	static const char cut[] = "Starting subtest: lon";
	char out[4096];
	size_t len;

	(void)state;
	snprintf(out, sizeof(out), "%s%s", head, cut);
	subtest_lookups(out, 4);
	len = (size_t)snprintf(out, sizeof(out), "%s", head);
	for (int i = 0; i < 10; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len,
					"Starting subtest: x%d\nSubtest x%d: SUCCESS (0.1s)\n", i, i);
	snprintf(out + len, sizeof(out) - len, "%s", cut);
	subtest_lookups(out, 24);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(executor_disagreements_have_one_answer),
		cmocka_unit_test(lines_and_their_parts),
		cmocka_unit_test(result_lines_round_trip),
		cmocka_unit_test(exit_codes_and_result_names),
		cmocka_unit_test(output_marks_follow_the_classifier),
		cmocka_unit_test(subtests_found_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
