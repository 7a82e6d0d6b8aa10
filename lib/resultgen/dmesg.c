// SPDX-License-Identifier: MIT
/*
 * The results generator's dmesg.txt rules: the kernel log of a job is cut
 * into the tests that IGT announced in it (BCI_IGT_STARTING_*_DMESG), and
 * records at the warning level or above that no filter and no ignore regex
 * of the test excuses become "dmesg-warnings" (dmesg-warn, dmesg-fail).
 */
#include "internal.h"

#include "igt_output_strings.h"
#include "kmsg_record.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DMESG_LINE_MAX 65536	/* kmsg records are far shorter */

/*
 * The kernel messages at warning level or above that do not make a result
 * dmesg-warn/dmesg-fail: igt_runner's list, as POSIX extended regexes.
 */
static const char dmesg_allowlist[] =
	"ACPI: button: The lid device is not compliant to SW_LID"
	"|ACPI: .*: Unable to dock!"
	"|IRQ [0-9]+: no longer affine to CPU[0-9]+"
	"|IRQ fixup: irq [0-9]+ move in progress, old vector [0-9]+"
	"|Setting dangerous option [a-z_]+ - tainting kernel"
	"|Suspending console\\(s\\) \\(use no_console_suspend to debug\\)"
	"|atkbd serio[0-9]+: Failed to (deactivate|enable) keyboard on isa[0-9]+/serio[0-9]+"
	"|cache: parent cpu[0-9]+ should not be sleeping"
	"|hpet[0-9]+: lost [0-9]+ rtc interrupts"
	"|i915: probe of [0-9a-fA-F:.]+ failed with error -25"
	"|mock: DMA: Out of SW-IOMMU space for [0-9]+ bytes"
	"|usb usb[0-9]+: root hub lost power or was reset";
/* With piglit-style dmesg handling only driver messages count, the reverse. */
static const char dmesg_piglit_blocklist[] = "(\\[drm:|drm_|intel_|i915_|\\[drm\\])";


int compile_dmesg_filter(struct gen *g)
{
	if (regcomp(&g->dmesg_filter,
		    g->settings.piglit_style_dmesg ? dmesg_piglit_blocklist : dmesg_allowlist,
		    REG_EXTENDED | REG_NOSUB | REG_NEWLINE))
		return gen_error(g, -EINVAL, "cannot compile the dmesg filter regex");
	g->has_filter = true;
	return 0;
}

/*
 * Test-provided regexes are PCRE (igt compiles them with GLib); POSIX
 * extended regexes get the common escapes spelled out: \d \D \s \S \w \W
 * as classes, \t \n \r \f \v \e and \xHH as the character, an escaped
 * character that is special in ERE stays escaped and any other escaped
 * punctuation becomes itself (PCRE's \< is a '<', ERE's is a word start).
 * "(?:" groups are plain groups, lazy quantifiers greedy (whether a line
 * matches does not change). \b and \B have no POSIX spelling: \b becomes
 * glibc's and musl's \b extension, and \B an empty pattern, so that a
 * word-boundary regex still matches (it may then ignore slightly more).
 * What is left (lookarounds, \A, \z, ...) fails to compile: the caller warns.
 */
static const char ERE_SPECIAL[] = ".[]{}()*+?|^$\\";

