// SPDX-License-Identifier: MIT
/*
 * aggregator/master/schedule/: the master's scheduling against a real SQLite store
 * in a temporary data folder: the iPXE answers, shards split by duration,
 * the fast tier gating the full tier, power cycles and taking a machine out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/report/report.h"
#include "../../aggregator/master/schedule/deploy.h"
#include "../../aggregator/master/schedule/job_initrd.h"
#include "../../aggregator/master/schedule/judge.h"
#include "../../aggregator/master/schedule/schedule.h"
#include "../../aggregator/master/schedule/serve_hook.h"
#include "../../aggregator/master/schedule/split.h"
#include "../../aggregator/master/store/store.h"
#include "fsutil.h"
#include "manifest.h"
#include "pgreset.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define T0 1800000000.0

struct fixture {
	char dir[PATH_MAX];
	char power_log[PATH_MAX + 16];
	struct bci_store *store;
	struct bci_inventory *inv;
	struct bci_schedule s;
	char *log_text;
	size_t log_len;
	int judged;		/* what the judge answers */
	int judge_calls;
	char err[1024];
};

static int judge(struct bci_store *store, const char *build, void *ctx,
		 struct bci_schedule_issues *issues, char *err, size_t err_size)
{
	struct fixture *f = ctx;

	(void)store;
	(void)build;
	(void)issues;
	(void)err;
	(void)err_size;
	f->judge_calls++;
	return f->judged;
}

