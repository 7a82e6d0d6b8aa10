// SPDX-License-Identifier: MIT
/* lib/testlist.c: testlist lines, and suspend cycles from the configuration inserted into a plan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testlist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A plan from lines "<binary> [<subtest>,...]", as the planner would have made it. */
static void plan(struct bci_joblist *jobs, const char *text)
{
	char err[256] = "";

	memset(jobs, 0, sizeof(*jobs));
	assert_int_equal(bci_joblist_parse("plan", text, strlen(text), jobs, err, sizeof(err)), 0);
}

/* The joblist.txt text of @jobs, in a static buffer. */
static const char *format(const struct bci_joblist *jobs)
{
	static char buf[8192];
	char *text;
	size_t len;

	assert_int_equal(bci_joblist_format(jobs, &text, &len), 0);
	assert_true(len < sizeof(buf));
	memcpy(buf, text, len + 1);
	free(text);
	return buf;
}

static void suspend_items_keep_their_grammar(void **state)
{
	struct bci_test_name name;
	char err[256] = "";

	(void)state;
	assert_int_equal(bci_testlist_parse_line("bootci@suspend@mem_devices@12", &name, err,
						 sizeof(err)),
			 1);
	assert_string_equal(name.binary, "bootci_suspend");
	assert_string_equal(name.subtest, "mem_devices");
	assert_string_equal(name.dynamic, "12");
	assert_int_equal(bci_testlist_parse_line("bootci@suspend@mem@0", &name, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "'bootci@suspend@mem@0': expected "
				 "bootci@suspend@<state>[_<pm_test>]@<count> (count 1-100000)");
	/* A count is digits only. */
	assert_int_equal(bci_testlist_parse_line("bootci@suspend@mem@+2", &name, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(bci_testlist_parse_line("bootci@suspend@m!m@2", &name, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "'bootci@suspend@m!m@2': bad suspend state 'm!m'");
}

/* The grammar's one home: kinds in specs and testlists, and the planned cycle names. */
static void cycle_kinds_and_names(void **state)
{
	static const char *const bad[] = { "mem", "mem-", "mem-001", "mem-0000", "mem-1234567890",
					   "nap-0001", "mem_nap-0001", "mem_-0001", "-0001",
					   "mem-00a1", "mem-0001_core" };
	struct bci_testlist_cycle_name n;
	struct bci_testlist_cycle specs[BCI_TESTLIST_CYCLE_SPECS_MAX];
	struct bci_test_name name;
	char err[256];
	size_t count;

	(void)state;
	assert_true(bci_testlist_cycle_kind_valid("freeze"));
	assert_true(bci_testlist_cycle_kind_valid("disk_core"));
	assert_false(bci_testlist_cycle_kind_valid("hibernate"));
	assert_false(bci_testlist_cycle_kind_valid("mem_"));
	assert_int_equal(bci_testlist_cycle_name_parse("mem_devices-0003", &n), 0);
	assert_string_equal(n.state, "mem");
	assert_string_equal(n.pm_test, "devices");
	assert_int_equal(n.number, 3);
	assert_int_equal(bci_testlist_cycle_name_parse("freeze-123456789", &n), 0);
	assert_int_equal(n.number, 123456789);
	assert_string_equal(n.pm_test, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (bci_testlist_cycle_name_parse(bad[i], &n) != -EINVAL)
			fail_msg("'%s' parsed", bad[i]);
	/* An unknown state is refused where it is written, with what is known. */
	assert_int_equal(bci_testlist_parse_line("bootci@suspend@hibernate@2", &name, err,
						 sizeof(err)), -EINVAL);
	assert_string_equal(err, "'bootci@suspend@hibernate@2': unknown state or pm_test level "
				 "(states freeze, standby, mem, disk; pm_test freezer, devices, "
				 "platform, processors, core)");
	assert_int_equal(bci_testlist_cycles_parse("suspend_after", "mem@1 mem_nap@1", specs, &count,
						   err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "suspend_after: 'mem_nap@1': unknown state or pm_test level"));
}

static void cycle_specs_parse(void **state)
{
	struct bci_testlist_cycle specs[BCI_TESTLIST_CYCLE_SPECS_MAX];
	char err[256] = "";
	size_t count = 99;

	(void)state;
	assert_int_equal(bci_testlist_cycles_parse("suspend_before", "", specs, &count, err,
						   sizeof(err)),
			 0);
	assert_int_equal(count, 0);
	assert_int_equal(bci_testlist_cycles_parse("suspend_before", " \tmem@3   freeze_devices@1 ",
						   specs, &count, err, sizeof(err)),
			 0);
	assert_int_equal(count, 2);
	assert_string_equal(specs[0].cycle, "mem");
	assert_int_equal(specs[0].count, 3);
	assert_string_equal(specs[1].cycle, "freeze_devices");
	assert_int_equal(specs[1].count, 1);
}

static void bad_cycle_specs_name_key_and_value(void **state)
{
	static const char *const bad[] = { "mem", "mem@", "@3", "mem@0", "mem@x", "mem@3x",
					   "mem@100001", "mem@-1", "mem@1@2" };
	struct bci_testlist_cycle specs[BCI_TESTLIST_CYCLE_SPECS_MAX];
	char err[256], expected[256], many[512] = "";
	size_t count;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(bci_testlist_cycles_parse("suspend_after", bad[i], specs, &count, err,
							   sizeof(err)),
				 -EINVAL);
		snprintf(expected, sizeof(expected),
			 "suspend_after: '%s': expected <state>[_<pm_test>]@<count> (count 1-100000)",
			 bad[i]);
		assert_string_equal(err, expected);
	}
	/* The bad one among good ones is named. */
	assert_int_equal(bci_testlist_cycles_parse("suspend_between", "mem@1 s/x@2 freeze@1", specs,
						   &count, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "suspend_between: 's/x@2': bad suspend state 's/x'");
	for (int i = 0; i <= BCI_TESTLIST_CYCLE_SPECS_MAX; i++)
		strcat(many, "mem@1 ");
	assert_int_equal(bci_testlist_cycles_parse("suspend_between", many, specs, &count, err,
						   sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "more than 16 cycle specs"));
}

static void cycles_go_before_between_and_after_tests(void **state)
{
	struct bci_joblist jobs;
	char err[256] = "";

	(void)state;
	plan(&jobs, "a one\nb\nc x,y\n");
	assert_int_equal(bci_joblist_add_cycles(&jobs, "mem@2", "freeze@1 mem_devices@1", "mem@1",
						err, sizeof(err)),
			 0);
	assert_string_equal(format(&jobs),
			    "bootci_suspend mem-0001\nbootci_suspend mem-0002\n"
			    "a one\n"
			    "bootci_suspend freeze-0001\nbootci_suspend mem_devices-0001\n"
			    "b\n"
			    "bootci_suspend freeze-0002\nbootci_suspend mem_devices-0002\n"
			    "c x,y\n"
			    "bootci_suspend mem-0003\n");
	bci_joblist_clear(&jobs);
}

static void testlist_cycles_are_not_tests_and_are_renumbered(void **state)
{
	struct bci_joblist jobs;
	char err[256] = "";

	(void)state;
	/* As planned from: a, bootci@suspend@mem@1, b, bootci@suspend@mem@2, bootci@suspend@freeze@1 */
	plan(&jobs, "a one\nbootci_suspend mem-0001\nb two\nbootci_suspend mem-0002\n"
		    "bootci_suspend mem-0003\nbootci_suspend freeze-0001\n");
	assert_int_equal(bci_joblist_add_cycles(&jobs, "mem@1", "mem@1", "", err, sizeof(err)), 0);
	/* One between-cycle, after the testlist's own; every mem cycle numbered in plan order. */
	assert_string_equal(format(&jobs),
			    "bootci_suspend mem-0001\n"
			    "a one\n"
			    "bootci_suspend mem-0002\n"
			    "bootci_suspend mem-0003\n"
			    "b two\n"
			    "bootci_suspend mem-0004\nbootci_suspend mem-0005\n"
			    "bootci_suspend freeze-0001\n");
	bci_joblist_clear(&jobs);
}

static void between_needs_two_tests(void **state)
{
	struct bci_joblist jobs;
	char err[256] = "";

	(void)state;
	plan(&jobs, "a one\n");
	assert_int_equal(bci_joblist_add_cycles(&jobs, "", "mem@5", "", err, sizeof(err)), 0);
	assert_string_equal(format(&jobs), "a one\n");
	bci_joblist_clear(&jobs);

	/* A testlist of cycles only: before and after apply, between has nothing to go between. */
	plan(&jobs, "bootci_suspend disk-0001\n");
	assert_int_equal(bci_joblist_add_cycles(&jobs, "disk@1", "disk@1", "freeze_core@2", err,
						sizeof(err)),
			 0);
	assert_string_equal(format(&jobs), "bootci_suspend disk-0001\nbootci_suspend disk-0002\n"
					   "bootci_suspend freeze_core-0001\n"
					   "bootci_suspend freeze_core-0002\n");
	bci_joblist_clear(&jobs);
}

static void no_cycles_leave_the_plan_alone(void **state)
{
	struct bci_joblist jobs;
	struct bci_joblist_entry *entries;
	char err[256] = "";

	(void)state;
	plan(&jobs, "a one\nbootci_suspend mem-0001\nb\n");
	entries = jobs.entries;
	assert_int_equal(bci_joblist_add_cycles(&jobs, "", " ", "", err, sizeof(err)), 0);
	assert_ptr_equal(jobs.entries, entries);
	assert_string_equal(format(&jobs), "a one\nbootci_suspend mem-0001\nb\n");
	bci_joblist_clear(&jobs);
}

static void bad_or_too_many_cycles_leave_the_plan_alone(void **state)
{
	struct bci_joblist jobs;
	char err[256] = "";

	(void)state;
	plan(&jobs, "a\nb\nc\n");
	assert_int_equal(bci_joblist_add_cycles(&jobs, "mem@1", "mem@1", "hibernate", err,
						sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "suspend_after: 'hibernate': expected <state>[_<pm_test>]@<count> "
				 "(count 1-100000)");
	assert_string_equal(format(&jobs), "a\nb\nc\n");

	/* Two gaps of 50000 and one more cycle: past the limit. */
	assert_int_equal(bci_joblist_add_cycles(&jobs, "", "mem@50000", "", err, sizeof(err)), 0);
	assert_int_equal(jobs.count, 100003);
	bci_joblist_clear(&jobs);
	plan(&jobs, "a\nb\nc\n");
	assert_int_equal(bci_joblist_add_cycles(&jobs, "mem@1", "mem@50000", "", err, sizeof(err)),
			 -E2BIG);
	assert_string_equal(err, "suspend_before, suspend_between, suspend_after: 100001 cycles for "
				 "3 tests, more than 100000");
	assert_string_equal(format(&jobs), "a\nb\nc\n");
	bci_joblist_clear(&jobs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(suspend_items_keep_their_grammar),
		cmocka_unit_test(cycle_kinds_and_names),
		cmocka_unit_test(cycle_specs_parse),
		cmocka_unit_test(bad_cycle_specs_name_key_and_value),
		cmocka_unit_test(cycles_go_before_between_and_after_tests),
		cmocka_unit_test(testlist_cycles_are_not_tests_and_are_renumbered),
		cmocka_unit_test(between_needs_two_tests),
		cmocka_unit_test(no_cycles_leave_the_plan_alone),
		cmocka_unit_test(bad_or_too_many_cycles_leave_the_plan_alone),
	};

	return cmocka_run_group_tests_name("testlist", tests, NULL, NULL);
}
