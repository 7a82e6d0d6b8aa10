// SPDX-License-Identifier: MIT
/*
 * The PostgreSQL backend of the store, through libpq: one connection, each
 * statement prepared on it once (PQprepare, named bci_<id>) and executed
 * with its values as parameters. Values travel as text; columns come back
 * typed by their OID (integers, floating point, everything else text).
 * Server notices (CREATE ... IF NOT EXISTS says "already exists") are
 * dropped: library code never prints.
 */
#include "backend.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct postgres_db {
	PGconn *conn;
	int n_statements;
	char prepared[];
};

/* Type OIDs (pg_type.h is a server header): int8, int2, int4, float4, float8, numeric. */
enum {
	OID_INT8 = 20,
	OID_INT2 = 21,
	OID_INT4 = 23,
	OID_FLOAT4 = 700,
	OID_FLOAT8 = 701,
	OID_NUMERIC = 1700,
};

/* Parameters formatted on the stack; a statement with more takes them from the heap. */
#define POSTGRES_STACK_PARAMS 192
#define POSTGRES_MAX_COLUMNS 24

static void notice_drop(void *ctx, const char *message)
{
	(void)ctx;
	(void)message;
}

static int result_errno(const PGresult *res, PGconn *conn)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (PQstatus(conn) != CONNECTION_OK)
		return -ECONNRESET;
	if (!state)
		return -EIO;
	if (!strcmp(state, "23505"))	/* unique_violation */
		return -EEXIST;
	if (!strcmp(state, "23503"))	/* foreign_key_violation */
		return -ENOENT;
	if (!strncmp(state, "23", 2))	/* other integrity constraints (check, not null) */
		return -EINVAL;
	if (!strcmp(state, "40001") || !strcmp(state, "40P01"))	/* serialization, deadlock */
		return -EBUSY;
	if (!strcmp(state, "53100"))	/* disk_full */
		return -ENOSPC;
	if (!strncmp(state, "28", 2) || !strcmp(state, "42501"))	/* authorization, privilege */
		return -EACCES;
	return -EIO;
}

/* Sets @err from libpq's message, without its trailing newline. */
static void error_set(char *err, size_t err_size, const char *what, const PGresult *res, PGconn *conn)
{
	const char *message = res ? PQresultErrorMessage(res) : "";
	size_t len;

	if (!message || !*message)
		message = PQerrorMessage(conn);
	len = strcspn(message, "\n");
	snprintf(err, err_size, "postgresql: %s%.*s", what, (int)len, message);
}

static int postgres_exec(void *handle, const char *sql, char *err, size_t err_size)
{
	struct postgres_db *p = handle;
	PGresult *res;
	int ret = 0;

	res = PQexec(p->conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK) {
		error_set(err, err_size, "", res, p->conn);
		ret = result_errno(res, p->conn);
	}
	PQclear(res);
	return ret;
}

/*
 * Rewrites the '?' placeholders of @sql as $1, $2 ... and a numbered one,
 * ?N (one parameter used twice), as $N; database.c's SQL has no '?' in literals.
 */
static char *placeholders_number(const char *sql)
{
	size_t n = 0, len = strlen(sql);
	char *out, *w;
	int next = 1;

	for (const char *c = sql; *c; c++)
		n += *c == '?';
	out = malloc(len + n * 4 + 1);
	if (!out)
		return NULL;
	w = out;
	for (const char *c = sql; *c; c++) {
		if (*c == '?' && c[1] >= '0' && c[1] <= '9')
			*w++ = '$';
		else if (*c == '?')
			w += sprintf(w, "$%d", next++);
		else
			*w++ = *c;
	}
	*w = '\0';
	return out;
}

static int statement_prepare(struct postgres_db *p, int id, const char *name, const char *sql,
			     char *err, size_t err_size)
{
	PGresult *res;
	char *text;
	int ret = 0;

	text = placeholders_number(sql);
	if (!text)
		return -ENOMEM;
	res = PQprepare(p->conn, name, text, 0, NULL);
	free(text);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		char what[64];

		snprintf(what, sizeof(what), "preparing statement %d: ", id);
		error_set(err, err_size, what, res, p->conn);
		ret = result_errno(res, p->conn);
	} else {
		p->prepared[id] = 1;
	}
	PQclear(res);
	return ret;
}

static void column_read(const PGresult *res, int row, int col, struct bci_store_value *v)
{
	const char *text = PQgetvalue(res, row, col);

	if (PQgetisnull(res, row, col)) {
		v->type = BCI_STORE_NULL;
		v->s = NULL;
		return;
	}
	switch (PQftype(res, col)) {
	case OID_INT8:
	case OID_INT2:
	case OID_INT4:
		v->type = BCI_STORE_INT;
		v->i = strtoll(text, NULL, 10);
		break;
	case OID_FLOAT4:
	case OID_FLOAT8:
	case OID_NUMERIC:
		v->type = BCI_STORE_REAL;
		v->r = strtod(text, NULL);
		break;
	default:
		v->type = BCI_STORE_TEXT;
		v->s = text;
		break;
	}
}

