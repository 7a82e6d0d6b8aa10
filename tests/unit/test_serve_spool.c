// SPDX-License-Identifier: MIT
/* aggregator/master/serve/spool.c: the data folder's states, resumes and crash leftovers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/serve/spool.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SHA_X "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" /* "x" */
#define SHA_Y "a1fce4363854ff888cff4b8e7875d600c2682390412a8cf79b37d0b11148b0fa" /* "y" */

struct fixture {
	char root[64];
	struct bci_spool spool;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	strcpy(f->root, "/tmp/test_spool.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	assert_int_equal(bci_spool_open(&f->spool, f->root, err, sizeof(err)), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	bci_remove_tree(f->root);
	free(f);
	return 0;
}

static void upload(struct fixture *f, const char *run, const char *sha, const char *bytes,
		   uint64_t start)
{
	char err[256];
	int fd = bci_spool_begin(&f->spool, "m1", run, sha, start, err, sizeof(err));

	if (fd < 0)
		fail_msg("begin: %s", err);
	assert_int_equal(bci_write_all(fd, bytes, strlen(bytes)), 0);
	close(fd);
}

static int count_archives(struct fixture *f)
{
	char cmd[128];
	int n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls %s/archives | wc -l", f->root);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void test_states(void **state)
{
	struct fixture *f = *state;
	struct bci_run_status st;
	char err[256], path[PATH_MAX];

	assert_int_equal(bci_spool_status(&f->spool, "m1", "r1", &st, err, sizeof(err)), 0);
	assert_int_equal(st.state, BCI_RUN_ABSENT);

	upload(f, "r1", SHA_X, "", 0);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "r1", &st, err, sizeof(err)), 0);
	assert_int_equal(st.state, BCI_RUN_PARTIAL);
	assert_int_equal(st.received, 0);
	assert_string_equal(st.sha256, SHA_X);

	/* Resume from 0 bytes held: the byte goes on. */
	upload(f, "r1", SHA_X, "x", 0);
	assert_int_equal(bci_spool_accept(&f->spool, "m1", "r1", SHA_X, 1, err, sizeof(err)), 0);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "r1", &st, err, sizeof(err)), 0);
	assert_int_equal(st.state, BCI_RUN_STORED);
	assert_int_equal(st.received, 1);
	assert_false(st.ingested);
	bci_spool_archive_path(&f->spool, SHA_X, path);
	assert_int_equal(access(path, R_OK), 0);
	bci_spool_part_path(&f->spool, "m1", "r1", path);
	assert_int_equal(access(path, F_OK), -1);

	assert_int_equal(bci_spool_mark_ingested(&f->spool, "m1", "r1", err, sizeof(err)), 0);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "r1", &st, err, sizeof(err)), 0);
	assert_true(st.ingested);
}

static void test_resume(void **state)
{
	struct fixture *f = *state;
	struct bci_run_status st;
	char err[256];

	upload(f, "r2", SHA_Y, "abc", 0);
	/* Past what is held, or another digest: refused, naming what is held. */
	assert_int_equal(bci_spool_begin(&f->spool, "m1", "r2", SHA_Y, 4, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "3 bytes held"));
	assert_int_equal(bci_spool_begin(&f->spool, "m1", "r2", SHA_X, 1, err, sizeof(err)), -ERANGE);
	/* From within what is held: the rest is cut and the new bytes follow. */
	upload(f, "r2", SHA_Y, "Z", 1);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "r2", &st, err, sizeof(err)), 0);
	assert_int_equal(st.state, BCI_RUN_PARTIAL);
	assert_int_equal(st.received, 2);
	/* Discarded: nothing left. */
	bci_spool_discard(&f->spool, "m1", "r2");
	assert_int_equal(bci_spool_status(&f->spool, "m1", "r2", &st, err, sizeof(err)), 0);
	assert_int_equal(st.state, BCI_RUN_ABSENT);
}

static int collect_pending(void *ctx, const char *machine, const char *run_id,
			   const struct bci_run_status *status)
{
	char *seen = ctx;

	(void)status;
	snprintf(seen + strlen(seen), 256 - strlen(seen), "%s/%s ", machine, run_id);
	return 0;
}

