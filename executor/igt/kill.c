// SPDX-License-Identifier: MIT
/*
 * A test stopped: the timeouts that stop it (per_test_timeout,
 * inactivity_timeout), SIGQUIT first (IGT tests dump their state on it) with
 * the kernel's task and memory dumps, SIGKILL after kill_grace, and the test
 * given up as unkillable when even that does not end it; then, once it has
 * ended, whatever it left running killed and named. Each stop is said in the
 * kernel log in igt_runner's words and on the console.
 */
#include "igt.h"

#include "config.h"
#include "fsutil.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* After SIGKILL, a test that still does not go is stuck in the kernel. */
#define KILL_GIVE_UP_MS 20000L
/* How long the leftovers of a test may take to die of SIGKILL. */
#define LEFTOVERS_GIVE_UP_MS 2000L

/* Returns the reason a job not stopped yet has to be stopped now, or NULL. */
const char *bci_igt_kill_timeout(struct bci_igt_job *job, long now)
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
 * on it), then, driven by the loop (job.c), SIGKILL after kill_grace.
 */
void bci_igt_kill_start(struct bci_igt_job *job, const char *reason, long now)
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
int bci_igt_kill_step(struct bci_igt_job *job, long now)
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
 * The test has ended: whatever it left (its process group, the processes that
 * reparented to the executor, setsid()'ed ones included) is killed now, before
 * it writes into a later job's kernel log or holds this job's pipes.
 */
void bci_igt_kill_leftovers(struct bci_igt_job *job)
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
void bci_igt_kill_note_leftovers(struct bci_igt_job *job)
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
