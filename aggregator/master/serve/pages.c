// SPDX-License-Identifier: MIT
/* serve's pages (pages.h): routes, rendering through the store, the cache. */
#include "pages.h"
#include "ingest_call.h"
#include "page_machine.h"
#include "../names.h"
#include "../report/report.h"
#include "../store/refused.h"
#include "../store/store.h"
#include "jsonw.h"
#include "strv.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long a page may be served from the cache when nothing was ingested here. */
#define PAGES_CACHE_SECONDS 10
#define PAGES_CACHE_ENTRIES 32
/* The baseline window of the served matrices (report's default). */
#define PAGES_WINDOW 5

/* ---- routes ---- */

#define API_MACHINES "/api/v1/machines/"

/*
 * Of the machines' API (serve/http.c: their uploads, manifests, faults), the
 * pages take only what is theirs: a machine's JSON and a run's summary.
 */
static bool api_machine_page(const char *url)
{
	const char *slash, *end;

	if (strncmp(url, API_MACHINES, strlen(API_MACHINES)))
		return false;
	slash = strchr(url + strlen(API_MACHINES), '/');
	if (!slash)
		return true;
	if (strncmp(slash, "/runs/", 6))
		return false;
	end = strchr(slash + 6, '/');
	return end && !strcmp(end, "/summary");
}

bool bci_serve_pages_owns(const char *url)
{
	return !strcmp(url, "/") || api_machine_page(url) ||
	       !strcmp(url, "/metrics") || !strcmp(url, "/api/v1/metrics") ||
	       !strcmp(url, "/refused") || !strcmp(url, "/api/v1/refused") ||
	       !strncmp(url, "/builds/", 8) || !strncmp(url, "/tests/", 7) ||
	       !strncmp(url, "/bisects/", 9) ||
	       !strncmp(url, "/machines/", 10);
}

/* Copies the segment of @p up to the next '/' (or the end) into @out; returns past it. */
static const char *segment(const char *p, char *out, size_t size, bool *too_long)
{
	size_t n = strcspn(p, "/");

	*too_long = n >= size;
	if (!*too_long) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
	return p + n;
}

/*
 * A test name is the rest of the (decoded) path: it may hold '/' (sent as
 * %2F), and nothing follows it in any page's path.
 */
static int test_rest(const char *p, struct bci_page_route *route, char *err, size_t err_size)
{
	size_t n = strlen(p);

	if (n >= sizeof(route->test) || !bci_name_test_ok(p)) {
		snprintf(err, err_size, "not a test name (1 to %d bytes, no control character, not"
			 " . or ..)", BCI_PAGE_NAME_MAX);
		return 400;
	}
	memcpy(route->test, p, n + 1);
	return 0;
}

int bci_serve_pages_route(const char *method, const char *url, struct bci_page_route *route,
			  char *err, size_t err_size)
{
	const char *p;
	bool too_long;

	memset(route, 0, sizeof(*route));
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		snprintf(err, err_size, "%s: the pages are read with GET", method);
		return 405;
	}
	if (!strcmp(url, "/")) {
		route->kind = BCI_PAGE_INDEX;
		return 0;
	}
	if (!strcmp(url, "/metrics") || !strcmp(url, "/api/v1/metrics")) {
		route->kind = url[1] == 'm' ? BCI_PAGE_METRICS : BCI_PAGE_METRICS_JSON;
		return 0;
	}
	if (!strcmp(url, "/refused") || !strcmp(url, "/api/v1/refused")) {
		route->kind = url[1] == 'r' ? BCI_PAGE_REFUSED : BCI_PAGE_REFUSED_JSON;
		return 0;
	}
	if (!strncmp(url, "/builds/", 8)) {
		route->kind = BCI_PAGE_BUILD;
		p = segment(url + 8, route->build, sizeof(route->build), &too_long);
		if (too_long || *p || !bci_name_build_ok(route->build)) {
			snprintf(err, err_size, "not a build name (no '/', no control character, 1 to %d"
				 " bytes)", BCI_PAGE_NAME_MAX);
			return 400;
		}
		return 0;
	}
	if (!strncmp(url, "/bisects/", 9)) {
		route->kind = BCI_PAGE_BISECT;
		p = segment(url + 9, route->build, sizeof(route->build), &too_long);
		if (too_long || *p || !bci_name_build_ok(route->build)) {
			snprintf(err, err_size, "not a build name (no '/', no control character, 1 to %d"
				 " bytes)", BCI_PAGE_NAME_MAX);
			return 400;
		}
		return 0;
	}
	if (!strncmp(url, "/tests/", 7)) {
		route->kind = BCI_PAGE_HISTORY;
		return test_rest(url + 7, route, err, err_size);
	}
	if (api_machine_page(url)) {
		p = segment(url + strlen(API_MACHINES), route->machine, sizeof(route->machine),
			    &too_long);
		if (too_long || !bci_name_machine_ok(route->machine)) {
			snprintf(err, err_size, "not a machine name");
			return 400;
		}
		route->kind = BCI_PAGE_MACHINE_JSON;
		if (!*p)
			return 0;
		p = segment(p + 6, route->run_id, sizeof(route->run_id), &too_long);
		if (too_long || !bci_name_run_id_ok(route->run_id)) {
			snprintf(err, err_size, "not a run id");
			return 400;
		}
		route->kind = BCI_PAGE_RUN_JSON;
		return 0;
	}
	if (strncmp(url, "/machines/", 10)) {
		snprintf(err, err_size, "no such page");
		return 404;
	}
	p = segment(url + 10, route->machine, sizeof(route->machine), &too_long);
	if (too_long || !bci_name_machine_ok(route->machine)) {
		snprintf(err, err_size, "not a machine name");
		return 400;
	}
	if (!*p) {
		route->kind = BCI_PAGE_MACHINE;
		return 0;
	}
	if (!strcmp(p, "/suspend")) {
		route->kind = BCI_PAGE_SUSPEND;
		return 0;
	}
	if (strncmp(p, "/runs/", 6)) {
		snprintf(err, err_size, "no such page: a machine has /suspend, /runs/<run-id> and"
			 " /runs/<run-id>/results/<test>");
		return 404;
	}
	p = segment(p + 6, route->run_id, sizeof(route->run_id), &too_long);
	if (too_long || !bci_name_run_id_ok(route->run_id)) {
		snprintf(err, err_size, "not a run id");
		return 400;
	}
	if (!*p) {
		route->kind = BCI_PAGE_RUN;
		return 0;
	}
	if (strncmp(p, "/results/", 9)) {
		snprintf(err, err_size, "no such page: a run has /results/<test>");
		return 404;
	}
	route->kind = BCI_PAGE_RESULT;
	return test_rest(p + 9, route, err, err_size);
}

