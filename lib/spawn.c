// SPDX-License-Identifier: MIT
#include "spawn.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Between fork and exec: async-signal-safe calls only. */
static void spawn_child(const struct bci_spawn *s, const char *failed, size_t failed_len)
{
	int status = s->exec_failed_status ? s->exec_failed_status : 127;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;

	/* Ignored signals stay ignored across exec: the child starts from the defaults. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
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
	pid_t child;

	if (n < 0 || n >= (int)sizeof(failed))
		n = (int)strlen(failed);
	/* Buffered output would be written twice, by the child too. */
	fflush(NULL);
	child = fork();
	if (child < 0)
		return -errno;
	if (child == 0)
		spawn_child(s, failed, (size_t)n);
	/* In the parent too: no race between the child's setpgid and a first kill(-pid). */
	if (s->process_group)
		setpgid(child, child);
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

int bci_spawn_kill_step(struct bci_spawn_kill *k, pid_t pid, long now_ms)
{
	int sig;

	if (k->sent == SIGKILL)
		return now_ms - k->sent_at_ms >= k->give_up_ms ? -ETIME : 0;
	if (k->sent && now_ms - k->sent_at_ms < k->grace_ms)
		return 0;
	sig = k->sent ? SIGKILL : k->first_signal;
	bci_spawn_signal(pid, sig);
	k->sent = sig;
	k->sent_at_ms = now_ms;
	return sig;
}
