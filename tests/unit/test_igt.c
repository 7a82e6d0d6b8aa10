// SPDX-License-Identifier: MIT
/*
 * The IGT engine on fake root trees, driving the IGT-protocol fixture
 * programs: the plan, the results directory in igt_runner's layout (checked
 * through the results generator, as igt_runner's own tools would read it),
 * timeouts, the output limit, and resuming after a boot that died.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "executor.h"
#include "igt/igt.h"
#include "fakeroot.h"
#include "fsutil.h"
#include "resultgen/resultgen.h"
#include "progress_marker.h"
#include "../../aggregator/master/serve/console_log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fixture {
	struct fakeroot root;
	struct bci_executor ex;
	char json[1 << 20];
	char console[1 << 16];
};

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct fixture));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unsetenv("BOOTCI_FIXTURE_FLOOD_MIB");
	unsetenv("BOOTCI_FIXTURE_TAINTED");
	fakeroot_executor_release(&f->root, &f->ex);
	free(f);
	return 0;
}

/* A fake tree whose IGT folder holds the fixtures, with @testlist and @cmdline. */
static void start(struct fixture *f, const char *testlist, const char *cmdline)
{
	char link[PATH_MAX + 64], fixtures[PATH_MAX], full[2048];

	snprintf(full, sizeof(full),
		 "bootci.testlist=/etc/bootci/testlist bootci.watchdog_timeout=off bootci.run_id=t %s",
		 cmdline);
	fakeroot_executor(&f->root, &f->ex, full);
	fakeroot_write(&f->root, "/etc/bootci/testlist", testlist);
	snprintf(fixtures, sizeof(fixtures), "%s", fixture_path("igt_basic"));
	snprintf(link, sizeof(link), "%s/usr/libexec", f->root.dir);
	assert_int_equal(bci_mkdir_p(link, 0755), 0);
	strcat(link, "/igt-gpu-tools");
	assert_int_equal(symlink(dirname(fixtures), link), 0);
	assert_int_equal(bci_signals_setup(&f->ex), 0);
}

/* bci_igt_run() with the console (stderr) kept in f->console, and shown as usual after. */
static int run_keeping_console(struct fixture *f)
{
	char path[PATH_MAX + 16];
	const char *text;
	int saved, fd, ret;

	snprintf(path, sizeof(path), "%s/console.log", f->root.dir);
	fflush(stderr);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	close(fd);
	ret = bci_igt_run(&f->ex);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	text = fakeroot_read(&f->root, "/console.log");
	snprintf(f->console, sizeof(f->console), "%s", text ? text : "");
	fputs(f->console, stderr);
	return ret;
}

static long monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void generate(struct fixture *f)
{
	char err[512] = "";
	FILE *out = fmemopen(f->json, sizeof(f->json) - 1, "w");

	assert_non_null(out);
	if (bci_resultgen_write(f->ex.run_dir, out, err, sizeof(err)) < 0)
		fail_msg("results generator: %s", err);
	fputc('\0', out);
	fclose(out);
}

/* The "result" of test @name in the generated results.json, or "" when absent. */
static const char *result_of(struct fixture *f, const char *name)
{
	static char result[64];
	char key[512];
	const char *p, *r;

	snprintf(key, sizeof(key), "\"%s\": {", name);
	p = strstr(f->json, key);
	result[0] = '\0';
	if (!p || !(r = strstr(p, "\"result\": \"")))
		return result;
	r += strlen("\"result\": \"");
	snprintf(result, sizeof(result), "%.*s", (int)strcspn(r, "\""), r);
	return result;
}

static const char *run_file(struct fixture *f, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/results/runs/t/%s", name);
	return fakeroot_read(&f->root, path);
}

static void plan_and_results(void **state)
{
	struct fixture *f = *state;

	start(f,
	      "# the basic outcomes\n"
	      "igt@igt_basic@pass\nigt@igt_basic@fail\nigt@igt_basic@skip\n"
	      "igt@igt_basic@warn-stderr\nigt@igt_basic@crash\n"
	      "igt@igt_simple\n"
	      "igt@igt_dynamic\n",
	      "bootci.exclude=with-panic|with-crash");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	/* Written once, before the first job: lines naming a binary were listed. */
	assert_string_equal(run_file(f, "joblist.txt"),
			    "igt_basic pass\nigt_basic fail\nigt_basic skip\nigt_basic warn-stderr\n"
			    "igt_basic crash\nigt_simple\nigt_dynamic mixed\nigt_dynamic all-skip\n");
	assert_non_null(strstr(run_file(f, "0/journal.txt"), "pass\nexit:0 ("));
	/* The environment the engine gives a test: IGT's sentinel copies on stderr. */
	assert_non_null(strstr(run_file(f, "0/err.txt"), "Starting subtest: pass\n"));
	assert_non_null(strstr(run_file(f, "1/journal.txt"), "fail\nexit:98 ("));
	assert_non_null(strstr(run_file(f, "4/journal.txt"), "crash\nexit:-11 ("));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"),
			       "start 7\ndynamic 7 all-skip@dyn-skip\nexit 7 77 "));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "\ndone\n"));
	assert_non_null(run_file(f, "metadata.txt"));
	assert_non_null(run_file(f, "endtime.txt"));

	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_basic@fail"), "fail");
	assert_string_equal(result_of(f, "igt@igt_basic@skip"), "skip");
	assert_string_equal(result_of(f, "igt@igt_basic@warn-stderr"), "warn");
	assert_string_equal(result_of(f, "igt@igt_basic@crash"), "crash");
	assert_string_equal(result_of(f, "igt@igt_simple"), "pass");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-fail"), "fail");
	assert_string_equal(result_of(f, "igt@igt_dynamic@all-skip@dyn-skip"), "skip");
	/* The dynamic subtests were journalled for resuming. */
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "dynamic 6 mixed@dyn-fail\n"));
}

static void include_selects_tests(void **state)
{
	struct fixture *f = *state;

	/* Named subtests and listed ones alike; exclude still applies to what include keeps. */
	start(f, "igt@igt_basic@pass\nigt@igt_basic@fail\nigt@igt_simple\nigt@igt_dynamic\n",
	      "bootci.include=^igt@igt_(basic@pass|dynamic@) bootci.exclude=all-skip|with-panic|with-crash");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_string_equal(run_file(f, "joblist.txt"), "igt_basic pass\nigt_dynamic mixed\n");
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_basic@fail"), "");
	assert_string_equal(result_of(f, "igt@igt_simple"), "");
}

static void include_selecting_nothing_is_an_error(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\nigt@igt_simple\n", "bootci.include=^igt@kms_");
	assert_int_equal(bci_igt_run(&f->ex), -ENOENT);
	assert_null(run_file(f, "joblist.txt"));
	fakeroot_executor_release(&f->root, &f->ex);
	start(f, "igt@igt_basic@pass\n", "bootci.include=(pass");
	assert_int_equal(run_keeping_console(f), -EINVAL);
	assert_non_null(strstr(f->console, "error: include: bad regular expression '(pass': "));
	assert_null(run_file(f, "joblist.txt"));
}

static void multiple_mode_groups_subtests(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\nigt@igt_basic@skip\nigt@igt_simple\nigt@igt_basic@fail\n",
	      "bootci.multiple_mode=yes");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_string_equal(run_file(f, "joblist.txt"),
			    "igt_basic pass,skip\nigt_simple\nigt_basic fail\n");
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_basic@skip"), "skip");
	assert_string_equal(result_of(f, "igt@igt_basic@fail"), "fail");
}

/*
 * A subtest skipped in its binary's igt_fixture prints its result with no start
 * line (issue 9 item 2): journalled anyway, as igt_runner does, each gets its
 * result in multiple mode instead of vanishing.
 */
static void multiple_mode_journals_subtests_skipped_in_the_fixture(void **state)
{
	struct fixture *f = *state;
	const char *journal;

	start(f, "igt@igt_fixture_skip\n", "bootci.multiple_mode=yes");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_string_equal(run_file(f, "joblist.txt"), "igt_fixture_skip first,second,third\n");
	journal = run_file(f, "0/journal.txt");
	assert_non_null(journal);
	/* igt_runner's journal: the subtests in order, then the exit line. */
	assert_memory_equal(journal, "first\nsecond\nthird\nexit:0 ", strlen("first\nsecond\nthird\nexit:0 "));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_fixture_skip@first"), "pass");
	assert_string_equal(result_of(f, "igt@igt_fixture_skip@second"), "skip");
	assert_string_equal(result_of(f, "igt@igt_fixture_skip@third"), "skip");
}

