// SPDX-License-Identifier: MIT
/*
 * Reports (aggregator/master/report/): the transition table (all 121 cells),
 * test names numbered (first seen first, each row's guess from the last
 * reading checked, right or wrong), the known-issue filter file (every key,
 * every refusal with its line), and a build's report on a real SQLite store
 * (or the PostgreSQL database in BOOTCI_TEST_STORE_URL) filled through the
 * store's interface: baseline from the base tree only and only up to the
 * build, the baseline window, flaky tests (on the machine's shard group's
 * runs too, with their rate in the reply), known issues by machine tag and
 * status, fixed tests, warnings, new tests, suspend latency against the
 * baseline's spread, and the reply's subject encoding and refusals, its
 * grouping (a test once, its machines beneath, many subtests folded) and its
 * links to serve's pages, and the bare message --send gives sendmail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pgreset.h"

#include "../../aggregator/master/report/name_numbers.h"
#include "../../aggregator/master/report/report.h"
#include "../../aggregator/master/store/store.h"
#include "mail_header.h"
#include "strv.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the transition table ---- */

static int failing(enum bci_status s)
{
	return s != BCI_STATUS_PASS && s != BCI_STATUS_SKIP && s != BCI_STATUS_NOTRUN;
}

/* The rules of report.h, restated from the statuses' kinds (the code has a literal table). */
static enum bci_change expected_change(enum bci_status from, enum bci_status to)
{
	if (from == to)
		return BCI_CHANGE_UNCHANGED;
	if (to == BCI_STATUS_NOTRUN)
		return BCI_CHANGE_NOT_RUN;
	if (to == BCI_STATUS_PASS)
		return from == BCI_STATUS_NOTRUN ? BCI_CHANGE_NEW_TEST : BCI_CHANGE_FIXED;
	if (from == BCI_STATUS_NOTRUN)
		return failing(to) ? BCI_CHANGE_REGRESSION : BCI_CHANGE_NEW_TEST;
	if (failing(from))
		return BCI_CHANGE_WARNING;	/* to another failing status, or to skip */
	return BCI_CHANGE_REGRESSION;		/* pass or skip to failing, pass to skip */
}

static void test_every_transition(void **state)
{
	int count[BCI_CHANGE_COUNT] = { 0 };

	(void)state;
	for (int from = 0; from < BCI_STATUS_COUNT; from++) {
		assert_int_equal(bci_status_parse(bci_status_name(from)), from);
		for (int to = 0; to < BCI_STATUS_COUNT; to++) {
			enum bci_change got = bci_status_change(from, to);

			if (got != expected_change(from, to))
				fail_msg("%s -> %s: %s, expected %s", bci_status_name(from),
					 bci_status_name(to), bci_change_name(got),
					 bci_change_name(expected_change(from, to)));
			count[got]++;
		}
	}
	/* The cells by kind: a change to the table shows here even if both sides agree. */
	assert_int_equal(count[BCI_CHANGE_UNCHANGED], 11);
	assert_int_equal(count[BCI_CHANGE_REGRESSION], 8 + 1 + 8 + 8);
	assert_int_equal(count[BCI_CHANGE_FIXED], 9);
	assert_int_equal(count[BCI_CHANGE_WARNING], 8 * 7 + 8);
	assert_int_equal(count[BCI_CHANGE_NEW_TEST], 2);
	assert_int_equal(count[BCI_CHANGE_NOT_RUN], 10);
	/* The ones the issue names. */
	assert_int_equal(bci_status_change(BCI_STATUS_PASS, BCI_STATUS_FAIL), BCI_CHANGE_REGRESSION);
	assert_int_equal(bci_status_change(BCI_STATUS_PASS, BCI_STATUS_DMESG_WARN), BCI_CHANGE_REGRESSION);
	assert_int_equal(bci_status_change(BCI_STATUS_PASS, BCI_STATUS_INCOMPLETE), BCI_CHANGE_REGRESSION);
	assert_int_equal(bci_status_change(BCI_STATUS_SKIP, BCI_STATUS_PASS), BCI_CHANGE_FIXED);
	assert_int_equal(bci_status_change(BCI_STATUS_FAIL, BCI_STATUS_PASS), BCI_CHANGE_FIXED);
	assert_int_equal(bci_status_parse("bogus"), -EINVAL);
	assert_string_equal(bci_status_label(BCI_STATUS_DMESG_WARN), "DMESG-WARN");
}

/* ---- test names numbered ---- */

/* The number of test "igt@test@ID", at row @row of a reading. */
static long number_row(struct bci_name_numbers *t, size_t row, long id)
{
	char name[32];

	snprintf(name, sizeof(name), "igt@test@%ld", id);
	return bci_name_number_at(t, name, row);
}

static void test_name_numbers(void **state)
{
	struct bci_name_numbers t = { 0 };
	char name[] = "igt@kms@b";
	enum { MANY = 5000 };

	(void)state;
	/* First seen first; the table keeps its own copy of a name. */
	assert_int_equal(bci_name_number(&t, name), 0);
	assert_int_equal(bci_name_number(&t, "igt@kms@a"), 1);
	name[8] = 'c';
	assert_string_equal(t.names[0], "igt@kms@b");
	assert_int_equal(bci_name_number(&t, "igt@kms@b"), 0);
	assert_int_equal(bci_name_number(&t, name), 2);
	assert_int_equal(t.n, 3);
	/* Enough names to grow the index several times, read in one order. */
	for (long i = 0; i < MANY; i++)
		assert_int_equal(number_row(&t, (size_t)i, i), 3 + i);
	/* Read again in that order (each row's guess right), reversed (each wrong), then again. */
	for (long i = 0; i < MANY; i++)
		assert_int_equal(number_row(&t, (size_t)i, i), 3 + i);
	for (long i = 0; i < MANY; i++)
		assert_int_equal(number_row(&t, (size_t)i, MANY - 1 - i), 3 + MANY - 1 - i);
	for (long i = 0; i < MANY; i++)
		assert_int_equal(number_row(&t, (size_t)i, i), 3 + i);
	/* A row beyond any reading before; a new name where another was; a short reading. */
	assert_int_equal(bci_name_number_at(&t, "igt@kms@a", 3 * MANY), 1);
	assert_int_equal(bci_name_number_at(&t, "igt@kms@new", 0), 3 + MANY);
	assert_int_equal(number_row(&t, 1, 1), 4);
	assert_int_equal(t.n, 4 + MANY);
	for (long i = 0; i < MANY; i++) {
		char expected[32];

		snprintf(expected, sizeof(expected), "igt@test@%ld", i);
		assert_string_equal(t.names[3 + i], expected);
	}
	bci_name_numbers_release(&t);
	assert_int_equal(t.n, 0);
	assert_null(t.names);
	/* Empty again, and usable. */
	assert_int_equal(bci_name_number_at(&t, "igt@kms@a", 0), 0);
	bci_name_numbers_release(&t);
}

