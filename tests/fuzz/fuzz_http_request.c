// SPDX-License-Identifier: MIT
/*
 * Fuzz target for serve's request handling without a socket: the first line
 * of the input is "METHOD URL" for the router, every later line is given to
 * each header parser (Content-Range, Authorization, X-Bootci-Sha256,
 * Content-Length), the first line is also decoded as a URL, and the whole
 * input is read as a token file. What is accepted must keep the promises
 * the server relies on.
 */
#include "../../aggregator/master/serve/auth.h"
#include "../../aggregator/master/serve/http.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_route(const char *line)
{
	char method[16], err[256];
	const char *space = strchr(line, ' ');
	struct bci_route route;
	size_t n;

	if (!space || (n = (size_t)(space - line)) >= sizeof(method))
		return;
	memcpy(method, line, n);
	method[n] = '\0';
	if (bci_http_route(method, space + 1, &route, err, sizeof(err)) != 0)
		return;
	if (route.kind == BCI_ROUTE_HEALTH)
		return;
	/* A routed run names a safe machine and run id: they become file names. */
	if (!bci_manifest_word_ok(route.machine) || !bci_manifest_word_ok(route.run_id))
		abort();
	/* A test is never a file name, but is never empty, "." or "..", nor holds a control byte. */
	if (route.kind == BCI_ROUTE_RESULT &&
	    (!route.test[0] || !strcmp(route.test, ".") || !strcmp(route.test, "..")))
		abort();
	for (const char *p = route.test; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();
}

/* The unescaper: never longer, never a NUL inside (it would cut a name short). */
static void check_unescape(const char *line)
{
	char *copy = strdup(line);
	size_t len;

	if (!copy)
		return;
	len = bci_http_unescape(copy);
	if (len > strlen(line) || strlen(copy) != len)
		abort();
	free(copy);
}

static void check_headers(const char *value)
{
	char err[256], token[BCI_HTTP_TOKEN_MAX + 1], hex[BCI_SHA256_HEX_LEN + 1];
	uint64_t start, end, total, length;

	if (bci_http_content_range(value, &start, &end, &total, err, sizeof(err)) == 0 &&
	    !(start <= end && end < total))
		abort();
	if (bci_http_bearer(value, token, err, sizeof(err)) == 0 &&
	    (!token[0] || strlen(token) > BCI_HTTP_TOKEN_MAX || strchr(token, ' ')))
		abort();
	if (bci_http_sha256(value, hex, err, sizeof(err)) == 0 && strlen(hex) != BCI_SHA256_HEX_LEN)
		abort();
	bci_http_length(value, &length);
}

/* The gate's scan of a raw head: a token it finds is one bci_http_bearer() accepts. */
static void check_head(const uint8_t *data, size_t size)
{
	struct bci_http_head head;
	int ret = bci_http_head_scan((const char *)data, size, &head);

	if (ret != 0 && ret != 1)
		abort();
	if (head.has_token && (ret != 1 || strlen(head.token) > BCI_HTTP_TOKEN_MAX ||
			       !head.token[0] || strchr(head.token, ' ')))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *next, err[256];
	struct bci_tokens *tokens;

	check_head(data, size);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (bci_tokens_parse("fuzz", text, size, &tokens, err, sizeof(err)) == 0) {
		bci_tokens_machine(tokens, "token");
		bci_tokens_free(tokens);
	}
	line = text;
	next = strchr(line, '\n');
	if (next)
		*next++ = '\0';
	check_route(line);
	check_unescape(line);
	for (line = next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		check_headers(line);
	}
	free(text);
	return 0;
}
