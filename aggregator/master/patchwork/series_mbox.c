// SPDX-License-Identifier: MIT
/*
 * A series' mbox split into its patches (series_bisect.h). Patchwork's series mbox
 * is one message a patch, in the series' order, each from a "From " line;
 * a body's own "From " lines are quoted (">From ") by the mbox writer, so a
 * line starting "From " starts a message. Headers end at the first blank
 * line; a header folded over lines (a Message-ID on the next line is
 * common) is read unfolded.
 */
#include "series_bisect.h"

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

/* The unfolded value of header @name among the headers [@p, @end), malloc'ed ("" when absent). */
static char *header(const char *p, const char *end, const char *name)
{
	size_t name_len = strlen(name);

	while (p < end) {
		const char *eol = line_end(p, end);
		size_t n = line_len(p, eol);

		if (n > name_len && p[name_len] == ':' && !strncasecmp(p, name, name_len)) {
			size_t cap = 1, len = 0;
			const char *q = p;
			char *out;

			/* The header and its continuation lines (starting with a blank). */
			for (const char *e = eol;;) {
				cap += line_len(q, e) + 1;
				if (e + 1 >= end || (e[1] != ' ' && e[1] != '\t'))
					break;
				q = e + 1;
				e = line_end(q, end);
			}
			if (!(out = malloc(cap)))
				return NULL;
			q = p + name_len + 1;
			for (const char *e = eol;;) {
				size_t k = line_len(q, e);

				memcpy(out + len, q, k);
				len += k;
				if (e + 1 >= end || (e[1] != ' ' && e[1] != '\t'))
					break;
				q = e + 1;
				e = line_end(q, end);
			}
			out[len] = '\0';
			/* Blanks around the value (and the fold's) trimmed at both ends. */
			size_t lead = strspn(out, " \t");

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
	if (len < 5 || memcmp(text, "From ", 5)) {
		bci_message(err, err_size, "the series' mbox does not start with a \"From \" line");
		return -EINVAL;
	}
	while (p < end) {
		const char *start = p, *headers = line_end(p, end), *body = NULL, *next = end;
		struct bci_series_patch *grown;

		headers = headers < end ? headers + 1 : end;
		/* The blank line that ends the headers, then the next "From " line. */
		for (const char *q = headers; q < end;) {
			const char *eol = line_end(q, end);

			if (!body && line_len(q, eol) == 0) {
				body = q;
			} else if (body && eol - q >= 5 && !memcmp(q, "From ", 5)) {
				next = q;
				break;
			}
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
			.subject = header(headers, body, "Subject"),
			.author = header(headers, body, "From"),
			.message_id = header(headers, body, "Message-ID"),
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