/* ---- filters ---- */

static const char *logs_of(const char *which, void *ctx)
{
	const char *const *logs = ctx;

	return !strcmp(which, "out") ? logs[0] : !strcmp(which, "err") ? logs[1] : logs[2];
}

static void test_filters(void **state)
{
	static const char text[] =
		"# known issues of the lab\n"
		"\n"
		"bootci-known-issues 1\r\n"
		"filter https://bugs.example/118\n"
		"  test ^igt@gem_exec_whisper@\n"
		"  tags glk tgl\n"
		"  statuses dmesg-warn dmesg-fail\n"
		"filter https://bugs.example/200\n"
		"\ttest ^igt@kms_flip@\n"
		"\tmachines lab-2\n"
		"\tdmesg ^.*GPU HANG: ecode [0-9]+\n"
		"filter https://bugs.example/300\n"
		"out Subtest .*: FAIL\n"
		"err timed out$\n";
	const char *tgl[] = { "tgl", NULL }, *none[] = { NULL };
	const char *hang[] = { "", "", "i915: boot\n<3> GPU HANG: ecode 9 in ring\n" };
	const char *calm[] = { "Subtest x: FAIL (1s)\n", "fine\n", "i915: boot\n" };
	const char *slow[] = { "Subtest x: FAIL (1s)\n", "a\nwait timed out\nb\n", "" };
	struct bci_filter_subject s = { .test = "igt@gem_exec_whisper@basic", .machine = "lab-1",
					.tags = tgl, .status = BCI_STATUS_DMESG_WARN,
					.log = logs_of, .log_ctx = calm };
	struct bci_filters *f;
	char err[512];

	(void)state;
	assert_int_equal(bci_filters_parse("k.txt", text, sizeof(text) - 1, &f, err, sizeof(err)), 3);
	assert_string_equal(bci_filters_match(f, &s), "https://bugs.example/118");
	s.status = BCI_STATUS_FAIL;	/* not one of its statuses */
	assert_null(bci_filters_match(f, &s));
	s.status = BCI_STATUS_DMESG_FAIL;
	s.tags = none;			/* untagged machine */
	assert_null(bci_filters_match(f, &s));
	s.tags = NULL;
	assert_null(bci_filters_match(f, &s));

	s.test = "igt@kms_flip@basic";
	s.machine = "lab-2";
	assert_null(bci_filters_match(f, &s));	/* no hang in its dmesg */
	s.log_ctx = hang;
	assert_string_equal(bci_filters_match(f, &s), "https://bugs.example/200");
	s.machine = "lab-3";
	assert_null(bci_filters_match(f, &s));

	s.test = "igt@anything";
	s.log_ctx = calm;		/* out matches, err does not: both must */
	assert_null(bci_filters_match(f, &s));
	s.log_ctx = slow;		/* err's second line ends with "timed out" */
	assert_string_equal(bci_filters_match(f, &s), "https://bugs.example/300");
	s.log = NULL;			/* logs unreadable: a log condition cannot hold */
	assert_null(bci_filters_match(f, &s));
	bci_filters_free(f);
}

static void filter_refused_len(const char *text, size_t len, const char *message)
{
	struct bci_filters *f = NULL;
	char err[512] = "";

	assert_int_equal(bci_filters_parse("k.txt", text, len, &f, err, sizeof(err)), -EINVAL);
	assert_null(f);
	if (!strstr(err, message))
		fail_msg("'%s': message '%s' lacks '%s'", text, err, message);
}

static void filter_refused(const char *text, const char *message)
{
	filter_refused_len(text, strlen(text), message);
}

static void test_filters_refused(void **state)
{
	static const char nul[] = "bootci-known-issues 1\nfilter http://b/1\ntest a\0b\n";

	(void)state;
	filter_refused("", "k.txt:0: empty");
	filter_refused("filter http://b/1\ntest x\n", "k.txt:1: not a known-issue file");
	filter_refused("bootci-known-issues 2\n", "k.txt:1: format version '2'");
	filter_refused("bootci-known-issues one\n", "k.txt:1: format version 'one'");
	filter_refused("bootci-known-issues 1\ntest x\n", "k.txt:2: 'test' before any 'filter URL'");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\ncolour red\n", "k.txt:3: unknown key 'colour'");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\ntest (\n", "k.txt:3: test: bad regular expression '('");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\ndmesg [z-a]\n", "k.txt:3: dmesg: bad regular expression");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\nout F+++++\n", "k.txt:3: out: 'F+++++' repeats a repetition");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\ntest (a*){2}{3}\n", "k.txt:3: test: '(a*){2}{3}' repeats");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\nstatuses pass broken\n", "k.txt:3: unknown status 'broken'");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\ntest a\ntest b\n", "k.txt:4: test given twice");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\ntags a\ntags b\n", "k.txt:4: tags given twice");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\n\nfilter http://b/2\ntest a\n",
		       "k.txt:2: filter http://b/1 has no condition");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\n", "k.txt:2: filter http://b/1 has no condition");
	filter_refused("bootci-known-issues 1\nfilter\n", "k.txt:2: filter: one bug URL");
	filter_refused("bootci-known-issues 1\nfilter a b\n", "k.txt:2: filter: one bug URL");
	filter_refused("bootci-known-issues 1\nfilter http://b/1\ntest\n", "k.txt:3: test: no value");
	filter_refused_len(nul, sizeof(nul) - 1, "k.txt:3: NUL byte");
}

/* ---- a build's report on a real store ---- */

