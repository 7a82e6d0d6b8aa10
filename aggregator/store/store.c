// SPDX-License-Identifier: MIT
/*
 * The store: the schema and its migrations, every SQL statement, and the
 * operations of store.h written once over the backend interface (backend.h)
 * so SQLite and PostgreSQL run the very same statements.
 *
 * The SQL is the subset both engines share: INSERT ... ON CONFLICT,
 * RETURNING (SQLite 3.35+), CHECK, foreign keys; column types TEXT, INTEGER,
 * BIGINT and DOUBLE PRECISION. Only a table's generated key is spelled per
 * backend: "{id}" in the schema text below is replaced by it.
 */
#include "store.h"

#include "backend.h"
#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct bci_store {
	const struct bci_store_backend *backend;
	void *db;
	int in_transaction;
};

/*
 * Migrations: migrations[i] takes the schema from version i to i + 1. Never
 * edit one that has shipped; add the next. Each runs in its own transaction
 * with the version update, so a database is always at one version.
 */
static const char *const migrations[] = {
	/* 1: machines, tags, builds, runs, boots, crash records, results, suspend cycles. */
	"CREATE TABLE machines ("
	"  id {id},"
	"  name TEXT NOT NULL UNIQUE,"
	"  created DOUBLE PRECISION NOT NULL);"
	"CREATE TABLE machine_tags ("
	"  machine BIGINT NOT NULL REFERENCES machines(id) ON DELETE CASCADE,"
	"  tag TEXT NOT NULL,"
	"  PRIMARY KEY (machine, tag));"
	"CREATE INDEX machine_tags_tag ON machine_tags(tag);"
	"CREATE TABLE builds ("
	"  id {id},"
	"  name TEXT NOT NULL UNIQUE,"
	"  tree TEXT NOT NULL,"
	"  commit_id TEXT NOT NULL,"
	"  tier TEXT NOT NULL CHECK (tier IN ('fast', 'full')),"
	"  base BIGINT REFERENCES builds(id),"
	"  series_title TEXT,"
	"  message_id TEXT,"
	"  registered DOUBLE PRECISION NOT NULL);"
	"CREATE INDEX builds_tree ON builds(tree, registered);"
	"CREATE TABLE runs ("
	"  id {id},"
	"  machine BIGINT NOT NULL REFERENCES machines(id),"
	"  run_id TEXT NOT NULL,"
	"  build BIGINT REFERENCES builds(id),"
	"  image_id TEXT,"
	"  kernel TEXT,"
	"  cmdline TEXT,"
	"  digest TEXT NOT NULL,"
	"  archive_path TEXT NOT NULL,"
	"  archive_root TEXT NOT NULL,"
	"  state TEXT NOT NULL,"
	"  started DOUBLE PRECISION,"
	"  ended DOUBLE PRECISION,"
	"  ingested DOUBLE PRECISION NOT NULL,"
	"  UNIQUE (machine, run_id));"
	"CREATE INDEX runs_build ON runs(build);"
	"CREATE TABLE boots ("
	"  run BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  boot INTEGER NOT NULL,"
	"  started DOUBLE PRECISION,"
	"  kernel TEXT,"
	"  cmdline TEXT,"
	"  previous TEXT,"
	"  ending TEXT,"
	"  PRIMARY KEY (run, boot));"
	"CREATE TABLE crashes ("
	"  id {id},"
	"  run BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  boot INTEGER NOT NULL,"
	"  source TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  path TEXT NOT NULL);"
	"CREATE INDEX crashes_run ON crashes(run);"
	"CREATE TABLE results ("
	"  id {id},"
	"  run BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  job INTEGER NOT NULL,"
	"  name TEXT NOT NULL,"
	"  result TEXT NOT NULL,"
	"  duration DOUBLE PRECISION,"
	"  dmesg_warnings INTEGER NOT NULL);"
	"CREATE INDEX results_run ON results(run, name);"
	"CREATE INDEX results_name ON results(name);"
	"CREATE TABLE suspend_cycles ("
	"  run BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  cycle INTEGER NOT NULL,"
	"  state TEXT NOT NULL,"
	"  result TEXT NOT NULL,"
	"  wall DOUBLE PRECISION,"
	"  suspended DOUBLE PRECISION,"
	"  latency DOUBLE PRECISION,"
	"  kernel_suspend DOUBLE PRECISION,"
	"  kernel_resume DOUBLE PRECISION,"
	"  woke TEXT,"
	"  PRIMARY KEY (run, cycle));",
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == BCI_STORE_SCHEMA_VERSION,
	       "one migration per schema version");

