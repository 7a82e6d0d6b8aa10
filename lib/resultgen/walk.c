// SPDX-License-Identifier: MIT
/*
 * The results generator's walk (see resultgen.h): the run's facts, then
 * one job folder after another in joblist order, each judged (judge.c,
 * dmesg.c) and its tests handed to the callback before the next folder is
 * opened, then igt_runner's aborted pseudo-test and the totals.
 */
#include "internal.h"

#include "results_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Hands the job's tests to the callback, in the order they were first met. */
static int emit_tests(struct gen *g)
{
	size_t i;
	int ret;

	for (i = 0; i < g->test_count; i++) {
		const struct test *t = g->tests[i];
		struct bci_results_test out = {
			.name = t->name,
			.result = t->result,
			.has_time = t->has_time,
			.time_start = 0.0,
			.time_end = t->time,
			.job = g->job_number,
			.binary = g->job->binary,
			.out = t->out,
			.err = t->err,
			.dmesg = t->dmesg,
			.dmesg_warnings = t->warnings,
			.igt_version = t->version,
			.from_comms = t->from_comms,
		};

		if (t->deleted)
			continue;
		ret = g->fn(BCI_RESULTS_TEST, &g->run, &out, g->ctx);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The files of job folder @index; *@missing when out, err or dmesg is absent (never ran). */
struct job_files {
	char rel[BCI_RESULTS_FILE_COUNT][48];
	char *texts[BCI_RESULTS_FILE_COUNT];
	size_t lens[BCI_RESULTS_FILE_COUNT];
	struct gen_file dmesg;
	bool missing;
};

static int open_job_files(struct gen *g, struct job_files *f)
{
	int i, ret = 0;

	for (i = 0; i < BCI_RESULTS_FILE_COUNT; i++) {
		gen_job_rel(g, bci_results_job_files[i], f->rel[i], sizeof(f->rel[i]));
		if (i == BCI_RESULTS_FILE_JOURNAL) {
			ret = gen_read_file(g, f->rel[i], true, g->max_file, &f->texts[i], &f->lens[i]);
		} else if (i != BCI_RESULTS_FILE_DMESG) {
			ret = gen_read_job_text(g, f->rel[i], &f->texts[i], &f->lens[i]);
		} else {
			/* Streamed later, however large. */
			ret = gen_open(g, f->rel[i], true, &f->dmesg);
		}
		if (ret == -ENOENT) {
			/* No journal reads as an empty one; no out/err/dmesg means it never ran. */
			f->missing |= i != BCI_RESULTS_FILE_JOURNAL;
			continue;
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* What of a result says the job went well, and would hide that its output is cut. */
static bool looks_fine(const char *result)
{
	return !result || !strcmp(result, "pass") || !strcmp(result, "warn") ||
	       !strcmp(result, "dmesg-warn") || !strcmp(result, "skip") || !strcmp(result, "notrun");
}

/*
 * N/bootci-incomplete.txt (results_dir.h): the executor could not write all
 * of the job's output. Every test of the job says so at the end of its out,
 * and none of them passes: its output, kernel log included, is not whole.
 */
static int mark_incomplete(struct gen *g)
{
	char rel[64], *text = NULL;
	size_t len = 0;
	int ret;

	gen_job_rel(g, BCI_RESULTS_JOB_INCOMPLETE, rel, sizeof(rel));
	ret = gen_read_small(g, rel, true, 4096, &text, &len);
	if (ret < 0 || !text)
		return ret;
	for (size_t i = 0; i < g->test_count && ret == 0; i++) {
		struct test *t = g->tests[i];
		struct bci_str b = { 0 };

		ret = bci_str_append(&b, t->out.ptr ? t->out.ptr : "", t->out.ptr ? t->out.len : 0);
		if (ret == 0)
			ret = bci_str_appendf(&b, "\nbootci: the output of this job is incomplete (%s: "
						  "file, bytes written, why):\n%.*s%s", rel, (int)len,
					      text, len && text[len - 1] == '\n' ? "" : "\n");
		if (ret == 0)
			ret = str_to_text(g, &b, &t->out);
		bci_str_free(&b);
		if (looks_fine(t->result))
			t->result = "incomplete";
	}
	free(text);
	return ret;
}

/* The text protocol's files: journal.txt, then out.txt and err.txt. */
static int judge_text(struct gen *g, struct job_files *f)
{
	char empty[1] = "";
	char *journal = f->texts[BCI_RESULTS_FILE_JOURNAL];
	int ret;

	ret = fill_from_journal(g, f->rel[BCI_RESULTS_FILE_JOURNAL], journal ? journal : empty,
				journal ? f->lens[BCI_RESULTS_FILE_JOURNAL] : 0);
	if (ret == 0)
		ret = fill_from_output(g, f->texts[BCI_RESULTS_FILE_OUT], f->lens[BCI_RESULTS_FILE_OUT],
				       true);
	if (ret == 0)
		ret = fill_from_output(g, f->texts[BCI_RESULTS_FILE_ERR], f->lens[BCI_RESULTS_FILE_ERR],
				       false);
	return ret;
}

/* The socket dump when the test spoke it, else the text files; then dmesg and the rest. */
static int judge_job(struct gen *g, size_t index, struct job_files *f)
{
	bool socket;
	int ret = fill_from_comms(g, index, &socket);

	if (ret == 0 && !socket)
		ret = judge_text(g, f);
	if (ret == 0)
		ret = fill_from_dmesg(g, f->rel[BCI_RESULTS_FILE_DMESG], &f->dmesg);
	if (ret == 0)
		ret = override_results(g);
	if (ret == 0)
		ret = mark_incomplete(g);
	if (ret < 0)
		return ret;
	prune_subtests(g);
	return add_to_totals(g, g->job->binary);
}

static int process_job(struct gen *g, size_t index)
{
	struct job_files f = { .dmesg = { .fd = -1 } };
	char digits[24];
	size_t n = 0, v = index;
	int ret, i;

	/* Its folder's name, "N", made once for every path of the job. */
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof(digits));
	for (g->job_dir_len = 0; n > 0; g->job_dir_len++)
		g->job_dir[g->job_dir_len] = digits[--n];
	g->job_dir[g->job_dir_len] = '\0';

	ret = gen_source_of(g)->job_enter(g, index);
	if (ret == -ENOENT)
		return add_notrun_results(g);
	if (ret < 0)
		return ret;
	ret = open_job_files(g, &f);
	if (ret == 0)
		ret = f.missing ? add_notrun_results(g) : judge_job(g, index, &f);
	/* The tests point into these texts until the job is handed out. */
	for (i = 0; i < BCI_RESULTS_FILE_COUNT; i++)
		if (f.texts[i] && keep_blob(g, f.texts[i]) < 0 && ret == 0)
			ret = -ENOMEM;
	if (f.dmesg.fd >= 0 || f.dmesg.data)
		gen_close(g, &f.dmesg);
	gen_source_of(g)->job_leave(g);
	return ret;
}

static int walk_job(struct gen *g, size_t index, const struct job *job)
{
	int ret;

	g->job = job;
	g->job_number = index;
	ret = process_job(g, index);
	if (ret == 0)
		ret = emit_tests(g);
	job_reset(g);
	g->job = NULL;
	return ret;
}

/* One joblist.txt line (its newline cut, @n bytes), checked and parsed into @job. */
static int read_job_line(struct gen *g, char *line, size_t n, size_t lineno, struct job *job)
{
	memset(job, 0, sizeof(*job));
	if (n != strlen(line))
		return gen_error(g, -EINVAL, "%s/%s:%zu: NUL byte in line", g->dir,
				 BCI_RESULTS_JOBLIST, lineno);
	if (n == 0 || line[0] == ' ')
		return gen_error(g, -EINVAL, "%s/%s:%zu: no test binary named", g->dir,
				 BCI_RESULTS_JOBLIST, lineno);
	return parse_job_line(line, job);
}

/* One joblist.txt line: checked, parsed, walked. */
static int walk_job_line(struct gen *g, char *line, size_t n, size_t lineno)
{
	struct job job;
	int ret;

	ret = read_job_line(g, line, n, lineno, &job);
	if (ret == 0)
		ret = walk_job(g, lineno - 1, &job);
	job_free(&job);
	return ret;
}

/* Hands every line of joblist.txt to @fn, newline cut, with its 1-based number. */
static int read_joblist(struct gen *g, int (*fn)(struct gen *g, char *line, size_t n, size_t lineno))
{
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	struct gen_file f;
	FILE *fp;
	int ret;

	ret = gen_open(g, BCI_RESULTS_JOBLIST, false, &f);
	if (ret == -ENOENT)
		return gen_error(g, ret, "%s/%s: %s", g->dir, BCI_RESULTS_JOBLIST, strerror(-ret));
	if (ret < 0)
		return ret;
	/* The lines as getline() hands them, from either source; fclose() closes an fd. */
	if (f.fd < 0 && f.size == 0) {
		gen_close(g, &f);
		return 0;	/* an empty joblist: no jobs */
	}
	fp = f.fd >= 0 ? fdopen(f.fd, "r") : fmemopen((void *)f.data, f.size, "r");
	if (!fp) {
		gen_close(g, &f);
		return -ENOMEM;
	}
	/* One job at a time: the joblist is read as the results are handed out. */
	while ((n = getline(&line, &cap, fp)) > 0) {
		lineno++;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		ret = fn(g, line, (size_t)n, lineno);
		if (ret < 0)
			break;
	}
	if (ret == 0 && ferror(fp))
		ret = gen_error(g, -EIO, "%s/%s: read error", g->dir, BCI_RESULTS_JOBLIST);
	free(line);
	fclose(fp);
	if (f.fd < 0)
		gen_close(g, &f);
	return ret;
}

/* aborted.txt: the runner stopped the run; igt_runner reports it as a test. */
static int walk_aborted(struct gen *g)
{
	static const struct job runner = { (char *)"runner", NULL, 0 };
	char *text = NULL;
	size_t len;
	struct test *t;
	int ret;

	ret = gen_read_file(g, BCI_RESULTS_ABORTED, false, g->max_file, &text, &len);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	g->run.aborted = true;
	g->job = &runner;
	g->job_number = BCI_RESULTS_NO_JOB;
	ret = add_subtest(g, "aborted");
	t = ret == 0 ? get_test(g, "igt@runner@aborted") : NULL;
	if (!t) {
		ret = ret < 0 ? ret : -ENOMEM;
		goto out;
	}
	/* igt_runner reads one 4 KiB block of it. */
	t->out = (struct bci_results_text){ text, len < 4096 ? len : 4096 };
	t->err = t->dmesg = (struct bci_results_text){ "", 0 };
	t->result = "fail";
	ret = add_to_totals(g, "runner");
	if (ret == 0)
		ret = emit_tests(g);
out:
	job_reset(g);
	g->job = NULL;
	free(text);
	return ret;
}

/* The facts known before any test: name, uname, start and end times. */
struct run_texts {
	char *uname, *start, *end, *suspend_summary;
};

static int read_run_facts(struct gen *g, struct run_texts *texts)
{
	size_t len;
	int ret;

	g->run.name = g->settings.name ? g->settings.name : "";
	ret = gen_read_small(g, BCI_RESULTS_UNAME, false, 128, &texts->uname, &len);
	if (ret < 0)
		return ret;
	if (texts->uname) {
		if (len > 0 && texts->uname[len - 1] == '\n')
			len--;
		g->run.uname = (struct bci_results_text){ texts->uname, len };
	}
	ret = gen_read_small(g, BCI_RESULTS_STARTTIME, false, 127, &texts->start, &len);
	if (ret < 0)
		return ret;
	g->run.has_start = texts->start != NULL;
	g->run.start = texts->start ? atof(texts->start) : 0.0;
	ret = gen_read_small(g, BCI_RESULTS_ENDTIME, false, 127, &texts->end, &len);
	if (ret < 0)
		return ret;
	g->run.has_end = texts->end != NULL;
	g->run.end = texts->end ? atof(texts->end) : 0.0;
	return 0;
}

/* The read-ahead threads, told how many jobs joblist.txt lists (a line each, the last perhaps without its newline). */
static int start_prefetch(struct gen *g)
{
	char *text = NULL;
	size_t len = 0, lines = 0;
	int ret = gen_read_file(g, BCI_RESULTS_JOBLIST, false, g->max_file, &text, &len);

	if (ret < 0) {
		/* read_joblist() says what is wrong with it. */
		if (g->err && g->err_size)
			g->err[0] = '\0';
		return 0;
	}
	for (const char *p = text; (p = memchr(p, '\n', len - (size_t)(p - text))); p++)
		lines++;
	if (len && text[len - 1] != '\n')
		lines++;
	free(text);
	return gen_prefetch_start(g, lines);
}

static int walk_run(struct gen *g, struct run_texts *texts)
{
	size_t len = 0;
	int ret = read_settings(g);

	if (ret == 0)
		ret = compile_dmesg_filter(g);
	if (ret == 0)
		ret = read_run_facts(g, texts);
	if (ret == 0)
		ret = g->fn(BCI_RESULTS_RUN_BEGIN, &g->run, NULL, g->ctx);
	if (ret == 0)
		ret = start_prefetch(g);
	if (ret == 0) {
		ret = read_joblist(g, walk_job_line);
		gen_prefetch_stop(g);
	}
	if (ret == 0)
		ret = walk_aborted(g);
	if (ret < 0)
		return ret;
	ret = gen_read_file(g, BCI_RESULTS_SUSPEND_SUMMARY, false, 1 << 16, &texts->suspend_summary,
			    &len);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	g->run.totals = g->all_counts;
	g->run.binaries = g->bins;
	g->run.binary_count = g->bin_count;
	if (texts->suspend_summary)
		g->run.suspend_summary = (struct bci_results_text){ texts->suspend_summary, len };
	return g->fn(BCI_RESULTS_RUN_END, &g->run, NULL, g->ctx);
}

/* @g set up for @results_dir: options, error buffer, the directory open. 0 or -errno. */
static int gen_begin(struct gen *g, const char *results_dir, const struct bci_results_mem *mem,
		     const struct bci_resultgen_options *options, char *err, size_t err_size)
{
	memset(g, 0, sizeof(*g));
	g->dir = results_dir;
	g->jobfd = -1;
	g->source = &gen_dir_source;
	g->no_openat2 = getenv("BCI_RESULTGEN_NO_OPENAT2") != NULL;
	g->err = err;
	g->err_size = err_size;
	g->warnings = options && options->warnings ? options->warnings : stderr;
	/* Head and tail are half the limit each; below 2 bytes there is nothing to split. */
	g->max_file = options && options->max_file >= 2 ? options->max_file : BCI_RESULTGEN_MAX_FILE;
	if (err && err_size)
		err[0] = '\0';
	g->mem = mem;
	g->dirfd = -1;
	if (mem)
		return 0;

	/* The directory given may be reached through links; nothing below it is. */
	g->dirfd = open(results_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g->dirfd < 0)
		return gen_error(g, -errno, "%s: %s", results_dir,
				 errno == ENOTDIR ? "not a directory" : strerror(errno));
	return 0;
}

int bci_results_walk(const char *results_dir, const struct bci_resultgen_options *options,
		     bci_results_walk_fn *fn, void *ctx, char *err, size_t err_size)
{
	struct run_texts texts = { 0 };
	struct gen g;
	int ret;

	ret = gen_begin(&g, results_dir, NULL, options, err, err_size);
	if (ret < 0)
		return ret;
	g.fn = fn;
	g.ctx = ctx;
	ret = walk_run(&g, &texts);
	if (ret < 0 && err && err_size && !err[0])
		gen_error(&g, ret, "%s: %s", results_dir, strerror(-ret));
	gen_release(&g);
	close(g.dirfd);
	free(texts.uname);
	free(texts.start);
	free(texts.end);
	free(texts.suspend_summary);
	return ret;
}

/* ---- one job at a time, while the run is written ---- */

struct bci_results_job_reader {
	struct gen g;
	struct job *jobs;	/* joblist.txt, parsed once */
	size_t job_count, job_cap;
	struct run_texts texts;	/* a memory source's run facts */
};

/* read_joblist()'s callback for a reader: @g is the reader's first member. */
static int keep_job_line(struct gen *g, char *line, size_t n, size_t lineno)
{
	struct bci_results_job_reader *r = (struct bci_results_job_reader *)g;
	int ret;

	if (r->job_count == r->job_cap) {
		size_t cap = r->job_cap ? 2 * r->job_cap : 64;
		struct job *jobs = realloc(r->jobs, cap * sizeof(*jobs));
		if (!jobs)
			return -ENOMEM;
		r->jobs = jobs;
		r->job_cap = cap;
	}
	ret = read_job_line(g, line, n, lineno, &r->jobs[r->job_count]);
	if (ret < 0) {
		job_free(&r->jobs[r->job_count]);
		return ret;
	}
	r->job_count++;
	return 0;
}

void bci_results_job_reader_free(struct bci_results_job_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->job_count; i++)
		job_free(&r->jobs[i]);
	free(r->jobs);
	gen_release(&r->g);
	if (r->g.dirfd >= 0)
		close(r->g.dirfd);
	free(r->texts.uname);
	free(r->texts.start);
	free(r->texts.end);
	free(r);
}

static int reader_new(const char *results_dir, const struct bci_results_mem *mem,
		      const struct bci_resultgen_options *options, struct bci_results_job_reader **out,
		      char *err, size_t err_size)
{
	struct bci_results_job_reader *r = calloc(1, sizeof(*r));
	int ret;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	ret = gen_begin(&r->g, results_dir, mem, options, err, err_size);
	if (ret == 0)
		ret = read_settings(&r->g);
	if (ret == 0)
		ret = compile_dmesg_filter(&r->g);
	if (ret == 0)
		ret = read_joblist(&r->g, keep_job_line);
	if (ret == 0 && mem)
		ret = read_run_facts(&r->g, &r->texts);
	r->g.mem = NULL;	/* the source lives through this call only */
	if (ret < 0) {
		if (err && err_size && !err[0])
			gen_error(&r->g, ret, "%s: %s", results_dir, strerror(-ret));
		bci_results_job_reader_free(r);
		return ret;
	}
	r->g.run.name = r->g.settings.name ? r->g.settings.name : "";
	r->g.run.aborted = false;
	/*
	 * A job's walk hands out its tests, never BCI_RESULTS_RUN_END: the
	 * per-binary counters nobody reads are not kept (each subtest's name
	 * would be made again to count it).
	 */
	r->g.no_totals = true;
	/* Nothing but the error buffer outlives a call. */
	r->g.err = NULL;
	r->g.err_size = 0;
	*out = r;
	return 0;
}

int bci_results_job_walk(struct bci_results_job_reader *r, size_t job, FILE *warnings,
			 bci_results_walk_fn *fn, void *ctx, char *err, size_t err_size)
{
	struct gen *g = &r->g;
	FILE *reader_warnings = g->warnings;
	int ret;

	if (err && err_size)
		err[0] = '\0';
	g->err = err;
	g->err_size = err_size;
	if (job >= r->job_count) {
		ret = gen_error(g, -ENOENT, "%s/%s: no job %zu (%zu lines)", g->dir, BCI_RESULTS_JOBLIST,
				job, r->job_count);
		goto out;
	}
	g->fn = fn;
	g->ctx = ctx;
	if (warnings)
		g->warnings = warnings;
	ret = walk_job(g, job, &r->jobs[job]);
	if (ret < 0 && err && err_size && !err[0])
		gen_error(g, ret, "%s: job %zu: %s", g->dir, job, strerror(-ret));
out:
	g->warnings = reader_warnings;
	g->err = NULL;
	g->err_size = 0;
	g->fn = NULL;
	g->ctx = NULL;
	return ret;
}

int bci_results_job_reader_new(const char *results_dir, const struct bci_resultgen_options *options,
			       struct bci_results_job_reader **out, char *err, size_t err_size)
{
	return reader_new(results_dir, NULL, options, out, err, err_size);
}

/* ---- the same reader over files in memory ---- */

int bci_results_job_reader_new_mem(const char *name, const struct bci_results_mem *run,
				   const struct bci_resultgen_options *options,
				   struct bci_results_job_reader **out, char *err, size_t err_size)
{
	static const struct bci_results_mem none;

	return reader_new(name, run ? run : &none, options, out, err, err_size);
}

size_t bci_results_job_reader_count(const struct bci_results_job_reader *r)
{
	return r->job_count;
}

const struct bci_results_run *bci_results_job_reader_run(const struct bci_results_job_reader *r)
{
	return &r->g.run;
}

int bci_results_job_walk_mem(struct bci_results_job_reader *r, size_t job,
			     const struct bci_results_mem *files, FILE *warnings,
			     bci_results_walk_fn *fn, void *ctx, char *err, size_t err_size)
{
	static const struct bci_results_mem none;
	int ret;

	r->g.mem = files ? files : &none;
	ret = bci_results_job_walk(r, job, warnings, fn, ctx, err, err_size);
	r->g.mem = NULL;
	return ret;
}

int bci_results_aborted_walk_mem(struct bci_results_job_reader *r, const struct bci_results_mem *run,
				 bci_results_walk_fn *fn, void *ctx, char *err, size_t err_size)
{
	static const struct bci_results_mem none;
	struct gen *g = &r->g;
	int ret;

	if (err && err_size)
		err[0] = '\0';
	g->mem = run ? run : &none;
	g->err = err;
	g->err_size = err_size;
	g->fn = fn;
	g->ctx = ctx;
	ret = walk_aborted(g);
	if (ret < 0 && err && err_size && !err[0])
		gen_error(g, ret, "%s: %s: %s", g->dir, BCI_RESULTS_ABORTED, strerror(-ret));
	g->mem = NULL;
	g->err = NULL;
	g->err_size = 0;
	g->fn = NULL;
	g->ctx = NULL;
	return ret;
}
