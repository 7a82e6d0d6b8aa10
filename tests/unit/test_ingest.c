// SPDX-License-Identifier: MIT
/*
 * Ingest (aggregator/master/ingest/ingest.c) into a real store: SQLite in a temporary
 * folder, or the database in BOOTCI_TEST_STORE_URL (store-postgres.t runs
 * this suite against its own PostgreSQL server).
 *
 * - every igt_runner conformance folder (../shared/conformance/) and bootci
 *   scenario (tests/resultgen/scenarios/): the rows are exactly the tests
 *   and results of its reference.json (read here with json-c, independently
 *   of the code under test);
 * - the same run twice stores nothing more; another archive for the same run
 *   is refused;
 * - archives that lie about their files (changed, missing, extra), escape
 *   their folder, or name another machine are refused, nothing stored, and
 *   nothing left in the data folder;
 * - an ingest that fails half-way (after its run and boot rows) leaves
 *   nothing;
 * - boots, their endings and crash records, suspend cycles;
 * - a test's out/err/dmesg read back through the extract-once cache.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pgreset.h"

#include "../../aggregator/collect/collect.h"
#include "run_archive.h"
#include "../../aggregator/master/ingest/ingest.h"
#include "../../aggregator/master/store/cache.h"
#include "../../aggregator/master/store/store.h"
#include "results_dir.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
	char dir[PATH_MAX];
	char data[PATH_MAX + 16];
	char url[PATH_MAX + 64];
	struct bci_store *store;
	char err[4096];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *url = getenv("BOOTCI_TEST_STORE_URL");

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/bootci-ingest-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->data, sizeof(f->data), "%s/data", f->dir);
	if (url && *url) {
		snprintf(f->url, sizeof(f->url), "%s", url);
		pg_reset(url);
	} else {
		snprintf(f->url, sizeof(f->url), "sqlite:%s/bootci.sqlite", f->dir);
	}
	if (bci_store_open(f->url, f->data, &f->store, f->err, sizeof(f->err)) < 0)
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

/* ---- helpers ---- */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX * 2], *slash;
	FILE *out;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	out = fopen(path, "w");
	assert_non_null(out);
	fputs(text, out);
	assert_int_equal(fclose(out), 0);
}

static char *read_fd(int fd)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;

	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = read(fd, buf + len, 4096);
		assert_true(n >= 0);
		len += (size_t)n;
	} while (n > 0);
	buf[len] = '\0';
	return buf;
}

static char *read_path(const char *path)
{
	int fd = open(path, O_RDONLY);
	char *text;

	if (fd < 0)
		return NULL;
	text = read_fd(fd);
	close(fd);
	return text;
}

static int count_runs(struct fixture *f)
{
	int n = bci_store_runs_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err));

	assert_true(n >= 0);
	return n;
}

/* Entries in DATA/@sub (archives, cache), dot files included. */
static int count_entries(struct fixture *f, const char *sub)
{
	char path[PATH_MAX * 2];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", f->data, sub);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir)))
		n += strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
	closedir(dir);
	return n;
}

static const char *source_dir(void)
{
	const char *src = getenv("SRC");

	return src && *src ? src : ".";
}

/* A small bootci run folder: three jobs, boots with a crash, suspend cycles. */
static void run_folder_make(const char *dir)
{
	struct bci_suspend_cycle_line cycles[] = {
		{ .cycle = "mem-0001", .result = "pass", .wall = 6.5, .suspended = 5.25,
		  .latency = 1.25, .kernel_suspend = 0.5, .kernel_resume = 0.75, .wake = "rtc" },
		{ .cycle = "freeze_devices-0002", .result = "pass", .wall = 1, .suspended = 0,
		  .latency = 1, .kernel_suspend = -1, .kernel_resume = -1, .wake = "pm_test" },
	};
	char line[256], text[1024] = "";

	mkdir(dir, 0755);
	write_file(dir, "metadata.txt", "abort_mask : 0\ndmesg_warn_level : 4\n");
	write_file(dir, "joblist.txt", "igt_a basic\nigt_b crash\nigt_c slow\n");
	write_file(dir, "uname.txt", "Linux lab 6.1.0-test #1 SMP x86_64 GNU/Linux\n");
	write_file(dir, "starttime.txt", "1700000000.000000\n");
	write_file(dir, "0/journal.txt", "basic\nexit:0 (1.500s)\n");
	write_file(dir, "0/out.txt", "IGT-Version: 1.28\nStarting subtest: basic\nSubtest basic: SUCCESS (1.500s)\n");
	write_file(dir, "0/err.txt", "a note on stderr\n");
	write_file(dir, "0/dmesg.txt", "");
	write_file(dir, "1/journal.txt", "crash\n");
	write_file(dir, "1/out.txt", "IGT-Version: 1.28\nStarting subtest: crash\n");
	write_file(dir, "1/err.txt", "");
	write_file(dir, "1/dmesg.txt", "");
	write_file(dir, "boot-0001/boot.txt",
		   "boot 1\nboot_id x\ntime 1700000000\nkernel 6.1.0-test\ncmdline console=ttyS0 quiet\n"
		   "previous none (first boot of the run)\npstore_records 0\nefi_dump_variables 0\n");
	write_file(dir, "boot-0002/boot.txt",
		   "boot 2\nboot_id y\ntime 1700000100\nkernel 6.1.0-test\ncmdline console=ttyS0 quiet\n"
		   "previous kernel crash (pstore: dmesg-efi_pstore-1)\npstore_records 1\n");
	write_file(dir, "boot-0002/pstore/dmesg-efi_pstore-1", "Kernel panic - not syncing\n");
	write_file(dir, "boot-0002/end.txt", "run finished\n");
	for (size_t i = 0; i < 2; i++) {
		bci_suspend_cycle_line_format(line, sizeof(line), &cycles[i]);
		strcat(text, line);
	}
	strcat(text, "mem-0003 pa");	/* the line a crash cut short */
	write_file(dir, "suspend-cycles.txt", text);
}

/* Rows as text, to compare whole tables at once. */
struct rows {
	char text[8192];
};

static void rows_add(struct rows *r, const char *fmt, ...)
{
	size_t len = strlen(r->text);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->text + len, sizeof(r->text) - len, fmt, ap);
	va_end(ap);
}

static int boot_row(const struct bci_store_boot *b, void *ctx)
{
	rows_add(ctx, "%d|%.0f|%s|%s|%s|%s\n", b->index, b->time, b->kernel, b->cmdline, b->previous,
		 b->ending);
	return 0;
}

static int crash_row(const struct bci_store_crash *c, void *ctx)
{
	rows_add(ctx, "%d|%s|%s|%s\n", c->boot, c->source, c->name, c->path);
	return 0;
}

