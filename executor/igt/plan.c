// SPDX-License-Identifier: MIT
/*
 * The plan: the testlist's lines become igt_runner's joblist, filtered by the
 * include/exclude regular expressions; a line naming only a binary becomes
 * its subtests as `--list-subtests` gives them; `bootci@suspend@...` lines and
 * the configured suspend_before/between/after become cycle jobs numbered
 * through the run. Written once, before the first job (rundir.c).
 */
#include "igt.h"

#include "config.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long --list-subtests may take. */
#define LIST_TIMEOUT_MS 60000L

struct planner {
	struct bci_executor *ex;
	struct bci_joblist *jobs;
	regex_t include, exclude;
	bool has_include, has_exclude, multiple;
	char test_dir[PATH_MAX];
};

static bool wanted(const struct planner *p, const char *name)
{
	if (p->has_include && regexec(&p->include, name, 0, NULL, 0) != 0)
		return false;
	if (p->has_exclude && regexec(&p->exclude, name, 0, NULL, 0) == 0)
		return false;
	return true;
}

/* Appends @subtest to the last job when it is the same binary in multiple mode. */
static int plan_add(struct planner *p, const char *binary, const char *subtest)
{
	struct bci_joblist *jobs = p->jobs;

	if (subtest && p->multiple && jobs->count > 0 && strcmp(binary, BCI_IGT_SUSPEND_BINARY) != 0 &&
	    strcmp(jobs->entries[jobs->count - 1].binary, binary) == 0 &&
	    jobs->entries[jobs->count - 1].count > 0 &&
	    !strchr(subtest, '@') && !strchr(jobs->entries[jobs->count - 1].subtests[0], '@')) {
		struct bci_joblist_entry *e = &jobs->entries[jobs->count - 1];
		char **subs = realloc(e->subtests, (e->count + 2) * sizeof(char *));
		if (!subs)
			return -ENOMEM;
		e->subtests = subs;
		subs[e->count] = strdup(subtest);
		if (!subs[e->count])
			return -ENOMEM;
		subs[++e->count] = NULL;
		return 0;
	}
	return bci_joblist_add(jobs, binary, subtest ? (const char *const[]){ subtest } : NULL,
			       subtest ? 1 : 0);
}

/*
 * Runs `BINARY --list-subtests` and returns its stdout (malloc'ed) in *@out;
 * exit 79 (no subtests) gives an empty string. Bounded in time and size.
 */
