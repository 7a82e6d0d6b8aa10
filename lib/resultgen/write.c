// SPDX-License-Identifier: MIT
/*
 * results.json, written from the results generator's walk as it goes:
 * the header at the run's beginning, each test as it is handed out, the
 * totals, runtimes and bootci's suspend summary at the end.
 */
#include "resultgen.h"

#include "jsonw.h"
#include "results_dir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct writer {
	struct bci_jsonw w;
	char buf[32768];	/* many small pieces: one fwrite per buffer */
};

static void write_text(struct bci_jsonw *w, const char *key, const struct bci_results_text *t)
{
	if (!t->ptr)
		return;
	bci_jsonw_key(w, key);
	bci_jsonw_string_n(w, t->ptr, t->len, BCI_JSONW_LATIN1);
}

static void write_time(struct bci_jsonw *w, double start, double end)
{
	bci_jsonw_key(w, "time");
	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "__type__");
	bci_jsonw_string(w, "TimeAttribute");
	bci_jsonw_key(w, "start");
	bci_jsonw_double(w, start);
	bci_jsonw_key(w, "end");
	bci_jsonw_double(w, end);
	bci_jsonw_object_end(w);
}

static int write_header(struct bci_jsonw *w, const struct bci_results_run *run)
{
	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "__type__");
	bci_jsonw_string(w, "TestrunResult");
	bci_jsonw_key(w, "results_version");
	bci_jsonw_int(w, 10);
	bci_jsonw_key(w, "name");
	bci_jsonw_string_n(w, run->name, strlen(run->name), BCI_JSONW_LATIN1);
	write_text(w, "uname", &run->uname);
	/* Settings read back from a results directory carry no command line. */
	bci_jsonw_key(w, "cmdline");
	bci_jsonw_array_begin(w);
	bci_jsonw_array_end(w);
	bci_jsonw_key(w, "time_elapsed");
	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "__type__");
	bci_jsonw_string(w, "TimeAttribute");
	if (run->has_start) {
		bci_jsonw_key(w, "start");
		bci_jsonw_double(w, run->start);
	}
	if (run->has_end) {
		bci_jsonw_key(w, "end");
		bci_jsonw_double(w, run->end);
	}
	bci_jsonw_object_end(w);
	bci_jsonw_key(w, "tests");
	bci_jsonw_object_begin(w);
	return w->error;
}

static int write_test(struct bci_jsonw *w, const struct bci_results_test *t)
{
	bci_jsonw_key_n(w, t->name, strlen(t->name), BCI_JSONW_LATIN1);
	bci_jsonw_object_begin(w);
	write_text(w, "out", &t->out);
	/* igt_results sets a comms test's err with its out, a text test's after its result. */
	if (t->from_comms)
		write_text(w, "err", &t->err);
	write_text(w, "igt-version", &t->igt_version);
	bci_jsonw_key(w, "result");
	bci_jsonw_string(w, t->result);
	if (t->has_time)
		write_time(w, t->time_start, t->time_end);
	if (!t->from_comms)
		write_text(w, "err", &t->err);
	write_text(w, "dmesg", &t->dmesg);
	write_text(w, "dmesg-warnings", &t->dmesg_warnings);
	bci_jsonw_object_end(w);
	return w->error;
}

static void write_counts(struct bci_jsonw *w, const char *key, const unsigned long *counts)
{
	size_t i;

	bci_jsonw_key_n(w, key, strlen(key), BCI_JSONW_LATIN1);
	bci_jsonw_object_begin(w);
	for (i = 0; i < BCI_IGT_RESULT_COUNT; i++) {
		bci_jsonw_key(w, bci_igt_result_names[i]);
		bci_jsonw_int(w, (long long)counts[i]);
	}
	bci_jsonw_object_end(w);
}

static void write_totals_and_runtimes(struct bci_jsonw *w, const struct bci_results_run *run)
{
	size_t i;

	bci_jsonw_key(w, "totals");
	bci_jsonw_object_begin(w);
	if (run->any_totals) {
		write_counts(w, "", run->totals);
		write_counts(w, "root", run->totals);
	}
	for (i = 0; i < run->binary_count; i++)
		if (run->binaries[i].in_totals)
			write_counts(w, run->binaries[i].name, run->binaries[i].counts);
	bci_jsonw_object_end(w);

	bci_jsonw_key(w, "runtimes");
	bci_jsonw_object_begin(w);
	for (i = 0; i < run->binary_count; i++) {
		const struct bci_results_binary *b = &run->binaries[i];

		if (!b->has_runtime && !b->runtime_listed)
			continue;
		bci_jsonw_key_n(w, b->name, strlen(b->name), BCI_JSONW_LATIN1);
		bci_jsonw_object_begin(w);
		if (b->has_runtime)
			write_time(w, 0.0, b->runtime);
		bci_jsonw_object_end(w);
	}
	bci_jsonw_object_end(w);
}