/* Selected columns of a run, shared by every statement that reads runs. */
#define RUN_COLUMNS \
	"SELECT r.id, m.name, r.run_id, b.name, r.image_id, r.kernel, r.cmdline, r.digest," \
	" r.archive_path, r.archive_root, r.state, r.started, r.ended, r.ingested" \
	" FROM runs r JOIN machines m ON m.id = r.machine LEFT JOIN builds b ON b.id = r.build"
#define RUN_COLUMN_COUNT 14
#define RESULT_COLUMNS "res.job, res.name, res.result, res.duration, res.dmesg_warnings"

enum statement {
	S_VERSION_TABLE,
	S_VERSION_GET,
	S_VERSION_CLEAR,
	S_VERSION_SET,
	S_MACHINE_ENSURE,
	S_TAG_ADD,
	S_TAG_DELETE,
	S_TAGS,
	S_MACHINES_ALL,
	S_MACHINES_TAGGED,
	S_BUILD_ID,
	S_BUILD_PUT,
	S_BUILD_GET,
	S_RUN_ADD,
	S_RUN_GET,
	S_RUNS_ALL,
	S_RUNS_MACHINE,
	S_BOOT_ADD,
	S_CRASH_ADD,
	S_RESULT_ADD,
	S_SUSPEND_ADD,
	S_BOOTS,
	S_CRASHES,
	S_RESULTS,
	S_SUSPENDS,
	S_RESULT_GET,
	S_COUNT,
};

static const char *const statements[S_COUNT] = {
	[S_VERSION_TABLE] = "CREATE TABLE IF NOT EXISTS bootci_schema (version INTEGER NOT NULL)",
	[S_VERSION_GET] = "SELECT version FROM bootci_schema",
	[S_VERSION_CLEAR] = "DELETE FROM bootci_schema",
	[S_VERSION_SET] = "INSERT INTO bootci_schema (version) VALUES (?)",
	/* DO UPDATE (to the same value) so RETURNING gives the key of an existing machine too. */
	[S_MACHINE_ENSURE] = "INSERT INTO machines (name, created) VALUES (?, ?)"
			     " ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
	[S_TAG_ADD] = "INSERT INTO machine_tags (machine, tag) VALUES (?, ?) ON CONFLICT DO NOTHING",
	[S_TAG_DELETE] = "DELETE FROM machine_tags WHERE tag = ?"
			 " AND machine = (SELECT id FROM machines WHERE name = ?)",
	[S_TAGS] = "SELECT t.tag FROM machine_tags t JOIN machines m ON m.id = t.machine"
		   " WHERE m.name = ? ORDER BY t.tag",
	[S_MACHINES_ALL] = "SELECT name FROM machines ORDER BY name",
	[S_MACHINES_TAGGED] = "SELECT m.name FROM machines m JOIN machine_tags t ON t.machine = m.id"
			      " WHERE t.tag = ? ORDER BY m.name",
	[S_BUILD_ID] = "SELECT id FROM builds WHERE name = ?",
	[S_BUILD_PUT] = "INSERT INTO builds (name, tree, commit_id, tier, base, series_title,"
			" message_id, registered) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
			" ON CONFLICT (name) DO UPDATE SET tree = excluded.tree,"
			" commit_id = excluded.commit_id, tier = excluded.tier, base = excluded.base,"
			" series_title = excluded.series_title, message_id = excluded.message_id,"
			" registered = excluded.registered",
	[S_BUILD_GET] = "SELECT b.name, b.tree, b.commit_id, b.tier, base.name, b.series_title,"
			" b.message_id, b.registered FROM builds b"
			" LEFT JOIN builds base ON base.id = b.base WHERE b.name = ?",
	[S_RUN_ADD] = "INSERT INTO runs (machine, run_id, build, image_id, kernel, cmdline, digest,"
		      " archive_path, archive_root, state, started, ended, ingested)"
		      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
	[S_RUN_GET] = RUN_COLUMNS " WHERE m.name = ? AND r.run_id = ?",
	[S_RUNS_ALL] = RUN_COLUMNS " ORDER BY r.id",
	[S_RUNS_MACHINE] = RUN_COLUMNS " WHERE m.name = ? ORDER BY r.id",
	[S_BOOT_ADD] = "INSERT INTO boots (run, boot, started, kernel, cmdline, previous, ending)"
		       " VALUES (?, ?, ?, ?, ?, ?, ?)",
	[S_CRASH_ADD] = "INSERT INTO crashes (run, boot, source, name, path) VALUES (?, ?, ?, ?, ?)",
	[S_RESULT_ADD] = "INSERT INTO results (run, job, name, result, duration, dmesg_warnings)"
			 " VALUES (?, ?, ?, ?, ?, ?)",
	[S_SUSPEND_ADD] = "INSERT INTO suspend_cycles (run, cycle, state, result, wall, suspended,"
			  " latency, kernel_suspend, kernel_resume, woke)"
			  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[S_BOOTS] = "SELECT boot, started, kernel, cmdline, previous, ending FROM boots"
		    " WHERE run = ? ORDER BY boot",
	[S_CRASHES] = "SELECT boot, source, name, path FROM crashes WHERE run = ? ORDER BY id",
	[S_RESULTS] = "SELECT " RESULT_COLUMNS " FROM results res WHERE res.run = ? ORDER BY res.id",
	[S_SUSPENDS] = "SELECT cycle, state, result, wall, suspended, latency, kernel_suspend,"
		       " kernel_resume, woke FROM suspend_cycles WHERE run = ? ORDER BY cycle",
	[S_RESULT_GET] = "SELECT r.id, m.name, r.run_id, b.name, r.image_id, r.kernel, r.cmdline,"
			 " r.digest, r.archive_path, r.archive_root, r.state, r.started, r.ended,"
			 " r.ingested, " RESULT_COLUMNS
			 " FROM runs r JOIN machines m ON m.id = r.machine"
			 " LEFT JOIN builds b ON b.id = r.build"
			 " JOIN results res ON res.run = r.id"
			 " WHERE m.name = ? AND r.run_id = ? AND res.name = ? ORDER BY res.id LIMIT 1",
};

