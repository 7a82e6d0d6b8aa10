// SPDX-License-Identifier: MIT
/*
 * The static test matrix of a build: DIR/BUILD/index.html, machines across,
 * tests down, one colour per status, each change against the baseline
 * marked by its verdict (a thick border, its transition in the cell's
 * title), counts per machine; and one page per result,
 * DIR/BUILD/MACHINE/N.html (N: the test's row), with its out/err/dmesg,
 * unless the cells link to serve's result pages instead (a results URL:
 * 400k results a day are 400k files, whose writing alone costs more than
 * the whole report; serve renders one on request in milliseconds).
 *
 * Escaping: every byte that comes from a test or the store goes through
 * bci_html_escape(): the five HTML specials as entities, control bytes as their
 * visible Control Pictures (U+2400...), bytes that are not well-formed UTF-8
 * as the Latin-1 character of that value, so no output can open a tag,
 * close the <pre>, or break the page's encoding; names in links are
 * percent-encoded (bci_html_url_escape()). Plain HTML and CSS, and a few
 * lines of script for the matrix's filters only. Every file is written to a
 * temporary and renamed. The same matrix is what serve shows
 * (bci_html_matrix() with BCI_HTML_SERVED links; pages.c has the others).
 */
#include "report.h"
#include "row_guess.h"
#include "../store/store.h"
#include "fsutil.h"
#include "hash.h"
#include "strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Appends a string literal (its length known at compile time). */
#define STR_LITERAL(b, literal) bci_str_append((b), (literal), sizeof(literal) - 1)

/* How much of one log a result page shows. */
#define HTML_LOG_MAX (1 << 20)

static int utf8_length(const unsigned char *s, size_t left)
{
	int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;

	if (!n || (size_t)n > left)
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void bci_html_escape(struct bci_str *b, const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];
		int n;

		if (c == '&')
			bci_str_append(b, "&amp;", 5);
		else if (c == '<')
			bci_str_append(b, "&lt;", 4);
		else if (c == '>')
			bci_str_append(b, "&gt;", 4);
		else if (c == '"')
			bci_str_append(b, "&quot;", 6);
		else if (c == '\'')
			bci_str_append(b, "&#39;", 5);
		else if (c == '\n' || c == '\t')
			bci_str_append(b, (const char *)&s[i], 1);
		else if (c < 0x20 || c == 0x7f)
			bci_str_appendf(b, "&#x%X;", c == 0x7f ? 0x2421 : 0x2400 + c);
		else if (c < 0x80)
			bci_str_append(b, (const char *)&s[i], 1);
		else if ((n = utf8_length(s + i, len - i))) {
			bci_str_append(b, (const char *)&s[i], n);
			i += n - 1;
		} else {
			bci_str_appendf(b, "&#x%X;", c);
		}
	}
}

void bci_html_escape_str(struct bci_str *b, const char *s)
{
	bci_html_escape(b, s ? s : "", s ? strlen(s) : 0);
}

void bci_html_url_escape(struct bci_str *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~@", c)) {
			bci_str_append(b, s, 1);
		} else {
			char esc[3] = { '%', hex[c >> 4], hex[c & 15] };

			bci_str_append(b, esc, 3);
		}
	}
}

/* ---- the build's results: tests x machines ---- */

struct cell {
	int status;		/* -1: not run on that machine */
	int run;		/* index into runs */
	int change;		/* index into the report's changes, -1: none */
	int job;		/* the result's job (its logs' folder in the run) */
};

struct matrix_run {
	int64_t key;
	char *machine, *run_id, *digest, *archive_path, *archive_root;
	size_t machine_index;
};

/* One result as read, before the tests are sorted: its test by first-seen index. */
struct matrix_entry {
	unsigned test;
	int run, status, job;
};

