/* SPDX-License-Identifier: MIT */
/*
 * The root prefix every path of the running system goes through (/proc, /sys,
 * /dev, the results mount), as util-linux's lib/path.c: the same program runs
 * on the real machine (root "") and, unprivileged, on a fake tree in tests
 * (`--root DIR`). Paths are built into PATH_MAX buffers; a path that would not
 * fit is -ENAMETOOLONG, never a truncated path.
 */
#ifndef BCI_PATH_H
#define BCI_PATH_H

#include <stdarg.h>

/* Writes @root + the formatted path into @buf (PATH_MAX); 0 or -ENAMETOOLONG. */
int bci_path(const char *root, char *buf, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int bci_vpath(char *buf, const char *root, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