static int translate_escape(struct bci_str *ere, char c, const char *rest, bool in_bracket,
			    size_t *used)
{
	static const struct { char c; const char *out, *in_bracket; } classes[] = {
		{ 'd', "[0-9]", "0-9" }, { 'D', "[^0-9]", NULL },
		{ 's', "[[:space:]]", "[:space:]" }, { 'S', "[^[:space:]]", NULL },
		{ 'w', "[[:alnum:]_]", "[:alnum:]_" }, { 'W', "[^[:alnum:]_]", NULL },
	};
	static const char controls[] = "t\tn\nr\rf\fv\ve\033";
	const char *ctl;
	char ch;
	size_t i;

	*used = 0;
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (classes[i].c != c)
			continue;
		/* A negated class inside brackets has no ERE spelling. */
		if (in_bracket && !classes[i].in_bracket)
			return -EINVAL;
		ctl = in_bracket ? classes[i].in_bracket : classes[i].out;
		return bci_str_append(ere, ctl, strlen(ctl));
	}
	if (c == 'b' && !in_bracket)
		return bci_str_append(ere, "\\b", 2);
	if (c == 'B' && !in_bracket)
		return 0;
	if (c == 'x' && isxdigit((unsigned char)rest[0]) && isxdigit((unsigned char)rest[1])) {
		ch = (char)strtol((char[]){ rest[0], rest[1], '\0' }, NULL, 16);
		*used = 2;
		if (!in_bracket && strchr(ERE_SPECIAL, ch) && ch)
			return bci_str_append(ere, (char[]){ '\\', ch }, 2);
		return ch ? bci_str_append(ere, &ch, 1) : -EINVAL;
	}
	for (ctl = controls; *ctl; ctl += 2)
		if (ctl[0] == c)
			return bci_str_append(ere, ctl + 1, 1);
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return -EINVAL;	/* \A \z \1 ...: no translation */
	if (!in_bracket && strchr(ERE_SPECIAL, c))
		return bci_str_append(ere, (char[]){ '\\', c }, 2);
	return bci_str_append(ere, &c, 1);
}

/* 0, or -EINVAL with what was tried in @ere (NUL-terminated, caller frees ere->data). */
static int compile_ignore_regex(regex_t *re, const char *pcre, struct bci_str *ere)
{
	bool in_bracket = false;
	size_t i, used;
	int ret = bci_str_append(ere, "", 0);

	for (i = 0; pcre[i] && ret == 0; i++) {
		char c = pcre[i];

		if (c == '\\' && pcre[i + 1]) {
			ret = translate_escape(ere, pcre[i + 1], pcre + i + 2, in_bracket, &used);
			i += 1 + used;
			continue;
		}
		if (!in_bracket && c == '(' && pcre[i + 1] == '?' && pcre[i + 2] == ':') {
			ret = bci_str_append(ere, "(", 1);
			i += 2;
			continue;
		}
		if (!in_bracket && (c == '*' || c == '+' || c == '?' || c == '}') && pcre[i + 1] == '?') {
			ret = bci_str_append(ere, &c, 1);
			i++;
			continue;
		}
		if (c == '[' && !in_bracket) {
			in_bracket = true;
			ret = bci_str_append(ere, &c, 1);
			/* "[]...]" and "[^]...]": that first ']' is a member. */
			if (ret == 0 && pcre[i + 1] == '^')
				ret = bci_str_append(ere, &pcre[++i], 1);
			if (ret == 0 && pcre[i + 1] == ']')
				ret = bci_str_append(ere, &pcre[++i], 1);
			continue;
		}
		if (c == ']' && in_bracket)
			in_bracket = false;
		ret = bci_str_append(ere, &c, 1);
	}
	if (ret == 0)
		ret = regcomp(re, ere->data, REG_EXTENDED | REG_NOSUB | REG_NEWLINE) ? -EINVAL : 0;
	return ret;
}

/* Kernel log gathered for a test; lines not embedded are counted for a marker. */
struct logbuf {
	struct bci_str text;
	unsigned long long left_out;	/* bytes of dmesg.txt since the last embedded line */
};

struct dmesg_state {
	struct logbuf dmesg, warnings, dyn_dmesg, dyn_warnings;
	struct test *test, *dynamic;
	char test_name[NAME_SIZE];
	regex_t ignore;
	bool has_ignore;
	const char *path;		/* "N/dmesg.txt", for markers and warnings */
	unsigned long long size;
	size_t warning_budget;		/* bytes of left-out warnings still embedded */
};

static void drop_ignore(struct dmesg_state *st)
{
	if (st->has_ignore)
		regfree(&st->ignore);
	st->has_ignore = false;
}

