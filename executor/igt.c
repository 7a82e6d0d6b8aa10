// SPDX-License-Identifier: MIT
/*
 * The IGT engine: a testlist becomes igt_runner's joblist.txt (written once,
 * before the first job), every job runs under the monitor, and the run folder
 * is an igt_runner results directory (metadata.txt, joblist.txt, uname.txt,
 * starttime.txt, endtime.txt, aborted.txt, N/{journal,out,err,dmesg}.txt)
 * with bootci-journal.txt beside it. After any crash or reset, the next boot
 * reads that journal and carries on exactly where the machine died.
 */
#include "executor.h"

#include "config.h"
#include "fsutil.h"
#include "igtout.h"
#include "journal.h"
#include "suspend.h"
#include "testlist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define IGT_EXIT_ABORT 112
#define IGT_EXIT_INVALID 79
/* After SIGKILL, a test that still does not go is stuck in the kernel. */
#define KILL_GIVE_UP_MS 20000L
/* How long --list-subtests may take. */
#define LIST_TIMEOUT_MS 60000L
#define LINE_MAX_KEPT 4096

enum { F_JOURNAL, F_OUT, F_ERR, F_DMESG, F_COUNT };
static const char *const output_names[F_COUNT] = { "journal.txt", "out.txt", "err.txt",
						   "dmesg.txt" };

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Formats a path under the run folder into @buf (PATH_MAX); -ENAMETOOLONG when it does not fit. */
static int run_path(const struct bci_executor *ex, char *buf, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int run_path(const struct bci_executor *ex, char *buf, const char *fmt, ...)
{
	int n = snprintf(buf, PATH_MAX, "%s/", ex->run_dir), m;
	va_list ap;

	if (n < 0 || n >= PATH_MAX)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, (size_t)(PATH_MAX - n), fmt, ap);
	va_end(ap);
	return m < 0 || m >= PATH_MAX - n ? -ENAMETOOLONG : 0;
}

