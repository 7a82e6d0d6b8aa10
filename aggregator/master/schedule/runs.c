// SPDX-License-Identifier: MIT
/*
 * A run that came in, as the scheduler sees it (schedule.h): which build
 * the job that handed it out belongs to, so ingest files it there; then its
 * job done with the verdict its boots give (a kernel that took the machine
 * down at every boot is named), and a full tier's run making its build's
 * tier full. And a run collect asks about: its job as the master sees it.
 */
#include "schedule.h"

#include "../store/store.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run_build {
	char *build;
	size_t size;
};

static int run_build_copy(const struct bci_store_job *job, void *ctx)
{
	struct run_build *r = ctx;

	snprintf(r->build, r->size, "%s", job->build);
	return 0;
}

int bci_schedule_run_build(struct bci_store *store, const char *machine, const char *run_id,
			   char *build, size_t size, char *err, size_t err_size)
{
	struct run_build r = { .build = build, .size = size };

	return bci_store_machine_job_get(store, machine, run_id, run_build_copy, &r, err, err_size);
}

/* ---- a run in the store ---- */

struct run_job {
	int64_t key;
	char build[256], tier[8];
	int boots;
	double booted;
	bool done;
	char note[512];
};

static int run_job_copy(const struct bci_store_job *job, void *ctx)
{
	struct run_job *r = ctx;

	r->key = job->key;
	snprintf(r->build, sizeof(r->build), "%s", job->build);
	snprintf(r->tier, sizeof(r->tier), "%s", job->tier);
	r->boots = job->boots;
	r->booted = job->booted;
	r->done = !strcmp(job->state, "done");
	snprintf(r->note, sizeof(r->note), "%s", job->note ? job->note : "");
	return 0;
}

int bci_schedule_boots_verdict(int boots, int down, char *buf, size_t size)
{
	buf[0] = '\0';
	if (down <= 0)
		return 0;
	/* Every boot went down, or every boot but the one that ended the run (capped it). */
	if (down >= 2 && down >= boots - 1)
		snprintf(buf, size, "the kernel under test crashed at every boot: %d of the run's %d"
			 " boots ended in a kernel crash, hang or reset%s", down, boots,
			 down < boots ? ", the last one ended the run" : "");
	else
		snprintf(buf, size, "the kernel under test took the machine down in %d of the run's"
			 " %d boots", down, boots);
	return 1;
}

struct boots_seen {
	int boots, down;
};

static int boot_seen(const struct bci_store_boot *boot, void *ctx)
{
	struct boots_seen *b = ctx;

	b->boots++;
	/* No clean end: a kernel crash, a watchdog reset, a hang or a power loss. */
	if (!boot->ending || strncmp(boot->ending, "clean:", 6))
		b->down++;
	return 0;
}

static int run_key_copy(const struct bci_store_run *run, void *ctx)
{
	*(int64_t *)ctx = run->key;
	return 0;
}

/* The job's note once its run is in: what the master said before, then what the boots say. */
static int run_verdict(struct bci_store *store, const char *machine, const char *run_id,
		       const struct run_job *r, char *note, size_t size, char *err,
		       size_t err_size)
{
	struct boots_seen seen = { 0, 0 };
	char verdict[256];
	int64_t key = -1;
	int ret = bci_store_run_get(store, machine, run_id, run_key_copy, &key, err, err_size);

	if (ret >= 0)
		ret = bci_store_boots_each(store, key, boot_seen, &seen, err, err_size);
	if (ret < 0)
		return ret;
	bci_schedule_boots_verdict(seen.boots, seen.down, verdict, sizeof(verdict));
	snprintf(note, size, "%s%s%s", r->note, r->note[0] && verdict[0] ? "; " : "", verdict);
	return 0;
}

/* The build's tier becomes full: its results now include the full tier's. */
static int build_tier_full(struct bci_store *store, const char *build, char *err, size_t err_size)
{
	struct bci_store_build *b;
	int ret = bci_store_build_read(store, build, &b, err, err_size);

	if (ret >= 0 && strcmp(b->tier, "full")) {
		b->tier = "full";
		ret = bci_store_build_put(store, b, err, err_size);
	}
	if (ret >= 0)
		free(b);
	return ret < 0 ? ret : 0;
}

int bci_schedule_run_ingested(struct bci_store *store, const char *machine, const char *run_id,
			      char *err, size_t err_size)
{
	struct run_job r = { 0 };
	int ret = bci_store_machine_job_get(store, machine, run_id, run_job_copy, &r, err, err_size);

	char note[1024];

	if (ret <= 0)
		return ret;
	if (!r.done && (ret = bci_store_job_update(store, r.key, "done", r.boots, r.booted, err,
						   err_size)) < 0)
		return ret;
	if (!r.done && ((ret = run_verdict(store, machine, run_id, &r, note, sizeof(note), err,
					   err_size)) < 0 ||
			(ret = bci_store_job_end(store, r.key, "done", note[0] ? note : NULL, 0, err,
						 err_size)) < 0))
		return ret;
	if (!strcmp(r.tier, "full") && (ret = build_tier_full(store, r.build, err, err_size)) < 0)
		return ret;
	return 1;
}

/* ---- a run collect asks about ---- */

static int asked_job_copy(const struct bci_store_job *job, void *ctx)
{
	struct bci_schedule_run_job *j = ctx;

	j->key = job->key;
	snprintf(j->state, sizeof(j->state), "%s", job->state);
	j->boots = job->boots;
	j->ended = !strcmp(job->state, "abandoned");
	snprintf(j->note, sizeof(j->note), "%s", job->note ? job->note : "");
	return 0;
}

int bci_schedule_run_asked(struct bci_store *store, const char *machine, const char *run_id,
			   double now, struct bci_schedule_run_job *job, char *err, size_t err_size)
{
	int ret = bci_store_machine_job_get(store, machine, run_id, asked_job_copy, job, err,
					    err_size);

	if (ret <= 0)
		return ret;
	ret = bci_store_job_asked(store, job->key, now, err, err_size);
	return ret < 0 ? ret : 1;
}
