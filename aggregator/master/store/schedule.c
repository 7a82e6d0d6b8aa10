// SPDX-License-Identifier: MIT
/*
 * The scheduler's part of the store (store.h, "the scheduler"): its schema
 * migration and statements, kept here so that the queue's SQL reads in one
 * place; database.c runs the migration in its sequence and query()
 * finds these statements from S_SCHEDULE_FIRST on.
 */
#include "internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define JOB_COLUMNS \
	"SELECT j.id, m.name, b.name, j.tier, j.shard, j.shards, j.testlist, j.run_id, j.state," \
	" j.boots, j.queued, j.booted, j.note, j.ended, j.asked, j.kind FROM schedule_jobs j" \
	" JOIN machines m ON m.id = j.machine" \
	" JOIN builds b ON b.id = j.build"

static const char *const statements[S_METRICS_FIRST - S_SCHEDULE_FIRST] = {
	[S_JOB_ADD - S_SCHEDULE_FIRST] =
		"INSERT INTO schedule_jobs (machine, build, tier, shard, shards, testlist, run_id,"
		" state, boots, queued, kind) VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?)"
		" RETURNING id",
	[S_JOB_NEXT - S_SCHEDULE_FIRST] =
		JOB_COLUMNS " WHERE m.name = ? AND j.state IN ('queued', 'booted')"
		" ORDER BY j.state <> 'booted', j.kind IS NULL, j.id LIMIT 1",
	[S_JOB_UPDATE - S_SCHEDULE_FIRST] =
		"UPDATE schedule_jobs SET state = ?, boots = ?, booted = ? WHERE id = ?",
	[S_JOBS_BUILD - S_SCHEDULE_FIRST] = JOB_COLUMNS " WHERE b.name = ? ORDER BY m.name, j.id",
	[S_JOBS_BUILD_TIER - S_SCHEDULE_FIRST] =
		JOB_COLUMNS " WHERE b.name = ? AND j.tier = ? ORDER BY m.name, j.id",
	[S_JOBS_MACHINE - S_SCHEDULE_FIRST] = JOB_COLUMNS " WHERE m.name = ? ORDER BY j.id",
	[S_JOB_GET - S_SCHEDULE_FIRST] = JOB_COLUMNS " WHERE m.name = ? AND j.run_id = ?",
	[S_JOB_END - S_SCHEDULE_FIRST] =
		"UPDATE schedule_jobs SET state = ?, note = ?, ended = ? WHERE id = ?",
	[S_JOB_ASKED - S_SCHEDULE_FIRST] = "UPDATE schedule_jobs SET asked = ? WHERE id = ?",
	[S_JOB_MOVE - S_SCHEDULE_FIRST] =
		"UPDATE schedule_jobs SET machine = ?, run_id = ?, state = 'queued', boots = 0,"
		" booted = NULL, note = ?, ended = NULL, asked = NULL WHERE id = ?",
	[S_SPLIT_ADD - S_SCHEDULE_FIRST] =
		"INSERT INTO schedule_splits (build, tier, shard_group, shard, shards, machine,"
		" testlist) VALUES (?, ?, ?, ?, ?, ?, ?)",
	[S_SPLITS - S_SCHEDULE_FIRST] =
		"SELECT b.name, s.tier, s.shard_group, s.shard, s.shards, s.machine, s.testlist"
		" FROM schedule_splits s JOIN builds b ON b.id = s.build"
		" WHERE b.name = ? AND s.tier = ? AND s.shard_group = ? ORDER BY s.shard",
	[S_MACHINE_STATE_PUT - S_SCHEDULE_FIRST] =
		"INSERT INTO schedule_machines (machine, state, last_seen, power_cycles, last_cycle,"
		" note) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (machine) DO UPDATE SET"
		" state = excluded.state, last_seen = excluded.last_seen,"
		" power_cycles = excluded.power_cycles, last_cycle = excluded.last_cycle,"
		" note = excluded.note",
	[S_MACHINE_STATE_GET - S_SCHEDULE_FIRST] =
		"SELECT m.name, s.state, s.last_seen, s.power_cycles, s.last_cycle, s.note"
		" FROM schedule_machines s JOIN machines m ON m.id = s.machine WHERE m.name = ?",
	[S_TEST_DURATION - S_SCHEDULE_FIRST] =
		"SELECT total / count, count FROM test_durations WHERE name = ?",
	[S_LAST_UPLOAD - S_SCHEDULE_FIRST] =
		"SELECT MAX(r.ingested) FROM runs r JOIN machines m ON m.id = r.machine"
		" WHERE m.name = ?",
	[S_BUILD_FILE_ADD - S_SCHEDULE_FIRST] =
		"INSERT INTO build_files (build, path, sha256, size) VALUES (?, ?, ?, ?)"
		" ON CONFLICT (build, path) DO UPDATE SET sha256 = excluded.sha256,"
		" size = excluded.size",
	[S_BUILD_FILES - S_SCHEDULE_FIRST] =
		"SELECT b.name, f.path, f.sha256, f.size FROM build_files f"
		" JOIN builds b ON b.id = f.build WHERE b.name = ? ORDER BY f.path",
	[S_GATE_PUT - S_SCHEDULE_FIRST] =
		"INSERT INTO schedule_gates (build, decision, decided) VALUES (?, ?, ?)",
	[S_GATE_GET - S_SCHEDULE_FIRST] =
		"SELECT g.decision FROM schedule_gates g JOIN builds b ON b.id = g.build"
		" WHERE b.name = ?",
	[S_KNOWN_GOOD_ENSURE - S_SCHEDULE_FIRST] =
		"INSERT INTO known_good (version, registered) VALUES (?, ?) ON CONFLICT (version)"
		" DO UPDATE SET registered = excluded.registered RETURNING id",
	[S_KNOWN_GOOD_FILE_ADD - S_SCHEDULE_FIRST] =
		"INSERT INTO known_good_files (known_good, path, sha256, size) VALUES (?, ?, ?, ?)"
		" ON CONFLICT (known_good, path) DO UPDATE SET sha256 = excluded.sha256,"
		" size = excluded.size",
	[S_KNOWN_GOOD_FILES - S_SCHEDULE_FIRST] =
		"SELECT k.version, f.path, f.sha256, f.size FROM known_good_files f"
		" JOIN known_good k ON k.id = f.known_good WHERE k.version = ? ORDER BY f.path",
	/* The version a re-deploy writes: the one registered last. */
	[S_KNOWN_GOOD_LATEST - S_SCHEDULE_FIRST] =
		"SELECT version FROM known_good ORDER BY registered DESC, id DESC LIMIT 1",
	/* Builds whose fast tier is queued and whose full tier is not decided yet. */
	[S_BUILDS_UNGATED - S_SCHEDULE_FIRST] =
		"SELECT DISTINCT b.name, b.id FROM schedule_jobs j JOIN builds b ON b.id = j.build"
		" WHERE j.tier = 'fast' AND j.kind IS NULL AND NOT EXISTS"
		" (SELECT 1 FROM schedule_gates g WHERE g.build = j.build) ORDER BY b.id",
	[S_BUILD_RERUNS - S_SCHEDULE_FIRST] =
		"SELECT m.name, j.run_id, j.state, r.id FROM schedule_jobs j"
		" JOIN machines m ON m.id = j.machine JOIN builds b ON b.id = j.build"
		" LEFT JOIN runs r ON r.machine = j.machine AND r.run_id = j.run_id"
		" WHERE b.name = ? AND j.kind = 'confirm' ORDER BY m.name, j.id",
};

