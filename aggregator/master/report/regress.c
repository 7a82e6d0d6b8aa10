// SPDX-License-Identifier: MIT
/*
 * The report of a build (report.h): the build's runs by machine, each
 * machine read (baseline.c) then judged (judge.c, latency.c), the machines
 * on two threads when a second connection is allowed, the two halves merged
 * and the changes sorted. compare.h says which file does what.
 */
#include "compare.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run_collect(const struct bci_store_run *run, void *ctx)
{
	return compare_runs_push(ctx, run);
}

static int dup_or_null(char **to, const char *from)
{
	*to = from ? strdup(from) : NULL;
	return from && !*to ? -ENOMEM : 0;
}

/* One machine's runs: a stretch of the build's runs. */
struct stretch {
	size_t first, end;
};

/* The machine of @stretch read, judged, its results in the build handed to the seen hook. */
static int machine_compare(struct compare *c, const struct compare_runs *runs,
			   const struct stretch *stretch)
{
	struct compare_machine machine = {
		.name = runs->v[stretch->first].machine, .build_runs = runs,
		.first = stretch->first, .end = stretch->end,
	};
	int ret = compare_machine_read(c, &machine);

	if (ret >= 0)
		ret = compare_machine_judge(c, &machine);
	if (ret >= 0 && c->options->seen)
		ret = compare_seen_give(c, &machine);
	if (ret >= 0)
		ret = compare_latency_judge(c, &machine);
	compare_machine_release(&machine);
	return ret;
}

static int change_order(const void *a, const void *b)
{
	const struct bci_report_change *x = a, *y = b;
	int d = (int)x->verdict - (int)y->verdict;

	if (!d)
		d = strcmp(x->test, y->test);
	return d ? d : strcmp(x->machine, y->machine);
}

/* The report's changes and latencies, let go. */
static void judgements_free(struct bci_report *r)
{
	for (size_t i = 0; i < r->n_changes; i++) {
		free(r->changes[i].test);
		free(r->changes[i].machine);
		free(r->changes[i].run_id);
		free(r->changes[i].group);
	}
	free(r->changes);
	for (size_t i = 0; i < r->n_suspend; i++)
		free(r->suspend[i].machine);
	free(r->suspend);
}

void bci_report_free(struct bci_report *r)
{
	if (!r)
		return;
	free(r->build);
	free(r->tree);
	free(r->commit);
	free(r->tier);
	free(r->base);
	free(r->base_tree);
	free(r->series_title);
	free(r->message_id);
	judgements_free(r);
	free(r);
}

int bci_report_failed(const struct bci_report *r)
{
	if (r->counts[BCI_VERDICT_NEW])
		return 1;
	for (size_t i = 0; i < r->n_suspend; i++)
		if (r->suspend[i].regression)
			return 1;
	return 0;
}

/* ---- the machines on two threads ---- */

/*
 * The second half of the machines, compared on a thread with its own
 * connection into a report of its own, merged into the whole after.
 */
struct half {
	struct compare c;
	struct bci_report part;
	const struct compare_runs *runs;
	const struct stretch *stretches;
	size_t n;
	size_t failed;		/* the stretch that failed */
	int ret;
	char err[1024];
	pthread_t thread;
	bool started;
};

/* The machines of @stretches compared by @c; *@failed: the stretch that failed. */
static int machines_compare(struct compare *c, const struct compare_runs *runs,
			    const struct stretch *stretches, size_t n, size_t *failed)
{
	int ret = 0;

	for (size_t i = 0; i < n && ret >= 0; i++) {
		ret = machine_compare(c, runs, &stretches[i]);
		*failed = i;
	}
	return ret;
}

static void *half_run(void *arg)
{
	struct half *h = arg;
	struct bci_store *store = NULL;

	h->ret = bci_store_open(h->c.options->store_url, h->c.options->data_dir, &store, h->err,
				sizeof(h->err));
	if (h->ret >= 0) {
		h->c.store = store;
		h->ret = machines_compare(&h->c, h->runs, h->stretches, h->n, &h->failed);
	}
	bci_store_close(store);
	return NULL;
}

/* The half's changes and latencies after the first half's (its machines come after). */
static int half_merge(struct bci_report *r, struct half *h)
{
	struct bci_report *p = &h->part;
	struct bci_report_change *changes;
	struct bci_report_suspend *suspend;

	changes = realloc(r->changes, (r->n_changes + p->n_changes + 1) * sizeof(*changes));
	if (!changes)
		return -ENOMEM;
	r->changes = changes;
	suspend = realloc(r->suspend, (r->n_suspend + p->n_suspend + 1) * sizeof(*suspend));
	if (!suspend)
		return -ENOMEM;
	r->suspend = suspend;
	/* A half without changes or latencies has NULL arrays, which memcpy may not be given. */
	if (p->n_changes)
		memcpy(r->changes + r->n_changes, p->changes, p->n_changes * sizeof(*changes));
	r->n_changes += p->n_changes;
	if (p->n_suspend)
		memcpy(r->suspend + r->n_suspend, p->suspend, p->n_suspend * sizeof(*suspend));
	r->n_suspend += p->n_suspend;
	free(p->changes);
	free(p->suspend);
	p->changes = NULL;
	p->suspend = NULL;
	p->n_changes = p->n_suspend = 0;
	for (size_t i = 0; i < sizeof(r->counts) / sizeof(r->counts[0]); i++)
		r->counts[i] += p->counts[i];
	r->results += p->results;
	r->grouped += p->grouped;
	return 0;
}

