// SPDX-License-Identifier: MIT
/*
 * The results generator's judgement of one job folder, in igt_runner's
 * order, because each step only fills what earlier ones left empty: the
 * journal first (timeouts, aborts, exit codes), then out.txt and err.txt
 * (subtest results and times), then dmesg.txt (dmesg.c), then the
 * overrides (warn, dmesg-warn, dmesg-fail, incomplete when nothing was
 * written at all), then pruning of dynamic subtests, then the totals.
 */
#include "internal.h"

#include "hash.h"
#include "results_dir.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char NO_OUTPUT_TEXT[] =
	"This test didn't produce any output. The machine probably rebooted ungracefully.\n";

/* ---- name indexes ---- */

static size_t name_hash(const char *name)
{
	return (size_t)bci_hash_str(name);
}

static struct name_slot *slot_for(const struct name_index *ix, const char *name, size_t hash,
				  name_key_fn *key_of, const void *table)
{
	size_t mask = ix->cap - 1, i;

	for (i = hash & mask;; i = (i + 1) & mask) {
		struct name_slot *s = &ix->slots[i];

		if (!s->used || (s->hash == hash && !strcmp(key_of(table, s->index), name)))
			return s;
	}
}

long name_index_find(const struct name_index *ix, const char *name, name_key_fn *key_of,
		     const void *table)
{
	struct name_slot *s;

	if (!ix->cap)
		return -1;
	s = slot_for(ix, name, name_hash(name), key_of, table);
	return s->used ? (long)s->index : -1;
}

static int name_index_grow(struct name_index *ix)
{
	size_t cap = ix->cap ? ix->cap * 2 : 64, i;
	struct name_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < ix->cap; i++) {
		size_t k;

		if (!ix->slots[i].used)
			continue;
		for (k = ix->slots[i].hash & (cap - 1); slots[k].used; k = (k + 1) & (cap - 1))
			;
		slots[k] = ix->slots[i];
	}
	free(ix->slots);
	ix->slots = slots;
	ix->cap = cap;
	return 0;
}

int name_index_put(struct name_index *ix, const char *name, size_t index, name_key_fn *key_of,
		   const void *table)
{
	size_t hash = name_hash(name);
	struct name_slot *s;

	/* At most half full, so that a probe ends soon. */
	if ((ix->count + 1) * 2 > ix->cap && name_index_grow(ix) < 0)
		return -ENOMEM;
	s = slot_for(ix, name, hash, key_of, table);
	if (!s->used)
		ix->count++;
	s->used = true;
	s->hash = hash;
	s->index = index;
	return 0;
}

void name_index_release(struct name_index *ix)
{
	free(ix->slots);
	memset(ix, 0, sizeof(*ix));
}

/* ---- the per-job test table ---- */

static const char *test_key(const void *table, size_t index)
{
	return ((struct test *const *)table)[index]->name;
}

static const char *subtest_key(const void *table, size_t index)
{
	return ((const struct subtest *)table)[index].name;
}

static const char *binary_key(const void *table, size_t index)
{
	return ((const struct bci_results_binary *)table)[index].name;
}

struct test *find_test(struct gen *g, const char *name)
{
	long i = name_index_find(&g->test_index, name, test_key, g->tests);

	return i >= 0 && !g->tests[i]->deleted ? g->tests[i] : NULL;
}

struct test *get_test(struct gen *g, const char *name)
{
	struct test *t = find_test(g, name);
	size_t len;

	if (t)
		return t;
	if (g->test_count == g->test_cap) {
		size_t cap = g->test_cap ? g->test_cap * 2 : 16;
		struct test **tests = realloc(g->tests, cap * sizeof(*tests));

		if (!tests)
			return NULL;
		g->tests = tests;
		g->test_cap = cap;
	}
	if (g->spare_count) {
		t = g->spare[--g->spare_count];
		*t = (struct test){ .result = NULL };
	} else {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
	}
	len = strnlen(name, sizeof(t->name) - 1);
	memcpy(t->name, name, len);
	t->name[len] = '\0';
	g->tests[g->test_count] = t;
	/* A pruned test of the same name stays in the table, out of the index. */
	if (name_index_put(&g->test_index, t->name, g->test_count, test_key, g->tests) < 0) {
		free(t);
		return NULL;
	}
	g->test_count++;
	return t;
}

