// SPDX-License-Identifier: MIT
#include "jsonw.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void bci_jsonw_init(struct bci_jsonw *w, FILE *out, int indent)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->indent = indent < 0 ? 0 : indent;
}

static int fail(struct bci_jsonw *w, int err)
{
	if (!w->error)
		w->error = err;
	return w->error;
}

void bci_jsonw_buffer(struct bci_jsonw *w, char *buf, size_t size)
{
	bci_jsonw_flush(w);
	w->buf = size ? buf : NULL;
	w->buf_len = 0;
	w->buf_cap = size;
}

int bci_jsonw_flush(struct bci_jsonw *w)
{
	size_t len = w->buf_len;

	w->buf_len = 0;
	if (!w->error && len && fwrite(w->buf, 1, len, w->out) != len)
		fail(w, errno ? -errno : -EIO);
	return w->error;
}

static void put(struct bci_jsonw *w, const void *s, size_t len)
{
	if (w->error || len == 0)
		return;
	if (w->buf) {
		if (len > w->buf_cap - w->buf_len && bci_jsonw_flush(w))
			return;
		if (len <= w->buf_cap - w->buf_len) {
			memcpy(w->buf + w->buf_len, s, len);
			w->buf_len += len;
			return;
		}
	}
	if (fwrite(s, 1, len, w->out) != len)
		fail(w, errno ? -errno : -EIO);
}

static void puts_(struct bci_jsonw *w, const char *s)
{
	put(w, s, strlen(s));
}

static void newline_indent(struct bci_jsonw *w)
{
	static const char spaces[] = "                                ";
	size_t n;

	if (!w->indent)
		return;
	put(w, "\n", 1);
	n = (size_t)w->indent * w->depth;
	while (n > 0) {
		size_t chunk = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		put(w, spaces, chunk);
		n -= chunk;
	}
}

/*
 * Everything that starts a value comes through here: it checks that a value
 * is allowed at this point and writes the separator the container needs.
 */
static int value_prefix(struct bci_jsonw *w)
{
	if (w->error)
		return w->error;
	if (w->in_string)
		return fail(w, -EINVAL);
	if (w->after_key) {
		w->after_key = false;
		return 0;
	}
	if (w->depth == 0)
		return 0;
	if (w->kind[w->depth - 1] == 'o')
		return fail(w, -EINVAL);	/* a value where a key is due */
	if (w->has_members[w->depth - 1])
		put(w, ",", 1);
	w->has_members[w->depth - 1] = true;
	newline_indent(w);
	return w->error;
}

static int open_container(struct bci_jsonw *w, char kind)
{
	if (value_prefix(w))
		return w->error;
	if (w->depth >= BCI_JSONW_MAX_DEPTH)
		return fail(w, -E2BIG);
	put(w, kind == 'o' ? "{" : "[", 1);
	w->kind[w->depth] = kind;
	w->has_members[w->depth] = false;
	w->depth++;
	return w->error;
}

static int close_container(struct bci_jsonw *w, char kind)
{
	if (w->error)
		return w->error;
	if (w->in_string || w->after_key || w->depth == 0 || w->kind[w->depth - 1] != kind)
		return fail(w, -EINVAL);
	w->depth--;
	if (w->has_members[w->depth])
		newline_indent(w);
	put(w, kind == 'o' ? "}" : "]", 1);
	return w->error;
}

int bci_jsonw_object_begin(struct bci_jsonw *w)
{
	return open_container(w, 'o');
}

int bci_jsonw_object_end(struct bci_jsonw *w)
{
	return close_container(w, 'o');
}

int bci_jsonw_array_begin(struct bci_jsonw *w)
{
	return open_container(w, 'a');
}

int bci_jsonw_array_end(struct bci_jsonw *w)
{
	return close_container(w, 'a');
}

/* ---- string bodies ---- */

