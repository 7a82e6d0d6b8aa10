// SPDX-License-Identifier: MIT
/*
 * The pages `serve` renders from the store on request (serve/pages.c routes
 * them and caches them until the next ingest): the list of builds (and
 * the uploads serve refused, from the data folder's records), a
 * build's matrix (matrix_html.c), a result with its out/err/dmesg and the
 * crash records of its run, a test's history across builds, and a machine's
 * suspend/resume latency across builds as an inline SVG plot.
 *
 * Every name and every byte of output goes through bci_html_escape(); names
 * in links through bci_html_url_escape().
 */
#include "report.h"
#include "machine_pages.h"
#include "../store/refused.h"
#include "../store/store.h"
#include "../serve/console_log.h"
#include "strv.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void page_begin(struct bci_str *b, const char *title_prefix, const char *title)
{
	bci_str_appendf(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s",
			title_prefix);
	bci_html_escape_str(b, title);
	bci_str_appendf(b, "</title>\n%s</head><body>\n<p><a href=\"/\">builds</a> · "
			   "<a href=\"/metrics\">metrics</a></p>\n", bci_html_style);
}

static int page_end(struct bci_str *b)
{
	bci_str_appendf(b, "</body></html>\n");
	return b->data ? 0 : -ENOMEM;
}

static void time_cell(struct bci_str *b, double when)
{
	char text[32] = "?";
	time_t t = (time_t)when;
	struct tm tm;

	if (when > 0 && gmtime_r(&t, &tm))
		strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
	bci_str_appendf(b, "<td>%s</td>", text);
}

static void result_link(struct bci_str *b, const char *machine, const char *run_id, const char *test)
{
	bci_str_appendf(b, "/machines/");
	bci_html_url_escape(b, machine);
	bci_str_appendf(b, "/runs/");
	bci_html_url_escape(b, run_id);
	bci_str_appendf(b, "/results/");
	bci_html_url_escape(b, test);
}

/* ---- the builds ---- */

/* One row per build into @ctx (a bci_strv): the page lists them newest first. */
static int build_row(const struct bci_store_build_times *build, void *ctx)
{
	struct bci_str b = { 0 };
	int ret;

	bci_str_appendf(&b, "<tr><td><a href=\"/builds/");
	bci_html_url_escape(&b, build->name);
	bci_str_appendf(&b, "\">");
	bci_html_escape_str(&b, build->name);
	bci_str_appendf(&b, "</a></td><td>");
	bci_html_escape_str(&b, build->tier);
	bci_str_appendf(&b, "</td>");
	time_cell(&b, build->registered);
	bci_str_appendf(&b, "<td>%ld</td></tr>\n", build->runs);
	ret = b.data ? bci_strv_add(ctx, b.data) : -ENOMEM;
	bci_str_free(&b);
	return ret;
}

/* On the front page: the newest refusals, the rest on /refused. */
#define INDEX_REFUSED_MAX 10

/* A table of @list's first @max records (0: all), nothing when it is empty. */
static void refused_table(struct bci_str *b, const struct bci_refused *list, size_t count,
			  size_t max)
{
	size_t shown = max && count > max ? max : count;

	if (!count)
		return;
	bci_str_appendf(b, "<table>\n<tr><th>refused (UTC)</th><th>machine</th><th>run</th>"
			   "<th>archive sha256</th><th>bytes</th><th>times</th><th>why</th></tr>\n");
	for (size_t i = 0; i < shown; i++) {
		const struct bci_refused *r = &list[i];

		bci_str_appendf(b, "<tr>");
		time_cell(b, (double)r->time);
		bci_str_appendf(b, "<td>");
		bci_html_escape_str(b, r->machine);
		bci_str_appendf(b, "</td><td>");
		bci_html_escape_str(b, r->run_id);
		bci_str_appendf(b, "</td><td><code>%s</code></td><td>%llu</td><td>%llu</td><td>",
				r->sha256, (unsigned long long)r->size, (unsigned long long)r->count);
		bci_html_escape_str(b, r->reason);
		bci_str_appendf(b, "</td></tr>\n");
	}
	bci_str_appendf(b, "</table>\n");
	if (shown < count)
		bci_str_appendf(b, "<p><a href=\"/refused\">all %zu refused uploads</a></p>\n", count);
}

