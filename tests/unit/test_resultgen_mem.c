// SPDX-License-Identifier: MIT
/*
 * The results generator's memory source (resultgen.h,
 * bci_results_job_reader_new_mem and its walks), as ingest feeds it from an
 * archive: for every igt_runner conformance folder and bootci scenario, the
 * same folder's files held in memory give exactly the tests, results, times
 * and texts the folder walk gives; with a file limit small enough that texts
 * are condensed; with job files spilled to files (fd entries); and a job
 * handed no files is "notrun", as a missing folder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fsutil.h"
#include "resultgen/resultgen.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct files {
	struct bci_results_mem_file *v;
	size_t count, cap;
};

static void files_load(struct files *fs, const char *root, const char *rel)
{
	char path[PATH_MAX * 2];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	dir = opendir(path);
	assert_non_null(dir);
	while ((d = readdir(dir))) {
		char sub[PATH_MAX], full[PATH_MAX * 3];
		struct stat st;

		if (d->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", d->d_name);
		snprintf(full, sizeof(full), "%s/%s", root, sub);
		assert_int_equal(lstat(full, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			files_load(fs, root, sub);
			continue;
		}
		if (fs->count == fs->cap) {
			fs->cap = fs->cap ? fs->cap * 2 : 32;
			fs->v = realloc(fs->v, fs->cap * sizeof(*fs->v));
			assert_non_null(fs->v);
		}
		{
			char *text = NULL;
			size_t len = 0;

			assert_int_equal(bci_read_file(full, &text, &len, 64 << 20), 0);
			fs->v[fs->count++] = (struct bci_results_mem_file){
				.path = strdup(sub), .data = text, .len = len, .fd = -1,
			};
		}
	}
	closedir(dir);
}

/* Every job file (a path with a folder) moved to an unnamed file: the fd way. */
static void files_spill(struct files *fs)
{
	for (size_t i = 0; i < fs->count; i++) {
		struct bci_results_mem_file *f = &fs->v[i];
		char tmpl[] = "/tmp/test_resultgen_mem.XXXXXX";

		if (!strchr(f->path, '/'))
			continue;
		f->fd = mkstemp(tmpl);
		assert_true(f->fd >= 0);
		unlink(tmpl);
		assert_int_equal(bci_write_all(f->fd, f->data, f->len), 0);
		/* Read from its start whatever the fd's offset. */
	}
}

static void files_free(struct files *fs)
{
	for (size_t i = 0; i < fs->count; i++) {
		free((char *)fs->v[i].path);
		free((char *)fs->v[i].data);
		if (fs->v[i].fd >= 0)
			close(fs->v[i].fd);
	}
	free(fs->v);
}

static void text_put(FILE *out, const char *what, struct bci_results_text t)
{
	fprintf(out, " %s=", what);
	if (!t.ptr)
		fputs("(none)", out);
	else
		fwrite(t.ptr, 1, t.len, out);
	fputc('|', out);
}

static int collect(enum bci_results_event event, const struct bci_results_run *run,
		   const struct bci_results_test *test, void *ctx)
{
	FILE *out = ctx;

	if (event == BCI_RESULTS_RUN_BEGIN)
		fprintf(out, "run %s start %d %.6f end %d %.6f\n", run->name, run->has_start,
			run->start, run->has_end, run->end);
	if (event != BCI_RESULTS_TEST)
		return 0;
	fprintf(out, "%s %s job %zd time %d %.6f comms %d", test->name, test->result,
		(ssize_t)test->job, test->has_time, test->time_end, test->from_comms);
	text_put(out, "out", test->out);
	text_put(out, "err", test->err);
	text_put(out, "dmesg", test->dmesg);
	text_put(out, "warnings", test->dmesg_warnings);
	fputc('\n', out);
	return 0;
}

