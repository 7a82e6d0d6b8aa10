// SPDX-License-Identifier: MIT
/*
 * What a machine's known-good image says to the master (schedule.h).
 *
 * Its fault note: collect sent the executor's note (serve's PUT .../fault),
 * e.g. its boots ended one after the other before their run could begin.
 * Netbooting it again would end the same way: it is taken out of the
 * schedule with the note as the reason, as recovery takes out a machine that
 * stays silent, and gets `exit` until a person puts it back (`schedule
 * return`).
 *
 * Its hello (PUT .../hello), at every start of collect: the image boots, so
 * a run the master ended and sent it there for is the kernel's to answer
 * for, not the disk's.
 */
#include "internal.h"

#include "../store/store.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool in_inventory(struct bci_schedule *s, const char *machine, char *err, size_t err_size)
{
	for (size_t i = 0; i < s->inventory->machine_count; i++)
		if (!strcmp(s->inventory->machines[i].name, machine))
			return true;
	snprintf(err, err_size, "no machine %s in the inventory", machine);
	return false;
}

int bci_schedule_fault(struct bci_schedule *s, const char *machine, const char *note, double now,
		       char *err, size_t err_size)
{
	struct bci_schedule_state state = { .state = "ready" };
	struct bci_store_machine_state put;
	char reason[sizeof(state.note)];
	int ret;

	if (!in_inventory(s, machine, err, err_size))
		return -ENOENT;
	if ((ret = bci_schedule_state_read(s, machine, &state, err, err_size)) < 0)
		return ret;
	snprintf(reason, sizeof(reason), "the machine reported: %s", note);
	put = (struct bci_store_machine_state){
		.machine = machine, .state = "out", .note = reason,
		.last_seen = ret ? state.last_seen : now, .power_cycles = state.power_cycles,
		.last_cycle = state.last_cycle,
	};
	bci_schedule_say(s, "%s: %s: %s", machine,
			 strcmp(state.state, "out") ? "taken out of the schedule" : "out already",
			 reason);
	if ((ret = bci_schedule_take_out(s, &put, err, err_size)) < 0)
		return ret;
	return strcmp(state.state, "out") ? 1 : 0;
}

struct hello_jobs {
	int64_t keys[16];
	size_t count;
};

/* The jobs whose run the master ended and that nobody spoke for since. */
static int hello_row(const struct bci_store_job *job, void *ctx)
{
	struct hello_jobs *h = ctx;

	if (!strcmp(job->state, "abandoned") && job->ended > 0 && job->asked < job->ended &&
	    h->count < sizeof(h->keys) / sizeof(h->keys[0]))
		h->keys[h->count++] = job->key;
	return 0;
}

int bci_schedule_hello(struct bci_schedule *s, const char *machine, double now,
		       struct bci_schedule_hello *hello, char *err, size_t err_size)
{
	struct bci_schedule_state state = { .state = "ready" };
	struct hello_jobs jobs = { .count = 0 };
	int ret;

	*hello = (struct bci_schedule_hello){ .known = false };
	if (!in_inventory(s, machine, err, err_size))
		return -ENOENT;
	hello->known = true;
	if ((ret = bci_schedule_state_read(s, machine, &state, err, err_size)) < 0)
		return ret;
	hello->out = !strcmp(state.state, "out");
	snprintf(hello->note, sizeof(hello->note), "%s", hello->out ? state.note : "");
	ret = bci_store_machine_jobs_each(s->store, machine, hello_row, &jobs, err, err_size);
	for (size_t i = 0; ret >= 0 && i < jobs.count; i++)
		ret = bci_store_job_asked(s->store, jobs.keys[i], now, err, err_size);
	if (ret < 0)
		return ret;
	hello->ended_runs = (int)jobs.count;
	if (jobs.count)
		bci_schedule_say(s, "%s: its known-good image started: %zu run%s the master ended"
				 " are the kernel's, not the disk's", machine, jobs.count,
				 jobs.count == 1 ? "" : "s");
	return 0;
}
