// SPDX-License-Identifier: MIT
/* serve's answers (internal.h): JSON bodies, errors, a run's state; the token check. */
#include "internal.h"
#include "auth.h"
#include "http.h"
#include "ingest_call.h"
#include "pages.h"
#include "spool.h"
#include "../schedule/schedule.h"
#include "../schedule/serve_hook.h"
#include "fsutil.h"
#include "jsonw.h"
#include "message.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double serve_elapsed(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) + (now.tv_nsec - since->tv_nsec) / 1e9;
}

/* ---- responses ---- */

enum MHD_Result serve_respond(struct MHD_Connection *connection, struct request *r, int status,
			       const char *body, size_t len, const char *content_type)
{
	struct MHD_Response *response;
	enum MHD_Result ret;

	response = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!response)
		return MHD_NO;
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(response, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (r->in_worker || (r->first && r->announced > 0 && r->announced <= BODY_DROP_MAX &&
			     status != MHD_HTTP_CONTENT_TOO_LARGE)) {
		r->pending = response;
		r->status = status;
		return MHD_YES;
	}
	ret = MHD_queue_response(connection, (unsigned)status, response);
	MHD_destroy_response(response);
	r->status = status;
	r->answered = true;
	return ret;
}

/* An error answer: {"error": "<message>"}, the message also in the log line. */

int serve_json_begin(struct json_answer *j)
{
	j->body = NULL;
	j->len = 0;
	j->f = open_memstream(&j->body, &j->len);
	if (!j->f)
		return -ENOMEM;
	bci_jsonw_init(&j->w, j->f, 0);
	bci_jsonw_object_begin(&j->w);
	return 0;
}

enum MHD_Result serve_json_respond(struct MHD_Connection *connection, struct request *r,
				    int status, struct json_answer *j)
{
	enum MHD_Result ret;

	bci_jsonw_object_end(&j->w);
	bci_jsonw_finish(&j->w);
	fclose(j->f);
	ret = serve_respond(connection, r, status, j->body, j->len, "application/json");
	free(j->body);
	return ret;
}

enum MHD_Result serve_respond_error(struct MHD_Connection *connection, struct request *r,
				     int status, const char *fmt, ...)
{
	struct json_answer j;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
	if (serve_json_begin(&j) < 0)
		return MHD_NO;
	bci_jsonw_key(&j.w, "error");
	bci_jsonw_string(&j.w, r->note);
	return serve_json_respond(connection, r, status, &j);
}

/*
 * A refusal found in the middle of the body. libmicrohttpd answers only once
 * the body is read, and a connection closed under a client still sending
 * loses the answer with it, so the rest of the body is read and dropped (at
 * most BODY_DROP_MAX bytes, within the request timeout) and the answer goes
 * out at its end.
 */
enum MHD_Result serve_refuse_later(struct request *r, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
	r->refused = status;
	r->status = status;
	return MHD_YES;
}

enum MHD_Result serve_respond_status(struct MHD_Connection *connection, struct request *r,
				      int http_status, const struct bci_run_status *status,
				      const char *ingest_error)
{
	return serve_respond_run(connection, r, http_status, status, ingest_error, NULL);
}

/*
 * A run's state as JSON: what collect reads to decide where to resume.
 * @ingest_error: why an accepted run is not in the store yet, or NULL.
 * @job: the scheduler's job of the run, or NULL: "job": {"state", "boots",
 * "ended", "note"}; "ended" true says the master will not hand the run out
 * again (it ended it at its boot cap): collect uploads what there is.
 */
enum MHD_Result serve_respond_run(struct MHD_Connection *connection, struct request *r,
				  int http_status, const struct bci_run_status *status,
				  const char *ingest_error, const struct bci_schedule_run_job *job)
{
	static const char *const states[] = {
		[BCI_RUN_ABSENT] = "absent", [BCI_RUN_PARTIAL] = "partial", [BCI_RUN_STORED] = "stored",
	};
	struct json_answer j;
	struct bci_jsonw *w = &j.w;

	if (serve_json_begin(&j) < 0)
		return MHD_NO;
	bci_jsonw_key(w, "state");
	bci_jsonw_string(w, states[status->state]);
	bci_jsonw_key(w, "received");
	bci_jsonw_int(w, (long long)status->received);
	if (status->state != BCI_RUN_ABSENT) {
		bci_jsonw_key(w, "sha256");
		bci_jsonw_string(w, status->sha256);
	}
	if (status->state == BCI_RUN_STORED) {
		bci_jsonw_key(w, "size");
		bci_jsonw_int(w, (long long)status->received);
		bci_jsonw_key(w, "ingested");
		bci_jsonw_bool(w, status->ingested);
		if (ingest_error) {
			bci_jsonw_key(w, "ingest_error");
			bci_jsonw_string(w, ingest_error);
		}
	}
	if (job) {
		bci_jsonw_key(w, "job");
		bci_jsonw_object_begin(w);
		bci_jsonw_key(w, "state");
		bci_jsonw_string(w, job->state);
		bci_jsonw_key(w, "boots");
		bci_jsonw_int(w, job->boots);
		bci_jsonw_key(w, "ended");
		bci_jsonw_bool(w, job->ended);
		if (job->note[0]) {
			bci_jsonw_key(w, "note");
			bci_jsonw_string(w, job->note);
		}
		bci_jsonw_object_end(w);
	}
	return serve_json_respond(connection, r, http_status, &j);
}

/* ---- authentication ---- */

/* 0 when the request's token is the URL's machine's; otherwise answers 401/403 and returns -1. */
int serve_authenticate(struct MHD_Connection *connection, struct request *r, bool *answered)
{
	const char *value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
							MHD_HTTP_HEADER_AUTHORIZATION);
	char token[BCI_HTTP_TOKEN_MAX + 1], why[200];
	const char *machine;

	*answered = true;
	if (!value) {
		serve_respond_error(connection, r, MHD_HTTP_UNAUTHORIZED, "no Authorization: Bearer token");
		return -1;
	}
	if (bci_http_bearer(value, token, why, sizeof(why)) < 0) {
		serve_respond_error(connection, r, MHD_HTTP_UNAUTHORIZED, "%s", why);
		return -1;
	}
	machine = r->server->tokens ? bci_tokens_machine(r->server->tokens, token) : NULL;
	explicit_bzero(token, sizeof(token));
	if (!machine) {
		serve_respond_error(connection, r, MHD_HTTP_UNAUTHORIZED, "the token is no machine's");
		return -1;
	}
	if (strcmp(machine, r->route.machine)) {
		serve_respond_error(connection, r, MHD_HTTP_FORBIDDEN,
			      "the token is machine %s's, not %s's: a machine uploads only as itself",
			      machine, r->route.machine);
		return -1;
	}
	*answered = false;
	return 0;
}

