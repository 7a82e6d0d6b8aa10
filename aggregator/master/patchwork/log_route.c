// SPDX-License-Identifier: MIT
/*
 * A series' build log on serve (patchwork.h, "build.c"), open to any reader
 * as the pages are; the fail checks link to it:
 *
 *   GET /series/<project>/<series>/build.log    DATA/series/NAME/ID/build.log
 *
 * The path is made from a project name (a word) and a series id (digits)
 * only, never taken from the URL as is.
 */
#include "patchwork.h"

#include "../serve/internal.h"
#include "manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SERIES_PREFIX "/series/"
#define LOG_SUFFIX "/build.log"

bool serve_series_log_owns(const char *url)
{
	return !strncmp(url, SERIES_PREFIX, strlen(SERIES_PREFIX)) &&
	       strlen(url) > strlen(SERIES_PREFIX) + strlen(LOG_SUFFIX) &&
	       !strcmp(url + strlen(url) - strlen(LOG_SUFFIX), LOG_SUFFIX);
}

enum MHD_Result serve_series_log_request(struct MHD_Connection *connection, struct request *r,
					 const char *url, const char *method)
{
	const char *name = url + strlen(SERIES_PREFIX), *slash = strchr(name, '/');
	const char *id = slash ? slash + 1 : NULL;
	size_t id_len = id ? strlen(id) - strlen(LOG_SUFFIX) : 0;
	char project[128], series[24], path[PATH_MAX];
	struct MHD_Response *response;
	enum MHD_Result ret;
	struct stat st;
	int fd;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return serve_respond_error(connection, r, MHD_HTTP_METHOD_NOT_ALLOWED,
					   "%.16s: a build log is read with GET", method);
	if (!slash || (size_t)(slash - name) >= sizeof(project) || !id_len ||
	    id_len >= sizeof(series) || id + id_len != strstr(id, LOG_SUFFIX))
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
					   "expected /series/PROJECT/SERIES/build.log");
	memcpy(project, name, (size_t)(slash - name));
	project[slash - name] = '\0';
	memcpy(series, id, id_len);
	series[id_len] = '\0';
	if (!bci_manifest_word_ok(project) || strspn(series, "0123456789") != id_len)
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
					   "not a project name and a series id");
	if ((size_t)snprintf(path, sizeof(path), "%s/series/%s/%s/build.log",
			     r->server->config.data_dir, project, series) >= sizeof(path))
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "path too long");
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND,
					   "series %s of %s has no build log", series, project);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		const char *why = fd < 0 ? strerror(errno) : "not a file";

		if (fd >= 0)
			close(fd);
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "the build log of series %s of %s: %s", series, project,
					   why);
	}
	/* The response owns @fd from here. */
	response = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
	if (!response) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(connection, MHD_HTTP_OK, response);
	MHD_destroy_response(response);
	snprintf(r->note, sizeof(r->note), "build log of series %s/%s, %lld bytes", project,
		 series, (long long)st.st_size);
	r->status = MHD_HTTP_OK;
	r->answered = true;
	return ret;
}
