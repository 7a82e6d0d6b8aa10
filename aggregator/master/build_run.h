/* SPDX-License-Identifier: MIT */
/*
 * A build command run by the master (build_run.c): a series' build
 * (patchwork/build.c), a bisection's candidate (patchwork/bisect.c,
 * bisect/tree.c). No shell; its output appended to a log; killed, with its
 * process group, at its timeout or when the master stops. And git, for what
 * the master asks of a tree itself (a range, a commit's subject).
 */
#ifndef BCI_BUILD_RUN_H
#define BCI_BUILD_RUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* How a command run by bci_build_run() ended. */
struct bci_build_outcome {
	int status;		/* waitpid's */
	bool timed_out, stopped, started;
};

/*
 * Runs @argv (argv[0] absolute) with stdin /dev/null and its output
 * appended to @log_fd, in a process group of its own killed at @timeout
 * seconds, or when @stop (may be NULL) turns true (o->stopped). 0 with @o
 * filled, -errno when it could not be run or waited for.
 */
int bci_build_run(char *const argv[], int log_fd, unsigned long timeout, const atomic_bool *stop,
		  struct bci_build_outcome *o, char *err, size_t err_size);

/*
 * Runs /usr/bin/git with @args (NULL-terminated) in @repo (NULL: where the
 * master runs): its exit status (0..255), its standard output into *@out
 * (malloc'ed; @out may be NULL) and its last error line into @why; -errno
 * (-EFBIG: more output than a range of commits would print).
 */
int bci_build_git(const char *repo, const char *const *args, char **out, char *why,
		  size_t why_size);

#endif
