// SPDX-License-Identifier: MIT
#include "igt_protocol.h"
#include "igt_output_strings.h"
#include "strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const prefixes[] = {
	[BCI_IGT_MARK_SUBTEST_START] = BCI_IGT_STARTING_SUBTEST,
	[BCI_IGT_MARK_SUBTEST_RESULT] = BCI_IGT_SUBTEST_RESULT,
	[BCI_IGT_MARK_DYNAMIC_START] = BCI_IGT_STARTING_DYNAMIC_SUBTEST,
	[BCI_IGT_MARK_DYNAMIC_RESULT] = BCI_IGT_DYNAMIC_SUBTEST_RESULT,
};

const char *const bci_igt_result_names[BCI_IGT_RESULT_COUNT] = {
	"crash", "pass", "dmesg-fail", "dmesg-warn", "skip", "incomplete",
	"abort", "timeout", "notrun", "fail", "warn",
};

int bci_igt_result_index(const char *result)
{
	size_t i;

	for (i = 0; i < BCI_IGT_RESULT_COUNT; i++)
		if (!strcmp(result, bci_igt_result_names[i]))
			return (int)i;
	return -1;
}

const char *bci_igt_result_from_exit(int code)
{
	switch (code) {
	case BCI_IGT_EXIT_SKIP: return "skip";
	case BCI_IGT_EXIT_SUCCESS: return "pass";
	case BCI_IGT_EXIT_INVALID: return "skip";
	case BCI_IGT_EXIT_ABORT: return "abort";
	default: return "fail";
	}
}

int bci_igt_line_format_result(char *buf, size_t size, bool dynamic, const char *name,
			       const char *word, double seconds)
{
	return snprintf(buf, size, "%s%s: %s (%.3fs)\n",
			dynamic ? BCI_IGT_DYNAMIC_SUBTEST_RESULT : BCI_IGT_SUBTEST_RESULT, name, word,
			seconds);
}

int bci_igt_line_format_start(char *buf, size_t size, bool dynamic, const char *name)
{
	return snprintf(buf, size, "%s%s\n",
			dynamic ? BCI_IGT_STARTING_DYNAMIC_SUBTEST : BCI_IGT_STARTING_SUBTEST, name);
}

/* ASCII only: bytes >= 0x80 are never part of a name, in any locale. */
static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool is_name_char(char c)
{
	return c == '-' || c == '_' || is_alnum(c);
}

static bool starts_with(const char *p, const char *end, const char *prefix, size_t plen)
{
	return (size_t)(end - p) >= plen && memcmp(p, prefix, plen) == 0;
}

/* The start of the line after the one at @p, or NULL if there is none. */
static const char *next_line(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	if (!nl || nl + 1 >= end)
		return NULL;
	return nl + 1;
}

/*
 * After a result prefix: NAME as [A-Za-z0-9_-]+ then ": ". Returns the
 * length of NAME, or 0 when this is not a result line.
 */
static size_t result_name_len(const char *p, const char *end)
{
	const char *name = p;

	if (p >= end || !is_name_char(*p))
		return 0;
	while (p < end && is_name_char(*p))
		p++;
	return p + 1 < end && p[0] == ':' && p[1] == ' ' ? (size_t)(p - name) : 0;
}

enum bci_igt_line_kind bci_igt_line_parse(const char *line, size_t len, struct bci_igt_line *out)
{
	/* In igt_runner's order: a start before a result, subtests before dynamic ones. */
	static const struct {
		enum bci_igt_line_kind kind;
		const char *prefix;
		bool result;
	} order[] = {
		{ BCI_IGT_LINE_SUBTEST_START, BCI_IGT_STARTING_SUBTEST, false },
		{ BCI_IGT_LINE_SUBTEST_RESULT, BCI_IGT_SUBTEST_RESULT, true },
		{ BCI_IGT_LINE_DYNAMIC_START, BCI_IGT_STARTING_DYNAMIC_SUBTEST, false },
		{ BCI_IGT_LINE_DYNAMIC_RESULT, BCI_IGT_DYNAMIC_SUBTEST_RESULT, true },
		{ BCI_IGT_LINE_VERSION, BCI_IGT_VERSIONSTRING, false },
	};
	const char *nl, *end;
	size_t i;

