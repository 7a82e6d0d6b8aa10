/* SPDX-License-Identifier: MIT */
/* The report's judgement as the fast tier's gate (judge.c). */
#ifndef BCI_SCHEDULE_JUDGE_H
#define BCI_SCHEDULE_JUDGE_H

#include <stddef.h>

struct bci_store;

/* The baseline window, in runs, as `report` uses by default. */
#define BCI_SCHEDULE_JUDGE_WINDOW 5

#include "schedule.h"

/* A bci_schedule_judge_fn; @ctx is the data folder. */
int bci_schedule_judge_report(struct bci_store *store, const char *build, void *ctx,
			      struct bci_schedule_issues *issues, char *err, size_t err_size);

#endif