static void write_summary_value(struct bci_jsonw *w, const char *value)
{
	struct bci_suspend_spread spread;
	long long count;

	switch (bci_suspend_summary_value(value, &count, &spread)) {
	case BCI_SUMMARY_COUNT:
		bci_jsonw_int(w, count);
		break;
	case BCI_SUMMARY_SPREAD:
		bci_jsonw_object_begin(w);
		bci_jsonw_key(w, "min");
		bci_jsonw_double(w, spread.min);
		bci_jsonw_key(w, "median");
		bci_jsonw_double(w, spread.median);
		bci_jsonw_key(w, "max");
		bci_jsonw_double(w, spread.max);
		bci_jsonw_object_end(w);
		break;
	case BCI_SUMMARY_TEXT:
		bci_jsonw_string(w, value);
		break;
	}
}

/*
 * bootci's suspend cycles: the cycles' results as results.json judged them
 * (those that never ended included) and suspend-summary.txt become a
 * top-level "bootci_suspend_summary" object, which piglit readers ignore.
 * No cycles and no file: no key, igt_runner's own results stay exactly as
 * igt writes them.
 */
static int write_suspend_summary(struct bci_jsonw *w, const struct bci_results_run *run)
{
	const struct bci_results_binary *cycles = NULL;
	char *text = NULL, *cursor, *key, *value;
	size_t i;

	for (i = 0; i < run->binary_count && !cycles; i++)
		if (strcmp(run->binaries[i].name, "bootci@suspend") == 0)
			cycles = &run->binaries[i];
	if (!run->suspend_summary.ptr && !cycles)
		return 0;
	if (run->suspend_summary.ptr) {
		text = strndup(run->suspend_summary.ptr, run->suspend_summary.len);
		if (!text)
			return -ENOMEM;
	}
	bci_jsonw_key(w, "bootci_suspend_summary");
	bci_jsonw_object_begin(w);
	if (cycles)
		write_counts(w, "results", cycles->counts);
	for (cursor = text; bci_results_kv_next(&cursor, &key, &value);) {
		bci_jsonw_key(w, key);
		write_summary_value(w, value);
	}
	free(text);
	return bci_jsonw_object_end(w);
}

static int write_event(enum bci_results_event event, const struct bci_results_run *run,
		       const struct bci_results_test *test, void *ctx)
{
	struct writer *wr = ctx;
	struct bci_jsonw *w = &wr->w;
	int ret;

	switch (event) {
	case BCI_RESULTS_RUN_BEGIN:
		return write_header(w, run);
	case BCI_RESULTS_TEST:
		return write_test(w, test);
	case BCI_RESULTS_RUN_END:
		bci_jsonw_object_end(w);
		write_totals_and_runtimes(w, run);
		ret = write_suspend_summary(w, run);
		if (ret == 0)
			bci_jsonw_object_end(w);
		return ret < 0 ? ret : bci_jsonw_finish(w);
	}
	return -EINVAL;
}

int bci_resultgen_write(const char *results_dir, FILE *out, char *err, size_t err_size)
{
	return bci_resultgen_write_options(results_dir, out, NULL, err, err_size);
}

int bci_resultgen_write_options(const char *results_dir, FILE *out,
				const struct bci_resultgen_options *options,
				char *err, size_t err_size)
{
	struct writer wr;
	int ret;

	bci_jsonw_init(&wr.w, out, 2);
	bci_jsonw_buffer(&wr.w, wr.buf, sizeof(wr.buf));
	ret = bci_results_walk(results_dir, options, write_event, &wr, err, err_size);
	/* A walk that fails midway leaves what it wrote before, as an unbuffered writer would. */
	if (ret < 0)
		bci_jsonw_flush(&wr.w);
	/* A failure of the output itself (a full disk) is said as such. */
	if (ret < 0 && wr.w.error == ret && err && err_size)
		snprintf(err, err_size, "writing results.json: %s", strerror(-ret));
	return ret;
}
