// SPDX-License-Identifier: MIT
/*
 * A machine's consoles (internal.h), open to any reader as the logs are:
 *
 *   GET /machines/<machine>/consoles/       its reader's state (console_state.h), its boots:
 *                                           number, size, last output (HTML)
 *   GET /machines/<machine>/consoles/<N>    boot N's console as read (text/plain)
 *   GET /machines/<machine>/consoles/<N>/tail   the job in flight at its end, and the
 *                                           console from that job's start (text/plain)
 *   GET /machines/<machine>/runs/<run>/results/<test>/console
 *       the tail of the latest boot of that run (its run note) that ended while the
 *       test ran: the result's console, for its page to link
 *
 * Names and numbers are checked before any path is made of them.
 */
#include "internal.h"
#include "console.h"
#include "console_log.h"
#include "console_state.h"
#include "../names.h"
#include "../report/report.h"
#include "../schedule/route.h"
#include "pages.h"
#include "progress_marker.h"
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
#define RESULT_CONSOLE_SUFFIX "/console"
/* How many of a machine's latest boots a result's console is looked for in. */
#define RESULT_SCANNED 200
/* The boots of the list whose job in flight is looked for (each a read of its file). */
#define LIST_SCANNED 50

void serve_console_served(struct bci_server *s, const char *url)
{
	struct bci_schedule_route route;

	if (bci_schedule_route_parse(url, &route) == 0 && route.kind == BCI_SCHEDULE_ROUTE_JOB_INITRD)
		bci_consoles_run_served(s->consoles, route.first, route.second);
}

bool serve_console_owns(const char *url)
{
	const char *name, *slash;

	if (strncmp(url, "/machines/", 10))
		return false;
	name = url + 10;
	slash = strchr(name, '/');
	if (!slash || slash == name)
		return false;
	if (!strncmp(slash, "/runs/", 6)) {
		/* /runs/<run>/results/<test>/console: the test's name has no '/'. */
		const char *results = strchr(slash + 6, '/'), *end;

		if (!results || results == slash + 6 || strncmp(results, "/results/", 9))
			return false;
		end = results + 9 + strcspn(results + 9, "/");
		return end > results + 9 && !strcmp(end, RESULT_CONSOLE_SUFFIX);
	}
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
	{
		struct bci_console_state state;
		char line[600], why[PATH_MAX + 200];
		int known = bci_console_state_read(dir, &state, why, sizeof(why));

		if (known > 0)
			bci_console_state_line(&state, time(NULL), line, sizeof(line));
		if (known != 0) {
			bci_str_appendf(&page, "<p>console ");
			bci_html_escape_str(&page, known > 0 ? line : why);
			bci_str_appendf(&page, "</p>\n");
		}
	}
	if (!count)
		bci_str_appendf(&page, "<p>No console kept (none in the inventory, or nothing "
				       "read yet).</p>\n");
	else
		bci_str_appendf(&page, "<table>\n<tr><th>boot</th><th>bytes</th>"
				       "<th>last output (UTC)</th><th>in flight at its end</th></tr>\n");
	/* The latest first: the boot a reader looks for is usually the last one. */
	for (size_t i = count; i-- > 0;) {
		char when[32];
		struct tm tm;

		gmtime_r(&boots[i].modified, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		bci_str_appendf(&page, "<tr><td><a href=\"/machines/");
		bci_html_url_escape(&page, machine);
		bci_str_appendf(&page, "/consoles/%u\">%u</a></td><td>%llu</td><td>%s</td><td>",
				boots[i].number, boots[i].number, (unsigned long long)boots[i].size, when);
		if (count - i <= LIST_SCANNED) {
			struct bci_console_in_flight job;
			int fd = bci_console_log_open_boot(dir, boots[i].number);

			if (fd >= 0 && bci_console_log_in_flight(fd, &job) == 1) {
				bci_str_appendf(&page, "<a href=\"/machines/");
				bci_html_url_escape(&page, machine);
				bci_str_appendf(&page, "/consoles/%u/tail\">[%u/%u] ", boots[i].number,
						job.index, job.total);
				bci_html_escape_str(&page, job.name);
				bci_str_appendf(&page, "</a>");
			}
			if (fd >= 0)
				close(fd);
		}
		bci_str_appendf(&page, "</td></tr>\n");
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

/* The console of boot @number from the start of the job in flight at its end (its last 64 KiB). */
static enum MHD_Result answer_tail(struct MHD_Connection *connection, struct request *r,
				   const char *machine, const char *dir, unsigned number)
{
	struct bci_console_in_flight job;
	struct MHD_Response *response;
	enum MHD_Result ret;
	char head[800];
	uint64_t from;
	struct stat st;
	int fd = bci_console_log_open_boot(dir, number), found, head_len;

	if (fd == -ENOENT)
		return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND,
					   "machine %s has no console of boot %u", machine, number);
	found = fd < 0 ? fd : bci_console_log_in_flight(fd, &job);
	if (found < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "console of %s, boot %u: %s", machine, number,
					   strerror(found < 0 ? -found : errno));
	}
	if (!found) {
		close(fd);
		return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND,
					   "boot %u of %s ended with no job in flight", number, machine);
	}
	from = job.start;
	if ((uint64_t)st.st_size - from > BCI_CONSOLE_TAIL_MAX)
		from = (uint64_t)st.st_size - BCI_CONSOLE_TAIL_MAX;
	head_len = snprintf(head, sizeof(head),
			    BCI_CONSOLE_NOTE_PREFIX "boot %u of %s ended while [%u/%u] %s ran; "
			    "its console from that job's start%s ==\n",
			    number, machine, job.index, job.total, job.name,
			    from > job.start ? " (the last 64 KiB)" : "");
	if (head_len < 0 || (size_t)head_len >= sizeof(head))
		head_len = (int)strlen(head);
	{
		/* The head, then the file's bytes: read here (at most 64 KiB). */
		size_t len = (size_t)((uint64_t)st.st_size - from);
		char *body = malloc((size_t)head_len + len);
		ssize_t got;

		if (!body) {
			close(fd);
			return MHD_NO;
		}
		memcpy(body, head, (size_t)head_len);
		got = pread(fd, body + head_len, len, (off_t)from);
		close(fd);
		if (got < 0) {
			free(body);
			return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
						   "console of %s, boot %u: %s", machine, number,
						   strerror(errno));
		}
		response = MHD_create_response_from_buffer((size_t)head_len + (size_t)got, body,
							   MHD_RESPMEM_MUST_FREE);
		if (!response) {
			free(body);
			return MHD_NO;
		}
	}
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(connection, MHD_HTTP_OK, response);
	MHD_destroy_response(response);
	snprintf(r->note, sizeof(r->note), "console tail of %s, boot %u: [%u/%u]", machine, number,
		 job.index, job.total);
	r->status = MHD_HTTP_OK;
	r->answered = true;
	return ret;
}

