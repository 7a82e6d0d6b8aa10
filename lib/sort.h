/* SPDX-License-Identifier: MIT */
/*
 * Sorting lists that usually come sorted: a run's manifest and archive are
 * written in path order by collect, so one pass that finds them in order
 * saves qsort()'s n log n comparisons of 40k paths per ingest.
 */
#ifndef BCI_SORT_H
#define BCI_SORT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * qsort(@base, @count, @size, @compare), unless one pass finds it already in
 * order, or in two ordered parts (an archive's manifest.json comes first),
 * which are merged.
 */
void bci_sort(void *base, size_t count, size_t size, int (*compare)(const void *, const void *));

#endif
