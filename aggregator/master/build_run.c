// SPDX-License-Identifier: MIT
/* A build command run by the master (build_run.h). */
#include "build_run.h"

#include "message.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int bci_build_run(char *const argv[], int log_fd, unsigned long timeout, const atomic_bool *stop,
		  struct bci_build_outcome *o, char *err, size_t err_size)
{
	double deadline = now_monotonic() + (double)timeout;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	pid = fork();
	if (pid < 0) {
		bci_message(err, err_size, "fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls here: serve has other threads. */
		int null = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		if (null < 0 || dup2(null, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0)
			_exit(126);
		/* serve's sockets and files stay serve's. */
		close_range(3, ~0U, 0);
		execv(argv[0], argv);
		(void)!write(2, "bootci: cannot run the build command\n", 37);
		_exit(127);
	}
	setpgid(pid, pid);
	o->started = true;
	for (;;) {
		struct timespec tick = { 0, 100 * 1000 * 1000 };
		pid_t done = waitpid(pid, &o->status, WNOHANG);

		if (done == pid)
			return 0;
		if (done < 0 && errno != EINTR) {
			bci_message(err, err_size, "waitpid: %s", strerror(errno));
			return -errno;
		}
		if (now_monotonic() >= deadline)
			o->timed_out = true;
		else if (stop && atomic_load(stop))
			o->stopped = true;
		if (o->timed_out || o->stopped) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &o->status, 0) < 0 && errno == EINTR)
				;
			return 0;
		}
		nanosleep(&tick, NULL);
	}
}
