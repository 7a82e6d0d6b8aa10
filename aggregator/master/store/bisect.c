// SPDX-License-Identifier: MIT
/*
 * The bisections' part of the store (store.h, "bisections"): their
 * statements, kept here so that their SQL reads in one place; database.c
 * runs their migrations (12, 13) in its sequence. A bisection is one row a
 * build; its steps are rows of their own, written as each is started,
 * built and judged, so a master restarted reads where each one was.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define BISECT_COLUMNS \
	"SELECT build, project, series, patches, tests, machines, pairs, state, verdict, started," \
	" ended, commits" \
	" FROM bisects"

static const char *const statements[S_COUNT - S_BISECT_FIRST] = {
	[S_BISECT_ADD - S_BISECT_FIRST] =
		"INSERT INTO bisects (build, project, series, patches, tests, machines, pairs, state,"
		" started, commits) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
	[S_BISECT_GET - S_BISECT_FIRST] = BISECT_COLUMNS " WHERE build = ?",
	[S_BISECTS_ALL - S_BISECT_FIRST] = BISECT_COLUMNS " ORDER BY started, build",
	[S_BISECTS_STATE - S_BISECT_FIRST] =
		BISECT_COLUMNS " WHERE state = ? ORDER BY started, build",
	[S_BISECT_END - S_BISECT_FIRST] =
		"UPDATE bisects SET state = ?, verdict = ?, ended = ? WHERE build = ?"
		" AND state = 'running'",
	[S_BISECT_STEP_PUT - S_BISECT_FIRST] =
		"INSERT INTO bisect_steps (build, step, patches, candidate, state, note, started,"
		" ended) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (build, step) DO UPDATE SET"
		" patches = excluded.patches, candidate = excluded.candidate,"
		" state = excluded.state, note = excluded.note, ended = excluded.ended",
	[S_BISECT_STEPS - S_BISECT_FIRST] =
		"SELECT build, step, patches, candidate, state, note, started, ended"
		" FROM bisect_steps WHERE build = ? ORDER BY step",
};

static int query(struct bci_store *store, enum bci_store_statement id,
		 const struct bci_store_value *params, int n_params, bci_store_row_fn row, void *ctx,
		 char *err, size_t err_size)
{
	return bci_store_query_text(store, id, statements[id - S_BISECT_FIRST], params, n_params,
				    row, ctx, err, err_size);
}

int bci_store_bisect_add(struct bci_store *store, const struct bci_store_bisect *b, char *err,
			 size_t err_size)
{
	struct bci_store_value params[] = {
		value_text(b->build), value_text(b->project), value_int(b->series),
		value_int(b->patches), value_text(b->tests), value_text(b->machines),
		value_text(b->pairs), value_real(b->started > 0 ? b->started : bci_store_now(), 0),
		value_text(b->commits),
	};
	int ret;

	if (!b->build || !b->project || !b->tests || !b->machines || !b->pairs || b->patches < 1) {
		snprintf(err, err_size, "a bisection needs a build, a project, patches, tests,"
			 " machines and their pairs");
		return -EINVAL;
	}
	ret = query(store, S_BISECT_ADD, params, 9, NULL, NULL, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "build %s has a bisection already", b->build);
	return ret;
}

struct bisect_walk {
	int (*fn)(const struct bci_store_bisect *b, void *ctx);
	void *ctx;
	int count;
};

static int row_bisect(const struct bci_store_value *c, int n, void *ctx)
{
	struct bisect_walk *walk = ctx;
	struct bci_store_bisect b;

	if (n < 12)
		return -EPROTO;
	b = (struct bci_store_bisect){
		.build = column_text(&c[0]),
		.project = column_text(&c[1]),
		.series = column_int(&c[2], 0),
		.patches = (int)column_int(&c[3], 0),
		.tests = column_text(&c[4]),
		.machines = column_text(&c[5]),
		.pairs = column_text(&c[6]),
		.state = column_text(&c[7]),
		.verdict = column_text(&c[8]),
		.started = column_real(&c[9], 0),
		.ended = column_real(&c[10], 0),
		.commits = column_text(&c[11]),
	};
	if (!b.build || !b.project || !b.tests || !b.machines || !b.pairs || !b.state)
		return -EPROTO;
	walk->count++;
	return walk->fn ? walk->fn(&b, walk->ctx) : 0;
}

int bci_store_bisect_get(struct bci_store *store, const char *build,
			 int (*fn)(const struct bci_store_bisect *b, void *ctx), void *ctx,
			 char *err, size_t err_size)
{
	struct bci_store_value param = value_text(build);
	struct bisect_walk walk = { fn, ctx, 0 };
	int ret = query(store, S_BISECT_GET, &param, 1, row_bisect, &walk, err, err_size);

	return ret < 0 ? ret : walk.count > 0;
}

int bci_store_bisects_each(struct bci_store *store, const char *state,
			   int (*fn)(const struct bci_store_bisect *b, void *ctx), void *ctx,
			   char *err, size_t err_size)
{
	struct bci_store_value param = value_text(state);
	struct bisect_walk walk = { fn, ctx, 0 };
	int ret = state ? query(store, S_BISECTS_STATE, &param, 1, row_bisect, &walk, err, err_size)
			: query(store, S_BISECTS_ALL, NULL, 0, row_bisect, &walk, err, err_size);

	return ret < 0 ? ret : walk.count;
}

int bci_store_bisect_end(struct bci_store *store, const char *build, const char *state,
			 const char *verdict, char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_text(state), value_text(verdict), value_real(bci_store_now(), 0),
		value_text(build),
	};

	if (strcmp(state, "done") && strcmp(state, "stopped")) {
		snprintf(err, err_size, "a bisection ends done or stopped, not '%s'", state);
		return -EINVAL;
	}
	return query(store, S_BISECT_END, params, 4, NULL, NULL, err, err_size);
}

int bci_store_bisect_step_put(struct bci_store *store, const struct bci_store_bisect_step *s,
			      char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_text(s->build), value_int(s->step), value_int(s->patches),
		value_text(s->candidate), value_text(s->state), value_text(s->note),
		value_real(s->started > 0 ? s->started : bci_store_now(), 0),
		value_real(s->ended, 1),
	};

	return query(store, S_BISECT_STEP_PUT, params, 8, NULL, NULL, err, err_size);
}

struct step_walk {
	int (*fn)(const struct bci_store_bisect_step *s, void *ctx);
	void *ctx;
	int count;
};

static int row_step(const struct bci_store_value *c, int n, void *ctx)
{
	struct step_walk *walk = ctx;
	struct bci_store_bisect_step s;

	if (n < 8)
		return -EPROTO;
	s = (struct bci_store_bisect_step){
		.build = column_text(&c[0]),
		.step = (int)column_int(&c[1], 0),
		.patches = (int)column_int(&c[2], 0),
		.candidate = column_text(&c[3]),
		.state = column_text(&c[4]),
		.note = column_text(&c[5]),
		.started = column_real(&c[6], 0),
		.ended = column_real(&c[7], 0),
	};
	if (!s.build || !s.candidate || !s.state)
		return -EPROTO;
	walk->count++;
	return walk->fn ? walk->fn(&s, walk->ctx) : 0;
}

int bci_store_bisect_steps_each(struct bci_store *store, const char *build,
				int (*fn)(const struct bci_store_bisect_step *s, void *ctx),
				void *ctx, char *err, size_t err_size)
{
	struct bci_store_value param = value_text(build);
	struct step_walk walk = { fn, ctx, 0 };
	int ret = query(store, S_BISECT_STEPS, &param, 1, row_step, &walk, err, err_size);

	return ret < 0 ? ret : walk.count;
}