struct matrix {
	char **tests;		/* sorted, each once */
	size_t n_tests, cap_tests;
	char **machines;
	size_t n_machines;
	struct matrix_run *runs;
	size_t n_runs;
	struct cell *cells;	/* n_tests x n_machines, filled after the tests are known */
	/* While reading: test names interned (open addressing, slots hold index + 1). */
	unsigned *slots;
	size_t n_slots;
	struct bci_row_guess guess;	/* the test of each row of the last run read */
	struct matrix_entry *entries;
	size_t n_entries, cap_entries;
	/* Results handed by the report's threads (bci_html_matrix_seen) are added under it. */
	pthread_mutex_t lock;
	bool has_lock;
	char *build;
};

static int text_copy(char **to, const char *from)
{
	*to = strdup(from ? from : "");
	return *to ? 0 : -ENOMEM;
}

static int run_add(const struct bci_store_run *run, void *ctx)
{
	struct matrix *m = ctx;
	struct matrix_run *r;
	void *grown = realloc(m->runs, (m->n_runs + 1) * sizeof(*m->runs));

	if (!grown)
		return -ENOMEM;
	m->runs = grown;
	r = &m->runs[m->n_runs++];
	*r = (struct matrix_run){ .key = run->key };
	if (text_copy(&r->machine, run->machine) || text_copy(&r->run_id, run->run_id) ||
	    text_copy(&r->digest, run->digest) || text_copy(&r->archive_path, run->archive_path) ||
	    text_copy(&r->archive_root, run->archive_root))
		return -ENOMEM;
	if (!m->n_machines || strcmp(m->machines[m->n_machines - 1], run->machine)) {
		grown = realloc(m->machines, (m->n_machines + 1) * sizeof(*m->machines));
		if (!grown)
			return -ENOMEM;
		m->machines = grown;
		m->machines[m->n_machines] = strdup(run->machine);
		if (!m->machines[m->n_machines++])
			return -ENOMEM;
	}
	r->machine_index = m->n_machines - 1;
	return 0;
}

static int slots_grow(struct matrix *m)
{
	size_t n = m->n_slots ? m->n_slots * 2 : 4096;
	unsigned *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t t = 0; t < m->n_tests; t++) {
		size_t i = bci_hash_str(m->tests[t]) & (n - 1);

		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = (unsigned)t + 1;
	}
	free(m->slots);
	m->slots = slots;
	m->n_slots = n;
	return 0;
}

static long test_intern_hashed(struct matrix *m, const char *name);

/* The first-seen index of test @name, row @row of a run: the last run's test there first. */
static long test_intern(struct matrix *m, const char *name, size_t row)
{
	long t = bci_row_guess_get(&m->guess, row);

	if (t >= 0 && !strcmp(m->tests[t], name))
		return t;
	t = test_intern_hashed(m, name);
	if (t >= 0 && bci_row_guess_set(&m->guess, row, t) < 0)
		return -ENOMEM;
	return t;
}

