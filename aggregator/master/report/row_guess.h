/* SPDX-License-Identifier: MIT */
/*
 * A reading's guesses, row by row: every run of a build and of its baseline
 * lists the same tests in the same order (the job list's), so the test a
 * run gives at row k is the one the last run read gave at row k nearly
 * always. A reader checks that one first (one strcmp) and hashes the name
 * only when it is not: the report's 800k rows were 800k hash lookups.
 */
#ifndef BCI_ROW_GUESS_H
#define BCI_ROW_GUESS_H

#include <stddef.h>

struct bci_row_guess {
	long *at;	/* the test number seen at each row last, -1: none */
	size_t cap;
};

/* The number seen at row @row last time, or -1. */
static inline long bci_row_guess_get(const struct bci_row_guess *g, size_t row)
{
	return row < g->cap ? g->at[row] : -1;
}

/* @id is the number seen at row @row now: 0, or -ENOMEM (the guesses unchanged). */
int bci_row_guess_set(struct bci_row_guess *g, size_t row, long id);
void bci_row_guess_release(struct bci_row_guess *g);

#endif
