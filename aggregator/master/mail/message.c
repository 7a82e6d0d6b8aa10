// SPDX-License-Identifier: MIT
/*
 * A reply as SMTP carries it (mail.h): the mbox message report/mbox.c
 * writes, its lines ended in CRLF, its mbox framing undone; and the
 * envelope its headers give (RFC 5322 section 3.4: address lists, section
 * 2.2.3: folded header lines).
 */
#include "mail.h"

#include "message.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int bci_mail_from_mbox(const char *mbox, size_t len, char **out, size_t *out_len, char *err,
		       size_t err_size)
{
	const char *p = mbox, *end = mbox + len;
	size_t n = 0, blank_at = (size_t)-1, headers_end = 0;
	bool headers_ended = false, from_line = false;
	char *buf;

	if (memchr(mbox, '\0', len)) {
		bci_message(err, err_size, "the message holds a NUL byte");
		return -EINVAL;
	}
	/* Every LF may become CRLF: twice the bytes at most. */
	buf = malloc(len * 2 + 1);
	if (!buf)
		return -ENOMEM;
	if (len >= 5 && !memcmp(p, "From ", 5)) {
		const char *nl = memchr(p, '\n', len);

		p = nl ? nl + 1 : end;
		from_line = true;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t line = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *q = p;

		if (line && p[line - 1] == '\r')
			line--;
		if (memchr(p, '\r', line)) {
			bci_message(err, err_size, "the message holds a CR that ends no line");
			free(buf);
			return -EINVAL;
		}
		if (!line && !headers_ended) {
			headers_ended = true;
			headers_end = n;
		}
		/* mboxrd: ">From ", ">>From " ... had one '>' added. */
		while (q < p + line && *q == '>')
			q++;
		if (from_line && q > p && (size_t)(p + line - q) >= 5 && !memcmp(q, "From ", 5)) {
			p++;
			line--;
		}
		blank_at = line ? (size_t)-1 : n;
		memcpy(buf + n, p, line);
		n += line;
		buf[n++] = '\r';
		buf[n++] = '\n';
		p = nl ? nl + 1 : end;
	}
	/*
	 * The blank line that ends a message in an mbox (before the next From_
	 * line) is the mbox's, not the message's; never the headers' end.
	 */
	if (from_line && blank_at != (size_t)-1 && blank_at > headers_end)
		n = blank_at;
	if (!headers_ended || !headers_end) {
		bci_message(err, err_size, "the message has no headers, or no blank line after them");
		free(buf);
		return -EINVAL;
	}
	buf[n] = '\0';
	*out = buf;
	*out_len = n;
	return 0;
}

int bci_mail_address(const char *text, char *out, size_t size)
{
	const char *start = text, *stop;
	size_t n;

	const char *lt = strrchr(text, '<');

	if (lt) {
		start = lt + 1;
		stop = strchr(start, '>');
		if (!stop)
			return -EINVAL;
	} else {
		while (*start == ' ' || *start == '\t')
			start++;
		stop = start + strlen(start);
		while (stop > start && (stop[-1] == ' ' || stop[-1] == '\t'))
			stop--;
	}
	n = (size_t)(stop - start);
	if (!n || n >= size || !memchr(start, '@', n) || start[0] == '@' || stop[-1] == '@')
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)start[i] <= ' ' || start[i] == 0x7f || start[i] == '<' ||
		    start[i] == '>' || start[i] == ',')
			return -EINVAL;
	memcpy(out, start, n);
	out[n] = '\0';
	return 0;
}

/* The unfolded value of header @name in @message's headers (malloc'ed), or NULL. */
static char *header_value(const char *message, const char *name)
{
	size_t name_len = strlen(name);

	for (const char *p = message; *p && strncmp(p, "\r\n", 2);) {
		const char *eol = strstr(p, "\r\n");

		if (!eol)
			return NULL;
		if (!strncasecmp(p, name, name_len) && p[name_len] == ':') {
			const char *v = p + name_len + 1, *end = eol;
			size_t cap = 0, n = 0;
			char *out;

			/* Continuation lines start with a blank. */
			while (end[2] == ' ' || end[2] == '\t') {
				const char *next = strstr(end + 2, "\r\n");

				if (!next)
					break;
				end = next;
			}
			cap = (size_t)(end - v) + 1;
			out = malloc(cap);
			if (!out)
				return NULL;
			for (const char *s = v; s < end; s++)
				if (*s != '\r' && *s != '\n')
					out[n++] = *s;
			out[n] = '\0';
			return out;
		}
		p = eol + 2;
	}
	return NULL;
}

/* Appends each address of the list @list to @out (one a line). */
static int list_addresses(const char *list, char **out, size_t *len)
{
	const char *p = list;

	while (*p) {
		const char *item = p;
		int angle = 0, quote = 0;
		char address[512], text[1024];
		size_t n;

		for (; *p && (angle || quote || *p != ','); p++) {
			if (*p == '"')
				quote = !quote;
			else if (!quote && *p == '<')
				angle = 1;
			else if (!quote && *p == '>')
				angle = 0;
		}
		n = (size_t)(p - item);
		if (*p == ',')
			p++;
		if (n >= sizeof(text))
			return -EINVAL;
		memcpy(text, item, n);
		text[n] = '\0';
		if (strspn(text, " \t") == n)
			continue;
		if (bci_mail_address(text, address, sizeof(address)) < 0)
			return -EINVAL;
		char *grown = realloc(*out, *len + strlen(address) + 2);

		if (!grown)
			return -ENOMEM;
		*out = grown;
		*len += (size_t)sprintf(*out + *len, "%s\n", address);
	}
	return 0;
}

int bci_mail_envelope_read(const char *message, struct bci_mail_envelope *e, char *err,
			   size_t err_size)
{
	static const char *const lists[] = { "To", "Cc" };
	char address[512], *value;
	size_t len = 0;
	int ret = 0;

	memset(e, 0, sizeof(*e));
	value = header_value(message, "Message-ID");
	if (value) {
		const char *lt = strchr(value, '<'), *gt = lt ? strchr(lt, '>') : NULL;

		if (lt && gt && gt > lt + 1 && memchr(lt, '@', (size_t)(gt - lt)))
			e->message_id = strndup(lt, (size_t)(gt - lt) + 1);
		free(value);
	}
	if (!e->message_id) {
		bci_message(err, err_size, "the message has no Message-ID: <left@right> header");
		ret = -EINVAL;
		goto fail;
	}
	value = header_value(message, "From");
	if (value && bci_mail_address(value, address, sizeof(address)) == 0)
		e->from = strdup(address);
	free(value);
	for (size_t i = 0; i < 2; i++) {
		value = header_value(message, lists[i]);
		if (!value)
			continue;
		ret = list_addresses(value, &e->recipients, &len);
		if (ret < 0) {
			bci_message(err, err_size, "%s: '%s' is not a list of addresses", lists[i],
				    value);
			free(value);
			goto fail;
		}
		free(value);
	}
	if (!e->recipients) {
		bci_message(err, err_size, "the message has no recipient (To: or Cc:)");
		ret = -EINVAL;
		goto fail;
	}
	return 0;
fail:
	bci_mail_envelope_free(e);
	return ret;
}

void bci_mail_envelope_free(struct bci_mail_envelope *e)
{
	free(e->message_id);
	free(e->from);
	free(e->recipients);
	memset(e, 0, sizeof(*e));
}
