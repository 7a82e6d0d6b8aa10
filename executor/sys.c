// SPDX-License-Identifier: MIT
/*
 * The seam (struct bci_sys in executor.h): the real system calls for PID 1,
 * and the table for `--root` runs on a fake tree, which says what it would
 * mount, load or reboot and plays the kernel's part where a tree of plain
 * files cannot (the /dev/kmsg record format).
 */
#include "executor.h"

#include "fsutil.h"
#include "kmsg_record.h"

#include <errno.h>
#include <libkmod.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <unistd.h>

long bci_clock_ms(const struct bci_executor *ex, clockid_t clock)
{
	struct timespec ts = { 0, 0 };

	ex->sys->clock(clock, &ts);
	return (long)ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* ---- shared by both tables ---- */

static int real_clock(clockid_t clock, struct timespec *ts)
{
	return clock_gettime(clock, ts) < 0 ? -errno : 0;
}

static int real_rtc_read_time(int fd, struct rtc_time *time)
{
	return ioctl(fd, RTC_RD_TIME, time) < 0 ? -errno : 0;
}

static int real_rtc_read_alarm(int fd, struct rtc_wkalrm *alarm)
{
	return ioctl(fd, RTC_WKALM_RD, alarm) < 0 ? -errno : 0;
}

static int real_rtc_set_alarm(int fd, const struct rtc_wkalrm *alarm)
{
	return ioctl(fd, RTC_WKALM_SET, alarm) < 0 ? -errno : 0;
}

static int real_suspend_enter(int fd, const char *state)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "%s\n", state);

	/* One write: sysfs takes the state from the first write, and it blocks across the sleep. */
	for (;;) {
		ssize_t written = write(fd, text, (size_t)n);
		if (written < 0 && errno == EINTR)
			continue;
		if (written < 0)
			return -errno;
		return written == n ? 0 : -EIO;
	}
}

/* ---- the real system calls ---- */

static int real_mount(const char *source, const char *target, const char *fstype,
		      unsigned long flags, const char *data)
{
	return mount(source, target, fstype, flags, data) < 0 ? -errno : 0;
}

static int real_umount(const char *target)
{
	if (umount2(target, 0) == 0)
		return 0;
	/* Something still holds it (a test's leftover process): detach, data is synced. */
	return umount2(target, MNT_DETACH) < 0 ? -errno : 0;
}

static int real_probe_module(struct kmod_module *module, const char *options)
{
	int ret = kmod_module_probe_insert_module(module, 0, options, NULL, NULL, NULL);

	/* > 0 means blacklisted or otherwise skipped by configuration: not an error. */
	return ret > 0 ? 0 : ret;
}

static int real_reboot(int how)
{
	return reboot(how) < 0 ? -errno : 0;
}

/* /dev/kmsg hands out exactly one record per read. */
static long real_kmsg_read(int fd, char *record, size_t size)
{
	for (;;) {
		ssize_t n = read(fd, record, size);
		if (n >= 0)
			return (long)n;
		/* EPIPE: records were overwritten before we read them; go on from the oldest. */
		if (errno != EINTR && errno != EPIPE)
			return -errno;
	}
}

/* The kernel takes "<level>text" and adds the record's header itself. */
static int real_kmsg_write(int fd, int level, const char *text, size_t len)
{
	char record[1024];
	int n = snprintf(record, sizeof(record), "<%d>%.*s", level, (int)len, text);

	if (n >= (int)sizeof(record))
		n = (int)sizeof(record) - 1;
	return write(fd, record, (size_t)n) < 0 ? -errno : 0;
}

int bci_sys_barrier(int fd, bool whole_fs)
{
	return (whole_fs ? syncfs(fd) : fdatasync(fd)) < 0 ? -errno : 0;
}

