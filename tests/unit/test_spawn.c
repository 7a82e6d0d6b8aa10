// SPDX-License-Identifier: MIT
/* lib/spawn.c: starting a child, its environment, and the kill escalation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs @script under /bin/sh with @envp, its stdout and stderr in @out. */
static int run_sh(const char *script, char *const *envp, char *out, size_t size, int *status)
{
	char *const argv[] = { "sh", "-c", (char *)script, NULL };
	FILE *capture = tmpfile();
	struct bci_spawn s = { .path = "/bin/sh", .argv = argv, .envp = envp, .stdin_fd = -1,
			       .stdout_fd = fileno(capture), .stderr_fd = fileno(capture) };
	pid_t pid;
	size_t n;

	assert_int_equal(bci_spawn_start(&s, &pid), 0);
	assert_int_equal(bci_spawn_wait(pid, status), 0);
	rewind(capture);
	n = fread(out, 1, size - 1, capture);
	out[n] = '\0';
	fclose(capture);
	return 0;
}

static void env_is_built_in_the_parent(void **state)
{
	char *const base[] = { "A=1", "KEEP=yes", "IGT_SENTINEL_ON_STDERR=0", NULL };
	const char *const extra[] = { "IGT_SENTINEL_ON_STDERR=1", "NEW=x=y", NULL };
	struct bci_strv env = { 0 };
	char out[256];
	int status;

	(void)state;
	assert_int_equal(bci_spawn_env(&env, base, extra), 0);
	assert_int_equal(env.count, 4);
	run_sh("echo \"$A $KEEP $IGT_SENTINEL_ON_STDERR $NEW\"", env.items, out, sizeof(out), &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_string_equal(out, "1 yes 1 x=y\n");
	bci_strv_free(&env);
}

/*
 * bci_spawn_start() returns once the child runs the new program (vfork): its
 * /proc entry already names that program and its group is its own, whatever
 * the scheduler did. A child forked without waiting would often still be
 * this test binary here.
 */
static void start_returns_once_the_program_runs(void **state)
{
	char *const argv[] = { "/bin/sleep", "10", NULL };
	struct bci_spawn s = { .path = argv[0], .argv = argv, .stdin_fd = -1, .stdout_fd = -1,
			       .stderr_fd = -1, .process_group = true };
	char link[64], exe[4096], comm[64] = "";
	int status;

	(void)state;
	for (int i = 0; i < 20; i++) {
		pid_t pid;
		ssize_t n;
		FILE *f;

		assert_int_equal(bci_spawn_start(&s, &pid), 0);
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		snprintf(link, sizeof(link), "/proc/%d/comm", (int)pid);
		f = fopen(link, "r");
		if (f && !fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		if (f)
			fclose(f);
		assert_int_equal(getpgid(pid), pid);
		kill(pid, SIGKILL);
		assert_int_equal(bci_spawn_wait(pid, &status), 0);
		assert_true(n > 0);
		exe[n] = '\0';
		if (!strstr(exe, "sleep") || strcmp(comm, "sleep\n") != 0)
			fail_msg("start %d: the child runs %s (%s), not sleep", i, exe, comm);
	}
}

static void exec_failure_is_said_and_has_its_status(void **state)
{
	char *const argv[] = { "/nonexistent/prog", NULL };
	struct bci_spawn s = { .path = argv[0], .argv = argv, .stdin_fd = -1, .stdout_fd = -1,
			       .stderr_fd = -1, .exec_failed_status = 79 };
	char out[256], how[128];
	FILE *capture = tmpfile();
	int status;
	pid_t pid;
	size_t n;

	(void)state;
	s.stderr_fd = fileno(capture);
	assert_int_equal(bci_spawn_start(&s, &pid), 0);
	assert_int_equal(bci_spawn_wait(pid, &status), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 79);
	rewind(capture);
	n = fread(out, 1, sizeof(out) - 1, capture);
	out[n] = '\0';
	fclose(capture);
	assert_string_equal(out, "bootci: cannot execute /nonexistent/prog\n");
	bci_spawn_describe(status, how, sizeof(how));
	assert_string_equal(how, "exit status 79");
}

/* Ignored and blocked signals of the parent do not reach the child. */
static void child_starts_with_default_signals(void **state)
{
	sigset_t term, old;
	char out[256];
	int status;

	(void)state;
	signal(SIGUSR1, SIG_IGN);
	sigemptyset(&term);
	sigaddset(&term, SIGUSR2);
	sigprocmask(SIG_BLOCK, &term, &old);
	run_sh("kill -USR1 $$; echo survived", NULL, out, sizeof(out), &status);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGUSR1);
	run_sh("kill -USR2 $$; echo survived", NULL, out, sizeof(out), &status);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGUSR2);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGUSR1, SIG_DFL);
}

