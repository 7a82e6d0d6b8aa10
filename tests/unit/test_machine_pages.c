// SPDX-License-Identifier: MIT
/*
 * A machine's page and a run's page (report/machine_pages.h) on a real
 * SQLite store: the scheduler's state and jobs, the consoles handed in, the
 * runs newest first and paged, each run's boots, crash records (with their
 * text from the archive's folder), results and archive; the JSON of each
 * read back with json-c and compared with the store; every name escaped in
 * both; unknown machines, runs and pages refused. Also serve's routes of
 * these pages and the front page's list of machines. On SQLite, or on the
 * PostgreSQL database in BOOTCI_TEST_STORE_URL (tests/aggregator/store-postgres.t).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pgreset.h"

#include "../../aggregator/master/report/machine_pages.h"
#include "../../aggregator/master/report/report.h"
#include "../../aggregator/master/serve/page_machine.h"
#include "../../aggregator/master/serve/pages.h"
#include "../../aggregator/master/store/refused.h"
#include "../../aggregator/master/store/store.h"
#include "fsutil.h"
#include "strv.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fixture {
	char dir[PATH_MAX];
	struct bci_store *store;
	char err[4096];
};

static int count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

#define DIGEST "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"
#define EVIL "<script>alert(\"x\")</script>&"

static void run_add(struct fixture *f, const char *machine, const char *run_id, double when,
		    int64_t *key)
{
	struct bci_store_run run = {
		.machine = machine, .run_id = run_id, .build = "drm-tip-1", .image_id = "img",
		.kernel = "6.9.0-" EVIL, .cmdline = "console=ttyS0 x=\"y\"",
		.digest = DIGEST, .archive_path = "archives/" DIGEST ".tar.zst", .archive_root = "run",
		.state = "done", .started = when, .ended = when + 60, .ingested = when + 120,
	};

	if (bci_store_run_add(f->store, &run, key, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
}

static void fill(struct fixture *f)
{
	struct bci_store_build build = { .name = "drm-tip-1", .tree = "drm-tip", .commit = "abc",
					 .tier = "fast", .registered = 1000 };
	struct bci_store_machine_state state = {
		.machine = "lab-1", .state = "out", .last_seen = 86400, .power_cycles = 3,
		.last_cycle = 90000, .note = "no answer after 3 power cycles " EVIL,
	};
	struct bci_store_job job = { .machine = "lab-1", .build = "drm-tip-1", .tier = "fast",
				     .shards = 1, .testlist = "igt@t@a\n", .run_id = "r2",
				     .state = "queued", .queued = 2000 };
	struct bci_store_boot boots[] = {
		{ .index = 1, .time = 2000, .kernel = "6.9.0", .cmdline = "c", .previous = "none",
		  .ending = "kernel crash" },
		{ .index = 2, .time = 2100, .kernel = "6.9.0", .cmdline = "c",
		  .previous = "kernel crash " EVIL, .ending = "clean: done" },
	};
	struct bci_store_crash crash = { .boot = 2, .source = "pstore", .name = "dmesg-" EVIL,
					 .path = "boot-0002/pstore/dmesg-1" };
	struct bci_store_result results[] = {
		{ .job = 0, .name = "igt@t@a", .result = "pass", .duration = 1.5 },
		{ .job = 1, .name = "igt@t@<b>", .result = "incomplete", .duration = -1 },
	};
	struct bci_store_suspend cycle = { .cycle = 1, .state = "mem", .result = "pass", .wall = 3,
					   .suspended = 1, .latency = 0.25, .kernel_suspend = -1,
					   .kernel_resume = -1, .woke = "rtc <b>" };
	int64_t key, job_key;
	char path[PATH_MAX + 256];

	assert_int_equal(bci_store_build_put(f->store, &build, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_begin(f->store, f->err, sizeof(f->err)), 0);
	run_add(f, "lab-1", "r1", 1000, &key);
	run_add(f, "lab-1", "r2", 2000, &key);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(bci_store_boot_add(f->store, key, &boots[i], f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_crash_add(f->store, key, &crash, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_results_add(f->store, key, results, 2, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_suspend_add(f->store, key, &cycle, f->err, sizeof(f->err)), 0);
	/* lab-2: 120 runs, three pages. */
	for (int i = 0; i < 120; i++) {
		char id[16];

		snprintf(id, sizeof(id), "p%03d", i);
		run_add(f, "lab-2", id, 5000 + i, &key);
	}
	assert_int_equal(bci_store_commit(f->store, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_state_put(f->store, &state, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_tag(f->store, "lab-1", "gen12", f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_job_add(f->store, &job, &job_key, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_job_update(f->store, job_key, "booted", 4, 2100, f->err,
					      sizeof(f->err)), 0);
	assert_int_equal(bci_store_job_end(f->store, job_key, "done", "ended after 4 boots " EVIL,
					   2500, f->err, sizeof(f->err)), 0);

	/* r2's archive is kept, and its crash record is in the extract cache. */
	snprintf(path, sizeof(path), "%s/archives", f->dir);
	assert_int_equal(bci_mkdir_p(path, 0755), 0);
	strcat(path, "/" DIGEST ".tar.zst");
	assert_int_equal(bci_write_file_atomic(path, "12345", 5, 0644), 0);
	snprintf(path, sizeof(path), "%s/cache/" DIGEST "/run/boot-0002/pstore", f->dir);
	assert_int_equal(bci_mkdir_p(path, 0755), 0);
	strcat(path, "/dmesg-1");
	assert_int_equal(bci_write_file_atomic(path, "Kernel panic <b>oops</b>\n", 25, 0644), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *pg = getenv("BOOTCI_TEST_STORE_URL");
	char url[PATH_MAX + 32];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/bootci-machine-pages-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	if (pg && *pg) {
		snprintf(url, sizeof(url), "%s", pg);
		pg_reset(pg);
	} else {
		snprintf(url, sizeof(url), "sqlite:%s/bootci.sqlite", f->dir);
	}
	if (bci_store_open(url, f->dir, &f->store, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	fill(f);
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

static const struct bci_page_console consoles[] = {
	{ .number = 7, .size = 4096, .modified = 2200, .run_id = "r2", .run_boot = 2 },
	{ .number = 6, .size = 100, .modified = 2100, .run_id = "" },
};

/* r2's, as serve finds them: boot 2's console, then boot 1's (which crashed). */
static const struct bci_page_console run_consoles[] = {
	{ .number = 7, .size = 4096, .modified = 2200, .run_id = "r2", .run_boot = 2 },
	{ .number = 5, .size = 2048, .modified = 2050, .run_id = "r2", .run_boot = 1 },
};

static struct json_object *parse(const struct bci_str *b)
{
	struct json_object *o;

	assert_non_null(b->data);
	o = json_tokener_parse(b->data);
	if (!o)
		fail_msg("not JSON: %s", b->data);
	return o;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no key %s", key);
	return v;
}

static const char *get_string(struct json_object *o, const char *key)
{
	return json_object_get_string(get(o, key));
}

static void test_machine_page(void **state)
{
	struct fixture *f = *state;
	struct bci_machine_page page = { .machine = "lab-1", .consoles = consoles, .n_consoles = 2 };
	struct bci_str b = { 0 };
	struct json_object *o, *runs, *jobs;

	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	/* The scheduler's state and why, escaped. */
	assert_non_null(strstr(b.data, "<td class=\"machine-out\">out</td>"));
	assert_non_null(strstr(b.data, "no answer after 3 power cycles &lt;script&gt;"));
	assert_null(strstr(b.data, "<script>"));
	assert_non_null(strstr(b.data, "<tr><th>power cycles since</th><td>3</td></tr>"));
	assert_non_null(strstr(b.data, "<td>1970-01-02 01:00:00</td>"));	/* its last cycle */
	assert_non_null(strstr(b.data, "<code>gen12</code>"));
	/* Its job, with the netboots and the master's verdict. */
	assert_non_null(strstr(b.data, "<td><a href=\"/machines/lab-1/runs/r2\">r2</a></td>"
				       "<td><a href=\"/builds/drm-tip-1\">drm-tip-1</a></td><td>fast</td>"
				       "<td>1 of 1</td><td>done</td><td>4</td>"));
	assert_non_null(strstr(b.data, "ended after 4 boots &lt;script&gt;"));
	/* The consoles, linked, with their run. */
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1/consoles/7\">7</a>"));
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1/consoles/6\">6</a>"));
	/* The runs, newest first, with their boots and crash records counted. */
	assert_non_null(strstr(b.data, "<p>2 runs, newest first.</p>"));
	assert_true(strstr(b.data, "href=\"/machines/lab-1/runs/r2\">r2</a></td><td><a") <
		    strstr(b.data, "href=\"/machines/lab-1/runs/r1\">r1</a>"));
	assert_non_null(strstr(b.data, "<td>2</td><td>clean: done</td><td>1</td></tr>"));
	assert_non_null(strstr(b.data, "6.9.0-&lt;script&gt;"));
	assert_non_null(strstr(b.data, "<a href=\"/api/v1/machines/lab-1\">JSON</a>"));
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1/suspend\">"));
	assert_null(strstr(b.data, "class=\"pages\""));
	assert_null(strstr(b.data, "class=\"deploy\""));
	bci_str_free(&b);

	/* Its disk marked for a re-deploy, as serve reads the mark. */
	page.deploy = "damaged";
	page.deploy_note = "GPT unreadable " EVIL;
	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	assert_non_null(strstr(b.data, "<p class=\"deploy\">Its disk is to be re-deployed at its"
				       " next boot: GPT unreadable &lt;script&gt;"));
	bci_str_free(&b);

	page.json = true;
	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	o = parse(&b);
	assert_string_equal(get_string(o, "machine"), "lab-1");
	assert_string_equal(get_string(get(o, "state"), "state"), "out");
	assert_string_equal(get_string(get(o, "state"), "note"), "no answer after 3 power cycles " EVIL);
	assert_int_equal(json_object_get_int(get(get(o, "state"), "power_cycles")), 3);
	assert_int_equal(json_object_get_int(get(get(o, "state"), "last_cycle")), 90000);
	assert_string_equal(get_string(get(o, "deploy"), "state"), "damaged");
	assert_string_equal(get_string(get(o, "deploy"), "note"), "GPT unreadable " EVIL);
	jobs = get(o, "jobs");
	assert_int_equal(json_object_array_length(jobs), 1);
	assert_int_equal(json_object_get_int(get(json_object_array_get_idx(jobs, 0), "netboots")), 4);
	assert_int_equal(json_object_get_int(get(o, "runs_total")), 2);
	runs = get(o, "runs");
	assert_int_equal(json_object_array_length(runs), 2);
	assert_string_equal(get_string(json_object_array_get_idx(runs, 0), "run_id"), "r2");
	assert_string_equal(get_string(json_object_array_get_idx(runs, 0), "url"), "/machines/lab-1/runs/r2");
	assert_int_equal(json_object_get_int(get(json_object_array_get_idx(runs, 0), "boots")), 2);
	assert_int_equal(json_object_get_int(get(json_object_array_get_idx(runs, 0), "crash_records")), 1);
	assert_string_equal(get_string(json_object_array_get_idx(runs, 1), "kernel"), "6.9.0-" EVIL);
	assert_int_equal(json_object_array_length(get(o, "consoles")), 2);
	assert_string_equal(get_string(json_object_array_get_idx(get(o, "consoles"), 0), "url"),
			    "/machines/lab-1/consoles/7");
	assert_true(json_object_is_type(get(json_object_array_get_idx(get(o, "consoles"), 1), "run_id"),
					json_type_null));
	json_object_put(o);
	bci_str_free(&b);

	/* The same inputs, the same bytes. */
	{
		struct bci_str again = { 0 };

		assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), 0);
		assert_int_equal(bci_pages_machine(f->store, &page, &again, f->err, sizeof(f->err)), 0);
		assert_string_equal(b.data, again.data);
		bci_str_free(&b);
		bci_str_free(&again);
	}

	/* A machine the store never heard of. */
	page.machine = "lab-9";
	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), -ENOENT);
	assert_non_null(strstr(f->err, "lab-9"));
	bci_str_free(&b);
}