/* ---- values ---- */

static struct bci_store_value value_text(const char *s)
{
	return (struct bci_store_value){ .type = s ? BCI_STORE_TEXT : BCI_STORE_NULL, .s = s };
}

static struct bci_store_value value_int(int64_t i)
{
	return (struct bci_store_value){ .type = BCI_STORE_INT, .i = i };
}

/* @unknown_below: values below it are stored as NULL (unknown). */
static struct bci_store_value value_real(double r, double unknown_below)
{
	if (r < unknown_below)
		return (struct bci_store_value){ .type = BCI_STORE_NULL };
	return (struct bci_store_value){ .type = BCI_STORE_REAL, .r = r };
}

static const char *column_text(const struct bci_store_value *v)
{
	return v->type == BCI_STORE_TEXT ? v->s : NULL;
}

static int64_t column_int(const struct bci_store_value *v, int64_t null_value)
{
	if (v->type == BCI_STORE_INT)
		return v->i;
	if (v->type == BCI_STORE_REAL)
		return (int64_t)v->r;
	if (v->type == BCI_STORE_TEXT && v->s)
		return strtoll(v->s, NULL, 10);
	return null_value;
}

static double column_real(const struct bci_store_value *v, double null_value)
{
	if (v->type == BCI_STORE_REAL)
		return v->r;
	if (v->type == BCI_STORE_INT)
		return (double)v->i;
	if (v->type == BCI_STORE_TEXT && v->s)
		return strtod(v->s, NULL);
	return null_value;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int query(struct bci_store *store, enum statement id, const struct bci_store_value *params,
		 int n_params, bci_store_row_fn row, void *ctx, char *err, size_t err_size)
{
	return store->backend->query(store->db, id, statements[id], params, n_params, row, ctx,
				     err, err_size);
}

/* Row callback keeping the first column as an integer in *(int64_t *)ctx. */
static int row_first_int(const struct bci_store_value *columns, int n, void *ctx)
{
	if (n < 1)
		return -EPROTO;
	*(int64_t *)ctx = column_int(&columns[0], -1);
	return 0;
}

/* ---- opening and migrations ---- */

/* The schema text of migration @index with "{id}" spelled for @backend. */
static char *migration_text(const struct bci_store_backend *backend, size_t index)
{
	const char *sql = migrations[index], *marker = "{id}";
	size_t n = 0, len = strlen(sql), id_len = strlen(backend->id_column);
	char *out, *w;

	for (const char *p = strstr(sql, marker); p; p = strstr(p + 4, marker))
		n++;
	out = malloc(len + n * id_len + 1);
	if (!out)
		return NULL;
	w = out;
	for (const char *p = sql; *p;) {
		if (!strncmp(p, marker, 4)) {
			memcpy(w, backend->id_column, id_len);
			w += id_len;
			p += 4;
		} else {
			*w++ = *p++;
		}
	}
	*w = '\0';
	return out;
}

/*
 * One step: in one transaction, reads the version and applies the next
 * migration. Returns 1 when a migration was applied, 0 when the schema is
 * current. PostgreSQL serialises masters migrating one database at once
 * with a transaction-scoped advisory lock; SQLite's BEGIN IMMEDIATE does.
 */
static int migrate_step(struct bci_store *store, char *err, size_t err_size)
{
	/* An arbitrary constant naming bootci's schema lock among advisory locks. */
	static const char *const pg_lock = "SELECT pg_advisory_xact_lock(7346502018)";
	const struct bci_store_backend *backend = store->backend;
	struct bci_store_value param;
	int64_t version = 0;
	char *sql;
	int ret;

	ret = bci_store_begin(store, err, err_size);
	if (ret < 0)
		return ret;
	if (backend == &bci_store_postgres_backend) {
		ret = backend->exec(store->db, pg_lock, err, err_size);
		if (ret < 0)
			goto fail;
	}
	ret = query(store, S_VERSION_TABLE, NULL, 0, NULL, NULL, err, err_size);
	if (ret < 0)
		goto fail;
	ret = query(store, S_VERSION_GET, NULL, 0, row_first_int, &version, err, err_size);
	if (ret < 0)
		goto fail;
	if (version > BCI_STORE_SCHEMA_VERSION || version < 0) {
		snprintf(err, err_size,
			 "the database's schema is version %lld, newer than this bootci's (%d):"
			 " use a newer bootci-aggregator", (long long)version,
			 BCI_STORE_SCHEMA_VERSION);
		ret = -EPROTONOSUPPORT;
		goto fail;
	}
	if (version == BCI_STORE_SCHEMA_VERSION) {
		ret = bci_store_commit(store, err, err_size);
		return ret < 0 ? ret : 0;
	}
	sql = migration_text(backend, (size_t)version);
	if (!sql) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = backend->exec(store->db, sql, err, err_size);
	free(sql);
	if (ret < 0) {
		char inner[512];

		snprintf(inner, sizeof(inner), "%s", err);
		snprintf(err, err_size, "schema migration %lld to %lld: %s", (long long)version,
			 (long long)version + 1, inner);
		goto fail;
	}
	ret = query(store, S_VERSION_CLEAR, NULL, 0, NULL, NULL, err, err_size);
	if (ret < 0)
		goto fail;
	param = value_int(version + 1);
	ret = query(store, S_VERSION_SET, &param, 1, NULL, NULL, err, err_size);
	if (ret < 0)
		goto fail;
	ret = bci_store_commit(store, err, err_size);
	return ret < 0 ? ret : 1;
fail:
	bci_store_rollback(store);
	return ret;
}

static int store_migrate(struct bci_store *store, char *err, size_t err_size)
{
	int ret;

	while ((ret = migrate_step(store, err, err_size)) > 0)
		;
	return ret;
}

/* The SQLite path of a "sqlite:PATH" URL, or the default under @data_dir, in @path. */
static int sqlite_path(const char *url, const char *data_dir, char *path, size_t size,
		       char *err, size_t err_size)
{
	int ret;

	if (url && *url) {
		if (!url[strlen("sqlite:")]) {
			snprintf(err, err_size, "store URL '%s': no database path after sqlite:", url);
			return -EINVAL;
		}
		if ((size_t)snprintf(path, size, "%s", url + strlen("sqlite:")) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	if (!data_dir || !*data_dir) {
		snprintf(err, err_size, "no store URL and no data folder to hold the default database");
		return -EINVAL;
	}
	ret = bci_mkdir_p(data_dir, 0755);
	if (ret < 0) {
		snprintf(err, err_size, "%s: cannot create the data folder: %s", data_dir, strerror(-ret));
		return ret;
	}
	if ((size_t)snprintf(path, size, "%s/bootci.sqlite", data_dir) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int bci_store_open(const char *url, const char *data_dir, struct bci_store **out,
		   char *err, size_t err_size)
{
	struct bci_store *store;
	char path[PATH_MAX];
	int ret;

	store = calloc(1, sizeof(*store));
	if (!store)
		return -ENOMEM;
	if (!url || !*url || !strncmp(url, "sqlite:", strlen("sqlite:"))) {
		ret = sqlite_path(url, data_dir, path, sizeof(path), err, err_size);
		if (ret < 0)
			goto fail;
		store->backend = &bci_store_sqlite_backend;
		ret = bci_store_sqlite_open(path, S_COUNT, &store->db, err, err_size);
	} else if (!strncmp(url, "postgresql://", 13) || !strncmp(url, "postgres://", 11) ||
		   strchr(url, '=')) {
		store->backend = &bci_store_postgres_backend;
		ret = bci_store_postgres_open(url, S_COUNT, &store->db, err, err_size);
	} else {
		snprintf(err, err_size,
			 "store URL '%s': expected sqlite:PATH, postgresql://... or a libpq"
			 " conninfo (key=value ...)", url);
		ret = -EINVAL;
	}
	if (ret < 0)
		goto fail;
	ret = store_migrate(store, err, err_size);
	if (ret < 0)
		goto fail;
	*out = store;
	return 0;
fail:
	bci_store_close(store);
	return ret;
}

void bci_store_close(struct bci_store *store)
{
	if (!store)
		return;
	if (store->db) {
		bci_store_rollback(store);
		store->backend->close(store->db);
	}
	free(store);
}

const char *bci_store_backend_name(const struct bci_store *store)
{
	return store->backend->name;
}

int bci_store_schema_version(struct bci_store *store, int *version, char *err, size_t err_size)
{
	int64_t v = 0;
	int ret;

	ret = query(store, S_VERSION_GET, NULL, 0, row_first_int, &v, err, err_size);
	if (ret < 0)
		return ret;
	*version = (int)v;
	return 0;
}

/* ---- transactions ---- */

int bci_store_begin(struct bci_store *store, char *err, size_t err_size)
{
	int ret;

	if (store->in_transaction) {
		snprintf(err, err_size, "store: a transaction is already open");
		return -EBUSY;
	}
	ret = store->backend->exec(store->db, store->backend->begin_sql, err, err_size);
	if (ret < 0)
		return ret;
	store->in_transaction = 1;
	return 0;
}

int bci_store_commit(struct bci_store *store, char *err, size_t err_size)
{
	int ret;

	if (!store->in_transaction) {
		snprintf(err, err_size, "store: commit without a transaction");
		return -EINVAL;
	}
	ret = store->backend->exec(store->db, "COMMIT", err, err_size);
	if (ret < 0) {
		/* A failed COMMIT (SQLite busy, PostgreSQL serialisation) leaves nothing written. */
		bci_store_rollback(store);
		return ret;
	}
	store->in_transaction = 0;
	return 0;
}

void bci_store_rollback(struct bci_store *store)
{
	char ignored[256];

	if (!store->in_transaction)
		return;
	store->backend->exec(store->db, "ROLLBACK", ignored, sizeof(ignored));
	store->in_transaction = 0;
}

/* ---- machines and tags ---- */

int bci_store_machine_ensure(struct bci_store *store, const char *name, int64_t *id,
			     char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(name), value_real(now(), 0) };
	int64_t key = -1;
	int ret;

	if (!name || !*name) {
		snprintf(err, err_size, "a machine needs a name");
		return -EINVAL;
	}
	ret = query(store, S_MACHINE_ENSURE, params, 2, row_first_int, &key, err, err_size);
	if (ret < 0)
		return ret;
	if (id)
		*id = key;
	return 0;
}

int bci_store_machine_tag(struct bci_store *store, const char *machine, const char *tag,
			  char *err, size_t err_size)
{
	struct bci_store_value params[2];
	int64_t key;
	int ret;

	if (!tag || !*tag) {
		snprintf(err, err_size, "machine %s: an empty tag", machine);
		return -EINVAL;
	}
	ret = bci_store_machine_ensure(store, machine, &key, err, err_size);
	if (ret < 0)
		return ret;
	params[0] = value_int(key);
	params[1] = value_text(tag);
	return query(store, S_TAG_ADD, params, 2, NULL, NULL, err, err_size);
}

int bci_store_machine_untag(struct bci_store *store, const char *machine, const char *tag,
			    char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(tag), value_text(machine) };

	return query(store, S_TAG_DELETE, params, 2, NULL, NULL, err, err_size);
}

struct name_walk {
	int (*fn)(const char *name, void *ctx);
	void *ctx;
	int count;
};

static int row_name(const struct bci_store_value *columns, int n, void *ctx)
{
	struct name_walk *walk = ctx;

	if (n < 1)
		return -EPROTO;
	walk->count++;
	return walk->fn ? walk->fn(column_text(&columns[0]), walk->ctx) : 0;
}

int bci_store_machine_tags(struct bci_store *store, const char *machine,
			   int (*fn)(const char *tag, void *ctx), void *ctx, char *err, size_t err_size)
{
	struct bci_store_value param = value_text(machine);
	struct name_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_TAGS, &param, 1, row_name, &walk, err, err_size);
	return ret ? ret : walk.count;
}

int bci_store_machines_each(struct bci_store *store, const char *tag,
			    int (*fn)(const char *machine, void *ctx), void *ctx,
			    char *err, size_t err_size)
{
	struct bci_store_value param = value_text(tag);
	struct name_walk walk = { fn, ctx, 0 };
	int ret;

	if (tag)
		ret = query(store, S_MACHINES_TAGGED, &param, 1, row_name, &walk, err, err_size);
	else
		ret = query(store, S_MACHINES_ALL, NULL, 0, row_name, &walk, err, err_size);
	return ret ? ret : walk.count;
}

/* ---- builds ---- */

/* The key of build @name in *@key: -ENOENT with a message if there is none. */
static int build_key(struct bci_store *store, const char *name, int64_t *key, char *err, size_t err_size)
{
	struct bci_store_value param = value_text(name);
	int ret;

	*key = -1;
	ret = query(store, S_BUILD_ID, &param, 1, row_first_int, key, err, err_size);
	if (ret < 0)
		return ret;
	if (*key < 0) {
		snprintf(err, err_size, "no build named '%s' in the store", name);
		return -ENOENT;
	}
	return 0;
}

int bci_store_build_put(struct bci_store *store, const struct bci_store_build *build,
			char *err, size_t err_size)
{
	struct bci_store_value params[8];
	int64_t base = -1;
	int ret;

	if (!build->name || !*build->name || !build->tree || !*build->tree || !build->commit ||
	    !*build->commit) {
		snprintf(err, err_size, "a build needs a name, a tree and a commit");
		return -EINVAL;
	}
	if (!build->tier || (strcmp(build->tier, "fast") && strcmp(build->tier, "full"))) {
		snprintf(err, err_size, "build %s: tier '%s' is neither fast nor full", build->name,
			 build->tier ? build->tier : "");
		return -EINVAL;
	}
	if (build->base) {
		ret = build_key(store, build->base, &base, err, err_size);
		if (ret < 0)
			return ret;
	}
	params[0] = value_text(build->name);
	params[1] = value_text(build->tree);
	params[2] = value_text(build->commit);
	params[3] = value_text(build->tier);
	params[4] = base >= 0 ? value_int(base) : value_text(NULL);
	params[5] = value_text(build->series_title);
	params[6] = value_text(build->message_id);
	params[7] = value_real(build->registered > 0 ? build->registered : now(), 0);
	return query(store, S_BUILD_PUT, params, 8, NULL, NULL, err, err_size);
}

struct build_walk {
	int (*fn)(const struct bci_store_build *build, void *ctx);
	void *ctx;
	int count;
};

static int row_build(const struct bci_store_value *c, int n, void *ctx)
{
	struct build_walk *walk = ctx;
	struct bci_store_build build;

	if (n < 8)
		return -EPROTO;
	build = (struct bci_store_build){
		.name = column_text(&c[0]),
		.tree = column_text(&c[1]),
		.commit = column_text(&c[2]),
		.tier = column_text(&c[3]),
		.base = column_text(&c[4]),
		.series_title = column_text(&c[5]),
		.message_id = column_text(&c[6]),
		.registered = column_real(&c[7], 0),
	};
	walk->count++;
	return walk->fn ? walk->fn(&build, walk->ctx) : 0;
}

int bci_store_build_get(struct bci_store *store, const char *name,
			int (*fn)(const struct bci_store_build *build, void *ctx), void *ctx,
			char *err, size_t err_size)
{
	struct bci_store_value param = value_text(name);
	struct build_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_BUILD_GET, &param, 1, row_build, &walk, err, err_size);
	if (ret)
		return ret;
	if (!walk.count) {
		snprintf(err, err_size, "no build named '%s' in the store", name);
		return -ENOENT;
	}
	return 0;
}

/* ---- runs ---- */

int bci_store_run_add(struct bci_store *store, const struct bci_store_run *run, int64_t *key,
		      char *err, size_t err_size)
{
	struct bci_store_value params[13];
	int64_t machine, build = -1, id = -1;
	int ret;

	if (!run->run_id || !*run->run_id || !run->digest || !run->archive_path || !run->state) {
		snprintf(err, err_size, "a run needs an id, an archive digest and path, and a state");
		return -EINVAL;
	}
	ret = bci_store_machine_ensure(store, run->machine, &machine, err, err_size);
	if (ret < 0)
		return ret;
	if (run->build) {
		ret = build_key(store, run->build, &build, err, err_size);
		if (ret < 0)
			return ret;
	}
	params[0] = value_int(machine);
	params[1] = value_text(run->run_id);
	params[2] = build >= 0 ? value_int(build) : value_text(NULL);
	params[3] = value_text(run->image_id);
	params[4] = value_text(run->kernel);
	params[5] = value_text(run->cmdline);
	params[6] = value_text(run->digest);
	params[7] = value_text(run->archive_path);
	params[8] = value_text(run->archive_root ? run->archive_root : "");
	params[9] = value_text(run->state);
	params[10] = value_real(run->started, 1e-9);
	params[11] = value_real(run->ended, 1e-9);
	params[12] = value_real(run->ingested > 0 ? run->ingested : now(), 0);
	ret = query(store, S_RUN_ADD, params, 13, row_first_int, &id, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "machine %s already has a run '%s'", run->machine, run->run_id);
	if (ret < 0)
		return ret;
	if (key)
		*key = id;
	return 0;
}

static void run_from_row(const struct bci_store_value *c, struct bci_store_run *run)
{
	*run = (struct bci_store_run){
		.key = column_int(&c[0], -1),
		.machine = column_text(&c[1]),
		.run_id = column_text(&c[2]),
		.build = column_text(&c[3]),
		.image_id = column_text(&c[4]),
		.kernel = column_text(&c[5]),
		.cmdline = column_text(&c[6]),
		.digest = column_text(&c[7]),
		.archive_path = column_text(&c[8]),
		.archive_root = column_text(&c[9]),
		.state = column_text(&c[10]),
		.started = column_real(&c[11], 0),
		.ended = column_real(&c[12], 0),
		.ingested = column_real(&c[13], 0),
	};
}

struct run_walk {
	int (*fn)(const struct bci_store_run *run, void *ctx);
	void *ctx;
	int count;
};

static int row_run(const struct bci_store_value *c, int n, void *ctx)
{
	struct run_walk *walk = ctx;
	struct bci_store_run run;

	if (n < RUN_COLUMN_COUNT)
		return -EPROTO;
	run_from_row(c, &run);
	walk->count++;
	return walk->fn ? walk->fn(&run, walk->ctx) : 0;
}

int bci_store_run_get(struct bci_store *store, const char *machine, const char *run_id,
		      int (*fn)(const struct bci_store_run *run, void *ctx), void *ctx,
		      char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(machine), value_text(run_id) };
	struct run_walk walk = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_RUN_GET, params, 2, row_run, &walk, err, err_size);
	if (ret)
		return ret;
	if (!walk.count) {
		snprintf(err, err_size, "machine %s has no run '%s' in the store", machine, run_id);
		return -ENOENT;
	}
	return 0;
}