static int suspend_row(const struct bci_store_suspend *s, void *ctx)
{
	rows_add(ctx, "%d|%s|%s|%.3f|%.3f|%.3f|%.3f|%.3f|%s\n", s->cycle, s->state, s->result,
		 s->wall, s->suspended, s->latency, s->kernel_suspend, s->kernel_resume,
		 s->woke ? s->woke : "-");
	return 0;
}

static int result_row(const struct bci_store_result *r, void *ctx)
{
	rows_add(ctx, "%d|%s|%s\n", r->job, r->name, r->result);
	return 0;
}

struct run_copy {
	struct bci_store_run run;
	char text[2048];
};

static int run_copy(const struct bci_store_run *run, void *ctx)
{
	struct run_copy *c = ctx;

	c->run = *run;
	snprintf(c->text, sizeof(c->text), "%s|%s|%s|%s|%s|%s|%.0f|%.0f", run->machine, run->run_id,
		 run->kernel ? run->kernel : "-", run->cmdline ? run->cmdline : "-",
		 run->archive_root, run->state, run->started, run->ended);
	c->run.machine = c->run.run_id = c->run.build = c->run.image_id = c->run.kernel = NULL;
	c->run.cmdline = c->run.digest = c->run.archive_path = c->run.archive_root = NULL;
	c->run.state = NULL;
	return 0;
}

static int64_t run_key(struct fixture *f, const char *machine, const char *run_id)
{
	struct run_copy copy;

	if (bci_store_run_get(f->store, machine, run_id, run_copy, &copy, f->err, sizeof(f->err)) < 0)
		fail_msg("%s/%s: %s", machine, run_id, f->err);
	return copy.run.key;
}

/* ---- results are exactly reference.json's ---- */

struct expected {
	json_object *tests;
	int seen, wrong;
	const char *scenario;
};

static int result_compare(const struct bci_store_result *r, void *ctx)
{
	struct expected *e = ctx;
	json_object *test, *value;

	e->seen++;
	if (!json_object_object_get_ex(e->tests, r->name, &test) ||
	    !json_object_object_get_ex(test, "result", &value)) {
		print_error("%s: %s is not in reference.json\n", e->scenario, r->name);
		e->wrong++;
		return 0;
	}
	if (strcmp(json_object_get_string(value), r->result)) {
		print_error("%s: %s: stored %s, reference %s\n", e->scenario, r->name, r->result,
			    json_object_get_string(value));
		e->wrong++;
	}
	if (json_object_object_get_ex(test, "time", &value)) {
		json_object *start, *end;

		if (json_object_object_get_ex(value, "start", &start) &&
		    json_object_object_get_ex(value, "end", &end)) {
			double d = json_object_get_double(end) - json_object_get_double(start);

			if (fabs(d - r->duration) > 1e-6) {
				print_error("%s: %s: duration %f, reference %f\n", e->scenario,
					    r->name, r->duration, d);
				e->wrong++;
			}
		}
	}
	return 0;
}

static void scenario_check(struct fixture *f, const char *dir, const char *name)
{
	char path[PATH_MAX * 4];
	struct expected e = { .scenario = name };
	struct bci_ingest_summary summary;
	json_object *reference;
	char *text;
	int ret;

	snprintf(path, sizeof(path), "%s/reference.json", dir);
	text = read_path(path);
	if (!text)
		return;
	reference = json_tokener_parse(text);
	free(text);
	if (!reference || !json_object_object_get_ex(reference, "tests", &e.tests))
		fail_msg("%s: reference.json does not parse", path);
	ret = bci_ingest_dir(f->store, f->data, dir, "lab-1", NULL, NULL, &summary, f->err,
			     sizeof(f->err));
	if (ret != BCI_INGEST_STORED)
		fail_msg("%s: %d %s", name, ret, f->err);
	assert_int_equal(bci_store_results_each(f->store, run_key(f, "lab-1", name), result_compare,
						&e, f->err, sizeof(f->err)),
			 json_object_object_length(e.tests));
	assert_int_equal(e.wrong, 0);
	assert_int_equal(summary.results, json_object_object_length(e.tests));
	json_object_put(reference);
}

static int scenarios_in(struct fixture *f, const char *parent)
{
	struct dirent **names;
	int n, checked = 0;

	n = scandir(parent, &names, NULL, alphasort);
	if (n < 0)
		fail_msg("%s: %s", parent, strerror(errno));
	for (int i = 0; i < n; i++) {
		char dir[PATH_MAX * 2], ref[PATH_MAX * 3];
		struct stat st;

		snprintf(dir, sizeof(dir), "%s/%s", parent, names[i]->d_name);
		snprintf(ref, sizeof(ref), "%s/reference.json", dir);
		if (names[i]->d_name[0] != '.' && stat(ref, &st) == 0) {
			scenario_check(f, dir, names[i]->d_name);
			checked++;
		}
		free(names[i]);
	}
	free(names);
	return checked;
}

static void test_conformance_scenarios(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	int n;

	snprintf(path, sizeof(path), "%s/../shared/conformance/igt-runner-results", source_dir());
	n = scenarios_in(f, path);
	assert_true(n >= 10);
	snprintf(path, sizeof(path), "%s/tests/resultgen/scenarios", source_dir());
	assert_true(scenarios_in(f, path) >= 2);
}

/* ---- a bootci run folder: boots, crashes, suspend cycles, logs ---- */

static void test_bootci_run(void **state)
{
	struct fixture *f = *state;
	struct bci_ingest_summary summary;
	struct run_copy copy;
	struct rows rows = { "" };
	char dir[PATH_MAX + 16];
	int64_t key;

	snprintf(dir, sizeof(dir), "%s/run-42", f->dir);
	run_folder_make(dir);
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-7", NULL, NULL, &summary, f->err,
					sizeof(f->err)), BCI_INGEST_STORED);
	assert_string_equal(summary.machine, "lab-7");
	assert_string_equal(summary.run_id, "run-42");
	assert_int_equal(summary.boots, 2);
	assert_int_equal(summary.suspend_cycles, 2);
	assert_int_equal(bci_store_run_get(f->store, "lab-7", "run-42", run_copy, &copy, f->err,
					   sizeof(f->err)), 0);
	/* No endtime.txt: the run did not finish. Kernel and command line from its first boot. */
	assert_string_equal(copy.text, "lab-7|run-42|6.1.0-test|console=ttyS0 quiet||incomplete|"
				       "1700000000|0");
	key = copy.run.key;

	assert_int_equal(bci_store_boots_each(f->store, key, boot_row, &rows, f->err, sizeof(f->err)), 2);
	assert_string_equal(rows.text,
			    "1|1700000000|6.1.0-test|console=ttyS0 quiet|none (first boot of the run)|"
			    "kernel crash (pstore: dmesg-efi_pstore-1)\n"
			    "2|1700000100|6.1.0-test|console=ttyS0 quiet|kernel crash (pstore: "
			    "dmesg-efi_pstore-1)|clean: run finished\n");
	rows.text[0] = '\0';
	assert_int_equal(bci_store_crashes_each(f->store, key, crash_row, &rows, f->err, sizeof(f->err)), 1);
	assert_string_equal(rows.text, "2|pstore|dmesg-efi_pstore-1|boot-0002/pstore/dmesg-efi_pstore-1\n");
	rows.text[0] = '\0';
	assert_int_equal(bci_store_suspends_each(f->store, key, suspend_row, &rows, f->err, sizeof(f->err)), 2);
	assert_string_equal(rows.text,
			    "1|mem|pass|6.500|5.250|1.250|0.500|0.750|rtc\n"
			    "2|freeze_devices|pass|1.000|0.000|1.000|-1.000|-1.000|pm_test\n");
	rows.text[0] = '\0';
	assert_int_equal(bci_store_results_each(f->store, key, result_row, &rows, f->err, sizeof(f->err)), 3);
	assert_string_equal(rows.text, "0|igt@igt_a@basic|pass\n1|igt@igt_b@crash|incomplete\n"
				       "2|igt@igt_c@slow|notrun\n");
}

