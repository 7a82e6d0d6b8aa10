// SPDX-License-Identifier: MIT
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

char *builder_run_find(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL, *found = NULL;

	if (strchr(name, '/'))
		return strdup(name);
	if (asprintf(&copy, "%s:/usr/sbin:/sbin:/usr/bin:/bin", path ? path : "") < 0)
		return NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *candidate;

		if (!*dir || asprintf(&candidate, "%s/%s", dir, name) < 0)
			continue;
		if (access(candidate, X_OK) == 0)
			found = candidate;
		else
			free(candidate);
	}
	free(copy);
	return found;
}

/* environ followed by @extra; the strings are borrowed, only the array is malloc'ed. */
static char **run_build_env(const char *const *extra)
{
	size_t base = 0, more = 0;
	char **envp;

	while (environ && environ[base])
		base++;
	while (extra && extra[more])
		more++;
	envp = calloc(base + more + 1, sizeof(*envp));
	if (!envp)
		return NULL;
	for (size_t i = 0; i < base; i++)
		envp[i] = environ[i];
	for (size_t i = 0; i < more; i++)
		envp[base + i] = (char *)extra[i];
	return envp;
}

static void run_describe(const char *const *argv, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; argv[i] && used + 1 < size; i++) {
		int n = snprintf(buf + used, size - used, "%s%s", i ? " " : "", argv[i]);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int builder_run(const char *const *argv, const char *const *extra_env, int quiet,
		const char *stdin_path, struct builder_error *err)
{
	char command[512];
	char *program = builder_run_find(argv[0]);
	char **envp = NULL;
	int status, ret = 0, devnull = -1, input = -1;
	pid_t pid;

	run_describe(argv, command, sizeof(command));
	if (!program) {
		builder_error_set(err, "%s: program not found (PATH, /usr/sbin, /sbin)", argv[0]);
		return -ENOENT;
	}
	envp = run_build_env(extra_env);
	if (!envp) {
		ret = -ENOMEM;
		goto out;
	}
	if (quiet) {
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull < 0) {
			ret = -errno;
			builder_error_set(err, "/dev/null: %s", strerror(-ret));
			goto out;
		}
	}
	if (stdin_path) {
		input = open(stdin_path, O_RDONLY | O_CLOEXEC);
		if (input < 0) {
			ret = -errno;
			builder_error_set(err, "%s: %s", stdin_path, strerror(-ret));
			goto out;
		}
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		builder_error_set(err, "fork: %s", strerror(-ret));
		goto out;
	}
	if (pid == 0) {
		if (devnull >= 0 && dup2(devnull, STDOUT_FILENO) < 0)
			_exit(127);
		if (input >= 0 && dup2(input, STDIN_FILENO) < 0)
			_exit(127);
		execve(program, (char *const *)argv, envp);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			ret = -errno;
			builder_error_set(err, "waitpid: %s", strerror(-ret));
			goto out;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		goto out;
	if (WIFEXITED(status))
		builder_error_set(err, "'%s' failed with exit status %d", command, WEXITSTATUS(status));
	else
		builder_error_set(err, "'%s' killed by signal %d", command, WTERMSIG(status));
	ret = -EIO;
out:
	if (devnull >= 0)
		close(devnull);
	if (input >= 0)
		close(input);
	free(envp);
	free(program);
	return ret;
}
