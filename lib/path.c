// SPDX-License-Identifier: MIT
/* The root prefix (path.h). */
#include "path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

int bci_vpath(char *buf, const char *root, const char *fmt, va_list ap)
{
	int n = snprintf(buf, PATH_MAX, "%s", root), m;

	if (n < 0 || n >= PATH_MAX)
		return -ENAMETOOLONG;
	m = vsnprintf(buf + n, (size_t)(PATH_MAX - n), fmt, ap);
	return m < 0 || m >= PATH_MAX - n ? -ENAMETOOLONG : 0;
}

int bci_path(const char *root, char *buf, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = bci_vpath(buf, root, fmt, ap);
	va_end(ap);
	return ret;
}
