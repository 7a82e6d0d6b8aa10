// SPDX-License-Identifier: MIT
/*
 * A machine that says it cannot run its jobs (schedule.h): its known-good
 * image's collect sent the executor's note (serve's PUT .../fault), e.g. its
 * boots ended one after the other before their run could begin. Netbooting
 * it again would end the same way: it is taken out of the schedule with the
 * note as the reason, as recovery takes out a machine that stays silent, and
 * gets `exit` until a person puts it back (`schedule return`).
 */
#include "internal.h"

#include "../store/store.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int bci_schedule_fault(struct bci_schedule *s, const char *machine, const char *note, double now,
		       char *err, size_t err_size)
{
	struct bci_schedule_state state = { .state = "ready" };
	struct bci_store_machine_state put;
	char reason[sizeof(state.note)];
	bool known = false;
	int ret;

	for (size_t i = 0; i < s->inventory->machine_count; i++)
		if (!strcmp(s->inventory->machines[i].name, machine))
			known = true;
	if (!known) {
		snprintf(err, err_size, "no machine %s in the inventory", machine);
		return -ENOENT;
	}
	if ((ret = bci_schedule_state_read(s, machine, &state, err, err_size)) < 0)
		return ret;
	snprintf(reason, sizeof(reason), "the machine reported: %s", note);
	put = (struct bci_store_machine_state){
		.machine = machine, .state = "out", .note = reason,
		.last_seen = ret ? state.last_seen : now, .power_cycles = state.power_cycles,
		.last_cycle = state.last_cycle,
	};
	if ((ret = bci_store_machine_state_put(s->store, &put, err, err_size)) < 0)
		return ret;
	bci_schedule_say(s, "%s: %s: %s", machine,
			 strcmp(state.state, "out") ? "taken out of the schedule" : "out already",
			 reason);
	return strcmp(state.state, "out") ? 1 : 0;
}