/*
 * A run of the executor's test= program, laid out as executor/test_program.c
 * writes it: test/result.txt, out.txt, err.txt, boot folders, no igt_runner
 * files (no metadata.txt).
 */
static void program_folder_make(const char *dir, const char *result)
{
	mkdir(dir, 0755);
	write_file(dir, BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_TEST_RESULT, result);
	write_file(dir, BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_JOB_OUT, "checking the GPU\n");
	write_file(dir, BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_JOB_ERR, "");
	write_file(dir, BCI_RESULTS_BOOTCI_JOURNAL, "");
	write_file(dir, BCI_RESULTS_IDENTITY, "kernel 6.1.0-test #1\nimage lab-image\ntest /usr/bin/gpu-check --fast\n");
	write_file(dir, "boot-0001/boot.txt",
		   "boot 1\nboot_id x\ntime 1700000000\nkernel 6.1.0-test\ncmdline console=ttyS0 quiet\n"
		   "previous none (first boot of the run)\npstore_records 0\n");
	write_file(dir, "boot-0002/boot.txt",
		   "boot 2\nboot_id y\ntime 1700000100\nkernel 6.1.0-test\ncmdline console=ttyS0 quiet\n"
		   "previous kernel crash (pstore: dmesg-efi_pstore-1)\npstore_records 1\n");
	write_file(dir, "boot-0002/pstore/dmesg-efi_pstore-1", "Kernel panic - not syncing\n");
	write_file(dir, "boot-0002/end.txt", "run finished\n");
}

static void program_run_check(struct fixture *f, const char *run_id, const char *result,
			      const char *run_text, const char *result_text)
{
	struct bci_ingest_summary summary;
	struct run_copy copy;
	struct rows rows = { "" };
	char dir[PATH_MAX + 64];
	int ret;

	snprintf(dir, sizeof(dir), "%s/%s", f->dir, run_id);
	program_folder_make(dir, result);
	ret = bci_ingest_dir(f->store, f->data, dir, "lab-7", NULL, NULL, &summary, f->err,
			     sizeof(f->err));
	if (ret != BCI_INGEST_STORED)
		fail_msg("%s: %d: %s", run_id, ret, f->err);
	assert_int_equal(summary.boots, 2);
	assert_int_equal(bci_store_run_get(f->store, "lab-7", run_id, run_copy, &copy, f->err,
					   sizeof(f->err)), 0);
	assert_string_equal(copy.text, run_text);
	assert_int_equal(bci_store_results_each(f->store, copy.run.key, result_row, &rows, f->err,
						sizeof(f->err)), 1);
	assert_string_equal(rows.text, result_text);
	rows.text[0] = '\0';
	assert_int_equal(bci_store_crashes_each(f->store, copy.run.key, crash_row, &rows, f->err,
						sizeof(f->err)), 1);
	assert_string_equal(rows.text, "2|pstore|dmesg-efi_pstore-1|boot-0002/pstore/dmesg-efi_pstore-1\n");
	/* Stored once: the same folder again is already there, not a retry. */
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-7", NULL, NULL, &summary, f->err,
					sizeof(f->err)), BCI_INGEST_ALREADY);
}

static void test_program_run(void **state)
{
	struct fixture *f = *state;
	struct bci_ingest_summary summary;
	char dir[PATH_MAX + 64];

	program_run_check(f, "prog-fail",
			  "command /usr/bin/gpu-check --fast\nstate done\nexit-status 3\nduration 2.500\n",
			  "lab-7|prog-fail|6.1.0-test|console=ttyS0 quiet||done|0|0",
			  "-1|bootci@program@gpu-check|fail\n");
	program_run_check(f, "prog-pass",
			  "command /usr/bin/gpu-check\nstate done\nexit-status 0\nduration 0.125\n",
			  "lab-7|prog-pass|6.1.0-test|console=ttyS0 quiet||done|0|0",
			  "-1|bootci@program@gpu-check|pass\n");
	program_run_check(f, "prog-signal",
			  "command gpu-check\nstate done\nsignal 11 Segmentation fault\nduration 1.000\n",
			  "lab-7|prog-signal|6.1.0-test|console=ttyS0 quiet||done|0|0",
			  "-1|bootci@program@gpu-check|fail\n");
	program_run_check(f, "prog-timeout",
			  "command /bin/sleep 1000\nstate done\nsignal 9 Killed\ntimeout yes\nduration 60.000\n",
			  "lab-7|prog-timeout|6.1.0-test|console=ttyS0 quiet||done|0|0",
			  "-1|bootci@program@sleep|timeout\n");
	/* The machine crashed while the program ran: result.txt still says running. */
	program_run_check(f, "prog-running", "command /usr/bin/gpu-check\nstate running\n",
			  "lab-7|prog-running|6.1.0-test|console=ttyS0 quiet||incomplete|0|0",
			  "-1|bootci@program@gpu-check|incomplete\n");
	/* Its output could not be written whole (a full partition): not a pass. */
	program_run_check(f, "prog-cut",
			  "command /usr/bin/gpu-check\nstate done\nexit-status 0\nduration 3.000\n"
			  "incomplete out.txt 7340032 No space left on device\n",
			  "lab-7|prog-cut|6.1.0-test|console=ttyS0 quiet||done|0|0",
			  "-1|bootci@program@gpu-check|incomplete\n");

	/* A result.txt that says nothing usable is refused, naming the file, and nothing is stored. */
	snprintf(dir, sizeof(dir), "%s/prog-bad", f->dir);
	program_folder_make(dir, "command /usr/bin/gpu-check\nstate exploded\n");
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-7", NULL, NULL, &summary, f->err,
					sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "test/result.txt: bad line 'state exploded'"));
	assert_int_equal(count_runs(f), 6);
}

