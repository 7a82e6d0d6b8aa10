// SPDX-License-Identifier: MIT
/*
 * The fast tier's judge (schedule.h's bci_schedule_judge_fn) wired to the
 * report: the build's report against its baseline, with the lab's known
 * issues (DATA/known-issues.txt, as `report` reads it), has a possible new
 * issue or not, and which. One judgement for the reply and for the gate, so
 * the full tier is never held back by something the reply would not name.
 */
#include "judge.h"

#include "../report/report.h"
#include "message.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

int bci_schedule_judge_build(struct bci_store *store, const char *build, const char *data_dir,
			     struct bci_report **report, char *err, size_t err_size)
{
	struct bci_filters *filters = NULL;
	char path[PATH_MAX];
	int ret;

	*report = NULL;
	snprintf(path, sizeof(path), "%s/known-issues.txt", data_dir);
	ret = bci_filters_load(path, &filters, err, err_size);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	struct bci_report_options options = { .data_dir = data_dir, .filters = filters,
					      .window = BCI_SCHEDULE_JUDGE_WINDOW };
	ret = bci_report_build(store, build, &options, report, err, err_size);
	bci_filters_free(filters);
	return ret;
}

int bci_schedule_judge_report(struct bci_store *store, const char *build, void *ctx,
			      struct bci_schedule_issues *issues, char *err, size_t err_size)
{
	struct bci_report *report = NULL;
	int ret = bci_schedule_judge_build(store, build, ctx, &report, err, err_size);

	for (size_t i = 0; ret == 0 && issues && i < report->n_changes; i++)
		if (report->changes[i].verdict == BCI_VERDICT_NEW)
			ret = bci_schedule_issues_add(issues, report->changes[i].test,
						      report->changes[i].machine);
	if (ret == 0)
		ret = (int)report->counts[BCI_VERDICT_NEW];
	bci_report_free(report);
	return ret;
}