/* A crash between the archive's rename and the record: the re-upload shares the archive. */
static void test_crash_before_record(void **state)
{
	struct fixture *f = *state;
	struct bci_run_status st;
	char err[256], path[PATH_MAX], seen[256] = "";

	upload(f, "r3", SHA_X, "x", 0);
	assert_int_equal(bci_spool_accept(&f->spool, "m1", "r3", SHA_X, 1, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/runs/m1/r3.json", f->root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "r3", &st, err, sizeof(err)), 0);
	assert_int_equal(st.state, BCI_RUN_ABSENT);

	upload(f, "r3", SHA_X, "x", 0);
	assert_int_equal(bci_spool_accept(&f->spool, "m1", "r3", SHA_X, 1, err, sizeof(err)), 0);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "r3", &st, err, sizeof(err)), 0);
	assert_int_equal(st.state, BCI_RUN_STORED);
	assert_int_equal(count_archives(f), 1);

	/* Not ingested yet: the start-up recovery finds it. */
	assert_int_equal(bci_spool_each_pending(&f->spool, collect_pending, seen, err, sizeof(err)), 0);
	assert_string_equal(seen, "m1/r3 ");
	assert_int_equal(bci_spool_mark_ingested(&f->spool, "m1", "r3", err, sizeof(err)), 0);
	seen[0] = '\0';
	assert_int_equal(bci_spool_each_pending(&f->spool, collect_pending, seen, err, sizeof(err)), 0);
	assert_string_equal(seen, "");
}

/*
 * A record or an announced digest that is not a digest (a damaged disk, a
 * hand edit): the record is refused as one, the announced upload not resumed.
 */
static void test_damaged_digests(void **state)
{
	struct fixture *f = *state;
	struct bci_run_status st;
	char err[256], path[PATH_MAX], text[256];

	upload(f, "r4", SHA_X, "x", 0);
	assert_int_equal(bci_spool_accept(&f->spool, "m1", "r4", SHA_X, 1, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/runs/m1/r4.json", f->root);
	snprintf(text, sizeof(text), "{\"machine\": \"m1\", \"run_id\": \"r4\", \"sha256\": \"%.63sX\","
		 " \"size\": 1, \"ingested\": false}", SHA_X);
	assert_int_equal(bci_write_file_atomic(path, text, strlen(text), 0644), 0);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "r4", &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a run record"));

	upload(f, "r5", SHA_Y, "ab", 0);
	snprintf(path, sizeof(path), "%s/incoming/m1/r5.sha256", f->root);
	snprintf(text, sizeof(text), "%.63sG\n", SHA_Y);
	assert_int_equal(bci_write_file_atomic(path, text, strlen(text), 0644), 0);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "r5", &st, err, sizeof(err)), 0);
	assert_int_equal(st.state, BCI_RUN_ABSENT);
	snprintf(text, sizeof(text), "%s\n", SHA_Y);
	assert_int_equal(bci_write_file_atomic(path, text, strlen(text), 0644), 0);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "r5", &st, err, sizeof(err)), 0);
	assert_int_equal(st.state, BCI_RUN_PARTIAL);
	assert_int_equal(st.received, 2);
}

/*
 * What a serve killed between two steps leaves in incoming/ is gone once the
 * spool is opened again (serve's restart); an upload in progress stays.
 */
