// SPDX-License-Identifier: MIT
/* A mail header's value unfolded and its RFC 2047 encoded words decoded, and written: see mail_header.h. */
#include "mail_header.h"
#include "strv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NONE ((size_t)-1)

enum charset { CHARSET_UTF8, CHARSET_ASCII, CHARSET_LATIN1, CHARSET_UNKNOWN };

/* An encoded word of the unfolded text: [start, end) from "=?" to "?=". */
struct word {
	size_t start, end;
	size_t text, text_len;		/* its encoded text */
	enum charset charset;
	bool base64;			/* B, else Q */
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* RFC 2047's token: printable ASCII but its especials. */
static bool token_char(unsigned char c)
{
	return c > 0x20 && c < 0x7f && !strchr("()<>@,;:\"/[]?.=", c);
}

/* The charset named by the @len bytes at @name, an RFC 2231 language after a '*' allowed. */
static enum charset charset_named(const char *name, size_t len)
{
	static const struct {
		const char *name;
		enum charset charset;
	} names[] = {
		{ "UTF-8", CHARSET_UTF8 },	     { "UTF8", CHARSET_UTF8 },
		{ "US-ASCII", CHARSET_ASCII },	     { "ASCII", CHARSET_ASCII },
		{ "ISO-8859-1", CHARSET_LATIN1 },   { "ISO_8859-1", CHARSET_LATIN1 },
		{ "ISO8859-1", CHARSET_LATIN1 },    { "LATIN1", CHARSET_LATIN1 },
	};
	const char *star = memchr(name, '*', len);

	if (star) {
		const char *lang = star + 1, *end = name + len;

		/* A language tag: letters, digits and hyphens ("en", "de-CH"). */
		if (lang == end)
			return CHARSET_UNKNOWN;
		for (const char *p = lang; p < end; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '-'))
				return CHARSET_UNKNOWN;
		len = (size_t)(star - name);
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == len && !strncasecmp(names[i].name, name, len))
			return names[i].charset;
	return CHARSET_UNKNOWN;
}

/* Whether an encoded word starts at @i of the @n bytes of @u (its charset may be unknown). */
static bool word_parse(const char *u, size_t n, size_t i, struct word *w)
{
	size_t p = i + 2, charset = p;

	if (i + 1 >= n || u[i] != '=' || u[i + 1] != '?')
		return false;
	while (p < n && token_char((unsigned char)u[p]))
		p++;
	if (p == charset || p + 2 >= n || u[p] != '?' || u[p + 2] != '?')
		return false;
	w->charset = charset_named(u + charset, p - charset);
	if (u[p + 1] == 'B' || u[p + 1] == 'b')
		w->base64 = true;
	else if (u[p + 1] == 'Q' || u[p + 1] == 'q')
		w->base64 = false;
	else
		return false;
	p += 3;
	w->text = p;
	while (p < n && (unsigned char)u[p] > 0x20 && (unsigned char)u[p] < 0x7f && u[p] != '?')
		p++;
	/* RFC 2047 wants one character at least; an empty word is read as nothing, as git does. */
	if (p + 1 >= n || u[p] != '?' || u[p + 1] != '=')
		return false;
	w->start = i;
	w->text_len = p - w->text;
	w->end = p + 2;
	return true;
}

static int base64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* A byte of the word's charset written in UTF-8 to @dst (@room bytes): false if it cannot be. */
static bool put_byte(enum charset charset, unsigned char c, char *dst, size_t room, size_t *k)
{
	if (c >= 0x80 && charset == CHARSET_ASCII)
		return false;
	if (c >= 0x80 && charset == CHARSET_LATIN1) {
		if (room - *k < 2)
			return false;
		dst[(*k)++] = (char)(0xc0 | c >> 6);
		dst[(*k)++] = (char)(0x80 | (c & 0x3f));
		return true;
	}
	if (room == *k)
		return false;
	dst[(*k)++] = (char)c;
	return true;
}

/*
 * The text of @w decoded into UTF-8 at @dst (@room bytes): its length, or
 * -1 for bad base64 or Q, an unknown charset or a byte US-ASCII has not.
 * Whether that is valid UTF-8 and printable is the caller's to check.
 */
