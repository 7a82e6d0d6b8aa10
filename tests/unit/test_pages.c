// SPDX-License-Identifier: MIT
/*
 * The pages' pure parts: the latency plot (a circle per point, both axes,
 * the machine's name and the points' labels escaped, bad latencies refused),
 * the metrics' window parsing (every refusal) and objectives, and serve's
 * page routes (every refusal: method, bad names, paths that try to leave);
 * and on a real store (SQLite, or the PostgreSQL database in
 * BOOTCI_TEST_STORE_URL, as tests/aggregator/store-postgres.t runs it): the
 * metrics' queries and numbers (latency to first result and complete
 * report, objectives met, missed and not known yet, busy time, tests per
 * day, regressions found, a window refused), the history page, the suspend
 * page and the result page of a run whose archive is gone; a build's stages
 * from the mail to the reply (stages.c), pure and as the store keeps them,
 * with the metrics and the matrix page that show them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pgreset.h"

#include "../../aggregator/master/report/report.h"
#include "../../aggregator/master/serve/pages.h"
#include "../../aggregator/master/store/store.h"
#include "fsutil.h"
#include "strv.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The metrics' JSON as a string (malloc'ed). */
static char *metrics_json(const struct bci_metrics *m)
{
	char *json = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&json, &len);

	assert_non_null(out);
	bci_metrics_json(out, m);
	assert_int_equal(fclose(out), 0);
	assert_non_null(json);
	return json;
}

static void test_svg(void **state)
{
	struct bci_latency_point points[] = {
		{ "build-1, run <a>", 1.5 }, { "build-2", 2.0 }, { "build-3", 0.25 },
	};
	struct bci_str b = { 0 };

	(void)state;
	assert_int_equal(bci_svg_latency(&b, "lab-<script>&\"", points, 3), 0);
	assert_non_null(b.data);
	assert_int_equal(count(b.data, "<circle class=\"point\""), 3);
	assert_int_equal(count(b.data, "<line class=\"axis\""), 2);
	assert_int_equal(count(b.data, "<line class=\"xtick\""), 3);
	/* 0 to 2 s by 0.5 s: five gridlines, 2 s the top. */
	assert_int_equal(count(b.data, "<text class=\"ytick\""), 5);
	assert_non_null(strstr(b.data, ">2 s</text>"));
	assert_non_null(strstr(b.data, "lab-&lt;script&gt;&amp;&quot;"));
	assert_null(strstr(b.data, "<script>"));
	assert_non_null(strstr(b.data, "build-1, run &lt;a&gt;: 1.500 s"));
	/* The highest point sits on the top gridline, the lowest near the axis. */
	assert_non_null(strstr(b.data, "cy=\"24.0\""));
	assert_non_null(strstr(b.data, "<polyline"));
	bci_str_free(&b);

	/* One point: no line, still a point. */
	assert_int_equal(bci_svg_latency(&b, "m", points, 1), 0);
	assert_null(strstr(b.data, "<polyline"));
	assert_int_equal(count(b.data, "<circle"), 1);
	bci_str_free(&b);

	struct bci_latency_point bad[] = { { "x", -1 } }, nan_point[] = { { "x", NAN } };

	assert_int_equal(bci_svg_latency(&b, "m", bad, 1), -EINVAL);
	bci_str_free(&b);
	assert_int_equal(bci_svg_latency(&b, "m", nan_point, 1), -EINVAL);
	bci_str_free(&b);
}

static void test_window(void **state)
{
	double from, to;
	char err[256];

	(void)state;
	assert_int_equal(bci_metrics_window_parse(NULL, NULL, 1000000, &from, &to, err, sizeof(err)), 0);
	assert_true(from == 1000000 - 7 * 86400 && to == 1000000);
	assert_int_equal(bci_metrics_window_parse("10", "20", 5, &from, &to, err, sizeof(err)), 0);
	assert_true(from == 10 && to == 20);
	assert_int_equal(bci_metrics_window_parse("", "20", 10 * 86400, &from, &to, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "after"));
	assert_int_equal(bci_metrics_window_parse("x", NULL, 5, &from, &to, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "from 'x'"));
	assert_int_equal(bci_metrics_window_parse(NULL, "-5", 5, &from, &to, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "to '-5'"));
	assert_int_equal(bci_metrics_window_parse("1e3", NULL, 5, &from, &to, err, sizeof(err)), -EINVAL);
	assert_int_equal(bci_metrics_window_parse("99999999999999999999", NULL, 5, &from, &to, err,
						  sizeof(err)), -EINVAL);
	assert_true(bci_metrics_objective("fast") == 1800);
	assert_true(bci_metrics_objective("full") == 6 * 3600);
}

