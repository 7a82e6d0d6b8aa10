/* SPDX-License-Identifier: MIT */
/*
 * A build's matrix as read (matrix.c), for the files that show it:
 * matrix_html.c (the page) and html_write.c (the static files). Not for use
 * outside aggregator/master/report/.
 */
#ifndef BCI_REPORT_MATRIX_H
#define BCI_REPORT_MATRIX_H

#include "name_numbers.h"
#include "report.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A test's result on a machine: the last run of the machine that has it. */
struct bci_matrix_cell {
	int status;		/* -1: not run on that machine */
	int run;		/* index into runs */
	int change;		/* index into the report's changes, -1: none */
	int job;		/* the result's job (its logs' folder in the run) */
};

/* A run of the build, as the store gave it (a result page needs no other query). */
struct bci_matrix_run {
	int64_t key;
	char *machine, *run_id, *digest, *archive_path, *archive_root;
	size_t machine_index;
};

/* Tests down, machines across. */
struct bci_matrix {
	const char **tests;	/* sorted, each once (the copies of names) */
	size_t n_tests;
	char **machines;
	size_t n_machines;
	struct bci_matrix_run *runs;
	size_t n_runs;
	struct bci_matrix_cell *cells;	/* n_tests x n_machines, filled after the tests are known */
	struct bci_name_numbers names;	/* the tests by first-seen number, as read */
	struct matrix_entry *entries;	/* matrix.c's, until the cells are made */
	size_t n_entries, cap_entries;
	/* Results handed by the report's threads (bci_matrix_seen) are added under it. */
	pthread_mutex_t lock;
	bool has_lock;
	char *build;
};

#endif
