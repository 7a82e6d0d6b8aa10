// SPDX-License-Identifier: MIT
/*
 * Runs the configured test program with its stdout and stderr captured in the
 * run folder on the results partition, under a deadline, and records how it
 * ended. result.txt is replaced atomically: it says "state running" (durably)
 * before the program starts, so a boot that dies mid-test leaves that trace.
 */
#include "executor.h"
#include "results_dir.h"

#include "config.h"
#include "fsutil.h"
#include "spawn.h"
#include "strv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 64
/* After SIGTERM, and again after SIGKILL, the program gets this long to go. */
#define KILL_GRACE_MS 5000L

static int write_result(const char *path, const char *command, const char *body)
{
	char text[1024];
	int n = snprintf(text, sizeof(text), "command %s\n%s", command, body);

	if (n < 0 || n >= (int)sizeof(text))
		n = (int)sizeof(text) - 1;
	return bci_write_file_atomic(path, text, (size_t)n, 0644);
}

static int open_output(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

/*
 * Waits for @pid until its deadline, then SIGTERM and SIGKILL to its process
 * group. Returns 1 with @status when it ended, 0 when it could not be reaped
 * even after SIGKILL (stuck in the kernel). Sets *timed_out.
 */
static int supervise(struct bci_executor *ex, pid_t pid, long deadline, int *status,
		     bool *timed_out)
{
	struct bci_spawn_kill kill = { .first_signal = SIGTERM, .grace_ms = KILL_GRACE_MS,
				       .give_up_ms = KILL_GRACE_MS };

	*timed_out = false;
	for (;;) {
		struct pollfd pfd = { .fd = ex->signal_fd, .events = POLLIN };
		long now = bci_clock_ms(ex, CLOCK_BOOTTIME), left = deadline - now;
		int sent;

		if (bci_signals_dispatch(ex, pid, status))
			return 1;
		if (left <= 0) {
			*timed_out = true;
			sent = bci_spawn_kill_step(&kill, pid, now);
			if (sent == -ETIME)
				return 0;
			if (sent > 0)
				bci_warn("test program %s: sending %s",
					 sent == SIGTERM ? "timed out" : "still running",
					 sent == SIGTERM ? "SIGTERM" : "SIGKILL");
			left = kill.sent_at_ms + (kill.sent == SIGKILL ? kill.give_up_ms : kill.grace_ms) - now;
		}
		if (poll(&pfd, 1, (int)(left > 1000 ? 1000 : left < 1 ? 1 : left)) < 0 && errno != EINTR)
			return -errno;
	}
}

/* The one test program's run: its command, its files, how it ended. */
struct test_program {
	const char *command;
	struct bci_strv argv;
	char dir[PATH_MAX], result_path[PATH_MAX];
	int out_fd, err_fd, null_fd;
	int status, reaped;
	bool timed_out;
	long duration_ms;
};

/* The folder, "state running" (durably, before the program starts) and the output files. */
static int test_program_prepare(struct bci_executor *ex, struct test_program *t)
{
	char null_path[PATH_MAX];
	int ret = bci_strv_split(&t->argv, t->command, " \t");

	if (ret < 0)
		return ret;
	if (t->argv.count == 0 || t->argv.count > MAX_ARGS) {
		bci_error("test: '%s': expected a program and at most %d arguments", t->command,
			  MAX_ARGS - 1);
		return t->argv.count ? -E2BIG : -EINVAL;
	}
	if (snprintf(t->dir, sizeof(t->dir), "%s/test", ex->run_dir) >= (int)sizeof(t->dir) ||
	    snprintf(t->result_path, sizeof(t->result_path), "%s/" BCI_RESULTS_TEST_RESULT, t->dir) >=
		    (int)sizeof(t->result_path) ||
	    bci_path(ex, null_path, "/dev/null") < 0)
		return -ENAMETOOLONG;
	ret = bci_mkdir_p(t->dir, 0755);
	if (ret < 0) {
		bci_error("cannot create %s: %s", t->dir, strerror(-ret));
		return ret;
	}
	ret = write_result(t->result_path, t->command, "state running\n");
	if (ret < 0) {
		bci_error("cannot write %s: %s", t->result_path, strerror(-ret));
		return ret;
	}
	t->out_fd = open_output(t->dir, BCI_RESULTS_JOB_OUT);
	t->err_fd = open_output(t->dir, BCI_RESULTS_JOB_ERR);
	t->null_fd = open(null_path, O_RDWR | O_CLOEXEC);
	if (t->out_fd < 0 || t->err_fd < 0 || t->null_fd < 0) {
		ret = t->out_fd < 0 ? t->out_fd : t->err_fd < 0 ? t->err_fd : -errno;
		bci_error("cannot open the test's output files: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

static int test_program_execute(struct bci_executor *ex, struct test_program *t,
				unsigned long timeout_s)
{
	struct bci_spawn spawn = {
		.path = t->argv.items[0], .argv = t->argv.items, .stdin_fd = t->null_fd,
		.stdout_fd = t->out_fd, .stderr_fd = t->err_fd, .process_group = true,
	};
	long start = bci_clock_ms(ex, CLOCK_BOOTTIME);
	pid_t pid;
	int ret;

	bci_say("running %s (timeout %lu s)", t->command, timeout_s);
	ret = bci_spawn_start(&spawn, &pid);
	if (ret < 0) {
		bci_error("fork: %s", strerror(-ret));
		return ret;
	}
	t->reaped = supervise(ex, pid, start + (long)timeout_s * 1000, &t->status, &t->timed_out);
	t->duration_ms = bci_clock_ms(ex, CLOCK_BOOTTIME) - start;
	return 0;
}

/* result.txt, after the output it refers to is on disk, and the console's line. */
static int test_program_record(struct test_program *t)
{
	long d = t->duration_ms;
	char body[512], how[128];
	int n = 0, ret;

	fsync(t->out_fd);
	fsync(t->err_fd);
	if (t->reaped <= 0)
		n = snprintf(body, sizeof(body), "state unkillable\n");
	else if (WIFEXITED(t->status))
		n = snprintf(body, sizeof(body), "state done\nexit-status %d\n", WEXITSTATUS(t->status));
	else if (WIFSIGNALED(t->status))
		n = snprintf(body, sizeof(body), "state done\nsignal %d %s\n", WTERMSIG(t->status),
			     strsignal(WTERMSIG(t->status)));
	snprintf(body + n, sizeof(body) - (size_t)n, "%sduration %ld.%03ld\n",
		 t->timed_out ? "timeout yes\n" : "", d / 1000, d % 1000);
	ret = write_result(t->result_path, t->command, body);
	if (ret < 0)
		bci_error("cannot write %s: %s", t->result_path, strerror(-ret));

	if (t->reaped <= 0) {
		bci_error("test program could not be killed; leaving it behind");
	} else if (WIFEXITED(t->status)) {
		bci_say("test program exited with status %d after %ld.%03ld s%s",
			WEXITSTATUS(t->status), d / 1000, d % 1000, t->timed_out ? " (timed out)" : "");
	} else {
		bci_spawn_describe(t->status, how, sizeof(how));
		bci_say("test program %s after %ld.%03ld s%s", how, d / 1000, d % 1000,
			t->timed_out ? " (timed out)" : "");
	}
	return ret;
}

int bci_test_program_run(struct bci_executor *ex)
{
	struct test_program t = { .command = bci_config_get(ex->config, "test"),
				  .out_fd = -1, .err_fd = -1, .null_fd = -1 };
	int ret;

	if (*t.command == '\0') {
		bci_say("no test program configured");
		return 0;
	}
	ret = test_program_prepare(ex, &t);
	if (!ret)
		ret = test_program_execute(ex, &t, bci_config_get_seconds(ex->config, "test_timeout"));
	if (!ret)
		ret = test_program_record(&t);
	if (t.null_fd >= 0)
		close(t.null_fd);
	if (t.err_fd >= 0)
		close(t.err_fd);
	if (t.out_fd >= 0)
		close(t.out_fd);
	bci_strv_free(&t.argv);
	return ret;
}