	memset(out, 0, sizeof(*out));
	/* Most lines are no protocol line: their first byte says so. */
	if (len == 0 ||
	    (line[0] != BCI_IGT_STARTING_SUBTEST[0] && line[0] != BCI_IGT_SUBTEST_RESULT[0] &&
	     line[0] != BCI_IGT_STARTING_DYNAMIC_SUBTEST[0] &&
	     line[0] != BCI_IGT_DYNAMIC_SUBTEST_RESULT[0] && line[0] != BCI_IGT_VERSIONSTRING[0]))
		return BCI_IGT_LINE_OTHER;
	nl = memchr(line, '\n', len);
	end = nl ? nl : line + len;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		size_t plen = strlen(order[i].prefix), name_len;

		if (!starts_with(line, end, order[i].prefix, plen))
			continue;
		out->name = line + plen;
		if (!order[i].result) {
			out->name_len = (size_t)(end - out->name);
			out->kind = order[i].kind;
			return out->kind;
		}
		name_len = result_name_len(line + plen, end);
		if (name_len == 0)
			continue;
		out->name_len = name_len;
		out->text = out->name + name_len + 2;
		out->text_len = (size_t)(end - out->text);
		out->kind = order[i].kind;
		return out->kind;
	}
	out->name = NULL;
	return BCI_IGT_LINE_OTHER;
}

enum bci_igt_line_kind bci_igt_line_classify(const char *line, size_t len)
{
	struct bci_igt_line parsed;

	return bci_igt_line_parse(line, len, &parsed);
}

/* The mark of a protocol line of a file, if it is one that cuts the output. */
static int classify(const char *p, const char *end, enum bci_igt_mark_kind *kind)
{
	switch (bci_igt_line_classify(p, (size_t)(end - p))) {
	case BCI_IGT_LINE_SUBTEST_START: *kind = BCI_IGT_MARK_SUBTEST_START; return 1;
	case BCI_IGT_LINE_SUBTEST_RESULT: *kind = BCI_IGT_MARK_SUBTEST_RESULT; return 1;
	case BCI_IGT_LINE_DYNAMIC_START: *kind = BCI_IGT_MARK_DYNAMIC_START; return 1;
	case BCI_IGT_LINE_DYNAMIC_RESULT: *kind = BCI_IGT_MARK_DYNAMIC_RESULT; return 1;
	default: return 0;
	}
}

/*
 * The subtest index. A subtest start is looked up by the rest of its line, a
 * subtest result by its NAME token; the key of a mark is where that text is.
 */
static void mark_key(const struct bci_igt_output *out, size_t k, const char **key, size_t *len)
{
	const char *end = out->buf + out->len;
	const char *p = out->buf + out->marks[k].offset + strlen(prefixes[out->marks[k].kind]);
	const char *q = p;

	if (out->marks[k].kind == BCI_IGT_MARK_SUBTEST_START) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		q = nl ? nl : end;
	} else {
		while (q < end && is_name_char(*q))
			q++;
	}
	*key = p;
	*len = (size_t)(q - p);
}

static size_t key_hash(enum bci_igt_mark_kind kind, const char *key, size_t len)
{
	unsigned long long h = 0xcbf29ce484222325ULL ^ (unsigned)kind;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)key[i]) * 0x100000001b3ULL;
	return (size_t)h;
}

static bool is_subtest_mark(enum bci_igt_mark_kind kind)
{
	return kind == BCI_IGT_MARK_SUBTEST_START || kind == BCI_IGT_MARK_SUBTEST_RESULT;
}

/* The slot of (@kind, @key): the one holding its first mark, or an empty one. */
static size_t *index_slot(const struct bci_igt_output *out, enum bci_igt_mark_kind kind,
			  const char *key, size_t len)
{
	size_t mask = out->index_cap - 1, i;

	for (i = key_hash(kind, key, len) & mask;; i = (i + 1) & mask) {
		const char *other;
		size_t other_len, k = out->index[i];

		if (!k)
			return &out->index[i];
		mark_key(out, k - 1, &other, &other_len);
		if (out->marks[k - 1].kind == kind && other_len == len && !memcmp(other, key, len))
			return &out->index[i];
	}
}