int bci_store_runs_each(struct bci_store *store, const char *machine,
			int (*fn)(const struct bci_store_run *run, void *ctx), void *ctx,
			char *err, size_t err_size)
{
	struct bci_store_value param = value_text(machine);
	struct run_walk walk = { fn, ctx, 0 };
	int ret;

	if (machine)
		ret = query(store, S_RUNS_MACHINE, &param, 1, row_run, &walk, err, err_size);
	else
		ret = query(store, S_RUNS_ALL, NULL, 0, row_run, &walk, err, err_size);
	return ret ? ret : walk.count;
}

/* ---- what a run holds ---- */

int bci_store_boot_add(struct bci_store *store, int64_t run, const struct bci_store_boot *boot,
		       char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_int(run), value_int(boot->index), value_real(boot->time, 1e-9),
		value_text(boot->kernel), value_text(boot->cmdline), value_text(boot->previous),
		value_text(boot->ending),
	};
	int ret;

	ret = query(store, S_BOOT_ADD, params, 7, NULL, NULL, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "boot %d is stored twice", boot->index);
	return ret;
}

int bci_store_crash_add(struct bci_store *store, int64_t run, const struct bci_store_crash *crash,
			char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_int(run), value_int(crash->boot), value_text(crash->source),
		value_text(crash->name), value_text(crash->path),
	};

	return query(store, S_CRASH_ADD, params, 5, NULL, NULL, err, err_size);
}