/* ---- the cache ---- */

struct cached {
	char *key;
	char *body;
	size_t len;
	int status;
	const char *content_type;
	unsigned long generation;
	time_t made;
};

struct bci_serve_pages {
	struct bci_ingest_call *ingest;
	pthread_mutex_t lock;
	struct cached entries[PAGES_CACHE_ENTRIES];
	size_t next;			/* the entry replaced next (oldest first) */
};

int bci_serve_pages_new(struct bci_ingest_call *ingest, struct bci_serve_pages **out)
{
	struct bci_serve_pages *pages = calloc(1, sizeof(*pages));

	if (!pages)
		return -ENOMEM;
	pages->ingest = ingest;
	pthread_mutex_init(&pages->lock, NULL);
	*out = pages;
	return 0;
}

void bci_serve_pages_free(struct bci_serve_pages *pages)
{
	if (!pages)
		return;
	for (size_t i = 0; i < PAGES_CACHE_ENTRIES; i++) {
		free(pages->entries[i].key);
		free(pages->entries[i].body);
	}
	pthread_mutex_destroy(&pages->lock);
	free(pages);
}

static bool cache_get(struct bci_serve_pages *pages, const char *key, unsigned long generation,
		      struct bci_page_answer *a)
{
	time_t now = time(NULL);
	bool found = false;

	pthread_mutex_lock(&pages->lock);
	for (size_t i = 0; i < PAGES_CACHE_ENTRIES && !found; i++) {
		struct cached *c = &pages->entries[i];

		if (!c->key || strcmp(c->key, key) || c->generation != generation ||
		    now - c->made >= PAGES_CACHE_SECONDS || now < c->made)
			continue;
		a->body = malloc(c->len + 1);
		if (!a->body)
			break;
		memcpy(a->body, c->body, c->len);
		a->len = c->len;
		a->status = c->status;
		a->content_type = c->content_type;
		found = true;
	}
	pthread_mutex_unlock(&pages->lock);
	return found;
}

static void cache_put(struct bci_serve_pages *pages, const char *key, unsigned long generation,
		      const struct bci_page_answer *a)
{
	char *k = strdup(key), *body = malloc(a->len + 1);
	struct cached *c;

	if (!k || !body) {
		free(k);
		free(body);
		return;		/* not cached: the answer is still whole */
	}
	memcpy(body, a->body, a->len);
	pthread_mutex_lock(&pages->lock);
	c = &pages->entries[pages->next];
	pages->next = (pages->next + 1) % PAGES_CACHE_ENTRIES;
	free(c->key);
	free(c->body);
	*c = (struct cached){ .key = k, .body = body, .len = a->len, .status = a->status,
			      .content_type = a->content_type, .generation = generation,
			      .made = time(NULL) };
	pthread_mutex_unlock(&pages->lock);
}

/* ---- rendering ---- */

