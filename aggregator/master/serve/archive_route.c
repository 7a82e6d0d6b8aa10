// SPDX-License-Identifier: MIT
/*
 * A stored run's archive (internal.h), open to any reader as its page is:
 *
 *   GET /machines/<machine>/runs/<run-id>/archive    the .tar.zst collect uploaded
 *
 * The run is looked up in the store; the file is the one ingest recorded for
 * it (archives/<sha256>.tar.zst in the data folder), never a path from the URL.
 */
#include "internal.h"
#include "ingest_call.h"
#include "../names.h"
#include "../store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARCHIVE_SUFFIX "/archive"

bool serve_archive_owns(const char *url)
{
	const char *slash, *run, *end;

	if (strncmp(url, "/machines/", 10))
		return false;
	slash = strchr(url + 10, '/');
	if (!slash || strncmp(slash, "/runs/", 6))
		return false;
	run = slash + 6;
	end = strchr(run, '/');
	return end && end > run && !strcmp(end, ARCHIVE_SUFFIX);
}

struct archive_lookup {
	const char *machine, *run_id;
	char path[PATH_MAX];
	bool run_found;
	char err[300];
};

static int archive_found(const struct bci_store_run *run, void *ctx)
{
	struct archive_lookup *a = ctx;
	const char *name = run->archive_path ? run->archive_path : "";

	a->run_found = true;
	/* What ingest writes: archives/<name>, one component, no way out of the folder. */
	if (strncmp(name, "archives/", 9) || !name[9] || strchr(name + 9, '/') ||
	    !strcmp(name + 9, "..") || !strcmp(name + 9, ".")) {
		snprintf(a->err, sizeof(a->err), "run %s of %s has no archive kept", a->run_id,
			 a->machine);
		return -ENOENT;
	}
	snprintf(a->path, sizeof(a->path), "%s", name);
	return 0;
}

static int archive_lookup(struct bci_store *store, const char *data_dir, void *ctx)
{
	struct archive_lookup *a = ctx;
	char path[PATH_MAX];
	int ret;

	ret = bci_store_run_get(store, a->machine, a->run_id, archive_found, a, a->err,
				sizeof(a->err));
	if (ret == -ENOENT && !a->run_found)
		snprintf(a->err, sizeof(a->err), "machine %s has no stored run %s", a->machine,
			 a->run_id);
	if (ret < 0)
		return ret;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", data_dir, a->path) >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(a->path, path, sizeof(path));
	return 0;
}

enum MHD_Result serve_archive_request(struct MHD_Connection *connection, struct request *r,
				      const char *url, const char *method)
{
	struct archive_lookup a = { .machine = r->route.machine, .run_id = r->route.run_id };
	const char *name = url + 10, *slash = strchr(name, '/'), *run = slash + 6;
	size_t name_len = (size_t)(slash - name), run_len = strlen(run) - strlen(ARCHIVE_SUFFIX);
	struct MHD_Response *response;
	char disposition[2 * sizeof(r->route.machine) + 64];
	enum MHD_Result ret;
	const char *why;
	struct stat st;
	int fd, found;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return serve_respond_error(connection, r, MHD_HTTP_METHOD_NOT_ALLOWED,
					   "%.16s: an archive is read with GET", method);
	if (name_len >= sizeof(r->route.machine) || run_len >= sizeof(r->route.run_id))
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "name too long");
	memcpy(r->route.machine, name, name_len);
	r->route.machine[name_len] = '\0';
	memcpy(r->route.run_id, run, run_len);
	r->route.run_id[run_len] = '\0';
	if (!bci_name_machine_ok(r->route.machine) || !bci_name_run_id_ok(r->route.run_id))
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
					   "not a machine name and a run id");
	found = bci_ingest_call_with_store(r->server->ingest, archive_lookup, &a);
	if (found == -ENOENT)
		return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND, "%s", a.err);
	if (found < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s",
					   a.err[0] ? a.err : strerror(-found));
	fd = open(a.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND,
					   "the archive of run %s of %s is no longer kept",
					   r->route.run_id, r->route.machine);
	why = fd < 0 || fstat(fd, &st) < 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a file" : NULL;
	if (why) {
		if (fd >= 0)
			close(fd);
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "the archive of run %s of %s: %s", r->route.run_id,
					   r->route.machine, why);
	}
	/* The response owns @fd from here. */
	response = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
	if (!response) {
		close(fd);
		return MHD_NO;
	}
	/* Machine names and run ids are words ([A-Za-z0-9._-]): nothing to quote. */
	snprintf(disposition, sizeof(disposition), "attachment; filename=\"%s-%s.tar.zst\"",
		 r->route.machine, r->route.run_id);
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/zstd");
	MHD_add_response_header(response, "Content-Disposition", disposition);
	MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(connection, MHD_HTTP_OK, response);
	MHD_destroy_response(response);
	snprintf(r->note, sizeof(r->note), "archive of %s/%s, %lld bytes", r->route.machine,
		 r->route.run_id, (long long)st.st_size);
	r->status = MHD_HTTP_OK;
	r->answered = true;
	return ret;
}
