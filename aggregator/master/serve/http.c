// SPDX-License-Identifier: MIT
/* serve's routing and header parsing (http.h): pure, no allocation. */
#include "http.h"
#include "../names.h"
#include "message.h"
#include "sha256.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MACHINES_PREFIX "/api/v1/machines/"

/* Copies the @len bytes at @s into @out (@size bytes) when they fit. */
static bool copy_part(char *out, size_t size, const char *s, size_t len)
{
	if (len >= size)
		return false;
	memcpy(out, s, len);
	out[len] = '\0';
	return true;
}

/* The part of the path after ".../runs/<run-id>": "" or "/results/<test>/<stream>". */
static int route_result(const char *tail, struct bci_route *route, char *err, size_t err_size)
{
	const char *test = tail + strlen("/results/");
	const char *slash = strrchr(test, '/');

	if (!slash || slash == test) {
		bci_message(err, err_size, "no such path: a result is .../results/<test>/{out,err,dmesg}");
		return 404;
	}
	if (!copy_part(route->test, sizeof(route->test), test, slash - test) ||
	    !bci_name_test_ok(route->test)) {
		bci_message(err, err_size, "'%.*s' is not a test name", (int)(slash - test) > 80 ? 80 :
			    (int)(slash - test), test);
		return 400;
	}
	if (strcmp(slash + 1, "out") && strcmp(slash + 1, "err") && strcmp(slash + 1, "dmesg")) {
		bci_message(err, err_size, "no such path: a result's stream is out, err or dmesg");
		return 404;
	}
	strcpy(route->stream, slash + 1);
	route->kind = BCI_ROUTE_RESULT;
	return 0;
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

size_t bci_http_unescape(char *s)
{
	size_t o = 0;

	for (size_t i = 0; s[i]; i++) {
		int high = s[i] == '%' ? hex_value(s[i + 1]) : -1;
		int low = high >= 0 ? hex_value(s[i + 2]) : -1;

		if (low < 0) {
			s[o++] = s[i];
			continue;
		}
		s[o++] = high || low ? (char)(high * 16 + low) : 0x01;
		i += 2;
	}
	s[o] = '\0';
	return o;
}

int bci_http_route(const char *method, const char *url, struct bci_route *route, char *err,
		   size_t err_size)
{
	bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	const char *machine, *slash, *run, *tail;
	size_t run_len;

	memset(route, 0, sizeof(*route));
	route->put = !strcmp(method, "PUT");
	if (!strcmp(url, "/api/v1/health")) {
		route->kind = BCI_ROUTE_HEALTH;
		if (!get) {
			bci_message(err, err_size, "%.16s: /api/v1/health takes GET", method);
			return 405;
		}
		return 0;
	}
	if (strncmp(url, MACHINES_PREFIX, strlen(MACHINES_PREFIX))) {
		bci_message(err, err_size, "no such path");
		return 404;
	}
	machine = url + strlen(MACHINES_PREFIX);
	slash = strchr(machine, '/');
	if (slash && (!strcmp(slash, "/fault") || !strcmp(slash, "/hello"))) {
		if (!copy_part(route->machine, sizeof(route->machine), machine, slash - machine) ||
		    !bci_name_machine_ok(route->machine)) {
			bci_message(err, err_size, "machine '%.*s' is not a word ([A-Za-z0-9._-], 1 to %d)",
				    (int)(slash - machine) > 80 ? 80 : (int)(slash - machine), machine,
				    BCI_MANIFEST_WORD_MAX);
			return 400;
		}
		route->kind = !strcmp(slash, "/fault") ? BCI_ROUTE_FAULT : BCI_ROUTE_HELLO;
		if (!route->put) {
			bci_message(err, err_size, "%.16s: a machine's %s takes PUT", method,
				    route->kind == BCI_ROUTE_FAULT ? "fault note" : "hello");
			return 405;
		}
		return 0;
	}
	if (!slash || strncmp(slash, "/runs/", strlen("/runs/"))) {
		bci_message(err, err_size, "no such path: a run is " MACHINES_PREFIX "<machine>/runs/<run-id>");
		return 404;
	}
	if (!copy_part(route->machine, sizeof(route->machine), machine, slash - machine) ||
	    !bci_name_machine_ok(route->machine)) {
		bci_message(err, err_size, "machine '%.*s' is not a word ([A-Za-z0-9._-], 1 to %d)",
			    (int)(slash - machine) > 80 ? 80 : (int)(slash - machine), machine,
			    BCI_MANIFEST_WORD_MAX);
		return 400;
	}
	run = slash + strlen("/runs/");
	/* A run id never holds '/', so "/results/" after it can only start a result path. */
	tail = strstr(run, "/results/");
	if (!tail && (tail = strchr(run, '/')) && strcmp(tail, "/manifest"))
		tail = NULL;
	run_len = tail ? (size_t)(tail - run) : strlen(run);
	if (!copy_part(route->run_id, sizeof(route->run_id), run, run_len) ||
	    !bci_name_run_id_ok(route->run_id)) {
		bci_message(err, err_size, "run id '%.*s' is not a word ([A-Za-z0-9._-], 1 to %d, not . or ..)",
			    run_len > 80 ? 80 : (int)run_len, run, BCI_MANIFEST_WORD_MAX);
		return 400;
	}
	if (tail && !strcmp(tail, "/manifest")) {
		route->kind = BCI_ROUTE_MANIFEST;
		if (!get) {
			bci_message(err, err_size, "%.16s: a run's manifest takes GET", method);
			return 405;
		}
		return 0;
	}
	if (tail) {
		int status = route_result(tail, route, err, err_size);

		if (status)
			return status;
		if (!get) {
			bci_message(err, err_size, "%.16s: a result takes GET", method);
			return 405;
		}
		return 0;
	}
	route->kind = BCI_ROUTE_RUN;
	if (!get && !route->put) {
		bci_message(err, err_size, "%.16s: a run takes PUT or GET", method);
		return 405;
	}
	return 0;
}

/* Reads a decimal number without sign or leading spaces; *@s moves past it. */
static bool parse_u64(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*s = p;
	*out = v;
	return true;
}

int bci_http_length(const char *value, uint64_t *length)
{
	return parse_u64(&value, length) && !*value ? 0 : -EINVAL;
}

int bci_http_content_range(const char *value, uint64_t *start, uint64_t *end, uint64_t *total,
			   char *err, size_t err_size)
{
	const char *p = value;

	if (strncmp(p, "bytes ", 6)) {
		bci_message(err, err_size, "Content-Range '%.64s': expected 'bytes START-END/TOTAL'", value);
		return -EINVAL;
	}
	p += 6;
	if (!parse_u64(&p, start) || *p++ != '-' || !parse_u64(&p, end) || *p++ != '/' ||
	    !parse_u64(&p, total) || *p) {
		bci_message(err, err_size, "Content-Range '%.64s': expected 'bytes START-END/TOTAL'", value);
		return -EINVAL;
	}
	if (*start > *end || *end >= *total) {
		bci_message(err, err_size, "Content-Range '%.64s': needs START <= END < TOTAL", value);
		return -EINVAL;
	}
	return 0;
}

int bci_http_bearer(const char *value, char token[BCI_HTTP_TOKEN_MAX + 1], char *err,
		    size_t err_size)
{
	size_t len;

	if (strncasecmp(value, "Bearer ", 7)) {
		bci_message(err, err_size, "Authorization is not 'Bearer TOKEN'");
		return -EINVAL;
	}
	value += 7;
	while (*value == ' ')
		value++;
	for (len = 0; value[len]; len++)
		if ((unsigned char)value[len] <= 0x20 || (unsigned char)value[len] >= 0x7f) {
			bci_message(err, err_size, "Authorization: the token has a byte that is not visible ASCII");
			return -EINVAL;
		}
	if (len == 0 || len > BCI_HTTP_TOKEN_MAX) {
		bci_message(err, err_size, "Authorization: a token of %zu bytes (1 to %d)", len,
			    BCI_HTTP_TOKEN_MAX);
		return -EINVAL;
	}
	memcpy(token, value, len + 1);
	return 0;
}

int bci_http_sha256(const char *value, char hex[BCI_SHA256_HEX_LEN + 1], char *err,
		    size_t err_size)
{
	if (bci_sha256_hex_read(value, strnlen(value, BCI_SHA256_HEX_LEN + 1), hex) < 0) {
		bci_message(err, err_size, BCI_HTTP_SHA256_HEADER ": not 64 hex digits");
		return -EINVAL;
	}
	return 0;
}

int bci_http_head_scan(const char *buf, size_t len, struct bci_http_head *head)
{
	const char *end = NULL, *line, *next, *eol;

	memset(head, 0, sizeof(*head));
	/* The head ends at an empty line: CRLF CRLF, or bare LFs as libmicrohttpd allows. */
	for (size_t i = 0; i + 1 < len && !end; i++)
		if (buf[i] == '\n' && (buf[i + 1] == '\n' ||
				       (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n')))
			end = buf + i + 1;
	if (!end)
		return 0;
	line = memchr(buf, '\n', (size_t)(end - buf));
	for (line = line ? line + 1 : end; line < end; line = next) {
		char value[BCI_HTTP_TOKEN_MAX + 16], err[128];
		size_t n;

		eol = memchr(line, '\n', (size_t)(end - line));
		next = eol ? eol + 1 : end;
		eol = eol ? eol : end;
		if (eol > line && eol[-1] == '\r')
			eol--;
		if ((size_t)(eol - line) < 14 || strncasecmp(line, "Authorization:", 14))
			continue;
		line += 14;
		while (line < eol && (*line == ' ' || *line == '\t'))
			line++;
		n = (size_t)(eol - line);
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
			n--;
		if (n >= sizeof(value))
			continue;
		memcpy(value, line, n);
		value[n] = '\0';
		if (memchr(value, '\0', n))
			continue;
		head->has_token = bci_http_bearer(value, head->token, err, sizeof(err)) == 0;
	}
	return 1;
}
