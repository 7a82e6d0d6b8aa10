// SPDX-License-Identifier: MIT
/*
 * aggregator/master/patchwork/: DATA/patchwork.conf read and refused line by
 * line; Patchwork's JSON (a series page, a check list, a project) and its
 * Link header read, garbage refused; the store's part (watermark, series
 * settled once, checks queued once) on SQLite.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/patchwork/patchwork.h"
#include "../../aggregator/master/store/store.h"
#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- config ---- */

static struct bci_patchwork_config *config_ok(const char *text)
{
	struct bci_patchwork_config *config = NULL;
	char err[512] = "";

	if (bci_patchwork_config_parse("patchwork.conf", text, strlen(text), &config, err,
				       sizeof(err)) < 0)
		fail_msg("refused: %s", err);
	return config;
}

static void test_config(void **state)
{
	struct bci_patchwork_config *config;
	const struct bci_patchwork_project *p;

	(void)state;
	config = config_ok("# followed\n"
			   "[project gfx]\n"
			   "url = https://patchwork.freedesktop.org/\n"
			   "project = intel-gfx\n"
			   "token-file = /etc/bootci/pw-token\n"
			   "poll = 2m\n"
			   "serve-url = http://ci.lab:8080\n"
			   "mbox-limit = 1M\n"
			   "first-series = 1200\n"
			   "build-command = /usr/lib/bootci/build-series\n"
			   "base = /srv/linux.git\n"
			   "branch = drm-tip\n"
			   "tree = drm-tip\n"
			   "build-timeout = 2h\n"
			   "\n"
			   "[project  lab ]\r\n"
			   "  url=http://127.0.0.1:8000  \n"
			   "token-file = /t\n");
	assert_int_equal(config->project_count, 2);
	p = bci_patchwork_config_project(config, "gfx");
	assert_non_null(p);
	assert_string_equal(p->url, "https://patchwork.freedesktop.org");
	assert_string_equal(p->linkname, "intel-gfx");
	assert_string_equal(p->token_file, "/etc/bootci/pw-token");
	assert_int_equal(p->poll, 120);
	assert_string_equal(p->serve_url, "http://ci.lab:8080");
	assert_int_equal(p->mbox_limit, 1 << 20);
	assert_int_equal(p->first_series, 1200);
	assert_string_equal(p->build_command, "/usr/lib/bootci/build-series");
	assert_string_equal(p->base, "/srv/linux.git");
	assert_string_equal(p->branch, "drm-tip");
	assert_string_equal(p->tree, "drm-tip");
	assert_int_equal(p->build_timeout, 7200);
	p = bci_patchwork_config_project(config, "lab");
	assert_non_null(p);
	assert_string_equal(p->linkname, "lab");
	assert_int_equal(p->poll, BCI_PATCHWORK_POLL_DEFAULT);
	assert_null(p->serve_url);
	assert_int_equal(p->mbox_limit, BCI_PATCHWORK_MBOX_LIMIT_DEFAULT);
	assert_null(p->build_command);
	assert_null(p->base);
	assert_string_equal(p->branch, "master");
	assert_string_equal(p->tree, "lab");
	assert_int_equal(p->build_timeout, BCI_PATCHWORK_BUILD_TIMEOUT_DEFAULT);
	assert_null(bci_patchwork_config_project(config, "other"));
	bci_patchwork_config_free(config);
}

