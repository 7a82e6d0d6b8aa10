// SPDX-License-Identifier: MIT
/* lib/sort.c: lists in order, in two ordered parts, or in none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sort.h"

#include <stdlib.h>
#include <string.h>

static int int_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* @values sorted by bci_sort() equals them sorted by qsort(). */
static void sorts_as_qsort(const int *values, size_t count)
{
	int *ours = malloc((count + 1) * sizeof(*ours)), *theirs = malloc((count + 1) * sizeof(*theirs));

	assert_non_null(ours);
	assert_non_null(theirs);
	memcpy(ours, values, count * sizeof(*ours));
	memcpy(theirs, values, count * sizeof(*theirs));
	bci_sort(ours, count, sizeof(*ours), int_compare);
	qsort(theirs, count, sizeof(*theirs), int_compare);
	assert_memory_equal(ours, theirs, count * sizeof(*ours));
	free(ours);
	free(theirs);
}

static void test_in_order_and_tiny(void **state)
{
	static const int sorted[] = { 1, 2, 2, 3, 7, 9 };

	(void)state;
	sorts_as_qsort(sorted, 0);
	sorts_as_qsort(sorted, 1);
	sorts_as_qsort(sorted, 6);
	sorts_as_qsort((const int[]){ 2, 1 }, 2);
}

/* Two ordered parts of every length, short or long on either side, with equal values. */
static void test_two_parts(void **state)
{
	int values[64];

	(void)state;
	/* manifest.json first: one large value, then the rest in order. */
	sorts_as_qsort((const int[]){ 50, 1, 2, 3, 4, 60, 70 }, 7);
	/* The last one out of place. */
	sorts_as_qsort((const int[]){ 1, 2, 3, 4, 0 }, 5);
	srand(12);
	for (size_t split = 1; split < 64; split++) {
		for (size_t i = 0; i < 64; i++)
			values[i] = rand() % 40;
		qsort(values, split, sizeof(values[0]), int_compare);
		qsort(values + split, 64 - split, sizeof(values[0]), int_compare);
		sorts_as_qsort(values, 64);
	}
}

/* Three or more parts: sorted all the same (through qsort). */
static void test_any_order(void **state)
{
	int values[200];

	(void)state;
	sorts_as_qsort((const int[]){ 3, 1, 2, 0 }, 4);
	srand(7);
	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < 200; i++)
			values[i] = rand() % 100;
		sorts_as_qsort(values, 200);
	}
}

/* Machine names as people number them: big-1, big-2, big-10. */
static void test_natural(void **state)
{
	const char *names[] = { "big-10", "small", "big-2", "big-1", "big-01", "big", "big-1a",
				"big-1-2", "big-1-10", "a9", "a10b", "a10a", "big-100", "" };
	const char *sorted[] = { "", "a9", "a10a", "a10b", "big", "big-1", "big-01", "big-1-2",
				 "big-1-10", "big-1a", "big-2", "big-10", "big-100", "small" };
	size_t n = sizeof(names) / sizeof(names[0]);

	(void)state;
	qsort(names, n, sizeof(names[0]), bci_natural_compare_ptr);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(names[i], sorted[i]);
	/* A total order: 0 only for the same string, and antisymmetric. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			int ij = bci_natural_compare(sorted[i], sorted[j]);
			int ji = bci_natural_compare(sorted[j], sorted[i]);

			assert_true(i < j ? ij < 0 : i > j ? ij > 0 : ij == 0);
			assert_true((ij < 0 && ji > 0) || (ij > 0 && ji < 0) || (ij == 0 && ji == 0));
		}
	/* Numbers longer than any integer type, and bytes past ASCII, still compare. */
	assert_true(bci_natural_compare("m-99999999999999999999999", "m-100000000000000000000000") < 0);
	assert_true(bci_natural_compare("m-\xc3\xa9", "m-z") > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_and_tiny),
		cmocka_unit_test(test_two_parts),
		cmocka_unit_test(test_any_order),
		cmocka_unit_test(test_natural),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
