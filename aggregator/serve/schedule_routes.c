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