/* What the half holds that the merge did not take. */
static void half_release(struct half *h)
{
	judgements_free(&h->part);
	compare_release(&h->c);
}

static int base_tree_copy(const struct bci_store_build *build, void *ctx)
{
	return dup_or_null(ctx, build->tree);
}

int bci_report_build(struct bci_store *store, const char *build,
		     const struct bci_report_options *options, struct bci_report **report,
		     char *err, size_t err_size)
{
	struct compare c = { .store = store, .options = options, .err = err, .err_size = err_size };
	struct bci_store_build *b = NULL;
	struct compare_runs runs = { 0 };
	struct compare_reruns reruns = { 0 };
	struct stretch *stretches = NULL;
	struct half *half = NULL;
	size_t n_mine, failed = 0;
	struct bci_report *r;
	int ret;

	if (options->window < 1) {
		snprintf(err, err_size, "the baseline window must be at least one run");
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	c.report = r;
	r->window = options->window;
	ret = bci_store_build_read(store, build, &b, err, err_size);
	if (ret < 0)
		goto fail;
	c.build = b;
	if (dup_or_null(&r->build, b->name) || dup_or_null(&r->tree, b->tree) ||
	    dup_or_null(&r->commit, b->commit) || dup_or_null(&r->tier, b->tier) ||
	    dup_or_null(&r->base, b->base) || dup_or_null(&r->series_title, b->series_title) ||
	    dup_or_null(&r->message_id, b->message_id)) {
		ret = -ENOMEM;
		goto fail;
	}
	if (b->base)
		ret = bci_store_build_get(store, b->base, base_tree_copy, &r->base_tree, err,
					  err_size);
	else
		ret = dup_or_null(&r->base_tree, b->tree);
	if (ret < 0)
		goto fail;
	if (!r->base_tree) {
		snprintf(err, err_size, "build %s: its base has no tree", build);
		ret = -EINVAL;
		goto fail;
	}
	if ((ret = compare_reruns_read(store, build, &reruns, err, err_size)) < 0)
		goto fail;
	ret = bci_store_build_runs_each(store, build, run_collect, &runs, err, err_size);
	if (ret < 0)
		goto fail;
	if (!runs.n) {
		snprintf(err, err_size, "build %s has no run", build);
		ret = -ENOENT;
		goto fail;
	}
	/* Runs come by machine then age: each machine's runs are one stretch. */
	stretches = calloc(runs.n, sizeof(*stretches));
	if (!stretches) {
		ret = -ENOMEM;
		goto fail;
	}
	for (size_t first = 0, end; first < runs.n; first = end) {
		for (end = first + 1; end < runs.n && !strcmp(runs.v[end].machine, runs.v[first].machine);
		     end++)
			;
		stretches[r->machines++] = (struct stretch){ first, end };
	}
	n_mine = (size_t)r->machines;
	/* The second half of the machines on a thread, when a second connection is allowed. */
	if (options->threads > 1 && r->machines > 1) {
		size_t mine = ((size_t)r->machines + 1) / 2;

		half = calloc(1, sizeof(*half));
		if (!half) {
			ret = -ENOMEM;
			goto fail;
		}
		*half = (struct half){ .runs = &runs, .stretches = stretches + mine,
				       .n = (size_t)r->machines - mine };
		/* Its store opened on the thread; read only there: the build, its tree, the options. */
		half->c = (struct compare){ .options = options, .build = b, .report = &half->part,
					    .err = half->err, .err_size = sizeof(half->err) };
		half->part.base_tree = r->base_tree;
		half->started = pthread_create(&half->thread, NULL, half_run, half) == 0;
		if (half->started)
			n_mine = mine;
	}
	ret = machines_compare(&c, &runs, stretches, n_mine, &failed);
	if (half && half->started) {
		pthread_join(half->thread, NULL);
		half->started = false;
		if (ret >= 0 && half->ret < 0) {
			ret = half->ret;
			failed = n_mine + half->failed;
			snprintf(err, err_size, "%s", half->err);
		}
		if (ret >= 0)
			ret = half_merge(r, half);
	}
	if (ret < 0) {
		if (ret == -EPROTO)
			snprintf(err, err_size, "machine %s: a stored result has an unknown status",
				 runs.v[stretches[failed].first].machine);
		goto fail;
	}
	if (half)
		half_release(half);
	free(half);
	half = NULL;
	free(stretches);
	stretches = NULL;
	if ((ret = compare_reruns_judge(store, r, &reruns, err, err_size)) < 0)
		goto fail;
	compare_reruns_release(&reruns);
	/* No change: no array (qsort's NULL is undefined even for none). */
	if (r->n_changes > 1)
		qsort(r->changes, r->n_changes, sizeof(*r->changes), change_order);
	compare_runs_release(&runs);
	compare_release(&c);
	free(b);
	*report = r;
	return 0;
fail:
	if (half)
		half_release(half);
	free(half);
	free(stretches);
	compare_reruns_release(&reruns);
	compare_runs_release(&runs);
	compare_release(&c);
	free(b);
	bci_report_free(r);
	return ret;
}
