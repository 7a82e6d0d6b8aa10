// SPDX-License-Identifier: MIT
/*
 * Runs the configured test program with its stdout and stderr captured in the
 * run folder on the results partition, under a deadline, and records how it
 * ended. result.txt is replaced atomically: it says "state running" (durably)
 * before the program starts, with the boot that started it and how many boots
 * did, so a boot that dies mid-test leaves that trace.
 *
 * The next boot of the run reads it: a program that ended (done, unkillable,
 * capped) starts afresh; a program that was running took the machine down
 * (a kernel crash, a hang, a reset). Its output is moved into that boot's
 * record (boot-NNNN/test-out.txt, test-err.txt, beside the crash that boot's
 * successor saved), so a rerun never overwrites it; after boot_cap such boots
 * the run is over: result.txt says "state capped" (durably) and the boot hands
 * over to the known-good image, which uploads the run with every boot record,
 * as an IGT job is capped (igt/resume.c).
 *
 * The program's output comes through pipes and the executor writes it, as for
 * an IGT job (igt/job.c), so that the rules of a job hold here too: a write of
 * out.txt or err.txt that fails (a full partition) is said on the console, the
 * reserve is given back, out.txt ends with a note, result.txt carries an
 * `incomplete` line (its output is not whole: the aggregator judges the run
 * incomplete) and the program is stopped; when the program ends, whatever it
 * left running is killed and reaped, and out.txt names it.
 */
#include "executor.h"
#include "results_dir.h"

#include "config.h"
#include "fsutil.h"
#include "spawn.h"
#include "strv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 64
/* After SIGTERM, and again after SIGKILL, the program gets this long to go. */
#define KILL_GRACE_MS 5000L
/* How long the processes the program left get to die after SIGKILL. */
#define LEFTOVERS_GIVE_UP_MS 2000L
#define LEFTOVERS_NAMED 8

enum { OUT, ERR, STREAMS };
static const char *const stream_files[STREAMS] = { BCI_RESULTS_JOB_OUT, BCI_RESULTS_JOB_ERR };

/* The one test program's run: its command, its files, how it ended. */
struct test_program {
	struct bci_executor *ex;
	const char *command;
	struct bci_strv argv;
	char dir[PATH_MAX], result_path[PATH_MAX];
	int files[STREAMS];	/* out.txt, err.txt */
	int pipes[STREAMS];	/* the read ends of the program's stdout and stderr; -1 at EOF */
	int null_fd;
	pid_t pid;
	int status, reaped;
	bool timed_out;
	long duration_ms;
	unsigned starts;	/* boots that started the program, this one included */
	/* The first write of out.txt or err.txt that failed: "FILE BYTES REASON\n", -errno. */
	char incomplete[300];
	int write_error;
	struct bci_spawn_proc leftovers[LEFTOVERS_NAMED];
	size_t leftover_count;
	int leftovers_alive;
};

/* result.txt: the command, @body, then which boot started the program and how many did. */
static int write_result(const struct test_program *t, const char *body)
{
	char text[1024], boot[32] = "";
	int n;

	/* A boot without a record (a test calling this alone) has no number to give. */
	if (t->ex->boot_number)
		snprintf(boot, sizeof(boot), "boot %u\n", t->ex->boot_number);
	n = snprintf(text, sizeof(text), "command %s\n%s%sstarts %u\n", t->command, body, boot,
		     t->starts);

	if (n < 0 || n >= (int)sizeof(text))
		n = (int)sizeof(text) - 1;
	return bci_write_file_atomic(t->result_path, text, (size_t)n, 0644);
}

