// SPDX-License-Identifier: MIT
#include "spawn.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Between vfork and exec: system calls only (the memory is the parent's). */
static void spawn_child(const struct bci_spawn *s, const char *failed, size_t failed_len,
			int rtmin)
{
	int status = s->exec_failed_status ? s->exec_failed_status : 127;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;

	/* Ignored signals stay ignored across exec: the child starts from the defaults
	 * (not the C library's own real-time signals below SIGRTMIN, which it refuses). */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && (sig < 32 || sig >= rtmin))
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (s->process_group)
		setpgid(0, 0);
	if ((s->stdin_fd >= 0 && dup2(s->stdin_fd, STDIN_FILENO) < 0) ||
	    (s->stdout_fd >= 0 && dup2(s->stdout_fd, STDOUT_FILENO) < 0) ||
	    (s->stderr_fd >= 0 && dup2(s->stderr_fd, STDERR_FILENO) < 0))
		_exit(status);
	execve(s->path, s->argv, s->envp ? s->envp : environ);
	if (write(STDERR_FILENO, failed, failed_len) < 0)
		_exit(status);
	_exit(status);
}

int bci_spawn_start(const struct bci_spawn *s, pid_t *pid)
{
	char failed[512];
	int n = snprintf(failed, sizeof(failed), "bootci: cannot execute %s\n", s->path);
	int rtmin = SIGRTMIN, saved_errno;
	sigset_t all, old;
	pid_t child;

	if (n < 0 || n >= (int)sizeof(failed))
		n = (int)strlen(failed);
	/* The parent's buffered output first: the child may write where it does. */
	fflush(NULL);
	/*
	 * vfork: the child borrows the parent's memory until its exec, and the
	 * parent waits for that. No page tables are copied and no page is
	 * copied on write (PID 1 forks once per test, and a fork's copying was
	 * part of the gap between two tests), and the parent goes on only once
	 * the test is running. The child changes nothing the parent reads (at most
	 * errno): system calls, then execve or _exit. Every signal is blocked
	 * meanwhile: no handler of the parent's may run in the child before the
	 * child has set the defaults.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	child = vfork();
	if (child == 0)
		spawn_child(s, failed, (size_t)n, rtmin);
	saved_errno = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (child < 0)
		return -saved_errno;
	/* The child is in its group before it execs; a failed exec is reaped like any end. */
	*pid = child;
	return 0;
}

int bci_spawn_wait(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

void bci_spawn_describe(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, size, "wait status 0x%x", (unsigned int)status);
}

static bool same_name(const char *a, const char *b)
{
	size_t n = strcspn(a, "=");

	return a[n] == '=' && strncmp(a, b, n + 1) == 0;
}

int bci_spawn_env(struct bci_strv *env, char *const *base, const char *const *extra)
{
	int ret = 0;

	for (size_t i = 0; base && base[i] && !ret; i++) {
		bool replaced = false;

		for (size_t j = 0; extra && extra[j] && !replaced; j++)
			replaced = same_name(base[i], extra[j]);
		if (!replaced)
			ret = bci_strv_add(env, base[i]);
	}
	for (size_t j = 0; extra && extra[j] && !ret; j++)
		ret = bci_strv_add(env, extra[j]);
	return ret;
}

