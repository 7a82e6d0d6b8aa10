// SPDX-License-Identifier: MIT
/* libpq, loaded when first called (lazy.h): the PostgreSQL store (store/postgres.c). */
#include "lazy.h"

#include "dlopen_note.h"

#include <libpq-fe.h>

#define SONAME "libpq.so.5"

static struct bci_lazy_lib lib = { .soname = SONAME, .package = "libpq5" };
/* The master's alone: an image that carries the aggregator does without it. */
BCI_DLOPEN_NOTE(dlopen_note, "[{\"soname\":[\"" SONAME "\"],\"feature\":\"postgresql\",\"description\":\"a PostgreSQL store\",\"priority\":\"suggested\"}]");

#define PQ_FUNCTIONS(FN, VOID)                                                              \
	FN(PGconn *, PQconnectdb, (const char *conninfo), (conninfo))                       \
	VOID(PQfinish, (PGconn *conn), (conn))                                               \
	FN(ConnStatusType, PQstatus, (const PGconn *conn), (conn))                          \
	FN(char *, PQerrorMessage, (const PGconn *conn), (conn))                            \
	FN(int, PQsetClientEncoding, (PGconn *conn, const char *encoding), (conn, encoding)) \
	FN(PQnoticeProcessor, PQsetNoticeProcessor,                                         \
	   (PGconn *conn, PQnoticeProcessor proc, void *arg), (conn, proc, arg))            \
	FN(PGresult *, PQexec, (PGconn *conn, const char *query), (conn, query))            \
	FN(PGresult *, PQprepare,                                                           \
	   (PGconn *conn, const char *stmtName, const char *query, int nParams,             \
	    const Oid *paramTypes),                                                         \
	   (conn, stmtName, query, nParams, paramTypes))                                    \
	FN(PGresult *, PQexecPrepared,                                                      \
	   (PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, \
	    const int *paramLengths, const int *paramFormats, int resultFormat),            \
	   (conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat)) \
	FN(ExecStatusType, PQresultStatus, (const PGresult *res), (res))                    \
	FN(char *, PQresultErrorMessage, (const PGresult *res), (res))                      \
	FN(char *, PQresultErrorField, (const PGresult *res, int fieldcode), (res, fieldcode)) \
	FN(int, PQntuples, (const PGresult *res), (res))                                    \
	FN(int, PQnfields, (const PGresult *res), (res))                                    \
	FN(Oid, PQftype, (const PGresult *res, int field_num), (res, field_num))            \
	FN(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num),           \
	   (res, tup_num, field_num))                                                       \
	FN(int, PQgetisnull, (const PGresult *res, int tup_num, int field_num),             \
	   (res, tup_num, field_num))                                                       \
	VOID(PQclear, (PGresult *res), (res))

BCI_LAZY_SHIMS(bci_lazy_pq, PQ_FUNCTIONS);