/* Outputs with more protocol lines than this get the index. */
#define INDEX_MIN_MARKS 8

static int build_index(struct bci_igt_output *out)
{
	size_t small[64], *last, k, cap = 16;

	while (cap < out->mark_count * 2)
		cap *= 2;
	/*
	 * One block (two parses per job, 10k jobs a run): the slots, then
	 * next_same per mark. The last mark of each chain (to append in order)
	 * is needed only here: on the stack when small.
	 */
	out->index = calloc(cap + out->mark_count, sizeof(*out->index));
	last = cap <= sizeof(small) / sizeof(small[0]) ? small : calloc(cap, sizeof(*last));
	if (!out->index || !last) {
		free(out->index);
		out->index = NULL;
		return -ENOMEM;
	}
	if (last == small)
		memset(small, 0, cap * sizeof(*last));
	out->next_same = out->index + cap;
	out->index_cap = cap;
	for (k = 0; k < out->mark_count; k++) {
		const char *key;
		size_t len, *slot;

		if (!is_subtest_mark(out->marks[k].kind))
			continue;
		mark_key(out, k, &key, &len);
		slot = index_slot(out, out->marks[k].kind, key, len);
		if (!*slot)
			*slot = k + 1;
		else
			out->next_same[last[slot - out->index] - 1] = k + 1;
		last[slot - out->index] = k + 1;
	}
	if (last != small)
		free(last);
	return 0;
}

int bci_igt_output_parse(struct bci_igt_output *out, const char *buf, size_t len)
{
	const char *nul = len ? memchr(buf, '\0', len) : NULL;
	const char *p, *end;
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	out->buf = buf;
	out->len = nul ? (size_t)(nul - buf) : len;
	end = buf + out->len;

	for (p = out->len ? buf : NULL; p; p = next_line(p, end)) {
		enum bci_igt_mark_kind kind;

		/* igt_runner takes the first version line for the whole file. */
		if (!out->has_version &&
		    starts_with(p, end, BCI_IGT_VERSIONSTRING, strlen(BCI_IGT_VERSIONSTRING))) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));

			out->has_version = true;
			out->version_offset = (size_t)(p - buf);
			out->version_len = (size_t)((nl ? nl : end) - p);
		}
		if (!classify(p, end, &kind))
			continue;
		if (out->mark_count == cap) {
			size_t new_cap = cap ? cap * 2 : 16;
			struct bci_igt_mark *marks = realloc(out->marks, new_cap * sizeof(*marks));

			if (!marks) {
				bci_igt_output_release(out);
				return -ENOMEM;
			}
			out->marks = marks;
			cap = new_cap;
		}
		out->marks[out->mark_count].kind = kind;
		out->marks[out->mark_count].offset = (size_t)(p - buf);
		out->mark_count++;
	}
	/* A few marks (most jobs run one subtest) are searched one by one (find_mark). */
	if (out->mark_count > INDEX_MIN_MARKS && build_index(out) < 0) {
		bci_igt_output_release(out);
		return -ENOMEM;
	}
	return 0;
}

void bci_igt_output_release(struct bci_igt_output *out)
{
	free(out->marks);
	free(out->index);	/* next_same is in the same block */
	out->index = out->next_same = NULL;
	out->index_cap = 0;
	out->marks = NULL;
	out->mark_count = 0;
}

/*
 * Whether the line at mark @k (of @kind) is "<prefix><name>\n" (a start) or
 * "<prefix><name>: " (a result). Like igt, only as many bytes are compared
 * as the buffer (up to @end) still has.
 */
static bool mark_matches(const struct bci_igt_output *out, const char *end, size_t k,
			 enum bci_igt_mark_kind kind, const char *name, size_t nlen)
{
	const char *prefix = prefixes[kind], *line = out->buf + out->marks[k].offset;
	size_t plen = strlen(prefix), rem, want, cmp, i;
	bool is_start = kind == BCI_IGT_MARK_SUBTEST_START || kind == BCI_IGT_MARK_DYNAMIC_START;

