// SPDX-License-Identifier: MIT
/*
 * The matrix page of a build (report.h): machines across, tests down, one
 * colour per status, each change against the baseline marked by its verdict
 * (a thick border, its transition in the cell's title), counts per machine.
 * A static page filters its rows with a few lines of script; a served one
 * (a view with a query) is one page of the rows its query selects, the
 * changed first, its filters a form the server answers, with links between
 * the pages (report.h, struct bci_matrix_query). Its cells link to the
 * static result pages (html_write.c) or to serve's (BCI_HTML_SERVED, or a
 * results URL). Every name goes through bci_html_escape(), every name in a
 * link through bci_html_url_escape().
 */
#include "matrix.h"
#include "../names.h"
#include "strv.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends a string literal (its length known at compile time). */
#define STR_LITERAL(b, literal) bci_str_append((b), (literal), sizeof(literal) - 1)

/* The CSS class marking a change's cell (bci_html_style). */
static const char *const verdict_classes[] = {
	[BCI_VERDICT_NEW] = "new", [BCI_VERDICT_KNOWN] = "known", [BCI_VERDICT_FLAKY] = "flaky",
	[BCI_VERDICT_FIXED] = "fixed", [BCI_VERDICT_WARNING] = "warning",
	[BCI_VERDICT_NEW_TEST] = "newtest", [BCI_VERDICT_NOT_RUN] = "notrun",
};

/*
 * The filters: a test regex and a status (or "changed": any cell a change
 * marks), typed or given as ?test=&status= in the page's URL (so a link
 * can carry a filtered view); rows that do not match get `hidden`. The
 * page is whole without it.
 */
static const char filter_script[] =
	"<script>\n"
	"(function(){\n"
	"var q=new URLSearchParams(location.search),t=document.getElementById('f-test'),"
	"s=document.getElementById('f-status'),n=document.getElementById('f-shown');\n"
	"function apply(){var re=null,shown=0;try{re=t.value?new RegExp(t.value):null;"
	"t.classList.remove('bad')}catch(e){t.classList.add('bad')}\n"
	"document.querySelectorAll('tr.r').forEach(function(r){var ok=!re||re.test(r.cells[0].textContent);\n"
	"if(ok&&s.value){ok=false;for(var i=1;i<r.cells.length;i++){var c=r.cells[i].classList;"
	"if(s.value==='changed'?c.length>1:c.contains(s.value))ok=true}}\n"
	"r.hidden=!ok;if(ok)shown++});n.textContent=shown}\n"
	"t.value=q.get('test')||'';s.value=q.get('status')||'';\n"
	"t.addEventListener('input',apply);s.addEventListener('change',apply);apply()})();\n"
	"</script>\n";

/* How much of the matrix is kept before it goes to the view's stream. */
#define MATRIX_FLUSH (256 << 10)

static int matrix_flush(struct bci_str *b, FILE *stream)
{
	if (!b->data)
		return -ENOMEM;
	if (b->len && fwrite(b->data, 1, b->len, stream) != b->len)
		return errno ? -errno : -EIO;
	bci_str_reset(b);
	return 0;
}

/* ---- a served matrix's query ---- */

/* A decimal number from 1 to @max, nothing else. */
static bool count_parse(const char *s, size_t max, size_t *out)
{
	size_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (max - (size_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (size_t)(*s - '0');
	}
	*out = v;
	return v >= 1;
}

/*
 * Whether @re is a regex any reader may have the server compile and run:
 * glibc's regcomp() copies the tree under each '+' and {m,n} (a few dozen
 * '+' take gigabytes), and a back-reference makes regexec() backtrack. A
 * test filter needs none of that.
 */
#define TEST_REGEX_MAX 256
#define TEST_REGEX_PLUS_MAX 8
static bool test_regex_tame(const char *re)
{
	size_t plus = 0;

	if (strlen(re) > TEST_REGEX_MAX || strchr(re, '{'))
		return false;
	for (const char *p = re; *p; p++) {
		if (*p == '\\' && p[1] >= '0' && p[1] <= '9')
			return false;
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '+')
			plus++;
	}
	return plus <= TEST_REGEX_PLUS_MAX;
}

