// SPDX-License-Identifier: MIT
/*
 * The Patchwork projects' part of the store (store.h, "Patchwork"): the
 * watermark, the settled series and their patches, the checks and how far
 * their posting went. database.c runs the migration (7) in its sequence and
 * query() finds these statements from S_PATCHWORK_FIRST on.
 */
#include "internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SERIES_COLUMNS \
	"SELECT project, series, name, version, submitter, date, message_id, total, state, build," \
	" mbox, superseded_by, seen, note FROM patchwork_series"
#define CHECK_COLUMNS \
	"SELECT series, patch, context, state, description, target_url, status, attempts, note," \
	" claimed FROM patchwork_checks"

static const char *const statements[S_BISECT_FIRST - S_PATCHWORK_FIRST] = {
	[S_PW_WATERMARK_GET - S_PATCHWORK_FIRST] =
		"SELECT last_series FROM patchwork_cursor WHERE project = ?",
	[S_PW_WATERMARK_PUT - S_PATCHWORK_FIRST] =
		"INSERT INTO patchwork_cursor (project, last_series, updated) VALUES (?, ?, ?)"
		" ON CONFLICT (project) DO UPDATE SET last_series = excluded.last_series,"
		" updated = excluded.updated",
	[S_PW_SERIES_ADD - S_PATCHWORK_FIRST] =
		"INSERT INTO patchwork_series (project, series, name, version, submitter, date,"
		" message_id, total, state, build, mbox, superseded_by, seen, note)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[S_PW_SERIES_GET - S_PATCHWORK_FIRST] =
		SERIES_COLUMNS " WHERE project = ? AND series = ?",
	[S_PW_SERIES_ALL - S_PATCHWORK_FIRST] = SERIES_COLUMNS " WHERE project = ? ORDER BY series",
	[S_PW_SERIES_NAMED - S_PATCHWORK_FIRST] =
		SERIES_COLUMNS " WHERE project = ? AND name = ?"
		" AND COALESCE(submitter, '') = CAST(? AS TEXT) ORDER BY series",
	[S_PW_SERIES_BY_BUILD - S_PATCHWORK_FIRST] =
		SERIES_COLUMNS " WHERE build = ? ORDER BY project, series",
	[S_PW_SERIES_SUPERSEDE - S_PATCHWORK_FIRST] =
		"UPDATE patchwork_series SET state = 'superseded', superseded_by = ?, note = ?"
		" WHERE project = ? AND series = ?",
	[S_PW_PATCH_ADD - S_PATCHWORK_FIRST] =
		"INSERT INTO patchwork_patches (project, series, position, patch) VALUES (?, ?, ?, ?)",
	/* The casts give PostgreSQL the parameters' types, which a SELECT list does not. */
	[S_PW_CHECK_QUEUE - S_PATCHWORK_FIRST] =
		"INSERT INTO patchwork_checks (project, series, patch, context, state, description,"
		" target_url, status, attempts, queued)"
		" SELECT project, series, patch, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT),"
		" CAST(? AS TEXT), 'queued', 0, CAST(? AS DOUBLE PRECISION) FROM patchwork_patches"
		" WHERE project = ? AND series = ?"
		" ON CONFLICT (project, patch, context, state) DO NOTHING",
	[S_PW_CHECK_QUEUE_PATCH - S_PATCHWORK_FIRST] =
		"INSERT INTO patchwork_checks (project, series, patch, context, state, description,"
		" target_url, status, attempts, queued)"
		" SELECT project, series, patch, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT),"
		" CAST(? AS TEXT), 'queued', 0, CAST(? AS DOUBLE PRECISION) FROM patchwork_patches"
		" WHERE project = ? AND series = ? AND position = ?"
		" ON CONFLICT (project, patch, context, state) DO NOTHING",
	[S_PW_CHECKS_OPEN - S_PATCHWORK_FIRST] =
		CHECK_COLUMNS " WHERE project = ? AND status IN ('queued', 'posting', 'unknown')"
		" ORDER BY queued, series, patch, context",
	[S_PW_CHECKS_SERIES - S_PATCHWORK_FIRST] =
		CHECK_COLUMNS " WHERE project = ? AND series = ? ORDER BY context, queued, patch",
	[S_PW_CHECK_MARK - S_PATCHWORK_FIRST] =
		"UPDATE patchwork_checks SET status = ?, note = ?, posted = ?"
		" WHERE project = ? AND patch = ? AND context = ? AND state = ?",
	/* Taken only as it was read (its status and attempts): two posters never both take it. */
	[S_PW_CHECK_CLAIM - S_PATCHWORK_FIRST] =
		("UPDATE patchwork_checks SET status = 'posting', attempts = attempts + 1,"
		 " claimed = ?, note = NULL WHERE project = ? AND patch = ? AND context = ?"
		 " AND state = ? AND status = ? AND attempts = ? RETURNING attempts"),
};

