// SPDX-License-Identifier: MIT
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"
#include "strv.h"

extern char **environ;

/* mkfs and sfdisk live in the sbin folders, which a non-root PATH often lacks. */
#define TOOL_MORE_DIRS "/usr/sbin:/sbin:/usr/bin:/bin"

char *builder_tool_find(const char *name)
{
	return bci_spawn_find(name, TOOL_MORE_DIRS);
}

static void tool_describe(const char *const *argv, char *buf, size_t size)
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

/* Opens what the tool reads and writes instead of the builder's own stdin and stdout. */
static int tool_open_fds(int quiet, const char *stdin_path, struct bci_spawn *s,
			 struct builder_error *err)
{
	if (quiet) {
		s->stdout_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (s->stdout_fd < 0) {
			builder_error_set(err, "/dev/null: %s", strerror(errno));
			return -errno;
		}
	}
	if (stdin_path) {
		s->stdin_fd = open(stdin_path, O_RDONLY | O_CLOEXEC);
		if (s->stdin_fd < 0) {
			builder_error_set(err, "%s: %s", stdin_path, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

int builder_tool_run(const char *const *argv, const char *const *extra_env, int quiet,
		     const char *stdin_path, struct builder_error *err)
{
	struct bci_spawn s = { .argv = (char *const *)argv, .stdin_fd = -1, .stdout_fd = -1,
			       .stderr_fd = -1 };
	struct bci_strv env = { 0 };
	char command[512], how[128], *program = builder_tool_find(argv[0]);
	int status, ret;
	pid_t pid;

	tool_describe(argv, command, sizeof(command));
	if (!program) {
		builder_error_set(err, "%s: program not found (PATH, /usr/sbin, /sbin)", argv[0]);
		return -ENOENT;
	}
	s.path = program;
	ret = bci_spawn_env(&env, environ, extra_env);
	if (!ret) {
		s.envp = env.items;
		ret = tool_open_fds(quiet, stdin_path, &s, err);
	}
	if (!ret) {
		ret = bci_spawn_start(&s, &pid);
		if (ret < 0)
			builder_error_set(err, "fork: %s", strerror(-ret));
	}
	if (!ret) {
		ret = bci_spawn_wait(pid, &status);
		if (ret < 0)
			builder_error_set(err, "waitpid: %s", strerror(-ret));
	}
	if (!ret && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		/* "failed with exit status 1", "failed, killed by signal 9 (Killed)" */
		bci_spawn_describe(status, how, sizeof(how));
		builder_error_set(err, "'%s' failed%s%s", command, WIFEXITED(status) ? " with " : ", ",
				  how);
		ret = -EIO;
	}
	if (s.stdout_fd >= 0)
		close(s.stdout_fd);
	if (s.stdin_fd >= 0)
		close(s.stdin_fd);
	bci_strv_free(&env);
	free(program);
	return ret;
}