int bci_matrix_query_parse(const char *test, const char *status, const char *page,
			   const char *per_page, struct bci_matrix_query *q, char *err,
			   size_t err_size)
{
	int code;

	memset(q, 0, sizeof(*q));
	q->status = -1;
	q->page = 1;
	q->per_page = BCI_MATRIX_PER_PAGE;
	q->test = strdup(test ? test : "");
	if (!q->test) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	if (!test_regex_tame(q->test)) {
		snprintf(err, err_size, "test=%.200s: the regex is too costly (at most %d bytes, %d"
			 " '+', no {m,n} and no back-reference)", q->test, TEST_REGEX_MAX,
			 TEST_REGEX_PLUS_MAX);
		free(q->test);
		q->test = NULL;
		return -EINVAL;
	}
	if (*q->test && (code = regcomp(&q->test_regex, q->test, REG_EXTENDED | REG_NOSUB))) {
		char why[128];

		regerror(code, &q->test_regex, why, sizeof(why));
		snprintf(err, err_size, "test=%.200s: not a POSIX extended regex: %s", q->test, why);
		free(q->test);
		q->test = NULL;
		return -EINVAL;
	}
	if (status && *status) {
		q->status = !strcmp(status, "changed") ? BCI_MATRIX_CHANGED : bci_status_parse(status);
		if (q->status < 0) {
			snprintf(err, err_size, "status=%.64s: not a status (pass, fail, ...) or changed",
				 status);
			return -EINVAL;
		}
	}
	if (page && *page && !count_parse(page, 1000000000, &q->page)) {
		snprintf(err, err_size, "page=%.64s: not a page number (1, 2, ...)", page);
		return -EINVAL;
	}
	if (per_page && *per_page && strcmp(per_page, "all") &&
	    !count_parse(per_page, BCI_MATRIX_PER_PAGE_MAX, &q->per_page)) {
		snprintf(err, err_size, "per_page=%.64s: not 1 to %d tests, or all", per_page,
			 BCI_MATRIX_PER_PAGE_MAX);
		return -EINVAL;
	}
	if (per_page && !strcmp(per_page, "all"))
		q->per_page = 0;
	return 0;
}

void bci_matrix_query_release(struct bci_matrix_query *q)
{
	if (q->test && *q->test)
		regfree(&q->test_regex);
	free(q->test);
	q->test = NULL;
}

/* A row's place: its most telling change's verdict (report.h's order), after them the unchanged. */
#define ROW_UNCHANGED (BCI_VERDICT_NOT_RUN + 1)

/*
 * The rows @q selects, in the order they are shown, into *@rows (@n_rows):
 * by rank, then by name (the matrix's order of tests) within a rank.
 */
static int rows_select(const struct bci_report *r, const struct bci_matrix *m,
		       const struct bci_matrix_query *q, size_t **rows, size_t *n_rows)
{
	unsigned char *rank = malloc(m->n_tests + 1);
	size_t *out = malloc((m->n_tests + 1) * sizeof(*out)), n = 0;

	if (!rank || !out) {
		free(rank);
		free(out);
		return -ENOMEM;
	}
	for (size_t t = 0; t < m->n_tests; t++) {
		const struct bci_matrix_cell *row = &m->cells[t * m->n_machines];
		bool wanted = q->status < 0;

		rank[t] = ROW_UNCHANGED;
		for (size_t j = 0; j < m->n_machines; j++) {
			if (row[j].change >= 0 && r->changes[row[j].change].verdict < rank[t])
				rank[t] = (unsigned char)r->changes[row[j].change].verdict;
			if (q->status == BCI_MATRIX_CHANGED ? row[j].change >= 0 :
			    row[j].status >= 0 && row[j].status == q->status)
				wanted = true;
		}
		if (wanted && *q->test && regexec(&q->test_regex, m->tests[t], 0, NULL, 0))
			wanted = false;
		if (!wanted)
			rank[t] = UCHAR_MAX;
	}
	for (unsigned k = 0; k <= ROW_UNCHANGED; k++)
		for (size_t t = 0; t < m->n_tests; t++)
			if (rank[t] == k)
				out[n++] = t;
	free(rank);
	*rows = out;
	*n_rows = n;
	return 0;
}

