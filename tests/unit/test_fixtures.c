// SPDX-License-Identifier: MIT
/*
 * The IGT-like fixture programs (tests/fixtures/igt_*.c): they stand in for real
 * IGT binaries in the executor's tests and in the lab, so their exact output,
 * kernel log records and exit statuses are checked here against what IGT's
 * igt_core prints. Timestamps, pids, elapsed times, the uname in the version
 * line and source line numbers are normalised before comparing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeroot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 8

struct fixture_run {
	char dir[64];	      /* scratch directory: out, err, kmsg */
	pid_t pid;
	int status;	      /* from waitpid() */
	char *raw_out;	      /* stdout as printed */
	char *out, *err, *kmsg; /* normalised; kmsg "" when nothing was logged */
};

static char *read_whole(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t size = 0, used = 0, n;

	if (!f)
		return strdup("");
	do {
		if (size - used < 65536) {
			size = size ? size * 2 : 65536;
			text = realloc(text, size + 1);
			assert_non_null(text);
		}
		n = fread(text + used, 1, size - used, f);
		used += n;
	} while (n > 0);
	fclose(f);
	text[used] = '\0';
	return text;
}

/* Replaces every match of @pattern (POSIX extended, line-wise) in @text by @by. */
static char *replace_all(char *text, const char *pattern, const char *by)
{
	size_t size = strlen(text) * 2 + 1, used = 0, by_len = strlen(by);
	char *result = malloc(size);
	const char *p = text;
	regmatch_t match;
	regex_t re;
	int flags = 0;

	assert_non_null(result);
	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE), 0);
	while (*p && regexec(&re, p, 1, &match, flags) == 0) {
		size_t before = (size_t)match.rm_so;

		if (used + before + by_len + 1 > size) {
			size = (used + before + by_len + 1) * 2;
			result = realloc(result, size);
			assert_non_null(result);
		}
		memcpy(result + used, p, before);
		used += before;
		memcpy(result + used, by, by_len);
		used += by_len;
		if (match.rm_eo == match.rm_so) {
			/* An empty match: copy one character so that the scan moves on. */
			result[used++] = p[match.rm_eo];
			p += match.rm_eo + 1;
		} else {
			p += match.rm_eo;
		}
		/* '^' must not match in the middle of a line after a replacement. */
		flags = p > text && p[-1] != '\n' ? REG_NOTBOL : 0;
	}
	if (used + strlen(p) + 1 > size) {
		size = used + strlen(p) + 1;
		result = realloc(result, size);
		assert_non_null(result);
	}
	strcpy(result + used, p);
	regfree(&re);
	free(text);
	return result;
}

/* What varies between runs of the same fixture: times, pids, the host, line numbers. */
static char *normalise(char *text)
{
	text = replace_all(text, "^\\[[0-9]+\\.[0-9]{6}\\] \\(", "(");
	text = replace_all(text, "^\\(([a-z_]+):[0-9]+\\) ", "(FIXTURE:PID) ");
	text = replace_all(text, "\\([0-9]+\\.[0-9]{3}s\\)", "(T)");
	text = replace_all(text, "^IGT-Version: .*$", "IGT-Version: V");
	text = replace_all(text, ":[0-9]+:$", ":L:");
	return text;
}

/* Starts fixture @name with @args (NULL-terminated) and the "KEY=VALUE" @env
 * additions; its kernel log records go to a file of the run's directory. */
static void fixture_start(struct fixture_run *run, const char *name, const char *const *args,
			  const char *const *env)
{
	const char *path = fixture_path(name);
	char file[128];

	memset(run, 0, sizeof(*run));
	snprintf(run->dir, sizeof(run->dir), "/tmp/bootci-fixtures-XXXXXX");
	assert_non_null(mkdtemp(run->dir));
	fflush(NULL);
	run->pid = fork();
	assert_true(run->pid >= 0);
	if (run->pid == 0) {
		const char *argv[MAX_ARGS + 2] = { name };
		struct rlimit no_core = { 0, 0 };
		int i, fd;

		for (i = 0; args && args[i] && i < MAX_ARGS; i++)
			argv[i + 1] = args[i];
		snprintf(file, sizeof(file), "%s/out", run->dir);
		fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, STDOUT_FILENO);
		snprintf(file, sizeof(file), "%s/err", run->dir);
		fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, STDERR_FILENO);
		snprintf(file, sizeof(file), "%s/kmsg", run->dir);
		setenv("BOOTCI_FIXTURE_KMSG", file, 1);
		setenv("IGT_SRANDOM", "7", 1);
		unsetenv("IGT_SENTINEL_ON_STDERR");
		unsetenv("IGT_LOG_LEVEL");
		unsetenv("BOOTCI_FIXTURE_FLOOD_MIB");
		unsetenv("BOOTCI_FIXTURE_TAINTED");
		for (i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		/* SIGQUIT and the like must not leave core files on the host. */
		setrlimit(RLIMIT_CORE, &no_core);
		execv(path, (char *const *)argv);
		_exit(127);
	}
}

