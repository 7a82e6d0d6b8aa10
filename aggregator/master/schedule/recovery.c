// SPDX-License-Identifier: MIT
/*
 * Recovery (schedule.h): a machine is alive when it asks for a job or
 * uploads a run. Silent past its deadline, it is power cycled by its power
 * driver (power.h: a command such as a PDU's or tests/lab's, or its BMC over
 * IPMI); each cycle starts the deadline again. When power-cycles cycles in a
 * row did not bring it back, or at once when its power cannot be worked (the
 * BMC does not answer, refuses the credentials, or the state read back says
 * the cycle did not take), it is taken out of the schedule: its state says
 * so (and why), the log says so, and it gets `exit` until a person puts it
 * back (bci_schedule_return(), `bootci-aggregator schedule return MACHINE`),
 * which powers it back on: a machine may power itself off once taken out.
 */
#include "internal.h"

#include "../store/store.h"
#include "message.h"
#include "power.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The power driver of @m as this schedule runs it (its log, the inventory's timeout). */
static struct bci_power power_of(struct bci_schedule *s, const struct bci_inventory_machine *m)
{
	return (struct bci_power){ .machine = m, .ipmitool = s->inventory->ipmitool,
				   .timeout = s->inventory->power_timeout, .log = s->log };
}

/* bci_power_act() on @m; an action taken (not a status) is told to s->power_done. */
static int power_act(struct bci_schedule *s, const struct bci_inventory_machine *m,
		     enum bci_power_action action, struct bci_power_result *result)
{
	struct bci_power power = power_of(s, m);
	int ret = bci_power_act(&power, action, result);

	if (ret == 0 && action != BCI_POWER_STATUS && s->power_done)
		s->power_done(s->power_ctx, m->name, bci_power_action_name(action), result->why);
	return ret;
}

static int recover_one(struct bci_schedule *s, const struct bci_inventory_machine *m, double now,
		       char *err, size_t err_size)
{
	struct bci_schedule_state state = { .state = "ready" };
	struct bci_store_machine_state put;
	double upload = 0, last;
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
		return bci_schedule_take_out(s, &put, err, err_size);
	}
	put.power_cycles = state.power_cycles + 1;
	if (m->power_driver == BCI_POWER_DRIVER_NONE) {
		bci_schedule_say(s, "%s: silent for %.0f s (deadline %lu s) and no power command:"
				 " counted as cycle %d", m->name, now - last, m->deadline,
				 put.power_cycles);
		return bci_store_machine_state_put(s->store, &put, err, err_size);
	}
	bci_schedule_say(s, "%s: silent for %.0f s (deadline %lu s): power cycle %d of %lu", m->name,
			 now - last, m->deadline, put.power_cycles, s->inventory->power_cycles);
	struct bci_power_result result;

	ret = power_act(s, m, BCI_POWER_CYCLE, &result);
	if (ret == -ENOMEM)
		return ret;
	if (ret == 0) {
		bci_schedule_say(s, "%s: power cycle %d: %s", m->name, put.power_cycles, result.why);
	} else if (bci_power_fault_takes_out(result.fault)) {
		bci_message(state.note, sizeof(state.note), "power cycle %d: %s: taken out of the schedule",
			    put.power_cycles, result.why);
		put.state = "out";
		put.note = state.note;
		bci_schedule_say(s, "%s: %s", m->name, state.note);
		return bci_schedule_take_out(s, &put, err, err_size);
	} else {
		bci_schedule_say(s, "%s: power command failed: %s", m->name, result.why);
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
	const struct bci_inventory_machine *m = bci_inventory_by_name(s->inventory, machine);
	int ret;

	if (!m) {
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
	if (m->power_driver == BCI_POWER_DRIVER_NONE)
		return 1;
	/* It may have powered itself off once taken out: on, or cycled when it is on. */
	struct bci_power_result result;

	ret = power_act(s, m, BCI_POWER_CYCLE, &result);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		bci_message(err, err_size, "%s is back in the schedule, but its power failed: %s",
			    machine, result.why);
		return -EIO;
	}
	bci_schedule_say(s, "%s: powered back on: %s", machine, result.why);
	put.last_cycle = now;
	ret = bci_store_machine_state_put(s->store, &put, err, err_size);
	return ret < 0 ? ret : 1;
}

int bci_schedule_power(struct bci_schedule *s, const char *machine, const char *action, char *err,
		       size_t err_size)
{
	static const enum bci_power_action actions[] = { BCI_POWER_ON, BCI_POWER_OFF, BCI_POWER_CYCLE,
							 BCI_POWER_STATUS };
	const struct bci_inventory_machine *m = bci_inventory_by_name(s->inventory, machine);
	struct bci_power_result result;
	size_t i;
	int ret;

	if (!m) {
		bci_message(err, err_size, "no machine %s in the inventory", machine);
		return -ENOENT;
	}
	for (i = 0; i < sizeof(actions) / sizeof(*actions); i++)
		if (!strcmp(action, bci_power_action_name(actions[i])))
			break;
	if (i == sizeof(actions) / sizeof(*actions)) {
		bci_message(err, err_size, "power %.32s: on, off, cycle or status", action);
		return -EINVAL;
	}
	ret = power_act(s, m, actions[i], &result);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", machine, result.why);
		return ret;
	}
	if (actions[i] == BCI_POWER_STATUS)
		bci_schedule_say(s, "%s: power is %s", machine, bci_power_state_name(result.state));
	else
		bci_schedule_say(s, "%s: power %s: %s", machine, action, result.why);
	return 0;
}
