// SPDX-License-Identifier: MIT
/* serve's HTTP server (server.h): libmicrohttpd callbacks over http, auth, spool, validate. */
#include "server.h"
#include "auth.h"
#include "http.h"
#include "ingest_call.h"
#include "pages.h"
#include "spool.h"
#include "../schedule/serve_hook.h"
#include "fsutil.h"
#include "jsonw.h"
#include "message.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A run being uploaded: one request at a time per (machine, run). */
struct busy_run {
	struct busy_run *next;
	char machine[BCI_MANIFEST_WORD_MAX + 1];
	char run_id[BCI_MANIFEST_WORD_MAX + 1];
};

struct bci_server {
	struct bci_serve_config config;
	struct bci_spool spool;
	struct bci_tokens *tokens;
	struct bci_ingest_call *ingest;
	struct bci_serve_pages *pages;	/* the read-only pages (pages.h) */
	struct bci_schedule_server *schedule;	/* the scheduler's routes and loop; NULL: off */
	struct MHD_Daemon *daemon;
	char *cert_pem, *key_pem;
	unsigned port;

	pthread_mutex_t lock;		/* busy, in_flight, the log, the job queue */
	pthread_cond_t idle;		/* in_flight reached 0 */
	struct busy_run *busy;
	unsigned in_flight;		/* requests between their headers and their end */

	/*
	 * Workers: a complete upload's checks, keeping and ingest run here, off
	 * the polling threads, its connection suspended meanwhile; so a large
	 * archive never stalls the other connections of a polling thread.
	 */
	pthread_t *workers;
	unsigned worker_count;
	pthread_cond_t job_ready;
	struct request *jobs, *jobs_tail;
	bool workers_stopping;
};

struct request {
	struct bci_server *server;
	struct bci_route route;
	struct timespec began;
	char method[8];
	char url[160];			/* for the log, cut */
	int status;			/* answered, 0 until then */
	char note[1024];		/* why, for the log */
	bool answered;
	bool first;			/* in the call that has the headers only */
	bool in_worker;			/* answers are held for the resumed call */
	bool ended;			/* upload_end ran */
	struct MHD_Connection *connection;	/* while a worker has it */
	struct request *next_job;
	uint64_t announced;		/* a PUT's Content-Length, or UINT64_MAX */
	struct MHD_Response *pending;	/* answer held until the body is read */
	int refused;			/* refused mid-body: the status to answer at its end */
	uint64_t dropped;		/* body bytes dropped since */
	bool counted;			/* in in_flight */
	bool locked;			/* holds its run in busy */
	/* an upload */
	int fd;
	uint64_t start;			/* offset the body goes to */
	uint64_t expected;		/* body bytes announced, or UINT64_MAX */
	uint64_t total;			/* the archive's size when known, or UINT64_MAX */
	uint64_t written;		/* body bytes received */
	char sha256[BCI_SHA256_HEX_LEN + 1];
	struct bci_schedule_put *schedule_put;	/* a publish in progress (serve_hook.h) */
};

void bci_serve_config_default(struct bci_serve_config *config)
{
	memset(config, 0, sizeof(*config));
	config->listen = "127.0.0.1:8080";
	config->threads = 4;
	config->workers = 2;
	config->max_connections = 256;
	config->idle_timeout = 60;
	config->request_timeout = 3600;
	config->max_body = 4ULL << 30;
	bci_archive_limits_default(&config->limits);
	config->log = stderr;
}

static double elapsed(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) + (now.tv_nsec - since->tv_nsec) / 1e9;
}

/*
 * Copies @s for the log with every byte outside printable ASCII (and spaces
 * unless @spaces) as %XX: a URL or an entry name cannot forge a log line.
 */
static void log_safe(char *out, size_t size, const char *s, bool spaces)
{
	size_t o = 0;

	for (; *s && o + 4 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c > 0x20 || (spaces && c == 0x20)) && c < 0x7f && c != '%')
			out[o++] = (char)c;
		else
			o += snprintf(out + o, size - o, "%%%02X", c);
	}
	out[o] = '\0';
}

/* ---- responses ---- */

/*
 * An answer to an upload is sent once its body is read: libmicrohttpd would
 * otherwise close the connection under a client still sending, and the
 * client's TCP stack, reset, drops the answer unread. A body up to this many
 * bytes is read and dropped first; past it, the connection is closed (an
 * answer given before a larger body is still sent first, which a client that
 * waits for "100 Continue" reads).
 */
#define BODY_DROP_MAX (1ULL << 20)