/* The first-seen index of test @name, added when new: every run holds the same names. */
static long test_intern_hashed(struct matrix *m, const char *name)
{
	size_t i;

	if ((m->n_tests + 1) * 2 > m->n_slots && slots_grow(m) < 0)
		return -ENOMEM;
	for (i = bci_hash_str(name) & (m->n_slots - 1); m->slots[i]; i = (i + 1) & (m->n_slots - 1))
		if (!strcmp(m->tests[m->slots[i] - 1], name))
			return m->slots[i] - 1;
	if (m->n_tests == m->cap_tests) {
		size_t cap = m->cap_tests ? m->cap_tests * 2 : 256;
		char **grown = realloc(m->tests, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		m->tests = grown;
		m->cap_tests = cap;
	}
	m->tests[m->n_tests] = strdup(name);
	if (!m->tests[m->n_tests])
		return -ENOMEM;
	m->slots[i] = (unsigned)++m->n_tests;
	return (long)m->n_tests - 1;
}

struct read_ctx {
	struct matrix *m;
	int run;
	size_t row;
};

/*
 * The result of test @name, row @row of run @run (an index into m->runs),
 * kept until the tests are sorted.
 */
static int entry_put(struct matrix *m, const char *name, size_t row, int run, int status, int job)
{
	long t = test_intern(m, name, row);

	if (t < 0)
		return (int)t;
	if (m->n_entries == m->cap_entries) {
		size_t cap = m->cap_entries ? m->cap_entries * 2 : 16384;
		struct matrix_entry *grown = realloc(m->entries, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		m->entries = grown;
		m->cap_entries = cap;
	}
	m->entries[m->n_entries++] = (struct matrix_entry){
		.test = (unsigned)t, .run = run, .status = status, .job = job,
	};
	return 0;
}

static int entry_add(const struct bci_store_result *result, void *ctx)
{
	struct read_ctx *r = ctx;

	return entry_put(r->m, result->name, r->row++, r->run, bci_status_parse(result->result),
			 result->job);
}

static int name_order(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static long test_index(const struct matrix *m, const char *name)
{
	char *const *at = bsearch(&name, m->tests, m->n_tests, sizeof(*m->tests), name_order);

	return at ? at - m->tests : -1;
}

static void matrix_release(struct matrix *m)
{
	for (size_t i = 0; i < m->n_tests; i++)
		free(m->tests[i]);
	free(m->tests);
	for (size_t i = 0; i < m->n_machines; i++)
		free(m->machines[i]);
	free(m->machines);
	for (size_t i = 0; i < m->n_runs; i++) {
		free(m->runs[i].machine);
		free(m->runs[i].run_id);
		free(m->runs[i].digest);
		free(m->runs[i].archive_path);
		free(m->runs[i].archive_root);
	}
	free(m->runs);
	free(m->cells);
	free(m->slots);
	bci_row_guess_release(&m->guess);
	free(m->entries);
	free(m->build);
	if (m->has_lock)
		pthread_mutex_destroy(&m->lock);
}

/*
 * The cells, once every result is an entry: the names interned as they
 * came are sorted, and the cells filled from the entries (a few bytes a
 * result, so 400k results cost megabytes, not a second pass).
 */
static int matrix_cells(struct matrix *m, char *err, size_t err_size)
{
	unsigned *sorted_index = NULL;
	char **by_seen = NULL;
	int ret = 0;

	free(m->slots);
	m->slots = NULL;
	m->n_slots = 0;
	/* The tests are renumbered below: the rows' guesses would name others. */
	bci_row_guess_release(&m->guess);
	by_seen = malloc((m->n_tests + 1) * sizeof(*by_seen));
	sorted_index = malloc((m->n_tests + 1) * sizeof(*sorted_index));
	m->cells = malloc((m->n_tests * m->n_machines + 1) * sizeof(*m->cells));
	if (!by_seen || !sorted_index || !m->cells) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(by_seen, m->tests, m->n_tests * sizeof(*by_seen));
	qsort(m->tests, m->n_tests, sizeof(*m->tests), name_order);
	/* The sorted array holds the same pointers: each name's new place, by first-seen index. */
	for (size_t t = 0; t < m->n_tests; t++)
		sorted_index[t] = (unsigned)test_index(m, by_seen[t]);
	for (size_t i = 0; i < m->n_tests * m->n_machines; i++)
		m->cells[i] = (struct cell){ .status = -1, .run = -1, .change = -1, .job = -1 };
	for (size_t i = 0; i < m->n_entries; i++) {
		const struct matrix_entry *e = &m->entries[i];
		struct cell *c = &m->cells[sorted_index[e->test] * m->n_machines +
					   m->runs[e->run].machine_index];

		if (e->status < 0) {
			snprintf(err, err_size, "machine %s, run '%s': test %s has an unknown status",
				 m->runs[e->run].machine, m->runs[e->run].run_id, by_seen[e->test]);
			ret = -EPROTO;
			goto out;
		}
		/* A later run of the same machine replaces an earlier one's (as the report reads them). */
		*c = (struct cell){ .status = e->status, .run = e->run, .change = -1, .job = e->job };
	}
out:
	free(m->entries);
	m->entries = NULL;
	m->n_entries = m->cap_entries = 0;
	free(by_seen);
	free(sorted_index);
	return ret;
}

/* Each run's results read once, then the cells. */
static int matrix_load(struct bci_store *store, const char *build, struct matrix *m, char *err,
		       size_t err_size)
{
	int ret = bci_store_build_runs_each(store, build, run_add, m, err, err_size);

	for (size_t i = 0; i < m->n_runs && ret >= 0; i++) {
		struct read_ctx c = { .m = m, .run = (int)i };

		ret = bci_store_results_each_brief(store, m->runs[i].key, entry_add, &c, err,
						   err_size);
	}
	return ret < 0 ? ret : matrix_cells(m, err, err_size);
}

/* Each change of the report marked in its cell. */
static void matrix_mark(const struct bci_report *r, struct matrix *m)
{
	for (size_t i = 0; i < r->n_changes; i++) {
		long t = test_index(m, r->changes[i].test);

		for (size_t j = 0; t >= 0 && j < m->n_machines; j++)
			if (!strcmp(m->machines[j], r->changes[i].machine))
				m->cells[t * m->n_machines + j].change = (int)i;
	}
}

/* ---- pages ---- */

static const char *const verdict_names[] = {
	[BCI_VERDICT_NEW] = "possible new issue", [BCI_VERDICT_KNOWN] = "known issue",
	[BCI_VERDICT_FLAKY] = "flaky", [BCI_VERDICT_FIXED] = "fixed",
	[BCI_VERDICT_WARNING] = "warning", [BCI_VERDICT_NEW_TEST] = "new test",
	[BCI_VERDICT_NOT_RUN] = "not run",
};

static const char *const verdict_classes[] = {
	[BCI_VERDICT_NEW] = "new", [BCI_VERDICT_KNOWN] = "known", [BCI_VERDICT_FLAKY] = "flaky",
	[BCI_VERDICT_FIXED] = "fixed", [BCI_VERDICT_WARNING] = "warning",
	[BCI_VERDICT_NEW_TEST] = "newtest", [BCI_VERDICT_NOT_RUN] = "notrun",
};

const char bci_html_style[] =
	"<style>\n"
	"body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}\n"
	"td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}th{background:#eee}\n"
	"td.t{font-family:monospace;text-align:left}td a{color:inherit;text-decoration:none}\n"
	".pass{background:#9f9}.dmesg-warn{background:#fd6}.warn{background:#ff9}\n"
	".dmesg-fail{background:#f96}.fail{background:#f66}.crash{background:#c3c}\n"
	".timeout{background:#69f}.abort{background:#666;color:#fff}.incomplete{background:#936;color:#fff}\n"
	".skip{background:#ddd}.notrun{background:#fff;color:#999}\n"
	"td.new{outline:3px solid #c00;outline-offset:-3px}td.known{outline:2px dashed #06c;outline-offset:-2px}\n"
	"td.flaky{outline:2px dotted #960;outline-offset:-2px}td.fixed{outline:2px solid #080;outline-offset:-2px}\n"
	"pre{background:#f6f6f6;border:1px solid #ddd;padding:6px;white-space:pre-wrap}\n"
	"form.filters{margin:.5em 0}input.bad{background:#fcc}svg text{font-size:11px}\n"
	"</style>\n";

/*
 * A result page: written under a temporary name and renamed, so it is never
 * seen half-written, but not fsynced one by one (a build has a page per
 * result, 400k a day, and a page's fsync costs more than writing it):
 * bci_html_write() syncs them all at once before the matrix that links them
 * replaces the old one.
 */
static int result_page_write(const char *path, struct bci_str *b, char *err, size_t err_size)
{
	char tmp[PATH_MAX];
	int fd, ret;

	if (!b->data)
		return -ENOMEM;
	fd = bci_atomic_open(path, tmp, 0644);
	ret = fd < 0 ? fd : bci_write_all(fd, b->data, b->len);
	if (fd >= 0 && ret < 0) {
		bci_atomic_abort(fd, tmp);
	} else if (fd >= 0 && (close(fd) < 0 || rename(tmp, path) < 0)) {
		ret = -errno;
		unlink(tmp);
	}
	if (ret < 0)
		snprintf(err, err_size, "%s: %s", path, strerror(-ret));
	return ret;
}

/* One syncfs for every result page of @dir (see result_page_write()). */
static int pages_sync(const char *dir, char *err, size_t err_size)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (fd < 0 || syncfs(fd) < 0)
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (ret < 0)
		snprintf(err, err_size, "%s: %s", dir, strerror(-ret));
	return ret;
}

/* Appends a section with @text read from @fd (closed here; < 0: @why it is not available). */
void bci_html_file_section(struct bci_str *b, const char *title, int fd, const char *why)
{
	char *text = fd >= 0 ? malloc(HTML_LOG_MAX) : NULL;
	size_t len = 0;
	ssize_t got;

	bci_str_appendf(b, "<h2>");
	bci_html_escape_str(b, title);
	bci_str_appendf(b, "</h2>\n");
	if (fd < 0 || !text) {
		bci_str_appendf(b, "<p>not available: ");
		bci_html_escape_str(b, fd < 0 ? why : "out of memory");
		bci_str_appendf(b, "</p>\n");
		if (fd >= 0)
			close(fd);
		return;
	}
	while (len < HTML_LOG_MAX && (got = read(fd, text + len, HTML_LOG_MAX - len)) > 0)
		len += got;
	bci_str_append(b, "<pre>", 5);
	bci_html_escape(b, text, len);
	bci_str_append(b, "</pre>\n", 7);
	if (len == HTML_LOG_MAX && read(fd, text, 1) > 0)
		bci_str_appendf(b, "<p>(cut at %d bytes)</p>\n", HTML_LOG_MAX);
	close(fd);
	free(text);
}

void bci_html_log_section(struct bci_str *b, struct bci_store *store, const char *data_dir,
			  const char *machine, const char *run_id, const char *test, const char *which)
{
	char err[512] = "";
	int fd = bci_store_test_log_open(store, data_dir, machine, run_id, test, which, err,
					 sizeof(err));

	bci_html_file_section(b, which, fd, err);
}

static int result_page(const char *data_dir, const struct bci_report *r,
		       const struct matrix *m, size_t t, size_t j, const char *path, char *err,
		       size_t err_size)
{
	const struct cell *c = &m->cells[t * m->n_machines + j];
	const struct matrix_run *mr = &m->runs[c->run];
	/* What the store gave when the matrix was read: no query per page. */
	const struct bci_store_run run = {
		.machine = mr->machine, .run_id = mr->run_id, .digest = mr->digest,
		.archive_path = mr->archive_path, .archive_root = mr->archive_root,
	};
	const struct bci_store_result result = { .job = c->job, .name = m->tests[t] };
	struct bci_str b = { 0 };
	int ret;

	bci_str_appendf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
	bci_html_escape_str(&b, m->tests[t]);
	bci_str_appendf(&b, "</title>\n%s</head><body>\n<p><a href=\"../index.html\">matrix</a></p>\n<h1>", bci_html_style);
	bci_html_escape_str(&b, m->tests[t]);
	bci_str_appendf(&b, "</h1>\n<p>machine ");
	bci_html_escape_str(&b, m->machines[j]);
	bci_str_appendf(&b, ", run ");
	bci_html_escape_str(&b, m->runs[c->run].run_id);
	bci_str_appendf(&b, ": <span class=\"%s\">%s</span>", bci_status_name(c->status),
			   bci_status_label(c->status));
	if (c->change >= 0) {
		const struct bci_report_change *ch = &r->changes[c->change];

		bci_str_appendf(&b, " (baseline %s: %s", bci_status_label(ch->from),
				   verdict_names[ch->verdict]);
		if (ch->bug) {
			bci_str_appendf(&b, ", <a href=\"");
			bci_html_escape_str(&b, ch->bug);
			bci_str_appendf(&b, "\">");
			bci_html_escape_str(&b, ch->bug);
			bci_str_appendf(&b, "</a>");
		}
		bci_str_appendf(&b, ")");
	}
	bci_str_appendf(&b, "</p>\n");
	for (size_t i = 0; i < 3; i++) {
		static const char *const logs[] = { "out", "err", "dmesg" };
		char why[512] = "";
		int fd = bci_store_job_log_open(data_dir, &run, &result, logs[i], why, sizeof(why));

		bci_html_file_section(&b, logs[i], fd, why);
	}
	bci_str_appendf(&b, "</body></html>\n");
	ret = result_page_write(path, &b, err, err_size);
	bci_str_free(&b);
	return ret;
}

/* A folder name from @name: the store's names are free text. */
static void name_clean(const char *name, char *out, size_t size)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < size; i++)
		out[i] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_+=",
				name[i]) ? name[i] : '-';
	out[i] = '\0';
	if (!i || !strcmp(out, ".") || !strcmp(out, ".."))
		snprintf(out, size, "_%s", i ? out : "");
}

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

