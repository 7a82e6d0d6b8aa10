/* SPDX-License-Identifier: MIT */
/*
 * What a store backend provides (sqlite.c, postgres.c). database.c holds the
 * schema and runs every SQL statement (schedule.c and metrics.c keep their
 * own texts); a backend only runs them: parameters are
 * always bound (never spliced into the text), rows come back as typed
 * values. Statements are written once with '?' placeholders; a backend that
 * numbers them ($1, $2 ...) rewrites the constant text when it prepares it.
 * Each statement has a small integer id so the backend prepares it once per
 * connection and reuses it.
 */
#ifndef BCI_STORE_BACKEND_H
#define BCI_STORE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

enum bci_store_type {
	BCI_STORE_NULL,
	BCI_STORE_INT,
	BCI_STORE_REAL,
	BCI_STORE_TEXT,
};

/* A bound parameter or a column of a row; text is borrowed (valid during the call or callback). */
struct bci_store_value {
	enum bci_store_type type;
	union {
		int64_t i;
		double r;
		const char *s;
	};
};

/*
 * Results go in RESULTS_PER_INSERT rows a statement (database.c's
 * S_RESULTS_ADD_MANY), the rest RESULTS_PER_SMALL_INSERT a statement
 * (S_RESULTS_ADD_SOME), the last few one by one: the most parameters any
 * statement binds is BCI_STORE_MAX_PARAMS.
 */
#define BCI_STORE_RESULT_VALUES 6
#define BCI_STORE_RESULTS_PER_INSERT 512
#define BCI_STORE_RESULTS_PER_SMALL_INSERT 32
#define BCI_STORE_MAX_PARAMS (BCI_STORE_RESULTS_PER_INSERT * BCI_STORE_RESULT_VALUES)

/* Called once per row with @n columns; a non-zero return stops the query and is returned by it. */
typedef int (*bci_store_row_fn)(const struct bci_store_value *columns, int n, void *ctx);

struct bci_store_backend {
	const char *name;
	/* The column definition of a table's generated integer key. */
	const char *id_column;
	/* Opens a transaction that will write (SQLite takes its lock now, not at the first write). */
	const char *begin_sql;
	/* Run after begin_sql for bci_store_begin_relaxed(), or NULL: nothing to relax. */
	const char *relaxed_sql;
	/*
	 * Runs @sql, constant text without parameters (transactions, schema).
	 * Returns 0 or -errno with @err set.
	 */
	int (*exec)(void *db, const char *sql, char *err, size_t err_size);
	/*
	 * Runs statement @id, whose constant text is @sql, with @params; calls
	 * @row (may be NULL) for each result row. Returns 0, the callback's
	 * non-zero return, -EEXIST for a uniqueness violation, or another
	 * -errno with @err set.
	 */
	int (*query)(void *db, int id, const char *sql, const struct bci_store_value *params,
		     int n_params, bci_store_row_fn row, void *ctx, char *err, size_t err_size);
	void (*close)(void *db);
};

/* Each backend's opener: @target is what follows "sqlite:" or the whole PostgreSQL conninfo/URL. */
int bci_store_sqlite_open(const char *path, int n_statements, void **db, char *err, size_t err_size);
int bci_store_postgres_open(const char *conninfo, int n_statements, void **db, char *err, size_t err_size);

extern const struct bci_store_backend bci_store_sqlite_backend;
extern const struct bci_store_backend bci_store_postgres_backend;

#endif