static enum MHD_Result respond(struct MHD_Connection *connection, struct request *r, int status,
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
/*
 * A JSON object answer built in memory: json_begin() opens the object,
 * json_respond() closes it, sends it with @status and frees it.
 */
struct json_answer {
	struct bci_jsonw w;
	FILE *f;
	char *body;
	size_t len;
};

static int json_begin(struct json_answer *j)
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

static enum MHD_Result json_respond(struct MHD_Connection *connection, struct request *r,
				    int status, struct json_answer *j)
{
	enum MHD_Result ret;

	bci_jsonw_object_end(&j->w);
	bci_jsonw_finish(&j->w);
	fclose(j->f);
	ret = respond(connection, r, status, j->body, j->len, "application/json");
	free(j->body);
	return ret;
}

static enum MHD_Result respond_error(struct MHD_Connection *connection, struct request *r,
				     int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum MHD_Result respond_error(struct MHD_Connection *connection, struct request *r,
				     int status, const char *fmt, ...)
{
	struct json_answer j;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
	if (json_begin(&j) < 0)
		return MHD_NO;
	bci_jsonw_key(&j.w, "error");
	bci_jsonw_string(&j.w, r->note);
	return json_respond(connection, r, status, &j);
}

/*
 * A refusal found in the middle of the body. libmicrohttpd answers only once
 * the body is read, and a connection closed under a client still sending
 * loses the answer with it, so the rest of the body is read and dropped (at
 * most BODY_DROP_MAX bytes, within the request timeout) and the answer goes
 * out at its end.
 */
static enum MHD_Result refuse_later(struct request *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum MHD_Result refuse_later(struct request *r, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
	r->refused = status;
	r->status = status;
	return MHD_YES;
}

/*
 * A run's state as JSON: what collect reads to decide where to resume.
 * @ingest_error: why an accepted run is not in the store yet, or NULL.
 */
static enum MHD_Result respond_status(struct MHD_Connection *connection, struct request *r,
				      int http_status, const struct bci_run_status *status,
				      const char *ingest_error)
{
	static const char *const states[] = {
		[BCI_RUN_ABSENT] = "absent", [BCI_RUN_PARTIAL] = "partial", [BCI_RUN_STORED] = "stored",
	};
	struct json_answer j;
	struct bci_jsonw *w = &j.w;

	if (json_begin(&j) < 0)
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
	return json_respond(connection, r, http_status, &j);
}

/* ---- per-run exclusion and the in-flight count ---- */

static bool run_lock(struct bci_server *s, struct request *r)
{
	struct busy_run *b;

	pthread_mutex_lock(&s->lock);
	for (b = s->busy; b; b = b->next)
		if (!strcmp(b->machine, r->route.machine) && !strcmp(b->run_id, r->route.run_id))
			break;
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (b) {
			strcpy(b->machine, r->route.machine);
			strcpy(b->run_id, r->route.run_id);
			b->next = s->busy;
			s->busy = b;
			r->locked = true;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return r->locked;
}

static void run_unlock(struct bci_server *s, struct request *r)
{
	pthread_mutex_lock(&s->lock);
	for (struct busy_run **p = &s->busy; *p; p = &(*p)->next)
		if (!strcmp((*p)->machine, r->route.machine) && !strcmp((*p)->run_id, r->route.run_id)) {
			struct busy_run *b = *p;

			*p = b->next;
			free(b);
			break;
		}
	pthread_mutex_unlock(&s->lock);
	r->locked = false;
}

/* ---- authentication ---- */

/* 0 when the request's token is the URL's machine's; otherwise answers 401/403 and returns -1. */
static int authenticate(struct MHD_Connection *connection, struct request *r, bool *answered)
{
	const char *value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
							MHD_HTTP_HEADER_AUTHORIZATION);
	char token[BCI_HTTP_TOKEN_MAX + 1], why[200];
	const char *machine;

	*answered = true;
	if (!value) {
		respond_error(connection, r, MHD_HTTP_UNAUTHORIZED, "no Authorization: Bearer token");
		return -1;
	}
	if (bci_http_bearer(value, token, why, sizeof(why)) < 0) {
		respond_error(connection, r, MHD_HTTP_UNAUTHORIZED, "%s", why);
		return -1;
	}
	machine = r->server->tokens ? bci_tokens_machine(r->server->tokens, token) : NULL;
	explicit_bzero(token, sizeof(token));
	if (!machine) {
		respond_error(connection, r, MHD_HTTP_UNAUTHORIZED, "the token is no machine's");
		return -1;
	}
	if (strcmp(machine, r->route.machine)) {
		respond_error(connection, r, MHD_HTTP_FORBIDDEN,
			      "the token is machine %s's, not %s's: a machine uploads only as itself",
			      machine, r->route.machine);
		return -1;
	}
	*answered = false;
	return 0;
}

/* ---- the upload ---- */

/* The headers of a PUT: everything that can be refused before a byte of the body. */
static enum MHD_Result upload_begin(struct MHD_Connection *connection, struct request *r)
{
	struct bci_server *s = r->server;
	const char *digest, *range, *length;
	uint64_t start = 0, end, total = UINT64_MAX, content_length = UINT64_MAX;
	struct bci_run_status status;
	char why[300];
	bool answered;
	int fd;

	if (authenticate(connection, r, &answered) < 0)
		return answered ? MHD_YES : MHD_NO;
	digest = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, BCI_HTTP_SHA256_HEADER);
	if (!digest)
		return respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
				     "no " BCI_HTTP_SHA256_HEADER " header (the archive's sha256)");
	if (bci_http_sha256(digest, r->sha256, why, sizeof(why)) < 0)
		return respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "%s", why);
	length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
					     MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (length && bci_http_length(length, &content_length) < 0)
		return respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "bad Content-Length");
	range = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
					    MHD_HTTP_HEADER_CONTENT_RANGE);
	if (range) {
		if (bci_http_content_range(range, &start, &end, &total, why, sizeof(why)) < 0)
			return respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "%s", why);
		if (content_length != UINT64_MAX && content_length != end - start + 1)
			return respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
					     "Content-Length %llu but Content-Range covers %llu bytes",
					     (unsigned long long)content_length,
					     (unsigned long long)(end - start + 1));
		if (end + 1 != total)
			return respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
					     "a resumed upload sends the archive to its end (%s)", range);
		r->expected = end - start + 1;
	} else {
		total = content_length;
		r->expected = content_length;
	}
	if (total != UINT64_MAX && total > s->config.max_body)
		return respond_error(connection, r, MHD_HTTP_CONTENT_TOO_LARGE,
				     "an archive of %llu bytes (at most %llu)",
				     (unsigned long long)total, (unsigned long long)s->config.max_body);
	r->total = total;
	r->start = start;

	if (!run_lock(s, r))
		return respond_error(connection, r, MHD_HTTP_SERVICE_UNAVAILABLE,
				     "an upload of %s/%s is already in progress", r->route.machine,
				     r->route.run_id);
	if (bci_spool_status(&s->spool, r->route.machine, r->route.run_id, &status, why,
			     sizeof(why)) < 0)
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	if (status.state == BCI_RUN_STORED) {
		if (!strcmp(status.sha256, r->sha256)) {
			snprintf(r->note, sizeof(r->note), "already stored, same digest");
			return respond_status(connection, r, MHD_HTTP_OK, &status, NULL);
		}
		return respond_error(connection, r, MHD_HTTP_CONFLICT,
				     "run %s/%s is stored with sha256 %s, not %s", r->route.machine,
				     r->route.run_id, status.sha256, r->sha256);
	}
	fd = bci_spool_begin(&s->spool, r->route.machine, r->route.run_id, r->sha256, start, why,
			     sizeof(why));
	if (fd == -ERANGE)
		return respond_error(connection, r, MHD_HTTP_RANGE_NOT_SATISFIABLE, "%s", why);
	if (fd < 0)
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	r->fd = fd;
	return MHD_YES;
}

