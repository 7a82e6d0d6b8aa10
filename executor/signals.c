// SPDX-License-Identifier: MIT
/*
 * Signals are blocked and read synchronously from a signalfd (as tini and
 * sinit do): no handler runs in the middle of the executor's work, and every
 * wait is a poll() with a deadline.
 */
#include "executor.h"

#include "spawn.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

int bci_signals_setup(struct bci_executor *ex)
{
	sigset_t all;

	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, NULL) < 0)
		return -errno;
	/* SIGCHLD to reap; the rest are how a person or the kernel asks init to stop. */
	sigset_t wanted;
	sigemptyset(&wanted);
	sigaddset(&wanted, SIGCHLD);
	sigaddset(&wanted, SIGTERM);
	sigaddset(&wanted, SIGINT);
	sigaddset(&wanted, SIGPWR);
	sigaddset(&wanted, SIGHUP);
	ex->signal_fd = signalfd(-1, &wanted, SFD_CLOEXEC | SFD_NONBLOCK);
	if (ex->signal_fd < 0)
		return -errno;
	/* Not PID 1 (tests, --root): the test's orphans still come to us, to be reaped and killed. */
	return bci_spawn_adopt_orphans();
}

void bci_signals_reset_child(void)
{
	sigset_t none;

	/* Dispositions survive exec only when ignored; none are, so only the mask matters. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int bci_signals_dispatch(struct bci_executor *ex, int pid, int *status)
{
	struct signalfd_siginfo info;
	int found = 0;

	for (;;) {
		ssize_t n = read(ex->signal_fd, &info, sizeof(info));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(info))
			break;
		switch (info.ssi_signo) {
		case SIGTERM:
		case SIGINT:
		case SIGPWR:
		case SIGHUP:
			if (!ex->stop_requested)
				bci_say("received %s: ending after the current step",
					strsignal((int)info.ssi_signo));
			ex->stop_requested = true;
			break;
		default:
			break;
		}
	}
	/* Reap everything: orphans of the test reparent to PID 1. */
	for (;;) {
		int st;
		pid_t got = waitpid(-1, &st, WNOHANG);
		if (got <= 0)
			break;
		if (got == pid) {
			*status = st;
			found = 1;
		}
	}
	return found;
}

int bci_signals_wait(struct bci_executor *ex, int pid)
{
	int status = 0;

	while (!bci_signals_dispatch(ex, pid, &status)) {
		struct pollfd pfd = { .fd = ex->signal_fd, .events = POLLIN };
		poll(&pfd, 1, 1000);
	}
	return status;
}