static void logbuf_clear(struct logbuf *lb)
{
	bci_str_free(&lb->text);
	lb->left_out = 0;
}

/* Puts the marker for the lines left out since the last one embedded. */
static int logbuf_flush(struct gen *g, struct dmesg_state *st, struct logbuf *lb)
{
	int ret = 0;

	if (lb->left_out)
		ret = gen_append_marker(g, &lb->text, st->path, lb->left_out, st->size);
	lb->left_out = 0;
	return ret;
}

static int logbuf_add(struct gen *g, struct dmesg_state *st, struct logbuf *lb,
		      const struct bci_str *line, size_t raw_len, bool embed)
{
	int ret;

	if (!embed) {
		lb->left_out += raw_len;
		return 0;
	}
	ret = logbuf_flush(g, st, lb);
	return ret ? ret : bci_str_append(&lb->text, line->data, line->len);
}

/* Gives a test the kernel log gathered for it; warnings only if there were any. */
static int file_dmesg(struct gen *g, struct dmesg_state *st, struct test *t,
		      struct logbuf *dmesg, struct logbuf *warnings)
{
	int ret = logbuf_flush(g, st, dmesg);

	if (ret == 0)
		ret = str_to_text(g, &dmesg->text, &t->dmesg);
	if (ret == 0 && warnings)
		ret = logbuf_flush(g, st, warnings);
	if (ret == 0 && warnings && warnings->text.data)
		ret = str_to_text(g, &warnings->text, &t->warnings);
	return ret;
}

/* "starting subtest NAME": what was gathered goes to the test before. */
static int dmesg_subtest_start(struct gen *g, struct dmesg_state *st, const char *name)
{
	int ret = 0;

	if (st->test) {
		ret = file_dmesg(g, st, st->test, &st->dmesg, &st->warnings);
		logbuf_clear(&st->warnings);
		if (ret == 0 && st->dynamic)
			ret = file_dmesg(g, st, st->dynamic, &st->dyn_dmesg, &st->dyn_warnings);
		logbuf_clear(&st->dyn_dmesg);
		logbuf_clear(&st->dyn_warnings);
		st->dynamic = NULL;
		if (ret < 0)
			return ret;
	}
	piglit_name(g, name, st->test_name);
	st->test = get_test(g, st->test_name);
	if (!st->test)
		return -ENOMEM;
	drop_ignore(st);
	return 0;
}

static int dmesg_dynamic_start(struct gen *g, struct dmesg_state *st, const char *dynamic)
{
	char name[NAME_SIZE];
	int ret;

	if (st->dynamic) {
		ret = file_dmesg(g, st, st->dynamic, &st->dyn_dmesg, &st->dyn_warnings);
		logbuf_clear(&st->dyn_warnings);
		if (ret < 0)
			return ret;
	}
	bci_igt_piglit_name_dynamic(st->test_name, dynamic, name, NAME_SIZE);
	st->dynamic = get_test(g, name);
	if (!st->dynamic)
		return -ENOMEM;
	drop_ignore(st);
	return 0;
}

/* "add ignored dmesg regex: RE": the test's warnings that RE matches do not count. */
static int dmesg_ignore(struct gen *g, struct dmesg_state *st, const char *text)
{
	char *regex = strdup(text);
	struct bci_str ere = { 0 };
	int ret;

	if (!regex)
		return -ENOMEM;
	regex[strcspn(regex, "\n")] = '\0';
	drop_ignore(st);
	ret = compile_ignore_regex(&st->ignore, regex, &ere);
	st->has_ignore = ret == 0;
	/* A regex that does not compile ignores nothing, as in igt; but say so. */
	if (ret == -EINVAL)
		gen_warn(g, "%s/%s: '" BCI_IGT_ADD_IGNORED_REGEX_DMESG "%s' does not translate to a POSIX "
			 "regex (tried '%s'): it ignores nothing", g->dir, st->path, regex,
			 ere.data ? ere.data : "");
	bci_str_free(&ere);
	free(regex);
	return ret == -ENOMEM ? ret : 0;
}