static int list_subtests(struct planner *p, const char *binary, char **out)
{
	char path[PATH_MAX], list_option[] = "--list-subtests";
	int pipefd[2], status = 0, ret = 0;
	size_t used = 0, cap = 4096;
	char *buf;
	pid_t pid;
	long deadline = bci_clock_ms(p->ex, CLOCK_BOOTTIME) + LIST_TIMEOUT_MS;

	if (snprintf(path, sizeof(path), "%s/%s", p->test_dir, binary) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (access(path, X_OK) != 0) {
		bci_error("testlist: igt@%s: no executable %s", binary, path + strlen(p->ex->root));
		return -ENOENT;
	}
	buf = malloc(cap);
	if (!buf || pipe2(pipefd, O_CLOEXEC) < 0) {
		free(buf);
		return -ENOMEM;
	}
	ret = bci_spawn_start(&(struct bci_spawn){ .path = path,
						   .argv = (char *const[]){ path, list_option, NULL },
						   .stdin_fd = -1, .stdout_fd = pipefd[1],
						   .stderr_fd = -1, .process_group = true },
			      &pid);
	if (ret < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		free(buf);
		bci_error("testlist: igt@%s: cannot run --list-subtests: %s", binary, strerror(-ret));
		return ret;
	}
	close(pipefd[1]);
	for (;;) {
		struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
		long left = deadline - bci_clock_ms(p->ex, CLOCK_BOOTTIME);
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		if (used + 1 >= cap) {
			char *bigger = cap >= (8 << 20) ? NULL : realloc(buf, cap * 2);
			if (!bigger) {
				ret = -EFBIG;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		ssize_t n = read(pipefd[0], buf + used, cap - used - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	close(pipefd[0]);
	if (ret < 0)
		bci_spawn_signal(pid, SIGKILL);
	/* The listing is quick or killed: wait for it, reaping through the signalfd loop. */
	status = bci_signals_wait(p->ex, pid);
	buf[used] = '\0';
	if (ret == 0 && WIFEXITED(status) && WEXITSTATUS(status) == BCI_IGT_EXIT_INVALID)
		buf[0] = '\0';
	else if (ret == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		ret = -EINVAL;
	if (ret < 0) {
		bci_error("testlist: igt@%s --list-subtests failed (%s)", binary,
			  ret == -EINVAL ? "bad exit status" : strerror(-ret));
		free(buf);
		return ret;
	}
	*out = buf;
	return 0;
}

/* bootci@suspend@<state>[_<pm_test>]@<count>: <count> cycle jobs, numbered through the run. */
static int plan_suspend(struct planner *p, const struct bci_test_name *name)
{
	unsigned long count = strtoul(name->dynamic, NULL, 10);
	unsigned first = 1;
	char cycle[300];
	int ret = 0;

	if (!bci_testlist_cycle_kind_valid(name->subtest)) {
		bci_error("testlist: bootci@suspend@%s: unknown state or pm_test level", name->subtest);
		return -EINVAL;
	}
	/* Continue the numbering of earlier cycles of the same state and level. */
	for (size_t i = 0; i < p->jobs->count; i++) {
		const struct bci_joblist_entry *e = &p->jobs->entries[i];
		size_t n = strlen(name->subtest);
		if (strcmp(e->binary, BCI_IGT_SUSPEND_BINARY) == 0 && e->count == 1 &&
		    strncmp(e->subtests[0], name->subtest, n) == 0 && e->subtests[0][n] == '-')
			first++;
	}
	for (unsigned long i = 0; i < count && ret == 0; i++) {
		snprintf(cycle, sizeof(cycle), "%s-%04lu", name->subtest, first + i);
		ret = bci_joblist_add(p->jobs, BCI_IGT_SUSPEND_BINARY, (const char *const[]){ cycle }, 1);
	}
	return ret;
}

static int plan_test(const struct bci_test_name *name, void *data)
{
	struct planner *p = data;
	char full[700], sub[520];
	char *listing = NULL;
	int ret = 0, any = 0;

	if (strcmp(name->binary, BCI_IGT_SUSPEND_BINARY) == 0)
		return plan_suspend(p, name);
	if (name->subtest[0]) {
		if (name->dynamic[0])
			snprintf(sub, sizeof(sub), "%s@%s", name->subtest, name->dynamic);
		else
			snprintf(sub, sizeof(sub), "%s", name->subtest);
		snprintf(full, sizeof(full), "igt@%s@%s", name->binary, sub);
		return wanted(p, full) ? plan_add(p, name->binary, sub) : 0;
	}
	/* A line naming only the binary: its subtests, listed by the binary itself. */
	ret = list_subtests(p, name->binary, &listing);
	if (ret < 0)
		return ret;
	for (char *save = NULL, *line = strtok_r(listing, "\n", &save); line && ret >= 0;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!bci_igt_name_valid(line, 1))
			continue;
		any = 1;
		snprintf(full, sizeof(full), "igt@%s@%s", name->binary, line);
		if (wanted(p, full))
			ret = plan_add(p, name->binary, line);
	}
	free(listing);
	if (ret >= 0 && !any) {
		snprintf(full, sizeof(full), "igt@%s", name->binary);
		if (wanted(p, full))
			ret = plan_add(p, name->binary, NULL);
	}
	return ret;
}

static int compile_regex(regex_t *re, const char *pattern, const char *key, bool *has)
{
	char msg[256];
	int rc;

	*has = false;
	if (!*pattern)
		return 0;
	rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, re, msg, sizeof(msg));
		bci_error("%s: bad regular expression '%s': %s", key, pattern, msg);
		return -EINVAL;
	}
	*has = true;
	return 0;
}

int bci_igt_plan_build(struct bci_executor *ex, struct bci_joblist *jobs, char *unreadable,
		       size_t unreadable_size)
{
	const char *testlist = bci_config_get(ex->config, "testlist");
	struct planner p = { .ex = ex, .jobs = jobs };
	char path[PATH_MAX], err[512] = "", *text = NULL;
	size_t len;
	int ret;

	p.multiple = strcmp(bci_config_get(ex->config, "multiple_mode"), "yes") == 0;
	if (bci_path(ex->root, p.test_dir, "%s", bci_config_get(ex->config, "test_dir")) < 0 ||
	    bci_path(ex->root, path, "%s", testlist) < 0) {
		bci_error("test_dir or testlist: path too long under %s", ex->root);
		return -ENAMETOOLONG;
	}
	ret = bci_read_file(path, &text, &len, 16 << 20);
	if (ret < 0) {
		bci_error("cannot read the testlist %s: %s", testlist, strerror(-ret));
		if (unreadable)
			snprintf(unreadable, unreadable_size, "Cannot read the testlist %s: %s",
				 testlist, strerror(-ret));
		return ret;
	}
	ret = compile_regex(&p.include, bci_config_get(ex->config, "include"), "include",
			    &p.has_include);
	if (ret == 0)
		ret = compile_regex(&p.exclude, bci_config_get(ex->config, "exclude"), "exclude",
				    &p.has_exclude);
	if (ret == 0) {
		ret = bci_testlist_parse(testlist, text, len, plan_test, &p, err, sizeof(err));
		if (ret < 0 && err[0])
			bci_error("%s", err);
	}
	if (p.has_include)
		regfree(&p.include);
	if (p.has_exclude)
		regfree(&p.exclude);
	free(text);
	if (ret == 0 && jobs->count == 0) {
		bci_error("the testlist %s selects no test", testlist);
		ret = -ENOENT;
	}
	/* The configuration's cycles (suspend_before/between/after) join the plan. */
	if (ret == 0) {
		err[0] = '\0';
		ret = bci_joblist_add_cycles(jobs, bci_config_get(ex->config, "suspend_before"),
					     bci_config_get(ex->config, "suspend_between"),
					     bci_config_get(ex->config, "suspend_after"), err, sizeof(err));
		if (ret < 0)
			bci_error("%s", err[0] ? err : strerror(-ret));
	}
	return ret;
}
