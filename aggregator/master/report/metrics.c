// SPDX-License-Identifier: MIT
/*
 * The CI's own health over a time window [from, to) (Unix seconds):
 *
 *   latency   per build registered in the window: from its start to its
 *             first result (the first of its runs ingested) and to its
 *             complete report (the last of its runs ingested, once none of
 *             the scheduler's jobs for it is queued or booted, and it has a
 *             run); against the objective of its tier: 30 minutes (fast),
 *             6 hours (full). A build still waiting counts as missing the
 *             objective once the objective's time has passed. The start of
 *             a build from a Patchwork series is the series complete on
 *             Patchwork, that of a build published by hand its
 *             registration (stages.c);
 *   stages    per build its way from the mail to the reply (stages.c), and
 *             per stage the median and longest time it took;
 *   busy      per machine, the time its runs that started in the window
 *             took (ended - started), and that time's share of the window;
 *   tests     results of the runs ingested in the window, per UTC day;
 *   regressions  the possible new issues (and suspend regressions) of the
 *             reports of the builds registered in the window.
 *
 * Read from the store; the same numbers for the page, the JSON endpoint
 * and `bootci-aggregator metrics`.
 */
#include "report.h"
#include "../store/store.h"
#include "jsonw.h"
#include "sort.h"
#include "strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bci_metrics_objective(const char *tier)
{
	return tier && !strcmp(tier, "full") ? 6 * 3600.0 : 30 * 60.0;
}

void bci_metrics_free(struct bci_metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_builds; i++) {
		free(m->builds[i].name);
		free(m->builds[i].tier);
	}
	free(m->builds);
	for (size_t i = 0; i < m->n_machines; i++)
		free(m->machines[i].name);
	free(m->machines);
	free(m->days);
	free(m);
}

struct compute {
	struct bci_metrics *m;
	double now;
};

static int build_add(const struct bci_store_build_times *t, void *ctx)
{
	struct compute *c = ctx;
	struct bci_metrics *m = c->m;
	struct bci_metrics_build *b, *grown = realloc(m->builds, (m->n_builds + 1) * sizeof(*grown));
	double objective = bci_metrics_objective(t->tier);
	struct bci_stages stages;
	double start;

	if (!grown)
		return -ENOMEM;
	m->builds = grown;
	bci_stages_from_times(t, &stages);
	start = bci_stages_start(&stages);
	b = &m->builds[m->n_builds++];
	*b = (struct bci_metrics_build){
		.name = strdup(t->name ? t->name : ""),
		.tier = strdup(t->tier ? t->tier : ""),
		.registered = t->registered,
		.stages = stages,
		.start = start,
		.objective = objective,
		.to_first = t->first_result >= 0 ? t->first_result - start : -1,
		.to_complete = t->runs > 0 && !t->jobs_open ? t->last_result - start : -1,
		.runs = t->runs,
	};
	if (!b->name || !b->tier)
		return -ENOMEM;
	if (b->to_complete >= 0)
		b->met = b->to_complete <= objective ? 1 : 0;
	else
		b->met = c->now - start > objective ? 0 : -1;
	return 0;
}