static void put_latin1(struct bci_jsonw *w, unsigned char c)
{
	char utf8[2] = { (char)(0xC0 | (c >> 6)), (char)(0x80 | (c & 0x3F)) };

	put(w, utf8, 2);
}

static void put_ascii_escaped(struct bci_jsonw *w, unsigned char c)
{
	char esc[8];

	switch (c) {
	case '"': puts_(w, "\\\""); return;
	case '\\': puts_(w, "\\\\"); return;
	case '\b': puts_(w, "\\b"); return;
	case '\f': puts_(w, "\\f"); return;
	case '\n': puts_(w, "\\n"); return;
	case '\r': puts_(w, "\\r"); return;
	case '\t': puts_(w, "\\t"); return;
	}
	/* The remaining controls, NUL included, have no short form. */
	snprintf(esc, sizeof(esc), "\\u%04x", c);
	puts_(w, esc);
}

static bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\';
}

/*
 * Length of the well-formed UTF-8 sequence at @s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 if the bytes are not
 * one. When the @n bytes available are a valid start cut short, returns 0
 * and sets *@short_input so a streaming caller can wait for more.
 */
static size_t utf8_sequence(const unsigned char *s, size_t n, bool *short_input)
{
	size_t need, i;
	unsigned char lo = 0x80, hi = 0xBF;

	*short_input = false;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		need = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		need = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		need = 4;
	else
		return 0;
	/* The second byte's range is what rules out overlongs and surrogates. */
	if (s[0] == 0xE0)
		lo = 0xA0;
	else if (s[0] == 0xED)
		hi = 0x9F;
	else if (s[0] == 0xF0)
		lo = 0x90;
	else if (s[0] == 0xF4)
		hi = 0x8F;
	for (i = 1; i < need; i++) {
		if (i >= n) {
			*short_input = true;
			return 0;
		}
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xBF))
			return 0;
	}
	return need;
}

/*
 * How many bytes from @s on go out as they are (ASCII, not escaped): eight
 * at a time while no byte of the eight is below 0x20, at or above 0x80, a
 * quote or a backslash (test output is mostly such text).
 */
static size_t plain_run(const unsigned char *s, size_t len)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t x, quote, backslash;

		memcpy(&x, s + i, 8);
		quote = x ^ (ones * '"');
		backslash = x ^ (ones * '\\');
		/* A byte below 0x20, a high byte, a zero byte in either xor: a high bit each. */
		if ((((x - ones * 0x20) & ~x) | x | ((quote - ones) & ~quote) |
		     ((backslash - ones) & ~backslash)) & highs)
			break;
	}
	while (i < len && s[i] < 0x80 && !needs_escape(s[i]))
		i++;
	return i;
}

/* Writes @len bytes of a string body; an incomplete UTF-8 tail is kept pending. */
static void put_body(struct bci_jsonw *w, const unsigned char *s, size_t len)
{
	size_t i = 0, run;

	while (i < len && !w->error) {
		unsigned char c;
		size_t seq;
		bool short_input;

		run = plain_run(s + i, len - i);
		put(w, s + i, run);
		i += run;
		if (i == len)
			return;
		c = s[i];
		if (c < 0x80) {
			put_ascii_escaped(w, c);
			i++;
			continue;
		}
		if (w->bytes == BCI_JSONW_LATIN1) {
			put_latin1(w, c);
			i++;
			continue;
		}
		seq = utf8_sequence(s + i, len - i, &short_input);
		if (seq) {
			put(w, s + i, seq);
			i += seq;
		} else if (short_input) {
			memcpy(w->pending, s + i, len - i);
			w->pending_len = (unsigned)(len - i);
			return;
		} else {
			put_latin1(w, c);
			i++;
		}
	}
}