/*
 * Runs that never began: a planning boot the executor kept aside as
 * <run>.superseded-1 (metadata.txt, no joblist.txt) and a folder whose only
 * boot ended before its plan (neither joblist.txt nor test/result.txt).
 * Each is stored with its boots and crash records and no result, once: an
 * ingest that failed on them was retried by serve at every restart.
 */
static void test_unbegun_run(void **state)
{
	static const char *const runs[] = { "plan.superseded-1", "never-began" };
	struct fixture *f = *state;
	struct bci_ingest_summary summary;
	char dir[PATH_MAX + 64], want[256];
	struct run_copy copy;
	struct rows rows = { "" };

	for (size_t i = 0; i < 2; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", f->dir, runs[i]);
		mkdir(dir, 0755);
		if (i == 0)
			write_file(dir, "metadata.txt", "abort_mask : 0\n");
		write_file(dir, BCI_RESULTS_BOOTCI_JOURNAL, "boot 1 12 6.1.0-test\n");
		write_file(dir, BCI_RESULTS_IDENTITY, "kernel 6.1.0-test #1\nimage lab-image\n");
		write_file(dir, "boot-0001/boot.txt",
			   "boot 1\nboot_id x\ntime 1700000000\nkernel 6.1.0-test\ncmdline console=ttyS0\n"
			   "previous none (first boot of the run)\npstore_records 1\n");
		write_file(dir, "boot-0001/pstore/dmesg-efi_pstore-1", "Kernel panic - not syncing\n");
		write_file(dir, "boot-0001/end.txt", "error: the executor could not go on (see the console)\n");
		if (bci_ingest_dir(f->store, f->data, dir, "lab-7", NULL, NULL, &summary, f->err,
				   sizeof(f->err)) != BCI_INGEST_STORED)
			fail_msg("%s: %s", runs[i], f->err);
		assert_int_equal(summary.results, 0);
		assert_int_equal(summary.boots, 1);
		assert_int_equal(bci_store_run_get(f->store, "lab-7", runs[i], run_copy, &copy, f->err,
						   sizeof(f->err)), 0);
		snprintf(want, sizeof(want), "lab-7|%s|6.1.0-test|console=ttyS0||incomplete|0|0", runs[i]);
		assert_string_equal(copy.text, want);
		rows.text[0] = '\0';
		assert_int_equal(bci_store_results_each(f->store, copy.run.key, result_row, &rows,
							f->err, sizeof(f->err)), 0);
		assert_int_equal(bci_store_boots_each(f->store, copy.run.key, boot_row, &rows, f->err,
						      sizeof(f->err)), 1);
		assert_int_equal(bci_store_crashes_each(f->store, copy.run.key, crash_row, &rows,
							f->err, sizeof(f->err)), 1);
		assert_non_null(strstr(rows.text, "error: the executor could not go on"));
		assert_non_null(strstr(rows.text, "1|pstore|dmesg-efi_pstore-1|"));
		assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-7", NULL, NULL, &summary,
						f->err, sizeof(f->err)), BCI_INGEST_ALREADY);
	}
	assert_int_equal(count_runs(f), 2);
}

static void test_log_fetch(void **state)
{
	struct fixture *f = *state;
	char dir[PATH_MAX + 16], cache[PATH_MAX * 2], *text;
	struct bci_ingest_summary summary;
	int fd;

	snprintf(dir, sizeof(dir), "%s/run-logs", f->dir);
	run_folder_make(dir);
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-7", NULL, NULL, &summary, f->err,
					sizeof(f->err)), BCI_INGEST_STORED);
	fd = bci_store_test_log_open(f->store, f->data, "lab-7", "run-logs", "igt@igt_a@basic", "out",
				     f->err, sizeof(f->err));
	if (fd < 0)
		fail_msg("%s", f->err);
	text = read_fd(fd);
	close(fd);
	assert_string_equal(text, "IGT-Version: 1.28\nStarting subtest: basic\nSubtest basic: SUCCESS (1.500s)\n");
	free(text);
	/* An empty log has no frame in the run's log file: read from it (no unpacking), empty. */
	fd = bci_cache_logs_open(f->data, summary.digest, 0, "dmesg", f->err, sizeof(f->err));
	if (fd < 0)
		fail_msg("%s", f->err);
	text = read_fd(fd);
	close(fd);
	assert_string_equal(text, "");
	free(text);

	/* The cache is disposable: gone, the next fetch unpacks the archive again. */
	snprintf(cache, sizeof(cache), "%s/cache/%s", f->data, summary.digest);
	{
		char cmd[PATH_MAX * 3];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
		assert_int_equal(system(cmd), 0);
	}
	fd = bci_store_test_log_open(f->store, f->data, "lab-7", "run-logs", "igt@igt_a@basic", "err",
				     f->err, sizeof(f->err));
	if (fd < 0)
		fail_msg("%s", f->err);
	text = read_fd(fd);
	close(fd);
	assert_string_equal(text, "a note on stderr\n");
	free(text);

	assert_int_equal(bci_store_test_log_open(f->store, f->data, "lab-7", "run-logs",
						 "igt@igt_a@basic", "../boot", f->err, sizeof(f->err)),
			 -EINVAL);
	assert_int_equal(bci_store_test_log_open(f->store, f->data, "lab-7", "run-logs",
						 "igt@nope@x", "out", f->err, sizeof(f->err)),
			 -ENOENT);
	/* igt_c never ran: its job folder was never made. */
	assert_int_equal(bci_store_test_log_open(f->store, f->data, "lab-7", "run-logs",
						 "igt@igt_c@slow", "out", f->err, sizeof(f->err)),
			 -ENOENT);
}

/* ---- the stream: nothing unpacked, the run's log file ---- */

/* What DATA/cache holds after an ingest: the run's log file, a regular file, and nothing else. */
static void test_stream_unpacks_nothing(void **state)
{
	struct fixture *f = *state;
	struct bci_ingest_summary summary;
	char dir[PATH_MAX + 16], path[PATH_MAX * 2];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/run-stream", f->dir);
	run_folder_make(dir);
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-7", NULL, NULL, &summary, f->err,
					sizeof(f->err)), BCI_INGEST_STORED);
	assert_int_equal(count_entries(f, "cache"), 1);
	snprintf(path, sizeof(path), "%s/cache/%s.logs", f->data, summary.digest);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	snprintf(path, sizeof(path), "%s/cache/%s", f->data, summary.digest);
	assert_int_equal(lstat(path, &st), -1);
	assert_int_equal(count_entries(f, "tmp"), 0);
}