	if (out->marks[k].kind != kind)
		return false;
	rem = line < end ? (size_t)(end - line) : 0;
	want = plen + nlen + (is_start ? 1 : 2);
	cmp = rem < want ? rem : want;
	for (i = 0; i < cmp; i++) {
		char expect;

		if (i < plen)
			expect = prefix[i];
		else if (i < plen + nlen)
			expect = name[i - plen];
		else if (is_start)
			expect = '\n';
		else
			expect = i == plen + nlen ? ':' : ' ';
		if (line[i] != expect)
			return false;
	}
	return true;
}

/*
 * The first subtest mark of @kind for @name in the whole buffer, through the
 * index: a line that is not its last can only match with its whole key, and
 * the last line (cut short, without its newline) is compared as it is.
 */
static long find_subtest_mark(const struct bci_igt_output *out, enum bci_igt_mark_kind kind,
			      const char *name)
{
	const char *end = out->buf + out->len;
	size_t nlen = strlen(name), klen = nlen, k;

	if (kind == BCI_IGT_MARK_SUBTEST_RESULT) {
		/* NAME: the token itself, or the token followed by ": " and more. */
		for (klen = 0; klen < nlen && is_name_char(name[klen]); klen++)
			;
		if (klen == 0 || (klen < nlen && (name[klen] != ':' || name[klen + 1] != ' ')))
			goto last_line;
	}
	for (k = *index_slot(out, kind, name, klen); k; k = out->next_same[k - 1])
		if (mark_matches(out, end, k - 1, kind, name, nlen))
			return (long)(k - 1);
last_line:
	k = out->mark_count;
	if (k && mark_matches(out, end, k - 1, kind, name, nlen))
		return (long)(k - 1);
	return -1;
}

/* The first mark of @kind in [first, last) whose line is @name's (see mark_matches). */
static long find_mark(const struct bci_igt_output *out, const char *end, enum bci_igt_mark_kind kind,
		      const char *name, size_t first, size_t last)
{
	size_t nlen = strlen(name), k;

	if (is_subtest_mark(kind) && first == 0 && last == out->mark_count &&
	    end == out->buf + out->len && out->index_cap)
		return find_subtest_mark(out, kind, name);
	for (k = first; k < last; k++)
		if (mark_matches(out, end, k, kind, name, nlen))
			return (long)k;
	return -1;
}

static bool is_subtest_boundary(const struct bci_igt_output *out, size_t k)
{
	return out->marks[k].kind == BCI_IGT_MARK_SUBTEST_START ||
	       out->marks[k].kind == BCI_IGT_MARK_SUBTEST_RESULT;
}

/* Where a test's output starts: after the protocol line before its first line. */
static const char *span_begin(const struct bci_igt_output *out, long start, long result,
			      const char *buf, const char *end, long first)
{
	const char *p;

	if (start < first && result < first)
		return buf;
	if (start < first) {
		/* Result without a start: a fixture skipped or failed it. */
		if (result > first)
			p = next_line(out->buf + out->marks[result - 1].offset, end);
		else
			p = buf;
	} else if (start <= first) {
		p = buf;
	} else {
		p = next_line(out->buf + out->marks[start - 1].offset, end);
	}
	return p ? p : end;
}

/* Where it ends: at the next protocol line after its result, or for an
 * incomplete test at the next subtest start or result. */
static const char *span_end(const struct bci_igt_output *out, long start, long result,
			    const char *end, long first, size_t last)
{
	size_t k;

	if (start < first && result < first)
		return end;
	if (result < first) {
		for (k = (size_t)(start + 1); k < last; k++)
			if (is_subtest_boundary(out, k))
				return out->buf + out->marks[k].offset;
		return end;
	}
	if ((size_t)result + 1 < last)
		return out->buf + out->marks[result + 1].offset;
	return end;
}

