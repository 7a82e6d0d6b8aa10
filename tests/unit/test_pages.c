// SPDX-License-Identifier: MIT
/*
 * The pages' pure parts: the latency plot (a circle per point, both axes,
 * the machine's name and the points' labels escaped, bad latencies refused),
 * the metrics' window parsing (every refusal) and objectives, and serve's
 * page routes (every refusal: method, bad names, paths that try to leave).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/report/report.h"
#include "../../aggregator/serve/pages.h"
#include "strv.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static int count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
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

	assert_int_equal(bci_serve_pages_route("POST", "/", &r, err, sizeof(err)), 405);
	assert_int_equal(bci_serve_pages_route("GET", "/builds/..", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/builds/a/b", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/builds/", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/builds/a\x01", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/tests/..", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/tests/a b", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/../etc", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/../results/x", &r, err,
					       sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/r/results/..", &r, err,
					       sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/r/results/a/b", &r, err,
					       sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/jobs", &r, err, sizeof(err)), 404);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/r/logs", &r, err,
					       sizeof(err)), 404);
	assert_true(bci_serve_pages_owns("/metrics"));
	assert_false(bci_serve_pages_owns("/api/v1/health"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_routes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
