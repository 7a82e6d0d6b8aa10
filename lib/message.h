/* SPDX-License-Identifier: MIT */
/*
 * One-line error messages for the caller: library parsers do not print, they
 * fill a caller's buffer ("file:line: what") that only a main() shows.
 */
#ifndef BCI_MESSAGE_H
#define BCI_MESSAGE_H

#include <stdarg.h>
#include <stddef.h>

/* Formats into @err (@err_size bytes, truncated); a NULL or empty buffer is ignored. */
void bci_message(char *err, size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The "origin:line: what" form every line-oriented parser reports in (recipes,
 * cpio specs): @origin and @line name the line at fault, @fmt says what.
 */
void bci_message_at(char *err, size_t err_size, const char *origin, unsigned int line,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void bci_vmessage_at(char *err, size_t err_size, const char *origin, unsigned int line,
		     const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/*
 * @len bytes of @text as they can be quoted in a one-line message: printable
 * ASCII as is, a backslash doubled, every other byte (NUL, newline, control,
 * non-ASCII) as backslash, x and two hex digits; when that does not fit in
 * @size bytes, as much as fits followed by "...". Always NUL-terminated (@size > 0); returns @buf.
 */
char *bci_quote(char *buf, size_t size, const char *text, size_t len);

/*
 * strerror(@errnum), but never the C library's "no text" for an error it does
 * not know: musl has none for EUCLEAN (a damaged file system) and a few
 * others Linux returns, and says "No error information", losing the errno.
 * Those are named here ("Structure needs cleaning (EUCLEAN)"), any other
 * unknown one by its number ("unknown error (errno 200)"). The text is the
 * calling thread's until its next call.
 */
const char *bci_strerror(int errnum);

#endif