static void inventory_set(struct fixture *f, const char *extra)
{
	char text[PATH_MAX * 4], power[PATH_MAX + 64];

	snprintf(power, sizeof(power), "%s/power.sh", f->dir);
	snprintf(text, sizeof(text),
		 "[schedule]\npower-cycles = 2\npower-timeout = 10s\nipmitool = %s/ipmitool\n"
		 "[machine solo]\nmac = 52:54:00:00:00:01\ndeadline = 10m\npower = %s solo\n"
		 "[machine grp-a]\nmac = 52:54:00:00:00:02\nshard-group = g\n"
		 "[machine grp-b]\nmac = 52:54:00:00:00:03\nshard-group = g\n%s",
		 f->dir, power, extra);
	bci_inventory_free(f->inv);
	f->inv = NULL;
	if (bci_inventory_parse("machines.conf", text, strlen(text), &f->inv, f->err,
				sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	f->s.inventory = f->inv;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char url[PATH_MAX + 32], path[PATH_MAX + 32];
	FILE *script;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/bootci-schedule-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	/* BOOTCI_TEST_STORE_URL: the same suite against PostgreSQL (tests/aggregator/store-postgres.t). */
	if (getenv("BOOTCI_TEST_STORE_URL") && *getenv("BOOTCI_TEST_STORE_URL")) {
		pg_reset(getenv("BOOTCI_TEST_STORE_URL"));
		snprintf(url, sizeof(url), "%s", getenv("BOOTCI_TEST_STORE_URL"));
	} else {
		snprintf(url, sizeof(url), "sqlite:%s/bootci.sqlite", f->dir);
	}
	if (bci_store_open(url, f->dir, &f->store, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	/* The power command: appends its argument to a file, as a PDU would power a socket. */
	snprintf(f->power_log, sizeof(f->power_log), "%s/power.log", f->dir);
	snprintf(path, sizeof(path), "%s/power.sh", f->dir);
	script = fopen(path, "w");
	assert_non_null(script);
	fprintf(script, "#!/bin/sh\necho \"$1\" >> '%s'\n", f->power_log);
	fclose(script);
	assert_int_equal(chmod(path, 0755), 0);
	f->s = (struct bci_schedule){ .store = f->store, .data_dir = f->dir, .judge = judge,
				      .judge_ctx = f };
	f->s.log = open_memstream(&f->log_text, &f->log_len);
	inventory_set(f, "");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[PATH_MAX + 16];

	fclose(f->s.log);
	free(f->log_text);
	bci_inventory_free(f->inv);
	bci_store_close(f->store);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* Publishes @text as file @name of @build, content-addressed as publish keeps it. */
static void build_file(struct fixture *f, const char *build, const char *name, const char *text)
{
	char tmp[PATH_MAX + 32], object[PATH_MAX + 128], hex[BCI_SHA256_HEX_LEN + 1];
	uint64_t size;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/builds/objects", f->dir);
	assert_int_equal(bci_mkdir_p(tmp, 0755), 0);
	snprintf(tmp, sizeof(tmp), "%s/tmp-file", f->dir);
	assert_int_equal(bci_write_file_atomic(tmp, text, strlen(text), 0644), 0);
	fd = open(tmp, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(bci_sha256_fd(fd, hex, &size), 0);
	close(fd);
	assert_int_equal(bci_schedule_object_path(f->dir, hex, object, sizeof(object)), 0);
	assert_int_equal(rename(tmp, object), 0);
	struct bci_store_build_file file = { .build = build, .path = name, .sha256 = hex,
					     .size = size };
	if (bci_store_build_file_add(f->store, &file, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
}

static void build_add(struct fixture *f, const char *name, const char *tree, const char *fast,
		      const char *full)
{
	struct bci_store_build build = { .name = name, .tree = tree, .commit = "c0ffee",
					 .tier = "fast" };

	assert_int_equal(bci_store_build_put(f->store, &build, f->err, sizeof(f->err)), 0);
	build_file(f, name, "boot.ipxe",
		   "#!ipxe\nkernel vmlinuz initrd=initrd.img console=ttyS0 quiet\ninitrd initrd.img\nboot\n");
	build_file(f, name, "fast.testlist", fast);
	build_file(f, name, "full.testlist", full);
}

/* An upload of @run_id by @machine ingested at @when (0: now), with @test lasting @seconds. */
static void upload_at(struct fixture *f, const char *machine, const char *run_id, const char *test,
		      double seconds, double when)
{
	struct bci_store_run run = {
		.ingested = when,
		.machine = machine, .run_id = run_id, .state = "done", .archive_root = "",
		.digest = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		.archive_path = "archives/x.tar.zst",
	};
	int64_t key;

	if (bci_store_run_add(f->store, &run, &key, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	if (test) {
		struct bci_store_result result = { .job = 0, .name = test, .result = "pass",
						   .duration = seconds };

		/* As ingest stores a run: its durations pending until the scheduler folds them. */
		assert_int_equal(bci_store_results_add(f->store, key, &result, 1, f->err,
						       sizeof(f->err)), 0);
	}
}

static void upload(struct fixture *f, const char *machine, const char *run_id, const char *test,
		   double seconds)
{
	upload_at(f, machine, run_id, test, seconds, 0);
}

static char *boot(struct fixture *f, const char *mac, double now)
{
	char *script = NULL;

	if (bci_schedule_boot(&f->s, mac, "http://127.0.0.1:8080", now, &script, f->err,
			      sizeof(f->err)) < 0)
		fail_msg("boot %s: %s", mac, f->err);
	return script;
}

static void expect_in(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("expected '%s' in:\n%s", part, text);
}

/* ---- the iPXE answers ---- */

static void test_boot_answers(void **state)
{
	struct fixture *f = *state;
	char *script, *initrd;
	size_t len;

	script = boot(f, "52:54:00:99:99:99", T0);
	assert_string_equal(script, "#!ipxe\n# bootci: unknown machine: boot the disk's known-good image\nexit\n");
	free(script);
	fflush(f->s.log);
	expect_in(f->log_text, "unknown MAC 52:54:00:99:99:99");

	script = boot(f, "52:54:00:00:00:01", T0);
	expect_in(script, "#!ipxe\n");
	expect_in(script, "\nexit\n");
	free(script);

	build_add(f, "b1", "drm-tip", "igt@core@a\n# comment\nigt@core@b\n", "igt@x@1\n");
	assert_int_equal(bci_schedule_queue(&f->s, "b1", "fast", f->err, sizeof(f->err)), 3);
	/* serve's ingest files a run the scheduler handed out under its job's build. */
	{
		char build[64] = "";

		assert_int_equal(bci_schedule_run_build(f->store, "solo", "b1-fast", build,
							sizeof(build), f->err, sizeof(f->err)), 1);
		assert_string_equal(build, "b1");
		assert_int_equal(bci_schedule_run_build(f->store, "solo", "by-hand", build,
							sizeof(build), f->err, sizeof(f->err)), 0);
	}
	script = boot(f, "52-54-00-00-00-01", T0 + 1);
	assert_string_equal(script,
		"#!ipxe\n"
		"# bootci: solo runs b1-fast (build b1, fast tier)\n"
		"kernel http://127.0.0.1:8080/api/v1/builds/b1/files/vmlinuz initrd=job.img"
		" initrd=initrd.img console=ttyS0 quiet bootci.run_id=b1-fast"
		" bootci.testlist=/etc/bootci/job.testlist\n"
		"initrd --name job.img http://127.0.0.1:8080/api/v1/machines/solo/jobs/b1-fast/initrd\n"
		"initrd --name initrd.img http://127.0.0.1:8080/api/v1/builds/b1/files/initrd.img\n"
		"boot\n");
	free(script);
	/* The job initrd: a newc archive with the testlist (comments dropped) where the command line says. */
	assert_int_equal(bci_schedule_job_initrd(&f->s, "solo", "b1-fast", &initrd, &len, f->err,
						 sizeof(f->err)), 0);
	assert_int_equal(len % 4, 0);
	assert_memory_equal(initrd, "070701", 6);
	assert_non_null(memmem(initrd, len, "etc/bootci/job.testlist", 23));
	assert_non_null(memmem(initrd, len, "igt@core@a\nigt@core@b\n", 22));
	assert_non_null(memmem(initrd, len, "TRAILER!!!", 10));
	free(initrd);
	assert_int_equal(bci_schedule_job_initrd(&f->s, "solo", "nope", &initrd, &len, f->err,
						 sizeof(f->err)), -ENOENT);

	/* Asking again before an upload: the same job (the executor resumes its run). */
	script = boot(f, "52:54:00:00:00:01", T0 + 2);
	expect_in(script, "bootci.run_id=b1-fast ");
	free(script);
	/* Uploaded: nothing more to run. */
	upload(f, "solo", "b1-fast", NULL, 0);
	script = boot(f, "52:54:00:00:00:01", T0 + 3);
	expect_in(script, "\nexit\n");
	free(script);
	/* A bad base URL never reaches a script. */
	assert_int_equal(bci_schedule_boot(&f->s, "52:54:00:00:00:02", "http://x/\nshell", T0,
					   &script, f->err, sizeof(f->err)), -EINVAL);
}

static void known_good_disk(struct fixture *f, const char *version, const char *text);
static int deploy_state(struct fixture *f, const char *machine, char *note, size_t size);

/* The job of @run_id on @machine, as the store has it (state, boots, note). */
struct job_seen {
	char state[16], note[1024];
	int boots;
	double ended;
};

static int job_seen_copy(const struct bci_store_job *job, void *ctx)
{
	struct job_seen *j = ctx;

	snprintf(j->state, sizeof(j->state), "%s", job->state);
	snprintf(j->note, sizeof(j->note), "%s", job->note ? job->note : "");
	j->boots = job->boots;
	j->ended = job->ended;
	return 0;
}

static struct job_seen job_seen(struct fixture *f, const char *machine, const char *run_id)
{
	struct job_seen j = { .boots = -1 };

	assert_int_equal(bci_store_machine_job_get(f->store, machine, run_id, job_seen_copy, &j,
						   f->err, sizeof(f->err)), 1);
	return j;
}

/*
 * Past its boot cap the master ends the run: `exit` to the known-good image
 * (which uploads what there is), the job abandoned with a note saying so,
 * no re-deploy; a run never handed out again.
 */
static void test_boot_ends_run_at_cap(void **state)
{
	struct fixture *f = *state;
	struct job_seen j;
	char note[512], *script;

	build_add(f, "b1", "drm-tip", "igt@core@a\n", "igt@x@1\n");
	assert_int_equal(bci_schedule_queue(&f->s, "b1", "fast", f->err, sizeof(f->err)), 3);
	known_good_disk(f, "kg-1", "image");
	/* More boots than the 5 that once meant a damaged disk: an IGT run of two capped jobs. */
	for (int i = 0; i < BCI_SCHEDULE_MAX_BOOTS; i++) {
		script = boot(f, "52:54:00:00:00:02", T0 + i);
		expect_in(script, "bootci.run_id=b1-fast ");
		free(script);
		assert_int_equal(deploy_state(f, "grp-a", note, sizeof(note)), BCI_DEPLOY_NONE);
	}
	assert_true(BCI_SCHEDULE_MAX_BOOTS > 7);
	assert_int_equal(job_seen(f, "grp-a", "b1-fast").boots, BCI_SCHEDULE_MAX_BOOTS);
	script = boot(f, "52:54:00:00:00:02", T0 + 20);
	expect_in(script, "# bootci: run b1-fast ended by the master after 10 boots");
	expect_in(script, "\nexit\n");
	free(script);
	assert_int_equal(deploy_state(f, "grp-a", note, sizeof(note)), BCI_DEPLOY_NONE);
	j = job_seen(f, "grp-a", "b1-fast");
	assert_string_equal(j.state, "abandoned");
	expect_in(j.note, "ended by the master after 10 boots without an upload");
	expect_in(j.note, "the kernel under test never finished the run");
	assert_true(j.ended == T0 + 20);
	fflush(f->s.log);
	expect_in(f->log_text, "grp-a: b1-fast ended after 10 boots without an upload");
}

/* The known-good image asked about the ended run: the disk boots, nothing is re-deployed. */
static void test_ended_run_asked_is_no_disk_fault(void **state)
{
	struct fixture *f = *state;
	struct bci_schedule_run_job asked;
	struct job_seen j;
	char note[512], *script;

	build_add(f, "b1", "drm-tip", "igt@core@a\n", "igt@x@1\n");
	assert_int_equal(bci_schedule_queue(&f->s, "b1", "fast", f->err, sizeof(f->err)), 3);
	known_good_disk(f, "kg-1", "image");
	for (int i = 0; i <= BCI_SCHEDULE_MAX_BOOTS; i++)
		free(boot(f, "52:54:00:00:00:02", T0 + i));
	/* collect's question: the job says the run is over, with its boots. */
	assert_int_equal(bci_schedule_run_asked(f->store, "grp-a", "b1-fast", T0 + 30, &asked,
						f->err, sizeof(f->err)), 1);
	assert_true(asked.ended);
	assert_int_equal(asked.boots, BCI_SCHEDULE_MAX_BOOTS);
	expect_in(asked.note, "ended by the master");
	assert_int_equal(bci_schedule_run_asked(f->store, "grp-a", "no-such-run", T0 + 30, &asked,
						f->err, sizeof(f->err)), 0);
	script = boot(f, "52:54:00:00:00:02", T0 + 40);
	expect_in(script, "# bootci: nothing to run");
	free(script);
	assert_int_equal(deploy_state(f, "grp-a", note, sizeof(note)), BCI_DEPLOY_NONE);
	j = job_seen(f, "grp-a", "b1-fast");
	assert_string_equal(j.state, "abandoned");
	assert_true(j.ended == 0);
	expect_in(j.note, "its known-good image spoke (asked about the run, or said hello): the disk"
			  " boots, the kernel under test did not");
	/* Its upload, whenever it comes, ends the job as done, the note kept. */
	upload(f, "grp-a", "b1-fast", NULL, 0);
	assert_int_equal(bci_schedule_run_ingested(f->store, "grp-a", "b1-fast", f->err,
						   sizeof(f->err)), 1);
	j = job_seen(f, "grp-a", "b1-fast");
	assert_string_equal(j.state, "done");
	expect_in(j.note, "ended by the master after 10 boots");
}

/*
 * A kernel that died before it made a run folder: collect has no run to ask
 * about, but its hello vouches for the disk: no re-deploy, the kernel named.
 */
static void test_ended_run_hello_is_no_disk_fault(void **state)
{
	struct fixture *f = *state;
	struct bci_schedule_hello hello;
	struct job_seen j;
	char note[512], *script;

	build_add(f, "b1", "drm-tip", "igt@core@a\n", "igt@x@1\n");
	assert_int_equal(bci_schedule_queue(&f->s, "b1", "fast", f->err, sizeof(f->err)), 3);
	known_good_disk(f, "kg-1", "image");
	for (int i = 0; i <= BCI_SCHEDULE_MAX_BOOTS; i++)
		free(boot(f, "52:54:00:00:00:02", T0 + i));
	assert_int_equal(bci_schedule_hello(&f->s, "nope", T0 + 30, &hello, f->err,
					    sizeof(f->err)), -ENOENT);
	assert_false(hello.known);
	assert_int_equal(bci_schedule_hello(&f->s, "grp-a", T0 + 30, &hello, f->err,
					    sizeof(f->err)), 0);
	assert_true(hello.known);
	assert_false(hello.out);
	assert_int_equal(hello.ended_runs, 1);
	/* Said once: a second hello has no ended run left to vouch for. */
	assert_int_equal(bci_schedule_hello(&f->s, "grp-a", T0 + 31, &hello, f->err,
					    sizeof(f->err)), 0);
	assert_int_equal(hello.ended_runs, 0);
	script = boot(f, "52:54:00:00:00:02", T0 + 40);
	expect_in(script, "# bootci: nothing to run");
	free(script);
	assert_int_equal(deploy_state(f, "grp-a", note, sizeof(note)), BCI_DEPLOY_NONE);
	j = job_seen(f, "grp-a", "b1-fast");
	assert_string_equal(j.state, "abandoned");
	expect_in(j.note, "the kernel under test never finished the run");
	expect_in(j.note, "said hello): the disk boots, the kernel under test did not");
	fflush(f->s.log);
	expect_in(f->log_text, "grp-a: its known-good image started: 1 run the master ended are the"
			       " kernel's");
}

/* The hello of a machine taken out says so, with the reason. */
static void test_hello_of_machine_out(void **state)
{
	struct fixture *f = *state;
	struct bci_schedule_hello hello;

	assert_int_equal(bci_schedule_fault(&f->s, "grp-a", "3 boots in a row", T0, f->err,
					    sizeof(f->err)), 1);
	assert_int_equal(bci_schedule_hello(&f->s, "grp-a", T0 + 1, &hello, f->err,
					    sizeof(f->err)), 0);
	assert_true(hello.out);
	assert_string_equal(hello.note, "the machine reported: 3 boots in a row");
	assert_int_equal(bci_schedule_return(&f->s, "grp-a", T0 + 2, f->err, sizeof(f->err)), 1);
	assert_int_equal(bci_schedule_hello(&f->s, "grp-a", T0 + 3, &hello, f->err,
					    sizeof(f->err)), 0);
	assert_false(hello.out);
	assert_string_equal(hello.note, "");
}

static void test_routes(void **state)
{
	struct bci_schedule_route r;

	(void)state;
	assert_int_equal(bci_schedule_route_parse("/api/v1/boot/52:54:00:00:00:01", &r), 0);
	assert_int_equal(r.kind, BCI_SCHEDULE_ROUTE_BOOT);
	assert_string_equal(r.first, "52:54:00:00:00:01");
	assert_int_equal(bci_schedule_route_parse("/api/v1/builds/b1/files/vmlinuz", &r), 0);
	assert_int_equal(r.kind, BCI_SCHEDULE_ROUTE_BUILD_FILE);
	assert_string_equal(r.second, "vmlinuz");
	assert_int_equal(bci_schedule_route_parse("/api/v1/builds/b1", &r), 0);
	assert_int_equal(r.kind, BCI_SCHEDULE_ROUTE_BUILD);
	assert_int_equal(bci_schedule_route_parse("/api/v1/machines/m/jobs/r/initrd", &r), 0);
	assert_int_equal(r.kind, BCI_SCHEDULE_ROUTE_JOB_INITRD);
	assert_int_equal(bci_schedule_route_parse("/api/v1/known-good/kg-1", &r), 0);
	assert_int_equal(r.kind, BCI_SCHEDULE_ROUTE_KNOWN_GOOD);
	assert_string_equal(r.first, "kg-1");
	assert_int_equal(bci_schedule_route_parse("/api/v1/known-good/kg-1/files/disk.img", &r), 0);
	assert_int_equal(r.kind, BCI_SCHEDULE_ROUTE_KNOWN_GOOD_FILE);
	assert_string_equal(r.second, "disk.img");
	assert_int_equal(bci_schedule_route_parse("/api/v1/known-good/kg-1/", &r), -1);
	assert_int_equal(bci_schedule_route_parse("/api/v1/builds/../files/x", &r), -1);
	assert_int_equal(bci_schedule_route_parse("/api/v1/builds/b1/files/a/b", &r), -1);
	assert_int_equal(bci_schedule_route_parse("/api/v1/boot/a/b", &r), -1);
	assert_int_equal(bci_schedule_route_parse("/api/v1/machines/m/jobs/r", &r), -1);
	assert_int_equal(bci_schedule_route_parse("/api/v1/machines/m/deploy/kg-1/initrd", &r), 0);
	assert_int_equal(r.kind, BCI_SCHEDULE_ROUTE_DEPLOY_INITRD);
	assert_string_equal(r.first, "m");
	assert_string_equal(r.second, "kg-1");
	assert_int_equal(bci_schedule_route_parse("/api/v1/machines/m/deploy/kg-1", &r), -1);
	assert_int_equal(bci_schedule_route_parse("/api/v1/machines/m/deploy/../initrd", &r), -1);
	assert_true(bci_schedule_http_owns("/api/v1/machines/m/deploy/kg-1/initrd"));
	assert_true(bci_schedule_http_owns("/api/v1/machines/m/jobs/r/initrd"));
	assert_false(bci_schedule_http_owns("/api/v1/machines/m/runs/r"));
	assert_false(bci_schedule_http_owns("/api/v1/health"));
}

/* ---- shards ---- */

static void test_split_pure(void **state)
{
	double none[5] = { -1, -1, -1, -1, -1 }, known[5] = { 1, 10, 2, 9, 3 }, loads[2];
	unsigned shard_of[5];

	(void)state;
	assert_int_equal(bci_split_assign(none, 5, 2, shard_of, loads), 0);
	/* No history: even by count, in turn. */
	assert_int_equal(shard_of[0], 0);
	assert_int_equal(shard_of[1], 1);
	assert_int_equal(shard_of[2], 0);
	assert_int_equal(shard_of[3], 1);
	assert_int_equal(shard_of[4], 0);
	/* Longest first onto the least loaded: 10|9, 3 -> B(9), 2 -> A(10), 1 -> B(12) */
	assert_int_equal(bci_split_assign(known, 5, 2, shard_of, loads), 0);
	assert_int_equal(shard_of[1], 0);
	assert_int_equal(shard_of[3], 1);
	assert_int_equal(shard_of[4], 1);
	assert_int_equal(shard_of[2], 0);
	assert_int_equal(shard_of[0], 0);
	assert_true(loads[0] == 13 && loads[1] == 12);
	assert_int_equal(bci_split_assign(known, 5, 0, shard_of, loads), -EINVAL);
}

struct testlists {
	char solo[256], a[256], b[256];
	int count;
};

static int job_testlists(const struct bci_store_job *job, void *ctx)
{
	struct testlists *t = ctx;
	char *dest = !strcmp(job->machine, "solo") ? t->solo :
		     !strcmp(job->machine, "grp-a") ? t->a : t->b;

	snprintf(dest, 256, "%s|%s|%d/%d", job->run_id, job->testlist, job->shard, job->shards);
	t->count++;
	return 0;
}

/* "RUN_ID:STATE " per job of the machine, appended in the store's order. */
static int job_states(const struct bci_store_job *job, void *ctx)
{
	struct testlists *t = ctx;
	char *dest = !strcmp(job->machine, "solo") ? t->solo :
		     !strcmp(job->machine, "grp-a") ? t->a : t->b;
	size_t used = strlen(dest);

	snprintf(dest + used, 256 - used, "%s:%s ", job->run_id, job->state);
	return 0;
}

static const char full_list[] = "igt@t@1\nigt@t@2\nigt@t@3\nigt@t@4\n";

static void test_shards_without_history(void **state)
{
	struct fixture *f = *state;
	struct testlists t = { 0 };
	char *script;

	build_add(f, "b1", "drm-tip", "igt@core@a\n", full_list);
	assert_int_equal(bci_schedule_queue(&f->s, "b1", "full", f->err, sizeof(f->err)), 3);
	assert_int_equal(bci_store_jobs_each(f->store, "b1", "full", job_testlists, &t, f->err,
					     sizeof(f->err)), 3);
	assert_string_equal(t.solo, "b1-full|igt@t@1\nigt@t@2\nigt@t@3\nigt@t@4\n|0/1");
	assert_string_equal(t.a, "b1-full-1of2|igt@t@1\nigt@t@3\n|0/2");
	assert_string_equal(t.b, "b1-full-2of2|igt@t@2\nigt@t@4\n|1/2");
	script = boot(f, "52:54:00:00:00:03", T0);
	expect_in(script, "# bootci: grp-b runs b1-full-2of2 (build b1, full tier, shard 2 of 2)\n");
	expect_in(script, "/api/v1/machines/grp-b/jobs/b1-full-2of2/initrd\n");
	free(script);
}

static void test_shards_by_duration_stable(void **state)
{
	struct fixture *f = *state;
	struct testlists t = { 0 }, again = { 0 };

	/* History: t@4 takes 100 s, t@1 50 s, the others 1 s. */
	build_add(f, "old", "drm-tip", "igt@core@a\n", full_list);
	upload(f, "solo", "old-1", "igt@t@4", 100);
	upload(f, "solo", "old-2", "igt@t@1", 50);
	upload(f, "solo", "old-3", "igt@t@2", 1);
	upload(f, "solo", "old-4", "igt@t@3", 1);
	build_add(f, "b2", "drm-tip", "igt@core@a\n", full_list);
	assert_int_equal(bci_schedule_queue(&f->s, "b2", "full", f->err, sizeof(f->err)), 3);
	assert_int_equal(bci_store_jobs_each(f->store, "b2", "full", job_testlists, &t, f->err,
					     sizeof(f->err)), 3);
	/* 100 -> a; 50 -> b; 1 -> b (51); 1 -> b (52): a has the long one alone. */
	assert_string_equal(t.a, "b2-full-1of2|igt@t@4\n|0/2");
	assert_string_equal(t.b, "b2-full-2of2|igt@t@1\nigt@t@2\nigt@t@3\n|1/2");
	/* New history would split otherwise; a re-run keeps the recorded split. */
	upload(f, "solo", "old-5", "igt@t@2", 1000);
	assert_int_equal(bci_schedule_queue(&f->s, "b2", "full", f->err, sizeof(f->err)), 3);
	assert_int_equal(bci_store_jobs_each(f->store, "b2", "full", job_testlists, &again, f->err,
					     sizeof(f->err)), 6);
	assert_string_equal(again.a, "b2-full-1of2-r2|igt@t@4\n|0/2");
	assert_string_equal(again.b, "b2-full-2of2-r2|igt@t@1\nigt@t@2\nigt@t@3\n|1/2");
}

/* ---- tiers ---- */

static int count_jobs(struct fixture *f, const char *build, const char *tier)
{
	struct testlists t = { 0 };
	int n = bci_store_jobs_each(f->store, build, tier, job_testlists, &t, f->err,
				    sizeof(f->err));

	assert_true(n >= 0);
	return n;
}

static void fast_tier_uploaded(struct fixture *f, const char *build)
{
	char run_id[64];

	snprintf(run_id, sizeof(run_id), "%s-fast", build);
	upload(f, "solo", run_id, NULL, 0);
	upload(f, "grp-a", run_id, NULL, 0);
	upload(f, "grp-b", run_id, NULL, 0);
}

static void test_fast_gates_full(void **state)
{
	struct fixture *f = *state;

	build_add(f, "clean", "drm-tip", "igt@core@a\n", full_list);
	build_add(f, "broken", "drm-tip", "igt@core@a\n", full_list);
	assert_int_equal(bci_schedule_queue(&f->s, "clean", "fast", f->err, sizeof(f->err)), 3);
	assert_int_equal(bci_schedule_queue(&f->s, "broken", "fast", f->err, sizeof(f->err)), 3);
	/* Fast tier not done: no judgement, no full tier. */
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->judge_calls, 0);
	assert_int_equal(count_jobs(f, "clean", "full"), 0);
	/* Only two of three uploaded: still waiting. */
	upload(f, "solo", "clean-fast", NULL, 0);
	upload(f, "grp-a", "clean-fast", NULL, 0);
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->judge_calls, 0);
	/* All uploaded, no possible new issue: the full tier is queued (solo + two shards). */
	upload(f, "grp-b", "clean-fast", NULL, 0);
	f->judged = 0;
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->judge_calls, 1);
	assert_int_equal(count_jobs(f, "clean", "full"), 3);
	/* A possible new issue: no full tier, and the decision is not taken again. */
	fast_tier_uploaded(f, "broken");
	f->judged = 1;
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->judge_calls, 2);
	assert_int_equal(count_jobs(f, "broken", "full"), 0);
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->judge_calls, 2);
	assert_int_equal(count_jobs(f, "clean", "full"), 3);
	fflush(f->s.log);
	expect_in(f->log_text, "broken: fast tier found a possible new issue: full tier not queued");
	{
		char decision[200];

		assert_int_equal(bci_store_gate_get(f->s.store, "broken", decision,
						    sizeof(decision), f->err, sizeof(f->err)), 1);
		assert_string_equal(decision, "skipped: the fast tier found a possible new issue");
		build_add(f, "later", "drm-tip", "igt@core@a\n", full_list);
		assert_int_equal(bci_store_gate_get(f->s.store, "later", decision,
						    sizeof(decision), f->err, sizeof(f->err)), 0);
	}
}

static void test_tree_rules(void **state)
{
	struct fixture *f = *state;

	inventory_set(f, "[tree always-tree]\nfull = always\n[tree never-tree]\nfull = never\n");
	build_add(f, "a1", "always-tree", "igt@core@a\n", full_list);
	build_add(f, "n1", "never-tree", "igt@core@a\n", full_list);
	build_add(f, "g1", "gated-tree", "igt@core@a\n", full_list);
	assert_int_equal(bci_schedule_queue(&f->s, "a1", "fast", f->err, sizeof(f->err)), 3);
	assert_int_equal(bci_schedule_queue(&f->s, "n1", "fast", f->err, sizeof(f->err)), 3);
	assert_int_equal(bci_schedule_queue(&f->s, "g1", "fast", f->err, sizeof(f->err)), 3);
	/* always: with the fast tier, judge or not; never: not even when clean. */
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(count_jobs(f, "a1", "full"), 3);
	fast_tier_uploaded(f, "n1");
	fast_tier_uploaded(f, "g1");
	/* No judge wired: a gated full tier waits. */
	f->s.judge = NULL;
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(count_jobs(f, "n1", "full"), 0);
	assert_int_equal(count_jobs(f, "g1", "full"), 0);
	f->s.judge = judge;
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(count_jobs(f, "g1", "full"), 3);
	assert_int_equal(count_jobs(f, "n1", "full"), 0);
	assert_int_equal(f->judge_calls, 1);
	/* The decisions as Patchwork's checks read them (bci_store_gate_get). */
	char decision[200];

	assert_int_equal(bci_store_gate_get(f->s.store, "n1", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(decision, "skipped: the tree never runs it");
	assert_int_equal(bci_store_gate_get(f->s.store, "a1", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(decision, "queued: the tree always runs it");
	/*
	 * With a judge and reruns on, never waits for the fast tier (and its
	 * reruns) before deciding: the reply and the checks wait for the decision.
	 */
	build_add(f, "n2", "never-tree", "igt@core@a\n", full_list);
	assert_int_equal(bci_schedule_queue(&f->s, "n2", "fast", f->err, sizeof(f->err)), 3);
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_gate_get(f->s.store, "n2", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 0);
	fast_tier_uploaded(f, "n2");
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_gate_get(f->s.store, "n2", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(decision, "skipped: the tree never runs it");
	assert_int_equal(count_jobs(f, "n2", "full"), 0);
}

/* The report's judgement wired as the gate: a regression against the base build holds the full tier. */
static void run_with_build(struct fixture *f, const char *machine, const char *run_id,
			   const char *build, const char *test, const char *result)
{
	struct bci_store_run run = {
		.machine = machine, .run_id = run_id, .build = build, .state = "done",
		.archive_root = "", .archive_path = "archives/x.tar.zst",
		.digest = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	struct bci_store_result r = { .job = 0, .name = test, .result = result, .duration = 1 };
	int64_t key;

	if (bci_store_run_add(f->store, &run, &key, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	assert_int_equal(bci_store_result_add(f->store, key, &r, f->err, sizeof(f->err)), 0);
}

static void test_report_judge(void **state)
{
	struct fixture *f = *state;
	struct bci_store_build base = { .name = "base", .tree = "drm-tip", .commit = "a",
					.tier = "fast", .registered = T0 - 100 };
	struct bci_store_build good = { .name = "good", .tree = "drm-tip", .commit = "b",
					.tier = "fast", .base = "base", .registered = T0 };
	struct bci_store_build bad = good;

	bad.name = "bad";
	bad.commit = "c";
	assert_int_equal(bci_store_build_put(f->store, &base, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_put(f->store, &good, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_put(f->store, &bad, f->err, sizeof(f->err)), 0);
	run_with_build(f, "solo", "base-fast", "base", "igt@t@1", "pass");
	run_with_build(f, "solo", "good-fast", "good", "igt@t@1", "pass");
	run_with_build(f, "solo", "bad-fast", "bad", "igt@t@1", "fail");
	assert_int_equal(bci_schedule_judge_report(f->store, "good", f->dir, NULL, f->err,
						   sizeof(f->err)), 0);
	assert_int_equal(bci_schedule_judge_report(f->store, "bad", f->dir, NULL, f->err,
						   sizeof(f->err)), 1);
}

/*
 * The gate counts a test's baseline on the machine's whole shard group
 * (issue 37): a flake that failed on grp-b in the base build holds no full
 * tier when it fails on grp-a, whose own base run passed it; out of the
 * group, grp-a's own baseline holds it.
 */
static void test_report_judge_group(void **state)
{
	struct fixture *f = *state;
	struct bci_store_build base = { .name = "base", .tree = "drm-tip", .commit = "a",
					.tier = "fast", .registered = T0 - 100 };
	struct bci_store_build series = { .name = "series", .tree = "drm-tip", .commit = "b",
					  .tier = "fast", .base = "base", .registered = T0 };

	assert_int_equal(bci_store_build_put(f->store, &base, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_put(f->store, &series, f->err, sizeof(f->err)), 0);
	/* The inventory's shard group (g) reaches the store's machines. */
	assert_int_equal(bci_schedule_tags_sync(&f->s, NULL, f->err, sizeof(f->err)), 0);
	run_with_build(f, "grp-a", "base-fast", "base", "igt@t@flake", "pass");
	run_with_build(f, "grp-b", "base-fast", "base", "igt@t@flake", "fail");
	run_with_build(f, "grp-a", "series-fast", "series", "igt@t@flake", "fail");
	assert_int_equal(bci_schedule_judge_report(f->store, "series", f->dir, NULL, f->err,
						   sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_group_set(f->store, "grp-a", NULL, f->err,
						     sizeof(f->err)), 0);
	assert_int_equal(bci_schedule_judge_report(f->store, "series", f->dir, NULL, f->err,
						   sizeof(f->err)), 1);
}

/* A fast job of @build on @machine queued at Unix time @queued (run id BUILD-fast). */
static void fast_job_at(struct fixture *f, const char *build, const char *machine, double queued)
{
	char run_id[64];
	struct bci_store_job job = { .machine = machine, .build = build, .tier = "fast",
				     .shards = 1, .testlist = "igt@t@real\nigt@t@flake\n",
				     .run_id = run_id, .queued = queued };

	snprintf(run_id, sizeof(run_id), "%s-fast", build);
	if (bci_store_job_add(f->store, &job, NULL, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
}

/* A run of @build on @machine: igt@t@real then igt@t@flake with these results. */
static void run_two(struct fixture *f, const char *machine, const char *run_id, const char *build,
		    const char *real, const char *flake)
{
	struct bci_store_run run = {
		.machine = machine, .run_id = run_id, .build = build, .state = "done",
		.archive_root = "", .archive_path = "archives/x.tar.zst",
		.digest = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	struct bci_store_result r[2] = {
		{ .job = 0, .name = "igt@t@real", .result = real, .duration = 1 },
		{ .job = 1, .name = "igt@t@flake", .result = flake, .duration = 1 },
	};
	int64_t key;

	if (bci_store_run_add(f->store, &run, &key, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	assert_int_equal(bci_store_results_add(f->store, key, r, 2, f->err, sizeof(f->err)), 0);
}

struct confirm_jobs {
	int count, open;
	char machines[512];
	char first[64];		/* the kind of the job grp-a is handed next */
};

static int confirm_job_count(const struct bci_store_job *job, void *ctx)
{
	struct confirm_jobs *c = ctx;

	if (!job->kind || strcmp(job->kind, "confirm"))
		return 0;
	c->count++;
	c->open += !strcmp(job->state, "queued") || !strcmp(job->state, "booted");
	if (!strcmp(job->run_id + strlen(job->run_id) - 2, "-1"))
		snprintf(c->machines + strlen(c->machines), sizeof(c->machines) - strlen(c->machines),
			 "%s:%s;", job->machine, job->testlist);
	return 0;
}

static int job_kind(const struct bci_store_job *job, void *ctx)
{
	snprintf(((struct confirm_jobs *)ctx)->first, 64, "%s %s",
		 job->kind ? job->kind : job->tier, job->run_id);
	return 0;
}

static const struct bci_report_change *change_find(const struct bci_report *r, const char *test,
						   const char *machine)
{
	for (size_t i = 0; i < r->n_changes; i++)
		if (!strcmp(r->changes[i].test, test) && !strcmp(r->changes[i].machine, machine))
			return &r->changes[i];
	fail_msg("no change of %s on %s", test, machine);
	return NULL;
}

/*
 * Issue 37: a fast tier's possible new issues are rerun before the gate
 * decides: each group's (or lone machine's) issues together, the reruns
 * times on each machine they appeared on (a lone one alone), handed out
 * before other work; the gate waits within its budget, abandons what is
 * late, then judges with the reruns: a test that failed every rerun stays a
 * possible new issue (confirmed), one that passed a rerun is flaky with the
 * reruns' rate; the reruns are not the build's own results.
 */
static void test_confirm_reruns(void **state)
{
	struct fixture *f = *state;
	double now = (double)time(NULL);
	struct bci_store_build base = { .name = "base", .tree = "drm-tip", .commit = "a",
					.tier = "fast", .registered = now - 2000 };
	struct bci_store_build series = { .name = "series", .tree = "drm-tip", .commit = "b",
					  .tier = "fast", .base = "base", .registered = now - 1000,
					  .message_id = "<s@x>" };
	struct bci_store_build other = { .name = "other", .tree = "drm-tip", .commit = "c",
					 .tier = "fast", .base = "base", .registered = now - 900 };
	const char *const machines[] = { "solo", "grp-a", "grp-b" };
	struct bci_report_options options = { .data_dir = f->dir, .window = 5 };
	struct confirm_jobs c = { 0 };
	struct bci_report *r = NULL;
	char decision[200], *text = NULL, run_id[64];
	size_t len = 0;
	FILE *out;

	assert_int_equal(bci_store_build_put(f->store, &base, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_put(f->store, &series, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_put(f->store, &other, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_schedule_tags_sync(&f->s, NULL, f->err, sizeof(f->err)), 0);
	f->s.judge = bci_schedule_judge_report;
	f->s.judge_ctx = f->dir;
	for (int i = 0; i < 3; i++) {
		run_two(f, machines[i], "base-fast", "base", "pass", "pass");
		fast_job_at(f, "series", machines[i], now - 1000);
	}
	/* Another build's job, queued first, on grp-a: its reruns still go first. */
	fast_job_at(f, "other", "grp-a", now - 950);
	run_two(f, "solo", "series-fast", "series", "fail", "pass");
	run_two(f, "grp-a", "series-fast", "series", "fail", "fail");
	run_two(f, "grp-b", "series-fast", "series", "fail", "pass");

	/* Four possible new issues: solo's alone, group g's two tests on both its machines. */
	assert_int_equal(bci_schedule_tick(&f->s, now, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_jobs_each(f->store, "series", "fast", confirm_job_count, &c,
					     f->err, sizeof(f->err)), 12);
	assert_int_equal(c.count, 9);
	assert_string_equal(c.machines, "grp-a:igt@t@flake\nigt@t@real\n;"
					"grp-b:igt@t@flake\nigt@t@real\n;solo:igt@t@real\n;");
	assert_int_equal(bci_store_gate_get(f->store, "series", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 0);
	assert_int_equal(bci_store_job_next(f->store, "grp-a", job_kind, &c, f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(c.first, "confirm series-confirm-1");
	/* Reruns: solo's fail, grp-a passes igt@t@flake once, grp-b's third is not back. */
	for (int k = 1; k <= 3; k++) {
		snprintf(run_id, sizeof(run_id), "series-confirm-%d", k);
		run_two(f, "solo", run_id, "series", "fail", "notrun");
		run_two(f, "grp-a", run_id, "series", "fail", k == 2 ? "pass" : "fail");
		if (k < 3)
			run_two(f, "grp-b", run_id, "series", "fail", "fail");
	}
	/* Within the budget (rerun-budget's share of the fast tier's time): grp-b's third awaited. */
	assert_int_equal(bci_schedule_tick(&f->s, now + 50, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_gate_get(f->store, "series", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 0);
	/* Past it: abandoned, judged without it. */
	assert_int_equal(bci_schedule_tick(&f->s, now + 200, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_gate_get(f->store, "series", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(decision, "skipped: the fast tier found a possible new issue, its"
				      " reruns did not clear it");
	memset(&c, 0, sizeof(c));
	assert_int_equal(bci_store_jobs_each(f->store, "series", "fast", confirm_job_count, &c,
					     f->err, sizeof(f->err)), 12);
	assert_int_equal(c.open, 0);

	/* A rerun of the base build is in no baseline: solo's base counts its one fast run. */
	struct bci_store_job base_rerun = { .machine = "solo", .build = "base", .tier = "fast",
					    .kind = "confirm", .shards = 1,
					    .testlist = "igt@t@real\n", .run_id = "base-confirm-1" };

	assert_int_equal(bci_store_job_add(f->store, &base_rerun, NULL, f->err, sizeof(f->err)), 0);
	run_two(f, "solo", "base-confirm-1", "base", "fail", "notrun");
	/* The report: the reruns judged, not counted as the build's results. */
	if (bci_report_build(f->store, "series", &options, &r, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	assert_int_equal(change_find(r, "igt@t@real", "solo")->baseline_runs, 1);
	assert_int_equal(change_find(r, "igt@t@real", "solo")->baseline_failed, 0);
	assert_int_equal(r->results, 6);
	assert_int_equal(r->reruns, 9);
	assert_int_equal(r->reruns_back, 8);
	assert_int_equal(r->counts[BCI_VERDICT_NEW], 3);
	assert_int_equal(r->counts[BCI_VERDICT_FLAKY], 1);
	assert_int_equal(change_find(r, "igt@t@real", "solo")->rerun_runs, 3);
	assert_int_equal(change_find(r, "igt@t@real", "solo")->rerun_failed, 3);
	assert_int_equal(change_find(r, "igt@t@real", "grp-a")->rerun_runs, 5);
	assert_int_equal(change_find(r, "igt@t@real", "grp-a")->rerun_failed, 5);
	assert_int_equal(change_find(r, "igt@t@flake", "grp-a")->verdict, BCI_VERDICT_FLAKY);
	assert_int_equal(change_find(r, "igt@t@flake", "grp-a")->rerun_runs, 5);
	assert_int_equal(change_find(r, "igt@t@flake", "grp-a")->rerun_failed, 4);
	out = open_memstream(&text, &len);
	assert_int_equal(bci_mbox_write(out, r, &(struct bci_mbox_options){ .date = 0 }, f->err,
					sizeof(f->err)), 0);
	fclose(out);
	expect_in(text, "Reruns: each possible new issue run again on its machine and another of"
			" its\n  shard group: 9 rerun(s), 8 back\n");
	expect_in(text, "    - grp-a, grp-b: [PASS] -> [FAIL] (confirmed: failed 5 of 5 reruns)\n");
	expect_in(text, "    - solo: [PASS] -> [FAIL] (confirmed: failed 3 of 3 reruns)\n");
	expect_in(text, "    - grp-a: [PASS] -> [FAIL] (flaky: passed 1 of 5 reruns)\n");
	free(text);
	bci_report_free(r);
}

/* Issue 37: possible new issues that all pass again: the full tier is queued. */
static void test_confirm_clears(void **state)
{
	struct fixture *f = *state;
	double now = (double)time(NULL);
	struct bci_store_build base = { .name = "base", .tree = "drm-tip", .commit = "a",
					.tier = "fast", .registered = now - 2000 };
	struct bci_store_build series = { .name = "series", .tree = "drm-tip", .commit = "b",
					  .tier = "fast", .base = "base", .registered = now - 1000 };
	char decision[200], run_id[64];

	assert_int_equal(bci_store_build_put(f->store, &base, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_put(f->store, &series, f->err, sizeof(f->err)), 0);
	build_file(f, "series", "full.testlist", "igt@t@real\n");
	f->s.judge = bci_schedule_judge_report;
	f->s.judge_ctx = f->dir;
	inventory_set(f, "");
	run_two(f, "solo", "base-fast", "base", "pass", "pass");
	fast_job_at(f, "series", "solo", now - 1000);
	run_two(f, "solo", "series-fast", "series", "pass", "fail");
	assert_int_equal(bci_schedule_tick(&f->s, now, f->err, sizeof(f->err)), 0);
	assert_int_equal(count_jobs(f, "series", "fast"), 4);
	for (int k = 1; k <= 3; k++) {
		snprintf(run_id, sizeof(run_id), "series-confirm-%d", k);
		run_two(f, "solo", run_id, "series", "notrun", "pass");
	}
	assert_int_equal(bci_schedule_tick(&f->s, now + 1, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_gate_get(f->store, "series", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(decision, "queued: the reruns of the fast tier's possible new issues"
				      " passed");
	assert_int_equal(count_jobs(f, "series", "full"), 3);
}

/*
 * Issue 37: a tree whose full tier always runs has its possible new issues
 * rerun too. Its full tier is queued with the fast tier and never held back;
 * the reruns go before it; its decision (what the reply and bootci-fast
 * wait for) is recorded only once the reruns are back or past their budget.
 */
static void test_confirm_always_tree(void **state)
{
	struct fixture *f = *state;
	double now = (double)time(NULL);
	struct bci_store_build base = { .name = "base", .tree = "always-tree", .commit = "a",
					.tier = "fast", .registered = now - 2000 };
	struct bci_store_build series = { .name = "series", .tree = "always-tree", .commit = "b",
					  .tier = "fast", .base = "base", .registered = now - 1000,
					  .message_id = "<s@x>" };
	struct confirm_jobs c = { 0 };
	char decision[200], run_id[64];

	inventory_set(f, "[tree always-tree]\nfull = always\n");
	assert_int_equal(bci_store_build_put(f->store, &base, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_build_put(f->store, &series, f->err, sizeof(f->err)), 0);
	build_file(f, "series", "full.testlist", "igt@t@real\n");
	f->s.judge = bci_schedule_judge_report;
	f->s.judge_ctx = f->dir;
	run_two(f, "solo", "base-fast", "base", "pass", "pass");
	fast_job_at(f, "series", "solo", now - 1000);
	/* The fast tier running: the full tier queued at once (solo, group g's two shards), undecided. */
	assert_int_equal(bci_schedule_tick(&f->s, now, f->err, sizeof(f->err)), 0);
	assert_int_equal(count_jobs(f, "series", "full"), 3);
	assert_int_equal(bci_store_gate_get(f->store, "series", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 0);
	/* A possible new issue: rerun 3 times on solo (in no group), ahead of its full job. */
	run_two(f, "solo", "series-fast", "series", "fail", "pass");
	assert_int_equal(bci_schedule_tick(&f->s, now, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_jobs_each(f->store, "series", "fast", confirm_job_count, &c,
					     f->err, sizeof(f->err)), 4);
	assert_int_equal(c.count, 3);
	assert_int_equal(count_jobs(f, "series", "full"), 3);
	assert_int_equal(bci_store_job_next(f->store, "solo", job_kind, &c, f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(c.first, "confirm series-confirm-1");
	assert_int_equal(bci_store_gate_get(f->store, "series", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 0);
	/* Its full tier ended before the reruns: the reply still waits for them. */
	{
		static const char *const ran[3][2] = { { "solo", "series-full" },
						       { "grp-a", "series-full-1of2" },
						       { "grp-b", "series-full-2of2" } };

		for (int i = 0; i < 3; i++) {
			upload(f, ran[i][0], ran[i][1], NULL, 0);
			assert_int_equal(bci_schedule_run_ingested(f->store, ran[i][0], ran[i][1],
								   f->err, sizeof(f->err)), 1);
		}
	}
	for (int k = 1; k <= 2; k++) {
		snprintf(run_id, sizeof(run_id), "series-confirm-%d", k);
		run_two(f, "solo", run_id, "series", "fail", "notrun");
	}
	assert_int_equal(bci_schedule_tick(&f->s, now + 50, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_gate_get(f->store, "series", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 0);
	assert_int_equal(bci_store_mail_builds_final(f->store, NULL, NULL, f->err,
						     sizeof(f->err)), 0);
	/* Past the budget: the third abandoned, decided; the full tier not queued again. */
	assert_int_equal(bci_schedule_tick(&f->s, now + 200, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_gate_get(f->store, "series", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(decision, "queued: the tree always runs it");
	assert_int_equal(count_jobs(f, "series", "full"), 3);
	memset(&c, 0, sizeof(c));
	assert_int_equal(bci_store_jobs_each(f->store, "series", "fast", confirm_job_count, &c,
					     f->err, sizeof(f->err)), 4);
	assert_int_equal(c.open, 0);
	fflush(f->s.log);
	expect_in(f->log_text, "series: full tier run (tree always-tree: full = always), decided"
			       " after the reruns");
	/* Every job of the build ended, its decision made: its reply is due. */
	assert_int_equal(bci_store_mail_builds_final(f->store, NULL, NULL, f->err,
						     sizeof(f->err)), 1);
	/* No run of a fast tier came back (its job abandoned): nothing to rerun, decided all the same. */
	struct bci_store_build lost = series;
	struct bci_store_job lost_job = { .machine = "solo", .build = "lost", .tier = "fast",
					  .shards = 1, .testlist = "igt@t@real\n",
					  .run_id = "lost-fast", .queued = now - 500 };
	int64_t key;

	lost.name = "lost";
	lost.message_id = "<l@x>";
	assert_int_equal(bci_store_build_put(f->store, &lost, f->err, sizeof(f->err)), 0);
	build_file(f, "lost", "full.testlist", "igt@t@real\n");
	assert_int_equal(bci_store_job_add(f->store, &lost_job, &key, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_job_end(f->store, key, "abandoned", NULL, 0, f->err,
					   sizeof(f->err)), 0);
	assert_int_equal(bci_schedule_tick(&f->s, now + 300, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_gate_get(f->store, "lost", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(decision, "queued: the tree always runs it");
	assert_int_equal(count_jobs(f, "lost", "full"), 3);
}

/* A gated tree whose fast tier brought no run back: decided, no full tier, its reply not held. */
static void test_gate_no_run_back(void **state)
{
	struct fixture *f = *state;
	struct bci_store_build lost = { .name = "lost", .tree = "gated-tree", .commit = "c1",
					.tier = "fast", .message_id = "<l@x>" };
	struct bci_store_job job = { .machine = "solo", .build = "lost", .tier = "fast",
				     .shards = 1, .testlist = "igt@t@real\n", .run_id = "lost-fast" };
	char decision[300];
	double now = 1000000;
	int64_t key;

	job.queued = now - 500;
	f->s.judge = bci_schedule_judge_report;
	f->s.judge_ctx = f->dir;
	assert_int_equal(bci_store_build_put(f->store, &lost, f->err, sizeof(f->err)), 0);
	build_file(f, "lost", "full.testlist", "igt@t@real\n");
	assert_int_equal(bci_store_job_add(f->store, &job, &key, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_job_end(f->store, key, "abandoned", NULL, 0, f->err,
					   sizeof(f->err)), 0);
	assert_int_equal(bci_schedule_tick(&f->s, now, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_gate_get(f->store, "lost", decision, sizeof(decision), f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(decision, "skipped: no run of the fast tier came back");
	assert_int_equal(count_jobs(f, "lost", "full"), 0);
	fflush(f->s.log);
	expect_in(f->log_text, "lost: no run of its fast tier came back");
	assert_int_equal(bci_store_mail_builds_final(f->store, NULL, NULL, f->err,
						     sizeof(f->err)), 1);
}

static const char *machine_state(struct fixture *f, const char *machine);

/* A job added to the store as the scheduler queues it; its key. */
static int64_t job_put(struct fixture *f, const char *machine, const char *build, const char *kind,
		       const char *run_id, const char *testlist)
{
	struct bci_store_job job = { .machine = machine, .build = build, .tier = "fast",
				     .kind = kind, .shards = 1, .testlist = testlist,
				     .run_id = run_id };
	int64_t key = -1;

	if (bci_store_job_add(f->store, &job, &key, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	return key;
}

/* Whether @machine has a job of run id @run_id. */
static bool job_on(struct fixture *f, const char *machine, const char *run_id)
{
	int ret = bci_store_machine_job_get(f->store, machine, run_id, NULL, NULL, f->err,
					    sizeof(f->err));

	assert_true(ret >= 0);
	return ret > 0;
}

struct job_copy {
	char testlist[64], note[300], state[16];
	int boots;
};

static int job_copy_row(const struct bci_store_job *job, void *ctx)
{
	struct job_copy *j = ctx;

	snprintf(j->testlist, sizeof(j->testlist), "%s", job->testlist);
	snprintf(j->note, sizeof(j->note), "%s", job->note ? job->note : "");
	snprintf(j->state, sizeof(j->state), "%s", job->state);
	j->boots = job->boots;
	return 0;
}

static struct job_copy job_read(struct fixture *f, const char *machine, const char *run_id)
{
	struct job_copy j = { .boots = -1 };

	if (bci_store_machine_job_get(f->store, machine, run_id, job_copy_row, &j, f->err,
				      sizeof(f->err)) != 1)
		fail_msg("%s has no job %s", machine, run_id);
	return j;
}

static void builds_put(struct fixture *f, const char *const *names)
{
	for (; *names; names++) {
		struct bci_store_build build = { .name = *names, .tree = "drm-tip",
						 .commit = "c0ffee", .tier = "fast" };

		assert_int_equal(bci_store_build_put(f->store, &build, f->err, sizeof(f->err)), 0);
	}
}

/*
 * Issue 37: a machine taken out (here on its own note) keeps nothing others
 * wait on: its bisection steps and reruns not ended, handed out or queued,
 * go to the machine of its shard group in the schedule with the fewest jobs
 * queued (grp-c, not grp-b before it in the inventory), their testlist kept,
 * queued again; a run id naming the machine names the new one, one the new
 * machine has already gets -r2. A job whose run came in is done, a tier's
 * own job stays. The machine back gets its tier job, not the moved ones.
 */
static void test_take_out_moves_waited_jobs(void **state)
{
	struct fixture *f = *state;
	static const char *const builds[] = { "cand", "series", "other", NULL };
	double now = (double)time(NULL);
	struct job_copy j;
	char *script, run_id[32];

	inventory_set(f, "[machine grp-c]\nmac = 52:54:00:00:00:04\nshard-group = g\n");
	builds_put(f, builds);
	job_put(f, "grp-a", "cand", "bisect", "cand-bisect-1", "igt@t@bad\n");
	job_put(f, "grp-a", "series", NULL, "series-fast", "igt@t@bad\nigt@t@good\n");
	job_put(f, "grp-a", "cand", "bisect", "cand-bisect-3", "igt@t@bad\n");
	job_put(f, "grp-a", "series", "confirm", "series-confirm-1", "igt@t@bad\n");
	job_put(f, "grp-a", "series", "confirm", "series-confirm-2", "igt@t@bad\n");
	job_put(f, "grp-a", "cand", "bisect", "cand-grp-a", "igt@t@bad\n");
	/* grp-b has more queued than grp-c; grp-c runs series-confirm-1 already. */
	for (int k = 1; k <= 6; k++) {
		snprintf(run_id, sizeof(run_id), "other-%d", k);
		job_put(f, "grp-b", "other", NULL, run_id, "igt@t@x\n");
	}
	job_put(f, "grp-c", "series", "confirm", "series-confirm-1", "igt@t@bad\n");
	/* grp-a boots its first step; its second rerun came back. */
	script = boot(f, "52:54:00:00:00:02", now);
	expect_in(script, "# bootci: grp-a runs cand-bisect-1 ");
	free(script);
	upload(f, "grp-a", "series-confirm-2", NULL, 0);

	assert_int_equal(bci_schedule_fault(&f->s, "grp-a", "the disk is gone", now, f->err,
					    sizeof(f->err)), 1);
	assert_false(job_on(f, "grp-a", "cand-bisect-1"));
	assert_false(job_on(f, "grp-a", "cand-bisect-3"));
	assert_false(job_on(f, "grp-a", "series-confirm-1"));
	assert_false(job_on(f, "grp-a", "cand-grp-a"));
	j = job_read(f, "grp-c", "cand-bisect-1");
	assert_string_equal(j.state, "queued");
	assert_int_equal(j.boots, 0);
	assert_string_equal(j.testlist, "igt@t@bad\n");
	expect_in(j.note, "moved from grp-a (taken out of the schedule)");
	assert_string_equal(job_read(f, "grp-c", "cand-bisect-3").state, "queued");
	assert_string_equal(job_read(f, "grp-c", "series-confirm-1-r2").state, "queued");
	assert_string_equal(job_read(f, "grp-c", "cand-grp-c").state, "queued");
	assert_string_equal(job_read(f, "grp-a", "series-confirm-2").state, "done");
	assert_string_equal(job_read(f, "grp-a", "series-fast").state, "queued");
	assert_false(job_on(f, "grp-b", "cand-bisect-1"));
	fflush(f->s.log);
	expect_in(f->log_text, "grp-a: taken out: bisect job cand-bisect-1 of cand moved to grp-c"
			       " (group g) as cand-bisect-1\n");
	expect_in(f->log_text, "grp-a: taken out: confirm job series-confirm-1 of series moved to"
			       " grp-c (group g) as series-confirm-1-r2\n");
	/* grp-c is handed the moved step first (the oldest of the jobs others wait on). */
	script = boot(f, "52:54:00:00:00:04", now + 1);
	expect_in(script, "# bootci: grp-c runs cand-bisect-1 ");
	free(script);
	/* grp-a back: its tier's job, not what was moved. */
	assert_int_equal(bci_schedule_return(&f->s, "grp-a", now + 2, f->err, sizeof(f->err)), 1);
	script = boot(f, "52:54:00:00:00:02", now + 3);
	expect_in(script, "# bootci: grp-a runs series-fast ");
	free(script);
}

/*
 * Issue 37: with no machine of its group left in the schedule (or no group),
 * a job others wait on is abandoned by the take-out, its note saying why, so
 * the step or the gate goes on: recovery's take-out (power cycles used up)
 * goes the same way as the machine's own note.
 */
static void test_take_out_abandons_without_peer(void **state)
{
	struct fixture *f = *state;
	static const char *const builds[] = { "cand", NULL };
	struct job_copy j;
	char *script;

	builds_put(f, builds);
	job_put(f, "solo", "cand", "bisect", "cand-bisect-1", "igt@t@bad\n");
	job_put(f, "grp-a", "cand", "bisect", "cand-bisect-2", "igt@t@bad\n");
	job_put(f, "grp-b", "cand", "bisect", "cand-bisect-3", "igt@t@bad\n");
	/* grp-b out on its note: its step goes to grp-a, the one left of group g. */
	assert_int_equal(bci_schedule_fault(&f->s, "grp-b", "no disk", T0, f->err,
					    sizeof(f->err)), 1);
	assert_string_equal(job_read(f, "grp-a", "cand-bisect-3").state, "queued");
	/* Silent past their deadline (1 h) and 2 power cycles: solo and grp-a out. */
	for (int k = 0; k <= 3; k++)
		assert_int_equal(bci_schedule_tick(&f->s, T0 + k * 4000, f->err, sizeof(f->err)), 0);
	assert_string_equal(machine_state(f, "grp-a"),
			    "out 2 silent for 4000 s after 2 power cycle(s): taken out of the schedule");
	j = job_read(f, "solo", "cand-bisect-1");
	assert_string_equal(j.state, "abandoned");
	assert_string_equal(j.note, "machine solo taken out; it is in no shard group to move the"
				    " job to");
	for (int k = 2; k <= 3; k++) {
		char run_id[32];

		snprintf(run_id, sizeof(run_id), "cand-bisect-%d", k);
		j = job_read(f, "grp-a", run_id);
		assert_string_equal(j.state, "abandoned");
		assert_string_equal(j.note, "machine grp-a taken out; no other machine of group g"
					    " in the schedule");
	}
	fflush(f->s.log);
	expect_in(f->log_text, "grp-a: taken out: bisect job cand-bisect-2 of cand abandoned: machine"
			       " grp-a taken out; no other machine of group g in the schedule\n");
	/* grp-b back: what was moved away from it is not handed to it again. */
	assert_int_equal(bci_schedule_return(&f->s, "grp-b", T0 + 20000, f->err, sizeof(f->err)), 1);
	script = boot(f, "52:54:00:00:00:03", T0 + 20001);
	expect_in(script, "# bootci: nothing to run");
	free(script);
}

static int file_print(const struct bci_store_build_file *file, void *ctx)
{
	char *out = ctx;

	snprintf(out + strlen(out), 256 - strlen(out), "%s:%s:%.4s:%llu;", file->build, file->path,
		 file->sha256, (unsigned long long)file->size);
	return 0;
}

static void test_known_good_versions(void **state)
{
	struct fixture *f = *state;
	struct bci_store_build_file disk = { .path = "disk.img", .sha256 = "abcd0000", .size = 7 };
	struct bci_store_build_file layout = { .path = "layout", .sha256 = "ef000000", .size = 1 };
	char text[256] = "";

	assert_int_equal(bci_store_known_good_file_add(f->store, "v1", &disk, f->err,
						       sizeof(f->err)), 0);
	assert_int_equal(bci_store_known_good_file_add(f->store, "v1", &layout, f->err,
						       sizeof(f->err)), 0);
	disk.size = 9;
	assert_int_equal(bci_store_known_good_file_add(f->store, "v2", &disk, f->err,
						       sizeof(f->err)), 0);
	assert_int_equal(bci_store_known_good_files_each(f->store, "v1", file_print, text, f->err,
							 sizeof(f->err)), 2);
	assert_string_equal(text, "v1:disk.img:abcd:7;v1:layout:ef00:1;");
	text[0] = '\0';
	assert_int_equal(bci_store_known_good_files_each(f->store, "v2", file_print, text, f->err,
							 sizeof(f->err)), 1);
	assert_string_equal(text, "v2:disk.img:abcd:9;");
	assert_int_equal(bci_store_known_good_files_each(f->store, "v3", file_print, text, f->err,
							 sizeof(f->err)), 0);
}

/* ---- re-deploy ---- */

/* Publishes @text as the known-good image @version's disk.img, kept as publish keeps it. */
static void known_good_disk(struct fixture *f, const char *version, const char *text)
{
	char tmp[PATH_MAX + 32], object[PATH_MAX + 128], hex[BCI_SHA256_HEX_LEN + 1];
	uint64_t size;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/builds/objects", f->dir);
	assert_int_equal(bci_mkdir_p(tmp, 0755), 0);
	snprintf(tmp, sizeof(tmp), "%s/tmp-file", f->dir);
	assert_int_equal(bci_write_file_atomic(tmp, text, strlen(text), 0644), 0);
	fd = open(tmp, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(bci_sha256_fd(fd, hex, &size), 0);
	close(fd);
	assert_int_equal(bci_schedule_object_path(f->dir, hex, object, sizeof(object)), 0);
	assert_int_equal(rename(tmp, object), 0);
	struct bci_store_build_file file = { .path = "disk.img", .sha256 = hex, .size = size };
	if (bci_store_known_good_file_add(f->store, version, &file, f->err, sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
}

static int deploy_state(struct fixture *f, const char *machine, char *note, size_t size)
{
	int ret = bci_schedule_deploy_state(&f->s, machine, note, size, f->err, sizeof(f->err));

	if (ret < 0)
		fail_msg("%s", f->err);
	return ret;
}

/* What the route sends: the head, the object's bytes read from its fd, the tail. */
static char *deploy_initrd_join(const struct bci_deploy_initrd *d, size_t *len)
{
	char *all = malloc(d->head_len + d->image_size + d->tail_len);

	assert_non_null(all);
	memcpy(all, d->head, d->head_len);
	assert_int_equal(pread(d->fd, all + d->head_len, d->image_size, 0), (ssize_t)d->image_size);
	memcpy(all + d->head_len + d->image_size, d->tail, d->tail_len);
	*len = d->head_len + d->image_size + d->tail_len;
	return all;
}

/* The deploy id the deploying mark of @machine names (deploy.h), into @id. */
static void deploy_id_of(struct fixture *f, const char *machine, char *id, size_t size)
{
	char path[PATH_MAX + 64], *text = NULL, *line;

	snprintf(path, sizeof(path), "%s/schedule/deploying/%s", f->dir, machine);
	assert_int_equal(bci_read_file(path, &text, NULL, 4096), 0);
	line = strstr(text, "\ndeploy_id ");
	assert_non_null(line);
	line += 11;
	snprintf(id, size, "%.*s", (int)strcspn(line, "\n"), line);
	free(text);
	assert_true(strncmp(id, "deploy-", 7) == 0);
}

static size_t count_in(const char *data, size_t len, const char *part)
{
	size_t n = 0, part_len = strlen(part);
	const char *p = data, *end = data + len;

	while ((p = memmem(p, (size_t)(end - p), part, part_len))) {
		n++;
		p += part_len;
	}
	return n;
}

static void test_redeploy_by_command(void **state)
{
	struct fixture *f = *state;
	static const char disk[] = "GPT, ESP and results partition, in a few bytes";
	char note[512], *script, *initrd, id[160], again[160], plan_id[200];
	struct bci_deploy_initrd deploy;
	size_t len;

	assert_int_equal(bci_schedule_redeploy(&f->s, "nope", "x", f->err, sizeof(f->err)), -ENOENT);
	assert_int_equal(deploy_state(f, "solo", note, sizeof(note)), BCI_DEPLOY_NONE);
	assert_int_equal(bci_schedule_redeploy(&f->s, "solo", "asked for\nby a test", f->err,
					       sizeof(f->err)), 1);
	assert_int_equal(bci_schedule_redeploy(&f->s, "solo", "again", f->err, sizeof(f->err)), 0);
	assert_int_equal(deploy_state(f, "solo", note, sizeof(note)), BCI_DEPLOY_DAMAGED);
	assert_string_equal(note, "asked for by a test");

	/* No known-good image and no build yet: exit, and the mark stays. */
	script = boot(f, "52:54:00:00:00:01", T0);
	expect_in(script, "solo needs a re-deploy it cannot get yet\nexit\n");
	free(script);
	assert_int_equal(deploy_state(f, "solo", note, sizeof(note)), BCI_DEPLOY_DAMAGED);

	build_add(f, "b1", "drm-tip", "igt@core@a\n", "igt@x@1\n");
	assert_int_equal(bci_schedule_queue(&f->s, "b1", "fast", f->err, sizeof(f->err)), 3);
	known_good_disk(f, "kg-1", "an older image");
	known_good_disk(f, "kg-2", disk);
	/* The deploy job comes before the queued job, with the newest known-good image. */
	script = boot(f, "52:54:00:00:00:01", T0 + 1);
	assert_string_equal(script,
		"#!ipxe\n"
		"# bootci: solo is re-deployed with known-good image kg-2\n"
		"kernel http://127.0.0.1:8080/api/v1/builds/b1/files/vmlinuz initrd=deploy.img"
		" initrd=initrd.img console=ttyS0 quiet bootci.mode=deploy"
		" bootci.deploy=/etc/bootci/deploy.plan\n"
		"initrd --name deploy.img http://127.0.0.1:8080/api/v1/machines/solo/deploy/kg-2/initrd\n"
		"initrd --name initrd.img http://127.0.0.1:8080/api/v1/builds/b1/files/initrd.img\n"
		"boot\n");
	free(script);
	assert_int_equal(deploy_state(f, "solo", note, sizeof(note)), BCI_DEPLOY_DEPLOYING);
	assert_string_equal(note, "kg-2 (was: asked for by a test)");
	deploy_id_of(f, "solo", id, sizeof(id));

	/* Its initrd: the plan naming the image and its digest, then the image itself. */
	assert_int_equal(bci_schedule_deploy_initrd(&f->s, "solo", "kg-2", &deploy, f->err,
						    sizeof(f->err)), 0);
	initrd = deploy_initrd_join(&deploy, &len);
	assert_int_equal(deploy.image_size, strlen(disk));
	bci_deploy_initrd_clear(&deploy);
	assert_int_equal(deploy.fd, -1);
	assert_int_equal(len % 4, 0);
	assert_memory_equal(initrd, "070701", 6);
	assert_non_null(memmem(initrd, len, "etc/bootci/deploy.plan", 22));
	static const char plan[] = "machine=solo\nknown_good=kg-2\n"
				   "image=/etc/bootci/known-good/disk.img\nimage_size=46\n"
				   "image_sha256=";
	assert_non_null(memmem(initrd, len, plan, strlen(plan)));
	/* The deploy's id: the salvage area's owner, and the run of its record. */
	snprintf(plan_id, sizeof(plan_id), "\ndeploy_id=%s\n", id);
	assert_non_null(memmem(initrd, len, plan_id, strlen(plan_id)));
	assert_non_null(memmem(initrd, len, disk, strlen(disk)));
	assert_int_equal(count_in(initrd, len, "TRAILER!!!"), 2);
	/* Streamed or made in memory, the image's archive is the same bytes. */
	{
		char *whole;
		size_t whole_len;

		assert_int_equal(bci_job_initrd_make("etc/bootci/known-good/disk.img", disk,
						     strlen(disk), &whole, &whole_len), 0);
		assert_true(len > whole_len);
		assert_memory_equal(initrd + len - whole_len, whole, whole_len);
		free(whole);
	}
	free(initrd);
	assert_int_equal(bci_schedule_deploy_initrd(&f->s, "solo", "kg-1", &deploy, f->err,
						    sizeof(f->err)), -ENOENT);
	assert_int_equal(deploy.fd, -1);
	assert_int_equal(bci_schedule_deploy_initrd(&f->s, "grp-a", "kg-2", &deploy, f->err,
						    sizeof(f->err)), -ENOENT);

	/*
	 * It asks again and the deploy's record has not come in: the deploy did not
	 * finish (a power cut during the write, say). The same deploy job, the same
	 * deploy id: the attempt finds the salvage the cut one left on the disk.
	 */
	known_good_disk(f, "kg-3", "a newer image, published meanwhile");
	upload(f, "solo", "deploy-20200101T000000Z-00000000", NULL, 0);
	script = boot(f, "52:54:00:00:00:01", T0 + 2);
	expect_in(script, "# bootci: solo is re-deployed with known-good image kg-2\n");
	expect_in(script, " bootci.mode=deploy bootci.deploy=/etc/bootci/deploy.plan\n");
	free(script);
	assert_int_equal(deploy_state(f, "solo", note, sizeof(note)), BCI_DEPLOY_DEPLOYING);
	assert_string_equal(note, "kg-2 (was: asked for by a test)");
	deploy_id_of(f, "solo", again, sizeof(again));
	assert_string_equal(again, id);
	fflush(f->s.log);
	expect_in(f->log_text, "did not finish (no record came in): handed out again, try 2 of 3");

	/* Its record came in (collect uploads the run the deploy's last step wrote): cleared,
	 * its queued job next. */
	upload(f, "solo", id, "bootci@program@deploy", 1);
	script = boot(f, "52:54:00:00:00:01", T0 + 3);
	expect_in(script, "bootci.run_id=b1-fast ");
	free(script);
	assert_int_equal(deploy_state(f, "solo", note, sizeof(note)), BCI_DEPLOY_NONE);
	fflush(f->s.log);
	expect_in(f->log_text, "solo: back after its re-deploy (kg-2 (was: asked for by a test)):"
			       " its record ");
}


/*
 * A deploy that never reports back is not started for ever: after
 * BCI_DEPLOY_TRIES deploy jobs the machine is taken out, saying why; put
 * back by a person, it gets as many tries again, with the same deploy id.
 */
static void test_redeploy_gives_up(void **state)
{
	struct fixture *f = *state;
	char note[512], *script, id[160], again[160];

	build_add(f, "b1", "drm-tip", "igt@core@a\n", "igt@x@1\n");
	assert_int_equal(bci_schedule_queue(&f->s, "b1", "fast", f->err, sizeof(f->err)), 3);
	known_good_disk(f, "kg-1", "image");
	assert_int_equal(bci_schedule_redeploy(&f->s, "solo", "a test", f->err, sizeof(f->err)), 1);
	for (int i = 0; i < BCI_DEPLOY_TRIES; i++) {
		script = boot(f, "52:54:00:00:00:01", T0 + i);
		expect_in(script, " bootci.mode=deploy ");
		free(script);
	}
	deploy_id_of(f, "solo", id, sizeof(id));
	script = boot(f, "52:54:00:00:00:01", T0 + 10);
	expect_in(script, "# bootci: solo is out of the schedule: its re-deploy never finished\nexit\n");
	free(script);
	expect_in(machine_state(f, "solo"), "out 0 re-deploy deploy-");
	expect_in(machine_state(f, "solo"), " handed out 3 times, its record never came in");
	script = boot(f, "52:54:00:00:00:01", T0 + 11);
	expect_in(script, "out of the schedule");
	free(script);
	assert_int_equal(deploy_state(f, "solo", note, sizeof(note)), BCI_DEPLOY_DEPLOYING);

	assert_int_equal(bci_schedule_return(&f->s, "solo", T0 + 12, f->err, sizeof(f->err)), 1);
	script = boot(f, "52:54:00:00:00:01", T0 + 13);
	expect_in(script, " bootci.mode=deploy ");
	free(script);
	deploy_id_of(f, "solo", again, sizeof(again));
	assert_string_equal(again, id);
	fflush(f->s.log);
	expect_in(f->log_text, "handed out again, try 1 of 3");
}

/*
 * A disk that does not boot: the master ended the run and sent the machine to
 * its known-good image, and it came back to netboot without a word from it
 * (no upload, no question): re-deployed, once. A run uploaded in time never
 * suspects the disk.
 */
static void test_redeploy_after_boots_without_upload(void **state)
{
	struct fixture *f = *state;
	char note[512], *script;

	build_add(f, "b1", "drm-tip", "igt@core@a\n", "igt@x@1\n");
	assert_int_equal(bci_schedule_queue(&f->s, "b1", "fast", f->err, sizeof(f->err)), 3);
	known_good_disk(f, "kg-1", "image");
	/* Its run uploaded after a few boots: a disk that works is never suspected. */
	for (int i = 0; i < BCI_SCHEDULE_MAX_BOOTS; i++) {
		script = boot(f, "52:54:00:00:00:03", T0 + i);
		expect_in(script, "bootci.run_id=b1-fast ");
		free(script);
	}
	upload(f, "grp-b", "b1-fast", NULL, 0);
	script = boot(f, "52:54:00:00:00:03", T0 + 10);
	expect_in(script, "\nexit\n");
	free(script);
	assert_int_equal(deploy_state(f, "grp-b", note, sizeof(note)), BCI_DEPLOY_NONE);

	for (int i = 0; i < BCI_SCHEDULE_MAX_BOOTS; i++) {
		script = boot(f, "52:54:00:00:00:02", T0 + i);
		expect_in(script, "bootci.run_id=b1-fast ");
		free(script);
	}
	script = boot(f, "52:54:00:00:00:02", T0 + 20);
	expect_in(script, "\nexit\n");
	free(script);
	assert_int_equal(deploy_state(f, "grp-a", note, sizeof(note)), BCI_DEPLOY_NONE);
	/* Back at netboot without a word from the known-good image: the disk. */
	script = boot(f, "52:54:00:00:00:02", T0 + 30);
	expect_in(script, " bootci.mode=deploy bootci.deploy=/etc/bootci/deploy.plan\n");
	expect_in(script, "/api/v1/machines/grp-a/deploy/kg-1/initrd\n");
	free(script);
	assert_int_equal(deploy_state(f, "grp-a", note, sizeof(note)), BCI_DEPLOY_DEPLOYING);
	expect_in(job_seen(f, "grp-a", "b1-fast").note, "the disk is re-deployed");
	fflush(f->s.log);
	expect_in(f->log_text, "grp-a: disk damaged (the master ended b1-fast after 10 boots and"
			       " sent the machine to its known-good image, which neither uploaded"
			       " nor asked about the run");
}

static int run_key_of(const struct bci_store_run *run, void *ctx)
{
	*(int64_t *)ctx = run->key;
	return 0;
}

/* A run's boots: one row per boot, @down of @boots without a clean end (the last clean). */
static void upload_with_boots(struct fixture *f, const char *machine, const char *run_id,
			      int boots, int down)
{
	int64_t key = -1;

	upload(f, machine, run_id, NULL, 0);
	assert_int_equal(bci_store_run_get(f->store, machine, run_id, run_key_of, &key, f->err,
					   sizeof(f->err)), 0);
	for (int i = 1; i <= boots; i++) {
		struct bci_store_boot boot = {
			.index = i, .kernel = "6.1.0-panics",
			.ending = i <= down ? "kernel crash (pstore: dmesg-efi_pstore-1)" :
					      "clean: finished: capped (boot_cap)",
		};
		if (bci_store_boot_add(f->store, key, &boot, f->err, sizeof(f->err)) < 0)
			fail_msg("%s", f->err);
	}
}

/*
 * The verdict on a run that came in names the kernel when it took the
 * machine down at every boot (a test= program capped after 3 crashed boots,
 * an IGT run of two jobs that each crash at start), not a single panic test.
 */
static void test_verdict_names_the_kernel(void **state)
{
	struct fixture *f = *state;
	char verdict[256];

	build_add(f, "b1", "drm-tip", "igt@core@a\n", "igt@x@1\n");
	assert_int_equal(bci_schedule_queue(&f->s, "b1", "fast", f->err, sizeof(f->err)), 3);
	for (int i = 0; i < 4; i++)
		free(boot(f, "52:54:00:00:00:01", T0 + i));
	upload_with_boots(f, "solo", "b1-fast", 4, 3);
	assert_int_equal(bci_schedule_run_ingested(f->store, "solo", "b1-fast", f->err,
						   sizeof(f->err)), 1);
	struct job_seen j = job_seen(f, "solo", "b1-fast");
	assert_string_equal(j.state, "done");
	assert_int_equal(j.boots, 4);
	assert_string_equal(j.note, "the kernel under test crashed at every boot: 3 of the run's 4"
				    " boots ended in a kernel crash, hang or reset, the last one"
				    " ended the run");
	assert_int_equal(bci_schedule_boots_verdict(7, 6, verdict, sizeof(verdict)), 1);
	expect_in(verdict, "crashed at every boot: 6 of the run's 7 boots");
	assert_int_equal(bci_schedule_boots_verdict(10, 10, verdict, sizeof(verdict)), 1);
	assert_null(strstr(verdict, "the last one"));
	/* One panic test, resumed: the kernel went down once, not at every boot. */
	assert_int_equal(bci_schedule_boots_verdict(2, 1, verdict, sizeof(verdict)), 1);
	assert_string_equal(verdict, "the kernel under test took the machine down in 1 of the"
				     " run's 2 boots");
	assert_int_equal(bci_schedule_boots_verdict(1, 0, verdict, sizeof(verdict)), 0);
	assert_string_equal(verdict, "");
}

/* A build whose image's command line names a test= program: its jobs run it, no testlist. */
static void test_boot_test_program_build(void **state)
{
	struct fixture *f = *state;
	struct bci_store_build build = { .name = "tp", .tree = "drm-tip", .commit = "c0ffee",
					 .tier = "fast" };
	char *script;

	assert_int_equal(bci_store_build_put(f->store, &build, f->err, sizeof(f->err)), 0);
	build_file(f, "tp", "boot.ipxe", "#!ipxe\nkernel vmlinuz initrd=initrd.img console=ttyS0"
		   " bootci.test=\"/usr/bin/x --run\"\ninitrd initrd.img\nboot\n");
	build_file(f, "tp", "fast.testlist", "igt@core@a\n");
	build_file(f, "tp", "full.testlist", "igt@core@a\n");
	assert_int_equal(bci_schedule_queue(&f->s, "tp", "fast", f->err, sizeof(f->err)), 3);
	script = boot(f, "52:54:00:00:00:01", T0);
	expect_in(script, " bootci.test=\"/usr/bin/x --run\" bootci.run_id=tp-fast\n");
	assert_null(strstr(script, "bootci.testlist="));
	free(script);
}

/* ---- recovery ---- */

static int power_lines(struct fixture *f)
{
	char *text = NULL;
	size_t len;
	int n = 0;

	if (bci_read_file(f->power_log, &text, &len, 1 << 20) < 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	free(text);
	return n;
}

struct state_text {
	char text[512];
};

static int state_print(const struct bci_store_machine_state *state, void *ctx)
{
	snprintf(((struct state_text *)ctx)->text, 512, "%s %d %s", state->state,
		 state->power_cycles, state->note ? state->note : "-");
	return 0;
}

static const char *machine_state(struct fixture *f, const char *machine)
{
	static struct state_text s;

	if (bci_store_machine_state_get(f->store, machine, state_print, &s, f->err,
					sizeof(f->err)) < 0)
		fail_msg("%s", f->err);
	return s.text;
}

struct power_told {
	char lines[512];
};

static void power_told(void *ctx, const char *machine, const char *action, const char *how)
{
	struct power_told *t = ctx;
	size_t n = strlen(t->lines);

	(void)how;
	snprintf(t->lines + n, sizeof(t->lines) - n, "%s %s;", machine, action);
}

/* Each power action the master takes is told (serve starts the machine's console's next boot). */
static void test_power_actions_told(void **state)
{
	struct fixture *f = *state;
	struct power_told told = { .lines = "" };

	f->s.power_done = power_told;
	f->s.power_ctx = &told;
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 601, f->err, sizeof(f->err)), 0);
	assert_string_equal(told.lines, "solo cycle;");
	assert_int_equal(bci_schedule_power(&f->s, "solo", "status", f->err, sizeof(f->err)), 0);
	assert_string_equal(told.lines, "solo cycle;");
	assert_int_equal(bci_schedule_power(&f->s, "solo", "cycle", f->err, sizeof(f->err)), 0);
	assert_string_equal(told.lines, "solo cycle;solo cycle;");
	assert_int_equal(power_lines(f), 2);
}

static void test_power_cycle_then_out(void **state)
{
	struct fixture *f = *state;
	char *script;

	/* First seen now; within its deadline (10 min): nothing. */
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 599, f->err, sizeof(f->err)), 0);
	assert_int_equal(power_lines(f), 0);
	/* Silent past it: power cycled, once. */
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 601, f->err, sizeof(f->err)), 0);
	assert_int_equal(power_lines(f), 1);
	assert_string_equal(machine_state(f, "solo"), "ready 1 -");
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 700, f->err, sizeof(f->err)), 0);
	assert_int_equal(power_lines(f), 1);
	/* It came back and asked for a job: forgiven. */
	script = boot(f, "52:54:00:00:00:01", T0 + 800);
	free(script);
	assert_string_equal(machine_state(f, "solo"), "ready 0 -");
	/* An upload is a sign of life too: 1050 s after the boot, 550 s after the upload. */
	upload_at(f, "solo", "r1", NULL, 0, T0 + 1300);
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 1850, f->err, sizeof(f->err)), 0);
	assert_int_equal(power_lines(f), 1);
	/* Silent again: cycle 1, cycle 2 (power-cycles = 2), then out. */
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 3000, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 3700, f->err, sizeof(f->err)), 0);
	assert_int_equal(power_lines(f), 3);
	assert_string_equal(machine_state(f, "solo"), "ready 2 -");
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 4400, f->err, sizeof(f->err)), 0);
	assert_int_equal(power_lines(f), 3);
	assert_string_equal(machine_state(f, "solo"),
			    "out 2 silent for 700 s after 2 power cycle(s): taken out of the schedule");
	fflush(f->s.log);
	expect_in(f->log_text, "solo: silent for 700 s after 2 power cycle(s): taken out of the schedule");
	/* Out: nothing is handed to it, and no more cycles. */
	build_add(f, "b1", "drm-tip", "igt@core@a\n", full_list);
	assert_int_equal(bci_schedule_queue(&f->s, "b1", "fast", f->err, sizeof(f->err)), 2);
	script = boot(f, "52:54:00:00:00:01", T0 + 4500);
	expect_in(script, "out of the schedule");
	expect_in(script, "\nexit\n");
	free(script);
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 9000, f->err, sizeof(f->err)), 0);
	assert_int_equal(power_lines(f), 3);
	/* Repaired and returned by a person: ready, cycles forgotten, its jobs at the next boot. */
	assert_int_equal(bci_schedule_return(&f->s, "nobody", T0 + 9100, f->err, sizeof(f->err)),
			 -ENOENT);
	expect_in(f->err, "no machine nobody in the inventory");
	assert_int_equal(bci_schedule_return(&f->s, "solo", T0 + 9100, f->err, sizeof(f->err)), 1);
	assert_string_equal(machine_state(f, "solo"), "ready 0 -");
	/* Returned, it is powered back on (it may have powered itself off): its power command. */
	assert_int_equal(power_lines(f), 4);
	fflush(f->s.log);
	expect_in(f->log_text, "schedule: solo: powered back on: power ran;"
			       " state not read back (no power-status)\n");
	assert_int_equal(bci_schedule_return(&f->s, "solo", T0 + 9101, f->err, sizeof(f->err)), 0);
	assert_int_equal(power_lines(f), 4);
	build_add(f, "b2", "drm-tip", "igt@core@a\n", full_list);
	assert_int_equal(bci_schedule_queue(&f->s, "b2", "fast", f->err, sizeof(f->err)), 3);
	script = boot(f, "52:54:00:00:00:01", T0 + 9200);
	expect_in(script, "# bootci: solo runs b2-fast");
	free(script);
	/* Its deadline counts from the return: nothing within it, a cycle after it. */
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 9200 + 599, f->err, sizeof(f->err)), 0);
	assert_int_equal(power_lines(f), 4);
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 9200 + 601, f->err, sizeof(f->err)), 0);
	assert_int_equal(power_lines(f), 5);
}

/* A file of the fixture's folder, written whole. */
static void fixture_file(struct fixture *f, const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX + 64];
	FILE *file;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs(text, file);
	assert_int_equal(fclose(file), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/*
 * A machine whose BMC cannot be worked is taken out at its first power cycle, its
 * note saying why; `schedule return` powers it back on (tests/unit/test_power.c has
 * the driver itself; a fake ipmitool here: its chassis state in DIR/state, how it
 * answers in DIR/mode).
 */
static void test_power_bmc_fault_then_return(void **state)
{
	struct fixture *f = *state;
	char extra[PATH_MAX + 256], *text = NULL;
	size_t len;

	fixture_file(f, "ipmitool",
		     "#!/bin/sh\ndir=$(dirname \"$0\")\n"
		     "case $(cat \"$dir/mode\") in\n"
		     "refuse) echo 'RAKP 2 message indicates an error : unauthorized name' >&2; exit 1 ;;\n"
		     "down) echo 'Error: Unable to establish IPMI v2 / RMCP+ session' >&2; exit 1 ;;\n"
		     "esac\n"
		     "for verb; do :; done\n"
		     "case $verb in\n"
		     "status) echo \"Chassis Power is $(cat \"$dir/state\")\" ;;\n"
		     "on|cycle) echo on >\"$dir/state\" ;;\n"
		     "esac\n", 0755);
	fixture_file(f, "bmc.pass", "secret\n", 0600);
	fixture_file(f, "state", "off\n", 0644);
	fixture_file(f, "mode", "refuse\n", 0644);
	snprintf(extra, sizeof(extra),
		 "[machine bmc]\nmac = 52:54:00:00:00:09\ndeadline = 10m\npower = ipmi\n"
		 "ipmi-host = 127.0.0.1\nipmi-port = 9623\nipmi-user = nobody\n"
		 "ipmi-password-file = %s/bmc.pass\n", f->dir);
	inventory_set(f, extra);
	assert_int_equal(bci_schedule_tick(&f->s, T0, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 601, f->err, sizeof(f->err)), 0);
	assert_string_equal(machine_state(f, "bmc"),
			    "out 1 power cycle 1: BMC 127.0.0.1:9623 refuses user nobody: RAKP 2 message"
			    " indicates an error : unauthorized name: taken out of the schedule");
	fflush(f->s.log);
	expect_in(f->log_text, "schedule: bmc: silent for 601 s (deadline 600 s): power cycle 1 of 2\n"
			       "schedule: bmc: power cycle 1: BMC 127.0.0.1:9623 refuses user nobody:");
	/* Returned while the BMC still refuses: back in, and the command says the power failed. */
	assert_int_equal(bci_schedule_return(&f->s, "bmc", T0 + 700, f->err, sizeof(f->err)), -EIO);
	expect_in(f->err, "bmc is back in the schedule, but its power failed: BMC 127.0.0.1:9623 refuses");
	assert_string_equal(machine_state(f, "bmc"), "ready 0 -");
	/* Silent again with the BMC down: out at the next cycle, said so. */
	fixture_file(f, "mode", "down\n", 0644);
	assert_int_equal(bci_schedule_tick(&f->s, T0 + 1301, f->err, sizeof(f->err)), 0);
	assert_string_equal(machine_state(f, "bmc"),
			    "out 1 power cycle 1: BMC 127.0.0.1:9623 does not answer"
			    " (2 calls of 2 tries, 2 s each): taken out of the schedule");
	/* Repaired, and off (a machine taken out may power itself off): return powers it on. */
	fixture_file(f, "mode", "ok\n", 0644);
	assert_int_equal(bci_schedule_return(&f->s, "bmc", T0 + 1400, f->err, sizeof(f->err)), 1);
	assert_string_equal(machine_state(f, "bmc"), "ready 0 -");
	fflush(f->s.log);
	expect_in(f->log_text, "schedule: bmc: powered back on: BMC 127.0.0.1:9623: chassis power on"
			       " (it was off); reads on\n");
	snprintf(extra, sizeof(extra), "%s/state", f->dir);
	assert_int_equal(bci_read_file(extra, &text, &len, 64), 0);
	assert_string_equal(text, "on\n");
	free(text);
}

static int build_tier_row(const struct bci_store_build *build, void *ctx)
{
	snprintf(ctx, 8, "%s", build->tier);
	return 0;
}

static const char *build_tier(struct fixture *f, const char *build)
{
	static char tier[8];

	assert_int_equal(bci_store_build_get(f->store, build, build_tier_row, tier, f->err,
					     sizeof(f->err)), 0);
	return tier;
}

/* A run in the store ends its job; the full tier's makes the build's tier full (the reply's subject). */
static void test_run_ingested(void **state)
{
	struct fixture *f = *state;

	build_add(f, "b2", "drm-tip", "igt@core@a\n", full_list);
	assert_int_equal(bci_schedule_queue(&f->s, "b2", "fast", f->err, sizeof(f->err)), 3);
	upload(f, "solo", "b2-fast", NULL, 0);
	assert_int_equal(bci_schedule_run_ingested(f->store, "solo", "b2-fast", f->err,
						   sizeof(f->err)), 1);
	assert_string_equal(build_tier(f, "b2"), "fast");
	assert_int_equal(bci_schedule_run_ingested(f->store, "solo", "no-such-run", f->err,
						   sizeof(f->err)), 0);
	/* A job is a machine's: its run id on another machine is no job of that one. */
	char build[64] = "";
	assert_int_equal(bci_schedule_run_build(f->store, "solo", "b2-fast", build, sizeof(build),
						f->err, sizeof(f->err)), 1);
	assert_string_equal(build, "b2");
	assert_int_equal(bci_schedule_run_build(f->store, "solo", "no-such-run", build,
						sizeof(build), f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_store_machine_job_get(f->store, "grp-a", "b2-fast", NULL, NULL, f->err,
						   sizeof(f->err)), 1);
	assert_int_equal(bci_store_machine_job_get(f->store, "no-such-machine", "b2-fast", NULL,
						   NULL, f->err, sizeof(f->err)), 0);
	assert_int_equal(bci_schedule_queue(&f->s, "b2", "full", f->err, sizeof(f->err)), 3);
	upload(f, "grp-a", "b2-full-1of2", NULL, 0);
	assert_int_equal(bci_schedule_run_ingested(f->store, "grp-a", "b2-full-1of2", f->err,
						   sizeof(f->err)), 1);
	assert_string_equal(build_tier(f, "b2"), "full");
	struct testlists t = { 0 };
	assert_int_equal(bci_store_jobs_each(f->store, "b2", NULL, job_states, &t, f->err,
					     sizeof(f->err)), 6);
	assert_string_equal(t.solo, "b2-fast:done b2-full:queued ");
	assert_string_equal(t.a, "b2-fast:queued b2-full-1of2:done ");
}

static int tag_join(const char *tag, void *ctx)
{
	char *out = ctx;

	strcat(out, tag);
	strcat(out, " ");
	return 0;
}

static const char *tags_of(struct fixture *f, const char *machine)
{
	static char out[256];

	out[0] = '\0';
	assert_true(bci_store_machine_tags(f->store, machine, tag_join, out, f->err,
					   sizeof(f->err)) >= 0);
	return out;
}

/* The inventory's tags reach the store's machines; a tag it drops goes, a person's stays. */
static void test_tags_sync(void **state)
{
	struct fixture *f = *state;
	struct bci_inventory *before;

	inventory_set(f, "[machine tagged]\nmac = 52:54:00:00:00:09\ntags = tgl, gen12\n");
	assert_int_equal(bci_schedule_tags_sync(&f->s, NULL, f->err, sizeof(f->err)), 0);
	assert_string_equal(tags_of(f, "tagged"), "gen12 tgl ");
	assert_string_equal(tags_of(f, "solo"), "");
	assert_int_equal(bci_store_machine_tag(f->store, "tagged", "by-hand", f->err,
					       sizeof(f->err)), 0);
	/* inventory_set frees the inventory it replaces: keep it for the comparison. */
	before = f->inv;
	f->inv = NULL;
	inventory_set(f, "[machine tagged]\nmac = 52:54:00:00:00:09\ntags = tgl, lab\n");
	assert_int_equal(bci_schedule_tags_sync(&f->s, before, f->err, sizeof(f->err)), 0);
	bci_inventory_free(before);
	assert_string_equal(tags_of(f, "tagged"), "by-hand lab tgl ");
	fflush(f->s.log);
	expect_in(f->log_text, "tagged: tag gen12 no longer in the inventory: removed");
}

static const char *group_of(struct fixture *f, const char *machine)
{
	static char group[129];

	assert_true(bci_store_machine_group(f->store, machine, group, sizeof(group), f->err,
					    sizeof(f->err)) >= 0);
	return group;
}

/* The inventory's shard groups reach the store's machines; one it drops goes, a person's stays. */
static void test_groups_sync(void **state)
{
	struct fixture *f = *state;
	struct bci_inventory *before;

	inventory_set(f, "[machine by-hand]\nmac = 52:54:00:00:00:09\nshard-group = h\n");
	assert_int_equal(bci_schedule_tags_sync(&f->s, NULL, f->err, sizeof(f->err)), 0);
	assert_string_equal(group_of(f, "grp-a"), "g");
	assert_string_equal(group_of(f, "grp-b"), "g");
	assert_string_equal(group_of(f, "solo"), "");
	assert_string_equal(group_of(f, "by-hand"), "h");
	/* A person moves by-hand to group p: not the inventory's to undo. */
	assert_int_equal(bci_store_machine_group_set(f->store, "by-hand", "p", f->err,
						     sizeof(f->err)), 0);
	before = f->inv;
	f->inv = NULL;
	/* grp-b leaves the group, by-hand's group is gone from the inventory, solo joins one. */
	inventory_set(f, "[machine by-hand]\nmac = 52:54:00:00:00:09\n");
	{
		struct bci_inventory_machine *m;

		for (size_t i = 0; i < f->inv->machine_count; i++) {
			m = &f->inv->machines[i];
			if (!strcmp(m->name, "grp-b")) {
				free(m->shard_group);
				m->shard_group = NULL;
			} else if (!strcmp(m->name, "solo")) {
				m->shard_group = strdup("s");
				assert_non_null(m->shard_group);
			}
		}
	}
	assert_int_equal(bci_schedule_tags_sync(&f->s, before, f->err, sizeof(f->err)), 0);
	bci_inventory_free(before);
	assert_string_equal(group_of(f, "grp-a"), "g");
	assert_string_equal(group_of(f, "grp-b"), "");
	assert_string_equal(group_of(f, "solo"), "s");
	assert_string_equal(group_of(f, "by-hand"), "p");
	fflush(f->s.log);
	expect_in(f->log_text, "grp-b: shard group g no longer in the inventory: removed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_boot_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_boot_ends_run_at_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ended_run_hello_is_no_disk_fault, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hello_of_machine_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ended_run_asked_is_no_disk_fault, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_verdict_names_the_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_boot_test_program_build, setup, teardown),
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_split_pure),
		cmocka_unit_test_setup_teardown(test_shards_without_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shards_by_duration_stable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_gates_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_judge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_judge_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_confirm_reruns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_confirm_clears, setup, teardown),
		cmocka_unit_test_setup_teardown(test_confirm_always_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_take_out_moves_waited_jobs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_no_run_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_take_out_abandons_without_peer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_known_good_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_actions_told, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_cycle_then_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_bmc_fault_then_return, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tags_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_groups_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_ingested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redeploy_by_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redeploy_gives_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redeploy_after_boots_without_upload, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