/* The URL of page @page of the served matrix with @q's filters ("&" as HTML has it). */
static void page_url(struct bci_str *b, const char *build, const struct bci_matrix_query *q,
		     size_t page, size_t per_page)
{
	STR_LITERAL(b, "/builds/");
	bci_html_url_escape(b, build);
	STR_LITERAL(b, "?test=");
	bci_html_url_escape(b, q->test);
	STR_LITERAL(b, "&amp;status=");
	if (q->status >= 0)
		bci_str_appendf(b, "%s", q->status == BCI_MATRIX_CHANGED ? "changed" :
				bci_status_name(q->status));
	if (per_page)
		bci_str_appendf(b, "&amp;page=%zu&amp;per_page=%zu", page, per_page);
	else
		STR_LITERAL(b, "&amp;per_page=all");
}

/* One link of the pages' line: @rel for the browser, @text to read. */
static void page_link(struct bci_str *b, const char *build, const struct bci_matrix_query *q,
		      size_t page, size_t per_page, const char *rel, const char *text)
{
	bci_str_appendf(b, " <a rel=\"%s\" href=\"", rel);
	page_url(b, build, q, page, per_page);
	bci_str_appendf(b, "\">%s</a>", text);
}

/* The form of a served matrix's filters (answered by the server) and the links between its pages. */
static void served_filters(struct bci_str *b, const struct bci_report *r,
			   const struct bci_matrix *m, const struct bci_matrix_query *q,
			   size_t n_rows, size_t page, size_t pages, size_t first, size_t shown)
{
	STR_LITERAL(b, "<form class=\"filters\" method=\"get\">tests matching <input id=\"f-test\""
		       " name=\"test\" size=\"30\" placeholder=\"regex\" value=\"");
	bci_html_escape_str(b, q->test);
	STR_LITERAL(b, "\"> with a cell <select id=\"f-status\" name=\"status\">"
		       "<option value=\"\">any</option>");
	bci_str_appendf(b, "<option value=\"changed\"%s>changed</option>",
			q->status == BCI_MATRIX_CHANGED ? " selected" : "");
	for (int s = 0; s < BCI_STATUS_COUNT; s++)
		bci_str_appendf(b, "<option value=\"%s\"%s>%s</option>", bci_status_name(s),
				q->status == s ? " selected" : "", bci_status_name(s));
	STR_LITERAL(b, "</select> ");
	if (q->per_page)
		bci_str_appendf(b, "<input type=\"hidden\" name=\"per_page\" value=\"%zu\">",
				q->per_page);
	else
		STR_LITERAL(b, "<input type=\"hidden\" name=\"per_page\" value=\"all\">");
	bci_str_appendf(b, "<button>show</button></form>\n<p class=\"pages\"><span id=\"f-shown\">"
			"%zu</span> of %zu tests match, changed first; ", n_rows, m->n_tests);
	if (shown)
		bci_str_appendf(b, "rows %zu to %zu, page %zu of %zu.", first + 1, first + shown,
				page, pages);
	else
		STR_LITERAL(b, "no row to show.");
	if (page > 1) {
		page_link(b, r->build, q, 1, q->per_page, "first", "first");
		page_link(b, r->build, q, page - 1, q->per_page, "prev", "previous");
	}
	if (page < pages) {
		page_link(b, r->build, q, page + 1, q->per_page, "next", "next");
		page_link(b, r->build, q, pages, q->per_page, "last", "last");
	}
	if (q->per_page && pages > 1)
		page_link(b, r->build, q, 1, 0, "alternate", "all on one page");
	else if (!q->per_page && n_rows > BCI_MATRIX_PER_PAGE)
		page_link(b, r->build, q, 1, BCI_MATRIX_PER_PAGE, "alternate", "in pages");
	STR_LITERAL(b, "</p>\n");
}

/* ---- the page ---- */

int bci_html_matrix(const struct bci_report *r, const struct bci_matrix_view *view,
		    enum bci_html_links links, struct bci_str *b)
{
	const struct bci_matrix_query *q = view->query;
	size_t *rows = NULL, n_rows = view->matrix->n_tests, first = 0, shown = n_rows;
	const struct bci_matrix *m = view->matrix;
	struct bci_str *prefixes, test_link = { 0 };
	int served, ret = 0;
	bool based;