static void test_routes(void **state)
{
	struct bci_page_route r;
	char err[256];

	(void)state;
	assert_int_equal(bci_serve_pages_route("GET", "/", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, BCI_PAGE_INDEX);
	assert_int_equal(bci_serve_pages_route("HEAD", "/builds/drm-tip 1", &r, err, sizeof(err)), 0);
	assert_string_equal(r.build, "drm-tip 1");
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/r1/results/igt@a@b", &r,
					       err, sizeof(err)), 0);
	assert_int_equal(r.kind, BCI_PAGE_RESULT);
	assert_string_equal(r.machine, "lab-1");
	assert_string_equal(r.run_id, "r1");
	assert_string_equal(r.test, "igt@a@b");
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/suspend", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, BCI_PAGE_SUSPEND);
	assert_int_equal(bci_serve_pages_route("GET", "/tests/igt@x", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, BCI_PAGE_HISTORY);
	assert_int_equal(bci_serve_pages_route("GET", "/api/v1/metrics", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, BCI_PAGE_METRICS_JSON);
	/* Test names as the store holds them: the rest of the (decoded) path. */
	assert_int_equal(bci_serve_pages_route("GET", "/tests/igt@a@b/c d", &r, err, sizeof(err)), 0);
	assert_string_equal(r.test, "igt@a@b/c d");
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/r/results/igt@a@caf\xc3\xa9/x",
					       &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, BCI_PAGE_RESULT);
	assert_string_equal(r.run_id, "r");
	assert_string_equal(r.test, "igt@a@caf\xc3\xa9/x");

	assert_int_equal(bci_serve_pages_route("POST", "/", &r, err, sizeof(err)), 405);
	assert_int_equal(bci_serve_pages_route("GET", "/builds/..", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/builds/a/b", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/builds/", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/builds/a\x01", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/tests/..", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/tests/a\nb", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/../etc", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/../results/x", &r, err,
					       sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/r/results/..", &r, err,
					       sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/r/results/a\x7f", &r, err,
					       sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/jobs", &r, err, sizeof(err)), 404);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/r/logs", &r, err,
					       sizeof(err)), 404);
	assert_true(bci_serve_pages_owns("/metrics"));
	assert_false(bci_serve_pages_owns("/api/v1/health"));
}

/* ---- on a real store ---- */