static enum MHD_Result upload_data(struct MHD_Connection *connection, struct request *r,
				   const char *data, size_t *size)
{
	struct bci_server *s = r->server;
	size_t n = *size;
	int ret;

	(void)connection;
	*size = 0;
	if (elapsed(&r->began) > s->config.request_timeout) {
		/* The bytes so far stay: the client may resume from them. */
		fdatasync(r->fd);
		snprintf(r->note, sizeof(r->note), "the request took more than %u s, closed",
			 s->config.request_timeout);
		r->status = MHD_HTTP_REQUEST_TIMEOUT;
		return MHD_NO;
	}
	if (r->written + n > r->expected || r->start + r->written + n > s->config.max_body) {
		close(r->fd);
		r->fd = -1;
		bci_spool_discard(&s->spool, r->route.machine, r->route.run_id);
		if (r->start + r->written + n > s->config.max_body)
			return refuse_later(r, MHD_HTTP_CONTENT_TOO_LARGE,
					    "an archive of more than %llu bytes",
					    (unsigned long long)s->config.max_body);
		return refuse_later(r, MHD_HTTP_BAD_REQUEST, "more body than announced");
	}
	ret = bci_write_all(r->fd, data, n);
	if (ret < 0) {
		close(r->fd);
		r->fd = -1;
		bci_spool_discard(&s->spool, r->route.machine, r->route.run_id);
		return refuse_later(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot keep the upload: %s",
				    strerror(-ret));
	}
	r->written += n;
	return MHD_YES;
}

