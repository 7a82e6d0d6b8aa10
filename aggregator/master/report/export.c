// SPDX-License-Identifier: MIT
/*
 * Exports for other tools: a run as JUnit XML (what generic CI front ends
 * read) and a build as KCIDB I/O JSON, schema v4.2 (KernelCI's common
 * database: one checkout, one build, one test per result).
 *
 * KCIDB statuses: pass -> PASS; skip -> SKIP; fail, dmesg-fail -> FAIL;
 * incomplete, crash, timeout, abort -> ERROR (the test did not complete);
 * notrun -> MISS; dmesg-warn and warn -> PASS with the piglit result in
 * misc.warning. The piglit result and the IGT name are always in misc, since
 * a KCIDB path allows only [.a-zA-Z0-9_-]: igt@kms_flip@basic becomes
 * igt.kms_flip.basic, any other character '_'. The checkout's
 * git_commit_hash is given only when the build's commit is a full sha1 (the
 * schema's pattern); it is in misc.commit either way.
 *
 * JUnit, in the form the strictest common reader takes (the Jenkins xUnit
 * plugin's junit-10.xsd) and GitLab reads (testsuites > testsuite >
 * testcase, with failure, error or skipped): one testsuite per run, its
 * machine, run and build as properties; a testcase per result, classname
 * igt.BINARY, name the rest of the test name. fail and dmesg-fail are
 * failures, incomplete, crash, timeout and abort errors, skip and notrun
 * skipped: each says why in its message (the result and the line of the
 * logs that tells most) and carries the tail of the job's err, out and
 * dmesg as its text; warnings are passes whose system-out says so, with
 * the same logs. Text is UTF-8 XML: a byte that is not valid UTF-8, or a
 * character XML 1.0 cannot hold, is written as \xHH.
 */
#include "report.h"
#include "../names.h"
#include "../store/store.h"
#include "jsonw.h"
#include "strv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *kcidb_status(enum bci_status s)
{
	switch (s) {
	case BCI_STATUS_PASS:
	case BCI_STATUS_DMESG_WARN:
	case BCI_STATUS_WARN:
		return "PASS";
	case BCI_STATUS_SKIP:
		return "SKIP";
	case BCI_STATUS_FAIL:
	case BCI_STATUS_DMESG_FAIL:
		return "FAIL";
	case BCI_STATUS_NOTRUN:
		return "MISS";
	default:
		return "ERROR";
	}
}

const char *bci_export_kcidb_status(const char *result)
{
	int s = bci_status_parse(result);

	return s < 0 ? NULL : kcidb_status(s);
}

static int sha1_hex(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++, n++)
		if (!strchr("0123456789abcdef", *s))
			return 0;
	return n == 40;
}

static void rfc3339(double t, char *buf, size_t size)
{
	time_t sec = (time_t)t;
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
}

/* ---- KCIDB ---- */

struct run_keys {
	struct { int64_t key; char *machine, *run_id, *kernel; } *v;
	size_t n;
};

static int run_keep(const struct bci_store_run *run, void *ctx)
{
	struct run_keys *r = ctx;
	void *grown = realloc(r->v, (r->n + 1) * sizeof(*r->v));

	if (!grown)
		return -ENOMEM;
	r->v = grown;
	r->v[r->n].key = run->key;
	r->v[r->n].machine = strdup(run->machine);
	r->v[r->n].run_id = strdup(run->run_id);
	r->v[r->n].kernel = run->kernel ? strdup(run->kernel) : NULL;
	r->n++;
	return r->v[r->n - 1].machine && r->v[r->n - 1].run_id ? 0 : -ENOMEM;
}

struct kcidb_ctx {
	struct bci_jsonw *w;
	const char *origin, *build;
	const char *machine, *run_id, *kernel;
	const char *url;		/* serve's address, or NULL */
	struct bci_str link;
};

static void id_write(struct bci_jsonw *w, const char *origin, const char *const *parts, int n)
{
	bci_jsonw_string_begin(w, BCI_JSONW_UTF8);
	bci_jsonw_string_append(w, origin, strlen(origin));
	for (int i = 0; i < n; i++) {
		bci_jsonw_string_append(w, ":", 1);
		bci_jsonw_string_append(w, parts[i], strlen(parts[i]));
	}
	bci_jsonw_string_end(w);
}

