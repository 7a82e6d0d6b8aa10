// SPDX-License-Identifier: MIT
/*
 * Taking a machine out of the schedule (internal.h). Every way out comes
 * here: recovery's power cycles used up or a power fault (recovery.c), the
 * machine's own fault note (fault.c), a re-deploy given up (deploy.c).
 *
 * A machine out runs nothing until a person puts it back, and others wait on
 * some of its jobs: a bisection's step ends only once all its runs ended,
 * and the reply waits for the reruns of the possible new issues (up to their
 * budget). So each of its confirm and bisect jobs not ended goes to another
 * machine of its shard group in the schedule (the group's machines are
 * duplicates: the same tests mean the same there), the one with the fewest
 * jobs queued; with none to go to, it is abandoned, its note saying why, so
 * the step or the gate goes on with what came back. A tier's own jobs stay:
 * they run when the machine is back (a shard group's full tier is split
 * across its machines by name).
 */
#include "internal.h"

#include "../names.h"
#include "../store/store.h"
#include "message.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A job of the machine taken out that others wait on, copied out of the store's walk. */
struct waited {
	int64_t key;
	char *kind, *run_id, *build;
	int boots;
	double booted;
};

struct waited_jobs {
	struct waited *v;
	size_t n;
};

static int waited_add(const struct bci_store_job *job, void *ctx)
{
	struct waited_jobs *w = ctx;
	struct waited *grown;

	if (!job->kind || !strcmp(job->state, "done") || !strcmp(job->state, "abandoned"))
		return 0;
	grown = realloc(w->v, (w->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	w->v = grown;
	grown[w->n] = (struct waited){ job->key, strdup(job->kind), strdup(job->run_id),
				       strdup(job->build), job->boots, job->booted };
	if (!grown[w->n].kind || !grown[w->n].run_id || !grown[w->n].build) {
		free(grown[w->n].kind);
		free(grown[w->n].run_id);
		free(grown[w->n].build);
		return -ENOMEM;
	}
	w->n++;
	return 0;
}

static void waited_free(struct waited_jobs *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].kind);
		free(w->v[i].run_id);
		free(w->v[i].build);
	}
	free(w->v);
}

static int open_count(const struct bci_store_job *job, void *ctx)
{
	*(int *)ctx += !strcmp(job->state, "queued") || !strcmp(job->state, "booted");
	return 0;
}

/*
 * The machine of @from's shard group in the schedule with the fewest jobs
 * queued (the first in the inventory of those): 1 with it in *@to, 0 when
 * there is none, -errno.
 */
static int peer_pick(struct bci_schedule *s, const struct bci_inventory_machine *from,
		     const char **to, char *err, size_t err_size)
{
	int fewest = -1;

	*to = NULL;
	for (size_t i = 0; from->shard_group && i < s->inventory->machine_count; i++) {
		const struct bci_inventory_machine *m = &s->inventory->machines[i];
		int queued = 0, ret;

		if (m == from || !m->shard_group || strcmp(m->shard_group, from->shard_group) ||
		    bci_schedule_machine_out(s, m->name))
			continue;
		ret = bci_store_machine_jobs_each(s->store, m->name, open_count, &queued, err,
						  err_size);
		if (ret < 0)
			return ret;
		if (fewest < 0 || queued < fewest) {
			fewest = queued;
			*to = m->name;
		}
	}
	return *to != NULL;
}

/*
 * @run_id as @to runs it: @from's name, where it is one of the run id's
 * dash-separated words (the last such), becomes @to's; then, when @to has a
 * job of that run id already (the same build's reruns), it ends -r2, -r3 ...
 * as a tier queued again does. 0, -ENAMETOOLONG, -EEXIST, -errno.
 */