int bci_store_result_add(struct bci_store *store, int64_t run, const struct bci_store_result *result,
			 char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_int(run), value_int(result->job), value_text(result->name),
		value_text(result->result), value_real(result->duration, 0),
		value_int(result->dmesg_warnings ? 1 : 0),
	};

	if (!result->name || !result->result) {
		snprintf(err, err_size, "a result needs a test name and a result");
		return -EINVAL;
	}
	return query(store, S_RESULT_ADD, params, 6, NULL, NULL, err, err_size);
}

int bci_store_suspend_add(struct bci_store *store, int64_t run, const struct bci_store_suspend *cycle,
			  char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_int(run), value_int(cycle->cycle), value_text(cycle->state),
		value_text(cycle->result), value_real(cycle->wall, 0),
		value_real(cycle->suspended, 0), value_real(cycle->latency, 0),
		value_real(cycle->kernel_suspend, 0), value_real(cycle->kernel_resume, 0),
		value_text(cycle->woke),
	};
	int ret;

	if (!cycle->state || !cycle->result) {
		snprintf(err, err_size, "suspend cycle %d needs a state and a result", cycle->cycle);
		return -EINVAL;
	}
	ret = query(store, S_SUSPEND_ADD, params, 10, NULL, NULL, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "suspend cycle %d is stored twice", cycle->cycle);
	return ret;
}

