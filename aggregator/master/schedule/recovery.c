// SPDX-License-Identifier: MIT
/*
 * Recovery (schedule.h): a machine is alive when it asks for a job or
 * uploads a run. Silent past its deadline, it is power cycled with its
 * inventory command (a lab's PDU or IPMI tool; tests/lab's drives QEMU);
 * each cycle starts the deadline again. When power-cycles cycles in a row
 * did not bring it back it is taken out of the schedule: its state says so
 * (and why), the log says so, and it gets `exit` until a person puts it back
 * (bci_schedule_return(), `bootci-aggregator schedule return MACHINE`).
 */
#include "internal.h"

#include "../store/store.h"
#include "message.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Runs @argv with its output on the log, at most @timeout seconds (then
 * SIGTERM, SIGKILL). 0 when it exited 0, else -EIO with @why.
 */
static int power_run(struct bci_schedule *s, char *const *argv, unsigned long timeout, char *why,
		     size_t why_size)
{
	int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC), out_fd, status = 0, ret;
	struct bci_spawn_kill kill = { .first_signal = SIGTERM, .grace_ms = 2000, .give_up_ms = 2000 };
	long deadline;
	pid_t pid;

	if (null_fd < 0)
		return -errno;
	out_fd = s->log ? fileno(s->log) : null_fd;
	if (s->log)
		fflush(s->log);
	struct bci_spawn spawn = {
		.path = argv[0], .argv = argv, .stdin_fd = null_fd, .stdout_fd = out_fd,
		.stderr_fd = out_fd, .process_group = true,
	};
	ret = bci_spawn_start(&spawn, &pid);
	close(null_fd);
	if (ret < 0) {
		bci_message(why, why_size, "%s: cannot start: %s", argv[0], strerror(-ret));
		return ret;
	}
	deadline = monotonic_ms() + (long)timeout * 1000;
	for (;;) {
		pid_t done = waitpid(pid, &status, WNOHANG);

		if (done == pid)
			break;
		if (done < 0 && errno != EINTR) {
			bci_message(why, why_size, "%s: %s", argv[0], strerror(errno));
			return -errno;
		}
		if (monotonic_ms() >= deadline &&
		    bci_spawn_kill_step(&kill, pid, monotonic_ms()) == -ETIME) {
			bci_message(why, why_size, "%s: still running after SIGKILL, left behind",
				    argv[0]);
			return -ETIME;
		}
		usleep(20 * 1000);
	}
	if (kill.sent) {
		bci_message(why, why_size, "%s: timed out after %lu s", argv[0], timeout);
		return -ETIME;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		char how[64];

		bci_spawn_describe(status, how, sizeof(how));
		bci_message(why, why_size, "%s: %s", argv[0], how);
		return -EIO;
	}
	return 0;
}

static int recover_one(struct bci_schedule *s, const struct bci_inventory_machine *m, double now,
		       char *err, size_t err_size)
{
	struct bci_schedule_state state = { .state = "ready" };
	struct bci_store_machine_state put;
	double upload = 0, last;
	char why[512] = "";
	int ret;

	ret = bci_schedule_state_read(s, m->name, &state, err, err_size);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		/* First known now: its deadline counts from here. */
		put = (struct bci_store_machine_state){ .machine = m->name, .state = "ready",
							.last_seen = now };
		return bci_store_machine_state_put(s->store, &put, err, err_size);
	}
	if (!strcmp(state.state, "out"))
		return 0;
	if ((ret = bci_store_machine_last_upload(s->store, m->name, &upload, err, err_size)) < 0)
		return ret;
	last = state.last_seen;
	if (upload > last)
		last = upload;
	if (state.last_cycle > last)
		last = state.last_cycle;
	if (now - last < (double)m->deadline)
		return 0;
	put = (struct bci_store_machine_state){
		.machine = m->name, .state = "ready", .last_seen = state.last_seen,
		.power_cycles = state.power_cycles, .last_cycle = now,
	};
	if ((unsigned long)state.power_cycles >= s->inventory->power_cycles) {
		snprintf(state.note, sizeof(state.note),
			 "silent for %.0f s after %d power cycle(s): taken out of the schedule",
			 now - last, state.power_cycles);
		put.state = "out";
		put.note = state.note;
		put.last_cycle = state.last_cycle;
		bci_schedule_say(s, "%s: %s", m->name, state.note);
		return bci_store_machine_state_put(s->store, &put, err, err_size);
	}
	put.power_cycles = state.power_cycles + 1;
	if (!m->power) {
		bci_schedule_say(s, "%s: silent for %.0f s (deadline %lu s) and no power command:"
				 " counted as cycle %d", m->name, now - last, m->deadline,
				 put.power_cycles);
	} else {
		bci_schedule_say(s, "%s: silent for %.0f s (deadline %lu s): power cycle %d of %lu",
				 m->name, now - last, m->deadline, put.power_cycles,
				 s->inventory->power_cycles);
		if (power_run(s, m->power, s->inventory->power_timeout, why, sizeof(why)) < 0)
			bci_schedule_say(s, "%s: power command failed: %s", m->name, why);
	}
	return bci_store_machine_state_put(s->store, &put, err, err_size);
}

int bci_schedule_recover(struct bci_schedule *s, double now, char *err, size_t err_size)
{
	for (size_t i = 0; i < s->inventory->machine_count; i++) {
		int ret = recover_one(s, &s->inventory->machines[i], now, err, err_size);

		if (ret < 0)
			return ret;
	}
	return 0;
}

int bci_schedule_return(struct bci_schedule *s, const char *machine, double now, char *err,
			size_t err_size)
{
	struct bci_schedule_state state = { .state = "ready" };
	struct bci_store_machine_state put = { .machine = machine, .state = "ready",
						.last_seen = now };
	bool known = false;
	int ret;

	for (size_t i = 0; i < s->inventory->machine_count; i++)
		if (!strcmp(s->inventory->machines[i].name, machine))
			known = true;
	if (!known) {
		bci_message(err, err_size, "no machine %s in the inventory", machine);
		return -ENOENT;
	}
	if ((ret = bci_schedule_state_read(s, machine, &state, err, err_size)) < 0)
		return ret;
	if (strcmp(state.state, "out")) {
		bci_schedule_say(s, "%s: already in the schedule", machine);
		return 0;
	}
	/* The last cycle is kept: it says when the machine was last power cycled. */
	put.last_cycle = state.last_cycle;
	if ((ret = bci_store_machine_state_put(s->store, &put, err, err_size)) < 0)
		return ret;
	bci_schedule_say(s, "%s: back in the schedule (it was out: %s)", machine, state.note);
	return 1;
}
