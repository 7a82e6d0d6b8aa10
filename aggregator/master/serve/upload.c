// SPDX-License-Identifier: MIT
/* serve's uploads (internal.h): per-run exclusion, the body, the workers. */
#include "internal.h"
#include "auth.h"
#include "http.h"
#include "ingest_call.h"
#include "pages.h"
#include "spool.h"
#include "../schedule/serve_hook.h"
#include "../store/refused.h"
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

/* ---- per-run exclusion and the in-flight count ---- */

bool serve_busy_claim(struct bci_server *s, const char *machine, const char *run_id)
{
	struct busy_run *b;
	bool claimed = false;

	pthread_mutex_lock(&s->lock);
	for (b = s->busy; b; b = b->next)
		if (!strcmp(b->machine, machine) && !strcmp(b->run_id, run_id))
			break;
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (b) {
			snprintf(b->machine, sizeof(b->machine), "%s", machine);
			snprintf(b->run_id, sizeof(b->run_id), "%s", run_id);
			b->next = s->busy;
			s->busy = b;
			claimed = true;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return claimed;
}

void serve_busy_release(struct bci_server *s, const char *machine, const char *run_id)
{
	pthread_mutex_lock(&s->lock);
	for (struct busy_run **p = &s->busy; *p; p = &(*p)->next)
		if (!strcmp((*p)->machine, machine) && !strcmp((*p)->run_id, run_id)) {
			struct busy_run *b = *p;

			*p = b->next;
			free(b);
			break;
		}
	pthread_mutex_unlock(&s->lock);
}

bool serve_run_lock(struct bci_server *s, struct request *r)
{
	r->locked = serve_busy_claim(s, r->route.machine, r->route.run_id);
	return r->locked;
}

void serve_run_unlock(struct bci_server *s, struct request *r)
{
	serve_busy_release(s, r->route.machine, r->route.run_id);
	r->locked = false;
}

/* ---- the upload ---- */

static int64_t now_seconds(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec;
}

/* An upload is alive: serve_uploads_silent() waits for it at a stop. */
static void body_seen(struct bci_server *s)
{
	__atomic_store_n(&s->last_body, now_seconds(), __ATOMIC_RELAXED);
}

bool serve_uploads_silent(struct bci_server *s, unsigned seconds)
{
	return !s->jobs && !s->working &&
	       now_seconds() - __atomic_load_n(&s->last_body, __ATOMIC_RELAXED) >= seconds;
}

/* Why an upload is answered 429: the machine's quota in incoming/. */
static const char *quota_message(const struct request *r, uint64_t held, uint64_t needed,
				 char *why, size_t size)
{
	const struct bci_serve_config *c = &r->server->config;

	snprintf(why, size,
		 "try later: machine %s holds %llu bytes of unfinished uploads in incoming/ and"
		 " this one needs %llu, past its quota of %llu; the room comes back as they finish"
		 " or expire (%llu s unwritten)", r->route.machine, (unsigned long long)held,
		 (unsigned long long)needed, (unsigned long long)c->max_incoming,
		 (unsigned long long)c->incoming_max_age);
	return why;
}

/* The headers of a PUT: everything that can be refused before a byte of the body. */
enum MHD_Result serve_upload_begin(struct MHD_Connection *connection, struct request *r)
{
	struct bci_server *s = r->server;
	const char *digest, *range, *length;
	uint64_t start = 0, end, total = UINT64_MAX, content_length = UINT64_MAX, held;
	struct bci_run_status status;
	char why[600];
	bool answered;
	int fd;

	body_seen(s);
	if (serve_authenticate(connection, r, &answered) < 0)
		return answered ? MHD_YES : MHD_NO;
	digest = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, BCI_HTTP_SHA256_HEADER);
	if (!digest)
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
				     "no " BCI_HTTP_SHA256_HEADER " header (the archive's sha256)");
	if (bci_http_sha256(digest, r->sha256, why, sizeof(why)) < 0)
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "%s", why);
	length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
					     MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (length && bci_http_length(length, &content_length) < 0)
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "bad Content-Length");
	range = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
					    MHD_HTTP_HEADER_CONTENT_RANGE);
	if (range) {
		if (bci_http_content_range(range, &start, &end, &total, why, sizeof(why)) < 0)
			return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "%s", why);
		if (content_length != UINT64_MAX && content_length != end - start + 1)
			return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
					     "Content-Length %llu but Content-Range covers %llu bytes",
					     (unsigned long long)content_length,
					     (unsigned long long)(end - start + 1));
		if (end + 1 != total)
			return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
					     "a resumed upload sends the archive to its end (%s)", range);
		r->expected = end - start + 1;
	} else {
		total = content_length;
		r->expected = content_length;
	}
	if (total != UINT64_MAX && total > s->config.max_body)
		return serve_respond_error(connection, r, MHD_HTTP_CONTENT_TOO_LARGE,
				     "an archive of %llu bytes (at most %llu)",
				     (unsigned long long)total, (unsigned long long)s->config.max_body);
	r->total = total;
	r->start = start;

	if (!serve_run_lock(s, r))
		return serve_respond_error(connection, r, MHD_HTTP_SERVICE_UNAVAILABLE,
				     "an upload of %s/%s is already in progress", r->route.machine,
				     r->route.run_id);
	if (bci_spool_status(&s->spool, r->route.machine, r->route.run_id, &status, why,
			     sizeof(why)) < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	if (status.state == BCI_RUN_STORED) {
		if (!strcmp(status.sha256, r->sha256)) {
			snprintf(r->note, sizeof(r->note), "already stored, same digest");
			return serve_respond_status(connection, r, MHD_HTTP_OK, &status, NULL);
		}
		return serve_respond_error(connection, r, MHD_HTTP_CONFLICT,
				     "run %s/%s is stored with sha256 %s, not %s", r->route.machine,
				     r->route.run_id, status.sha256, r->sha256);
	}
	/*
	 * The machine's other unfinished uploads and this one's whole archive
	 * within --max-incoming. Past it, a 429: collect takes it as "try
	 * later", and the room comes back as the others finish or expire.
	 */
	if (total != UINT64_MAX && total > s->config.max_incoming)
		return serve_respond_error(connection, r, MHD_HTTP_CONTENT_TOO_LARGE,
				     "an archive of %llu bytes, more than a machine may hold in"
				     " incoming/ (%llu)", (unsigned long long)total,
				     (unsigned long long)s->config.max_incoming);
	held = bci_spool_incoming_bytes(&s->spool, r->route.machine, r->route.run_id);
	r->room = held < s->config.max_incoming ? s->config.max_incoming - held : 0;
	if (total != UINT64_MAX && total > r->room)
		return serve_respond_error(connection, r, MHD_HTTP_TOO_MANY_REQUESTS, "%s",
					   quota_message(r, held, total, why, sizeof(why)));
	fd = bci_spool_begin(&s->spool, r->route.machine, r->route.run_id, r->sha256, start, why,
			     sizeof(why));
	if (fd == -ERANGE)
		return serve_respond_error(connection, r, MHD_HTTP_RANGE_NOT_SATISFIABLE, "%s", why);
	if (fd < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	r->fd = fd;
	return MHD_YES;
}

enum MHD_Result serve_upload_data(struct MHD_Connection *connection, struct request *r,
				   const char *data, size_t *size)
{
	struct bci_server *s = r->server;
	size_t n = *size;
	int ret;

	(void)connection;
	*size = 0;
	body_seen(s);
	if (serve_elapsed(&r->began) > s->config.request_timeout) {
		/* The bytes so far stay: the client may resume from them. */
		fdatasync(r->fd);
		snprintf(r->note, sizeof(r->note), "the request took more than %u s, closed",
			 s->config.request_timeout);
		r->status = MHD_HTTP_REQUEST_TIMEOUT;
		return MHD_NO;
	}
	if (r->written + n > r->expected || r->start + r->written + n > s->config.max_body ||
	    r->start + r->written + n > r->room) {
		char why[600];

		close(r->fd);
		r->fd = -1;
		bci_spool_discard(&s->spool, r->route.machine, r->route.run_id);
		if (r->start + r->written + n > s->config.max_body)
			return serve_refuse_later(r, MHD_HTTP_CONTENT_TOO_LARGE,
					    "an archive of more than %llu bytes",
					    (unsigned long long)s->config.max_body);
		if (r->start + r->written + n > r->room)
			return serve_refuse_later(r, MHD_HTTP_TOO_MANY_REQUESTS, "%s",
					    quota_message(r, s->config.max_incoming - r->room,
							  r->start + r->written + n, why,
							  sizeof(why)));
		return serve_refuse_later(r, MHD_HTTP_BAD_REQUEST, "more body than announced");
	}
	ret = bci_write_all(r->fd, data, n);
	if (ret < 0) {
		close(r->fd);
		r->fd = -1;
		bci_spool_discard(&s->spool, r->route.machine, r->route.run_id);
		return serve_refuse_later(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot keep the upload: %s",
				    strerror(-ret));
	}
	r->written += n;
	return MHD_YES;
}

/*
 * A refused archive is kept by its machine (collect sends it again at its
 * next boot), and recorded here so that the master shows it (store/refused.h);
 * a record that cannot be written is said in the log, the answer stays 422.
 */
static void refusal_record(struct bci_server *s, struct request *r, uint64_t size, const char *why)
{
	struct bci_refused record = { .size = size, .time = time(NULL) };
	char err[PATH_MAX + 256];

	snprintf(record.machine, sizeof(record.machine), "%s", r->route.machine);
	snprintf(record.run_id, sizeof(record.run_id), "%s", r->route.run_id);
	snprintf(record.sha256, sizeof(record.sha256), "%s", r->sha256);
	snprintf(record.reason, sizeof(record.reason), "%s", why);
	if (bci_refused_add(s->config.data_dir, &record, err, sizeof(err)) < 0)
		fprintf(stderr, "serve: the refusal of %s/%s is not recorded: %s\n", record.machine,
			record.run_id, err);
}

/* The body is complete: verify, validate, keep, ingest, answer. */
static enum MHD_Result upload_end(struct MHD_Connection *connection, struct request *r)
{
	struct bci_server *s = r->server;
	const char *machine = r->route.machine, *run_id = r->route.run_id;
	char part[PATH_MAX], hex[BCI_SHA256_HEX_LEN + 1], why[600];
	struct bci_run_status status;
	uint64_t size;
	int fd, ret;

	r->ended = true;
	if (fsync(r->fd) < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				     "cannot keep the upload: %s", strerror(errno));
	close(r->fd);
	r->fd = -1;
	if (r->expected != UINT64_MAX && r->written != r->expected)
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
				     "the body ended after %llu of %llu bytes",
				     (unsigned long long)r->written, (unsigned long long)r->expected);
	bci_spool_part_path(&s->spool, machine, run_id, part);
	fd = open(part, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || bci_sha256_fd(fd, hex, &size) < 0) {
		ret = errno;
		if (fd >= 0)
			close(fd);
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s: %s", part,
				     strerror(ret));
	}
	if (strcmp(hex, r->sha256)) {
		close(fd);
		bci_spool_discard(&s->spool, machine, run_id);
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
				     "digest mismatch: the %llu bytes received have sha256 %s, "
				     BCI_HTTP_SHA256_HEADER " says %s",
				     (unsigned long long)size, hex, r->sha256);
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		ret = errno;
		close(fd);
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s: %s", part,
				     strerror(ret));
	}
	ret = bci_archive_validate_fd(fd, &s->config.limits, machine, run_id, why, sizeof(why));
	close(fd);
	if (ret < 0) {
		bci_spool_discard(&s->spool, machine, run_id);
		if (ret == -EINVAL) {
			refusal_record(s, r, size, why);
			return serve_respond_error(connection, r, MHD_HTTP_UNPROCESSABLE_CONTENT,
					     "archive refused: %s", why);
		}
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				     "cannot validate the archive: %s", why);
	}
	ret = bci_spool_accept(&s->spool, machine, run_id, r->sha256, size, why, sizeof(why));
	if (ret < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	/* Taken now (a limit raised since): no longer shown as refused. */
	bci_refused_forget(s->config.data_dir, machine, run_id);
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
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	return serve_respond_status(connection, r, MHD_HTTP_CREATED, &status,
			      status.ingested ? NULL : r->note);
}

/* ---- workers ---- */

void *serve_worker_main(void *arg)
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
		s->working++;
		pthread_mutex_unlock(&s->lock);

		r->in_worker = true;
		upload_end(r->connection, r);
		r->in_worker = false;
		MHD_resume_connection(r->connection);
		body_seen(s);

		pthread_mutex_lock(&s->lock);
		s->working--;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/*
 * The body is complete: hands the upload to a worker and suspends the
 * connection until its answer is ready. Once the workers are stopping (the
 * server drains), the polling thread does the work itself.
 */
enum MHD_Result serve_upload_queue(struct MHD_Connection *connection, struct request *r)
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

void serve_workers_stop(struct bci_server *s)
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

