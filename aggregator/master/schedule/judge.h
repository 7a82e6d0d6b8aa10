/* SPDX-License-Identifier: MIT */
/* The report's judgement as the fast tier's gate (judge.c). */
#ifndef BCI_SCHEDULE_JUDGE_H
#define BCI_SCHEDULE_JUDGE_H

#include <stddef.h>

struct bci_store;

/* The baseline window, in runs, as `report` uses by default. */
#define BCI_SCHEDULE_JUDGE_WINDOW 5

#include "schedule.h"

struct bci_report;

/*
 * @build's report as the judge reads it (the baseline window above, the
 * known issues of @data_dir): 0 with *@report (bci_report_free()), -errno
 * (-ENOENT: no run of it).
 */
int bci_schedule_judge_build(struct bci_store *store, const char *build, const char *data_dir,
			     struct bci_report **report, char *err, size_t err_size);

/* A bci_schedule_judge_fn; @ctx is the data folder. */
int bci_schedule_judge_report(struct bci_store *store, const char *build, void *ctx,
			      struct bci_schedule_issues *issues, char *err, size_t err_size);

#endif