static int query(struct bci_store *store, enum bci_store_statement id,
		 const struct bci_store_value *params, int n_params, bci_store_row_fn row, void *ctx,
		 char *err, size_t err_size)
{
	return bci_store_query_text(store, id, statements[id - S_PATCHWORK_FIRST], params, n_params,
				    row, ctx, err, err_size);
}

int bci_store_pw_watermark_get(struct bci_store *store, const char *project, int64_t *series,
			       char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(project) };
	int64_t value = 0;
	int ret = query(store, S_PW_WATERMARK_GET, params, 1, bci_store_row_first_int, &value, err,
			err_size);

	if (ret < 0)
		return ret;
	*series = value > 0 ? value : 0;
	return 0;
}

int bci_store_pw_watermark_put(struct bci_store *store, const char *project, int64_t series,
			       char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(project), value_int(series),
					     value_real(bci_store_now(), 0) };

	return query(store, S_PW_WATERMARK_PUT, params, 3, NULL, NULL, err, err_size);
}

int bci_store_pw_series_add(struct bci_store *store, const struct bci_store_pw_series *s,
			    char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_text(s->project), value_int(s->series), value_text(s->name),
		value_int(s->version), value_text(s->submitter), value_text(s->date),
		value_text(s->message_id), value_int(s->total), value_text(s->state),
		value_text(s->build), value_text(s->mbox),
		s->superseded_by > 0 ? value_int(s->superseded_by)
				     : (struct bci_store_value){ .type = BCI_STORE_NULL },
		value_real(s->seen > 0 ? s->seen : bci_store_now(), 0), value_text(s->note),
	};
	int ret = query(store, S_PW_SERIES_ADD, params, 14, NULL, NULL, err, err_size);

	if (ret == -EEXIST)
		snprintf(err, err_size, "patchwork %s: series %lld is already settled", s->project,
			 (long long)s->series);
	return ret;
}

struct series_walk {
	int (*fn)(const struct bci_store_pw_series *series, void *ctx);
	void *ctx;
	int count;
};

static int row_series(const struct bci_store_value *c, int n, void *ctx)
{
	struct series_walk *walk = ctx;
	struct bci_store_pw_series s;
	int ret;

	if (n < 14)
		return -EPROTO;
	s = (struct bci_store_pw_series){
		.project = column_text(&c[0]), .series = column_int(&c[1], 0),
		.name = column_text(&c[2]), .version = (int)column_int(&c[3], 1),
		.submitter = column_text(&c[4]), .date = column_text(&c[5]),
		.message_id = column_text(&c[6]), .total = (int)column_int(&c[7], 0),
		.state = column_text(&c[8]), .build = column_text(&c[9]),
		.mbox = column_text(&c[10]), .superseded_by = column_int(&c[11], 0),
		.seen = column_real(&c[12], 0), .note = column_text(&c[13]),
	};
	walk->count++;
	if (walk->fn && (ret = walk->fn(&s, walk->ctx)) != 0)
		return ret;
	return 0;
}

int bci_store_pw_series_get(struct bci_store *store, const char *project, int64_t series,
			    int (*fn)(const struct bci_store_pw_series *series, void *ctx), void *ctx,
			    char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(project), value_int(series) };
	struct series_walk walk = { fn, ctx, 0 };
	int ret = query(store, S_PW_SERIES_GET, params, 2, row_series, &walk, err, err_size);

	return ret < 0 ? ret : walk.count > 0;
}

int bci_store_pw_series_by_build(struct bci_store *store, const char *build,
				 int (*fn)(const struct bci_store_pw_series *series, void *ctx),
				 void *ctx, char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(build) };
	struct series_walk walk = { fn, ctx, 0 };
	int ret = query(store, S_PW_SERIES_BY_BUILD, params, 1, row_series, &walk, err, err_size);

	return ret < 0 ? ret : walk.count > 0;
}

int bci_store_pw_series_each(struct bci_store *store, const char *project, const char *name,
			     const char *submitter,
			     int (*fn)(const struct bci_store_pw_series *series, void *ctx),
			     void *ctx, char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(project), value_text(name),
					     value_text(submitter ? submitter : "") };
	struct series_walk walk = { fn, ctx, 0 };
	int ret = name ? query(store, S_PW_SERIES_NAMED, params, 3, row_series, &walk, err,
			       err_size)
		       : query(store, S_PW_SERIES_ALL, params, 1, row_series, &walk, err,
			       err_size);

	return ret < 0 ? ret : walk.count;
}

int bci_store_pw_series_supersede(struct bci_store *store, const char *project, int64_t series,
				  int64_t by, const char *note, char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_int(by), value_text(note), value_text(project),
					     value_int(series) };

	return query(store, S_PW_SERIES_SUPERSEDE, params, 4, NULL, NULL, err, err_size);
}

int bci_store_pw_patch_add(struct bci_store *store, const char *project, int64_t series,
			   int position, int64_t patch, char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(project), value_int(series),
					     value_int(position), value_int(patch) };

	return query(store, S_PW_PATCH_ADD, params, 4, NULL, NULL, err, err_size);
}

