// SPDX-License-Identifier: MIT
/* A reading's guesses, row by row (row_guess.h). */
#include "row_guess.h"

#include <errno.h>
#include <stdlib.h>

int bci_row_guess_set(struct bci_row_guess *g, size_t row, long id)
{
	if (row >= g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 1024;
		long *grown;

		while (cap <= row)
			cap *= 2;
		grown = realloc(g->at, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		for (size_t i = g->cap; i < cap; i++)
			grown[i] = -1;
		g->at = grown;
		g->cap = cap;
	}
	g->at[row] = id;
	return 0;
}

void bci_row_guess_release(struct bci_row_guess *g)
{
	free(g->at);
	g->at = NULL;
	g->cap = 0;
}
