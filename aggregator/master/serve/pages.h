/* SPDX-License-Identifier: MIT */
/*
 * serve's read-only pages (bootci-aggregator-serve(1)), open to any
 * reader as the logs are:
 *
 *   GET /                                         the builds
 *   GET /builds/<build>?test=&status=&page=&per_page=   a page of the build's test matrix
 *   GET /machines/<machine>/runs/<run-id>/results/<test>   a result, its logs, crash records
 *   GET /machines/<machine>?page=N                a machine: state, jobs, consoles, runs
 *   GET /api/v1/machines/<machine>?page=N         the same as JSON
 *   GET /machines/<machine>/runs/<run-id>         a run: boots, crash records, results
 *   GET /api/v1/machines/<machine>/runs/<run-id>/summary   the same as JSON
 *   GET /tests/<test>                             the test's history across builds
 *   GET /bisects/<build>                          a bisection of the build: its steps, its answer
 *   GET /machines/<machine>/suspend               suspend/resume latency across builds (SVG)
 *   GET /metrics?from=&to=                        the metrics page
 *   GET /api/v1/metrics?from=&to=                 the same as JSON
 *   GET /refused                                  the uploads refused (store/refused.h)
 *   GET /api/v1/refused                           the same as JSON (never cached)
 *
 * Pages are rendered from the store on request and kept in a small cache
 * until the next ingest through this server (or PAGES_CACHE_SECONDS, for
 * what changes the store from outside: `ingest`, `build add`, the
 * scheduler). No path reaches a file by its name: names are looked up in the
 * store, and a run's files are opened through its cache folder.
 */
#ifndef BCI_SERVE_PAGES_H
#define BCI_SERVE_PAGES_H

#include <stdbool.h>
#include <stddef.h>

struct bci_ingest_call;

enum bci_page_kind {
	BCI_PAGE_INDEX,
	BCI_PAGE_BUILD,
	BCI_PAGE_RESULT,
	BCI_PAGE_HISTORY,
	BCI_PAGE_SUSPEND,
	BCI_PAGE_METRICS,
	BCI_PAGE_METRICS_JSON,
	BCI_PAGE_REFUSED,
	BCI_PAGE_REFUSED_JSON,
	BCI_PAGE_MACHINE,
	BCI_PAGE_MACHINE_JSON,
	BCI_PAGE_RUN,
	BCI_PAGE_RUN_JSON,
	BCI_PAGE_BISECT,
};

#define BCI_PAGE_NAME_MAX 512

struct bci_page_route {
	enum bci_page_kind kind;
	char build[BCI_PAGE_NAME_MAX + 1];
	char machine[BCI_PAGE_NAME_MAX + 1];
	char run_id[BCI_PAGE_NAME_MAX + 1];
	char test[BCI_PAGE_NAME_MAX + 1];
};

/* Whether the (decoded) path @url is one of the pages' (their routes answer even errors). */
bool bci_serve_pages_owns(const char *url);

/*
 * Routes @method and @url (a path bci_serve_pages_owns() accepted). Returns
 * 0 and fills @route, or the HTTP status to answer (400 a name that cannot
 * be one, 404 no such page, 405 not GET/HEAD) with @err saying why.
 */
int bci_serve_pages_route(const char *method, const char *url, struct bci_page_route *route,
			  char *err, size_t err_size);

struct bci_serve_pages;

int bci_serve_pages_new(struct bci_ingest_call *ingest, struct bci_serve_pages **out);
void bci_serve_pages_free(struct bci_serve_pages *pages);

struct bci_page_answer {
	int status;
	char *body;			/* the caller frees it */
	size_t len;
	const char *content_type;
	char note[300];			/* for the log */
};

/* The values of a page's query (decoded), each NULL when absent. */
struct bci_page_query {
	const char *from, *to;				/* the metrics' window */
	const char *test, *status, *page, *per_page;	/* the matrix's (report.h) */
};

/* The answer to GET @url with @query. */
void bci_serve_pages_answer(struct bci_serve_pages *pages, const char *method, const char *url,
			    const struct bci_page_query *query, struct bci_page_answer *answer);

#endif
