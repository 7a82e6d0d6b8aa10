// SPDX-License-Identifier: MIT
/*
 * The store (aggregator/master/store/) through its interface only, so the same
 * suite runs against every backend: SQLite in a temporary folder by default,
 * or the database named by BOOTCI_TEST_STORE_URL (tests/aggregator/
 * store-postgres.t starts a PostgreSQL server of its own and sets it to a
 * conninfo). Each test starts from an empty database: the SQLite file is
 * new, PostgreSQL's public schema is dropped and re-created.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/store/store.h"

#include <errno.h>
#include <libpq-fe.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fixture {
	char dir[PATH_MAX];
	char url[PATH_MAX + 64];
	struct bci_store *store;
	char err[1024];
};

/* Runs @sql outside the store, as another program sharing the database would. */
static void raw_exec(const struct fixture *f, const char *sql)
{
	if (!strncmp(f->url, "sqlite:", 7)) {
		sqlite3 *db;
		char *message = NULL;

		assert_int_equal(sqlite3_open(f->url + 7, &db), SQLITE_OK);
		if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK)
			fail_msg("%s: %s", sql, message);
		sqlite3_close(db);
	} else {
		PGconn *conn = PQconnectdb(f->url);
		PGresult *res;

		assert_int_equal(PQstatus(conn), CONNECTION_OK);
		res = PQexec(conn, sql);
		if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
			fail_msg("%s: %s", sql, PQresultErrorMessage(res));
		PQclear(res);
		PQfinish(conn);
	}
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *url = getenv("BOOTCI_TEST_STORE_URL");

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/bootci-store-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	if (url && *url) {
		snprintf(f->url, sizeof(f->url), "%s", url);
		/* Silence "drop cascades to ..." notices: they are expected. */
		raw_exec(f, "SET client_min_messages = warning; DROP SCHEMA public CASCADE;"
			    " CREATE SCHEMA public");
	} else {
		snprintf(f->url, sizeof(f->url), "sqlite:%s/bootci.sqlite", f->dir);
	}
	if (bci_store_open(f->url, f->dir, &f->store, f->err, sizeof(f->err)) < 0)
		fail_msg("open %s: %s", f->url, f->err);
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

static void reopen(struct fixture *f)
{
	bci_store_close(f->store);
	f->store = NULL;
	if (bci_store_open(f->url, f->dir, &f->store, f->err, sizeof(f->err)) < 0)
		fail_msg("reopen %s: %s", f->url, f->err);
}

/* ---- schema ---- */

static void test_schema_current_after_open(void **state)
{
	struct fixture *f = *state;
	int version = -1;

	assert_int_equal(bci_store_schema_version(f->store, &version, f->err, sizeof(f->err)), 0);
	assert_int_equal(version, BCI_STORE_SCHEMA_VERSION);
	/* Re-opening a database at the current version migrates nothing and keeps its rows. */
	assert_int_equal(bci_store_machine_ensure(f->store, "lab-1", NULL, f->err, sizeof(f->err)), 0);
	reopen(f);
	reopen(f);
	assert_int_equal(bci_store_schema_version(f->store, &version, f->err, sizeof(f->err)), 0);
	assert_int_equal(version, BCI_STORE_SCHEMA_VERSION);
	assert_int_equal(bci_store_machines_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err)), 1);
}

/* PRAGMA page_size of the SQLite file @path, read by SQLite itself. */
static int sqlite_page_size(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *stmt;
	int size;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &stmt, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
	size = sqlite3_column_int(stmt, 0);
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	return size;
}

/* A new SQLite store has 16 KiB pages; one made with other pages keeps them and works. */
static void test_sqlite_page_size(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 32];
	sqlite3 *db;
	int version = -1;

	if (strncmp(f->url, "sqlite:", 7))
		skip();
	assert_int_equal(sqlite_page_size(f->url + 7), 16384);
	/* A store made by an older bootci (SQLite's default 4 KiB), opened by this one. */
	snprintf(path, sizeof(path), "%s/old.sqlite", f->dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA page_size=4096; PRAGMA journal_mode=WAL;"
					  " CREATE TABLE t (x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	bci_store_close(f->store);
	f->store = NULL;
	snprintf(f->url, sizeof(f->url), "sqlite:%s", path);
	reopen(f);
	assert_int_equal(bci_store_schema_version(f->store, &version, f->err, sizeof(f->err)), 0);
	assert_int_equal(version, BCI_STORE_SCHEMA_VERSION);
	assert_int_equal(bci_store_machine_ensure(f->store, "lab-1", NULL, f->err, sizeof(f->err)), 0);
	assert_int_equal(sqlite_page_size(path), 4096);
}

static int name_copy(const char *name, void *ctx)
{
	char *out = ctx;

	strcat(out, name);
	strcat(out, ",");
	return 0;
}

static void test_schema_single_version_row(void **state)
{
	struct fixture *f = *state;
	char names[256] = "";

	/* One version row, not one per open. */
	reopen(f);
	raw_exec(f, "INSERT INTO machines (name, created) SELECT 'rows-' || CAST(COUNT(*) AS TEXT), 0"
		    " FROM bootci_schema");
	assert_int_equal(bci_store_machines_each(f->store, NULL, name_copy, names, f->err,
						 sizeof(f->err)), 1);
	assert_string_equal(names, "rows-1,");
}

static void test_schema_newer_refused(void **state)
{
	struct fixture *f = *state;
	struct bci_store *other = NULL;

	raw_exec(f, "UPDATE bootci_schema SET version = 99");
	assert_int_equal(bci_store_open(f->url, f->dir, &other, f->err, sizeof(f->err)),
			 -EPROTONOSUPPORT);
	assert_null(other);
	assert_non_null(strstr(f->err, "version 99"));
	raw_exec(f, "UPDATE bootci_schema SET version = 1");
}

