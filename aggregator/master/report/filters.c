// SPDX-License-Identifier: MIT
/*
 * Known-issue filters, as CI Bug Log keeps them: a failure that a filter
 * matches is a known issue with the filter's bug link, never a possible new
 * one. They live in one text file in the master's data folder
 * (DATA/known-issues.txt), meant to be kept under version control there, so
 * that who added a filter for which bug, and when, is in its history.
 *
 * The format (version 1):
 *
 *   bootci-known-issues 1          first line that is not blank or a comment
 *   # a comment                    lines starting with '#' (after blanks)
 *   filter URL                     starts a filter: its bug link
 *   test REGEX                     the test name matches REGEX
 *   machines NAME...               the machine is one of these, or ...
 *   tags TAG...                    ... has one of these tags
 *   statuses STATUS...             the build's status is one of these
 *   out REGEX / err REGEX / dmesg REGEX
 *                                  the test's out.txt / err.txt / dmesg.txt
 *                                  has a line matching REGEX
 *
 * A key takes the rest of its line (after the blanks that follow it) and
 * appears at most once per filter; blanks before a key are allowed. REGEX
 * is POSIX extended (at most 1024 bytes, no repetition of a repetition such
 * as "a++"), unanchored unless it says ^ or $, matched line by line
 * for the logs (a log is read up to its first NUL byte and its first
 * BCI_FILTER_LOG_MAX bytes). A filter matches when every condition it has
 * holds (machines and tags together count as one: either may hold); a
 * filter with no condition would match every failure and is refused.
 */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILTERS_MAGIC "bootci-known-issues"
#define FILTERS_VERSION 1
/* Bigger than any filter file a lab writes by hand; refuses a wrong path to a huge file. */
#define FILTERS_FILE_MAX (16 << 20)
/* Far above any test-name or log pattern; bounds what one regcomp() may build. */
#define FILTERS_REGEX_MAX 1024

enum { LOG_OUT, LOG_ERR, LOG_DMESG, LOG_COUNT };
static const char *const log_names[LOG_COUNT] = { "out", "err", "dmesg" };

struct filter {
	char *bug;
	int line;
	int has_test;
	regex_t test;
	char **machines, **tags;	/* NULL-terminated, or NULL */
	unsigned statuses;		/* bit per enum bci_status; 0: any */
	int has_log[LOG_COUNT];
	regex_t log[LOG_COUNT];
};

struct bci_filters {
	struct filter *filters;
	int n;
};

static void filter_release(struct filter *f)
{
	free(f->bug);
	if (f->has_test)
		regfree(&f->test);
	for (char **p = f->machines; p && *p; p++)
		free(*p);
	free(f->machines);
	for (char **p = f->tags; p && *p; p++)
		free(*p);
	free(f->tags);
	for (int i = 0; i < LOG_COUNT; i++)
		if (f->has_log[i])
			regfree(&f->log[i]);
}

void bci_filters_free(struct bci_filters *filters)
{
	if (!filters)
		return;
	for (int i = 0; i < filters->n; i++)
		filter_release(&filters->filters[i]);
	free(filters->filters);
	free(filters);
}

int bci_filters_count(const struct bci_filters *filters)
{
	return filters ? filters->n : 0;
}