int keep_blob(struct gen *g, char *blob)
{
	if (g->blob_count == g->blob_cap) {
		size_t cap = g->blob_cap ? g->blob_cap * 2 : 16;
		char **blobs = realloc(g->blobs, cap * sizeof(*blobs));

		if (!blobs) {
			free(blob);
			return -ENOMEM;
		}
		g->blobs = blobs;
		g->blob_cap = cap;
	}
	g->blobs[g->blob_count++] = blob;
	return 0;
}

int str_to_text(struct gen *g, struct bci_str *b, struct bci_results_text *t)
{
	char *p = b->data;

	if (!p) {
		*t = (struct bci_results_text){ "", 0 };
		return 0;
	}
	*t = (struct bci_results_text){ p, b->len };
	*b = (struct bci_str){ 0 };
	return keep_blob(g, p);
}

static void add_runtime(struct test *t, double time)
{
	t->time = t->has_time ? t->time + time : time;
	t->has_time = true;
}

static void set_runtime(struct test *t, double time)
{
	t->time = time;
	t->has_time = true;
}

static struct subtest *find_subtest(struct gen *g, const char *name)
{
	long i = name_index_find(&g->sub_index, name, subtest_key, g->subs);

	return i >= 0 ? &g->subs[i] : NULL;
}

/* Adds a subtest once, in first-seen order, as igt_runner's list does. */
int add_subtest(struct gen *g, const char *name)
{
	struct subtest *sub;

	if (name[0] == '\0' || find_subtest(g, name))
		return 0;
	if (g->sub_count == g->sub_cap) {
		size_t cap = g->sub_cap ? g->sub_cap * 2 : 16;
		struct subtest *subs = realloc(g->subs, cap * sizeof(*subs));

		if (!subs)
			return -ENOMEM;
		g->subs = subs;
		g->sub_cap = cap;
		/* The index holds positions, not pointers: it survives the move. */
	}
	sub = &g->subs[g->sub_count];
	memset(sub, 0, sizeof(*sub));
	sub->name = strdup(name);
	if (!sub->name)
		return -ENOMEM;
	if (name_index_put(&g->sub_index, sub->name, g->sub_count, subtest_key, g->subs) < 0) {
		free(sub->name);
		return -ENOMEM;
	}
	g->sub_count++;
	return 0;
}

static const char *dynamic_key(const void *table, size_t index)
{
	return ((char *const *)table)[index];
}

