/* SPDX-License-Identifier: MIT */
/*
 * Sorting lists that usually come sorted: a run's manifest and archive are
 * written in path order by collect, so one pass that finds them in order
 * saves qsort()'s n log n comparisons of 40k paths per ingest. And the one
 * order of machine names wherever they are listed (bci_natural_compare()).
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

/*
 * Orders names as people number machines: a run of digits compares by its
 * value (big-2 before big-10), anything else byte by byte. Digits equal in
 * value compare by fewer leading zeros first (a1 before a01), so two names
 * compare 0 only when they are the same string: a total order for qsort()
 * and bsearch(). Returns < 0, 0 or > 0 as strcmp() does.
 */
int bci_natural_compare(const char *a, const char *b);
/* bci_natural_compare() of two `const char *` elements, for qsort()/bci_sort(). */
int bci_natural_compare_ptr(const void *a, const void *b);

#endif
