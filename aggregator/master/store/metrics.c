// SPDX-License-Identifier: MIT
/*
 * What the metrics (aggregator/report/metrics.c) read over a time window:
 * the builds registered in it with the times their runs were ingested and
 * the scheduler's jobs still open, the machines' busy time, and the runs
 * ingested with their result counts. Sums per day are made by the caller,
 * in C, since SQLite and PostgreSQL round a division to an integer
 * differently.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>

static const char *const statements[S_PATCHWORK_FIRST - S_METRICS_FIRST] = {
	[S_METRICS_BUILDS - S_METRICS_FIRST] =
		"SELECT b.name, b.tier, b.registered,"
		" (SELECT MIN(r.ingested) FROM runs r WHERE r.build = b.id),"
		" (SELECT MAX(r.ingested) FROM runs r WHERE r.build = b.id),"
		" (SELECT COUNT(*) FROM runs r WHERE r.build = b.id),"
		" (SELECT COUNT(*) FROM schedule_jobs j WHERE j.build = b.id),"
		" (SELECT COUNT(*) FROM schedule_jobs j WHERE j.build = b.id"
		"   AND j.state NOT IN ('done', 'abandoned'))"
		" FROM builds b WHERE b.registered >= ? AND b.registered < ?"
		" ORDER BY b.registered, b.id",
	[S_METRICS_BUSY - S_METRICS_FIRST] =
		"SELECT m.name, COUNT(*), SUM(r.ended - r.started)"
		" FROM runs r JOIN machines m ON m.id = r.machine"
		" WHERE r.started IS NOT NULL AND r.ended IS NOT NULL AND r.ended >= r.started"
		" AND r.started >= ? AND r.started < ? GROUP BY m.name ORDER BY m.name",
	/* Parenthesised: clang's -Wstring-concatenation takes a last multi-line element for a missing comma. */
	[S_METRICS_RUNS - S_METRICS_FIRST] =
		("SELECT r.ingested, (SELECT COUNT(*) FROM results res WHERE res.run = r.id)"
		 " FROM runs r WHERE r.ingested >= ? AND r.ingested < ? ORDER BY r.ingested, r.id"),
};

struct each {
	void *fn;
	void *ctx;
	int count;
};

static int window_check(double from, double to, char *err, size_t err_size)
{
	if (!(from <= to)) {
		snprintf(err, err_size, "the window's start (%.0f) is after its end (%.0f)", from, to);
		return -EINVAL;
	}
	return 0;
}

/* One statement over the window [from, to): each row to @row, with @fn and @ctx; the row count. */
static int window_query(struct bci_store *store, enum bci_store_statement statement,
			double from, double to,
			int (*row)(const struct bci_store_value *, int, void *), void *fn, void *ctx,
			char *err, size_t err_size)
{
	struct bci_store_value params[2] = { value_real(from, -1e300), value_real(to, -1e300) };
	struct each e = { fn, ctx, 0 };
	int ret = window_check(from, to, err, err_size);

	if (ret < 0)
		return ret;
	ret = bci_store_query_text(store, statement, statements[statement - S_METRICS_FIRST], params, 2,
				   row, &e, err, err_size);
	return ret ? ret : e.count;
}

static int row_build(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_build_times *, void *) = e->fn;
	struct bci_store_build_times b;

	if (n < 8)
		return -EPROTO;
	b = (struct bci_store_build_times){
		.name = column_text(&c[0]),
		.tier = column_text(&c[1]),
		.registered = column_real(&c[2], 0),
		.first_result = column_real(&c[3], -1),
		.last_result = column_real(&c[4], -1),
		.runs = (long)column_int(&c[5], 0),
		.jobs = (long)column_int(&c[6], 0),
		.jobs_open = (long)column_int(&c[7], 0),
	};
	e->count++;
	return fn(&b, e->ctx);
}

int bci_store_metrics_builds(struct bci_store *store, double from, double to,
			     int (*fn)(const struct bci_store_build_times *build, void *ctx),
			     void *ctx, char *err, size_t err_size)
{
	return window_query(store, S_METRICS_BUILDS, from, to, row_build, (void *)fn, ctx, err, err_size);
}

static int row_busy(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_machine_busy *, void *) = e->fn;
	struct bci_store_machine_busy b;

	if (n < 3)
		return -EPROTO;
	b = (struct bci_store_machine_busy){
		.machine = column_text(&c[0]),
		.runs = (long)column_int(&c[1], 0),
		.busy = column_real(&c[2], 0),
	};
	e->count++;
	return fn(&b, e->ctx);
}

int bci_store_metrics_busy(struct bci_store *store, double from, double to,
			   int (*fn)(const struct bci_store_machine_busy *busy, void *ctx),
			   void *ctx, char *err, size_t err_size)
{
	return window_query(store, S_METRICS_BUSY, from, to, row_busy, (void *)fn, ctx, err, err_size);
}

static int row_run(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(double, long, void *) = e->fn;

	if (n < 2)
		return -EPROTO;
	e->count++;
	return fn(column_real(&c[0], 0), (long)column_int(&c[1], 0), e->ctx);
}

int bci_store_metrics_runs(struct bci_store *store, double from, double to,
			   int (*fn)(double ingested, long results, void *ctx), void *ctx,
			   char *err, size_t err_size)
{
	return window_query(store, S_METRICS_RUNS, from, to, row_run, (void *)fn, ctx, err, err_size);
}