int bci_html_matrix(const struct bci_report *r, const struct bci_html_matrix_view *view,
		    enum bci_html_links links, struct bci_str *b)
{
	const struct matrix *m = view->matrix;
	struct bci_str *prefixes, test_link = { 0 };
	int served, ret = 0;
	bool based;

	/*
	 * A static page whose cells link to serve: its 400k links are relative to
	 * serve's address, said once (the page is a sixth smaller for a 21-byte one).
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
	bci_str_appendf(b, "<form class=\"filters\" onsubmit=\"return false\">tests matching"
			   " <input id=\"f-test\" size=\"30\" placeholder=\"regex\"> with a cell"
			   " <select id=\"f-status\"><option value=\"\">any</option>"
			   "<option value=\"changed\">changed</option>");
	for (int s = 0; s < BCI_STATUS_COUNT; s++)
		bci_str_appendf(b, "<option value=\"%s\">%s</option>", bci_status_name(s),
				bci_status_name(s));
	bci_str_appendf(b, "</select> <span id=\"f-shown\">%zu</span> of %zu tests shown</form>\n",
			m->n_tests, m->n_tests);
	bci_str_appendf(b, "<table id=\"matrix\">\n<tr><th>test</th>");
	for (size_t j = 0; j < m->n_machines; j++) {
		bci_str_appendf(b, "<th>");
		if (links == BCI_HTML_SERVED) {
			bci_str_appendf(b, "<a href=\"/machines/");
			bci_html_url_escape(b, m->machines[j]);
			bci_str_appendf(b, "/suspend\">");
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
	if (!prefixes)
		return -ENOMEM;
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

			name_clean(m->runs[i].machine, machine, sizeof(machine));
			bci_html_url_escape(&prefixes[i], machine);
			STR_LITERAL(&prefixes[i], "/");
		}
		if (!prefixes[i].data)
			ret = -ENOMEM;
	}
	for (size_t t = 0; t < m->n_tests && ret >= 0; t++) {

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
			const struct cell *c = &m->cells[t * m->n_machines + j];
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
						   verdict_names[ch->verdict]);
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
	bci_str_free(&test_link);
	if (ret < 0)
		return ret;
	bci_str_appendf(b, "</table>\n%s</body></html>\n", filter_script);
	if (!b->data)
		return -ENOMEM;
	return view->stream ? matrix_flush(b, view->stream) : 0;
}

/* The view's new, empty matrix (the view owns it, even when a later step fails); NULL: -ENOMEM. */
static struct matrix *view_matrix_new(struct bci_html_matrix_view *view)
{
	view->matrix = calloc(1, sizeof(*view->matrix));
	return view->matrix;
}

int bci_html_matrix_load(struct bci_store *store, const char *build,
			 struct bci_html_matrix_view *view, char *err, size_t err_size)
{
	struct matrix *m = view_matrix_new(view);
	int ret;

