// SPDX-License-Identifier: MIT
/*
 * A machine's page and a run's page (machine_pages.h). Each is read from
 * the store into a view first, then written as HTML or as JSON from the
 * same view, so the two always say the same.
 */
#include "machine_pages.h"
#include "report.h"
#include "../store/refused.h"
#include "../store/store.h"
#include "jsonw.h"
#include "strv.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---- small helpers ---- */

/* A copy of @s (NULL stays NULL); *@failed is set when memory ran out. */
static char *copy(const char *s, bool *failed)
{
	char *c;

	if (!s)
		return NULL;
	c = strdup(s);
	if (!c)
		*failed = true;
	return c;
}

static void time_text(double when, char *text, size_t size)
{
	time_t t = (time_t)when;
	struct tm tm;

	snprintf(text, size, "-");
	if (when > 0 && gmtime_r(&t, &tm))
		strftime(text, size, "%Y-%m-%d %H:%M:%S", &tm);
}

static void time_cell(struct bci_str *b, double when)
{
	char text[32];

	time_text(when, text, sizeof(text));
	bci_str_appendf(b, "<td>%s</td>", text);
}

static void text_cell(struct bci_str *b, const char *s)
{
	bci_str_appendf(b, "<td>");
	if (s)
		bci_html_escape_str(b, s);
	bci_str_appendf(b, "</td>");
}

static void page_begin(struct bci_str *b, const char *title)
{
	bci_str_appendf(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
	bci_html_escape_str(b, title);
	bci_str_appendf(b, "</title>\n%s</head><body>\n<p><a href=\"/\">builds</a> · "
			   "<a href=\"/metrics\">metrics</a></p>\n", bci_html_style);
}

static void machine_href(struct bci_str *b, const char *machine)
{
	bci_str_appendf(b, "/machines/");
	bci_html_url_escape(b, machine);
}

static void run_href(struct bci_str *b, const char *machine, const char *run_id)
{
	machine_href(b, machine);
	bci_str_appendf(b, "/runs/");
	bci_html_url_escape(b, run_id);
}

/* The JSON writer of lib/ into memory, its text appended to @b at the end. */
struct json_out {
	struct bci_jsonw w;
	FILE *f;
	char *text;
	size_t len;
};

static int json_begin(struct json_out *j)
{
	memset(j, 0, sizeof(*j));
	j->f = open_memstream(&j->text, &j->len);
	if (!j->f)
		return -ENOMEM;
	bci_jsonw_init(&j->w, j->f, 2);
	return 0;
}

static int json_end(struct json_out *j, struct bci_str *b)
{
	int ret = bci_jsonw_finish(&j->w);

	if (fclose(j->f) && ret == 0)
		ret = -ENOMEM;
	if (ret == 0 && !j->text)
		ret = -ENOMEM;
	if (ret == 0)
		ret = bci_str_append(b, j->text, j->len);
	free(j->text);
	return ret;
}

static void json_string(struct bci_jsonw *w, const char *key, const char *s)
{
	bci_jsonw_key(w, key);
	if (s)
		bci_jsonw_string(w, s);
	else
		bci_jsonw_null(w);
}

/* A Unix time, null when unknown (0). */
static void json_time(struct bci_jsonw *w, const char *key, double when)
{
	bci_jsonw_key(w, key);
	if (when > 0)
		bci_jsonw_double(w, when);
	else
		bci_jsonw_null(w);
}

static void json_int(struct bci_jsonw *w, const char *key, long long v)
{
	bci_jsonw_key(w, key);
	bci_jsonw_int(w, v);
}

/* A URL of the pages: the same escaping as the HTML's links, as a JSON string. */
static void json_url(struct bci_jsonw *w, const char *key, struct bci_str *url)
{
	bci_jsonw_key(w, key);
	bci_jsonw_string(w, url->data ? url->data : "");
	bci_str_reset(url);
}

/*
 * Grows @array (of @size-byte items, *@n used, room for *@cap) by one zeroed
 * item, doubling its room when full; NULL when out of memory.
 */
static void *grow(void *array_ptr, size_t *n, size_t *cap, size_t size)
{
	void **array = array_ptr;
	char *items = *array;

	if (*n == *cap) {
		size_t room = *cap ? *cap * 2 : 16;

		items = realloc(*array, room * size);
		if (!items)
			return NULL;
		*array = items;
		*cap = room;
	}
	memset(items + *n * size, 0, size);
	return items + (*n)++ * size;
}

/* ---- the consoles (both pages) ---- */

static void consoles_html(struct bci_str *b, const char *machine, const struct bci_page_console *c,
			  size_t n, bool with_run)
{
	bci_str_appendf(b, "<h2 id=\"consoles\">consoles</h2>\n");
	if (!n) {
		bci_str_appendf(b, "<p>None kept.</p>\n");
		return;
	}
	bci_str_appendf(b, "<table>\n<tr><th>boot</th><th>bytes</th><th>last output (UTC)</th>%s"
			   "<th>the run's boot</th></tr>\n", with_run ? "<th>run</th>" : "");
	for (size_t i = 0; i < n; i++) {
		bci_str_appendf(b, "<tr><td><a href=\"");
		machine_href(b, machine);
		bci_str_appendf(b, "/consoles/%u\">%u</a></td><td>%llu</td>", c[i].number,
				c[i].number, (unsigned long long)c[i].size);
		time_cell(b, c[i].modified);
		if (with_run) {
			bci_str_appendf(b, "<td>");
			if (c[i].run_id[0]) {
				bci_str_appendf(b, "<a href=\"");
				run_href(b, machine, c[i].run_id);
				bci_str_appendf(b, "\">");
				bci_html_escape_str(b, c[i].run_id);
				bci_str_appendf(b, "</a>");
			}
			bci_str_appendf(b, "</td>");
		}
		if (c[i].run_boot)
			bci_str_appendf(b, "<td>%u</td></tr>\n", c[i].run_boot);
		else
			bci_str_appendf(b, "<td></td></tr>\n");
	}
	bci_str_appendf(b, "</table>\n");
}

static void consoles_json(struct bci_jsonw *w, struct bci_str *url, const char *machine,
			  const struct bci_page_console *c, size_t n)
{
	bci_jsonw_key(w, "consoles");
	bci_jsonw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		bci_jsonw_object_begin(w);
		json_int(w, "boot", c[i].number);
		json_int(w, "bytes", (long long)c[i].size);
		json_time(w, "modified", c[i].modified);
		json_string(w, "run_id", c[i].run_id[0] ? c[i].run_id : NULL);
		bci_jsonw_key(w, "run_boot");
		if (c[i].run_boot)
			bci_jsonw_int(w, c[i].run_boot);
		else
			bci_jsonw_null(w);
		machine_href(url, machine);
		bci_str_appendf(url, "/consoles/%u", c[i].number);
		json_url(w, "url", url);
		bci_jsonw_object_end(w);
	}
	bci_jsonw_array_end(w);
}