	/*
	 * A static page whose cells link to serve: its links (one a cell) are
	 * relative to serve's address, said once in <base>, not in every cell.
	 */
	based = view->results_url && links != BCI_HTML_SERVED;
	bci_str_appendf(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
	bci_html_escape_str(b, r->build);
	bci_str_appendf(b, "</title>\n");
	if (based) {
		size_t url_len = strlen(view->results_url);

		STR_LITERAL(b, "<base href=\"");
		bci_html_escape_str(b, view->results_url);
		if (!url_len || view->results_url[url_len - 1] != '/')
			STR_LITERAL(b, "/");
		STR_LITERAL(b, "\">\n");
	}
	bci_str_appendf(b, "%s</head><body>\n", bci_html_style);
	if (links == BCI_HTML_SERVED)
		bci_str_appendf(b, "<p><a href=\"/\">builds</a> · <a href=\"/metrics\">metrics</a></p>\n");
	bci_str_appendf(b, "<h1>");
	bci_html_escape_str(b, r->build);
	bci_str_appendf(b, ": <span class=\"%s\">%s</span></h1>\n<p>",
			bci_report_failed(r) ? "fail" : "pass",
			bci_report_failed(r) ? "FAILURE" : "SUCCESS");
	if (r->series_title) {
		bci_html_escape_str(b, r->series_title);
		bci_str_appendf(b, "<br>");
	}
	bci_str_appendf(b, "tree ");
	bci_html_escape_str(b, r->tree);
	bci_str_appendf(b, ", commit ");
	bci_html_escape_str(b, r->commit);
	bci_str_appendf(b, ", %s tier; baseline: the last %d runs of ", r->tier, r->window);
	bci_html_escape_str(b, r->base_tree);
	bci_str_appendf(b, "<br>%ld possible new issues, %ld known issues, %ld flaky, %ld fixed,"
			   " %ld warnings</p>\n", r->counts[BCI_VERDICT_NEW],
			   r->counts[BCI_VERDICT_KNOWN], r->counts[BCI_VERDICT_FLAKY],
			   r->counts[BCI_VERDICT_FIXED], r->counts[BCI_VERDICT_WARNING]);
	if (view->stages && bci_stages_html(b, view->stages, bci_metrics_objective("fast")) < 0)
		return -ENOMEM;
	if (q) {
		size_t per, pages, page;

		if (rows_select(r, m, q, &rows, &n_rows) < 0)
			return -ENOMEM;
		per = q->per_page ? q->per_page : n_rows ? n_rows : 1;
		pages = n_rows ? (n_rows + per - 1) / per : 1;
		page = q->page < pages ? q->page : pages;
		first = (page - 1) * per;
		shown = n_rows - first < per ? n_rows - first : per;
		served_filters(b, r, m, q, n_rows, page, pages, first, shown);
	} else {
		bci_str_appendf(b, "<form class=\"filters\" onsubmit=\"return false\">tests matching"
				   " <input id=\"f-test\" size=\"30\" placeholder=\"regex\"> with a cell"
				   " <select id=\"f-status\"><option value=\"\">any</option>"
				   "<option value=\"changed\">changed</option>");
		for (int s = 0; s < BCI_STATUS_COUNT; s++)
			bci_str_appendf(b, "<option value=\"%s\">%s</option>", bci_status_name(s),
					bci_status_name(s));
		bci_str_appendf(b, "</select> <span id=\"f-shown\">%zu</span> of %zu tests shown</form>\n",
				m->n_tests, m->n_tests);
	}
	bci_str_appendf(b, "<table id=\"matrix\">\n<tr><th>test</th>");
	for (size_t j = 0; j < m->n_machines; j++) {
		bci_str_appendf(b, "<th>");
		if (links == BCI_HTML_SERVED) {
			bci_str_appendf(b, "<a href=\"/machines/");
			bci_html_url_escape(b, m->machines[j]);
			bci_str_appendf(b, "\">");
		}
		bci_html_escape_str(b, m->machines[j]);
		bci_str_appendf(b, links == BCI_HTML_SERVED ? "</a></th>" : "</th>");
	}
	bci_str_appendf(b, "</tr>\n<tr><th>counts</th>");
	for (size_t j = 0; j < m->n_machines; j++) {
		long counts[BCI_STATUS_COUNT] = { 0 };

		for (size_t t = 0; t < m->n_tests; t++)
			if (m->cells[t * m->n_machines + j].status >= 0)
				counts[m->cells[t * m->n_machines + j].status]++;
		bci_str_appendf(b, "<td>");
		for (int s = 0; s < BCI_STATUS_COUNT; s++)
			if (counts[s])
				bci_str_appendf(b, "<span class=\"%s\">%s %ld</span> ",
						   bci_status_name(s), bci_status_name(s), counts[s]);
		bci_str_appendf(b, "</td>");
	}
	bci_str_appendf(b, "</tr>\n");
	served = links == BCI_HTML_SERVED || view->results_url;
	/* 400k cells: each run's link prefix and each row's test in a link are escaped once. */
	prefixes = calloc(m->n_runs + 1, sizeof(*prefixes));
	if (!prefixes) {
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n_runs; i++) {
		if (served) {
			if (based)
				STR_LITERAL(&prefixes[i], "machines/");
			else if (view->results_url)
				bci_html_escape_str(&prefixes[i], view->results_url);
			if (!based)
				STR_LITERAL(&prefixes[i], "/machines/");
			bci_html_url_escape(&prefixes[i], m->runs[i].machine);
			STR_LITERAL(&prefixes[i], "/runs/");
			bci_html_url_escape(&prefixes[i], m->runs[i].run_id);
			STR_LITERAL(&prefixes[i], "/results/");
		} else {
			char machine[256];

			bci_name_folder(m->runs[i].machine, machine, sizeof(machine));
			bci_html_url_escape(&prefixes[i], machine);
			STR_LITERAL(&prefixes[i], "/");
		}
		if (!prefixes[i].data)
			ret = -ENOMEM;
	}
	for (size_t k = first; k < first + shown && ret >= 0; k++) {
		size_t t = rows ? rows[k] : k;

		bci_str_reset(&test_link);
		if (served)
			bci_html_url_escape(&test_link, m->tests[t]);
		else
			bci_str_appendf(&test_link, "%zu.html", t);
		STR_LITERAL(b, "<tr class=\"r\"><td class=\"t\">");
		if (links == BCI_HTML_SERVED) {
			STR_LITERAL(b, "<a href=\"/tests/");
			bci_str_append(b, test_link.data, test_link.len);
			STR_LITERAL(b, "\">");
		}
		bci_html_escape_str(b, m->tests[t]);
		if (links == BCI_HTML_SERVED)
			STR_LITERAL(b, "</a></td>");
		else
			STR_LITERAL(b, "</td>");
		for (size_t j = 0; j < m->n_machines; j++) {
			const struct bci_matrix_cell *c = &m->cells[t * m->n_machines + j];
			const char *status;

			if (c->status < 0) {
				STR_LITERAL(b, "<td></td>");
				continue;
			}
			status = bci_status_name(c->status);
			STR_LITERAL(b, "<td class=\"");
			bci_str_append(b, status, strlen(status));
			if (c->change >= 0) {
				const struct bci_report_change *ch = &r->changes[c->change];

				bci_str_appendf(b, " %s\" title=\"%s -> %s: %s",
						   verdict_classes[ch->verdict],
						   bci_status_label(ch->from), bci_status_label(ch->to),
						   bci_verdict_name(ch->verdict));
			}
			STR_LITERAL(b, "\"><a href=\"");
			bci_str_append(b, prefixes[c->run].data, prefixes[c->run].len);
			bci_str_append(b, test_link.data, test_link.len);
			STR_LITERAL(b, "\">");
			bci_str_append(b, status, strlen(status));
			STR_LITERAL(b, "</a></td>");
		}
		STR_LITERAL(b, "</tr>\n");
		if (!test_link.data)
			ret = -ENOMEM;
		if (ret >= 0 && view->stream && b->len >= MATRIX_FLUSH)
			ret = matrix_flush(b, view->stream);
	}
	for (size_t i = 0; i < m->n_runs; i++)
		bci_str_free(&prefixes[i]);
	free(prefixes);
	free(rows);
	bci_str_free(&test_link);
	if (ret < 0)
		return ret;
	bci_str_appendf(b, "</table>\n%s</body></html>\n", q ? "" : filter_script);
	if (!b->data)
		return -ENOMEM;
	return view->stream ? matrix_flush(b, view->stream) : 0;
}
