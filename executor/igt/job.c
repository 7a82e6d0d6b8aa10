// SPDX-License-Identifier: MIT
/*
 * One job of the run, the test's life: its output files opened (outputs.c),
 * the command line built, the test binary started with its stdout and stderr
 * on pipes (lib/spawn) after the one barrier that announces it, then one loop
 * over the pipes, the socket, the kernel log, signals, the timers and the
 * watchdog until it is reaped (stopped by kill.c when it must be), and
 * finally its ends collected and its exit status owed to journal.txt. The
 * protocol lines it prints go to subtests.c. What a finished job holds is
 * parked until the next test has exec'ed. A suspend cycle job is a
 * synchronous call instead (suspend.c).
 */
#include "igt.h"

#include "config.h"
#include "fsutil.h"
#include "kmsg_record.h"
#include "suspend.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

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
	bci_igt_outputs_note_synced(job);
	bci_igt_outputs_write_journal(job, line, (size_t)n, true);
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
			bci_igt_outputs_failed(job, i, record.output_error);
			break;
		}
	/* Its line in suspend-cycles.txt could not be written: the summary lacks it, results.json says why. */
	if (record.cycles_error)
		bci_igt_outputs_failed_at(job, BCI_RESULTS_SUSPEND_CYCLES, BCI_RESULTS_SUSPEND_CYCLES,
					  record.cycles_size, record.cycles_error);
	job->status = status;
	job->seconds = record.wall;
	snprintf(job->last_result, sizeof(job->last_result), "%s", record.result);
	job->results = 1;
	n = bci_job_journal_format_exit(line, sizeof(line), false, status, record.wall);
	bci_igt_outputs_sync(job);
	bci_igt_outputs_write_journal(job, line, (size_t)n, true);
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
	job->out.on_line = bci_igt_subtests_handle_line;
	job->out.data = job;
	job->comms.on_line = bci_igt_subtests_handle_line;
	job->comms.data = job;
	job->dmesg_budget = (struct bci_kmsg_budget){
		.limit = limit,
		.keep_level = bci_settings_dmesg_warn_level(ex->config),
	};
	build_argv(job, what);
	if (bci_path(ex->root, null_path, "/dev/null") < 0 ||
	    (null_fd = open(null_path, O_RDWR | O_CLOEXEC)) < 0 || pipe2(out_pipe, O_CLOEXEC) < 0 ||
	    pipe2(err_pipe, O_CLOEXEC) < 0 ||
	    /* The executor's ends only (the test's writes still block): a read never waits. */
	    fcntl(out_pipe[0], F_SETFL, O_NONBLOCK) < 0 || fcntl(err_pipe[0], F_SETFL, O_NONBLOCK) < 0) {
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
		bci_igt_outputs_note_synced(job);
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
		bci_igt_kill_start(job, "the previous job's journal.txt end is not durable",
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

/*
 * One turn's reads of the test's pipes and of the kernel log: one read of each
 * ready pipe, so that neither starves the other. Their order within the turn
 * does not decide what is durable together: a protocol line of stdout drains
 * what stderr holds before its barrier (bci_igt_outputs_sync).
 */
static void job_read(struct bci_igt_job *job, const struct pollfd *pfds, long now)
{
	for (int i = 0; i < 2; i++) {
		int fd = i == 0 ? job->out.pipe_fd : job->err.pipe_fd;

		if (fd >= 0 && (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)))
			bci_igt_outputs_read(job, i == 0 ? BCI_RESULTS_FILE_OUT : BCI_RESULTS_FILE_ERR, now);
	}
	if (pfds[4].revents & POLLIN)
		bci_igt_comms_read(job, now);
	if (job->kmsg_fd >= 0 && (pfds[2].revents & POLLIN)) {
		job->last_activity = now;
		bci_igt_outputs_drain_kmsg(job);
	}
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
			bci_igt_kill_leftovers(job);
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
			if (bci_igt_kill_step(job, now))
				break;
		} else {
			const char *reason = bci_igt_kill_timeout(job, now);
			if (reason)
				bci_igt_kill_start(job, reason, now);
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
			bci_igt_outputs_failed(job, i == 0 ? BCI_RESULTS_FILE_OUT : BCI_RESULTS_FILE_ERR,
					       s->write_error);
	}
	bci_igt_kill_note_leftovers(job);
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
		bci_igt_outputs_sync(job);
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
	bci_igt_outputs_drain_kmsg(job);
	bci_igt_outputs_end_sizes(job);
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
		ret = bci_igt_outputs_open(job, dir);
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