static const char refused_intro[] =
	"<p>Archives serve did not take (422): each run stays on its machine, whose collect "
	"sends it again at its next boot; a limit raised (bootci-aggregator-serve(1)) lets it in. "
	"<a href=\"/api/v1/refused\">JSON</a></p>\n";

int bci_pages_index(struct bci_store *store, const char *data_dir, struct bci_str *b, char *err,
		    size_t err_size)
{
	struct bci_strv rows = { 0 };
	struct bci_refused *refused = NULL;
	size_t refused_count = 0;
	int ret;

	ret = bci_store_metrics_builds(store, 0, 1e18, build_row, &rows, err, err_size);
	if (ret < 0) {
		bci_strv_free(&rows);
		return ret;
	}
	page_begin(b, "bootci: ", "builds");
	/* Records that cannot be read do not take the builds down with them: said instead. */
	if (bci_refused_list(data_dir, NULL, &refused, &refused_count, err, err_size) < 0) {
		bci_str_appendf(b, "<h2 id=\"refused\">refused uploads</h2>\n<p>");
		bci_html_escape_str(b, err);
		bci_str_appendf(b, "</p>\n");
		err[0] = '\0';
	} else if (refused_count) {
		bci_str_appendf(b, "<h2 id=\"refused\">refused uploads</h2>\n%s", refused_intro);
		refused_table(b, refused, refused_count, INDEX_REFUSED_MAX);
	}
	free(refused);
	bci_str_appendf(b, "<h1>builds</h1>\n<table>\n<tr><th>build</th><th>tier</th>"
			   "<th>registered (UTC)</th><th>runs</th></tr>\n");
	for (size_t i = rows.count; i > 0; i--)
		bci_str_appendf(b, "%s", rows.items[i - 1]);
	bci_str_appendf(b, "</table>\n");
	bci_strv_free(&rows);
	ret = bci_pages_machines_list(store, b, err, err_size);
	return ret < 0 ? ret : page_end(b);
}

int bci_pages_refused(const char *data_dir, struct bci_str *b, char *err, size_t err_size)
{
	struct bci_refused *refused = NULL;
	size_t count = 0;
	int ret;

	ret = bci_refused_list(data_dir, NULL, &refused, &count, err, err_size);
	if (ret < 0)
		return ret;
	page_begin(b, "bootci: ", "refused uploads");
	bci_str_appendf(b, "<h1>refused uploads</h1>\n%s", refused_intro);
	if (!count)
		bci_str_appendf(b, "<p>None.</p>\n");
	refused_table(b, refused, count, 0);
	free(refused);
	return page_end(b);
}

/* ---- a build's matrix ---- */

static int stages_read(const struct bci_store_build_times *times, void *ctx)
{
	bci_stages_from_times(times, ctx);
	return 0;
}

int bci_pages_matrix(struct bci_store *store, const char *build,
		     const struct bci_report_options *options, const struct bci_matrix_query *query,
		     struct bci_str *b, char *err, size_t err_size)
{
	struct bci_matrix_view view = { .query = query };
	struct bci_report *report = NULL;
	struct bci_stages stages;
	int ret;

	/* The matrix takes each machine's results from the report's reading of them. */
	ret = bci_matrix_report(store, build, options, &report, &view, err, err_size);
	if (ret >= 0 && (ret = bci_store_build_times_get(store, build, stages_read, &stages, err,
							 err_size)) > 0)
		view.stages = &stages;
	if (ret >= 0)
		ret = bci_html_matrix(report, &view, BCI_HTML_SERVED, b);
	bci_matrix_release(&view);
	bci_report_free(report);
	return ret;
}

/* ---- a result ---- */

struct result_found {
	int64_t run_key;
	char *build;
	char *state;
	int status;
	double duration;
};

static int result_keep(const struct bci_store_run *run, const struct bci_store_result *result,
		       void *ctx)
{
	struct result_found *f = ctx;

	f->run_key = run->key;
	f->build = run->build ? strdup(run->build) : NULL;
	f->state = strdup(run->state ? run->state : "");
	f->status = bci_status_parse(result->result);
	f->duration = result->duration;
	return f->state ? 0 : -ENOMEM;
}

struct crash_walk {
	struct bci_str *b;
	struct bci_store *store;
	const char *data_dir, *machine, *run_id;
	int count;
};