/* Completes a pending UTF-8 start with bytes from @s; returns how many it took. */
static size_t resolve_pending(struct bci_jsonw *w, const unsigned char *s, size_t len)
{
	size_t used = 0;

	while (w->pending_len > 0 && !w->error) {
		bool short_input;
		size_t seq = utf8_sequence(w->pending, w->pending_len, &short_input);
		unsigned char rest[4];
		size_t rest_len;

		if (seq) {
			put(w, w->pending, seq);
			w->pending_len = 0;
			break;
		}
		if (short_input) {
			if (used == len)
				break;	/* still waiting for more input */
			w->pending[w->pending_len++] = s[used++];
			continue;
		}
		/* Not UTF-8 after all: the lead byte is Latin-1, the rest is re-read. */
		put_latin1(w, w->pending[0]);
		rest_len = w->pending_len - 1;
		memcpy(rest, w->pending + 1, rest_len);
		w->pending_len = 0;
		put_body(w, rest, rest_len);
	}
	return used;
}

static void put_string_bytes(struct bci_jsonw *w, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t used = resolve_pending(w, u, len);

	if (w->pending_len == 0)
		put_body(w, u + used, len - used);
}

static void flush_pending(struct bci_jsonw *w)
{
	unsigned i;

	/* A sequence cut short at the very end is not UTF-8: Latin-1 each byte. */
	for (i = 0; i < w->pending_len; i++)
		put_latin1(w, w->pending[i]);
	w->pending_len = 0;
}

int bci_jsonw_string_begin(struct bci_jsonw *w, enum bci_jsonw_bytes bytes)
{
	if (value_prefix(w))
		return w->error;
	w->in_string = true;
	w->bytes = bytes;
	w->pending_len = 0;
	put(w, "\"", 1);
	return w->error;
}

int bci_jsonw_string_append(struct bci_jsonw *w, const char *s, size_t len)
{
	if (w->error)
		return w->error;
	if (!w->in_string)
		return fail(w, -EINVAL);
	put_string_bytes(w, s, len);
	return w->error;
}

int bci_jsonw_string_end(struct bci_jsonw *w)
{
	if (w->error)
		return w->error;
	if (!w->in_string)
		return fail(w, -EINVAL);
	flush_pending(w);
	put(w, "\"", 1);
	w->in_string = false;
	return w->error;
}

int bci_jsonw_string_n(struct bci_jsonw *w, const char *s, size_t len, enum bci_jsonw_bytes bytes)
{
	bci_jsonw_string_begin(w, bytes);
	bci_jsonw_string_append(w, s, len);
	return bci_jsonw_string_end(w);
}

int bci_jsonw_string(struct bci_jsonw *w, const char *s)
{
	return bci_jsonw_string_n(w, s, strlen(s), BCI_JSONW_UTF8);
}

int bci_jsonw_key_n(struct bci_jsonw *w, const char *key, size_t len, enum bci_jsonw_bytes bytes)
{
	if (w->error)
		return w->error;
	if (w->in_string || w->after_key || w->depth == 0 || w->kind[w->depth - 1] != 'o')
		return fail(w, -EINVAL);
	if (w->has_members[w->depth - 1])
		put(w, ",", 1);
	w->has_members[w->depth - 1] = true;
	newline_indent(w);
	put(w, "\"", 1);
	w->bytes = bytes;
	w->pending_len = 0;
	put_string_bytes(w, key, len);
	flush_pending(w);
	put(w, w->indent ? "\": " : "\":", w->indent ? 3 : 2);
	w->after_key = true;
	return w->error;
}

int bci_jsonw_key(struct bci_jsonw *w, const char *key)
{
	return bci_jsonw_key_n(w, key, strlen(key), BCI_JSONW_UTF8);
}

/* ---- scalars ---- */

int bci_jsonw_int(struct bci_jsonw *w, long long v)
{
	char buf[32];

	if (value_prefix(w))
		return w->error;
	snprintf(buf, sizeof(buf), "%lld", v);
	puts_(w, buf);
	return w->error;
}

