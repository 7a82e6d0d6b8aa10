/* SPDX-License-Identifier: MIT */
/*
 * What the scheduler's files share (schedule.h has their roles). Not for use
 * outside aggregator/master/schedule/. The leaves (log.c, machine_state.c,
 * build_files.c) call none of the others.
 */
#ifndef BCI_SCHEDULE_INTERNAL_H
#define BCI_SCHEDULE_INTERNAL_H

#include "schedule.h"

#include "manifest.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- log.c ---- */

/* One line on the schedule's log ("schedule: ..."). */
void bci_schedule_say(struct bci_schedule *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- machine_state.c ---- */

/* A copy of a machine's stored state (store.h's struct bci_store_machine_state). */
struct bci_schedule_state {
	char state[8];
	double last_seen, last_cycle;
	int power_cycles;
	char note[256];
};

/* The machine's state: 1 when recorded, 0 when the scheduler never saw it, -errno. */
int bci_schedule_state_read(struct bci_schedule *s, const char *machine,
			    struct bci_schedule_state *state, char *err, size_t err_size);
/* Whether @machine is taken out of the schedule. */
bool bci_schedule_machine_out(struct bci_schedule *s, const char *machine);
/* 1 when @machine uploaded run @run_id, 0 when not, -errno. */
int bci_schedule_run_uploaded(struct bci_schedule *s, const char *machine, const char *run_id,
			      char *err, size_t err_size);

/* ---- build_files.c ---- */

/* A published file (of a build or a known-good image): its object. */
struct bci_schedule_file {
	char sha256[BCI_SHA256_HEX_LEN + 1];	/* its name in DATA/builds/objects/ */
	uint64_t size;
};

/*
 * The file @name of build @owner, or of known-good image @owner when
 * @known_good: 1 with @file filled, 0 when it has no such file, -errno.
 */
int bci_schedule_file_find(struct bci_store *store, bool known_good, const char *owner,
			   const char *name, struct bci_schedule_file *file, char *err,
			   size_t err_size);

/* The command line @build's boot.ipxe gives its kernel ("" when none). */
void bci_schedule_build_cmdline(struct bci_schedule *s, const char *build, char *out, size_t size);

/* ---- queue.c ---- */

/* Queues @tier of @build and, when @decision is given, records it as the full tier's gate, together. */
int bci_schedule_queue_tier(struct bci_schedule *s, const char *build, const char *tier,
			    const char *decision, char *err, size_t err_size);

/* ---- gate.c ---- */

/* The full tier of every build whose fast tier is queued and not yet decided, at Unix time @now. */
int bci_schedule_gates(struct bci_schedule *s, double now, char *err, size_t err_size);

/* ---- recovery.c ---- */

/* Power cycles the silent, takes out those cycling did not bring back. */
int bci_schedule_recover(struct bci_schedule *s, double now, char *err, size_t err_size);

/* ---- take_out.c ---- */

struct bci_store_machine_state;

/*
 * Takes @state->machine out of the schedule: @state written with its state
 * "out" (whatever @state->state says), then each of its confirm and bisect
 * jobs not ended moved to the machine of its shard group in the schedule
 * with the fewest jobs queued (its run id naming that machine where it named
 * this one, made unique there), or abandoned with a note saying why when
 * there is none; one whose run came in is marked done. Each said on the log.
 * A tier's own jobs stay. 0 or -errno (what was written before stays).
 */
int bci_schedule_take_out(struct bci_schedule *s, const struct bci_store_machine_state *state,
			  char *err, size_t err_size);

#endif