/* ---- the plan: testlist -> joblist ---- */

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

	if (subtest && p->multiple && jobs->count > 0 && strcmp(binary, BCI_SUSPEND_BINARY) != 0 &&
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
	char path[PATH_MAX];
	int pipefd[2], status = 0, ret = 0;
	size_t used = 0, cap = 4096;
	char *buf;
	pid_t pid;
	long deadline = now_ms() + LIST_TIMEOUT_MS;

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
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		free(buf);
		return ret;
	}
	if (pid == 0) {
		bci_signals_reset_child();
		setpgid(0, 0);
		dup2(pipefd[1], 1);
		execl(path, path, "--list-subtests", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	for (;;) {
		struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
		long left = deadline - now_ms();
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
		kill(-pid, SIGKILL);
	/* The listing is quick or killed: wait for it, reaping through the signalfd loop. */
	while (!bci_signals_dispatch(p->ex, pid, &status)) {
		struct pollfd pfd = { .fd = p->ex->signal_fd, .events = POLLIN };
		poll(&pfd, 1, 1000);
	}
	buf[used] = '\0';
	if (ret == 0 && WIFEXITED(status) && WEXITSTATUS(status) == IGT_EXIT_INVALID)
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
	struct bci_suspend_cycle_name parsed;
	unsigned first = 1;
	char cycle[300];
	int ret = 0;

	/* Continue the numbering of earlier cycles of the same state and level. */
	for (size_t i = 0; i < p->jobs->count; i++) {
		const struct bci_joblist_entry *e = &p->jobs->entries[i];
		size_t n = strlen(name->subtest);
		if (strcmp(e->binary, BCI_SUSPEND_BINARY) == 0 && e->count == 1 &&
		    strncmp(e->subtests[0], name->subtest, n) == 0 && e->subtests[0][n] == '-')
			first++;
	}
	for (unsigned long i = 0; i < count && ret == 0; i++) {
		snprintf(cycle, sizeof(cycle), "%s-%04lu", name->subtest, first + i);
		if (bci_suspend_cycle_parse(cycle, &parsed) < 0) {
			bci_error("testlist: bootci@suspend@%s: unknown state or pm_test level",
				  name->subtest);
			return -EINVAL;
		}
		ret = bci_joblist_add(p->jobs, BCI_SUSPEND_BINARY, (const char *const[]){ cycle }, 1);
	}
	return ret;
}

static int plan_test(const struct bci_test_name *name, void *data)
{
	struct planner *p = data;
	char full[700], sub[520];
	char *listing = NULL;
	int ret = 0, any = 0;

	if (strcmp(name->binary, BCI_SUSPEND_BINARY) == 0)
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

static int build_plan(struct bci_executor *ex, struct bci_joblist *jobs)
{
	const char *testlist = bci_config_get(ex->config, "testlist");
	struct planner p = { .ex = ex, .jobs = jobs };
	char path[PATH_MAX], err[512], *text = NULL;
	size_t len;
	int ret;

	p.multiple = strcmp(bci_config_get(ex->config, "multiple_mode"), "yes") == 0;
	if (bci_path(ex, p.test_dir, "%s", bci_config_get(ex->config, "test_dir")) < 0 ||
	    bci_path(ex, path, "%s", testlist) < 0)
		return -ENAMETOOLONG;
	ret = bci_read_file(path, &text, &len, 16 << 20);
	if (ret < 0) {
		bci_error("cannot read the testlist %s: %s", testlist, strerror(-ret));
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

/* ---- the results directory ---- */

static int write_text(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 64];

	if (snprintf(path, sizeof(path), "%.*s/%s", PATH_MAX - 1, dir, name) >= PATH_MAX)
		return -ENAMETOOLONG;
	return bci_write_file_atomic(path, text, strlen(text), 0644);
}

static int write_realtime(const char *dir, const char *name)
{
	struct timespec ts;
	char text[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(text, sizeof(text), "%ld.%06ld\n", (long)ts.tv_sec, ts.tv_nsec / 1000);
	return write_text(dir, name, text);
}

/* igt_runner's metadata.txt: its settings, as its resultgen reads them back. */
static int write_metadata(struct bci_executor *ex)
{
	struct bci_config *c = ex->config;
	char text[4096];
	const char *abort_on = bci_config_get(c, "abort_on");
	int abort_mask = (strstr(abort_on, "taint") ? 1 : 0) | (strstr(abort_on, "lockdep") ? 2 : 0);

	snprintf(text, sizeof(text),
		 "abort_mask : %d\nname : %s\ndry_run : 0\nsync : 1\nlog_level : 0\n"
		 "overwrite : 0\nmultiple_mode : %d\ninactivity_timeout : %lu\n"
		 "per_test_timeout : %lu\noverall_timeout : %lu\nuse_watchdog : %d\n"
		 "piglit_style_dmesg : %d\ndmesg_warn_level : %d\nprune_mode : 0\n"
		 "test_root : %s\nresults_path : /results/runs/%s\n",
		 abort_mask, bci_config_get(c, "run_id"),
		 strcmp(bci_config_get(c, "multiple_mode"), "yes") == 0,
		 bci_config_get_seconds(c, "inactivity_timeout"),
		 bci_config_get_seconds(c, "per_test_timeout"),
		 bci_config_get_seconds(c, "overall_timeout"),
		 bci_config_get_seconds(c, "watchdog_timeout") > 0,
		 strcmp(bci_config_get(c, "piglit_style_dmesg"), "yes") == 0,
		 bci_settings_dmesg_warn_level(c), bci_config_get(c, "test_dir"),
		 bci_config_get(c, "run_id"));
	return write_text(ex->run_dir, "metadata.txt", text);
}

static int write_uname(struct bci_executor *ex)
{
	struct utsname u;
	char text[512];

	if (uname(&u) < 0)
		return -errno;
	snprintf(text, sizeof(text), "%s %s %s %s %s\n", u.sysname, u.nodename, u.release,
		 u.version, u.machine);
	return write_text(ex->run_dir, "uname.txt", text);
}

/* Creates the run: metadata, the joblist (once, before any job), uname, start time. */
static int create_run(struct bci_executor *ex, struct bci_joblist *jobs)
{
	char *text;
	size_t len;
	int ret = build_plan(ex, jobs);

	if (ret < 0)
		return ret;
	ret = write_metadata(ex);
	if (ret == 0)
		ret = write_uname(ex);
	if (ret == 0)
		ret = write_realtime(ex->run_dir, "starttime.txt");
	if (ret < 0)
		return ret;
	ret = bci_joblist_format(jobs, &text, &len);
	if (ret < 0)
		return ret;
	/* Last: its presence says the run exists. */
	ret = write_text(ex->run_dir, "joblist.txt", text);
	free(text);
	if (ret == 0)
		bci_say("run %s: %zu jobs planned", bci_config_get(ex->config, "run_id"),
			jobs->count);
	return ret;
}

static int load_run(struct bci_executor *ex, struct bci_joblist *jobs, bool *exists)
{
	char path[PATH_MAX], err[512], *text;
	size_t len;
	int ret;

	if (run_path(ex, path, "joblist.txt") < 0)
		return -ENAMETOOLONG;
	ret = bci_read_file(path, &text, &len, 64 << 20);
	if (ret == -ENOENT) {
		*exists = false;
		return 0;
	}
	if (ret < 0)
		return ret;
	*exists = true;
	ret = bci_joblist_parse("joblist.txt", text, len, jobs, err, sizeof(err));
	free(text);
	if (ret < 0)
		bci_error("%s", err);
	return ret;
}

/* ---- one job under the monitor ---- */

struct stream {
	int pipe_fd;
	int file_fd;
	char line[LINE_MAX_KEPT];
	size_t line_len;
	bool line_overflow;
	unsigned long long written, limit, dropped;
	/* The tail kept after the limit: a ring of the last bytes. */
	char *tail;
	size_t tail_size, tail_used, tail_pos;
};

struct job_run {
	struct bci_executor *ex;
	struct bci_journal *journal;
	unsigned index;
	const struct bci_joblist_entry *entry;
	int fds[F_COUNT];
	off_t synced[F_COUNT]; /* each file's size at its last fdatasync, -1 before the first */
	struct bci_kmsg_budget dmesg_budget;
	struct stream out, err;
	int kmsg_fd;
	pid_t pid;
	long start, last_activity, last_subtest, killed_at;
	int killed; /* 0, SIGQUIT or SIGKILL */
	bool timed_out;
	char subtest[256];
	char last_result[32];
	char abort_reason[256];  /* set when the job was stopped for an abort condition */
	unsigned results, passes, fails, skips, crashes;
};

/*
 * fdatasync of one output file, skipped when it has not grown since its last
 * one (the files are only appended to): on ext4 even a clean file's
 * fdatasync flushes the disk's cache, the costliest thing a quick job does.
 */
static int sync_output(struct job_run *job, int i)
{
	struct stat st;

	if (job->fds[i] < 0)
		return 0;
	if (fstat(job->fds[i], &st) == 0 && st.st_size == job->synced[i])
		return 0;
	if (fdatasync(job->fds[i]) < 0)
		return -errno;
	job->synced[i] = st.st_size;
	return 0;
}

static void sync_outputs(struct job_run *job)
{
	long n = bci_kmsg_drain(job->kmsg_fd, job->fds[F_DMESG], &job->dmesg_budget);

	if (n < 0) {
		close(job->kmsg_fd);
		job->kmsg_fd = -1;
	}
	for (int i = 0; i < F_COUNT; i++)
		sync_output(job, i);
}

static void journal_write(struct job_run *job, const char *text, size_t len)
{
	int ret = bci_write_all(job->fds[F_JOURNAL], text, len);

	if (ret == 0)
		ret = sync_output(job, F_JOURNAL);
	if (ret < 0)
		bci_warn("job %u: cannot write journal.txt: %s", job->index, strerror(-ret));
}

static void count_result(struct job_run *job, const char *text, size_t len)
{
	double t;
	const char *result = bci_igtout_map_result(text, len, &t);

	snprintf(job->last_result, sizeof(job->last_result), "%s", result);
	job->results++;
	if (strcmp(result, "pass") == 0)
		job->passes++;
	else if (strcmp(result, "fail") == 0)
		job->fails++;
	else if (strcmp(result, "skip") == 0)
		job->skips++;
	else
		job->crashes++;
}

static void escalate(struct job_run *job, const char *reason, long now);
static unsigned long bad_taints(struct bci_executor *ex, unsigned long *all);

/* A complete line of the test's stdout: the protocol lines drive the journal and timers. */
static void handle_out_line(struct job_run *job, const char *line, size_t len)
{
	static const char start_sub[] = "Starting subtest: ";
	static const char start_dyn[] = "Starting dynamic subtest: ";
	static const char result_sub[] = "Subtest ";
	static const char result_dyn[] = "Dynamic subtest ";
	long now = now_ms();

	bool starting = (len > sizeof(start_sub) - 1 &&
			 memcmp(line, start_sub, sizeof(start_sub) - 1) == 0) ||
			(len > sizeof(start_dyn) - 1 &&
			 memcmp(line, start_dyn, sizeof(start_dyn) - 1) == 0);
	/*
	 * Between subtests too, as igt_runner does: a subtest that tainted the
	 * kernel stops the job before the next one starts on a broken kernel.
	 */
	unsigned long taints = 0;
	if (starting && job->results > 0 && !job->killed && !job->abort_reason[0] &&
	    strstr(bci_config_get(job->ex->config, "abort_on"), "taint")) {
		unsigned long bad = bad_taints(job->ex, &taints);
		if (bad)
			snprintf(job->abort_reason, sizeof(job->abort_reason),
				 "Kernel badly tainted (%#lx, %#lx) (check dmesg for details)", taints,
				 bad);
		else
			taints = 0;
	}
	if (len > sizeof(start_sub) - 1 && memcmp(line, start_sub, sizeof(start_sub) - 1) == 0) {
		size_t n = len - (sizeof(start_sub) - 1);
		if (n >= sizeof(job->subtest))
			n = sizeof(job->subtest) - 1;
		memcpy(job->subtest, line + sizeof(start_sub) - 1, n);
		job->subtest[n] = '\0';
		/* igt_runner's journal: the subtest's name, durable as soon as it is known. */
		char entry[300];
		int m = snprintf(entry, sizeof(entry), "%s\n", job->subtest);
		journal_write(job, entry, (size_t)m);
		job->last_subtest = now;
		sync_outputs(job);
	} else if (len > sizeof(start_dyn) - 1 &&
		   memcmp(line, start_dyn, sizeof(start_dyn) - 1) == 0) {
		/* igt_runner cannot resume inside a subtest; bootci's journal remembers dynamic ones. */
		int ret = bci_journal_append(job->journal, "dynamic %u %s@%.*s", job->index,
					     job->subtest[0] ? job->subtest : "-",
					     (int)(len - (sizeof(start_dyn) - 1)),
					     line + sizeof(start_dyn) - 1);
		if (ret < 0)
			bci_warn("job %u: cannot journal a dynamic subtest: %s", job->index,
				 strerror(-ret));
		job->last_subtest = now;
		sync_outputs(job);
	} else if (len > sizeof(result_sub) - 1 &&
		   memcmp(line, result_sub, sizeof(result_sub) - 1) == 0) {
		const char *colon = memchr(line, ':', len);
		if (colon && colon + 2 <= line + len)
			count_result(job, colon + 2, (size_t)(line + len - colon - 2));
		sync_outputs(job);
	} else if (len > sizeof(result_dyn) - 1 &&
		   memcmp(line, result_dyn, sizeof(result_dyn) - 1) == 0) {
		sync_outputs(job);
	}
	if (taints) {
		/* The subtest that starts on a tainted kernel is journalled, then stopped, and its
		 * output says why, as igt_runner writes it. */
		char note[128];
		int n = snprintf(note, sizeof(note),
				 "\nrunner: This test was killed due to a kernel taint (%#lx).\n", taints);
		bci_write_all(job->fds[F_OUT], note, (size_t)n);
		escalate(job, "Kernel tainted", now);
		job->timed_out = false;
	}
}

static bool is_protocol_line(const char *line, size_t len)
{
	static const char *const prefixes[] = { "Starting subtest: ", "Starting dynamic subtest: ",
						"Subtest ", "Dynamic subtest ", "IGT-Version: " };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);
		if (len >= n && memcmp(line, prefixes[i], n) == 0)
			return true;
	}
	return false;
}

static void tail_add(struct stream *s, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		s->tail[s->tail_pos] = data[i];
		s->tail_pos = (s->tail_pos + 1) % s->tail_size;
		if (s->tail_used < s->tail_size)
			s->tail_used++;
	}
}

/*
 * Writes one line (with its newline) to the stream's file. Past the limit,
 * protocol lines still go to the file (results must stay complete) and the
 * rest only into the tail ring, written at the end of the job.
 */
static void stream_emit(struct stream *s, const char *line, size_t len)
{
	if (s->written + len <= s->limit || is_protocol_line(line, len)) {
		if (bci_write_all(s->file_fd, line, len) == 0)
			s->written += len;
		return;
	}
	s->dropped += len;
	tail_add(s, line, len);
}

/* Splits @data into lines for @s (and the protocol handler when @job is given). */
static void stream_feed(struct stream *s, struct job_run *job, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s->line_len < sizeof(s->line))
			s->line[s->line_len] = data[i];
		else
			s->line_overflow = true;
		s->line_len++;
		if (data[i] != '\n' && s->line_len < sizeof(s->line))
			continue;
		/* A very long line is written in pieces; only whole short lines can be protocol. */
		size_t n = s->line_len < sizeof(s->line) ? s->line_len : sizeof(s->line);
		/* The line goes to the file first, so the sync its handling does includes it. */
		stream_emit(s, s->line, n);
		if (data[i] == '\n' && !s->line_overflow && job)
			handle_out_line(job, s->line, n - 1);
		if (data[i] == '\n')
			s->line_overflow = false;
		s->line_len = 0;
	}
}

