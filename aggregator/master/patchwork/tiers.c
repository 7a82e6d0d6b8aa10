// SPDX-License-Identifier: MIT
/*
 * The checks after the tiers (patchwork.h, "build.c"): for each series
 * whose build is registered, once the jobs of its fast tier have all ended
 * (done or abandoned, as the scheduler records them) and the scheduler's gate
 * decided its full tier (after the reruns of its possible new issues,
 * schedule.h), bootci-fast success,
 * warning or fail with the report's one-line summary and a link to the
 * build's matrix; once the jobs of its full tier have all ended, bootci-full
 * likewise; when the fast tier failed, bootci-full fail "not run: fast tier
 * failed" at once; when the scheduler's gate skipped the full tier,
 * bootci-full "full: not run: WHY" (warning, or fail for a possible new
 * issue). Each is queued once (the store keeps the checks): a poll
 * looks at the builds' jobs, so the scheduler needs no hook.
 */
#include "patchwork.h"

#include "../report/report.h"
#include "../store/store.h"
#include "message.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct series_list {
	int64_t *ids;
	char **builds;
	size_t count;
};

static int collect_built(const struct bci_store_pw_series *s, void *ctx)
{
	struct series_list *list = ctx;
	int64_t *ids;
	char **builds;

	if (strcmp(s->state, "picked up") || !s->build)
		return 0;
	ids = realloc(list->ids, (list->count + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	list->ids = ids;
	builds = realloc(list->builds, (list->count + 1) * sizeof(*builds));
	if (!builds)
		return -ENOMEM;
	list->builds = builds;
	if (!(builds[list->count] = strdup(s->build)))
		return -ENOMEM;
	ids[list->count++] = s->series;
	return 0;
}

/* The final states of the series' checks so far: which contexts have one. */
struct finals {
	bool fast, full;
	bool fast_failed;
};

static bool final_state(const char *state)
{
	return !strcmp(state, "success") || !strcmp(state, "warning") || !strcmp(state, "fail");
}

static int finals_read(const struct bci_store_pw_check *check, void *ctx)
{
	struct finals *f = ctx;

	if (!final_state(check->state))
		return 0;
	if (!strcmp(check->context, BCI_PATCHWORK_CONTEXT_FAST)) {
		f->fast = true;
		if (!strcmp(check->state, "fail"))
			f->fast_failed = true;
	} else if (!strcmp(check->context, BCI_PATCHWORK_CONTEXT_FULL)) {
		f->full = true;
	}
	return 0;
}

struct tier_jobs {
	int jobs, open;
};

static int job_count(const struct bci_store_job *job, void *ctx)
{
	struct tier_jobs *t = ctx;

	t->jobs++;
	if (strcmp(job->state, "done") && strcmp(job->state, "abandoned"))
		t->open++;
	return 0;
}

/* Whether @tier of @build has jobs and they have all ended: 1 yes, 0 no, -errno. */
static int tier_ended(struct bci_patchwork *pw, const char *build, const char *tier, char *err,
		      size_t err_size)
{
	struct tier_jobs t = { 0 };
	int ret = bci_store_jobs_each(pw->store, build, tier, job_count, &t, err, err_size);

	if (ret < 0)
		return ret;
	return t.jobs > 0 && !t.open;
}

/*
 * The state and one-line summary of @build's report for @tier: "fail" when
 * it holds a possible new issue (or no run came back), "warning" when it
 * holds warnings, else "success".
 */
static int judge(struct bci_patchwork *pw, const char *build, const char *tier,
		 const char **state, char *summary, size_t size, char *err, size_t err_size)
{
	struct bci_filters *filters = NULL;
	struct bci_report *report = NULL;
	char path[PATH_MAX];
	int ret;

	snprintf(path, sizeof(path), "%s/known-issues.txt", pw->data_dir);
	ret = bci_filters_load(path, &filters, err, err_size);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	struct bci_report_options options = { .data_dir = pw->data_dir, .filters = filters,
					      .window = 5, .threads = 1 };
	ret = bci_report_build(pw->store, build, &options, &report, err, err_size);
	bci_filters_free(filters);
	if (ret == -ENOENT) {
		*state = "fail";
		snprintf(summary, size, "%s: no run came back from the %s tier's machines", tier,
			 tier);
		return 0;
	}
	if (ret < 0)
		return ret;
	*state = bci_report_failed(report) ? "fail"
		 : report->counts[BCI_VERDICT_WARNING] ? "warning" : "success";
	snprintf(summary, size,
		 "%s: %ld result(s) on %d machine(s): %ld possible new issue(s), %ld known,"
		 " %ld flaky, %ld fixed, %ld warning(s)", tier, report->results, report->machines,
		 report->counts[BCI_VERDICT_NEW], report->counts[BCI_VERDICT_KNOWN],
		 report->counts[BCI_VERDICT_FLAKY], report->counts[BCI_VERDICT_FIXED],
		 report->counts[BCI_VERDICT_WARNING]);
	bci_report_free(report);
	return 0;
}

static int queue(struct bci_patchwork *pw, int64_t series, const char *build, const char *context,
		 const char *state, const char *description, char *err, size_t err_size)
{
	char target[1400] = "";
	int ret;

	if (pw->project->serve_url) {
		char *escaped = curl_easy_escape(NULL, build, 0);

		snprintf(target, sizeof(target), "%s/builds/%s", pw->project->serve_url,
			 escaped ? escaped : build);
		curl_free(escaped);
	}
	ret = bci_store_pw_check_queue(pw->store, pw->project->name, series, context, state,
				       description, target[0] ? target : NULL, err, err_size);
	if (ret > 0)
		bci_patchwork_say(pw, "series %lld: build %s: %s %s (%s)", (long long)series, build,
				  context, state, description);
	return ret < 0 ? ret : 0;
}

static int series_tiers(struct bci_patchwork *pw, int64_t series, const char *build,
			unsigned *queued, char *err, size_t err_size)
{
	struct finals f = { 0 };
	char summary[400];
	const char *state;
	int ret;

	ret = bci_store_pw_checks_series(pw->store, pw->project->name, series, finals_read, &f,
					 err, err_size);
	if (ret < 0)
		return ret;
	if (f.fast_failed || (f.fast && f.full))
		goto full_after_fail;
	if (!f.fast) {
		char decision[300];

		if ((ret = tier_ended(pw, build, "fast", err, err_size)) <= 0)
			return ret;
		/* The gate decides once the reruns of the possible new issues are back. */
		if ((ret = bci_store_gate_get(pw->store, build, decision, sizeof(decision), err,
					      err_size)) <= 0)
			return ret;
		if ((ret = judge(pw, build, "fast", &state, summary, sizeof(summary), err,
				 err_size)) < 0)
			return ret;
		if ((ret = queue(pw, series, build, BCI_PATCHWORK_CONTEXT_FAST, state, summary, err,
				 err_size)) < 0)
			return ret;
		(*queued)++;
		f.fast = true;
		f.fast_failed = !strcmp(state, "fail");
		if (f.fast_failed)
			goto full_after_fail;
	}
	if (!f.full) {
		char decision[300];

		/* The gate skipped the full tier (the tree's full = never, a possible new issue). */
		ret = bci_store_gate_get(pw->store, build, decision, sizeof(decision), err, err_size);
		if (ret < 0)
			return ret;
		if (ret > 0 && !strncmp(decision, "skipped: ", 9)) {
			snprintf(summary, sizeof(summary), "full: not run: %s", decision + 9);
			if ((ret = queue(pw, series, build, BCI_PATCHWORK_CONTEXT_FULL,
					 strstr(decision, "new issue") ? "fail" : "warning", summary,
					 err, err_size)) < 0)
				return ret;
			(*queued)++;
			return 0;
		}
		if ((ret = tier_ended(pw, build, "full", err, err_size)) <= 0)
			return ret;
		if ((ret = judge(pw, build, "full", &state, summary, sizeof(summary), err,
				 err_size)) < 0)
			return ret;
		if ((ret = queue(pw, series, build, BCI_PATCHWORK_CONTEXT_FULL, state, summary, err,
				 err_size)) < 0)
			return ret;
		(*queued)++;
	}
	return 0;
full_after_fail:
	if (f.full || !f.fast_failed)
		return 0;
	if ((ret = queue(pw, series, build, BCI_PATCHWORK_CONTEXT_FULL, "fail",
			 "full: not run: fast tier failed", err, err_size)) < 0)
		return ret;
	(*queued)++;
	return 0;
}

static int build_seen(const struct bci_store_build *build, void *ctx)
{
	(void)build;
	(void)ctx;
	return 0;
}

int bci_patchwork_tiers(struct bci_patchwork *pw, unsigned *queued, char *err, size_t err_size)
{
	struct series_list list = { 0 };
	int ret;

	*queued = 0;
	ret = bci_store_pw_series_each(pw->store, pw->project->name, NULL, NULL, collect_built,
				       &list, err, err_size);
	for (size_t i = 0; ret >= 0 && i < list.count; i++) {
		ret = bci_store_build_get(pw->store, list.builds[i], build_seen, NULL, err,
					  err_size);
		if (ret == -ENOENT) {
			ret = 0;
			continue;
		}
		if (ret >= 0)
			ret = series_tiers(pw, list.ids[i], list.builds[i], queued, err, err_size);
	}
	for (size_t i = 0; i < list.count; i++)
		free(list.builds[i]);
	free(list.builds);
	free(list.ids);
	if (ret < 0)
		bci_patchwork_say(pw, "checks after the tiers: %s", err);
	return ret < 0 ? ret : 0;
}