/* query() of one of the scheduler's statements. */
static int query(struct bci_store *store, enum bci_store_statement id,
		 const struct bci_store_value *params, int n_params, bci_store_row_fn row, void *ctx,
		 char *err, size_t err_size)
{
	return bci_store_query_text(store, id, statements[id - S_SCHEDULE_FIRST], params, n_params,
				    row, ctx, err, err_size);
}

/* ---- jobs ---- */

int bci_store_job_add(struct bci_store *store, const struct bci_store_job *job, int64_t *key,
		      char *err, size_t err_size)
{
	int64_t machine, build, id = -1;
	int ret;

	if (strcmp(job->tier, "fast") && strcmp(job->tier, "full")) {
		snprintf(err, err_size, "tier '%s' (fast or full)", job->tier);
		return -EINVAL;
	}
	if (job->kind && strcmp(job->kind, "confirm") && strcmp(job->kind, "bisect")) {
		snprintf(err, err_size, "job kind '%s' (confirm or bisect)", job->kind);
		return -EINVAL;
	}
	if ((ret = bci_store_machine_ensure(store, job->machine, &machine, err, err_size)) < 0 ||
	    (ret = bci_store_build_key(store, job->build, &build, err, err_size)) < 0)
		return ret;
	struct bci_store_value params[] = {
		value_int(machine), value_int(build), value_text(job->tier), value_int(job->shard),
		value_int(job->shards), value_text(job->testlist), value_text(job->run_id),
		value_real(job->queued > 0 ? job->queued : bci_store_now(), 0),
		value_text(job->kind),
	};
	ret = query(store, S_JOB_ADD, params, 9, bci_store_row_first_int, &id, err,
		    err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "machine %s already has a job of run id %s", job->machine,
			 job->run_id);
	if (ret < 0)
		return ret;
	if (key)
		*key = id;
	return 0;
}