struct each {
	void *fn;
	void *ctx;
	int count;
};

static int row_boot(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_boot *, void *) = e->fn;
	struct bci_store_boot boot;

	if (n < 6)
		return -EPROTO;
	boot = (struct bci_store_boot){
		.index = (int)column_int(&c[0], -1),
		.time = column_real(&c[1], 0),
		.kernel = column_text(&c[2]),
		.cmdline = column_text(&c[3]),
		.previous = column_text(&c[4]),
		.ending = column_text(&c[5]),
	};
	e->count++;
	return fn ? fn(&boot, e->ctx) : 0;
}

static int row_crash(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_crash *, void *) = e->fn;
	struct bci_store_crash crash;

	if (n < 4)
		return -EPROTO;
	crash = (struct bci_store_crash){
		.boot = (int)column_int(&c[0], -1),
		.source = column_text(&c[1]),
		.name = column_text(&c[2]),
		.path = column_text(&c[3]),
	};
	e->count++;
	return fn ? fn(&crash, e->ctx) : 0;
}

static void result_from_row(const struct bci_store_value *c, struct bci_store_result *result)
{
	*result = (struct bci_store_result){
		.job = (int)column_int(&c[0], -1),
		.name = column_text(&c[1]),
		.result = column_text(&c[2]),
		.duration = column_real(&c[3], -1),
		.dmesg_warnings = (int)column_int(&c[4], 0),
	};
}