	if (!m)
		return -ENOMEM;
	ret = matrix_load(store, build, m, err, err_size);
	view->tests = m->n_tests;
	view->machines = m->n_machines;
	return ret;
}

int bci_html_matrix_begin(struct bci_store *store, const char *build,
			  struct bci_html_matrix_view *view, char *err, size_t err_size)
{
	struct matrix *m = view_matrix_new(view);
	int ret;

	if (!m || !(m->build = strdup(build)))
		return -ENOMEM;
	if (pthread_mutex_init(&m->lock, NULL))
		return -ENOMEM;
	m->has_lock = true;
	ret = bci_store_build_runs_each(store, build, run_add, m, err, err_size);
	return ret < 0 ? ret : 0;
}

/* The index in m->runs of the run keyed @key, @hint first; -1 if the matrix has no such run. */
static int run_index(const struct matrix *m, int64_t key, int hint)
{
	if (hint >= 0 && (size_t)hint < m->n_runs && m->runs[hint].key == key)
		return hint;
	for (size_t i = 0; i < m->n_runs; i++)
		if (m->runs[i].key == key)
			return (int)i;
	return -1;
}

int bci_html_matrix_seen(void *ctx, const struct bci_report_seen *rows, size_t n, char *err,
			 size_t err_size)
{
	struct bci_html_matrix_view *view = ctx;
	struct matrix *m = view->matrix;
	int run = -1, ret = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < n && ret >= 0; i++) {
		run = run_index(m, rows[i].run, run);
		if (run < 0) {
			snprintf(err, err_size, "build %s: a run was stored while its report was"
				 " made: make it again", m->build);
			ret = -EAGAIN;
			break;
		}
		ret = entry_put(m, rows[i].test, i, run, rows[i].status, rows[i].job);
	}
	pthread_mutex_unlock(&m->lock);
	return ret;
}

