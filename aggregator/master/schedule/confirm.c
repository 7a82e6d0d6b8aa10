// SPDX-License-Identifier: MIT
/*
 * The reruns of a fast tier's possible new issues (schedule.h): a test that
 * regressed on a machine is run again, alone with the others that regressed
 * beside it, the inventory's reruns times on that machine and on another of
 * its shard group, so the report can tell a regression (it fails again
 * everywhere) from a flake (it passes again somewhere). Each rerun is a job
 * of its own (kind confirm), one boot each: a test that panics the kernel
 * takes only its own rerun down. The scheduler hands them out before any
 * tier's jobs. A bisection's step is the same kind of job (kind bisect):
 * only the regressed tests, on the machines where they regressed.
 */
#include "internal.h"

#include "../names.h"
#include "../store/store.h"
#include "message.h"
#include "strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bci_schedule_issues_add(struct bci_schedule_issues *issues, const char *test,
			    const char *machine)
{
	struct bci_schedule_issue *grown = realloc(issues->v, (issues->n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	issues->v = grown;
	grown[issues->n] = (struct bci_schedule_issue){ strdup(test), strdup(machine) };
	if (!grown[issues->n].test || !grown[issues->n].machine) {
		free(grown[issues->n].test);
		free(grown[issues->n].machine);
		return -ENOMEM;
	}
	issues->n++;
	return 0;
}

void bci_schedule_issues_free(struct bci_schedule_issues *issues)
{
	for (size_t i = 0; i < issues->n; i++) {
		free(issues->v[i].test);
		free(issues->v[i].machine);
	}
	free(issues->v);
	issues->v = NULL;
	issues->n = 0;
}

/* The place an issue's reruns are planned for: a shard group, or a machine without one. */
struct place {
	const char *group;		/* the inventory's; NULL: a lone machine */
	struct bci_strv tests;		/* sorted, once each */
	struct bci_strv machines;	/* where the issues appeared, in inventory order */
};

static int strv_add_once(struct bci_strv *v, const char *s)
{
	return bci_strv_contains(v, s) ? 0 : bci_strv_add(v, s);
}

static int text_order(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The issues sorted into places: 0, -ENOMEM. */
static int places_plan(struct bci_schedule *s, const struct bci_schedule_issues *issues,
		       struct place **out, size_t *n_out)
{
	struct place *places = NULL;
	size_t n = 0;
	int ret = 0;

	for (size_t i = 0; i < issues->n && ret >= 0; i++) {
		const struct bci_inventory_machine *m =
			bci_inventory_by_name(s->inventory, issues->v[i].machine);
		struct place *p = NULL;

		if (!m) {
			bci_schedule_say(s, "%s: %s is not in the inventory: not rerun there",
					 issues->v[i].test, issues->v[i].machine);
			continue;
		}
		for (size_t k = 0; k < n && !p; k++)
			if (m->shard_group ? places[k].group && !strcmp(places[k].group, m->shard_group)
					   : !places[k].group && !strcmp(places[k].machines.items[0], m->name))
				p = &places[k];
		if (!p) {
			struct place *grown = realloc(places, (n + 1) * sizeof(*grown));

			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			places = grown;
			p = &places[n++];
			*p = (struct place){ .group = m->shard_group };
		}
		if ((ret = strv_add_once(&p->tests, issues->v[i].test)) >= 0)
			ret = strv_add_once(&p->machines, m->name);
	}
	for (size_t k = 0; k < n; k++)
		if (places[k].tests.count > 1)
			qsort(places[k].tests.items, places[k].tests.count, sizeof(char *), text_order);
	*out = places;
	*n_out = n;
	return ret < 0 ? ret : 0;
}

static void places_free(struct place *places, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		bci_strv_free(&places[k].tests);
		bci_strv_free(&places[k].machines);
	}
	free(places);
}

/* Another machine of @p's group in the schedule, its first in the inventory; NULL: none. */
static const char *group_peer(struct bci_schedule *s, const struct place *p)
{
	for (size_t i = 0; p->group && i < s->inventory->machine_count; i++) {
		const struct bci_inventory_machine *m = &s->inventory->machines[i];
		if (m->shard_group && !strcmp(m->shard_group, p->group) &&
		    !bci_strv_contains(&p->machines, m->name) &&
		    !bci_schedule_machine_out(s, m->name))
			return m->name;
	}
	return NULL;
}

/* @reruns jobs of @testlist on @machine: run ids BUILD-confirm-1 ... */
static int machine_queue(struct bci_schedule *s, const char *build, const char *machine,
			 const char *testlist, char *err, size_t err_size)
{
	char run_id[BCI_MANIFEST_WORD_MAX + 1];
	struct bci_store_job job = {
		.machine = machine, .build = build, .tier = "fast", .kind = "confirm", .shard = 0,
		.shards = 1, .testlist = testlist, .run_id = run_id,
	};
	int ret;

	for (unsigned k = 1; k <= s->inventory->reruns; k++) {
		int n = snprintf(run_id, sizeof(run_id), "%s-confirm-%u", build, k);

		if (n < 0 || (size_t)n >= sizeof(run_id) || !bci_name_run_id_ok(run_id)) {
			bci_message(err, err_size, "build name %s is too long for a run id", build);
			return -ENAMETOOLONG;
		}
		if ((ret = bci_store_job_add(s->store, &job, NULL, err, err_size)) < 0)
			return ret;
	}
	return (int)s->inventory->reruns;
}

int bci_schedule_bisect_queue(struct bci_schedule *s, const char *build,
			      const struct bci_strv *machines, const char *const *testlists,
			      unsigned runs, char *err, size_t err_size)
{
	char run_id[BCI_MANIFEST_WORD_MAX + 1];
	struct bci_store_job job = {
		.build = build, .tier = "fast", .kind = "bisect", .shard = 0, .shards = 1,
		.run_id = run_id,
	};
	size_t *in = calloc(machines->count + 1, sizeof(*in)), n = 0;
	int ret = 0;

	if (!in)
		return -ENOMEM;
	for (size_t i = 0; i < machines->count; i++)
		if (testlists[i] && testlists[i][0] &&
		    !bci_schedule_machine_out(s, machines->items[i]))
			in[n++] = i;
	if (!n)
		goto out;
	if ((ret = bci_store_begin(s->store, err, err_size)) < 0)
		goto out;
	for (unsigned k = 1; k <= runs && ret >= 0; k++) {
		int len = snprintf(run_id, sizeof(run_id), "%s-bisect-%u", build, k);

		if (len < 0 || (size_t)len >= sizeof(run_id) || !bci_name_run_id_ok(run_id)) {
			bci_message(err, err_size, "build name %s is too long for a run id", build);
			ret = -ENAMETOOLONG;
			break;
		}
		job.machine = machines->items[in[(k - 1) % n]];
		job.testlist = testlists[in[(k - 1) % n]];
		ret = bci_store_job_add(s->store, &job, NULL, err, err_size);
	}
	if (ret >= 0)
		ret = bci_store_commit(s->store, err, err_size);
	if (ret < 0)
		bci_store_rollback(s->store);
	else
		ret = (int)runs;
out:
	free(in);
	return ret;
}

static int rerun_seen(const char *machine, const char *run_id, const char *state, int64_t run,
		      void *ctx)
{
	(void)machine;
	(void)run_id;
	(void)state;
	(void)run;
	(void)ctx;
	return 0;
}

int bci_schedule_confirm_queue(struct bci_schedule *s, const char *build,
			       const struct bci_schedule_issues *issues, char *err,
			       size_t err_size)
{
	struct place *places = NULL;
	size_t n = 0;
	int ret, queued = 0;

	if (!s->inventory->reruns || !issues->n)
		return 0;
	if ((ret = places_plan(s, issues, &places, &n)) < 0)
		goto out;
	if ((ret = bci_store_begin(s->store, err, err_size)) < 0)
		goto out;
	ret = bci_store_build_reruns_each(s->store, build, rerun_seen, NULL, err, err_size);
	if (ret > 0) {
		bci_message(err, err_size, "%s already has reruns of its possible new issues", build);
		ret = -EEXIST;
	}
	for (size_t k = 0; k < n && ret >= 0; k++) {
		struct place *p = &places[k];
		const char *peer = p->machines.count == 1 ? group_peer(s, p) : NULL;
		char *testlist = bci_strv_lines(&p->tests);
		size_t runners = 0;

		if (!testlist) {
			ret = -ENOMEM;
			break;
		}
		for (size_t i = 0; i <= p->machines.count && ret >= 0; i++) {
			const char *m = i < p->machines.count ? p->machines.items[i] : peer;

			if (!m || bci_schedule_machine_out(s, m))
				continue;
			ret = machine_queue(s, build, m, testlist, err, err_size);
			if (ret > 0) {
				queued += ret;
				runners++;
				bci_schedule_say(s, "%s: %zu possible new issue(s) of %s %s rerun %lu"
						 " time(s) on %s", build, p->tests.count,
						 p->group ? "group" : "machine",
						 p->group ? p->group : p->machines.items[0],
						 s->inventory->reruns, m);
			}
		}
		if (ret >= 0 && !runners)
			bci_schedule_say(s, "%s: the possible new issues of %s %s: no machine in the"
					 " schedule to rerun them", build,
					 p->group ? "group" : "machine",
					 p->group ? p->group : p->machines.items[0]);
		free(testlist);
	}
	if (ret >= 0)
		ret = bci_store_commit(s->store, err, err_size);
	if (ret < 0)
		bci_store_rollback(s->store);
	else
		ret = queued;
out:
	places_free(places, n);
	return ret;
}
