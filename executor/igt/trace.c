// SPDX-License-Identifier: MIT
/*
 * The gap trace: where the time between two jobs goes, for whoever measures
 * the engine (tests/bench/igt-gap-trace.py). Off unless PID 1's environment
 * has BOOTCI_GAP_TRACE=1 (a kernel command line word, which the kernel hands
 * to init as an environment variable), and then it costs a clock read per
 * step. Each step between one job's reaping and the next job's fork is
 * stamped with CLOCK_MONOTONIC; the time since the previous stamp is the
 * step's. At the end of the run, bootci-gap-trace.txt in the run folder has
 * one line per gap, and the console the mean of each step:
 *
 *   gap JOB NEXT REAPED_NS PREMARK_NS FORKED_NS STEP=US ...
 *
 * JOB and NEXT count from 0 as the job folders do. PREMARK_NS is the stamp
 * just before NEXT's kernel log marker `[bootci] [N/M] ...`, whose record in
 * NEXT/dmesg.txt gives the offset between the kernel's clock and ours: with
 * it the script measures what the executor cannot see, from the test's
 * `[IGT] ...: exiting` to the reaping and from the fork to the next test's
 * `[IGT] ...: executing`.
 *
 * When the command line also enabled kernel trace events (`trace_event=
 * sched:sched_process_exec,sched:sched_process_exit`), the kernel's trace
 * buffer is saved beside it as bootci-ftrace.txt: tests/bench/igt-own-gaps.py
 * takes from it each runner's own gap, from one test process's exit to the
 * next one's exec by the kernel's clock, measured the same way for igt_runner
 * (tests/lab/igt-runner-vm.sh saves its runs' buffers).
 */
#include "igt.h"

#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#define TRACE_STEPS 32

static struct {
	bool on;
	long long last_ns, reaped_ns, premark_ns;
	int job;                             /* the job reaped last, -1 before the first */
	const char *names[TRACE_STEPS];      /* every step seen, in first-seen order */
	long long total_ns[TRACE_STEPS];
	unsigned long count[TRACE_STEPS];
	char gap[1024];                      /* the gap under way: its steps */
	size_t gap_len;
	struct bci_str lines;                /* the gaps so far */
} trace;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void bci_igt_trace_start(void)
{
	const char *v = getenv("BOOTCI_GAP_TRACE");

	memset(&trace, 0, sizeof(trace));
	trace.job = -1;
	trace.on = v && *v && strcmp(v, "0") != 0;
}

static int step_index(const char *name)
{
	int i;

	for (i = 0; i < TRACE_STEPS && trace.names[i]; i++)
		if (strcmp(trace.names[i], name) == 0)
			return i;
	if (i < TRACE_STEPS)
		trace.names[i] = name;
	return i < TRACE_STEPS ? i : -1;
}

void bci_igt_trace_reaped(unsigned job)
{
	if (!trace.on)
		return;
	trace.job = (int)job;
	trace.reaped_ns = trace.last_ns = now_ns();
	trace.gap_len = 0;
}

void bci_igt_trace(const char *step)
{
	long long t;
	int i;

	if (!trace.on || trace.job < 0)
		return;
	t = now_ns();
	i = step_index(step);
	if (i >= 0) {
		trace.total_ns[i] += t - trace.last_ns;
		trace.count[i]++;
	}
	if (trace.gap_len < sizeof(trace.gap))
		trace.gap_len += (size_t)snprintf(trace.gap + trace.gap_len,
						  sizeof(trace.gap) - trace.gap_len, " %s=%lld",
						  step, (t - trace.last_ns) / 1000);
	if (strcmp(step, "premark") == 0)
		trace.premark_ns = t;
	trace.last_ns = t;
}

void bci_igt_trace_forked(unsigned next)
{
	char head[128];
	int n;

	if (!trace.on || trace.job < 0)
		return;
	bci_igt_trace("fork");
	n = snprintf(head, sizeof(head), "gap %d %u %lld %lld %lld", trace.job, next, trace.reaped_ns,
		     trace.premark_ns, trace.last_ns);
	if (trace.gap_len >= sizeof(trace.gap))
		trace.gap_len = sizeof(trace.gap) - 1;
	if (bci_str_append(&trace.lines, head, (size_t)n) < 0 ||
	    bci_str_append(&trace.lines, trace.gap, trace.gap_len) < 0 ||
	    bci_str_append(&trace.lines, "\n", 1) < 0)
		trace.on = false;
	trace.job = -1;
}

#define TRACEFS "/sys/kernel/tracing"
#define FTRACE_MAX (256u << 20)

/* The kernel's trace buffer into bootci-ftrace.txt, when events were enabled; else nothing. */
static void trace_save_ftrace(const struct bci_executor *ex)
{
	char dir[PATH_MAX], path[PATH_MAX], *text = NULL;
	int ret;

	if (bci_path(ex->root, dir, TRACEFS) < 0 || bci_path(ex->root, path, TRACEFS "/set_event") < 0)
		return;
	if (access(path, F_OK) < 0 &&
	    ex->sys->mount("tracefs", dir, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return;		/* no tracefs in this kernel: nothing was traced */
	if (bci_read_file(path, &text, NULL, 1 << 16) < 0 || !*text) {
		free(text);	/* no event enabled */
		return;
	}
	free(text);
	text = NULL;
	ret = bci_path(ex->root, path, TRACEFS "/trace");
	if (ret == 0)
		ret = bci_read_file(path, &text, NULL, FTRACE_MAX);
	if (ret < 0)
		bci_warn("gap trace: cannot read %s: %s", path, strerror(-ret));
	else if (bci_igt_rundir_write(ex, "bootci-ftrace.txt", text) == 0)
		bci_say("gap trace: the kernel's trace events are in bootci-ftrace.txt");
	free(text);
}

void bci_igt_trace_stop(const struct bci_executor *ex)
{
	long long sum = 0;
	unsigned long gaps = 0;
	char *text;

	if (!trace.on)
		return;
	for (int i = 0; i < TRACE_STEPS && trace.names[i]; i++) {
		sum += trace.total_ns[i];
		if (strcmp(trace.names[i], "fork") == 0)
			gaps = trace.count[i];
	}
	bci_say("gap trace: %lu gaps, %.2f ms of the executor's each (reaped to forked):", gaps,
		gaps ? (double)sum / 1e6 / (double)gaps : 0.0);
	for (int i = 0; i < TRACE_STEPS && trace.names[i]; i++)
		bci_say("gap trace: %-16s %8.3f ms mean over %lu", trace.names[i],
			trace.count[i] ? (double)trace.total_ns[i] / 1e6 / (double)trace.count[i] : 0.0,
			trace.count[i]);
	text = bci_str_steal(&trace.lines);
	if (text && bci_igt_rundir_write(ex, "bootci-gap-trace.txt", text) < 0)
		bci_warn("gap trace: cannot write bootci-gap-trace.txt");
	free(text);
	trace_save_ftrace(ex);
	trace.on = false;
}
