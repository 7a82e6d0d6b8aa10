// SPDX-License-Identifier: MIT
/* lib/arena.c: allocations that all end together. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arena.h"

/* Many small copies: each intact after all the others, aligned, not overlapping. */
static void test_small_copies_stay(void **state)
{
	struct bci_arena a = { 0 };
	char *copies[20000];
	char text[32];

	(void)state;
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		int n = snprintf(text, sizeof(text), "job-%zu/out.txt", i);

		copies[i] = bci_arena_memdup0(&a, text, (size_t)n);
		assert_non_null(copies[i]);
		assert_int_equal((uintptr_t)copies[i] % _Alignof(max_align_t), 0);
	}
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		snprintf(text, sizeof(text), "job-%zu/out.txt", i);
		assert_string_equal(copies[i], text);
	}
	assert_true(a.bytes >= 20000 * 16);
	bci_arena_free(&a);
	assert_null(a.chunk);
	assert_int_equal(a.bytes, 0);
	/* Used again after freeing. */
	assert_string_equal(bci_arena_strdup(&a, "again"), "again");
	bci_arena_free(&a);
}

/* A large allocation among small ones: its own chunk, the small ones still filling the current. */
static void test_large_among_small(void **state)
{
	struct bci_arena a = { 0 };
	const size_t big = (size_t)1 << 20;
	char *first = bci_arena_strdup(&a, "first"), *large, *second;

	(void)state;
	large = bci_arena_alloc(&a, big);
	assert_non_null(large);
	memset(large, 'x', big);
	second = bci_arena_strdup(&a, "second");
	assert_non_null(second);
	/* The small ones share a chunk: the second right after the first. */
	assert_ptr_equal(second, first + _Alignof(max_align_t));
	assert_string_equal(first, "first");
	assert_int_equal(large[0], 'x');
	assert_int_equal(large[big - 1], 'x');
	/* Zero bytes: still a distinct pointer; an impossible size: NULL. */
	assert_ptr_not_equal(bci_arena_alloc(&a, 0), bci_arena_alloc(&a, 0));
	assert_null(bci_arena_alloc(&a, SIZE_MAX));
	assert_null(bci_arena_memdup0(&a, "", SIZE_MAX));
	/* Empty data (no bytes to copy, NULL allowed): an empty string. */
	assert_string_equal(bci_arena_memdup0(&a, NULL, 0), "");
	bci_arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_copies_stay),
		cmocka_unit_test(test_large_among_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