struct render {
	const struct bci_page_route *route;
	const char *from, *to;
	const char *page;			/* the query's page (the matrix's, a machine's runs) */
	const struct bci_matrix_query *matrix;	/* BCI_PAGE_BUILD's rows */
	struct bci_str body;
	bool json;
	char err[1024];
	int bad_request;	/* the query was wrong: 400 */
};

static int metrics_render(struct bci_store *store, struct render *r,
			  const struct bci_report_options *report)
{
	struct bci_metrics_options options = { .report = *report };
	struct bci_metrics *m;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	ret = bci_metrics_window_parse(r->from, r->to, (double)time(NULL), &options.from, &options.to,
				       r->err, sizeof(r->err));
	if (ret < 0) {
		r->bad_request = 1;
		return ret;
	}
	ret = bci_metrics_compute(store, &options, &m, r->err, sizeof(r->err));
	if (ret < 0)
		return ret;
	if (!r->json) {
		ret = bci_metrics_html(&r->body, m);
		bci_metrics_free(m);
		return ret;
	}
	f = open_memstream(&text, &len);
	if (!f) {
		bci_metrics_free(m);
		return -ENOMEM;
	}
	bci_metrics_json(f, m);
	bci_metrics_free(m);
	if (fclose(f) || !text) {
		free(text);
		return -ENOMEM;
	}
	ret = bci_str_append(&r->body, text, len);
	free(text);
	return ret;
}

/* The refused uploads as JSON (store/refused.h), into the body. */
static int refused_render(const char *data_dir, struct render *r)
{
	struct bci_refused *list = NULL;
	size_t count = 0, len = 0;
	char *text = NULL;
	FILE *f;
	int ret;

	ret = bci_refused_list(data_dir, NULL, &list, &count, r->err, sizeof(r->err));
	if (ret < 0)
		return ret;
	f = open_memstream(&text, &len);
	ret = f ? bci_refused_json(f, list, count) : -ENOMEM;
	free(list);
	if (f && (fclose(f) || !text))
		ret = -ENOMEM;
	if (ret == 0)
		ret = bci_str_append(&r->body, text, len);
	free(text);
	return ret;
}

static int render(struct bci_store *store, const char *data_dir, void *ctx)
{
	struct render *r = ctx;
	const struct bci_page_route *route = r->route;
	struct bci_filters *filters = NULL;
	struct bci_report_options options = { .data_dir = data_dir, .window = PAGES_WINDOW };
	char path[PATH_MAX];
	int ret = 0;

	if (route->kind == BCI_PAGE_BUILD || route->kind == BCI_PAGE_METRICS ||
	    route->kind == BCI_PAGE_METRICS_JSON) {
		/* The known issues as the report reads them: a missing file is no filter. */
		snprintf(path, sizeof(path), "%s/known-issues.txt", data_dir);
		ret = bci_filters_load(path, &filters, r->err, sizeof(r->err));
		if (ret == -ENOENT)
			ret = 0;
		if (ret < 0)
			return ret;
		options.filters = filters;
	}
	switch (route->kind) {
	case BCI_PAGE_INDEX:
		ret = bci_pages_index(store, data_dir, &r->body, r->err, sizeof(r->err));
		break;
	case BCI_PAGE_BUILD:
		ret = bci_pages_matrix(store, route->build, &options, r->matrix, &r->body, r->err,
				       sizeof(r->err));
		break;
	case BCI_PAGE_RESULT:
		ret = bci_pages_result(store, data_dir, route->machine, route->run_id, route->test,
				       &r->body, r->err, sizeof(r->err));
		break;
	case BCI_PAGE_HISTORY:
		ret = bci_pages_history(store, route->test, &r->body, r->err, sizeof(r->err));
		break;
	case BCI_PAGE_SUSPEND:
		ret = bci_pages_suspend(store, route->machine, &r->body, r->err, sizeof(r->err));
		break;
	case BCI_PAGE_BISECT:
		ret = bci_pages_bisect(store, route->build, &r->body, r->err, sizeof(r->err));
		break;
	case BCI_PAGE_METRICS:
	case BCI_PAGE_METRICS_JSON:
		ret = metrics_render(store, r, &options);
		break;
	case BCI_PAGE_REFUSED:
		ret = bci_pages_refused(data_dir, &r->body, r->err, sizeof(r->err));
		break;
	case BCI_PAGE_REFUSED_JSON:
		ret = refused_render(data_dir, r);
		break;
	case BCI_PAGE_MACHINE:
	case BCI_PAGE_MACHINE_JSON:
	case BCI_PAGE_RUN:
	case BCI_PAGE_RUN_JSON:
		ret = serve_machine_page(store, data_dir, route->machine,
					 route->kind == BCI_PAGE_RUN || route->kind == BCI_PAGE_RUN_JSON ?
					 route->run_id : NULL, r->page, r->json, &r->body, r->err,
					 sizeof(r->err));
		r->bad_request = ret == -EINVAL;
		break;
	}
	bci_filters_free(filters);
	return ret;
}

