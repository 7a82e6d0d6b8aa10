/* SPDX-License-Identifier: MIT */
/*
 * Names numbered 0, 1, 2 ... in the order first seen, each copied once: the
 * report's test names (a machine's results are then arrays by number, and a
 * thread keeps its numbers from one machine to the next), the builds the
 * report asks about, the matrix's tests before they are sorted.
 *
 * A reading of runs gives its names row by row, and every run of a build
 * and of its baseline lists the same tests in the same order (the job
 * list's): the name at row k is nearly always the one the last run read
 * gave at row k. bci_name_number_at() checks that one first (one strcmp)
 * and hashes the name only when it is not.
 *
 * Starts zeroed. Owns the copies of the names (names[i] lives until
 * bci_name_numbers_release()). Not shared between threads.
 */
#ifndef BCI_REPORT_NAME_NUMBERS_H
#define BCI_REPORT_NAME_NUMBERS_H

#include "arena.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A slot of the open-addressing index. */
struct bci_name_slot {
	uint32_t number;	/* the name's number + 1; 0: an empty slot */
	uint32_t hash;		/* the low half of its bci_hash_str() */
};

struct bci_name_numbers {
	const char **names;		/* by number: the copies */
	size_t n, cap;
	struct bci_name_slot *slots;	/* at most half full */
	size_t n_slots;
	long *rows;			/* the number given at each row of the last reading, -1: none */
	size_t n_rows;
	struct bci_arena copies;
};

/* The number of @name, given when new: >= 0, or -ENOMEM. */
long bci_name_number(struct bci_name_numbers *t, const char *name);
/*
 * bci_name_number() of the name at row @row of a reading, remembered for
 * the next reading's row @row: what bci_name_number_at() does when that row
 * held another name last time.
 */
long bci_name_number_hashed_at(struct bci_name_numbers *t, const char *name, size_t row);

/* The number of @name, the name at row @row of a reading: >= 0, or -ENOMEM. */
static inline long bci_name_number_at(struct bci_name_numbers *t, const char *name, size_t row)
{
	long id = row < t->n_rows ? t->rows[row] : -1;

	if (id >= 0 && !strcmp(t->names[id], name))
		return id;
	return bci_name_number_hashed_at(t, name, row);
}

/* Every name and number let go; @t is empty (zeroed) again. */
void bci_name_numbers_release(struct bci_name_numbers *t);

#endif
