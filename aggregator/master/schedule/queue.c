// SPDX-License-Identifier: MIT
/*
 * Queueing a build's tier (schedule.h): its testlist read from the build's
 * files, a job per machine, or per shard of a group's split by past
 * durations (split.h), recorded so the same tier queued again gets the same
 * shards under run ids ending -r2, -r3 ...
 */
#include "internal.h"
#include "split.h"

#include "../names.h"
#include "../store/store.h"
#include "manifest.h"
#include "message.h"
#include "testlist.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tests {
	char **names;
	size_t count;
};

static void tests_free(struct tests *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->names[i]);
	free(t->names);
}

/* The tests of a testlist text, each line as written (trimmed), in order. */
static int tests_read(const char *origin, const char *text, size_t len, struct tests *t, char *err,
		      size_t err_size)
{
	const char *line = text, *end = text + len;
	unsigned number = 0;

	memset(t, 0, sizeof(*t));
	while (line < end) {
		const char *newline = memchr(line, '\n', (size_t)(end - line));
		size_t n = newline ? (size_t)(newline - line) : (size_t)(end - line);
		struct bci_test_name name;
		char *copy, **grown;
		int ret;

		number++;
		copy = strndup(line, n);
		if (!copy)
			goto nomem;
		while (n && (copy[n - 1] == ' ' || copy[n - 1] == '\t' || copy[n - 1] == '\r'))
			copy[--n] = '\0';
		ret = bci_testlist_parse_line(copy, &name, err, err_size);
		if (ret <= 0) {
			if (ret < 0) {
				char why[256];

				snprintf(why, sizeof(why), "%s", err);
				bci_message(err, err_size, "%s:%u: %s", origin, number, why);
				free(copy);
				tests_free(t);
				return ret;
			}
			free(copy);
		} else {
			const char *start = copy + strspn(copy, " \t");

			memmove(copy, start, strlen(start) + 1);
			grown = realloc(t->names, (t->count + 1) * sizeof(*grown));
			if (!grown) {
				free(copy);
				goto nomem;
			}
			t->names = grown;
			t->names[t->count++] = copy;
		}
		line = newline ? newline + 1 : end;
	}
	return 0;
nomem:
	tests_free(t);
	return -ENOMEM;
}

static int run_id_make(char *run_id, size_t size, const char *build, const char *tier,
		       unsigned shard, unsigned shards)
{
	int n = shards > 1 ? snprintf(run_id, size, "%s-%s-%uof%u", build, tier, shard + 1, shards)
			   : snprintf(run_id, size, "%s-%s", build, tier);

	if (n < 0 || (size_t)n >= size || !bci_name_run_id_ok(run_id))
		return -ENAMETOOLONG;
	return 0;
}

static int job_queue(struct bci_schedule *s, const char *machine, const char *build,
		     const char *tier, unsigned shard, unsigned shards, const char *testlist,
		     char *err, size_t err_size)
{
	char base[BCI_MANIFEST_WORD_MAX + 1], run_id[BCI_MANIFEST_WORD_MAX + 1];
	struct bci_store_job job = {
		.machine = machine, .build = build, .tier = tier, .shard = (int)shard,
		.shards = (int)shards, .testlist = testlist, .run_id = run_id,
	};
	int ret;

	if (run_id_make(base, sizeof(base), build, tier, shard, shards) < 0) {
		bci_message(err, err_size, "build name %s is too long for a run id", build);
		return -ENAMETOOLONG;
	}
	/*
	 * Queued again (a re-run): the same shards under the next free run id.
	 * Looked up first rather than tried: a failed INSERT would abort the
	 * whole transaction on PostgreSQL.
	 */
	for (unsigned again = 1; again <= BCI_SCHEDULE_MAX_RERUNS + 1; again++) {
		int n = again == 1 ? snprintf(run_id, sizeof(run_id), "%s", base)
				   : snprintf(run_id, sizeof(run_id), "%s-r%u", base, again);

		if (n < 0 || (size_t)n >= sizeof(run_id)) {
			bci_message(err, err_size, "build name %s is too long for a run id", build);
			return -ENAMETOOLONG;
		}
		ret = bci_store_machine_job_get(s->store, machine, run_id, NULL, NULL, err, err_size);
		if (ret < 0)
			return ret;
		if (!ret)
			return bci_store_job_add(s->store, &job, NULL, err, err_size);
	}
	bci_message(err, err_size, "%s already ran %d times on %s", base, BCI_SCHEDULE_MAX_RERUNS + 1,
		    machine);
	return -EEXIST;
}