/*
 * A child that ignores SIGTERM, in its own group: the escalation sends
 * SIGTERM, waits its grace, sends SIGKILL, then gives up after give_up_ms
 * (driven here by a fake clock: no sleeping on timing).
 */
static void kill_escalates_term_then_kill(void **state)
{
	char *const argv[] = { "sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done",
			       NULL };
	int pipefd[2], status;
	char ready[8];
	struct bci_spawn s = { .path = "/bin/sh", .argv = argv, .stdin_fd = -1, .stderr_fd = -1,
			       .process_group = true };
	struct bci_spawn_kill k = { .first_signal = SIGTERM, .grace_ms = 100, .give_up_ms = 50 };
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	s.stdout_fd = pipefd[1];
	assert_int_equal(bci_spawn_start(&s, &pid), 0);
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], ready, 6), 6); /* the trap is set */
	close(pipefd[0]);
	assert_int_equal(getpgid(pid), pid);

	assert_int_equal(bci_spawn_kill_due(&k, 1000), SIGTERM);
	assert_int_equal(k.sent, 0); /* only said, not sent */
	assert_int_equal(bci_spawn_kill_step(&k, pid, 1000), SIGTERM);
	assert_int_equal(bci_spawn_kill_step(&k, pid, 1099), 0);
	/* SIGTERM is ignored: the child is still there. */
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
	assert_int_equal(bci_spawn_kill_due(&k, 1100), SIGKILL);
	assert_int_equal(bci_spawn_kill_step(&k, pid, 1100), SIGKILL);
	assert_int_equal(bci_spawn_wait(pid, &status), 0);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_int_equal(bci_spawn_kill_step(&k, pid, 1149), 0);
	assert_int_equal(bci_spawn_kill_step(&k, pid, 1150), -ETIME);
}

static void find_searches_path_then_more_dirs(void **state)
{
	char *found;

	(void)state;
	setenv("PATH", "/nonexistent", 1);
	assert_null(bci_spawn_find("sh", NULL));
	found = bci_spawn_find("sh", "/nowhere:/bin");
	assert_string_equal(found, "/bin/sh");
	free(found);
	found = bci_spawn_find("./x/y", NULL);
	assert_string_equal(found, "./x/y");
	free(found);
}

static void proc_stat_is_parsed_whatever_the_name(void **state)
{
	struct bci_spawn_proc p;
	static const char odd[] = "4242 (a) b (c) d) S 1 4240 4240 0 -1 4194560 90 0 0 0";

	(void)state;
	assert_int_equal(bci_spawn_proc_parse(odd, sizeof(odd) - 1, &p), 0);
	assert_int_equal(p.pid, 4242);
	assert_int_equal(p.ppid, 1);
	assert_int_equal(p.pgrp, 4240);
	assert_int_equal(p.state, 'S');
	assert_string_equal(p.comm, "a) b (c) d");
	assert_int_equal(bci_spawn_proc_parse("12 (sleep) Z 3 4", 16, &p), 0);
	assert_int_equal(p.state, 'Z');
	assert_int_equal(bci_spawn_proc_parse("12 sleep S 3 4", 14, &p), -EINVAL);
	assert_int_equal(bci_spawn_proc_parse("(x) S 3 4", 9, &p), -EINVAL);
	assert_int_equal(bci_spawn_proc_parse("12 (x) S 3", 10, &p), -EINVAL);
	assert_int_equal(bci_spawn_proc_parse("", 0, &p), -EINVAL);
	/* Found by fuzz_proc_stat: a pid past pid_t's range is refused, not cut. */
	assert_int_equal(bci_spawn_proc_parse("555555555555555557 (p) Z 1 70 7", 31, &p), -EINVAL);
	assert_int_equal(bci_spawn_proc_parse("5 (p) Z 1 5555555555 7", 22, &p), -EINVAL);
}