struct fixture {
	char dir[PATH_MAX];
	char url[PATH_MAX + 64];
	struct bci_store *store;
	char err[4096];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *url = getenv("BOOTCI_TEST_STORE_URL");

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/bootci-pages-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	if (url && *url) {
		snprintf(f->url, sizeof(f->url), "%s", url);
		pg_reset(url);
	} else {
		snprintf(f->url, sizeof(f->url), "sqlite:%s/bootci.sqlite", f->dir);
	}
	if (bci_store_open(f->url, f->dir, &f->store, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[PATH_MAX + 16];

	bci_store_close(f->store);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void build_add(struct fixture *f, const char *name, const char *tier, double registered)
{
	struct bci_store_build b = { .name = name, .tree = "drm-tip", .commit = "abc", .tier = tier,
				     .registered = registered };

	if (bci_store_build_put(f->store, &b, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
}

/* A run with results "test=status ...", its times, and suspend latencies (-1 ends). */
static void run_add(struct fixture *f, const char *machine, const char *run_id, const char *build,
		    double started, double ended, double ingested, const char *results,
		    const double *latencies)
{
	char *copy = strdup(results), *save = NULL, digest[80];
	struct bci_store_run run = { .machine = machine, .run_id = run_id, .build = build,
				     .digest = digest, .archive_path = "archives/gone.tar.zst",
				     .archive_root = "", .state = "done", .started = started,
				     .ended = ended, .ingested = ingested };
	int64_t key;
	int job = 0;

	snprintf(digest, sizeof(digest), "%064x", (unsigned)ingested);
	assert_int_equal(bci_store_begin(f->store, f->err, sizeof(f->err)), 0);
	if (bci_store_run_add(f->store, &run, &key, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');
		struct bci_store_result r = { .job = job++, .name = t, .result = eq + 1, .duration = 1 };

		*eq = '\0';
		if (bci_store_result_add(f->store, key, &r, f->err, sizeof(f->err)) < 0)
			fail_msg("%s", f->err);
	}
	for (int i = 0; latencies && latencies[i] >= 0; i++) {
		struct bci_store_suspend c = { .cycle = i + 1, .state = "mem", .result = "pass",
					       .wall = 3, .suspended = 1, .latency = latencies[i],
					       .kernel_suspend = -1, .kernel_resume = -1, .woke = "rtc" };

		assert_int_equal(bci_store_suspend_add(f->store, key, &c, f->err, sizeof(f->err)), 0);
	}
	if (!strcmp(results, "igt@t@dies=incomplete")) {
		struct bci_store_crash crash = { .boot = 2, .source = "pstore", .name = "dmesg-1",
						 .path = "boot-0002/pstore/dmesg-1" };

		assert_int_equal(bci_store_crash_add(f->store, key, &crash, f->err, sizeof(f->err)), 0);
	}
	assert_int_equal(bci_store_commit(f->store, f->err, sizeof(f->err)), 0);
	free(copy);
}

static void job_add(struct fixture *f, const char *machine, const char *build, const char *state)
{
	struct bci_store_job job = { .machine = machine, .build = build, .tier = "fast", .shards = 1,
				     .testlist = "igt@t@a\n", .run_id = build, .state = state,
				     .queued = 1 };
	int64_t key;

	if (bci_store_job_add(f->store, &job, &key, f->err, sizeof(f->err)) < 0 ||
	    (strcmp(state, "queued") &&
	     bci_store_job_update(f->store, key, state, 1, 2, f->err, sizeof(f->err)) < 0))
		fail_msg("%s", f->err);
}

/*
 * full-1 (full, registered 1000): two runs, the last ingested 25000 s after:
 * complete, beyond 6 h: missed. fast-2 (2000): a run 100 s after, but a
 * job still queued: not complete, and past 30 min at now = 10000: missed.
 * fast-3 (9000): nothing yet, within 30 min at now: not known. fast-4
 * (99999): outside the window.
 */
static void metrics_fill(struct fixture *f)
{
	const double lat1[] = { 0.2, 0.4, 0.3, -1 }, lat2[] = { 1.0, -1 };

	build_add(f, "full-1", "full", 1000);
	build_add(f, "fast-2", "fast", 2000);
	build_add(f, "fast-3", "fast", 9000);
	build_add(f, "fast-4", "fast", 99999);
	run_add(f, "lab-1", "r1", "full-1", 1100, 1500, 1600, "igt@t@a=pass igt@t@b=pass", lat1);
	run_add(f, "lab-2", "r2", "full-1", 20000, 0, 26000, "igt@t@a=pass", NULL);
	run_add(f, "lab-1", "r3", "fast-2", 2000, 2050, 2100, "igt@t@a=fail igt@t@b=pass", lat2);
	run_add(f, "lab-1", "r4", "fast-4", 100000, 100010, 100020, "igt@t@dies=incomplete", NULL);
	job_add(f, "lab-1", "fast-2", "done");
	job_add(f, "lab-2", "fast-2", "queued");
	job_add(f, "lab-2", "full-1", "abandoned");
}

static void test_metrics(void **state)
{
	struct fixture *f = *state;
	struct bci_metrics_options options = { .from = 0, .to = 10000, .now = 10000,
					       .report = { .data_dir = f->dir, .window = 5 } };
	struct bci_metrics *m;
	struct bci_str page = { 0 };
	char *json;

	metrics_fill(f);
	assert_int_equal(bci_metrics_compute(f->store, &options, &m, f->err, sizeof(f->err)), 0);
	assert_int_equal(m->n_builds, 3);
	assert_string_equal(m->builds[0].name, "full-1");
	if (!(m->builds[0].to_first == 600 && m->builds[0].to_complete == 25000))
		fail_msg("full-1: %f %f", m->builds[0].to_first, m->builds[0].to_complete);
	assert_int_equal(m->builds[0].met, 0);
	assert_true(m->builds[0].objective == 6 * 3600);
	assert_string_equal(m->builds[1].name, "fast-2");
	assert_true(m->builds[1].to_first == 100 && m->builds[1].to_complete == -1);
	assert_int_equal(m->builds[1].met, 0);
	/* igt@t@a: pass -> fail, and lab-1's latency 1.0 s beyond full-1's 0.2 to 0.4 s. */
	assert_int_equal(m->builds[1].regressions, 2);
	assert_string_equal(m->builds[2].name, "fast-3");
	assert_true(m->builds[2].to_first == -1 && m->builds[2].to_complete == -1);
	assert_int_equal(m->builds[2].met, -1);
	assert_int_equal(m->tier[0].builds, 2);
	assert_int_equal(m->tier[0].judged, 1);
	assert_int_equal(m->tier[0].met, 0);
	assert_int_equal(m->tier[1].builds, 1);
	assert_int_equal(m->builds[0].regressions, 0);
	assert_int_equal(m->regressions, 2);
	/* lab-2's run started outside the window (and never ended): only lab-1 is busy. */
	assert_int_equal(m->n_machines, 1);
	assert_string_equal(m->machines[0].name, "lab-1");
	assert_int_equal(m->machines[0].runs, 2);
	assert_true(m->machines[0].busy == 450);
	/* Runs ingested in the window: r1 and r3, both on day 0. */
	assert_int_equal(m->n_days, 1);
	assert_int_equal(m->days[0].day, 0);
	assert_int_equal(m->days[0].runs, 2);
	assert_int_equal(m->results, 4);

	json = metrics_json(m);
	assert_non_null(strstr(json, "\"to_complete\": null"));
	assert_non_null(strstr(json, "\"objective_met\": false"));
	assert_non_null(strstr(json, "\"busy_seconds\": 450"));
	assert_non_null(strstr(json, "\"day\": \"1970-01-01\""));
	free(json);
	assert_int_equal(bci_metrics_html(&page, m), 0);
	assert_non_null(strstr(page.data, "<td class=\"fail\">6.9 h</td>"));
	assert_non_null(strstr(page.data, "<td class=\"pass\">100 s</td><td>-</td>"));
	bci_str_free(&page);
	bci_metrics_free(m);

	/* Before fast-3's objective passed: not known yet; after: missed. */
	options.now = 9000 + 1799;
	assert_int_equal(bci_metrics_compute(f->store, &options, &m, f->err, sizeof(f->err)), 0);
	assert_int_equal(m->builds[2].met, -1);
	bci_metrics_free(m);
	options.now = 9000 + 1801;
	assert_int_equal(bci_metrics_compute(f->store, &options, &m, f->err, sizeof(f->err)), 0);
	assert_int_equal(m->builds[2].met, 0);
	bci_metrics_free(m);

	/* An empty window; a window that ends before it starts. */
	options.from = 200000;
	options.to = 300000;
	assert_int_equal(bci_metrics_compute(f->store, &options, &m, f->err, sizeof(f->err)), 0);
	assert_int_equal(m->n_builds + m->n_machines + m->n_days, 0);
	bci_metrics_free(m);
	options.to = 100;
	assert_int_equal(bci_metrics_compute(f->store, &options, &m, f->err, sizeof(f->err)), -EINVAL);
	assert_null(m);
	assert_non_null(strstr(f->err, "after its end"));
}

static void test_store_pages(void **state)
{
	struct fixture *f = *state;
	struct bci_str b = { 0 };

	metrics_fill(f);
	assert_int_equal(bci_pages_history(f->store, "igt@t@a", &b, f->err, sizeof(f->err)), 0);
	assert_int_equal(count(b.data, "<tr><td>1970-01-01"), 3);
	assert_non_null(strstr(b.data, "<td class=\"fail\"><a href=\"/machines/lab-1/runs/r3/results/igt@t@a\">fail</a>"));
	bci_str_free(&b);
	assert_int_equal(bci_pages_history(f->store, "igt@none", &b, f->err, sizeof(f->err)), -ENOENT);
	bci_str_free(&b);

	/* lab-1: r1's median of 0.2, 0.4, 0.3 and r3's 1.0; r4 has no cycle. */
	assert_int_equal(bci_pages_suspend(f->store, "lab-1", &b, f->err, sizeof(f->err)), 0);
	assert_int_equal(count(b.data, "<circle class=\"point\""), 2);
	assert_non_null(strstr(b.data, "full-1, run r1, 3 cycles: 0.300 s"));
	assert_non_null(strstr(b.data, "fast-2, run r3, 1 cycles: 1.000 s"));
	bci_str_free(&b);
	assert_int_equal(bci_pages_suspend(f->store, "lab-2", &b, f->err, sizeof(f->err)), 0);
	assert_non_null(strstr(b.data, "No run of this machine has a suspend cycle"));
	bci_str_free(&b);
	assert_int_equal(bci_pages_suspend(f->store, "lab-9", &b, f->err, sizeof(f->err)), -ENOENT);
	bci_str_free(&b);

	/* The archive is gone: the page still comes, each log and the crash record "not available". */
	assert_int_equal(bci_pages_result(f->store, f->dir, "lab-1", "r4", "igt@t@dies", &b, f->err,
					  sizeof(f->err)), 0);
	assert_int_equal(count(b.data, "<p>not available: "), 4);
	assert_non_null(strstr(b.data, "<h2>crash record dmesg-1 (pstore), found by boot 2</h2>"));
	bci_str_free(&b);
	assert_int_equal(bci_pages_result(f->store, f->dir, "lab-1", "r9", "igt@t@a", &b, f->err,
					  sizeof(f->err)), -ENOENT);
	bci_str_free(&b);

	/* No console kept: no console links. */
	assert_int_equal(bci_pages_result(f->store, f->dir, "lab-1", "r3", "igt@t@a", &b, f->err,
					  sizeof(f->err)), 0);
	assert_null(strstr(b.data, "<h2>console</h2>"));
	bci_str_free(&b);
	/* serve reads lab-1's console: a result whose boot died links its tail, every result the list. */
	{
		char consoles[PATH_MAX + 32];

		snprintf(consoles, sizeof(consoles), "%s/consoles/lab-1", f->dir);
		assert_int_equal(bci_mkdir_p(consoles, 0755), 0);
	}
	assert_int_equal(bci_pages_result(f->store, f->dir, "lab-1", "r4", "igt@t@dies", &b, f->err,
					  sizeof(f->err)), 0);
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1/runs/r4/results/igt@t@dies/console\">"));
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1/consoles/\">"));
	bci_str_free(&b);
	assert_int_equal(bci_pages_result(f->store, f->dir, "lab-1", "r3", "igt@t@a", &b, f->err,
					  sizeof(f->err)), 0);
	assert_null(strstr(b.data, "/console\">"));
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1/consoles/\">"));
	bci_str_free(&b);

