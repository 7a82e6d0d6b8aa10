// SPDX-License-Identifier: MIT
/*
 * A build's results as a matrix (report.h, matrix.h): the build's runs,
 * each machine's results with their tests numbered (name_numbers.h), then
 * sorted into cells of tests x machines (machines in natural order, as
 * bci_natural_compare() has them), each change of the report marked in its
 * cell. Read from the store once, or taken from the report's own
 * reading of the results (bci_matrix_seen), so a 400k-result build is read
 * once for both.
 */
#include "matrix.h"
#include "../store/store.h"
#include "sort.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One result as read, before the tests are sorted: its test by first-seen index. */
struct matrix_entry {
	unsigned test;
	int run, status, job;
};

static int text_copy(char **to, const char *from)
{
	*to = strdup(from ? from : "");
	return *to ? 0 : -ENOMEM;
}

static int run_add(const struct bci_store_run *run, void *ctx)
{
	struct bci_matrix *m = ctx;
	struct bci_matrix_run *r;
	void *grown = realloc(m->runs, (m->n_runs + 1) * sizeof(*m->runs));

	if (!grown)
		return -ENOMEM;
	m->runs = grown;
	r = &m->runs[m->n_runs++];
	*r = (struct bci_matrix_run){ .key = run->key };
	if (text_copy(&r->machine, run->machine) || text_copy(&r->run_id, run->run_id) ||
	    text_copy(&r->digest, run->digest) || text_copy(&r->archive_path, run->archive_path) ||
	    text_copy(&r->archive_root, run->archive_root))
		return -ENOMEM;
	return 0;
}

/* Machines in natural order (big-2 before big-10), each machine's runs in the store's order. */
static int run_order(const void *a, const void *b)
{
	const struct bci_matrix_run *ra = a, *rb = b;
	int order = bci_natural_compare(ra->machine, rb->machine);

	if (order)
		return order;
	return ra->key < rb->key ? -1 : ra->key > rb->key;
}

/* The columns, once every run is read: the runs sorted by machine, one column a machine. */
static int machines_make(struct bci_matrix *m)
{
	if (m->n_runs > 1)
		qsort(m->runs, m->n_runs, sizeof(*m->runs), run_order);
	for (size_t i = 0; i < m->n_runs; i++) {
		struct bci_matrix_run *r = &m->runs[i];

		if (!m->n_machines || strcmp(m->machines[m->n_machines - 1], r->machine)) {
			void *grown = realloc(m->machines, (m->n_machines + 1) * sizeof(*m->machines));

			if (!grown)
				return -ENOMEM;
			m->machines = grown;
			m->machines[m->n_machines] = strdup(r->machine);
			if (!m->machines[m->n_machines++])
				return -ENOMEM;
		}
		r->machine_index = m->n_machines - 1;
	}
	return 0;
}

/* The build's runs and its machines, from the store. */
static int runs_read(struct bci_store *store, const char *build, struct bci_matrix *m, char *err,
		     size_t err_size)
{
	int ret = bci_store_build_runs_each(store, build, run_add, m, err, err_size);

	return ret < 0 ? ret : machines_make(m);
}

struct read_ctx {
	struct bci_matrix *m;
	int run;
	size_t row;
};

/*
 * The result of test @name, row @row of run @run (an index into m->runs),
 * kept until the tests are sorted.
 */