int bci_html_matrix_end(const struct bci_report *report, struct bci_html_matrix_view *view,
			char *err, size_t err_size)
{
	struct matrix *m = view->matrix;
	int ret = matrix_cells(m, err, err_size);

	view->tests = m->n_tests;
	view->machines = m->n_machines;
	if (ret >= 0)
		matrix_mark(report, m);
	return ret;
}

/* Tries of bci_html_matrix_report() when runs are stored while it reads. */
#define MATRIX_REPORT_TRIES 3

int bci_html_matrix_report(struct bci_store *store, const char *build,
			   const struct bci_report_options *options, struct bci_report **report,
			   struct bci_html_matrix_view *view, char *err, size_t err_size)
{
	struct bci_report_options with_matrix = *options;
	int ret = -EAGAIN;

	with_matrix.seen = bci_html_matrix_seen;
	with_matrix.seen_ctx = view;
	/* serve ingests while it renders: a run stored between the two readings is read again. */
	for (int i = 0; i < MATRIX_REPORT_TRIES && ret == -EAGAIN; i++) {
		bci_html_matrix_release(view);
		bci_report_free(*report);
		*report = NULL;
		ret = bci_html_matrix_begin(store, build, view, err, err_size);
		if (ret >= 0)
			ret = bci_report_build(store, build, &with_matrix, report, err, err_size);
		if (ret >= 0)
			ret = bci_html_matrix_end(*report, view, err, err_size);
	}
	return ret;
}