static int count_rows(const struct bci_store_value *c, int n, void *ctx)
{
	(void)c;
	(void)n;
	(*(int *)ctx)++;
	return 0;
}

/* Queues a check on @position's patch of @series (0: on every patch): the number queued. */
static int check_queue(struct bci_store *store, const char *project, int64_t series, int position,
		       const char *context, const char *state, const char *description,
		       const char *target_url, char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_text(context), value_text(state), value_text(description),
		value_text(target_url), value_real(bci_store_now(), 0), value_text(project),
		value_int(series), value_int(position),
	};
	int before = 0, after = 0, ret;
	struct bci_store_value count_params[] = { value_text(project), value_int(series) };

	/* The rows added are counted around the insert: RETURNING and DO NOTHING differ per engine. */
	if ((ret = query(store, S_PW_CHECKS_SERIES, count_params, 2, count_rows, &before, err,
			 err_size)) < 0 ||
	    (ret = query(store, position ? S_PW_CHECK_QUEUE_PATCH : S_PW_CHECK_QUEUE, params,
			 position ? 8 : 7, NULL, NULL, err, err_size)) < 0 ||
	    (ret = query(store, S_PW_CHECKS_SERIES, count_params, 2, count_rows, &after, err,
			 err_size)) < 0)
		return ret;
	return after - before;
}

int bci_store_pw_check_queue(struct bci_store *store, const char *project, int64_t series,
			     const char *context, const char *state, const char *description,
			     const char *target_url, char *err, size_t err_size)
{
	return check_queue(store, project, series, 0, context, state, description, target_url, err,
			   err_size);
}

int bci_store_pw_check_queue_patch(struct bci_store *store, const char *project, int64_t series,
				   int position, const char *context, const char *state,
				   const char *description, const char *target_url, char *err,
				   size_t err_size)
{
	if (position < 1) {
		snprintf(err, err_size, "patch %d of series %lld: patches count from 1", position,
			 (long long)series);
		return -EINVAL;
	}
	return check_queue(store, project, series, position, context, state, description,
			   target_url, err, err_size);
}

struct check_walk {
	int (*fn)(const struct bci_store_pw_check *check, void *ctx);
	void *ctx;
	int count;
};

static int row_check(const struct bci_store_value *c, int n, void *ctx)
{
	struct check_walk *walk = ctx;
	struct bci_store_pw_check check;
	int ret;

	if (n < 10)
		return -EPROTO;
	check = (struct bci_store_pw_check){
		.series = column_int(&c[0], 0), .patch = column_int(&c[1], 0),
		.context = column_text(&c[2]), .state = column_text(&c[3]),
		.description = column_text(&c[4]), .target_url = column_text(&c[5]),
		.status = column_text(&c[6]), .attempts = (int)column_int(&c[7], 0),
		.note = column_text(&c[8]), .claimed = column_real(&c[9], 0),
	};
	walk->count++;
	if (walk->fn && (ret = walk->fn(&check, walk->ctx)) != 0)
		return ret;
	return 0;
}

int bci_store_pw_checks_open(struct bci_store *store, const char *project,
			     int (*fn)(const struct bci_store_pw_check *check, void *ctx), void *ctx,
			     char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(project) };
	struct check_walk walk = { fn, ctx, 0 };
	int ret = query(store, S_PW_CHECKS_OPEN, params, 1, row_check, &walk, err, err_size);

	return ret < 0 ? ret : walk.count;
}

int bci_store_pw_checks_series(struct bci_store *store, const char *project, int64_t series,
			       int (*fn)(const struct bci_store_pw_check *check, void *ctx),
			       void *ctx, char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(project), value_int(series) };
	struct check_walk walk = { fn, ctx, 0 };
	int ret = query(store, S_PW_CHECKS_SERIES, params, 2, row_check, &walk, err, err_size);

	return ret < 0 ? ret : walk.count;
}

int bci_store_pw_check_mark(struct bci_store *store, const char *project,
			    const struct bci_store_pw_check *check, char *err, size_t err_size)
{
	bool posted = !strcmp(check->status, "posted");
	struct bci_store_value params[] = {
		value_text(check->status), value_text(check->note),
		posted ? value_real(bci_store_now(), 0)
		       : (struct bci_store_value){ .type = BCI_STORE_NULL },
		value_text(project), value_int(check->patch), value_text(check->context),
		value_text(check->state),
	};

	return query(store, S_PW_CHECK_MARK, params, 7, NULL, NULL, err, err_size);
}

int bci_store_pw_check_claim(struct bci_store *store, const char *project,
			     const struct bci_store_pw_check *check, char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_real(bci_store_now(), 0), value_text(project), value_int(check->patch),
		value_text(check->context), value_text(check->state), value_text(check->status),
		value_int(check->attempts),
	};
	int64_t attempts = -1;
	int ret = query(store, S_PW_CHECK_CLAIM, params, 7, bci_store_row_first_int, &attempts,
			err, err_size);

	return ret < 0 ? ret : attempts > 0;
}