static void test_bad_url_refused(void **state)
{
	struct fixture *f = *state;
	struct bci_store *other = NULL;

	assert_int_equal(bci_store_open("mysql://x", f->dir, &other, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "mysql://x"));
	assert_int_equal(bci_store_open("sqlite:", f->dir, &other, f->err, sizeof(f->err)), -EINVAL);
	assert_null(other);
}

/* ---- machines and tags ---- */

static void test_machines_and_tags(void **state)
{
	struct fixture *f = *state;
	int64_t a = -1, b = -1, again = -1;
	char names[256] = "";

	assert_int_equal(bci_store_machine_ensure(f->store, "lab-2", &a, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_ensure(f->store, "lab-1", &b, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_ensure(f->store, "lab-2", &again, f->err, sizeof(f->err)), 0);
	assert_true(a > 0 && b > 0 && a != b);
	assert_int_equal(again, a);
	assert_int_equal(bci_store_machine_ensure(f->store, "", NULL, f->err, sizeof(f->err)), -EINVAL);

	assert_int_equal(bci_store_machine_tag(f->store, "lab-2", "platform:tgl", f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_tag(f->store, "lab-2", "shard:a", f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_tag(f->store, "lab-2", "shard:a", f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_tag(f->store, "lab-1", "shard:a", f->err, sizeof(f->err)), 0);
	/* A tag on a machine not seen yet creates it. */
	assert_int_equal(bci_store_machine_tag(f->store, "lab-3", "platform:adl", f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_tag(f->store, "lab-3", "", f->err, sizeof(f->err)), -EINVAL);

	assert_int_equal(bci_store_machine_tags(f->store, "lab-2", name_copy, names, f->err,
						sizeof(f->err)), 2);
	assert_string_equal(names, "platform:tgl,shard:a,");
	names[0] = '\0';
	assert_int_equal(bci_store_machines_each(f->store, "shard:a", name_copy, names, f->err,
						 sizeof(f->err)), 2);
	assert_string_equal(names, "lab-1,lab-2,");
	names[0] = '\0';
	assert_int_equal(bci_store_machines_each(f->store, NULL, name_copy, names, f->err,
						 sizeof(f->err)), 3);
	assert_string_equal(names, "lab-1,lab-2,lab-3,");

	assert_int_equal(bci_store_machine_untag(f->store, "lab-2", "shard:a", f->err, sizeof(f->err)), 0);
	names[0] = '\0';
	assert_int_equal(bci_store_machines_each(f->store, "shard:a", name_copy, names, f->err,
						 sizeof(f->err)), 1);
	assert_string_equal(names, "lab-1,");
}

/* A machine's shard group: set, read, its machines listed, taken out; a new machine made. */
static void test_machine_groups(void **state)
{
	struct fixture *f = *state;
	char names[256] = "", group[8];

	assert_int_equal(bci_store_machine_group_set(f->store, "lab-2", "tgl", f->err,
						     sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_group_set(f->store, "lab-1", "tgl", f->err,
						     sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_group_set(f->store, "lab-3", "adl", f->err,
						     sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_ensure(f->store, "lab-4", NULL, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_group_set(f->store, "lab-4", "", f->err, sizeof(f->err)),
			 -EINVAL);
	assert_int_equal(bci_store_machine_group(f->store, "lab-1", group, sizeof(group), f->err,
						 sizeof(f->err)), 1);
	assert_string_equal(group, "tgl");
	/* No group, and no such machine: 0 and "". */
	assert_int_equal(bci_store_machine_group(f->store, "lab-4", group, sizeof(group), f->err,
						 sizeof(f->err)), 0);
	assert_string_equal(group, "");
	assert_int_equal(bci_store_machine_group(f->store, "lab-9", group, sizeof(group), f->err,
						 sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_group(f->store, "lab-1", group, 3, f->err,
						 sizeof(f->err)), -ENAMETOOLONG);
	assert_non_null(strstr(f->err, "lab-1"));
	assert_int_equal(bci_store_group_machines_each(f->store, "tgl", name_copy, names, f->err,
						       sizeof(f->err)), 2);
	assert_string_equal(names, "lab-1,lab-2,");
	/* Moved to another group, then out of any. */
	assert_int_equal(bci_store_machine_group_set(f->store, "lab-2", "adl", f->err,
						     sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_group_set(f->store, "lab-1", NULL, f->err,
						     sizeof(f->err)), 0);
	names[0] = '\0';
	assert_int_equal(bci_store_group_machines_each(f->store, "tgl", name_copy, names, f->err,
						       sizeof(f->err)), 0);
	assert_int_equal(bci_store_group_machines_each(f->store, "adl", name_copy, names, f->err,
						       sizeof(f->err)), 2);
	assert_string_equal(names, "lab-2,lab-3,");
	assert_int_equal(bci_store_machine_group(f->store, "lab-1", group, sizeof(group), f->err,
						 sizeof(f->err)), 0);
}

/* ---- builds ---- */

struct build_copy {
	char text[1024];
};

static int build_print(const struct bci_store_build *b, void *ctx)
{
	struct build_copy *c = ctx;

	snprintf(c->text, sizeof(c->text), "%s|%s|%s|%s|%s|%s|%s|%d", b->name, b->tree, b->commit,
		 b->tier, b->base ? b->base : "-", b->series_title ? b->series_title : "-",
		 b->message_id ? b->message_id : "-", b->registered == 1700000000.5);
	return 0;
}

static void test_builds(void **state)
{
	struct fixture *f = *state;
	struct bci_store_build base = {
		.name = "drm-tip-100", .tree = "drm-tip", .commit = "0123abcd", .tier = "full",
		.registered = 1700000000.5,
	};
	struct bci_store_build patch = {
		.name = "Patchwork_42v1", .tree = "drm-tip", .commit = "4567ef01", .tier = "fast",
		.base = "drm-tip-100", .series_title = "drm/i915: fix the flip \"it's\" flakes",
		.message_id = "<20260101.123@lists.example>", .registered = 1700000000.5,
	};
	struct build_copy copy = { "" };

	assert_int_equal(bci_store_build_put(f->store, &base, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_put(f->store, &patch, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_get(f->store, "Patchwork_42v1", build_print, &copy, f->err,
					     sizeof(f->err)), 0);
	assert_string_equal(copy.text, "Patchwork_42v1|drm-tip|4567ef01|fast|drm-tip-100|"
				       "drm/i915: fix the flip \"it's\" flakes|"
				       "<20260101.123@lists.example>|1");
	/* The same name again updates it. */
	patch.tier = "full";
	patch.series_title = NULL;
	assert_int_equal(bci_store_build_put(f->store, &patch, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_get(f->store, "Patchwork_42v1", build_print, &copy, f->err,
					     sizeof(f->err)), 0);
	assert_string_equal(copy.text, "Patchwork_42v1|drm-tip|4567ef01|full|drm-tip-100|-|"
				       "<20260101.123@lists.example>|1");
	/* A copy the caller owns: one block, the missing title still NULL. */
	{
		struct bci_store_build *read = NULL;

		assert_int_equal(bci_store_build_read(f->store, "Patchwork_42v1", &read, f->err,
						      sizeof(f->err)), 0);
		build_print(read, &copy);
		free(read);
		assert_string_equal(copy.text, "Patchwork_42v1|drm-tip|4567ef01|full|drm-tip-100|-|"
					       "<20260101.123@lists.example>|1");
		read = (struct bci_store_build *)&patch;
		assert_int_equal(bci_store_build_read(f->store, "nope", &read, f->err,
						      sizeof(f->err)), -ENOENT);
		assert_null(read);
	}

	patch.tier = "slow";
	assert_int_equal(bci_store_build_put(f->store, &patch, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "slow"));
	patch.tier = "fast";
	patch.base = "nope";
	assert_int_equal(bci_store_build_put(f->store, &patch, f->err, sizeof(f->err)), -ENOENT);
	assert_non_null(strstr(f->err, "nope"));
	assert_int_equal(bci_store_build_get(f->store, "nope", NULL, NULL, f->err, sizeof(f->err)), -ENOENT);
}

/* ---- runs and what they hold ---- */

static const struct bci_store_run run_template = {
	.machine = "lab-1", .run_id = "20260101-0001", .image_id = "img-7",
	.kernel = "6.1.0-test", .cmdline = "console=ttyS0 bootci.run_id=20260101-0001",
	.digest = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	.archive_path = "/data/archives/aaaa.tar.zst", .archive_root = "20260101-0001",
	.state = "done", .started = 1700000100.25, .ended = 1700000200.75,
};

static int run_print(const struct bci_store_run *r, void *ctx)
{
	char *out = ctx;

	snprintf(out, 1024, "%s|%s|%s|%s|%s|%s|%.64s|%s|%s|%s|%.2f|%.2f|%d", r->machine, r->run_id,
		 r->build ? r->build : "-", r->image_id, r->kernel, r->cmdline, r->digest,
		 r->archive_path, r->archive_root, r->state, r->started, r->ended, r->ingested > 0);
	return 0;
}

static void test_runs(void **state)
{
	struct fixture *f = *state;
	struct bci_store_build build = {
		.name = "b1", .tree = "drm-tip", .commit = "c1", .tier = "fast",
	};
	struct bci_store_run run = run_template;
	char text[1024] = "";
	int64_t key = -1, key2 = -1;

	assert_int_equal(bci_store_build_put(f->store, &build, f->err, sizeof(f->err)), 0);
	run.build = "b1";
	assert_int_equal(bci_store_run_add(f->store, &run, &key, f->err, sizeof(f->err)), 0);
	assert_true(key > 0);
	assert_int_equal(bci_store_run_add(f->store, &run, NULL, f->err, sizeof(f->err)), -EEXIST);
	assert_non_null(strstr(f->err, "20260101-0001"));
	assert_int_equal(bci_store_run_get(f->store, "lab-1", "20260101-0001", run_print, text,
					   f->err, sizeof(f->err)), 0);
	assert_string_equal(text, "lab-1|20260101-0001|b1|img-7|6.1.0-test|"
				  "console=ttyS0 bootci.run_id=20260101-0001|"
				  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa|"
				  "/data/archives/aaaa.tar.zst|20260101-0001|done|"
				  "1700000100.25|1700000200.75|1");

	/* The same run id on another machine is another run; a build that is not there is refused. */
	run.machine = "lab-2";
	run.build = NULL;
	assert_int_equal(bci_store_run_add(f->store, &run, &key2, f->err, sizeof(f->err)), 0);
	assert_true(key2 != key);
	run.run_id = "other";
	run.build = "missing";
	assert_int_equal(bci_store_run_add(f->store, &run, NULL, f->err, sizeof(f->err)), -ENOENT);
	assert_int_equal(bci_store_runs_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err)), 2);
	assert_int_equal(bci_store_runs_each(f->store, "lab-2", run_print, text, f->err,
					     sizeof(f->err)), 1);
	assert_non_null(strstr(text, "lab-2|20260101-0001|-|"));
	assert_int_equal(bci_store_run_get(f->store, "lab-3", "20260101-0001", NULL, NULL, f->err,
					   sizeof(f->err)), -ENOENT);
}

struct rows {
	char text[4096];
};

static int boot_print(const struct bci_store_boot *b, void *ctx)
{
	struct rows *r = ctx;
	size_t len = strlen(r->text);

	snprintf(r->text + len, sizeof(r->text) - len, "%d %.0f %s %s %s %s;", b->index, b->time,
		 b->kernel ? b->kernel : "-", b->cmdline ? b->cmdline : "-",
		 b->previous ? b->previous : "-", b->ending ? b->ending : "-");
	return 0;
}

static int crash_print(const struct bci_store_crash *c, void *ctx)
{
	struct rows *r = ctx;
	size_t len = strlen(r->text);

	snprintf(r->text + len, sizeof(r->text) - len, "%d %s %s %s;", c->boot, c->source, c->name,
		 c->path);
	return 0;
}

static int result_print(const struct bci_store_result *res, void *ctx)
{
	struct rows *r = ctx;
	size_t len = strlen(r->text);

	snprintf(r->text + len, sizeof(r->text) - len, "%d %s %s %.3f %d;", res->job, res->name,
		 res->result, res->duration, res->dmesg_warnings);
	return 0;
}

static int suspend_print(const struct bci_store_suspend *s, void *ctx)
{
	struct rows *r = ctx;
	size_t len = strlen(r->text);

	snprintf(r->text + len, sizeof(r->text) - len, "%d %s %s %.3f %.3f %.3f %.3f %.3f %s;",
		 s->cycle, s->state, s->result, s->wall, s->suspended, s->latency,
		 s->kernel_suspend, s->kernel_resume, s->woke ? s->woke : "-");
	return 0;
}

static int64_t run_add(struct fixture *f, const char *run_id)
{
	struct bci_store_run run = run_template;
	int64_t key = -1;

	run.run_id = run_id;
	if (bci_store_run_add(f->store, &run, &key, f->err, sizeof(f->err)) < 0)
		fail_msg("run_add: %s", f->err);
	return key;
}

static void test_run_contents(void **state)
{
	struct fixture *f = *state;
	struct bci_store_boot boot1 = {
		.index = 1, .time = 1700000100, .kernel = "6.1.0-test", .cmdline = "quiet",
		.previous = "unknown", .ending = "kernel crash (pstore: dmesg-efi_pstore-1)",
	};
	struct bci_store_boot boot2 = { .index = 2, .previous = "kernel crash (pstore: dmesg-efi_pstore-1)" };
	struct bci_store_crash crash = {
		.boot = 2, .source = "pstore", .name = "dmesg-efi_pstore-1",
		.path = "boot-0002/pstore/dmesg-efi_pstore-1",
	};
	struct bci_store_result results[] = {
		{ .job = 0, .name = "igt@kms_flip@basic", .result = "pass", .duration = 1.5 },
		{ .job = 1, .name = "igt@gem_exec@hang", .result = "dmesg-warn", .duration = 0.25,
		  .dmesg_warnings = 1 },
		{ .job = 2, .name = "igt@never@started", .result = "notrun", .duration = -1 },
	};
	struct bci_store_suspend cycle = {
		.cycle = 1, .state = "mem", .result = "pass", .wall = 5.5, .suspended = 4.25,
		.latency = 1.25, .kernel_suspend = 0.5, .kernel_resume = -1, .woke = "rtc",
	};
	struct rows rows = { "" };
	int64_t run = run_add(f, "r1"), other = run_add(f, "r2");

	assert_int_equal(bci_store_boot_add(f->store, run, &boot2, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_boot_add(f->store, run, &boot1, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_boot_add(f->store, run, &boot1, f->err, sizeof(f->err)), -EEXIST);
	assert_int_equal(bci_store_crash_add(f->store, run, &crash, f->err, sizeof(f->err)), 0);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(bci_store_result_add(f->store, run, &results[i], f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_suspend_add(f->store, run, &cycle, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_suspend_add(f->store, run, &cycle, f->err, sizeof(f->err)), -EEXIST);
	/* Rows of another run stay apart. */
	assert_int_equal(bci_store_result_add(f->store, other, &results[0], f->err, sizeof(f->err)), 0);
	/* A row for a run that does not exist is refused by the foreign key. */
	assert_int_equal(bci_store_result_add(f->store, 999999, &results[0], f->err, sizeof(f->err)),
			 -ENOENT);

	assert_int_equal(bci_store_boots_each(f->store, run, boot_print, &rows, f->err, sizeof(f->err)), 2);
	assert_string_equal(rows.text, "1 1700000100 6.1.0-test quiet unknown kernel crash (pstore: "
				       "dmesg-efi_pstore-1);2 0 - - kernel crash (pstore: "
				       "dmesg-efi_pstore-1) -;");
	rows.text[0] = '\0';
	assert_int_equal(bci_store_crashes_each(f->store, run, crash_print, &rows, f->err, sizeof(f->err)), 1);
	assert_string_equal(rows.text, "2 pstore dmesg-efi_pstore-1 boot-0002/pstore/dmesg-efi_pstore-1;");
	rows.text[0] = '\0';
	assert_int_equal(bci_store_results_each(f->store, run, result_print, &rows, f->err, sizeof(f->err)), 3);
	assert_string_equal(rows.text, "0 igt@kms_flip@basic pass 1.500 0;"
				       "1 igt@gem_exec@hang dmesg-warn 0.250 1;"
				       "2 igt@never@started notrun -1.000 0;");
	rows.text[0] = '\0';
	assert_int_equal(bci_store_suspends_each(f->store, run, suspend_print, &rows, f->err, sizeof(f->err)), 1);
	assert_string_equal(rows.text, "1 mem pass 5.500 4.250 1.250 0.500 -1.000 rtc;");
	assert_int_equal(bci_store_results_each(f->store, other, NULL, NULL, f->err, sizeof(f->err)), 1);
}

/*
 * A run's results come back in the order they were stored and only its
 * own, even when another run's rows were stored between them (the query
 * reads the stretch of ids a run's rows span, store/database.c).
 */
static int result_brief_print(const struct bci_store_result *r, void *ctx)
{
	struct rows *rows = ctx;
	size_t len = strlen(rows->text);

	snprintf(rows->text + len, sizeof(rows->text) - len, "%d %s %s %.0f;", r->job, r->name,
		 r->result, r->duration);
	return 0;
}

static void test_results_interleaved(void **state)
{
	struct fixture *f = *state;
	struct rows rows = { "" };
	int64_t a = run_add(f, "a"), b = run_add(f, "b"), c = run_add(f, "c");

	for (int i = 0; i < 3; i++) {
		char name[32];
		struct bci_store_result r = { .job = i, .name = name, .result = "pass", .duration = i };

		snprintf(name, sizeof(name), "igt@a@%d", 2 - i);
		assert_int_equal(bci_store_result_add(f->store, a, &r, f->err, sizeof(f->err)), 0);
		snprintf(name, sizeof(name), "igt@b@%d", i);
		r.result = "fail";
		assert_int_equal(bci_store_result_add(f->store, b, &r, f->err, sizeof(f->err)), 0);
	}
	assert_int_equal(bci_store_results_each(f->store, a, result_print, &rows, f->err,
						sizeof(f->err)), 3);
	assert_string_equal(rows.text, "0 igt@a@2 pass 0.000 0;1 igt@a@1 pass 1.000 0;"
				       "2 igt@a@0 pass 2.000 0;");
	rows.text[0] = '\0';
	assert_int_equal(bci_store_results_each(f->store, b, result_print, &rows, f->err,
						sizeof(f->err)), 3);
	assert_string_equal(rows.text, "0 igt@b@0 fail 0.000 0;1 igt@b@1 fail 1.000 0;"
				       "2 igt@b@2 fail 2.000 0;");
	/* The brief reading gives the same rows, their job, name and result only. */
	rows.text[0] = '\0';
	assert_int_equal(bci_store_results_each_brief(f->store, a, result_brief_print, &rows, f->err,
						      sizeof(f->err)), 3);
	assert_string_equal(rows.text, "0 igt@a@2 pass -1;1 igt@a@1 pass -1;2 igt@a@0 pass -1;");
	rows.text[0] = '\0';
	assert_int_equal(bci_store_results_each_brief(f->store, b, result_brief_print, &rows, f->err,
						      sizeof(f->err)), 3);
	assert_string_equal(rows.text, "0 igt@b@0 fail -1;1 igt@b@1 fail -1;2 igt@b@2 fail -1;");
	assert_int_equal(bci_store_results_each_brief(f->store, c, NULL, NULL, f->err,
						      sizeof(f->err)), 0);
	/* A run without results, and one that does not exist: none. */
	assert_int_equal(bci_store_results_each(f->store, c, NULL, NULL, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_results_each(f->store, 999999, NULL, NULL, f->err,
						sizeof(f->err)), 0);
}

static int result_count(const struct bci_store_result *result, void *ctx)
{
	struct rows *r = ctx;
	size_t len = strlen(r->text);

	/* Each row's job, as a letter: the order and the set read. */
	if (len + 1 < sizeof(r->text))
		r->text[len] = (char)('0' + result->job % 75), r->text[len + 1] = '\0';
	return 0;
}

/*
 * A run's results are read from the stretch of result ids the run keeps
 * (schema 5): a run stored in several calls, with another run's rows
 * between them, is read whole and in order; a run stored before schema 5
 * (no stretch kept) is read through its index as before.
 */
static void test_results_range(void **state)
{
	struct fixture *f = *state;
	int64_t a = run_add(f, "range-a"), b = run_add(f, "range-b");
	static struct bci_store_result rows[520];
	static struct rows text_a, text_b, again;
	static char names[523][32], expect[524];

	for (int i = 0; i < 523; i++) {
		snprintf(names[i], sizeof(names[i]), "igt@range@%03d", 522 - i);
		if (i < 520)
			rows[i] = (struct bci_store_result){ .job = i, .name = names[i], .result = "pass",
							     .duration = 1 };
		expect[i] = (char)('0' + i % 75);
	}
	/* 520 rows (512 in one statement, 8 one by one), then b's, then 3 more of a's. */
	assert_int_equal(bci_store_results_add(f->store, a, rows, 520, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_results_add(f->store, b, rows, 1, f->err, sizeof(f->err)), 0);
	for (int i = 520; i < 523; i++) {
		rows[0] = (struct bci_store_result){ .job = i, .name = names[i], .result = "fail" };
		assert_int_equal(bci_store_result_add(f->store, a, rows, f->err, sizeof(f->err)), 0);
	}
	assert_int_equal(bci_store_results_each(f->store, a, result_count, &text_a, f->err,
						sizeof(f->err)), 523);
	assert_string_equal(text_a.text, expect);
	assert_int_equal(bci_store_results_each(f->store, b, result_count, &text_b, f->err,
						sizeof(f->err)), 1);
	assert_string_equal(text_b.text, "0");
	/* As a run stored before schema 5 is: the same rows. */
	raw_exec(f, "UPDATE runs SET results_first = NULL, results_last = NULL");
	assert_int_equal(bci_store_results_each(f->store, a, result_count, &again, f->err,
						sizeof(f->err)), 523);
	assert_string_equal(again.text, expect);
	again.text[0] = '\0';
	assert_int_equal(bci_store_results_each_brief(f->store, a, result_count, &again, f->err,
						      sizeof(f->err)), 523);
	assert_string_equal(again.text, expect);
}

static int result_job(const struct bci_store_run *run, const struct bci_store_result *result, void *ctx)
{
	snprintf(ctx, 256, "%s %s %d %s", run->run_id, result->name, result->job, result->result);
	return 0;
}

static void test_result_get(void **state)
{
	struct fixture *f = *state;
	struct bci_store_result a = { .job = 4, .name = "igt@a@b", .result = "fail", .duration = 1 };
	struct bci_store_result twice = { .job = 5, .name = "igt@a@b", .result = "pass", .duration = 1 };
	int64_t run = run_add(f, "r1");
	char text[256] = "";

	assert_int_equal(bci_store_result_add(f->store, run, &a, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_result_add(f->store, run, &twice, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_result_get(f->store, "lab-1", "r1", "igt@a@b", result_job, text,
					      f->err, sizeof(f->err)), 0);
	assert_string_equal(text, "r1 igt@a@b 4 fail");
	assert_int_equal(bci_store_result_get(f->store, "lab-1", "r1", "igt@a@c", result_job, text,
					      f->err, sizeof(f->err)), -ENOENT);
	assert_non_null(strstr(f->err, "igt@a@c"));
}

/* ---- reads across runs ---- */

static int run_name_add(const struct bci_store_run *run, void *ctx)
{
	struct rows *r = ctx;
	size_t len = strlen(r->text);

	snprintf(r->text + len, sizeof(r->text) - len, "%s/%s;", run->machine, run->run_id);
	return 0;
}

static int history_add(const struct bci_store_run *run, const struct bci_store_result *result,
		       void *ctx)
{
	struct rows *r = ctx;
	size_t len = strlen(r->text);

	snprintf(r->text + len, sizeof(r->text) - len, "%s/%s/%s:%s;", run->machine, run->run_id,
		 run->build ? run->build : "-", result->result);
	return 0;
}

static void test_build_runs_and_history(void **state)
{
	struct fixture *f = *state;
	struct bci_store_build b1 = { .name = "b1", .tree = "t", .commit = "c1", .tier = "full" };
	struct bci_store_build b2 = { .name = "b2", .tree = "t", .commit = "c2", .tier = "fast",
				      .base = "b1" };
	static const struct {
		const char *machine, *run_id, *build, *result;
		double ingested;
	} runs[] = {
		{ "lab-2", "r1", "b1", "pass", 100 },
		{ "lab-1", "r1", "b1", "pass", 101 },
		{ "lab-1", "r2", "b2", "fail", 200 },
		{ "lab-2", "r2", "b2", "dmesg-warn", 201 },
		{ "lab-2", "r3", NULL, "skip", 150 },
	};
	struct rows rows = { "" };

	assert_int_equal(bci_store_build_put(f->store, &b1, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_put(f->store, &b2, f->err, sizeof(f->err)), 0);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct bci_store_run run = run_template;
		struct bci_store_result res = { .job = 0, .name = "igt@a@b", .result = runs[i].result };
		struct bci_store_result other = { .job = 1, .name = "igt@a@c", .result = "pass" };
		int64_t key;

		run.machine = runs[i].machine;
		run.run_id = runs[i].run_id;
		run.build = runs[i].build;
		run.ingested = runs[i].ingested;
		if (bci_store_run_add(f->store, &run, &key, f->err, sizeof(f->err)) < 0)
			fail_msg("%s", f->err);
		assert_int_equal(bci_store_result_add(f->store, key, &res, f->err, sizeof(f->err)), 0);
		assert_int_equal(bci_store_result_add(f->store, key, &other, f->err, sizeof(f->err)), 0);
	}
	assert_int_equal(bci_store_build_runs_each(f->store, "b2", run_name_add, &rows, f->err,
						   sizeof(f->err)), 2);
	assert_string_equal(rows.text, "lab-1/r2;lab-2/r2;");
	rows.text[0] = '\0';
	assert_int_equal(bci_store_build_runs_each(f->store, "none", run_name_add, &rows, f->err,
						   sizeof(f->err)), 0);
	assert_int_equal(bci_store_test_history(f->store, "igt@a@b", NULL, history_add, &rows,
						f->err, sizeof(f->err)), 5);
	assert_string_equal(rows.text, "lab-2/r1/b1:pass;lab-1/r1/b1:pass;lab-2/r3/-:skip;"
				       "lab-1/r2/b2:fail;lab-2/r2/b2:dmesg-warn;");
	rows.text[0] = '\0';
	assert_int_equal(bci_store_test_history(f->store, "igt@a@b", "lab-2", history_add, &rows,
						f->err, sizeof(f->err)), 3);
	assert_string_equal(rows.text, "lab-2/r1/b1:pass;lab-2/r3/-:skip;lab-2/r2/b2:dmesg-warn;");
}

/* The mean of a test's known durations, -1 when it has none. */
static double mean_duration(struct fixture *f, const char *test)
{
	double seconds = -1;
	int ret = bci_store_test_duration(f->store, test, &seconds, f->err, sizeof(f->err));

	if (ret < 0)
		fail_msg("%s: %s", test, f->err);
	return ret == 1 ? seconds : -1;
}

/*
 * Each result with a duration adds to its test's mean (test_durations, kept
 * as results are added: no index of results by name since schema 3; a whole
 * run's rows, as ingest adds them, count at the next fold, schema 4); a
 * store from before (schema 2: the index, no test_durations) gets the means
 * of the results it holds when it is opened.
 */
static void test_durations_kept_and_migrated(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *name;
		double duration;
	} results[] = {
		{ "igt@a@one", 1.0 }, { "igt@a@one", 3.5 }, { "igt@a@two", 2.0 },
		{ "igt@a@none", -1 }, { "igt@a@two", -1 },
	};
	struct bci_store_run run = run_template;
	int64_t key;
	int version = -1;

	if (bci_store_run_add(f->store, &run, &key, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++) {
		struct bci_store_result res = {
			.job = (int)i, .name = results[i].name, .result = "pass",
			.duration = results[i].duration,
		};

		assert_int_equal(bci_store_result_add(f->store, key, &res, f->err, sizeof(f->err)), 0);
	}
	assert_true(fabs(mean_duration(f, "igt@a@one") - 2.25) < 1e-9);
	assert_true(fabs(mean_duration(f, "igt@a@two") - 2.0) < 1e-9);
	assert_true(mean_duration(f, "igt@a@none") < 0);
	assert_true(mean_duration(f, "igt@a@never") < 0);

	/* The same rows in a store of schema 2, opened by this bootci. */
	bci_store_close(f->store);
	f->store = NULL;
	raw_exec(f, "DROP TABLE test_durations; DROP TABLE durations_pending;"
		    " CREATE INDEX results_name ON results(name);"
		    " ALTER TABLE runs DROP COLUMN results_first;"
		    " ALTER TABLE runs DROP COLUMN results_last;"
		    " ALTER TABLE schedule_jobs DROP COLUMN note;"
		    " ALTER TABLE schedule_jobs DROP COLUMN ended;"
		    " ALTER TABLE schedule_jobs DROP COLUMN asked;"
		    " ALTER TABLE schedule_jobs DROP COLUMN kind;"
		    " DROP TABLE mail_outbox;"
		    " DROP TABLE patchwork_checks; DROP TABLE patchwork_patches;"
		    " DROP TABLE patchwork_series; DROP TABLE patchwork_cursor;"
		    " DROP TABLE build_stages;"
		    " DROP INDEX machines_shard_group; ALTER TABLE machines DROP COLUMN shard_group;"
		    " DROP TABLE bisect_steps; DROP TABLE bisects;"
		    " UPDATE bootci_schema SET version = 2");
	reopen(f);
	assert_int_equal(bci_store_schema_version(f->store, &version, f->err, sizeof(f->err)), 0);
	assert_int_equal(version, BCI_STORE_SCHEMA_VERSION);
	assert_true(fabs(mean_duration(f, "igt@a@one") - 2.25) < 1e-9);
	assert_true(fabs(mean_duration(f, "igt@a@two") - 2.0) < 1e-9);
	assert_true(mean_duration(f, "igt@a@none") < 0);
	/* The index is gone (making it again works), and new results still count. */
	raw_exec(f, "CREATE INDEX results_name ON results(name); DROP INDEX results_name");
	{
		struct bci_store_result res = { .job = 9, .name = "igt@a@two", .result = "pass",
						.duration = 4.0 };

		assert_int_equal(bci_store_result_add(f->store, key, &res, f->err, sizeof(f->err)), 0);
	}
	assert_true(fabs(mean_duration(f, "igt@a@two") - 3.0) < 1e-9);

	/* A whole run's rows at once (as ingest stores them) count the same way. */
	{
		struct bci_store_result batch[] = {
			{ .job = 0, .name = "igt@a@two", .result = "pass", .duration = 5.0 },
			{ .job = 1, .name = "igt@a@none", .result = "pass", .duration = 7.0 },
			{ .job = 2, .name = "igt@a@one", .result = "fail", .duration = -1 },
		};
		struct bci_store_run second = run_template;
		int64_t other;

		second.run_id = "r-batch";
		if (bci_store_run_add(f->store, &second, &other, f->err, sizeof(f->err)) < 0)
			fail_msg("%s", f->err);
		assert_int_equal(bci_store_results_add(f->store, other, batch, 3, f->err,
						       sizeof(f->err)), 0);
		/* Pending until folded: the means are those of before. */
		assert_true(fabs(mean_duration(f, "igt@a@two") - 3.0) < 1e-9);
		assert_true(mean_duration(f, "igt@a@none") < 0);
		/* A third run, deleted before the fold, never counts. */
		second.run_id = "r-gone";
		if (bci_store_run_add(f->store, &second, &other, f->err, sizeof(f->err)) < 0)
			fail_msg("%s", f->err);
		assert_int_equal(bci_store_results_add(f->store, other, batch, 1, f->err,
						       sizeof(f->err)), 0);
		{
			char sql[128];

			/* Its results and its pending mark go with it (ON DELETE CASCADE). */
			snprintf(sql, sizeof(sql), "%sDELETE FROM runs WHERE id = %lld",
				 strncmp(f->url, "sqlite:", 7) ? "" : "PRAGMA foreign_keys=ON; ",
				 (long long)other);
			raw_exec(f, sql);
		}
	}
	/* In its own transaction, then inside the caller's. */
	assert_int_equal(bci_store_durations_fold(f->store, f->err, sizeof(f->err)), 0);
	assert_true(fabs(mean_duration(f, "igt@a@two") - 11.0 / 3) < 1e-9);
	assert_true(fabs(mean_duration(f, "igt@a@none") - 7.0) < 1e-9);
	assert_true(fabs(mean_duration(f, "igt@a@one") - 2.25) < 1e-9);
	assert_int_equal(bci_store_begin(f->store, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_durations_fold(f->store, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_commit(f->store, f->err, sizeof(f->err)), 0);
	/* Folded once: a second fold counts nothing again. */
	assert_true(fabs(mean_duration(f, "igt@a@two") - 11.0 / 3) < 1e-9);
	assert_true(fabs(mean_duration(f, "igt@a@none") - 7.0) < 1e-9);
}

/* ---- a run's results at once ---- */

/* Two statements of 512 rows, two of 32 and 12 rows one by one (runs.c). */
#define BATCH_ROWS 1100

struct batch_read {
	int seen, wrong;
};

static int batch_row(const struct bci_store_result *r, void *ctx)
{
	struct batch_read *b = ctx;
	char name[32];
	int i = b->seen++;

	snprintf(name, sizeof(name), "igt@batch@%04d", BATCH_ROWS - 1 - i);
	if (r->job != i || strcmp(r->name, name) || strcmp(r->result, i % 2 ? "fail" : "pass") ||
	    (i % 5 ? fabs(r->duration - i * 0.5) > 1e-9 : r->duration >= 0) ||
	    r->dmesg_warnings != (i % 3 == 0))
		b->wrong++;
	return 0;
}

/*
 * 1100 results in one call (as ingest stores a run: 512 rows a statement,
 * then 32, then the rest one by one) read back in their order, each as it was given;
 * one without a name refuses them all before any is written.
 */
static void test_results_batch(void **state)
{
	struct fixture *f = *state;
	static struct bci_store_result rows[BATCH_ROWS];
	static char names[BATCH_ROWS][32];
	struct batch_read b = { 0 };
	int64_t run = run_add(f, "batch"), other = run_add(f, "batch-refused");

	for (int i = 0; i < BATCH_ROWS; i++) {
		snprintf(names[i], sizeof(names[i]), "igt@batch@%04d", BATCH_ROWS - 1 - i);
		rows[i] = (struct bci_store_result){
			.job = i, .name = names[i], .result = i % 2 ? "fail" : "pass",
			.duration = i % 5 ? i * 0.5 : -1, .dmesg_warnings = i % 3 == 0,
		};
	}
	if (bci_store_results_add(f->store, run, rows, BATCH_ROWS, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	assert_int_equal(bci_store_results_each(f->store, run, batch_row, &b, f->err, sizeof(f->err)),
			 BATCH_ROWS);
	assert_int_equal(b.seen, BATCH_ROWS);
	assert_int_equal(b.wrong, 0);
	rows[1040].name = NULL;
	assert_int_equal(bci_store_results_add(f->store, other, rows, BATCH_ROWS, f->err,
					       sizeof(f->err)), -EINVAL);
	assert_int_equal(bci_store_results_each(f->store, other, NULL, NULL, f->err,
						sizeof(f->err)), 0);
}

/* ---- transactions ---- */

static void test_transactions(void **state)
{
	struct fixture *f = *state;
	struct bci_store_result a = { .job = 0, .name = "igt@x@y", .result = "pass", .duration = 1 };
	int64_t run;

	assert_int_equal(bci_store_begin(f->store, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_begin(f->store, f->err, sizeof(f->err)), -EBUSY);
	run = run_add(f, "dropped");
	assert_int_equal(bci_store_result_add(f->store, run, &a, f->err, sizeof(f->err)), 0);
	bci_store_rollback(f->store);
	assert_int_equal(bci_store_runs_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machines_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err)), 0);
	bci_store_rollback(f->store);	/* outside a transaction: nothing */

	assert_int_equal(bci_store_begin(f->store, f->err, sizeof(f->err)), 0);
	run = run_add(f, "kept");
	assert_int_equal(bci_store_result_add(f->store, run, &a, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_commit(f->store, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_commit(f->store, f->err, sizeof(f->err)), -EINVAL);
	reopen(f);
	assert_int_equal(bci_store_runs_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err)), 1);
	assert_int_equal(bci_store_results_each(f->store, run, NULL, NULL, f->err, sizeof(f->err)), 1);

	/* A transaction left open when the store closes is dropped, not committed. */
	assert_int_equal(bci_store_begin(f->store, f->err, sizeof(f->err)), 0);
	run_add(f, "open-at-close");
	reopen(f);
	assert_int_equal(bci_store_runs_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err)), 1);

	/* Relaxed (a netboot's records): whole or nothing all the same, and no nesting. */
	assert_int_equal(bci_store_begin_relaxed(f->store, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_begin_relaxed(f->store, f->err, sizeof(f->err)), -EBUSY);
	run_add(f, "relaxed-dropped");
	bci_store_rollback(f->store);
	assert_int_equal(bci_store_runs_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err)), 1);
	assert_int_equal(bci_store_begin_relaxed(f->store, f->err, sizeof(f->err)), 0);
	run = run_add(f, "relaxed-kept");
	assert_int_equal(bci_store_result_add(f->store, run, &a, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_commit(f->store, f->err, sizeof(f->err)), 0);
	reopen(f);
	assert_int_equal(bci_store_runs_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err)), 2);
	assert_int_equal(bci_store_results_each(f->store, run, NULL, NULL, f->err, sizeof(f->err)), 1);
}

/* ---- values are bound, never spliced ---- */

static void test_hostile_text_is_data(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = {
		"x'); DROP TABLE runs; --", "a\"b", "?", "$1", "%s%n", "ünïcødé ✓", "back\\slash",
	};
	char text[1024];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct bci_store_run run = run_template;
		struct bci_store_result res = { .job = 0, .name = names[i], .result = "pass" };
		char got[256] = "";
		int64_t key;

		run.machine = names[i];
		run.run_id = names[i];
		if (bci_store_run_add(f->store, &run, &key, f->err, sizeof(f->err)) < 0)
			fail_msg("%s: %s", names[i], f->err);
		assert_int_equal(bci_store_result_add(f->store, key, &res, f->err, sizeof(f->err)), 0);
		assert_int_equal(bci_store_result_get(f->store, names[i], names[i], names[i], result_job,
						      got, f->err, sizeof(f->err)), 0);
		snprintf(text, sizeof(text), "%s %s 0 pass", names[i], names[i]);
		assert_string_equal(got, text);
	}
	assert_int_equal(bci_store_runs_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err)),
			 (int)(sizeof(names) / sizeof(names[0])));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_schema_current_after_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_single_version_row, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_newer_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sqlite_page_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_url_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_machines_and_tags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_machine_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_builds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_contents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_results_interleaved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_results_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_result_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_runs_and_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_durations_kept_and_migrated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_results_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transactions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_text_is_data, setup, teardown),
	};
	const char *url = getenv("BOOTCI_TEST_STORE_URL");

	return cmocka_run_group_tests_name(url && *url ? "store (BOOTCI_TEST_STORE_URL)" : "store (sqlite)",
					   tests, NULL, NULL);
}
