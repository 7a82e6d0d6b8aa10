// SPDX-License-Identifier: MIT
/* Console messages for people. */
#include "executor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * The console is the process's (stderr): its clock is the table of the executor it serves.
 *
 * Its timestamps are the kernel's printk clock, so that bootci's lines sort among the
 * kernel's own in a serial log. On x86 printk stamps records with local_clock(), the TSC
 * based sched_clock: it counts from the kernel's start and stands still during suspend, as
 * CLOCK_MONOTONIC does, but the two start apart and drift apart (NTP slews only the
 * latter; a suspend stops them at different points). CLOCK_BOOTTIME runs on through
 * suspend: after one cycle it is seconds ahead. So a line is stamped CLOCK_MONOTONIC plus
 * the offset of the kernel's clock, measured by bci_kmsg_mark() on each marker it writes
 * (the record read back carries the kernel's stamp); after a suspend (CLOCK_BOOTTIME moved
 * away from CLOCK_MONOTONIC) the next line first writes a marker to measure it again.
 */
static const struct bci_sys *console_sys = &bci_sys_real;
static const struct bci_executor *console_ex;
static struct {
	bool synced;
	unsigned tries;			/* first measures, before /dev/kmsg may exist */
	long long offset_ns;		/* printk clock - CLOCK_MONOTONIC */
	long long asleep_ns;		/* CLOCK_BOOTTIME - CLOCK_MONOTONIC when measured */
} console_clock;

static long long clock_ns(clockid_t clock)
{
	struct timespec ts = { 0, 0 };

	console_sys->clock(clock, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long long bci_console_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

void bci_console_clock_sync(long long kernel_ns, long long monotonic_ns)
{
	console_clock.offset_ns = kernel_ns - monotonic_ns;
	console_clock.asleep_ns = clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC);
	console_clock.synced = true;
}

/* Now on the kernel's printk clock (CLOCK_MONOTONIC until the first marker measured it). */
static long long console_now_ns(void)
{
	long long mono = clock_ns(CLOCK_MONOTONIC);
	long long asleep = clock_ns(CLOCK_BOOTTIME) - mono;

	/* The first lines: measured as soon as /dev/kmsg is there (a few lines at most). */
	if (!console_clock.synced && console_ex && console_clock.tries < 8) {
		console_clock.tries++;
		bci_kmsg_mark(console_ex, 6, "console lines are stamped on this log's clock\n");
		mono = clock_ns(CLOCK_MONOTONIC);
		asleep = clock_ns(CLOCK_BOOTTIME) - mono;
	}
	/* Asleep since the last measure (more than a millisecond apart): measure again. */
	if (console_clock.synced && console_ex && llabs(asleep - console_clock.asleep_ns) > 1000000) {
		console_clock.synced = false;
		bci_kmsg_mark(console_ex, 6, "back from suspend: %lld.%03lld s asleep\n",
			      (asleep - console_clock.asleep_ns) / 1000000000LL,
			      (asleep - console_clock.asleep_ns) / 1000000LL % 1000);
		/* The marker failed to measure: keep the old offset, do not try on every line. */
		if (!console_clock.synced)
			bci_console_clock_sync(mono + console_clock.offset_ns, mono);
		mono = clock_ns(CLOCK_MONOTONIC);
	}
	return mono + console_clock.offset_ns;
}

void bci_console_attach(const struct bci_executor *ex)
{
	char path[PATH_MAX];
	int fd;

	console_sys = ex->sys;
	console_ex = ex;
	/* Under PID 1 without /dev/console in the image, fds 0-2 are closed until /dev exists. */
	if (fcntl(2, F_GETFD) >= 0 || bci_path(ex->root, path, "/dev/console") < 0)
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

/* `[   12.345678] bootci: ...`: the kernel's clock and format, microseconds included. */
static void say(const char *level, const char *fmt, va_list ap)
{
	long long now = console_now_ns();

	if (now < 0)
		now = 0;
	fprintf(stderr, "[%5lld.%06lld] bootci: %s", now / 1000000000LL, now / 1000 % 1000000, level);
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