static char *log_fetch(struct fixture *f, const char *run, const char *test, const char *which)
{
	char *text;
	int fd;

	fd = bci_store_test_log_open(f->store, f->data, "lab-7", run, test, which, f->err,
				     sizeof(f->err));
	if (fd < 0)
		fail_msg("%s %s: %s", test, which, f->err);
	text = read_fd(fd);
	close(fd);
	return text;
}

/* The log file answers; cut short or gone, the archive is unpacked instead and answers the same. */
static void test_log_file(void **state)
{
	struct fixture *f = *state;
	static const char *const which[] = { "out", "err", "dmesg" };
	char dir[PATH_MAX + 16], path[PATH_MAX * 2], cache[PATH_MAX * 2];
	struct bci_ingest_summary summary;
	char *first[3];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/run-logfile", f->dir);
	run_folder_make(dir);
	write_file(dir, "1/dmesg.txt", "<4>[ 12.000000] a warning of the kernel\n");
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-7", NULL, NULL, &summary, f->err,
					sizeof(f->err)), BCI_INGEST_STORED);
	snprintf(path, sizeof(path), "%s/cache/%s.logs", f->data, summary.digest);
	snprintf(cache, sizeof(cache), "%s/cache/%s", f->data, summary.digest);
	for (int i = 0; i < 3; i++)
		first[i] = log_fetch(f, "run-logfile", "igt@igt_b@crash", which[i]);
	assert_string_equal(first[0], "IGT-Version: 1.28\nStarting subtest: crash\n");
	assert_string_equal(first[1], "");
	assert_string_equal(first[2], "<4>[ 12.000000] a warning of the kernel\n");
	/* Answered from the log file alone: nothing was unpacked. */
	assert_int_equal(lstat(cache, &st), -1);

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size / 2), 0);
	for (int i = 0; i < 3; i++) {
		char *again = log_fetch(f, "run-logfile", "igt@igt_b@crash", which[i]);

		assert_string_equal(again, first[i]);
		free(again);
	}
	assert_int_equal(lstat(cache, &st), 0);	/* the fallback unpacked the run */
	assert_int_equal(unlink(path), 0);
	for (int i = 0; i < 3; i++) {
		char *again = log_fetch(f, "run-logfile", "igt@igt_b@crash", which[i]);

		assert_string_equal(again, first[i]);
		free(again);
		free(first[i]);
	}
}

/* A job's file over what is held in memory (16 MiB) goes through a temporary file, whole. */
static void test_large_job_file(void **state)
{
	struct fixture *f = *state;
	char dir[PATH_MAX + 16], path[PATH_MAX * 2], *text;
	size_t size = (17u << 20) + 5, lines;
	FILE *out;

	snprintf(dir, sizeof(dir), "%s/run-large", f->dir);
	run_folder_make(dir);
	snprintf(path, sizeof(path), "%s/0/err.txt", dir);
	out = fopen(path, "w");
	assert_non_null(out);
	lines = size / 32;
	for (size_t i = 0; i < lines; i++)
		fprintf(out, "%030zu\n", i);
	fclose(out);
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-7", NULL, NULL, NULL, f->err,
					sizeof(f->err)), BCI_INGEST_STORED);
	text = log_fetch(f, "run-large", "igt@igt_a@basic", "err");
	assert_int_equal(strlen(text), lines * 31);
	{
		char last[40];

		snprintf(last, sizeof(last), "%030zu\n", lines - 1);
		assert_string_equal(text + (lines - 1) * 31, last);
	}
	free(text);
	assert_int_equal(count_entries(f, "tmp"), 0);
}

/* Bytes @n long, from @seed, that zstd cannot shrink (no run, no repeat). */
static char *noise(size_t n, unsigned seed)
{
	char *p = malloc(n);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (char)(seed >> 16);
	}
	return p;
}

/*
 * Logs added in the archive's order (jobs 0, 1, 10, 11, 2 ...; dmesg before
 * out and err), then one job far beyond the others: each found again by its
 * job and name, whichever way the index was ordered.
 */