static int row_result(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_result *, void *) = e->fn;
	struct bci_store_result result;

	if (n < 5)
		return -EPROTO;
	result_from_row(c, &result);
	e->count++;
	return fn ? fn(&result, e->ctx) : 0;
}

static int row_suspend(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_suspend *, void *) = e->fn;
	struct bci_store_suspend cycle;

	if (n < 9)
		return -EPROTO;
	cycle = (struct bci_store_suspend){
		.cycle = (int)column_int(&c[0], -1),
		.state = column_text(&c[1]),
		.result = column_text(&c[2]),
		.wall = column_real(&c[3], -1),
		.suspended = column_real(&c[4], -1),
		.latency = column_real(&c[5], -1),
		.kernel_suspend = column_real(&c[6], -1),
		.kernel_resume = column_real(&c[7], -1),
		.woke = column_text(&c[8]),
	};
	e->count++;
	return fn ? fn(&cycle, e->ctx) : 0;
}

static int run_each(struct bci_store *store, enum statement id, int64_t run, bci_store_row_fn row,
		    void *fn, void *ctx, char *err, size_t err_size)
{
	struct bci_store_value param = value_int(run);
	struct each e = { fn, ctx, 0 };
	int ret;

	ret = query(store, id, &param, 1, row, &e, err, err_size);
	return ret ? ret : e.count;
}

