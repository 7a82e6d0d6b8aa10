/* SPDX-License-Identifier: MIT */
/* What schedule.c and recovery.c share. Not for use outside aggregator/schedule/. */
#ifndef BCI_SCHEDULE_INTERNAL_H
#define BCI_SCHEDULE_INTERNAL_H

#include "schedule.h"

#include <stdbool.h>

/* A copy of a machine's stored state (store.h's struct bci_store_machine_state). */
struct bci_schedule_state {
	char state[8];
	double last_seen, last_cycle;
	int power_cycles;
	char note[256];
};

/* One line on the schedule's log ("schedule: ..."). */
void bci_schedule_say(struct bci_schedule *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The machine's state: 1 when recorded, 0 when the scheduler never saw it, -errno. */
int bci_schedule_state_read(struct bci_schedule *s, const char *machine,
			    struct bci_schedule_state *state, char *err, size_t err_size);
/* The command line @build's boot.ipxe gives its kernel ("" when none). */
void bci_schedule_build_cmdline(struct bci_schedule *s, const char *build, char *out, size_t size);
bool bci_schedule_machine_out(struct bci_schedule *s, const char *machine);
/* The full tier of every build whose fast tier is queued and not yet decided (schedule.c). */
int bci_schedule_gates(struct bci_schedule *s, char *err, size_t err_size);
/* Power cycles the silent, takes out those cycling did not bring back (recovery.c). */
int bci_schedule_recover(struct bci_schedule *s, double now, char *err, size_t err_size);

#endif
