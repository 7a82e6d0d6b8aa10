// SPDX-License-Identifier: MIT
/*
 * A test binary is a child of PID 1, started and stopped with lib/spawn (its
 * environment built before the fork, a process group of its own so that a
 * kill reaches what it started); it is reaped through the signalfd loop
 * (signals.c), which also reaps every orphan.
 */
#include "igt.h"

#include <poll.h>

int bci_igt_process_reap(struct bci_executor *ex, pid_t pid)
{
	int status = 0;

	while (!bci_signals_dispatch(ex, pid, &status)) {
		struct pollfd pfd = { .fd = ex->signal_fd, .events = POLLIN };
		poll(&pfd, 1, 1000);
	}
	return status;
}