const char *bci_igt_result_from_word(const char *text, size_t len, double *time)
{
	static const struct {
		const char *word, *result;
	} map[] = {
		{ BCI_IGT_WORD_SUCCESS, "pass" },
		{ BCI_IGT_WORD_SKIP, "skip" },
		{ BCI_IGT_WORD_FAIL, "fail" },
		{ BCI_IGT_WORD_CRASH, "crash" },
		{ BCI_IGT_WORD_TIMEOUT, "timeout" },
	};
	const char *result = "incomplete";
	size_t word = 0, i;

	while (word < len && !is_space(text[word]))
		word++;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (word <= strlen(map[i].word) && memcmp(text, map[i].word, word) == 0) {
			result = map[i].result;
			break;
		}
	}
	/* The time is "(SECONDSs)" after one separating character. */
	word++;
	if (word < len && text[word] == '(') {
		char number[64];
		size_t n = len - word - 1;

		if (n >= sizeof(number))
			n = sizeof(number) - 1;
		memcpy(number, text + word + 1, n);
		number[n] = '\0';
		*time = bci_strtod(number, NULL);
	}
	return result;
}

/* Reads the result line at mark @k (if any) for test @name, bounded by @end. */
static void span_result(const struct bci_igt_output *out, enum bci_igt_mark_kind kind, const char *name,
			long k, const char *end, struct bci_igt_span *span)
{
	const char *line, *nl, *text;
	size_t line_len, skip;

	span->result = "incomplete";
	span->time = 0.0;
	if (k < 0)
		return;
	line = out->buf + out->marks[k].offset;
	if (line >= end)
		return;
	nl = memchr(line, '\n', (size_t)(end - line));
	line_len = (size_t)((nl ? nl : end) - line);
	skip = strlen(prefixes[kind]) + strlen(name) + 2;
	if (skip > line_len || strncmp(line + strlen(prefixes[kind]), name, strlen(name)) != 0)
		return;
	text = line + skip;
	span->result = bci_igt_result_from_word(text, line_len - skip, &span->time);
}

void bci_igt_output_subtest(const struct bci_igt_output *out, const char *name,
			struct bci_igt_span *span)
{
	const char *end = out->buf + out->len;
	const char *b, *e;
	size_t k;

	span->start_mark = find_mark(out, end, BCI_IGT_MARK_SUBTEST_START, name, 0, out->mark_count);
	span->result_mark = find_mark(out, end, BCI_IGT_MARK_SUBTEST_RESULT, name, 0, out->mark_count);
	b = span_begin(out, span->start_mark, span->result_mark, out->buf, end, 0);
	e = span_end(out, span->start_mark, span->result_mark, end, 0, out->mark_count);
	/* Malformed orders (a result before the start) give an empty share. */
	if (e < b)
		e = b;
	span->begin = (size_t)(b - out->buf);
	span->end = (size_t)(e - out->buf);
	span_result(out, BCI_IGT_MARK_SUBTEST_RESULT, name, span->result_mark, e, span);

	/* Dynamic subtests live between the start and the result, or for an
	 * incomplete subtest up to the next subtest boundary. */
	if (span->result_mark >= 0) {
		span->last_mark = (size_t)span->result_mark;
	} else {
		for (k = (size_t)(span->start_mark + 1); k < out->mark_count; k++)
			if (is_subtest_boundary(out, k))
				break;
		span->last_mark = k;
	}
}

int bci_igt_output_next_dynamic(const struct bci_igt_output *out,
			    const struct bci_igt_span *subtest, size_t *cursor,
			    char *name, size_t name_size, struct bci_igt_span *span)
{
	const char *file_end = out->buf + out->len;
	const char *sub_begin = out->buf + subtest->begin, *sub_end = out->buf + subtest->end;
	long first = subtest->start_mark + 1;
	size_t k;

	if (*cursor < (size_t)first)
		*cursor = (size_t)first;
	for (k = *cursor; k < subtest->last_mark; k++) {
		const char *p, *b, *e;
		size_t n = 0;

		if (out->marks[k].kind != BCI_IGT_MARK_DYNAMIC_START)
			continue;
		/* The name is the next whitespace-delimited word, as sscanf("%s") reads it. */
		p = out->buf + out->marks[k].offset + strlen(BCI_IGT_STARTING_DYNAMIC_SUBTEST);
		while (p < file_end && is_space(*p))
			p++;
		while (p < file_end && !is_space(*p) && n + 1 < name_size && n < 255)
			name[n++] = *p++;
		if (n == 0)
			continue;
		name[n] = '\0';

		span->start_mark = (long)k;
		span->result_mark = find_mark(out, sub_end, BCI_IGT_MARK_DYNAMIC_RESULT, name,
					      k, subtest->last_mark);
		span->last_mark = subtest->last_mark;
		b = span_begin(out, (long)k, span->result_mark, sub_begin, sub_end, first);
		e = span_end(out, (long)k, span->result_mark, sub_end, first, subtest->last_mark);
		if (e < b)
			e = b;
		span->begin = (size_t)(b - out->buf);
		span->end = (size_t)(e - out->buf);
		span_result(out, BCI_IGT_MARK_DYNAMIC_RESULT, name, span->result_mark, e, span);
		*cursor = k + 1;
		return 1;
	}
	*cursor = k;
	return 0;
}