static int open_output(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

/*
 * The first write of the program's output that failed (a full or failing
 * partition): said on the console, the reserve given back so that the records
 * still fit, a note at the end of out.txt, the line result.txt will carry;
 * nothing more of the output is written and the program is stopped.
 */
static void output_failed(struct test_program *t, int stream, int error)
{
	const char *name = stream_files[stream];
	char reason[200], note[300];
	unsigned long long size = 0;
	struct stat st;
	int n;

	if (t->write_error)
		return;
	t->write_error = error;
	if (fstat(t->files[stream], &st) == 0)
		size = (unsigned long long)st.st_size;
	snprintf(reason, sizeof(reason), "Results partition %s: cannot write %s/%s (%s)",
		 error == -ENOSPC || error == -EDQUOT ? "full" : "failing", BCI_RESULTS_TEST_DIR,
		 name, strerror(-error));
	bci_error("test program: cannot write %s after %llu bytes: %s: its output stops here; "
		  "the program is stopped", name, size, strerror(-error));
	bci_reserve_release(t->ex, reason);
	bci_results_incomplete_format(t->incomplete, sizeof(t->incomplete), name, size, error);
	n = snprintf(note, sizeof(note),
		     "\nbootci: %s could not be written after %llu bytes (%s): the output of this "
		     "program is incomplete\n", name, size, strerror(-error));
	if (bci_write_all(t->files[OUT], note, (size_t)n) < 0)
		bci_error("test program: cannot say in out.txt that its output is incomplete");
}

/* One read of a stream's pipe into its file: false at end of file (the pipe is closed). */
static bool stream_copy(struct test_program *t, int stream)
{
	char buf[65536];
	ssize_t n = read(t->pipes[stream], buf, sizeof(buf));
	int ret;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		close(t->pipes[stream]);
		t->pipes[stream] = -1;
		return false;
	}
	if (t->write_error)
		return true;
	ret = bci_write_all(t->files[stream], buf, (size_t)n);
	if (ret < 0)
		output_failed(t, stream, ret);
	return true;
}

/*
 * Copies the output, waits for the program until its deadline (or its output
 * cannot be written), then SIGTERM and SIGKILL to its process group.
 * t->reaped: 1 with t->status when it ended, 0 when it could not be reaped
 * even after SIGKILL (stuck in the kernel). Sets t->timed_out.
 */
static int supervise(struct test_program *t, long deadline)
{
	struct bci_executor *ex = t->ex;
	struct bci_spawn_kill kill = { .first_signal = SIGTERM, .grace_ms = KILL_GRACE_MS,
				       .give_up_ms = KILL_GRACE_MS };

	t->timed_out = false;
	for (;;) {
		struct pollfd pfds[1 + STREAMS] = {
			{ .fd = ex->signal_fd, .events = POLLIN },
			{ .fd = t->pipes[OUT], .events = POLLIN },
			{ .fd = t->pipes[ERR], .events = POLLIN },
		};
		long now = bci_clock_ms(ex, CLOCK_BOOTTIME), left = deadline - now;
		int sent;

		if (bci_signals_dispatch(ex, t->pid, &t->status)) {
			t->reaped = 1;
			return 0;
		}
		if (left <= 0 || t->write_error) {
			if (!t->write_error)
				t->timed_out = true;
			sent = bci_spawn_kill_step(&kill, t->pid, now);
			if (sent == -ETIME) {
				t->reaped = 0;
				return 0;
			}
			if (sent > 0)
				bci_warn("test program %s: sending %s",
					 t->write_error ? "output cannot be written" :
					 sent == SIGTERM ? "timed out" : "still running",
					 sent == SIGTERM ? "SIGTERM" : "SIGKILL");
			left = kill.sent_at_ms + (kill.sent == SIGKILL ? kill.give_up_ms : kill.grace_ms) - now;
		}
		if (poll(pfds, 1 + STREAMS, (int)(left > 1000 ? 1000 : left < 1 ? 1 : left)) < 0 &&
		    errno != EINTR)
			return -errno;
		for (int i = 0; i < STREAMS; i++)
			if (pfds[1 + i].revents)
				stream_copy(t, i);
	}
}

/*
 * The program has ended: whatever it left (its process group, the processes
 * that reparented to the executor) is killed and reaped, then the rest of the
 * output is copied: the pipes end once no writer is left. A leftover stuck in
 * the kernel may hold a pipe for ever: only what is there already is read.
 */
static void test_program_finish(struct test_program *t)
{
	int ret = 0;

	/* An unkillable program is left behind with its group: nothing more to kill. */
	if (t->reaped > 0)
		ret = bci_spawn_kill_leftovers("/proc", t->pid, LEFTOVERS_GIVE_UP_MS, t->leftovers,
					       LEFTOVERS_NAMED, &t->leftover_count);
	if (ret < 0)
		bci_warn("test program: cannot look for processes it left: %s", strerror(-ret));
	else
		t->leftovers_alive = ret;
	for (int i = 0; i < STREAMS; i++) {
		for (;;) {
			struct pollfd pfd = { .fd = t->pipes[i], .events = POLLIN };

			if (t->pipes[i] < 0 || poll(&pfd, 1, 0) <= 0 || !stream_copy(t, i))
				break;
		}
	}
}