/* IGT's markers in a record's text, in igt_runner's order. */
static int dmesg_markers(struct gen *g, struct dmesg_state *st, const char *message)
{
	const char *p;
	int ret = 0;

	if ((p = strstr(message, BCI_IGT_STARTING_SUBTEST_DMESG)))
		ret = dmesg_subtest_start(g, st, p + strlen(BCI_IGT_STARTING_SUBTEST_DMESG));
	if (ret == 0 && st->test && (p = strstr(message, BCI_IGT_STARTING_DYNAMIC_SUBTEST_DMESG)))
		ret = dmesg_dynamic_start(g, st, p + strlen(BCI_IGT_STARTING_DYNAMIC_SUBTEST_DMESG));
	if (ret == 0 && (p = strstr(message, BCI_IGT_ADD_IGNORED_REGEX_DMESG)))
		ret = dmesg_ignore(g, st, p + strlen(BCI_IGT_ADD_IGNORED_REGEX_DMESG));
	return ret;
}

static bool is_warning(struct gen *g, struct dmesg_state *st, const struct bci_kmsg_record *rec)
{
	bool listed;

	if (bci_kmsg_record_level(rec) > g->settings.dmesg_warn_level || rec->flags == 'c')
		return false;
	listed = regexec(&g->dmesg_filter, rec->text, 0, NULL, 0) == 0;
	if (g->settings.piglit_style_dmesg ? !listed : listed)
		return false;
	return !(st->has_ignore && regexec(&st->ignore, rec->text, 0, NULL, 0) == 0);
}

/*
 * One dmesg.txt line of @raw_len bytes. Every line moves the state and
 * decides warnings; only @embed lines go into the texts, and of the others
 * only warnings, while the warning budget lasts.
 */
static int dmesg_line(struct gen *g, struct dmesg_state *st, const char *line, size_t raw_len,
		      bool embed, struct bci_str *formatted)
{
	struct bci_kmsg_record rec;
	int ret;

	/* Continuation lines (" KEY=value") and junk are skipped, as in igt. */
	if (!bci_kmsg_record_parse(line, raw_len, &rec))
		return 0;
	ret = bci_kmsg_record_format_readable(formatted, &rec);
	if (ret == 0)
		ret = dmesg_markers(g, st, rec.text);
	if (ret < 0)
		return ret;
	if (is_warning(g, st, &rec)) {
		bool embed_warning = embed || formatted->len <= st->warning_budget;

		if (!embed && embed_warning)
			st->warning_budget -= formatted->len;
		ret = logbuf_add(g, st, &st->warnings, formatted, raw_len, embed_warning);
		if (ret == 0 && st->test)
			ret = logbuf_add(g, st, &st->dyn_warnings, formatted, raw_len, embed_warning);
		if (ret < 0)
			return ret;
	}
	ret = logbuf_add(g, st, &st->dmesg, formatted, raw_len, embed);
	if (ret == 0)
		ret = logbuf_add(g, st, &st->dyn_dmesg, formatted, raw_len, embed);
	return ret;
}

/* Every line of dmesg.txt (@f) through dmesg_line(). */
static int read_dmesg(struct gen *g, struct dmesg_state *st, const struct gen_file *f)
{
	struct bci_str formatted = { 0 };
	size_t half = g->max_file / 2;
	bool over = st->size > g->max_file;
	struct line_reader reader;
	struct line line;
	int ret;

	if (over)
		gen_warn(g, "%s/%s: %llu bytes, over the %zu-byte limit: results.json keeps the kernel "
			 "log of its first and last %zu bytes, and warnings from all of it",
			 g->dir, st->path, st->size, g->max_file, half);
	/* One buffer for every job's kernel log: 64 KiB allocated and freed a job cost more than its lines. */
	if (!g->dmesg_line_buf) {
		g->dmesg_line_buf = malloc(DMESG_LINE_MAX + 1);
		if (!g->dmesg_line_buf)
			return -ENOMEM;
	}
	line_reader_init_with(&reader, f, 0, st->size, g->dmesg_line_buf, DMESG_LINE_MAX + 1);
	/* Lines keep their newline, as getline() hands them to igt. */
	while ((ret = line_reader_next(&reader, &line)) > 0) {
		bool embed = !over || line.offset < half || line.offset >= st->size - half;

		ret = dmesg_line(g, st, line.text, line.len, embed, &formatted);
		if (ret < 0)
			break;
	}
	line_reader_release(&reader);
	bci_str_free(&formatted);
	if (ret < 0 && ret != -ENOMEM)
		gen_error(g, ret, "%s/%s: %s", g->dir, st->path, strerror(-ret));
	return ret;
}

