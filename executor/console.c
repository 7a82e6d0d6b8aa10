// SPDX-License-Identifier: MIT
/* Console messages for people. */
#include "executor.h"
#include "progress_marker.h"

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
 * the offset of the kernel's clock (printk_clock.c), measured by bci_kmsg_mark() on each
 * marker it writes (the record read back carries the kernel's stamp); after a suspend
 * (CLOCK_BOOTTIME moved away from CLOCK_MONOTONIC) the next line first writes a marker to
 * measure it again.
 */
static const struct bci_executor *console_ex;
static unsigned console_tries;		/* first measures, before /dev/kmsg may exist */

/* Now on the kernel's printk clock (CLOCK_MONOTONIC until the first marker measured it). */
static long long console_now_ns(void)
{
	long long mono = bci_printk_clock_read(CLOCK_MONOTONIC);
	long long asleep = bci_printk_clock_read(CLOCK_BOOTTIME) - mono;
	long long offset, measured_asleep;
	bool measured = bci_printk_clock_offset(&offset, &measured_asleep);

	/* The first lines: measured as soon as /dev/kmsg is there (a few lines at most). */
	if (!measured && console_ex && console_tries < 8) {
		console_tries++;
		bci_kmsg_mark(console_ex, 6, "console lines are stamped on this log's clock\n");
		mono = bci_printk_clock_read(CLOCK_MONOTONIC);
		asleep = bci_printk_clock_read(CLOCK_BOOTTIME) - mono;
		measured = bci_printk_clock_offset(&offset, &measured_asleep);
	}
	/* Asleep since the last measure (more than a millisecond apart): measure again. */
	if (measured && console_ex && llabs(asleep - measured_asleep) > 1000000) {
		bci_printk_clock_forget();
		bci_kmsg_mark(console_ex, 6, "back from suspend: %lld.%03lld s asleep\n",
			      (asleep - measured_asleep) / 1000000000LL,
			      (asleep - measured_asleep) / 1000000LL % 1000);
		/* The marker failed to measure: keep the old offset, do not try on every line. */
		if (!bci_printk_clock_offset(&offset, &measured_asleep))
			bci_printk_clock_measured(mono + offset, mono);
		mono = bci_printk_clock_read(CLOCK_MONOTONIC);
	}
	return mono + offset;
}

void bci_console_attach(const struct bci_executor *ex)
{
	char path[PATH_MAX];
	int fd;

	bci_printk_clock_attach(ex->sys);
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
	fprintf(stderr, "[%5lld.%06lld] " BCI_PROGRESS_CONSOLE_PREFIX "%s", now / 1000000000LL,
		now / 1000 % 1000000, level);
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

/* The last error said, for the boot fault note (boot.c). */
static char last_error[256];

void bci_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	say("error: ", fmt, ap);
	va_end(ap);
}

const char *bci_console_last_error(void)
{
	return last_error;
}