/* Said in out.txt and on the console: which processes the program left, killed. */
static void note_leftovers(struct test_program *t)
{
	char what[700], note[760];
	size_t used;
	int n;

	if (t->leftover_count == 0)
		return;
	used = (size_t)snprintf(what, sizeof(what),
				"the program left %zu process%s running, killed when it ended:",
				t->leftover_count, t->leftover_count == 1 ? "" : "es");
	for (size_t i = 0; i < t->leftover_count && i < LEFTOVERS_NAMED && used < sizeof(what); i++)
		used += (size_t)snprintf(what + used, sizeof(what) - used, " %d (%s)",
					 (int)t->leftovers[i].pid, t->leftovers[i].comm);
	if (t->leftover_count > LEFTOVERS_NAMED && used < sizeof(what))
		used += (size_t)snprintf(what + used, sizeof(what) - used, " and %zu more",
					 t->leftover_count - LEFTOVERS_NAMED);
	if (t->leftovers_alive && used < sizeof(what))
		snprintf(what + used, sizeof(what) - used, "; %d still alive after SIGKILL",
			 t->leftovers_alive);
	bci_warn("test program: %s", what);
	if (t->write_error)
		return;
	n = snprintf(note, sizeof(note), "\nbootci: %s\n", what);
	if (bci_write_all(t->files[OUT], note, (size_t)n) < 0)
		output_failed(t, OUT, -errno);
}

/* The folder, "state running" (durably, before the program starts), the output files and pipes. */
static int test_program_prepare(struct bci_executor *ex, struct test_program *t)
{
	char null_path[PATH_MAX];
	int ret = bci_strv_split(&t->argv, t->command, " \t");

	if (ret < 0)
		return ret;
	if (t->argv.count == 0 || t->argv.count > MAX_ARGS) {
		bci_error("test: '%s': expected a program and at most %d arguments", t->command,
			  MAX_ARGS - 1);
		return t->argv.count ? -E2BIG : -EINVAL;
	}
	if (bci_path(ex->root, null_path, "/dev/null") < 0)
		return -ENAMETOOLONG;
	ret = write_result(t, "state running\n");
	if (ret < 0) {
		bci_error("cannot write %s: %s", t->result_path, strerror(-ret));
		return ret;
	}
	for (int i = 0; i < STREAMS; i++) {
		t->files[i] = open_output(t->dir, stream_files[i]);
		if (t->files[i] < 0) {
			bci_error("cannot open the test's %s: %s", stream_files[i], strerror(-t->files[i]));
			return t->files[i];
		}
	}
	t->null_fd = open(null_path, O_RDWR | O_CLOEXEC);
	if (t->null_fd < 0) {
		ret = -errno;
		bci_error("cannot open %s: %s", null_path, strerror(-ret));
		return ret;
	}
	return 0;
}

static int test_program_execute(struct bci_executor *ex, struct test_program *t,
				unsigned long timeout_s)
{
	struct bci_spawn spawn = {
		.path = t->argv.items[0], .argv = t->argv.items, .stdin_fd = t->null_fd,
		.process_group = true,
	};
	int writers[STREAMS] = { -1, -1 }, ret = 0;
	long start;

	for (int i = 0; i < STREAMS; i++) {
		int ends[2];

		if (pipe2(ends, O_CLOEXEC) < 0) {
			ret = -errno;
			bci_error("pipe: %s", strerror(-ret));
			goto out;
		}
		t->pipes[i] = ends[0];
		writers[i] = ends[1];
	}
	spawn.stdout_fd = writers[OUT];
	spawn.stderr_fd = writers[ERR];
	start = bci_clock_ms(ex, CLOCK_BOOTTIME);
	bci_say("running %s (timeout %lu s)", t->command, timeout_s);
	ret = bci_spawn_start(&spawn, &t->pid);
	if (ret < 0) {
		bci_error("fork: %s", strerror(-ret));
		goto out;
	}
	/* Only the program holds the write ends now: its end (and its leftovers') is EOF. */
	for (int i = 0; i < STREAMS; i++) {
		close(writers[i]);
		writers[i] = -1;
	}
	ret = supervise(t, start + (long)timeout_s * 1000);
	t->duration_ms = bci_clock_ms(ex, CLOCK_BOOTTIME) - start;
	if (ret == 0)
		test_program_finish(t);
out:
	for (int i = 0; i < STREAMS; i++)
		if (writers[i] >= 0)
			close(writers[i]);
	return ret;
}

