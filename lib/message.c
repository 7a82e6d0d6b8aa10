// SPDX-License-Identifier: MIT
#include "message.h"

#include <stdarg.h>
#include <stdio.h>

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