static int kcidb_test(const struct bci_store_result *result, void *ctx)
{
	struct kcidb_ctx *c = ctx;
	struct bci_jsonw *w = c->w;
	const char *parts[] = { c->build, c->machine, c->run_id, result->name };
	int status = bci_status_parse(result->result);
	char *path = strdup(result->name);

	if (!path)
		return -ENOMEM;
	for (char *p = path; *p; p++)
		if (*p == '@')
			*p = '.';
		else if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.", *p))
			*p = '_';
	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "id");
	id_write(w, c->origin, parts, 4);
	bci_jsonw_key(w, "build_id");
	id_write(w, c->origin, parts, 1);
	bci_jsonw_key(w, "origin");
	bci_jsonw_string(w, c->origin);
	bci_jsonw_key(w, "path");
	bci_jsonw_string(w, path);
	bci_jsonw_key(w, "status");
	bci_jsonw_string(w, status < 0 ? "ERROR" : kcidb_status(status));
	if (result->duration >= 0) {
		bci_jsonw_key(w, "duration");
		bci_jsonw_double(w, result->duration);
	}
	if (c->url) {
		bci_str_reset(&c->link);
		if (bci_link_result(&c->link, c->url, c->machine, c->run_id, result->name) < 0) {
			free(path);
			return -ENOMEM;
		}
		bci_jsonw_key(w, "log_url");
		bci_jsonw_string(w, c->link.data);
	}
	bci_jsonw_key(w, "environment");
	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "comment");
	bci_jsonw_string(w, c->machine);
	bci_jsonw_key(w, "misc");
	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "machine");
	bci_jsonw_string(w, c->machine);
	bci_jsonw_key(w, "run_id");
	bci_jsonw_string(w, c->run_id);
	if (c->kernel) {
		bci_jsonw_key(w, "kernel");
		bci_jsonw_string(w, c->kernel);
	}
	bci_jsonw_object_end(w);
	bci_jsonw_object_end(w);
	bci_jsonw_key(w, "misc");
	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "igt_name");
	bci_jsonw_string(w, result->name);
	bci_jsonw_key(w, "result");
	bci_jsonw_string(w, result->result);
	if (status == BCI_STATUS_DMESG_WARN || status == BCI_STATUS_WARN) {
		bci_jsonw_key(w, "warning");
		bci_jsonw_string(w, result->result);
	}
	bci_jsonw_object_end(w);
	free(path);
	return bci_jsonw_object_end(w);
}

