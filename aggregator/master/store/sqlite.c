// SPDX-License-Identifier: MIT
/*
 * The SQLite backend of the store: one database file in WAL mode (readers
 * such as report pages do not block an ingest), foreign keys on, a busy
 * timeout so that two processes on one master wait for each other instead
 * of failing, and synchronous=FULL because a run that serve acknowledged
 * must survive a power cut.
 */
#include "backend.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sqlite_db {
	sqlite3 *db;
	bool writing;		/* holds write_lock for its write transaction */
	int n_statements;
	sqlite3_stmt *statements[];
};

/* How long a writer waits for another process's transaction before giving up. */
#define SQLITE_BUSY_MS 30000

static int sqlite_errno(int code)
{
	switch (code) {
	case SQLITE_CONSTRAINT_UNIQUE:
	case SQLITE_CONSTRAINT_PRIMARYKEY:
		return -EEXIST;
	case SQLITE_CONSTRAINT_FOREIGNKEY:
		return -ENOENT;
	}
	switch (code & 0xff) {
	case SQLITE_CONSTRAINT:
		return -EINVAL;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EBADMSG;
	default:
		return -EIO;
	}
}

/*
 * One write transaction at a time among this process's connections, waited
 * for on a mutex: SQLite's busy handler sleeps in steps of up to 100 ms,
 * long after the other thread's commit, so ingest workers would wait long
 * for each other. Other processes still meet the busy timeout. A thread
 * that holds it already (a second connection of its own) does not wait on
 * itself.
 */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread bool write_lock_mine;

static void write_lock_take(struct sqlite_db *s)
{
	if (write_lock_mine)
		return;
	pthread_mutex_lock(&write_lock);
	write_lock_mine = true;
	s->writing = true;
}

static void write_lock_give(struct sqlite_db *s)
{
	if (!s->writing)
		return;
	s->writing = false;
	write_lock_mine = false;
	pthread_mutex_unlock(&write_lock);
}

static int sqlite_exec(void *handle, const char *sql, char *err, size_t err_size)
{
	struct sqlite_db *s = handle;
	bool begin = !strcmp(sql, bci_store_sqlite_backend.begin_sql);
	char *message = NULL;
	int rc;

	if (begin)
		write_lock_take(s);
	rc = sqlite3_exec(s->db, sql, NULL, NULL, &message);
	/* The transaction is over (or never began): the next writer may go. */
	if ((begin && rc != SQLITE_OK) || (!strcmp(sql, "COMMIT") && rc == SQLITE_OK) ||
	    !strcmp(sql, "ROLLBACK"))
		write_lock_give(s);
	if (rc != SQLITE_OK) {
		snprintf(err, err_size, "sqlite: %s", message ? message : sqlite3_errstr(rc));
		sqlite3_free(message);
		return sqlite_errno(rc);
	}
	return 0;
}

static int bind_params(struct sqlite_db *s, sqlite3_stmt *stmt, const struct bci_store_value *params,
		       int n, char *err, size_t err_size)
{
	for (int i = 0; i < n; i++) {
		int rc;

		switch (params[i].type) {
		case BCI_STORE_INT:
			rc = sqlite3_bind_int64(stmt, i + 1, params[i].i);
			break;
		case BCI_STORE_REAL:
			rc = sqlite3_bind_double(stmt, i + 1, params[i].r);
			break;
		case BCI_STORE_TEXT:
			rc = params[i].s ? sqlite3_bind_text(stmt, i + 1, params[i].s, -1, SQLITE_STATIC)
					 : sqlite3_bind_null(stmt, i + 1);
			break;
		default:
			rc = sqlite3_bind_null(stmt, i + 1);
			break;
		}
		if (rc != SQLITE_OK) {
			snprintf(err, err_size, "sqlite: binding parameter %d: %s", i + 1,
				 sqlite3_errmsg(s->db));
			return sqlite_errno(rc);
		}
	}
	return 0;
}

/* At most this many columns in a row (the widest statement in database.c has 16). */
#define SQLITE_MAX_COLUMNS 24