/* ---- the scheduler's jobs (both pages) ---- */

struct job_copy {
	char *build, *tier, *run_id, *state, *note;
	int shard, shards, boots;
	double queued, booted, ended, asked;
};

static void job_copy_free(struct job_copy *j)
{
	free(j->build);
	free(j->tier);
	free(j->run_id);
	free(j->state);
	free(j->note);
	memset(j, 0, sizeof(*j));
}

static int job_copy_set(struct job_copy *j, const struct bci_store_job *job)
{
	bool failed = false;

	job_copy_free(j);
	j->build = copy(job->build, &failed);
	/* A rerun of possible new issues says so where a tier's job says its tier. */
	j->tier = copy(job->kind ? job->kind : job->tier, &failed);
	j->run_id = copy(job->run_id, &failed);
	j->state = copy(job->state, &failed);
	j->note = copy(job->note, &failed);
	j->shard = job->shard;
	j->shards = job->shards;
	j->boots = job->boots;
	j->queued = job->queued;
	j->booted = job->booted;
	j->ended = job->ended;
	j->asked = job->asked;
	return failed ? -ENOMEM : 0;
}

static void job_row_html(struct bci_str *b, const char *machine, const struct job_copy *j,
			 bool run_column)
{
	bci_str_appendf(b, "<tr>");
	if (run_column) {
		bci_str_appendf(b, "<td><a href=\"");
		run_href(b, machine, j->run_id);
		bci_str_appendf(b, "\">");
		bci_html_escape_str(b, j->run_id);
		bci_str_appendf(b, "</a></td>");
	}
	bci_str_appendf(b, "<td><a href=\"/builds/");
	bci_html_url_escape(b, j->build);
	bci_str_appendf(b, "\">");
	bci_html_escape_str(b, j->build);
	bci_str_appendf(b, "</a></td>");
	text_cell(b, j->tier);
	bci_str_appendf(b, "<td>%d of %d</td>", j->shard + 1, j->shards > 0 ? j->shards : 1);
	text_cell(b, j->state);
	bci_str_appendf(b, "<td>%d</td>", j->boots);
	time_cell(b, j->queued);
	time_cell(b, j->booted);
	time_cell(b, j->ended);
	text_cell(b, j->note);
	bci_str_appendf(b, "</tr>\n");
}

static const char job_header[] =
	"<th>build</th><th>tier</th><th>shard</th><th>state</th><th>netboots</th>"
	"<th>queued (UTC)</th><th>last netboot (UTC)</th><th>ended by the master (UTC)</th>"
	"<th>verdict</th></tr>\n";

static void job_json(struct bci_jsonw *w, const struct job_copy *j)
{
	bci_jsonw_object_begin(w);
	json_string(w, "run_id", j->run_id);
	json_string(w, "build", j->build);
	json_string(w, "tier", j->tier);
	json_int(w, "shard", j->shard);
	json_int(w, "shards", j->shards);
	json_string(w, "state", j->state);
	json_int(w, "netboots", j->boots);
	json_time(w, "queued", j->queued);
	json_time(w, "booted", j->booted);
	json_time(w, "ended", j->ended);
	json_time(w, "asked", j->asked);
	json_string(w, "note", j->note);
	bci_jsonw_object_end(w);
}

/* ---- the machines (the front page's list) ---- */

struct list_walk {
	struct bci_store *store;
	struct bci_str *b;
	char *err;
	size_t err_size;
};

static int list_state(const struct bci_store_machine_state *state, void *ctx)
{
	struct list_walk *w = ctx;

	bci_str_appendf(w->b, "<td class=\"machine-%s\">",
			state->state && !strcmp(state->state, "ready") ? "ready" : "out");
	bci_html_escape_str(w->b, state->state ? state->state : "?");
	bci_str_appendf(w->b, "</td>");
	text_cell(w->b, state->note);
	return 0;
}

static int list_row(const char *machine, void *ctx)
{
	struct list_walk *w = ctx;
	double last = 0;
	int ret;

	bci_str_appendf(w->b, "<tr><td><a href=\"");
	machine_href(w->b, machine);
	bci_str_appendf(w->b, "\">");
	bci_html_escape_str(w->b, machine);
	bci_str_appendf(w->b, "</a></td>");
	ret = bci_store_machine_state_get(w->store, machine, list_state, w, w->err, w->err_size);
	if (ret == -ENOENT)
		bci_str_appendf(w->b, "<td>-</td><td></td>");
	else if (ret < 0)
		return ret;
	ret = bci_store_machine_last_upload(w->store, machine, &last, w->err, w->err_size);
	if (ret < 0)
		return ret;
	time_cell(w->b, last);
	bci_str_appendf(w->b, "</tr>\n");
	return 0;
}

int bci_pages_machines_list(struct bci_store *store, struct bci_str *b, char *err, size_t err_size)
{
	struct list_walk w = { store, b, err, err_size };
	struct bci_str rows = { 0 };
	int ret;

	w.b = &rows;
	ret = bci_store_machines_each(store, NULL, list_row, &w, err, err_size);
	if (ret > 0)
		bci_str_appendf(b, "<h2 id=\"machines\">machines</h2>\n<table>\n<tr><th>machine</th>"
				   "<th>state</th><th>why</th><th>last upload (UTC)</th></tr>\n%s"
				   "</table>\n", rows.data ? rows.data : "");
	bci_str_free(&rows);
	return ret < 0 ? ret : 0;
}

/* ---- a machine ---- */

struct run_copy {
	char *run_id, *build, *state, *kernel;
	double started, ended, ingested;
	int64_t key;
	int boots, crashes;
	char *last_ending;
};

struct machine_view {
	const struct bci_machine_page *page;
	bool known;			/* the scheduler recorded it */
	char *state, *note;
	double last_seen, last_cycle, last_upload;
	int power_cycles;
	struct bci_strv tags;
	struct job_copy jobs[BCI_MACHINE_PAGE_JOBS];	/* a ring: the newest last */
	size_t n_jobs;			/* every job seen */
	struct run_copy *runs;		/* oldest first */
	size_t n_runs, cap_runs;
	struct bci_refused *refused;	/* newest first */
	size_t n_refused;
	char refused_error[512];	/* why they could not be read, or "" */
	bool failed;			/* out of memory */
};