static void refused_add(struct fixture *f, const char *machine, const char *run_id)
{
	struct bci_refused r = { .size = 123, .time = 7200 };

	snprintf(r.machine, sizeof(r.machine), "%s", machine);
	snprintf(r.run_id, sizeof(r.run_id), "%s", run_id);
	snprintf(r.sha256, sizeof(r.sha256), "%s", DIGEST);
	snprintf(r.reason, sizeof(r.reason), "an entry of 2 GiB <past> the limit");
	if (bci_refused_add(f->dir, &r, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
}

/* The uploads serve refused from a machine: on its page, and a page of their own. */
static void test_machine_refused(void **state)
{
	struct fixture *f = *state;
	struct bci_machine_page page = { .data_dir = f->dir, .machine = "lab-1" };
	struct bci_str b = { 0 };
	struct json_object *o;
	char path[PATH_MAX + 64];

	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	assert_null(strstr(b.data, "id=\"refused\""));
	bci_str_free(&b);

	refused_add(f, "lab-1", "big-1");
	refused_add(f, "lab-7", "big-2");
	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	assert_non_null(strstr(b.data, "<tr><td>1970-01-01 02:00:00</td><td>big-1</td><td>123</td>"
				       "<td>1</td><td>an entry of 2 GiB &lt;past&gt; the limit</td></tr>"));
	assert_null(strstr(b.data, "big-2"));
	bci_str_free(&b);

	/* A machine the store never saw whose uploads were all refused still has its page. */
	page.machine = "lab-7";
	page.json = true;
	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	o = parse(&b);
	assert_int_equal(json_object_array_length(get(o, "refused")), 1);
	assert_string_equal(get_string(json_object_array_get_idx(get(o, "refused"), 0), "reason"),
			    "an entry of 2 GiB <past> the limit");
	assert_int_equal(json_object_get_int(get(o, "runs_total")), 0);
	json_object_put(o);
	bci_str_free(&b);

	/* A record that cannot be read: the page still comes, saying so. */
	snprintf(path, sizeof(path), "%s/refused/lab-1/big-3.json", f->dir);
	assert_int_equal(bci_write_file_atomic(path, "{", 1, 0644), 0);
	page.machine = "lab-1";
	page.json = false;
	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	assert_non_null(strstr(b.data, "/refused/lab-1/big-3.json: not a refused upload&#39;s record"));
	assert_non_null(strstr(b.data, "<p>2 runs, newest first.</p>"));
	bci_str_free(&b);
}

static void test_machine_paging(void **state)
{
	struct fixture *f = *state;
	struct bci_machine_page page = { .machine = "lab-2", .page = 2 };
	struct bci_str b = { 0 };
	struct json_object *o, *runs;

	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	/* Newest first: page 2 holds p069 down to p020. */
	assert_int_equal(count(b.data, "<tr><td><a href=\"/machines/lab-2/runs/p"), 50);
	assert_non_null(strstr(b.data, ">p069<"));
	assert_non_null(strstr(b.data, ">p020<"));
	assert_null(strstr(b.data, ">p070<"));
	assert_null(strstr(b.data, ">p019<"));
	assert_non_null(strstr(b.data, "120 runs, newest first; page 2 of 3."));
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-2?page=1\">newer</a>"));
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-2?page=3\">older</a>"));
	/* Not recorded by the scheduler: said so. */
	assert_non_null(strstr(b.data, "The scheduler has not recorded this machine"));
	bci_str_free(&b);

	page.page = 3;
	page.json = true;
	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	o = parse(&b);
	runs = get(o, "runs");
	assert_int_equal(json_object_array_length(runs), 20);
	assert_string_equal(get_string(json_object_array_get_idx(runs, 0), "run_id"), "p019");
	assert_string_equal(get_string(json_object_array_get_idx(runs, 19), "run_id"), "p000");
	assert_int_equal(json_object_get_int(get(o, "pages")), 3);
	assert_true(json_object_is_type(get(o, "state"), json_type_null));
	json_object_put(o);
	bci_str_free(&b);

	page.page = 4;
	assert_int_equal(bci_pages_machine(f->store, &page, &b, f->err, sizeof(f->err)), -ENOENT);
	assert_non_null(strstr(f->err, "page 4 of 3"));
	bci_str_free(&b);
}

