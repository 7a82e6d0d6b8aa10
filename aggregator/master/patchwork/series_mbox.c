// SPDX-License-Identifier: MIT
/*
 * A series' mbox split into its patches (series_bisect.h). Patchwork's
 * series mbox is one message a patch, in the series' order, each from a
 * From_ line ("From patchwork Sun Dec  6 15:09:51 2026"; git format-patch
 * writes "From SHA Mon Sep 17 00:00:00 2001"). Patchwork does not quote a
 * body's own lines starting "From " (a commit message's "From the
 * datasheet, ..."), so a message starts only at a line of a From_ line's
 * shape (a word, then a ctime date) at the start of the text or after a
 * blank line. Headers end at the first blank line; a header folded over
 * lines (a Message-ID on the next line is common) is read unfolded, and the
 * subject and author as people read them: their RFC 2047 encoded words
 * decoded (git format-patch writes a non-ASCII name or subject so).
 */
#include "series_bisect.h"

#include "mail_header.h"
#include "message.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The end of the line starting at @p (its '\n', or @end). */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
}

/* The line's length without its CR. */
static size_t line_len(const char *p, const char *eol)
{
	return (size_t)(eol - p) - (eol > p && eol[-1] == '\r');
}

/* Whether the @n bytes at @p are a From_ line: "From WORD Www Mmm [ d]d hh:mm:ss yyyy". */
static bool from_line(const char *p, size_t n)
{
	const char *end = p + n, *q;
	size_t word = 0;

	if (n < 5 || memcmp(p, "From ", 5))
		return false;
	q = p + 5;
	while (q + word < end && q[word] != ' ')
		word++;
	if (!word || q + word >= end)
		return false;
	q += word + 1;
	/* Www Mmm dd hh:mm:ss yyyy: 24 bytes, its day maybe padded with a blank. */
	if (end - q != 24 || q[3] != ' ' || q[7] != ' ' || q[10] != ' ' || q[13] != ':' ||
	    q[16] != ':' || q[19] != ' ')
		return false;
	for (int i = 0; i < 24; i++) {
		bool digit = (i >= 8 && i <= 9) || (i >= 11 && i <= 12) || (i >= 14 && i <= 15) ||
			     (i >= 17 && i <= 18) || i >= 20;
		bool alpha = i < 3 || (i >= 4 && i < 7);

		if (digit && !(q[i] >= '0' && q[i] <= '9') && !(i == 8 && q[i] == ' '))
			return false;
		if (alpha && !((q[i] >= 'A' && q[i] <= 'Z') || (q[i] >= 'a' && q[i] <= 'z')))
			return false;
	}
	return true;
}

/*
 * The value of header @name among the headers [@p, @end), malloc'ed ("" when
 * absent): unfolded, its encoded words decoded when @decode, its blanks
 * around trimmed.
 */
static char *header(const char *p, const char *end, const char *name, bool decode)
{
	size_t name_len = strlen(name);

	while (p < end) {
		const char *eol = line_end(p, end);
		size_t n = line_len(p, eol);

		if (n > name_len && p[name_len] == ':' && !strncasecmp(p, name, name_len)) {
			const char *value = p + name_len + 1, *last = p;
			size_t len, lead;
			char *out;

			/* The header and its continuation lines (starting with a blank). */
			for (const char *e = eol; e + 1 < end && (e[1] == ' ' || e[1] == '\t');) {
				last = e + 1;
				e = line_end(last, end);
			}
			len = (size_t)(last + line_len(last, line_end(last, end)) - value);
			if ((decode ? bci_mail_header_decode(value, len, &out)
				    : bci_mail_header_unfold(value, len, &out)) < 0)
				return NULL;
			len = strlen(out);
			lead = strspn(out, " \t");
			memmove(out, out + lead, len - lead + 1);
			len -= lead;
			while (len && (out[len - 1] == ' ' || out[len - 1] == '\t'))
				out[--len] = '\0';
			return out;
		}
		p = eol < end ? eol + 1 : end;
	}
	return strdup("");
}

void bci_series_patches_free(struct bci_series_patch *patches, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(patches[i].subject);
		free(patches[i].author);
		free(patches[i].message_id);
	}
	free(patches);
}

int bci_series_mbox_split(const char *text, size_t len, struct bci_series_patch **patches,
			  size_t *count, char *err, size_t err_size)
{
	const char *end = text + len, *p = text;
	struct bci_series_patch *v = NULL;
	size_t n = 0;

	*patches = NULL;
	*count = 0;
	if (memchr(text, '\0', len)) {
		bci_message(err, err_size, "the series' mbox holds a NUL byte");
		return -EINVAL;
	}
	if (!from_line(text, line_len(text, line_end(text, end)))) {
		bci_message(err, err_size, "the series' mbox does not start with a From_ line"
			    " (\"From WORD DATE\")");
		return -EINVAL;
	}
	while (p < end) {
		const char *start = p, *headers = line_end(p, end), *body = NULL, *next = end;
		struct bci_series_patch *grown;

		headers = headers < end ? headers + 1 : end;
		bool blank = false;

		/* The blank line that ends the headers, then the next From_ line after a blank one. */
		for (const char *q = headers; q < end;) {
			const char *eol = line_end(q, end);
			size_t line = line_len(q, eol);

			if (!body && line == 0) {
				body = q;
			} else if (body && blank && from_line(q, line)) {
				next = q;
				break;
			}
			blank = line == 0;
			q = eol < end ? eol + 1 : end;
		}
		if (!body) {
			bci_message(err, err_size, "message %zu of the series' mbox has no blank line"
				    " after its headers", n + 1);
			bci_series_patches_free(v, n);
			return -EINVAL;
		}
		grown = realloc(v, (n + 1) * sizeof(*grown));
		if (!grown) {
			bci_series_patches_free(v, n);
			return -ENOMEM;
		}
		v = grown;
		v[n] = (struct bci_series_patch){
			.start = (size_t)(start - text), .end = (size_t)(next - text),
			.subject = header(headers, body, "Subject", true),
			.author = header(headers, body, "From", true),
			.message_id = header(headers, body, "Message-ID", false),
		};
		n++;
		if (!v[n - 1].subject || !v[n - 1].author || !v[n - 1].message_id) {
			bci_series_patches_free(v, n);
			return -ENOMEM;
		}
		p = next;
	}
	*patches = v;
	*count = n;
	return 0;
}