struct job_walk {
	int (*fn)(const struct bci_store_job *job, void *ctx);
	void *ctx;
	int count;
};

static int row_job(const struct bci_store_value *c, int n, void *ctx)
{
	struct job_walk *walk = ctx;
	struct bci_store_job job;

	if (n < 16)
		return -EPROTO;
	job = (struct bci_store_job){
		.key = column_int(&c[0], -1),
		.machine = column_text(&c[1]),
		.build = column_text(&c[2]),
		.tier = column_text(&c[3]),
		.shard = (int)column_int(&c[4], 0),
		.shards = (int)column_int(&c[5], 1),
		.testlist = column_text(&c[6]),
		.run_id = column_text(&c[7]),
		.state = column_text(&c[8]),
		.boots = (int)column_int(&c[9], 0),
		.queued = column_real(&c[10], 0),
		.booted = column_real(&c[11], 0),
		.note = column_text(&c[12]),
		.ended = column_real(&c[13], 0),
		.asked = column_real(&c[14], 0),
		.kind = column_text(&c[15]),
	};
	walk->count++;
	return walk->fn ? walk->fn(&job, walk->ctx) : 0;
}

int bci_store_job_next(struct bci_store *store, const char *machine,
		       int (*fn)(const struct bci_store_job *job, void *ctx), void *ctx,
		       char *err, size_t err_size)
{
	struct bci_store_value param = value_text(machine);
	struct job_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_JOB_NEXT, &param, 1, row_job, &walk, err, err_size);
	return ret ? ret : walk.count;
}

int bci_store_job_update(struct bci_store *store, int64_t key, const char *state, int boots,
			 double booted, char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_text(state), value_int(boots), value_real(booted, 1), value_int(key),
	};

	return query(store, S_JOB_UPDATE, params, 4, NULL, NULL, err, err_size);
}

int bci_store_job_end(struct bci_store *store, int64_t key, const char *state, const char *note,
		      double ended, char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_text(state), value_text(note), value_real(ended, 1), value_int(key),
	};

	return query(store, S_JOB_END, params, 4, NULL, NULL, err, err_size);
}

int bci_store_job_asked(struct bci_store *store, int64_t key, double when, char *err,
			size_t err_size)
{
	struct bci_store_value params[] = { value_real(when, 1), value_int(key) };

	return query(store, S_JOB_ASKED, params, 2, NULL, NULL, err, err_size);
}

int bci_store_job_move(struct bci_store *store, int64_t key, const char *machine,
		       const char *run_id, const char *note, char *err, size_t err_size)
{
	int64_t id;
	int ret;

	if ((ret = bci_store_machine_ensure(store, machine, &id, err, err_size)) < 0)
		return ret;
	struct bci_store_value params[] = {
		value_int(id), value_text(run_id), value_text(note), value_int(key),
	};
	ret = query(store, S_JOB_MOVE, params, 4, NULL, NULL, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "machine %s already has a job of run id %s", machine,
			 run_id);
	return ret;
}

int bci_store_jobs_each(struct bci_store *store, const char *build, const char *tier,
			int (*fn)(const struct bci_store_job *job, void *ctx), void *ctx,
			char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(build), value_text(tier) };
	struct job_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, tier ? S_JOBS_BUILD_TIER : S_JOBS_BUILD, params, tier ? 2 : 1,
		    row_job, &walk, err, err_size);
	return ret ? ret : walk.count;
}