static void suspend_cycles_are_planned_as_jobs(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\nbootci@suspend@mem@2\nbootci@suspend@freeze@1\n"
		 "bootci@suspend@mem_devices@1\nbootci@suspend@mem@1\n", "");
	/* A fake machine that offers the states but has no RTC to wake it: cycles fail unslept. */
	fakeroot_write(&f->root, "/sys/power/state", "freeze mem disk\n");
	fakeroot_write(&f->root, "/sys/power/mem_sleep", "s2idle [deep]\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_string_equal(run_file(f, "joblist.txt"),
			    "igt_basic pass\nbootci_suspend mem-0001\nbootci_suspend mem-0002\n"
			    "bootci_suspend freeze-0001\nbootci_suspend mem_devices-0001\n"
			    "bootci_suspend mem-0003\n");
	assert_non_null(strstr(run_file(f, "1/journal.txt"), "mem-0001\nexit:"));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
	assert_string_equal(result_of(f, "bootci@suspend@mem@0001"), "fail");
	assert_string_equal(result_of(f, "bootci@suspend@mem@0003"), "fail");
	assert_non_null(run_file(f, "suspend-summary.txt"));
	/* The summary rides along in results.json, where piglit readers ignore it. */
	/* with every cycle's result as results.json judged it (a cycle that never ended too) */
	const char *summary = strstr(f->json, "\"bootci_suspend_summary\": {\n    \"results\": {");
	assert_non_null(summary);
	assert_non_null(strstr(summary, "\"skip\": 1,"));
	assert_non_null(strstr(summary, "\"fail\": 4,"));
	assert_non_null(strstr(summary, "\"cycles\": 4,"));
}

/*
 * A cycle whose line cannot be added to suspend-cycles.txt (a full partition, here /dev/full in
 * its place): said, and marked in the cycle's job as a failed write of its output is, so that
 * results.json shows the cycle incomplete with the reason; the run stops after it.
 */
static void suspend_cycle_line_not_written_is_incomplete(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 32];
	const char *marker, *out;

	start(f, "igt@igt_basic@pass\nbootci@suspend@freeze_devices@1\nigt@igt_basic@skip\n", "");
	fakeroot_write(&f->root, "/sys/power/state", "freeze mem\n");
	fakeroot_write(&f->root, "/sys/power/pm_test", "[none] core processors platform devices freezer\n");
	snprintf(path, sizeof(path), "%s/suspend-cycles.txt", f->ex.run_dir);
	assert_int_equal(symlink("/dev/full", path), 0);
	assert_int_equal(run_keeping_console(f), 0);
	assert_non_null(strstr(f->console, "suspend freeze_devices-0001: cannot record the cycle in"));
	marker = run_file(f, "1/bootci-incomplete.txt");
	assert_non_null(marker);
	assert_string_equal(marker, "suspend-cycles.txt 0 No space left on device\n");
	assert_non_null(strstr(run_file(f, "aborted.txt"), "cannot write suspend-cycles.txt"));
	generate(f);
	assert_string_equal(result_of(f, "bootci@suspend@freeze_devices@0001"), "incomplete");
	out = strstr(f->json, "the output of this job is incomplete (1/bootci-incomplete.txt");
	assert_non_null(out);
	assert_string_equal(result_of(f, "igt@igt_basic@skip"), "notrun");
}

/* A power cut in the middle of a cycle's line: the next cycle's line does not join the fragment. */
static void suspend_cycles_torn_line_is_cut(void **state)
{
	struct fixture *f = *state;

	start(f, "bootci@suspend@freeze_devices@1\n", "");
	fakeroot_write(&f->root, "/sys/power/state", "freeze mem\n");
	fakeroot_write(&f->root, "/sys/power/pm_test", "[none] core processors platform devices freezer\n");
	fakeroot_write(&f->root, "/results/runs/t/suspend-cycles.txt",
		       "freeze_devices-0000 pass 0.100 0.000 0.100 - - pm_test\nfreeze_dev");
	assert_int_equal(run_keeping_console(f), 0);
	assert_non_null(strstr(f->console, "ended in a torn line (10 bytes"));
	assert_non_null(strstr(run_file(f, "suspend-cycles.txt"),
			       "freeze_devices-0000 pass 0.100 0.000 0.100 - - pm_test\n"
			       "freeze_devices-0001 pass "));
	assert_non_null(strstr(run_file(f, "suspend-summary.txt"), "cycles 2\n"));
}

/* Cycles from the configuration join the testlist's, numbered in run order. */
static void suspend_cycles_from_the_configuration(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\nbootci@suspend@mem@1\nigt@igt_basic@skip\n",
	      "bootci.suspend_before=mem@1 bootci.suspend_between=freeze@1");
	fakeroot_write(&f->root, "/sys/power/state", "freeze mem disk\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_string_equal(run_file(f, "joblist.txt"),
			    "bootci_suspend mem-0001\nigt_basic pass\nbootci_suspend mem-0002\n"
			    "bootci_suspend freeze-0001\nigt_basic skip\n");
}

static void bad_suspend_item_is_an_error(void **state)
{
	struct fixture *f = *state;

	start(f, "bootci@suspend@mem@0\n", "");
	assert_int_equal(bci_igt_run(&f->ex), -EINVAL);
	fakeroot_executor_release(&f->root, &f->ex);
	start(f, "bootci@suspend@hibernate@1\n", "");
	assert_int_equal(bci_igt_run(&f->ex), -EINVAL);
	assert_null(run_file(f, "joblist.txt"));
}

static void bad_testlist_is_an_error(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\nkms_flip@basic\n", "");
	assert_int_equal(bci_igt_run(&f->ex), -EINVAL);
	assert_null(run_file(f, "joblist.txt"));
}

/*
 * The run ended aborted at bootup for @why: aborted.txt says it as igt_runner
 * does, the joblist is empty, the journal has abort and done, the console
 * said it, and results.json has igt@runner@aborted.
 */
static void aborted_at_bootup(struct fixture *f, const char *why)
{
	char want[1024];
	const char *text;

	snprintf(want, sizeof(want), "Aborted at bootup\n\n%s\n", why);
	text = run_file(f, "aborted.txt");
	assert_non_null(text);
	assert_string_equal(text, want);
	assert_non_null(run_file(f, "joblist.txt"));
	assert_string_equal(run_file(f, "joblist.txt"), "");
	text = run_file(f, "bootci-journal.txt");
	assert_non_null(text);
	assert_non_null(strstr(text, "\nabort"));
	assert_non_null(strstr(text, "\ndone"));
	snprintf(want, sizeof(want), "run t aborted at bootup: %s", why);
	assert_non_null(strstr(f->console, want));
	generate(f);
	assert_string_equal(result_of(f, "igt@runner@aborted"), "fail");
}

/* A testlist that cannot be read (its job initrd never arrived): the run ends, aborted at bootup with the reason. */
static void unreadable_testlist_aborts_the_run(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 32];

	start(f, "igt@igt_basic@pass\n", "");
	snprintf(path, sizeof(path), "%s/etc/bootci/testlist", f->root.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(run_keeping_console(f), 0);
	aborted_at_bootup(f, "Cannot read the testlist /etc/bootci/testlist: No such file or directory");
}

/*
 * Boots of the run that all ended before its joblist (the kernel died while
 * the binaries listed their subtests): boot_cap of them, and the next boot
 * aborts the run at bootup instead of planning again; one fewer, it plans.
 */
static void a_plan_that_kills_the_machine_is_capped(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\n", "");
	f->ex.boot_number = 3;	/* two boots before, each died planning */
	assert_int_equal(run_keeping_console(f), 0);
	assert_null(run_file(f, "aborted.txt"));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
	fakeroot_executor_release(&f->root, &f->ex);

	start(f, "igt@igt_basic@pass\n", "");
	f->ex.boot_number = 4;	/* three boots before: boot_cap */
	assert_int_equal(run_keeping_console(f), 0);
	aborted_at_bootup(f, "3 boots of the run ended before its plan was made (the kernel died or "
			  "hung while the test binaries listed their subtests, or the plan failed: see "
			  "the boot records): not planned again (boot_cap 3)");
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "");
}