static void test_log_order(void **state)
{
	struct fixture *f = *state;
	static const char digest[] =
		"ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
	static const char *const which[] = { "dmesg", "out", "err" };
	static const unsigned jobs[] = { 0, 1, 10, 11, 12, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct bci_cache_logs *w;
	char text[64];

	for (int sparse = 0; sparse <= 1; sparse++) {
		assert_int_equal(bci_cache_logs_begin(f->data, digest, &w, f->err, sizeof(f->err)),
				 0);
		for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
			for (int k = 0; k < 3; k++) {
				int n = snprintf(text, sizeof(text), "job %u %s", jobs[i], which[k]);

				assert_int_equal(bci_cache_logs_add(w, jobs[i], which[k], text,
								    (size_t)n, -1, f->err,
								    sizeof(f->err)), 0);
			}
		if (sparse)
			assert_int_equal(bci_cache_logs_add(w, 5000000, "out", "far", 3, -1, f->err,
							    sizeof(f->err)), 0);
		assert_int_equal(bci_cache_logs_commit(w, f->err, sizeof(f->err)), 0);
		for (unsigned job = 0; job <= 12; job++)
			for (int k = 0; k < 3; k++) {
				int fd = bci_cache_logs_open(f->data, digest, job, which[k], f->err,
							     sizeof(f->err));
				char *got;

				if (fd < 0)
					fail_msg("job %u %s: %s", job, which[k], f->err);
				got = read_fd(fd);
				close(fd);
				snprintf(text, sizeof(text), "job %u %s", job, which[k]);
				assert_string_equal(got, text);
				free(got);
			}
		if (sparse) {
			int fd = bci_cache_logs_open(f->data, digest, 5000000, "out", f->err,
						     sizeof(f->err));
			char *got;

			assert_true(fd >= 0);
			got = read_fd(fd);
			close(fd);
			assert_string_equal(got, "far");
			free(got);
		}
		assert_true(bci_cache_logs_open(f->data, digest, 13, "out", f->err,
						sizeof(f->err)) < 0);
	}
}

/*
 * A log up to 512 bytes is stored as it is, in a frame of one raw block;
 * a longer one compressed. Every size at the edges (1, 255 and 256: the
 * frame header's two content-size forms, 512, 513) reads back whole through
 * libzstd's decoder; a raw log's bytes are in the file verbatim, a long
 * repetitive one's are not.
 */
static void test_log_frames(void **state)
{
	struct fixture *f = *state;
	static const size_t sizes[] = { 1, 255, 256, 511, 512, 513, 4096, 200000 };
	const size_t count = sizeof(sizes) / sizeof(sizes[0]);
	static const char digest[] =
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	char path[PATH_MAX * 2], *logs[sizeof(sizes) / sizeof(sizes[0])], *file, *text;
	struct bci_cache_logs *w;
	size_t file_len;
	int fd;

	assert_int_equal(bci_cache_logs_begin(f->data, digest, &w, f->err, sizeof(f->err)), 0);
	for (size_t i = 0; i < count; i++) {
		if (sizes[i] <= 512) {
			logs[i] = noise(sizes[i], (unsigned)i + 1);
		} else {
			logs[i] = malloc(sizes[i]);
			assert_non_null(logs[i]);
			memset(logs[i], 'a' + (int)i, sizes[i]);
		}
		assert_int_equal(bci_cache_logs_add(w, (unsigned)i, "dmesg", logs[i], sizes[i], -1,
						    f->err, sizeof(f->err)), 0);
	}
	assert_int_equal(bci_cache_logs_commit(w, f->err, sizeof(f->err)), 0);

	snprintf(path, sizeof(path), "%s/cache/%s.logs", f->data, digest);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	file = read_fd(fd);
	close(fd);
	{
		struct stat st;

		assert_int_equal(stat(path, &st), 0);
		file_len = (size_t)st.st_size;
	}
	for (size_t i = 0; i < count; i++) {
		size_t n = sizes[i] < 64 ? sizes[i] : 64;

		fd = bci_cache_logs_open(f->data, digest, (unsigned)i, "dmesg", f->err,
					 sizeof(f->err));
		if (fd < 0)
			fail_msg("log of %zu bytes: %s", sizes[i], f->err);
		{
			struct stat st;

			assert_int_equal(fstat(fd, &st), 0);
			assert_int_equal((size_t)st.st_size, sizes[i]);
		}
		text = read_fd(fd);
		close(fd);
		assert_memory_equal(text, logs[i], sizes[i]);
		free(text);
		/* Raw up to 512 bytes: found as it is; over that, compressed. */
		if (sizes[i] <= 512)
			assert_non_null(memmem(file, file_len, logs[i], sizes[i]));
		else
			assert_null(memmem(file, file_len, logs[i], n));
		free(logs[i]);
	}
	assert_true(file_len < 512 * 8);
	free(file);
}

/* ---- the same run twice, another archive for it ---- */

static void test_idempotent(void **state)
{
	struct fixture *f = *state;
	struct bci_ingest_summary first, again;
	char dir[PATH_MAX + 16], archive[PATH_MAX * 2];
	int results;

	snprintf(dir, sizeof(dir), "%s/run-twice", f->dir);
	run_folder_make(dir);
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-1", NULL, NULL, &first, f->err,
					sizeof(f->err)), BCI_INGEST_STORED);
	results = bci_store_results_each(f->store, run_key(f, "lab-1", "run-twice"), NULL, NULL,
					 f->err, sizeof(f->err));
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-1", NULL, NULL, &again, f->err,
					sizeof(f->err)), BCI_INGEST_ALREADY);
	assert_string_equal(first.digest, again.digest);
	/* The kept archive given back (as serve does after a retried upload). */
	snprintf(archive, sizeof(archive), "%s/%s", f->data, "archives");
	snprintf(archive + strlen(archive), sizeof(archive) - strlen(archive), "/%s.tar.zst",
		 first.digest);
	assert_int_equal(bci_ingest_archive(f->store, f->data, archive, "lab-1", "run-twice", NULL,
					    &again, f->err, sizeof(f->err)), BCI_INGEST_ALREADY);
	assert_int_equal(count_runs(f), 1);
	assert_int_equal(bci_store_results_each(f->store, run_key(f, "lab-1", "run-twice"), NULL,
						NULL, f->err, sizeof(f->err)), results);
	assert_int_equal(count_entries(f, "archives"), 1);
	assert_int_equal(count_entries(f, "cache"), 1);

	/* Same run id, other bytes: refused, the stored run untouched, nothing left behind. */
	write_file(dir, "0/err.txt", "another note\n");
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-1", NULL, NULL, &again, f->err,
					sizeof(f->err)), -EEXIST);
	assert_non_null(strstr(f->err, first.digest));
	assert_int_equal(count_runs(f), 1);
	assert_int_equal(count_entries(f, "archives"), 1);
	assert_int_equal(count_entries(f, "cache"), 1);
	/* The same folder as another machine's run is another run. */
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-2", NULL, NULL, &again, f->err,
					sizeof(f->err)), BCI_INGEST_STORED);
	assert_int_equal(count_runs(f), 2);
}

/* ---- archives that lie or escape ---- */

enum edit {
	EDIT_CHANGE, EDIT_DROP, EDIT_TWICE, EDIT_LAST,
	EDIT_ADD, EDIT_DOTDOT, EDIT_SYMLINK, EDIT_UNDER_FILE,	/* these add an entry */
};

/* Copies the archive @from to @to (tar.zst), changing what @edit says about entry @target. */
static void archive_rewrite(const char *from, const char *to, enum edit edit, const char *target)
{
	struct archive *in = archive_read_new(), *out = archive_write_new();
	struct archive_entry *entry, *held = NULL;
	char buf[65536], held_data[65536];
	size_t held_size = 0;
	int added = 0;

	archive_read_support_filter_all(in);
	archive_read_support_format_all(in);
	assert_int_equal(archive_read_open_filename(in, from, 65536), ARCHIVE_OK);
	archive_write_add_filter_zstd(out);
	archive_write_set_format_pax_restricted(out);
	assert_int_equal(archive_write_open_filename(out, to), ARCHIVE_OK);
	while (archive_read_next_header(in, &entry) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(entry);
		int hit = !strcmp(name, target);
		la_ssize_t n;

		if (hit && edit == EDIT_DROP)
			continue;
		if (hit && edit == EDIT_CHANGE) {
			/* Same size, one byte different: only the digest can tell. */
			size_t size = (size_t)archive_entry_size(entry);

			assert_true(size > 0 && size < sizeof(buf));
			assert_int_equal(archive_read_data(in, buf, size), (la_ssize_t)size);
			buf[0] ^= 1;
			assert_int_equal(archive_write_header(out, entry), ARCHIVE_OK);
			assert_int_equal(archive_write_data(out, buf, size), (la_ssize_t)size);
			continue;
		}
		if (hit && edit == EDIT_LAST) {
			/* Kept for the end, after every other folder's files. */
			held_size = (size_t)archive_entry_size(entry);
			assert_true(held_size < sizeof(held_data));
			assert_int_equal(archive_read_data(in, held_data, held_size), (la_ssize_t)held_size);
			held = archive_entry_clone(entry);
			continue;
		}
		assert_int_equal(archive_write_header(out, entry), ARCHIVE_OK);
		while ((n = archive_read_data(in, buf, sizeof(buf))) > 0) {
			assert_int_equal(archive_write_data(out, buf, (size_t)n), n);
			if (hit && edit == EDIT_TWICE) {
				assert_int_equal(archive_write_header(out, entry), ARCHIVE_OK);
				assert_int_equal(archive_write_data(out, buf, (size_t)n), n);
			}
		}
		if (!added && edit >= EDIT_ADD) {
			struct archive_entry *extra = archive_entry_new();

			added = 1;
			archive_entry_set_pathname(extra, edit == EDIT_ADD ? "extra.txt"
						   : edit == EDIT_DOTDOT ? "../escaped.txt"
						   : edit == EDIT_UNDER_FILE ? "0/out.txt/below" : "link");
			if (edit == EDIT_SYMLINK) {
				archive_entry_set_filetype(extra, AE_IFLNK);
				archive_entry_set_symlink(extra, "/etc/passwd");
				archive_entry_set_size(extra, 0);
				assert_int_equal(archive_write_header(out, extra), ARCHIVE_OK);
			} else {
				archive_entry_set_filetype(extra, AE_IFREG);
				archive_entry_set_perm(extra, 0644);
				archive_entry_set_size(extra, 3);
				assert_int_equal(archive_write_header(out, extra), ARCHIVE_OK);
				assert_int_equal(archive_write_data(out, "hi\n", 3), 3);
			}
			archive_entry_free(extra);
		}
	}
	if (held) {
		assert_int_equal(archive_write_header(out, held), ARCHIVE_OK);
		assert_int_equal(archive_write_data(out, held_data, held_size), (la_ssize_t)held_size);
		archive_entry_free(held);
	}
	archive_read_free(in);
	assert_int_equal(archive_write_close(out), ARCHIVE_OK);
	archive_write_free(out);
}

