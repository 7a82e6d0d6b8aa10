// SPDX-License-Identifier: MIT
/*
 * The full tier's gate (schedule.h): once a build's fast tier is done, its
 * full tier is queued when the judge finds no possible new issue, or when
 * the tree's rule says always; skipped when it finds one or the rule says
 * never. A possible new issue is first rerun (confirm.c) and the judgement
 * made again once the reruns are back, or past their budget. With reruns on
 * (and a judge), a tree whose rule says never or always has its fast tier
 * judged and its possible new issues rerun too, its decision recorded only
 * after them: the reply and the checks wait for the decision. One that
 * always runs its full tier has it queued with the fast tier all the same,
 * never held back. The decision is recorded once.
 */
#include "internal.h"

#include "../store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tier_progress {
	struct bci_schedule *s;
	int pending;			/* the tier's own jobs not done */
	int reruns, reruns_open;	/* its confirm jobs: all, those not ended */
	double first_queued;		/* the tier's first job queued */
	double reruns_queued;		/* its first confirm job queued */
	int error;
	char *err;
	size_t err_size;
};

static int job_progress(const struct bci_store_job *job, void *ctx)
{
	struct tier_progress *p = ctx;
	bool rerun = job->kind && !strcmp(job->kind, "confirm");
	int ret;

	if (rerun) {
		p->reruns++;
		if (!p->reruns_queued || job->queued < p->reruns_queued)
			p->reruns_queued = job->queued;
	} else if (!job->kind && (!p->first_queued || job->queued < p->first_queued)) {
		p->first_queued = job->queued;
	}
	if (!strcmp(job->state, "done") || !strcmp(job->state, "abandoned"))
		return 0;
	ret = bci_schedule_run_uploaded(p->s, job->machine, job->run_id, p->err, p->err_size);
	if (ret < 0)
		return ret;
	if (ret)
		return bci_store_job_update(p->s->store, job->key, "done", job->boots, job->booted,
					    p->err, p->err_size);
	if (rerun)
		p->reruns_open++;
	else if (!job->kind)
		p->pending++;
	return 0;
}

/* The confirm jobs not back by @note's deadline, abandoned. */
struct overdue {
	struct bci_schedule *s;
	const char *note;
	double now;
	char *err;
	size_t err_size;
};