static int run_id_for(struct bci_schedule *s, const char *run_id, const char *from,
		      const char *to, char *out, size_t size, char *err, size_t err_size)
{
	char base[BCI_MANIFEST_WORD_MAX + 1];
	size_t len = strlen(from);
	const char *named = NULL;
	int n;

	for (const char *p = strstr(run_id, from); p; p = strstr(p + 1, from))
		if (p > run_id && p[-1] == '-' && (p[len] == '-' || !p[len]))
			named = p;
	n = named ? snprintf(base, sizeof(base), "%.*s%s%s", (int)(named - run_id), run_id, to,
			     named + len)
		  : snprintf(base, sizeof(base), "%s", run_id);
	if (n < 0 || (size_t)n >= sizeof(base))
		goto too_long;
	for (unsigned again = 1; again <= BCI_SCHEDULE_MAX_RERUNS + 1; again++) {
		int ret;

		n = again == 1 ? snprintf(out, size, "%s", base)
			       : snprintf(out, size, "%s-r%u", base, again);
		if (n < 0 || (size_t)n >= size || !bci_name_run_id_ok(out))
			goto too_long;
		ret = bci_store_machine_job_get(s->store, to, out, NULL, NULL, err, err_size);
		if (ret <= 0)
			return ret;
	}
	bci_message(err, err_size, "%s already has run id %s %d times", to, base,
		    BCI_SCHEDULE_MAX_RERUNS + 1);
	return -EEXIST;
too_long:
	bci_message(err, err_size, "run id %s is too long to move to %s", run_id, to);
	return -ENAMETOOLONG;
}

/* Abandons @job of @machine taken out, @why its note. */
static int job_abandon(struct bci_schedule *s, const char *machine, const struct waited *job,
		       const char *why, char *err, size_t err_size)
{
	char note[300];
	int ret;

	bci_message(note, sizeof(note), "machine %s taken out; %s", machine, why);
	if ((ret = bci_store_job_end(s->store, job->key, "abandoned", note, 0, err, err_size)) < 0)
		return ret;
	bci_schedule_say(s, "%s: taken out: %s job %s of %s abandoned: %s", machine, job->kind,
			 job->run_id, job->build, note);
	return 0;
}

/* @job of machine @from, taken out, moved to the fewest queued of its group, or abandoned. */
static int job_move(struct bci_schedule *s, const struct bci_inventory_machine *from,
		    const struct waited *job, char *err, size_t err_size)
{
	char run_id[BCI_MANIFEST_WORD_MAX + 1], note[300], why[200];
	const char *to;
	int ret;

	/* Its run came in (the tick has not seen it yet): it has ended, nothing to move. */
	if ((ret = bci_schedule_run_uploaded(s, from->name, job->run_id, err, err_size)) != 0)
		return ret < 0 ? ret
			       : bci_store_job_update(s->store, job->key, "done", job->boots,
						      job->booted, err, err_size);
	if (!from->shard_group)
		return job_abandon(s, from->name, job, "it is in no shard group to move the job to",
				   err, err_size);
	if ((ret = peer_pick(s, from, &to, err, err_size)) < 0)
		return ret;
	if (!ret) {
		snprintf(why, sizeof(why), "no other machine of group %s in the schedule",
			 from->shard_group);
		return job_abandon(s, from->name, job, why, err, err_size);
	}
	ret = run_id_for(s, job->run_id, from->name, to, run_id, sizeof(run_id), err, err_size);
	if (ret == -ENAMETOOLONG || ret == -EEXIST) {
		snprintf(why, sizeof(why), "%s", err);
		return job_abandon(s, from->name, job, why, err, err_size);
	}
	if (ret < 0)
		return ret;
	bci_message(note, sizeof(note), "moved from %s (taken out of the schedule), run id %s there",
		    from->name, job->run_id);
	if ((ret = bci_store_job_move(s->store, job->key, to, run_id, note, err, err_size)) < 0)
		return ret;
	bci_schedule_say(s, "%s: taken out: %s job %s of %s moved to %s (group %s) as %s",
			 from->name, job->kind, job->run_id, job->build, to, from->shard_group,
			 run_id);
	return 0;
}

int bci_schedule_take_out(struct bci_schedule *s, const struct bci_store_machine_state *state,
			  char *err, size_t err_size)
{
	const struct bci_inventory_machine *m = bci_inventory_by_name(s->inventory, state->machine);
	struct bci_store_machine_state out = *state;
	struct waited_jobs jobs = { 0 };
	int ret;

	out.state = "out";
	if ((ret = bci_store_machine_state_put(s->store, &out, err, err_size)) < 0)
		return ret;
	if (!m)
		return 0;
	ret = bci_store_machine_jobs_each(s->store, m->name, waited_add, &jobs, err, err_size);
	for (size_t i = 0; ret >= 0 && i < jobs.n; i++)
		ret = job_move(s, m, &jobs.v[i], err, err_size);
	waited_free(&jobs);
	return ret < 0 ? ret : 0;
}