static long word_decode(const char *u, const struct word *w, char *dst, size_t room)
{
	const char *t = u + w->text;
	size_t len = w->text_len, k = 0;

	if (w->charset == CHARSET_UNKNOWN)
		return -1;
	if (w->base64) {
		size_t pad = 0, data;
		uint32_t bits = 0;
		int have = 0;

		while (pad < 2 && pad < len && t[len - 1 - pad] == '=')
			pad++;
		data = len - pad;
		/* Padded to a multiple of 4, or unpadded; never one character over. */
		if (data % 4 == 1 || (pad && len % 4))
			return -1;
		for (size_t i = 0; i < data; i++) {
			int v = base64_value(t[i]);

			if (v < 0)
				return -1;
			bits = (bits << 6 | (uint32_t)v) & 0xffff;
			have += 6;
			if (have >= 8) {
				have -= 8;
				if (!put_byte(w->charset, (unsigned char)(bits >> have), dst, room, &k))
					return -1;
			}
		}
		return (long)k;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)t[i];

		if (c == '_') {
			c = ' ';
		} else if (c == '=') {
			int high = i + 2 < len ? bci_hex_digit(t[i + 1]) : -1;
			int low = high >= 0 ? bci_hex_digit(t[i + 2]) : -1;

			if (low < 0)
				return -1;
			c = (unsigned char)(high << 4 | low);
			i += 2;
		}
		if (!put_byte(w->charset, c, dst, room, &k))
			return -1;
	}
	return (long)k;
}

/* UTF-8 read a byte at a time, across the words of a run. */
struct utf8_state {
	uint32_t code, least;		/* the character so far; the least it may be (no overlong form) */
	int need;			/* its continuation bytes still to come */
};

/* Takes byte @c: false if the text is not UTF-8 or holds a control character (C0, DEL, C1). */
static bool utf8_take(struct utf8_state *s, unsigned char c)
{
	if (s->need) {
		if ((c & 0xc0) != 0x80)
			return false;
		s->code = s->code << 6 | (c & 0x3f);
		if (--s->need)
			return true;
		return s->code >= s->least && s->code <= 0x10ffff &&
		       !(s->code >= 0xd800 && s->code <= 0xdfff) && !(s->code >= 0x80 && s->code < 0xa0);
	}
	if (c < 0x80)
		return c >= 0x20 && c != 0x7f;
	if (c >= 0xc2 && c <= 0xdf)
		*s = (struct utf8_state){ .code = c & 0x1f, .least = 0x80, .need = 1 };
	else if (c >= 0xe0 && c <= 0xef)
		*s = (struct utf8_state){ .code = c & 0x0f, .least = 0x800, .need = 2 };
	else if (c >= 0xf0 && c <= 0xf4)
		*s = (struct utf8_state){ .code = c & 0x07, .least = 0x10000, .need = 3 };
	else
		return false;
	return true;
}

struct decoder {
	const char *u;			/* the unfolded text */
	char *out;
	size_t o, cap;			/* bytes written, room */
	int words;			/* encoded words decoded */
	struct utf8_state utf8;		/* within a run: after its last decoded word */
	size_t after_word;		/* where the last decoded word ends in out, while only blanks followed; NONE */
	size_t blanks_from;		/* where those blanks start in u */
	/* A run whose last word ended within a character: it waits for the word that ends it. */
	bool open;
	size_t open_in, open_out;	/* where the run starts in u (its blanks before), in out */
	int open_words;
};

/* The open run had no word to end its last character: written from u as it is up to @to. */
static void run_undo(struct decoder *d, size_t to)
{
	d->o = d->open_out;
	memcpy(d->out + d->o, d->u + d->open_in, to - d->open_in);
	d->o += to - d->open_in;
	d->words -= d->open_words;
	d->open = false;
	d->utf8 = (struct utf8_state){ 0 };
	d->after_word = NONE;
}

/* The word @w: decoded, or written as it is. Returns false when it must be taken again. */
static bool word_take(struct decoder *d, const struct word *w)
{
	struct utf8_state s = d->utf8;
	long k = word_decode(d->u, w, d->out + d->o, d->cap - d->o);
	bool ok = k >= 0;
	size_t at;

	for (long j = 0; ok && j < k; j++)
		ok = utf8_take(&s, (unsigned char)d->out[d->o + (size_t)j]);
	if (!ok && d->open) {
		/* The run before it is written as it is, and this word read on its own. */
		run_undo(d, w->start);
		return false;
	}
	if (!ok) {
		memcpy(d->out + d->o, d->u + w->start, w->end - w->start);
		d->o += w->end - w->start;
		d->after_word = NONE;
		d->utf8 = (struct utf8_state){ 0 };
		return true;
	}
	/* RFC 2047 6.2: the blanks between two decoded words are not text. */
	at = d->o;
	if (d->after_word != NONE) {
		at = d->after_word;
		memmove(d->out + at, d->out + d->o, (size_t)k);
	}
	if (!d->open && s.need) {
		d->open = true;
		d->open_in = d->after_word != NONE ? d->blanks_from : w->start;
		d->open_out = at;
		d->open_words = 0;
	}
	d->o = at + (size_t)k;
	d->words++;
	if (d->open)
		d->open_words++;
	if (!s.need)
		d->open = false;
	d->utf8 = s;
	d->after_word = d->o;
	d->blanks_from = w->end;
	return true;
}