static void lie_refused(struct fixture *f, const char *good, enum edit edit, const char *target,
			const char *message)
{
	char bad[PATH_MAX * 2];
	int ret;

	snprintf(bad, sizeof(bad), "%s/bad-%d.tar.zst", f->dir, (int)edit);
	archive_rewrite(good, bad, edit, target);
	ret = bci_ingest_archive(f->store, f->data, bad, NULL, NULL, NULL, NULL, f->err, sizeof(f->err));
	assert_true(ret < 0);
	if (!strstr(f->err, message))
		fail_msg("edit %d: '%s' does not say '%s'", (int)edit, f->err, message);
	assert_int_equal(count_runs(f), 0);
	assert_int_equal(count_entries(f, "archives"), 0);
	assert_int_equal(count_entries(f, "cache"), 0);
}

static void test_lying_archive_refused(void **state)
{
	struct fixture *f = *state;
	struct bci_run_archive_info info = {
		.machine = "lab-1", .run = "run-lies", .bootci_version = "test",
	};
	char dir[PATH_MAX + 16], good[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s/run-lies", f->dir);
	snprintf(good, sizeof(good), "%s/good.tar.zst", f->dir);
	run_folder_make(dir);
	assert_int_equal(bci_run_archive_write(dir, good, &info, f->err, sizeof(f->err)), 0);

	lie_refused(f, good, EDIT_CHANGE, "0/out.txt", "'0/out.txt': sha256 ");
	lie_refused(f, good, EDIT_DROP, "1/journal.txt", "'1/journal.txt': in the manifest but not in the archive");
	lie_refused(f, good, EDIT_ADD, "", "'extra.txt': not in the manifest");
	lie_refused(f, good, EDIT_DOTDOT, "", "'../escaped.txt': a '..' component");
	lie_refused(f, good, EDIT_SYMLINK, "", "'link': a symlink to '/etc/passwd', outside the run");
	/* What the cache's unpacking refuses, the scan refuses too: the same reader. */
	lie_refused(f, good, EDIT_TWICE, "0/out.txt", "'0/out.txt': in the archive twice");
	lie_refused(f, good, EDIT_UNDER_FILE, "", "'0/out.txt/below': not in the manifest");
	/* Job folders are read one at a time: one whose files are apart is refused, not held. */
	lie_refused(f, good, EDIT_LAST, "0/err.txt", "job folder 0's files do not follow each other");

	/* Cut short: refused, nothing kept. */
	{
		char cut[PATH_MAX + 16], *bytes;
		FILE *in, *out;
		long size;

		snprintf(cut, sizeof(cut), "%s/cut.tar.zst", f->dir);
		in = fopen(good, "rb");
		out = fopen(cut, "wb");
		assert_non_null(in);
		assert_non_null(out);
		assert_int_equal(fseek(in, 0, SEEK_END), 0);
		size = ftell(in);
		rewind(in);
		bytes = malloc((size_t)size);
		assert_non_null(bytes);
		assert_int_equal(fread(bytes, 1, (size_t)size, in), (size_t)size);
		assert_int_equal(fwrite(bytes, 1, (size_t)size / 2, out), (size_t)size / 2);
		fclose(in);
		fclose(out);
		free(bytes);
		assert_true(bci_ingest_archive(f->store, f->data, cut, NULL, NULL, NULL, NULL, f->err,
					       sizeof(f->err)) < 0);
		assert_non_null(strstr(f->err, "cut short"));
		assert_int_equal(count_runs(f), 0);
		assert_int_equal(count_entries(f, "archives"), 0);
	}

	/* The honest archive goes in; as another machine's, it is refused. */
	assert_int_equal(bci_ingest_archive(f->store, f->data, good, "lab-2", NULL, NULL, NULL,
					    f->err, sizeof(f->err)), -EPERM);
	assert_non_null(strstr(f->err, "lab-1"));
	assert_int_equal(count_runs(f), 0);
	assert_int_equal(bci_ingest_archive(f->store, f->data, good, NULL, NULL, NULL, NULL,
					    f->err, sizeof(f->err)), BCI_INGEST_STORED);
	assert_int_equal(count_runs(f), 1);
	/* An outside archive is kept as a copy named by its digest. */
	assert_int_equal(count_entries(f, "archives"), 1);
}

/*
 * Only run archives: an igt_runner folder tarred by hand (plain, or with
 * zstd, GNU tar's headers) is refused, saying why; the folder
 * itself is ingested (bci_ingest_dir packs it as collect would).
 */
static void test_other_archives_refused(void **state)
{
	struct fixture *f = *state;
	char dir[PATH_MAX + 16], tar[PATH_MAX + 16], cmd[PATH_MAX * 3];
	struct bci_ingest_summary summary;

	snprintf(dir, sizeof(dir), "%s/old-run", f->dir);
	run_folder_make(dir);
	snprintf(tar, sizeof(tar), "%s/old-run.tar", f->dir);
	snprintf(cmd, sizeof(cmd), "tar -C '%s' -cf '%s' old-run", f->dir, tar);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(bci_ingest_archive(f->store, f->data, tar, "lab-9", NULL, NULL, NULL, f->err,
					    sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "an uncompressed tar (a run archive is compressed with zstd)"));
	snprintf(tar, sizeof(tar), "%s/old-run.tar.zst", f->dir);
	snprintf(cmd, sizeof(cmd), "tar -C '%s' --zstd -cf '%s' old-run", f->dir, tar);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(bci_ingest_archive(f->store, f->data, tar, "lab-9", NULL, NULL, NULL, f->err,
					    sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "entry 1: a GNU tar header"));
	assert_int_equal(count_runs(f), 0);
	assert_int_equal(count_entries(f, "archives"), 0);
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-9", NULL, NULL, &summary,
					f->err, sizeof(f->err)), BCI_INGEST_STORED);
	assert_string_equal(summary.run_id, "old-run");
	assert_int_equal(summary.boots, 2);
}