/* The body is complete: verify, validate, keep, ingest, answer. */
static enum MHD_Result upload_end(struct MHD_Connection *connection, struct request *r)
{
	struct bci_server *s = r->server;
	const char *machine = r->route.machine, *run_id = r->route.run_id;
	char part[PATH_MAX], hex[BCI_SHA256_HEX_LEN + 1], why[600];
	struct bci_manifest *manifest = NULL;
	struct bci_run_status status;
	uint64_t size;
	int fd, ret;

	r->ended = true;
	if (fsync(r->fd) < 0)
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				     "cannot keep the upload: %s", strerror(errno));
	close(r->fd);
	r->fd = -1;
	if (r->expected != UINT64_MAX && r->written != r->expected)
		return respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
				     "the body ended after %llu of %llu bytes",
				     (unsigned long long)r->written, (unsigned long long)r->expected);
	bci_spool_part_path(&s->spool, machine, run_id, part);
	fd = open(part, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || bci_sha256_fd(fd, hex, &size) < 0) {
		ret = errno;
		if (fd >= 0)
			close(fd);
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s: %s", part,
				     strerror(ret));
	}
	if (strcmp(hex, r->sha256)) {
		close(fd);
		bci_spool_discard(&s->spool, machine, run_id);
		return respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
				     "digest mismatch: the %llu bytes received have sha256 %s, "
				     BCI_HTTP_SHA256_HEADER " says %s",
				     (unsigned long long)size, hex, r->sha256);
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		ret = errno;
		close(fd);
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s: %s", part,
				     strerror(ret));
	}
	ret = bci_archive_validate_fd(fd, size, &s->config.limits, machine, run_id, &manifest, why,
				      sizeof(why));
	close(fd);
	if (ret < 0) {
		bci_spool_discard(&s->spool, machine, run_id);
		if (ret == -EINVAL)
			return respond_error(connection, r, MHD_HTTP_UNPROCESSABLE_CONTENT,
					     "archive refused: %s", why);
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				     "cannot validate the archive: %s", strerror(-ret));
	}
	bci_manifest_free(manifest);
	ret = bci_spool_accept(&s->spool, machine, run_id, r->sha256, size, why, sizeof(why));
	if (ret < 0)
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	/*
	 * Acknowledged from here on: the archive and its record are durable, so
	 * the client may delete its copy. An ingest that fails (a store down, an
	 * archive that is no results directory) leaves the run kept and not
	 * ingested: retried at every start, or by `bootci-aggregator ingest`.
	 */
	ret = bci_ingest_call_run(s->ingest, &s->spool, machine, run_id, r->sha256, why, sizeof(why));
	if (ret < 0)
		snprintf(r->note, sizeof(r->note), "kept, not ingested (retried at restart): %s", why);
	else
		snprintf(r->note, sizeof(r->note), "stored and ingested, %llu bytes",
			 (unsigned long long)size);
	if (bci_spool_status(&s->spool, machine, run_id, &status, why, sizeof(why)) < 0)
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	return respond_status(connection, r, MHD_HTTP_CREATED, &status,
			      status.ingested ? NULL : r->note);
}

/* ---- GETs ---- */

static enum MHD_Result get_run(struct MHD_Connection *connection, struct request *r)
{
	struct bci_run_status status;
	char why[300];
	bool answered;

	if (authenticate(connection, r, &answered) < 0)
		return answered ? MHD_YES : MHD_NO;
	if (bci_spool_status(&r->server->spool, r->route.machine, r->route.run_id, &status, why,
			     sizeof(why)) < 0)
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	snprintf(r->note, sizeof(r->note), "%s, %llu bytes",
		 status.state == BCI_RUN_STORED ? "stored" :
		 status.state == BCI_RUN_PARTIAL ? "partial" : "absent",
		 (unsigned long long)status.received);
	return respond_status(connection, r,
			      status.state == BCI_RUN_ABSENT ? MHD_HTTP_NOT_FOUND : MHD_HTTP_OK,
			      &status, NULL);
}

static enum MHD_Result get_result(struct MHD_Connection *connection, struct request *r)
{
	struct MHD_Response *response;
	enum MHD_Result ret;
	char why[300];
	struct stat st;
	int fd;

	fd = bci_ingest_call_log_open(r->server->ingest, r->route.machine, r->route.run_id,
				      r->route.test, r->route.stream, why, sizeof(why));
	if (fd == -ENOENT)
		return respond_error(connection, r, MHD_HTTP_NOT_FOUND, "%s", why);
	if (fd < 0)
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s",
				     strerror(errno));
	}
	/* The response owns @fd from here. */
	response = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
	if (!response) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	ret = MHD_queue_response(connection, MHD_HTTP_OK, response);
	MHD_destroy_response(response);
	snprintf(r->note, sizeof(r->note), "%lld bytes", (long long)st.st_size);
	r->status = MHD_HTTP_OK;
	r->answered = true;
	return ret;
}