static int crash_section(const struct bci_store_crash *crash, void *ctx)
{
	struct crash_walk *w = ctx;
	char err[512] = "", title[600];
	int fd = bci_store_run_file_open(w->store, w->data_dir, w->machine, w->run_id, crash->path,
					 err, sizeof(err));

	snprintf(title, sizeof(title), "crash record %s (%s), found by boot %d",
		 crash->name ? crash->name : "?", crash->source ? crash->source : "?", crash->boot);
	bci_html_file_section(w->b, title, fd, err);
	w->count++;
	return 0;
}

/*
 * A result whose boot died (incomplete, crash, abort) shows the crash records
 * of its run: the executor saves the pstore/EFI records of a boot that died
 * when the next boot starts, and the store keeps which boot found each.
 */
static int status_died(int status)
{
	return status == BCI_STATUS_INCOMPLETE || status == BCI_STATUS_CRASH ||
	       status == BCI_STATUS_ABORT;
}

/*
 * The machine's console, when serve keeps one (DATA/consoles/<machine>,
 * serve/console_log.h): a result whose boot may have ended while it ran links the
 * console of that boot from the test's start (serve finds the boot of this run
 * that ended while the test ran, and says so when none did), and every result
 * links the machine's boots. A stat per page: the page is cached.
 */
