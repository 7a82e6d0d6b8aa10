// SPDX-License-Identifier: MIT
/* Sorting lists that usually come sorted (sort.h). */
#include "sort.h"

#include <stdlib.h>
#include <string.h>

typedef int (*compare_fn)(const void *, const void *);

/*
 * Merges the sorted runs @base[0, @split) and @base[@split, @count), the
 * shorter one copied aside. false: no memory for it (nothing changed).
 */
static bool merge_two(char *base, size_t split, size_t count, size_t size, compare_fn compare)
{
	size_t left = split, right = count - split;
	char *tmp = malloc((left < right ? left : right) * size);

	if (!tmp)
		return false;
	if (left <= right) {
		/* From the front: the left run aside, written before the right run's next. */
		char *a = tmp, *a_end = tmp + left * size, *b = base + split * size;
		char *b_end = base + count * size, *out = base;

		memcpy(tmp, base, left * size);
		while (a < a_end && b < b_end) {
			if (compare(b, a) < 0) {
				memmove(out, b, size);
				b += size;
			} else {
				memmove(out, a, size);
				a += size;
			}
			out += size;
		}
		memcpy(out, a, (size_t)(a_end - a));
	} else {
		/* From the back: the right run aside, written after the left run's last. */
		char *a = base + split * size, *b = tmp + right * size, *out = base + count * size;

		memcpy(tmp, base + split * size, right * size);
		while (a > base && b > tmp) {
			out -= size;
			if (compare(b - size, a - size) < 0) {
				a -= size;
				memmove(out, a, size);
			} else {
				b -= size;
				memmove(out, b, size);
			}
		}
		memcpy(base, tmp, (size_t)(b - tmp));
	}
	free(tmp);
	return true;
}

void bci_sort(void *base, size_t count, size_t size, compare_fn compare)
{
	char *at = base;
	size_t split = 0;

	for (size_t i = 1; i < count; i++)
		if (compare(at + (i - 1) * size, at + i * size) > 0) {
			if (split) {
				qsort(base, count, size, compare);
				return;
			}
			split = i;
		}
	if (split && !merge_two(at, split, count, size, compare))
		qsort(base, count, size, compare);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int bci_natural_compare(const char *a, const char *b)
{
	const char *sa = a, *sb = b;
	int zeros = 0;

	while (*a && *b) {
		const char *da, *db;
		size_t la, lb;
		int order;

		if (!is_digit(*a) || !is_digit(*b)) {
			if (*a != *b)
				return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
			a++;
			b++;
			continue;
		}
		/* Two numbers: without leading zeros, the longer is larger, else the first digit that differs. */
		for (da = a; *da == '0'; da++)
			;
		for (db = b; *db == '0'; db++)
			;
		for (la = 0; is_digit(da[la]); la++)
			;
		for (lb = 0; is_digit(db[lb]); lb++)
			;
		if (la != lb)
			return la < lb ? -1 : 1;
		order = memcmp(da, db, la);
		if (order)
			return order < 0 ? -1 : 1;
		if (!zeros && da - a != db - b)
			zeros = da - a < db - b ? -1 : 1;
		a = da + la;
		b = db + lb;
	}
	if (*a || *b)
		return *a ? 1 : -1;
	return zeros ? zeros : strcmp(sa, sb);
}

int bci_natural_compare_ptr(const void *a, const void *b)
{
	return bci_natural_compare(*(const char *const *)a, *(const char *const *)b);
}
