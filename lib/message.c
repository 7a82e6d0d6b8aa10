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
