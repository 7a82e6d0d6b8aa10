// SPDX-License-Identifier: MIT
/* serve's GETs (internal.h): a run's state, a test's log, the pages. */
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
#include "manifest.h"
#include "run_archive.h"

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

/* ---- GETs ---- */

struct run_asked {
	const char *machine, *run_id;
	struct bci_schedule_run_job job;
	char err[300];
};

static int run_asked(struct bci_store *store, const char *data_dir, void *ctx)
{
	struct run_asked *a = ctx;

	(void)data_dir;
	return bci_schedule_run_asked(store, a->machine, a->run_id, (double)time(NULL), &a->job,
				      a->err, sizeof(a->err));
}

/*
 * What the master holds of a run, and its job as the scheduler sees it: the
 * machine's collect asks before an upload, and about a run it finds in
 * progress (the master may have ended it: then it uploads what there is).
 */
enum MHD_Result serve_get_run(struct MHD_Connection *connection, struct request *r)
{
	struct run_asked asked = { .machine = r->route.machine, .run_id = r->route.run_id };
	struct bci_run_status status;
	char why[300];
	bool answered;
	int job;

	if (serve_authenticate(connection, r, &answered) < 0)
		return answered ? MHD_YES : MHD_NO;
	if (bci_spool_status(&r->server->spool, r->route.machine, r->route.run_id, &status, why,
			     sizeof(why)) < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	job = bci_ingest_call_with_store(r->server->ingest, run_asked, &asked);
	if (job < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s",
					   asked.err);
	snprintf(r->note, sizeof(r->note), "%s, %llu bytes",
		 status.state == BCI_RUN_STORED ? "stored" :
		 status.state == BCI_RUN_PARTIAL ? "partial" : "absent",
		 (unsigned long long)status.received);
	if (job && asked.job.ended) {
		size_t used = strlen(r->note);

		snprintf(r->note + used, sizeof(r->note) - used, ", its job ended after %d boots",
			 asked.job.boots);
	}
	return serve_respond_run(connection, r,
			      status.state == BCI_RUN_ABSENT ? MHD_HTTP_NOT_FOUND : MHD_HTTP_OK,
			      &status, NULL, job ? &asked.job : NULL);
}

/*
 * The manifest of a stored run's archive, as JSON (lib/manifest.h): what
 * collect compares its own folder with when the master holds the run under
 * another digest. The archive's reader checks it as it reads it.
 */
enum MHD_Result serve_get_manifest(struct MHD_Connection *connection, struct request *r)
{
	struct bci_run_archive *archive = NULL;
	struct bci_run_status status;
	char why[600], path[PATH_MAX], *body = NULL;
	size_t len = 0;
	enum MHD_Result ret;
	int written;
	bool answered;
	FILE *out;

	if (serve_authenticate(connection, r, &answered) < 0)
		return answered ? MHD_YES : MHD_NO;
	if (bci_spool_status(&r->server->spool, r->route.machine, r->route.run_id, &status, why,
			     sizeof(why)) < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	if (status.state != BCI_RUN_STORED)
		return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND, "run %s/%s is not stored",
					   r->route.machine, r->route.run_id);
	bci_spool_archive_path(&r->server->spool, status.sha256, path);
	if (bci_run_archive_open(path, &r->server->config.limits, &archive, why, sizeof(why)) < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s: %s",
					   path, why);
	/* The reader's manifest is sorted already: the writer's check and sort change nothing. */
	out = open_memstream(&body, &len);
	written = out ? bci_manifest_write((struct bci_manifest *)bci_run_archive_manifest(archive),
					   out, why, sizeof(why)) : -ENOMEM;
	if (out && fclose(out) != 0 && written == 0)
		written = -EIO;
	bci_run_archive_close(archive);
	if (written < 0) {
		free(body);
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "the manifest of %s: %s", path,
					   written == -EINVAL ? why : strerror(-written));
	}
	snprintf(r->note, sizeof(r->note), "manifest of %s, %zu bytes", status.sha256, len);
	ret = serve_respond(connection, r, MHD_HTTP_OK, body, len, "application/json");
	free(body);
	return ret;
}

enum MHD_Result serve_get_result(struct MHD_Connection *connection, struct request *r)
{
	struct MHD_Response *response;
	enum MHD_Result ret;
	char why[300];
	struct stat st;
	int fd;

	fd = bci_ingest_call_log_open(r->server->ingest, r->route.machine, r->route.run_id,
				      r->route.test, r->route.stream, why, sizeof(why));
	if (fd == -ENOENT)
		return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND, "%s", why);
	if (fd < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s", why);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s",
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
enum MHD_Result serve_get_page(struct MHD_Connection *connection, struct request *r,
				const char *url, const char *method)
{
	struct bci_page_answer a;
	enum MHD_Result ret;
	const struct bci_page_query query = {
#define QUERY_VALUE(key) MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, key)
		.from = QUERY_VALUE("from"), .to = QUERY_VALUE("to"), .test = QUERY_VALUE("test"),
		.status = QUERY_VALUE("status"), .page = QUERY_VALUE("page"),
		.per_page = QUERY_VALUE("per_page"),
#undef QUERY_VALUE
	};

	bci_serve_pages_answer(r->server->pages, method, url, &query, &a);
	if (!a.body)
		return MHD_NO;
	snprintf(r->note, sizeof(r->note), "%s", a.note);
	ret = serve_respond(connection, r, a.status, a.body, a.len, a.content_type);
	free(a.body);
	return ret;
}