static void test_config_refused(void **state)
{
	static const struct {
		const char *text, *message;
	} cases[] = {
		{ "url = http://x\n", "patchwork.conf:1: 'url' outside a [project NAME] section" },
		{ "[machine a]\n", "unknown section '[machine a]'" },
		{ "[project a/b]\n", "project name 'a/b'" },
		{ "[project a]\nurl = http://x\ntoken-file = /t\n[project a]\n", ":4: project 'a' twice" },
		{ "[project a]\ntoken-file = /t\n", ":1: project 'a' has no url" },
		{ "[project a]\nurl = http://x\n", ":1: project 'a' has no token-file" },
		{ "[project a]\nurl = ftp://x\n", ":2: url: expected an http:// or https:// URL" },
		{ "[project a]\nurl = http://x/?q=1\n", ":2: url: expected" },
		{ "[project a]\nurl = http://x\nurl = http://y\n", ":3: key 'url' twice" },
		{ "[project a]\ntoken-file = relative\n", "not an absolute path" },
		{ "[project a]\npoll = soon\n", ":2: poll: 'soon' is no duration" },
		{ "[project a]\npoll = 2d\n", "poll: '2d'" },
		{ "[project a]\nmbox-limit = 0\n", "mbox-limit: '0'" },
		{ "[project a]\nfirst-series = -1\n", "first-series: '-1'" },
		{ "[project a]\nproject = a b\n", "project: 'a b' is no Patchwork linkname" },
		{ "[project a]\nbuild-command = build.sh\n", "build-command: 'build.sh' is not an absolute path" },
		{ "[project a]\nbuild-command = /b --fast\n", "run without a shell" },
		{ "[project a]\nurl = http://x\ntoken-file = /t\nbuild-command = /b\n",
		  ":1: project 'a' has a build-command but no base" },
		{ "[project a]\nbase = a b\n", ":2: base: 'a b'" },
		{ "[project a]\nbranch = a b\n", ":2: branch: 'a b' is no branch name" },
		{ "[project a]\ntree = x/y\n", ":2: tree: 'x/y' is no tree name" },
		{ "[project a]\nbuild-timeout = 2d\n", ":2: build-timeout: '2d'" },
		{ "[project a]\ncolour = red\n", ":2: unknown key 'colour'" },
		{ "[project a]\njust words\n", ":2: expected 'key = value'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bci_patchwork_config *config = NULL;
		char err[512] = "";

		assert_int_equal(bci_patchwork_config_parse("patchwork.conf", cases[i].text,
							    strlen(cases[i].text), &config, err,
							    sizeof(err)),
				 -EINVAL);
		assert_null(config);
		if (!strstr(err, cases[i].message))
			fail_msg("case %zu: '%s' does not say '%s'", i, err, cases[i].message);
	}
}

/* ---- the API's JSON ---- */

/* Two series as Patchwork 3.1's listing gives them (fields cut to what matters). */
static const char page[] =
	"[{\"id\":7,\"name\":\"three changes\",\"date\":\"2026-12-06T09:54:22\","
	"\"submitter\":{\"id\":1,\"name\":\"Ann\",\"email\":\"ann@bootci.test\"},"
	"\"version\":2,\"total\":3,\"received_total\":3,\"received_all\":true,"
	"\"mbox\":\"http://127.0.0.1:8000/series/7/mbox/\","
	"\"cover_letter\":{\"id\":1,\"msgid\":\"<cover.1@bootci.test>\"},"
	"\"patches\":[{\"id\":11,\"msgid\":\"<p1@bootci.test>\"},{\"id\":12},{\"id\":13}]},"
	" {\"id\":6,\"name\":null,\"version\":1,\"total\":2,\"received_all\":false,"
	"\"mbox\":null,\"cover_letter\":null,"
	"\"patches\":[{\"id\":9,\"msgid\":\"<only@bootci.test>\"}]}]\n";

static void test_series_parse(void **state)
{
	struct bci_patchwork_series *series = NULL;
	size_t count = 0;
	char err[256] = "";

	(void)state;
	assert_int_equal(bci_patchwork_series_parse(page, strlen(page), &series, &count, err,
						    sizeof(err)), 0);
	assert_int_equal(count, 2);
	assert_int_equal(series[0].id, 7);
	assert_string_equal(series[0].name, "three changes");
	assert_int_equal(series[0].version, 2);
	assert_string_equal(series[0].submitter, "ann@bootci.test");
	assert_string_equal(series[0].mbox, "http://127.0.0.1:8000/series/7/mbox/");
	assert_string_equal(series[0].message_id, "<cover.1@bootci.test>");
	assert_true(series[0].received_all);
	assert_int_equal(series[0].total, 3);
	assert_int_equal(series[0].patch_count, 3);
	assert_int_equal(series[0].patches[2], 13);
	/* No cover letter: the first patch's Message-ID; null name and mbox are absent. */
	assert_int_equal(series[1].id, 6);
	assert_null(series[1].name);
	assert_null(series[1].mbox);
	assert_null(series[1].submitter);
	assert_false(series[1].received_all);
	assert_string_equal(series[1].message_id, "<only@bootci.test>");
	/* A second page appends. */
	assert_int_equal(bci_patchwork_series_parse("[]", 2, &series, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 2);
	bci_patchwork_series_free_all(series, count);
}

/*
 * When a series was complete: its patches' latest date (the listing's order
 * is not the mails'), else its own date, else none; Patchwork's dates are
 * UTC without a zone, with or without a fraction of a second.
 */
static void test_series_complete(void **state)
{
	static const char dated[] =
		"[{\"id\":3,\"date\":\"2026-12-06T09:00:00\",\"received_all\":true,"
		"\"patches\":[{\"id\":7,\"date\":\"2026-12-06T09:00:02.250000\"},"
		"{\"id\":8,\"date\":\"2026-12-06T09:00:01\"},{\"id\":9,\"date\":\"soon\"}]},"
		" {\"id\":2,\"date\":\"2026-12-06T08:00:00\",\"patches\":[{\"id\":5}]},"
		" {\"id\":1,\"date\":42,\"patches\":[]}]";
	struct bci_patchwork_series *series = NULL;
	size_t count = 0;
	char err[256] = "";
	double when = -2;

	(void)state;
	assert_int_equal(bci_patchwork_series_parse(dated, strlen(dated), &series, &count, err,
						    sizeof(err)), 0);
	assert_int_equal(count, 3);
	/* 2026-12-06T09:00:00 UTC is 1796547600. */
	assert_true(series[0].complete == 1796547602.25);
	assert_true(series[1].complete == 1796544000);
	assert_true(series[2].complete == -1);
	bci_patchwork_series_free_all(series, count);

	assert_int_equal(bci_patchwork_date_parse("1970-01-01T00:01:40", &when), 0);
	assert_true(when == 100);
	assert_int_equal(bci_patchwork_date_parse("2026-12-06 09:00:00Z", &when), 0);
	assert_true(when == 1796547600);
	assert_int_equal(bci_patchwork_date_parse("2026-12-06T09:00:00+00:00", &when), 0);
	when = -2;
	assert_int_equal(bci_patchwork_date_parse("2026-12-06T09:00:00+01:00", &when), -EINVAL);
	assert_int_equal(bci_patchwork_date_parse("2026-02-30T09:00:00", &when), -EINVAL);
	assert_int_equal(bci_patchwork_date_parse("2026-12-06T24:00:00", &when), -EINVAL);
	assert_int_equal(bci_patchwork_date_parse("2026-12-06T09:00:00.", &when), -EINVAL);
	assert_int_equal(bci_patchwork_date_parse("1969-12-31T23:59:59", &when), -EINVAL);
	assert_int_equal(bci_patchwork_date_parse("2026-12-06", &when), -EINVAL);
	assert_int_equal(bci_patchwork_date_parse(NULL, &when), -EINVAL);
	assert_true(when == -2);
}

static void test_series_garbage(void **state)
{
	static const struct {
		const char *json, *message;
	} cases[] = {
		{ "<html>Server Error (500)</html>", "series listing: not JSON" },
		{ "{\"detail\":\"Not found.\"}", "not a JSON array" },
		{ "[{\"id\":\"7\"}]", "entry 1 is no series" },
		{ "[{\"id\":0}]", "entry 1 is no series" },
		{ "[1]", "entry 1 is no series" },
		{ "[{\"id\":3,\"patches\":[{\"id\":-1}]}]", "series 3: patch 1 has no positive id" },
		{ "[{\"id\":3}] trailing", "trailing bytes" },
		{ "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "not JSON" },
		{ "", "not JSON" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bci_patchwork_series *series = NULL;
		size_t count = 0;
		char err[256] = "";

		assert_int_equal(bci_patchwork_series_parse(cases[i].json, strlen(cases[i].json),
							    &series, &count, err, sizeof(err)),
				 -EBADMSG);
		if (!strstr(err, cases[i].message))
			fail_msg("case %zu: '%s' does not say '%s'", i, err, cases[i].message);
		bci_patchwork_series_free_all(series, count);
	}
}

static void test_checks_and_project(void **state)
{
	static const char checks[] =
		"[{\"id\":1,\"state\":\"pending\",\"context\":\"bootci-fast\"},"
		"{\"id\":2,\"state\":\"success\",\"context\":\"other-ci\"}]";
	static const char project[] =
		"{\"id\":1,\"link_name\":\"bootci-test\",\"maintainers\":"
		"[{\"id\":4,\"username\":\"ci\"},{\"id\":9},{\"name\":\"no id\"}]}";
	int64_t *ids = NULL;
	size_t count = 0;
	char err[256] = "";

	(void)state;
	assert_int_equal(bci_patchwork_checks_has(checks, strlen(checks), "bootci-fast", "pending",
						  err, sizeof(err)), 1);
	assert_int_equal(bci_patchwork_checks_has(checks, strlen(checks), "bootci-fast", "success",
						  err, sizeof(err)), 0);
	assert_int_equal(bci_patchwork_checks_has("[]", 2, "bootci-fast", "pending", err,
						  sizeof(err)), 0);
	assert_int_equal(bci_patchwork_checks_has("[3]", 3, "a", "b", err, sizeof(err)), -EBADMSG);
	assert_int_equal(bci_patchwork_checks_has("oops", 4, "a", "b", err, sizeof(err)), -EBADMSG);
	assert_int_equal(bci_patchwork_project_maintainers(project, strlen(project), &ids, &count,
							   err, sizeof(err)), 0);
	assert_int_equal(count, 2);
	assert_int_equal(ids[0], 4);
	assert_int_equal(ids[1], 9);
	free(ids);
	assert_int_equal(bci_patchwork_project_maintainers("[]", 2, &ids, &count, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "not a project"));
}

static void test_link_next(void **state)
{
	char next[64];

	(void)state;
	assert_int_equal(bci_patchwork_link_next(
				 " <http://pw/api/1.2/series/?page=1>; rel=\"first\", "
				 "<http://pw/api/1.2/series/?page=3>; rel=\"next\", "
				 "<http://pw/api/1.2/series/?page=9>; rel=\"last\"",
				 next, sizeof(next)), 1);
	assert_string_equal(next, "http://pw/api/1.2/series/?page=3");
	assert_int_equal(bci_patchwork_link_next("<http://a/?p=2>;rel=next", next, sizeof(next)), 1);
	assert_string_equal(next, "http://a/?p=2");
	assert_int_equal(bci_patchwork_link_next("<http://a/>; rel=\"prev next\"", next,
						 sizeof(next)), 1);
	assert_int_equal(bci_patchwork_link_next("<http://a/>; rel=\"last\"", next, sizeof(next)), 0);
	assert_int_equal(bci_patchwork_link_next("", next, sizeof(next)), 0);
	assert_string_equal(next, "");
	assert_int_equal(bci_patchwork_link_next("http://a/; rel=next", next, sizeof(next)),
			 -EBADMSG);
	assert_int_equal(bci_patchwork_link_next("<http://a/; rel=next", next, sizeof(next)),
			 -EBADMSG);
	assert_int_equal(bci_patchwork_link_next("<>; rel=next", next, sizeof(next)), -EBADMSG);
	assert_int_equal(bci_patchwork_link_next("<http://a/>; rel=\"next", next, sizeof(next)),
			 -EBADMSG);
	assert_int_equal(bci_patchwork_link_next("<http://a/very/long/path/that/does/not/fit/in/"
						 "sixty-four/bytes/at/all>; rel=next",
						 next, sizeof(next)), -ENAMETOOLONG);
}

/* ---- the store ---- */

struct store_fixture {
	char dir[64];
	struct bci_store *store;
	char err[1024];
};

static int store_setup(void **state)
{
	struct store_fixture *f = calloc(1, sizeof(*f));
	/* tests/aggregator/store-postgres.t runs this on PostgreSQL: a database of its own. */
	const char *url = getenv("BOOTCI_TEST_STORE_URL");

	snprintf(f->dir, sizeof(f->dir), "/tmp/bootci-pw-store.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	if (bci_store_open(url, f->dir, &f->store, f->err, sizeof(f->err)) < 0)
		fail_msg("store: %s", f->err);
	*state = f;
	return 0;
}

static int store_teardown(void **state)
{
	struct store_fixture *f = *state;

	bci_store_close(f->store);
	bci_remove_tree(f->dir);
	free(f);
	return 0;
}

static int series_state(const struct bci_store_pw_series *s, void *ctx)
{
	snprintf(ctx, 64, "%s/%lld", s->state, (long long)s->superseded_by);
	return 0;
}

static void test_store(void **state)
{
	struct store_fixture *f = *state;
	/* Each run its own project: a PostgreSQL database keeps the runs before. */
	char lab[64], other[64];
	struct bci_store_pw_series s = { .project = lab, .series = 5, .name = "x", .version = 1,
					 .total = 2, .state = "picked up", .build = "pw-lab-5" };
	struct bci_store_pw_check check = { .patch = 51, .context = "bootci-fast",
					    .state = "pending", .status = "posted" };
	int64_t watermark = -1;
	char seen[64] = "";

	snprintf(lab, sizeof(lab), "lab-%d", (int)getpid());
	snprintf(other, sizeof(other), "other-%d", (int)getpid());

	assert_int_equal(bci_store_pw_watermark_get(f->store, lab, &watermark, f->err,
						    sizeof(f->err)), 0);
	assert_int_equal(watermark, 0);
	assert_int_equal(bci_store_pw_watermark_put(f->store, lab, 4, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_pw_watermark_put(f->store, lab, 9, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_pw_watermark_get(f->store, lab, &watermark, f->err,
						    sizeof(f->err)), 0);
	assert_int_equal(watermark, 9);
	assert_int_equal(bci_store_pw_watermark_get(f->store, other, &watermark, f->err,
						    sizeof(f->err)), 0);
	assert_int_equal(watermark, 0);

	assert_int_equal(bci_store_pw_series_add(f->store, &s, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_pw_series_add(f->store, &s, f->err, sizeof(f->err)), -EEXIST);
	assert_non_null(strstr(f->err, "series 5 is already settled"));
	assert_int_equal(bci_store_pw_patch_add(f->store, lab, 5, 1, 51, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_pw_patch_add(f->store, lab, 5, 2, 52, f->err, sizeof(f->err)), 0);
	/* Queued on both patches once; asking again queues nothing. */
	if (bci_store_pw_check_queue(f->store, lab, 5, "bootci-fast", "pending", NULL, NULL, f->err,
				     sizeof(f->err)) != 2)
		fail_msg("queue: %s", f->err);
	assert_int_equal(bci_store_pw_check_queue(f->store, lab, 5, "bootci-fast", "pending",
						  "again", NULL, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_pw_checks_open(f->store, lab, NULL, NULL, f->err,
						  sizeof(f->err)), 2);
	/* Taken once as read: a second poster holding the same reading gets nothing. */
	check.status = "queued";
	check.attempts = 0;
	assert_int_equal(bci_store_pw_check_claim(f->store, lab, &check, f->err, sizeof(f->err)), 1);
	assert_int_equal(bci_store_pw_check_claim(f->store, lab, &check, f->err, sizeof(f->err)), 0);
	check.status = "posted";
	assert_int_equal(bci_store_pw_check_mark(f->store, lab, &check, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_pw_checks_open(f->store, lab, NULL, NULL, f->err,
						  sizeof(f->err)), 1);
	assert_int_equal(bci_store_pw_checks_series(f->store, lab, 5, NULL, NULL, f->err,
						    sizeof(f->err)), 2);
	/* A later version by the same submitter finds it; another name does not. */
	assert_int_equal(bci_store_pw_series_each(f->store, lab, "x", NULL, NULL, NULL, f->err,
						  sizeof(f->err)), 1);
	assert_int_equal(bci_store_pw_series_each(f->store, lab, "y", NULL, NULL, NULL, f->err,
						  sizeof(f->err)), 0);
	/* The series a build was made from (the mail's author lookup). */
	assert_int_equal(bci_store_pw_series_by_build(f->store, "pw-lab-5", NULL, NULL, f->err,
						      sizeof(f->err)), 1);
	assert_int_equal(bci_store_pw_series_by_build(f->store, "pw-none-1", NULL, NULL, f->err,
						      sizeof(f->err)), 0);
	assert_int_equal(bci_store_pw_series_supersede(f->store, lab, 5, 8, "v2 came", f->err,
						       sizeof(f->err)), 0);
	assert_int_equal(bci_store_pw_series_get(f->store, lab, 5, series_state, seen, f->err,
						 sizeof(f->err)), 1);
	assert_string_equal(seen, "superseded/8");
	assert_int_equal(bci_store_pw_series_get(f->store, lab, 6, series_state, seen, f->err,
						 sizeof(f->err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_config_refused),
		cmocka_unit_test(test_series_parse),
		cmocka_unit_test(test_series_garbage),
		cmocka_unit_test(test_series_complete),
		cmocka_unit_test(test_checks_and_project),
		cmocka_unit_test(test_link_next),
		cmocka_unit_test_setup_teardown(test_store, store_setup, store_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