static int postgres_query(void *handle, int id, const char *sql, const struct bci_store_value *params,
			  int n_params, bci_store_row_fn row, void *ctx, char *err, size_t err_size)
{
	struct postgres_db *p = handle;
	char stack_buffers[POSTGRES_STACK_PARAMS][32], (*buffers)[32] = stack_buffers;
	const char *stack_values[POSTGRES_STACK_PARAMS], **values = stack_values;
	struct bci_store_value columns[POSTGRES_MAX_COLUMNS];
	char name[32];
	PGresult *res;
	int ret = 0;

	if (id < 0 || id >= p->n_statements || n_params > BCI_STORE_MAX_PARAMS) {
		snprintf(err, err_size, "postgresql: statement %d: %d parameters (at most %d)", id,
			 n_params, BCI_STORE_MAX_PARAMS);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "bci_%d", id);
	if (!p->prepared[id]) {
		ret = statement_prepare(p, id, name, sql, err, err_size);
		if (ret < 0)
			return ret;
	}
	if (n_params > POSTGRES_STACK_PARAMS) {
		buffers = malloc((size_t)n_params * sizeof(*buffers));
		values = malloc((size_t)n_params * sizeof(*values));
		if (!buffers || !values) {
			if (buffers != stack_buffers)
				free(buffers);
			if (values != stack_values)
				free(values);
			snprintf(err, err_size, "postgresql: statement %d: %s", id, strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	for (int i = 0; i < n_params; i++) {
		switch (params[i].type) {
		case BCI_STORE_INT:
			snprintf(buffers[i], sizeof(buffers[i]), "%" PRId64, params[i].i);
			values[i] = buffers[i];
			break;
		case BCI_STORE_REAL:
			/* %.17g round-trips every double. */
			snprintf(buffers[i], sizeof(buffers[i]), "%.17g", params[i].r);
			values[i] = buffers[i];
			break;
		case BCI_STORE_TEXT:
			values[i] = params[i].s;
			break;
		default:
			values[i] = NULL;
			break;
		}
	}
	res = PQexecPrepared(p->conn, name, n_params, values, NULL, NULL, 0);
	if (buffers != stack_buffers) {
		free(buffers);
		free(values);
	}
	switch (PQresultStatus(res)) {
	case PGRES_COMMAND_OK:
		break;
	case PGRES_TUPLES_OK: {
		int rows = PQntuples(res), n = PQnfields(res);

		if (n > POSTGRES_MAX_COLUMNS) {
			snprintf(err, err_size, "postgresql: statement %d returns %d columns", id, n);
			ret = -E2BIG;
			break;
		}
		for (int r = 0; r < rows && row; r++) {
			for (int c = 0; c < n; c++)
				column_read(res, r, c, &columns[c]);
			ret = row(columns, n, ctx);
			if (ret)
				break;
		}
		break;
	}
	default:
		error_set(err, err_size, "", res, p->conn);
		ret = result_errno(res, p->conn);
		break;
	}
	PQclear(res);
	return ret;
}

static void postgres_close(void *handle)
{
	struct postgres_db *p = handle;

	if (!p)
		return;
	PQfinish(p->conn);
	free(p);
}

int bci_store_postgres_open(const char *conninfo, int n_statements, void **db, char *err, size_t err_size)
{
	struct postgres_db *p;
	int ret;

	p = calloc(1, sizeof(*p) + (size_t)n_statements);
	if (!p)
		return -ENOMEM;
	p->n_statements = n_statements;
	p->conn = PQconnectdb(conninfo);
	if (!p->conn) {
		free(p);
		return -ENOMEM;
	}
	if (PQstatus(p->conn) != CONNECTION_OK) {
		error_set(err, err_size, "connecting: ", NULL, p->conn);
		ret = -ECONNREFUSED;
		goto fail;
	}
	PQsetNoticeProcessor(p->conn, notice_drop, NULL);
	if (PQsetClientEncoding(p->conn, "UTF8") != 0) {
		error_set(err, err_size, "client encoding: ", NULL, p->conn);
		ret = -EIO;
		goto fail;
	}
	*db = p;
	return 0;
fail:
	postgres_close(p);
	return ret;
}

const struct bci_store_backend bci_store_postgres_backend = {
	.name = "postgresql",
	.id_column = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
	.begin_sql = "BEGIN",
	.relaxed_sql = "SET LOCAL synchronous_commit TO off",
	.exec = postgres_exec,
	.query = postgres_query,
	.close = postgres_close,
};