static void stream_finish(struct stream *s)
{
	char note[160];
	int n;

	if (s->line_len > 0) {
		stream_emit(s, s->line, s->line_len < sizeof(s->line) ? s->line_len : sizeof(s->line));
		s->line_len = 0;
	}
	if (s->dropped == 0)
		return;
	n = snprintf(note, sizeof(note),
		     "\nbootci: output over the limit of %llu bytes: %llu bytes dropped, the last %zu follow\n",
		     s->limit + s->tail_size, s->dropped - s->tail_used, s->tail_used);
	bci_write_all(s->file_fd, note, (size_t)n);
	size_t start = s->tail_used < s->tail_size ? 0 : s->tail_pos;
	size_t first = s->tail_used < s->tail_size ? s->tail_used : s->tail_size - start;
	bci_write_all(s->file_fd, s->tail + start, first);
	if (s->tail_used == s->tail_size)
		bci_write_all(s->file_fd, s->tail, start);
}

static void drop_trailing_nuls(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END), keep = end;
	char block[4096];

	while (keep > 0) {
		size_t n = keep > (off_t)sizeof(block) ? sizeof(block) : (size_t)keep;
		ssize_t got = pread(fd, block, n, keep - (off_t)n);
		size_t i = (size_t)got;
		if (got != (ssize_t)n)
			return;
		while (i > 0 && block[i - 1] == '\0')
			i--;
		keep -= (off_t)(n - i);
		if (i > 0)
			break;
	}
	if (keep < end && ftruncate(fd, keep) == 0)
		bci_warn("dropped %lld NUL bytes a crash left at the end of an output file",
			 (long long)(end - keep));
}

static int open_job_outputs(struct job_run *job, char *dir)
{
	int ret = bci_mkdir_p(dir, 0755);

	if (ret < 0)
		return ret;
	for (int i = 0; i < F_COUNT; i++) {
		char path[PATH_MAX + 16];
		char last;
		snprintf(path, sizeof(path), "%.*s/%s", PATH_MAX - 1, dir, output_names[i]);
		job->fds[i] = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (job->fds[i] < 0)
			return -errno;
		/*
		 * A resumed job appends. A crash can leave the end of a file as NUL
		 * bytes (the size was on disk, the data not): cut them, since parsers
		 * of these files (igt_runner's included) stop at the first NUL. Then
		 * end a line cut by the crash, as igt_runner does.
		 */
		drop_trailing_nuls(job->fds[i]);
		if (pread(job->fds[i], &last, 1, lseek(job->fds[i], 0, SEEK_END) - 1) == 1 &&
		    last != '\n')
			bci_write_all(job->fds[i], "\n", 1);
	}
	return bci_fsync_parent(dir);
}

