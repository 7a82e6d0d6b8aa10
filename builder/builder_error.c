// SPDX-License-Identifier: MIT
#include "builder_error.h"

#include <stdarg.h>
#include <stdio.h>

void builder_error_set(struct builder_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}