/*
 * An integral @v below 1e15 as %.15g writes it (all its digits), with the
 * ".0" added below; the common times 0 and whole seconds skip snprintf and
 * strtod. 0 when @v is not one.
 */
static size_t format_integral(double v, char *buf, size_t size)
{
	char digits[24];
	long long n;
	size_t len = 0, i;
	bool negative = v < 0 || (v == 0 && signbit(v));

	if (!(v > -1e15 && v < 1e15) || v != (double)(long long)v || size < 24)
		return 0;
	n = negative ? -(long long)v : (long long)v;
	do {
		digits[len++] = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	i = 0;
	if (negative)
		buf[i++] = '-';
	while (len)
		buf[i++] = digits[--len];
	memcpy(buf + i, ".0", 3);
	return i + 2;
}

/*
 * @v in [1e-4, 1e9) that is the double nearest to a whole number of
 * millionths (test times are): %.15g then writes those digits, the trailing
 * zeros dropped (15 significant digits hold them, and the double's error is
 * far below the 15th), and they read back as @v. 0 when @v is not one.
 */
static size_t format_micro(double v, char *buf, size_t size)
{
	double a = v < 0 ? -v : v;
	long long k, whole;
	size_t len = 0, n = 0;
	char digits[24];
	int frac, places = 6;

	if (!(a >= 1e-4 && a < 1e9) || size < 32)
		return 0;
	k = llround(a * 1e6);
	if ((double)k / 1e6 != a)
		return 0;
	whole = k / 1000000;
	frac = (int)(k % 1000000);
	if (frac == 0)
		return 0;	/* whole: format_integral's */
	if (v < 0)
		buf[len++] = '-';
	do
		digits[n++] = (char)('0' + whole % 10);
	while ((whole /= 10) != 0);
	while (n > 0)
		buf[len++] = digits[--n];
	buf[len++] = '.';
	while (frac % 10 == 0) {
		frac /= 10;
		places--;
	}
	for (n = (size_t)places; n > 0; n--) {
		buf[len + n - 1] = (char)('0' + frac % 10);
		frac /= 10;
	}
	len += (size_t)places;
	buf[len] = '\0';
	return len;
}

void bci_jsonw_format_double(double v, char *buf, size_t size)
{
	int precision;

	if (format_integral(v, buf, size) || format_micro(v, buf, size))
		return;
	if (!isfinite(v)) {
		snprintf(buf, size, "null");
		return;
	}
	/* The shortest of %.15g..%.17g that reads back exactly; %.17g always does. */
	for (precision = 15; precision <= 17; precision++) {
		snprintf(buf, size, "%.*g", precision, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* Keep it visibly a float, as JSON readers that type numbers expect. */
	if (!strpbrk(buf, ".eE") && strlen(buf) + 3 <= size)
		strcat(buf, ".0");
}

int bci_jsonw_double(struct bci_jsonw *w, double v)
{
	char buf[40];

	if (value_prefix(w))
		return w->error;
	bci_jsonw_format_double(v, buf, sizeof(buf));
	puts_(w, buf);
	return w->error;
}

int bci_jsonw_bool(struct bci_jsonw *w, bool v)
{
	if (value_prefix(w))
		return w->error;
	puts_(w, v ? "true" : "false");
	return w->error;
}

int bci_jsonw_null(struct bci_jsonw *w)
{
	if (value_prefix(w))
		return w->error;
	puts_(w, "null");
	return w->error;
}

int bci_jsonw_finish(struct bci_jsonw *w)
{
	if (w->error)
		return w->error;
	if (w->depth != 0 || w->in_string || w->after_key)
		return fail(w, -EINVAL);
	put(w, "\n", 1);
	bci_jsonw_flush(w);
	if (!w->error && fflush(w->out) != 0)
		fail(w, errno ? -errno : -EIO);
	if (!w->error && ferror(w->out))
		fail(w, -EIO);
	return w->error;
}