void bci_html_matrix_mark(const struct bci_report *report, struct bci_html_matrix_view *view)
{
	if (view->matrix && view->matrix->cells)
		matrix_mark(report, view->matrix);
}

int bci_html_matrix_read(struct bci_store *store, const struct bci_report *report,
			 struct bci_html_matrix_view *view, char *err, size_t err_size)
{
	int ret = bci_html_matrix_load(store, report->build, view, err, err_size);

	if (ret >= 0)
		bci_html_matrix_mark(report, view);
	return ret;
}

void bci_html_matrix_release(struct bci_html_matrix_view *view)
{
	if (view->matrix) {
		matrix_release(view->matrix);
		free(view->matrix);
	}
	view->matrix = NULL;
}

struct matrix_job {
	const struct bci_report *report;
	struct bci_html_matrix_view *view;
};

static int matrix_stream(FILE *out, const void *ctx, char *err, size_t err_size)
{
	const struct matrix_job *job = ctx;
	struct bci_str b = { 0 };
	int ret;

	job->view->stream = out;
	ret = bci_html_matrix(job->report, job->view, BCI_HTML_STATIC, &b);
	job->view->stream = NULL;
	bci_str_free(&b);
	if (ret < 0)
		snprintf(err, err_size, "the matrix: %s", strerror(-ret));
	return ret;
}