/* Waits for the run to end (killing it after @seconds) and collects its output. */
static void fixture_finish(struct fixture_run *run, int seconds)
{
	struct timespec step = { .tv_nsec = 10 * 1000 * 1000 };
	char file[128];
	int waited;
	pid_t pid;

	for (waited = 0; (pid = waitpid(run->pid, &run->status, WNOHANG)) == 0; waited++) {
		if (waited == seconds * 100) {
			kill(run->pid, SIGKILL);
			waitpid(run->pid, &run->status, 0);
			fail_msg("%s did not end within %d s", run->dir, seconds);
		}
		nanosleep(&step, NULL);
	}
	assert_int_equal(pid, run->pid);
	snprintf(file, sizeof(file), "%s/out", run->dir);
	run->raw_out = read_whole(file);
	run->out = normalise(strdup(run->raw_out));
	snprintf(file, sizeof(file), "%s/err", run->dir);
	run->err = normalise(read_whole(file));
	snprintf(file, sizeof(file), "%s/kmsg", run->dir);
	run->kmsg = read_whole(file);
}

static void fixture_cleanup(struct fixture_run *run)
{
	char file[128];
	const char *names[] = { "out", "err", "kmsg" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(file, sizeof(file), "%s/%s", run->dir, names[i]);
		unlink(file);
	}
	rmdir(run->dir);
	free(run->raw_out);
	free(run->out);
	free(run->err);
	free(run->kmsg);
}

static void fixture_run(struct fixture_run *run, const char *name, const char *const *args,
			const char *const *env)
{
	fixture_start(run, name, args, env);
	fixture_finish(run, 30);
}

static void assert_exit(const struct fixture_run *run, int code)
{
	if (!WIFEXITED(run->status))
		fail_msg("%s did not exit (status 0x%x)", run->dir, run->status);
	assert_int_equal(WEXITSTATUS(run->status), code);
}

static void assert_killed(const struct fixture_run *run, int sig)
{
	if (!WIFSIGNALED(run->status))
		fail_msg("%s was not killed (status 0x%x)", run->dir, run->status);
	assert_int_equal(WTERMSIG(run->status), sig);
}

/* Waits until the running fixture's stdout contains @text (it sets itself up first). */
static void wait_for_output(struct fixture_run *run, const char *text)
{
	struct timespec step = { .tv_nsec = 10 * 1000 * 1000 };
	char file[128];
	int i;

	snprintf(file, sizeof(file), "%s/out", run->dir);
	for (i = 0; i < 1000; i++) {
		char *out = read_whole(file);
		bool found = strstr(out, text) != NULL;

		free(out);
		if (found)
			return;
		nanosleep(&step, NULL);
	}
	fail_msg("no \"%s\" from %s", text, run->dir);
}

/* The elapsed time of "Subtest @name: RESULT (1.234s)" in the raw output. */
static double subtest_seconds(const struct fixture_run *run, const char *name)
{
	char prefix[128];
	const char *line, *time;

	snprintf(prefix, sizeof(prefix), "Subtest %s: ", name);
	line = strstr(run->raw_out, prefix);
	assert_non_null(line);
	time = strchr(line, '(');
	assert_non_null(time);
	return strtod(time + 1, NULL);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define HEADER "IGT-Version: V\nUsing IGT_SRANDOM=7 for randomisation\n"

/* ---- igt_basic ---- */

static void basic_lists_subtests_without_running_anything(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--list-subtests"), NULL);
	assert_exit(&run, 0);
	assert_string_equal(run.out, "pass\nfail\nskip\nwarn-stderr\ndmesg-warn\ncrash\ntaint\nflood\nabort\n"
				     "flaky\n");
	assert_string_equal(run.err, "");
	assert_string_equal(run.kmsg, "");
	fixture_cleanup(&run);

	fixture_run(&run, "igt_basic", ARGS("--show-testlist"), NULL);
	assert_exit(&run, 0);
	assert_string_equal(run.out, "igt@igt_basic@pass\nigt@igt_basic@fail\nigt@igt_basic@skip\n"
				     "igt@igt_basic@warn-stderr\nigt@igt_basic@dmesg-warn\n"
				     "igt@igt_basic@crash\nigt@igt_basic@taint\nigt@igt_basic@flood\n"
				     "igt@igt_basic@abort\nigt@igt_basic@flaky\n");
	fixture_cleanup(&run);
}

static void basic_pass(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "pass"), NULL);
	assert_exit(&run, 0);
	assert_string_equal(run.out, HEADER "Starting subtest: pass\n"
					    "Everything is fine.\n"
					    "Subtest pass: SUCCESS (T)\n");
	assert_string_equal(run.err, "");
	assert_string_equal(run.kmsg, "<6>[IGT] igt_basic: executing\n"
				      "<6>[IGT] igt_basic: starting subtest pass\n"
				      "<6>[IGT] igt_basic: finished subtest pass, SUCCESS\n"
				      "<6>[IGT] igt_basic: exiting, ret=0\n");
	fixture_cleanup(&run);
}

