/* SPDX-License-Identifier: MIT */
/*
 * Many small allocations that all end together: taken from large chunks,
 * given back at once. Ingest holds 40k paths and files of a few dozen bytes
 * each for one run; a malloc() and free() for each showed in its profile.
 */
#ifndef BCI_ARENA_H
#define BCI_ARENA_H

#include <stddef.h>

struct bci_arena_chunk;

struct bci_arena {
	struct bci_arena_chunk *chunk;	/* the newest, the one allocated from */
	size_t bytes;			/* handed out since the last bci_arena_free() */
};

/* @n bytes aligned for any type, valid until bci_arena_free(); NULL when out of memory. */
void *bci_arena_alloc(struct bci_arena *a, size_t n);
/* @n bytes of @data and a NUL after them; NULL when out of memory. */
char *bci_arena_memdup0(struct bci_arena *a, const void *data, size_t n);
char *bci_arena_strdup(struct bci_arena *a, const char *s);
/* Everything allocated goes; the arena can be used again. */
void bci_arena_free(struct bci_arena *a);

#endif
