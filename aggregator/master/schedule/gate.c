// SPDX-License-Identifier: MIT
/*
 * The full tier's gate (schedule.h): once a build's fast tier is done, its
 * full tier is queued when the judge finds no possible new issue, or when
 * the tree's rule says always; skipped when it finds one or the rule says
 * never. The decision is recorded with the queueing, so it is made once.
 */
#include "internal.h"

#include "../store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tier_progress {
	struct bci_schedule *s;
	int pending;
	int error;
	char *err;
	size_t err_size;
};

static int job_progress(const struct bci_store_job *job, void *ctx)
{
	struct tier_progress *p = ctx;
	int ret;

	if (!strcmp(job->state, "done") || !strcmp(job->state, "abandoned"))
		return 0;
	ret = bci_schedule_run_uploaded(p->s, job->machine, job->run_id, p->err, p->err_size);
	if (ret < 0)
		return ret;
	if (ret)
		return bci_store_job_update(p->s->store, job->key, "done", job->boots, job->booted,
					    p->err, p->err_size);
	p->pending++;
	return 0;
}

struct names {
	char **v;
	size_t count;
};

static int name_add(const char *name, void *ctx)
{
	struct names *n = ctx;
	char **grown = realloc(n->v, (n->count + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	n->v = grown;
	return (n->v[n->count++] = strdup(name)) ? 0 : -ENOMEM;
}

struct build_tree {
	char tree[256];
};

static int build_row(const struct bci_store_build *build, void *ctx)
{
	snprintf(((struct build_tree *)ctx)->tree, sizeof(((struct build_tree *)ctx)->tree), "%s",
		 build->tree);
	return 0;
}

/* Decides @build's full tier if its fast tier is done. */
static int gate_one(struct bci_schedule *s, const char *build, char *err, size_t err_size)
{
	struct tier_progress progress = { .s = s, .err = err, .err_size = err_size };
	struct build_tree tree = { "" };
	enum bci_full_rule rule;
	int ret, issue;

	ret = bci_store_jobs_each(s->store, build, "fast", job_progress, &progress, err, err_size);
	if (ret < 0)
		return ret;
	if ((ret = bci_store_build_get(s->store, build, build_row, &tree, err, err_size)) < 0)
		return ret;
	rule = bci_inventory_full_rule(s->inventory, tree.tree);
	if (rule == BCI_FULL_NEVER) {
		bci_schedule_say(s, "%s: full tier not run (tree %s: full = never)", build, tree.tree);
		return bci_store_gate_put(s->store, build, "skipped: the tree never runs it", err,
					  err_size);
	}
	if (rule == BCI_FULL_ALWAYS) {
		ret = bci_schedule_queue_tier(s, build, "full", "queued: the tree always runs it", err, err_size);
		return ret < 0 ? ret : 0;
	}
	if (progress.pending)
		return 0;
	if (!s->judge) {
		bci_schedule_say(s, "%s: fast tier done; no judge of possible new issues is wired: full tier waits",
		    build);
		return 0;
	}
	issue = s->judge(s->store, build, s->judge_ctx, err, err_size);
	if (issue < 0)
		return issue;
	if (issue) {
		bci_schedule_say(s, "%s: fast tier found a possible new issue: full tier not queued", build);
		return bci_store_gate_put(s->store, build,
					  "skipped: the fast tier found a possible new issue", err,
					  err_size);
	}
	ret = bci_schedule_queue_tier(s, build, "full", "queued: the fast tier found no possible new issue", err,
			 err_size);
	return ret < 0 ? ret : 0;
}

int bci_schedule_gates(struct bci_schedule *s, char *err, size_t err_size)
{
	struct names builds = { 0 };
	int ret;

	ret = bci_store_builds_ungated(s->store, name_add, &builds, err, err_size);
	for (size_t i = 0; ret >= 0 && i < builds.count; i++)
		ret = gate_one(s, builds.v[i], err, err_size);
	for (size_t i = 0; i < builds.count; i++)
		free(builds.v[i]);
	free(builds.v);
	return ret < 0 ? ret : 0;
}