/*
 * A child that leaves one process in its group and one that setsid()s out of
 * it (its parent gone, so it reparents to us, a subreaper): once the child is
 * reaped, both are found, killed and reaped, and named.
 */
static void leftovers_are_killed_even_out_of_the_group(void **state)
{
	char *const argv[] = { "sh", "-c",
			       "/bin/sleep 60 & /usr/bin/setsid /bin/sh -c '/bin/sleep 61' & "
			       "/bin/sleep 0.3; exit 0",
			       NULL };
	struct bci_spawn s = { .path = "/bin/sh", .argv = argv, .stdin_fd = -1, .stdout_fd = -1,
			       .stderr_fd = -1, .process_group = true };
	struct bci_spawn_proc killed[8];
	size_t count = 0;
	int status, sleeps = 0;
	pid_t pid;

	(void)state;
	assert_int_equal(bci_spawn_adopt_orphans(), 0);
	assert_int_equal(bci_spawn_start(&s, &pid), 0);
	assert_int_equal(bci_spawn_wait(pid, &status), 0);
	assert_int_equal(bci_spawn_kill_leftovers("/proc", pid, 5000, killed, 8, &count), 0);
	assert_true(count >= 2);
	for (size_t i = 0; i < count && i < 8; i++) {
		sleeps += strcmp(killed[i].comm, "sleep") == 0;
		assert_int_equal(kill(killed[i].pid, 0), -1);
	}
	assert_int_equal(sleeps, 2);
	/* Nothing is left to reap: every leftover was. */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	/* Nothing left: a second look finds none, without reading the process table. */
	assert_int_equal(bci_spawn_kill_leftovers("/proc", pid, 1000, killed, 8, &count), 0);
	assert_int_equal(count, 0);
	assert_int_equal(bci_spawn_kill_leftovers("/nonexistent-proc", pid, 1000, killed, 8, &count), 0);
}

/* A process left out of the group (setsid'ed, reparented to us) still makes the table read. */
static void a_leftover_out_of_the_group_is_looked_for(void **state)
{
	char *const argv[] = { "sh", "-c", "/usr/bin/setsid /bin/sleep 62 & /bin/sleep 0.3; exit 0",
			       NULL };
	struct bci_spawn s = { .path = "/bin/sh", .argv = argv, .stdin_fd = -1, .stdout_fd = -1,
			       .stderr_fd = -1, .process_group = true };
	struct bci_spawn_proc killed[8];
	size_t count = 0;
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(bci_spawn_adopt_orphans(), 0);
	assert_int_equal(bci_spawn_start(&s, &pid), 0);
	assert_int_equal(bci_spawn_wait(pid, &status), 0);
	assert_int_equal(bci_spawn_kill_leftovers("/nonexistent-proc", pid, 1000, killed, 8, &count),
			 -ENOENT);
	assert_int_equal(bci_spawn_kill_leftovers("/proc", pid, 5000, killed, 8, &count), 0);
	assert_int_equal(count, 1);
	assert_string_equal(killed[0].comm, "sleep");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(env_is_built_in_the_parent),
		cmocka_unit_test(start_returns_once_the_program_runs),
		cmocka_unit_test(exec_failure_is_said_and_has_its_status),
		cmocka_unit_test(child_starts_with_default_signals),
		cmocka_unit_test(kill_escalates_term_then_kill),
		cmocka_unit_test(find_searches_path_then_more_dirs),
		cmocka_unit_test(proc_stat_is_parsed_whatever_the_name),
		cmocka_unit_test(leftovers_are_killed_even_out_of_the_group),
		cmocka_unit_test(a_leftover_out_of_the_group_is_looked_for),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