static void missing_binary_is_an_error(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@no_such_binary\n", "");
	assert_int_equal(bci_igt_run(&f->ex), -ENOENT);
	assert_null(run_file(f, "joblist.txt"));
}

static void per_test_timeout_kills(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_timing@sleep-long\nigt@igt_basic@pass\n",
	      "bootci.per_test_timeout=2 bootci.kill_grace=2");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_non_null(strstr(run_file(f, "0/journal.txt"), "sleep-long\ntimeout:"));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "timeout 0 "));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_timing@sleep-long"), "timeout");
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
}

static void per_test_timeout_escalates_to_sigkill(void **state)
{
	struct fixture *f = *state;
	const char *quit, *kill;
	long began, took;

	start(f, "igt@igt_timing@ignore-quit\nigt@igt_basic@pass\n",
	      "bootci.per_test_timeout=2 bootci.kill_grace=1");
	began = monotonic_ms();
	assert_int_equal(run_keeping_console(f), 0);
	took = monotonic_ms() - began;
	/* SIGQUIT is ignored: the grace runs out and SIGKILL ends the test. */
	quit = strstr(f->console, "job 1: Per-test timeout exceeded: sending SIGQUIT\n");
	kill = strstr(f->console, "job 1: still running after a kill: sending SIGKILL\n");
	assert_non_null(quit);
	assert_non_null(kill);
	assert_true(quit < kill);
	assert_null(strstr(f->console, "does not die even after SIGKILL"));
	assert_non_null(strstr(run_file(f, "0/journal.txt"), "ignore-quit\ntimeout:-9 ("));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "timeout 0 -9 "));
	assert_non_null(strstr(run_file(f, "0/out.txt"), "Ignoring SIGQUIT and SIGTERM"));
	/* 2 s to the timeout and 1 s of grace, each noticed within a second of the loop's poll. */
	/* Not a timing goal: the bounds tell SIGKILL's end (after 3 s) from the fixture's own
	 * (it sleeps an hour), with room for a loaded machine. */
	if (took < 3000 || took > 120000)
		fail_msg("the run took %ld ms", took);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_timing@ignore-quit"), "timeout");
	/* The run goes on after a timeout. */
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
	assert_null(run_file(f, "aborted.txt"));
}

static void inactivity_timeout_kills(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_timing@silent-hang\n",
	      "bootci.per_test_timeout=off bootci.inactivity_timeout=2 bootci.kill_grace=2");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_non_null(strstr(run_file(f, "0/journal.txt"), "silent-hang\ntimeout:"));
}

static void output_limit_keeps_protocol_and_tail(void **state)
{
	struct fixture *f = *state;
	const char *out;

	setenv("BOOTCI_FIXTURE_FLOOD_MIB", "2", 1);
	start(f, "igt@igt_basic@flood\n", "bootci.output_limit=64K");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	unsetenv("BOOTCI_FIXTURE_FLOOD_MIB");
	out = run_file(f, "0/out.txt");
	assert_non_null(out);
	/* within the limit, but for the protocol lines and the note: a reader can always take it */
	if (strlen(out) > 65536 + 1024)
		fail_msg("out.txt is %zu bytes for a limit of 64K", strlen(out));
	assert_non_null(strstr(out, "bootci: output over the limit of 65536 bytes"));
	assert_non_null(strstr(out, "Subtest flood: SUCCESS"));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@flood"), "pass");
}

static void count_lines(void *data, const char *line, size_t len)
{
	(void)line;
	(void)len;
	(*(int *)data)++;
}

/*
 * Past the output limit a stream keeps only what the results generator reads
 * as protocol: the executor once kept any line starting "Subtest " (a prefix
 * test of its own), now igt_protocol's classifier decides for both, so prose
 * such as "Subtest foo failed." goes to the tail like any other output.
 */
static void output_limit_keeps_what_the_generator_reads(void **state)
{
	static const char text[] = "0123456789\n"             /* fills the limit */
				   "Subtest foo failed.\n"     /* prose: into the tail */
				   "Subtest foo: FAIL (0.100s)\n" /* a result: kept */
				   "Starting subtest: \n";     /* a start, even unnamed: kept */
	char path[] = "/tmp/bootci-stream.XXXXXX", *out = NULL;
	struct bci_igt_stream stream;
	int fd = mkstemp(path), lines = 0;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(bci_igt_stream_init(&stream, fd, 11, 8), 0);
	stream.on_line = count_lines;
	stream.data = &lines;
	bci_igt_stream_feed(&stream, text, strlen(text));
	bci_igt_stream_finish(&stream);
	bci_igt_stream_release(&stream);
	assert_int_equal(lines, 4);
	assert_int_equal(bci_read_file(path, &out, NULL, 4096), 0);
	assert_string_equal(out, "0123456789\nSubtest foo: FAIL (0.100s)\nStarting subtest: \n"
				 "\nbootci: output over the limit of 19 bytes: 12 bytes dropped, "
				 "the last 8 follow\nfailed.\n");
	assert_null(strstr(out, "Subtest foo failed."));
	free(out);
	close(fd);
	unlink(path);
}

/* Writes what a boot that died during job 1 leaves behind. */
static void died_during_job(struct fixture *f, const char *joblist, const char *journal,
			    const char *job_journal)
{
	fakeroot_write(&f->root, "/results/runs/t/joblist.txt", joblist);
	fakeroot_write(&f->root, "/results/runs/t/metadata.txt", "name : t\n");
	fakeroot_write(&f->root, "/results/runs/t/bootci-journal.txt", journal);
	fakeroot_write(&f->root, "/results/runs/t/0/journal.txt", "pass\nexit:0 (0.010s)\n");
	fakeroot_write(&f->root, "/results/runs/t/0/out.txt",
		       "Starting subtest: pass\nSubtest pass: SUCCESS (0.001s)\n");
	fakeroot_write(&f->root, "/results/runs/t/0/err.txt", "");
	fakeroot_write(&f->root, "/results/runs/t/0/dmesg.txt", "");
	fakeroot_write(&f->root, "/results/runs/t/1/journal.txt", job_journal);
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt", "");
	fakeroot_write(&f->root, "/results/runs/t/1/err.txt", "");
	fakeroot_write(&f->root, "/results/runs/t/1/dmesg.txt", "");
}

static void resume_marks_the_job_in_flight_incomplete(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_basic fail\nigt_basic skip\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\n", "fail\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"),
			       "start 1\nboot 2 "));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "incomplete 1 1\n"));
	/* The subtest in flight is not run again; the rest of the run is. */
	assert_string_equal(run_file(f, "1/journal.txt"), "fail\n");
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_basic@fail"), "incomplete");
	assert_string_equal(result_of(f, "igt@igt_basic@skip"), "skip");
}

/* Counts the non-overlapping copies of @needle in @haystack. */
static int count_of(const char *haystack, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(haystack, needle); p; p = strstr(p + strlen(needle), needle))
		n++;
	return n;
}

/*
 * The machine died after the job's journal.txt had its exit and before
 * bootci's journal did: the job is not run again into the same folder (no
 * second exit, no second output), with or without subtests.
 */
static void lost_exit_line_does_not_run_the_job_again(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_simple\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\n", "exit:0 (0.020s)\n");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt",
		       "A test without subtests, passing.\nSUCCESS (0.000s)\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_int_equal(count_of(run_file(f, "1/journal.txt"), "exit:"), 1);
	assert_int_equal(count_of(run_file(f, "1/out.txt"), "A test without subtests"), 1);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_simple"), "pass");
}

/* The same with subtests whose last had dynamic subtests: none of them runs again. */
static void lost_exit_line_does_not_resume_dynamic_subtests(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_dynamic mixed\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\ndynamic 1 mixed@dyn-pass\n",
			"mixed\nexit:0 (0.020s)\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_int_equal(count_of(run_file(f, "1/journal.txt"), "exit:"), 1);
}

