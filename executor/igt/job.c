// SPDX-License-Identifier: MIT
/*
 * One job of the run: its output files opened (appended to after a resume),
 * the test binary started with its stdout and stderr on pipes, then one loop
 * over the pipes, the kernel log, signals, the timers and the watchdog, and
 * finally its exit status in journal.txt. The protocol lines the test prints
 * keep igt_runner's journal.txt, bootci's journal and the timers up to date
 * as they come. A suspend cycle job is a synchronous call instead (suspend.c).
 */
#include "igt.h"

#include "config.h"
#include "fsutil.h"
#include "igt_output_strings.h"
#include "kmsg_record.h"
#include "suspend.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* After SIGKILL, a test that still does not go is stuck in the kernel. */
#define KILL_GIVE_UP_MS 20000L
/* How long the leftovers of a test may take to die of SIGKILL. */
#define LEFTOVERS_GIVE_UP_MS 2000L

static void escalate(struct bci_igt_job *job, const char *reason, long now);
static void output_failed(struct bci_igt_job *job, int file, int error);
static void output_failed_at(struct bci_igt_job *job, const char *name, const char *rel,
			     unsigned long long size, int error);

extern char **environ;

/*
 * fdatasync of one output file, skipped when it has not grown since its last
 * one (the files are only appended to): on ext4 even a clean file's
 * fdatasync flushes the disk's cache, the costliest thing a quick job does.
 */
static int sync_output(struct bci_igt_job *job, int i)
{
	struct stat st;
	int ret;

	if (job->fds[i] < 0)
		return 0;
	if (fstat(job->fds[i], &st) == 0 && st.st_size == job->synced[i])
		return 0;
	ret = bci_journal_barrier(job->journal, job->fds[i], false);
	if (ret < 0)
		return ret;
	job->synced[i] = st.st_size;
	return 0;
}

/* The kernel log's new records into dmesg.txt; once a result file failed, no more of it. */
static void drain_kmsg(struct bci_igt_job *job)
{
	long n = job->write_error ? -ECANCELED
				  : bci_kmsg_drain(job->ex, job->kmsg_fd, job->fds[BCI_RESULTS_FILE_DMESG],
						   &job->dmesg_budget);

	if (n < 0 && job->kmsg_fd >= 0) {
		close(job->kmsg_fd);
		job->kmsg_fd = -1;
	}
	/* A read of /dev/kmsg never fails so; a write to dmesg.txt on a full partition does. */
	if (n == -ENOSPC || n == -EDQUOT || n == -EFBIG || n == -EIO)
		output_failed(job, BCI_RESULTS_FILE_DMESG, (int)n);
}

/*
 * The kernel log drained, then the job's files that grew since their last
 * barrier (its outputs and comms) made durable: one fdatasync when one grew,
 * else one syncfs() of the results partition, which commits ext4's journal
 * and flushes the disk's cache once for all of them where an fdatasync each
 * would do it each time.
 */
static void sync_outputs(struct bci_igt_job *job)
{
	enum { COMMS = BCI_RESULTS_FILE_COUNT };
	off_t size[BCI_RESULTS_FILE_COUNT + 1];
	int fds[BCI_RESULTS_FILE_COUNT + 1], dirty = 0, at = -1, ret = 0;

	drain_kmsg(job);
	for (int i = 0; i <= COMMS; i++) {
		struct stat st;
		off_t synced = i == COMMS ? job->comms.synced : job->synced[i];

		fds[i] = i == COMMS ? job->comms.file_fd : job->fds[i];
		size[i] = -1;
		if (fds[i] < 0)
			continue;
		/* A size that cannot be read is synced, and not remembered. */
		if (fstat(fds[i], &st) == 0) {
			if (st.st_size == synced)
				continue;
			size[i] = st.st_size;
		}
		dirty++;
		/* A failure is the first output's that needs it (comms' only is a warning). */
		if (at < 0 || at == COMMS)
			at = i;
	}
	if (dirty == 0)
		return;
	ret = bci_journal_barrier(job->journal, fds[at], dirty > 1);
	if (ret < 0 && at == COMMS)
		bci_warn("job %u: cannot sync comms: %s", job->index + 1, strerror(-ret));
	else if (ret < 0)
		output_failed(job, at, ret);
	if (ret < 0)
		return;
	for (int i = 0; i <= COMMS; i++)
		if (fds[i] >= 0 && i == COMMS)
			job->comms.synced = size[i] >= 0 ? size[i] : job->comms.synced;
		else if (fds[i] >= 0)
			job->synced[i] = size[i] >= 0 ? size[i] : job->synced[i];
}

/* Each file's size as the test's end is taken, for bootci's end of the job (-1: no file). */
static void end_sizes(struct bci_igt_job *job)
{
	struct stat st;

	for (int i = 0; i < BCI_RUN_JOURNAL_END_FILES; i++) {
		int fd = i == BCI_RUN_JOURNAL_END_COMMS ? job->comms.file_fd : job->fds[i];

		job->end_bytes[i] = i != BCI_RESULTS_FILE_JOURNAL && fd >= 0 && fstat(fd, &st) == 0
					    ? (long long)st.st_size : -1;
	}
}

