/* SPDX-License-Identifier: MIT */
/*
 * Splitting a testlist across the machines of a shard group by the tests'
 * past durations: longest first, each onto the least loaded shard (ties: the
 * lowest shard), a test without history counted as the mean of those with
 * one (1 s when none has one), so with no history at all the split is even
 * by count. Deterministic: equal durations keep the testlist's order, and
 * each shard lists its tests in the testlist's order.
 */
#ifndef BCI_SCHEDULE_SPLIT_H
#define BCI_SCHEDULE_SPLIT_H

#include <stddef.h>

/*
 * @durations[i] is test i's past duration in seconds, or < 0 when unknown.
 * Fills @shard_of[i] (0..@shards-1) and, when @loads is not NULL, each
 * shard's expected seconds. 0, or -EINVAL when @shards is 0.
 */
int bci_split_assign(const double *durations, size_t count, unsigned shards, unsigned *shard_of,
		     double *loads);

#endif