int bci_export_kcidb(struct bci_store *store, const char *build, const char *origin,
		     const char *url, FILE *out, char *err, size_t err_size)
{
	struct bci_store_build *b = NULL;
	struct run_keys runs = { 0 };
	struct bci_jsonw w;
	char when[64];
	int ret;

	if (!bci_name_kcidb_origin_ok(origin)) {
		snprintf(err, err_size, "origin '%s': KCIDB wants [a-z0-9_]+", origin);
		return -EINVAL;
	}
	ret = bci_store_build_read(store, build, &b, err, err_size);
	if (ret >= 0)
		ret = bci_store_build_runs_each(store, build, run_keep, &runs, err, err_size);
	if (ret < 0)
		goto out;
	bci_jsonw_init(&w, out, 1);
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "version");
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "major");
	bci_jsonw_int(&w, 4);
	bci_jsonw_key(&w, "minor");
	bci_jsonw_int(&w, 2);
	bci_jsonw_object_end(&w);

	bci_jsonw_key(&w, "checkouts");
	bci_jsonw_array_begin(&w);
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "id");
	id_write(&w, origin, &build, 1);
	bci_jsonw_key(&w, "origin");
	bci_jsonw_string(&w, origin);
	bci_jsonw_key(&w, "tree_name");
	bci_jsonw_string(&w, b->tree);
	if (sha1_hex(b->commit)) {
		bci_jsonw_key(&w, "git_commit_hash");
		bci_jsonw_string(&w, b->commit);
	}
	if (b->message_id) {
		/* KCIDB wants the address form, without the angle brackets. */
		size_t skip = b->message_id[0] == '<', len = strlen(b->message_id) - skip;

		if (len && b->message_id[skip + len - 1] == '>')
			len--;
		bci_jsonw_key(&w, "message_id");
		bci_jsonw_string_n(&w, b->message_id + skip, len, BCI_JSONW_UTF8);
	}
	if (b->series_title) {
		bci_jsonw_key(&w, "comment");
		bci_jsonw_string(&w, b->series_title);
	}
	rfc3339(b->registered, when, sizeof(when));
	bci_jsonw_key(&w, "start_time");
	bci_jsonw_string(&w, when);
	bci_jsonw_key(&w, "valid");
	bci_jsonw_bool(&w, true);
	bci_jsonw_key(&w, "misc");
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "commit");
	bci_jsonw_string(&w, b->commit);
	bci_jsonw_key(&w, "tier");
	bci_jsonw_string(&w, b->tier);
	if (b->base) {
		bci_jsonw_key(&w, "base_build");
		bci_jsonw_string(&w, b->base);
	}
	bci_jsonw_object_end(&w);
	bci_jsonw_object_end(&w);
	bci_jsonw_array_end(&w);

	bci_jsonw_key(&w, "builds");
	bci_jsonw_array_begin(&w);
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "id");
	id_write(&w, origin, &build, 1);
	bci_jsonw_key(&w, "checkout_id");
	id_write(&w, origin, &build, 1);
	bci_jsonw_key(&w, "origin");
	bci_jsonw_string(&w, origin);
	bci_jsonw_key(&w, "start_time");
	bci_jsonw_string(&w, when);
	bci_jsonw_key(&w, "valid");
	bci_jsonw_bool(&w, true);
	bci_jsonw_key(&w, "misc");
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "tier");
	bci_jsonw_string(&w, b->tier);
	bci_jsonw_object_end(&w);
	bci_jsonw_object_end(&w);
	bci_jsonw_array_end(&w);

	bci_jsonw_key(&w, "tests");
	bci_jsonw_array_begin(&w);
	for (size_t i = 0; i < runs.n && ret >= 0; i++) {
		struct kcidb_ctx c = { .w = &w, .origin = origin, .build = build,
				       .machine = runs.v[i].machine, .run_id = runs.v[i].run_id,
				       .kernel = runs.v[i].kernel, .url = url };

		ret = bci_store_results_each(store, runs.v[i].key, kcidb_test, &c, err, err_size);
		bci_str_free(&c.link);
		if (ret == -ENOMEM && !err[0])
			snprintf(err, err_size, "%s", strerror(ENOMEM));
	}
	bci_jsonw_array_end(&w);
	bci_jsonw_object_end(&w);
	if (ret >= 0) {
		ret = bci_jsonw_finish(&w);
		if (ret < 0)
			snprintf(err, err_size, "writing the KCIDB document: %s", strerror(-ret));
	}
out:
	for (size_t i = 0; i < runs.n; i++) {
		free(runs.v[i].machine);
		free(runs.v[i].run_id);
		free(runs.v[i].kernel);
	}
	free(runs.v);
	free(b);
	return ret < 0 ? ret : 0;
}

/* ---- JUnit ---- */

/* The tail of each log a failure carries, cut to whole lines. */
#define JUNIT_EXCERPT 8192
/* The longest message attribute: the result and the line that says why. */
#define JUNIT_MESSAGE 300

/*
 * Bytes as XML 1.0 text, in UTF-8: markup characters as entities (and, in an
 * attribute, tab, newline and carriage return as character references, which
 * a parser would turn into spaces); every byte that is not part of valid
 * UTF-8, or is a character XML 1.0 cannot hold (a control character, U+FFFE,
 * U+FFFF), as the four characters \xHH.
 */
