// SPDX-License-Identifier: MIT
/*
 * The report of a build: its results against the baseline (report.h says
 * which runs that is), each change classified by the transition table,
 * regressions sorted into known issues (a filter matched), flaky tests (the
 * test changed state inside the baseline window) and possible new issues
 * (nothing explains them), and each machine's suspend+resume latency
 * against the baseline's spread.
 *
 * Memory: one machine at a time. Each test name is given a number once per
 * thread (name_numbers.h); a machine's build results and baseline are two
 * arrays by that number (10k tests: well under a few MiB).
 */
#include "name_numbers.h"
#include "report.h"
#include "../store/store.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How much of a test's log a filter's regex reads. */
#define BCI_FILTER_LOG_MAX (8 << 20)

/* A machine's tests by number: status -1 where it has none. */
struct test_cell {
	int status;		/* build: its status; baseline: the latest status it ran with */
	unsigned seen;		/* baseline: bit per status seen in the window (notrun aside) */
	int run;		/* build: index of the run that holds it */
	int job;		/* build: the result's job */
};

struct test_cells {
	struct test_cell *v;
	size_t n;
};

/* The cell of test number @id, the array grown (new cells empty) to hold it; NULL: no memory. */
static struct test_cell *cell_at(struct test_cells *c, long id)
{
	if ((size_t)id >= c->n) {
		size_t n = c->n ? c->n : 1024;
		struct test_cell *grown;

		while (n <= (size_t)id)
			n *= 2;
		grown = realloc(c->v, n * sizeof(*grown));
		if (!grown)
			return NULL;
		for (size_t i = c->n; i < n; i++)
			grown[i] = (struct test_cell){ .status = -1 };
		c->v = grown;
		c->n = n;
	}
	return &c->v[id];
}

/* Every cell empty again, for the next machine. */
static void cells_clear(struct test_cells *c)
{
	for (size_t i = 0; i < c->n; i++)
		c->v[i] = (struct test_cell){ .status = -1 };
}

/* ---- runs and builds read from the store ---- */

struct run_ref {
	char *machine, *run_id;
	int64_t key;
};

struct run_list {
	struct run_ref *v;
	size_t n;
};

