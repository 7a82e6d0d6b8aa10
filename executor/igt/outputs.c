// SPDX-License-Identifier: MIT
/*
 * A job's output files (out.txt, err.txt, dmesg.txt, journal.txt; comms is
 * comms.c's) and their durability: the test's stdout and stderr pipes read
 * into them (stream.c), opened for append after a resume, with
 * what a crash tore off their ends cut; the kernel log drained into
 * dmesg.txt; the barrier that makes the files that grew durable (one
 * fdatasync, or one syncfs for several); their sizes at the test's end;
 * journal.txt's lines. A write that fails (a full or failing partition)
 * stops the job's output, stops its test and aborts the run after it.
 */
#include "igt.h"

#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
 * (job.c): nothing is announced by them before.
 */
int bci_igt_outputs_open(struct bci_igt_job *job, const char *dir)
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

/*
 * One read of the test's stdout (@file BCI_RESULTS_FILE_OUT) or stderr
 * (BCI_RESULTS_FILE_ERR) into its file; the pipe is closed at its end. The
 * pipe does not block (job_start): what poll found ready may have been
 * drained since (bci_igt_outputs_drain_stderr). Its own buffer: a stdout line's
 * handling drains stderr while the stdout read is being fed. true when
 * something was read.
 */
bool bci_igt_outputs_read(struct bci_igt_job *job, int file, long now)
{
	struct bci_igt_stream *s = file == BCI_RESULTS_FILE_OUT ? &job->out : &job->err;
	char buf[65536];
	ssize_t n = read(s->pipe_fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return false;
	if (n <= 0) {
		close(s->pipe_fd);
		s->pipe_fd = -1;
		return false;
	}
	job->last_activity = now;
	bci_igt_stream_feed(s, buf, (size_t)n);
	if (s->write_error)
		bci_igt_outputs_failed(job, file, s->write_error);
	return true;
}

void bci_igt_outputs_drain_stderr(struct bci_igt_job *job)
{
	long now;

	if (job->err.pipe_fd < 0)
		return;
	now = bci_clock_ms(job->ex, CLOCK_BOOTTIME);
	/* Bounded: a test writing stderr without a pause does not hold the boundary for ever. */
	for (int i = 0; i < 16 && job->err.pipe_fd >= 0; i++)
		if (!bci_igt_outputs_read(job, BCI_RESULTS_FILE_ERR, now))
			return;
}

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
void bci_igt_outputs_drain_kmsg(struct bci_igt_job *job)
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
		bci_igt_outputs_failed(job, BCI_RESULTS_FILE_DMESG, (int)n);
}

/*
 * What the test's stderr and the kernel log hold drained, then the job's
 * files that grew since their last barrier (its outputs and comms) made
 * durable: one fdatasync when one grew, else one syncfs() of the results
 * partition, which commits ext4's journal and flushes the disk's cache once
 * for all of them where an fdatasync each would do it each time. Called at a
 * protocol line: what the test wrote to stderr before it (still in the pipe
 * when stdout is read first) is in err.txt, durable with it.
 */
void bci_igt_outputs_sync(struct bci_igt_job *job)
{
	enum { COMMS = BCI_RESULTS_FILE_COUNT };
	off_t size[BCI_RESULTS_FILE_COUNT + 1];
	int fds[BCI_RESULTS_FILE_COUNT + 1], dirty = 0, at = -1, ret = 0;

	bci_igt_outputs_drain_stderr(job);
	bci_igt_outputs_drain_kmsg(job);
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
		bci_igt_outputs_failed(job, at, ret);
	if (ret < 0)
		return;
	for (int i = 0; i <= COMMS; i++)
		if (fds[i] >= 0 && i == COMMS)
			job->comms.synced = size[i] >= 0 ? size[i] : job->comms.synced;
		else if (fds[i] >= 0)
			job->synced[i] = size[i] >= 0 ? size[i] : job->synced[i];
}

/* Each file's size as the test's end is taken, for bootci's end of the job (-1: no file). */
void bci_igt_outputs_end_sizes(struct bci_igt_job *job)
{
	struct stat st;

	for (int i = 0; i < BCI_RUN_JOURNAL_END_FILES; i++) {
		int fd = i == BCI_RUN_JOURNAL_END_COMMS ? job->comms.file_fd : job->fds[i];

		job->end_bytes[i] = i != BCI_RESULTS_FILE_JOURNAL && fd >= 0 && fstat(fd, &st) == 0
					    ? (long long)st.st_size : -1;
	}
}

/* After a barrier of the whole partition: every file of the job is durable as it stands. */
void bci_igt_outputs_note_synced(struct bci_igt_job *job)
{
	struct stat st;

	for (int i = 0; i < BCI_RESULTS_FILE_COUNT; i++)
		if (job->fds[i] >= 0 && fstat(job->fds[i], &st) == 0)
			job->synced[i] = st.st_size;
	if (job->comms.file_fd >= 0 && fstat(job->comms.file_fd, &st) == 0)
		job->comms.synced = st.st_size;
}

/* A line of journal.txt, fdatasync'ed when @sync (else durable with the next barrier). */
void bci_igt_outputs_write_journal(struct bci_igt_job *job, const char *text, size_t len,
				   bool sync)
{
	int ret = bci_write_all(job->fds[BCI_RESULTS_FILE_JOURNAL], text, len);

	if (ret == 0 && sync)
		ret = sync_output(job, BCI_RESULTS_FILE_JOURNAL);
	if (ret < 0)
		bci_igt_outputs_failed(job, BCI_RESULTS_FILE_JOURNAL, ret);
}

/*
 * The first result file of the job that could not be written (a full or
 * failing partition): said on the console; the reserve given back so that
 * the records still fit; N/bootci-incomplete.txt and a note in out.txt say
 * where the output stops (results.json shows it, lib/results_dir.h); nothing
 * more of the test's output is written; the test is stopped and the run
 * aborts after it (job->abort_reason), handing over.
 */
void bci_igt_outputs_failed(struct bci_igt_job *job, int file, int error)
{
	const char *name = bci_results_job_files[file];
	char rel[64];
	struct stat st;

	snprintf(rel, sizeof(rel), BCI_RESULTS_JOB_DIR "/%s", job->index, name);
	bci_igt_outputs_failed_at(job, name, rel, fstat(job->fds[file], &st) == 0 ?
				  (unsigned long long)st.st_size : 0, error);
}

/* As bci_igt_outputs_failed(), for @name at @rel in the run folder (a job file, or the run's
 * suspend-cycles.txt), cut at @size. */
void bci_igt_outputs_failed_at(struct bci_igt_job *job, const char *name, const char *rel,
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
		bci_igt_kill_start(job, reason, bci_clock_ms(job->ex, CLOCK_BOOTTIME));
		job->timed_out = false;
	}
}