static int fail(char *err, size_t err_size, const char *name, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(char *err, size_t err_size, const char *name, int line, const char *fmt, ...)
{
	int n = snprintf(err, err_size, "%s:%d: ", name, line);
	va_list ap;

	if (n >= 0 && (size_t)n < err_size) {
		va_start(ap, fmt);
		vsnprintf(err + n, err_size - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Splits @value at blanks into a NULL-terminated array. */
static int words_split(const char *value, char ***words)
{
	char **v = NULL, **grown;
	size_t n = 0;

	while (*value) {
		size_t len;

		value += strspn(value, " \t");
		len = strcspn(value, " \t");
		if (!len)
			break;
		grown = realloc(v, (n + 2) * sizeof(*v));
		if (!grown)
			goto fail;
		v = grown;
		v[n] = strndup(value, len);
		if (!v[n])
			goto fail;
		v[++n] = NULL;
		value += len;
	}
	*words = v;
	return (int)n;
fail:
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
	return -ENOMEM;
}

/*
 * Whether @re repeats a repetition ("a++", "a*{2}"): glibc compiles each
 * level into a bigger automaton, and a few dozen levels take gigabytes (the
 * fuzzer found it), for nothing a filter needs. Escapes and bracket
 * expressions are skipped.
 */
static int regex_nested_repetition(const char *re)
{
	int after_repetition = 0;

	for (const char *p = re; *p; p++) {
		if (*p == '\\') {
			after_repetition = 0;
			if (p[1])
				p++;
			continue;
		}
		if (*p == '[') {
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p && *p != ']')
				p++;
			if (!*p)
				return 0;	/* unterminated: regcomp says so */
			after_repetition = 0;
			continue;
		}
		if (strchr("+*?{", *p) && after_repetition)
			return 1;
		if (*p == '{') {
			while (*p && *p != '}')
				p++;
			if (!*p)
				return 0;
		}
		after_repetition = strchr("+*?}", *p) != NULL;
	}
	return 0;
}

static int regex_compile(regex_t *re, const char *value, const char *name, int line,
			 const char *key, char *err, size_t err_size)
{
	char why[256];
	int ret;

	if (strlen(value) > FILTERS_REGEX_MAX)
		return fail(err, err_size, name, line, "%s: regular expression longer than %d bytes",
			    key, FILTERS_REGEX_MAX);
	if (regex_nested_repetition(value))
		return fail(err, err_size, name, line,
			    "%s: '%s' repeats a repetition (like a++), which costs the matcher"
			    " memory for nothing", key, value);
	ret = regcomp(re, value, REG_EXTENDED | REG_NOSUB | REG_NEWLINE);

	if (!ret)
		return 0;
	regerror(ret, re, why, sizeof(why));
	return fail(err, err_size, name, line, "%s: bad regular expression '%s': %s", key, value, why);
}

/* Applies "KEY VALUE" to @f. */
static int filter_set(struct filter *f, const char *key, const char *value, const char *name,
		      int line, char *err, size_t err_size)
{
	char **words;
	int n;

	if (!*value)
		return fail(err, err_size, name, line, "%s: no value", key);
	if (!strcmp(key, "test")) {
		if (f->has_test)
			return fail(err, err_size, name, line, "test given twice in one filter");
		if (regex_compile(&f->test, value, name, line, key, err, err_size) < 0)
			return -EINVAL;
		f->has_test = 1;
		return 0;
	}
	for (int i = 0; i < LOG_COUNT; i++) {
		if (strcmp(key, log_names[i]))
			continue;
		if (f->has_log[i])
			return fail(err, err_size, name, line, "%s given twice in one filter", key);
		if (regex_compile(&f->log[i], value, name, line, key, err, err_size) < 0)
			return -EINVAL;
		f->has_log[i] = 1;
		return 0;
	}
	if (!strcmp(key, "machines") || !strcmp(key, "tags")) {
		char ***slot = key[0] == 'm' ? &f->machines : &f->tags;

		if (*slot)
			return fail(err, err_size, name, line, "%s given twice in one filter", key);
		n = words_split(value, slot);
		return n < 0 ? n : 0;
	}
	if (!strcmp(key, "statuses")) {
		if (f->statuses)
			return fail(err, err_size, name, line, "statuses given twice in one filter");
		n = words_split(value, &words);
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			int status = bci_status_parse(words[i]);

			if (status < 0) {
				fail(err, err_size, name, line, "unknown status '%s'", words[i]);
				n = -EINVAL;
				break;
			}
			f->statuses |= 1u << status;
		}
		for (char **p = words; p && *p; p++)
			free(*p);
		free(words);
		return n < 0 ? n : 0;
	}
	return fail(err, err_size, name, line, "unknown key '%s'", key);
}

static int filter_check(const struct filter *f, const char *name, char *err, size_t err_size)
{
	if (f->has_test || f->machines || f->tags || f->statuses)
		return 0;
	for (int i = 0; i < LOG_COUNT; i++)
		if (f->has_log[i])
			return 0;
	return fail(err, err_size, name, f->line,
		    "filter %s has no condition: it would match every failure", f->bug);
}

int bci_filters_parse(const char *name, const char *text, size_t len, struct bci_filters **filters,
		      char *err, size_t err_size)
{
	struct bci_filters *fs = calloc(1, sizeof(*fs));
	const char *p = text, *end = text + len;
	int line = 0, version = 0, ret = 0;
	char *buf = NULL;

	if (!fs)
		return -ENOMEM;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *key, *value, *cut;

		line++;
		free(buf);
		buf = strndup(p, n);
		p += n + (nl ? 1 : 0);
		if (!buf) {
			ret = -ENOMEM;
			goto fail;
		}
		if (strlen(buf) != n) {
			ret = fail(err, err_size, name, line, "NUL byte in the line");
			goto fail;
		}
		if (n && buf[n - 1] == '\r')
			buf[--n] = '\0';
		key = buf + strspn(buf, " \t");
		if (!*key || *key == '#')
			continue;
		cut = key + strcspn(key, " \t");
		value = cut + strspn(cut, " \t");
		*cut = '\0';
		if (!version) {
			char *rest;
			long v;

			if (strcmp(key, FILTERS_MAGIC)) {
				ret = fail(err, err_size, name, line,
					   "not a known-issue file: the first line must be '"
					   FILTERS_MAGIC " %d'", FILTERS_VERSION);
				goto fail;
			}
			v = strtol(value, &rest, 10);
			if (rest == value || *rest || v != FILTERS_VERSION) {
				ret = fail(err, err_size, name, line,
					   "format version '%s' is not one this program reads (%d)",
					   value, FILTERS_VERSION);
				goto fail;
			}
			version = (int)v;
			continue;
		}
		if (!strcmp(key, "filter")) {
			struct filter *grown;

			if (fs->n && (ret = filter_check(&fs->filters[fs->n - 1], name, err, err_size)) < 0)
				goto fail;
			if (!*value || strcspn(value, " \t") != strlen(value)) {
				ret = fail(err, err_size, name, line, "filter: one bug URL expected");
				goto fail;
			}
			grown = realloc(fs->filters, (fs->n + 1) * sizeof(*grown));
			if (!grown) {
				ret = -ENOMEM;
				goto fail;
			}
			fs->filters = grown;
			memset(&fs->filters[fs->n], 0, sizeof(*grown));
			fs->filters[fs->n].line = line;
			fs->filters[fs->n].bug = strdup(value);
			fs->n++;
			if (!fs->filters[fs->n - 1].bug) {
				ret = -ENOMEM;
				goto fail;
			}
			continue;
		}
		if (!fs->n) {
			ret = fail(err, err_size, name, line, "'%s' before any 'filter URL' line", key);
			goto fail;
		}
		ret = filter_set(&fs->filters[fs->n - 1], key, value, name, line, err, err_size);
		if (ret < 0)
			goto fail;
	}
	if (!version) {
		ret = fail(err, err_size, name, line, "empty: no '" FILTERS_MAGIC " %d' line",
			   FILTERS_VERSION);
		goto fail;
	}
	if (fs->n && (ret = filter_check(&fs->filters[fs->n - 1], name, err, err_size)) < 0)
		goto fail;
	free(buf);
	*filters = fs;
	return fs->n;
fail:
	free(buf);
	bci_filters_free(fs);
	return ret;
}

int bci_filters_load(const char *path, struct bci_filters **filters, char *err, size_t err_size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;
	struct stat st;
	char *text;
	ssize_t got;

	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > FILTERS_FILE_MAX) {
		snprintf(err, err_size, "%s: not a regular file of at most %d bytes", path,
			 FILTERS_FILE_MAX);
		close(fd);
		return -EINVAL;
	}
	text = malloc(st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	got = read(fd, text, st.st_size);
	ret = got < 0 ? -errno : 0;
	close(fd);
	if (ret < 0 || got != st.st_size) {
		snprintf(err, err_size, "%s: short read", path);
		free(text);
		return ret < 0 ? ret : -EIO;
	}
	ret = bci_filters_parse(path, text, got, filters, err, err_size);
	free(text);
	return ret;
}

static int word_in(char *const *words, const char *word)
{
	for (; words && *words; words++)
		if (!strcmp(*words, word))
			return 1;
	return 0;
}

static int filter_matches(const struct filter *f, const struct bci_filter_subject *s)
{
	if (f->has_test && regexec(&f->test, s->test, 0, NULL, 0))
		return 0;
	if (f->statuses && !(f->statuses & (1u << s->status)))
		return 0;
	if (f->machines || f->tags) {
		int hit = word_in(f->machines, s->machine);

		for (const char *const *t = s->tags; !hit && t && *t; t++)
			hit = word_in(f->tags, *t);
		if (!hit)
			return 0;
	}
	for (int i = 0; i < LOG_COUNT; i++) {
		const char *text;

		if (!f->has_log[i])
			continue;
		text = s->log ? s->log(log_names[i], s->log_ctx) : NULL;
		if (!text || regexec(&f->log[i], text, 0, NULL, 0))
			return 0;
	}
	return 1;
}

const char *bci_filters_match(const struct bci_filters *filters,
			      const struct bci_filter_subject *subject)
{
	for (int i = 0; filters && i < filters->n; i++)
		if (filter_matches(&filters->filters[i], subject))
			return filters->filters[i].bug;
	return NULL;
}