bool bci_igt_err_has_warnings(const char *buf, size_t len)
{
	const char *nul = len ? memchr(buf, '\0', len) : NULL;
	const char *end = buf + (nul ? (size_t)(nul - buf) : len);
	const char *p;
	bool other_line_seen = false;

	/*
	 * igt walks protocol lines and lines in step; the first protocol line
	 * not at the current line means output came before it.
	 */
	for (p = buf < end ? buf : NULL; p; p = next_line(p, end)) {
		enum bci_igt_mark_kind kind;

		if (classify(p, end, &kind)) {
			if (other_line_seen)
				return true;
		} else {
			other_line_seen = true;
		}
	}
	return false;
}

static size_t lowercase_word(const char *s, char *dst, size_t room)
{
	size_t n;

	/* What fits is all that is kept: the rest of a longer word is not looked at. */
	for (n = 0; n < room; n++) {
		unsigned char c = (unsigned char)s[n];

		if (!c || c == ' ' || (unsigned)(c - '\t') <= '\r' - '\t')
			break;
		dst[n] = (char)(c + ((unsigned)(c - 'A') < 26 ? 'a' - 'A' : 0));
	}
	return n;
}

/*
 * bootci's suspend cycles are jobs of the pseudo-binary `bootci_suspend`
 * whose subtest is `<state>[_<pm_test>]-<NNNN>`; they are named
 * `bootci@suspend@<state>[_<pm_test>]@<NNNN>`, a family of their own beside
 * IGT's tests (the binary alone is `bootci@suspend`).
 */
static void suspend_cycle_name(const char *subtest, char *name, size_t size)
{
	size_t used = (size_t)snprintf(name, size, "bootci@suspend");
	char word[256];
	size_t len, dash;

	if (!subtest || used + 1 >= size)
		return;
	len = lowercase_word(subtest, word, sizeof(word) - 1);
	word[len] = '\0';
	for (dash = len; dash > 0 && word[dash - 1] != '-'; dash--)
		;
	/* Not a cycle name: kept whole rather than guessed at. */
	if (dash > 1)
		word[dash - 1] = '@';
	snprintf(name + used, size - used, "@%s", word);
}

void bci_igt_piglit_name(const char *binary, const char *subtest, char *name, size_t size)
{
	size_t used;

	if (size == 0)
		return;
	/* Same bound as igt_runner's 256-byte name buffers. */
	if (size > 256)
		size = 256;
	if (strcmp(binary, BCI_IGT_SUSPEND_BINARY) == 0) {
		suspend_cycle_name(subtest, name, size);
		return;
	}
	/* Not snprintf: this runs several times for every job of a run. */
	used = size > 4 ? 4 : size - 1;
	memcpy(name, "igt@", used);
	name[used] = '\0';
	if (used < 4)
		return;
	used += lowercase_word(binary, name + used, size - 1 - used);
	name[used] = '\0';
	if (!subtest || used + 1 >= size)
		return;
	name[used++] = '@';
	used += lowercase_word(subtest, name + used, size - 1 - used);
	name[used] = '\0';
}

void bci_igt_piglit_name_dynamic(const char *subtest_name, const char *dynamic,
				    char *name, size_t size)
{
	size_t used;

	if (size == 0)
		return;
	if (size > 256)
		size = 256;
	used = (size_t)snprintf(name, size, "%s", subtest_name);
	if (used + 1 >= size) {
		name[size - 1] = '\0';
		return;
	}
	name[used++] = '@';
	used += lowercase_word(dynamic, name + used, size - 1 - used);
	name[used] = '\0';
}
