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
	const char *run_id;
	char *build;
	size_t size;
	bool found;
};

static int run_build_match(const struct bci_store_job *job, void *ctx)
{
	struct run_build *r = ctx;

	if (!r->found && !strcmp(job->run_id, r->run_id)) {
		snprintf(r->build, r->size, "%s", job->build);
		r->found = true;
	}
	return 0;
}

int bci_schedule_run_build(struct bci_store *store, const char *machine, const char *run_id,
			   char *build, size_t size, char *err, size_t err_size)
{
	struct run_build r = { .run_id = run_id, .build = build, .size = size };
	int ret = bci_store_machine_jobs_each(store, machine, run_build_match, &r, err, err_size);

	return ret < 0 ? ret : r.found;
}

/* ---- a run in the store ---- */

struct run_job {
	const char *run_id;
	int64_t key;
	char build[256], tier[8];
	int boots;
	double booted;
	bool found, done;
};

static int run_job_match(const struct bci_store_job *job, void *ctx)
{
	struct run_job *r = ctx;

	if (r->found || strcmp(job->run_id, r->run_id))
		return 0;
	r->found = true;
	r->key = job->key;
	snprintf(r->build, sizeof(r->build), "%s", job->build);
	snprintf(r->tier, sizeof(r->tier), "%s", job->tier);
	r->boots = job->boots;
	r->booted = job->booted;
	r->done = !strcmp(job->state, "done");
	return 0;
}

struct build_copy {
	char *name, *tree, *commit, *base, *series_title, *message_id;
	char tier[8];
	double registered;
	bool oom;
};

static char *dup_or_null(const char *text, bool *oom)
{
	char *copy = text ? strdup(text) : NULL;

	if (text && !copy)
		*oom = true;
	return copy;
}

static int build_copy_row(const struct bci_store_build *build, void *ctx)
{
	struct build_copy *c = ctx;

	c->name = dup_or_null(build->name, &c->oom);
	c->tree = dup_or_null(build->tree, &c->oom);
	c->commit = dup_or_null(build->commit, &c->oom);
	c->base = dup_or_null(build->base, &c->oom);
	c->series_title = dup_or_null(build->series_title, &c->oom);
	c->message_id = dup_or_null(build->message_id, &c->oom);
	snprintf(c->tier, sizeof(c->tier), "%s", build->tier ? build->tier : "");
	c->registered = build->registered;
	return c->oom ? -ENOMEM : 0;
}

/* The build's tier becomes full: its results now include the full tier's. */
static int build_tier_full(struct bci_store *store, const char *build, char *err, size_t err_size)
{
	struct build_copy c = { 0 };
	int ret = bci_store_build_get(store, build, build_copy_row, &c, err, err_size);

	if (ret >= 0 && strcmp(c.tier, "full")) {
		struct bci_store_build put = {
			.name = c.name, .tree = c.tree, .commit = c.commit, .tier = "full",
			.base = c.base, .series_title = c.series_title, .message_id = c.message_id,
			.registered = c.registered,
		};

		ret = bci_store_build_put(store, &put, err, err_size);
	}
	free(c.name);
	free(c.tree);
	free(c.commit);
	free(c.base);
	free(c.series_title);
	free(c.message_id);
	return ret < 0 ? ret : 0;
}

int bci_schedule_run_ingested(struct bci_store *store, const char *machine, const char *run_id,
			      char *err, size_t err_size)
{
	struct run_job r = { .run_id = run_id };
	int ret = bci_store_machine_jobs_each(store, machine, run_job_match, &r, err, err_size);

	if (ret < 0 || !r.found)
		return ret < 0 ? ret : 0;
	if (!r.done && (ret = bci_store_job_update(store, r.key, "done", r.boots, r.booted, err,
						   err_size)) < 0)
		return ret;
	if (!strcmp(r.tier, "full") && (ret = build_tier_full(store, r.build, err, err_size)) < 0)
		return ret;
	return 1;
}