static void runs_release(struct run_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].machine);
		free(l->v[i].run_id);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int runs_push(struct run_list *l, const struct bci_store_run *run)
{
	struct run_ref *grown = realloc(l->v, (l->n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	l->v = grown;
	grown[l->n] = (struct run_ref){ .machine = strdup(run->machine),
					.run_id = strdup(run->run_id), .key = run->key };
	if (!grown[l->n].machine || !grown[l->n].run_id) {
		free(grown[l->n].machine);
		free(grown[l->n].run_id);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

static int run_collect(const struct bci_store_run *run, void *ctx)
{
	return runs_push(ctx, run);
}

static int dup_or_null(char **to, const char *from)
{
	*to = from ? strdup(from) : NULL;
	return from && !*to ? -ENOMEM : 0;
}

/* Which builds are in a baseline, asked once per build name. */
struct build_cache {
	struct bci_name_numbers builds;
	signed char *on_base;		/* by number: 1 on the base tree (and no later), 0 not, -1 not asked */
	size_t cap;
};

static void build_cache_release(struct build_cache *b)
{
	bci_name_numbers_release(&b->builds);
	free(b->on_base);
	memset(b, 0, sizeof(*b));
}

/* The place of build number @id's answer, the array grown (new places -1) to hold it; NULL: no memory. */
static signed char *on_base_at(struct build_cache *b, long id)
{
	if ((size_t)id >= b->cap) {
		size_t n = b->cap ? b->cap * 2 : 64;
		signed char *grown;

		while (n <= (size_t)id)
			n *= 2;
		grown = realloc(b->on_base, n);
		if (!grown)
			return NULL;
		memset(grown + b->cap, -1, n - b->cap);
		b->on_base = grown;
		b->cap = n;
	}
	return &b->on_base[id];
}

/* ---- the report being made ---- */

struct maker {
	struct bci_store *store;
	const struct bci_report_options *options;
	struct bci_report *report;
	struct bci_store_build *build;	/* the build reported on */
	struct build_cache cache;
	char *err;
	size_t err_size;
	size_t changes_cap;
	struct bci_name_numbers names;	/* this thread's test numbers */
	struct test_cells now, before;	/* the machine being compared: build, baseline */
};

/* The maker's numbered names and machine arrays, let go. */
static void maker_tables_release(struct maker *m)
{
	bci_name_numbers_release(&m->names);
	free(m->now.v);
	free(m->before.v);
	m->now = m->before = (struct test_cells){ 0 };
}

static int change_add(struct maker *m, const char *test, const struct run_ref *run,
		      enum bci_status from, enum bci_status to, enum bci_change change,
		      enum bci_verdict verdict, const char *bug)
{
	struct bci_report *r = m->report;
	struct bci_report_change *c;

	if (r->n_changes == m->changes_cap) {
		size_t cap = m->changes_cap ? m->changes_cap * 2 : 64;
		struct bci_report_change *grown = realloc(r->changes, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->changes = grown;
		m->changes_cap = cap;
	}
	c = &r->changes[r->n_changes];
	*c = (struct bci_report_change){ .test = strdup(test), .machine = strdup(run->machine),
					 .run_id = strdup(run->run_id), .from = from, .to = to,
					 .change = change, .verdict = verdict, .bug = bug };
	r->n_changes++;
	r->counts[verdict]++;
	return c->test && c->machine && c->run_id ? 0 : -ENOMEM;
}

/* One run's results into @cells: a build's (a later run of the same machine replaces an earlier one's) or a baseline's. */
struct results_ctx {
	struct bci_name_numbers *names;
	size_t row;
	struct test_cells *cells;
	int run;
};

/* The cell of @result's test in @c->cells and the result's status: 0, -ENOMEM or -EPROTO. */
static int result_cell(struct results_ctx *c, const struct bci_store_result *result,
		       struct test_cell **slot, int *status)
{
	long id = bci_name_number_at(c->names, result->name, c->row++);

	*slot = id < 0 ? NULL : cell_at(c->cells, id);
	*status = bci_status_parse(result->result);
	if (!*slot)
		return -ENOMEM;
	return *status < 0 ? -EPROTO : 0;
}

static int build_result(const struct bci_store_result *result, void *ctx)
{
	struct results_ctx *c = ctx;
	struct test_cell *slot;
	int status, ret = result_cell(c, result, &slot, &status);

	if (ret < 0)
		return ret;
	slot->status = status;
	slot->run = c->run;
	slot->job = result->job;
	return 0;
}

/* The machine's results in the build (m->now), handed to options->seen. */
static int seen_give(struct maker *m, const struct run_list *build_runs)
{
	const struct test_cells *now = &m->now;
	struct bci_report_seen *rows = malloc((now->n + 1) * sizeof(*rows));
	size_t n = 0;
	int ret;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < now->n; i++) {
		const struct test_cell *t = &now->v[i];

		if (t->status >= 0)
			rows[n++] = (struct bci_report_seen){
				.run = build_runs->v[t->run].key, .test = m->names.names[i],
				.status = t->status, .job = t->job,
			};
	}
	ret = m->options->seen(m->options->seen_ctx, rows, n, m->err, m->err_size);
	free(rows);
	return ret;
}

static int baseline_result(const struct bci_store_result *result, void *ctx)
{
	struct results_ctx *c = ctx;
	struct test_cell *slot;
	int status, ret = result_cell(c, result, &slot, &status);

	if (ret < 0)
		return ret;
	if (status == BCI_STATUS_NOTRUN) {
		if (slot->status < 0)
			slot->status = status;
		return 0;
	}
	slot->status = status;
	slot->seen |= 1u << status;
	return 0;
}

/* Whether the build named @name is on the base tree and registered no later than ours. */
static int build_on_base(const struct bci_store_build *build, void *ctx)
{
	struct maker *m = ctx;
	const char *base_tree = m->report->base_tree;

	return build->tree && !strcmp(build->tree, base_tree) &&
	       build->registered <= m->build->registered ? 1 : 2;
}

struct baseline_ctx {
	struct maker *m;
	struct run_list *runs;
	int ret;
};

static int baseline_run(const struct bci_store_run *run, void *ctx)
{
	struct baseline_ctx *c = ctx;
	struct maker *m = c->m;
	signed char *on_base;
	long id;
	int ret;

	if (!run->build || !strcmp(run->build, m->build->name))
		return 0;
	id = bci_name_number(&m->cache.builds, run->build);
	on_base = id < 0 ? NULL : on_base_at(&m->cache, id);
	if (!on_base)
		return -ENOMEM;
	if (*on_base < 0) {
		/* Another statement while this one's rows are read: a second cursor on SQLite, and libpq has the rows already. */
		ret = bci_store_build_get(m->store, run->build, build_on_base, m, m->err, m->err_size);
		if (ret < 0)
			return ret;
		*on_base = ret == 1;
	}
	return *on_base ? runs_push(c->runs, run) : 0;
}

/* ---- a test's logs for the filters ---- */

struct log_ctx {
	struct maker *m;
	const struct run_ref *run;
	const char *test;
	char *text[3];
	int read[3];
};

static const char *log_read(const char *which, void *ctx)
{
	static const char *const names[3] = { "out", "err", "dmesg" };
	struct log_ctx *l = ctx;
	char err[512];
	int i, fd;

	for (i = 0; i < 3 && strcmp(names[i], which); i++)
		;
	if (i == 3)
		return NULL;
	if (l->read[i])
		return l->text[i];
	l->read[i] = 1;
	if (!l->m->options->data_dir)
		return NULL;
	fd = bci_store_test_log_open(l->m->store, l->m->options->data_dir, l->run->machine,
				     l->run->run_id, l->test, which, err, sizeof(err));
	if (fd < 0)
		return NULL;
	l->text[i] = malloc(BCI_FILTER_LOG_MAX + 1);
	if (l->text[i]) {
		size_t len = 0;
		ssize_t got;

		while (len < BCI_FILTER_LOG_MAX &&
		       (got = read(fd, l->text[i] + len, BCI_FILTER_LOG_MAX - len)) > 0)
			len += got;
		l->text[i][len] = '\0';
	}
	close(fd);
	return l->text[i];
}

/* ---- suspend latency ---- */

struct latencies {
	double *v;
	size_t n, cap;
};

static int latency_add(const struct bci_store_suspend *cycle, void *ctx)
{
	struct latencies *l = ctx;

	if (cycle->latency < 0)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		double *grown = realloc(l->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n++] = cycle->latency;
	return 0;
}

static int double_order(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), double_order);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int suspend_compare(struct maker *m, const char *machine, const struct run_list *build_runs,
			   size_t first, size_t end, const struct run_list *baseline)
{
	struct latencies now = { 0 }, before = { 0 };
	struct bci_report_suspend *grown, *s;
	int ret = 0;

	for (size_t i = first; i < end && ret >= 0; i++)
		ret = bci_store_suspends_each(m->store, build_runs->v[i].key, latency_add, &now,
					      m->err, m->err_size);
	for (size_t i = 0; i < baseline->n && ret >= 0; i++)
		ret = bci_store_suspends_each(m->store, baseline->v[i].key, latency_add, &before,
					      m->err, m->err_size);
	if (ret < 0 || !now.n)
		goto out;
	grown = realloc(m->report->suspend, (m->report->n_suspend + 1) * sizeof(*grown));
	if (!grown) {
		ret = -ENOMEM;
		goto out;
	}
	m->report->suspend = grown;
	s = &grown[m->report->n_suspend];
	*s = (struct bci_report_suspend){ .machine = strdup(machine), .cycles = (int)now.n,
					  .median = median(now.v, now.n),
					  .baseline_cycles = (int)before.n };
	if (!s->machine) {
		ret = -ENOMEM;
		goto out;
	}
	m->report->n_suspend++;
	if (before.n) {
		qsort(before.v, before.n, sizeof(*before.v), double_order);
		s->baseline_min = before.v[0];
		s->baseline_max = before.v[before.n - 1];
		s->regression = s->median > s->baseline_max;
	}
out:
	free(now.v);
	free(before.v);
	return ret;
}

/* ---- one machine ---- */

static int tag_collect(const char *tag, void *ctx)
{
	struct run_list *tags = ctx;	/* machine field holds the tag */
	struct bci_store_run as_run = { .machine = tag, .run_id = "" };

	return runs_push(tags, &as_run);
}

static int machine_compare(struct maker *m, const struct run_list *build_runs, size_t first,
			   size_t end)
{
	const char *machine = build_runs->v[first].machine;
	struct run_list baseline = { 0 }, tags = { 0 };
	const char **tag_names = NULL;
	struct baseline_ctx bctx = { .m = m, .runs = &baseline };
	int ret = 0;

	cells_clear(&m->now);
	cells_clear(&m->before);
	for (size_t i = first; i < end && ret >= 0; i++) {
		struct results_ctx c = { .names = &m->names, .cells = &m->now, .run = (int)i };

		ret = bci_store_results_each_brief(m->store, build_runs->v[i].key, build_result, &c,
						   m->err, m->err_size);
	}
	if (ret >= 0)
		ret = bci_store_runs_each(m->store, machine, baseline_run, &bctx, m->err, m->err_size);
	if (ret >= 0 && baseline.n > (size_t)m->options->window) {
		size_t drop = baseline.n - m->options->window;

		for (size_t i = 0; i < drop; i++) {
			free(baseline.v[i].machine);
			free(baseline.v[i].run_id);
		}
		memmove(baseline.v, baseline.v + drop, m->options->window * sizeof(*baseline.v));
		baseline.n = m->options->window;
	}
	for (size_t i = 0; i < baseline.n && ret >= 0; i++) {
		struct results_ctx c = { .names = &m->names, .cells = &m->before };

		ret = bci_store_results_each_brief(m->store, baseline.v[i].key, baseline_result, &c,
						   m->err, m->err_size);
	}
	if (ret >= 0)
		ret = bci_store_machine_tags(m->store, machine, tag_collect, &tags, m->err,
					     m->err_size);
	if (ret >= 0) {
		tag_names = calloc(tags.n + 1, sizeof(*tag_names));
		if (!tag_names)
			ret = -ENOMEM;
		for (size_t i = 0; tag_names && i < tags.n; i++)
			tag_names[i] = tags.v[i].machine;
	}
	for (size_t i = 0; i < m->now.n && ret >= 0; i++) {
		const struct test_cell *t = &m->now.v[i];
		const struct test_cell *b = i < m->before.n ? &m->before.v[i] : NULL;
		const char *name = m->names.names[i];
		const struct run_ref *run;
		enum bci_status from;
		enum bci_change change;
		enum bci_verdict verdict;
		const char *bug = NULL;

		if (t->status < 0)
			continue;
		m->report->results++;
		from = b && b->status >= 0 ? (enum bci_status)b->status : BCI_STATUS_NOTRUN;
		change = bci_status_change(from, t->status);
		run = &build_runs->v[t->run];
		if (change == BCI_CHANGE_UNCHANGED)
			continue;
		if (change == BCI_CHANGE_REGRESSION || change == BCI_CHANGE_WARNING) {
			struct log_ctx logs = { .m = m, .run = run, .test = name };
			struct bci_filter_subject subject = {
				.test = name, .machine = machine, .tags = tag_names,
				.status = t->status, .log = log_read, .log_ctx = &logs,
			};

			bug = bci_filters_match(m->options->filters, &subject);
			for (int j = 0; j < 3; j++)
				free(logs.text[j]);
		}
		switch (change) {
		case BCI_CHANGE_REGRESSION:
			verdict = bug ? BCI_VERDICT_KNOWN :
			      b && __builtin_popcount(b->seen) > 1 ? BCI_VERDICT_FLAKY : BCI_VERDICT_NEW;
			break;
		case BCI_CHANGE_WARNING:
			verdict = bug ? BCI_VERDICT_KNOWN : BCI_VERDICT_WARNING;
			break;
		case BCI_CHANGE_FIXED:
			verdict = BCI_VERDICT_FIXED;
			break;
		case BCI_CHANGE_NEW_TEST:
			verdict = BCI_VERDICT_NEW_TEST;
			break;
		default:
			verdict = BCI_VERDICT_NOT_RUN;
			break;
		}
		ret = change_add(m, name, run, from, t->status, change, verdict, bug);
	}
	if (ret >= 0 && m->options->seen)
		ret = seen_give(m, build_runs);
	if (ret >= 0)
		ret = suspend_compare(m, machine, build_runs, first, end, &baseline);
	free(tag_names);
	runs_release(&tags);
	runs_release(&baseline);
	return ret;
}

static int change_order(const void *a, const void *b)
{
	const struct bci_report_change *x = a, *y = b;
	int d = (int)x->verdict - (int)y->verdict;

	if (!d)
		d = strcmp(x->test, y->test);
	return d ? d : strcmp(x->machine, y->machine);
}

void bci_report_free(struct bci_report *r)
{
	if (!r)
		return;
	free(r->build);
	free(r->tree);
	free(r->commit);
	free(r->tier);
	free(r->base);
	free(r->base_tree);
	free(r->series_title);
	free(r->message_id);
	for (size_t i = 0; i < r->n_changes; i++) {
		free(r->changes[i].test);
		free(r->changes[i].machine);
		free(r->changes[i].run_id);
	}
	free(r->changes);
	for (size_t i = 0; i < r->n_suspend; i++)
		free(r->suspend[i].machine);
	free(r->suspend);
	free(r);
}

int bci_report_failed(const struct bci_report *r)
{
	if (r->counts[BCI_VERDICT_NEW])
		return 1;
	for (size_t i = 0; i < r->n_suspend; i++)
		if (r->suspend[i].regression)
			return 1;
	return 0;
}

/* ---- the machines on two threads ---- */

/* One machine's runs: a stretch of the build's runs. */
struct stretch {
	size_t first, end;
};

/*
 * The second half of the machines, compared on a thread with its own
 * connection into a report of its own, merged into the whole after.
 */
struct half {
	struct maker m;
	struct bci_report part;
	const struct run_list *runs;
	const struct stretch *stretches;
	size_t n;
	size_t failed;		/* the stretch that failed */
	int ret;
	char err[1024];
	pthread_t thread;
	bool started;
};

/* The machines of @stretches compared by @m; *@failed: the stretch that failed. */
static int machines_compare(struct maker *m, const struct run_list *runs,
			    const struct stretch *stretches, size_t n, size_t *failed)
{
	int ret = 0;

	for (size_t i = 0; i < n && ret >= 0; i++) {
		ret = machine_compare(m, runs, stretches[i].first, stretches[i].end);
		*failed = i;
	}
	return ret;
}

static void *half_run(void *arg)
{
	struct half *h = arg;
	struct bci_store *store = NULL;

	h->ret = bci_store_open(h->m.options->store_url, h->m.options->data_dir, &store, h->err,
				sizeof(h->err));
	if (h->ret >= 0) {
		h->m.store = store;
		h->ret = machines_compare(&h->m, h->runs, h->stretches, h->n, &h->failed);
	}
	bci_store_close(store);
	return NULL;
}

/* The half's changes and latencies after the first half's (its machines come after). */
static int half_merge(struct bci_report *r, struct half *h)
{
	struct bci_report *p = &h->part;
	struct bci_report_change *changes;
	struct bci_report_suspend *suspend;

	changes = realloc(r->changes, (r->n_changes + p->n_changes + 1) * sizeof(*changes));
	if (!changes)
		return -ENOMEM;
	r->changes = changes;
	suspend = realloc(r->suspend, (r->n_suspend + p->n_suspend + 1) * sizeof(*suspend));
	if (!suspend)
		return -ENOMEM;
	r->suspend = suspend;
	memcpy(r->changes + r->n_changes, p->changes, p->n_changes * sizeof(*changes));
	r->n_changes += p->n_changes;
	memcpy(r->suspend + r->n_suspend, p->suspend, p->n_suspend * sizeof(*suspend));
	r->n_suspend += p->n_suspend;
	free(p->changes);
	free(p->suspend);
	p->changes = NULL;
	p->suspend = NULL;
	p->n_changes = p->n_suspend = 0;
	for (size_t i = 0; i < sizeof(r->counts) / sizeof(r->counts[0]); i++)
		r->counts[i] += p->counts[i];
	r->results += p->results;
	return 0;
}

/* What the half holds that the merge did not take. */
static void half_release(struct half *h)
{
	for (size_t i = 0; i < h->part.n_changes; i++) {
		free(h->part.changes[i].test);
		free(h->part.changes[i].machine);
		free(h->part.changes[i].run_id);
	}
	free(h->part.changes);
	for (size_t i = 0; i < h->part.n_suspend; i++)
		free(h->part.suspend[i].machine);
	free(h->part.suspend);
	build_cache_release(&h->m.cache);
	maker_tables_release(&h->m);
}

static int base_tree_copy(const struct bci_store_build *build, void *ctx)
{
	return dup_or_null(ctx, build->tree);
}

int bci_report_build(struct bci_store *store, const char *build,
		     const struct bci_report_options *options, struct bci_report **report,
		     char *err, size_t err_size)
{
	struct maker m = { .store = store, .options = options, .err = err, .err_size = err_size };
	struct run_list runs = { 0 };
	struct stretch *stretches = NULL;
	struct half *half = NULL;
	size_t n_mine, failed = 0;
	struct bci_report *r;
	int ret;

	if (options->window < 1) {
		snprintf(err, err_size, "the baseline window must be at least one run");
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	m.report = r;
	r->window = options->window;
	ret = bci_store_build_read(store, build, &m.build, err, err_size);
	if (ret < 0)
		goto fail;
	if (dup_or_null(&r->build, m.build->name) || dup_or_null(&r->tree, m.build->tree) ||
	    dup_or_null(&r->commit, m.build->commit) || dup_or_null(&r->tier, m.build->tier) ||
	    dup_or_null(&r->base, m.build->base) ||
	    dup_or_null(&r->series_title, m.build->series_title) ||
	    dup_or_null(&r->message_id, m.build->message_id)) {
		ret = -ENOMEM;
		goto fail;
	}
	if (m.build->base)
		ret = bci_store_build_get(store, m.build->base, base_tree_copy, &r->base_tree, err,
					  err_size);
	else
		ret = dup_or_null(&r->base_tree, m.build->tree);
	if (ret < 0)
		goto fail;
	if (!r->base_tree) {
		snprintf(err, err_size, "build %s: its base has no tree", build);
		ret = -EINVAL;
		goto fail;
	}
	ret = bci_store_build_runs_each(store, build, run_collect, &runs, err, err_size);
	if (ret < 0)
		goto fail;
	if (!runs.n) {
		snprintf(err, err_size, "build %s has no run", build);
		ret = -ENOENT;
		goto fail;
	}
	/* Runs come by machine then age: each machine's runs are one stretch. */
	stretches = calloc(runs.n, sizeof(*stretches));
	if (!stretches) {
		ret = -ENOMEM;
		goto fail;
	}
	for (size_t first = 0, end; first < runs.n; first = end) {
		for (end = first + 1; end < runs.n && !strcmp(runs.v[end].machine, runs.v[first].machine);
		     end++)
			;
		stretches[r->machines++] = (struct stretch){ first, end };
	}
	n_mine = (size_t)r->machines;
	/* The second half of the machines on a thread, when a second connection is allowed. */
	if (options->threads > 1 && r->machines > 1) {
		size_t mine = ((size_t)r->machines + 1) / 2;

		half = calloc(1, sizeof(*half));
		if (!half) {
			ret = -ENOMEM;
			goto fail;
		}
		*half = (struct half){ .m = m, .runs = &runs, .stretches = stretches + mine,
				       .n = (size_t)r->machines - mine };
		half->m.report = &half->part;
		half->m.cache = (struct build_cache){ 0 };
		half->m.names = (struct bci_name_numbers){ 0 };
		half->m.now = half->m.before = (struct test_cells){ 0 };
		half->m.changes_cap = 0;
		half->m.err = half->err;
		half->m.err_size = sizeof(half->err);
		/* Read only there: the build, its tree, the options. */
		half->part.base_tree = r->base_tree;
		half->started = pthread_create(&half->thread, NULL, half_run, half) == 0;
		if (half->started)
			n_mine = mine;
	}
	ret = machines_compare(&m, &runs, stretches, n_mine, &failed);
	if (half && half->started) {
		pthread_join(half->thread, NULL);
		half->started = false;
		if (ret >= 0 && half->ret < 0) {
			ret = half->ret;
			failed = n_mine + half->failed;
			snprintf(err, err_size, "%s", half->err);
		}
		if (ret >= 0)
			ret = half_merge(r, half);
	}
	if (ret < 0) {
		if (ret == -EPROTO)
			snprintf(err, err_size, "machine %s: a stored result has an unknown status",
				 runs.v[stretches[failed].first].machine);
		goto fail;
	}
	if (half)
		half_release(half);
	free(half);
	free(stretches);
	qsort(r->changes, r->n_changes, sizeof(*r->changes), change_order);
	runs_release(&runs);
	build_cache_release(&m.cache);
	maker_tables_release(&m);
	free(m.build);
	*report = r;
	return 0;
fail:
	if (half)
		half_release(half);
	free(half);
	free(stretches);
	runs_release(&runs);
	build_cache_release(&m.cache);
	maker_tables_release(&m);
	free(m.build);
	bci_report_free(r);
	return ret;
}