/* A job without subtests in flight when the machine died: incomplete, its output kept once. */
static void job_without_subtests_in_flight_is_incomplete(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_simple\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\n", "");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt", "A test without subtests, passing.\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_int_equal(count_of(run_file(f, "1/journal.txt"), "exit:"), 0);
	assert_int_equal(count_of(run_file(f, "1/out.txt"), "A test without subtests"), 1);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_simple"), "incomplete");
}

/*
 * A cut after bootci's journal got a job's end and before its journal.txt did
 * (one barrier makes both durable, the next job's start): journal.txt gets that
 * end again, and results.json says what the job did, not incomplete.
 */
static void lost_job_journal_exit_is_written_again(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_simple\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\nexit 1 0 0.020\n", "");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt",
		       "A test without subtests, passing.\nSUCCESS (0.000s)\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_int_equal(count_of(run_file(f, "1/journal.txt"), "exit:0 (0.020s)"), 1);
	assert_int_equal(count_of(run_file(f, "1/out.txt"), "A test without subtests"), 1);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_simple"), "pass");
}

/*
 * bootci's end of the last job says its outputs' sizes: written before the
 * barrier that makes them durable, it may survive a cut that they did not.
 * Then journal.txt gets no end: the job is incomplete, not judged from a
 * shortened output. As long as they said, journal.txt gets the end.
 */
static void an_end_whose_outputs_were_cut_gets_no_exit(void **state)
{
	static const char *const outputs[] = {
		"A test without subtests, passing.\n", /* 34 bytes: short of what the end says */
		"A test without subtests, passing.\nSUCCESS (0.000s)\n", /* 51: as it says */
	};

	for (int whole = 0; whole < 2; whole++) {
		struct fixture *f = *state;

		if (whole) {
			teardown(state);
			assert_int_equal(setup(state), 0);
			f = *state;
		}
		start(f, "unused\n", "");
		died_during_job(f, "igt_basic pass\nigt_simple\n",
				"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\n"
				"exit 1 0 0.020 out=51 err=0 dmesg=0\n", "");
		fakeroot_write(&f->root, "/results/runs/t/1/out.txt", outputs[whole]);
		fakeroot_write(&f->root, "/results/runs/t/1/err.txt", "");
		fakeroot_write(&f->root, "/results/runs/t/1/dmesg.txt", "");
		assert_int_equal(run_keeping_console(f), 0);
		assert_int_equal(count_of(run_file(f, "1/journal.txt"), "exit:0 (0.020s)"), whole);
		assert_int_equal(count_of(f->console, "its out.txt has 34 of the 51 bytes"), !whole);
		generate(f);
		assert_string_equal(result_of(f, "igt@igt_simple"), whole ? "pass" : "incomplete");
	}
}

/* Not for a job bootci's journal says was in flight at a crash: its journal.txt has no end on purpose. */
static void incomplete_job_gets_no_end_in_journal_txt(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_simple\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\nboot 2 0 test\n"
			"incomplete 1 1\nexit 1 -1 0.000\n", "");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt", "A test without subtests, passing.\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_int_equal(count_of(run_file(f, "1/journal.txt"), "exit:"), 0);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_simple"), "incomplete");
}

/*
 * The start of bootci's journal damaged (issue 34 point 3): the lines of job 0
 * are garbage. Its folder says it ended: it is not run again (its journal.txt
 * and out.txt hold one run), and bootci's journal gets the end journal.txt has.
 */
static void a_job_the_journal_lost_is_not_run_again(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_basic fail\nigt_basic skip\n",
			"\x01\xfegarbage where boot 1 and job 0 were\nstart 1\n", "fail\n");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt", "Starting subtest: fail\n");
	assert_int_equal(run_keeping_console(f), 0);
	assert_string_equal(run_file(f, "0/journal.txt"), "pass\nexit:0 (0.010s)\n");
	assert_string_equal(run_file(f, "0/out.txt"),
			    "Starting subtest: pass\nSubtest pass: SUCCESS (0.001s)\n");
	assert_non_null(strstr(f->console, "job 1: its journal.txt has its end and bootci's "
					   "journal lacks it: not run again"));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "\nexit 0 0 0.010\n"));
	/* The job in flight is as it would have been: incomplete, not run again. */
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "\nincomplete 1 "));
	assert_string_equal(run_file(f, "1/journal.txt"), "fail\n");
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_basic@fail"), "incomplete");
	assert_string_equal(result_of(f, "igt@igt_basic@skip"), "skip");
}

/*
 * All of bootci's journal lost: the job in flight is the last one whose folder
 * shows it started and not ended (the kernel's crash is laid on it); an
 * earlier one so is incomplete from an earlier boot. Neither runs again.
 */
static void the_job_in_flight_is_found_from_its_folder(void **state)
{
	struct fixture *f = *state;
	const char *journal;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_basic fail\nigt_basic skip\n",
			"\x01\xfeno line of this journal is left\n", "fail\n");
	fakeroot_write(&f->root, "/results/runs/t/0/journal.txt", "pass\n");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt", "Starting subtest: fail\n");
	fakeroot_write(&f->root, "/sys/fs/pstore/dmesg-efi-1",
		       "Panic#1 Part1\n<0>Kernel panic - not syncing: sysrq triggered crash\n");
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_int_equal(run_keeping_console(f), 0);
	assert_non_null(strstr(f->console, "job 2: bootci's journal lost its start, its folder "
					   "shows it started: it was in flight"));
	assert_non_null(strstr(f->console, "job 2 (igt_basic) was running when boot"));
	journal = run_file(f, "bootci-journal.txt");
	assert_non_null(strstr(journal, "\nstart 0\nincomplete 0 0\nstart 1\nincomplete 1 "));
	assert_string_equal(run_file(f, "0/journal.txt"), "pass\n");
	assert_string_equal(run_file(f, "1/journal.txt"), "fail\n");
	assert_int_equal(count_of(run_file(f, "0/out.txt"), "Starting subtest: pass"), 1);
	assert_int_equal(count_of(run_file(f, "1/out.txt"), "Starting subtest: fail"), 1);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_basic@fail"), "crash");
	assert_non_null(strstr(f->json, "Kernel panic - not syncing: sysrq triggered crash"));
	assert_string_equal(result_of(f, "igt@igt_basic@skip"), "skip");
}

/* The dynamic subtests of a job whose start the journal lost: their lines come back from out.txt,
 * and the resumed subtest runs only the dynamic subtests that never started. */
static void dynamic_starts_lost_with_the_journal_come_back(void **state)
{
	struct fixture *f = *state;
	const char *out;

	start(f, "unused\n", "");
	died_during_job(f, "igt_dynamic mixed\nigt_basic pass\n", "\x01\xfe\n", "");
	fakeroot_write(&f->root, "/results/runs/t/0/journal.txt", "mixed\n");
	fakeroot_write(&f->root, "/results/runs/t/0/out.txt",
		       "Starting subtest: mixed\nStarting dynamic subtest: dyn-pass\n"
		       "Dynamic subtest dyn-pass: SUCCESS (0.001s)\n"
		       "Starting dynamic subtest: dyn-fail\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"),
			       "\nstart 0\ndynamic 0 mixed@dyn-pass\ndynamic 0 mixed@dyn-fail\n"));
	out = run_file(f, "0/out.txt");
	assert_int_equal(count_of(out, "Starting dynamic subtest: dyn-pass"), 1);
	assert_int_equal(count_of(out, "Starting dynamic subtest: dyn-fail"), 1);
	assert_int_equal(count_of(out, "Starting dynamic subtest: dyn-skip"), 1);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-fail"), "incomplete");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-skip"), "skip");
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
}

/* ---- the barriers of a run, each with what the files held when it was made ---- */
static char barrier_root[PATH_MAX];
static char barrier_log[32768];

static long size_of(const char *rel)
{
	char path[PATH_MAX + 64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/results/runs/t/%s", barrier_root, rel);
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Whether the file at @path (under barrier_root) holds @needle now. */
static bool file_holds(const char *path, const char *needle)
{
	char full[PATH_MAX + 64], buf[16384];
	size_t n;
	FILE *in;

	snprintf(full, sizeof(full), "%s/%s", barrier_root, path);
	in = fopen(full, "r");
	if (!in)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, in);
	fclose(in);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static bool holds(const char *rel, const char *needle)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "results/runs/t/%s", rel);
	return file_holds(path, needle);
}