static int double_order(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Per stage, the median and longest time it took over the builds that reached it. */
static int stages_sum(struct bci_metrics *m)
{
	double *took = malloc((m->n_builds + 1) * sizeof(*took));

	if (!took)
		return -ENOMEM;
	for (int st = 0; st < BCI_STAGE_COUNT; st++) {
		size_t n = 0;

		for (size_t i = 0; i < m->n_builds; i++) {
			bool known;
			double t = bci_stages_took(&m->builds[i].stages, (enum bci_stage)st, &known);

			if (known)
				took[n++] = t;
		}
		m->took[st].builds = (long)n;
		if (!n)
			continue;
		qsort(took, n, sizeof(*took), double_order);
		m->took[st].median = n % 2 ? took[n / 2] : (took[n / 2 - 1] + took[n / 2]) / 2;
		m->took[st].max = took[n - 1];
	}
	free(took);
	return 0;
}

/* The machines as every page lists them (bci_natural_compare()). */
static int machine_order(const void *a, const void *b)
{
	return bci_natural_compare(((const struct bci_metrics_machine *)a)->name,
				   ((const struct bci_metrics_machine *)b)->name);
}

static int busy_add(const struct bci_store_machine_busy *busy, void *ctx)
{
	struct bci_metrics *m = ctx;
	struct bci_metrics_machine *grown =
		realloc(m->machines, (m->n_machines + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	m->machines = grown;
	m->machines[m->n_machines] = (struct bci_metrics_machine){
		.name = strdup(busy->machine ? busy->machine : ""),
		.runs = busy->runs,
		.busy = busy->busy,
	};
	return m->machines[m->n_machines++].name ? 0 : -ENOMEM;
}

static int run_add(double ingested, long results, void *ctx)
{
	struct bci_metrics *m = ctx;
	long day = (long)(ingested / 86400);

	m->results += results;
	if (!m->n_days || m->days[m->n_days - 1].day != day) {
		struct bci_metrics_day *grown = realloc(m->days, (m->n_days + 1) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		m->days = grown;
		m->days[m->n_days++] = (struct bci_metrics_day){ .day = day };
	}
	m->days[m->n_days - 1].results += results;
	m->days[m->n_days - 1].runs++;
	return 0;
}

int bci_metrics_compute(struct bci_store *store, const struct bci_metrics_options *options,
			struct bci_metrics **out, char *err, size_t err_size)
{
	struct bci_metrics *m = calloc(1, sizeof(*m));
	struct compute c = { .m = m, .now = options->now > 0 ? options->now : (double)time(NULL) };
	int ret;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->from = options->from;
	m->to = options->to;
	ret = bci_store_metrics_builds(store, m->from, m->to, build_add, &c, err, err_size);
	if (ret >= 0)
		ret = bci_store_metrics_busy(store, m->from, m->to, busy_add, m, err, err_size);
	if (ret >= 0 && m->n_machines > 1)
		qsort(m->machines, m->n_machines, sizeof(*m->machines), machine_order);
	if (ret >= 0)
		ret = bci_store_metrics_runs(store, m->from, m->to, run_add, m, err, err_size);
	for (size_t i = 0; i < m->n_builds && ret >= 0; i++) {
		struct bci_metrics_build *b = &m->builds[i];
		struct bci_report *report;

		if (!b->runs)
			continue;
		ret = bci_report_build(store, b->name, &options->report, &report, err, err_size);
		if (ret < 0)
			break;
		b->regressions = report->counts[BCI_VERDICT_NEW];
		for (size_t k = 0; k < report->n_suspend; k++)
			b->regressions += report->suspend[k].regression != 0;
		m->regressions += b->regressions;
		bci_report_free(report);
	}
	if (ret >= 0)
		ret = stages_sum(m);
	for (size_t i = 0; i < m->n_builds; i++) {
		const struct bci_metrics_build *b = &m->builds[i];
		int full = !strcmp(b->tier, "full");

		if (b->met >= 0) {
			m->tier[full].judged++;
			m->tier[full].met += b->met;
		}
		m->tier[full].builds++;
	}
	if (ret < 0) {
		bci_metrics_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

int bci_metrics_window_parse(const char *from, const char *to, double now, double *from_out,
			     double *to_out, char *err, size_t err_size)
{
	const char *texts[2] = { from, to };
	double values[2] = { now - 7 * 86400, now };

	for (int i = 0; i < 2; i++) {
		char *end;
		long long v;

		if (!texts[i] || !*texts[i])
			continue;
		errno = 0;
		v = strtoll(texts[i], &end, 10);
		if (errno || *end || v < 0) {
			snprintf(err, err_size, "%s '%s': not a Unix time (seconds, >= 0)",
				 i ? "to" : "from", texts[i]);
			return -EINVAL;
		}
		values[i] = (double)v;
	}
	if (values[0] > values[1]) {
		snprintf(err, err_size, "from (%.0f) is after to (%.0f)", values[0], values[1]);
		return -EINVAL;
	}
	*from_out = values[0];
	*to_out = values[1];
	return 0;
}

/* ---- JSON ---- */

static void json_seconds(struct bci_jsonw *w, const char *key, double seconds)
{
	bci_jsonw_key(w, key);
	if (seconds < 0)
		bci_jsonw_null(w);
	else
		bci_jsonw_double(w, seconds);
}

void bci_metrics_json(FILE *out, const struct bci_metrics *m)
{
	static const char *const tiers[2] = { "fast", "full" };
	struct bci_jsonw w;
	double span = m->to - m->from;

	bci_jsonw_init(&w, out, 1);
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "from");
	bci_jsonw_int(&w, (long long)m->from);
	bci_jsonw_key(&w, "to");
	bci_jsonw_int(&w, (long long)m->to);
	bci_jsonw_key(&w, "objectives");
	bci_jsonw_object_begin(&w);
	for (int t = 0; t < 2; t++) {
		bci_jsonw_key(&w, tiers[t]);
		bci_jsonw_object_begin(&w);
		bci_jsonw_key(&w, "seconds");
		bci_jsonw_int(&w, (long long)bci_metrics_objective(tiers[t]));
		bci_jsonw_key(&w, "builds");
		bci_jsonw_int(&w, m->tier[t].builds);
		bci_jsonw_key(&w, "judged");
		bci_jsonw_int(&w, m->tier[t].judged);
		bci_jsonw_key(&w, "met");
		bci_jsonw_int(&w, m->tier[t].met);
		bci_jsonw_object_end(&w);
	}
	bci_jsonw_object_end(&w);
	bci_jsonw_key(&w, "builds");
	bci_jsonw_array_begin(&w);
	for (size_t i = 0; i < m->n_builds; i++) {
		const struct bci_metrics_build *b = &m->builds[i];

		bci_jsonw_object_begin(&w);
		bci_jsonw_key(&w, "name");
		bci_jsonw_string(&w, b->name);
		bci_jsonw_key(&w, "tier");
		bci_jsonw_string(&w, b->tier);
		bci_jsonw_key(&w, "registered");
		bci_jsonw_double(&w, b->registered);
		bci_jsonw_key(&w, "clock_start");
		bci_jsonw_string(&w, bci_stages_from_series(&b->stages) ? "series" : "registered");
		bci_jsonw_key(&w, "start");
		bci_jsonw_double(&w, b->start);
		bci_jsonw_key(&w, "stages");
		bci_jsonw_object_begin(&w);
		for (int st = 0; st < BCI_STAGE_COUNT; st++)
			json_seconds(&w, bci_stage_key(st), b->stages.at[st]);
		bci_jsonw_object_end(&w);
		json_seconds(&w, "to_first_result", b->to_first);
		json_seconds(&w, "to_complete", b->to_complete);
		bci_jsonw_key(&w, "objective_met");
		if (b->met < 0)
			bci_jsonw_null(&w);
		else
			bci_jsonw_bool(&w, b->met);
		bci_jsonw_key(&w, "runs");
		bci_jsonw_int(&w, b->runs);
		bci_jsonw_key(&w, "regressions");
		bci_jsonw_int(&w, b->regressions);
		bci_jsonw_object_end(&w);
	}
	bci_jsonw_array_end(&w);
	bci_jsonw_key(&w, "stages");
	bci_jsonw_array_begin(&w);
	for (int st = 1; st < BCI_STAGE_COUNT; st++) {
		bci_jsonw_object_begin(&w);
		bci_jsonw_key(&w, "stage");
		bci_jsonw_string(&w, bci_stage_key(st));
		bci_jsonw_key(&w, "spent_on");
		bci_jsonw_string(&w, bci_stage_took_label(st));
		bci_jsonw_key(&w, "builds");
		bci_jsonw_int(&w, m->took[st].builds);
		json_seconds(&w, "median_seconds", m->took[st].builds ? m->took[st].median : -1);
		json_seconds(&w, "max_seconds", m->took[st].builds ? m->took[st].max : -1);
		bci_jsonw_object_end(&w);
	}
	bci_jsonw_array_end(&w);
	bci_jsonw_key(&w, "machines");
	bci_jsonw_array_begin(&w);
	for (size_t i = 0; i < m->n_machines; i++) {
		bci_jsonw_object_begin(&w);
		bci_jsonw_key(&w, "name");
		bci_jsonw_string(&w, m->machines[i].name);
		bci_jsonw_key(&w, "runs");
		bci_jsonw_int(&w, m->machines[i].runs);
		bci_jsonw_key(&w, "busy_seconds");
		bci_jsonw_double(&w, m->machines[i].busy);
		bci_jsonw_key(&w, "busy_share");
		bci_jsonw_double(&w, span > 0 ? m->machines[i].busy / span : 0);
		bci_jsonw_object_end(&w);
	}
	bci_jsonw_array_end(&w);
	bci_jsonw_key(&w, "tests_per_day");
	bci_jsonw_array_begin(&w);
	for (size_t i = 0; i < m->n_days; i++) {
		char day[16];
		time_t t = (time_t)m->days[i].day * 86400;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(day, sizeof(day), "%Y-%m-%d", &tm);
		bci_jsonw_object_begin(&w);
		bci_jsonw_key(&w, "day");
		bci_jsonw_string(&w, day);
		bci_jsonw_key(&w, "runs");
		bci_jsonw_int(&w, m->days[i].runs);
		bci_jsonw_key(&w, "results");
		bci_jsonw_int(&w, m->days[i].results);
		bci_jsonw_object_end(&w);
	}
	bci_jsonw_array_end(&w);
	bci_jsonw_key(&w, "results");
	bci_jsonw_int(&w, m->results);
	bci_jsonw_key(&w, "regressions");
	bci_jsonw_int(&w, m->regressions);
	bci_jsonw_object_end(&w);
	bci_jsonw_finish(&w);
}

/* ---- the page ---- */

static void duration_cell(struct bci_str *b, double seconds, double objective)
{
	if (seconds < 0) {
		bci_str_appendf(b, "<td>-</td>");
		return;
	}
	bci_str_appendf(b, "<td class=\"%s\">", seconds <= objective ? "pass" : "fail");
	bci_duration_text(b, seconds);
	bci_str_appendf(b, "</td>");
}

static void date_text(char *out, size_t size, double when)
{
	time_t t = (time_t)when;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, size, "%Y-%m-%d %H:%M", &tm))
		snprintf(out, size, "%.0f", when);
}

int bci_metrics_html(struct bci_str *b, const struct bci_metrics *m)
{
	char from[32], to[32];
	double span = m->to - m->from;

	date_text(from, sizeof(from), m->from);
	date_text(to, sizeof(to), m->to);
	bci_str_appendf(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>bootci"
			   " metrics</title>\n%s</head><body>\n<p><a href=\"/\">builds</a> · "
			   "<a href=\"/api/v1/metrics?from=%.0f&amp;to=%.0f\">JSON</a></p>\n"
			   "<h1>metrics, %s to %s UTC</h1>\n", bci_html_style, m->from, m->to, from, to);
	bci_str_appendf(b, "<form method=\"get\">from <input name=\"from\" value=\"%.0f\"> to"
			   " <input name=\"to\" value=\"%.0f\"> (Unix seconds) <button>show</button>"
			   "</form>\n", m->from, m->to);
	bci_str_appendf(b, "<h2>objectives</h2>\n<table><tr><th>tier</th><th>objective</th>"
			   "<th>builds</th><th>met</th><th>missed</th></tr>\n");
	for (int t = 0; t < 2; t++)
		bci_str_appendf(b, "<tr><td>%s</td><td>%.0f min</td><td>%ld</td><td>%ld</td>"
				   "<td>%ld</td></tr>\n", t ? "full" : "fast",
				bci_metrics_objective(t ? "full" : "fast") / 60, m->tier[t].builds,
				m->tier[t].met, m->tier[t].judged - m->tier[t].met);
	bci_str_appendf(b, "</table>\n<p>The clock of a build from a Patchwork series starts when"
			   " the series was complete on Patchwork; that of a build published by hand"
			   " at its registration.</p>\n<h2>where the time went</h2>\n"
			   "<table id=\"stages\"><tr><th>stage</th><th>spent on</th><th>builds</th>"
			   "<th>median</th><th>longest</th></tr>\n");
	for (int st = 1; st < BCI_STAGE_COUNT; st++) {
		bci_str_appendf(b, "<tr data-stage=\"%s\"><td>%s</td><td>%s</td><td>%ld</td><td>",
				bci_stage_key(st), bci_stage_label(st), bci_stage_took_label(st),
				m->took[st].builds);
		if (m->took[st].builds) {
			bci_duration_text(b, m->took[st].median);
			bci_str_appendf(b, "</td><td>");
			bci_duration_text(b, m->took[st].max);
		} else {
			bci_str_appendf(b, "-</td><td>-");
		}
		bci_str_appendf(b, "</td></tr>\n");
	}
	bci_str_appendf(b, "</table>\n<h2>builds</h2>\n<table id=\"builds\"><tr><th>build</th>"
			   "<th>tier</th><th>clock starts (UTC)</th><th>at</th><th>to first result</th>"
			   "<th>to complete report</th><th>runs</th><th>regressions</th></tr>\n");
	for (size_t i = 0; i < m->n_builds; i++) {
		const struct bci_metrics_build *bd = &m->builds[i];
		char when[32];

		date_text(when, sizeof(when), bd->start);
		bci_str_appendf(b, "<tr><td><a href=\"/builds/");
		bci_html_url_escape(b, bd->name);
		bci_str_appendf(b, "\">");
		bci_html_escape_str(b, bd->name);
		bci_str_appendf(b, "</a></td><td>");
		bci_html_escape_str(b, bd->tier);
		bci_str_appendf(b, "</td><td>%s</td><td>%s</td>", when,
				bci_stages_from_series(&bd->stages) ? "series complete" : "registered");
		duration_cell(b, bd->to_first, bd->objective);
		duration_cell(b, bd->to_complete, bd->objective);
		bci_str_appendf(b, "<td>%ld</td><td>%ld</td></tr>\n", bd->runs, bd->regressions);
	}
	bci_str_appendf(b, "</table>\n<h2>machines</h2>\n<table id=\"machines\"><tr><th>machine"
			   "</th><th>runs</th><th>busy</th><th>of the window</th></tr>\n");
	for (size_t i = 0; i < m->n_machines; i++) {
		bci_str_appendf(b, "<tr><td>");
		bci_html_escape_str(b, m->machines[i].name);
		bci_str_appendf(b, "</td><td>%ld</td><td>", m->machines[i].runs);
		bci_duration_text(b, m->machines[i].busy);
		bci_str_appendf(b, "</td><td>%.1f %%</td></tr>\n",
				span > 0 ? 100 * m->machines[i].busy / span : 0);
	}
	bci_str_appendf(b, "</table>\n<h2>tests per day</h2>\n<table id=\"days\"><tr><th>day (UTC)"
			   "</th><th>runs</th><th>results</th></tr>\n");
	for (size_t i = 0; i < m->n_days; i++) {
		char day[16];
		time_t t = (time_t)m->days[i].day * 86400;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(day, sizeof(day), "%Y-%m-%d", &tm);
		bci_str_appendf(b, "<tr><td>%s</td><td>%ld</td><td>%ld</td></tr>\n", day,
				m->days[i].runs, m->days[i].results);
	}
	bci_str_appendf(b, "</table>\n<p>%ld results, %ld regressions found.</p>\n</body></html>\n",
			m->results, m->regressions);
	return b->data ? 0 : -ENOMEM;
}