/* A page (pages.h): rendered from the store, or from its cache. */
static enum MHD_Result get_page(struct MHD_Connection *connection, struct request *r,
				const char *url, const char *method)
{
	struct bci_page_answer a;
	enum MHD_Result ret;

	bci_serve_pages_answer(r->server->pages, method, url,
			       MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "from"),
			       MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "to"), &a);
	if (!a.body)
		return MHD_NO;
	snprintf(r->note, sizeof(r->note), "%s", a.note);
	ret = respond(connection, r, a.status, a.body, a.len, a.content_type);
	free(a.body);
	return ret;
}

/* ---- workers ---- */

static void *worker_main(void *arg)
{
	struct bci_server *s = arg;
	struct request *r;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->jobs && !s->workers_stopping)
			pthread_cond_wait(&s->job_ready, &s->lock);
		r = s->jobs;
		if (!r)
			break;		/* stopping, and nothing left to do */
		s->jobs = r->next_job;
		if (!s->jobs)
			s->jobs_tail = NULL;
		pthread_mutex_unlock(&s->lock);

		r->in_worker = true;
		upload_end(r->connection, r);
		r->in_worker = false;
		MHD_resume_connection(r->connection);

		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/*
 * The body is complete: hands the upload to a worker and suspends the
 * connection until its answer is ready. Once the workers are stopping (the
 * server drains), the polling thread does the work itself.
 */
static enum MHD_Result upload_queue(struct MHD_Connection *connection, struct request *r)
{
	struct bci_server *s = r->server;

	pthread_mutex_lock(&s->lock);
	if (s->workers_stopping || !s->worker_count) {
		pthread_mutex_unlock(&s->lock);
		return upload_end(connection, r);
	}
	r->connection = connection;
	r->next_job = NULL;
	/* Suspended before a worker can see it, so its resume never comes first. */
	MHD_suspend_connection(connection);
	if (s->jobs_tail)
		s->jobs_tail->next_job = r;
	else
		s->jobs = r;
	s->jobs_tail = r;
	pthread_cond_signal(&s->job_ready);
	pthread_mutex_unlock(&s->lock);
	return MHD_YES;
}

static void workers_stop(struct bci_server *s)
{
	pthread_mutex_lock(&s->lock);
	s->workers_stopping = true;
	pthread_cond_broadcast(&s->job_ready);
	pthread_mutex_unlock(&s->lock);
	/* Each finishes the queue first: every suspended connection is resumed. */
	for (unsigned i = 0; i < s->worker_count; i++)
		pthread_join(s->workers[i], NULL);
	s->worker_count = 0;
}

/* ---- the scheduler's routes (aggregator/schedule/serve_hook.h) ---- */

static enum MHD_Result schedule_respond(struct MHD_Connection *connection, struct request *r,
					struct bci_schedule_answer *answer);

static enum MHD_Result schedule_request(struct MHD_Connection *connection, struct request *r,
					const char *url, const char *method)
{
	const char *host = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_HOST);
	struct bci_schedule_answer a;

	if (!strcmp(method, "PUT")) {
		int begun = bci_schedule_put_begin(
			r->server->schedule, url,
			MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION),
			MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
						    BCI_HTTP_SHA256_HEADER),
			&r->schedule_put, &a);

		if (begun <= 0)
			return begun == 0 ? MHD_YES : MHD_NO;
	} else {
		bci_schedule_http_answer(r->server->schedule, method, url, host,
					 r->server->config.cert, &a);
	}
	return schedule_respond(connection, r, &a);
}

/* A publish's body, then its answer. */
static enum MHD_Result schedule_put_step(struct MHD_Connection *connection, struct request *r,
					 const char *data, size_t *data_size)
{
	struct bci_schedule_answer a;
	int ret;

	if (elapsed(&r->began) > r->server->config.request_timeout) {
		snprintf(r->note, sizeof(r->note), "the request took more than %u s, closed",
			 r->server->config.request_timeout);
		r->status = MHD_HTTP_REQUEST_TIMEOUT;
		return MHD_NO;
	}
	if (*data_size) {
		ret = bci_schedule_put_data(r->schedule_put, data, *data_size, &a);
		r->written += *data_size;
		*data_size = 0;
		if (ret < 0)
			return MHD_NO;
		return ret == 0 ? MHD_YES : schedule_respond(connection, r, &a);
	}
	bci_schedule_put_end(r->server->schedule, r->schedule_put, &a);
	return schedule_respond(connection, r, &a);
}

