// SPDX-License-Identifier: MIT
/* Console messages for people, and the root prefix every path goes through. */
#include "executor.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int bci_path(const struct bci_executor *ex, char *buf, const char *fmt, ...)
{
	int n = snprintf(buf, PATH_MAX, "%s", ex->root);
	va_list ap;
	int m;

	if (n < 0 || n >= PATH_MAX)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, (size_t)(PATH_MAX - n), fmt, ap);
	va_end(ap);
	if (m < 0 || m >= PATH_MAX - n)
		return -ENAMETOOLONG;
	return 0;
}

/* Seconds since boot, as the kernel's own console lines show them. */
static void say(const char *level, const char *fmt, va_list ap)
{
	struct timespec now;

	clock_gettime(CLOCK_BOOTTIME, &now);
	fprintf(stderr, "[%5ld.%03ld] bootci: %s", (long)now.tv_sec, now.tv_nsec / 1000000, level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fflush(stderr);
}

void bci_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

void bci_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("warning: ", fmt, ap);
	va_end(ap);
}

void bci_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("error: ", fmt, ap);
	va_end(ap);
}