/* The result's console: the latest boot of @run whose console ended while @test ran. */
static enum MHD_Result answer_result(struct MHD_Connection *connection, struct request *r,
				     const char *machine, const char *dir, const char *run,
				     const char *test)
{
	struct bci_console_boot *boots;
	size_t count, scanned = 0;
	unsigned found = 0;
	int err;

	if ((err = bci_console_log_list(dir, &boots, &count)) < 0)
		return serve_respond_error(connection, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "consoles of %s: %s", machine, strerror(-err));
	for (size_t i = count; i-- > 0 && !found && scanned < RESULT_SCANNED; scanned++) {
		struct bci_console_in_flight job;
		char boot_run[BCI_CONSOLE_RUN_MAX + 1];
		int fd = bci_console_log_open_boot(dir, boots[i].number);

		if (fd < 0)
			continue;
		if (bci_console_log_run(fd, boot_run) == 1 && !strcmp(boot_run, run) &&
		    bci_console_log_in_flight(fd, &job) == 1 && bci_progress_job_runs(job.name, strlen(job.name), test))
			found = boots[i].number;
		close(fd);
	}
	free(boots);
	if (!found)
		return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND,
					   "no boot of run %s on %s ended while %s ran (of its latest "
					   "%d consoles)", run, machine, test, RESULT_SCANNED);
	return answer_tail(connection, r, machine, dir, found);
}

enum MHD_Result serve_console_request(struct MHD_Connection *connection, struct request *r,
				      const char *url, const char *method)
{
	char machine[BCI_MANIFEST_WORD_MAX + 1], dir[PATH_MAX];
	const char *name = url + 10, *rest;
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
	if (!strncmp(name + len, "/runs/", 6)) {
		char run[BCI_MANIFEST_WORD_MAX + 1], test[BCI_PAGE_NAME_MAX + 1];
		const char *run_at = name + len + 6, *test_at = strchr(run_at, '/') + 9;
		size_t run_len = (size_t)(test_at - 9 - run_at);
		size_t test_len = strlen(test_at) - strlen(RESULT_CONSOLE_SUFFIX);

		if (run_len >= sizeof(run) || test_len >= sizeof(test))
			return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST, "name too long");
		memcpy(run, run_at, run_len);
		run[run_len] = '\0';
		memcpy(test, test_at, test_len);
		test[test_len] = '\0';
		if (!bci_name_run_id_ok(run) || !bci_name_test_ok(test))
			return serve_respond_error(connection, r, MHD_HTTP_BAD_REQUEST,
						   "'%s' or '%s' is not a run or a test", run, test);
		return answer_result(connection, r, machine, dir, run, test);
	}
	rest = name + len + strlen(CONSOLES_SEGMENT);
	if (!*rest || !strcmp(rest, "/"))
		return answer_list(connection, r, machine, dir);
	rest++;
	for (; isdigit((unsigned char)*rest) && number <= 999999; rest++)
		number = number * 10 + (unsigned long)(*rest - '0');
	if (!number || number > 999999 || (*rest && strcmp(rest, "/tail")))
		return serve_respond_error(connection, r, MHD_HTTP_NOT_FOUND,
					   "no such console: /consoles/N or /consoles/N/tail, N a boot "
					   "(1 to 999999)");
	if (*rest)
		return answer_tail(connection, r, machine, dir, (unsigned)number);
	return answer_boot(connection, r, machine, dir, (unsigned)number);
}
