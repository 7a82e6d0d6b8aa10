// SPDX-License-Identifier: MIT
/* lib/results_dir.c: the results directory's line formats, writer and reader together. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "results_dir.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void boot_dirs(void **state)
{
	char name[32];
	unsigned n = 0;

	(void)state;
	snprintf(name, sizeof(name), BCI_RESULTS_BOOT_DIR, 7u);
	assert_string_equal(name, "boot-0007");
	assert_int_equal(bci_results_boot_dir_parse(name, &n), 1);
	assert_int_equal(n, 7);
	assert_int_equal(bci_results_boot_dir_parse("boot-", &n), 0);
	assert_int_equal(bci_results_boot_dir_parse("boot-12a", &n), 0);
	assert_int_equal(bci_results_boot_dir_parse("boot-99999999999", &n), 0);
	assert_int_equal(bci_results_boot_dir_parse("0", &n), 0);
}

static void job_journal_lines(void **state)
{
	struct bci_job_journal_line l;
	char line[64];

	(void)state;
	bci_job_journal_format_exit(line, sizeof(line), false, -11, 1.5);
	assert_string_equal(line, "exit:-11 (1.500s)\n");
	line[strlen(line) - 1] = '\0';
	assert_int_equal(bci_job_journal_parse_line(line, true, &l), 0);
	assert_int_equal(l.kind, BCI_JOB_JOURNAL_EXIT);
	assert_int_equal(l.code, -11);
	assert_true(l.time > 1.49 && l.time < 1.51);
	bci_job_journal_format_exit(line, sizeof(line), true, 0, 360);
	assert_string_equal(line, "timeout:0 (360.000s)\n");
	assert_int_equal(bci_job_journal_parse_line("timeout:-15", true, &l), 0);
	assert_int_equal(l.kind, BCI_JOB_JOURNAL_TIMEOUT);
	assert_int_equal(l.code, -15);
	assert_int_equal(bci_job_journal_parse_line("basic-plain", true, &l), 0);
	assert_int_equal(l.kind, BCI_JOB_JOURNAL_SUBTEST);
	assert_string_equal(l.subtest, "basic-plain");
	assert_int_equal(bci_job_journal_parse_line("", true, &l), 0);
	assert_int_equal(l.kind, BCI_JOB_JOURNAL_EMPTY);
	/* Malformed when whole; a cut last line is read leniently. */
	assert_int_equal(bci_job_journal_parse_line("exit:x", true, &l), -EINVAL);
	assert_int_equal(bci_job_journal_parse_line("exit:3 (1.0", true, &l), -EINVAL);
	assert_int_equal(bci_job_journal_parse_line("exit:3 (1.0", false, &l), 0);
	assert_int_equal(l.code, 3);
}