/* result.txt, after the output it refers to is on disk, and the console's line. */
static int test_program_record(struct test_program *t)
{
	long d = t->duration_ms;
	char body[1024], how[128];
	int n = 0, ret;

	note_leftovers(t);
	for (int i = 0; i < STREAMS; i++)
		if (fsync(t->files[i]) < 0)
			output_failed(t, i, -errno);
	if (t->reaped <= 0)
		n = snprintf(body, sizeof(body), "state unkillable\n");
	else if (WIFEXITED(t->status))
		n = snprintf(body, sizeof(body), "state done\nexit-status %d\n", WEXITSTATUS(t->status));
	else if (WIFSIGNALED(t->status))
		n = snprintf(body, sizeof(body), "state done\nsignal %d %s\n", WTERMSIG(t->status),
			     strsignal(WTERMSIG(t->status)));
	n += snprintf(body + n, sizeof(body) - (size_t)n, "%sduration %ld.%03ld\n",
		      t->timed_out ? "timeout yes\n" : "", d / 1000, d % 1000);
	if (t->write_error)
		snprintf(body + n, sizeof(body) - (size_t)n, "incomplete %s", t->incomplete);
	ret = write_result(t, body);
	if (ret < 0)
		bci_error("cannot write %s: %s", t->result_path, strerror(-ret));

	if (t->reaped <= 0) {
		bci_error("test program could not be killed; leaving it behind");
	} else if (WIFEXITED(t->status)) {
		bci_say("test program exited with status %d after %ld.%03ld s%s%s",
			WEXITSTATUS(t->status), d / 1000, d % 1000, t->timed_out ? " (timed out)" : "",
			t->write_error ? " (its output is incomplete)" : "");
	} else {
		bci_spawn_describe(t->status, how, sizeof(how));
		bci_say("test program %s after %ld.%03ld s%s%s", how, d / 1000, d % 1000,
			t->timed_out ? " (timed out)" : "",
			t->write_error ? " (its output is incomplete)" : "");
	}
	return ret;
}

/*
 * The output of boot @boot, which died while the program ran, into that boot's
 * record: test/out.txt and err.txt become boot-NNNN/test-out.txt and
 * test-err.txt (never over a file already there), made durable before the
 * rerun truncates anything.
 */
static void keep_crashed_output(struct test_program *t, unsigned boot)
{
	static const char *const kept[STREAMS] = { BCI_RESULTS_BOOT_TEST_OUT,
						   BCI_RESULTS_BOOT_TEST_ERR };
	char boot_dir[PATH_MAX], from[PATH_MAX + 16], to[PATH_MAX + 32];
	struct stat st;
	int moved = 0, ret;

	if (snprintf(boot_dir, sizeof(boot_dir), "%.*s/" BCI_RESULTS_BOOT_DIR, PATH_MAX - 16,
		     t->ex->run_dir, boot) >= (int)sizeof(boot_dir))
		return;
	for (int i = 0; i < STREAMS; i++) {
		snprintf(from, sizeof(from), "%s/%s", t->dir, stream_files[i]);
		snprintf(to, sizeof(to), "%s/%s", boot_dir, kept[i]);
		if (lstat(from, &st) < 0 || lstat(to, &st) == 0)
			continue;
		ret = bci_mkdir_p(boot_dir, 0755);
		if (ret == 0 && rename(from, to) < 0)
			ret = -errno;
		if (ret < 0) {
			bci_warn("test program: cannot keep boot %u's %s as %s: %s; the rerun "
				 "overwrites it", boot, stream_files[i], to, strerror(-ret));
			continue;
		}
		moved++;
	}
	if (!moved)
		return;
	if (bci_fsync_dir(boot_dir) < 0 || bci_fsync_dir(t->dir) < 0)
		bci_warn("test program: cannot make the move of boot %u's output durable", boot);
	bci_say("test program: the output of boot %u, which died while it ran, is kept in "
		BCI_RESULTS_BOOT_DIR "/", boot, boot);
}

/*
 * What earlier boots left of this run (test/result.txt): nothing (the first
 * start), a program that ended (a fresh start), or a program that was
 * running when its boot died: its output kept, then either one more start
 * (0, t->starts counting it) or, after boot_cap of them, the run capped
 * (BCI_TEST_PROGRAM_CAPPED_NOW, result.txt saying so durably). -errno when
 * that cannot be written.
 */
