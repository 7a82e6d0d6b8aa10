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
 * JUnit: one testsuite per run, classname igt.BINARY, name the rest of the
 * test name; fail and dmesg-fail are failures, incomplete, crash, timeout
 * and abort errors, skip and notrun skipped; warnings are passes with the
 * result in a property. Text is XML-escaped; control characters XML 1.0
 * cannot hold become '?'.
 */
#include "report.h"
#include "../names.h"
#include "../store/store.h"
#include "jsonw.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int bci_export_kcidb(struct bci_store *store, const char *build, const char *origin, FILE *out,
		     char *err, size_t err_size)
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
				       .kernel = runs.v[i].kernel };

		ret = bci_store_results_each(store, runs.v[i].key, kcidb_test, &c, err, err_size);
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

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			fputc((unsigned char)*s < 0x20 && !strchr("\t\n\r", *s) ? '?' : *s, out);
		}
	}
}

struct junit_ctx {
	FILE *out;
	long tests, failures, errors, skipped;
	double time;
	int count_only;
};

static int junit_case(const struct bci_store_result *result, void *ctx)
{
	struct junit_ctx *c = ctx;
	int status = bci_status_parse(result->result);
	const char *at = strchr(result->name, '@');
	const char *second = at ? strchr(at + 1, '@') : NULL;
	const char *kind = NULL, *tag = NULL;

	switch (status) {
	case BCI_STATUS_FAIL:
	case BCI_STATUS_DMESG_FAIL:
		tag = "failure";
		kind = result->result;
		break;
	case BCI_STATUS_SKIP:
	case BCI_STATUS_NOTRUN:
		tag = "skipped";
		kind = result->result;
		break;
	case BCI_STATUS_PASS:
	case BCI_STATUS_DMESG_WARN:
	case BCI_STATUS_WARN:
		break;
	default:
		tag = "error";
		kind = result->result;
	}
	if (c->count_only) {
		c->tests++;
		c->failures += tag && !strcmp(tag, "failure");
		c->errors += tag && !strcmp(tag, "error");
		c->skipped += tag && !strcmp(tag, "skipped");
		c->time += result->duration > 0 ? result->duration : 0;
		return 0;
	}
	fputs("    <testcase classname=\"", c->out);
	if (second) {
		char *cls = strndup(result->name, second - result->name);

		if (!cls)
			return -ENOMEM;
		for (char *p = cls; *p; p++)
			if (*p == '@')
				*p = '.';
		xml_text(c->out, cls);
		free(cls);
		fputs("\" name=\"", c->out);
		xml_text(c->out, second + 1);
	} else {
		fputs("igt\" name=\"", c->out);
		xml_text(c->out, at ? at + 1 : result->name);
	}
	fprintf(c->out, "\" time=\"%.3f\">\n", result->duration > 0 ? result->duration : 0.0);
	if (tag) {
		fprintf(c->out, "      <%s message=\"", tag);
		xml_text(c->out, kind);
		fprintf(c->out, "\" type=\"");
		xml_text(c->out, kind);
		fputs("\"/>\n", c->out);
	}
	fputs("      <properties><property name=\"result\" value=\"", c->out);
	xml_text(c->out, result->result);
	fprintf(c->out, "\"/><property name=\"igt_name\" value=\"");
	xml_text(c->out, result->name);
	fputs("\"/></properties>\n    </testcase>\n", c->out);
	return 0;
}

struct run_found {
	int64_t key;
	double started;
	int found;
};

static int run_found(const struct bci_store_run *run, void *ctx)
{
	struct run_found *f = ctx;

	f->key = run->key;
	f->started = run->started;
	f->found = 1;
	return 0;
}

int bci_export_junit(struct bci_store *store, const char *machine, const char *run_id, FILE *out,
		     char *err, size_t err_size)
{
	struct run_found run = { 0 };
	struct junit_ctx c = { .out = out, .count_only = 1 };
	char when[64] = "";
	int ret;

	ret = bci_store_run_get(store, machine, run_id, run_found, &run, err, err_size);
	if (ret < 0)
		return ret;
	ret = bci_store_results_each(store, run.key, junit_case, &c, err, err_size);
	if (ret < 0)
		return ret;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" skipped=\"%ld\" time=\"%.3f\">\n",
		c.tests, c.failures, c.errors, c.skipped, c.time);
	fputs("  <testsuite name=\"", out);
	xml_text(out, machine);
	fputc('/', out);
	xml_text(out, run_id);
	fputs("\" hostname=\"", out);
	xml_text(out, machine);
	fprintf(out, "\" tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" skipped=\"%ld\" time=\"%.3f\"",
		c.tests, c.failures, c.errors, c.skipped, c.time);
	if (run.started > 0) {
		time_t sec = (time_t)run.started;
		struct tm tm;

		gmtime_r(&sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(out, " timestamp=\"%s\"", when);
	}
	fputs(">\n", out);
	c.count_only = 0;
	ret = bci_store_results_each(store, run.key, junit_case, &c, err, err_size);
	if (ret < 0)
		return ret;
	fputs("  </testsuite>\n</testsuites>\n", out);
	if (ferror(out) || fflush(out)) {
		snprintf(err, err_size, "writing the JUnit document: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}