static enum MHD_Result schedule_respond(struct MHD_Connection *connection, struct request *r,
					struct bci_schedule_answer *answer)
{
	struct bci_schedule_answer a = *answer;
	struct MHD_Response *response;
	enum MHD_Result ret;

	snprintf(r->note, sizeof(r->note), "%s", a.note);
	if (a.fd < 0) {
		ret = respond(connection, r, a.status, a.body ? a.body : "", a.len, a.content_type);
		free(a.body);
		return ret;
	}
	response = MHD_create_response_from_fd64(a.fd_size, a.fd);	/* owns the fd */
	if (!response) {
		close(a.fd);
		return MHD_NO;
	}
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, a.content_type);
	ret = MHD_queue_response(connection, (unsigned)a.status, response);
	MHD_destroy_response(response);
	r->status = a.status;
	r->answered = true;
	return ret;
}

/* ---- libmicrohttpd callbacks ---- */

static enum MHD_Result first_call(struct MHD_Connection *connection, struct request *r,
				  const char *url, const char *method)
{
	struct bci_server *s = r->server;
	char why[300];
	int status;

	if (bci_schedule_http_owns(url))
		return schedule_request(connection, r, url, method);
	if (bci_serve_pages_owns(url))
		return get_page(connection, r, url, method);
	status = bci_http_route(method, url, &r->route, why, sizeof(why));
	if (status)
		return respond_error(connection, r, status, "%s", why);
	switch (r->route.kind) {
	case BCI_ROUTE_HEALTH:
		snprintf(r->note, sizeof(r->note), "health");
		return respond(connection, r, MHD_HTTP_OK, "{\"status\": \"ok\"}\n", 17,
			       "application/json");
	case BCI_ROUTE_RESULT:
		return get_result(connection, r);
	case BCI_ROUTE_RUN:
		if (!r->route.put)
			return get_run(connection, r);
		pthread_mutex_lock(&s->lock);
		s->in_flight++;
		pthread_mutex_unlock(&s->lock);
		r->counted = true;
		return upload_begin(connection, r);
	}
	return MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *connection, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **context)
{
	struct request *r = *context;
	enum MHD_Result ret;

	(void)version;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		r->server = cls;
		r->fd = -1;
		r->expected = UINT64_MAX;
		r->total = UINT64_MAX;
		clock_gettime(CLOCK_MONOTONIC, &r->began);
		snprintf(r->method, sizeof(r->method), "%s", method);
		log_safe(r->url, sizeof(r->url), url, false);
		*context = r;
		r->announced = UINT64_MAX;
		if (!strcmp(method, "PUT")) {
			const char *length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
									 MHD_HTTP_HEADER_CONTENT_LENGTH);

			if (length && bci_http_length(length, &r->announced) < 0)
				r->announced = UINT64_MAX;
		}
		r->first = true;
		ret = first_call(connection, r, url, method);
		r->first = false;
		return ret;
	}
	if (r->pending) {
		if (*data_size) {
			r->dropped += *data_size;
			*data_size = 0;
			return r->dropped > BODY_DROP_MAX ? MHD_NO : MHD_YES;
		}
		ret = MHD_queue_response(connection, (unsigned)r->status, r->pending);
		MHD_destroy_response(r->pending);
		r->pending = NULL;
		r->answered = true;
		return ret;
	}
	if (r->ended && !r->answered)
		return MHD_NO;		/* a worker could not even make an answer */
	if (r->answered) {
		/* Answered before the body was read: the rest is dropped with the connection. */
		*data_size = 0;
		return MHD_YES;
	}
	if (r->schedule_put)
		return schedule_put_step(connection, r, data, data_size);
	if (r->refused) {
		if (!*data_size) {
			char note[sizeof(r->note)];

			memcpy(note, r->note, sizeof(note));
			return respond_error(connection, r, r->refused, "%s", note);
		}
		r->dropped += *data_size;
		*data_size = 0;
		if (r->dropped > BODY_DROP_MAX ||
		    elapsed(&r->began) > r->server->config.request_timeout)
			return MHD_NO;
		return MHD_YES;
	}
	if (*data_size)
		return upload_data(connection, r, data, data_size);
	if (r->route.kind == BCI_ROUTE_RUN && r->route.put && !r->ended)
		return upload_queue(connection, r);
	return MHD_NO;
}