/* The folder walk and the memory walk of @dir, as text, compared. */
static void scenario_compare(const char *dir, size_t max_file, int spill)
{
	struct bci_resultgen_options options = { .max_file = max_file };
	struct bci_results_job_reader *reader;
	struct files fs = { 0 };
	char *a = NULL, *b = NULL, err[1024];
	size_t a_len = 0, b_len = 0;
	FILE *out;

	options.warnings = fopen("/dev/null", "w");
	assert_non_null(options.warnings);
	out = open_memstream(&a, &a_len);
	if (bci_results_walk(dir, &options, collect, out, err, sizeof(err)) < 0)
		fprintf(out, "error\n");
	fclose(out);

	files_load(&fs, dir, "");
	if (spill)
		files_spill(&fs);
	out = open_memstream(&b, &b_len);
	if (bci_results_job_reader_new_mem(dir, &(struct bci_results_mem){ fs.v, fs.count }, &options,
					   &reader, err, sizeof(err)) < 0) {
		fprintf(out, "error\n");
	} else {
		const struct bci_results_mem mem = { fs.v, fs.count };
		size_t jobs = bci_results_job_reader_count(reader);
		int ret = collect(BCI_RESULTS_RUN_BEGIN, bci_results_job_reader_run(reader), NULL, out);

		for (size_t j = 0; j < jobs && ret == 0; j++)
			ret = bci_results_job_walk_mem(reader, j, &mem, NULL, collect, out, err,
						       sizeof(err));
		if (ret == 0)
			ret = bci_results_aborted_walk_mem(reader, &mem, collect, out, err, sizeof(err));
		if (ret < 0)
			fprintf(out, "error\n");
		bci_results_job_reader_free(reader);
	}
	fclose(out);
	if (strcmp(a, b))
		fail_msg("%s (limit %zu, spill %d): the folder walk gave\n%s\nthe memory walk\n%s", dir,
			 max_file, spill, a, b);
	free(a);
	free(b);
	files_free(&fs);
	fclose(options.warnings);
}

static const char *source_dir(void)
{
	const char *src = getenv("SRC");

	return src ? src : ".";
}

static int scenarios_in(const char *parent)
{
	struct dirent **names;
	int n = scandir(parent, &names, NULL, alphasort), checked = 0;

	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		char dir[PATH_MAX * 2], meta[PATH_MAX * 3];
		struct stat st;

		snprintf(dir, sizeof(dir), "%s/%s", parent, names[i]->d_name);
		snprintf(meta, sizeof(meta), "%s/metadata.txt", dir);
		if (names[i]->d_name[0] != '.' && stat(meta, &st) == 0) {
			scenario_compare(dir, 0, 0);
			scenario_compare(dir, 300, 0);	/* texts condensed: the fd way */
			scenario_compare(dir, 0, 1);
			checked++;
		}
		free(names[i]);
	}
	free(names);
	return checked;
}

static void test_same_as_folder(void **state)
{
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/../shared/conformance/igt-runner-results", source_dir());
	assert_true(scenarios_in(path) >= 10);
	snprintf(path, sizeof(path), "%s/tests/resultgen/scenarios", source_dir());
	assert_true(scenarios_in(path) >= 2);
}

static int count_tests(enum bci_results_event event, const struct bci_results_run *run,
		       const struct bci_results_test *test, void *ctx)
{
	(void)run;
	if (event == BCI_RESULTS_TEST)
		assert_string_equal(test->result, "notrun");
	if (event == BCI_RESULTS_TEST)
		(*(int *)ctx)++;
	return 0;
}

/* A job given no files never ran; a job past the joblist is named; a missing metadata.txt is said. */
static void test_missing(void **state)
{
	const struct bci_results_mem_file run_files[] = {
		{ "metadata.txt", "name : m\n", 9, -1 },
		{ "joblist.txt", "kms_flip a,b\n", 13, -1 },
	};
	struct bci_results_mem run = { run_files, 2 };
	struct bci_resultgen_options options = { .warnings = fopen("/dev/null", "w") };
	struct bci_results_job_reader *reader;
	char err[512];
	int tests = 0;

	(void)state;
	assert_int_equal(bci_results_job_reader_new_mem("mem", &run, &options, &reader, err,
							sizeof(err)), 0);
	assert_string_equal(bci_results_job_reader_run(reader)->name, "m");
	assert_int_equal(bci_results_job_reader_count(reader), 1);
	assert_int_equal(bci_results_job_walk_mem(reader, 0, NULL, NULL, count_tests, &tests, err,
						  sizeof(err)), 0);
	assert_int_equal(tests, 2);
	assert_int_equal(bci_results_job_walk_mem(reader, 1, NULL, NULL, count_tests, &tests, err,
						  sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "mem/joblist.txt: no job 1"));
	bci_results_job_reader_free(reader);

	run.count = 1;
	run.files = &run_files[1];
	assert_int_equal(bci_results_job_reader_new_mem("mem", &run, &options, &reader, err,
							sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "mem/metadata.txt: missing"));
	fclose(options.warnings);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_folder),
		cmocka_unit_test(test_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
