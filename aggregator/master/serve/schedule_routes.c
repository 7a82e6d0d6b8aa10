// SPDX-License-Identifier: MIT
/* serve's side of the scheduler's routes (internal.h, ../schedule/serve_hook.h). */
#include "internal.h"
#include "auth.h"
#include "http.h"
#include "ingest_call.h"
#include "pages.h"
#include "spool.h"
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

/* ---- the scheduler's routes (aggregator/schedule/serve_hook.h) ---- */

static enum MHD_Result schedule_respond(struct MHD_Connection *connection, struct request *r,
					struct bci_schedule_answer *answer);

enum MHD_Result serve_schedule_request(struct MHD_Connection *connection, struct request *r,
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
		if (a.status == MHD_HTTP_OK)
			serve_console_served(r->server, url);
	}
	return schedule_respond(connection, r, &a);
}

/* A publish's body, then its answer. */
enum MHD_Result serve_schedule_put_step(struct MHD_Connection *connection, struct request *r,
					 const char *data, size_t *data_size)
{
	struct bci_schedule_answer a;
	int ret;

	if (serve_elapsed(&r->began) > r->server->config.request_timeout) {
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

/* An answer framed around a file (a deploy initrd): head, the file's bytes, tail. */
struct framed {
	char *head, *tail;
	size_t head_len, tail_len;
	int fd;
	uint64_t fd_size;
};

static ssize_t framed_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct framed *f = cls;
	uint64_t total = f->head_len + f->fd_size + f->tail_len;
	size_t n;

	if (pos >= total)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (pos < f->head_len) {
		n = f->head_len - pos < max ? (size_t)(f->head_len - pos) : max;
		memcpy(buf, f->head + pos, n);
		return (ssize_t)n;
	}
	pos -= f->head_len;
	if (pos < f->fd_size) {
		ssize_t got;

		n = f->fd_size - pos < max ? (size_t)(f->fd_size - pos) : max;
		do
			got = pread(f->fd, buf, n, (off_t)pos);
		while (got < 0 && errno == EINTR);
		/* A short object (changed under us) cuts the answer: its length is promised. */
		return got > 0 ? got : MHD_CONTENT_READER_END_WITH_ERROR;
	}
	pos -= f->fd_size;
	n = f->tail_len - pos < max ? (size_t)(f->tail_len - pos) : max;
	memcpy(buf, f->tail + pos, n);
	return (ssize_t)n;
}

static void framed_free(void *cls)
{
	struct framed *f = cls;

	free(f->head);
	free(f->tail);
	close(f->fd);
	free(f);
}

static struct MHD_Response *framed_response(struct bci_schedule_answer *a)
{
	struct framed *f = malloc(sizeof(*f));
	struct MHD_Response *response;

	if (!f)
		return NULL;
	*f = (struct framed){ .head = a->head, .tail = a->tail, .head_len = a->head_len,
			      .tail_len = a->tail_len, .fd = a->fd, .fd_size = a->fd_size };
	response = MHD_create_response_from_callback(a->head_len + a->fd_size + a->tail_len,
						     256 * 1024, framed_read, f, framed_free);
	if (!response) {
		free(f);
		return NULL;
	}
	return response;
}

static enum MHD_Result schedule_respond(struct MHD_Connection *connection, struct request *r,
					struct bci_schedule_answer *answer)
{
	struct bci_schedule_answer a = *answer;
	struct MHD_Response *response;
	enum MHD_Result ret;

	snprintf(r->note, sizeof(r->note), "%s", a.note);
	if (a.fd < 0) {
		ret = serve_respond(connection, r, a.status, a.body ? a.body : "", a.len, a.content_type);
		free(a.body);
		return ret;
	}
	if (a.head || a.tail)
		response = framed_response(&a);	/* owns the fd and the buffers */
	else
		response = MHD_create_response_from_fd64(a.fd_size, a.fd);	/* owns the fd */
	if (!response) {
		close(a.fd);
		free(a.head);
		free(a.tail);
		return MHD_NO;
	}
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, a.content_type);
	ret = MHD_queue_response(connection, (unsigned)a.status, response);
	MHD_destroy_response(response);
	r->status = a.status;
	r->answered = true;
	return ret;
}