/* The run's barriers go through @barrier (in @sys, the caller's copy of the table), logged afresh. */
static void record_barriers(struct fixture *f, struct bci_sys *sys, int (*barrier)(int, bool))
{
	*sys = *f->ex.sys;
	sys->barrier = barrier;
	f->ex.sys = sys;
	snprintf(barrier_root, sizeof(barrier_root), "%s", f->root.dir);
	barrier_log[0] = '\0';
}

/* One line a barrier: its kind, whether job 0's ends and job 1's start were written, sizes. */
static int recording_barrier(int fd, bool whole_fs)
{
	size_t used = strlen(barrier_log);

	snprintf(barrier_log + used, sizeof(barrier_log) - used,
		 "%s exit0=%d end0=%d start1=%d out=%ld err=%ld dmesg=%ld\n", whole_fs ? "fs" : "fd",
		 holds("0/journal.txt", "exit:"), holds("bootci-journal.txt", "exit 0 "),
		 holds("bootci-journal.txt", "start 1\n"), size_of("0/out.txt"), size_of("0/err.txt"),
		 size_of("0/dmesg.txt"));
	return bci_sys_barrier(fd, whole_fs);
}

/*
 * What is durable when job 1 is exec'ed, and in what order job 0's end got
 * there: no barrier between job 0's end and job 1's start; one whole barrier
 * makes job 0's outputs as they end, bootci's end of it (which says their
 * sizes) and job 1's start durable together before job 1 starts; job 0's
 * journal.txt exit is written only after that barrier (an exit on disk has
 * its outputs), and made durable by its own fdatasync.
 */
static void one_barrier_between_a_job_and_the_next(void **state)
{
	struct fixture *f = *state;
	struct bci_sys sys;
	char *line, *start1 = NULL, *after = NULL;
	unsigned ended_before_start = 0;
	long out, err, dmesg;
	char want[128];

	start(f, "igt@igt_basic@pass\nigt@igt_basic@pass\n", "");
	record_barriers(f, &sys, recording_barrier);
	assert_int_equal(bci_igt_run(&f->ex), 0);
	out = size_of("0/out.txt");
	err = size_of("0/err.txt");
	dmesg = size_of("0/dmesg.txt");
	for (line = strtok(barrier_log, "\n"); line; line = strtok(NULL, "\n")) {
		if (start1) {
			after = line;
			break;
		}
		if (strstr(line, "start1=1"))
			start1 = line;
		else if (strstr(line, "end0=1"))
			ended_before_start++;
	}
	assert_non_null(start1);
	assert_non_null(after);
	assert_int_equal(ended_before_start, 0);
	/* Job 0's outputs as they end, bootci's end of it and job 1's start: one whole barrier. */
	snprintf(want, sizeof(want), "fs exit0=0 end0=1 start1=1 out=%ld err=%ld dmesg=%ld", out,
		 err, dmesg);
	assert_string_equal(start1, want);
	/* Then journal.txt's exit, alone. */
	assert_true(strncmp(after, "fd exit0=1 ", 11) == 0);
	/* bootci's end says the sizes the outputs ended with. */
	snprintf(want, sizeof(want), "exit 0 0 ");
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), want));
	snprintf(want, sizeof(want), " out=%ld err=%ld dmesg=%ld", out, err, dmesg);
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), want));
}

/*
 * One line a barrier: whether job 0's out.txt had igt_basic@warn-stderr's result and its err.txt
 * the warning the test wrote to stderr before that result. At the first barrier after the
 * subtest's start, it waits (30 s at most) until the test has exited, without reaping it: the
 * warning, the result and the rest are then all waiting in the pipes at once, as they are
 * whenever the executor is busy while the test writes.
 */
static int stderr_barrier(int fd, bool whole_fs)
{
	static const char warning[] = "Something looks odd, but the test passes.";
	size_t used = strlen(barrier_log);

	if (!strstr(barrier_log, "waited") && holds("0/out.txt", "Starting subtest: warn-stderr")) {
		siginfo_t info = { 0 };
		long begin = monotonic_ms(), deadline = begin + 30000;
		int ret = 0;

		while (monotonic_ms() < deadline &&
		       (ret = waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT)) == 0 && !info.si_pid)
			usleep(10000);
		used += (size_t)snprintf(barrier_log + used, sizeof(barrier_log) - used,
					 "waited exited=%d (%d %s, %ld ms)\n", info.si_pid != 0, ret,
					 ret ? strerror(errno) : "", monotonic_ms() - begin);
	}
	snprintf(barrier_log + used, sizeof(barrier_log) - used, "result=%d warning=%d\n",
		 holds("0/out.txt", "Subtest warn-stderr: SUCCESS"), holds("0/err.txt", warning));
	return bci_sys_barrier(fd, whole_fs);
}

/*
 * What a test wrote to stderr before a protocol line of its stdout is in err.txt when that
 * line's barrier is made, however the two pipes were read: a cut right after it keeps the
 * warning with the result it came before.
 */
static void stderr_before_a_result_is_durable_with_it(void **state)
{
	struct fixture *f = *state;
	struct bci_sys sys;

	start(f, "igt@igt_basic@warn-stderr\n", "");
	record_barriers(f, &sys, stderr_barrier);
	assert_int_equal(bci_igt_run(&f->ex), 0);
	if (!strstr(barrier_log, "waited exited=1 ") || !strstr(barrier_log, "result=1") ||
	    strstr(barrier_log, "result=1 warning=0"))
		fail_msg("barriers: %s", barrier_log);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@warn-stderr"), "warn");
}

/* One line a barrier: whether job 0's journal.txt has its exit, job 1's its suspend cycle. */
static int suspend_barrier(int fd, bool whole_fs)
{
	size_t used = strlen(barrier_log);

	snprintf(barrier_log + used, sizeof(barrier_log) - used, "exit0=%d cycle1=%d\n",
		 holds("0/journal.txt", "exit:"), holds("1/journal.txt", "mem-0001"));
	return bci_sys_barrier(fd, whole_fs);
}

/*
 * A test's journal.txt exit, owed until the next barrier made its outputs
 * durable, is durable before a suspend cycle that follows it is even
 * journalled (the machine may never come back from it): the console's
 * judgement of the test, said before the cycle, pays it, and so does the
 * cycle's start.
 */
static void a_jobs_exit_is_durable_before_a_suspend_cycle(void **state)
{
	struct fixture *f = *state;
	struct bci_sys sys;
	const char *cycle, *exit0;

	start(f, "igt@igt_basic@pass\nbootci@suspend@mem@1\n", "");
	record_barriers(f, &sys, suspend_barrier);
	assert_int_equal(bci_igt_run(&f->ex), 0);
	exit0 = strstr(barrier_log, "exit0=1 cycle1=0\n");
	cycle = strstr(barrier_log, "cycle1=1");
	if (!exit0 || !cycle || exit0 > cycle)
		fail_msg("barriers: %s", barrier_log);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
}

/* One line a barrier: which jobs' starts were written, whether job 1's console line was said. */
static int console_barrier(int fd, bool whole_fs)
{
	size_t used = strlen(barrier_log);

	snprintf(barrier_log + used, sizeof(barrier_log) - used, "start1=%d start2=%d said1=%d\n",
		 holds("bootci-journal.txt", "start 1\n"), holds("bootci-journal.txt", "start 2\n"),
		 file_holds("console.log", "[1/4] igt@igt_basic@pass pass "));
	return bci_sys_barrier(fd, whole_fs);
}

/*
 * A job's console line is said once the next test has exec'ed, not in the gap
 * between the two (its judgement reads the job's folder): it is not on the
 * console yet when the barrier before the next exec is made, and is by the
 * next job's end. Owed lines are said before an abort and before the run's end.
 */