static void xml_bytes(FILE *out, const char *text, size_t len, bool attribute)
{
	const unsigned char *s = (const unsigned char *)text, *end = s + len;

	while (s < end) {
		unsigned c = *s;
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			   (c & 0xf8) == 0xf0 ? 4 : 0;
		unsigned long cp = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
		bool ok = n > 0 && (size_t)(end - s) >= n;

		for (size_t i = 1; ok && i < n; i++) {
			ok = (s[i] & 0xc0) == 0x80;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		/* Overlong forms, surrogates, past U+10FFFF, and what XML 1.0 excludes. */
		if (ok && ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
			   (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || cp == 0xfffe ||
			   cp == 0xffff || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r')))
			ok = false;
		if (!ok) {
			fprintf(out, "\\x%02X", c);
			s++;
			continue;
		}
		switch (c) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\t': fputs(attribute ? "&#9;" : "\t", out); break;
		case '\n': fputs(attribute ? "&#10;" : "\n", out); break;
		case '\r': fputs("&#13;", out); break;
		default: fwrite(s, 1, n, out);
		}
		s += n;
	}
}

static void xml_text(FILE *out, const char *s)
{
	xml_bytes(out, s, strlen(s), true);
}

/* One result, copied out of the store's iteration (logs are read after it). */
struct junit_case {
	char *name;
	char *result;
	double duration;
	int job;
	int status;
};

struct junit_run {
	int64_t key;
	double started;
	struct bci_store_run run;	/* the fields bci_store_job_log_open() reads, copied */
	struct junit_case *cases;
	size_t count, cap;
	long failures, errors, skipped;
	double time;
	int failed;			/* -ENOMEM once a copy failed */
};

/* The element a result becomes: failure, error, skipped, or none (a pass, a warning). */
static const char *junit_tag(int status)
{
	switch (status) {
	case BCI_STATUS_FAIL:
	case BCI_STATUS_DMESG_FAIL:
		return "failure";
	case BCI_STATUS_SKIP:
	case BCI_STATUS_NOTRUN:
		return "skipped";
	case BCI_STATUS_PASS:
	case BCI_STATUS_DMESG_WARN:
	case BCI_STATUS_WARN:
		return NULL;
	default:
		return "error";
	}
}

static int junit_collect(const struct bci_store_result *result, void *ctx)
{
	struct junit_run *r = ctx;
	struct junit_case *c;
	const char *tag;

	if (r->count == r->cap) {
		size_t more = r->cap ? r->cap * 2 : 256;
		struct junit_case *grown = realloc(r->cases, more * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->cases = grown;
		r->cap = more;
	}
	c = &r->cases[r->count];
	*c = (struct junit_case){ .name = strdup(result->name), .result = strdup(result->result),
				  .duration = result->duration > 0 ? result->duration : 0,
				  .job = result->job, .status = bci_status_parse(result->result) };
	if (!c->name || !c->result) {
		free(c->name);
		free(c->result);
		return -ENOMEM;
	}
	r->count++;
	tag = junit_tag(c->status);
	r->failures += tag && !strcmp(tag, "failure");
	r->errors += tag && !strcmp(tag, "error");
	r->skipped += tag && !strcmp(tag, "skipped");
	r->time += c->duration;
	return 0;
}

static char *dup_or_null(const char *s, int *failed)
{
	char *copy = s ? strdup(s) : NULL;

	if (s && !copy)
		*failed = -ENOMEM;
	return copy;
}

static int junit_run_found(const struct bci_store_run *run, void *ctx)
{
	struct junit_run *r = ctx;

	r->key = run->key;
	r->started = run->started;
	r->run.machine = dup_or_null(run->machine, &r->failed);
	r->run.run_id = dup_or_null(run->run_id, &r->failed);
	r->run.build = dup_or_null(run->build, &r->failed);
	r->run.digest = dup_or_null(run->digest, &r->failed);
	r->run.archive_path = dup_or_null(run->archive_path, &r->failed);
	r->run.archive_root = dup_or_null(run->archive_root, &r->failed);
	return r->failed;
}

static void junit_run_free(struct junit_run *r)
{
	for (size_t i = 0; i < r->count; i++) {
		free(r->cases[i].name);
		free(r->cases[i].result);
	}
	free(r->cases);
	free((char *)r->run.machine);
	free((char *)r->run.run_id);
	free((char *)r->run.build);
	free((char *)r->run.digest);
	free((char *)r->run.archive_path);
	free((char *)r->run.archive_root);
}

/* A log's last JUNIT_EXCERPT bytes, from a line's start: the excerpt and its file's size. */
struct excerpt {
	char text[JUNIT_EXCERPT + 1];
	size_t len;
	long long size;			/* -1: not read (@why says why) */
	char why[256];
};

static void excerpt_read(const char *data_dir, const struct junit_run *r, const struct junit_case *c,
			 const char *which, struct excerpt *e)
{
	struct bci_store_result result = { .job = c->job, .name = c->name, .result = c->result };
	struct stat st;
	off_t from;
	ssize_t n;
	int fd;

	e->len = 0;
	e->size = -1;
	fd = bci_store_job_log_open(data_dir, &r->run, &result, which, e->why, sizeof(e->why));
	if (fd < 0) {
		if (fd == -ENOENT || !e->why[0])
			snprintf(e->why, sizeof(e->why), "%s", strerror(-fd));
		return;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(e->why, sizeof(e->why), "%s", strerror(errno));
		close(fd);
		return;
	}
	from = st.st_size > JUNIT_EXCERPT ? st.st_size - JUNIT_EXCERPT : 0;
	n = pread(fd, e->text, JUNIT_EXCERPT, from);
	close(fd);
	if (n < 0) {
		snprintf(e->why, sizeof(e->why), "%s", strerror(errno));
		return;
	}
	e->len = (size_t)n;
	e->size = (long long)st.st_size;
	if (from > 0) {
		char *nl = memchr(e->text, '\n', e->len);

		if (nl && nl + 1 < e->text + e->len) {
			e->len -= (size_t)(nl + 1 - e->text);
			memmove(e->text, nl + 1, e->len);
		}
	}
	e->text[e->len] = '\0';
}

/*
 * The line of @e that says most about why (IGT's "Failed assertion" or
 * "Test requirement" line, else its first CRITICAL line), or the last
 * non-empty one; for the kernel log, the first record at warning level or
 * worse (its text). Into @line (JUNIT_MESSAGE bytes), or "" when none.
 */
static void telling_line(const struct excerpt *e, bool kernel_log, char *line)
{
	static const char *const marks[] = { "Failed assertion", "Test requirement", "CRITICAL" };
	const char *text = e->text, *best = NULL, *last = NULL;
	size_t best_rank = sizeof(marks) / sizeof(marks[0]);

	line[0] = '\0';
	for (const char *p = text; p < text + e->len;) {
		const char *end = memchr(p, '\n', (size_t)(text + e->len - p));

		end = end ? end : text + e->len;
		if (kernel_log) {
			const char *semi = memchr(p, ';', (size_t)(end - p));

			if (semi && *p >= '0' && *p <= '4' && p[1] == ',') {
				best = semi + 1;
				snprintf(line, JUNIT_MESSAGE, "%.*s", (int)(end - best), best);
				return;
			}
		} else {
			for (size_t i = 0; i < best_rank; i++)
				if (memmem(p, (size_t)(end - p), marks[i], strlen(marks[i]))) {
					best = p;
					best_rank = i;
					break;
				}
			if (end > p)
				last = p;
		}
		p = end + 1;
	}
	if (!best)
		best = last;
	if (best) {
		const char *end = memchr(best, '\n', (size_t)(text + e->len - best));

		snprintf(line, JUNIT_MESSAGE, "%.*s", (int)((end ? end : text + e->len) - best), best);
	}
}

static void excerpt_write(FILE *out, const char *which, const struct excerpt *e)
{
	fprintf(out, "--- %s.txt", which);
	if (e->size < 0)
		fputs(": not available (", out);
	else if (e->size == 0)
		fputs(", empty ---\n", out);
	else if ((long long)e->len < e->size)
		fprintf(out, ", its last %zu of %lld bytes ---\n", e->len, e->size);
	else
		fputs(" ---\n", out);
	xml_bytes(out, e->size < 0 ? e->why : e->text, e->size < 0 ? strlen(e->why) : e->len, false);
	fputs(e->size < 0 ? ")\n" : e->len && e->text[e->len - 1] != '\n' ? "\n" : "", out);
}

/*
 * @c as a testcase; with @link (its result page on serve), its system-out
 * starts with "result page: LINK", as does a failure's text.
 */
static void junit_case_write(FILE *out, const char *data_dir, const struct junit_run *r,
			     const struct junit_case *c, const char *link)
{
	static const char *const streams[] = { "err", "out", "dmesg" };
	const char *tag = junit_tag(c->status);
	const char *at = strchr(c->name, '@');
	const char *second = at ? strchr(at + 1, '@') : NULL;
	bool warned = c->status == BCI_STATUS_DMESG_WARN || c->status == BCI_STATUS_WARN;
	struct excerpt logs[3];
	char line[JUNIT_MESSAGE] = "";

	fputs("    <testcase classname=\"", out);
	if (second) {
		fputs("igt.", out);
		xml_bytes(out, at + 1, (size_t)(second - at - 1), true);
		fputs("\" name=\"", out);
		xml_text(out, second + 1);
	} else {
		fputs("igt\" name=\"", out);
		xml_text(out, at ? at + 1 : c->name);
	}
	fprintf(out, "\" time=\"%.3f\"", c->duration);
	if (!tag && !warned && !link) {
		fputs("/>\n", out);
		return;
	}
	fputs(">\n", out);
	if (!tag && !warned) {
		fputs("      <system-out>result page: ", out);
		xml_text(out, link);
		fputs("\n</system-out>\n    </testcase>\n", out);
		return;
	}
	/* A result that never ran has no logs. */
	for (size_t i = 0; i < 3; i++) {
		logs[i] = (struct excerpt){ .size = -1 };
		if (c->status != BCI_STATUS_NOTRUN && c->job >= 0)
			excerpt_read(data_dir, r, c, streams[i], &logs[i]);
		else
			snprintf(logs[i].why, sizeof(logs[i].why), "the test did not run");
	}
	if (c->status == BCI_STATUS_DMESG_FAIL || c->status == BCI_STATUS_DMESG_WARN)
		telling_line(&logs[2], true, line);
	if (!line[0])
		telling_line(&logs[0], false, line);
	if (!line[0])
		telling_line(&logs[1], false, line);
	if (tag) {
		fprintf(out, "      <%s message=\"", tag);
		xml_text(out, c->result);
		if (line[0]) {
			fputs(": ", out);
			xml_text(out, line);
		}
		fputs("\" type=\"", out);
		xml_text(out, c->result);
		fputs("\">", out);
	} else {
		fputs("      <system-out>", out);
	}
	xml_text(out, c->name);
	fputs(": ", out);
	xml_text(out, c->result);
	fputs("\n", out);
	if (link) {
		fputs("result page: ", out);
		xml_text(out, link);
		fputs("\n", out);
	}
	for (size_t i = 0; i < 3; i++)
		if (c->status != BCI_STATUS_NOTRUN)
			excerpt_write(out, streams[i], &logs[i]);
	fprintf(out, "</%s>\n", tag ? tag : "system-out");
	if (tag && link) {
		fputs("      <system-out>result page: ", out);
		xml_text(out, link);
		fputs("\n</system-out>\n", out);
	}
	fputs("    </testcase>\n", out);
}

static void property(FILE *out, const char *name, const char *value)
{
	fprintf(out, "      <property name=\"%s\" value=\"", name);
	xml_text(out, value);
	fputs("\"/>\n", out);
}

int bci_export_junit(struct bci_store *store, const char *data_dir, const char *machine,
		     const char *run_id, const char *url, FILE *out, char *err, size_t err_size)
{
	struct bci_str link = { 0 };
	struct junit_run r = { 0 };
	char when[64] = "";
	int ret;

	ret = bci_store_run_get(store, machine, run_id, junit_run_found, &r, err, err_size);
	if (ret == 0)
		ret = bci_store_results_each(store, r.key, junit_collect, &r, err, err_size);
	if (ret < 0) {
		if (ret == -ENOMEM && !err[0])
			snprintf(err, err_size, "%s", strerror(ENOMEM));
		junit_run_free(&r);
		return ret;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites name=\"bootci\" tests=\"%zu\" failures=\"%ld\" errors=\"%ld\" time=\"%.3f\">\n",
		r.count, r.failures, r.errors, r.time);
	fputs("  <testsuite name=\"", out);
	xml_text(out, machine);
	fputc('/', out);
	xml_text(out, run_id);
	fputs("\" hostname=\"", out);
	xml_text(out, machine);
	fprintf(out, "\" tests=\"%zu\" failures=\"%ld\" errors=\"%ld\" skipped=\"%ld\" time=\"%.3f\"",
		r.count, r.failures, r.errors, r.skipped, r.time);
	if (r.started > 0) {
		time_t sec = (time_t)r.started;
		struct tm tm;

		gmtime_r(&sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(out, " timestamp=\"%s\"", when);
	}
	fputs(">\n    <properties>\n", out);
	property(out, "machine", machine);
	property(out, "run_id", run_id);
	if (r.run.build)
		property(out, "build", r.run.build);
	fputs("    </properties>\n", out);
	for (size_t i = 0; i < r.count; i++) {
		bci_str_reset(&link);
		if (url && bci_link_result(&link, url, machine, run_id, r.cases[i].name) < 0) {
			snprintf(err, err_size, "%s", strerror(ENOMEM));
			bci_str_free(&link);
			junit_run_free(&r);
			return -ENOMEM;
		}
		junit_case_write(out, data_dir, &r, &r.cases[i], url ? link.data : NULL);
	}
	fputs("  </testsuite>\n</testsuites>\n", out);
	bci_str_free(&link);
	junit_run_free(&r);
	if (ferror(out) || fflush(out)) {
		snprintf(err, err_size, "writing the JUnit document: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}