static void console_links(struct bci_str *b, const char *data_dir, const char *machine,
			  const char *run_id, const char *test, int status)
{
	char dir[PATH_MAX];
	struct stat st;

	if (bci_consoles_dir(data_dir, machine, dir, sizeof(dir)) < 0 || stat(dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		return;
	bci_str_appendf(b, "<h2>console</h2>\n<p>");
	if (status_died(status) || status == BCI_STATUS_TIMEOUT) {
		bci_str_appendf(b, "<a href=\"");
		result_link(b, machine, run_id, test);
		bci_str_appendf(b, "/console\">the console of the boot that ended while it ran</a>, "
				   "from its start · ");
	}
	bci_str_appendf(b, "<a href=\"/machines/");
	bci_html_url_escape(b, machine);
	bci_str_appendf(b, "/consoles/\">every boot's console of ");
	bci_html_escape_str(b, machine);
	bci_str_appendf(b, "</a></p>\n");
}

int bci_pages_result(struct bci_store *store, const char *data_dir, const char *machine,
		     const char *run_id, const char *test, struct bci_str *b, char *err,
		     size_t err_size)
{
	struct result_found found = { .status = -1 };
	int ret;

	ret = bci_store_result_get(store, machine, run_id, test, result_keep, &found, err, err_size);
	if (ret < 0)
		goto out;
	page_begin(b, "", test);
	bci_str_appendf(b, "<h1>");
	bci_html_escape_str(b, test);
	bci_str_appendf(b, "</h1>\n<p>machine <a href=\"/machines/");
	bci_html_url_escape(b, machine);
	bci_str_appendf(b, "\">");
	bci_html_escape_str(b, machine);
	bci_str_appendf(b, "</a>, run <a href=\"/machines/");
	bci_html_url_escape(b, machine);
	bci_str_appendf(b, "/runs/");
	bci_html_url_escape(b, run_id);
	bci_str_appendf(b, "\">");
	bci_html_escape_str(b, run_id);
	bci_str_appendf(b, "</a> (");
	bci_html_escape_str(b, found.state);
	bci_str_appendf(b, ")");
	if (found.build) {
		bci_str_appendf(b, ", build <a href=\"/builds/");
		bci_html_url_escape(b, found.build);
		bci_str_appendf(b, "\">");
		bci_html_escape_str(b, found.build);
		bci_str_appendf(b, "</a>");
	}
	if (found.status >= 0)
		bci_str_appendf(b, ": <span class=\"%s\">%s</span>", bci_status_name(found.status),
				bci_status_label(found.status));
	if (found.duration >= 0)
		bci_str_appendf(b, " in %.3f s", found.duration);
	bci_str_appendf(b, " · <a href=\"/tests/");
	bci_html_url_escape(b, test);
	bci_str_appendf(b, "\">history</a></p>\n");
	bci_html_log_section(b, store, data_dir, machine, run_id, test, "out");
	bci_html_log_section(b, store, data_dir, machine, run_id, test, "err");
	bci_html_log_section(b, store, data_dir, machine, run_id, test, "dmesg");
	if (status_died(found.status)) {
		struct crash_walk w = { b, store, data_dir, machine, run_id, 0 };

		ret = bci_store_crashes_each(store, found.run_key, crash_section, &w, err, err_size);
		if (ret < 0)
			goto out;
		if (!w.count)
			bci_str_appendf(b, "<h2>crash record</h2>\n<p>none: the boot that died left"
					   " no pstore or EFI record</p>\n");
	}
	console_links(b, data_dir, machine, run_id, test, found.status);
	ret = page_end(b);
out:
	free(found.build);
	free(found.state);
	return ret;
}

/* ---- a test's history ---- */

static int history_row(const struct bci_store_run *run, const struct bci_store_result *result,
		       void *ctx)
{
	struct bci_str *b = ctx;
	int status = bci_status_parse(result->result);

	bci_str_appendf(b, "<tr>");
	time_cell(b, run->ingested);
	bci_str_appendf(b, "<td>");
	if (run->build) {
		bci_str_appendf(b, "<a href=\"/builds/");
		bci_html_url_escape(b, run->build);
		bci_str_appendf(b, "\">");
		bci_html_escape_str(b, run->build);
		bci_str_appendf(b, "</a>");
	}
	bci_str_appendf(b, "</td><td><a href=\"/machines/");
	bci_html_url_escape(b, run->machine);
	bci_str_appendf(b, "\">");
	bci_html_escape_str(b, run->machine);
	bci_str_appendf(b, "</a></td><td><a href=\"/machines/");
	bci_html_url_escape(b, run->machine);
	bci_str_appendf(b, "/runs/");
	bci_html_url_escape(b, run->run_id);
	bci_str_appendf(b, "\">");
	bci_html_escape_str(b, run->run_id);
	bci_str_appendf(b, "</a></td><td class=\"%s\"><a href=\"", status >= 0 ? bci_status_name(status) : "");
	result_link(b, run->machine, run->run_id, result->name);
	bci_str_appendf(b, "\">");
	bci_html_escape_str(b, status >= 0 ? bci_status_name(status) : result->result);
	bci_str_appendf(b, "</a></td></tr>\n");
	return 0;
}

int bci_pages_history(struct bci_store *store, const char *test, struct bci_str *b, char *err,
		      size_t err_size)
{
	int ret;

	page_begin(b, "history: ", test);
	bci_str_appendf(b, "<h1>");
	bci_html_escape_str(b, test);
	bci_str_appendf(b, "</h1>\n<table>\n<tr><th>ingested (UTC)</th><th>build</th><th>machine</th>"
			   "<th>run</th><th>result</th></tr>\n");
	ret = bci_store_test_history(store, test, NULL, history_row, b, err, err_size);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		snprintf(err, err_size, "no result of test '%s' is stored", test);
		return -ENOENT;
	}
	bci_str_appendf(b, "</table>\n");
	return page_end(b);
}

/* ---- a bisection ---- */

struct bisect_page {
	struct bci_str *b;
	int patches;
	bool tree;			/* a tree's commits, else a series' patches */
};

static int bisect_head(const struct bci_store_bisect *row, void *ctx)
{
	struct bisect_page *p = ctx;
	struct bci_str *b = p->b;

	p->patches = row->patches;
	p->tree = row->commits != NULL;
	page_begin(b, "bisect: ", row->build);
	bci_str_appendf(b, "<h1>bisect ");
	bci_html_escape_str(b, row->build);
	if (p->tree) {
		bci_str_appendf(b, "</h1>\n<p>tree ");
		bci_html_escape_str(b, row->project);
		bci_str_appendf(b, ", %d commits since its baseline", row->patches);
	} else {
		bci_str_appendf(b, "</h1>\n<p>series %lld of ", (long long)row->series);
		bci_html_escape_str(b, row->project);
		bci_str_appendf(b, ", %d patches", row->patches);
	}
	bci_str_appendf(b, " (<a href=\"/builds/");
	bci_html_url_escape(b, row->build);
	bci_str_appendf(b, "\">its matrix</a>); started ");
	time_cell(b, row->started);
	bci_str_appendf(b, "</p>\n<p><b>");
	bci_html_escape_str(b, row->state);
	bci_str_appendf(b, "</b>%s", row->verdict ? ": " : "");
	if (row->verdict)
		bci_html_escape_str(b, row->verdict);
	bci_str_appendf(b, "</p>\n<p>regressed tests:</p>\n<ul>\n");
	for (const char *t = row->tests; *t;) {
		size_t n = strcspn(t, "\n");

		bci_str_appendf(b, "<li>");
		bci_html_escape(b, t, n);
		bci_str_appendf(b, "</li>\n");
		t += n + (t[n] == '\n');
	}
	bci_str_appendf(b, "</ul>\n<p>run on: ");
	bci_html_escape_str(b, row->machines);
	bci_str_appendf(b, "</p>\n<table>\n<tr><th>step</th><th>%s</th><th>candidate</th>"
			   "<th>verdict</th><th>why</th><th>judged (UTC)</th></tr>\n",
			p->tree ? "commit" : "patches");
	return 0;
}

static int bisect_step_row(const struct bci_store_bisect_step *s, void *ctx)
{
	struct bisect_page *p = ctx;
	struct bci_str *b = p->b;

	bci_str_appendf(b, "<tr><td>%d</td><td>%s%d of %d</td><td><a href=\"/builds/", s->step,
			p->tree ? "" : "1 to ", s->patches, p->patches);
	bci_html_url_escape(b, s->candidate);
	bci_str_appendf(b, "\">");
	bci_html_escape_str(b, s->candidate);
	bci_str_appendf(b, "</a></td><td>");
	bci_html_escape_str(b, s->state);
	bci_str_appendf(b, "</td><td>");
	if (s->note)
		bci_html_escape_str(b, s->note);
	bci_str_appendf(b, "</td><td>");
	time_cell(b, s->ended);
	bci_str_appendf(b, "</td></tr>\n");
	return 0;
}

int bci_pages_bisect(struct bci_store *store, const char *build, struct bci_str *b, char *err,
		     size_t err_size)
{
	struct bisect_page p = { .b = b };
	int ret = bci_store_bisect_get(store, build, bisect_head, &p, err, err_size);

	if (ret == 0) {
		snprintf(err, err_size, "build '%s' has no bisection", build);
		return -ENOENT;
	}
	if (ret > 0)
		ret = bci_store_bisect_steps_each(store, build, bisect_step_row, &p, err, err_size);
	if (ret < 0)
		return ret;
	bci_str_appendf(b, "</table>\n");
	return page_end(b);
}

/* ---- a machine's suspend/resume latency ---- */

static double nice_step(double range)
{
	double magnitude = pow(10, floor(log10(range / 5)));
	double steps[] = { 1, 2, 5, 10 };

	for (size_t i = 0; i < 4; i++)
		if (range / (steps[i] * magnitude) <= 6)
			return steps[i] * magnitude;
	return 10 * magnitude;
}

int bci_svg_latency(struct bci_str *b, const char *machine, const struct bci_latency_point *points,
		    size_t n)
{
	const double width = 640, height = 240, left = 56, right = 16, top = 24, bottom = 40;
	double max = 0, step, x_step;

	for (size_t i = 0; i < n; i++) {
		if (!(points[i].latency >= 0) || !isfinite(points[i].latency))
			return -EINVAL;
		if (points[i].latency > max)
			max = points[i].latency;
	}
	if (max <= 0)
		max = 1;
	step = nice_step(max);
	max = ceil(max / step) * step;
	x_step = n > 1 ? (width - left - right) / (double)(n - 1) : 0;
	bci_str_appendf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"latency\" width=\"%.0f\""
			   " height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>"
			   "suspend/resume latency of ", width, height, width, height);
	bci_html_escape_str(b, machine);
	bci_str_appendf(b, "</title>\n");
	/* The axes: y in seconds with a gridline per step, x one tick per run. */
	bci_str_appendf(b, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\""
			   " stroke=\"#000\"/>\n", left, top, left, height - bottom);
	bci_str_appendf(b, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\""
			   " stroke=\"#000\"/>\n", left, height - bottom, width - right, height - bottom);
	for (double v = 0; v <= max + step / 2; v += step) {
		double y = height - bottom - v / max * (height - top - bottom);

		bci_str_appendf(b, "<line class=\"grid\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\""
				   " stroke=\"#ddd\"/><text class=\"ytick\" x=\"%.0f\" y=\"%.1f\""
				   " text-anchor=\"end\">%g s</text>\n", left, y, width - right, y,
				left - 4, y + 4, v);
	}
	bci_str_appendf(b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">runs, oldest first"
			   "</text>\n", (left + width - right) / 2, height - 6);
	if (n > 1) {
		bci_str_appendf(b, "<polyline fill=\"none\" stroke=\"#36c\" points=\"");
		for (size_t i = 0; i < n; i++)
			bci_str_appendf(b, "%s%.1f,%.1f", i ? " " : "", left + x_step * (double)i,
					height - bottom - points[i].latency / max * (height - top - bottom));
		bci_str_appendf(b, "\"/>\n");
	}
	for (size_t i = 0; i < n; i++) {
		double x = left + x_step * (double)i;
		double y = height - bottom - points[i].latency / max * (height - top - bottom);

		bci_str_appendf(b, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#36c\">"
				   "<title>", x, y);
		bci_html_escape_str(b, points[i].label);
		bci_str_appendf(b, ": %.3f s</title></circle>\n", points[i].latency);
		bci_str_appendf(b, "<line class=\"xtick\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\""
				   " stroke=\"#000\"/>\n", x, height - bottom, x, height - bottom + 4);
	}
	bci_str_appendf(b, "</svg>\n");
	return b->data ? 0 : -ENOMEM;
}