static void a_jobs_line_is_said_once_the_next_test_runs(void **state)
{
	struct fixture *f = *state;
	struct bci_sys sys;
	const char *at_start1, *at_start2, *one, *two, *three, *aborting;
	int fds;

	start(f, "igt@igt_basic@pass\nigt@igt_basic@skip\nigt@igt_basic@abort\nigt@igt_basic@fail\n",
	      "");
	record_barriers(f, &sys, console_barrier);
	bci_igt_job_release_parked();	/* nothing an earlier test's run left counts */
	fds = fakeroot_open_fds();
	assert_int_equal(run_keeping_console(f), 0);
	/* What each job held (released once the next test ran) is released by the run's end. */
	assert_int_equal(fakeroot_open_fds(), fds);
	at_start1 = strstr(barrier_log, "start1=1");
	at_start2 = strstr(barrier_log, "start2=1");
	assert_non_null(at_start1);
	assert_non_null(at_start2);
	if (strncmp(at_start1, "start1=1 start2=0 said1=0\n", 26) != 0 ||
	    strncmp(at_start2, "start2=1 said1=1\n", 17) != 0)
		fail_msg("barriers: %s", barrier_log);
	one = strstr(f->console, "[1/4] igt@igt_basic@pass pass ");
	two = strstr(f->console, "[2/4] igt@igt_basic@skip skip ");
	three = strstr(f->console, "[3/4] igt@igt_basic@abort abort ");
	aborting = strstr(f->console, "error: aborting the run: Test exited with IGT_EXIT_ABORT\n");
	assert_true(one && two && three && aborting);
	assert_true(one < two && two < three && three < aborting);
	assert_null(strstr(f->console, "[4/4]"));
}

/*
 * The executor's progress lines as the master reads them (lib/progress_marker.h): each job's
 * start in the kernel log and its end on the console, [N/M] and name as the joblist has them;
 * on a serial console that stops after job 3's start, serve's console reader finds job 3 in
 * flight, and that it runs each of its subtests.
 */
static void progress_lines_are_read_by_the_master(void **state)
{
	static const char *const names[] = { "igt@igt_basic@pass", "igt@igt_simple",
					     "igt@igt_basic (2 subtests)" };
	struct fixture *f = *state;
	struct bci_progress_marker m;
	struct bci_console_in_flight job;
	struct bci_console_log *log;
	const char *kmsg, *line, *eol;
	char *starts[3] = { NULL }, *ends[3] = { NULL }, dir[64], err[300], stream[4096];
	unsigned seen;
	int fd;

	start(f, "igt@igt_basic@pass\nigt@igt_simple\nigt@igt_basic@fail\nigt@igt_basic@skip\n",
	      "bootci.multiple_mode=yes");
	fakeroot_write(&f->root, "/dev/kmsg", "");
	assert_int_equal(run_keeping_console(f), 0);
	kmsg = fakeroot_read(&f->root, "/dev/kmsg");
	assert_non_null(kmsg);
	/* Each kernel log record and console line, read by the master's parser. */
	for (int pass = 0; pass < 2; pass++) {
		seen = 0;
		for (line = pass ? f->console : kmsg; *line; line = *eol ? eol + 1 : eol) {
			eol = line + strcspn(line, "\n");
			if (bci_progress_parse(line, (size_t)(eol - line), &m) == BCI_PROGRESS_NONE)
				continue;
			assert_int_equal(m.kind, pass ? BCI_PROGRESS_END : BCI_PROGRESS_START);
			assert_int_equal(m.number, ++seen);
			assert_int_equal(m.total, 3);
			(pass ? ends : starts)[seen - 1] = strndup(line, (size_t)(eol - line));
		}
		assert_int_equal(seen, 3);
	}
	for (int k = 0; k < 3; k++) {
		bci_progress_parse(starts[k], strlen(starts[k]), &m);
		if (strncmp(m.text, names[k], m.text_len) || m.text_len != strlen(names[k]))
			fail_msg("job %d's start: %s", k + 1, starts[k]);
		bci_progress_parse(ends[k], strlen(ends[k]), &m);
		if (m.name_len != strcspn(names[k], " ") || strncmp(m.text, names[k], m.name_len))
			fail_msg("job %d's end: %s", k + 1, ends[k]);
	}

	/* A serial console: the kernel's records stamped, the executor's lines as they are. */
	snprintf(stream, sizeof(stream),
		 "[    0.000000] Linux version 6.1.0\r\n[    3.1] %s\r\n[    3.2] %s\r\n%s\r\n"
		 "%s\r\n[    3.3] %s\r\n[    3.4] Kernel panic - not syncing: sysrq triggered crash\r\n",
		 strchr(starts[0], ';') + 1, strchr(starts[1], ';') + 1, ends[0], ends[1],
		 strchr(starts[2], ';') + 1);
	snprintf(dir, sizeof(dir), "/tmp/bootci-progress-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(bci_console_log_open(dir, "m", 0, NULL, NULL, &log, err, sizeof(err)), 0);
	assert_int_equal(bci_console_log_feed(log, stream, strlen(stream), 1.0), 0);
	bci_console_log_close(log);
	fd = bci_console_log_open_boot(dir, 1);
	assert_true(fd >= 0);
	assert_int_equal(bci_console_log_in_flight(fd, &job), 1);
	close(fd);
	bci_remove_tree(dir);
	assert_int_equal(job.index, 3);
	assert_int_equal(job.total, 3);
	assert_string_equal(job.name, names[2]);
	assert_true(bci_progress_job_runs(job.name, strlen(job.name), "igt@igt_basic@fail"));
	assert_true(bci_progress_job_runs(job.name, strlen(job.name), "igt@igt_basic@skip"));
	assert_false(bci_progress_job_runs(job.name, strlen(job.name), "igt@igt_simple"));
	for (int k = 0; k < 3; k++) {
		free(starts[k]);
		free(ends[k]);
	}
}

static void resume_runs_remaining_subtests_of_a_multiple_job(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_basic fail,skip,pass\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\n", "fail\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	const char *journal = run_file(f, "1/journal.txt");
	if (!strstr(journal, "fail\npass\nskip\nexit:0 ("))
		fail_msg("1/journal.txt: %s", journal);
}

static void resume_continues_after_started_dynamic_subtests(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_dynamic mixed\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\n"
			"dynamic 1 mixed@dyn-pass\ndynamic 1 mixed@dyn-fail\n",
			"mixed\n");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt",
		       "Starting subtest: mixed\nStarting dynamic subtest: dyn-pass\n"
		       "Dynamic subtest dyn-pass: SUCCESS (0.001s)\n"
		       "Starting dynamic subtest: dyn-fail\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	/* Only dyn-skip is left: the re-run prints it and nothing of the others. */
	const char *out = run_file(f, "1/out.txt");
	assert_non_null(strstr(out, "Starting dynamic subtest: dyn-skip"));
	assert_null(strstr(strstr(out, "Starting dynamic subtest: dyn-skip"), "dyn-pass"));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-fail"), "incomplete");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-skip"), "skip");
}

static void kernel_crash_is_attributed_to_the_subtest(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	died_during_job(f, "igt_basic pass\nigt_basic fail\nigt_basic skip\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\n", "fail\n");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt", "Starting subtest: fail\n");
	fakeroot_write(&f->root, "/sys/fs/pstore/dmesg-efi-1",
		       "Panic#1 Part1\n<0>Kernel panic - not syncing: sysrq triggered crash\n");
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_int_equal(bci_igt_run(&f->ex), 0);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@fail"), "crash");
	/* The test's record carries the dump. */
	assert_non_null(strstr(f->json, "Kernel panic - not syncing: sysrq triggered crash"));
	assert_string_equal(result_of(f, "igt@igt_basic@skip"), "skip");
}

static void kernel_crash_in_a_dynamic_subtest(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	/* The kernel died before out.txt had dyn-fail's start; bootci's journal had it. */
	died_during_job(f, "igt_basic pass\nigt_dynamic mixed\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\n"
			"dynamic 1 mixed@dyn-pass\ndynamic 1 mixed@dyn-fail\n",
			"mixed\n");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt",
		       "Starting subtest: mixed\nStarting dynamic subtest: dyn-pass\n"
		       "Dynamic subtest dyn-pass: SUCCESS (0.001s)\n");
	fakeroot_write(&f->root, "/sys/fs/pstore/dmesg-efi-1", "Oops#1 Part1\nBUG: kernel NULL pointer dereference\n");
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_int_equal(bci_igt_run(&f->ex), 0);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-fail"), "crash");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-skip"), "skip");
}

