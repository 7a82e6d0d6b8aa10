// SPDX-License-Identifier: MIT
/*
 * A build's reruns in its report (compare.h): the runs of the confirm jobs
 * the scheduler queued for its possible new issues (schedule/confirm.c) are
 * not the build's own results (the store keeps them out of its runs), and
 * each possible new issue is judged by them: the reruns of its test on its machine and on the others of
 * its shard group, notrun aside. One that failed every time stays a possible
 * new issue, confirmed; one that passed at least once is flaky, its rate the
 * reruns'; one no rerun ran is named unconfirmed when reruns were asked for.
 */
#include "compare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int rerun_add(const char *machine, const char *run_id, const char *state, int64_t run,
		     void *ctx)
{
	struct compare_reruns *r = ctx;
	struct compare_rerun *grown;

	(void)state;
	r->jobs++;
	if (run < 0)
		return 0;
	grown = realloc(r->v, (r->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	r->v = grown;
	grown[r->n] = (struct compare_rerun){ strdup(machine), strdup(run_id), run, "" };
	if (!grown[r->n].machine || !grown[r->n].run_id) {
		free(grown[r->n].machine);
		free(grown[r->n].run_id);
		return -ENOMEM;
	}
	r->n++;
	return 0;
}

int compare_reruns_read(struct bci_store *store, const char *build, struct compare_reruns *r,
			char *err, size_t err_size)
{
	int ret = bci_store_build_reruns_each(store, build, rerun_add, r, err, err_size);

	for (size_t i = 0; ret >= 0 && i < r->n; i++)
		ret = bci_store_machine_group(store, r->v[i].machine, r->v[i].group,
					      sizeof(r->v[i].group), err, err_size);
	return ret < 0 ? ret : 0;
}

void compare_reruns_release(struct compare_reruns *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].machine);
		free(r->v[i].run_id);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* One rerun's results counted into the possible new issues it reran. */
struct rerun_count {
	struct bci_report *report;
	const struct compare_rerun *rerun;
};

static bool rerun_covers(const struct compare_rerun *rerun, const struct bci_report_change *c)
{
	if (!strcmp(rerun->machine, c->machine))
		return true;
	return c->group && rerun->group[0] && !strcmp(rerun->group, c->group);
}

static int rerun_result(const struct bci_store_result *result, void *ctx)
{
	struct rerun_count *rc = ctx;
	int status = bci_status_parse(result->result);

	if (status < 0)
		return -EPROTO;
	if (status == BCI_STATUS_NOTRUN)
		return 0;
	for (size_t i = 0; i < rc->report->n_changes; i++) {
		struct bci_report_change *c = &rc->report->changes[i];

		if (c->verdict != BCI_VERDICT_NEW || strcmp(c->test, result->name) ||
		    !rerun_covers(rc->rerun, c))
			continue;
		c->rerun_runs++;
		c->rerun_failed += status != BCI_STATUS_PASS && status != BCI_STATUS_SKIP;
	}
	return 0;
}

int compare_reruns_judge(struct bci_store *store, struct bci_report *r,
			 const struct compare_reruns *reruns, char *err, size_t err_size)
{
	int ret = 0;

	r->reruns = reruns->jobs;
	r->reruns_back = (int)reruns->n;
	for (size_t i = 0; i < reruns->n && ret >= 0; i++) {
		struct rerun_count rc = { r, &reruns->v[i] };

		ret = bci_store_results_each_brief(store, reruns->v[i].run, rerun_result, &rc, err,
						   err_size);
		if (ret == -EPROTO)
			snprintf(err, err_size, "machine %s: rerun %s has a result of an unknown status",
				 reruns->v[i].machine, reruns->v[i].run_id);
	}
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < r->n_changes; i++) {
		struct bci_report_change *c = &r->changes[i];

		if (c->verdict != BCI_VERDICT_NEW || !c->rerun_runs || c->rerun_failed == c->rerun_runs)
			continue;
		c->verdict = BCI_VERDICT_FLAKY;
		r->counts[BCI_VERDICT_NEW]--;
		r->counts[BCI_VERDICT_FLAKY]++;
	}
	return 0;
}
