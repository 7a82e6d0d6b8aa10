// SPDX-License-Identifier: MIT
#include "message.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void bci_message(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (!err || err_size == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
}

void bci_vmessage_at(char *err, size_t err_size, const char *origin, unsigned int line,
		     const char *fmt, va_list ap)
{
	int n;

	if (!err || err_size == 0)
		return;
	n = snprintf(err, err_size, "%s:%u: ", origin, line);
	if (n >= 0 && (size_t)n < err_size)
		vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
}

void bci_message_at(char *err, size_t err_size, const char *origin, unsigned int line,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bci_vmessage_at(err, err_size, origin, line, fmt, ap);
	va_end(ap);
}

/* What byte @c becomes in a quote: into @piece, its length. */
static size_t quote_byte(unsigned char c, char piece[4])
{
	static const char hex[] = "0123456789abcdef";

	if (c == '\\') {
		piece[0] = piece[1] = '\\';
		return 2;
	}
	if (c >= 0x20 && c < 0x7f) {
		piece[0] = (char)c;
		return 1;
	}
	piece[0] = '\\';
	piece[1] = 'x';
	piece[2] = hex[c >> 4];
	piece[3] = hex[c & 15];
	return 4;
}

char *bci_quote(char *buf, size_t size, const char *text, size_t len)
{
	size_t whole = 0, room, used = 0;
	char piece[4];

	if (size == 0)
		return buf;
	for (size_t i = 0; i < len && whole < size; i++)
		whole += quote_byte((unsigned char)text[i], piece);
	/* Cut: room for "..." after what is kept. */
	room = whole < size ? size - 1 : size > 4 ? size - 4 : 0;
	for (size_t i = 0; i < len; i++) {
		size_t n = quote_byte((unsigned char)text[i], piece);

		if (used + n > room)
			break;
		memcpy(buf + used, piece, n);
		used += n;
	}
	if (whole >= size && size > 4) {
		memcpy(buf + used, "...", 3);
		used += 3;
	}
	buf[used] = '\0';
	return buf;
}

/* The errors Linux returns that a C library may have no text for (musl: these). */
static const struct {
	int errnum;
	const char *text;
} unnamed_errors[] = {
	{ EUCLEAN, "Structure needs cleaning (EUCLEAN)" },
	{ EHWPOISON, "Memory page has hardware error (EHWPOISON)" },
	{ ERFKILL, "Operation not possible due to RF-kill (ERFKILL)" },
};

const char *bci_strerror(int errnum)
{
	static _Thread_local char unknown[48];
	const char *text;

	for (size_t i = 0; i < sizeof(unnamed_errors) / sizeof(unnamed_errors[0]); i++)
		if (unnamed_errors[i].errnum == errnum)
			return unnamed_errors[i].text;
	text = strerror(errnum);
	/* musl's and glibc's words for an errno they do not know. */
	if (errnum == 0 || !strcmp(text, "No error information") || !strncmp(text, "Unknown error", 13)) {
		snprintf(unknown, sizeof(unknown), "unknown error (errno %d)", errnum);
		return unknown;
	}
	return text;
}