/* An archive a deployed collect wrote (libarchive's writer) goes in as its manifest says. */
static void test_deployed_archive(void **state)
{
	struct fixture *f = *state;
	char sample[PATH_MAX];
	struct bci_ingest_summary summary;

	snprintf(sample, sizeof(sample), "%s/tests/unit/data/run-archive-libarchive.tar.zst",
		 source_dir());
	assert_int_equal(bci_ingest_archive(f->store, f->data, sample, NULL, NULL, NULL, &summary,
					    f->err, sizeof(f->err)), BCI_INGEST_STORED);
	assert_string_equal(summary.machine, "lab-1");
	assert_string_equal(summary.run_id, "deployed-1");
	assert_int_equal(summary.results, 2);
	assert_int_equal(summary.boots, 2);
}

/* ---- failures half-way ---- */

static void test_failure_halfway_leaves_nothing(void **state)
{
	struct fixture *f = *state;
	struct bci_suspend_cycle_line twice = {
		.cycle = "mem-0001", .result = "pass", .wall = 6, .suspended = 5, .latency = 1,
		.kernel_suspend = -1, .kernel_resume = -1, .wake = "rtc",
	};
	char dir[PATH_MAX + 16], line[256], text[512];

	/* Cycle 1 twice: the run, its boots and the first cycle are written before it fails. */
	snprintf(dir, sizeof(dir), "%s/run-torn", f->dir);
	run_folder_make(dir);
	bci_suspend_cycle_line_format(line, sizeof(line), &twice);
	snprintf(text, sizeof(text), "%s%s", line, line);
	write_file(dir, "suspend-cycles.txt", text);
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-1", NULL, NULL, NULL, f->err,
					sizeof(f->err)), -EEXIST);
	assert_non_null(strstr(f->err, "suspend-cycles.txt"));
	assert_int_equal(count_runs(f), 0);
	assert_int_equal(bci_store_machines_each(f->store, NULL, NULL, NULL, f->err, sizeof(f->err)), 0);
	assert_int_equal(count_entries(f, "archives"), 0);
	assert_int_equal(count_entries(f, "cache"), 0);

	/* A build that is not registered: refused the same way. */
	{
		struct bci_ingest_options options = { .build = "no-such-build" };

		run_folder_make(dir);
		write_file(dir, "suspend-cycles.txt", "");
		assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-1", NULL, &options, NULL,
						f->err, sizeof(f->err)), -ENOENT);
		assert_non_null(strstr(f->err, "no-such-build"));
		assert_int_equal(count_runs(f), 0);
	}
	/* Fixed, the same folder goes in whole. */
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-1", NULL, NULL, NULL, f->err,
					sizeof(f->err)), BCI_INGEST_STORED);
	assert_int_equal(count_runs(f), 1);
}

static void test_bad_names_refused(void **state)
{
	struct fixture *f = *state;
	char dir[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s/run-names", f->dir);
	run_folder_make(dir);
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, NULL, NULL, NULL, NULL, f->err,
					sizeof(f->err)), -EINVAL);
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab/1", NULL, NULL, NULL, f->err,
					sizeof(f->err)), -EINVAL);
	assert_int_equal(bci_ingest_dir(f->store, f->data, dir, "lab-1", "..", NULL, NULL, f->err,
					sizeof(f->err)), -EINVAL);
	assert_int_equal(count_runs(f), 0);
}

/* ---- two ingests of one run at once ---- */

struct racer {
	const struct fixture *f;
	const char *archive;
	int ret;
	char err[1024];
};

static void *racer_run(void *arg)
{
	struct racer *r = arg;
	struct bci_store *store;

	r->ret = bci_store_open(r->f->url, r->f->data, &store, r->err, sizeof(r->err));
	if (r->ret < 0)
		return NULL;
	r->ret = bci_ingest_archive(store, r->f->data, r->archive, NULL, NULL, NULL, NULL, r->err,
				    sizeof(r->err));
	bci_store_close(store);
	return NULL;
}

static void test_concurrent_same_run(void **state)
{
	struct fixture *f = *state;
	struct bci_run_archive_info info = {
		.machine = "lab-1", .run = "run-race", .bootci_version = "test",
	};
	char dir[PATH_MAX + 16], archive[PATH_MAX + 16];
	struct racer racers[4];
	pthread_t threads[4];
	int stored = 0, already = 0;

	snprintf(dir, sizeof(dir), "%s/run-race", f->dir);
	snprintf(archive, sizeof(archive), "%s/race.tar.zst", f->dir);
	run_folder_make(dir);
	assert_int_equal(bci_run_archive_write(dir, archive, &info, f->err, sizeof(f->err)), 0);
	/* Each thread has its own store connection, as serve's threads would. */
	for (int i = 0; i < 4; i++) {
		racers[i] = (struct racer){ .f = f, .archive = archive };
		assert_int_equal(pthread_create(&threads[i], NULL, racer_run, &racers[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(threads[i], NULL), 0);
		if (racers[i].ret < 0)
			fail_msg("racer %d: %d %s", i, racers[i].ret, racers[i].err);
		stored += racers[i].ret == BCI_INGEST_STORED;
		already += racers[i].ret == BCI_INGEST_ALREADY;
	}
	assert_int_equal(stored, 1);
	assert_int_equal(already, 3);
	assert_int_equal(count_runs(f), 1);
	assert_int_equal(bci_store_results_each(f->store, run_key(f, "lab-1", "run-race"), NULL, NULL,
						f->err, sizeof(f->err)), 3);
	assert_int_equal(count_entries(f, "archives"), 1);
	assert_int_equal(count_entries(f, "cache"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_conformance_scenarios, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bootci_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unbegun_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_fetch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_unpacks_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_job_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lying_archive_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_archives_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deployed_archive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure_halfway_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_names_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_same_run, setup, teardown),
	};
	const char *url = getenv("BOOTCI_TEST_STORE_URL");

	return cmocka_run_group_tests_name(url && *url ? "ingest (BOOTCI_TEST_STORE_URL)" : "ingest (sqlite)",
					   tests, NULL, NULL);
}