char *bci_spawn_find(const char *name, const char *more_dirs)
{
	const char *path = getenv("PATH");
	char *dirs, *save = NULL, *found = NULL;

	if (strchr(name, '/'))
		return strdup(name);
	if (asprintf(&dirs, "%s:%s", path ? path : "", more_dirs ? more_dirs : "") < 0)
		return NULL;
	for (char *dir = strtok_r(dirs, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *candidate;

		if (asprintf(&candidate, "%s/%s", dir, name) < 0)
			continue;
		if (access(candidate, X_OK) == 0)
			found = candidate;
		else
			free(candidate);
	}
	free(dirs);
	return found;
}

void bci_spawn_signal(pid_t pid, int sig)
{
	/* The group for the children it started, the child itself if it left the group. */
	kill(-pid, sig);
	kill(pid, sig);
}

int bci_spawn_kill_due(const struct bci_spawn_kill *k, long now_ms)
{
	if (k->sent == SIGKILL)
		return now_ms - k->sent_at_ms >= k->give_up_ms ? -ETIME : 0;
	if (k->sent && now_ms - k->sent_at_ms < k->grace_ms)
		return 0;
	return k->sent ? SIGKILL : k->first_signal;
}

int bci_spawn_kill_step(struct bci_spawn_kill *k, pid_t pid, long now_ms)
{
	int sig = bci_spawn_kill_due(k, now_ms);

	if (sig <= 0)
		return sig;
	bci_spawn_signal(pid, sig);
	k->sent = sig;
	k->sent_at_ms = now_ms;
	return sig;
}

int bci_spawn_proc_parse(const char *text, size_t len, struct bci_spawn_proc *out)
{
	char buf[512], *open_paren, *close_paren, *end;
	long pid, ppid, pgrp;
	size_t n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;

	memcpy(buf, text, n);
	buf[n] = '\0';
	/* The name may hold spaces and parentheses: it ends at the last ')'. */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -EINVAL;
	errno = 0;
	pid = strtol(buf, &end, 10);
	if (errno || end == buf || pid <= 0 || pid > INT_MAX || end > open_paren)
		return -EINVAL;
	if (close_paren[1] != ' ' || !isalpha((unsigned char)close_paren[2]) || close_paren[3] != ' ')
		return -EINVAL;
	out->state = close_paren[2];
	if (sscanf(close_paren + 4, "%ld %ld", &ppid, &pgrp) != 2 || ppid < 0 || pgrp < 0 ||
	    ppid > INT_MAX || pgrp > INT_MAX)
		return -EINVAL;
	out->pid = (pid_t)pid;
	out->ppid = (pid_t)ppid;
	out->pgrp = (pid_t)pgrp;
	n = (size_t)(close_paren - open_paren - 1);
	if (n >= sizeof(out->comm))
		n = sizeof(out->comm) - 1;
	memcpy(out->comm, open_paren + 1, n);
	out->comm[n] = '\0';
	return 0;
}

int bci_spawn_adopt_orphans(void)
{
	if (getpid() == 1)
		return 0;
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/* The process table: every process @proc lists. malloc'ed into *@procs. */
static int proc_table(const char *proc, struct bci_spawn_proc **procs, size_t *count)
{
	struct bci_spawn_proc *table = NULL;
	size_t used = 0, cap = 0;
	struct dirent *entry;
	DIR *d = opendir(proc);

	if (!d)
		return -errno;
	while ((entry = readdir(d))) {
		char path[PATH_MAX], text[512];
		ssize_t n;
		int fd;

		if (!isdigit((unsigned char)entry->d_name[0]) ||
		    snprintf(path, sizeof(path), "%s/%s/stat", proc, entry->d_name) >= (int)sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* gone since readdir */
		n = read(fd, text, sizeof(text));
		close(fd);
		if (n <= 0)
			continue;
		if (used == cap) {
			size_t bigger = cap ? cap * 2 : 256;
			struct bci_spawn_proc *grown = realloc(table, bigger * sizeof(*table));
			if (!grown) {
				closedir(d);
				free(table);
				return -ENOMEM;
			}
			table = grown;
			cap = bigger;
		}
		if (bci_spawn_proc_parse(text, (size_t)n, &table[used]) == 0)
			used++;
	}
	closedir(d);
	*procs = table;
	*count = used;
	return 0;
}

/* Marks the leftovers of @table: group @pgid, and every descendant of @self. */
static void mark_leftovers(const struct bci_spawn_proc *table, size_t count, pid_t self,
			   pid_t pgid, bool *mark)
{
	bool grew = true;

	/* The group's leader was the child, reaped: a process with its pid is another one. */
	for (size_t i = 0; i < count; i++)
		mark[i] = table[i].pid != self &&
			  (table[i].ppid == self || (table[i].pgrp == pgid && table[i].pid != pgid));
	/* A fixed point: the parent of a leftover's child is a leftover. */
	while (grew) {
		grew = false;
		for (size_t i = 0; i < count; i++) {
			if (mark[i])
				continue;
			for (size_t j = 0; j < count && !mark[i]; j++)
				if (mark[j] && table[j].pid == table[i].ppid)
					mark[i] = grew = true;
		}
	}
}

static long monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void remember(struct bci_spawn_proc *killed, size_t max, size_t *count,
		     const struct bci_spawn_proc *p)
{
	for (size_t i = 0; i < *count && i < max; i++)
		if (killed[i].pid == p->pid)
			return;
	if (*count < max)
		killed[*count] = *p;
	(*count)++;
}

/*
 * Whether anything can be left: a process of group @pgid, or a child of the
 * caller (its zombies reaped on the way). A leftover out of the group has an
 * ancestor that is one or the other: its parent chain, alive, ends in the
 * group or, where the test's line died, at the caller, a subreaper.
 */
static bool leftovers_possible(pid_t pgid)
{
	pid_t got;

	if (kill(-pgid, 0) == 0 || errno != ESRCH)
		return true;
	do
		got = waitpid(-1, NULL, WNOHANG);
	while (got > 0 || (got < 0 && errno == EINTR));
	return got == 0 || errno != ECHILD;
}

int bci_spawn_kill_leftovers(const char *proc, pid_t pgid, long timeout_ms,
			     struct bci_spawn_proc *killed, size_t max, size_t *count)
{
	long deadline = monotonic_ms() + timeout_ms;
	pid_t self = getpid();
	int alive;

	*count = 0;
	/* The usual end: nothing left, and no scan of the process table (milliseconds in a VM). */
	if (!leftovers_possible(pgid))
		return 0;
	for (;;) {
		struct bci_spawn_proc *table;
		size_t n;
		bool *mark;
		int ret = proc_table(proc, &table, &n);

		if (ret < 0)
			return ret;
		mark = calloc(n ? n : 1, sizeof(*mark));
		if (!mark) {
			free(table);
			return -ENOMEM;
		}
		mark_leftovers(table, n, self, pgid, mark);
		alive = 0;
		for (size_t i = 0; i < n; i++) {
			/* A zombie is dead already: reaped below, or by us once its parent dies. */
			if (!mark[i] || table[i].state == 'Z' || table[i].state == 'X')
				continue;
			remember(killed, max, count, &table[i]);
			kill(table[i].pid, SIGKILL);
			alive++;
		}
		free(mark);
		free(table);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (alive == 0 || monotonic_ms() >= deadline)
			return alive;
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000000L }, NULL);
	}
}
