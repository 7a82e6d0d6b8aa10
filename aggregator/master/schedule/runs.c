// SPDX-License-Identifier: MIT
/*
 * A run that came in, as the scheduler sees it (schedule.h): which build
 * the job that handed it out belongs to, so ingest files it there; then its
 * job done, and a full tier's run making its build's tier full.
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

	if (ret <= 0)
		return ret;
	if (!r.done && (ret = bci_store_job_update(store, r.key, "done", r.boots, r.booted, err,
						   err_size)) < 0)
		return ret;
	if (!strcmp(r.tier, "full") && (ret = build_tier_full(store, r.build, err, err_size)) < 0)
		return ret;
	return 1;
}
