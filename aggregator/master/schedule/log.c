// SPDX-License-Identifier: MIT
/* The scheduler's log (internal.h): one line per decision, "schedule: ...". */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

void bci_schedule_say(struct bci_schedule *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->log)
		return;
	va_start(ap, fmt);
	fprintf(s->log, "schedule: ");
	vfprintf(s->log, fmt, ap);
	fputc('\n', s->log);
	fflush(s->log);
	va_end(ap);
}
