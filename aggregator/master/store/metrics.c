// SPDX-License-Identifier: MIT
/*
 * What the metrics (aggregator/report/metrics.c) read over a time window:
 * the builds registered in it with the times of their way from the mail to
 * the reply (the stages recorded in build_stages, the series' pick-up and
 * checks, the scheduler's jobs, the runs, the reply in the outbox), the
 * machines' busy time, and the runs ingested with their result counts.
 * Sums per day are made by the caller, in C, since SQLite and PostgreSQL
 * round a division to an integer differently. The stages are recorded here
 * too (bci_store_build_stage_put()).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>

/* A stage recorded in build_stages for build b. */
#define STAGE(name) \
	" (SELECT st.at FROM build_stages st WHERE st.build = b.name AND st.stage = '" name "')"
/*
 * The series' bootci-fast checks (patchwork/check.c's context) in state
 * @states: when the first was queued, and when the last was posted once all
 * of them are (NULL while one is not).
 */
#define CHECKS_FROM \
	" FROM patchwork_checks c JOIN patchwork_series s" \
	" ON s.project = c.project AND s.series = c.series" \
	" WHERE s.build = b.name AND c.context = 'bootci-fast' AND c.state "
#define CHECKS_POSTED(states) \
	" (SELECT CASE WHEN COUNT(c.posted) = COUNT(*) THEN MAX(c.posted) END" CHECKS_FROM states ")"
#define CHECKS_QUEUED(states) " (SELECT MIN(c.queued)" CHECKS_FROM states ")"
/* Build b's runs but those of its full tier's jobs (a run ingested by hand has no job). */
#define FAST_RUNS \
	" FROM runs r WHERE r.build = b.id AND NOT EXISTS (SELECT 1 FROM schedule_jobs j" \
	" WHERE j.build = b.id AND j.machine = r.machine AND j.run_id = r.run_id" \
	" AND j.tier = 'full')"
/* bci_store_build_times, in its order; the rows are builds b. */
#define BUILD_TIMES_COLUMNS \
	"SELECT b.name, b.tier, b.registered," \
	" (SELECT MIN(r.ingested) FROM runs r WHERE r.build = b.id)," \
	" (SELECT MAX(r.ingested) FROM runs r WHERE r.build = b.id)," \
	" (SELECT COUNT(*) FROM runs r WHERE r.build = b.id)," \
	" (SELECT COUNT(*) FROM schedule_jobs j WHERE j.build = b.id)," \
	" (SELECT COUNT(*) FROM schedule_jobs j WHERE j.build = b.id" \
	"   AND j.state NOT IN ('done', 'abandoned'))," \
	STAGE("series") "," \
	" (SELECT MIN(s.seen) FROM patchwork_series s WHERE s.build = b.name)," \
	CHECKS_POSTED("= 'pending'") "," \
	STAGE("build started") "," STAGE("build ended") "," STAGE("first boot") "," \
	" (SELECT MIN(r.started)" FAST_RUNS " AND r.started > 0)," \
	" (SELECT MAX(r.ended)" FAST_RUNS " AND r.ended > 0)," \
	" (SELECT MAX(r.ingested)" FAST_RUNS ")," \
	CHECKS_QUEUED("<> 'pending'") "," CHECKS_POSTED("<> 'pending'") "," \
	" (SELECT o.created FROM mail_outbox o WHERE o.build = b.name)," \
	" (SELECT o.sent FROM mail_outbox o WHERE o.build = b.name)" \
	" FROM builds b"
#define BUILD_TIMES_COUNT 21

static const char *const statements[S_MAIL_FIRST - S_METRICS_FIRST] = {
	[S_METRICS_BUILDS - S_METRICS_FIRST] =
		BUILD_TIMES_COLUMNS " WHERE b.registered >= ? AND b.registered < ?"
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
	[S_BUILD_TIMES - S_METRICS_FIRST] = BUILD_TIMES_COLUMNS " WHERE b.name = ?",
	[S_STAGE_PUT - S_METRICS_FIRST] =
		"INSERT INTO build_stages (build, stage, at) VALUES (?, ?, ?)"
		" ON CONFLICT (build, stage) DO UPDATE SET at = excluded.at",
	[S_STAGE_KEEP - S_METRICS_FIRST] =
		("INSERT INTO build_stages (build, stage, at) VALUES (?, ?, ?)"
		 " ON CONFLICT (build, stage) DO NOTHING"),
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

	if (n < BUILD_TIMES_COUNT)
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
		.series = column_real(&c[8], -1),
		.noticed = column_real(&c[9], -1),
		.pending = column_real(&c[10], -1),
		.build_started = column_real(&c[11], -1),
		.build_ended = column_real(&c[12], -1),
		.first_boot = column_real(&c[13], -1),
		.tests_started = column_real(&c[14], -1),
		.tests_ended = column_real(&c[15], -1),
		.fast_last_result = column_real(&c[16], -1),
		.verdict = column_real(&c[17], -1),
		.verdict_posted = column_real(&c[18], -1),
		.reply_queued = column_real(&c[19], -1),
		.reply_sent = column_real(&c[20], -1),
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

int bci_store_build_times_get(struct bci_store *store, const char *build,
			      int (*fn)(const struct bci_store_build_times *build, void *ctx),
			      void *ctx, char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(build) };
	struct each e = { (void *)fn, ctx, 0 };
	int ret = bci_store_query_text(store, S_BUILD_TIMES,
				       statements[S_BUILD_TIMES - S_METRICS_FIRST], params, 1,
				       row_build, &e, err, err_size);

	return ret < 0 ? ret : e.count > 0;
}

int bci_store_build_stage_put(struct bci_store *store, const char *build, const char *stage,
			      double at, int keep_first, char *err, size_t err_size)
{
	enum bci_store_statement id = keep_first ? S_STAGE_KEEP : S_STAGE_PUT;
	struct bci_store_value params[] = { value_text(build), value_text(stage),
					     value_real(at, -1e300) };

	return bci_store_query_text(store, id, statements[id - S_METRICS_FIRST], params, 3, NULL,
				    NULL, err, err_size);
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
