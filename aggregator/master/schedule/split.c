// SPDX-License-Identifier: MIT
/* The duration split (split.h): longest processing time first. */
#include "split.h"

#include <errno.h>
#include <stdlib.h>

struct item {
	double seconds;
	size_t index;
};

/* Longest first; equal ones in testlist order, so the result never depends on qsort's whims. */
static int by_duration(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->seconds != y->seconds)
		return x->seconds > y->seconds ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

int bci_split_assign(const double *durations, size_t count, unsigned shards, unsigned *shard_of,
		     double *loads)
{
	struct item *items;
	double *load, known_sum = 0, fallback = 1;
	size_t known = 0;

	if (!shards)
		return -EINVAL;
	items = calloc(count ? count : 1, sizeof(*items));
	load = calloc(shards, sizeof(*load));
	if (!items || !load) {
		free(items);
		free(load);
		return -ENOMEM;
	}
	for (size_t i = 0; i < count; i++)
		if (durations[i] >= 0) {
			known_sum += durations[i];
			known++;
		}
	if (known)
		fallback = known_sum / (double)known;
	for (size_t i = 0; i < count; i++)
		items[i] = (struct item){ durations[i] >= 0 ? durations[i] : fallback, i };
	qsort(items, count, sizeof(*items), by_duration);
	for (size_t i = 0; i < count; i++) {
		unsigned best = 0;

		for (unsigned s = 1; s < shards; s++)
			if (load[s] < load[best])
				best = s;
		shard_of[items[i].index] = best;
		load[best] += items[i].seconds;
	}
	if (loads)
		for (unsigned s = 0; s < shards; s++)
			loads[s] = load[s];
	free(items);
	free(load);
	return 0;
}