int bci_html_write(struct bci_store *store, const char *data_dir, const struct bci_report *r,
		   const char *dir, const char *results_url, char *err, size_t err_size)
{
	struct bci_html_matrix_view view = { 0 };
	int ret = bci_html_matrix_read(store, r, &view, err, err_size);

	if (ret < 0) {
		bci_html_matrix_release(&view);
		return ret;
	}
	return bci_html_write_view(data_dir, r, &view, dir, results_url, err, err_size);
}

int bci_html_write_view(const char *data_dir, const struct bci_report *r,
			struct bci_html_matrix_view *loaded, const char *dir,
			const char *results_url, char *err, size_t err_size)
{
	struct bci_html_matrix_view view = *loaded;
	struct matrix *m = view.matrix;
	char build_dir[PATH_MAX], path[2 * PATH_MAX], name[256];
	int ret;

	loaded->matrix = NULL;
	view.results_url = results_url;
	name_clean(r->build, name, sizeof(name));
	snprintf(build_dir, sizeof(build_dir), "%s/%s", dir, name);
	ret = bci_mkdir_p(build_dir, 0755);
	for (size_t j = 0; j < m->n_machines && ret >= 0 && !results_url; j++) {
		char machine[256];

		name_clean(m->machines[j], machine, sizeof(machine));
		snprintf(path, sizeof(path), "%s/%s", build_dir, machine);
		ret = bci_mkdir_p(path, 0755);
	}
	if (ret < 0) {
		snprintf(err, err_size, "%s: %s", build_dir, strerror(-ret));
		goto out;
	}
	for (size_t t = 0; t < m->n_tests && ret >= 0 && !results_url; t++)
		for (size_t j = 0; j < m->n_machines && ret >= 0; j++) {
			char machine[256];

			if (m->cells[t * m->n_machines + j].status < 0)
				continue;
			name_clean(m->machines[j], machine, sizeof(machine));
			snprintf(path, sizeof(path), "%s/%s/%zu.html", build_dir, machine, t);
			ret = result_page(data_dir, r, m, t, j, path, err, err_size);
		}
	if (ret >= 0 && !results_url)
		ret = pages_sync(build_dir, err, err_size);
	if (ret >= 0) {
		struct matrix_job job = { .report = r, .view = &view };

		snprintf(path, sizeof(path), "%s/index.html", build_dir);
		ret = bci_atomic_write_stream(path, 0644, matrix_stream, &job, err, err_size);
	}
out:
	bci_html_matrix_release(&view);
	return ret;
}