/* An error as the page's kind has them: a small page, or {"error": ...}. */
static void answer_error(struct bci_page_answer *a, int status, bool json, const char *why)
{
	struct bci_str b = { 0 };

	a->status = status;
	snprintf(a->note, sizeof(a->note), "%s", why);
	if (json) {
		/* The JSON writer of lib/ (the one home of that format), into memory. */
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		struct bci_jsonw w;

		if (f) {
			bci_jsonw_init(&w, f, 0);
			bci_jsonw_object_begin(&w);
			bci_jsonw_key(&w, "error");
			bci_jsonw_string(&w, why);
			bci_jsonw_object_end(&w);
			bci_jsonw_finish(&w);
			if (!fclose(f) && text)
				bci_str_append(&b, text, len);
			free(text);
		}
		a->content_type = "application/json";
	} else {
		bci_str_appendf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%d"
				   "</title></head><body><h1>%d</h1><p>", status, status);
		bci_html_escape_str(&b, why);
		bci_str_appendf(&b, "</p><p><a href=\"/\">builds</a></p></body></html>\n");
		a->content_type = "text/html; charset=utf-8";
	}
	a->len = b.len;
	a->body = bci_str_steal(&b);
	if (!a->body)
		a->len = 0;
}

/* A query value in the cache's key: absent and empty are the same. */
static const char *key_value(const char *value)
{
	return value ? value : "";
}

/* The page's answer, its matrix query parsed (a BCI_PAGE_BUILD's). */
static void answer(struct bci_serve_pages *pages, const char *url, const struct bci_page_query *q,
		   struct bci_page_route *route, struct render *r, struct bci_page_answer *a);

void bci_serve_pages_answer(struct bci_serve_pages *pages, const char *method, const char *url,
			    const struct bci_page_query *query, struct bci_page_answer *a)
{
	static const struct bci_page_query none = { 0 };
	const struct bci_page_query *q = query ? query : &none;
	struct bci_page_route route;
	struct bci_matrix_query matrix;
	struct render r = { .route = &route, .from = q->from, .to = q->to, .page = q->page };
	char why[300];
	int status;

	memset(a, 0, sizeof(*a));
	status = bci_serve_pages_route(method, url, &route, why, sizeof(why));
	r.json = !strncmp(url, "/api/v1/", 8);
	if (status) {
		answer_error(a, status, r.json, why);
		return;
	}
	if (route.kind != BCI_PAGE_BUILD) {
		answer(pages, url, q, &route, &r, a);
		return;
	}
	if (bci_matrix_query_parse(q->test, q->status, q->page, q->per_page, &matrix, why,
				   sizeof(why)) < 0) {
		answer_error(a, 400, false, why);
	} else {
		r.matrix = &matrix;
		answer(pages, url, q, &route, &r, a);
	}
	bci_matrix_query_release(&matrix);
}

static void answer(struct bci_serve_pages *pages, const char *url, const struct bci_page_query *q,
		   struct bci_page_route *route, struct render *r, struct bci_page_answer *a)
{
	unsigned long generation;
	char *key;
	int ret;
	bool fresh;

	if (asprintf(&key, "%s?from=%s&to=%s&test=%s&status=%s&page=%s&per_page=%s", url,
		     key_value(q->from), key_value(q->to), key_value(q->test), key_value(q->status),
		     key_value(q->page), key_value(q->per_page)) < 0) {
		answer_error(a, 500, r->json, "out of memory");
		return;
	}
	generation = bci_ingest_call_generation(pages->ingest);
	/* A refusal changes no generation: its pages are read afresh (the front page within seconds). */
	fresh = route->kind == BCI_PAGE_REFUSED || route->kind == BCI_PAGE_REFUSED_JSON;
	if (!fresh && cache_get(pages, key, generation, a)) {
		snprintf(a->note, sizeof(a->note), "page, cached");
		free(key);
		return;
	}
	ret = bci_ingest_call_with_store(pages->ingest, render, r);
	if (ret < 0) {
		answer_error(a, r->bad_request ? 400 : ret == -ENOENT ? 404 : 500, r->json,
			     ret == -ENOMEM ? "out of memory" : r->err);
		bci_str_free(&r->body);
		free(key);
		return;
	}
	a->status = 200;
	a->content_type = r->json ? "application/json" : "text/html; charset=utf-8";
	a->len = r->body.len;
	a->body = bci_str_steal(&r->body);
	snprintf(a->note, sizeof(a->note), "page, %zu bytes", a->len);
	if (!a->body)
		answer_error(a, 500, r->json, "out of memory");
	else if (!fresh)
		cache_put(pages, key, generation, a);
	free(key);
}