static int sqlite_query(void *handle, int id, const char *sql, const struct bci_store_value *params,
			int n_params, bci_store_row_fn row, void *ctx, char *err, size_t err_size)
{
	struct sqlite_db *s = handle;
	struct bci_store_value columns[SQLITE_MAX_COLUMNS];
	sqlite3_stmt *stmt;
	int rc, ret = 0;

	if (id < 0 || id >= s->n_statements)
		return -EINVAL;
	stmt = s->statements[id];
	if (!stmt) {
		rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
		if (rc != SQLITE_OK) {
			snprintf(err, err_size, "sqlite: preparing statement %d: %s", id,
				 sqlite3_errmsg(s->db));
			return sqlite_errno(rc);
		}
		s->statements[id] = stmt;
	}
	ret = bind_params(s, stmt, params, n_params, err, err_size);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		int n = sqlite3_column_count(stmt);

		if (!row)
			continue;
		if (n > SQLITE_MAX_COLUMNS) {
			snprintf(err, err_size, "sqlite: statement %d returns %d columns", id, n);
			ret = -E2BIG;
			goto out;
		}
		for (int i = 0; i < n; i++) {
			/*
			 * The column's value read through one call: each
			 * sqlite3_column_*() takes and leaves the connection
			 * (two calls a column otherwise). Its value is
			 * "unprotected", which only matters to a connection
			 * shared by threads at once, and one connection is one
			 * thread's at a time.
			 */
			sqlite3_value *v = sqlite3_column_value(stmt, i);

			switch (sqlite3_value_type(v)) {
			case SQLITE_INTEGER:
				columns[i].type = BCI_STORE_INT;
				columns[i].i = sqlite3_value_int64(v);
				break;
			case SQLITE_FLOAT:
				columns[i].type = BCI_STORE_REAL;
				columns[i].r = sqlite3_value_double(v);
				break;
			case SQLITE_NULL:
				columns[i].type = BCI_STORE_NULL;
				columns[i].s = NULL;
				break;
			default:
				columns[i].type = BCI_STORE_TEXT;
				columns[i].s = (const char *)sqlite3_value_text(v);
				break;
			}
		}
		ret = row(columns, n, ctx);
		if (ret)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, err_size, "sqlite: %s", sqlite3_errmsg(s->db));
		ret = sqlite_errno(rc);
	}
out:
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	return ret;
}

static void sqlite_close(void *handle)
{
	struct sqlite_db *s = handle;

	if (!s)
		return;
	for (int i = 0; i < s->n_statements; i++)
		sqlite3_finalize(s->statements[i]);
	sqlite3_close(s->db);
	write_lock_give(s);
	free(s);
}

int bci_store_sqlite_open(const char *path, int n_statements, void **db, char *err, size_t err_size)
{
	static const char *const setup =
		/*
		 * A new store's pages are 16 KiB (an existing one keeps its
		 * own): an ingest writes many pages per run, each a write of
		 * the log and of the checkpoint, so larger pages are fewer
		 * writes (tests/bench/README.md). Set before WAL mode, which
		 * fixes it.
		 */
		"PRAGMA page_size=16384;"
		"PRAGMA journal_mode=WAL;"
		"PRAGMA synchronous=FULL;"
		"PRAGMA foreign_keys=ON;"
		/*
		 * Statement journals (a statement of many rows inside a
		 * transaction, as ingest's inserts) and sorts in memory, not in
		 * temporary files, which would take a write per row.
		 */
		"PRAGMA temp_store=MEMORY;";
	struct sqlite_db *s;
	int rc, ret;

	s = calloc(1, sizeof(*s) + (size_t)n_statements * sizeof(s->statements[0]));
	if (!s)
		return -ENOMEM;
	s->n_statements = n_statements;
	rc = sqlite3_open_v2(path, &s->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
			     SQLITE_OPEN_EXRESCODE, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, err_size, "sqlite:%s: %s", path,
			 s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		ret = sqlite_errno(rc);
		goto fail;
	}
	sqlite3_busy_timeout(s->db, SQLITE_BUSY_MS);
	/*
	 * The last connection to close does not copy the write-ahead log into
	 * the database (a checkpoint and two fsyncs at the end of every ingest
	 * and report): it is committed already, and the
	 * next writer's automatic checkpoints (at 1000 pages) keep it short.
	 */
	rc = sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, err_size, "sqlite:%s: %s", path, sqlite3_errmsg(s->db));
		ret = sqlite_errno(rc);
		goto fail;
	}
	ret = sqlite_exec(s, setup, err, err_size);
	if (ret < 0)
		goto fail;
	*db = s;
	return 0;
fail:
	sqlite_close(s);
	return ret;
}

const struct bci_store_backend bci_store_sqlite_backend = {
	.name = "sqlite",
	.id_column = "INTEGER PRIMARY KEY",
	.begin_sql = "BEGIN IMMEDIATE",
	.exec = sqlite_exec,
	.query = sqlite_query,
	.close = sqlite_close,
};