static void test_run_page(void **state)
{
	struct fixture *f = *state;
	struct bci_run_page page = { .data_dir = f->dir, .machine = "lab-1", .run_id = "r2",
				     .consoles = run_consoles, .n_consoles = 2 };
	struct bci_str b = { 0 };
	struct json_object *o, *boots, *results, *archive;

	assert_int_equal(bci_pages_run(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	assert_null(strstr(b.data, "<script>"));
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1\">lab-1</a>"));
	/* Each boot's record, the crash record linked from the boot that found it. */
	assert_non_null(strstr(b.data, "<tr id=\"boot-1\"><td>1</td>"));
	assert_non_null(strstr(b.data, "<td>kernel crash &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;</td>"
				       "<td>clean: done</td><td><a href=\"#crash-1\">dmesg-&lt;script&gt;"));
	/* The record's text, escaped. */
	assert_non_null(strstr(b.data, "Kernel panic &lt;b&gt;oops&lt;/b&gt;"));
	/* Its results, each linking its page, and the counts. */
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1/runs/r2/results/igt@t@%3Cb%3E\">igt@t@&lt;b&gt;</a>"));
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1/runs/r2/results/igt@t@a\">igt@t@a</a></td>"
				       "<td class=\"pass\">pass</td><td>1.500</td>"));
	assert_non_null(strstr(b.data, "<p>2 results · <span class=\"pass\">pass</span> 1"));
	/* The archive, its job, its console. */
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1/runs/r2/archive\">download</a> (5 bytes"));
	assert_non_null(strstr(b.data, "<td>done</td><td>4</td>"));
	assert_non_null(strstr(b.data, "<a href=\"/machines/lab-1/consoles/7\">7</a>"));
	/* ... on the row of the boot it was, a boot that crashed with its last test's tail. */
	assert_non_null(strstr(b.data, "<td><a href=\"/machines/lab-1/consoles/5\">5</a> (<a href=\""
				       "/machines/lab-1/consoles/5/tail\">its last test</a>)</td></tr>"));
	assert_non_null(strstr(b.data, "dmesg-&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;</a>"
				       "</td><td><a href=\"/machines/lab-1/consoles/7\">7</a></td></tr>"));
	assert_non_null(strstr(b.data, "<a href=\"/api/v1/machines/lab-1/runs/r2/summary\">JSON</a>"));
	/* Its suspend cycle, every number, the unknown ones empty. */
	assert_non_null(strstr(b.data, "<tr><td>1</td><td>mem</td><td>pass</td><td>rtc &lt;b&gt;</td>"
				       "<td>3.000</td><td>1.000</td><td>0.250</td><td></td><td></td></tr>"));
	bci_str_free(&b);

	page.json = true;
	assert_int_equal(bci_pages_run(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	o = parse(&b);
	assert_string_equal(get_string(o, "kernel"), "6.9.0-" EVIL);
	assert_string_equal(get_string(o, "cmdline"), "console=ttyS0 x=\"y\"");
	boots = get(o, "boots");
	assert_int_equal(json_object_array_length(boots), 2);
	assert_string_equal(get_string(json_object_array_get_idx(boots, 1), "previous"),
			    "kernel crash " EVIL);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(
				 get(json_object_array_get_idx(boots, 0), "consoles"), 0)), 5);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(
				 get(json_object_array_get_idx(boots, 1), "consoles"), 0)), 7);
	assert_string_equal(get_string(json_object_array_get_idx(get(o, "crash_records"), 0), "name"),
			    "dmesg-" EVIL);
	results = get(o, "results");
	assert_int_equal(json_object_array_length(results), 2);
	assert_string_equal(get_string(json_object_array_get_idx(results, 1), "url"),
			    "/machines/lab-1/runs/r2/results/igt@t@%3Cb%3E");
	assert_true(json_object_is_type(get(json_object_array_get_idx(results, 1), "duration"),
					json_type_null));
	assert_int_equal(json_object_get_int(get(get(o, "counts"), "incomplete")), 1);
	assert_int_equal(json_object_array_length(get(o, "suspend_cycles")), 1);
	assert_string_equal(get_string(json_object_array_get_idx(get(o, "suspend_cycles"), 0), "woke"),
			    "rtc <b>");
	assert_true(json_object_get_double(get(json_object_array_get_idx(get(o, "suspend_cycles"), 0),
					       "latency")) == 0.25);
	assert_true(json_object_is_type(get(json_object_array_get_idx(get(o, "suspend_cycles"), 0),
					    "kernel_resume"), json_type_null));
	archive = get(o, "archive");
	assert_int_equal(json_object_get_int(get(archive, "bytes")), 5);
	assert_string_equal(get_string(archive, "url"), "/machines/lab-1/runs/r2/archive");
	assert_int_equal(json_object_get_int(get(get(o, "job"), "netboots")), 4);
	json_object_put(o);
	bci_str_free(&b);

	/* r1: no boots, no job, its archive's file gone. */
	page.run_id = "r1";
	page.json = false;
	page.n_consoles = 0;
	assert_int_equal(unlink(strcat(strcpy(f->err, f->dir), "/archives/" DIGEST ".tar.zst")), 0);
	assert_int_equal(bci_pages_run(f->store, &page, &b, f->err, sizeof(f->err)), 0);
	assert_non_null(strstr(b.data, "<h2 id=\"boots\">boots</h2>\n<p>None recorded.</p>"));
	assert_non_null(strstr(b.data, "<th>archive</th><td>not kept</td>"));
	assert_null(strstr(b.data, "<h2 id=\"suspend\">"));
	assert_null(strstr(b.data, "<h2 id=\"job\">"));
	bci_str_free(&b);

	page.run_id = "r9";
	assert_int_equal(bci_pages_run(f->store, &page, &b, f->err, sizeof(f->err)), -ENOENT);
	assert_non_null(strstr(f->err, "no stored run 'r9'"));
	bci_str_free(&b);
}

