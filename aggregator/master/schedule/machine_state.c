// SPDX-License-Identifier: MIT
/*
 * What the store says of a machine (internal.h): its state (ready or out,
 * its power cycles, the note saying why it is out) and whether a run of it
 * came in. Read by the netboot answer, the gate, recovery and the command.
 */
#include "internal.h"

#include "../store/store.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int state_row(const struct bci_store_machine_state *state, void *ctx)
{
	struct bci_schedule_state *c = ctx;

	snprintf(c->state, sizeof(c->state), "%s", state->state);
	c->last_seen = state->last_seen;
	c->last_cycle = state->last_cycle;
	c->power_cycles = state->power_cycles;
	snprintf(c->note, sizeof(c->note), "%s", state->note ? state->note : "");
	return 0;
}

int bci_schedule_state_read(struct bci_schedule *s, const char *machine, struct bci_schedule_state *c,
			    char *err, size_t err_size)
{
	int ret = bci_store_machine_state_get(s->store, machine, state_row, c, err, err_size);

	if (ret == -ENOENT)
		return 0;
	return ret < 0 ? ret : 1;
}

bool bci_schedule_machine_out(struct bci_schedule *s, const char *machine)
{
	struct bci_schedule_state c;
	char err[256];

	return bci_schedule_state_read(s, machine, &c, err, sizeof(err)) == 1 &&
	       !strcmp(c.state, "out");
}

static int run_exists(const struct bci_store_run *run, void *ctx)
{
	(void)run;
	*(bool *)ctx = true;
	return 0;
}

int bci_schedule_run_uploaded(struct bci_schedule *s, const char *machine, const char *run_id,
			       char *err, size_t err_size)
{
	bool found = false;
	int ret = bci_store_run_get(s->store, machine, run_id, run_exists, &found, err, err_size);

	if (ret == -ENOENT)
		return 0;
	return ret < 0 ? ret : found;
}