/* After a barrier of the whole partition: every file of the job is durable as it stands. */
static void note_synced(struct bci_igt_job *job)
{
	struct stat st;

	for (int i = 0; i < BCI_RESULTS_FILE_COUNT; i++)
		if (job->fds[i] >= 0 && fstat(job->fds[i], &st) == 0)
			job->synced[i] = st.st_size;
	if (job->comms.file_fd >= 0 && fstat(job->comms.file_fd, &st) == 0)
		job->comms.synced = st.st_size;
}

/* A line of journal.txt, fdatasync'ed when @sync (else durable with the next barrier). */
static void journal_write(struct bci_igt_job *job, const char *text, size_t len, bool sync)
{
	int ret = bci_write_all(job->fds[BCI_RESULTS_FILE_JOURNAL], text, len);

	if (ret == 0 && sync)
		ret = sync_output(job, BCI_RESULTS_FILE_JOURNAL);
	if (ret < 0)
		output_failed(job, BCI_RESULTS_FILE_JOURNAL, ret);
}

/*
 * The first result file of the job that could not be written (a full or
 * failing partition): said on the console; the reserve given back so that
 * the records still fit; N/bootci-incomplete.txt and a note in out.txt say
 * where the output stops (results.json shows it, lib/results_dir.h); nothing
 * more of the test's output is written; the test is stopped and the run
 * aborts after it (job->abort_reason), handing over.
 */
static void output_failed(struct bci_igt_job *job, int file, int error)
{
	const char *name = bci_results_job_files[file];
	char rel[64];
	struct stat st;

	snprintf(rel, sizeof(rel), BCI_RESULTS_JOB_DIR "/%s", job->index, name);
	output_failed_at(job, name, rel, fstat(job->fds[file], &st) == 0 ?
			 (unsigned long long)st.st_size : 0, error);
}

/* As output_failed(), for @name at @rel in the run folder (a job file, or the run's
 * suspend-cycles.txt), cut at @size. */
static void output_failed_at(struct bci_igt_job *job, const char *name, const char *rel,
			     unsigned long long size, int error)
{
	char reason[200], line[300], path[PATH_MAX];
	int n, ret;

	if (job->write_error)
		return;
	job->write_error = error;
	job->out.write_error = job->out.write_error ? job->out.write_error : error;
	job->err.write_error = job->err.write_error ? job->err.write_error : error;
	snprintf(reason, sizeof(reason), "Results partition %s: cannot write %s (%s)",
		 error == -ENOSPC || error == -EDQUOT ? "full" : "failing", rel, strerror(-error));
	bci_error("job %u: cannot write %s after %llu bytes: %s: its output stops here; the test "
		  "is stopped and the run aborts after it", job->index + 1, name, size, strerror(-error));
	bci_reserve_release(job->ex, reason);
	snprintf(job->abort_reason, sizeof(job->abort_reason), "%s", reason);

	n = bci_results_incomplete_format(line, sizeof(line), name, size, error);
	ret = bci_igt_rundir_path(job->ex, path, BCI_RESULTS_JOB_DIR "/" BCI_RESULTS_JOB_INCOMPLETE,
				  job->index);
	if (ret == 0)
		ret = bci_write_file_atomic(path, line, (size_t)n, 0644);
	if (ret < 0)
		bci_error("job %u: cannot write %s: %s", job->index + 1, BCI_RESULTS_JOB_INCOMPLETE,
			  strerror(-ret));
	n = snprintf(line, sizeof(line),
		     "\nbootci: %s could not be written after %llu bytes (%s): the output of this "
		     "job is incomplete\n", name, size, strerror(-error));
	if (bci_write_all(job->fds[BCI_RESULTS_FILE_OUT], line, (size_t)n) < 0)
		bci_error("job %u: cannot say in out.txt that its output is incomplete", job->index + 1);
	if (job->pid > 0 && !job->reaped) {
		escalate(job, reason, bci_clock_ms(job->ex, CLOCK_BOOTTIME));
		job->timed_out = false;
	}
}

