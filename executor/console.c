// SPDX-License-Identifier: MIT
/* Console messages for people, and the root prefix every path goes through. */
#include "executor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* The console is the process's (stderr): its clock is the table of the executor it serves. */
static const struct bci_sys *console_sys = &bci_sys_real;

void bci_console_attach(const struct bci_executor *ex)
{
	char path[PATH_MAX];
	int fd;

	console_sys = ex->sys;
	/* Under PID 1 without /dev/console in the image, fds 0-2 are closed until /dev exists. */
	if (fcntl(2, F_GETFD) >= 0 || bci_path(ex, path, "/dev/console") < 0)
		return;
	fd = open(path, O_RDWR | O_NOCTTY);
	if (fd < 0)
		return;
	for (int i = 0; i < 3; i++)
		if (fd != i)
			dup2(fd, i);
	if (fd > 2)
		close(fd);
}

int bci_vpath(char *buf, const char *prefix, const char *fmt, va_list ap)
{
	int n = snprintf(buf, PATH_MAX, "%s", prefix), m;

	if (n < 0 || n >= PATH_MAX)
		return -ENAMETOOLONG;
	m = vsnprintf(buf + n, (size_t)(PATH_MAX - n), fmt, ap);
	return m < 0 || m >= PATH_MAX - n ? -ENAMETOOLONG : 0;
}

int bci_path(const struct bci_executor *ex, char *buf, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = bci_vpath(buf, ex->root, fmt, ap);
	va_end(ap);
	return ret;
}

/* Seconds since boot, as the kernel's own console lines show them. */
static void say(const char *level, const char *fmt, va_list ap)
{
	struct timespec now = { 0, 0 };

	console_sys->clock(CLOCK_BOOTTIME, &now);
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