static void kernel_crash_dump_names_the_dynamic_subtest(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "");
	/* Neither out.txt nor the journal saw dyn-fail start: only the kernel log did. */
	died_during_job(f, "igt_basic pass\nigt_dynamic mixed\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\ndynamic 1 mixed@dyn-pass\n",
			"mixed\n");
	fakeroot_write(&f->root, "/results/runs/t/1/out.txt",
		       "Starting subtest: mixed\nStarting dynamic subtest: dyn-pass\n"
		       "Dynamic subtest dyn-pass: SUCCESS (0.001s)\n");
	fakeroot_write(&f->root, "/sys/fs/pstore/dmesg-efi-1",
		       "Panic#1 Part1\n<6>[    3.1] [IGT] igt_dynamic: starting subtest mixed\n"
		       "<6>[    3.2] [IGT] igt_dynamic: starting dynamic subtest dyn-pass\n"
		       "<6>[    3.3] [IGT] igt_dynamic: finished dynamic subtest dyn-pass, SUCCESS\n"
		       "<6>[    3.4] [IGT] igt_dynamic: starting dynamic subtest dyn-fail\n"
		       "<0>[    3.5] Kernel panic - not syncing: sysrq triggered crash\n");
	assert_int_equal(bci_boot_begin(&f->ex), 0);
	assert_int_equal(bci_igt_run(&f->ex), 0);
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-pass"), "pass");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-fail"), "crash");
	assert_string_equal(result_of(f, "igt@igt_dynamic@mixed@dyn-skip"), "skip");
	/* The crashed one is not run again on resume. */
	const char *out = run_file(f, "1/out.txt");
	assert_null(strstr(strstr(out, "CRASH"), "Starting dynamic subtest: dyn-fail"));
}

static void boot_cap_ends_a_crash_loop(void **state)
{
	struct fixture *f = *state;

	start(f, "unused\n", "bootci.boot_cap=3");
	died_during_job(f, "igt_basic pass\nigt_basic fail,skip\nigt_basic skip\n",
			"boot 1 0 test\nstart 0\nexit 0 0 0.010\nstart 1\n"
			"boot 2 0 test\nincomplete 1 1\nstart 1\nboot 3 0 test\nincomplete 1 2\nstart 1\n",
			"fail\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "capped 1 3\n"));
	/* Job 1 is not started a fourth time; job 2 runs and the run completes. */
	assert_null(strstr(strstr(run_file(f, "bootci-journal.txt"), "capped 1 3\n"), "start 1\n"));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "start 2\nexit 2 77 "));
	/* the job's output says so, where the developer reads its result */
	assert_non_null(strstr(run_file(f, "1/out.txt"),
			       "bootci: this job took the machine down 3 times (boot_cap 3): not run again\n"));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@fail"), "incomplete");
}

static void finished_run_is_not_run_again(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\n", "");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_int_equal(bci_igt_run(&f->ex), 0);
	const char *journal = run_file(f, "bootci-journal.txt");
	assert_non_null(strstr(journal, "done\nboot 2 "));
	assert_null(strstr(strstr(journal, "boot 2 "), "start"));
}

/*
 * A journal line that cannot be made durable stops the run where it stands:
 * nothing after it is done as if it were recorded (no endtime.txt, no
 * `done`), the console says why, and the engine fails so that the executor
 * ends the boot and hands over. The journal is made the largest file of the
 * run and RLIMIT_FSIZE set just above its `start` line (in a child, the
 * limit being the process's), so its next line, the job's `exit`, fails.
 */
static void journal_not_durable_stops_the_run(void **state)
{
	struct fixture *f = *state;
	char line[64], path[PATH_MAX + 32];
	size_t prefill = 0, limit;
	int status, fd;
	pid_t pid;

	start(f, "igt@igt_basic@pass\n", "");
	snprintf(path, sizeof(path), "%s/bootci-journal.txt", f->ex.run_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (int i = 0; i < 4000; i++) {
		int n = snprintf(line, sizeof(line), "boot %d 1700000000 earlier\n", i + 1);
		assert_int_equal(bci_write_all(fd, line, (size_t)n), 0);
		prefill += (size_t)n;
	}
	close(fd);
	limit = prefill + (size_t)snprintf(line, sizeof(line), "boot 4001 %ld test\n", (long)time(NULL)) +
		strlen("start 0\n");
	snprintf(path, sizeof(path), "%s/console.log", f->root.dir);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { limit, limit };
		int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), ret;
		if (out < 0 || dup2(out, STDERR_FILENO) < 0 || setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(100);
		signal(SIGXFSZ, SIG_IGN);
		ret = bci_igt_run(&f->ex);
		_exit(ret < 0 ? -ret : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	fputs(fakeroot_read(&f->root, "/console.log"), stderr);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EFBIG);
	assert_non_null(strstr(fakeroot_read(&f->root, "/console.log"),
			       "the journal cannot be made durable (line 'exit 0 0 "));
	const char *journal = run_file(f, "bootci-journal.txt");
	assert_int_equal(strlen(journal), limit);
	assert_non_null(strstr(journal, " test\nstart 0\n"));
	/* The job ran and its own files say so; the run's end is not claimed. */
	assert_non_null(strstr(run_file(f, "0/journal.txt"), "pass\nexit:0 ("));
	assert_null(run_file(f, "endtime.txt"));
}

static void taint_aborts_the_run(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\nigt@igt_basic@skip\n", "bootci.abort_on=taint");
	/* TAINT_WARN, as a WARN_ON in the kernel under test sets it: before any test ran. */
	fakeroot_write(&f->root, "/proc/sys/kernel/tainted", "512\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_string_equal(run_file(f, "aborted.txt"),
			    "Aborted at bootup\n\n"
			    "Kernel badly tainted (0x200, 0x200) (check dmesg for details)\n");
	assert_null(strstr(run_file(f, "bootci-journal.txt"), "start 0\n"));
	generate(f);
	assert_string_equal(result_of(f, "igt@runner@aborted"), "fail");
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "notrun");
	assert_string_equal(result_of(f, "igt@igt_basic@skip"), "notrun");
}

/* TAINT_MACHINE_CHECK is in igt_runner's set; the other bits are reported, not judged. */
static void machine_check_taint_aborts(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\n", "bootci.abort_on=taint");
	fakeroot_write(&f->root, "/proc/sys/kernel/tainted", "2064\n"); /* 4 and 11 */
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_non_null(strstr(run_file(f, "aborted.txt"), "Kernel badly tainted (0x810, 0x10)"));
}

static void taint_between_subtests_stops_the_job(void **state)
{
	struct fixture *f = *state;
	char tainted[PATH_MAX + 32];
	const char *out;

	start(f, "igt@igt_basic@taint\nigt@igt_basic@flood\nigt@igt_timing@sleep-1\n",
	      "bootci.multiple_mode=yes bootci.abort_on=taint");
	/* The taint subtest writes TAINT_WARN into the fake tree's kernel/tainted. */
	fakeroot_write(&f->root, "/proc/sys/kernel/tainted", "0\n");
	snprintf(tainted, sizeof(tainted), "%s/proc/sys/kernel/tainted", f->root.dir);
	setenv("BOOTCI_FIXTURE_TAINTED", tainted, 1);
	assert_int_equal(run_keeping_console(f), 0);
	assert_string_equal(run_file(f, "joblist.txt"), "igt_basic taint,flood\nigt_timing sleep-1\n");
	/* flood announced its start, was journalled and stopped there, and says why. */
	out = run_file(f, "0/out.txt");
	assert_non_null(strstr(out, "Subtest taint: SUCCESS"));
	assert_non_null(strstr(out, "Starting subtest: flood\n"));
	assert_non_null(strstr(out, "runner: This test was killed due to a kernel taint (0x200).\n"));
	assert_null(strstr(out, "Subtest flood:"));
	/* Stopped for the taint, not for a timeout: exit:, dead of the SIGQUIT. */
	if (strncmp(run_file(f, "0/journal.txt"), "taint\nflood\nexit:-3 (", 21) != 0)
		fail_msg("0/journal.txt: %s", run_file(f, "0/journal.txt"));
	assert_non_null(strstr(f->console, "job 1: Kernel tainted: sending SIGQUIT\n"));
	assert_string_equal(run_file(f, "aborted.txt"),
			    "Aborted after: igt_basic (taint)\n\n"
			    "Kernel badly tainted (0x200, 0x200) (check dmesg for details)\n");
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "exit 0 -3 "));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "\nabort forced\n"));
	assert_null(strstr(run_file(f, "bootci-journal.txt"), "start 1\n"));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@taint"), "pass");
	assert_string_equal(result_of(f, "igt@runner@aborted"), "fail");
	assert_string_equal(result_of(f, "igt@igt_timing@sleep-1"), "notrun");
	/* flood started on a tainted kernel and was stopped before any result: incomplete */
	assert_string_equal(result_of(f, "igt@igt_basic@flood"), "incomplete");
}