int bci_store_machine_jobs_each(struct bci_store *store, const char *machine,
				int (*fn)(const struct bci_store_job *job, void *ctx), void *ctx,
				char *err, size_t err_size)
{
	struct bci_store_value param = value_text(machine);
	struct job_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_JOBS_MACHINE, &param, 1, row_job, &walk, err, err_size);
	return ret ? ret : walk.count;
}

int bci_store_machine_job_get(struct bci_store *store, const char *machine, const char *run_id,
			      int (*fn)(const struct bci_store_job *job, void *ctx), void *ctx,
			      char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(machine), value_text(run_id) };
	struct job_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_JOB_GET, params, 2, row_job, &walk, err, err_size);
	return ret ? ret : walk.count;
}

struct rerun_walk {
	int (*fn)(const char *machine, const char *run_id, const char *state, int64_t run,
		  void *ctx);
	void *ctx;
	int count;
};

static int row_rerun(const struct bci_store_value *c, int n, void *ctx)
{
	struct rerun_walk *walk = ctx;

	if (n < 4 || !column_text(&c[0]) || !column_text(&c[1]) || !column_text(&c[2]))
		return -EPROTO;
	walk->count++;
	return walk->fn(column_text(&c[0]), column_text(&c[1]), column_text(&c[2]),
			column_int(&c[3], -1), walk->ctx);
}

int bci_store_build_reruns_each(struct bci_store *store, const char *build,
				int (*fn)(const char *machine, const char *run_id,
					  const char *state, int64_t run, void *ctx),
				void *ctx, char *err, size_t err_size)
{
	struct bci_store_value param = value_text(build);
	struct rerun_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_BUILD_RERUNS, &param, 1, row_rerun, &walk, err, err_size);
	return ret ? ret : walk.count;
}

/* ---- splits ---- */

int bci_store_split_add(struct bci_store *store, const struct bci_store_split *split,
			char *err, size_t err_size)
{
	int64_t build;
	int ret;

	if ((ret = bci_store_build_key(store, split->build, &build, err, err_size)) < 0)
		return ret;
	struct bci_store_value params[] = {
		value_int(build), value_text(split->tier), value_text(split->group),
		value_int(split->shard), value_int(split->shards), value_text(split->machine),
		value_text(split->testlist),
	};
	ret = query(store, S_SPLIT_ADD, params, 7, NULL, NULL, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "shard %d of %s %s for group %s is already recorded",
			 split->shard, split->build, split->tier, split->group);
	return ret;
}

struct split_walk {
	int (*fn)(const struct bci_store_split *split, void *ctx);
	void *ctx;
	int count;
};

static int row_split(const struct bci_store_value *c, int n, void *ctx)
{
	struct split_walk *walk = ctx;
	struct bci_store_split split;

	if (n < 7)
		return -EPROTO;
	split = (struct bci_store_split){
		.build = column_text(&c[0]),
		.tier = column_text(&c[1]),
		.group = column_text(&c[2]),
		.shard = (int)column_int(&c[3], 0),
		.shards = (int)column_int(&c[4], 1),
		.machine = column_text(&c[5]),
		.testlist = column_text(&c[6]),
	};
	walk->count++;
	return walk->fn(&split, walk->ctx);
}

int bci_store_splits_each(struct bci_store *store, const char *build, const char *tier,
			  const char *group,
			  int (*fn)(const struct bci_store_split *split, void *ctx), void *ctx,
			  char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(build), value_text(tier), value_text(group) };
	struct split_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_SPLITS, params, 3, row_split, &walk, err, err_size);
	return ret ? ret : walk.count;
}

/* ---- machine states ---- */

int bci_store_machine_state_put(struct bci_store *store, const struct bci_store_machine_state *state,
				char *err, size_t err_size)
{
	int64_t machine;
	int ret;

	if (strcmp(state->state, "ready") && strcmp(state->state, "out")) {
		snprintf(err, err_size, "machine state '%s' (ready or out)", state->state);
		return -EINVAL;
	}
	if ((ret = bci_store_machine_ensure(store, state->machine, &machine, err, err_size)) < 0)
		return ret;
	struct bci_store_value params[] = {
		value_int(machine), value_text(state->state), value_real(state->last_seen, -1e300),
		value_int(state->power_cycles), value_real(state->last_cycle, 1),
		value_text(state->note),
	};
	return query(store, S_MACHINE_STATE_PUT, params, 6, NULL, NULL, err, err_size);
}