static int state_keep(const struct bci_store_machine_state *s, void *ctx)
{
	struct machine_view *v = ctx;

	v->known = true;
	v->state = copy(s->state, &v->failed);
	v->note = copy(s->note, &v->failed);
	v->last_seen = s->last_seen;
	v->last_cycle = s->last_cycle;
	v->power_cycles = s->power_cycles;
	return v->failed ? -ENOMEM : 0;
}

static int tag_keep(const char *tag, void *ctx)
{
	struct machine_view *v = ctx;

	return bci_strv_add(&v->tags, tag);
}

static int job_keep(const struct bci_store_job *job, void *ctx)
{
	struct machine_view *v = ctx;

	return job_copy_set(&v->jobs[v->n_jobs++ % BCI_MACHINE_PAGE_JOBS], job);
}

static int run_keep(const struct bci_store_run *run, void *ctx)
{
	struct machine_view *v = ctx;
	struct run_copy *r = grow(&v->runs, &v->n_runs, &v->cap_runs, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->run_id = copy(run->run_id, &v->failed);
	r->build = copy(run->build, &v->failed);
	r->state = copy(run->state, &v->failed);
	r->kernel = copy(run->kernel, &v->failed);
	r->started = run->started;
	r->ended = run->ended;
	r->ingested = run->ingested;
	r->key = run->key;
	return v->failed ? -ENOMEM : 0;
}

static int boot_count(const struct bci_store_boot *boot, void *ctx)
{
	struct run_copy *r = ctx;
	bool failed = false;

	free(r->last_ending);
	r->last_ending = copy(boot->ending, &failed);
	return failed ? -ENOMEM : 0;
}

static int crash_count(const struct bci_store_crash *crash, void *ctx)
{
	(void)crash;
	(void)ctx;
	return 0;
}

static void machine_view_free(struct machine_view *v)
{
	free(v->state);
	free(v->note);
	bci_strv_free(&v->tags);
	for (size_t i = 0; i < BCI_MACHINE_PAGE_JOBS; i++)
		job_copy_free(&v->jobs[i]);
	for (size_t i = 0; i < v->n_runs; i++) {
		free(v->runs[i].run_id);
		free(v->runs[i].build);
		free(v->runs[i].state);
		free(v->runs[i].kernel);
		free(v->runs[i].last_ending);
	}
	free(v->runs);
	free(v->refused);
}

static size_t page_count(size_t runs)
{
	return runs ? (runs + BCI_MACHINE_PAGE_RUNS - 1) / BCI_MACHINE_PAGE_RUNS : 1;
}

/* The runs of the page: [*from, *to) counted from the newest (newest()). */
static void page_span(const struct machine_view *v, size_t *from, size_t *to)
{
	size_t page = v->page->page ? v->page->page : 1;

	*from = (page - 1) * BCI_MACHINE_PAGE_RUNS;
	*to = *from + BCI_MACHINE_PAGE_RUNS;
	if (*to > v->n_runs)
		*to = v->n_runs;
}

static struct run_copy *newest(const struct machine_view *v, size_t i)
{
	return &v->runs[v->n_runs - 1 - i];
}

static int machine_read(struct bci_store *store, struct machine_view *v, char *err, size_t err_size)
{
	const char *machine = v->page->machine;
	size_t page = v->page->page ? v->page->page : 1, from, to;
	int ret, tags, jobs;

	ret = bci_store_machine_state_get(store, machine, state_keep, v, err, err_size);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	err[0] = '\0';
	tags = bci_store_machine_tags(store, machine, tag_keep, v, err, err_size);
	if (tags < 0)
		return tags;
	jobs = bci_store_machine_jobs_each(store, machine, job_keep, v, err, err_size);
	if (jobs < 0)
		return jobs;
	ret = bci_store_runs_each(store, machine, run_keep, v, err, err_size);
	if (ret < 0)
		return ret;
	if (v->page->data_dir) {
		/* Records that cannot be read do not take the page down with them: said instead. */
		if (bci_refused_list(v->page->data_dir, machine, &v->refused, &v->n_refused,
				     v->refused_error, sizeof(v->refused_error)) == 0)
			v->refused_error[0] = '\0';
		else if (!v->refused_error[0])
			snprintf(v->refused_error, sizeof(v->refused_error), "not readable");
	}
	if (!v->known && !tags && !jobs && !v->n_runs && !v->n_refused) {
		snprintf(err, err_size, "machine '%s' is not known: no run, job, state or refused"
			 " upload is stored", machine);
		return -ENOENT;
	}
	if (page > page_count(v->n_runs)) {
		snprintf(err, err_size, "machine '%s' has %zu runs: page %zu of %zu does not exist",
			 machine, v->n_runs, page, page_count(v->n_runs));
		return -ENOENT;
	}
	ret = bci_store_machine_last_upload(store, machine, &v->last_upload, err, err_size);
	if (ret < 0)
		return ret;
	page_span(v, &from, &to);
	for (size_t i = from; i < to; i++) {
		struct run_copy *r = newest(v, i);

		ret = bci_store_boots_each(store, r->key, boot_count, r, err, err_size);
		if (ret < 0)
			return ret;
		r->boots = ret;
		ret = bci_store_crashes_each(store, r->key, crash_count, NULL, err, err_size);
		if (ret < 0)
			return ret;
		r->crashes = ret;
	}
	return 0;
}

/* How many jobs the ring holds; job_newest(v, 0) is the newest. */
static size_t jobs_kept(const struct machine_view *v)
{
	return v->n_jobs < BCI_MACHINE_PAGE_JOBS ? v->n_jobs : BCI_MACHINE_PAGE_JOBS;
}

static const struct job_copy *job_newest(const struct machine_view *v, size_t i)
{
	return &v->jobs[(v->n_jobs - 1 - i) % BCI_MACHINE_PAGE_JOBS];
}

static void page_link(struct bci_str *b, const char *machine, size_t page, const char *label)
{
	bci_str_appendf(b, "<a href=\"");
	machine_href(b, machine);
	bci_str_appendf(b, "?page=%zu\">%s</a>", page, label);
}

static void machine_html(const struct machine_view *v, struct bci_str *b)
{
	const char *machine = v->page->machine;
	size_t page = v->page->page ? v->page->page : 1, pages = page_count(v->n_runs), from, to;

	page_begin(b, machine);
	bci_str_appendf(b, "<h1>machine ");
	bci_html_escape_str(b, machine);
	bci_str_appendf(b, "</h1>\n<p><a href=\"#runs\">runs</a> · <a href=\"");
	machine_href(b, machine);
	bci_str_appendf(b, "/consoles/\">consoles</a> · <a href=\"");
	machine_href(b, machine);
	bci_str_appendf(b, "/suspend\">suspend/resume latency</a> · <a href=\"/api/v1");
	machine_href(b, machine);
	if (page > 1)
		bci_str_appendf(b, "?page=%zu", page);
	bci_str_appendf(b, "\">JSON</a></p>\n");
	if (v->tags.count) {
		bci_str_appendf(b, "<p>tags:");
		for (size_t i = 0; i < v->tags.count; i++) {
			bci_str_appendf(b, " <code>");
			bci_html_escape_str(b, v->tags.items[i]);
			bci_str_appendf(b, "</code>");
		}
		bci_str_appendf(b, "</p>\n");
	}

	bci_str_appendf(b, "<h2 id=\"state\">state</h2>\n");
	if (!v->known) {
		bci_str_appendf(b, "<p>The scheduler has not recorded this machine (it never asked"
				   " for a job).</p>\n<table>\n<tr><th>last upload (UTC)</th>");
		time_cell(b, v->last_upload);
		bci_str_appendf(b, "</tr>\n</table>\n");
	} else {
		bci_str_appendf(b, "<table>\n<tr><th>state</th><td class=\"machine-%s\">",
				v->state && !strcmp(v->state, "ready") ? "ready" : "out");
		bci_html_escape_str(b, v->state ? v->state : "?");
		bci_str_appendf(b, "</td></tr>\n<tr><th>why</th>");
		text_cell(b, v->note);
		bci_str_appendf(b, "</tr>\n<tr><th>last seen (UTC)</th>");
		time_cell(b, v->last_seen);
		bci_str_appendf(b, "</tr>\n<tr><th>power cycles since</th><td>%d</td></tr>\n"
				   "<tr><th>last power cycle (UTC)</th>", v->power_cycles);
		time_cell(b, v->last_cycle);
		bci_str_appendf(b, "</tr>\n<tr><th>last upload (UTC)</th>");
		time_cell(b, v->last_upload);
		bci_str_appendf(b, "</tr>\n</table>\n");
	}

	if (v->page->deploy) {
		bci_str_appendf(b, "<p class=\"deploy\">Its disk is %s: ",
				!strcmp(v->page->deploy, "damaged") ? "to be re-deployed at its next boot"
								    : "being re-deployed");
		bci_html_escape_str(b, v->page->deploy_note ? v->page->deploy_note : "");
		bci_str_appendf(b, "</p>\n");
	}

	bci_str_appendf(b, "<h2 id=\"jobs\">jobs</h2>\n");
	if (!v->n_jobs) {
		bci_str_appendf(b, "<p>The scheduler gave it no job.</p>\n");
	} else {
		bci_str_appendf(b, "<p>The scheduler's latest %zu of %zu jobs, newest first: each"
				   " netboot hands the job out once more (a power cycle when the"
				   " machine did not come by itself); the verdict says why it"
				   " ended.</p>\n<table>\n<tr><th>run</th>%s", jobs_kept(v), v->n_jobs,
				job_header);
		for (size_t i = 0; i < jobs_kept(v); i++)
			job_row_html(b, machine, job_newest(v, i), true);
		bci_str_appendf(b, "</table>\n");
	}

	consoles_html(b, machine, v->page->consoles, v->page->n_consoles, true);

	if (v->refused_error[0]) {
		bci_str_appendf(b, "<h2 id=\"refused\">uploads refused</h2>\n<p>");
		bci_html_escape_str(b, v->refused_error);
		bci_str_appendf(b, "</p>\n");
	} else if (v->n_refused) {
		bci_str_appendf(b, "<h2 id=\"refused\">uploads refused</h2>\n<p>Runs serve did not"
				   " take: each stays on the machine, whose collect sends it again."
				   " <a href=\"/refused\">All machines'</a>.</p>\n<table>\n"
				   "<tr><th>refused (UTC)</th><th>run</th><th>bytes</th><th>times</th>"
				   "<th>why</th></tr>\n");
		for (size_t i = 0; i < v->n_refused; i++) {
			const struct bci_refused *r = &v->refused[i];

			bci_str_appendf(b, "<tr>");
			time_cell(b, (double)r->time);
			text_cell(b, r->run_id);
			bci_str_appendf(b, "<td>%llu</td><td>%llu</td>", (unsigned long long)r->size,
					(unsigned long long)r->count);
			text_cell(b, r->reason);
			bci_str_appendf(b, "</tr>\n");
		}
		bci_str_appendf(b, "</table>\n");
	}

	bci_str_appendf(b, "<h2 id=\"runs\">runs</h2>\n<p>%zu run%s, newest first", v->n_runs,
			v->n_runs == 1 ? "" : "s");
	if (pages > 1)
		bci_str_appendf(b, "; page %zu of %zu", page, pages);
	bci_str_appendf(b, ".</p>\n");
	page_span(v, &from, &to);
	if (to > from) {
		bci_str_appendf(b, "<table>\n<tr><th>run</th><th>build</th><th>state</th>"
				   "<th>kernel</th><th>started (UTC)</th><th>ended (UTC)</th>"
				   "<th>ingested (UTC)</th><th>boots</th><th>last boot's ending</th>"
				   "<th>crash records</th></tr>\n");
		for (size_t i = from; i < to; i++) {
			const struct run_copy *r = newest(v, i);

			bci_str_appendf(b, "<tr><td><a href=\"");
			run_href(b, machine, r->run_id);
			bci_str_appendf(b, "\">");
			bci_html_escape_str(b, r->run_id);
			bci_str_appendf(b, "</a></td><td>");
			if (r->build) {
				bci_str_appendf(b, "<a href=\"/builds/");
				bci_html_url_escape(b, r->build);
				bci_str_appendf(b, "\">");
				bci_html_escape_str(b, r->build);
				bci_str_appendf(b, "</a>");
			}
			bci_str_appendf(b, "</td>");
			text_cell(b, r->state);
			text_cell(b, r->kernel);
			time_cell(b, r->started);
			time_cell(b, r->ended);
			time_cell(b, r->ingested);
			bci_str_appendf(b, "<td>%d</td>", r->boots);
			text_cell(b, r->last_ending);
			bci_str_appendf(b, "<td>%d</td></tr>\n", r->crashes);
		}
		bci_str_appendf(b, "</table>\n");
	}
	if (pages > 1) {
		bci_str_appendf(b, "<p class=\"pages\">");
		if (page > 1)
			page_link(b, machine, page - 1, "newer");
		if (page > 1 && page < pages)
			bci_str_appendf(b, " · ");
		if (page < pages)
			page_link(b, machine, page + 1, "older");
		bci_str_appendf(b, "</p>\n");
	}
	bci_str_appendf(b, "</body></html>\n");
}

static int machine_json(const struct machine_view *v, struct bci_str *b)
{
	const char *machine = v->page->machine;
	struct bci_str url = { 0 };
	struct json_out j;
	struct bci_jsonw *w = &j.w;
	size_t from, to;
	int ret;

	if (json_begin(&j) < 0)
		return -ENOMEM;
	bci_jsonw_object_begin(w);
	json_string(w, "machine", machine);
	machine_href(&url, machine);
	json_url(w, "url", &url);
	bci_jsonw_key(w, "tags");
	bci_jsonw_array_begin(w);
	for (size_t i = 0; i < v->tags.count; i++)
		bci_jsonw_string(w, v->tags.items[i]);
	bci_jsonw_array_end(w);
	bci_jsonw_key(w, "state");
	if (!v->known) {
		bci_jsonw_null(w);
	} else {
		bci_jsonw_object_begin(w);
		json_string(w, "state", v->state);
		json_string(w, "note", v->note);
		json_time(w, "last_seen", v->last_seen);
		json_int(w, "power_cycles", v->power_cycles);
		json_time(w, "last_cycle", v->last_cycle);
		bci_jsonw_object_end(w);
	}
	json_time(w, "last_upload", v->last_upload);
	bci_jsonw_key(w, "deploy");
	if (!v->page->deploy) {
		bci_jsonw_null(w);
	} else {
		bci_jsonw_object_begin(w);
		json_string(w, "state", v->page->deploy);
		json_string(w, "note", v->page->deploy_note);
		bci_jsonw_object_end(w);
	}
	json_int(w, "jobs_total", (long long)v->n_jobs);
	bci_jsonw_key(w, "jobs");
	bci_jsonw_array_begin(w);
	for (size_t i = 0; i < jobs_kept(v); i++)
		job_json(w, job_newest(v, i));
	bci_jsonw_array_end(w);
	consoles_json(w, &url, machine, v->page->consoles, v->page->n_consoles);
	if (v->refused_error[0])
		json_string(w, "refused_error", v->refused_error);
	bci_jsonw_key(w, "refused");
	bci_jsonw_array_begin(w);
	for (size_t i = 0; i < v->n_refused; i++) {
		const struct bci_refused *r = &v->refused[i];

		bci_jsonw_object_begin(w);
		json_string(w, "run_id", r->run_id);
		json_string(w, "sha256", r->sha256);
		json_int(w, "size", (long long)r->size);
		json_string(w, "reason", r->reason);
		json_int(w, "time", r->time);
		json_int(w, "count", (long long)r->count);
		bci_jsonw_object_end(w);
	}
	bci_jsonw_array_end(w);
	json_int(w, "runs_total", (long long)v->n_runs);
	json_int(w, "page", v->page->page ? v->page->page : 1);
	json_int(w, "pages", (long long)page_count(v->n_runs));
	json_int(w, "per_page", BCI_MACHINE_PAGE_RUNS);
	bci_jsonw_key(w, "runs");
	bci_jsonw_array_begin(w);
	page_span(v, &from, &to);
	for (size_t i = from; i < to; i++) {
		const struct run_copy *r = newest(v, i);

		bci_jsonw_object_begin(w);
		json_string(w, "run_id", r->run_id);
		json_string(w, "build", r->build);
		json_string(w, "state", r->state);
		json_string(w, "kernel", r->kernel);
		json_time(w, "started", r->started);
		json_time(w, "ended", r->ended);
		json_time(w, "ingested", r->ingested);
		json_int(w, "boots", r->boots);
		json_string(w, "last_ending", r->last_ending);
		json_int(w, "crash_records", r->crashes);
		run_href(&url, machine, r->run_id);
		json_url(w, "url", &url);
		bci_jsonw_object_end(w);
	}
	bci_jsonw_array_end(w);
	bci_jsonw_object_end(w);
	bci_str_free(&url);
	ret = json_end(&j, b);
	return ret;
}

int bci_pages_machine(struct bci_store *store, const struct bci_machine_page *page,
		      struct bci_str *b, char *err, size_t err_size)
{
	struct machine_view v = { .page = page };
	int ret = machine_read(store, &v, err, err_size);

	if (ret == 0 && v.failed)
		ret = -ENOMEM;
	if (ret == 0) {
		if (page->json) {
			ret = machine_json(&v, b);
		} else {
			machine_html(&v, b);
			ret = b->data ? 0 : -ENOMEM;
		}
	}
	machine_view_free(&v);
	return ret;
}

/* ---- a run ---- */

struct boot_copy {
	int index;
	double time;
	char *kernel, *cmdline, *previous, *ending;
};

struct crash_copy {
	int boot;
	char *source, *name, *path;
};

struct result_copy {
	int job, status;
	char *name, *result;
	double duration;
};

struct suspend_copy {
	int cycle;
	char *state, *result, *woke;
	double wall, suspended, latency, kernel_suspend, kernel_resume;
};

struct run_view {
	const struct bci_run_page *page;
	struct bci_store *store;
	int64_t key;
	char *build, *image_id, *kernel, *cmdline, *digest, *archive_path, *state;
	double started, ended, ingested;
	bool has_job;
	struct job_copy job;
	struct boot_copy *boots;
	size_t n_boots, cap_boots;
	struct crash_copy *crashes;
	size_t n_crashes, cap_crashes;
	struct result_copy *results;
	size_t n_results, cap_results;
	struct suspend_copy *suspends;
	size_t n_suspends, cap_suspends;
	long counts[BCI_STATUS_COUNT];
	bool archive_kept;
	long long archive_bytes;
	bool failed;
};

static int run_found(const struct bci_store_run *run, void *ctx)
{
	struct run_view *v = ctx;

	v->key = run->key;
	v->build = copy(run->build, &v->failed);
	v->image_id = copy(run->image_id, &v->failed);
	v->kernel = copy(run->kernel, &v->failed);
	v->cmdline = copy(run->cmdline, &v->failed);
	v->digest = copy(run->digest, &v->failed);
	v->archive_path = copy(run->archive_path, &v->failed);
	v->state = copy(run->state, &v->failed);
	v->started = run->started;
	v->ended = run->ended;
	v->ingested = run->ingested;
	return v->failed ? -ENOMEM : 0;
}

static int run_job_found(const struct bci_store_job *job, void *ctx)
{
	struct run_view *v = ctx;

	v->has_job = true;
	return job_copy_set(&v->job, job);
}

static int boot_keep(const struct bci_store_boot *boot, void *ctx)
{
	struct run_view *v = ctx;
	struct boot_copy *c = grow(&v->boots, &v->n_boots, &v->cap_boots, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->index = boot->index;
	c->time = boot->time;
	c->kernel = copy(boot->kernel, &v->failed);
	c->cmdline = copy(boot->cmdline, &v->failed);
	c->previous = copy(boot->previous, &v->failed);
	c->ending = copy(boot->ending, &v->failed);
	return v->failed ? -ENOMEM : 0;
}

static int crash_keep(const struct bci_store_crash *crash, void *ctx)
{
	struct run_view *v = ctx;
	struct crash_copy *c = grow(&v->crashes, &v->n_crashes, &v->cap_crashes, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->boot = crash->boot;
	c->source = copy(crash->source, &v->failed);
	c->name = copy(crash->name, &v->failed);
	c->path = copy(crash->path, &v->failed);
	return v->failed ? -ENOMEM : 0;
}

static int result_keep(const struct bci_store_result *result, void *ctx)
{
	struct run_view *v = ctx;
	struct result_copy *c = grow(&v->results, &v->n_results, &v->cap_results, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->job = result->job;
	c->status = bci_status_parse(result->result);
	c->name = copy(result->name, &v->failed);
	c->result = copy(result->result, &v->failed);
	c->duration = result->duration;
	if (c->status >= 0)
		v->counts[c->status]++;
	return v->failed ? -ENOMEM : 0;
}

static int suspend_keep(const struct bci_store_suspend *cycle, void *ctx)
{
	struct run_view *v = ctx;
	struct suspend_copy *c = grow(&v->suspends, &v->n_suspends, &v->cap_suspends, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->cycle = cycle->cycle;
	c->state = copy(cycle->state, &v->failed);
	c->result = copy(cycle->result, &v->failed);
	c->woke = copy(cycle->woke, &v->failed);
	c->wall = cycle->wall;
	c->suspended = cycle->suspended;
	c->latency = cycle->latency;
	c->kernel_suspend = cycle->kernel_suspend;
	c->kernel_resume = cycle->kernel_resume;
	return v->failed ? -ENOMEM : 0;
}

static void run_view_free(struct run_view *v)
{
	free(v->build);
	free(v->image_id);
	free(v->kernel);
	free(v->cmdline);
	free(v->digest);
	free(v->archive_path);
	free(v->state);
	job_copy_free(&v->job);
	for (size_t i = 0; i < v->n_boots; i++) {
		free(v->boots[i].kernel);
		free(v->boots[i].cmdline);
		free(v->boots[i].previous);
		free(v->boots[i].ending);
	}
	free(v->boots);
	for (size_t i = 0; i < v->n_crashes; i++) {
		free(v->crashes[i].source);
		free(v->crashes[i].name);
		free(v->crashes[i].path);
	}
	free(v->crashes);
	for (size_t i = 0; i < v->n_results; i++) {
		free(v->results[i].name);
		free(v->results[i].result);
	}
	free(v->results);
	for (size_t i = 0; i < v->n_suspends; i++) {
		free(v->suspends[i].state);
		free(v->suspends[i].result);
		free(v->suspends[i].woke);
	}
	free(v->suspends);
}

static int run_read(struct bci_store *store, struct run_view *v, char *err, size_t err_size)
{
	const struct bci_run_page *p = v->page;
	char path[PATH_MAX];
	struct stat st;
	int ret;

	ret = bci_store_run_get(store, p->machine, p->run_id, run_found, v, err, err_size);
	if (ret == -ENOENT)
		snprintf(err, err_size, "machine '%s' has no stored run '%s'", p->machine, p->run_id);
	if (ret < 0)
		return ret;
	ret = bci_store_machine_job_get(store, p->machine, p->run_id, run_job_found, v, err,
					err_size);
	if (ret >= 0)
		ret = bci_store_boots_each(store, v->key, boot_keep, v, err, err_size);
	if (ret >= 0)
		ret = bci_store_crashes_each(store, v->key, crash_keep, v, err, err_size);
	if (ret >= 0)
		ret = bci_store_results_each(store, v->key, result_keep, v, err, err_size);
	if (ret >= 0)
		ret = bci_store_suspends_each(store, v->key, suspend_keep, v, err, err_size);
	if (ret < 0)
		return ret;
	/* Ingest keeps it under archives/ by its digest; a pruned data folder may have lost it. */
	if (v->archive_path && *v->archive_path &&
	    (size_t)snprintf(path, sizeof(path), "%s/%s", p->data_dir, v->archive_path) < sizeof(path) &&
	    stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		v->archive_kept = true;
		v->archive_bytes = (long long)st.st_size;
	}
	return 0;
}

static void crash_record_html(struct bci_str *b, const struct run_view *v,
			      const struct crash_copy *c)
{
	char err[512] = "", title[700];
	int fd = bci_store_run_file_open(v->store, v->page->data_dir, v->page->machine,
					 v->page->run_id, c->path ? c->path : "", err, sizeof(err));

	snprintf(title, sizeof(title), "crash record %s (%s), found by boot %d",
		 c->name ? c->name : "?", c->source ? c->source : "?", c->boot);
	bci_html_file_section(b, title, fd, err);
}

static void run_html(const struct run_view *v, struct bci_str *b)
{
	const char *machine = v->page->machine, *run_id = v->page->run_id;
	struct bci_str title = { 0 };

	bci_str_appendf(&title, "run %s on %s", run_id, machine);
	page_begin(b, title.data ? title.data : run_id);
	bci_str_free(&title);
	bci_str_appendf(b, "<h1>run ");
	bci_html_escape_str(b, run_id);
	bci_str_appendf(b, "</h1>\n<table>\n<tr><th>machine</th><td><a href=\"");
	machine_href(b, machine);
	bci_str_appendf(b, "\">");
	bci_html_escape_str(b, machine);
	bci_str_appendf(b, "</a></td></tr>\n<tr><th>build</th><td>");
	if (v->build) {
		bci_str_appendf(b, "<a href=\"/builds/");
		bci_html_url_escape(b, v->build);
		bci_str_appendf(b, "\">");
		bci_html_escape_str(b, v->build);
		bci_str_appendf(b, "</a>");
	}
	bci_str_appendf(b, "</td></tr>\n<tr><th>state</th>");
	text_cell(b, v->state);
	bci_str_appendf(b, "</tr>\n<tr><th>kernel</th>");
	text_cell(b, v->kernel);
	bci_str_appendf(b, "</tr>\n<tr><th>command line</th>");
	text_cell(b, v->cmdline);
	bci_str_appendf(b, "</tr>\n<tr><th>image</th>");
	text_cell(b, v->image_id);
	bci_str_appendf(b, "</tr>\n<tr><th>started (UTC)</th>");
	time_cell(b, v->started);
	bci_str_appendf(b, "</tr>\n<tr><th>ended (UTC)</th>");
	time_cell(b, v->ended);
	bci_str_appendf(b, "</tr>\n<tr><th>ingested (UTC)</th>");
	time_cell(b, v->ingested);
	bci_str_appendf(b, "</tr>\n<tr><th>archive</th><td>");
	if (v->archive_kept) {
		bci_str_appendf(b, "<a href=\"");
		run_href(b, machine, run_id);
		bci_str_appendf(b, "/archive\">download</a> (%lld bytes, sha256 <code>",
				v->archive_bytes);
		bci_html_escape_str(b, v->digest ? v->digest : "");
		bci_str_appendf(b, "</code>)");
	} else {
		bci_str_appendf(b, "not kept");
	}
	bci_str_appendf(b, "</td></tr>\n</table>\n<p><a href=\"/api/v1");
	run_href(b, machine, run_id);
	bci_str_appendf(b, "/summary\">JSON</a></p>\n");

	if (v->has_job) {
		bci_str_appendf(b, "<h2 id=\"job\">job</h2>\n<table>\n<tr>%s", job_header);
		job_row_html(b, machine, &v->job, false);
		bci_str_appendf(b, "</table>\n");
	}

	bci_str_appendf(b, "<h2 id=\"boots\">boots</h2>\n");
	if (!v->n_boots) {
		bci_str_appendf(b, "<p>None recorded.</p>\n");
	} else {
		bci_str_appendf(b, "<p>Each boot records how the one before it ended; a crash record"
				   " (pstore, EFI) is saved by the boot after the one that died.</p>\n"
				   "<table>\n<tr><th>boot</th><th>started (UTC)</th><th>kernel</th>"
				   "<th>command line</th><th>the boot before, as it says</th>"
				   "<th>ending</th><th>crash records it found</th><th>console</th></tr>\n");
		for (size_t i = 0; i < v->n_boots; i++) {
			const struct boot_copy *boot = &v->boots[i];
			bool first = true;

			bci_str_appendf(b, "<tr id=\"boot-%d\"><td>%d</td>", boot->index, boot->index);
			time_cell(b, boot->time);
			text_cell(b, boot->kernel);
			text_cell(b, boot->cmdline);
			text_cell(b, boot->previous);
			text_cell(b, boot->ending);
			bci_str_appendf(b, "<td>");
			for (size_t c = 0; c < v->n_crashes; c++) {
				if (v->crashes[c].boot != boot->index)
					continue;
				bci_str_appendf(b, "%s<a href=\"#crash-%zu\">", first ? "" : ", ", c + 1);
				bci_html_escape_str(b, v->crashes[c].name ? v->crashes[c].name : "?");
				bci_str_appendf(b, "</a>");
				first = false;
			}
			bci_str_appendf(b, "</td><td>");
			first = true;
			for (size_t c = 0; c < v->page->n_consoles; c++) {
				unsigned number = v->page->consoles[c].number;

				if (v->page->consoles[c].run_boot != (unsigned)boot->index)
					continue;
				bci_str_appendf(b, "%s<a href=\"", first ? "" : ", ");
				machine_href(b, machine);
				bci_str_appendf(b, "/consoles/%u\">%u</a>", number, number);
				/* A boot that did not end cleanly: the test it ended in, from its start. */
				if (!boot->ending || strncmp(boot->ending, "clean", 5)) {
					bci_str_appendf(b, " (<a href=\"");
					machine_href(b, machine);
					bci_str_appendf(b, "/consoles/%u/tail\">its last test</a>)",
							number);
				}
				first = false;
			}
			bci_str_appendf(b, "</td></tr>\n");
		}
		bci_str_appendf(b, "</table>\n");
	}
	for (size_t c = 0; c < v->n_crashes; c++) {
		bci_str_appendf(b, "<div id=\"crash-%zu\">\n", c + 1);
		crash_record_html(b, v, &v->crashes[c]);
		bci_str_appendf(b, "</div>\n");
	}

	consoles_html(b, machine, v->page->consoles, v->page->n_consoles, false);

	if (v->n_suspends) {
		bci_str_appendf(b, "<h2 id=\"suspend\">suspend cycles</h2>\n<p><a href=\"");
		machine_href(b, machine);
		bci_str_appendf(b, "/suspend\">the machine's latency across runs</a></p>\n<table>\n"
				   "<tr><th>cycle</th><th>state</th><th>result</th><th>woke by</th>"
				   "<th>wall (s)</th><th>suspended (s)</th><th>latency (s)</th>"
				   "<th>kernel suspend (s)</th><th>kernel resume (s)</th></tr>\n");
		for (size_t i = 0; i < v->n_suspends; i++) {
			const struct suspend_copy *c = &v->suspends[i];
			const double seconds[] = { c->wall, c->suspended, c->latency,
						   c->kernel_suspend, c->kernel_resume };

			bci_str_appendf(b, "<tr><td>%d</td>", c->cycle);
			text_cell(b, c->state);
			text_cell(b, c->result);
			text_cell(b, c->woke);
			for (size_t k = 0; k < 5; k++)
				if (seconds[k] >= 0)
					bci_str_appendf(b, "<td>%.3f</td>", seconds[k]);
				else
					bci_str_appendf(b, "<td></td>");
			bci_str_appendf(b, "</tr>\n");
		}
		bci_str_appendf(b, "</table>\n");
	}

	bci_str_appendf(b, "<h2 id=\"results\">results</h2>\n<p>%zu results", v->n_results);
	for (int s = 0; s < BCI_STATUS_COUNT; s++)
		if (v->counts[s])
			bci_str_appendf(b, " · <span class=\"%s\">%s</span> %ld", bci_status_name(s),
					bci_status_name(s), v->counts[s]);
	bci_str_appendf(b, "</p>\n");
	if (v->n_results) {
		bci_str_appendf(b, "<table>\n<tr><th>test</th><th>result</th><th>seconds</th></tr>\n");
		for (size_t i = 0; i < v->n_results; i++) {
			const struct result_copy *r = &v->results[i];

			bci_str_appendf(b, "<tr><td><a href=\"");
			run_href(b, machine, run_id);
			bci_str_appendf(b, "/results/");
			bci_html_url_escape(b, r->name);
			bci_str_appendf(b, "\">");
			bci_html_escape_str(b, r->name);
			bci_str_appendf(b, "</a></td><td class=\"%s\">",
					r->status >= 0 ? bci_status_name(r->status) : "");
			bci_html_escape_str(b, r->result ? r->result : "");
			if (r->duration >= 0)
				bci_str_appendf(b, "</td><td>%.3f</td></tr>\n", r->duration);
			else
				bci_str_appendf(b, "</td><td></td></tr>\n");
		}
		bci_str_appendf(b, "</table>\n");
	}
	bci_str_appendf(b, "</body></html>\n");
}

static int run_json(const struct run_view *v, struct bci_str *b)
{
	const char *machine = v->page->machine, *run_id = v->page->run_id;
	struct bci_str url = { 0 };
	struct json_out j;
	struct bci_jsonw *w = &j.w;

	if (json_begin(&j) < 0)
		return -ENOMEM;
	bci_jsonw_object_begin(w);
	json_string(w, "machine", machine);
	json_string(w, "run_id", run_id);
	run_href(&url, machine, run_id);
	json_url(w, "url", &url);
	json_string(w, "build", v->build);
	json_string(w, "state", v->state);
	json_string(w, "kernel", v->kernel);
	json_string(w, "cmdline", v->cmdline);
	json_string(w, "image_id", v->image_id);
	json_time(w, "started", v->started);
	json_time(w, "ended", v->ended);
	json_time(w, "ingested", v->ingested);
	bci_jsonw_key(w, "archive");
	if (!v->archive_kept) {
		bci_jsonw_null(w);
	} else {
		bci_jsonw_object_begin(w);
		json_string(w, "sha256", v->digest);
		json_int(w, "bytes", v->archive_bytes);
		run_href(&url, machine, run_id);
		bci_str_appendf(&url, "/archive");
		json_url(w, "url", &url);
		bci_jsonw_object_end(w);
	}
	bci_jsonw_key(w, "job");
	if (v->has_job)
		job_json(w, &v->job);
	else
		bci_jsonw_null(w);
	bci_jsonw_key(w, "boots");
	bci_jsonw_array_begin(w);
	for (size_t i = 0; i < v->n_boots; i++) {
		const struct boot_copy *boot = &v->boots[i];

		bci_jsonw_object_begin(w);
		json_int(w, "index", boot->index);
		json_time(w, "time", boot->time);
		json_string(w, "kernel", boot->kernel);
		json_string(w, "cmdline", boot->cmdline);
		json_string(w, "previous", boot->previous);
		json_string(w, "ending", boot->ending);
		/* Its consoles, newest first (a boot's console cut in two by a reset is two). */
		bci_jsonw_key(w, "consoles");
		bci_jsonw_array_begin(w);
		for (size_t c = 0; c < v->page->n_consoles; c++)
			if (v->page->consoles[c].run_boot == (unsigned)boot->index)
				bci_jsonw_int(w, v->page->consoles[c].number);
		bci_jsonw_array_end(w);
		bci_jsonw_object_end(w);
	}
	bci_jsonw_array_end(w);
	bci_jsonw_key(w, "crash_records");
	bci_jsonw_array_begin(w);
	for (size_t i = 0; i < v->n_crashes; i++) {
		bci_jsonw_object_begin(w);
		json_int(w, "boot", v->crashes[i].boot);
		json_string(w, "source", v->crashes[i].source);
		json_string(w, "name", v->crashes[i].name);
		json_string(w, "path", v->crashes[i].path);
		bci_jsonw_object_end(w);
	}
	bci_jsonw_array_end(w);
	consoles_json(w, &url, machine, v->page->consoles, v->page->n_consoles);
	bci_jsonw_key(w, "suspend_cycles");
	bci_jsonw_array_begin(w);
	for (size_t i = 0; i < v->n_suspends; i++) {
		const struct suspend_copy *c = &v->suspends[i];
		const char *const keys[] = { "wall", "suspended", "latency", "kernel_suspend",
					     "kernel_resume" };
		const double seconds[] = { c->wall, c->suspended, c->latency, c->kernel_suspend,
					   c->kernel_resume };

		bci_jsonw_object_begin(w);
		json_int(w, "cycle", c->cycle);
		json_string(w, "state", c->state);
		json_string(w, "result", c->result);
		json_string(w, "woke", c->woke);
		for (size_t k = 0; k < 5; k++) {
			bci_jsonw_key(w, keys[k]);
			if (seconds[k] >= 0)
				bci_jsonw_double(w, seconds[k]);
			else
				bci_jsonw_null(w);
		}
		bci_jsonw_object_end(w);
	}
	bci_jsonw_array_end(w);
	bci_jsonw_key(w, "counts");
	bci_jsonw_object_begin(w);
	for (int s = 0; s < BCI_STATUS_COUNT; s++)
		if (v->counts[s])
			json_int(w, bci_status_name(s), v->counts[s]);
	bci_jsonw_object_end(w);
	bci_jsonw_key(w, "results");
	bci_jsonw_array_begin(w);
	for (size_t i = 0; i < v->n_results; i++) {
		const struct result_copy *r = &v->results[i];

		bci_jsonw_object_begin(w);
		json_string(w, "test", r->name);
		json_string(w, "result", r->result);
		json_int(w, "job", r->job);
		bci_jsonw_key(w, "duration");
		if (r->duration >= 0)
			bci_jsonw_double(w, r->duration);
		else
			bci_jsonw_null(w);
		run_href(&url, machine, run_id);
		bci_str_appendf(&url, "/results/");
		bci_html_url_escape(&url, r->name);
		json_url(w, "url", &url);
		bci_jsonw_object_end(w);
	}
	bci_jsonw_array_end(w);
	bci_jsonw_object_end(w);
	bci_str_free(&url);
	return json_end(&j, b);
}

int bci_pages_run(struct bci_store *store, const struct bci_run_page *page, struct bci_str *b,
		  char *err, size_t err_size)
{
	struct run_view v = { .page = page, .store = store };
	int ret = run_read(store, &v, err, err_size);

	if (ret == 0 && v.failed)
		ret = -ENOMEM;
	if (ret == 0) {
		if (page->json) {
			ret = run_json(&v, b);
		} else {
			run_html(&v, b);
			ret = b->data ? 0 : -ENOMEM;
		}
	}
	run_view_free(&v);
	return ret;
}