static void count_result(struct bci_igt_job *job, const struct bci_igt_line *line)
{
	double t;
	const char *result = bci_igt_result_from_word(line->text, line->text_len, &t);

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

/*
 * Between subtests too, as igt_runner does: a subtest that tainted the kernel
 * stops the job before the next one starts on a broken kernel. The taints when
 * it does, else 0.
 */
static unsigned long taint_before_start(struct bci_igt_job *job)
{
	unsigned long taints = 0, bad;

	if (job->results == 0 || job->killed || job->abort_reason[0] ||
	    !strstr(bci_config_get(job->ex->config, "abort_on"), "taint"))
		return 0;
	bad = bci_igt_abort_bad_taints(job->ex, &taints);
	if (!bad)
		return 0;
	snprintf(job->abort_reason, sizeof(job->abort_reason),
		 "Kernel badly tainted (%#lx, %#lx) (check dmesg for details)", taints, bad);
	return taints;
}

/* A complete line of the test's stdout: the protocol lines drive the journals and timers. */
static void handle_out_line(void *data, const char *text, size_t len)
{
	struct bci_igt_job *job = data;
	long now = bci_clock_ms(job->ex, CLOCK_BOOTTIME);
	unsigned long taints = 0;
	struct bci_igt_line line;
	char entry[300];
	int ret, n;

	switch (bci_igt_line_parse(text, len, &line)) {
	case BCI_IGT_LINE_SUBTEST_START:
		taints = taint_before_start(job);
		n = line.name_len < sizeof(job->subtest) ? (int)line.name_len
							 : (int)sizeof(job->subtest) - 1;
		snprintf(job->subtest, sizeof(job->subtest), "%.*s", n, line.name);
		/* igt_runner's journal: the subtest's name, durable as soon as it is known. */
		n = snprintf(entry, sizeof(entry), "%s\n", job->subtest);
		journal_write(job, entry, (size_t)n, true);
		job->last_subtest = now;
		sync_outputs(job);
		break;
	case BCI_IGT_LINE_DYNAMIC_START:
		taints = taint_before_start(job);
		/* igt_runner cannot resume inside a subtest; bootci's journal remembers dynamic ones. */
		ret = bci_journal_appendf(job->journal, BCI_RUN_JOURNAL_DYNAMIC, job->index, "%s@%.*s",
					  job->subtest[0] ? job->subtest : "-", (int)line.name_len,
					  line.name);
		if (ret < 0 && !job->journal_error) {
			/* The run cannot go on blind: stop the test, then the run (run.c). */
			job->journal_error = ret;
			escalate(job, "bootci journal not durable", now);
		}
		job->last_subtest = now;
		sync_outputs(job);
		break;
	case BCI_IGT_LINE_SUBTEST_RESULT:
		/* A subtest skipped in its binary's igt_fixture prints its result with no
		 * start line. igt_runner journals it anyway ("result for a test that didn't
		 * ever start"); without it the subtest has no result in multiple mode. */
		if (line.name_len != strlen(job->subtest) ||
		    memcmp(line.name, job->subtest, line.name_len) != 0) {
			n = line.name_len < sizeof(job->subtest) ? (int)line.name_len
								 : (int)sizeof(job->subtest) - 1;
			n = snprintf(entry, sizeof(entry), "%.*s\n", n, line.name);
			journal_write(job, entry, (size_t)n, true);
			job->subtest[0] = '\0';
		}
		count_result(job, &line);
		sync_outputs(job);
		break;
	case BCI_IGT_LINE_DYNAMIC_RESULT:
		sync_outputs(job);
		break;
	default:
		break;
	}
	if (taints) {
		/* The subtest that starts on a tainted kernel is journalled, then stopped, and its
		 * output says why, as igt_runner writes it: in comms when the test speaks the
		 * socket (the results come from there), else in out.txt. */
		char note[128];
		n = snprintf(note, sizeof(note), BCI_IGT_RUNNER_KILLED_TAINT, taints);
		if (!bci_igt_comms_note(job, note + 1))
			bci_write_all(job->fds[BCI_RESULTS_FILE_OUT], note, (size_t)n);
		escalate(job, "Kernel tainted", now);
		job->timed_out = false;
	}
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

/*
 * The job's folder and files, created or reopened. Their names become durable
 * with the run journal's start line, in the barrier before the test starts
 * (job_start): nothing is announced by them before.
 */
static int open_job_outputs(struct bci_igt_job *job, char *dir)
{
	/* A folder made now holds nothing a crash could have torn. */
	bool fresh = mkdir(dir, 0755) == 0;

	if (!fresh && errno != EEXIST)
		return -errno;
	for (int i = 0; i < BCI_RESULTS_FILE_COUNT; i++) {
		char path[PATH_MAX + 16];
		char last;
		snprintf(path, sizeof(path), "%.*s/%s", PATH_MAX - 1, dir, bci_results_job_files[i]);
		job->fds[i] = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (job->fds[i] < 0)
			return -errno;
		if (fresh)
			continue;
		/*
		 * A resumed job appends. A crash can leave the end of a file as NUL
		 * bytes (the size was on disk, the data not): cut them, since parsers
		 * of these files (igt_runner's included) stop at the first NUL. Then
		 * end a line cut by the crash, as igt_runner does.
		 */
		drop_trailing_nuls(job->fds[i]);
		/* journal.txt's torn line is cut: ended, it would read as a malformed exit line. */
		if (i == BCI_RESULTS_FILE_JOURNAL) {
			long long cut = bci_cut_torn_line(job->fds[i]);
			if (cut > 0)
				bci_warn("job %u: cut a torn last line (%lld bytes) off journal.txt",
					 job->index + 1, cut);
			else if (cut < 0)
				bci_warn("job %u: journal.txt: %s", job->index + 1, strerror((int)-cut));
			continue;
		}
		if (pread(job->fds[i], &last, 1, lseek(job->fds[i], 0, SEEK_END) - 1) == 1 &&
		    last != '\n')
			bci_write_all(job->fds[i], "\n", 1);
	}
	return 0;
}

static void build_argv(struct bci_igt_job *job, const struct bci_igt_selection *what)
{
	struct bci_executor *ex = job->ex;
	const struct bci_joblist_entry *e = job->entry;
	char *const *subtests = what->subtests;
	size_t count = what->count, subs_size = sizeof(job->argv_subtests);
	const char *dynamic_filter = what->dynamic_filter, **argv = job->argv;
	char *path = job->argv_path, *subs = job->argv_subtests, *dynamic = job->argv_dynamic;
	int argc = 0;

	bci_path(ex->root, path, "%s/%s", bci_config_get(ex->config, "test_dir"), e->binary);
	argv[argc++] = path;
	if (count > 0) {
		size_t used = 0;
		const char *at = strchr(subtests[0], '@');
		dynamic[0] = '\0';
		if (at && count == 1) {
			snprintf(subs, subs_size, "%.*s", (int)(at - subtests[0]), subtests[0]);
			snprintf(dynamic, sizeof(job->argv_dynamic), "%s", at + 1);
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

/* Returns the reason a job not stopped yet has to be stopped now, or NULL. */
static const char *timeout_reason(struct bci_igt_job *job, long now)
{
	struct bci_config *c = job->ex->config;
	unsigned long per_test = bci_config_get_seconds(c, "per_test_timeout");
	unsigned long inactivity = bci_config_get_seconds(c, "inactivity_timeout");

	if (per_test && now - job->last_subtest > (long)per_test * 1000)
		return "Per-test timeout exceeded";
	if (inactivity && now - job->last_activity > (long)inactivity * 1000)
		return "Inactivity timeout exceeded";
	return NULL;
}

/* Says why the test is stopped, in the kernel log (igt_runner's words) and on the console. */
static void say_kill(struct bci_igt_job *job, const char *reason, int sig)
{
	const char *name = sig == SIGQUIT ? "SIGQUIT" : "SIGKILL";

	bci_kmsg_mark(job->ex, 4, "%s. Killing the current test with %s.\n", reason, name);
	bci_warn("job %u: %s: sending %s", job->index + 1, reason, name);
}

/*
 * Starts stopping the test for @reason: SIGQUIT (IGT tests dump their state
 * on it), then, driven by the loop (job_monitor), SIGKILL after kill_grace.
 */
static void escalate(struct bci_igt_job *job, const char *reason, long now)
{
	if (job->kill.sent)
		return;
	job->kill = (struct bci_spawn_kill){
		.first_signal = SIGQUIT,
		.grace_ms = (long)bci_config_get_seconds(job->ex->config, "kill_grace") * 1000,
		.give_up_ms = KILL_GIVE_UP_MS,
	};
	say_kill(job, reason, SIGQUIT);
	/* Task states and memory into the log: the next person needs them. */
	bci_sysrq(job->ex, 't');
	bci_sysrq(job->ex, 'm');
	job->killed = bci_spawn_kill_step(&job->kill, job->pid, now);
	job->timed_out = true;
}

/* One turn of a stop under way: SIGKILL when the grace is over. 1 when even that failed. */
static int escalate_step(struct bci_igt_job *job, long now)
{
	int sent = bci_spawn_kill_step(&job->kill, job->pid, now);

	if (sent == -ETIME) {
		job->unkillable = true;
		bci_error("job %u: the test does not die even after SIGKILL: stopping the run",
			  job->index + 1);
		return 1;
	}
	if (sent == SIGKILL) {
		say_kill(job, "still running after a kill", SIGKILL);
		job->killed = SIGKILL;
	}
	return 0;
}

/*
 * A suspend cycle job: the cycle writes the IGT protocol itself (it is one
 * synchronous call, no child and no pipe). Its journal.txt line is durable
 * before the machine sleeps, so a cycle that never wakes is incomplete.
 */
static int run_suspend_job(struct bci_igt_job *job, const char *cycle)
{
	struct bci_executor *ex = job->ex;
	struct bci_suspend_record record;
	char line[320];
	int n = snprintf(line, sizeof(line), "%s\n", cycle), status;

	/* The previous job's console line before the machine sleeps. */
	bci_igt_progress_flush(job->progress);
	/* The run journal's start and the job's folder, durable before the cycle's line. */
	status = bci_journal_sync(job->journal, true);
	/* The previous job's journal.txt end too, before the machine sleeps. */
	if (status == 0)
		status = bci_journal_pay_end(job->journal);
	if (status < 0)
		return status;
	note_synced(job);
	journal_write(job, line, (size_t)n, true);
	bci_igt_progress_mark(job, NULL);
	job->start = bci_clock_ms(job->ex, CLOCK_BOOTTIME);
	status = bci_suspend_cycle(ex, cycle, job->fds[BCI_RESULTS_FILE_OUT],
				   job->fds[BCI_RESULTS_FILE_ERR], job->fds[BCI_RESULTS_FILE_DMESG], &record);
	if (status < 0) {
		bci_error("job %u: %s is not a suspend cycle", job->index + 1, cycle);
		return status;
	}
	/* A write of the cycle's output that failed (a full partition): as for a test's output. */
	for (int i = 0; record.output_error && i < BCI_RESULTS_FILE_COUNT; i++)
		if (job->fds[i] == record.output_fd) {
			output_failed(job, i, record.output_error);
			break;
		}
	/* Its line in suspend-cycles.txt could not be written: the summary lacks it, results.json says why. */
	if (record.cycles_error)
		output_failed_at(job, BCI_RESULTS_SUSPEND_CYCLES, BCI_RESULTS_SUSPEND_CYCLES,
				 record.cycles_size, record.cycles_error);
	job->status = status;
	job->seconds = record.wall;
	snprintf(job->last_result, sizeof(job->last_result), "%s", record.result);
	job->results = 1;
	n = bci_job_journal_format_exit(line, sizeof(line), false, status, record.wall);
	sync_outputs(job);
	journal_write(job, line, (size_t)n, true);
	return 0;
}

/* The streams, the kernel log budget, the command line, then the child. */
static int job_start(struct bci_igt_job *job, const struct bci_igt_selection *what)
{
	struct bci_executor *ex = job->ex;
	unsigned long long limit = bci_config_get_size(ex->config, "output_limit");
	/* The first three quarters of the limit, then the last quarter: a file stays within it
	 * (plus the protocol lines), which the results generator can always read. */
	size_t tail_size = (size_t)(limit / 4 > 0 ? limit / 4 : 1);
	int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 }, null_fd = -1, ret, barrier_ret = -1;
	char null_path[PATH_MAX];
	struct bci_strv env = { 0 };

	ret = bci_igt_stream_init(&job->out, job->fds[BCI_RESULTS_FILE_OUT], limit - limit / 4, tail_size);
	if (ret == 0)
		ret = bci_igt_stream_init(&job->err, job->fds[BCI_RESULTS_FILE_ERR], limit - limit / 4,
					  tail_size);
	if (ret < 0) {
		bci_igt_progress_flush(job->progress);
		bci_error("job %u: no memory for its output tails", job->index + 1);
		return ret;
	}
	/* The protocol lines drive the job, read from stdout or from the socket's packets. */
	job->out.on_line = handle_out_line;
	job->out.data = job;
	job->comms.on_line = handle_out_line;
	job->comms.data = job;
	job->dmesg_budget = (struct bci_kmsg_budget){
		.limit = limit,
		.keep_level = bci_settings_dmesg_warn_level(ex->config),
	};
	build_argv(job, what);
	if (bci_path(ex->root, null_path, "/dev/null") < 0 ||
	    (null_fd = open(null_path, O_RDWR | O_CLOEXEC)) < 0 || pipe2(out_pipe, O_CLOEXEC) < 0 ||
	    pipe2(err_pipe, O_CLOEXEC) < 0) {
		ret = -errno;
		bci_igt_progress_flush(job->progress);
		bci_error("job %u: cannot open /dev/null or its pipes: %s", job->index + 1, strerror(-ret));
		goto out;
	}
	job->kmsg_fd = bci_kmsg_open(ex);
	bci_igt_trace("premark");
	bci_igt_progress_mark(job, what);
	bci_igt_trace("mark");

	job->start = job->last_activity = job->last_subtest = bci_clock_ms(ex, CLOCK_BOOTTIME);
	/* The environment in the parent: IGT's sentinel says where the test's stderr ends. */
	/* igt_runner's socket (comms.c): its fd in the environment, the exec packet first. */
	ret = bci_spawn_env(&env, environ, (const char *const[]){ "IGT_SENTINEL_ON_STDERR=1",
								   job->comms.env, NULL });
	bci_igt_trace("env");
	bci_igt_comms_exec(job);
	bci_igt_trace("comms_exec");
	/*
	 * One barrier for all that announces the test (DESIGN.md): the run journal's
	 * start line, the job's folder and files, the exec packet. Not durable, the
	 * test does not start, and the run stops.
	 */
	if (ret == 0)
		ret = barrier_ret = bci_journal_sync(job->journal, true);
	if (ret == 0)
		note_synced(job);
	bci_igt_trace("barrier");
	if (ret == 0)
		ret = bci_spawn_start(&(struct bci_spawn){ .path = job->argv_path,
							   .argv = (char *const *)job->argv,
							   .envp = env.items, .stdin_fd = null_fd,
							   .stdout_fd = out_pipe[1],
							   .stderr_fd = err_pipe[1], .process_group = true,
							   .exec_failed_status = BCI_IGT_EXIT_INVALID },
				      &job->pid);
	bci_strv_free(&env);
	if (ret == 0)
		bci_igt_trace_forked(job->index);
	/*
	 * The barrier above made the previous job's outputs durable: its
	 * journal.txt end can be written now, while this test runs.
	 */
	if (barrier_ret == 0)
		job->end_error = bci_journal_pay_end(job->journal);
	bci_igt_trace("pay_end");
	/* Not durable (a failing partition): this test is stopped, and the run after it (run.c). */
	if (job->end_error < 0 && ret == 0)
		escalate(job, "the previous job's journal.txt end is not durable",
			 bci_clock_ms(ex, CLOCK_BOOTTIME));
	/*
	 * The test has exec'ed (bci_spawn_start returns then): the previous job's
	 * console line, whose judgement reads that job's folder, is said while this
	 * one starts, not between the two.
	 */
	bci_igt_progress_flush(job->progress);
	bci_igt_job_release_parked();
	bci_igt_comms_started(job);
	if (ret < 0) {
		bci_error("job %u: cannot start %s: %s", job->index + 1, job->argv_path, strerror(-ret));
		goto out;
	}
	job->out.pipe_fd = out_pipe[0];
	job->err.pipe_fd = err_pipe[0];
	out_pipe[0] = err_pipe[0] = -1; /* the streams own them now */
out:
	if (null_fd >= 0)
		close(null_fd);
	for (int i = 0; i < 2; i++) {
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (err_pipe[i] >= 0)
			close(err_pipe[i]);
	}
	return ret;
}

/* One turn's reads of the test's pipes and of the kernel log. */
static void job_read(struct bci_igt_job *job, const struct pollfd *pfds, long now)
{
	char buf[65536];

	for (int i = 0; i < 2; i++) {
		struct bci_igt_stream *s = i == 0 ? &job->out : &job->err;
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
		bci_igt_stream_feed(s, buf, (size_t)n);
		if (s->write_error)
			output_failed(job, i == 0 ? BCI_RESULTS_FILE_OUT : BCI_RESULTS_FILE_ERR,
				      s->write_error);
	}
	if (pfds[4].revents & POLLIN)
		bci_igt_comms_read(job, now);
	if (job->kmsg_fd >= 0 && (pfds[2].revents & POLLIN)) {
		job->last_activity = now;
		drain_kmsg(job);
	}
}

/*
 * The test has ended: whatever it left (its process group, the processes that
 * reparented to the executor, setsid()'ed ones included) is killed now, before
 * it writes into a later job's kernel log or holds this job's pipes.
 */
static void kill_leftovers(struct bci_igt_job *job)
{
	size_t named = sizeof(job->leftovers) / sizeof(job->leftovers[0]);
	/* The processes are real whatever tree the executor runs on: so is their table. */
	int ret = bci_spawn_kill_leftovers("/proc", job->pid, LEFTOVERS_GIVE_UP_MS, job->leftovers,
					   named, &job->leftover_count);

	if (ret < 0)
		bci_warn("job %u: cannot look for processes the test left: %s", job->index + 1,
			 strerror(-ret));
	else
		job->leftovers_alive = ret;
}

/* Said in the job's out.txt and on the console: which processes the test left, killed. */
static void note_leftovers(struct bci_igt_job *job)
{
	size_t named = sizeof(job->leftovers) / sizeof(job->leftovers[0]), used;
	char what[700], note[760];
	int n;

	if (job->leftover_count == 0)
		return;
	used = (size_t)snprintf(what, sizeof(what),
				"the test left %zu process%s running, killed when it ended:",
				job->leftover_count, job->leftover_count == 1 ? "" : "es");
	for (size_t i = 0; i < job->leftover_count && i < named && used < sizeof(what); i++)
		used += (size_t)snprintf(what + used, sizeof(what) - used, " %d (%s)",
					 (int)job->leftovers[i].pid, job->leftovers[i].comm);
	if (job->leftover_count > named && used < sizeof(what))
		used += (size_t)snprintf(what + used, sizeof(what) - used, " and %zu more",
					 job->leftover_count - named);
	if (job->leftovers_alive && used < sizeof(what))
		snprintf(what + used, sizeof(what) - used, "; %d still alive after SIGKILL",
			 job->leftovers_alive);
	bci_warn("job %u: %s", job->index + 1, what);
	n = snprintf(note, sizeof(note), "\nbootci: %s\n", what);
	bci_write_all(job->fds[BCI_RESULTS_FILE_OUT], note, (size_t)n);
}

/*
 * One loop: the test's stdout and stderr, the kernel log, signals, timers,
 * the watchdog; until the child is reaped and its pipes are closed. 0, or
 * -errno when poll fails; job->unkillable when even SIGKILL did not end it.
 */
static int job_monitor(struct bci_igt_job *job)
{
	struct bci_executor *ex = job->ex;
	long drain_deadline = 0;

	while (!job->reaped || job->out.pipe_fd >= 0 || job->err.pipe_fd >= 0) {
		struct pollfd pfds[5] = {
			{ .fd = job->out.pipe_fd, .events = POLLIN },
			{ .fd = job->err.pipe_fd, .events = POLLIN },
			{ .fd = job->kmsg_fd, .events = POLLIN },
			{ .fd = job->reaped ? -1 : ex->signal_fd, .events = POLLIN },
			{ .fd = job->comms.sock_fd, .events = POLLIN },
		};
		long now;

		if (poll(pfds, 5, 1000) < 0 && errno != EINTR) {
			int ret = -errno;
			bci_error("job %u: poll: %s", job->index + 1, strerror(-ret));
			return ret;
		}
		bci_watchdog_pet(ex);
		now = bci_clock_ms(ex, CLOCK_BOOTTIME);
		job_read(job, pfds, now);
		if (!job->reaped && bci_signals_dispatch(ex, job->pid, &job->wait_status)) {
			job->reaped = true;
			bci_igt_trace_reaped(job->index);
			kill_leftovers(job);
			bci_igt_trace("leftovers");
			/* What they wrote before is read to the end; the pipes close as they die. A
			 * leftover that does not die may hold them open: a moment, not forever. */
			drain_deadline = now + 2000;
		}
		if (job->reaped) {
			if (now > drain_deadline)
				break;
			continue;
		}
		if (job->killed) {
			if (escalate_step(job, now))
				break;
		} else {
			const char *reason = timeout_reason(job, now);
			if (reason)
				escalate(job, reason, now);
		}
	}
	bci_igt_trace("drain");
	return 0;
}

/* The igt exit status of a wait status: >= 0, -signal, or 9999 for neither. */
static int exit_status(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status) >= 128 ? 128 - WEXITSTATUS(wait_status)
						       : WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return -WTERMSIG(wait_status);
	return 9999;
}

/* What the loop leaves: the streams' ends, the kernel log's note, the exit in journal.txt. */
static int job_collect(struct bci_igt_job *job, int monitor_ret)
{
	char line[64];
	int n;

	for (int i = 0; i < 2; i++) {
		struct bci_igt_stream *s = i == 0 ? &job->out : &job->err;
		if (s->pipe_fd >= 0)
			close(s->pipe_fd);
		s->pipe_fd = -1;
		bci_igt_stream_finish(s);
		if (s->write_error)
			output_failed(job, i == 0 ? BCI_RESULTS_FILE_OUT : BCI_RESULTS_FILE_ERR,
				      s->write_error);
	}
	note_leftovers(job);
	if (job->dmesg_budget.dropped) {
		/* Said in the job's kernel log itself, in its record format, where a reader looks. */
		char text[200], note[256];
		snprintf(text, sizeof(text),
			 "[bootci] kernel log over the limit of %llu bytes: %llu bytes of records less "
			 "severe than level %d dropped\n", job->dmesg_budget.limit,
			 job->dmesg_budget.dropped, job->dmesg_budget.keep_level);
		/* facility user, level info: as a write to /dev/kmsg would have logged it */
		n = bci_kmsg_record_format(note, sizeof(note), 14, 0, 0, '-', text);
		bci_write_all(job->fds[BCI_RESULTS_FILE_DMESG], note, (size_t)n);
		bci_warn("job %u: kernel log over output_limit: %llu bytes dropped", job->index + 1,
			 job->dmesg_budget.dropped);
	}
	job->seconds = (double)(bci_clock_ms(job->ex, CLOCK_BOOTTIME) - job->start) / 1000.0;
	bci_igt_trace("streams_end");
	if (job->reaped) {
		job->status = exit_status(job->wait_status);
		bci_igt_comms_finish(job, bci_clock_ms(job->ex, CLOCK_BOOTTIME));
	}
	bci_igt_trace("comms_finish");
	if (!job->reaped) {
		/* Left running: its outputs durable as they stand before the run stops. */
		sync_outputs(job);
		return job->unkillable ? 1 : (monitor_ret < 0 ? monitor_ret : -EIO);
	}
	/*
	 * No barrier here. The outputs and comms' own end (comms.c) become
	 * durable in the next job's barrier before its exec, with bootci's end of
	 * this job (which says each file's size now) and the next start: one
	 * cache flush between two tests, not two. journal.txt's exit is written
	 * only after that barrier (bci_journal_owe_end), so an exit on disk
	 * always has its outputs; bootci's end, written before it, is checked
	 * against the sizes after a cut (run.c). Lost in a cut before that
	 * barrier, the job was in flight and is incomplete.
	 */
	drain_kmsg(job);
	end_sizes(job);
	bci_igt_trace("end_sizes");
	n = bci_job_journal_format_exit(line, sizeof(line), job->timed_out, job->status,
					job->seconds);
	if (job->fds[BCI_RESULTS_FILE_JOURNAL] >= 0) {
		bci_journal_owe_end(job->journal, job->index, job->fds[BCI_RESULTS_FILE_JOURNAL], line,
				    (size_t)n);
		job->fds[BCI_RESULTS_FILE_JOURNAL] = -1;
	}
	/* The outputs are owed the whole barrier even without a journal.txt to end. */
	bci_journal_owe(job->journal);
	bci_igt_trace("owe_end");
	return 0;
}

/*
 * What a finished job still holds (its files, the kernel log reader, its
 * socket, its output tails), released once the next test has exec'ed
 * (bci_igt_job_release_parked), not in the gap between two tests, which
 * closing them would lengthen. Each fd is close-on-exec,
 * and what the files hold is made durable by the next barrier whether they are
 * open or not. One job at a time is parked.
 */
static struct {
	int fds[BCI_RESULTS_FILE_COUNT + 4];
	size_t fd_count;
	void *bufs[3];
} parked;

void bci_igt_job_release_parked(void)
{
	for (size_t i = 0; i < parked.fd_count; i++)
		close(parked.fds[i]);
	for (size_t i = 0; i < sizeof(parked.bufs) / sizeof(parked.bufs[0]); i++)
		free(parked.bufs[i]);
	memset(&parked, 0, sizeof(parked));
}

static void park_fd(int *fd)
{
	if (*fd >= 0)
		parked.fds[parked.fd_count++] = *fd;
	*fd = -1;
}

/* The job's resources into the parking (what an earlier job left there released first). */
static void park(struct bci_igt_job *job)
{
	bci_igt_job_release_parked();
	park_fd(&job->kmsg_fd);
	for (int i = 0; i < BCI_RESULTS_FILE_COUNT; i++)
		park_fd(&job->fds[i]);
	park_fd(&job->comms.sock_fd);
	park_fd(&job->comms.child_fd);
	park_fd(&job->comms.file_fd);
	parked.bufs[0] = job->out.tail;
	parked.bufs[1] = job->err.tail;
	parked.bufs[2] = job->comms.buf;
	job->out.tail = job->err.tail = NULL;
	job->comms.buf = NULL;
}

int bci_igt_job_run(struct bci_igt_job *job, struct bci_executor *ex, struct bci_journal *journal,
		    struct bci_igt_progress *progress, unsigned index,
		    const struct bci_joblist_entry *entry, const struct bci_igt_selection *what)
{
	char dir[PATH_MAX];
	int ret;

	memset(job, 0, sizeof(*job));
	job->ex = ex;
	job->journal = journal;
	job->progress = progress;
	job->index = index;
	job->entry = entry;
	job->kmsg_fd = -1;
	job->out.pipe_fd = job->err.pipe_fd = -1;
	job->comms = (struct bci_igt_comms){ .sock_fd = -1, .child_fd = -1, .file_fd = -1, .synced = -1 };
	for (int i = 0; i < BCI_RESULTS_FILE_COUNT; i++) {
		job->fds[i] = -1;
		job->synced[i] = -1;
	}
	for (int i = 0; i < BCI_RUN_JOURNAL_END_FILES; i++)
		job->end_bytes[i] = -1;
	ret = bci_igt_rundir_path(ex, dir, BCI_RESULTS_JOB_DIR, index);
	if (ret == 0)
		ret = open_job_outputs(job, dir);
	bci_igt_trace("open_outputs");
	if (ret < 0) {
		bci_igt_progress_flush(progress);
		bci_error("job %u: cannot open its output files in %s: %s", index + 1, dir, strerror(-ret));
		goto out;
	}
	if (strcmp(entry->binary, BCI_IGT_SUSPEND_BINARY) == 0) {
		ret = run_suspend_job(job, what->subtests[0]);
		goto out;
	}
	ret = bci_igt_comms_open(job, dir);
	bci_igt_trace("comms_open");
	if (ret < 0) {
		bci_igt_progress_flush(progress);
		bci_error("job %u: cannot open its comms or socket in %s: %s", index, dir, strerror(-ret));
		goto out;
	}
	ret = job_start(job, what);
	if (ret < 0)
		goto out;
	ret = job_collect(job, job_monitor(job));
out:
	/* A test that ran and ended: its resources go once the next one runs. */
	if (ret == 0 && job->reaped)
		park(job);
	if (job->kmsg_fd >= 0)
		close(job->kmsg_fd);
	for (int i = 0; i < BCI_RESULTS_FILE_COUNT; i++)
		if (job->fds[i] >= 0)
			close(job->fds[i]);
	bci_igt_stream_release(&job->out);
	bci_igt_stream_release(&job->err);
	bci_igt_comms_close(&job->comms);
	bci_igt_trace("close");
	return ret;
}