struct fixture {
	char dir[PATH_MAX];
	char url[PATH_MAX + 64];
	struct bci_store *store;
	char err[4096];
	int run;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *url = getenv("BOOTCI_TEST_STORE_URL");

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/bootci-report-XXXXXX");
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

static void build_add(struct fixture *f, const char *name, const char *tree, const char *base,
		      double registered)
{
	struct bci_store_build b = { .name = name, .tree = tree, .commit = "0123abcd", .tier = "fast",
				     .base = base, .registered = registered,
				     .series_title = base ? "drm/i915: fix the flip \xe2\x80\x94 v2" : NULL,
				     .message_id = base ? "<20261203.1@lists.example>" : NULL };

	if (bci_store_build_put(f->store, &b, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
}

/* A run of @build on @machine with results "test=status ..." and suspend latencies (-1 ends). */
static void run_add(struct fixture *f, const char *machine, const char *build, const char *results,
		    const double *latencies)
{
	char run_id[32], digest[80], *copy = strdup(results), *save = NULL;
	struct bci_store_run run = { .machine = machine, .run_id = run_id, .build = build,
				     .digest = digest, .archive_path = "archives/none.tar",
				     .archive_root = "", .state = "done" };
	int64_t key;
	int job = 0;

	snprintf(run_id, sizeof(run_id), "run-%d", ++f->run);
	snprintf(digest, sizeof(digest), "%064d", f->run);
	assert_int_equal(bci_store_begin(f->store, f->err, sizeof(f->err)), 0);
	if (bci_store_run_add(f->store, &run, &key, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');
		struct bci_store_result r = { .job = job++, .name = t, .result = eq + 1,
					      .duration = 0.5 };

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
	assert_int_equal(bci_store_commit(f->store, f->err, sizeof(f->err)), 0);
	free(copy);
}

static const struct bci_report_change *change_find(const struct bci_report *r, const char *test,
						   const char *machine)
{
	for (size_t i = 0; i < r->n_changes; i++)
		if (!strcmp(r->changes[i].test, test) && !strcmp(r->changes[i].machine, machine))
			return &r->changes[i];
	return NULL;
}

static void change_expect(const struct bci_report *r, const char *test, const char *machine,
			  enum bci_status from, enum bci_status to, enum bci_verdict verdict)
{
	const struct bci_report_change *c = change_find(r, test, machine);

	if (!c)
		fail_msg("%s on %s: no change reported", test, machine);
	if (c->from != from || c->to != to || c->verdict != verdict)
		fail_msg("%s on %s: %s -> %s verdict %d, expected %s -> %s verdict %d", test, machine,
			 bci_status_name(c->from), bci_status_name(c->to), c->verdict,
			 bci_status_name(from), bci_status_name(to), verdict);
}

/*
 * lab-1 (tagged tgl) and lab-2 each ran five drm-tip builds, then the series
 * build (tree "patchwork", base drm-tip-5). The window is 4: drm-tip-1 is
 * outside it.
 */
static void lab_fill(struct fixture *f)
{
	static const double steady[] = { 1.00, 1.10, 1.20, -1 }, slower[] = { 1.50, 1.60, 1.40, -1 };
	static const double same[] = { 1.15, -1 };
	static const char *const machines[] = { "lab-1", "lab-2" };
	char name[32];

	for (int i = 1; i <= 5; i++) {
		snprintf(name, sizeof(name), "drm-tip-%d", i);
		build_add(f, name, "drm-tip", NULL, 1000 + i);
	}
	build_add(f, "series-1", "patchwork", "drm-tip-5", 2000);
	/* On drm-tip too, but registered after the series: not its baseline. */
	build_add(f, "drm-tip-6", "drm-tip", NULL, 3000);
	/* Another tree on the same machines: never a baseline. */
	build_add(f, "other-1", "drm-intel-next", NULL, 1500);
	assert_int_equal(bci_store_machine_tag(f->store, "lab-1", "tgl", f->err, sizeof(f->err)), 0);

	for (int m = 0; m < 2; m++) {
		for (int i = 1; i <= 5; i++) {
			char results[1024];

			snprintf(name, sizeof(name), "drm-tip-%d", i);
			snprintf(results, sizeof(results),
				 "igt@kms_flip@basic=pass igt@kms_flip@flaky=%s igt@gem@old-flake=%s"
				 " igt@gem@fixed=fail igt@gem@warned=fail igt@gem@skipped=skip"
				 " igt@gem_exec_whisper@a=pass igt@gem_exec_whisper@b=pass"
				 " igt@gem_exec_whisper@c=pass igt@gem@stable=pass igt@gem@notrun-late=%s",
				 i == 3 ? "fail" : "pass", i == 1 ? "fail" : "pass",
				 i == 5 ? "notrun" : "pass");
			run_add(f, machines[m], name, results, steady);
		}
		run_add(f, machines[m], "other-1", "igt@gem@stable=fail igt@kms_flip@basic=fail", NULL);
		run_add(f, machines[m], "series-1",
			"igt@kms_flip@basic=dmesg-warn igt@kms_flip@flaky=fail igt@gem@old-flake=fail"
			" igt@gem@fixed=pass igt@gem@warned=dmesg-fail igt@gem@skipped=pass"
			" igt@gem_exec_whisper@a=dmesg-warn igt@gem_exec_whisper@b=dmesg-warn"
			" igt@gem_exec_whisper@c=dmesg-warn igt@gem@stable=pass igt@gem@brand-new=pass"
			" igt@gem@notrun-late=pass",
			m == 0 ? slower : same);
		run_add(f, machines[m], "drm-tip-6", "igt@gem@stable=fail", steady);
	}
}

/* series-1's report with the filter of test_report_build (window 4). */
static void series_report_check(struct bci_report *r)
{
	assert_string_equal(r->base_tree, "drm-tip");
	assert_string_equal(r->message_id, "<20261203.1@lists.example>");
	assert_int_equal(r->machines, 2);
	assert_int_equal(r->results, 2 * 12);
	for (int m = 1; m <= 2; m++) {
		const char *machine = m == 1 ? "lab-1" : "lab-2";

		change_expect(r, "igt@kms_flip@basic", machine, BCI_STATUS_PASS, BCI_STATUS_DMESG_WARN,
			      BCI_VERDICT_NEW);
		/* Failed once inside the window (drm-tip-3). */
		change_expect(r, "igt@kms_flip@flaky", machine, BCI_STATUS_PASS, BCI_STATUS_FAIL,
			      BCI_VERDICT_FLAKY);
		/* Failed only in drm-tip-1, outside the window of 4: a regression. */
		change_expect(r, "igt@gem@old-flake", machine, BCI_STATUS_PASS, BCI_STATUS_FAIL,
			      BCI_VERDICT_NEW);
		change_expect(r, "igt@gem@fixed", machine, BCI_STATUS_FAIL, BCI_STATUS_PASS,
			      BCI_VERDICT_FIXED);
		change_expect(r, "igt@gem@skipped", machine, BCI_STATUS_SKIP, BCI_STATUS_PASS,
			      BCI_VERDICT_FIXED);
		change_expect(r, "igt@gem@warned", machine, BCI_STATUS_FAIL, BCI_STATUS_DMESG_FAIL,
			      BCI_VERDICT_WARNING);
		change_expect(r, "igt@gem@brand-new", machine, BCI_STATUS_NOTRUN, BCI_STATUS_PASS,
			      BCI_VERDICT_NEW_TEST);
		/* Its latest baseline run did not run it: measured from the last that did. */
		assert_null(change_find(r, "igt@gem@notrun-late", machine));
		/* other-1's failures and drm-tip-6's (after the series) are no baseline. */
		assert_null(change_find(r, "igt@gem@stable", machine));
		/* The filter names tgl: lab-1's are known, lab-2's are not. */
		change_expect(r, "igt@gem_exec_whisper@b", machine, BCI_STATUS_PASS,
			      BCI_STATUS_DMESG_WARN, m == 1 ? BCI_VERDICT_KNOWN : BCI_VERDICT_NEW);
	}
	assert_string_equal(change_find(r, "igt@gem_exec_whisper@a", "lab-1")->bug,
			    "https://bugs.example/118");
	assert_null(change_find(r, "igt@gem_exec_whisper@a", "lab-2")->bug);
	assert_int_equal(r->counts[BCI_VERDICT_NEW], 2 + 2 + 3);
	assert_int_equal(r->counts[BCI_VERDICT_KNOWN], 3);
	assert_int_equal(r->counts[BCI_VERDICT_FLAKY], 2);
	assert_int_equal(r->counts[BCI_VERDICT_FIXED], 4);
	/* Suspend: lab-1's median 1.5 s is beyond 1.0-1.2 s; lab-2's 1.15 s is inside. */
	assert_int_equal(r->n_suspend, 2);
	assert_string_equal(r->suspend[0].machine, "lab-1");
	assert_true(r->suspend[0].regression);
	assert_true(r->suspend[0].median > 1.49 && r->suspend[0].median < 1.51);
	assert_true(r->suspend[0].baseline_max > 1.19 && r->suspend[0].baseline_max < 1.21);
	assert_int_equal(r->suspend[0].baseline_cycles, 4 * 3);
	assert_string_equal(r->suspend[1].machine, "lab-2");
	assert_false(r->suspend[1].regression);
	assert_true(bci_report_failed(r));
}

static void test_report_build(void **state)
{
	struct fixture *f = *state;
	struct bci_filters *filters;
	struct bci_report *r;
	static const char known[] = "bootci-known-issues 1\n"
				    "filter https://bugs.example/118\n"
				    "test ^igt@gem_exec_whisper@\n"
				    "tags tgl\n"
				    "statuses dmesg-warn\n";
	struct bci_report_options options = { .window = 4 };

	lab_fill(f);
	assert_int_equal(bci_filters_parse("known", known, sizeof(known) - 1, &filters, f->err,
					   sizeof(f->err)), 1);
	options.filters = filters;
	/* One thread, then lab-2 on a second thread with its own connection: the same report. */
	for (int threads = 1; threads <= 2; threads++) {
		options.threads = threads;
		options.store_url = threads > 1 ? f->url : NULL;
		if (bci_report_build(f->store, "series-1", &options, &r, f->err, sizeof(f->err)) < 0)
			fail_msg("%s", f->err);
		series_report_check(r);
		bci_report_free(r);
	}
	options.threads = 1;

	/* Window 1: only drm-tip-5, where the flaky test passed: now a possible new issue. */
	options.window = 1;
	assert_int_equal(bci_report_build(f->store, "series-1", &options, &r, f->err, sizeof(f->err)), 0);
	change_expect(r, "igt@kms_flip@flaky", "lab-1", BCI_STATUS_PASS, BCI_STATUS_FAIL,
		      BCI_VERDICT_NEW);
	bci_report_free(r);

	/* Without filters, lab-1's whisper changes are possible new issues too. */
	options.filters = NULL;
	options.window = 4;
	assert_int_equal(bci_report_build(f->store, "series-1", &options, &r, f->err, sizeof(f->err)), 0);
	assert_int_equal(r->counts[BCI_VERDICT_KNOWN], 0);
	assert_int_equal(r->counts[BCI_VERDICT_NEW], 2 + 2 + 3 + 3);
	bci_report_free(r);
	bci_filters_free(filters);

	assert_int_equal(bci_report_build(f->store, "nope", &options, &r, f->err, sizeof(f->err)),
			 -ENOENT);
	build_add(f, "empty", "drm-tip", NULL, 4000);
	assert_int_equal(bci_report_build(f->store, "empty", &options, &r, f->err, sizeof(f->err)),
			 -ENOENT);
	assert_non_null(strstr(f->err, "build empty has no run"));
}

/* The class attribute and link of @machine_column's cell (0-based) in @test's row of @html. */
static void cell_get(const char *html, const char *test, int machine_column, char *class,
		     size_t class_size, char *href, size_t href_size)
{
	char row[256];
	const char *p;

	snprintf(row, sizeof(row), "<tr class=\"r\"><td class=\"t\">%s</td>", test);
	p = strstr(html, row);
	if (!p)
		fail_msg("no row for %s", test);
	p += strlen(row);
	for (int i = 0; i < machine_column; i++)
		p = strstr(p + 1, "<td");
	assert_true(!strncmp(p, "<td class=\"", 11));
	p += 11;
	snprintf(class, class_size, "%.*s", (int)strcspn(p, "\""), p);
	p = strstr(p, "<a href=\"") + 9;
	snprintf(href, href_size, "%.*s", (int)strcspn(p, "\""), p);
}

/*
 * The matrix of series-1: every test once, sorted, each machine's column
 * from its latest run of the build (lab-2 ran it twice), changes marked;
 * result links to the static pages, or with a results URL to serve's.
 */
static void test_matrix(void **state)
{
	struct fixture *f = *state;
	struct bci_report_options options = { .window = 4 };
	struct bci_matrix_view view = { 0 };
	struct bci_str b = { 0 };
	struct bci_report *r;
	char class[128], href[512];

	lab_fill(f);
	/* lab-2 runs series-1 again (run-17): its results replace run-15's in the matrix. */
	run_add(f, "lab-2", "series-1", "igt@gem@stable=fail igt@kms_flip@basic=pass", NULL);
	if (bci_report_build(f->store, "series-1", &options, &r, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	if (bci_matrix_read(f->store, r, &view, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	assert_int_equal(view.tests, 12);
	assert_int_equal(view.machines, 2);
	assert_int_equal(bci_html_matrix(r, &view, BCI_HTML_STATIC, &b), 0);
	/* Sorted: igt@gem@... before igt@gem_exec_whisper@... before igt@kms_flip@... */
	assert_true(strstr(b.data, ">igt@gem@brand-new<") < strstr(b.data, ">igt@gem@warned<"));
	assert_true(strstr(b.data, ">igt@gem@warned<") < strstr(b.data, ">igt@gem_exec_whisper@a<"));
	assert_true(strstr(b.data, ">igt@gem_exec_whisper@c<") < strstr(b.data, ">igt@kms_flip@basic<"));
	/* Row 0 is igt@gem@brand-new: its page is MACHINE/0.html. */
	cell_get(b.data, "igt@gem@brand-new", 0, class, sizeof(class), href, sizeof(href));
	assert_string_equal(href, "lab-1/0.html");
	assert_non_null(strstr(class, "pass newtest"));
	cell_get(b.data, "igt@gem@stable", 0, class, sizeof(class), href, sizeof(href));
	assert_string_equal(class, "pass");
	cell_get(b.data, "igt@gem@stable", 1, class, sizeof(class), href, sizeof(href));
	assert_string_equal(class, "fail new");
	/* Only in run-15: kept from the earlier run of lab-2. */
	cell_get(b.data, "igt@gem@fixed", 1, class, sizeof(class), href, sizeof(href));
	assert_string_equal(class, "pass fixed");
	assert_null(strstr(b.data, "/machines/"));
	bci_str_free(&b);

	/* Links relative to serve's address, the page's <base> (a '/' added when it has none). */
	view.results_url = "http://master:8080/ci";
	assert_int_equal(bci_html_matrix(r, &view, BCI_HTML_STATIC, &b), 0);
	assert_non_null(strstr(b.data, "<head><meta charset=\"utf-8\"><title>series-1</title>\n"
				       "<base href=\"http://master:8080/ci/\">\n"));
	assert_null(strstr(strstr(b.data, "<base ") + 1, "<base ")); /* one, in the head */
	cell_get(b.data, "igt@gem@stable", 1, class, sizeof(class), href, sizeof(href));
	assert_string_equal(href, "machines/lab-2/runs/run-17/results/igt@gem@stable");
	cell_get(b.data, "igt@gem@fixed", 1, class, sizeof(class), href, sizeof(href));
	assert_string_equal(href, "machines/lab-2/runs/run-15/results/igt@gem@fixed");
	cell_get(b.data, "igt@kms_flip@basic", 0, class, sizeof(class), href, sizeof(href));
	assert_string_equal(href, "machines/lab-1/runs/run-7/results/igt@kms_flip@basic");
	assert_non_null(strstr(class, "dmesg-warn new"));
	bci_str_free(&b);
	view.results_url = "http://master:8080/";
	assert_int_equal(bci_html_matrix(r, &view, BCI_HTML_STATIC, &b), 0);
	assert_non_null(strstr(b.data, "<base href=\"http://master:8080/\">\n"));
	bci_str_free(&b);
	view.results_url = "http://master:8080";
	assert_int_equal(bci_html_matrix(r, &view, BCI_HTML_STATIC, &b), 0);
	assert_non_null(strstr(b.data, "<base href=\"http://master:8080/\">\n"));

	/* Streamed (as report --html writes it): the same bytes, the string left empty. */
	{
		struct bci_str rest = { 0 };
		char *streamed = NULL;
		size_t streamed_len = 0;
		FILE *out = open_memstream(&streamed, &streamed_len);

		assert_non_null(out);
		view.stream = out;
		assert_int_equal(bci_html_matrix(r, &view, BCI_HTML_STATIC, &rest), 0);
		view.stream = NULL;
		assert_int_equal(fclose(out), 0);
		assert_int_equal(rest.len, 0);
		assert_int_equal(streamed_len, b.len);
		assert_memory_equal(streamed, b.data, b.len);
		free(streamed);
		bci_str_free(&rest);
	}
	bci_matrix_release(&view);

	/*
	 * Made from the report's own reading (report --html, serve's page):
	 * the same page, with one thread and with lab-2 compared on a second.
	 */
	for (int threads = 1; threads <= 2; threads++) {
		struct bci_matrix_view seen = { .results_url = "http://master:8080" };
		struct bci_report_options with_matrix = {
			.window = 4, .threads = threads, .store_url = threads > 1 ? f->url : NULL,
		};
		struct bci_report *again = NULL;
		struct bci_str page = { 0 };

		if (bci_matrix_report(f->store, "series-1", &with_matrix, &again, &seen, f->err,
				      sizeof(f->err)) < 0)
			fail_msg("threads %d: %s", threads, f->err);
		/* The caller's options are left as they were. */
		assert_null(with_matrix.seen);
		assert_int_equal(seen.tests, 12);
		assert_int_equal(seen.machines, 2);
		assert_int_equal(bci_html_matrix(again, &seen, BCI_HTML_STATIC, &page), 0);
		assert_int_equal(page.len, b.len);
		assert_memory_equal(page.data, b.data, b.len);
		bci_str_free(&page);
		bci_matrix_release(&seen);
		bci_report_free(again);
	}

	/* A run the matrix does not know (stored after its runs were read) is refused. */
	{
		struct bci_matrix_view seen = { 0 };
		struct bci_report_seen unknown = { .run = 1 << 30, .test = "igt@gem@stable" };

		assert_int_equal(bci_matrix_begin(f->store, "series-1", &seen, f->err,
						  sizeof(f->err)), 0);
		assert_int_equal(bci_matrix_seen(&seen, &unknown, 1, f->err, sizeof(f->err)),
				 -EAGAIN);
		assert_non_null(strstr(f->err, "build series-1: a run was stored while"));
		bci_matrix_release(&seen);
	}
	bci_str_free(&b);
	bci_report_free(r);
}

/* The subject: every line at most 76 characters, every encoded-word whole UTF-8 characters. */
static void test_subject_encoding(void **state)
{
	char *h, *line, *save = NULL;
	char title[400] = "";

	(void)state;
	for (int i = 0; i < 30; i++)
		strcat(title, "\xe2\x9c\x93 d\xc3\xa9j\xc3\xa0 ");	/* 3-byte, 2-byte characters */
	assert_int_equal(bci_mail_header_encode("Subject", title, &h), 0);
	assert_true(!strncmp(h, "Subject: =?UTF-8?B?", 19));
	for (line = strtok_r(h, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *word = strstr(line, "=?UTF-8?B?");
		unsigned char bytes[64] = { 0 };
		size_t n = 0;
		unsigned bits = 0;
		int nbits = 0;

		assert_true(strlen(line) <= 76);
		assert_non_null(word);
		for (const char *p = word + 10; *p && *p != '?'; p++) {
			const char *at = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", *p);

			if (*p == '=')
				break;
			assert_non_null(at);
			bits = bits << 6 | (unsigned)(at - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
			nbits += 6;
			if (nbits >= 8) {
				bytes[n++] = (unsigned char)(bits >> (nbits - 8));
				nbits -= 8;
			}
		}
		/* Starts on a character and ends after one. */
		assert_true(n > 0);
		assert_true((bytes[0] & 0xc0) != 0x80);
		for (size_t i = 0; i < n;) {
			size_t len = bytes[i] < 0x80 ? 1 : bytes[i] >= 0xf0 ? 4 : bytes[i] >= 0xe0 ? 3 : 2;

			assert_true(i + len <= n);
			i += len;
		}
	}
	free(h);
}

static void test_mbox_refusals(void **state)
{
	struct bci_report r = { .build = "b", .tree = "t", .commit = "c", .tier = "fast",
				.base_tree = "t", .window = 1 };
	struct bci_mbox_options o = { .date = 0 };
	char err[512], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	r.message_id = "<a@b>\nBcc: victim@example";
	assert_int_equal(bci_mbox_write(out, &r, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not a Message-ID"));
	r.message_id = "no-at-sign";
	assert_int_equal(bci_mbox_write(out, &r, &o, err, sizeof(err)), -EINVAL);
	r.message_id = "<a@b> <c@d>";
	assert_int_equal(bci_mbox_write(out, &r, &o, err, sizeof(err)), -EINVAL);
	r.message_id = "a@b";
	o.to = "x@y\nBcc: victim@example";
	assert_int_equal(bci_mbox_write(out, &r, &o, err, sizeof(err)), -EINVAL);
	o.to = "list@example";
	r.series_title = "From the title\nBcc: victim@example";
	assert_int_equal(bci_mbox_write(out, &r, &o, err, sizeof(err)), 0);
	fclose(out);
	/* Threaded on the id given without brackets; the title's line break stayed inside the encoding. */
	assert_non_null(strstr(text, "\nIn-Reply-To: <a@b>\nReferences: <a@b>\n"));
	assert_null(strstr(text, "\nBcc:"));
	assert_non_null(strstr(text, "Series: From the title Bcc: victim@example\n"));
	assert_non_null(strstr(text, "Date: Thu, 01 Jan 1970 00:00:00 +0000\n"));
	free(text);
}

/* The reply written for @r with @o, as text (the caller frees it). */
static char *reply_text(const struct bci_report *r, const struct bci_mbox_options *o)
{
	char err[512] = "", *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(bci_mbox_write(out, r, o, err, sizeof(err)), 0);
	fclose(out);
	return text;
}

/* How many times @needle is in @text. */
static size_t occurrences(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static size_t line_count(const char *text)
{
	return occurrences(text, "\n");
}

/*
 * 20 tests regressed on 40 machines: each test once with its machines
 * beneath on one wrapped line (not 800 items), each line linked to serve's
 * pages; 20 subtests of one binary with the same changes folded into one
 * item; the same test on two machines once (the demo's reply had it twice).
 */
static void test_mbox_grouping(void **state)
{
	enum { TESTS = 20, MACHINES = 40 };
	struct bci_report_change changes[TESTS * MACHINES];
	char names[TESTS][64], machines[MACHINES][32], *text, *line, *save = NULL;
	struct bci_report r = { .build = "series 1", .tree = "t", .commit = "c", .tier = "fast",
				.base_tree = "t", .window = 1, .machines = MACHINES,
				.changes = changes, .n_changes = TESTS * MACHINES };
	struct bci_mbox_options o = { .date = 0, .matrix_url = "http://master:8080/" };

	(void)state;
	for (int m = 0; m < MACHINES; m++)
		snprintf(machines[m], sizeof(machines[m]), "shard-%d", m + 1);
	/* Twenty binaries, a subtest each; the report's order is by test then machine. */
	for (int t = 0; t < TESTS; t++) {
		snprintf(names[t], sizeof(names[t]), "igt@bin_%02d@sub", t);
		for (int m = 0; m < MACHINES; m++)
			changes[t * MACHINES + m] = (struct bci_report_change){
				.test = names[t], .machine = machines[m], .run_id = machines[m],
				.from = BCI_STATUS_PASS, .to = BCI_STATUS_FAIL,
				.change = BCI_CHANGE_REGRESSION, .verdict = BCI_VERDICT_NEW };
	}
	r.counts[BCI_VERDICT_NEW] = TESTS * MACHINES;
	text = reply_text(&r, &o);
	for (int t = 0; t < TESTS; t++) {
		char item[2048];

		snprintf(item, sizeof(item), "\n  * %s:\n    - shard-1, shard-2, shard-3,", names[t]);
		assert_int_equal(occurrences(text, item), 1);
		snprintf(item, sizeof(item), "%s:", names[t]);
		assert_int_equal(occurrences(text, item), 1);
	}
	assert_int_equal(occurrences(text, "\n  * "), TESTS);
	assert_int_equal(occurrences(text, " [PASS] -> [FAIL]\n"), TESTS);
	/* Each test's line links to the matrix showing its row; the build's name percent-encoded. */
	assert_int_equal(occurrences(text, "\n      http://master:8080/builds/series%201?test=%5Eigt@bin_"), TESTS);
	assert_non_null(strstr(text, "?test=%5Eigt@bin_07@sub%24\n"));
	assert_non_null(strstr(text, "Matrix: http://master:8080/builds/series%201\n"));
	/* 2 before 10, a machine never cut, a line of machines within 78 columns, no blank ending one. */
	assert_non_null(strstr(text, "shard-9, shard-10,"));
	/* A test is its name, its machines wrapped (about 7 to a line), a link and a blank line. */
	assert_true(line_count(text) < TESTS * (3 + MACHINES / 6) + 40);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, "://"))
			assert_true(strlen(line) <= 78);
		assert_true(line[strlen(line) - 1] != ' ');
	}
	free(text);

	/* Twenty subtests of one binary, the same machines and transition: one item. */
	for (int t = 0; t < TESTS; t++)
		snprintf(names[t], sizeof(names[t]), "igt@kms_flip@sub-%02d", t);
	text = reply_text(&r, &o);
	assert_int_equal(occurrences(text, "\n  * "), 1);
	assert_non_null(strstr(text, "\n  * igt@kms_flip@* (20 subtests):\n    - shard-1, shard-2,"));
	assert_null(strstr(text, "igt@kms_flip@sub-"));
	assert_non_null(strstr(text, "\n      http://master:8080/builds/series%201"
				     "?test=%5Eigt@kms_flip@&status=changed\n"));
	assert_true(line_count(text) < 60);
	free(text);
	/* --fold 20: listed one by one. */
	o.fold_after = TESTS;
	text = reply_text(&r, &o);
	assert_int_equal(occurrences(text, "\n  * igt@kms_flip@sub-"), TESTS);
	free(text);

	/* The demo's case: one test crashed on two machines, and a third machine's other transition. */
	changes[0] = (struct bci_report_change){ .test = "igt@igt_kernel@panic", .machine = "demo-2",
		.run_id = "r2", .from = BCI_STATUS_NOTRUN, .to = BCI_STATUS_CRASH,
		.change = BCI_CHANGE_REGRESSION, .verdict = BCI_VERDICT_NEW };
	changes[1] = changes[0];
	changes[1].machine = "demo-1";
	changes[1].run_id = "r1";
	changes[2] = changes[0];
	changes[2].machine = "demo-3";
	changes[2].run_id = "r3";
	changes[2].to = BCI_STATUS_TIMEOUT;
	r.n_changes = 3;
	o.fold_after = 0;
	text = reply_text(&r, &o);
	assert_int_equal(occurrences(text, "igt@igt_kernel@panic:"), 1);
	assert_non_null(strstr(text, "\n  * igt@igt_kernel@panic:\n"
				     "    - demo-1, demo-2: [NOTRUN] -> [CRASH]\n"
				     "      http://master:8080/builds/series%201?test=%5Eigt@igt_kernel@panic%24\n"
				     "    - demo-3: [NOTRUN] -> [TIMEOUT]\n"
				     "      http://master:8080/machines/demo-3/runs/r3/results/igt@igt_kernel@panic\n"));
	free(text);
	/* Without a URL, no link. */
	o.matrix_url = NULL;
	text = reply_text(&r, &o);
	assert_null(strstr(text, "://"));
	free(text);
}

/*
 * The noise: dup-1, dup-2 and dup-3 are one shard group (tgl-dup),
 * dup-4 is alone in group "other", solo is in none. Each ran five drm-tip
 * builds, then dup-1, dup-2, dup-4 and solo ran the series. igt@t@flake
 * failed on dup-2 in drm-tip-3 and on dup-3 in drm-tip-5, never on dup-1,
 * dup-4 or solo; igt@t@solo-flake failed on solo in drm-tip-2; dup-1 always
 * skipped igt@t@own (its duplicates passed it) and never ran igt@t@peer-only.
 */
static void group_fill(struct fixture *f)
{
	static const char *const machines[] = { "dup-1", "dup-2", "dup-3", "dup-4", "solo" };
	static const char *const groups[] = { "tgl-dup", "tgl-dup", "tgl-dup", "other", NULL };
	char name[32], results[512];

	for (int i = 1; i <= 5; i++) {
		snprintf(name, sizeof(name), "drm-tip-%d", i);
		build_add(f, name, "drm-tip", NULL, 1000 + i);
	}
	build_add(f, "series-1", "patchwork", "drm-tip-5", 2000);
	for (int m = 0; m < 5; m++) {
		if (groups[m] && bci_store_machine_group_set(f->store, machines[m], groups[m], f->err,
							      sizeof(f->err)) < 0)
			fail_msg("%s", f->err);
		for (int i = 1; i <= 5; i++) {
			bool flake = (m == 1 && i == 3) || (m == 2 && i == 5);

			snprintf(name, sizeof(name), "drm-tip-%d", i);
			snprintf(results, sizeof(results),
				 "igt@t@flake=%s igt@t@stable=pass igt@t@own=%s igt@t@solo-flake=%s%s",
				 flake ? "fail" : "pass", m == 0 ? "skip" : "pass",
				 m == 4 && i == 2 ? "fail" : "pass", m ? " igt@t@peer-only=pass" : "");
			run_add(f, machines[m], name, results, NULL);
		}
	}
	run_add(f, "dup-1", "series-1",
		"igt@t@flake=fail igt@t@stable=fail igt@t@own=pass igt@t@peer-only=fail"
		" igt@t@solo-flake=pass", NULL);
	run_add(f, "dup-2", "series-1",
		"igt@t@flake=fail igt@t@stable=pass igt@t@own=pass igt@t@peer-only=pass"
		" igt@t@solo-flake=pass", NULL);
	run_add(f, "dup-4", "series-1", "igt@t@flake=fail igt@t@stable=pass", NULL);
	run_add(f, "solo", "series-1", "igt@t@flake=fail igt@t@solo-flake=fail", NULL);
}

/* @test's change on @machine, and what it says of the baseline: @runs, @failed, @group. */
static void history_expect(const struct bci_report *r, const char *test, const char *machine,
			   unsigned runs, unsigned failed, const char *group)
{
	const struct bci_report_change *c = change_find(r, test, machine);

	assert_non_null(c);
	if (c->baseline_runs != runs || c->baseline_failed != failed)
		fail_msg("%s on %s: failed %u of %u runs, expected %u of %u", test, machine,
			 c->baseline_failed, c->baseline_runs, failed, runs);
	if (group)
		assert_string_equal(c->group, group);
	else
		assert_null(c->group);
}

static void group_report_check(const struct bci_report *r)
{
	/* Failed on two of dup-1's duplicates in the window: flaky, 2 of the group's 15 runs. */
	change_expect(r, "igt@t@flake", "dup-1", BCI_STATUS_PASS, BCI_STATUS_FAIL, BCI_VERDICT_FLAKY);
	history_expect(r, "igt@t@flake", "dup-1", 15, 2, "tgl-dup");
	change_expect(r, "igt@t@flake", "dup-2", BCI_STATUS_PASS, BCI_STATUS_FAIL, BCI_VERDICT_FLAKY);
	history_expect(r, "igt@t@flake", "dup-2", 15, 2, "tgl-dup");
	/* Another group's and no group's baseline: their own machines', where it always passed. */
	change_expect(r, "igt@t@flake", "dup-4", BCI_STATUS_PASS, BCI_STATUS_FAIL, BCI_VERDICT_NEW);
	history_expect(r, "igt@t@flake", "dup-4", 5, 0, "other");
	change_expect(r, "igt@t@flake", "solo", BCI_STATUS_PASS, BCI_STATUS_FAIL, BCI_VERDICT_NEW);
	history_expect(r, "igt@t@flake", "solo", 5, 0, NULL);
	change_expect(r, "igt@t@solo-flake", "solo", BCI_STATUS_PASS, BCI_STATUS_FAIL,
		      BCI_VERDICT_FLAKY);
	history_expect(r, "igt@t@solo-flake", "solo", 5, 1, NULL);
	/* Stable on the whole group: a possible new issue. */
	change_expect(r, "igt@t@stable", "dup-1", BCI_STATUS_PASS, BCI_STATUS_FAIL, BCI_VERDICT_NEW);
	history_expect(r, "igt@t@stable", "dup-1", 15, 0, "tgl-dup");
	/* Measured from the machine's own latest status, not its duplicates'. */
	change_expect(r, "igt@t@own", "dup-1", BCI_STATUS_SKIP, BCI_STATUS_PASS, BCI_VERDICT_FIXED);
	assert_null(change_find(r, "igt@t@own", "dup-2"));
	/* Never run on dup-1: measured from its group's. */
	change_expect(r, "igt@t@peer-only", "dup-1", BCI_STATUS_PASS, BCI_STATUS_FAIL,
		      BCI_VERDICT_NEW);
	history_expect(r, "igt@t@peer-only", "dup-1", 10, 0, "tgl-dup");
	assert_int_equal(r->counts[BCI_VERDICT_FLAKY], 3);
	assert_int_equal(r->counts[BCI_VERDICT_NEW], 4);
}

/*
 * A test's baseline counts its runs on every machine of the machine's shard
 * group (issue 37): a flake the machine's own window happened not to show
 * is flaky, with its rate over the group, in the reply's flaky section.
 */
static void test_report_group_baseline(void **state)
{
	struct fixture *f = *state;
	struct bci_report_options options = { .window = 5 };
	struct bci_mbox_options o = { .date = 0 };
	struct bci_report *r;
	char *text, *flaky, *fixed;

	group_fill(f);
	for (int threads = 1; threads <= 2; threads++) {
		options.threads = threads;
		options.store_url = threads > 1 ? f->url : NULL;
		if (bci_report_build(f->store, "series-1", &options, &r, f->err, sizeof(f->err)) < 0)
			fail_msg("%s", f->err);
		group_report_check(r);
		if (threads > 1) {
			bci_report_free(r);
			break;
		}
		/* The reply names the flakes in its flaky section with their rate, never as new. */
		text = reply_text(r, &o);
		flaky = strstr(text, "== Flaky tests ==");
		fixed = strstr(text, "== Fixed tests ==");
		assert_non_null(flaky);
		assert_non_null(fixed);
		*fixed = '\0';
		assert_non_null(strstr(flaky, "\n  * igt@t@flake:\n    - dup-1, dup-2: [PASS] -> [FAIL]"
					      " (flaky: failed 2 of 15 runs on tgl-dup)\n"));
		assert_non_null(strstr(flaky, "\n  * igt@t@solo-flake:\n    - solo: [PASS] -> [FAIL]"
					      " (flaky: failed 1 of 5 runs on solo)\n"));
		assert_non_null(strstr(text, "\n  * igt@t@flake:\n    - dup-4, solo: [PASS] -> [FAIL]\n"));
		assert_int_equal(occurrences(text, "igt@t@flake:"), 2);
		assert_int_equal(r->grouped, 3);
		assert_non_null(strstr(text, "\nBaseline: the last 5 runs of drm-tip on each machine and on"
					     " the others of its\n  shard group (base build drm-tip-5)\n"));
		free(text);
		bci_report_free(r);
	}
	options.threads = 1;

	/* Each machine's window: drm-tip-4 and -5 on each of the three, dup-3's failure in them. */
	options.window = 2;
	assert_int_equal(bci_report_build(f->store, "series-1", &options, &r, f->err, sizeof(f->err)), 0);
	change_expect(r, "igt@t@flake", "dup-1", BCI_STATUS_PASS, BCI_STATUS_FAIL, BCI_VERDICT_FLAKY);
	history_expect(r, "igt@t@flake", "dup-1", 6, 1, "tgl-dup");
	bci_report_free(r);

	/* Out of its group, dup-1 is judged on its own runs, as before groups: a possible new issue. */
	options.window = 5;
	assert_int_equal(bci_store_machine_group_set(f->store, "dup-1", NULL, f->err,
						     sizeof(f->err)), 0);
	assert_int_equal(bci_report_build(f->store, "series-1", &options, &r, f->err, sizeof(f->err)), 0);
	change_expect(r, "igt@t@flake", "dup-1", BCI_STATUS_PASS, BCI_STATUS_FAIL, BCI_VERDICT_NEW);
	history_expect(r, "igt@t@flake", "dup-1", 5, 0, NULL);
	/* dup-2's group is dup-3 now: its failure and dup-2's own still count. */
	change_expect(r, "igt@t@flake", "dup-2", BCI_STATUS_PASS, BCI_STATUS_FAIL, BCI_VERDICT_FLAKY);
	history_expect(r, "igt@t@flake", "dup-2", 10, 2, "tgl-dup");
	change_expect(r, "igt@t@peer-only", "dup-1", BCI_STATUS_NOTRUN, BCI_STATUS_FAIL,
		      BCI_VERDICT_NEW);
	assert_int_equal(r->grouped, 2);
	bci_report_free(r);
}

static bool starts_with(const char *text, const char *prefix)
{
	return !strncmp(text, prefix, strlen(prefix));
}

/* The message alone for a mail transfer agent: no From_ line. */
static void test_mbox_bare(void **state)
{
	struct bci_report r = { .build = "b", .tree = "t", .commit = "c", .tier = "fast",
				.base_tree = "t", .window = 1,
				.series_title = "x", .message_id = "<a@b>" };
	struct bci_mbox_options o = { .date = 0, .to = "list@example" };
	char *text;

	(void)state;
	text = reply_text(&r, &o);
	assert_true(starts_with(text, "From bootci Thu Jan  1 00:00:00 1970\nFrom: "));
	/* No machine in a shard group: the baseline is each machine's own. */
	assert_non_null(strstr(text, "\nBaseline: the last 1 runs of t on each machine\n"));
	free(text);
	o.bare = true;
	text = reply_text(&r, &o);
	assert_true(starts_with(text, "From: bootci <bootci@localhost>\nTo: list@example\n"));
	assert_null(strstr(text, "\nFrom bootci"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_transition),
		cmocka_unit_test(test_name_numbers),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_filters_refused),
		cmocka_unit_test_setup_teardown(test_report_build, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_group_baseline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_matrix, setup, teardown),
		cmocka_unit_test(test_subject_encoding),
		cmocka_unit_test(test_mbox_refusals),
		cmocka_unit_test(test_mbox_grouping),
		cmocka_unit_test(test_mbox_bare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