static void build_argv(struct bci_executor *ex, const struct bci_joblist_entry *e,
		       char *const *subtests, size_t count, const char *dynamic_filter,
		       char *path, char *subs, size_t subs_size, char *dynamic, const char **argv)
{
	int argc = 0;

	bci_path(ex, path, "%s/%s", bci_config_get(ex->config, "test_dir"), e->binary);
	argv[argc++] = path;
	if (count > 0) {
		size_t used = 0;
		const char *at = strchr(subtests[0], '@');
		dynamic[0] = '\0';
		if (at && count == 1) {
			snprintf(subs, subs_size, "%.*s", (int)(at - subtests[0]), subtests[0]);
			snprintf(dynamic, 256, "%s", at + 1);
		} else {
			for (size_t i = 0; i < count && used < subs_size; i++)
				used += (size_t)snprintf(subs + used, subs_size - used, "%s%s",
							 i ? "," : "", subtests[i]);
		}
		argv[argc++] = "--run-subtest";
		argv[argc++] = subs;
		if (dynamic[0]) {
			argv[argc++] = "--dynamic-subtest";
			argv[argc++] = dynamic;
		} else if (dynamic_filter) {
			argv[argc++] = "--dynamic-subtest";
			argv[argc++] = dynamic_filter;
		}
	}
	argv[argc] = NULL;
}

