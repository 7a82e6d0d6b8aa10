// SPDX-License-Identifier: MIT
/*
 * The reply to a patch series: one message in an mbox (mboxrd: a "From "
 * line before it, body lines that start with ">*From " get one more '>'),
 * RFC 5322 headers (Date, Message-ID, threading on the series' cover letter
 * through In-Reply-To and References), MIME 1.0, text/plain in UTF-8 sent
 * 8bit. The subject carries a check mark or a cross, so it is always RFC
 * 2047 encoded (lib/mail_header.h: B encoding, each encoded-word at most 75
 * characters and whole UTF-8 characters, folded). Header values taken from
 * the store or the command line are checked: a line break in one would let
 * it write headers of its own.
 *
 * The body puts the possible new issues first, as people read the top of
 * a mail: then known issues with their bug links, flaky tests with their
 * failures in the baseline (on the machine's shard group), fixed tests and
 * warnings, and the links to the matrix. Each section lists a test
 * once with its machines beneath, those with the same transition on one
 * line (CI Bug Log's form), each line linked to serve's pages (links.c);
 * many tests of one binary with the same lines are one item, so 20 tests
 * failing on 40 machines are 20 items, not 800.
 *
 * The mbox's framing (the From_ line, >From quoting, the blank line that
 * ends a message) is left out for a mail transfer agent (options->bare).
 */