static void basic_fail_replays_the_log_on_stderr(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "fail"), NULL);
	assert_exit(&run, 98);
	assert_string_equal(run.out, HEADER "Starting subtest: fail\n"
					    "Comparing two numbers that differ on purpose.\n"
					    "Subtest fail: FAIL (T)\n");
	assert_string_equal(
		run.err,
		"(FIXTURE:PID) CRITICAL: Test assertion failure function basic_fail, "
		"file tests/fixtures/igt_basic.c:L:\n"
		"(FIXTURE:PID) CRITICAL: Failed assertion: expected == got\n"
		"(FIXTURE:PID) CRITICAL: expected 1, got 2\n"
		"Subtest fail failed.\n"
		"**** DEBUG ****\n"
		"(FIXTURE:PID) INFO: Comparing two numbers that differ on purpose.\n"
		"(FIXTURE:PID) CRITICAL: Test assertion failure function basic_fail, "
		"file tests/fixtures/igt_basic.c:L:\n"
		"(FIXTURE:PID) CRITICAL: Failed assertion: expected == got\n"
		"(FIXTURE:PID) CRITICAL: expected 1, got 2\n"
		"****  END  ****\n");
	assert_string_equal(run.kmsg, "<6>[IGT] igt_basic: executing\n"
				      "<6>[IGT] igt_basic: starting subtest fail\n"
				      "<6>[IGT] igt_basic: finished subtest fail, FAIL\n"
				      "<6>[IGT] igt_basic: exiting, ret=98\n");
	fixture_cleanup(&run);
}

static void basic_skip(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "skip"), NULL);
	assert_exit(&run, 77);
	assert_string_equal(run.out, HEADER "Starting subtest: skip\n"
					    "Test requirement not met in function basic_skip, "
					    "file tests/fixtures/igt_basic.c:L:\n"
					    "Test requirement: false\n"
					    "This requirement is never met.\n"
					    "Subtest skip: SKIP (T)\n");
	assert_string_equal(run.err, "");
	assert_string_equal(run.kmsg, "<6>[IGT] igt_basic: executing\n"
				      "<6>[IGT] igt_basic: starting subtest skip\n"
				      "<6>[IGT] igt_basic: finished subtest skip, SKIP\n"
				      "<6>[IGT] igt_basic: exiting, ret=77\n");
	fixture_cleanup(&run);
}

static void basic_warn_stderr_passes_with_a_warning(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "warn-stderr"), NULL);
	assert_exit(&run, 0);
	assert_string_equal(run.out, HEADER "Starting subtest: warn-stderr\n"
					    "Subtest warn-stderr: SUCCESS (T)\n");
	assert_string_equal(run.err,
			    "(FIXTURE:PID) WARNING: Something looks odd, but the test passes.\n");
	fixture_cleanup(&run);
}

static void basic_dmesg_warn_logs_a_kernel_warning(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "dmesg-warn"), NULL);
	assert_exit(&run, 0);
	assert_string_equal(run.out, HEADER "Starting subtest: dmesg-warn\n"
					    "Wrote a warning to the kernel log.\n"
					    "Subtest dmesg-warn: SUCCESS (T)\n");
	assert_string_equal(run.err, "");
	assert_string_equal(run.kmsg,
			    "<6>[IGT] igt_basic: executing\n"
			    "<6>[IGT] igt_basic: starting subtest dmesg-warn\n"
			    "<4>bootci-fixture: deliberate warning from igt_basic@dmesg-warn\n"
			    "<6>[IGT] igt_basic: finished subtest dmesg-warn, SUCCESS\n"
			    "<6>[IGT] igt_basic: exiting, ret=0\n");
	fixture_cleanup(&run);
}

static void basic_crash_is_reported_and_exits_139(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "crash,pass"), NULL);
	/* IGT catches the SIGSEGV, ends the subtest as CRASH, runs the next one and
	 * exits 128 + SIGSEGV. */
	assert_exit(&run, 128 + SIGSEGV);
	assert_string_equal(run.out, HEADER "Starting subtest: pass\n"
					    "Everything is fine.\n"
					    "Subtest pass: SUCCESS (T)\n"
					    "Starting subtest: crash\n"
					    "Writing through a NULL pointer.\n"
					    "Stack trace: not implemented\n"
					    "Subtest crash: CRASH (T)\n");
	assert_string_equal(run.err, "Received signal SIGSEGV.\n");
	assert_string_equal(run.kmsg, "<6>[IGT] igt_basic: executing\n"
				      "<6>[IGT] igt_basic: starting subtest pass\n"
				      "<6>[IGT] igt_basic: finished subtest pass, SUCCESS\n"
				      "<6>[IGT] igt_basic: starting subtest crash\n"
				      "<6>[IGT] igt_basic: finished subtest crash, CRASH\n"
				      "<6>[IGT] igt_basic: exiting, ret=139\n");
	fixture_cleanup(&run);
}