const struct bci_sys bci_sys_real = {
	.name = "real",
	.mount = real_mount,
	.umount = real_umount,
	.probe_module = real_probe_module,
	.reboot = real_reboot,
	.sync = sync,
	.barrier = bci_sys_barrier,
	.clock = real_clock,
	.kmsg_read = real_kmsg_read,
	.kmsg_write = real_kmsg_write,
	.rtc_read_time = real_rtc_read_time,
	.rtc_read_alarm = real_rtc_read_alarm,
	.rtc_set_alarm = real_rtc_set_alarm,
	.suspend_enter = real_suspend_enter,
};

/* ---- a fake tree ---- */

static int dry_mount(const char *source, const char *target, const char *fstype,
		     unsigned long flags, const char *data)
{
	printf("dry-run: mount -t %s %s %s (flags %#lx%s%s)\n", fstype, source, target, flags,
	       data ? ", " : "", data ? data : "");
	return 0;
}

static int dry_umount(const char *target)
{
	printf("dry-run: umount %s\n", target);
	return 0;
}

static void dry_print_action(struct kmod_module *module, bool install, const char *options)
{
	(void)options;
	printf("dry-run: %s %s\n", install ? "install command for" : "insmod",
	       kmod_module_get_path(module) ? kmod_module_get_path(module)
					    : kmod_module_get_name(module));
}

static int dry_probe_module(struct kmod_module *module, const char *options)
{
	int ret = kmod_module_probe_insert_module(module, KMOD_PROBE_DRY_RUN, options, NULL, NULL,
						  dry_print_action);
	return ret > 0 ? 0 : ret;
}

static int dry_reboot(int how)
{
	printf("dry-run: %s\n", how == RB_POWER_OFF ? "power off" : "reboot");
	return 0;
}

static void dry_sync(void)
{
}

/*
 * A fake tree's /dev/kmsg is a file of records one a line: a read takes one
 * line (a last line without its newline too), as the kernel hands out one
 * record per read; -EAGAIN at the end, as the kernel says when it has no more.
 */
static long dry_kmsg_read(int fd, char *record, size_t size)
{
	off_t at = lseek(fd, 0, SEEK_CUR);
	ssize_t n = read(fd, record, size);
	char *nl;

	if (n < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if (n == 0)
		return -EAGAIN;
	nl = memchr(record, '\n', (size_t)n);
	if (nl && nl + 1 < record + n) {
		n = nl + 1 - record;
		if (lseek(fd, at + n, SEEK_SET) < 0)
			return -errno;
	}
	return (long)n;
}

/* The record as the kernel shows it when read back: facility user, as for any write. */
static int dry_kmsg_write(int fd, int level, const char *text, size_t len)
{
	struct timespec now;
	char copy[1024], record[1100];
	int n;

	clock_gettime(CLOCK_MONOTONIC, &now);
	snprintf(copy, sizeof(copy), "%.*s", (int)len, text);
	n = bci_kmsg_record_format(record, sizeof(record), 8 + (unsigned)level, 0,
				   (unsigned long long)now.tv_sec * 1000000 + now.tv_nsec / 1000,
				   '-', copy);
	if (n >= (int)sizeof(record))
		n = (int)sizeof(record) - 1;
	return bci_write_all(fd, record, (size_t)n);
}

const struct bci_sys bci_sys_dry = {
	.name = "dry-run",
	.mount = dry_mount,
	.umount = dry_umount,
	.probe_module = dry_probe_module,
	.reboot = dry_reboot,
	.sync = dry_sync,
	/* The fake tree's files are real files: their barriers are real too. */
	.barrier = bci_sys_barrier,
	.clock = real_clock,
	.kmsg_read = dry_kmsg_read,
	.kmsg_write = dry_kmsg_write,
	/* The ioctls fail on a plain file (ENOTTY): the cycle falls back to sysfs wakealarm. */
	.rtc_read_time = real_rtc_read_time,
	.rtc_read_alarm = real_rtc_read_alarm,
	.rtc_set_alarm = real_rtc_set_alarm,
	/* Writing the state to a plain file returns at once: a sleep of no time. */
	.suspend_enter = real_suspend_enter,
};