/* Adds a dynamic subtest once, in first-seen order. */
int add_dynamic(struct subtest *sub, const char *name)
{
	char *copy;

	if (name_index_find(&sub->dynamic_index, name, dynamic_key, sub->dynamic) >= 0)
		return 0;
	if (sub->dynamic_count == sub->dynamic_cap) {
		size_t cap = sub->dynamic_cap ? sub->dynamic_cap * 2 : 8;
		char **dyn = realloc(sub->dynamic, cap * sizeof(*dyn));

		if (!dyn)
			return -ENOMEM;
		sub->dynamic = dyn;
		sub->dynamic_cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	sub->dynamic[sub->dynamic_count] = copy;
	if (name_index_put(&sub->dynamic_index, copy, sub->dynamic_count, dynamic_key,
			   sub->dynamic) < 0) {
		free(copy);
		return -ENOMEM;
	}
	sub->dynamic_count++;
	return 0;
}

/*
 * A job's tables are emptied for the next job, their room kept while it is
 * small: most jobs have a test or two, and 10k jobs allocating and freeing
 * the same few tables were a sizeable part of an ingest.
 */
#define JOB_KEEP 256

static void name_index_clear(struct name_index *ix)
{
	if (ix->cap > JOB_KEEP) {
		name_index_release(ix);
		return;
	}
	if (ix->count)
		memset(ix->slots, 0, ix->cap * sizeof(*ix->slots));
	ix->count = 0;
}

/* *@array (@cap entries) freed when it grew past JOB_KEEP or @all; kept otherwise. */
static void job_array_clear(void *array_ptr, size_t *cap, bool all)
{
	void **array = array_ptr;

	if (all || *cap > JOB_KEEP) {
		free(*array);
		*array = NULL;
		*cap = 0;
	}
}

static void job_clear(struct gen *g, bool all)
{
	size_t i, k;

	/* The next job's binary may be at the same address. */
	g->names[0].binary = g->names[1].binary = NULL;
	for (i = 0; i < g->test_count; i++) {
		if (!all && g->spare_count < sizeof(g->spare) / sizeof(g->spare[0]))
			g->spare[g->spare_count++] = g->tests[i];
		else
			free(g->tests[i]);
	}
	g->test_count = 0;
	for (i = 0; all && i < g->spare_count; i++)
		free(g->spare[i]);
	if (all)
		g->spare_count = 0;
	job_array_clear(&g->tests, &g->test_cap, all);
	for (i = 0; i < g->sub_count; i++) {
		for (k = 0; k < g->subs[i].dynamic_count; k++)
			free(g->subs[i].dynamic[k]);
		free(g->subs[i].dynamic);
		name_index_release(&g->subs[i].dynamic_index);
		free(g->subs[i].name);
	}
	g->sub_count = 0;
	job_array_clear(&g->subs, &g->sub_cap, all);
	for (i = 0; i < g->blob_count; i++)
		free(g->blobs[i]);
	g->blob_count = 0;
	job_array_clear(&g->blobs, &g->blob_cap, all);
	/* Built when first needed, which an empty table with room would hide. */
	name_index_release(&g->requested_index);
	if (all) {
		name_index_release(&g->test_index);
		name_index_release(&g->sub_index);
	} else {
		name_index_clear(&g->test_index);
		name_index_clear(&g->sub_index);
	}
}

void job_reset(struct gen *g)
{
	job_clear(g, false);
}

void gen_release(struct gen *g)
{
	job_clear(g, true);
	free(g->bins);
	g->bins = NULL;
	g->bin_count = g->bin_cap = 0;
	name_index_release(&g->bin_index);
	free(g->settings.name);
	g->settings.name = NULL;
	if (g->has_filter)
		regfree(&g->dmesg_filter);
	g->has_filter = false;
	free(g->dmesg_line_buf);
	g->dmesg_line_buf = NULL;
}

void piglit_name_of(struct gen *g, const char *binary, const char *subtest, char name[NAME_SIZE])
{
	size_t sub_len = subtest ? strlen(subtest) : 0;
	struct name_cache *c = g->names;

	for (int i = 0; i < 2; i++)
		if (c[i].binary == binary && c[i].whole == !subtest &&
		    (!subtest || !strcmp(c[i].subtest, subtest))) {
			memcpy(name, c[i].name, strlen(c[i].name) + 1);
			return;
		}
	bci_igt_piglit_name(binary, subtest, name, NAME_SIZE);
	/* Only the job's binary (its pointer is the job's until job_reset) and names that fit. */
	if (!g->job || binary != g->job->binary || sub_len >= NAME_SIZE)
		return;
	c[1] = c[0];
	c[0].binary = binary;
	c[0].whole = !subtest;
	memcpy(c[0].subtest, subtest ? subtest : "", sub_len + 1);
	memcpy(c[0].name, name, strlen(name) + 1);
}

void piglit_name(struct gen *g, const char *subtest, char name[NAME_SIZE])
{
	piglit_name_of(g, g->job->binary, subtest, name);
}

/* ---- per-binary counters for "totals" and "runtimes" ---- */

static struct bci_results_binary *get_binary(struct gen *g, const char *name)
{
	long i = name_index_find(&g->bin_index, name, binary_key, g->bins);
	struct bci_results_binary *b;

	if (i >= 0)
		return &g->bins[i];
	if (g->bin_count == g->bin_cap) {
		size_t cap = g->bin_cap ? g->bin_cap * 2 : 16;
		struct bci_results_binary *bins = realloc(g->bins, cap * sizeof(*bins));

		if (!bins)
			return NULL;
		g->bins = bins;
		g->bin_cap = cap;
	}
	b = &g->bins[g->bin_count];
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", name);
	if (name_index_put(&g->bin_index, b->name, g->bin_count, binary_key, g->bins) < 0)
		return NULL;
	g->bin_count++;
	return b;
}

int list_binary_runtime(struct gen *g)
{
	char name[NAME_SIZE];
	struct bci_results_binary *b;

	if (g->no_totals)
		return 0;
	piglit_name(g, NULL, name);
	b = get_binary(g, name);
	if (!b)
		return -ENOMEM;
	b->runtime_listed = true;
	return 0;
}

int add_binary_runtime(struct gen *g, double time)
{
	char name[NAME_SIZE];
	struct bci_results_binary *b;

	if (g->no_totals)
		return 0;
	piglit_name(g, NULL, name);
	b = get_binary(g, name);
	if (!b)
		return -ENOMEM;
	b->runtime = b->has_runtime ? b->runtime + time : time;
	b->has_runtime = true;
	return 0;
}

static void count_result(struct bci_results_binary *b, struct gen *g, const char *result)
{
	int idx = bci_igt_result_index(result);

	/* igt_runner only warns about a result it has no counter for. */
	if (idx < 0)
		return;
	b->counts[idx]++;
	g->all_counts[idx]++;
}

/* Counts one test; 1 when it has no result (igt_runner stops counting the job there). */
static int count_test(struct gen *g, struct bci_results_binary *b, const char *name)
{
	struct test *t = find_test(g, name);

	if (!t)
		return 0;
	if (!t->result)
		return 1;
	count_result(b, g, t->result);
	return 0;
}

/* A test that nothing gave a result: say so, and call it what it is. */
static void settle_results(struct gen *g)
{
	size_t i;

	for (i = 0; i < g->test_count; i++) {
		struct test *t = g->tests[i];

		if (t->deleted || t->result)
			continue;
		gen_warn(g, "%s: job %zu: nothing gives %s a result (a subtest only the kernel log "
			 "names?): incomplete", g->dir, g->job_number, t->name);
		t->result = "incomplete";
	}
}

int add_to_totals(struct gen *g, const char *binary)
{
	char name[NAME_SIZE], dyn_name[NAME_SIZE];
	struct bci_results_binary *b;
	struct test *t;
	size_t i, k;

	if (g->no_totals) {
		/* Every test the job hands out still gets a result. */
		settle_results(g);
		return 0;
	}
	piglit_name_of(g, binary, NULL, name);
	b = get_binary(g, name);
	if (!b)
		return -ENOMEM;
	g->run.any_totals = true;
	b->in_totals = true;
	/* Every test the job hands out has a result by now, piglit readers need one. */
	settle_results(g);
	if (g->sub_count == 0) {
		t = find_test(g, name);
		if (t)
			count_result(b, g, t->result);
		return 0;
	}
	for (i = 0; i < g->sub_count; i++) {
		piglit_name_of(g, binary, g->subs[i].name, name);
		if (count_test(g, b, name))
			return 0;
		for (k = 0; k < g->subs[i].dynamic_count; k++) {
			bci_igt_piglit_name_dynamic(name, g->subs[i].dynamic[k], dyn_name, NAME_SIZE);
			if (count_test(g, b, dyn_name))
				return 0;
		}
	}
	return 0;
}

/* ---- journal.txt ---- */

/* "exit:": the binary's runtime, and the test's when it has no subtests. */
static int journal_exit(struct gen *g, const struct bci_job_journal_line *entry)
{
	char name[NAME_SIZE];
	struct test *t;
	int ret = add_binary_runtime(g, entry->time);

	if (ret < 0)
		return ret;
	if (g->sub_count == 0 && g->job->requested_count == 0) {
		piglit_name(g, NULL, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		add_runtime(t, entry->time);
	}
	return 0;
}

/* "timeout:": it belongs to the subtest that was running. */
static int journal_timeout(struct gen *g, const struct bci_job_journal_line *entry)
{
	char name[NAME_SIZE];
	struct test *t;

	if (g->sub_count == 0)
		return 0;
	piglit_name(g, g->subs[g->sub_count - 1].name, name);
	t = get_test(g, name);
	if (!t)
		return -ENOMEM;
	t->result = "timeout";
	add_runtime(t, entry->time);
	return add_binary_runtime(g, entry->time);
}

/* What the journal's end says: the last subtest aborted or stopped, or the job's own result. */
static int journal_verdict(struct gen *g, int exitcode, bool has_timeout)
{
	const struct job *job = g->job;
	char name[NAME_SIZE];
	const char *subtest = NULL;
	struct test *t;
	int ret;

	if (g->sub_count &&
	    (exitcode == BCI_IGT_EXIT_ABORT || exitcode == BCI_RESULTS_EXIT_GRACEFUL)) {
		piglit_name(g, g->subs[g->sub_count - 1].name, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		t->result = exitcode == BCI_IGT_EXIT_ABORT ? "abort" : "notrun";
	}
	if (g->sub_count)
		return 0;
	/*
	 * Killed before it announced a subtest: had the joblist asked for
	 * one, the result is that subtest's, not the binary's.
	 */
	if (job->requested_count > 0) {
		subtest = job->requested[0];
		ret = add_subtest(g, subtest);
		if (ret < 0)
			return ret;
	}
	piglit_name(g, subtest, name);
	t = get_test(g, name);
	if (!t)
		return -ENOMEM;
	t->result = has_timeout ? "timeout" : bci_job_journal_result(exitcode);
	return 0;
}

/* @text (absent journal: empty) is cut into lines in place. */
int fill_from_journal(struct gen *g, const char *rel, char *text, size_t len)
{
	int exitcode = BCI_RESULTS_EXIT_INCOMPLETE;
	bool has_timeout = false;
	size_t lineno = 0;
	char *line = text, *end = text + len;
	int ret;

	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		bool terminated = nl != NULL;
		struct bci_job_journal_line entry;

		lineno++;
		if (!nl)
			nl = end;
		*nl = '\0';
		if (strlen(line) != (size_t)(nl - line))
			return gen_error(g, -EINVAL, "%s/%s:%zu: NUL byte in line", g->dir, rel, lineno);
		ret = bci_job_journal_parse_line(line, terminated, &entry);
		if (ret < 0)
			return gen_error(g, -EINVAL, "%s/%s:%zu: malformed %s line '%s'", g->dir, rel, lineno,
					 entry.kind == BCI_JOB_JOURNAL_EXIT ? "exit" : "timeout", line);
		switch (entry.kind) {
		case BCI_JOB_JOURNAL_EXIT:
			exitcode = entry.code;
			ret = journal_exit(g, &entry);
			break;
		case BCI_JOB_JOURNAL_TIMEOUT:
			has_timeout = true;
			ret = journal_timeout(g, &entry);
			break;
		case BCI_JOB_JOURNAL_EMPTY:
			if (terminated)
				return gen_error(g, -EINVAL, "%s/%s:%zu: empty line", g->dir, rel, lineno);
			break;
		case BCI_JOB_JOURNAL_SUBTEST:
			ret = add_subtest(g, line);
			break;
		}
		if (ret < 0)
			return ret;
		line = nl + 1;
	}
	return journal_verdict(g, exitcode, has_timeout);
}

/* ---- out.txt, err.txt ---- */

static struct bci_results_text slice(const char *buf, size_t begin, size_t end)
{
	return (struct bci_results_text){ buf + begin, end - begin };
}

static void set_stream(struct test *t, bool is_out, struct bci_results_text text)
{
	if (is_out)
		t->out = text;
	else
		t->err = text;
}

/* The dynamic subtests inside @span of subtest @sub (test @t). */
static int fill_dynamic(struct gen *g, const struct bci_igt_output *parsed, struct subtest *sub,
			struct test *t, const struct bci_igt_span *span, bool is_out,
			struct bci_results_text version)
{
	char dyn_name[NAME_SIZE], dynamic[NAME_SIZE];
	struct bci_igt_span dspan;
	size_t cursor = 0;
	struct test *d;
	int ret;

	while (bci_igt_output_next_dynamic(parsed, span, &cursor, dynamic, sizeof(dynamic), &dspan)) {
		bci_igt_piglit_name_dynamic(t->name, dynamic, dyn_name, NAME_SIZE);
		ret = add_dynamic(sub, dynamic);
		if (ret < 0)
			return ret;
		d = get_test(g, dyn_name);
		if (!d)
			return -ENOMEM;
		set_stream(d, is_out, slice(parsed->buf, dspan.begin, dspan.end));
		if (version.ptr)
			d->version = version;
		if (!d->result) {
			const char *result = dspan.result;

			/* An unfinished dynamic subtest shares its parent's abort or notrun. */
			if (!strcmp(result, "incomplete") && t->result &&
			    (!strcmp(t->result, "abort") || !strcmp(t->result, "notrun")))
				result = t->result;
			d->result = result;
			set_runtime(d, dspan.time);
		}
	}
	return 0;
}

static int fill_subtests(struct gen *g, const struct bci_igt_output *parsed, bool is_out,
			 struct bci_results_text version)
{
	char name[NAME_SIZE];
	size_t i;
	int ret;

	for (i = 0; i < g->sub_count; i++) {
		struct subtest *sub = &g->subs[i];
		struct bci_igt_span span;
		struct test *t;

		piglit_name(g, sub->name, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		bci_igt_output_subtest(parsed, sub->name, &span);
		set_stream(t, is_out, slice(parsed->buf, span.begin, span.end));
		if (version.ptr)
			t->version = version;
		if (!t->result) {
			t->result = span.result;
			set_runtime(t, span.time);
		}
		ret = fill_dynamic(g, parsed, sub, t, &span, is_out, version);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int fill_from_output(struct gen *g, const char *buf, size_t len, bool is_out)
{
	struct bci_igt_output parsed;
	struct bci_results_text version = { NULL, 0 };
	char name[NAME_SIZE];
	struct test *t;
	int ret;

	ret = bci_igt_output_parse(&parsed, buf, len);
	if (ret < 0)
		return ret;
	if (parsed.has_version)
		version = slice(buf, parsed.version_offset, parsed.version_offset + parsed.version_len);
	if (g->sub_count) {
		ret = fill_subtests(g, &parsed, is_out, version);
		goto out_parsed;
	}
	piglit_name(g, NULL, name);
	t = get_test(g, name);
	if (!t) {
		ret = -ENOMEM;
		goto out_parsed;
	}
	set_stream(t, is_out, slice(buf, 0, parsed.len));
	if (version.ptr)
		t->version = version;
out_parsed:
	bci_igt_output_release(&parsed);
	return ret;
}

/* ---- overrides, pruning ---- */

static bool has_data(const struct bci_results_text *t)
{
	return t->ptr && t->len > 0;
}

static void override_one(struct test *t)
{
	const char *result = t->result ? t->result : "";

	if (!strcmp(result, "pass") && t->err.ptr &&
	    bci_igt_err_has_warnings(t->err.ptr, t->err.len)) {
		t->result = "warn";
		result = "warn";
	}
	if (t->warnings.ptr) {
		if (!strcmp(result, "pass") || !strcmp(result, "warn"))
			t->result = "dmesg-warn";
		else if (!strcmp(result, "fail"))
			t->result = "dmesg-fail";
	}
	/* Nothing at all written: the machine went down under the test. */
	if (!has_data(&t->out) && !has_data(&t->err) && !has_data(&t->dmesg)) {
		t->out = (struct bci_results_text){ NO_OUTPUT_TEXT, sizeof(NO_OUTPUT_TEXT) - 1 };
		t->result = "incomplete";
	}
}

int override_results(struct gen *g)
{
	char name[NAME_SIZE], dyn_name[NAME_SIZE];
	struct test *t;
	size_t i, k;

	if (g->sub_count == 0) {
		piglit_name(g, NULL, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		override_one(t);
		return 0;
	}
	for (i = 0; i < g->sub_count; i++) {
		piglit_name(g, g->subs[i].name, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		override_one(t);
		for (k = 0; k < g->subs[i].dynamic_count; k++) {
			bci_igt_piglit_name_dynamic(name, g->subs[i].dynamic[k], dyn_name, NAME_SIZE);
			t = get_test(g, dyn_name);
			if (!t)
				return -ENOMEM;
			override_one(t);
		}
	}
	return 0;
}

static const char *requested_key(const void *table, size_t index)
{
	return ((char *const *)table)[index];
}

/* Indexes the job's requested subtests: a joblist line may name any number. */
static int index_requested(struct gen *g)
{
	const struct job *job = g->job;
	size_t i;

	for (i = 0; i < job->requested_count; i++)
		if (name_index_put(&g->requested_index, job->requested[i], i, requested_key,
				   job->requested) < 0) {
			name_index_release(&g->requested_index);
			return -ENOMEM;
		}
	return 0;
}

/* Whether the joblist asked for @subtest (or its @dynamic subtest) by name. */
static bool is_requested(struct gen *g, const char *subtest, const char *dynamic)
{
	const struct job *job = g->job;
	char want[512];
	size_t i;

	if (dynamic)
		snprintf(want, sizeof(want), "%s@%s", subtest, dynamic);
	else
		snprintf(want, sizeof(want), "%s", subtest);
	if (!g->requested_index.cap && job->requested_count)
		index_requested(g);
	if (g->requested_index.cap)
		return name_index_find(&g->requested_index, want, requested_key, job->requested) >= 0;
	/* No memory for the index: ask the list itself. */
	for (i = 0; i < job->requested_count; i++)
		if (!strcmp(job->requested[i], want))
			return true;
	return false;
}

static void delete_test(struct gen *g, const char *name)
{
	struct test *t = find_test(g, name);

	if (t)
		t->deleted = true;
}

void prune_subtests(struct gen *g)
{
	int mode = g->settings.prune_mode;
	char name[NAME_SIZE], dyn_name[NAME_SIZE];
	size_t i, k;

	if (mode == PRUNE_KEEP_ALL)
		return;
	for (i = 0; i < g->sub_count; i++) {
		struct subtest *sub = &g->subs[i];

		piglit_name(g, sub->name, name);
		if (mode == PRUNE_KEEP_DYNAMIC) {
			/* A subtest with dynamic subtests is only their container. */
			if (sub->dynamic_count)
				delete_test(g, name);
			continue;
		}
		if (mode == PRUNE_KEEP_REQUESTED && !is_requested(g, sub->name, NULL))
			delete_test(g, name);
		for (k = 0; k < sub->dynamic_count; k++) {
			if (mode == PRUNE_KEEP_REQUESTED &&
			    is_requested(g, sub->name, sub->dynamic[k]))
				continue;
			bci_igt_piglit_name_dynamic(name, sub->dynamic[k], dyn_name, NAME_SIZE);
			delete_test(g, dyn_name);
		}
	}
}

/* ---- a job that never ran ---- */

/* The joblist's tests, never started: igt_runner lists them as notrun. */
int add_notrun_results(struct gen *g)
{
	const struct job *job = g->job;
	char name[NAME_SIZE];
	struct test *t;
	size_t i;
	int ret;

	if (job->requested_count == 0) {
		/* In multiple mode "no subtests" and "all subtests" look the same. */
		if (g->settings.multiple_mode)
			return 0;
		piglit_name(g, NULL, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		t->out = t->err = t->dmesg = (struct bci_results_text){ "", 0 };
		t->result = "notrun";
	}
	for (i = 0; i < job->requested_count; i++) {
		piglit_name(g, job->requested[i], name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		t->out = t->err = t->dmesg = (struct bci_results_text){ "", 0 };
		t->result = "notrun";
		ret = add_subtest(g, job->requested[i]);
		if (ret < 0)
			return ret;
	}
	return add_to_totals(g, job->binary);
}