struct latency_walk {
	struct bci_store *store;
	struct bci_latency_point *points;
	size_t n;
	char **labels;
	double *cycles;
	size_t n_cycles, cap_cycles;
	char *err;
	size_t err_size;
};

static int cycle_add(const struct bci_store_suspend *cycle, void *ctx)
{
	struct latency_walk *w = ctx;

	if (cycle->latency < 0)
		return 0;
	if (w->n_cycles == w->cap_cycles) {
		size_t cap = w->cap_cycles ? w->cap_cycles * 2 : 64;
		double *grown = realloc(w->cycles, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		w->cycles = grown;
		w->cap_cycles = cap;
	}
	w->cycles[w->n_cycles++] = cycle->latency;
	return 0;
}

static int double_order(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One point per run of the machine that has suspend cycles: their median latency. */
static int run_point(const struct bci_store_run *run, void *ctx)
{
	struct latency_walk *w = ctx;
	struct bci_latency_point *grown;
	char *label;
	double median;
	int ret;

	w->n_cycles = 0;
	ret = bci_store_suspends_each(w->store, run->key, cycle_add, w, w->err, w->err_size);
	if (ret < 0 || !w->n_cycles)
		return ret < 0 ? ret : 0;
	qsort(w->cycles, w->n_cycles, sizeof(*w->cycles), double_order);
	median = w->n_cycles % 2 ? w->cycles[w->n_cycles / 2]
				 : (w->cycles[w->n_cycles / 2 - 1] + w->cycles[w->n_cycles / 2]) / 2;
	if (asprintf(&label, "%s, run %s, %zu cycles", run->build ? run->build : "no build",
		     run->run_id, w->n_cycles) < 0)
		return -ENOMEM;
	grown = realloc(w->points, (w->n + 1) * sizeof(*grown));
	if (!grown) {
		free(label);
		return -ENOMEM;
	}
	w->points = grown;
	w->points[w->n++] = (struct bci_latency_point){ .label = label, .latency = median };
	return 0;
}

int bci_pages_suspend(struct bci_store *store, const char *machine, struct bci_str *b, char *err,
		      size_t err_size)
{
	struct latency_walk w = { .store = store, .err = err, .err_size = err_size };
	int ret;

	ret = bci_store_runs_each(store, machine, run_point, &w, err, err_size);
	if (ret == 0) {
		snprintf(err, err_size, "no run of machine '%s' is stored", machine);
		ret = -ENOENT;
	}
	if (ret < 0)
		goto out;
	page_begin(b, "suspend: ", machine);
	bci_str_appendf(b, "<h1>suspend/resume latency: ");
	bci_html_escape_str(b, machine);
	bci_str_appendf(b, "</h1>\n<p>The median latency of each run's suspend cycles, oldest run"
			   " first.</p>\n");
	if (!w.n)
		bci_str_appendf(b, "<p>No run of this machine has a suspend cycle with a latency.</p>\n");
	else
		ret = bci_svg_latency(b, machine, w.points, w.n);
	if (ret >= 0) {
		bci_str_appendf(b, "<table>\n<tr><th>run</th><th>median latency (s)</th></tr>\n");
		for (size_t i = 0; i < w.n; i++) {
			bci_str_appendf(b, "<tr><td>");
			bci_html_escape_str(b, w.points[i].label);
			bci_str_appendf(b, "</td><td>%.3f</td></tr>\n", w.points[i].latency);
		}
		bci_str_appendf(b, "</table>\n");
		ret = page_end(b);
	}
out:
	for (size_t i = 0; i < w.n; i++)
		free((char *)w.points[i].label);
	free(w.points);
	free(w.cycles);
	return ret;
}