/* The unfolded form of the @len bytes at @value (no NUL among them) in @u: its length. */
static size_t unfold(const char *value, size_t len, char *u)
{
	size_t n = 0;

	/* RFC 5322 2.2.3: a line break before a blank is no part of the value. */
	for (size_t i = 0; i < len; i++) {
		if (value[i] == '\r' && i + 2 < len && value[i + 1] == '\n' && is_blank(value[i + 2]))
			i++;
		else if (!(value[i] == '\n' && i + 1 < len && is_blank(value[i + 1])))
			u[n++] = value[i];
	}
	u[n] = '\0';
	return n;
}

int bci_mail_header_unfold(const char *value, size_t len, char **out)
{
	len = strnlen(value, len);
	*out = malloc(len + 1);
	if (!*out)
		return -ENOMEM;
	unfold(value, len, *out);
	return 0;
}

int bci_mail_header_decode(const char *value, size_t len, char **out)
{
	struct decoder d = { .after_word = NONE };
	size_t n;
	char *u;

	*out = NULL;
	len = strnlen(value, len);
	d.cap = BCI_MAIL_HEADER_DECODED_MAX(len);
	u = malloc(len + 1);
	d.out = malloc(d.cap + 1);
	if (!u || !d.out) {
		free(u);
		free(d.out);
		return -ENOMEM;
	}
	n = unfold(value, len, u);
	d.u = u;
	for (size_t i = 0; i < n;) {
		struct word w;

		if (word_parse(u, n, i, &w)) {
			if (word_take(&d, &w))
				i = w.end;
			continue;
		}
		if (!is_blank(u[i])) {
			if (d.open)
				run_undo(&d, i);
			d.after_word = NONE;
		}
		d.out[d.o++] = u[i++];
	}
	if (d.open)
		run_undo(&d, n);
	d.out[d.o] = '\0';
	free(u);
	*out = d.out;
	return d.words;
}

/* ---- the writer ---- */

/*
 * RFC 2047: an encoded-word is at most 75 characters; "=?UTF-8?B?" and "?="
 * take 12, and a folded line starts with a blank: 45 bytes are 60 base64
 * characters, 73 on the line.
 */
#define WORD_INPUT_MAX 45

static const char base64_chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int base64_append(char **p, size_t *len, size_t *cap, const unsigned char *in, size_t n)
{
	size_t need = *len + (n + 2) / 3 * 4 + 64;

	if (need > *cap) {
		char *grown = realloc(*p, need * 2);

		if (!grown)
			return -ENOMEM;
		*p = grown;
		*cap = need * 2;
	}
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = in[i] << 16 | (i + 1 < n ? in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);

		(*p)[(*len)++] = base64_chars[v >> 18 & 63];
		(*p)[(*len)++] = base64_chars[v >> 12 & 63];
		(*p)[(*len)++] = i + 1 < n ? base64_chars[v >> 6 & 63] : '=';
		(*p)[(*len)++] = i + 2 < n ? base64_chars[v & 63] : '=';
	}
	return 0;
}

int bci_mail_header_encode(const char *name, const char *text, char **out)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t len = 0, cap = 0, n = strlen(text);
	char *p = NULL;
	int ret;

	if (strlen(name) > 40)
		return -EINVAL;
	cap = strlen(name) + 3;
	p = malloc(cap);
	if (!p)
		return -ENOMEM;
	len = (size_t)sprintf(p, "%s:", name);
	for (size_t i = 0; i < n || !n;) {
		/* The first word shares its line with "Name: "; lines stay within 76 characters. */
		size_t room = i ? WORD_INPUT_MAX : (76 - strlen(name) - 2 - 12) / 4 * 3;
		size_t take = n - i < room ? n - i : room;

		/* Never split a UTF-8 sequence: back off while the next byte continues one. */
		while (take && i + take < n && (s[i + take] & 0xc0) == 0x80)
			take--;
		if (!take && n)
			take = n - i < room ? n - i : room;
		/* Nothing to encode: only makes room for the word's frame. */
		ret = base64_append(&p, &len, &cap, (const unsigned char *)"", 0);
		if (ret < 0)
			goto fail;
		/* Each word on its own folded line: " =?UTF-8?B?...?=" (the fold is the "\n" before the blank). */
		len += (size_t)sprintf(p + len, "%s=?UTF-8?B?", i ? "\n " : " ");
		ret = base64_append(&p, &len, &cap, s + i, take);
		if (ret < 0)
			goto fail;
		len += (size_t)sprintf(p + len, "?=");
		i += take;
		if (!n)
			break;
	}
	p[len] = '\0';
	*out = p;
	return 0;
fail:
	free(p);
	return ret;
}