	/* A crash record's path may not leave the run folder. */
	assert_int_equal(bci_store_run_file_open(f->store, f->dir, "lab-1", "r4", "../x", f->err,
						 sizeof(f->err)), -EINVAL);
	assert_int_equal(bci_store_run_file_open(f->store, f->dir, "lab-1", "r4", "/etc/passwd",
						 f->err, sizeof(f->err)), -EINVAL);
	assert_int_equal(bci_store_run_file_open(f->store, f->dir, "lab-1", "r4", "a/./b", f->err,
						 sizeof(f->err)), -EINVAL);
	assert_int_equal(bci_store_run_file_open(f->store, f->dir, "lab-1", "r4", "a/", f->err,
						 sizeof(f->err)), -EINVAL);
	assert_int_equal(bci_store_run_file_open(f->store, f->dir, "lab-1", "r9", "a", f->err,
						 sizeof(f->err)), -ENOENT);

	assert_int_equal(bci_pages_index(f->store, f->dir, &b, f->err, sizeof(f->err)), 0);
	assert_int_equal(count(b.data, "<a href=\"/builds/"), 4);
	/* Newest first. */
	assert_true(strstr(b.data, "/builds/fast-4\"") < strstr(b.data, "/builds/full-1\""));
	assert_null(strstr(b.data, "refused uploads"));
	bci_str_free(&b);