static void run_journal_lines(void **state)
{
	static const char *const good[] = {
		"boot 1 1700000000 6.18.0", "start 0", "dynamic 3 flip@pipe-A", "exit 3 98 1.500",
		"timeout 3 -15 360.000", "incomplete 2 1", "capped 4 3", "abort kernel tainted",
		"abort", "done",
	};
	static const char *const bad[] = {
		"", "star", "start", "start x", "start -1", "start 1x", "exit 3", "boot",
		"dynamic 3 nodyn", "incomplete 2", "capped 4", "reboot 1", "exit 3 0",
		"exit 3 0 1.0 out", "timeout 3 x 1.0", "exit 3 0 1.0 size=4",
	};
	struct bci_run_journal_line l, again;
	char line[BCI_RUN_JOURNAL_LINE_MAX + 8];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (bci_run_journal_parse_line(good[i], &l) < 0)
			fail_msg("'%s' refused", good[i]);
		/* What the writer makes of it is the same line. */
		bci_run_journal_format_line(line, sizeof(line), &l);
		line[strcspn(line, "\n")] = '\0';
		assert_string_equal(line, good[i]);
		assert_int_equal(bci_run_journal_parse_line(line, &again), 0);
		assert_int_equal(again.kind, l.kind);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (bci_run_journal_parse_line(bad[i], &l) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
	assert_int_equal(bci_run_journal_parse_line("exit 12 0 2.5", &l), 0);
	assert_int_equal(l.kind, BCI_RUN_JOURNAL_EXIT);
	assert_int_equal(l.job, 12);
	assert_string_equal(l.rest, "0 2.5");
	assert_int_equal(bci_run_journal_parse_line("dynamic 0 a@b", &l), 0);
	assert_string_equal(l.rest, "a@b");
}

/* An end's rest: status, seconds and the sizes of the files it had, both ways. */
static void run_journal_ends(void **state)
{
	static const char *const good[] = {
		"0 2.500", "-11 0.010", "98 1.500 out=120 err=0 dmesg=4096 comms=512",
		"0 0.000 out=7", "3 1.000 comms=16 out=2", "0 -1.500",
	};
	static const char *const bad[] = {
		"", "0", "x 1.0", "0 x", "0 nan", "0 1e10", "0 1.0 out", "0 1.0 out=", "0 1.0 out=x",
		"0 1.0 out=-1", "0 1.0 out=1x", "0 1.0 journal=3", "0 1.0 =3", "0 1.0 out=1 out=2", "0 1.0 size=4",
		"99999999999 1.0", "0 1.0x",
	};
	struct bci_run_journal_end end, again;
	char rest[256];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (bci_run_journal_end_parse(good[i], &end) < 0)
			fail_msg("'%s' refused", good[i]);
		bci_run_journal_end_format(rest, sizeof(rest), &end);
		assert_int_equal(bci_run_journal_end_parse(rest, &again), 0);
		assert_memory_equal(&again, &end, sizeof(end));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (bci_run_journal_end_parse(bad[i], &end) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
	assert_int_equal(bci_run_journal_end_parse("98 1.500 out=120 err=0 dmesg=4096 comms=512",
						   &end), 0);
	assert_int_equal(end.status, 98);
	assert_true(end.seconds == 1.5);
	assert_int_equal(end.bytes[BCI_RESULTS_FILE_JOURNAL], -1);
	assert_int_equal(end.bytes[BCI_RESULTS_FILE_OUT], 120);
	assert_int_equal(end.bytes[BCI_RESULTS_FILE_ERR], 0);
	assert_int_equal(end.bytes[BCI_RESULTS_FILE_DMESG], 4096);
	assert_int_equal(end.bytes[BCI_RUN_JOURNAL_END_COMMS], 512);
	/* Only the files it had are said, in one order; journal.txt's never is. */
	end.bytes[BCI_RESULTS_FILE_JOURNAL] = 9;
	end.bytes[BCI_RESULTS_FILE_ERR] = -1;
	bci_run_journal_end_format(rest, sizeof(rest), &end);
	assert_string_equal(rest, "98 1.500 out=120 dmesg=4096 comms=512");
	/* Cut to the buffer, it counts what it needed, as snprintf. */
	assert_int_equal(bci_run_journal_end_format(rest, 10, &end), (int)strlen("98 1.500 out=120 dmesg=4096 comms=512"));
	assert_int_equal(strlen(rest), 9);
}

static void key_value_lines(void **state)
{
	char text[] = "cycles 3\n\nnospace\n value\npass 2 of 3\nlast";
	char *cursor = text, *key, *value;

	(void)state;
	assert_int_equal(bci_results_kv_next(&cursor, &key, &value), 1);
	assert_string_equal(key, "cycles");
	assert_string_equal(value, "3");
	assert_int_equal(bci_results_kv_next(&cursor, &key, &value), 1);
	assert_string_equal(key, "pass");
	assert_string_equal(value, "2 of 3");
	assert_int_equal(bci_results_kv_next(&cursor, &key, &value), 0);
}

static void suspend_cycle_lines_round_trip(void **state)
{
	struct bci_suspend_cycle_line in = { "mem-0001", "pass", 12.5, 10.0, 2.5, 0.25, -1, "rtc" };
	struct bci_suspend_cycle_line out;
	char line[256];

	(void)state;
	bci_suspend_cycle_line_format(line, sizeof(line), &in);
	assert_string_equal(line, "mem-0001 pass 12.500 10.000 2.500 0.250 - rtc\n");
	assert_int_equal(bci_suspend_cycle_line_parse(line, &out), 0);
	assert_string_equal(out.cycle, "mem-0001");
	assert_string_equal(out.wake, "rtc");
	assert_true(out.kernel_resume < 0);
	assert_true(out.kernel_suspend > 0.249 && out.kernel_suspend < 0.251);
	in.wake[0] = '\0';
	bci_suspend_cycle_line_format(line, sizeof(line), &in);
	assert_int_equal(bci_suspend_cycle_line_parse(line, &out), 0);
	assert_string_equal(out.wake, "");
	/* A line cut by a crash is not a cycle. */
	assert_int_equal(bci_suspend_cycle_line_parse("mem-0002 pass 1.0 2.0", &out), -EINVAL);
}

static void suspend_summary(void **state)
{
	static const char cycles[] = "mem-0001 pass 3.000 2.000 1.000 0.100 0.500 rtc\n"
				     "mem-0002 fail 3.000 0.000 0.000 - - -\n"
				     "mem_devices-0001 pass 1.000 0.000 3.000 - - pm_test\n"
				     "mem-0003 pass 5.000 4.000 2.000 0.100 0.700 rtc\n"
				     "mem-0004 pa";
	struct bci_suspend_summary s;
	struct bci_suspend_spread spread;
	char text[512];
	long long count;

	(void)state;
	assert_int_equal(bci_suspend_summary_compute(cycles, sizeof(cycles) - 1, &s), 0);
	assert_int_equal(s.cycles, 4);
	assert_int_equal(s.pass, 3);
	assert_int_equal(s.fail, 1);
	bci_suspend_summary_format(text, sizeof(text), &s);
	assert_string_equal(text, "cycles 4\npass 3\nfail 1\nsuspended_seconds 2.000/3.000/4.000\n"
				  "latency_seconds 1.000/2.000/3.000\n"
				  "kernel_resume_seconds 0.500/0.600/0.700\n");
	assert_int_equal(bci_suspend_summary_value("4", &count, &spread), BCI_SUMMARY_COUNT);
	assert_int_equal(count, 4);
	assert_int_equal(bci_suspend_summary_value("0.5/0.6/0.7", &count, &spread), BCI_SUMMARY_SPREAD);
	assert_true(spread.median > 0.59 && spread.median < 0.61);
	assert_int_equal(bci_suspend_summary_value("-", &count, &spread), BCI_SUMMARY_TEXT);
	assert_int_equal(bci_suspend_summary_compute("", 0, &s), 0);
	bci_suspend_summary_format(text, sizeof(text), &s);
	assert_string_equal(text, "cycles 0\npass 0\nfail 0\nsuspended_seconds -\nlatency_seconds -\n"
				  "kernel_resume_seconds -\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(boot_dirs),
		cmocka_unit_test(job_journal_lines),
		cmocka_unit_test(run_journal_lines),
		cmocka_unit_test(run_journal_ends),
		cmocka_unit_test(key_value_lines),
		cmocka_unit_test(suspend_cycle_lines_round_trip),
		cmocka_unit_test(suspend_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
