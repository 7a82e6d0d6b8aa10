// SPDX-License-Identifier: MIT
/*
 * A machine's suspend+resume latency in the build against its baseline
 * (compare.h): the median of the build's cycles is a regression when it is
 * beyond the slowest cycle of the baseline's runs. A cycle whose latency is
 * unknown does not count.
 */
#include "compare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct latencies {
	double *v;
	size_t n, cap;
};

static int latency_add(const struct bci_store_suspend *cycle, void *ctx)
{
	struct latencies *l = ctx;

	if (cycle->latency < 0)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		double *grown = realloc(l->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n++] = cycle->latency;
	return 0;
}

/* The latencies of the cycles of runs @runs[0 .. @n) added to @l. */
static int latencies_read(struct compare *c, const struct compare_run *runs, size_t n,
			  struct latencies *l)
{
	int ret = 0;

	for (size_t i = 0; i < n && ret >= 0; i++)
		ret = bci_store_suspends_each(c->store, runs[i].key, latency_add, l, c->err,
					      c->err_size);
	return ret;
}

static int double_order(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), double_order);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int compare_latency_judge(struct compare *c, const struct compare_machine *machine)
{
	struct bci_report *r = c->report;
	struct latencies now = { 0 }, before = { 0 };
	struct bci_report_suspend *grown, *s;
	int ret = latencies_read(c, machine->build_runs->v + machine->first,
				 machine->end - machine->first, &now);

	if (ret >= 0)
		ret = latencies_read(c, machine->baseline.v, machine->baseline.n, &before);
	if (ret < 0 || !now.n)
		goto out;
	grown = realloc(r->suspend, (r->n_suspend + 1) * sizeof(*grown));
	if (!grown) {
		ret = -ENOMEM;
		goto out;
	}
	r->suspend = grown;
	s = &grown[r->n_suspend];
	*s = (struct bci_report_suspend){ .machine = strdup(machine->name), .cycles = (int)now.n,
					  .median = median(now.v, now.n),
					  .baseline_cycles = (int)before.n };
	if (!s->machine) {
		ret = -ENOMEM;
		goto out;
	}
	r->n_suspend++;
	if (before.n) {
		qsort(before.v, before.n, sizeof(*before.v), double_order);
		s->baseline_min = before.v[0];
		s->baseline_max = before.v[before.n - 1];
		s->regression = s->median > s->baseline_max;
	}
out:
	free(now.v);
	free(before.v);
	return ret;
}
