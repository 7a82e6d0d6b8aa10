// SPDX-License-Identifier: MIT
/*
 * A machine of the build read from the store (compare.h): its results in
 * the build and in its baseline into cells by test number, the baseline
 * chosen as report.h says (the runs of builds on the base tree, registered
 * no later than the build, the last @window of them, on the machine and on
 * each other machine of its shard group), its tags, and a test's logs when
 * a known-issue filter reads them.
 */
#include "compare.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How much of a test's log a filter's regex reads. */
#define BCI_FILTER_LOG_MAX (8 << 20)

int compare_runs_push(struct compare_runs *l, const struct bci_store_run *run)
{
	struct compare_run *grown = realloc(l->v, (l->n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	l->v = grown;
	grown[l->n] = (struct compare_run){ .machine = strdup(run->machine),
					    .run_id = strdup(run->run_id), .key = run->key };
	if (!grown[l->n].machine || !grown[l->n].run_id) {
		free(grown[l->n].machine);
		free(grown[l->n].run_id);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

void compare_runs_release(struct compare_runs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].machine);
		free(l->v[i].run_id);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static void groups_release(struct compare *c);

void compare_release(struct compare *c)
{
	bci_name_numbers_release(&c->tests);
	bci_name_numbers_release(&c->builds);
	free(c->on_base);
	c->on_base = NULL;
	c->on_base_cap = 0;
	free(c->now.v);
	free(c->before.v);
	c->now = c->before = (struct compare_cells){ 0 };
	groups_release(c);
}

void compare_machine_release(struct compare_machine *machine)
{
	compare_runs_release(&machine->baseline);
	bci_strv_free(&machine->tags);
}

/* ---- results into cells ---- */

/* The cell of test number @id, the array grown (new cells empty) to hold it; NULL: no memory. */
static struct compare_cell *cell_at(struct compare_cells *c, long id)
{
	if ((size_t)id >= c->n) {
		size_t n = c->n ? c->n : 1024;
		struct compare_cell *grown;

		while (n <= (size_t)id)
			n *= 2;
		grown = realloc(c->v, n * sizeof(*grown));
		if (!grown)
			return NULL;
		for (size_t i = c->n; i < n; i++)
			grown[i] = (struct compare_cell){ .status = -1 };
		c->v = grown;
		c->n = n;
	}
	return &c->v[id];
}

/* Every cell empty again, for the next machine. */
static void cells_clear(struct compare_cells *c)
{
	for (size_t i = 0; i < c->n; i++)
		c->v[i] = (struct compare_cell){ .status = -1 };
}

/* One run's results into @cells: a build's or a baseline's. */
struct results_ctx {
	struct bci_name_numbers *tests;
	size_t row;
	struct compare_cells *cells;
	int run;
};

/* The cell of @result's test in @c->cells and the result's status: 0, -ENOMEM or -EPROTO. */
static int result_cell(struct results_ctx *c, const struct bci_store_result *result,
		       struct compare_cell **slot, int *status)
{
	long id = bci_name_number_at(c->tests, result->name, c->row++);

	*slot = id < 0 ? NULL : cell_at(c->cells, id);
	*status = bci_status_parse(result->result);
	if (!*slot)
		return -ENOMEM;
	return *status < 0 ? -EPROTO : 0;
}

/* A build's result: a later run of the same machine replaces an earlier one's. */
static int build_result(const struct bci_store_result *result, void *ctx)
{
	struct results_ctx *c = ctx;
	struct compare_cell *slot;
	int status, ret = result_cell(c, result, &slot, &status);

	if (ret < 0)
		return ret;
	slot->status = status;
	slot->run = c->run;
	slot->job = result->job;
	return 0;
}

/* report.h's "failing" statuses: all but pass, skip and notrun. */
static bool status_failing(int status)
{
	return status != BCI_STATUS_PASS && status != BCI_STATUS_SKIP &&
	       status != BCI_STATUS_NOTRUN;
}

/*
 * A baseline's result, its runs read oldest first: the latest status that
 * is not notrun, every status seen, the runs that ran the test and failed
 * it.
 */
static int baseline_result(const struct bci_store_result *result, void *ctx)
{
	struct results_ctx *c = ctx;
	struct compare_cell *slot;
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
	slot->runs++;
	slot->failed += status_failing(status);
	return 0;
}

/* ---- the baseline's runs ---- */

/* Whether the build is on the base tree and registered no later than ours: 1 yes, 2 no. */
static int build_on_base(const struct bci_store_build *build, void *ctx)
{
	struct compare *c = ctx;
	const char *base_tree = c->report->base_tree;

	return build->tree && !strcmp(build->tree, base_tree) &&
	       build->registered <= c->build->registered ? 1 : 2;
}

/* The place of build number @id's answer, the array grown (new places -1) to hold it; NULL: no memory. */
static signed char *on_base_at(struct compare *c, long id)
{
	if ((size_t)id >= c->on_base_cap) {
		size_t n = c->on_base_cap ? c->on_base_cap * 2 : 64;
		signed char *grown;

		while (n <= (size_t)id)
			n *= 2;
		grown = realloc(c->on_base, n);
		if (!grown)
			return NULL;
		memset(grown + c->on_base_cap, -1, n - c->on_base_cap);
		c->on_base = grown;
		c->on_base_cap = n;
	}
	return &c->on_base[id];
}

struct baseline_ctx {
	struct compare *c;
	struct compare_runs *runs;
};

/* A run of the machine, kept when its build is in the baseline (each build asked once a thread). */
static int baseline_run(const struct bci_store_run *run, void *ctx)
{
	struct baseline_ctx *b = ctx;
	struct compare *c = b->c;
	signed char *on_base;
	long id;
	int ret;

	if (!run->build || !strcmp(run->build, c->build->name))
		return 0;
	id = bci_name_number(&c->builds, run->build);
	on_base = id < 0 ? NULL : on_base_at(c, id);
	if (!on_base)
		return -ENOMEM;
	if (*on_base < 0) {
		/* Another statement while this one's rows are read: a second cursor on SQLite, and libpq has the rows already. */
		ret = bci_store_build_get(c->store, run->build, build_on_base, c, c->err, c->err_size);
		if (ret < 0)
			return ret;
		*on_base = ret == 1;
	}
	return *on_base ? compare_runs_push(b->runs, run) : 0;
}

/*
 * @machine's baseline runs appended to @runs: of builds in the baseline,
 * the last @window (ingest order), reruns of possible new issues aside.
 */
static int baseline_runs(struct compare *c, const char *machine, struct compare_runs *runs)
{
	struct baseline_ctx ctx = { .c = c, .runs = runs };
	size_t window = (size_t)c->options->window, start = runs->n;
	/* A rerun holds a few tests of its build: no part of any baseline (reruns.c). */
	int ret = bci_store_machine_own_runs_each(c->store, machine, baseline_run, &ctx, c->err,
						  c->err_size);

	if (ret >= 0 && runs->n - start > window) {
		size_t drop = runs->n - start - window;

		for (size_t i = start; i < start + drop; i++) {
			free(runs->v[i].machine);
			free(runs->v[i].run_id);
		}
		memmove(runs->v + start, runs->v + start + drop, window * sizeof(*runs->v));
		runs->n = start + window;
	}
	return ret;
}

/* The results of @runs into @cells. */
static int baseline_read(struct compare *c, const struct compare_runs *runs,
			 struct compare_cells *cells)
{
	int ret = 0;

	for (size_t i = 0; i < runs->n && ret >= 0; i++) {
		struct results_ctx r = { .tests = &c->tests, .cells = cells };

		ret = bci_store_results_each_brief(c->store, runs->v[i].key, baseline_result, &r,
						   c->err, c->err_size);
	}
	return ret;
}

/* ---- a shard group's baseline, read once a thread ---- */

static void group_release(struct compare_group *g)
{
	for (size_t k = 0; k < g->machines.count && g->latest; k++)
		free(g->latest[k]);
	free(g->latest);
	free(g->latest_n);
	free(g->cells.v);
	bci_strv_free(&g->machines);
}

static void groups_release(struct compare *c)
{
	for (size_t i = 0; i < c->n_groups; i++)
		group_release(&c->groups[i]);
	free(c->groups);
	c->groups = NULL;
	c->n_groups = 0;
}

/*
 * Machine @k's baseline cells @m counted into group @g: every status seen,
 * the runs and failures added, the status the latest of the machines read
 * so far that ran the test; the machine's own statuses kept as its row.
 */
static int group_fold(struct compare_group *g, size_t k, const struct compare_cells *m)
{
	signed char *latest = malloc(m->n ? m->n : 1);

	if (!latest)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const struct compare_cell *x = &m->v[i];
		struct compare_cell *slot;

		latest[i] = (signed char)x->status;
		if (x->status < 0)
			continue;
		slot = cell_at(&g->cells, (long)i);
		if (!slot) {
			free(latest);
			return -ENOMEM;
		}
		if (x->status != BCI_STATUS_NOTRUN || slot->status < 0)
			slot->status = x->status;
		slot->seen |= x->seen;
		slot->runs += x->runs;
		slot->failed += x->failed;
	}
	g->latest[k] = latest;
	g->latest_n[k] = m->n;
	return 0;
}

static int group_machine_add(const char *name, void *ctx)
{
	return bci_strv_add(ctx, name);
}

/*
 * Shard group @name read into a new entry of @c->groups: its machines (and
 * @machine, should the store have moved it meanwhile), each's baseline
 * runs read once (@c->before is the scratch) and folded. The names are
 * gathered before any run is read: a second statement never runs while
 * one's rows are read.
 */
static int group_read(struct compare *c, const char *name, const char *machine,
		      struct compare_group **out)
{
	struct compare_group *grown = realloc(c->groups, (c->n_groups + 1) * sizeof(*grown)), *g;
	int ret;

	if (!grown)
		return -ENOMEM;
	c->groups = grown;
	g = &grown[c->n_groups];
	*g = (struct compare_group){ 0 };
	snprintf(g->name, sizeof(g->name), "%s", name);
	ret = bci_store_group_machines_each(c->store, name, group_machine_add, &g->machines, c->err,
					    c->err_size);
	if (ret >= 0 && !bci_strv_contains(&g->machines, machine))
		ret = bci_strv_add(&g->machines, machine);
	if (ret >= 0) {
		g->latest = calloc(g->machines.count, sizeof(*g->latest));
		g->latest_n = calloc(g->machines.count, sizeof(*g->latest_n));
		if (!g->latest || !g->latest_n)
			ret = -ENOMEM;
	}
	for (size_t k = 0; k < g->machines.count && ret >= 0; k++) {
		struct compare_runs runs = { 0 };

		ret = baseline_runs(c, g->machines.items[k], &runs);
		cells_clear(&c->before);
		if (ret >= 0)
			ret = baseline_read(c, &runs, &c->before);
		if (ret >= 0)
			ret = group_fold(g, k, &c->before);
		compare_runs_release(&runs);
	}
	if (ret < 0) {
		group_release(g);
		return ret;
	}
	c->n_groups++;
	*out = g;
	return 0;
}

/*
 * @machine's baseline cells from its group's (read if this thread has not
 * yet): the group's counts, the status the machine's own latest where it
 * ran the test.
 */
static int group_baseline(struct compare *c, const struct compare_machine *machine)
{
	struct compare_group *g = NULL;
	size_t k;
	int ret;

	for (size_t i = 0; i < c->n_groups && !g; i++)
		if (!strcmp(c->groups[i].name, machine->group))
			g = &c->groups[i];
	if (!g && (ret = group_read(c, machine->group, machine->name, &g)) < 0)
		return ret;
	for (k = 0; k < g->machines.count && strcmp(g->machines.items[k], machine->name); k++)
		;
	cells_clear(&c->before);
	if (g->cells.n && !cell_at(&c->before, (long)g->cells.n - 1))
		return -ENOMEM;
	if (g->cells.n)
		memcpy(c->before.v, g->cells.v, g->cells.n * sizeof(*g->cells.v));
	for (size_t i = 0; k < g->machines.count && i < g->latest_n[k] && i < c->before.n; i++)
		if (g->latest[k][i] >= 0 && g->latest[k][i] != BCI_STATUS_NOTRUN)
			c->before.v[i].status = g->latest[k][i];
	return 0;
}

/* ---- a machine ---- */

static int tag_add(const char *tag, void *ctx)
{
	return bci_strv_add(ctx, tag);
}

int compare_machine_read(struct compare *c, struct compare_machine *machine)
{
	const struct compare_runs *build_runs = machine->build_runs;
	int ret = 0;

	cells_clear(&c->now);
	cells_clear(&c->before);
	for (size_t i = machine->first; i < machine->end && ret >= 0; i++) {
		struct results_ctx r = { .tests = &c->tests, .cells = &c->now, .run = (int)i };

		ret = bci_store_results_each_brief(c->store, build_runs->v[i].key, build_result, &r,
						   c->err, c->err_size);
	}
	if (ret >= 0)
		ret = baseline_runs(c, machine->name, &machine->baseline);
	if (ret >= 0)
		ret = bci_store_machine_group(c->store, machine->name, machine->group,
					      sizeof(machine->group), c->err, c->err_size);
	if (ret > 0) {
		c->report->grouped++;
		ret = group_baseline(c, machine);
	}
	else if (ret == 0)
		ret = baseline_read(c, &machine->baseline, &c->before);
	if (ret >= 0)
		ret = bci_store_machine_tags(c->store, machine->name, tag_add, &machine->tags, c->err,
					     c->err_size);
	return ret;
}

int compare_seen_give(struct compare *c, const struct compare_machine *machine)
{
	const struct compare_cells *now = &c->now;
	struct bci_report_seen *rows = malloc((now->n + 1) * sizeof(*rows));
	size_t n = 0;
	int ret;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < now->n; i++) {
		const struct compare_cell *t = &now->v[i];

		if (t->status >= 0)
			rows[n++] = (struct bci_report_seen){
				.run = machine->build_runs->v[t->run].key, .test = c->tests.names[i],
				.status = t->status, .job = t->job,
			};
	}
	ret = c->options->seen(c->options->seen_ctx, rows, n, c->err, c->err_size);
	free(rows);
	return ret;
}

/* ---- a test's logs for the filters ---- */

const char *compare_log_read(const char *which, void *ctx)
{
	static const char *const names[3] = { "out", "err", "dmesg" };
	struct compare_logs *l = ctx;
	char err[512];
	int i, fd;

	for (i = 0; i < 3 && strcmp(names[i], which); i++)
		;
	if (i == 3)
		return NULL;
	if (l->read[i])
		return l->text[i];
	l->read[i] = 1;
	if (!l->c->options->data_dir)
		return NULL;
	fd = bci_store_test_log_open(l->c->store, l->c->options->data_dir, l->run->machine,
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

void compare_logs_release(struct compare_logs *logs)
{
	for (int i = 0; i < 3; i++)
		free(logs->text[i]);
}