static void exit_112_aborts_the_run(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\nigt@igt_basic@abort\nigt@igt_basic@skip\n", "");
	assert_int_equal(run_keeping_console(f), 0);
	assert_non_null(strstr(run_file(f, "1/journal.txt"), "abort\nexit:112 ("));
	assert_non_null(strstr(run_file(f, "1/err.txt"), "CRITICAL: abort condition: device_lost\n"));
	assert_string_equal(run_file(f, "aborted.txt"),
			    "Aborted after: igt_basic (abort)\n\nTest exited with IGT_EXIT_ABORT\n");
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "exit 1 112 "));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "\nabort forced\n"));
	assert_null(strstr(run_file(f, "bootci-journal.txt"), "start 2\n"));
	assert_non_null(strstr(f->console, "error: aborting the run: Test exited with IGT_EXIT_ABORT\n"));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "pass");
	assert_string_equal(result_of(f, "igt@runner@aborted"), "fail");
	assert_string_equal(result_of(f, "igt@igt_basic@skip"), "notrun");
	/* Started, never ended, exit 112: igt_runner's resultgen says abort. */
	assert_string_equal(result_of(f, "igt@igt_basic@abort"), "abort");
}

static void overall_timeout_stops_the_run(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_timing@sleep-1\nigt@igt_basic@pass\nigt@igt_basic@skip\n",
	      "bootci.overall_timeout=1");
	assert_int_equal(run_keeping_console(f), 0);
	/* The job running when the time ran out ends normally; no later job starts. */
	assert_non_null(strstr(run_file(f, "0/journal.txt"), "sleep-1\nexit:0 ("));
	assert_string_equal(run_file(f, "aborted.txt"),
			    "Aborted after: igt_timing (sleep-1)\n\nOverall timeout exceeded\n");
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "exit 0 0 "));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "\nabort forced\ndone\n"));
	assert_null(strstr(run_file(f, "bootci-journal.txt"), "start 1\n"));
	assert_non_null(strstr(f->console, "error: aborting the run: Overall timeout exceeded\n"));
	assert_non_null(run_file(f, "endtime.txt"));
	generate(f);
	assert_string_equal(result_of(f, "igt@igt_timing@sleep-1"), "pass");
	assert_string_equal(result_of(f, "igt@igt_basic@pass"), "notrun");
	assert_string_equal(result_of(f, "igt@igt_basic@skip"), "notrun");
	assert_string_equal(result_of(f, "igt@runner@aborted"), "fail");
}

static void harmless_taint_does_not_abort(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\nigt@igt_basic@skip\n", "bootci.abort_on=taint");
	/* Outside igt_runner's set: TAINT_OOT_MODULE | TAINT_UNSIGNED_MODULE (out-of-tree drivers),
	 * TAINT_USER, TAINT_FIRMWARE_WORKAROUND (many machines boot with it), TAINT_TEST (KUnit). */
	fakeroot_write(&f->root, "/proc/sys/kernel/tainted", "276544\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_null(run_file(f, "aborted.txt"));
	assert_non_null(strstr(run_file(f, "bootci-journal.txt"), "start 1\n"));
}

static void lockdep_off_aborts_the_run(void **state)
{
	struct fixture *f = *state;

	start(f, "igt@igt_basic@pass\nigt@igt_basic@skip\n", "bootci.abort_on=taint,lockdep");
	fakeroot_write(&f->root, "/proc/lockdep_stats", " lock-classes: 1\n debug_locks:                           0\n");
	assert_int_equal(bci_igt_run(&f->ex), 0);
	assert_non_null(strstr(run_file(f, "aborted.txt"), "Lockdep not active"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(plan_and_results, setup, teardown),
		cmocka_unit_test_setup_teardown(include_selects_tests, setup, teardown),
		cmocka_unit_test_setup_teardown(include_selecting_nothing_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(multiple_mode_groups_subtests, setup, teardown),
		cmocka_unit_test_setup_teardown(multiple_mode_journals_subtests_skipped_in_the_fixture,
						setup, teardown),
		cmocka_unit_test_setup_teardown(suspend_cycles_are_planned_as_jobs, setup, teardown),
		cmocka_unit_test_setup_teardown(suspend_cycles_from_the_configuration, setup, teardown),
		cmocka_unit_test_setup_teardown(suspend_cycle_line_not_written_is_incomplete, setup, teardown),
		cmocka_unit_test_setup_teardown(suspend_cycles_torn_line_is_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_suspend_item_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_testlist_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(unreadable_testlist_aborts_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(a_plan_that_kills_the_machine_is_capped, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_binary_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(per_test_timeout_kills, setup, teardown),
		cmocka_unit_test_setup_teardown(per_test_timeout_escalates_to_sigkill, setup, teardown),
		cmocka_unit_test_setup_teardown(inactivity_timeout_kills, setup, teardown),
		cmocka_unit_test_setup_teardown(output_limit_keeps_protocol_and_tail, setup, teardown),
		cmocka_unit_test(output_limit_keeps_what_the_generator_reads),
		cmocka_unit_test_setup_teardown(resume_marks_the_job_in_flight_incomplete, setup, teardown),
		cmocka_unit_test_setup_teardown(a_jobs_line_is_said_once_the_next_test_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(progress_lines_are_read_by_the_master, setup, teardown),
		cmocka_unit_test_setup_teardown(resume_runs_remaining_subtests_of_a_multiple_job, setup, teardown),
		cmocka_unit_test_setup_teardown(resume_continues_after_started_dynamic_subtests, setup, teardown),
		cmocka_unit_test_setup_teardown(kernel_crash_is_attributed_to_the_subtest, setup, teardown),
		cmocka_unit_test_setup_teardown(kernel_crash_in_a_dynamic_subtest, setup, teardown),
		cmocka_unit_test_setup_teardown(kernel_crash_dump_names_the_dynamic_subtest, setup, teardown),
		cmocka_unit_test_setup_teardown(boot_cap_ends_a_crash_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(lost_exit_line_does_not_run_the_job_again, setup, teardown),
		cmocka_unit_test_setup_teardown(lost_exit_line_does_not_resume_dynamic_subtests, setup, teardown),
		cmocka_unit_test_setup_teardown(job_without_subtests_in_flight_is_incomplete, setup, teardown),
		cmocka_unit_test_setup_teardown(a_job_the_journal_lost_is_not_run_again, setup, teardown),
		cmocka_unit_test_setup_teardown(the_job_in_flight_is_found_from_its_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(dynamic_starts_lost_with_the_journal_come_back, setup,
						teardown),
		cmocka_unit_test_setup_teardown(lost_job_journal_exit_is_written_again, setup, teardown),
		cmocka_unit_test_setup_teardown(incomplete_job_gets_no_end_in_journal_txt, setup, teardown),
		cmocka_unit_test_setup_teardown(one_barrier_between_a_job_and_the_next, setup, teardown),
		cmocka_unit_test_setup_teardown(stderr_before_a_result_is_durable_with_it, setup, teardown),
		cmocka_unit_test_setup_teardown(an_end_whose_outputs_were_cut_gets_no_exit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_jobs_exit_is_durable_before_a_suspend_cycle, setup,
						teardown),
		cmocka_unit_test_setup_teardown(finished_run_is_not_run_again, setup, teardown),
		cmocka_unit_test_setup_teardown(journal_not_durable_stops_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(taint_aborts_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(taint_between_subtests_stops_the_job, setup, teardown),
		cmocka_unit_test_setup_teardown(exit_112_aborts_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(overall_timeout_stops_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(harmless_taint_does_not_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(machine_check_taint_aborts, setup, teardown),
		cmocka_unit_test_setup_teardown(lockdep_off_aborts_the_run, setup, teardown),
	};

	return cmocka_run_group_tests_name("igt", tests, NULL, NULL);
}
