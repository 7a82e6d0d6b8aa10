// SPDX-License-Identifier: MIT
#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A chunk's room when the request is smaller: a few hundred allocations of paths and logs. */
#define CHUNK_SIZE ((size_t)256 << 10)

struct bci_arena_chunk {
	struct bci_arena_chunk *older;
	size_t used, size;
	alignas(max_align_t) unsigned char data[];
};

void *bci_arena_alloc(struct bci_arena *a, size_t n)
{
	const size_t align = alignof(max_align_t);
	struct bci_arena_chunk *c = a->chunk;
	size_t at;

	if (n > SIZE_MAX - align - sizeof(*c))
		return NULL;
	n = n ? (n + align - 1) & ~(align - 1) : align;
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK_SIZE ? n : CHUNK_SIZE;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		/* A large allocation gets a chunk of its own, behind the one still filling. */
		if (a->chunk && size > CHUNK_SIZE) {
			c->older = a->chunk->older;
			a->chunk->older = c;
		} else {
			c->older = a->chunk;
			a->chunk = c;
		}
	}
	at = c->used;
	c->used += n;
	a->bytes += n;
	return c->data + at;
}

char *bci_arena_memdup0(struct bci_arena *a, const void *data, size_t n)
{
	char *copy = n == SIZE_MAX ? NULL : bci_arena_alloc(a, n + 1);

	if (!copy)
		return NULL;
	if (n)
		memcpy(copy, data, n);
	copy[n] = '\0';
	return copy;
}

char *bci_arena_strdup(struct bci_arena *a, const char *s)
{
	return bci_arena_memdup0(a, s, strlen(s));
}

void bci_arena_free(struct bci_arena *a)
{
	struct bci_arena_chunk *c = a->chunk;

	while (c) {
		struct bci_arena_chunk *older = c->older;

		free(c);
		c = older;
	}
	a->chunk = NULL;
	a->bytes = 0;
}
