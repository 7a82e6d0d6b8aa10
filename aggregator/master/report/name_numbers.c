// SPDX-License-Identifier: MIT
/* Names numbered in the order first seen (name_numbers.h). */
#include "name_numbers.h"
#include "hash.h"

#include <errno.h>
#include <stdlib.h>

/* Twice the slots, each name placed again by the hash it keeps. */
static int slots_grow(struct bci_name_numbers *t)
{
	size_t n = t->n_slots ? t->n_slots * 2 : 1024;
	struct bci_name_slot *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_slots; i++) {
		size_t j;

		if (!t->slots[i].number)
			continue;
		for (j = t->slots[i].hash & (n - 1); slots[j].number; j = (j + 1) & (n - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->n_slots = n;
	return 0;
}

long bci_name_number(struct bci_name_numbers *t, const char *name)
{
	uint32_t hash = (uint32_t)bci_hash_str(name);
	const char *copy;
	size_t i;

	if ((t->n + 1) * 2 > t->n_slots && slots_grow(t) < 0)
		return -ENOMEM;
	for (i = hash & (t->n_slots - 1); t->slots[i].number; i = (i + 1) & (t->n_slots - 1)) {
		const struct bci_name_slot *s = &t->slots[i];

		if (s->hash == hash && !strcmp(t->names[s->number - 1], name))
			return (long)s->number - 1;
	}
	if (t->n == UINT32_MAX - 1)
		return -ENOMEM;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		const char **grown = realloc(t->names, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		t->names = grown;
		t->cap = cap;
	}
	copy = bci_arena_strdup(&t->copies, name);
	if (!copy)
		return -ENOMEM;
	t->names[t->n] = copy;
	t->slots[i] = (struct bci_name_slot){ .number = (uint32_t)++t->n, .hash = hash };
	return (long)t->n - 1;
}

/* Row @row remembered as number @id: 0, or -ENOMEM (the rows unchanged). */
static int row_set(struct bci_name_numbers *t, size_t row, long id)
{
	if (row >= t->n_rows) {
		size_t n = t->n_rows ? t->n_rows * 2 : 1024;
		long *grown;

		while (n <= row)
			n *= 2;
		grown = realloc(t->rows, n * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		for (size_t i = t->n_rows; i < n; i++)
			grown[i] = -1;
		t->rows = grown;
		t->n_rows = n;
	}
	t->rows[row] = id;
	return 0;
}

long bci_name_number_hashed_at(struct bci_name_numbers *t, const char *name, size_t row)
{
	long id = bci_name_number(t, name);

	if (id >= 0 && row_set(t, row, id) < 0)
		return -ENOMEM;
	return id;
}

void bci_name_numbers_release(struct bci_name_numbers *t)
{
	free(t->names);
	free(t->slots);
	free(t->rows);
	bci_arena_free(&t->copies);
	memset(t, 0, sizeof(*t));
}
