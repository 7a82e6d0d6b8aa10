// SPDX-License-Identifier: MIT
/* Sorting lists that usually come sorted (sort.h). */
#include "sort.h"

#include <stdlib.h>

void bci_sort(void *base, size_t count, size_t size, int (*compare)(const void *, const void *))
{
	const char *at = base;

	for (size_t i = 1; i < count; i++, at += size)
		if (compare(at, at + size) > 0) {
			qsort(base, count, size, compare);
			return;
		}
}
