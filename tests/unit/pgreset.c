// SPDX-License-Identifier: MIT
/* A fresh PostgreSQL database for the next unit test (pgreset.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pgreset.h"

#include <libpq-fe.h>

void pg_reset(const char *url)
{
	PGconn *conn = PQconnectdb(url);
	PGresult *res;

	assert_int_equal(PQstatus(conn), CONNECTION_OK);
	res = PQexec(conn, "SET client_min_messages = warning; DROP SCHEMA public CASCADE;"
			   " CREATE SCHEMA public");
	assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
	PQclear(res);
	PQfinish(conn);
}