/* Joins the tests of @t that @shard_of puts on @shard (all when @shard_of is NULL). */
static char *testlist_join(const struct tests *t, const unsigned *shard_of, unsigned shard)
{
	size_t size = 1, len = 0;
	char *text;

	for (size_t i = 0; i < t->count; i++)
		size += strlen(t->names[i]) + 1;
	text = malloc(size);
	if (!text)
		return NULL;
	for (size_t i = 0; i < t->count; i++)
		if (!shard_of || shard_of[i] == shard)
			len += (size_t)sprintf(text + len, "%s\n", t->names[i]);
	text[len] = '\0';
	return text;
}

struct recorded {
	char **machines;
	char **testlists;
	unsigned count;
};

static int split_row(const struct bci_store_split *split, void *ctx)
{
	struct recorded *r = ctx;
	char **m = realloc(r->machines, (r->count + 1) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	r->machines = m;
	m = realloc(r->testlists, (r->count + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	r->testlists = m;
	r->machines[r->count] = strdup(split->machine);
	r->testlists[r->count] = strdup(split->testlist);
	r->count++;
	return r->machines[r->count - 1] && r->testlists[r->count - 1] ? 0 : -ENOMEM;
}

static void recorded_free(struct recorded *r)
{
	for (unsigned i = 0; i < r->count; i++) {
		free(r->machines[i]);
		free(r->testlists[i]);
	}
	free(r->machines);
	free(r->testlists);
}

/*
 * The shards of @group for @build's @tier: the recorded split if there is
 * one, else a new split by past durations over @members, recorded.
 */
static int group_queue(struct bci_schedule *s, const char *build, const char *tier,
		       const char *group, const char **members, unsigned n, const struct tests *t,
		       char *err, size_t err_size)
{
	struct recorded rec = { 0 };
	unsigned *shard_of = NULL;
	double *durations = NULL, *loads = NULL;
	int ret, queued = 0;

	ret = bci_store_splits_each(s->store, build, tier, group, split_row, &rec, err, err_size);
	if (ret < 0)
		goto out;
	if (rec.count == 0) {
		shard_of = calloc(t->count ? t->count : 1, sizeof(*shard_of));
		durations = calloc(t->count ? t->count : 1, sizeof(*durations));
		loads = calloc(n, sizeof(*loads));
		if (!shard_of || !durations || !loads) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < t->count; i++) {
			durations[i] = -1;
			ret = bci_store_test_duration(s->store, t->names[i], &durations[i], err,
						      err_size);
			if (ret < 0)
				goto out;
		}
		if ((ret = bci_split_assign(durations, t->count, n, shard_of, loads)) < 0)
			goto out;
		for (unsigned k = 0; k < n; k++) {
			char *text = testlist_join(t, shard_of, k);
			struct bci_store_split split = {
				.build = build, .tier = tier, .group = group, .shard = (int)k,
				.shards = (int)n, .machine = members[k], .testlist = text,
			};

			if (!text) {
				ret = -ENOMEM;
				goto out;
			}
			ret = bci_store_split_add(s->store, &split, err, err_size);
			free(text);
			if (ret < 0)
				goto out;
			bci_schedule_say(s, "%s %s: group %s shard %u/%u on %s, about %.0f s", build, tier, group,
			    k + 1, n, members[k], loads[k]);
		}
		ret = bci_store_splits_each(s->store, build, tier, group, split_row, &rec, err,
					    err_size);
		if (ret < 0)
			goto out;
	}
	for (unsigned k = 0; k < rec.count; k++) {
		if (bci_schedule_machine_out(s, rec.machines[k]))
			bci_schedule_say(s, "%s %s: shard %u/%u of group %s: %s is out of the schedule, queued anyway"
			    " (it runs when the machine is back)", build, tier, k + 1, rec.count, group,
			    rec.machines[k]);
		ret = job_queue(s, rec.machines[k], build, tier, k, rec.count, rec.testlists[k], err,
				err_size);
		if (ret < 0)
			goto out;
		queued++;
	}
	ret = queued;
out:
	recorded_free(&rec);
	free(shard_of);
	free(durations);
	free(loads);
	return ret;
}

int bci_schedule_queue_tier(struct bci_schedule *s, const char *build, const char *tier,
			    const char *decision, char *err, size_t err_size)
{
	const struct bci_inventory *inv = s->inventory;
	bool full = !strcmp(tier, "full");
	char *text = NULL, *whole = NULL;
	const char **members = NULL;
	struct tests t = { 0 };
	size_t len;
	int ret, queued = 0;

	if (!full && strcmp(tier, "fast")) {
		bci_message(err, err_size, "tier '%s' (fast or full)", tier);
		return -EINVAL;
	}
	ret = bci_schedule_build_file_read(s, build, full ? BCI_SCHEDULE_FULL_TESTLIST : BCI_SCHEDULE_FAST_TESTLIST,
			      &text, &len, err, err_size);
	if (ret < 0)
		return ret;
	ret = tests_read(full ? BCI_SCHEDULE_FULL_TESTLIST : BCI_SCHEDULE_FAST_TESTLIST, text, len,
			 &t, err, err_size);
	free(text);
	if (ret < 0)
		return ret;
	whole = testlist_join(&t, NULL, 0);
	members = calloc(inv->machine_count + 1, sizeof(*members));
	if (!whole || !members) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = bci_store_begin(s->store, err, err_size)) < 0)
		goto out;
	/* The splits below read the tests' mean durations: the runs stored since, counted. */
	if (full && (ret = bci_store_durations_fold(s->store, err, err_size)) < 0)
		goto rollback;
	for (size_t i = 0; i < inv->machine_count; i++) {
		const struct bci_inventory_machine *m = &inv->machines[i];
		unsigned n = 0;

		/* The fast tier runs whole everywhere; a group's full tier once, split. */
		if (!full || !m->shard_group) {
			if (bci_schedule_machine_out(s, m->name))
				continue;
			ret = job_queue(s, m->name, build, tier, 0, 1, whole, err, err_size);
			if (ret < 0)
				goto rollback;
			queued++;
			continue;
		}
		/* The group's first member queues the whole group. */
		bool first = true;

		for (size_t j = 0; j < i; j++)
			if (inv->machines[j].shard_group &&
			    !strcmp(inv->machines[j].shard_group, m->shard_group))
				first = false;
		if (!first)
			continue;
		for (size_t j = i; j < inv->machine_count; j++)
			if (inv->machines[j].shard_group &&
			    !strcmp(inv->machines[j].shard_group, m->shard_group))
				members[n++] = inv->machines[j].name;
		ret = group_queue(s, build, tier, m->shard_group, members, n, &t, err, err_size);
		if (ret < 0)
			goto rollback;
		queued += ret;
	}
	if (decision && (ret = bci_store_gate_put(s->store, build, decision, err, err_size)) < 0)
		goto rollback;
	if ((ret = bci_store_commit(s->store, err, err_size)) < 0)
		goto rollback;
	bci_schedule_say(s, "%s: %s tier queued, %d job(s) of %zu test(s)", build, tier, queued, t.count);
	ret = queued;
	goto out;
rollback:
	bci_store_rollback(s->store);
out:
	free(members);
	free(whole);
	tests_free(&t);
	return ret;
}

int bci_schedule_queue(struct bci_schedule *s, const char *build, const char *tier, char *err,
		       size_t err_size)
{
	return bci_schedule_queue_tier(s, build, tier, NULL, err, err_size);
}