static int test_program_resume(struct bci_executor *ex, struct test_program *t)
{
	unsigned long boot_cap = bci_config_get_number(ex->config, "boot_cap");
	struct bci_test_program_result before;
	char *text = NULL, why[256];
	unsigned boot;
	int ret;

	t->starts = 1;
	ret = bci_read_file(t->result_path, &text, NULL, 64 * 1024);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0 || bci_test_program_result_parse(text, &before, why, sizeof(why)) < 0) {
		/* Written by this executor, so only a damaged partition gets here: one more start. */
		bci_warn("test program: %s cannot be read (%s): taken as a boot that died while the "
			 "program ran", t->result_path, ret < 0 ? strerror(-ret) : why);
		before = (struct bci_test_program_result){ .state = BCI_TEST_PROGRAM_RUNNING };
	}
	free(text);
	/* An earlier program that ended: this is a new start of the same run id (the
	 * known-good image runs collect under one run id at every boot). */
	if (before.state != BCI_TEST_PROGRAM_RUNNING)
		return 0;
	/* An older executor's file says neither: it was started once, by the boot before. */
	boot = before.boot ? before.boot : ex->boot_number > 1 ? ex->boot_number - 1 : 0;
	t->starts = (before.starts ? before.starts : 1) + 1;
	bci_warn("test program: boot %u died while it ran (start %u of the run)", boot,
		 t->starts - 1);
	if (boot)
		keep_crashed_output(t, boot);
	if (t->starts - 1 < boot_cap)
		return 0;
	t->starts--;
	bci_error("test program took the machine down %u times (boot_cap %lu): not run again; "
		  "the run is over", t->starts, boot_cap);
	ret = write_result(t, "state capped\n");
	if (ret < 0) {
		bci_error("cannot write %s: %s", t->result_path, strerror(-ret));
		return ret;
	}
	return BCI_TEST_PROGRAM_CAPPED_NOW;
}

/*
 * The program's exit status test_poweroff_status (when set) asks for a
 * power-off instead of on_finish: the known-good image's collect exits so
 * once the master took the machine out (its boots keep failing), so that it
 * stops rebooting until someone puts it back and powers it on.
 */
static bool asks_poweroff(struct bci_executor *ex, const struct test_program *t)
{
	unsigned long wanted = bci_config_get_number(ex->config, "test_poweroff_status");

	if (!wanted || t->reaped <= 0 || !WIFEXITED(t->status) ||
	    (unsigned long)WEXITSTATUS(t->status) != wanted)
		return false;
	bci_say("test program asked for a power-off (exit status %lu is test_poweroff_status)",
		wanted);
	return true;
}

int bci_test_program_run(struct bci_executor *ex)
{
	struct test_program t = { .ex = ex, .command = bci_config_get(ex->config, "test"),
				  .files = { -1, -1 }, .pipes = { -1, -1 }, .null_fd = -1 };
	int ret;

	if (*t.command == '\0') {
		bci_say("no test program configured");
		return 0;
	}
	if (snprintf(t.dir, sizeof(t.dir), "%s/" BCI_RESULTS_TEST_DIR, ex->run_dir) >=
		    (int)sizeof(t.dir) ||
	    snprintf(t.result_path, sizeof(t.result_path), "%s/" BCI_RESULTS_TEST_RESULT, t.dir) >=
		    (int)sizeof(t.result_path))
		return -ENAMETOOLONG;
	ret = bci_mkdir_p(t.dir, 0755);
	if (ret < 0) {
		bci_error("cannot create %s: %s", t.dir, strerror(-ret));
		return ret;
	}
	ret = test_program_resume(ex, &t);
	if (ret != 0)
		return ret;
	ret = test_program_prepare(ex, &t);
	if (!ret)
		ret = test_program_execute(ex, &t, bci_config_get_seconds(ex->config, "test_timeout"));
	if (!ret)
		ret = test_program_record(&t);
	if (!ret && asks_poweroff(ex, &t))
		ret = BCI_TEST_PROGRAM_POWEROFF;
	if (t.null_fd >= 0)
		close(t.null_fd);
	for (int i = 0; i < STREAMS; i++) {
		if (t.pipes[i] >= 0)
			close(t.pipes[i]);
		if (t.files[i] >= 0)
			close(t.files[i]);
	}
	bci_strv_free(&t.argv);
	return ret;
}