	/* A refused upload's record that cannot be read: the builds are still shown, and why. */
	{
		char path[PATH_MAX + 64];

		snprintf(path, sizeof(path), "%s/refused/lab-1", f->dir);
		assert_int_equal(bci_mkdir_p(path, 0755), 0);
		strcat(path, "/r9.json");
		assert_int_equal(bci_write_file_atomic(path, "{", 1, 0644), 0);
		assert_int_equal(bci_pages_index(f->store, f->dir, &b, f->err, sizeof(f->err)), 0);
		assert_int_equal(count(b.data, "<a href=\"/builds/"), 4);
		assert_non_null(strstr(b.data, "/refused/lab-1/r9.json: not a refused upload&#39;s record"));
		bci_str_free(&b);
		assert_int_equal(unlink(path), 0);
	}
}

/* The matrix's columns in natural order (big-1, big-2, big-10), each with its machine's last run. */
static void test_matrix_machines(void **state)
{
	struct fixture *f = *state;
	struct bci_report_options options = { .data_dir = f->dir, .window = 5 };
	struct bci_str b = { 0 };
	struct bci_matrix_query all;
	const char *one, *two, *ten;

	build_add(f, "b-1", "fast", 1000);
	run_add(f, "big-10", "r1", "b-1", 1100, 1200, 1300, "igt@t@a=pass", NULL);
	run_add(f, "big-2", "r2", "b-1", 1100, 1200, 1301, "igt@t@a=pass", NULL);
	run_add(f, "big-1", "r3", "b-1", 1100, 1200, 1302, "igt@t@a=skip", NULL);
	run_add(f, "big-2", "r4", "b-1", 1100, 1200, 1303, "igt@t@a=fail", NULL);
	assert_int_equal(bci_matrix_query_parse(NULL, NULL, NULL, "all", &all, f->err, sizeof(f->err)), 0);
	if (bci_pages_matrix(f->store, "b-1", &options, &all, &b, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	bci_matrix_query_release(&all);
	one = strstr(b.data, ">big-1</a></th>");
	two = strstr(b.data, ">big-2</a></th>");
	ten = strstr(b.data, ">big-10</a></th>");
	assert_non_null(one);
	assert_non_null(two);
	assert_non_null(ten);
	assert_true(one < two && two < ten);
	/* The row: big-1's result, big-2's later run's (r4), big-10's. */
	one = strstr(b.data, "/machines/big-1/runs/r3/results/igt@t@a\">skip<");
	two = strstr(b.data, "/machines/big-2/runs/r4/results/igt@t@a\">fail<");
	ten = strstr(b.data, "/machines/big-10/runs/r1/results/igt@t@a\">pass<");
	assert_non_null(one);
	assert_non_null(two);
	assert_non_null(ten);
	assert_true(one < two && two < ten);
	assert_null(strstr(b.data, "/runs/r2/"));
	bci_str_free(&b);
}

/*
 * A build's stages (stages.c), pure: a series' build starts at its series;
 * each stage took the time since the last one reached before it; a series
 * dated after its pick-up starts at the pick-up; a build published by hand
 * starts at its registration; the fast tier's last stages wait for its jobs.
 */
static void test_stages(void **state)
{
	struct bci_store_build_times t = {
		.name = "pw-lab-7", .tier = "fast", .registered = 1300, .first_result = 1500,
		.last_result = 1700, .runs = 1, .jobs = 1, .jobs_open = 0, .series = 1000,
		.noticed = 1060, .pending = 1062, .build_started = 1061, .build_ended = 1290,
		.first_boot = 1310, .tests_started = 1330, .tests_ended = 1650,
		.fast_last_result = 1700, .verdict = 1705, .verdict_posted = 1707,
		.reply_queued = 1800, .reply_sent = 1801,
	};
	struct bci_stages s;
	struct bci_str b = { 0 };
	bool known;

	(void)state;
	bci_stages_from_times(&t, &s);
	assert_true(bci_stages_from_series(&s));
	assert_true(bci_stages_start(&s) == 1000);
	assert_true(bci_stages_took(&s, BCI_AT_NOTICED, &known) == 60 && known);
	assert_string_equal(bci_stage_took_label(BCI_AT_NOTICED), "waiting for Patchwork's poll");
	/* The builder started before pending went out: a second before it, as the times say. */
	assert_true(bci_stages_took(&s, BCI_AT_BUILD_STARTED, &known) == -1 && known);
	assert_true(bci_stages_took(&s, BCI_AT_BUILD_ENDED, &known) == 229 && known);
	assert_true(bci_stages_took(&s, BCI_AT_REPLY_SENT, &known) == 1 && known);
	bci_stages_took(&s, BCI_AT_SERIES, &known);
	assert_false(known);
	assert_int_equal(bci_stages_html(&b, &s, 1800), 0);
	assert_non_null(strstr(b.data, "The clock starts when the series was complete on Patchwork."));
	assert_int_equal(count(b.data, "<tr class=\"stage\""), BCI_STAGE_COUNT);
	assert_non_null(strstr(b.data, "<tr class=\"stage\" data-stage=\"noticed\"><td>picked up by the"
				       " master's poll</td><td>1970-01-01 00:17:40</td><td>60 s</td>"
				       "<td>60 s</td><td>waiting for Patchwork's poll</td></tr>"));
	assert_non_null(strstr(b.data, "data-stage=\"build_started\""));
	assert_non_null(strstr(b.data, "<td>-1 s</td><td>waiting for the builder</td>"));
	bci_str_free(&b);

	/* A sender's clock ahead of the master's: the series complete at its pick-up. */
	t.series = 2000;
	bci_stages_from_times(&t, &s);
	assert_true(bci_stages_start(&s) == 1060);
	bci_stages_took(&s, BCI_AT_NOTICED, &known);
	assert_true(known && bci_stages_took(&s, BCI_AT_NOTICED, &known) == 0);

	/* By hand: no series, the clock at the registration; a job open: no last stages yet. */
	t = (struct bci_store_build_times){ .name = "b", .tier = "fast", .registered = 500,
					    .first_result = 900, .last_result = 900, .runs = 1,
					    .jobs = 2, .jobs_open = 1, .series = -1, .noticed = -1,
					    .pending = -1, .build_started = -1, .build_ended = -1,
					    .first_boot = 600, .tests_started = 620,
					    .tests_ended = 880, .fast_last_result = 900, .verdict = -1,
					    .verdict_posted = -1, .reply_queued = -1, .reply_sent = -1 };
	bci_stages_from_times(&t, &s);
	assert_false(bci_stages_from_series(&s));
	assert_true(bci_stages_start(&s) == 500);
	assert_true(s.at[BCI_AT_LAST_RESULT] == -1 && s.at[BCI_AT_TESTS_ENDED] == -1);
	assert_true(bci_stages_took(&s, BCI_AT_FIRST_BOOT, &known) == 100 && known);
	assert_int_equal(bci_stages_html(&b, &s, 1800), 0);
	assert_non_null(strstr(b.data, "Published by hand: the clock starts at the build's registration."));
	assert_int_equal(count(b.data, "<tr class=\"stage\""), 3);
	bci_str_free(&b);
}

/*
 * On the store: the stages a series' build recorded (its series complete,
 * its build, its first boot kept from the first of two) with the pick-up,
 * the runs and the reply are read back; its objective is measured from its
 * series, a hand-published build's from its registration; the page and the
 * JSON say where each clock starts and where the time went.
 */
static void test_metrics_stages(void **state)
{
	struct fixture *f = *state;
	struct bci_metrics_options options = { .from = 0, .to = 10000, .now = 10000,
					       .report = { .data_dir = f->dir, .window = 5 } };
	struct bci_store_pw_series series = { .project = "lab", .series = 7, .name = "a series",
					      .version = 1, .total = 1, .state = "picked up",
					      .build = "pw-lab-7", .seen = 4100 };
	struct bci_store_mail mail = { .message_id = "<r7@lab.example>", .build = "pw-lab-7",
				       .sender = "ci@lab.example", .recipients = "l@x\n",
				       .message = "Subject: a\r\n\r\nb\r\n", .created = 6000 };
	struct bci_metrics *m;
	struct bci_str page = { 0 };
	char *json;
	int64_t key;

	build_add(f, "hand-1", "fast", 3000);
	run_add(f, "lab-1", "h1", "hand-1", 3100, 3200, 3300, "igt@t@a=pass", NULL);
	assert_int_equal(bci_store_pw_series_add(f->store, &series, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_stage_put(f->store, "pw-lab-7", BCI_STAGE_SERIES, 4000, 0,
						   f->err, sizeof(f->err)), 0);
	/* Run again: the second build's times replace the first's. */
	assert_int_equal(bci_store_build_stage_put(f->store, "pw-lab-7", BCI_STAGE_BUILD_STARTED,
						   4110, 0, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_stage_put(f->store, "pw-lab-7", BCI_STAGE_BUILD_STARTED,
						   4120, 0, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_stage_put(f->store, "pw-lab-7", BCI_STAGE_BUILD_ENDED,
						   4900, 0, f->err, sizeof(f->err)), 0);
	build_add(f, "pw-lab-7", "fast", 5000);
	/* Handed out twice: the first stays. */
	assert_int_equal(bci_store_build_stage_put(f->store, "pw-lab-7", BCI_STAGE_FIRST_BOOT, 5100, 1,
						   f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_stage_put(f->store, "pw-lab-7", BCI_STAGE_FIRST_BOOT, 5400, 1,
						   f->err, sizeof(f->err)), 0);
	run_add(f, "lab-1", "p1", "pw-lab-7", 5150, 5450, 5500, "igt@t@a=pass", NULL);
	assert_int_equal(bci_store_mail_queue(f->store, &mail, &key, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_mail_sent(f->store, key, 6030, 1, f->err, sizeof(f->err)), 0);

	assert_int_equal(bci_metrics_compute(f->store, &options, &m, f->err, sizeof(f->err)), 0);
	assert_int_equal(m->n_builds, 2);
	assert_string_equal(m->builds[0].name, "hand-1");
	assert_false(bci_stages_from_series(&m->builds[0].stages));
	assert_true(m->builds[0].start == 3000 && m->builds[0].to_complete == 300);
	assert_string_equal(m->builds[1].name, "pw-lab-7");
	{
		const struct bci_metrics_build *b = &m->builds[1];
		const double *at = b->stages.at;

		if (!(b->start == 4000 && b->to_first == 1500 && b->to_complete == 1500 &&
		      at[BCI_AT_NOTICED] == 4100 && at[BCI_AT_BUILD_STARTED] == 4120 &&
		      at[BCI_AT_BUILD_ENDED] == 4900 && at[BCI_AT_REGISTERED] == 5000 &&
		      at[BCI_AT_FIRST_BOOT] == 5100 && at[BCI_AT_TESTS_STARTED] == 5150 &&
		      at[BCI_AT_TESTS_ENDED] == 5450 && at[BCI_AT_LAST_RESULT] == 5500 &&
		      at[BCI_AT_REPLY_QUEUED] == 6000 && at[BCI_AT_REPLY_SENT] == 6030 &&
		      at[BCI_AT_PENDING] == -1 && at[BCI_AT_VERDICT] == -1))
			fail_msg("pw-lab-7: start %f, to first %f", b->start, b->to_first);
		/* 1500 s from the series: met; it would be 500 s from its registration. */
		assert_int_equal(b->met, 1);
	}
	/* Only pw-lab-7 came from a series: one build waited for the poll, 100 s. */
	assert_int_equal(m->took[BCI_AT_NOTICED].builds, 1);
	assert_true(m->took[BCI_AT_NOTICED].median == 100);
	/* Both were handed out: hand-1 has no first boot, so only pw-lab-7's 100 s. */
	assert_int_equal(m->took[BCI_AT_FIRST_BOOT].builds, 1);
	assert_int_equal(m->took[BCI_AT_REPLY_SENT].builds, 1);
	assert_true(m->took[BCI_AT_REPLY_SENT].median == 30);

	json = metrics_json(m);
	assert_non_null(strstr(json, "\"clock_start\": \"series\""));
	assert_non_null(strstr(json, "\"clock_start\": \"registered\""));
	assert_non_null(strstr(json, "\"series\": 4000"));
	assert_non_null(strstr(json, "\"stage\": \"noticed\""));
	assert_non_null(strstr(json, "\"spent_on\": \"waiting for Patchwork's poll\""));
	free(json);
	assert_int_equal(bci_metrics_html(&page, m), 0);
	assert_non_null(strstr(page.data, "<td>1970-01-01 01:06</td><td>series complete</td>"
					  "<td class=\"pass\">25 min</td>"));
	assert_non_null(strstr(page.data, "<tr data-stage=\"noticed\"><td>picked up by the master's"
					  " poll</td><td>waiting for Patchwork's poll</td><td>1</td>"
					  "<td>100 s</td><td>100 s</td></tr>"));
	bci_str_free(&page);
	bci_metrics_free(m);

	/* The build's matrix page shows its stages. */
	{
		struct bci_report_options report = { .data_dir = f->dir, .window = 5 };
		struct bci_matrix_query all;

		assert_int_equal(bci_matrix_query_parse(NULL, NULL, NULL, "all", &all, f->err,
							sizeof(f->err)), 0);
		if (bci_pages_matrix(f->store, "pw-lab-7", &report, &all, &page, f->err,
				     sizeof(f->err)) < 0)
			fail_msg("%s", f->err);
		bci_matrix_query_release(&all);
		assert_non_null(strstr(page.data, "<h2>from the mail to the reply</h2>"));
		assert_non_null(strstr(page.data, "data-stage=\"reply_sent\"><td>reply accepted by the"
						  " SMTP server</td><td>1970-01-01 01:40:30</td>"
						  "<td>34 min</td><td>30 s</td><td>mail</td>"));
		bci_str_free(&page);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_routes),
		cmocka_unit_test_setup_teardown(test_metrics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_matrix_machines, setup, teardown),
		cmocka_unit_test(test_stages),
		cmocka_unit_test_setup_teardown(test_metrics_stages, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