static void log_request(struct bci_server *s, struct MHD_Connection *connection,
			const struct request *r, enum MHD_RequestTerminationCode how)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char address[INET6_ADDRSTRLEN] = "?", status[8], note[sizeof(r->note) * 3];
	static const char *const endings[] = {
		[MHD_REQUEST_TERMINATED_COMPLETED_OK] = "",
		[MHD_REQUEST_TERMINATED_WITH_ERROR] = " (connection error)",
		[MHD_REQUEST_TERMINATED_TIMEOUT_REACHED] = " (idle timeout: connection closed)",
		[MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN] = " (server stopping)",
		[MHD_REQUEST_TERMINATED_READ_ERROR] = " (client went away)",
		[MHD_REQUEST_TERMINATED_CLIENT_ABORT] = " (client aborted)",
	};

	if (info && info->client_addr) {
		const struct sockaddr *sa = info->client_addr;

		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, address,
				  sizeof(address));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, address,
				  sizeof(address));
	}
	if (r->status)
		snprintf(status, sizeof(status), "%d", r->status);
	else
		snprintf(status, sizeof(status), "-");
	log_safe(note, sizeof(note), r->note, true);
	pthread_mutex_lock(&s->lock);
	fprintf(s->config.log, "serve: %s %s %s %s in=%llu %.3fs %s%s\n", address, r->method, r->url,
		status, (unsigned long long)r->written, elapsed(&r->began), note,
		(unsigned)how < sizeof(endings) / sizeof(endings[0]) ? endings[how] : "");
	fflush(s->config.log);
	pthread_mutex_unlock(&s->lock);
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **context,
			 enum MHD_RequestTerminationCode how)
{
	struct bci_server *s = cls;
	struct request *r = *context;

	if (!r)
		return;
	if (r->fd >= 0) {
		/* Cut short: what arrived stays for a resume, and durably so, since GET reports it. */
		fdatasync(r->fd);
		close(r->fd);
		if (!r->note[0])
			snprintf(r->note, sizeof(r->note), "cut after %llu bytes, kept for a resume",
				 (unsigned long long)(r->start + r->written));
	}
	bci_schedule_put_free(r->schedule_put);
	log_request(s, connection, r, how);
	if (r->pending)
		MHD_destroy_response(r->pending);
	if (r->locked)
		run_unlock(s, r);
	if (r->counted) {
		pthread_mutex_lock(&s->lock);
		if (--s->in_flight == 0)
			pthread_cond_broadcast(&s->idle);
		pthread_mutex_unlock(&s->lock);
	}
	free(r);
	*context = NULL;
}

/* ---- start and stop ---- */

static int parse_listen(const char *listen, struct sockaddr_storage *addr, bool *ipv6, char *err,
			size_t err_size)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *h = listen;
	uint64_t port;
	size_t len;

	memset(addr, 0, sizeof(*addr));
	if (*h == '[') {
		colon = strstr(h, "]:");
		h++;
		len = colon ? (size_t)(colon - h) : 0;
		colon = colon ? colon + 1 : NULL;
	} else {
		colon = strrchr(h, ':');
		len = colon ? (size_t)(colon - h) : 0;
	}
	if (!colon || len == 0 || len >= sizeof(host) || bci_http_length(colon + 1, &port) < 0 ||
	    port > 65535) {
		bci_message(err, err_size, "--listen '%s': expected ADDR:PORT or [ADDR6]:PORT", listen);
		return -EINVAL;
	}
	memcpy(host, h, len);
	host[len] = '\0';
	*ipv6 = false;
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)addr)->sin_addr) == 1) {
		((struct sockaddr_in *)addr)->sin_family = AF_INET;
		((struct sockaddr_in *)addr)->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)addr)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)addr)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)addr)->sin6_port = htons((uint16_t)port);
		*ipv6 = true;
		return 0;
	}
	bci_message(err, err_size, "--listen '%s': '%s' is not an IP address", listen, host);
	return -EINVAL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct bci_server *s = cls;

	pthread_mutex_lock(&s->lock);
	fprintf(s->config.log, "serve: libmicrohttpd: ");
	vfprintf(s->config.log, fmt, ap);
	fflush(s->config.log);
	pthread_mutex_unlock(&s->lock);
}