#include "report.h"
#include "../names.h"
#include "mail_header.h"
#include "strv.h"
#include "sort.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A header value from outside: printable ASCII and blanks only (no line break can sneak in). */
static int value_plain(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

/*
 * What a dot-atom keeps of @in: the characters bci_name_clean() keeps, its
 * dots too unless one would start or end the atom or follow another.
 */
static void atom_clean(const char *in, char *out, size_t size)
{
	size_t i;

	bci_name_clean(in, out, size);
	i = strlen(out);
	if (!i || out[0] == '.' || out[i - 1] == '.' || strstr(out, ".."))
		for (size_t j = 0; j < i; j++)
			if (out[j] == '.')
				out[j] = '-';
}

static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* The body, built in memory first so that the From_ escaping sees every line. */
struct body {
	char *p;
	size_t len, cap;
	int oom;
};

static void body_printf(struct body *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void body_printf(struct body *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if (b->p && b->len + n < b->cap) {
			b->len += n;
			return;
		}
		char *grown = realloc(b->p, b->cap * 2 + n + 256);

		if (!grown) {
			b->oom = 1;
			return;
		}
		b->p = grown;
		b->cap = b->cap * 2 + n + 256;
	}
}

/* Text from the store for the body: control characters (a line break in a title) become blanks. */
static void text_clean(char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

/* How long "igt@binary" is in @test (the whole name when it has no subtest). */
static size_t binary_length(const char *test)
{
	const char *at = strchr(test, '@');
	const char *second = at ? strchr(at + 1, '@') : NULL;

	return second ? (size_t)(second - test) : strlen(test);
}

static int text_order(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* A section's changes by test, then transition and bug (one line each), then machine. */
static int line_order(const void *x, const void *y)
{
	const struct bci_report_change *a = *(const struct bci_report_change *const *)x;
	const struct bci_report_change *b = *(const struct bci_report_change *const *)y;
	int d = strcmp(a->test, b->test);

	if (!d)
		d = (int)a->from - (int)b->from;
	if (!d)
		d = (int)a->to - (int)b->to;
	if (!d)
		d = text_order(a->bug, b->bug);
	/* A flaky test's machines by where its failures were counted: one line each place. */
	if (!d && a->verdict == BCI_VERDICT_FLAKY && b->verdict == BCI_VERDICT_FLAKY &&
	    (a->group || b->group))
		d = text_order(a->group, b->group);
	/* shard-2 before shard-10, as every page lists machines. */
	return d ? d : bci_natural_compare(a->machine, b->machine);
}

/* Where a flaky test's failures were counted: its machine's shard group, else the machine. */
static const char *history_place(const struct bci_report_change *c)
{
	return c->group ? c->group : c->machine;
}

/*
 * Whether two changes' lines say the same of their history: a flaky test's
 * line its baseline or its reruns, a possible new issue's its reruns.
 */
static int same_history(const struct bci_report_change *a, const struct bci_report_change *b)
{
	if (a->verdict != b->verdict || a->rerun_runs != b->rerun_runs ||
	    a->rerun_failed != b->rerun_failed)
		return 0;
	if (a->verdict != BCI_VERDICT_FLAKY || a->rerun_runs)
		return 1;
	return a->baseline_runs == b->baseline_runs && a->baseline_failed == b->baseline_failed &&
	       !strcmp(history_place(a), history_place(b));
}

/*
 * What a line says of its change's history: a flaky test's rate (its
 * reruns', else its baseline's), a possible new issue's reruns (confirmed,
 * or not back); nothing for the others.
 */
static void history_write(struct body *b, const struct bci_report *r,
			  const struct bci_report_change *c)
{
	if (c->verdict == BCI_VERDICT_FLAKY && c->rerun_runs)
		body_printf(b, " (flaky: passed %u of %u reruns)", c->rerun_runs - c->rerun_failed,
			    c->rerun_runs);
	else if (c->verdict == BCI_VERDICT_FLAKY)
		body_printf(b, " (flaky: failed %u of %u runs on %s)", c->baseline_failed,
			    c->baseline_runs, history_place(c));
	else if (c->verdict == BCI_VERDICT_NEW && c->rerun_runs)
		body_printf(b, " (confirmed: failed %u of %u reruns)", c->rerun_failed,
			    c->rerun_runs);
	else if (c->verdict == BCI_VERDICT_NEW && r->reruns)
		body_printf(b, " (unconfirmed: no rerun of it came back)");
}

static int same_line(const struct bci_report_change *a, const struct bci_report_change *b)
{
	return !strcmp(a->test, b->test) && a->from == b->from && a->to == b->to &&
	       !text_order(a->bug, b->bug) && same_history(a, b);
}

/*
 * One test of a section: its changes, one per machine, and the text of its
 * machine lines without their links (what two tests must share to fold).
 */
struct item {
	const struct bci_report_change **changes;
	size_t n;
	size_t binary_length;
	char *lines;
	size_t group_size;		/* the tests of its binary with the same lines */
	int folded_lead;		/* 1: the fold's line is written here; -1: folded away */
};

/* Lines wrap before this column, a machine name never split. */
#define LINE_WIDTH 78

/* Appends @link's address, or fails the body when it could not be made. */
static void link_line(struct body *b, struct bci_str *link, int ret)
{
	if (ret < 0)
		b->oom = 1;
	else
		body_printf(b, "      %s\n", link->data);
	bci_str_reset(link);
}

/*
 * The machine lines of @it: "    - m1, m2: [FROM] -> [TO] (bug)", the
 * machines of one transition on one line (wrapped under it), and with @url
 * each followed by its link: the result's page when the line names one
 * machine, else the matrix showing the test's row (its cells link to each
 * machine's result page).
 */
static void lines_write(struct body *b, const struct bci_report *r, const struct item *it,
			const char *url)
{
	struct bci_str link = { 0 };

	for (size_t i = 0; i < it->n;) {
		size_t end = i + 1, column = 6;

		while (end < it->n && same_line(it->changes[i], it->changes[end]))
			end++;
		body_printf(b, "    - ");
		for (size_t j = i; j < end; j++) {
			/* The name and its ',' or ':' on this line, else on the next (no blank left at the end). */
			size_t len = strlen(it->changes[j]->machine) + 1;

			if (j > i && column + 1 + len > LINE_WIDTH) {
				body_printf(b, "\n      ");
				column = 6;
			} else if (j > i) {
				body_printf(b, " ");
				column++;
			}
			body_printf(b, "%s%s", it->changes[j]->machine, j + 1 < end ? "," : ":");
			column += len;
		}
		body_printf(b, " [%s] -> [%s]", bci_status_label(it->changes[i]->from),
			    bci_status_label(it->changes[i]->to));
		if (it->changes[i]->bug)
			body_printf(b, " (%s)", it->changes[i]->bug);
		history_write(b, r, it->changes[i]);
		body_printf(b, "\n");
		if (url)
			link_line(b, &link, end - i == 1 ?
				  bci_link_result(&link, url, it->changes[i]->machine,
						  it->changes[i]->run_id, it->changes[i]->test) :
				  bci_link_build_tests(&link, url, r->build, it->changes[i]->test, true,
						       false));
		i = end;
	}
	bci_str_free(&link);
}

/* Items of one binary with the same lines together, by name within. */
static int fold_order(const void *x, const void *y)
{
	const struct item *a = *(const struct item *const *)x, *b = *(const struct item *const *)y;
	size_t la = a->binary_length, lb = b->binary_length;
	int d = strncmp(a->changes[0]->test, b->changes[0]->test, la < lb ? la : lb);

	if (!d)
		d = (la > lb) - (la < lb);
	if (!d)
		d = strcmp(a->lines, b->lines);
	return d ? d : strcmp(a->changes[0]->test, b->changes[0]->test);
}

static int same_fold(const struct item *a, const struct item *b)
{
	/* A test without a subtest is its binary: it folds with nothing. */
	return a->binary_length == b->binary_length &&
	       a->binary_length < strlen(a->changes[0]->test) &&
	       b->binary_length < strlen(b->changes[0]->test) &&
	       !strncmp(a->changes[0]->test, b->changes[0]->test, a->binary_length) &&
	       !strcmp(a->lines, b->lines);
}

/*
 * The section of @verdict: each test once, its machines beneath grouped by
 * transition (CI Bug Log's form); more than @fold_after tests of one binary
 * with the same lines are one item, "igt@binary@* (N subtests)", linked to
 * the matrix showing them.
 */
static void section_write(struct body *b, const struct bci_report *r, enum bci_verdict verdict,
			  const char *title, const char *intro, int fold_after, const char *url)
{
	const struct bci_report_change **changes = NULL;
	struct item *items = NULL, **by_fold = NULL;
	size_t n = 0, n_items = 0;
	struct bci_str link = { 0 };

	for (size_t i = 0; i < r->n_changes; i++)
		n += r->changes[i].verdict == verdict;
	if (!n)
		return;
	changes = malloc(n * sizeof(*changes));
	items = calloc(n, sizeof(*items));
	by_fold = malloc(n * sizeof(*by_fold));
	if (!changes || !items || !by_fold) {
		b->oom = 1;
		goto out;
	}
	n = 0;
	for (size_t i = 0; i < r->n_changes; i++)
		if (r->changes[i].verdict == verdict)
			changes[n++] = &r->changes[i];
	qsort(changes, n, sizeof(*changes), line_order);
	for (size_t i = 0, end; i < n; i = end) {
		struct item *it = &items[n_items];
		struct body lines = { 0 };

		for (end = i + 1; end < n && !strcmp(changes[end]->test, changes[i]->test); end++)
			;
		*it = (struct item){ .changes = changes + i, .n = end - i,
				     .binary_length = binary_length(changes[i]->test) };
		lines_write(&lines, r, it, NULL);
		if (lines.oom || !lines.p) {
			free(lines.p);
			b->oom = 1;
			goto out;
		}
		it->lines = lines.p;
		by_fold[n_items] = it;
		n_items++;
	}
	qsort(by_fold, n_items, sizeof(*by_fold), fold_order);
	for (size_t i = 0, end; i < n_items; i = end) {
		for (end = i + 1; end < n_items && same_fold(by_fold[i], by_fold[end]); end++)
			;
		for (size_t j = i; j < end; j++) {
			by_fold[j]->group_size = end - i;
			if (end - i > (size_t)fold_after)
				by_fold[j]->folded_lead = j == i ? 1 : -1;
		}
	}

	body_printf(b, "== %s ==\n\n  %s\n\n", title, intro);
	for (size_t i = 0; i < n_items; i++) {
		const struct item *it = &items[i];
		const char *test = it->changes[0]->test;

		if (it->folded_lead < 0)
			continue;
		if (!it->folded_lead) {
			body_printf(b, "  * %s:\n", test);
			lines_write(b, r, it, url);
		} else {
			/* "igt@binary@": the fold's name and its link's prefix. */
			char *prefix = strndup(test, it->binary_length + 1);

			if (!prefix) {
				b->oom = 1;
				goto out;
			}
			body_printf(b, "  * %s* (%zu subtests):\n%s", prefix, it->group_size, it->lines);
			if (url)
				link_line(b, &link, bci_link_build_tests(&link, url, r->build, prefix,
									 false, true));
			free(prefix);
		}
		body_printf(b, "\n");
	}
out:
	for (size_t i = 0; i < n_items; i++)
		free(items[i].lines);
	bci_str_free(&link);
	free(by_fold);
	free(items);
	free(changes);
}

int bci_mbox_write(FILE *out, const struct bci_report *r, const struct bci_mbox_options *o,
		   char *err, size_t err_size)
{
	const char *from = o->from && *o->from ? o->from : "bootci <bootci@localhost>";
	const char *url = o->matrix_url && *o->matrix_url ? o->matrix_url : NULL;
	char series_id[BCI_NAME_MESSAGE_ID_MAX + 1], domain[256], build_atom[256], *subject_text = NULL, *subject = NULL;
	char *title = NULL, *at;
	int failed = bci_report_failed(r);
	int fold_after = o->fold_after > 0 ? o->fold_after : BCI_MBOX_FOLD_AFTER;
	long suspend_regressions = 0;
	struct body b = { 0 };
	struct bci_str matrix = { 0 }, baseline = { 0 };
	struct tm tm;
	int ret = 0;

	if (!value_plain(from) || (o->to && !value_plain(o->to)) || (url && !value_plain(url))) {
		snprintf(err, err_size, "From, To and the matrix URL must be printable ASCII on one line");
		return -EINVAL;
	}
	if (r->message_id && bci_name_message_id(r->message_id, series_id, sizeof(series_id)) < 0) {
		snprintf(err, err_size, "build %s: '%s' is not a Message-ID (<left@right>, one line)",
			 r->build, r->message_id);
		return -EINVAL;
	}
	at = strrchr(from, '@');
	atom_clean(at ? at + 1 : "localhost", domain, sizeof(domain));
	if ((at = strchr(domain, '>')))
		*at = '\0';
	for (char *p = domain; *p; p++)
		if (*p == '-' && !p[1])
			*p = '\0';
	/* The build's folder (html_write.c), which no other build shares: the Message-ID's too. */
	bci_name_folder(r->build, build_atom, sizeof(build_atom));
	title = strdup(r->series_title ? r->series_title : r->build);
	if (!title)
		return -ENOMEM;
	text_clean(title);
	if (asprintf(&subject_text, "%s Fi.CI.%s: %s for %s", failed ? "\xe2\x9c\x97" : "\xe2\x9c\x93",
		     r->tier && !strcmp(r->tier, "full") ? "FULL" : "FAST",
		     failed ? "failure" : "success", title) < 0) {
		subject_text = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = bci_mail_header_encode("Subject", subject_text, &subject);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < r->n_suspend; i++)
		suspend_regressions += r->suspend[i].regression;
	if (url && (bci_link_build(&matrix, url, r->build) < 0 ||
		    (r->base && bci_link_build(&baseline, url, r->base) < 0))) {
		ret = -ENOMEM;
		goto out;
	}

	/* ---- body ---- */
	body_printf(&b, "== Series Details ==\n\n");
	body_printf(&b, "Series: %s\n", title);
	body_printf(&b, "Build: %s (tree %s, commit %s, %s tier)\n", r->build, r->tree ? r->tree : "?",
		    r->commit ? r->commit : "?", r->tier ? r->tier : "?");
	body_printf(&b, "Baseline: the last %d runs of %s on each machine%s%s%s%s\n", r->window,
		    r->base_tree, r->grouped ? " and on the others of its\n  shard group" : "",
		    r->base ? " (base build " : "", r->base ? r->base : "", r->base ? ")" : "");
	if (r->reruns)
		body_printf(&b, "Reruns: each possible new issue run again on its machine and another of"
			    " its\n  shard group: %d rerun(s), %d back\n", r->reruns, r->reruns_back);
	if (url)
		body_printf(&b, "Matrix: %s\n", matrix.data);
	body_printf(&b, "\n== Summary ==\n\n  **%s**\n\n", failed ? "FAILURE" : "SUCCESS");
	body_printf(&b, "  %ld possible new issues, %ld suspend latency regressions, %ld known issues,\n"
		    "  %ld flaky, %ld fixed, %ld warnings: %ld results of %d machines compared.\n\n",
		    r->counts[BCI_VERDICT_NEW], suspend_regressions, r->counts[BCI_VERDICT_KNOWN],
		    r->counts[BCI_VERDICT_FLAKY], r->counts[BCI_VERDICT_FIXED],
		    r->counts[BCI_VERDICT_WARNING], r->results, r->machines);
	section_write(&b, r, BCI_VERDICT_NEW, "Possible new issues",
		      "Changes no known-issue filter explains, on tests stable in the baseline:",
		      fold_after, url);
	if (suspend_regressions) {
		body_printf(&b, "== Suspend latency regressions ==\n\n"
			    "  Median suspend+resume latency beyond the baseline's spread:\n\n");
		for (size_t i = 0; i < r->n_suspend; i++) {
			const struct bci_report_suspend *s = &r->suspend[i];

			if (s->regression)
				body_printf(&b, "  * %s: median %.3f s over %d cycles, baseline %.3f"
					    " to %.3f s over %d cycles\n", s->machine, s->median,
					    s->cycles, s->baseline_min, s->baseline_max,
					    s->baseline_cycles);
		}
		body_printf(&b, "\n");
	}
	section_write(&b, r, BCI_VERDICT_KNOWN, "Known issues",
		      "Changes a known-issue filter matched, with its bug:", fold_after, url);
	section_write(&b, r, BCI_VERDICT_FLAKY, "Flaky tests",
		      "Regressions of tests whose state changed in the baseline, on the machine or\n"
		      "  on another of its shard group, with how often they failed there, or that\n"
		      "  passed again when rerun:",
		      fold_after, url);
	section_write(&b, r, BCI_VERDICT_FIXED, "Fixed tests",
		      "Tests that pass now and did not in the baseline:", fold_after, url);
	section_write(&b, r, BCI_VERDICT_WARNING, "Warnings",
		      "Changes between two failing states:", fold_after, url);
	if (url) {
		body_printf(&b, "== Links ==\n\n  Test matrix: %s\n", matrix.data);
		if (r->base)
			body_printf(&b, "  Baseline: %s\n", baseline.data);
	}
	if (b.oom) {
		ret = -ENOMEM;
		goto out;
	}

	/* ---- the message ---- */
	gmtime_r(&o->date, &tm);
	if (!o->bare)
		fprintf(out, "From bootci %s %s %2d %02d:%02d:%02d %d\n", days[tm.tm_wday],
			months[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			tm.tm_year + 1900);
	fprintf(out, "From: %s\n", from);
	if (o->to)
		fprintf(out, "To: %s\n", o->to);
	fprintf(out, "%s\n", subject);
	fprintf(out, "Date: %s, %02d %s %d %02d:%02d:%02d +0000\n", days[tm.tm_wday], tm.tm_mday,
		months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
	fprintf(out, "Message-ID: <bootci.%s.%lld@%s>\n", build_atom, (long long)o->date,
		*domain ? domain : "localhost");
	if (r->message_id)
		fprintf(out, "In-Reply-To: <%s>\nReferences: <%s>\n", series_id, series_id);
	fprintf(out, "MIME-Version: 1.0\n"
		     "Content-Type: text/plain; charset=utf-8\n"
		     "Content-Transfer-Encoding: 8bit\n"
		     "X-Bootci-Build: %s\n\n", build_atom);
	for (const char *line = b.p; line && *line;) {
		size_t n = strcspn(line, "\n");
		const char *p = line + strspn(line, ">");

		if (!o->bare && !strncmp(p, "From ", 5))
			fputc('>', out);
		fwrite(line, 1, n, out);
		fputc('\n', out);
		line += n + (line[n] == '\n');
	}
	/* An mbox ends each message with a blank line. */
	if (!o->bare)
		fputc('\n', out);
	if (ferror(out) || fflush(out)) {
		snprintf(err, err_size, "writing the message: %s", strerror(errno));
		ret = -EIO;
	}
out:
	free(b.p);
	bci_str_free(&matrix);
	bci_str_free(&baseline);
	free(subject);
	free(subject_text);
	free(title);
	return ret;
}
