/* SPDX-License-Identifier: MIT */
/*
 * Starting and stopping child programs, written once for the executor's test
 * program (executor/test_program.c), its IGT jobs (executor/igt/job.c) and the
 * builder's tools (builder/tool.c).
 *
 * Everything a child needs is prepared in the parent (argv, the environment,
 * the program's path, the message for a failed exec): the child is started
 * with vfork() and until its exec only makes system calls (restore signals,
 * setpgid, dup2, execve, write, _exit); the parent goes on once it has
 * exec'ed (or failed to and exited).
 *
 * Waiting is the caller's: PID 1 reaps every child through its signalfd
 * (executor/signals.c), the builder blocks in bci_spawn_wait(). Stopping a
 * child that overstays is one escalation, driven by the caller's loop:
 * a first signal (SIGTERM, or SIGQUIT for IGT, whose tests dump their state
 * on it), a grace period, SIGKILL, and a last grace after which the child is
 * declared unkillable (stuck in the kernel) and left behind.
 */
#ifndef BCI_SPAWN_H
#define BCI_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "strv.h"

struct bci_spawn {
	const char *path;	/* what execve() runs: no PATH search (bci_spawn_find) */
	char *const *argv;	/* NULL-terminated */
	char *const *envp;	/* NULL: the parent's environ (bci_spawn_env builds others) */
	int stdin_fd;		/* -1: inherited; the others likewise */
	int stdout_fd;
	int stderr_fd;
	bool process_group;	/* its own process group (set in the child before its exec) */
	int exec_failed_status;	/* the child's exit status when execve fails (0: 127) */
};

/*
 * Starts @s (vfork and exec): returns once the child has exec'ed, or exited
 * with @s->exec_failed_status when it could not. The child starts with an
 * empty signal mask and the default disposition of every signal. 0 with
 * *@pid set, or -errno (vfork).
 */
int bci_spawn_start(const struct bci_spawn *s, pid_t *pid);

/* Blocks until @pid ends (EINTR retried): 0 with its wait status, or -errno. */
int bci_spawn_wait(pid_t pid, int *status);

/* "exit status N" or "killed by signal N (Name)" for a wait status. */
void bci_spawn_describe(int status, char *buf, size_t size);

/*
 * Fills @env with the NAME=value strings of @base (NULL-terminated, e.g.
 * environ; may be NULL) and then @extra (may be NULL): an @extra entry
 * replaces @base's of the same NAME. 0 or -ENOMEM.
 */
int bci_spawn_env(struct bci_strv *env, char *const *base, const char *const *extra);

/*
 * The absolute path of @name: @name itself when it holds a '/', else the
 * first executable @name in the ':'-separated folders of PATH, then of
 * @more_dirs (may be NULL). malloc'ed, or NULL when not found (or ENOMEM).
 */
char *bci_spawn_find(const char *name, const char *more_dirs);

/* Sends @sig to the process group @pid leads and to @pid itself. */
void bci_spawn_signal(pid_t pid, int sig);

/* The escalation for one child; zero-initialise, then fill the first three fields. */
struct bci_spawn_kill {
	int first_signal;	/* SIGTERM, or SIGQUIT */
	long grace_ms;		/* after the first signal, before SIGKILL */
	long give_up_ms;	/* after SIGKILL, before the child counts as unkillable */
	int sent;		/* the last signal sent: 0, first_signal or SIGKILL */
	long sent_at_ms;
};

/*
 * Called by the caller's loop once the child must stop (its deadline passed)
 * and on every later turn until it is reaped, with a monotonic @now_ms:
 * sends the first signal, then SIGKILL when the grace is over. Returns the
 * signal sent now, 0 when nothing was due, or -ETIME once SIGKILL's grace is
 * over too (nothing more can be done).
 */
int bci_spawn_kill_step(struct bci_spawn_kill *k, pid_t pid, long now_ms);
/*
 * What bci_spawn_kill_step() would do at @now_ms, without doing it: for a
 * caller that says (console, kernel log, sysrq dumps) before it sends.
 */
int bci_spawn_kill_due(const struct bci_spawn_kill *k, long now_ms);

/*
 * What a child leaves behind. A test may fork helpers that outlive it, hold
 * its pipes, or write warnings to the kernel log during later tests; some
 * leave its process group (setsid). Once the child itself is reaped, every
 * process still in its group and every process below the caller is a
 * leftover: killed (SIGKILL) and reaped. Orphans reparent to PID 1; a caller
 * that is not PID 1 (tests, `--root`) becomes a child subreaper so that they
 * reparent to it all the same, and nothing escapes by a double fork.
 */

/* One process of the process table (/proc/PID/stat). */
struct bci_spawn_proc {
	pid_t pid, ppid, pgrp;
	char state;		/* R S D Z T ... */
	char comm[16];		/* the kernel's TASK_COMM_LEN, cut */
};

/* Parses /proc/PID/stat's @text (@len bytes): 0, or -EINVAL when it is not one. */
int bci_spawn_proc_parse(const char *text, size_t len, struct bci_spawn_proc *out);

/* PR_SET_CHILD_SUBREAPER unless the caller is PID 1 (which already is). 0 or -errno. */
int bci_spawn_adopt_orphans(void);

/*
 * Kills and reaps the leftovers of a child that led process group @pgid and
 * has been reaped: the processes of that group and all the caller's
 * descendants (the caller must have no other child at that moment), read
 * from @proc (the proc filesystem's mount: the processes are real whatever
 * tree the caller runs on). Up to @max of them go to @killed (first seen
 * first), their count to *@count. Rounds until none is left or @timeout_ms
 * passed. The table is read only when something can be left: the group
 * has a process, or the caller a child (a subreaper, as bci_spawn_adopt_orphans()
 * makes it). Returns how many are still alive (stuck in the kernel), or -errno
 * when @proc cannot be read.
 */
int bci_spawn_kill_leftovers(const char *proc, pid_t pgid, long timeout_ms,
			     struct bci_spawn_proc *killed, size_t max, size_t *count);

#endif
