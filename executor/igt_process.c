// SPDX-License-Identifier: MIT
/*
 * A test binary as a child of PID 1: its environment built before the fork,
 * only async-signal-safe calls between fork and exec, a process group of its
 * own so that a kill reaches what it started, and reaping through the
 * signalfd loop (signals.c), which also reaps every orphan.
 */
#include "igt.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

char **bci_igt_process_env(void)
{
	static const char sentinel[] = "IGT_SENTINEL_ON_STDERR=1";
	size_t count = 0, used = 0;
	char **envp;

	while (environ && environ[count])
		count++;
	envp = calloc(count + 2, sizeof(*envp));
	if (!envp)
		return NULL;
	for (size_t i = 0; i < count; i++)
		if (strncmp(environ[i], "IGT_SENTINEL_ON_STDERR=", 23) != 0)
			envp[used++] = environ[i];
	envp[used] = (char *)sentinel;
	return envp;
}

/* Between fork and exec: async-signal-safe calls only. */
static void exec_child(const char *const *argv, char *const *envp, const int fds[3],
		       int exec_failure_status)
{
	static const char msg[] = "bootci: cannot execute the test binary\n";

	bci_signals_reset_child();
	setpgid(0, 0);
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0 && dup2(fds[i], i) < 0)
			_exit(exec_failure_status);
	execve(argv[0], (char *const *)argv, envp);
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(exec_failure_status);
	_exit(exec_failure_status);
}

pid_t bci_igt_process_spawn(const char *const *argv, char *const *envp, int in_fd, int out_fd,
			    int err_fd, int exec_failure_status)
{
	const int fds[3] = { in_fd, out_fd, err_fd };
	pid_t pid;

	if (!envp)
		return -ENOMEM;
	pid = fork();
	if (pid < 0) {
		int ret = -errno;
		bci_error("cannot start %s: fork: %s", argv[0], strerror(-ret));
		return ret;
	}
	if (pid == 0)
		exec_child(argv, envp, fds, exec_failure_status);
	/* Also here: a kill sent before the child ran its setpgid must reach the group. */
	setpgid(pid, pid);
	return pid;
}

void bci_igt_process_signal(pid_t pid, int sig)
{
	kill(-pid, sig);
	kill(pid, sig);
}

int bci_igt_process_reap(struct bci_executor *ex, pid_t pid)
{
	int status = 0;

	while (!bci_signals_dispatch(ex, pid, &status)) {
		struct pollfd pfd = { .fd = ex->signal_fd, .events = POLLIN };
		poll(&pfd, 1, 1000);
	}
	return status;
}
