// SPDX-License-Identifier: MIT
/*
 * A machine's results judged against its baseline (compare.h), both read
 * into cells: each change classified by the transition table (status.c),
 * a regression or warning a known-issue filter matches a known issue, a
 * regression of a test whose state changed inside the baseline, on the
 * machine or on another of its shard group, flaky (with how often it
 * failed there), any other regression a possible new issue.
 */
#include "compare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int change_add(struct compare *c, const char *test, const struct compare_machine *machine,
		      const struct compare_run *run, const struct compare_cell *before,
		      enum bci_status from, enum bci_status to, enum bci_change change,
		      enum bci_verdict verdict, const char *bug)
{
	struct bci_report *r = c->report;
	struct bci_report_change *added;

	if (r->n_changes == c->changes_cap) {
		size_t cap = c->changes_cap ? c->changes_cap * 2 : 64;
		struct bci_report_change *grown = realloc(r->changes, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->changes = grown;
		c->changes_cap = cap;
	}
	added = &r->changes[r->n_changes];
	*added = (struct bci_report_change){
		.test = strdup(test), .machine = strdup(run->machine), .run_id = strdup(run->run_id),
		.from = from, .to = to, .change = change, .verdict = verdict, .bug = bug,
		.group = machine->group[0] ? strdup(machine->group) : NULL,
		.baseline_runs = before ? before->runs : 0,
		.baseline_failed = before ? before->failed : 0,
	};
	r->n_changes++;
	r->counts[verdict]++;
	return added->test && added->machine && added->run_id &&
	       (added->group || !machine->group[0]) ? 0 : -ENOMEM;
}

/* The bug of the first known-issue filter that matches the test's @status on the machine, or NULL. */
static const char *known_issue(struct compare *c, const struct compare_machine *machine,
			       const char *test, const struct compare_run *run,
			       enum bci_status status)
{
	struct compare_logs logs = { .c = c, .run = run, .test = test };
	struct bci_filter_subject subject = {
		.test = test, .machine = machine->name, .tags = (const char *const *)machine->tags.items,
		.status = status, .log = compare_log_read, .log_ctx = &logs,
	};
	const char *bug = bci_filters_match(c->options->filters, &subject);

	compare_logs_release(&logs);
	return bug;
}

static enum bci_verdict verdict_of(enum bci_change change, const char *bug,
				   const struct compare_cell *before)
{
	switch (change) {
	case BCI_CHANGE_REGRESSION:
		if (bug)
			return BCI_VERDICT_KNOWN;
		return before && __builtin_popcount(before->seen) > 1 ? BCI_VERDICT_FLAKY :
									BCI_VERDICT_NEW;
	case BCI_CHANGE_WARNING:
		return bug ? BCI_VERDICT_KNOWN : BCI_VERDICT_WARNING;
	case BCI_CHANGE_FIXED:
		return BCI_VERDICT_FIXED;
	case BCI_CHANGE_NEW_TEST:
		return BCI_VERDICT_NEW_TEST;
	default:
		return BCI_VERDICT_NOT_RUN;
	}
}

int compare_machine_judge(struct compare *c, const struct compare_machine *machine)
{
	int ret = 0;

	for (size_t i = 0; i < c->now.n && ret >= 0; i++) {
		const struct compare_cell *t = &c->now.v[i];
		const struct compare_cell *b = i < c->before.n ? &c->before.v[i] : NULL;
		const char *test = c->tests.names[i];
		const struct compare_run *run;
		enum bci_status from;
		enum bci_change change;
		const char *bug = NULL;

		if (t->status < 0)
			continue;
		c->report->results++;
		from = b && b->status >= 0 ? (enum bci_status)b->status : BCI_STATUS_NOTRUN;
		change = bci_status_change(from, t->status);
		if (change == BCI_CHANGE_UNCHANGED)
			continue;
		run = &machine->build_runs->v[t->run];
		if (change == BCI_CHANGE_REGRESSION || change == BCI_CHANGE_WARNING)
			bug = known_issue(c, machine, test, run, t->status);
		ret = change_add(c, test, machine, run, b, from, t->status, change,
				 verdict_of(change, bug, b), bug);
	}
	return ret;
}