/* Between fork and exec: async-signal-safe calls only. */
static void exec_job(const char **argv, int out, int err, int null_fd)
{
	static const char msg[] = "bootci: cannot execute the test binary\n";

	bci_signals_reset_child();
	setpgid(0, 0);
	if (dup2(null_fd, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(IGT_EXIT_INVALID);
	execv(argv[0], (char *const *)argv);
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(IGT_EXIT_INVALID);
	_exit(IGT_EXIT_INVALID);
}

/* Returns the reason the job has to be stopped now, or NULL. */
static const char *timeout_reason(struct job_run *job, long now)
{
	struct bci_config *c = job->ex->config;
	unsigned long per_test = bci_config_get_seconds(c, "per_test_timeout");
	unsigned long inactivity = bci_config_get_seconds(c, "inactivity_timeout");

	if (job->killed) {
		long grace = job->killed == SIGQUIT
				     ? (long)bci_config_get_seconds(c, "kill_grace") * 1000
				     : KILL_GIVE_UP_MS;
		return now - job->killed_at > grace ? "still running after a kill" : NULL;
	}
	if (per_test && now - job->last_subtest > (long)per_test * 1000)
		return "Per-test timeout exceeded";
	if (inactivity && now - job->last_activity > (long)inactivity * 1000)
		return "Inactivity timeout exceeded";
	return NULL;
}

static void escalate(struct job_run *job, const char *reason, long now)
{
	int sig = job->killed == 0 ? SIGQUIT : SIGKILL;

	bci_kmsg_mark(job->ex, 4, "%s. Killing the current test with %s.\n", reason,
		      sig == SIGQUIT ? "SIGQUIT" : "SIGKILL");
	if (sig == SIGQUIT) {
		/* Task states and memory into the log: the next person needs them. */
		bci_sysrq(job->ex, 't');
		bci_sysrq(job->ex, 'm');
	}
	bci_warn("job %u: %s: sending %s", job->index, reason, sig == SIGQUIT ? "SIGQUIT" : "SIGKILL");
	kill(-job->pid, sig);
	kill(job->pid, sig);
	job->killed = sig;
	job->killed_at = now;
	job->timed_out = true;
}

/*
 * A suspend cycle job: the cycle writes the IGT protocol itself (it is one
 * synchronous call, no child and no pipe). Its journal.txt line is durable
 * before the machine sleeps, so a cycle that never wakes is incomplete.
 */
static int run_suspend_job(struct bci_executor *ex, struct job_run *job, const char *cycle,
			   int *status_out, double *seconds)
{
	struct bci_suspend_record record;
	char line[320];
	int n = snprintf(line, sizeof(line), "%s\n", cycle), status;

	journal_write(job, line, (size_t)n);
	bci_kmsg_mark(ex, 6, "job %u: suspend cycle %s\n", job->index, cycle);
	job->start = now_ms();
	status = bci_suspend_cycle(ex, cycle, job->fds[F_OUT], job->fds[F_ERR], job->fds[F_DMESG],
				   &record);
	if (status < 0)
		return status;
	*status_out = status;
	*seconds = record.wall;
	snprintf(job->last_result, sizeof(job->last_result), "%s", record.result);
	job->results = 1;
	n = snprintf(line, sizeof(line), "exit:%d (%.3fs)\n", status, record.wall);
	for (int i = 0; i < F_COUNT; i++)
		sync_output(job, i);
	journal_write(job, line, (size_t)n);
	return 0;
}

/*
 * Runs job @index (its subtests restricted to @subtests). Returns the igt
 * exit status (>= 0, or -signal) through @status; 0 when the job ran, 1 when
 * it had to be left running (unkillable: the run must stop), -errno otherwise.
 */
static int run_job(struct bci_executor *ex, struct bci_journal *journal, unsigned index,
		   const struct bci_joblist_entry *entry, char *const *subtests, size_t count,
		   const char *dynamic_filter, int *status_out, double *seconds,
		   struct job_run *job)
{
	char dir[PATH_MAX], path[PATH_MAX], subs[8192], dynamic[256], null_path[PATH_MAX];
	const char *argv[8];
	int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 }, null_fd = -1, status = 0;
	unsigned long long limit = bci_config_get_size(ex->config, "output_limit");
	bool reaped = false, unkillable = false;
	int ret;

	memset(job, 0, sizeof(*job));
	job->ex = ex;
	job->journal = journal;
	job->index = index;
	job->entry = entry;
	job->kmsg_fd = -1;
	for (int i = 0; i < F_COUNT; i++) {
		job->fds[i] = -1;
		job->synced[i] = -1;
	}
	ret = run_path(ex, dir, "%u", index);
	if (ret == 0)
		ret = open_job_outputs(job, dir);
	if (ret < 0) {
		bci_error("job %u: cannot open its output files in %s: %s", index, dir, strerror(-ret));
		goto out;
	}
	if (strcmp(entry->binary, BCI_SUSPEND_BINARY) == 0) {
		ret = run_suspend_job(ex, job, subtests[0], status_out, seconds);
		goto out;
	}
	/* The first three quarters of the limit, then the last quarter: a file stays within it
	 * (plus the protocol lines), which the results generator can always read. */
	size_t tail_size = (size_t)(limit / 4 > 0 ? limit / 4 : 1);
	job->out = (struct stream){ .file_fd = job->fds[F_OUT], .limit = limit - limit / 4 };
	job->err = (struct stream){ .file_fd = job->fds[F_ERR], .limit = limit - limit / 4 };
	job->out.tail_size = job->err.tail_size = tail_size;
	job->dmesg_budget = (struct bci_kmsg_budget){
		.limit = limit,
		.keep_level = bci_settings_dmesg_warn_level(ex->config),
	};
	job->out.tail = malloc(job->out.tail_size);
	job->err.tail = malloc(job->err.tail_size);
	if (!job->out.tail || !job->err.tail) {
		ret = -ENOMEM;
		goto out;
	}
	build_argv(ex, entry, subtests, count, dynamic_filter, path, subs, sizeof(subs), dynamic,
		   argv);
	if (bci_path(ex, null_path, "/dev/null") < 0 ||
	    (null_fd = open(null_path, O_RDWR | O_CLOEXEC)) < 0 || pipe2(out_pipe, O_CLOEXEC) < 0 ||
	    pipe2(err_pipe, O_CLOEXEC) < 0) {
		ret = -errno;
		goto out;
	}
	job->kmsg_fd = bci_kmsg_open(ex);
	bci_kmsg_mark(ex, 6, "job %u: %s%s%s\n", index, entry->binary, count ? " " : "",
		      count ? subs : "");

	job->start = job->last_activity = job->last_subtest = now_ms();
	fflush(stdout);
	fflush(stderr);
	job->pid = fork();
	if (job->pid < 0) {
		ret = -errno;
		goto out;
	}
	if (job->pid == 0) {
		setenv("IGT_SENTINEL_ON_STDERR", "1", 1);
		exec_job(argv, out_pipe[1], err_pipe[1], null_fd);
	}
	setpgid(job->pid, job->pid);
	close(out_pipe[1]);
	close(err_pipe[1]);
	job->out.pipe_fd = out_pipe[0];
	job->err.pipe_fd = err_pipe[0];
	out_pipe[0] = out_pipe[1] = err_pipe[0] = err_pipe[1] = -1; /* the streams own them now */

	/* One loop: the test's stdout and stderr, the kernel log, signals, timers, the watchdog. */
	long drain_deadline = 0;
	while (!reaped || job->out.pipe_fd >= 0 || job->err.pipe_fd >= 0) {
		struct pollfd pfds[4] = {
			{ .fd = job->out.pipe_fd, .events = POLLIN },
			{ .fd = job->err.pipe_fd, .events = POLLIN },
			{ .fd = job->kmsg_fd, .events = POLLIN },
			{ .fd = reaped ? -1 : ex->signal_fd, .events = POLLIN },
		};
		char buf[65536];
		long now;

		if (poll(pfds, 4, 1000) < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		bci_watchdog_pet(ex);
		now = now_ms();
		for (int i = 0; i < 2; i++) {
			struct stream *s = i == 0 ? &job->out : &job->err;
			if (s->pipe_fd < 0 || !(pfds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(s->pipe_fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(s->pipe_fd);
				s->pipe_fd = -1;
				continue;
			}
			job->last_activity = now;
			stream_feed(s, i == 0 ? job : NULL, buf, (size_t)n);
		}
		if (job->kmsg_fd >= 0 && (pfds[2].revents & POLLIN)) {
			job->last_activity = now;
			if (bci_kmsg_drain(job->kmsg_fd, job->fds[F_DMESG], &job->dmesg_budget) < 0) {
				close(job->kmsg_fd);
				job->kmsg_fd = -1;
			}
		}
		if (!reaped && bci_signals_dispatch(ex, job->pid, &status)) {
			reaped = true;
			/* Grandchildren may hold the pipes open: give them a moment, not forever. */
			drain_deadline = now + 2000;
		}
		if (reaped) {
			if (now > drain_deadline)
				break;
			continue;
		}
		const char *reason = timeout_reason(job, now);
		if (reason && job->killed == SIGKILL) {
			unkillable = true;
			bci_error("job %u: the test does not die even after SIGKILL: stopping the run",
				  index);
			break;
		}
		if (reason)
			escalate(job, reason, now);
	}
	for (int i = 0; i < 2; i++) {
		struct stream *s = i == 0 ? &job->out : &job->err;
		if (s->pipe_fd >= 0)
			close(s->pipe_fd);
		s->pipe_fd = -1;
		stream_finish(s);
	}
	if (job->dmesg_budget.dropped) {
		/* Said in the job's kernel log itself, in its record format, where a reader looks. */
		char note[256];
		int n = snprintf(note, sizeof(note),
				 "14,0,0,-;[bootci] kernel log over the limit of %llu bytes: %llu bytes "
				 "of records less severe than level %d dropped\n",
				 job->dmesg_budget.limit, job->dmesg_budget.dropped,
				 job->dmesg_budget.keep_level);
		bci_write_all(job->fds[F_DMESG], note, (size_t)n);
		bci_warn("job %u: kernel log over output_limit: %llu bytes dropped", index,
			 job->dmesg_budget.dropped);
	}

	*seconds = (double)(now_ms() - job->start) / 1000.0;
	if (reaped) {
		if (WIFEXITED(status))
			*status_out = WEXITSTATUS(status) >= 128 ? 128 - WEXITSTATUS(status)
								 : WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			*status_out = -WTERMSIG(status);
		else
			*status_out = 9999;
		char line[64];
		int n = snprintf(line, sizeof(line), "%s%d (%.3fs)\n",
				 job->timed_out ? "timeout:" : "exit:", *status_out, *seconds);
		sync_outputs(job);
		journal_write(job, line, (size_t)n);
		ret = 0;
	} else {
		sync_outputs(job);
		ret = unkillable ? 1 : (ret < 0 ? ret : -EIO);
	}

out:
	if (null_fd >= 0)
		close(null_fd);
	for (int i = 0; i < 2; i++) {
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (err_pipe[i] >= 0)
			close(err_pipe[i]);
	}
	if (job->kmsg_fd >= 0)
		close(job->kmsg_fd);
	for (int i = 0; i < F_COUNT; i++)
		if (job->fds[i] >= 0)
			close(job->fds[i]);
	free(job->out.tail);
	free(job->err.tail);
	return ret;
}

/* ---- the run ---- */

static void format_duration(long seconds, char *buf, size_t size)
{
	if (seconds >= 3600)
		snprintf(buf, size, "%ldh%02ldm", seconds / 3600, seconds / 60 % 60);
	else if (seconds >= 60)
		snprintf(buf, size, "%ldm%02lds", seconds / 60, seconds % 60);
	else
		snprintf(buf, size, "%lds", seconds);
}

/* Where the run stands, for the console's progress lines; it spans the boots of a resumed run. */
struct progress {
	size_t total;          /* jobs in the run */
	unsigned done_total;   /* jobs finished, this boot and earlier ones */
	unsigned done_now;     /* jobs finished in this boot */
	long boot_start;       /* now_ms() when this boot's jobs began */
	time_t run_started_at; /* starttime.txt: the run's first boot */
};

/* The run's start (starttime.txt), or now when it cannot be read. */
static time_t run_started_at(struct bci_executor *ex)
{
	char path[PATH_MAX], *text = NULL;
	time_t t = time(NULL);

	if (run_path(ex, path, "starttime.txt") == 0 && bci_read_file(path, &text, NULL, 64) == 0) {
		long long v = strtoll(text, NULL, 10);
		if (v > 0 && v <= (long long)t)
			t = (time_t)v;
	}
	free(text);
	return t;
}

/* An estimate needs no seconds once it is minutes away: `41m`, `2h05m`. */
static void format_eta(long seconds, char *buf, size_t size)
{
	if (seconds >= 3600)
		snprintf(buf, size, "%ldh%02ldm", seconds / 3600, seconds / 60 % 60);
	else if (seconds >= 60)
		snprintf(buf, size, "%ldm", (seconds + 30) / 60);
	else
		snprintf(buf, size, "%lds", seconds);
}

/*
 * The console line of a finished job, for people:
 * `[12/340] igt@kms_flip@basic pass 1.2s (elapsed 3m02s, ETA 41m)`. Elapsed counts from the
 * run's first boot; the ETA is this boot's pace over the jobs the whole run has left.
 */
static void report_job(const struct job_run *job, const struct progress *p, int status,
		       double seconds)
{
	const struct bci_joblist_entry *e = job->entry;
	char name[512], elapsed[32], eta[32], result[64];
	long spent = (now_ms() - p->boot_start) / 1000;
	long since_start = (long)(time(NULL) - p->run_started_at);

	if (e->count == 1 && !strchr(e->subtests[0], '@'))
		bci_igtout_piglit_name(e->binary, e->subtests[0], name, sizeof(name));
	else if (e->count == 1)
		snprintf(name, sizeof(name), "igt@%s@%s", e->binary, e->subtests[0]);
	else if (e->count > 1)
		snprintf(name, sizeof(name), "igt@%s (%zu subtests)", e->binary, e->count);
	else
		snprintf(name, sizeof(name), "igt@%s", e->binary);
	/* A live summary; results.json (the results generator) is the authority. */
	if (job->timed_out)
		snprintf(result, sizeof(result), "timeout");
	else if (job->results > 1)
		snprintf(result, sizeof(result), "%u pass, %u fail, %u skip, %u crash", job->passes,
			 job->fails, job->skips, job->crashes);
	else if (job->results == 1)
		snprintf(result, sizeof(result), "%s", job->last_result);
	else if (status == 0)
		snprintf(result, sizeof(result), "pass");
	else if (status == 77)
		snprintf(result, sizeof(result), "skip");
	else if (status < 0)
		snprintf(result, sizeof(result), "crash (signal %d)", -status);
	else
		snprintf(result, sizeof(result), "fail (exit %d)", status);
	format_duration(since_start > spent ? since_start : spent, elapsed, sizeof(elapsed));
	if (p->done_now > 0 && p->total > p->done_total)
		format_eta(spent * (long)(p->total - p->done_total) / (long)p->done_now, eta,
			   sizeof(eta));
	else
		snprintf(eta, sizeof(eta), "0s");
	bci_say("[%u/%zu] %s %s %.1fs (elapsed %s, ETA %s)", job->index + 1, p->total, name, result,
		seconds, elapsed, eta);
}

/*
 * Kernel taint bits that make results untrustworthy: igt_runner's abort-on-taint
 * set (IGT's lib/igt_taints.c). Others (TAINT_TEST from KUnit tests, TAINT_USER,
 * TAINT_FIRMWARE_WORKAROUND that many machines set at boot, module taints) are not.
 */
static unsigned long bad_taints(struct bci_executor *ex, unsigned long *all)
{
	const unsigned long bad = (1UL << 4) |  /* TAINT_MACHINE_CHECK */
				  (1UL << 5) |  /* TAINT_BAD_PAGE */
				  (1UL << 7) |  /* TAINT_DIE */
				  (1UL << 9);   /* TAINT_WARN */
	char path[PATH_MAX], *text = NULL;
	unsigned long taints = 0;

	if (bci_path(ex, path, "/proc/sys/kernel/tainted") == 0 &&
	    bci_read_file(path, &text, NULL, 64) == 0) {
		taints = strtoul(text, NULL, 10);
		free(text);
	}
	*all = taints;
	return taints & bad;
}

/* Lockdep turns itself off after its first report: later locking bugs go unseen. */
static bool lockdep_off(struct bci_executor *ex)
{
	char path[PATH_MAX], *text = NULL, *p;
	bool off = false;

	if (bci_path(ex, path, "/proc/lockdep_stats") < 0 ||
	    bci_read_file(path, &text, NULL, 1 << 16) < 0)
		return false; /* no lockdep in this kernel */
	p = strstr(text, " debug_locks:");
	off = p && strtol(p + strlen(" debug_locks:"), NULL, 10) == 0;
	free(text);
	return off;
}

/* Checks the abort conditions between jobs; writes aborted.txt and returns 1 when the run stops. */
static int check_abort(struct bci_executor *ex, struct bci_journal *journal,
		       const struct bci_joblist_entry *after, const char *forced)
{
	const char *abort_on = bci_config_get(ex->config, "abort_on");
	char text[1024], reason[512] = "";
	unsigned long all, bad = bad_taints(ex, &all);

	if (forced)
		snprintf(reason, sizeof(reason), "%s", forced);
	else if (strstr(abort_on, "taint") && bad)
		snprintf(reason, sizeof(reason), "Kernel badly tainted (%#lx, %#lx) (check dmesg for details)",
			 all, bad);
	else if (strstr(abort_on, "lockdep") && lockdep_off(ex))
		snprintf(reason, sizeof(reason), "Lockdep not active (/proc/lockdep_stats: debug_locks 0)");
	if (!reason[0])
		return 0;
	if (after && after->count)
		snprintf(text, sizeof(text), "Aborted after: %s (%s)\n\n%s\n", after->binary,
			 after->subtests[0], reason);
	else if (after)
		snprintf(text, sizeof(text), "Aborted after: %s\n\n%s\n", after->binary, reason);
	else
		snprintf(text, sizeof(text), "Aborted at bootup\n\n%s\n", reason);
	write_text(ex->run_dir, "aborted.txt", text);
	bci_journal_append(journal, "abort %s", forced ? "forced" : "condition");
	bci_error("aborting the run: %s", reason);
	return 1;
}

/* The subtests of job @e not yet started according to its journal.txt (a resumed job). */
static int remaining_subtests(struct bci_executor *ex, unsigned index,
			      const struct bci_joblist_entry *e, char ***out, size_t *count)
{
	char path[PATH_MAX], *text = NULL;
	char **left = calloc(e->count + 1, sizeof(char *));
	size_t n = 0;

	if (!left)
		return -ENOMEM;
	if (run_path(ex, path, "%u/journal.txt", index) < 0 ||
	    bci_read_file(path, &text, NULL, 1 << 20) < 0)
		text = NULL;
	for (size_t i = 0; i < e->count; i++) {
		bool started = false;
		size_t len = strcspn(e->subtests[i], "@");
		for (char *line = text; line && *line && !started;) {
			char *nl = strchr(line, '\n');
			size_t l = nl ? (size_t)(nl - line) : strlen(line);
			started = l == len && strncmp(line, e->subtests[i], len) == 0;
			line = nl ? nl + 1 : NULL;
		}
		if (!started)
			left[n++] = e->subtests[i];
	}
	free(text);
	*out = left;
	*count = n;
	return 0;
}

/* The text after @prefix on the line at @offset of @buf, into @name. */
static void line_name(const char *buf, size_t len, size_t offset, const char *prefix, char *name,
		      size_t size)
{
	const char *p = buf + offset + strlen(prefix);
	size_t n = 0;

	while (p + n < buf + len && p[n] != '\n' && n + 1 < size)
		n++;
	memcpy(name, p, n);
	name[n] = '\0';
}

/* Appends every dmesg record of the saved pstore dump to @out. */
static void append_dump(struct bci_executor *ex, int out)
{
	char dir[PATH_MAX];
	struct dirent **entries;
	int n;

	if (run_path(ex, dir, "%s", ex->crash_dump) < 0)
		return;
	n = scandir(dir, &entries, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX + 300], *text;
		size_t len;
		if (strncmp(entries[i]->d_name, "dmesg-", 6) == 0 &&
		    snprintf(path, sizeof(path), "%s/%s", dir, entries[i]->d_name) < (int)sizeof(path) &&
		    bci_read_file(path, &text, &len, 4 << 20) == 0) {
			dprintf(out, "bootci: ---- %s ----\n", entries[i]->d_name);
			bci_write_all(out, text, len);
			if (len && text[len - 1] != '\n')
				bci_write_all(out, "\n", 1);
			free(text);
		}
		free(entries[i]);
	}
	if (n >= 0)
		free(entries);
}

/*
 * The last "[IGT] <bin>: starting dynamic subtest <name>" after "starting
 * subtest <subtest>" in the saved dmesg records, when it names a dynamic
 * subtest other than @dynamic (or @dynamic had already ended: @done).
 * Records are read in name order, which is the order efi-pstore wrote them.
 */
static bool dump_last_dynamic(struct bci_executor *ex, const char *subtest, char *dynamic,
			      size_t size, bool done)
{
	static const char dyn_marker[] = ": starting dynamic subtest ";
	char dir[PATH_MAX], sub_marker[300], found[256] = "";
	struct dirent **entries;
	bool in_subtest = false;
	int n;

	if (run_path(ex, dir, "%s", ex->crash_dump) < 0)
		return false;
	snprintf(sub_marker, sizeof(sub_marker), ": starting subtest %s", subtest);
	n = scandir(dir, &entries, NULL, alphasort);
	for (int i = n - 1; i >= 0; i--) {
		/* efi-pstore numbers parts from the end of the log: the highest part is the oldest. */
		char path[PATH_MAX + 300], *text;
		if (strncmp(entries[i]->d_name, "dmesg-", 6) == 0 &&
		    snprintf(path, sizeof(path), "%s/%s", dir, entries[i]->d_name) < (int)sizeof(path) &&
		    bci_read_file(path, &text, NULL, 4 << 20) == 0) {
			for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save)) {
				char *p = strstr(line, sub_marker);
				if (p && (p[strlen(sub_marker)] == '\0' || p[strlen(sub_marker)] == ' ')) {
					in_subtest = true;
					found[0] = '\0';
				} else if (in_subtest && (p = strstr(line, dyn_marker))) {
					snprintf(found, sizeof(found), "%s", p + strlen(dyn_marker));
					found[strcspn(found, " \r")] = '\0';
				}
			}
			free(text);
		}
		free(entries[i]);
	}
	if (n >= 0)
		free(entries);
	if (!found[0] || (strcmp(found, dynamic) == 0 && !done))
		return false;
	if (strcmp(found, dynamic) == 0 && done)
		return false;
	snprintf(dynamic, size, "%s", found);
	return true;
}

/*
 * The previous boot died in a kernel crash while job @index ran: its subtest
 * (or dynamic subtest) in flight gets igt's CRASH result line in out.txt,
 * followed by the pstore dump, so results.json shows crash and carries the
 * dump in that test's output. A dynamic subtest whose start only bootci's
 * journal knew (the kernel died before out.txt had it) gets its start line too.
 */
static void attribute_crash(struct bci_executor *ex, unsigned index, struct bci_journal *journal)
{
	const struct bci_job_state *state = &journal->jobs[index];
	static const char sub_prefix[] = "Starting subtest: ";
	static const char dyn_prefix[] = "Starting dynamic subtest: ";
	char path[PATH_MAX], subtest[256] = "", dynamic[256] = "", *text = NULL;
	struct bci_igtout parsed;
	long last_sub = -1, last_dyn = -1;
	bool sub_done = false, dyn_done = false;
	size_t len = 0;
	int fd;

	if (run_path(ex, path, "%u/out.txt", index) < 0)
		return;
	if (bci_read_file(path, &text, &len, 64 << 20) < 0) {
		text = strdup("");
		len = 0;
	}
	while (len > 0 && text[len - 1] == '\0')
		len--;
	if (!text || bci_igtout_parse(&parsed, text, len) < 0) {
		free(text);
		return;
	}
	for (size_t i = 0; i < parsed.mark_count; i++) {
		switch (parsed.marks[i].kind) {
		case BCI_IGTOUT_SUBTEST_START:
			last_sub = (long)i;
			last_dyn = -1;
			sub_done = dyn_done = false;
			break;
		case BCI_IGTOUT_SUBTEST_RESULT:
			sub_done = true;
			break;
		case BCI_IGTOUT_DYNAMIC_START:
			last_dyn = (long)i;
			dyn_done = false;
			break;
		case BCI_IGTOUT_DYNAMIC_RESULT:
			dyn_done = true;
			break;
		}
	}
	if (last_sub >= 0)
		line_name(text, len, parsed.marks[last_sub].offset, sub_prefix, subtest, sizeof(subtest));
	if (last_dyn >= 0)
		line_name(text, len, parsed.marks[last_dyn].offset, dyn_prefix, dynamic, sizeof(dynamic));
	bci_igtout_release(&parsed);
	free(text);

	/* bootci's journal may know a later dynamic subtest than out.txt does. */
	bool start_missing = false;
	if (subtest[0] && !sub_done && state->dynamic_count > 0) {
		const char *last = state->dynamic[state->dynamic_count - 1];
		size_t n = strlen(subtest);
		if (strncmp(last, subtest, n) == 0 && last[n] == '@' &&
		    (dyn_done || strcmp(last + n + 1, dynamic) != 0)) {
			snprintf(dynamic, sizeof(dynamic), "%s", last + n + 1);
			start_missing = true;
			dyn_done = false;
		}
	}
	/*
	 * Neither out.txt nor the journal may have seen the last dynamic subtest
	 * start (the kernel died first), but IGT logs every start to the kernel
	 * log, and the dump holds the kernel log.
	 */
	if (subtest[0] && !sub_done && dump_last_dynamic(ex, subtest, dynamic, sizeof(dynamic), dyn_done)) {
		start_missing = true;
		dyn_done = false;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	dprintf(fd, "\nbootci: the kernel crashed during this test; the pstore dump of boot %u "
		    "follows (saved in %s/)\n", ex->boot_number - 1, ex->crash_dump);
	if (subtest[0] && !sub_done && dynamic[0] && !dyn_done) {
		if (start_missing)
			dprintf(fd, "%s%s\n", dyn_prefix, dynamic);
		/* Known now: a resume must not run it again. */
		if (start_missing && bci_journal_append(journal, "dynamic %u %s@%s", index, subtest,
							dynamic) < 0)
			bci_warn("job %u: cannot journal the crashed dynamic subtest", index);
		dprintf(fd, "Dynamic subtest %s: CRASH (0.000s)\n", dynamic);
		bci_say("job %u: %s@%s crashed the kernel", index, subtest, dynamic);
	} else if (subtest[0] && !sub_done) {
		dprintf(fd, "Subtest %s: CRASH (0.000s)\n", subtest);
		bci_say("job %u: %s crashed the kernel", index, subtest);
	}
	append_dump(ex, fd);
	fsync(fd);
	close(fd);
}

/*
 * For a resumed job whose last subtest had started dynamic subtests: the
 * --dynamic-subtest filter running the others ("*,!a,!b", IGT's uwildmat
 * lists, last match wins), malloc'ed; NULL when there is nothing to resume.
 */
static char *dynamic_rest(const struct bci_joblist_entry *e, const struct bci_job_state *state)
{
	const char *subtest = e->subtests[e->count - 1];
	size_t len = strlen(subtest), size = 3, used;
	char *filter;

	if (strchr(subtest, '@') || state->dynamic_count == 0)
		return NULL;
	for (size_t i = 0; i < state->dynamic_count; i++)
		size += strlen(state->dynamic[i]) + 2;
	filter = malloc(size);
	if (!filter)
		return NULL;
	used = (size_t)sprintf(filter, "*");
	for (size_t i = 0; i < state->dynamic_count; i++) {
		const char *d = state->dynamic[i];
		if (strncmp(d, subtest, len) == 0 && d[len] == '@')
			used += (size_t)sprintf(filter + used, ",!%s", d + len + 1);
	}
	if (used == 1) {
		free(filter);
		return NULL;
	}
	return filter;
}

int bci_igt_run(struct bci_executor *ex)
{
	unsigned long boot_cap = bci_config_get_number(ex->config, "boot_cap");
	unsigned long overall = bci_config_get_seconds(ex->config, "overall_timeout");
	struct bci_joblist jobs = { 0 };
	struct bci_journal journal;
	char path[PATH_MAX], err[512];
	bool exists = false;
	long run_start = now_ms();
	struct progress progress = { .boot_start = run_start };
	int ret;

	ret = load_run(ex, &jobs, &exists);
	if (ret == 0 && !exists)
		ret = create_run(ex, &jobs);
	if (ret < 0) {
		bci_joblist_clear(&jobs);
		return ret;
	}
	ret = run_path(ex, path, "bootci-journal.txt");
	if (ret == 0)
		ret = bci_journal_open(&journal, path, jobs.count, err, sizeof(err));
	if (ret < 0) {
		bci_error("%s", err);
		bci_joblist_clear(&jobs);
		return ret;
	}
	ret = bci_journal_append(&journal, "boot %u %ld %s", journal.boots + 1, (long)time(NULL),
				 ex->release);
	if (ret < 0)
		goto out;
	if (journal.done || journal.aborted) {
		bci_say("run %s is already complete", bci_config_get(ex->config, "run_id"));
		goto finish;
	}
	if (exists)
		bci_say("run %s: resuming (boot %u)", bci_config_get(ex->config, "run_id"),
			journal.boots);
	progress.total = jobs.count;
	progress.run_started_at = run_started_at(ex);
	bci_watchdog_open(ex);
	/* As igt_runner: a kernel already tainted before the first test makes no trustworthy run. */
	if (!exists && check_abort(ex, &journal, NULL, NULL))
		goto finish;

	/* The job in flight when the machine died: igt_runner's results say incomplete. */
	if (journal.in_flight >= 0) {
		unsigned j = (unsigned)journal.in_flight;
		bci_warn("job %u (%s) was running when boot %u ended", j, jobs.entries[j].binary,
			 journal.boots - 1);
		if (ex->kernel_crashed)
			attribute_crash(ex, j, &journal);
		bci_journal_append(&journal, "incomplete %u %u", j, journal.boots - 1);
		if (journal.jobs[j].starts >= boot_cap) {
			char out_path[PATH_MAX], note[160];
			bci_error("job %u took the machine down %u times: not run again", j,
				  journal.jobs[j].starts);
			bci_journal_append(&journal, "capped %u %u", j, journal.jobs[j].starts);
			/* Said where the developer reads the test's result, not only in the journal. */
			int n = snprintf(note, sizeof(note),
					 "\nbootci: this job took the machine down %u times (boot_cap %lu): "
					 "not run again\n", journal.jobs[j].starts, boot_cap);
			int fd = run_path(ex, out_path, "%u/out.txt", j) < 0 ? -1 :
				 open(out_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0) {
				if (bci_write_all(fd, note, (size_t)n) == 0)
					fdatasync(fd);
				close(fd);
			}
		}
	}
	for (unsigned j = 0; j < jobs.count; j++) {
		const struct bci_joblist_entry *e = &jobs.entries[j];
		char **subtests = e->subtests;
		size_t count = e->count;
		char **left = NULL;
		struct job_run job;
		int status = 0;
		double seconds = 0;

		if (journal.jobs[j].finished)
			continue;
		char *dynamic_filter = NULL;
		if (journal.jobs[j].starts > 0) {
			/* Resumed: run only what has not started yet, as igt_runner prunes. */
			ret = remaining_subtests(ex, j, e, &left, &count);
			if (ret < 0)
				goto out;
			subtests = left;
			if (e->count > 0 && count == 0) {
				/*
				 * Every subtest started. igt_runner stops here; bootci knows
				 * which dynamic subtests started and runs the rest of them.
				 */
				dynamic_filter = dynamic_rest(e, &journal.jobs[j]);
				if (!dynamic_filter) {
					bci_journal_append(&journal, "exit %u -1 0", j);
					free(left);
					continue;
				}
				subtests = e->subtests + e->count - 1;
				count = 1;
				bci_say("job %u: resuming %s after its dynamic subtests %s", j,
					subtests[0], dynamic_filter + 2);
			}
		}
		if (ex->stop_requested ||
		    (overall && now_ms() - run_start > (long)overall * 1000)) {
			check_abort(ex, &journal, j ? &jobs.entries[j - 1] : NULL,
				    ex->stop_requested ? "Stop requested by a signal"
						       : "Overall timeout exceeded");
			free(left);
			break;
		}
		ret = bci_journal_append(&journal, "start %u", j);
		if (ret < 0) {
			free(left);
			goto out;
		}
		ret = run_job(ex, &journal, j, e, subtests, count, dynamic_filter, &status, &seconds,
			      &job);
		free(left);
		free(dynamic_filter);
		if (ret < 0) {
			bci_error("job %u could not run: %s", j, strerror(-ret));
			goto out;
		}
		if (ret == 1) {
			check_abort(ex, &journal, e, "Child refuses to die");
			break;
		}
		bci_journal_append(&journal, "%s %u %d %.3f", job.timed_out ? "timeout" : "exit", j,
				   status, seconds);
		progress.done_now++;
		progress.done_total = 0;
		for (unsigned k = 0; k < jobs.count; k++)
			progress.done_total += journal.jobs[k].finished;
		report_job(&job, &progress, status, seconds);
		if (check_abort(ex, &journal, e,
				job.abort_reason[0] ? job.abort_reason
				: status == IGT_EXIT_ABORT ? "Test exited with IGT_EXIT_ABORT" : NULL))
			break;
	}
finish:
	if (bci_suspend_summary_write(ex->run_dir) < 0)
		bci_warn("cannot write suspend-summary.txt");
	write_realtime(ex->run_dir, "endtime.txt");
	if (!journal.done)
		bci_journal_append(&journal, "done");
	bci_say("run %s complete", bci_config_get(ex->config, "run_id"));
	ret = 0;
out:
	bci_journal_close(&journal);
	bci_joblist_clear(&jobs);
	return ret;
}