struct state_walk {
	int (*fn)(const struct bci_store_machine_state *state, void *ctx);
	void *ctx;
	int count;
};

static int row_state(const struct bci_store_value *c, int n, void *ctx)
{
	struct state_walk *walk = ctx;
	struct bci_store_machine_state state;

	if (n < 6)
		return -EPROTO;
	state = (struct bci_store_machine_state){
		.machine = column_text(&c[0]),
		.state = column_text(&c[1]),
		.last_seen = column_real(&c[2], 0),
		.power_cycles = (int)column_int(&c[3], 0),
		.last_cycle = column_real(&c[4], 0),
		.note = column_text(&c[5]),
	};
	walk->count++;
	return walk->fn(&state, walk->ctx);
}

int bci_store_machine_state_get(struct bci_store *store, const char *machine,
				int (*fn)(const struct bci_store_machine_state *state, void *ctx),
				void *ctx, char *err, size_t err_size)
{
	struct bci_store_value param = value_text(machine);
	struct state_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_MACHINE_STATE_GET, &param, 1, row_state, &walk, err,
		    err_size);
	if (ret)
		return ret;
	if (!walk.count) {
		snprintf(err, err_size, "the scheduler has no state for machine %s", machine);
		return -ENOENT;
	}
	return 0;
}

/* ---- what the history says ---- */

struct duration {
	double mean;
	int64_t count;
};

static int row_duration(const struct bci_store_value *c, int n, void *ctx)
{
	struct duration *d = ctx;

	if (n < 2)
		return -EPROTO;
	d->mean = column_real(&c[0], -1);
	d->count = column_int(&c[1], 0);
	return 0;
}

int bci_store_durations_fold(struct bci_store *store, char *err, size_t err_size)
{
	/* Ingests' inserts (ROW EXCLUSIVE) wait; in-flight ones are waited for. */
	static const char *const pg_lock =
		"LOCK TABLE durations_pending IN SHARE ROW EXCLUSIVE MODE";
	bool own = !store->in_transaction;
	int ret;

	if (own && (ret = bci_store_begin(store, err, err_size)) < 0)
		return ret;
	ret = 0;
	if (store->backend == &bci_store_postgres_backend)
		ret = store->backend->exec(store->db, pg_lock, err, err_size);
	if (ret == 0)
		ret = bci_store_query(store, S_DURATIONS_FOLD, NULL, 0, NULL, NULL, err, err_size);
	if (ret == 0)
		ret = bci_store_query(store, S_DURATIONS_PENDING_CLEAR, NULL, 0, NULL, NULL, err,
				      err_size);
	if (own) {
		if (ret == 0)
			return bci_store_commit(store, err, err_size);
		bci_store_rollback(store);
	}
	return ret;
}

int bci_store_test_duration(struct bci_store *store, const char *test, double *seconds,
			    char *err, size_t err_size)
{
	struct bci_store_value param = value_text(test);
	struct duration d = { -1, 0 };
	int ret;

	ret = query(store, S_TEST_DURATION, &param, 1, row_duration, &d, err, err_size);
	if (ret < 0)
		return ret;
	if (d.count <= 0 || d.mean < 0)
		return 0;
	*seconds = d.mean;
	return 1;
}

static int row_first_real(const struct bci_store_value *c, int n, void *ctx)
{
	if (n < 1)
		return -EPROTO;
	*(double *)ctx = column_real(&c[0], 0);
	return 0;
}

int bci_store_machine_last_upload(struct bci_store *store, const char *machine, double *when,
				  char *err, size_t err_size)
{
	struct bci_store_value param = value_text(machine);

	*when = 0;
	return query(store, S_LAST_UPLOAD, &param, 1, row_first_real, when, err, err_size);
}

/* ---- build files ---- */

int bci_store_build_file_add(struct bci_store *store, const struct bci_store_build_file *file,
			     char *err, size_t err_size)
{
	int64_t build;
	int ret;

	if ((ret = bci_store_build_key(store, file->build, &build, err, err_size)) < 0)
		return ret;
	struct bci_store_value params[] = {
		value_int(build), value_text(file->path), value_text(file->sha256),
		value_int((int64_t)file->size),
	};
	return query(store, S_BUILD_FILE_ADD, params, 4, NULL, NULL, err, err_size);
}

struct file_walk {
	int (*fn)(const struct bci_store_build_file *file, void *ctx);
	void *ctx;
	int count;
};

