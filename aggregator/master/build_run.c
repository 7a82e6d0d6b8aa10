// SPDX-License-Identifier: MIT
/* A build command run by the master (build_run.h). */
#include "build_run.h"

#include "message.h"
#include "spawn.h"
#include "strv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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

#define GIT "/usr/bin/git"
/* What git may print for one question here (a range of commits: 41 bytes each). */
#define GIT_OUTPUT_MAX (64u << 20)

int bci_build_git(const char *repo, const char *const *args, char **out, char *why,
		  size_t why_size)
{
	struct bci_strv argv = { 0 };
	int pipe_out[2] = { -1, -1 }, pipe_err[2] = { -1, -1 }, status = 0, ret;
	char errbuf[1024];
	size_t len = 0, cap = 0, elen = 0;
	char *text = NULL;
	pid_t pid;

	if (out)
		*out = NULL;
	if (bci_strv_add(&argv, GIT) < 0 ||
	    (repo && (bci_strv_add(&argv, "-C") < 0 || bci_strv_add(&argv, repo) < 0))) {
		bci_strv_free(&argv);
		return -ENOMEM;
	}
	for (size_t i = 0; args[i]; i++)
		if (bci_strv_add(&argv, args[i]) < 0) {
			bci_strv_free(&argv);
			return -ENOMEM;
		}
	if (pipe2(pipe_out, O_CLOEXEC) < 0 || pipe2(pipe_err, O_CLOEXEC) < 0) {
		ret = -errno;
		goto out;
	}
	struct bci_spawn s = { .path = GIT, .argv = argv.items, .stdin_fd = -1,
			       .stdout_fd = pipe_out[1], .stderr_fd = pipe_err[1] };
	if ((ret = bci_spawn_start(&s, &pid)) < 0)
		goto out;
	close(pipe_out[1]);
	close(pipe_err[1]);
	pipe_out[1] = pipe_err[1] = -1;
	/* Its output first, then its errors (short: they fit the pipe). */
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *grown = cap + 65536 > GIT_OUTPUT_MAX ? NULL : realloc(text, cap + 65536);

			if (!grown) {
				ret = cap + 65536 > GIT_OUTPUT_MAX ? -EFBIG : -ENOMEM;
				break;
			}
			text = grown;
			cap += 65536;
		}
		n = read(pipe_out[0], text + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	for (;;) {
		ssize_t n = read(pipe_err[0], errbuf + elen, sizeof(errbuf) - 1 - elen);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		elen += (size_t)n;
		if (elen == sizeof(errbuf) - 1)
			break;
	}
	errbuf[elen] = '\0';
	close(pipe_out[0]);
	close(pipe_err[0]);
	pipe_out[0] = pipe_err[0] = -1;
	if (bci_spawn_wait(pid, &status) < 0 && ret == 0)
		ret = -ECHILD;
	if (ret < 0)
		goto out;
	while (elen && (errbuf[elen - 1] == '\n' || errbuf[elen - 1] == '\r'))
		errbuf[--elen] = '\0';
	{
		const char *last = strrchr(errbuf, '\n');

		snprintf(why, why_size, "%.500s", last ? last + 1 : errbuf);
	}
	if (text)
		text[len] = '\0';
	if (out) {
		*out = text ? text : strdup("");
		text = NULL;
		if (!*out)
			ret = -ENOMEM;
	}
	if (ret == 0)
		ret = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
out:
	for (int i = 0; i < 2; i++) {
		if (pipe_out[i] >= 0)
			close(pipe_out[i]);
		if (pipe_err[i] >= 0)
			close(pipe_err[i]);
	}
	free(text);
	bci_strv_free(&argv);
	return ret;
}