static void basic_flood_prints_the_mebibytes_asked_for(void **state)
{
	static const char line0[] = "flood 0000000000: the quick brown fox jumps over the lazy dog!!\n";
	struct fixture_run run;
	const char *first, *end;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "flood"),
		    ARGS("BOOTCI_FIXTURE_FLOOD_MIB=2"));
	assert_exit(&run, 0);
	assert_int_equal(strlen(line0), 64);
	first = strstr(run.out, line0);
	assert_non_null(first);
	end = strstr(first, "Subtest flood: SUCCESS (T)\n");
	assert_non_null(end);
	assert_int_equal(end - first, 2 * 1024 * 1024);
	assert_non_null(strstr(run.out, "flood 0000032767: the quick"));
	assert_null(strstr(run.out, "flood 0000032768"));
	assert_string_equal(run.err, "");
	fixture_cleanup(&run);
}

static void basic_taint_refuses_outside_the_test_image(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "taint"), NULL);
	assert_exit(&run, 77);
	assert_non_null(strstr(run.out, "Refusing to taint the kernel outside the bootci test image"));
	assert_non_null(strstr(run.out, "Subtest taint: SKIP (T)\n"));
	assert_string_equal(run.err, "");
	fixture_cleanup(&run);
}

static void basic_taint_writes_a_fake_tree_file(void **state)
{
	struct fixture_run run;
	char env[128], path[96];
	FILE *tainted;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/bootci-tainted-%d", (int)getpid());
	tainted = fopen(path, "w");
	assert_non_null(tainted);
	fclose(tainted);
	snprintf(env, sizeof(env), "BOOTCI_FIXTURE_TAINTED=%s", path);
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "taint"), ((const char *const[]){ env, NULL }));
	assert_exit(&run, 0);
	assert_string_equal(run.out, HEADER "Starting subtest: taint\n"
					    "Tainted the kernel with TAINT_WARN (512).\n"
					    "Subtest taint: SUCCESS (T)\n");
	fixture_cleanup(&run);
	char *written = read_whole(path);
	assert_string_equal(written, "512");
	free(written);
	unlink(path);
}

static void basic_abort_exits_112_without_a_result(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "pass,abort"), NULL);
	assert_exit(&run, 112);
	/* The subtest never ends: no result line, and the kernel log has no "exiting". */
	assert_string_equal(run.out, HEADER "Starting subtest: pass\n"
					    "Everything is fine.\n"
					    "Subtest pass: SUCCESS (T)\n"
					    "Starting subtest: abort\n"
					    "The device is gone for good: nothing after this test can be trusted.\n");
	assert_string_equal(run.err,
			    "(FIXTURE:PID) CRITICAL: Test abort in function basic_abort, file "
			    "tests/fixtures/igt_basic.c:L:\n"
			    "(FIXTURE:PID) CRITICAL: abort condition: device_lost\n"
			    "(FIXTURE:PID) CRITICAL: the device stopped answering\n");
	assert_string_equal(run.kmsg, "<6>[IGT] igt_basic: executing\n"
				      "<6>[IGT] igt_basic: starting subtest pass\n"
				      "<6>[IGT] igt_basic: finished subtest pass, SUCCESS\n"
				      "<6>[IGT] igt_basic: starting subtest abort\n");
	fixture_cleanup(&run);
}

static void basic_flaky_fails_one_run_in_three(void **state)
{
	struct fixture_run run;
	int runs = 90, fails = 0, passes = 0;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "flaky"), ARGS("BOOTCI_FIXTURE_FLAKY=pass"));
	assert_exit(&run, 0);
	assert_non_null(strstr(run.out, "Rolled the dice: a pass.\nSubtest flaky: SUCCESS (T)\n"));
	fixture_cleanup(&run);
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "flaky"), ARGS("BOOTCI_FIXTURE_FLAKY=fail"));
	assert_exit(&run, 98);
	assert_non_null(strstr(run.out, "Rolled the dice: the one in three that fails.\n"
				     "Subtest flaky: FAIL (T)\n"));
	assert_non_null(strstr(run.err, "this run is the one in three that fails"));
	fixture_cleanup(&run);
	/* Its own dice each run, whatever IGT_SRANDOM (fixed here) says: 90 runs fail 30 times
	 * on average; 8 to 52 (5 standard deviations either side) leaves a false failure of
	 * this test at about one in a million. */
	for (int i = 0; i < runs; i++) {
		fixture_run(&run, "igt_basic", ARGS("--run-subtest", "flaky"), NULL);
		if (WIFEXITED(run.status) && WEXITSTATUS(run.status) == 98)
			fails++;
		else if (WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0)
			passes++;
		fixture_cleanup(&run);
	}
	print_message("igt_basic@flaky: %d fail(s), %d pass(es) in %d runs\n", fails, passes, runs);
	assert_int_equal(fails + passes, runs);
	assert_in_range(fails, 8, 52);
}

