// SPDX-License-Identifier: MIT
/*
 * Runs the configured test program with its stdout and stderr captured in the
 * run folder on the results partition, under a deadline, and records how it
 * ended. result.txt is replaced atomically: it says "state running" (durably)
 * before the program starts, so a boot that dies mid-test leaves that trace.
 */
#include "executor.h"

#include "config.h"
#include "fsutil.h"

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

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int split_args(char *cmd, char **argv)
{
	int argc = 0;

	for (char *save = NULL, *tok = strtok_r(cmd, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (argc == MAX_ARGS)
			return -E2BIG;
		argv[argc++] = tok;
	}
	argv[argc] = NULL;
	return argc;
}

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

/* Between fork and exec: async-signal-safe calls only. */
static void exec_child(char **argv, int null_fd, int out_fd, int err_fd)
{
	static const char msg[] = "bootci: cannot execute the test program\n";

	bci_signals_reset_child();
	setpgid(0, 0);
	if (dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(127);
	execv(argv[0], argv);
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(127);
	_exit(127);
}

/*
 * Waits for @pid until its deadline, then SIGTERM and SIGKILL to its process
 * group. Returns 1 with @status when it ended, 0 when it could not be reaped
 * even after SIGKILL (stuck in the kernel). Sets *timed_out.
 */
static int supervise(struct bci_executor *ex, pid_t pid, long deadline, int *status,
		     bool *timed_out)
{
	int phase = 0;

	*timed_out = false;
	for (;;) {
		struct pollfd pfd = { .fd = ex->signal_fd, .events = POLLIN };
		long left = deadline - now_ms();

		if (bci_signals_dispatch(ex, pid, status))
			return 1;
		if (left <= 0) {
			if (phase == 2)
				return 0;
			*timed_out = true;
			kill(-pid, phase == 0 ? SIGTERM : SIGKILL);
			kill(pid, phase == 0 ? SIGTERM : SIGKILL);
			bci_warn("test program %s: sending %s", phase == 0 ? "timed out" : "still running",
				 phase == 0 ? "SIGTERM" : "SIGKILL");
			phase++;
			deadline = now_ms() + KILL_GRACE_MS;
			continue;
		}
		if (poll(&pfd, 1, (int)(left > 1000 ? 1000 : left)) < 0 && errno != EINTR)
			return -errno;
	}
}

int bci_runner_run_test(struct bci_executor *ex)
{
	const char *command = bci_config_get(ex->config, "test");
	unsigned long timeout_s = bci_config_get_seconds(ex->config, "test_timeout");
	char test_dir[PATH_MAX], result_path[PATH_MAX], null_path[PATH_MAX], body[512];
	char *cmd, *argv[MAX_ARGS + 1];
	int out_fd = -1, err_fd = -1, null_fd = -1, status = 0, ret, reaped;
	bool timed_out;
	long start;
	pid_t pid;

	if (*command == '\0') {
		bci_say("no test program configured");
		return 0;
	}
	cmd = strdup(command);
	if (!cmd)
		return -ENOMEM;
	ret = split_args(cmd, argv);
	if (ret <= 0) {
		bci_error("test: more than %d arguments", MAX_ARGS);
		ret = ret < 0 ? ret : -EINVAL;
		goto out_cmd;
	}
	if (snprintf(test_dir, sizeof(test_dir), "%s/test", ex->run_dir) >= (int)sizeof(test_dir) ||
	    snprintf(result_path, sizeof(result_path), "%s/result.txt", test_dir) >=
		    (int)sizeof(result_path) ||
	    bci_path(ex, null_path, "/dev/null") < 0) {
		ret = -ENAMETOOLONG;
		goto out_cmd;
	}
	ret = bci_mkdir_p(test_dir, 0755);
	if (ret < 0) {
		bci_error("cannot create %s: %s", test_dir, strerror(-ret));
		goto out_cmd;
	}
	ret = write_result(result_path, command, "state running\n");
	if (ret < 0) {
		bci_error("cannot write %s: %s", result_path, strerror(-ret));
		goto out_cmd;
	}
	out_fd = open_output(test_dir, "out.txt");
	err_fd = open_output(test_dir, "err.txt");
	null_fd = open(null_path, O_RDWR | O_CLOEXEC);
	if (out_fd < 0 || err_fd < 0 || null_fd < 0) {
		ret = out_fd < 0 ? out_fd : err_fd < 0 ? err_fd : -errno;
		bci_error("cannot open the test's output files: %s", strerror(-ret));
		goto out_fds;
	}

	bci_say("running %s (timeout %lu s)", command, timeout_s);
	start = now_ms();
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		bci_error("fork: %s", strerror(-ret));
		goto out_fds;
	}
	if (pid == 0)
		exec_child(argv, null_fd, out_fd, err_fd);
	setpgid(pid, pid); /* also in the parent: no race with the first kill() */

	reaped = supervise(ex, pid, start + (long)timeout_s * 1000, &status, &timed_out);
	long duration = now_ms() - start;

	/* The output is on disk before the result that refers to it. */
	fsync(out_fd);
	fsync(err_fd);

	int n = 0;
	if (reaped <= 0)
		n = snprintf(body, sizeof(body), "state unkillable\n");
	else if (WIFEXITED(status))
		n = snprintf(body, sizeof(body), "state done\nexit-status %d\n",
			     WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		n = snprintf(body, sizeof(body), "state done\nsignal %d %s\n", WTERMSIG(status),
			     strsignal(WTERMSIG(status)));
	snprintf(body + n, sizeof(body) - (size_t)n, "%sduration %ld.%03ld\n",
		 timed_out ? "timeout yes\n" : "", duration / 1000,
		 duration % 1000);
	ret = write_result(result_path, command, body);
	if (ret < 0)
		bci_error("cannot write %s: %s", result_path, strerror(-ret));

	if (reaped <= 0)
		bci_error("test program could not be killed; leaving it behind");
	else if (WIFEXITED(status))
		bci_say("test program exited with status %d after %ld.%03ld s%s",
			WEXITSTATUS(status), duration / 1000, duration % 1000,
			timed_out ? " (timed out)" : "");
	else
		bci_say("test program killed by signal %d (%s) after %ld.%03ld s%s",
			WTERMSIG(status), strsignal(WTERMSIG(status)), duration / 1000,
			duration % 1000, timed_out ? " (timed out)" : "");

out_fds:
	if (null_fd >= 0)
		close(null_fd);
	if (err_fd >= 0)
		close(err_fd);
	if (out_fd >= 0)
		close(out_fd);
out_cmd:
	free(cmd);
	return ret;
}
