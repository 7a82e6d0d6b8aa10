// SPDX-License-Identifier: MIT
/*
 * /dev/kmsg: the kernel log as records ("<prio>,<seq>,<usec>,<flags>;text\n"),
 * captured per job exactly as igt_runner stores them in dmesg.txt, and the
 * executor's own markers written into it so that a dump (pstore, console)
 * shows what bootci was doing when the kernel died.
 */
#include "executor.h"

#include "fsutil.h"
#include "kmsg_record.h"
#include "progress_marker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int bci_kmsg_open(const struct bci_executor *ex)
{
	char path[PATH_MAX];
	int fd;

	if (bci_path(ex->root, path, "/dev/kmsg") < 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Only what the job makes the kernel say belongs to the job. */
	lseek(fd, 0, SEEK_END);
	return fd;
}

/* The level (0-7) of a record, or 0 (the most severe: kept) when it does not parse. */
static int record_level(const char *record, size_t len)
{
	struct bci_kmsg_record rec;

	return bci_kmsg_record_parse(record, len, &rec) ? bci_kmsg_record_level(&rec) : 0;
}

long bci_kmsg_drain(const struct bci_executor *ex, int kmsg_fd, int out_fd,
		    struct bci_kmsg_budget *budget)
{
	char record[8192];
	long written = 0;

	if (kmsg_fd < 0)
		return 0;
	for (;;) {
		long n = ex->sys->kmsg_read(kmsg_fd, record, sizeof(record));
		if (n == -EAGAIN || n == 0)
			return written;
		if (n < 0)
			return n;
		/* Past the budget only records severe enough to judge the job are kept. */
		if (budget && budget->written + (unsigned long long)n > budget->limit &&
		    record_level(record, (size_t)n) > budget->keep_level) {
			budget->dropped += (unsigned long long)n;
			continue;
		}
		int ret = bci_write_all(out_fd, record, (size_t)n);
		if (ret < 0)
			return ret;	/* the caller tells a full dmesg.txt by its errno */
		if (budget)
			budget->written += (unsigned long long)n;
		written += n;
	}
}

/*
 * The marker's own record, read back from @reader (opened at the end of the log before the
 * write): its stamp is the kernel's clock at the write, the console's measure of it
 * (printk_clock.c).
 * A few records logged by others in between are skipped.
 */
static void clock_from_marker(const struct bci_executor *ex, int reader, const char *text,
			      size_t len, long long monotonic_ns)
{
	char record[1200];
	struct bci_kmsg_record rec;

	for (int i = 0; i < 8; i++) {
		long n = ex->sys->kmsg_read(reader, record, sizeof(record) - 1);
		if (n <= 0)
			return;
		record[n] = '\0';
		if (bci_kmsg_record_parse(record, (size_t)n, &rec) && rec.text_len >= len - 1 &&
		    memcmp(rec.text, text, len - 1) == 0) {
			bci_printk_clock_measured((long long)rec.usec * 1000, monotonic_ns);
			return;
		}
	}
}

void bci_kmsg_mark(const struct bci_executor *ex, int level, const char *fmt, ...)
{
	char path[PATH_MAX], text[1024];
	long long monotonic_ns;
	va_list ap;
	int fd, reader, n;

	if (bci_path(ex->root, path, "/dev/kmsg") < 0)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	n = snprintf(text, sizeof(text), BCI_PROGRESS_KMSG_PREFIX);
	va_start(ap, fmt);
	n += vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(text))
		n = (int)sizeof(text) - 1;
	reader = bci_kmsg_open(ex);
	monotonic_ns = bci_printk_clock_read(CLOCK_MONOTONIC);
	/* The log is best effort: nothing to do about a full or missing kmsg. */
	if (ex->sys->kmsg_write(fd, level, text, (size_t)n) >= 0 && reader >= 0 && n > 1)
		clock_from_marker(ex, reader, text, (size_t)n, monotonic_ns);
	if (reader >= 0)
		close(reader);
	close(fd);
}

void bci_sysrq(const struct bci_executor *ex, char command)
{
	char path[PATH_MAX];
	int fd;

	if (bci_path(ex->root, path, "/proc/sysrq-trigger") < 0)
		return;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, &command, 1) < 0) {
		/* sysrq may be disabled: the dump is a courtesy. */
	}
	close(fd);
}