static void basic_run_subtest_takes_igt_patterns(void **state)
{
	struct fixture_run run;

	(void)state;
	/* A comma list; the last pattern that matches decides, '!' excludes. */
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "*,!f*,!c*,!t*,!d*,!a*,fa?l"), NULL);
	assert_exit(&run, 98);
	assert_string_equal(run.kmsg, "<6>[IGT] igt_basic: executing\n"
				      "<6>[IGT] igt_basic: starting subtest pass\n"
				      "<6>[IGT] igt_basic: finished subtest pass, SUCCESS\n"
				      "<6>[IGT] igt_basic: starting subtest fail\n"
				      "<6>[IGT] igt_basic: finished subtest fail, FAIL\n"
				      "<6>[IGT] igt_basic: starting subtest skip\n"
				      "<6>[IGT] igt_basic: finished subtest skip, SKIP\n"
				      "<6>[IGT] igt_basic: starting subtest warn-stderr\n"
				      "<6>[IGT] igt_basic: finished subtest warn-stderr, SUCCESS\n"
				      "<6>[IGT] igt_basic: exiting, ret=98\n");
	fixture_cleanup(&run);

	/* Bracket classes, negated with '^' as in uwildmat; listing ignores --run-subtest
	 * only when it comes first. */
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "[^a-o]*", "--list-subtests"), NULL);
	assert_exit(&run, 0);
	assert_non_null(strstr(run.out, "Starting subtest: pass\n"));
	assert_non_null(strstr(run.out, "Starting subtest: taint\n"));
	assert_null(strstr(run.out, "Starting subtest: fail\n"));
	assert_null(strstr(run.out, "Starting subtest: dmesg-warn\n"));
	fixture_cleanup(&run);
}

static void basic_unknown_subtest_exits_79(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "no-such-subtest"), NULL);
	assert_exit(&run, 79);
	assert_string_equal(run.out, HEADER);
	assert_string_equal(run.err, "(FIXTURE:PID) CRITICAL: Unknown subtest: no-such-subtest\n");
	assert_string_equal(run.kmsg, "<6>[IGT] igt_basic: executing\n");
	fixture_cleanup(&run);

	fixture_run(&run, "igt_basic", ARGS("--no-such-option"), NULL);
	assert_exit(&run, 79);
	assert_string_equal(run.out, "");
	assert_non_null(strstr(run.err, "Usage: igt_basic [OPTIONS]\n"));
	fixture_cleanup(&run);
}

static void sentinel_on_stderr_copies_the_protocol_lines(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "pass"),
		    ARGS("IGT_SENTINEL_ON_STDERR=1"));
	assert_exit(&run, 0);
	assert_string_equal(run.out, HEADER "Starting subtest: pass\n"
					    "Everything is fine.\n"
					    "Subtest pass: SUCCESS (T)\n");
	assert_string_equal(run.err, "Starting subtest: pass\nSubtest pass: SUCCESS (T)\n");
	fixture_cleanup(&run);
}

static void kmsg_that_cannot_be_written_is_ignored(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_basic", ARGS("--run-subtest", "pass"),
		    ARGS("BOOTCI_FIXTURE_KMSG=/nonexistent/bootci/kmsg"));
	assert_exit(&run, 0);
	assert_string_equal(run.err, "");
	assert_non_null(strstr(run.out, "Subtest pass: SUCCESS (T)\n"));
	fixture_cleanup(&run);
}

/* ---- igt_dynamic ---- */

static void dynamic_subtests_decide_their_container(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_dynamic", ARGS("--list-subtests"), NULL);
	assert_exit(&run, 0);
	assert_string_equal(run.out, "mixed\nall-skip\nwith-panic\nwith-crash\n");
	fixture_cleanup(&run);

	fixture_run(&run, "igt_dynamic", ARGS("--run-subtest", "mixed,all-skip"), NULL);
	assert_exit(&run, 98);
	assert_string_equal(run.out,
			    HEADER "Starting subtest: mixed\n"
				   "Starting dynamic subtest: dyn-pass\n"
				   "This dynamic subtest passes.\n"
				   "Dynamic subtest dyn-pass: SUCCESS (T)\n"
				   "Starting dynamic subtest: dyn-fail\n"
				   "Dynamic subtest dyn-fail: FAIL (T)\n"
				   "Starting dynamic subtest: dyn-skip\n"
				   "Test requirement not met in function dynamic_skip, "
				   "file tests/fixtures/igt_dynamic.c:L:\n"
				   "Test requirement: false\n"
				   "This dynamic subtest never has what it needs.\n"
				   "Dynamic subtest dyn-skip: SKIP (T)\n"
				   "Subtest mixed: FAIL (T)\n"
				   "Starting subtest: all-skip\n"
				   "Starting dynamic subtest: dyn-skip\n"
				   "Test requirement not met in function dynamic_skip, "
				   "file tests/fixtures/igt_dynamic.c:L:\n"
				   "Test requirement: false\n"
				   "This dynamic subtest never has what it needs.\n"
				   "Dynamic subtest dyn-skip: SKIP (T)\n"
				   "No dynamic tests executed.\n"
				   "Subtest all-skip: SKIP (T)\n");
	/* Only the dynamic subtest that failed replays its log, not the container. */
	assert_string_equal(run.err,
			    "(FIXTURE:PID) CRITICAL: Test assertion failure function dynamic_fail, "
			    "file tests/fixtures/igt_dynamic.c:L:\n"
			    "(FIXTURE:PID) CRITICAL: Failed assertion: 1 + 1 == 3\n"
			    "(FIXTURE:PID) CRITICAL: arithmetic still works\n"
			    "Dynamic subtest dyn-fail failed.\n"
			    "**** DEBUG ****\n"
			    "(FIXTURE:PID) CRITICAL: Test assertion failure function dynamic_fail, "
			    "file tests/fixtures/igt_dynamic.c:L:\n"
			    "(FIXTURE:PID) CRITICAL: Failed assertion: 1 + 1 == 3\n"
			    "(FIXTURE:PID) CRITICAL: arithmetic still works\n"
			    "****  END  ****\n");
	assert_string_equal(run.kmsg,
			    "<6>[IGT] igt_dynamic: executing\n"
			    "<6>[IGT] igt_dynamic: starting subtest mixed\n"
			    "<6>[IGT] igt_dynamic: starting dynamic subtest dyn-pass\n"
			    "<6>[IGT] igt_dynamic: finished dynamic subtest dyn-pass, SUCCESS\n"
			    "<6>[IGT] igt_dynamic: starting dynamic subtest dyn-fail\n"
			    "<6>[IGT] igt_dynamic: finished dynamic subtest dyn-fail, FAIL\n"
			    "<6>[IGT] igt_dynamic: starting dynamic subtest dyn-skip\n"
			    "<6>[IGT] igt_dynamic: finished dynamic subtest dyn-skip, SKIP\n"
			    "<6>[IGT] igt_dynamic: finished subtest mixed, FAIL\n"
			    "<6>[IGT] igt_dynamic: starting subtest all-skip\n"
			    "<6>[IGT] igt_dynamic: starting dynamic subtest dyn-skip\n"
			    "<6>[IGT] igt_dynamic: finished dynamic subtest dyn-skip, SKIP\n"
			    "<6>[IGT] igt_dynamic: finished subtest all-skip, SKIP\n"
			    "<6>[IGT] igt_dynamic: exiting, ret=98\n");
	fixture_cleanup(&run);
}

