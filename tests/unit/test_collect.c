// SPDX-License-Identifier: MIT
/*
 * aggregator/collect: which runs are over, the machine file, retention, the
 * archive (read back with libarchive and checked against its manifest), and
 * the firmware's boot entries read from a fake efivarfs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/collect/collect.h"
#include "run_archive.h"
#include "fsutil.h"
#include "manifest.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A path into a buffer, or the test fails (never a truncated path). */
#define PATHF(buf, ...) assert_int_equal(bci_collect_path(buf, sizeof(buf), __VA_ARGS__), 0)

struct fixture {
	char root[64];
	char runs[PATH_MAX];
};

static void put(const struct fixture *f, const char *rel, const char *text)
{
	char path[PATH_MAX], *slash;

	PATHF(path, "%s/%s", f->root, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	assert_int_equal(bci_mkdir_p(path, 0755), 0);
	*slash = '/';
	assert_int_equal(bci_write_file_atomic(path, text, strlen(text), 0644), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->root, sizeof(f->root), "/tmp/test_collect.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->runs, sizeof(f->runs), "%s/runs", f->root);
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

static const struct bci_collect_run *find(const struct bci_collect_run *runs, size_t count,
					  const char *name)
{
	for (size_t i = 0; i < count; i++)
		if (!strcmp(runs[i].name, name))
			return &runs[i];
	fail_msg("run %s not listed", name);
	return NULL;
}

static void test_run_states(void **state)
{
	struct fixture *f = *state;
	struct bci_collect_run *runs;
	size_t count;
	char err[256];

	put(f, "runs/done/bootci-journal.txt", "boot 1 0 k\nstart 0\nexit 0 0 1\ndone\n");
	put(f, "runs/aborted/bootci-journal.txt", "boot 1 0 k\nabort taint\n");
	put(f, "runs/running/bootci-journal.txt", "boot 1 0 k\nstart 0\n");
	/* "done" inside another line is no done line. */
	put(f, "runs/tricky/bootci-journal.txt", "boot 1 0 k\ndynamic 0 done@x\n");
	put(f, "runs/prog/test/result.txt", "command /bin/true\nstate done\nexit-status 0\n");
	put(f, "runs/prog-running/test/result.txt", "command /bin/true\nstate running\n");
	put(f, "runs/old.superseded-1/bootci-journal.txt", "boot 1 0 k\nstart 0\n");
	put(f, "runs/sent/test/result.txt", "state done\n");
	put(f, "runs/sent/bootci-uploaded.txt", "sha256 ab\nsize 1\ntime 5\n");
	put(f, "runs/empty/x", "");
	put(f, "runs/not-a-dir", "");

	assert_int_equal(bci_collect_runs_list(f->runs, &runs, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 9);
	assert_string_equal(runs[0].name, "aborted"); /* sorted by name */
	assert_int_equal(find(runs, count, "done")->state, BCI_RUN_FINISHED);
	assert_int_equal(find(runs, count, "aborted")->state, BCI_RUN_FINISHED);
	assert_int_equal(find(runs, count, "running")->state, BCI_RUN_IN_PROGRESS);
	assert_int_equal(find(runs, count, "tricky")->state, BCI_RUN_IN_PROGRESS);
	assert_int_equal(find(runs, count, "prog")->state, BCI_RUN_FINISHED);
	assert_int_equal(find(runs, count, "prog-running")->state, BCI_RUN_IN_PROGRESS);
	assert_int_equal(find(runs, count, "old.superseded-1")->state, BCI_RUN_SUPERSEDED);
	assert_int_equal(find(runs, count, "empty")->state, BCI_RUN_IN_PROGRESS);
	assert_true(find(runs, count, "sent")->uploaded);
	assert_int_equal(find(runs, count, "sent")->uploaded_at, 5);
	assert_false(find(runs, count, "done")->uploaded);
	free(runs);
}

/*
 * A run the master ended is over here too: a test= program that crashed at
 * every boot (state running, the master's cap passed) goes once collect wrote
 * bootci-ended.txt from the master's answer; a capped program run is over.
 */
static void test_run_ended_by_master(void **state)
{
	struct fixture *f = *state;
	struct bci_collect_run *runs;
	char err[256], dir[PATH_MAX + 64];
	size_t count;

	put(f, "runs/crashloop/test/result.txt", "command /x\nstate running\nboot 9\nstarts 9\n");
	put(f, "runs/capped/test/result.txt", "command /x\nstate capped\nboot 3\nstarts 3\n");
	assert_int_equal(bci_collect_runs_list(f->runs, &runs, &count, err, sizeof(err)), 0);
	assert_int_equal(find(runs, count, "crashloop")->state, BCI_RUN_IN_PROGRESS);
	assert_int_equal(find(runs, count, "capped")->state, BCI_RUN_FINISHED);
	free(runs);
	snprintf(dir, sizeof(dir), "%s/crashloop", f->runs);
	assert_int_equal(bci_collect_run_mark_ended(dir, 10, "ended by the master\nafter 10 boots"),
			 0);
	assert_int_equal(bci_collect_runs_list(f->runs, &runs, &count, err, sizeof(err)), 0);
	assert_int_equal(find(runs, count, "crashloop")->state, BCI_RUN_ENDED);
	assert_string_equal(bci_collect_run_state_name(BCI_RUN_ENDED),
			    "ended by the master, incomplete");
	free(runs);
	char *text = NULL;
	snprintf(dir, sizeof(dir), "%s/crashloop/bootci-ended.txt", f->runs);
	assert_int_equal(bci_read_file(dir, &text, NULL, 4096), 0);
	assert_string_equal(text, "ended-by master\nboots 10\nnote ended by the master after 10 boots\n");
	free(text);
}

/* The master's answer about a run's job: ended (upload it), handed out again, none. */
static void test_master_job_answers(void **state)
{
	struct bci_collect_master_job job;
	const char *ended = "{\"state\": \"absent\", \"received\": 0, \"job\": {\"state\":"
			    " \"abandoned\", \"boots\": 10, \"ended\": true, \"note\": \"ended by"
			    " the master\"}}";
	const char *again = "{\"state\": \"absent\", \"received\": 0, \"job\": {\"state\":"
			    " \"booted\", \"boots\": 2, \"ended\": false}}";
	const char *none = "{\"state\": \"absent\", \"received\": 0}";

	(void)state;
	assert_int_equal(bci_collect_master_job_parse(ended, strlen(ended), &job), 1);
	assert_true(job.ended);
	assert_int_equal(job.boots, 10);
	assert_string_equal(job.note, "ended by the master");
	assert_int_equal(bci_collect_master_job_parse(again, strlen(again), &job), 1);
	assert_false(job.ended);
	assert_int_equal(job.boots, 2);
	assert_string_equal(job.note, "");
	assert_int_equal(bci_collect_master_job_parse(none, strlen(none), &job), 0);
	assert_false(job.ended);
	assert_int_equal(bci_collect_master_job_parse("{\"job\": {\"ended\": \"yes\", \"boots\": 1}}",
						      44, &job), -EINVAL);
	assert_int_equal(bci_collect_master_job_parse("<html>", 6, &job), -EINVAL);
}

static void test_runs_missing_folder(void **state)
{
	struct fixture *f = *state;
	struct bci_collect_run *runs = (void *)1;
	size_t count = 7;
	char err[256];

	assert_int_equal(bci_collect_runs_list(f->runs, &runs, &count, err, sizeof(err)), 0);
	assert_null(runs);
	assert_int_equal(count, 0);
}

static bool exists(const struct fixture *f, const char *rel)
{
	char path[PATH_MAX];

	PATHF(path, "%s/%s", f->root, rel);
	return access(path, F_OK) == 0;
}

static void test_retention(void **state)
{
	struct fixture *f = *state;
	char dir[PATH_MAX];
	FILE *log = fopen("/dev/null", "w");

	put(f, "runs/a/x", "a");
	put(f, "runs/b/x", "b");
	put(f, "runs/c/x", "c");
	put(f, "runs/pending/x", "p");
	PATHF(dir, "%s/a", f->runs);
	assert_int_equal(bci_collect_run_mark_uploaded(dir, "aa", 1, 300), 0);
	PATHF(dir, "%s/b", f->runs);
	assert_int_equal(bci_collect_run_mark_uploaded(dir, "bb", 1, 100), 0);
	PATHF(dir, "%s/c", f->runs);
	assert_int_equal(bci_collect_run_mark_uploaded(dir, "cc", 1, 200), 0);

	/* keep 1: the newest upload (a) stays; b and c go; a run not uploaded never goes. */
	assert_int_equal(bci_collect_runs_retain(f->runs, 1, log), 2);
	assert_true(exists(f, "runs/a/x"));
	assert_false(exists(f, "runs/b"));
	assert_false(exists(f, "runs/c"));
	assert_true(exists(f, "runs/pending/x"));
	assert_int_equal(bci_collect_runs_retain(f->runs, 0, log), 1);
	assert_false(exists(f, "runs/a"));
	assert_true(exists(f, "runs/pending/x"));
	fclose(log);
}

/* A deletion cut short earlier (its hidden .deleting- folder) is finished; no run shows it. */
static void test_retention_finishes_deletions(void **state)
{
	struct fixture *f = *state;
	struct bci_collect_run *runs;
	size_t count;
	char dir[PATH_MAX], err[256];
	FILE *log = fopen("/dev/null", "w");

	put(f, "runs/.deleting-old/bootci-journal.txt", "done\n");
	put(f, "runs/.deleting-old/1/out.txt", "x");
	put(f, "runs/new/x", "n");
	PATHF(dir, "%s/new", f->runs);
	assert_int_equal(bci_collect_run_mark_uploaded(dir, "nn", 1, 100), 0);
	assert_int_equal(bci_collect_runs_list(f->runs, &runs, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 1);
	free(runs);
	assert_int_equal(bci_collect_runs_retain(f->runs, 0, log), 1);
	assert_false(exists(f, "runs/.deleting-old"));
	assert_false(exists(f, "runs/.deleting-new"));
	assert_false(exists(f, "runs/new"));
	fclose(log);
}

/* Sets the modification time of ROOT/@rel to @when. */
static void touch_at(const struct fixture *f, const char *rel, time_t when)
{
	char path[PATH_MAX];
	struct timespec times[2] = { { when, 0 }, { when, 0 } };

	PATHF(path, "%s/%s", f->root, rel);
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

static bool ignore_known_good(const char *name, void *ctx)
{
	(void)ctx;
	return !strcmp(name, "known-good");
}

/*
 * A run that never began (neither a journal nor result.txt) is left behind once
 * a later run booted: nothing resumes it any more, so it is uploaded instead of
 * staying for ever. The known-good image's own run, which boots every time,
 * does not count; a run that began and is not over stays in progress.
 */
static void test_runs_left_behind(void **state)
{
	struct fixture *f = *state;
	struct bci_collect_run *runs;
	size_t count;
	char err[256];

	put(f, "runs/early/boot-0001/end.txt", "error: the executor could not go on\n");
	put(f, "runs/early/bootci-identity.txt", "kernel k\n");
	put(f, "runs/later/bootci-journal.txt", "boot 1 0 k\nstart 0\nexit 0 0 1\ndone\n");
	put(f, "runs/later/boot-0001/boot.txt", "boot 1\n");
	put(f, "runs/latest/boot-0002/end.txt", "error\n");
	put(f, "runs/running/bootci-journal.txt", "boot 1 0 k\nstart 0\n");
	put(f, "runs/running/boot-0001/boot.txt", "boot 1\n");
	put(f, "runs/known-good/boot-0009/boot.txt", "boot 9\n");
	touch_at(f, "runs/running/boot-0001", 1000);
	touch_at(f, "runs/early/boot-0001", 2000);
	touch_at(f, "runs/later/boot-0001", 3000);
	touch_at(f, "runs/latest/boot-0002", 4000);
	touch_at(f, "runs/known-good/boot-0009", 5000);

	assert_int_equal(bci_collect_runs_list(f->runs, &runs, &count, err, sizeof(err)), 0);
	assert_int_equal(count, 5);
	assert_int_equal(find(runs, count, "early")->last_boot, 2000);
	assert_false(find(runs, count, "early")->began);
	assert_int_equal(find(runs, count, "early")->state, BCI_RUN_IN_PROGRESS);
	bci_collect_runs_settle(runs, count, ignore_known_good, NULL);
	assert_int_equal(find(runs, count, "early")->state, BCI_RUN_LEFT_BEHIND);
	assert_int_equal(find(runs, count, "later")->state, BCI_RUN_FINISHED);
	/* The newest boot of all but the known-good image's: it may be resumed yet. */
	assert_int_equal(find(runs, count, "latest")->state, BCI_RUN_IN_PROGRESS);
	/* Began and not over: the executor resumes it (or the master ends it). */
	assert_int_equal(find(runs, count, "running")->state, BCI_RUN_IN_PROGRESS);
	assert_string_equal(bci_collect_run_state_name(BCI_RUN_LEFT_BEHIND),
			    "never began, a later run booted");
	free(runs);
}

/* bootci-refused.txt: listed as refused, its reason on one line. */
static void test_run_refused(void **state)
{
	struct fixture *f = *state;
	struct bci_collect_run *runs;
	size_t count;
	char dir[PATH_MAX], path[PATH_MAX], err[256], *text;

	put(f, "runs/r/bootci-journal.txt", "done\n");
	PATHF(dir, "%s/r", f->runs);
	assert_int_equal(bci_collect_run_mark_refused(dir, "0/out.txt differs\nfrom the master's",
						      "aa", "bb", 42), 0);
	PATHF(path, "%s/" BCI_COLLECT_REFUSED_FILE, dir);
	assert_int_equal(bci_read_file(path, &text, NULL, 4096), 0);
	assert_string_equal(text, "sha256 aa\nmaster_sha256 bb\ntime 42\n"
				  "reason 0/out.txt differs from the master's\n");
	free(text);
	assert_int_equal(bci_collect_runs_list(f->runs, &runs, &count, err, sizeof(err)), 0);
	assert_true(runs[0].refused);
	assert_false(runs[0].uploaded);
	free(runs);
}

static struct bci_manifest *manifest_of(const char *machine, const char *run,
					const char *const *files)
{
	struct bci_manifest *m = bci_manifest_new();
	char err[256];

	assert_non_null(m);
	assert_int_equal(bci_manifest_set(&m->machine, machine), 0);
	assert_int_equal(bci_manifest_set(&m->run_id, run), 0);
	for (; *files; files += 2)
		assert_int_equal(bci_manifest_add_file(m, files[0], strlen(files[1]),
						       files[1], err, sizeof(err)), 0);
	return m;
}

#define HEX_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEX_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/*
 * The master holds the run under another digest: the same run with files gone
 * (every file here is the master's, byte for byte) is recognised; a file the
 * master does not have, or has other bytes of, makes it another run.
 */
static void test_recognise(void **state)
{
	static const char *const held_files[] = { "0/out.txt", HEX_A, "1/out.txt", HEX_B,
						  "bootci-journal.txt", HEX_A, NULL };
	static const char *const fewer[] = { "bootci-journal.txt", HEX_A, NULL };
	static const char *const changed[] = { "1/out.txt", HEX_A, NULL };
	static const char *const extra[] = { "2/out.txt", HEX_A, "bootci-journal.txt", HEX_A, NULL };
	struct bci_manifest *held = manifest_of("m1", "r", held_files), *local;
	char why[256];

	(void)state;
	local = manifest_of("m1", "r", fewer);
	assert_int_equal(bci_collect_run_recognise(held, local, why, sizeof(why)), 1);
	bci_manifest_free(local);
	local = manifest_of("m1", "r", held_files);
	assert_int_equal(bci_collect_run_recognise(held, local, why, sizeof(why)), 1);
	bci_manifest_free(local);
	local = manifest_of("m1", "r", changed);
	assert_int_equal(bci_collect_run_recognise(held, local, why, sizeof(why)), 0);
	assert_string_equal(why, "1/out.txt differs from the master's copy (64 bytes here, 64 there)");
	bci_manifest_free(local);
	local = manifest_of("m1", "r", extra);
	assert_int_equal(bci_collect_run_recognise(held, local, why, sizeof(why)), 0);
	assert_string_equal(why, "2/out.txt is not in the master's copy");
	bci_manifest_free(local);
	local = manifest_of("m2", "r", fewer);
	assert_int_equal(bci_collect_run_recognise(held, local, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "m1's run r, this is m2's run r"));
	bci_manifest_free(local);
	bci_manifest_free(held);
}

static void test_machine_file(void **state)
{
	struct fixture *f = *state;
	struct bci_collect_machine machine;
	char path[PATH_MAX], err[512];

	PATHF(path, "%s/bootci-machine.conf", f->root);
	assert_int_equal(bci_collect_machine_read(path, &machine, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "provisioned"));

	put(f, "bootci-machine.conf", "machine = lab-01\ntoken = s3cret\n");
	/* 0644: the token would be readable by anyone on the machine. */
	assert_int_equal(bci_collect_machine_read(path, &machine, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "0600"));

	chmod(path, 0600);
	assert_int_equal(bci_collect_machine_read(path, &machine, err, sizeof(err)), 0);
	assert_string_equal(machine.name, "lab-01");
	assert_string_equal(machine.token, "s3cret");
	assert_string_equal(machine.master, "");

	put(f, "bootci-machine.conf", "machine = lab-01\ntoken = t\nmaster = http://10.0.2.2:8080\n");
	chmod(path, 0600);
	assert_int_equal(bci_collect_machine_read(path, &machine, err, sizeof(err)), 0);
	assert_string_equal(machine.master, "http://10.0.2.2:8080");

	put(f, "bootci-machine.conf", "machine = lab-01\n");
	chmod(path, 0600);
	assert_int_equal(bci_collect_machine_read(path, &machine, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'token' is missing"));

	put(f, "bootci-machine.conf", "machine = ../other\ntoken = t\n");
	chmod(path, 0600);
	assert_int_equal(bci_collect_machine_read(path, &machine, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "../other"));

	put(f, "bootci-machine.conf", "machine = m\ntoken = t\ncolour = blue\n");
	chmod(path, 0600);
	assert_int_equal(bci_collect_machine_read(path, &machine, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "colour"));
}

/* Reads the archive at @path: manifest.json first, then files matching it. */
static void check_archive(const char *path, const char *run_dir)
{
	struct archive *a = archive_read_new();
	struct archive_entry *entry;
	struct bci_manifest *m = NULL;
	char err[512], *text = NULL;
	size_t entries = 0;

	archive_read_support_filter_zstd(a);
	archive_read_support_format_tar(a);
	assert_int_equal(archive_read_open_filename(a, path, 65536), ARCHIVE_OK);
	while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
		size_t size = (size_t)archive_entry_size(entry);
		char *data = malloc(size + 1);
		char file[PATH_MAX], *want = NULL;

		assert_int_equal(archive_read_data(a, data, size), (la_ssize_t)size);
		data[size] = '\0';
		assert_int_equal(archive_entry_filetype(entry), AE_IFREG);
		assert_int_equal(archive_entry_uid(entry), 0);
		assert_int_equal(archive_entry_perm(entry), 0644);
		if (entries++ == 0) {
			assert_string_equal(archive_entry_pathname(entry), BCI_MANIFEST_NAME);
			assert_int_equal(bci_manifest_parse(data, size, &m, err, sizeof(err)), 0);
		} else {
			const struct bci_manifest_file *mf =
				bci_manifest_find(m, archive_entry_pathname(entry));
			assert_non_null(mf);
			assert_int_equal(mf->size, size);
			PATHF(file, "%s/%s", run_dir, mf->path);
			assert_int_equal(bci_read_file(file, &want, NULL, 1 << 20), 0);
			assert_memory_equal(want, data, size);
			free(want);
		}
		free(data);
	}
	assert_non_null(m);
	assert_int_equal(entries, m->file_count + 1);
	assert_string_equal(m->run_id, "r1");
	assert_string_equal(m->machine, "lab-01");
	assert_string_equal(m->image_id, "test-6.1");
	assert_string_equal(m->kernel, "6.1.0-57-amd64");
	assert_string_equal(m->cmdline, "console=ttyS0 bootci.run_id=r1");
	assert_string_equal(m->igt_version, "1.28-gabc");
	assert_int_equal(m->boot_count, 2);
	assert_string_equal(m->boots[0].name, "boot-0001");
	assert_int_equal(m->file_count, 5);
	archive_read_free(a);
	bci_manifest_free(m);
	free(text);
}

static void test_archive(void **state)
{
	struct fixture *f = *state;
	struct bci_run_archive_info info = {
		.machine = "lab-01", .run = "r1", .bootci_version = "0.1",
	};
	char run_dir[PATH_MAX], first[PATH_MAX], second[PATH_MAX], err[512];
	char *a = NULL, *b = NULL;
	size_t a_len = 0, b_len = 0;

	put(f, "runs/r1/bootci-identity.txt", "kernel 6.1.0-57-amd64 #1 SMP\nimage test-6.1\n");
	put(f, "runs/r1/bootci-journal.txt", "boot 1 0 6.1.0-57-amd64\nstart 0\nexit 0 0 1\ndone\n");
	put(f, "runs/r1/0/out.txt", "IGT-Version: 1.28-gabc\nStarting subtest: a\n");
	put(f, "runs/r1/boot-0001/boot.txt",
	    "boot 1\nkernel 6.1.0-57-amd64\ncmdline console=ttyS0 bootci.run_id=r1\n");
	put(f, "runs/r1/boot-0002/boot.txt", "boot 2\nkernel 6.1.0-57-amd64\ncmdline console=ttyS0 bootci.run_id=r1\n");
	PATHF(run_dir, "%s/r1", f->runs);
	PATHF(first, "%s/one.tar.zst", f->root);
	PATHF(second, "%s/two.tar.zst", f->root);

	assert_int_equal(bci_run_archive_write(run_dir, first, &info, err, sizeof(err)), 0);
	check_archive(first, run_dir);
	/* The same folder gives the same bytes: a resumed upload sends the rest of the same archive. */
	assert_int_equal(bci_run_archive_write(run_dir, second, &info, err, sizeof(err)), 0);
	assert_int_equal(bci_read_file(first, &a, &a_len, 1 << 24), 0);
	assert_int_equal(bci_read_file(second, &b, &b_len, 1 << 24), 0);
	assert_int_equal(a_len, b_len);
	assert_memory_equal(a, b, a_len);
	free(a);
	free(b);
}

static void test_archive_refuses_symlink(void **state)
{
	struct fixture *f = *state;
	struct bci_run_archive_info info = { .machine = "m", .run = "r2", .bootci_version = "0.1" };
	char run_dir[PATH_MAX], link[PATH_MAX], out[PATH_MAX], err[512];

	put(f, "runs/r2/x.txt", "x");
	PATHF(run_dir, "%s/r2", f->runs);
	PATHF(link, "%s/escape", run_dir);
	assert_int_equal(symlink("/etc/passwd", link), 0);
	PATHF(out, "%s/r2.tar.zst", f->root);
	assert_true(bci_run_archive_write(run_dir, out, &info, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "escape"));
	/* Nothing half-written is left. */
	assert_int_equal(access(out, F_OK), -1);
}

/* ---- the firmware's boot entries (efi_entries.c) on a fake efivarfs ---- */

#define EFIVARS "sys/firmware/efi/efivars/"
#define GLOBAL "-8be4df61-93ca-11d2-aa0d-00e098032b8c"

/* A variable as efivarfs shows it: 4 bytes of attributes (NV|BS|RT here), then @data. */
static void put_variable(const struct fixture *f, const char *name, const void *data, size_t size)
{
	char path[PATH_MAX];
	uint8_t buf[512] = { 0x07, 0x00, 0x00, 0x00 };

	assert_true(size + 4 <= sizeof(buf));
	memcpy(buf + 4, data, size);
	PATHF(path, "%s/" EFIVARS "%s", f->root, name);
	assert_int_equal(bci_write_file_atomic(path, buf, size + 4, 0644), 0);
}

/*
 * Entries written byte by byte as UEFI lays out an EFI_LOAD_OPTION (not by
 * lib/efi's own writer): OVMF's "UEFI Misc Device" as OVMF stores it, a
 * GPT HD()/File() entry, an inactive one, one whose description runs past
 * the end, and names that are no boot entry.
 */
static void test_efi_entries(void **state)
{
	static const uint8_t misc[] = {
		0x01, 0x00, 0x00, 0x00, 0x16, 0x00, 'U', 0, 'E', 0, 'F', 0, 'I', 0, ' ', 0,
		'M', 0, 'i', 0, 's', 0, 'c', 0, ' ', 0, 'D', 0, 'e', 0, 'v', 0, 'i', 0, 'c', 0,
		'e', 0, 0, 0,
		0x02, 0x01, 0x0c, 0x00, 0xd0, 0x41, 0x03, 0x0a, 0x00, 0x00, 0x00, 0x00, /* PciRoot(0x0) */
		0x01, 0x01, 0x06, 0x00, 0x00, 0x02,                                     /* Pci(0x2,0x0) */
		0x7f, 0xff, 0x04, 0x00,                                                 /* End */
		0x4e, 0xac, 0x08, 0x81, 0x11, 0x9f, 0x59, 0x4d, 0x85, 0x0e, 0xe2, 0x1a, 0x52, 0x2c,
		0x59, 0xb2, /* optional data: OVMF's own tag */
	};
	static const uint8_t known_good[] = {
		0x01, 0x00, 0x00, 0x00, 0x40, 0x00, 'k', 0, 'g', 0, 0, 0,
		/* HD(1,GPT,6b6f6f62-6369-4b47-8000-000000000002,0x800,0x20000) */
		0x04, 0x01, 0x2a, 0x00, 0x01, 0x00, 0x00, 0x00,
		0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x62, 0x6f, 0x6f, 0x6b, 0x69, 0x63, 0x47, 0x4b, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
		0x02, 0x02,
		/* File(\k.efi) */
		0x04, 0x04, 0x12, 0x00, '\\', 0, 'k', 0, '.', 0, 'e', 0, 'f', 0, 'i', 0, 0, 0,
		0x7f, 0xff, 0x04, 0x00,
	};
	static const uint8_t inactive[] = { 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 'o', 0, 'f', 0, 'f', 0,
					    0, 0, 0x7f, 0xff, 0x04, 0x00 };
	static const uint8_t truncated[] = { 0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 'x', 0, 'y', 0 };
	struct fixture *f = *state;
	struct bci_manifest *m = bci_manifest_new();
	char path[PATH_MAX];

	assert_non_null(m);
	/* No EFI at all (a BIOS machine), or efivarfs not mounted: nothing is filled in. */
	assert_int_equal(bci_collect_efi_entries(f->root, m), -ENODEV);
	PATHF(path, "%s/" EFIVARS, f->root);
	assert_int_equal(bci_mkdir_p(path, 0755), 0);
	assert_int_equal(bci_collect_efi_entries(f->root, m), -ENODEV);
	assert_int_equal(m->efi_boot_current, -1);
	assert_int_equal(m->efi_entry_count, 0);

	put_variable(f, "Boot0003" GLOBAL, misc, sizeof(misc));
	put_variable(f, "Boot0001" GLOBAL, known_good, sizeof(known_good));
	put_variable(f, "Boot000A" GLOBAL, inactive, sizeof(inactive));
	put_variable(f, "Boot000B" GLOBAL, truncated, sizeof(truncated));
	/* Not boot entries: another GUID, lower case (variable names are case sensitive). */
	put_variable(f, "Boot0004-cfc8fc79-be2e-4ddc-97f0-9f98bfe298a0", misc, sizeof(misc));
	put_variable(f, "Boot000c" GLOBAL, misc, sizeof(misc));
	put_variable(f, "boot0005" GLOBAL, misc, sizeof(misc));
	put_variable(f, "BootOrder" GLOBAL, "\x01\x00\x03\x00\x0a\x00", 6);
	put_variable(f, "BootCurrent" GLOBAL, "\x01\x00", 2);

	assert_int_equal(bci_collect_efi_entries(f->root, m), 0);
	assert_int_equal(m->efi_boot_current, 1);
	assert_int_equal(m->efi_boot_order_count, 3);
	assert_int_equal(m->efi_boot_order[0], 1);
	assert_int_equal(m->efi_boot_order[1], 3);
	assert_int_equal(m->efi_boot_order[2], 0xa);
	/* By number, whatever order the folder lists them in. */
	assert_int_equal(m->efi_entry_count, 4);
	assert_int_equal(m->efi_entries[0].number, 1);
	assert_string_equal(m->efi_entries[0].label, "kg");
	assert_true(m->efi_entries[0].active);
	assert_string_equal(m->efi_entries[0].device_path,
			    "HD(1,GPT,6b6f6f62-6369-4b47-8000-000000000002,0x800,0x20000)/File(\\k.efi)");
	assert_int_equal(m->efi_entries[1].number, 3);
	assert_string_equal(m->efi_entries[1].label, "UEFI Misc Device");
	assert_true(m->efi_entries[1].active);
	assert_string_equal(m->efi_entries[1].device_path, "PciRoot(0x0)/Pci(0x2,0x0)");
	assert_int_equal(m->efi_entries[2].number, 0xa);
	assert_string_equal(m->efi_entries[2].label, "off");
	assert_false(m->efi_entries[2].active);
	assert_string_equal(m->efi_entries[2].device_path, "");
	assert_int_equal(m->efi_entries[3].number, 0xb);
	assert_string_equal(m->efi_entries[3].label, "(invalid load option)");
	assert_false(m->efi_entries[3].active);
	bci_manifest_free(m);

	/* BootCurrent and BootOrder absent: unknown and an empty list, the entries still there. */
	m = bci_manifest_new();
	assert_non_null(m);
	PATHF(path, "%s/" EFIVARS "BootOrder" GLOBAL, f->root);
	assert_int_equal(unlink(path), 0);
	PATHF(path, "%s/" EFIVARS "BootCurrent" GLOBAL, f->root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(bci_collect_efi_entries(f->root, m), 0);
	assert_int_equal(m->efi_boot_current, -1);
	assert_int_equal(m->efi_boot_order_count, 0);
	assert_int_equal(m->efi_entry_count, 4);
	bci_manifest_free(m);
}

#define OURS "1111111111111111111111111111111111111111111111111111111111111111"
#define THEIRS "2222222222222222222222222222222222222222222222222222222222222222"

static enum bci_collect_master_state answer(const char *body, uint64_t *received)
{
	char err[256];

	*received = 77;
	return bci_collect_master_state_parse(body, strlen(body), OURS, 1000, received, err,
					      sizeof(err));
}

static void test_master_answers(void **state)
{
	uint64_t received;

	(void)state;
	assert_int_equal(answer("{\"state\": \"absent\", \"received\": 0}\n", &received), BCI_MASTER_SEND);
	assert_int_equal(received, 0);
	/* A partial upload of our bytes resumes where the master says. */
	assert_int_equal(answer("{\"state\": \"partial\", \"sha256\": \"" OURS "\", \"received\": 600}", &received),
			 BCI_MASTER_SEND);
	assert_int_equal(received, 600);
	/* Of other bytes, or longer than ours: from the start. */
	assert_int_equal(answer("{\"state\": \"partial\", \"sha256\": \"" THEIRS "\", \"received\": 600}", &received),
			 BCI_MASTER_SEND);
	assert_int_equal(received, 0);
	assert_int_equal(answer("{\"state\": \"partial\", \"sha256\": \"" OURS "\", \"received\": 1001}", &received),
			 BCI_MASTER_SEND);
	assert_int_equal(received, 0);
	assert_int_equal(answer("{\"state\": \"stored\", \"sha256\": \"" OURS "\", \"received\": 1000}", &received),
			 BCI_MASTER_HOLDS);
	assert_int_equal(answer("{\"state\": \"stored\", \"sha256\": \"" THEIRS "\"}", &received),
			 BCI_MASTER_CONFLICT);
	assert_int_equal(answer("{\"state\": \"stored\"}", &received), BCI_MASTER_CONFLICT);
	/* Nothing usable: ask again later, never a guess. */
	assert_int_equal(answer("{\"state\": \"partial\", \"sha256\": \"" OURS "\"}", &received),
			 BCI_MASTER_UNCLEAR);
	assert_int_equal(answer("{\"state\": \"partial\", \"sha256\": \"" OURS "\", \"received\": -5}", &received),
			 BCI_MASTER_UNCLEAR);
	assert_int_equal(answer("{\"state\": \"partial\", \"received\": \"600\"}", &received), BCI_MASTER_UNCLEAR);
	assert_int_equal(answer("{\"state\": \"sideways\"}", &received), BCI_MASTER_UNCLEAR);
	assert_int_equal(answer("[1, 2]", &received), BCI_MASTER_UNCLEAR);
	assert_int_equal(answer("{\"state\": \"absent\"} trailing", &received), BCI_MASTER_UNCLEAR);
	assert_int_equal(answer("<html>502 Bad Gateway</html>", &received), BCI_MASTER_UNCLEAR);
	assert_int_equal(answer("", &received), BCI_MASTER_UNCLEAR);
	assert_int_equal(received, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_run_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs_missing_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_ended_by_master, setup, teardown),
		cmocka_unit_test(test_master_job_answers),
		cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_finishes_deletions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs_left_behind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_refused, setup, teardown),
		cmocka_unit_test(test_recognise),
		cmocka_unit_test_setup_teardown(test_machine_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_archive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_archive_refuses_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_efi_entries, setup, teardown),
		cmocka_unit_test(test_master_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