/*
 * No subtest announced itself in the kernel log: every subtest gets all of
 * it, without warnings (their results are skips); a job without subtests
 * gets it with its warnings.
 */
static int share_dmesg(struct gen *g, struct dmesg_state *st)
{
	char name[NAME_SIZE];
	struct bci_results_text shared;
	struct test *t;
	size_t i;
	int ret = logbuf_flush(g, st, &st->dmesg);

	if (ret == 0)
		ret = logbuf_flush(g, st, &st->warnings);
	if (ret == 0)
		ret = str_to_text(g, &st->dmesg.text, &shared);
	if (ret < 0)
		return ret;
	for (i = 0; i < g->sub_count; i++) {
		piglit_name(g, g->subs[i].name, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		t->dmesg = shared;
	}
	if (g->sub_count)
		return 0;
	piglit_name(g, NULL, name);
	t = get_test(g, name);
	if (!t)
		return -ENOMEM;
	t->dmesg = shared;
	return st->warnings.text.data ? str_to_text(g, &st->warnings.text, &t->warnings) : 0;
}

/* Every subtest and dynamic subtest has a "dmesg", empty if need be. */
static int give_empty_dmesg(struct gen *g)
{
	char name[NAME_SIZE], dyn_name[NAME_SIZE];
	struct test *t;
	size_t i, k;

	for (i = 0; i < g->sub_count; i++) {
		piglit_name(g, g->subs[i].name, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		if (!t->dmesg.ptr)
			t->dmesg = (struct bci_results_text){ "", 0 };
		for (k = 0; k < g->subs[i].dynamic_count; k++) {
			bci_igt_piglit_name_dynamic(name, g->subs[i].dynamic[k], dyn_name, NAME_SIZE);
			t = get_test(g, dyn_name);
			if (!t)
				return -ENOMEM;
			if (!t->dmesg.ptr)
				t->dmesg = (struct bci_results_text){ "", 0 };
		}
	}
	return 0;
}

/*
 * dmesg.txt (@rel, open as @f), a line at a time. Over the limit, only
 * lines starting in its first or last half-limit are embedded; all of them
 * still count.
 */
int fill_from_dmesg(struct gen *g, const char *rel, const struct gen_file *f)
{
	struct dmesg_state st;
	int ret;

	memset(&st, 0, sizeof(st));
	st.path = rel;
	st.size = f->size;
	st.warning_budget = g->max_file / 8;
	ret = read_dmesg(g, &st, f);
	if (ret < 0)
		goto out;
	if (st.test) {
		ret = file_dmesg(g, &st, st.test, &st.dmesg, &st.warnings);
		if (ret == 0 && st.dynamic)
			ret = file_dmesg(g, &st, st.dynamic, &st.dyn_dmesg, &st.dyn_warnings);
	} else {
		ret = share_dmesg(g, &st);
	}
	if (ret == 0)
		ret = give_empty_dmesg(g);
out:
	logbuf_clear(&st.dmesg);
	logbuf_clear(&st.warnings);
	logbuf_clear(&st.dyn_dmesg);
	logbuf_clear(&st.dyn_warnings);
	drop_ignore(&st);
	return ret;
}
