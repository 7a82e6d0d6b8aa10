// SPDX-License-Identifier: MIT
/*
 * A machine's consoles (internal.h), open to any reader as the logs are:
 *
 *   GET /machines/<machine>/consoles/       its boots: number, size, last output (HTML)
 *   GET /machines/<machine>/consoles/<N>    boot N's console as read (text/plain)
 *
 * Names and numbers are checked before any path is made of them.
 */
#include "internal.h"
#include "console.h"
#include "console_log.h"
#include "../names.h"
#include "../report/report.h"
#include "strv.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CONSOLES_SEGMENT "/consoles"

bool serve_console_owns(const char *url)
{
	const char *name, *slash;

	if (strncmp(url, "/machines/", 10))
		return false;
	name = url + 10;
	slash = strchr(name, '/');
	if (!slash || slash == name)
		return false;
	return !strncmp(slash, CONSOLES_SEGMENT, strlen(CONSOLES_SEGMENT)) &&
	       (slash[strlen(CONSOLES_SEGMENT)] == '\0' || slash[strlen(CONSOLES_SEGMENT)] == '/');
}

static enum MHD_Result answer_list(struct MHD_Connection *connection, struct request *r,
				   const char *machine, const char *dir)
{
	struct bci_console_boot *boots;
	struct bci_str page = { 0 };
	enum MHD_Result ret;
	size_t count;
	int err;

	if ((err = bci_console_log_list(dir, &boots, &count)) < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "consoles of %s: %s", machine, strerror(-err));
	bci_str_appendf(&page, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
	bci_html_escape_str(&page, machine);
	bci_str_appendf(&page, ": consoles</title>%s</head><body>\n<h1>", bci_html_style);
	bci_html_escape_str(&page, machine);
	bci_str_appendf(&page, ": console per boot</h1>\n");
	if (!count)
		bci_str_appendf(&page, "<p>No console kept (none in the inventory, or nothing "
				       "read yet).</p>\n");
	else
		bci_str_appendf(&page, "<table>\n<tr><th>boot</th><th>bytes</th>"
				       "<th>last output (UTC)</th></tr>\n");
	/* The latest first: the boot a reader looks for is usually the last one. */
	for (size_t i = count; i-- > 0;) {
		char when[32];
		struct tm tm;

		gmtime_r(&boots[i].modified, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		bci_str_appendf(&page, "<tr><td><a href=\"/machines/");
		bci_html_url_escape(&page, machine);
		bci_str_appendf(&page, "/consoles/%u\">%u</a></td><td>%llu</td><td>%s</td></tr>\n",
				boots[i].number, boots[i].number, (unsigned long long)boots[i].size, when);
	}
	if (count)
		bci_str_appendf(&page, "</table>\n");
	bci_str_appendf(&page, "</body></html>\n");
	free(boots);
	if (!page.data)
		return MHD_NO;
	snprintf(r->note, sizeof(r->note), "consoles of %s: %zu boot(s)", machine, count);
	ret = serve_respond(connection, r, MHD_HTTP_OK, page.data, page.len, "text/html; charset=utf-8");
	bci_str_free(&page);
	return ret;
}

static enum MHD_Result answer_boot(struct MHD_Connection *connection, struct request *r,
				   const char *machine, const char *dir, unsigned number)
{
	struct MHD_Response *response;
	enum MHD_Result ret;
	struct stat st;
	int fd = bci_console_log_open_boot(dir, number);

	if (fd == -ENOENT)
		return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND,
					   "machine %s has no console of boot %u", machine, number);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int error = fd < 0 ? -fd : errno;

		if (fd >= 0)
			close(fd);
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "console of %s, boot %u: %s", machine, number, strerror(error));
	}
	/* What is there now: the boot may still be growing. The response owns @fd. */
	response = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
	if (!response) {
		close(fd);
		return MHD_NO;
	}
	/* The console's bytes as they are: never sniffed into anything a browser would run. */
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(connection, MHD_HTTP_OK, response);
	MHD_destroy_response(response);
	snprintf(r->note, sizeof(r->note), "console of %s, boot %u: %lld bytes", machine, number,
		 (long long)st.st_size);
	r->status = MHD_HTTP_OK;
	r->answered = true;
	return ret;
}

enum MHD_Result serve_console_request(struct MHD_Connection *connection, struct request *r,
				      const char *url, const char *method)
{
	char machine[BCI_MANIFEST_WORD_MAX + 1], dir[PATH_MAX];
	const char *name = url + 10, *rest = strchr(name, '/') + strlen(CONSOLES_SEGMENT);
	size_t len = (size_t)(strchr(name, '/') - name);
	unsigned long number = 0;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return serve_respond_error(connection, r, MHD_HTTP_METHOD_NOT_ALLOWED,
					   "%s: only GET", url);
	if (len >= sizeof(machine))
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "machine name too long");
	memcpy(machine, name, len);
	machine[len] = '\0';
	if (!bci_name_machine_ok(machine))
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
					   "'%s' is not a machine name", machine);
	if (bci_consoles_dir(r->server->config.data_dir, machine, dir, sizeof(dir)) < 0)
		return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "machine name too long");
	if (!*rest || !strcmp(rest, "/"))
		return answer_list(connection, r, machine, dir);
	rest++;
	for (const char *p = rest; *p; p++)
		if (!isdigit((unsigned char)*p) || (number = number * 10 + (unsigned long)(*p - '0')) > 999999)
			return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND,
						   "no such console: a boot is a number (1 to 999999)");
	return answer_boot(connection, r, machine, dir, (unsigned)number);
}