static void test_killed_leftovers(void **state)
{
	struct fixture *f = *state;
	struct bci_spool again;
	char err[256], path[PATH_MAX];

	/* Killed between the run's record and the digest's removal. */
	upload(f, "done", SHA_X, "x", 0);
	assert_int_equal(bci_spool_accept(&f->spool, "m1", "done", SHA_X, 1, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/incoming/m1/done.sha256", f->root);
	assert_int_equal(bci_write_file_atomic(path, SHA_X "\n", 65, 0640), 0);
	/* Killed between the digest and the .part of a new upload. */
	snprintf(path, sizeof(path), "%s/incoming/m1/begun.sha256", f->root);
	assert_int_equal(bci_write_file_atomic(path, SHA_Y "\n", 65, 0640), 0);
	/* Killed inside an atomic write of a digest. */
	snprintf(path, sizeof(path), "%s/incoming/m1/torn.sha256.tmp.Ab3dEf", f->root);
	assert_int_equal(bci_write_file_atomic(path, "12", 2, 0640), 0);
	/* An upload cut short: resumable, kept. A run id that only looks like a temporary name too. */
	upload(f, "cut", SHA_Y, "ab", 0);
	upload(f, "a.tmp.b", SHA_Y, "ab", 0);

	assert_int_equal(bci_spool_open(&again, f->root, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/incoming/m1/done.sha256", f->root);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/incoming/m1/begun.sha256", f->root);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/incoming/m1/torn.sha256.tmp.Ab3dEf", f->root);
	assert_int_equal(access(path, F_OK), -1);
	for (int i = 0; i < 2; i++) {
		const char *run = i ? "a.tmp.b" : "cut";
		struct bci_run_status st;

		snprintf(path, sizeof(path), "%s/incoming/m1/%s.part", f->root, run);
		assert_int_equal(access(path, F_OK), 0);
		snprintf(path, sizeof(path), "%s/incoming/m1/%s.sha256", f->root, run);
		assert_int_equal(access(path, F_OK), 0);
		assert_int_equal(bci_spool_status(&again, "m1", run, &st, err, sizeof(err)), 0);
		assert_int_equal(st.state, BCI_RUN_PARTIAL);
		assert_int_equal(st.received, 2);
	}
}

struct expired_seen {
	char runs[4][32];
	int count;
};

static int note_expired(void *ctx, const char *machine, const char *run_id, uint64_t size,
			uint64_t age)
{
	struct expired_seen *seen = ctx;

	assert_string_equal(machine, "m1");
	assert_int_equal(size, 3);
	assert_true(age >= 100);
	assert_true(seen->count < 4);
	snprintf(seen->runs[seen->count++], sizeof(seen->runs[0]), "%s", run_id);
	return 0;
}

/* Only the cut uploads older than the age are listed and removed; the quota counts the others. */
static void test_expiry_and_quota(void **state)
{
	struct fixture *f = *state;
	struct expired_seen seen = { 0 };
	struct bci_run_status status;
	char path[PATH_MAX], err[256];
	time_t now = time(NULL);
	uint64_t size = 0;

	upload(f, "old", SHA_X, "abc", 0);
	upload(f, "fresh", SHA_Y, "defgh", 0);
	bci_spool_part_path(&f->spool, "m1", "old", path);
	assert_int_equal(utimensat(AT_FDCWD, path,
				   (struct timespec[]){ { now - 200, 0 }, { now - 200, 0 } }, 0), 0);
	assert_int_equal(bci_spool_incoming_bytes(&f->spool, "m1", NULL), 8);
	assert_int_equal(bci_spool_incoming_bytes(&f->spool, "m1", "fresh"), 3);
	assert_int_equal(bci_spool_incoming_bytes(&f->spool, "m2", NULL), 0);

	assert_int_equal(bci_spool_each_expired(&f->spool, now, 100, note_expired, &seen), 0);
	assert_int_equal(seen.count, 1);
	assert_string_equal(seen.runs[0], "old");
	/* Younger than a larger age: kept. */
	assert_int_equal(bci_spool_expire(&f->spool, "m1", "old", now, 300, &size), 0);
	assert_int_equal(bci_spool_expire(&f->spool, "m1", "fresh", now, 100, &size), 0);
	assert_int_equal(bci_spool_expire(&f->spool, "m1", "old", now, 100, &size), 1);
	assert_int_equal(size, 3);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "old", &status, err, sizeof(err)), 0);
	assert_int_equal(status.state, BCI_RUN_ABSENT);
	assert_int_equal(bci_spool_status(&f->spool, "m1", "fresh", &status, err, sizeof(err)), 0);
	assert_int_equal(status.state, BCI_RUN_PARTIAL);
	assert_int_equal(bci_spool_incoming_bytes(&f->spool, "m1", NULL), 5);
	assert_int_equal(bci_spool_expire(&f->spool, "m1", "old", now, 100, &size), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crash_before_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_digests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_leftovers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expiry_and_quota, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