static int row_file(const struct bci_store_value *c, int n, void *ctx)
{
	struct file_walk *walk = ctx;
	struct bci_store_build_file file;

	if (n < 4)
		return -EPROTO;
	file = (struct bci_store_build_file){
		.build = column_text(&c[0]),
		.path = column_text(&c[1]),
		.sha256 = column_text(&c[2]),
		.size = (uint64_t)column_int(&c[3], 0),
	};
	walk->count++;
	return walk->fn(&file, walk->ctx);
}

int bci_store_build_files_each(struct bci_store *store, const char *build,
			       int (*fn)(const struct bci_store_build_file *file, void *ctx),
			       void *ctx, char *err, size_t err_size)
{
	struct bci_store_value param = value_text(build);
	struct file_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_BUILD_FILES, &param, 1, row_file, &walk, err, err_size);
	return ret ? ret : walk.count;
}

/* ---- the full tier's gate ---- */

int bci_store_gate_put(struct bci_store *store, const char *build, const char *decision,
		       char *err, size_t err_size)
{
	int64_t key;
	int ret;

	if ((ret = bci_store_build_key(store, build, &key, err, err_size)) < 0)
		return ret;
	struct bci_store_value params[] = {
		value_int(key), value_text(decision), value_real(bci_store_now(), 0),
	};
	ret = query(store, S_GATE_PUT, params, 3, NULL, NULL, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "the full tier of %s is already decided", build);
	return ret;
}

struct decision_read {
	char *out;
	size_t size;
	bool found;
};

static int row_decision(const struct bci_store_value *c, int n, void *ctx)
{
	struct decision_read *d = ctx;

	if (n < 1 || !column_text(&c[0]))
		return -EPROTO;
	snprintf(d->out, d->size, "%s", column_text(&c[0]));
	d->found = true;
	return 0;
}

int bci_store_gate_get(struct bci_store *store, const char *build, char *decision, size_t size,
		       char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(build) };
	struct decision_read d = { decision, size, false };
	int ret = query(store, S_GATE_GET, params, 1, row_decision, &d, err, err_size);

	return ret < 0 ? ret : d.found;
}

struct name_walk {
	int (*fn)(const char *name, void *ctx);
	void *ctx;
	int count;
};

static int row_name(const struct bci_store_value *c, int n, void *ctx)
{
	struct name_walk *walk = ctx;

	if (n < 1 || !column_text(&c[0]))
		return -EPROTO;
	walk->count++;
	return walk->fn(column_text(&c[0]), walk->ctx);
}

int bci_store_builds_ungated(struct bci_store *store, int (*fn)(const char *build, void *ctx),
			     void *ctx, char *err, size_t err_size)
{
	struct name_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_BUILDS_UNGATED, NULL, 0, row_name, &walk, err, err_size);
	return ret ? ret : walk.count;
}

/* ---- the known-good image's versions ---- */

int bci_store_known_good_file_add(struct bci_store *store, const char *version,
				  const struct bci_store_build_file *file, char *err,
				  size_t err_size)
{
	struct bci_store_value ensure[] = { value_text(version), value_real(bci_store_now(), 0) };
	int64_t key = -1;
	int ret;

	ret = query(store, S_KNOWN_GOOD_ENSURE, ensure, 2, bci_store_row_first_int, &key,
		    err, err_size);
	if (ret < 0)
		return ret;
	struct bci_store_value params[] = {
		value_int(key), value_text(file->path), value_text(file->sha256),
		value_int((int64_t)file->size),
	};
	return query(store, S_KNOWN_GOOD_FILE_ADD, params, 4, NULL, NULL, err, err_size);
}

int bci_store_known_good_files_each(struct bci_store *store, const char *version,
				    int (*fn)(const struct bci_store_build_file *file, void *ctx),
				    void *ctx, char *err, size_t err_size)
{
	struct bci_store_value param = value_text(version);
	struct file_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_KNOWN_GOOD_FILES, &param, 1, row_file, &walk, err, err_size);
	return ret ? ret : walk.count;
}

int bci_store_known_good_latest(struct bci_store *store, int (*fn)(const char *version, void *ctx),
				void *ctx, char *err, size_t err_size)
{
	struct name_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_KNOWN_GOOD_LATEST, NULL, 0, row_name, &walk, err, err_size);
	return ret ? ret : walk.count;
}