static int rerun_abandon(const struct bci_store_job *job, void *ctx)
{
	struct overdue *o = ctx;

	if (!job->kind || strcmp(job->kind, "confirm") || !strcmp(job->state, "done") ||
	    !strcmp(job->state, "abandoned"))
		return 0;
	return bci_store_job_end(o->s->store, job->key, "abandoned", o->note, 0, o->err,
				 o->err_size);
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

/*
 * Whether @build's reruns are still awaited at @now: 1 yes (before their
 * deadline: the inventory's rerun-budget of the fast tier's time, from its
 * first job queued to its reruns queued), 0 no (none, all back, or the
 * late ones abandoned now).
 */
static int reruns_awaited(struct bci_schedule *s, const char *build,
			  const struct tier_progress *p, double now, char *err, size_t err_size)
{
	double tier = p->reruns_queued - p->first_queued, budget, deadline;
	char note[200];

	if (!p->reruns_open)
		return 0;
	budget = (tier > 0 ? tier : 0) * (double)s->inventory->rerun_budget / 100;
	deadline = p->reruns_queued + budget;
	if (now < deadline)
		return 1;
	snprintf(note, sizeof(note), "not back within the rerun budget (%lu%% of the fast tier's"
		 " %.0f s: %.0f s)", s->inventory->rerun_budget, tier, budget);
	struct overdue o = { s, note, now, err, err_size };
	int ret = bci_store_jobs_each(s->store, build, "fast", rerun_abandon, &o, err, err_size);

	if (ret < 0)
		return ret;
	bci_schedule_say(s, "%s: %d of %d rerun(s) %s; judged without them", build,
			 p->reruns_open, p->reruns, note);
	return 0;
}

/* Decides @build's full tier if its fast tier (and the reruns of its possible new issues) are done. */
static int gate_one(struct bci_schedule *s, const char *build, double now, char *err,
		    size_t err_size)
{
	struct tier_progress progress = { .s = s, .err = err, .err_size = err_size };
	struct bci_schedule_issues issues = { 0 };
	struct build_tree tree = { "" };
	enum bci_full_rule rule;
	bool fixed;
	int ret, found;

	ret = bci_store_jobs_each(s->store, build, "fast", job_progress, &progress, err, err_size);
	if (ret < 0)
		return ret;
	if ((ret = bci_store_build_get(s->store, build, build_row, &tree, err, err_size)) < 0)
		return ret;
	rule = bci_inventory_full_rule(s->inventory, tree.tree);
	fixed = rule != BCI_FULL_GATED;
	/* Without reruns (or a judge to find what to rerun) a fixed rule decides at once. */
	if (rule == BCI_FULL_NEVER && (!s->inventory->reruns || !s->judge)) {
		bci_schedule_say(s, "%s: full tier not run (tree %s: full = never)", build, tree.tree);
		return bci_store_gate_put(s->store, build, "skipped: the tree never runs it", err,
					  err_size);
	}
	/* Always: the full tier at once; with reruns, its decision after them. */
	if (rule == BCI_FULL_ALWAYS) {
		const char *decision = s->inventory->reruns && s->judge
				       ? NULL : "queued: the tree always runs it";

		if ((ret = bci_store_jobs_each(s->store, build, "full", NULL, NULL, err,
					       err_size)) < 0)
			return ret;
		if (!ret)
			ret = bci_schedule_queue_tier(s, build, "full", decision, err, err_size);
		else if (decision)
			ret = bci_store_gate_put(s->store, build, decision, err, err_size);
		if (ret < 0 || decision)
			return ret < 0 ? ret : 0;
	}
	if (progress.pending)
		return 0;
	if (!s->judge) {
		bci_schedule_say(s, "%s: fast tier done; no judge of possible new issues is wired: full tier waits",
		    build);
		return 0;
	}
	if ((ret = reruns_awaited(s, build, &progress, now, err, err_size)) != 0)
		return ret < 0 ? ret : 0;
	found = s->judge(s->store, build, s->judge_ctx, progress.reruns ? NULL : &issues, err,
			 err_size);
	if (found == -ENOENT && fixed) {
		/* No run of the fast tier came back: nothing to rerun, and the decision is the tree's. */
		bci_schedule_say(s, "%s: nothing to rerun: %s", build, err);
		found = 0;
	} else if (found == -ENOENT) {
		/* Nothing to judge: the full tier is not run on nothing, and the reply is not held. */
		bci_schedule_say(s, "%s: no run of its fast tier came back (%s): full tier not queued",
				 build, err);
		return bci_store_gate_put(s->store, build, "skipped: no run of the fast tier came back",
					  err, err_size);
	}
	if (found > 0 && !progress.reruns && s->inventory->reruns) {
		ret = bci_schedule_confirm_queue(s, build, &issues, err, err_size);
		bci_schedule_issues_free(&issues);
		if (ret == -ENAMETOOLONG) {
			/* A name too long for the reruns' run ids: judged without them, said. */
			bci_schedule_say(s, "%s: not rerun: %s", build, err);
			ret = 0;
		}
		if (ret < 0)
			return ret;
		if (ret > 0) {
			bci_schedule_say(s, "%s: %d possible new issue(s) in the fast tier: rerun"
					 " before the full tier is decided", build, found);
			return 0;
		}
	}
	bci_schedule_issues_free(&issues);
	if (found < 0)
		return found;
	if (rule == BCI_FULL_NEVER) {
		bci_schedule_say(s, "%s: full tier not run (tree %s: full = never)%s", build,
				 tree.tree, progress.reruns ? ", after the reruns" : "");
		return bci_store_gate_put(s->store, build, "skipped: the tree never runs it", err,
					  err_size);
	}
	if (rule == BCI_FULL_ALWAYS) {
		bci_schedule_say(s, "%s: full tier run (tree %s: full = always), decided%s", build,
				 tree.tree, progress.reruns ? " after the reruns" : "");
		return bci_store_gate_put(s->store, build, "queued: the tree always runs it", err,
					  err_size);
	}
	if (found) {
		bci_schedule_say(s, "%s: fast tier found a possible new issue%s: full tier not queued",
				 build, progress.reruns ? ", its reruns did not clear it" : "");
		return bci_store_gate_put(s->store, build,
					  progress.reruns ? "skipped: the fast tier found a possible"
							    " new issue, its reruns did not clear it"
							  : "skipped: the fast tier found a possible"
							    " new issue", err, err_size);
	}
	ret = bci_schedule_queue_tier(s, build, "full",
				      progress.reruns ? "queued: the reruns of the fast tier's"
							" possible new issues passed"
						      : "queued: the fast tier found no possible new"
							" issue", err, err_size);
	return ret < 0 ? ret : 0;
}

int bci_schedule_gates(struct bci_schedule *s, double now, char *err, size_t err_size)
{
	struct names builds = { 0 };
	int ret, first = 0;

	ret = bci_store_builds_ungated(s->store, name_add, &builds, err, err_size);
	/* One build's fault is said and left: the others' gates are decided. */
	for (size_t i = 0; ret >= 0 && i < builds.count; i++) {
		int one = gate_one(s, builds.v[i], now, err, err_size);

		if (one < 0) {
			bci_schedule_say(s, "%s: its gate: %s", builds.v[i], err);
			first = first ? first : one;
		}
	}
	if (ret >= 0)
		ret = first;
	for (size_t i = 0; i < builds.count; i++)
		free(builds.v[i]);
	free(builds.v);
	return ret < 0 ? ret : 0;
}