static void test_front_page(void **state)
{
	struct fixture *f = *state;
	struct bci_str b = { 0 };

	assert_int_equal(bci_pages_index(f->store, f->dir, &b, f->err, sizeof(f->err)), 0);
	assert_non_null(strstr(b.data, "<tr><td><a href=\"/machines/lab-1\">lab-1</a></td>"
				       "<td class=\"machine-out\">out</td>"));
	assert_non_null(strstr(b.data, "<tr><td><a href=\"/machines/lab-2\">lab-2</a></td><td>-</td>"));
	bci_str_free(&b);
}

static void console_write(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/consoles/lab-1", dir);
	assert_int_equal(bci_mkdir_p(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/consoles/lab-1/%s", dir, name);
	assert_int_equal(bci_write_file_atomic(path, text, strlen(text), 0644), 0);
}

/* serve's side: the consoles of a machine, of a run, and the run's boot each was. */
static void test_page_consoles(void **state)
{
	struct fixture *f = *state;
	struct bci_page_console *list = NULL;
	size_t n = 0;

	assert_int_equal(serve_page_consoles(f->dir, "lab-1", NULL, &list, &n, f->err,
					     sizeof(f->err)), 0);
	assert_int_equal(n, 0);
	assert_null(list);
	console_write(f->dir, "000001.log",
		      "== bootci-serve: netboot of run r2 (build drm-tip-1) ==\n"
		      "Linux version 6.9.0\n[    2.500000] bootci: boot 2 of the run; previous boot:"
		      " kernel crash (1 pstore records)\n");
	console_write(f->dir, "000002.log", "Linux version 6.9.0\nknown-good\n");
	console_write(f->dir, "000003.log",
		      "== bootci-serve: netboot of run r2 (build drm-tip-1) ==\n"
		      "bootci: boot x of the run;\nbootci: boot 3 of the runs\n");
	console_write(f->dir, "000004.log",
		      "== bootci-serve: netboot of run r22 (build drm-tip-1) ==\n"
		      "bootci: boot 1 of the run; previous boot: none\n");

	assert_int_equal(serve_page_consoles(f->dir, "lab-1", NULL, &list, &n, f->err,
					     sizeof(f->err)), 0);
	assert_int_equal(n, 4);
	assert_int_equal(list[0].number, 4);
	assert_string_equal(list[0].run_id, "r22");
	assert_int_equal(list[0].run_boot, 1);
	assert_int_equal(list[2].number, 2);
	assert_string_equal(list[2].run_id, "");
	assert_int_equal(list[2].run_boot, 0);
	free(list);

	/* r2's: boot 3's console has no boot line the executor would write, boot 1's says 2. */
	assert_int_equal(serve_page_consoles(f->dir, "lab-1", "r2", &list, &n, f->err,
					     sizeof(f->err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(list[0].number, 3);
	assert_int_equal(list[0].run_boot, 0);
	assert_int_equal(list[1].number, 1);
	assert_int_equal(list[1].run_boot, 2);
	assert_int_equal(list[1].size, strlen("== bootci-serve: netboot of run r2 (build drm-tip-1) ==\n"
					      "Linux version 6.9.0\n[    2.500000] bootci: boot 2 of the"
					      " run; previous boot: kernel crash (1 pstore records)\n"));
	free(list);
}

static void test_routes(void **state)
{
	struct bci_page_route r;
	char err[300];

	(void)state;
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, BCI_PAGE_MACHINE);
	assert_string_equal(r.machine, "lab-1");
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/r-2", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, BCI_PAGE_RUN);
	assert_string_equal(r.run_id, "r-2");
	assert_int_equal(bci_serve_pages_route("GET", "/api/v1/machines/lab-1", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, BCI_PAGE_MACHINE_JSON);
	assert_int_equal(bci_serve_pages_route("GET", "/api/v1/machines/lab-1/runs/r-2/summary", &r,
					       err, sizeof(err)), 0);
	assert_int_equal(r.kind, BCI_PAGE_RUN_JSON);
	assert_string_equal(r.run_id, "r-2");
	assert_int_equal(bci_serve_pages_route("PUT", "/api/v1/machines/lab-1", &r, err, sizeof(err)), 405);
	assert_int_equal(bci_serve_pages_route("GET", "/api/v1/machines/lab%1", &r, err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/api/v1/machines/lab-1/runs/..%/summary", &r,
					       err, sizeof(err)), 400);
	assert_int_equal(bci_serve_pages_route("GET", "/machines/lab-1/runs/r/x", &r, err, sizeof(err)), 404);
	assert_true(bci_serve_pages_owns("/api/v1/machines/lab-1"));
	assert_true(bci_serve_pages_owns("/api/v1/machines/lab-1/runs/r/summary"));
	/* The machines' own API stays theirs (serve/http.c). */
	assert_false(bci_serve_pages_owns("/api/v1/machines/lab-1/runs/r"));
	assert_false(bci_serve_pages_owns("/api/v1/machines/lab-1/runs/r/manifest"));
	assert_false(bci_serve_pages_owns("/api/v1/machines/lab-1/fault"));
	assert_false(bci_serve_pages_owns("/api/v1/machines/lab-1/hello"));
	assert_false(bci_serve_pages_owns("/api/v1/machines/lab-1/runs/r/results/t/out"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_machine_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_machine_paging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_machine_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_front_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_page_consoles, setup, teardown),
		cmocka_unit_test(test_routes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
