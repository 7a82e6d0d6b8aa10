/* SPDX-License-Identifier: MIT */
/*
 * One-line error messages for the caller: library parsers do not print, they
 * fill a caller's buffer ("file:line: what") that only a main() shows.
 */
#ifndef BCI_MESSAGE_H
#define BCI_MESSAGE_H

#include <stddef.h>

/* Formats into @err (@err_size bytes, truncated); a NULL or empty buffer is ignored. */
void bci_message(char *err, size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
