// SPDX-License-Identifier: MIT
/*
 * Fuzz target for serve's page routes and the metrics' window: the first
 * line of the input is "METHOD URL" for bci_serve_pages_route(), the second
 * and third the ?from= and ?to= values, the next four a matrix's ?test=,
 * ?status=, ?page= and ?per_page=. What is routed must keep the promises
 * the pages rely on: names that are not "", "." or "..", without control
 * bytes, builds without '/' (a test may hold one: it ends the path),
 * machines and run ids safe as words; a window parsed is ordered; a matrix
 * query parsed has a page from 1 and a known status. Every routed name is
 * also escaped (HTML and URL): neither may leave a byte that could open a
 * tag or an attribute.
 */
#include "../../aggregator/master/report/report.h"
#include "../../aggregator/master/serve/pages.h"
#include "manifest.h"
#include "strv.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void name_check(const char *name, bool slash_ok)
{
	struct bci_str b = { 0 };

	if (!name[0] || (!slash_ok && strchr(name, '/')) || !strcmp(name, ".") || !strcmp(name, ".."))
		abort();
	for (const char *p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();
	bci_html_escape_str(&b, name);
	if (b.data && strpbrk(b.data, "<>\"'"))
		abort();
	bci_str_reset(&b);
	bci_html_url_escape(&b, name);
	if (b.data && strpbrk(b.data, "<>\"'&/ "))
		abort();
	bci_str_free(&b);
}

static void check_route(const char *line)
{
	char method[16], err[256];
	const char *space = strchr(line, ' ');
	struct bci_page_route route;
	size_t n;

	if (!space || (n = (size_t)(space - line)) >= sizeof(method))
		return;
	memcpy(method, line, n);
	method[n] = '\0';
	if (!bci_serve_pages_owns(space + 1) ||
	    bci_serve_pages_route(method, space + 1, &route, err, sizeof(err)) != 0)
		return;
	switch (route.kind) {
	case BCI_PAGE_BUILD:
		name_check(route.build, false);
		break;
	case BCI_PAGE_RESULT:
		if (!bci_manifest_word_ok(route.run_id))
			abort();
		name_check(route.test, true);
		/* fall through */
	case BCI_PAGE_RUN:
	case BCI_PAGE_RUN_JSON:
		if (!bci_manifest_word_ok(route.run_id))
			abort();
		name_check(route.run_id, false);
		/* fall through */
	case BCI_PAGE_SUSPEND:
	case BCI_PAGE_MACHINE:
	case BCI_PAGE_MACHINE_JSON:
		if (!bci_manifest_word_ok(route.machine))
			abort();
		name_check(route.machine, false);
		break;
	case BCI_PAGE_HISTORY:
		name_check(route.test, true);
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *lines[7] = { NULL }, *p, err[256];
	struct bci_matrix_query query;
	double from, to;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	p = text;
	for (int i = 0; i < 7 && p; i++) {
		lines[i] = p;
		p = strchr(p, '\n');
		if (p)
			*p++ = '\0';
	}
	check_route(lines[0]);
	if (bci_metrics_window_parse(lines[1], lines[2], 1e9, &from, &to, err, sizeof(err)) == 0 &&
	    !(from <= to && from >= 0))
		abort();
	if (bci_matrix_query_parse(lines[3], lines[4], lines[5], lines[6], &query, err, sizeof(err)) == 0 &&
	    (query.page < 1 || query.per_page > BCI_MATRIX_PER_PAGE_MAX || query.status < -1 ||
	     query.status > BCI_MATRIX_CHANGED))
		abort();
	bci_matrix_query_release(&query);
	free(text);
	return 0;
}