static void dynamic_subtest_option_selects(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_dynamic",
		    ARGS("--run-subtest", "mixed", "--dynamic-subtest", "dyn-pass"), NULL);
	assert_exit(&run, 0);
	assert_string_equal(run.out, HEADER "Starting subtest: mixed\n"
					    "Starting dynamic subtest: dyn-pass\n"
					    "This dynamic subtest passes.\n"
					    "Dynamic subtest dyn-pass: SUCCESS (T)\n"
					    "Subtest mixed: SUCCESS (T)\n");
	assert_string_equal(run.err, "");
	fixture_cleanup(&run);

	fixture_run(&run, "igt_dynamic",
		    ARGS("--run-subtest", "mixed", "--dynamic-subtest", "*,!dyn-pass,!dyn-skip"), NULL);
	assert_exit(&run, 98);
	assert_non_null(strstr(run.out, "Dynamic subtest dyn-fail: FAIL (T)\nSubtest mixed: FAIL (T)\n"));
	assert_null(strstr(run.out, "dyn-pass"));
	fixture_cleanup(&run);

	fixture_run(&run, "igt_dynamic",
		    ARGS("--run-subtest", "mixed", "--dynamic-subtest", "no-such-dynamic"), NULL);
	assert_exit(&run, 77);
	assert_string_equal(run.out, HEADER "Starting subtest: mixed\n"
					    "No dynamic tests executed.\n"
					    "Subtest mixed: SKIP (T)\n");
	fixture_cleanup(&run);
}

/* ---- the fixtures that kill the kernel: never on this host ---- */

/* Refuses to go on where the fixtures' own guard would let them fire. */
static void skip_inside_a_test_image(void)
{
	if (access("/etc/bootci/executor.conf", F_OK) == 0 || getpid() == 1) {
		print_message("refusing to run kernel-killing fixtures: this looks like a bootci "
			      "test image\n");
		skip();
	}
}