static void server_free(struct bci_server *s)
{
	workers_stop(s);
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	free(s->workers);
	bci_schedule_server_stop(s->schedule);
	bci_serve_pages_free(s->pages);
	bci_ingest_call_free(s->ingest);
	bci_tokens_free(s->tokens);
	free(s->cert_pem);
	if (s->key_pem)
		explicit_bzero(s->key_pem, strlen(s->key_pem));
	free(s->key_pem);
	while (s->busy) {
		struct busy_run *b = s->busy;

		s->busy = b->next;
		free(b);
	}
	pthread_cond_destroy(&s->job_ready);
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Ingests what an earlier serve accepted and did not get to ingest. */
static int recover_one(void *ctx, const char *machine, const char *run_id,
		       const struct bci_run_status *status)
{
	struct bci_server *s = ctx;
	char why[600];

	if (bci_ingest_call_run(s->ingest, &s->spool, machine, run_id, status->sha256, why,
				sizeof(why)) < 0)
		fprintf(s->config.log, "serve: %s/%s: still not ingested: %s\n", machine, run_id, why);
	else
		fprintf(s->config.log, "serve: %s/%s: ingested (accepted before a restart)\n", machine,
			run_id);
	return 0;
}

int bci_server_start(const struct bci_serve_config *config, struct bci_server **out, char *err,
		     size_t err_size)
{
	struct bci_server *s = calloc(1, sizeof(*s));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC |
			 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem options[16];
	const union MHD_DaemonInfo *info;
	struct sockaddr_storage addr;
	size_t n = 0, len;
	bool ipv6;
	int ret;

	if (!s)
		return -ENOMEM;
	s->config = *config;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	pthread_cond_init(&s->job_ready, NULL);
	if ((ret = parse_listen(config->listen, &addr, &ipv6, err, err_size)) < 0 ||
	    (ret = bci_spool_open(&s->spool, config->data_dir, err, err_size)) < 0 ||
	    (config->tokens && (ret = bci_tokens_load(config->tokens, &s->tokens, err, err_size)) < 0) ||
	    (ret = bci_ingest_call_open(config->store_url, config->data_dir, config->workers,
					&s->ingest, err, err_size)) < 0)
		goto fail;
	if ((ret = bci_serve_pages_new(s->ingest, &s->pages)) < 0) {
		snprintf(err, err_size, "pages: %s", strerror(-ret));
		goto fail;
	}
	if ((ret = bci_schedule_server_start(config->data_dir, config->store_url, config->log,
					     &s->schedule, err, err_size)) < 0)
		goto fail;
	if (!config->cert != !config->key) {
		bci_message(err, err_size, "--cert and --key go together");
		ret = -EINVAL;
		goto fail;
	}
	/* The logger first, so that what the later options say goes through it. */
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, s };
	if (config->cert) {
		if ((ret = bci_read_file(config->cert, &s->cert_pem, &len, 1 << 20)) < 0) {
			bci_message(err, err_size, "%s: %s", config->cert, strerror(-ret));
			goto fail;
		}
		if ((ret = bci_read_file(config->key, &s->key_pem, &len, 1 << 20)) < 0) {
			bci_message(err, err_size, "%s: %s", config->key, strerror(-ret));
			goto fail;
		}
		flags |= MHD_USE_TLS;
		options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, s->cert_pem };
		options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, s->key_pem };
	}
	if (ipv6)
		flags |= MHD_USE_IPv6;
	bci_spool_each_pending(&s->spool, recover_one, s, err, err_size);
	s->workers = calloc(config->workers ? config->workers : 1, sizeof(*s->workers));
	if (!s->workers) {
		ret = -ENOMEM;
		goto fail;
	}
	for (; s->worker_count < config->workers; s->worker_count++)
		if ((ret = -pthread_create(&s->workers[s->worker_count], NULL, worker_main, s)) < 0) {
			bci_message(err, err_size, "cannot start a worker: %s", strerror(-ret));
			goto fail;
		}

	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &addr };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, config->threads, NULL };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, config->max_connections, NULL };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, config->idle_timeout, NULL };
	if (config->max_per_ip)
		options[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
							config->max_per_ip, NULL };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, 128 * 1024, NULL };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s };
	options[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, options,
				     MHD_OPTION_END);
	if (!s->daemon) {
		bci_message(err, err_size, "cannot listen on %s (in use, or a bad certificate or key?)",
			    config->listen);
		ret = -EADDRNOTAVAIL;
		goto fail;
	}
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	*out = s;
	return 0;
fail:
	server_free(s);
	return ret;
}

unsigned bci_server_port(const struct bci_server *server)
{
	return server->port;
}

void bci_server_stop(struct bci_server *s)
{
	struct timespec deadline;
	MHD_socket listener;

	listener = MHD_quiesce_daemon(s->daemon);
	if (listener != MHD_INVALID_SOCKET)
		close(listener);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += s->config.request_timeout + 1;
	pthread_mutex_lock(&s->lock);
	if (s->in_flight)
		fprintf(s->config.log, "serve: stopping: %u upload(s) in flight, finishing them\n",
			s->in_flight);
	while (s->in_flight && pthread_cond_timedwait(&s->idle, &s->lock, &deadline) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&s->lock);
	server_free(s);
}