static int entry_put(struct bci_matrix *m, const char *name, size_t row, int run, int status, int job)
{
	long t = bci_name_number_at(&m->names, name, row);

	if (t < 0)
		return (int)t;
	if (m->n_entries == m->cap_entries) {
		size_t cap = m->cap_entries ? m->cap_entries * 2 : 16384;
		struct matrix_entry *grown = realloc(m->entries, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		m->entries = grown;
		m->cap_entries = cap;
	}
	m->entries[m->n_entries++] = (struct matrix_entry){
		.test = (unsigned)t, .run = run, .status = status, .job = job,
	};
	return 0;
}

static int entry_add(const struct bci_store_result *result, void *ctx)
{
	struct read_ctx *r = ctx;

	return entry_put(r->m, result->name, r->row++, r->run, bci_status_parse(result->result),
			 result->job);
}

static int name_order(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static long test_index(const struct bci_matrix *m, const char *name)
{
	const char *const *at = bsearch(&name, m->tests, m->n_tests, sizeof(*m->tests), name_order);

	return at ? at - m->tests : -1;
}

static void matrix_release(struct bci_matrix *m)
{
	free(m->tests);
	for (size_t i = 0; i < m->n_machines; i++)
		free(m->machines[i]);
	free(m->machines);
	for (size_t i = 0; i < m->n_runs; i++) {
		free(m->runs[i].machine);
		free(m->runs[i].run_id);
		free(m->runs[i].digest);
		free(m->runs[i].archive_path);
		free(m->runs[i].archive_root);
	}
	free(m->runs);
	free(m->cells);
	bci_name_numbers_release(&m->names);
	free(m->entries);
	free(m->build);
	if (m->has_lock)
		pthread_mutex_destroy(&m->lock);
}

/*
 * The cells, once every result is an entry: the names numbered as they
 * came are sorted, and the cells filled from the entries (a few bytes a
 * result, so 400k results cost megabytes, not a second pass).
 */
static int matrix_cells(struct bci_matrix *m, char *err, size_t err_size)
{
	const char **by_seen = m->names.names;
	size_t n_tests = m->names.n;
	unsigned *sorted_index = NULL;
	int ret = 0;

	sorted_index = malloc((n_tests + 1) * sizeof(*sorted_index));
	m->tests = malloc((n_tests + 1) * sizeof(*m->tests));
	m->cells = malloc((n_tests * m->n_machines + 1) * sizeof(*m->cells));
	if (!sorted_index || !m->tests || !m->cells) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(m->tests, by_seen, n_tests * sizeof(*m->tests));
	m->n_tests = n_tests;
	qsort(m->tests, m->n_tests, sizeof(*m->tests), name_order);
	/* The sorted array holds the same pointers: each name's new place, by first-seen number. */
	for (size_t t = 0; t < m->n_tests; t++)
		sorted_index[t] = (unsigned)test_index(m, by_seen[t]);
	for (size_t i = 0; i < m->n_tests * m->n_machines; i++)
		m->cells[i] = (struct bci_matrix_cell){ .status = -1, .run = -1, .change = -1, .job = -1 };
	for (size_t i = 0; i < m->n_entries; i++) {
		const struct matrix_entry *e = &m->entries[i];
		struct bci_matrix_cell *c = &m->cells[sorted_index[e->test] * m->n_machines +
					   m->runs[e->run].machine_index];

		if (e->status < 0) {
			snprintf(err, err_size, "machine %s, run '%s': test %s has an unknown status",
				 m->runs[e->run].machine, m->runs[e->run].run_id, by_seen[e->test]);
			ret = -EPROTO;
			goto out;
		}
		/* A later run of the same machine replaces an earlier one's (as the report reads them). */
		*c = (struct bci_matrix_cell){ .status = e->status, .run = e->run, .change = -1, .job = e->job };
	}
out:
	free(m->entries);
	m->entries = NULL;
	m->n_entries = m->cap_entries = 0;
	free(sorted_index);
	return ret;
}

/* Each run's results read once, then the cells. */
static int matrix_load(struct bci_store *store, const char *build, struct bci_matrix *m, char *err,
		       size_t err_size)
{
	int ret = runs_read(store, build, m, err, err_size);

	for (size_t i = 0; i < m->n_runs && ret >= 0; i++) {
		struct read_ctx c = { .m = m, .run = (int)i };

		ret = bci_store_results_each_brief(store, m->runs[i].key, entry_add, &c, err,
						   err_size);
	}
	return ret < 0 ? ret : matrix_cells(m, err, err_size);
}

/* Each change of the report marked in its cell. */
static void matrix_mark(const struct bci_report *r, struct bci_matrix *m)
{
	for (size_t i = 0; i < r->n_changes; i++) {
		long t = test_index(m, r->changes[i].test);

		for (size_t j = 0; t >= 0 && j < m->n_machines; j++)
			if (!strcmp(m->machines[j], r->changes[i].machine))
				m->cells[t * m->n_machines + j].change = (int)i;
	}
}

/* The view's new, empty matrix (the view owns it, even when a later step fails); NULL: -ENOMEM. */
static struct bci_matrix *view_matrix_new(struct bci_matrix_view *view)
{
	view->matrix = calloc(1, sizeof(*view->matrix));
	return view->matrix;
}

int bci_matrix_load(struct bci_store *store, const char *build,
		    struct bci_matrix_view *view, char *err, size_t err_size)
{
	struct bci_matrix *m = view_matrix_new(view);
	int ret;

	if (!m)
		return -ENOMEM;
	ret = matrix_load(store, build, m, err, err_size);
	view->tests = m->n_tests;
	view->machines = m->n_machines;
	return ret;
}

int bci_matrix_begin(struct bci_store *store, const char *build,
		     struct bci_matrix_view *view, char *err, size_t err_size)
{
	struct bci_matrix *m = view_matrix_new(view);
	int ret;

	if (!m || !(m->build = strdup(build)))
		return -ENOMEM;
	if (pthread_mutex_init(&m->lock, NULL))
		return -ENOMEM;
	m->has_lock = true;
	ret = runs_read(store, build, m, err, err_size);
	return ret < 0 ? ret : 0;
}

/* The index in m->runs of the run keyed @key, @hint first; -1 if the matrix has no such run. */
static int run_index(const struct bci_matrix *m, int64_t key, int hint)
{
	if (hint >= 0 && (size_t)hint < m->n_runs && m->runs[hint].key == key)
		return hint;
	for (size_t i = 0; i < m->n_runs; i++)
		if (m->runs[i].key == key)
			return (int)i;
	return -1;
}

int bci_matrix_seen(void *ctx, const struct bci_report_seen *rows, size_t n, char *err,
		    size_t err_size)
{
	struct bci_matrix_view *view = ctx;
	struct bci_matrix *m = view->matrix;
	int run = -1, ret = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < n && ret >= 0; i++) {
		run = run_index(m, rows[i].run, run);
		if (run < 0) {
			snprintf(err, err_size, "build %s: a run was stored while its report was"
				 " made: make it again", m->build);
			ret = -EAGAIN;
			break;
		}
		ret = entry_put(m, rows[i].test, i, run, rows[i].status, rows[i].job);
	}
	pthread_mutex_unlock(&m->lock);
	return ret;
}

int bci_matrix_end(const struct bci_report *report, struct bci_matrix_view *view,
		   char *err, size_t err_size)
{
	struct bci_matrix *m = view->matrix;
	int ret = matrix_cells(m, err, err_size);

	view->tests = m->n_tests;
	view->machines = m->n_machines;
	if (ret >= 0)
		matrix_mark(report, m);
	return ret;
}

/* Tries of bci_matrix_report() when runs are stored while it reads. */
#define MATRIX_REPORT_TRIES 3

int bci_matrix_report(struct bci_store *store, const char *build,
		      const struct bci_report_options *options, struct bci_report **report,
		      struct bci_matrix_view *view, char *err, size_t err_size)
{
	struct bci_report_options with_matrix = *options;
	int ret = -EAGAIN;

	with_matrix.seen = bci_matrix_seen;
	with_matrix.seen_ctx = view;
	/* serve ingests while it renders: a run stored between the two readings is read again. */
	for (int i = 0; i < MATRIX_REPORT_TRIES && ret == -EAGAIN; i++) {
		bci_matrix_release(view);
		bci_report_free(*report);
		*report = NULL;
		ret = bci_matrix_begin(store, build, view, err, err_size);
		if (ret >= 0)
			ret = bci_report_build(store, build, &with_matrix, report, err, err_size);
		if (ret >= 0)
			ret = bci_matrix_end(*report, view, err, err_size);
	}
	return ret;
}

void bci_matrix_mark(const struct bci_report *report, struct bci_matrix_view *view)
{
	if (view->matrix && view->matrix->cells)
		matrix_mark(report, view->matrix);
}

int bci_matrix_read(struct bci_store *store, const struct bci_report *report,
		    struct bci_matrix_view *view, char *err, size_t err_size)
{
	int ret = bci_matrix_load(store, report->build, view, err, err_size);

	if (ret >= 0)
		bci_matrix_mark(report, view);
	return ret;
}

void bci_matrix_release(struct bci_matrix_view *view)
{
	if (view->matrix) {
		matrix_release(view->matrix);
		free(view->matrix);
	}
	view->matrix = NULL;
}