static void kernel_fixtures_skip_outside_the_test_image(void **state)
{
	struct fixture_run run;

	(void)state;
	skip_inside_a_test_image();
	fixture_run(&run, "igt_kernel", NULL, NULL);
	assert_exit(&run, 77);
	assert_string_equal(
		run.out,
		HEADER "Starting subtest: panic\n"
		       "Test requirement not met in function fixture_crash_kernel, "
		       "file tests/fixtures/igt_fixture.h:L:\n"
		       "Test requirement: fixture_in_test_image()\n"
		       "Refusing to panic the kernel outside the bootci test image (needs "
		       "/etc/bootci/executor.conf and PID 1 as the parent).\n"
		       "Last errno: 2, No such file or directory\n"
		       "Subtest panic: SKIP (T)\n"
		       "Starting subtest: hang\n"
		       "Test requirement not met in function fixture_crash_kernel, "
		       "file tests/fixtures/igt_fixture.h:L:\n"
		       "Test requirement: fixture_in_test_image()\n"
		       "Refusing to hang the kernel outside the bootci test image (needs "
		       "/etc/bootci/executor.conf and PID 1 as the parent).\n"
		       "Last errno: 2, No such file or directory\n"
		       "Subtest hang: SKIP (T)\n"
		       "Starting subtest: panic-at-start\n"
		       "Test requirement not met in function kernel_panic_at_start, "
		       "file tests/fixtures/igt_kernel.c:L:\n"
		       "Test requirement: fixture_in_test_image()\n"
		       "Refusing to panic the kernel at start outside the bootci test image (needs "
		       "/etc/bootci/executor.conf and PID 1 as the parent).\n"
		       "Last errno: 2, No such file or directory\n"
		       "Subtest panic-at-start: SKIP (T)\n");
	assert_string_equal(run.err, "");
	assert_string_equal(run.kmsg, "<6>[IGT] igt_kernel: executing\n"
				      "<6>[IGT] igt_kernel: starting subtest panic\n"
				      "<6>[IGT] igt_kernel: finished subtest panic, SKIP\n"
				      "<6>[IGT] igt_kernel: starting subtest hang\n"
				      "<6>[IGT] igt_kernel: finished subtest hang, SKIP\n"
				      "<6>[IGT] igt_kernel: starting subtest panic-at-start\n"
				      "<6>[IGT] igt_kernel: finished subtest panic-at-start, SKIP\n"
				      "<6>[IGT] igt_kernel: exiting, ret=77\n");
	fixture_cleanup(&run);

	/* The dynamic one skips alone; its container passes on what did run. */
	fixture_run(&run, "igt_dynamic", ARGS("--run-subtest", "with-panic"), NULL);
	assert_exit(&run, 0);
	assert_non_null(strstr(run.out, "Dynamic subtest dyn-pass: SUCCESS (T)\n"
					"Starting dynamic subtest: dyn-panic\n"
					"Test requirement not met"));
	assert_non_null(strstr(run.out, "Refusing to panic the kernel outside the bootci test"));
	assert_non_null(strstr(run.out, "Dynamic subtest dyn-panic: SKIP (T)\n"
					"Starting dynamic subtest: dyn-after\n"));
	assert_non_null(strstr(run.out, "Dynamic subtest dyn-after: SUCCESS (T)\n"
					"Subtest with-panic: SUCCESS (T)\n"));
	fixture_cleanup(&run);

	/* A dynamic subtest's SIGSEGV: it is CRASH, its subtest still SUCCESS, the binary dies of
	 * it (139 = 128 + SIGSEGV as the fixture's runner reports it). */
	fixture_run(&run, "igt_dynamic", ARGS("--run-subtest", "with-crash"), NULL);
	assert_exit(&run, 128 + SIGSEGV);
	assert_non_null(strstr(run.out, "Dynamic subtest dyn-crash: CRASH (T)\n"
					"Subtest with-crash: SUCCESS (T)\n"));
	assert_non_null(strstr(run.err, "Received signal SIGSEGV.\n"));
	fixture_cleanup(&run);
}

/* ---- igt_timing ---- */

static void timing_reports_real_elapsed_times(void **state)
{
	struct fixture_run run;
	char name[16];
	unsigned i;

	(void)state;
	fixture_run(&run, "igt_timing", ARGS("--run-subtest", "sleep-1,quick-*"), NULL);
	assert_exit(&run, 0);
	assert_true(subtest_seconds(&run, "sleep-1") >= 1.0);
	assert_true(subtest_seconds(&run, "sleep-1") < 10.0);
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "quick-%03u", i);
		assert_true(subtest_seconds(&run, name) >= 0.001);
	}
	assert_null(strstr(run.out, "quick-100"));
	assert_string_equal(run.err, "");
	fixture_cleanup(&run);
}

static void timing_sleep_long_dies_of_term_and_names_quit(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_start(&run, "igt_timing", ARGS("--run-subtest", "sleep-long"), NULL);
	wait_for_output(&run, "still sleeping, 3599 s left\n");
	kill(run.pid, SIGTERM);
	fixture_finish(&run, 10);
	/* SIGTERM is one of the signals IGT catches silently and dies of again. */
	assert_killed(&run, SIGTERM);
	assert_string_equal(run.err, "");
	fixture_cleanup(&run);

	fixture_start(&run, "igt_timing", ARGS("--run-subtest", "sleep-long"), NULL);
	wait_for_output(&run, "Sleeping for 3600 s.\n");
	kill(run.pid, SIGQUIT);
	fixture_finish(&run, 10);
	assert_killed(&run, SIGQUIT);
	assert_string_equal(run.err, "Received signal SIGQUIT.\n");
	assert_string_equal(run.out, HEADER "Starting subtest: sleep-long\n"
					    "Sleeping for 3600 s.\n"
					    "Stack trace: not implemented\n");
	fixture_cleanup(&run);
}

/* Starts igt_timing's @subtest, sends it @signals (0-terminated) once it says @ready,
 * and checks that only the SIGKILL after them ends it. */