int bci_store_boots_each(struct bci_store *store, int64_t run,
			 int (*fn)(const struct bci_store_boot *boot, void *ctx), void *ctx,
			 char *err, size_t err_size)
{
	return run_each(store, S_BOOTS, run, row_boot, (void *)fn, ctx, err, err_size);
}

int bci_store_crashes_each(struct bci_store *store, int64_t run,
			   int (*fn)(const struct bci_store_crash *crash, void *ctx), void *ctx,
			   char *err, size_t err_size)
{
	return run_each(store, S_CRASHES, run, row_crash, (void *)fn, ctx, err, err_size);
}

int bci_store_results_each(struct bci_store *store, int64_t run,
			   int (*fn)(const struct bci_store_result *result, void *ctx), void *ctx,
			   char *err, size_t err_size)
{
	return run_each(store, S_RESULTS, run, row_result, (void *)fn, ctx, err, err_size);
}

int bci_store_suspends_each(struct bci_store *store, int64_t run,
			    int (*fn)(const struct bci_store_suspend *cycle, void *ctx), void *ctx,
			    char *err, size_t err_size)
{
	return run_each(store, S_SUSPENDS, run, row_suspend, (void *)fn, ctx, err, err_size);
}

struct result_get {
	int (*fn)(const struct bci_store_run *run, const struct bci_store_result *result, void *ctx);
	void *ctx;
	int count;
};

static int row_run_result(const struct bci_store_value *c, int n, void *ctx)
{
	struct result_get *get = ctx;
	struct bci_store_run run;
	struct bci_store_result result;

	if (n < RUN_COLUMN_COUNT + 5)
		return -EPROTO;
	run_from_row(c, &run);
	result_from_row(c + RUN_COLUMN_COUNT, &result);
	get->count++;
	return get->fn ? get->fn(&run, &result, get->ctx) : 0;
}

int bci_store_result_get(struct bci_store *store, const char *machine, const char *run_id,
			 const char *test,
			 int (*fn)(const struct bci_store_run *run,
				   const struct bci_store_result *result, void *ctx),
			 void *ctx, char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(machine), value_text(run_id), value_text(test) };
	struct result_get get = { fn, ctx, 0 };
	int ret;

	ret = query(store, S_RESULT_GET, params, 3, row_run_result, &get, err, err_size);
	if (ret)
		return ret;
	if (!get.count) {
		snprintf(err, err_size, "machine %s, run '%s': no test '%s' in the store", machine,
			 run_id, test);
		return -ENOENT;
	}
	return 0;
}