static void timing_only_sigkill_ends(const char *subtest, const char *ready, const int *signals)
{
	struct timespec grace = { .tv_nsec = 300 * 1000 * 1000 };
	struct fixture_run run;
	int status;

	fixture_start(&run, "igt_timing", ARGS("--run-subtest", subtest), NULL);
	wait_for_output(&run, ready);
	for (; *signals; signals++)
		kill(run.pid, *signals);
	nanosleep(&grace, NULL);
	assert_int_equal(waitpid(run.pid, &status, WNOHANG), 0);
	kill(run.pid, SIGKILL);
	fixture_finish(&run, 10);
	assert_killed(&run, SIGKILL);
	/* Ignored, not caught: IGT's handler never ran to name a signal. */
	assert_string_equal(run.err, "");
	fixture_cleanup(&run);
}

static void timing_ignore_term_needs_kill(void **state)
{
	(void)state;
	timing_only_sigkill_ends("ignore-term", "Ignoring SIGTERM, sleeping for 3600 s.\n",
				 (const int[]){ SIGTERM, 0 });
}

static void timing_ignore_quit_needs_kill(void **state)
{
	(void)state;
	/* What a runner sends first on a timeout, and what init sends at shutdown. */
	timing_only_sigkill_ends("ignore-quit", "Ignoring SIGQUIT and SIGTERM, sleeping for 3600 s.\n",
				 (const int[]){ SIGQUIT, SIGTERM, 0 });
}

static void timing_silent_hang_says_nothing(void **state)
{
	struct timespec quiet = { .tv_sec = 1, .tv_nsec = 500 * 1000 * 1000 };
	struct fixture_run run;

	(void)state;
	fixture_start(&run, "igt_timing", ARGS("--run-subtest", "silent-hang"), NULL);
	wait_for_output(&run, "Starting subtest: silent-hang\n");
	nanosleep(&quiet, NULL);
	kill(run.pid, SIGKILL);
	fixture_finish(&run, 10);
	assert_killed(&run, SIGKILL);
	assert_string_equal(run.out, HEADER "Starting subtest: silent-hang\n");
	assert_string_equal(run.err, "");
	fixture_cleanup(&run);
}

/* ---- igt_simple ---- */

static void simple_test_without_subtests(void **state)
{
	struct fixture_run run;

	(void)state;
	fixture_run(&run, "igt_simple", NULL, NULL);
	assert_exit(&run, 0);
	assert_string_equal(run.out, HEADER "A test without subtests, passing.\nSUCCESS (T)\n");
	assert_string_equal(run.err, "");
	assert_string_equal(run.kmsg, "<6>[IGT] igt_simple: executing\n"
				      "<6>[IGT] igt_simple: exiting, ret=0\n");
	fixture_cleanup(&run);

	fixture_run(&run, "igt_simple", ARGS("--list-subtests"), NULL);
	assert_exit(&run, 79);
	assert_string_equal(run.out, "");
	fixture_cleanup(&run);

	fixture_run(&run, "igt_simple", ARGS("--run-subtest", "anything"), NULL);
	assert_exit(&run, 79);
	assert_string_equal(run.out, "");
	assert_string_equal(run.err, "(FIXTURE:PID) WARNING: Unknown subtest: anything\n");
	assert_string_equal(run.kmsg, "");
	fixture_cleanup(&run);

	fixture_run(&run, "igt_simple", ARGS("--show-testlist"), NULL);
	assert_exit(&run, 0);
	assert_string_equal(run.out, "igt@igt_simple\n");
	fixture_cleanup(&run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(basic_lists_subtests_without_running_anything),
		cmocka_unit_test(basic_pass),
		cmocka_unit_test(basic_fail_replays_the_log_on_stderr),
		cmocka_unit_test(basic_skip),
		cmocka_unit_test(basic_warn_stderr_passes_with_a_warning),
		cmocka_unit_test(basic_dmesg_warn_logs_a_kernel_warning),
		cmocka_unit_test(basic_crash_is_reported_and_exits_139),
		cmocka_unit_test(basic_flood_prints_the_mebibytes_asked_for),
		cmocka_unit_test(basic_taint_refuses_outside_the_test_image),
		cmocka_unit_test(basic_taint_writes_a_fake_tree_file),
		cmocka_unit_test(basic_abort_exits_112_without_a_result),
		cmocka_unit_test(basic_flaky_fails_one_run_in_three),
		cmocka_unit_test(basic_run_subtest_takes_igt_patterns),
		cmocka_unit_test(basic_unknown_subtest_exits_79),
		cmocka_unit_test(sentinel_on_stderr_copies_the_protocol_lines),
		cmocka_unit_test(kmsg_that_cannot_be_written_is_ignored),
		cmocka_unit_test(dynamic_subtests_decide_their_container),
		cmocka_unit_test(dynamic_subtest_option_selects),
		cmocka_unit_test(kernel_fixtures_skip_outside_the_test_image),
		cmocka_unit_test(timing_reports_real_elapsed_times),
		cmocka_unit_test(timing_sleep_long_dies_of_term_and_names_quit),
		cmocka_unit_test(timing_ignore_term_needs_kill),
		cmocka_unit_test(timing_ignore_quit_needs_kill),
		cmocka_unit_test(timing_silent_hang_says_nothing),
		cmocka_unit_test(simple_test_without_subtests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
