// SPDX-License-Identifier: MIT
/*
 * Suspend cycles on a fake tree: /sys/power, /sys/class/rtc/rtc0 and /dev
 * entries are plain files, and what a fake tree cannot do (RTC ioctls, the
 * clocks, a write that sleeps) goes through a copy of the fake tree's system
 * table (bci_sys_dry) whose "kernel" logs, counts and lets time pass as the
 * real one would. The fake tree's own table runs too: its RTC ioctls fail on
 * a plain file, so it shows the sysfs wakealarm fallback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "executor.h"
#include "fakeroot.h"
#include "fsutil.h"
#include "resultgen/resultgen.h"
#include "executor_keys.h"
#include "suspend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the fake kernel ---- */

static struct {
	int rtc_read_error, set_error, enter_error;
	bool count_fail;               /* the kernel counts a failure (with or without an error) */
	const char *kmsg;              /* records the kernel logs during the sleep */
	double sleep, latency;         /* seconds asleep, seconds suspending + resuming */
	double boottime, monotonic;
	struct rtc_time rtc_now;
	struct rtc_wkalrm alarm;
	int alarm_sets;
	/* what the tree looked like when the state was written */
	char state[32], wakealarm[32], pm_test[64], mem_sleep[64], watchdog[8], wakeup[32];
	int enters;
} fake;

static struct fakeroot *tree;

static int fake_rtc_read_time(int fd, struct rtc_time *time)
{
	(void)fd;
	if (fake.rtc_read_error)
		return fake.rtc_read_error;
	*time = fake.rtc_now;
	return 0;
}

static int fake_rtc_read_alarm(int fd, struct rtc_wkalrm *alarm)
{
	(void)fd;
	*alarm = fake.alarm;
	return 0;
}

static int fake_rtc_set_alarm(int fd, const struct rtc_wkalrm *alarm)
{
	(void)fd;
	if (fake.set_error)
		return fake.set_error;
	fake.alarm = *alarm;
	fake.alarm_sets++;
	return 0;
}

static int fake_clock(clockid_t clock, struct timespec *ts)
{
	double t = clock == CLOCK_BOOTTIME ? fake.boottime : fake.monotonic;

	ts->tv_sec = (time_t)t;
	ts->tv_nsec = (long)((t - (double)ts->tv_sec) * 1e9 + 0.5);
	return 0;
}

static void snapshot(const char *path, char *buf, size_t size)
{
	const char *text = fakeroot_read(tree, path);

	snprintf(buf, size, "%s", text ? text : "(none)");
}

static void bump(const char *name)
{
	char path[128], text[32];
	const char *old;

	snprintf(path, sizeof(path), "/sys/power/suspend_stats/%s", name);
	old = fakeroot_read(tree, path);
	snprintf(text, sizeof(text), "%ld\n", (old ? atol(old) : 0) + 1);
	fakeroot_write(tree, path, text);
}

static int fake_enter(int fd, const char *state)
{
	char path[PATH_MAX + 32];
	int kmsg;

	assert_int_equal(bci_write_all(fd, state, strlen(state)), 0);
	assert_int_equal(bci_write_all(fd, "\n", 1), 0);
	fake.enters++;
	snapshot("/sys/power/state", fake.state, sizeof(fake.state));
	/* A real /sys/power/state still lists the states after a write. */
	fakeroot_write(tree, "/sys/power/state", "freeze mem disk\n");
	snapshot("/sys/class/rtc/rtc0/wakealarm", fake.wakealarm, sizeof(fake.wakealarm));
	snapshot("/sys/power/pm_test", fake.pm_test, sizeof(fake.pm_test));
	snapshot("/sys/power/mem_sleep", fake.mem_sleep, sizeof(fake.mem_sleep));
	snapshot("/dev/watchdog0", fake.watchdog, sizeof(fake.watchdog));
	snapshot("/sys/class/rtc/rtc0/device/power/wakeup", fake.wakeup, sizeof(fake.wakeup));
	if (fake.kmsg) {
		snprintf(path, sizeof(path), "%s/dev/kmsg", tree->dir);
		kmsg = open(path, O_WRONLY | O_APPEND);
		assert_true(kmsg >= 0);
		assert_int_equal(bci_write_all(kmsg, fake.kmsg, strlen(fake.kmsg)), 0);
		close(kmsg);
	}
	fake.monotonic += fake.latency;
	fake.boottime += fake.latency + fake.sleep;
	if (fake.count_fail || fake.enter_error) {
		bump("fail");
		fakeroot_write(tree, "/sys/power/suspend_stats/last_failed_dev", "0000:00:02.0\n");
		fakeroot_write(tree, "/sys/power/suspend_stats/last_failed_errno", "-16\n");
		fakeroot_write(tree, "/sys/power/suspend_stats/last_failed_step", "suspend\n");
	} else {
		bump("success");
	}
	return fake.enter_error;
}

/* The fake tree's table (bci_sys_dry) with the fake kernel's RTC, clocks and sleep. */
static struct bci_sys fake_sys;

static void fake_sys_init(void)
{
	fake_sys = bci_sys_dry;
	fake_sys.name = "fake kernel";
	fake_sys.rtc_read_time = fake_rtc_read_time;
	fake_sys.rtc_read_alarm = fake_rtc_read_alarm;
	fake_sys.rtc_set_alarm = fake_rtc_set_alarm;
	fake_sys.clock = fake_clock;
	fake_sys.suspend_enter = fake_enter;
}

/* ---- fixture ---- */

struct fixture {
	struct fakeroot root;
	struct bci_executor ex;
	int out, err, dmesg;
	struct bci_suspend_record rec;
};

static int open_file(struct fixture *f, const char *name)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->root.dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	return fd;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f)
		return -1;
	fakeroot_create(&f->root, "");
	tree = &f->root;
	fakeroot_write(&f->root, "/sys/power/state", "freeze mem disk\n");
	fakeroot_write(&f->root, "/sys/power/mem_sleep", "s2idle [deep]\n");
	fakeroot_write(&f->root, "/sys/power/pm_test",
		       "[none] core processors platform devices freezer\n");
	fakeroot_write(&f->root, "/sys/power/suspend_stats/success", "3\n");
	fakeroot_write(&f->root, "/sys/power/suspend_stats/fail", "0\n");
	fakeroot_write(&f->root, "/sys/power/suspend_stats/failed_suspend", "0\n");
	fakeroot_write(&f->root, "/sys/power/suspend_stats/last_failed_dev", "\n");
	fakeroot_write(&f->root, "/sys/power/suspend_stats/last_failed_errno", "0\n");
	fakeroot_write(&f->root, "/sys/power/suspend_stats/last_failed_step", "\n");
	fakeroot_write(&f->root, "/sys/class/rtc/rtc0/device/power/wakeup", "disabled\n");
	fakeroot_write(&f->root, "/sys/class/rtc/rtc0/wakealarm", "");
	fakeroot_write(&f->root, "/dev/rtc0", "");
	fakeroot_write(&f->root, "/dev/kmsg", "6,1,50000000,-;before the cycle\n");
	fakeroot_write(&f->root, "/results/runs/t/0/.keep", "");

	f->ex.root = f->root.dir;
	f->ex.sys = &bci_sys_dry;
	fake_sys_init();
	f->ex.signal_fd = -1;
	f->ex.watchdog_fd = -1;
	snprintf(f->ex.release, sizeof(f->ex.release), "6.1.0-test");
	snprintf(f->ex.run_dir, sizeof(f->ex.run_dir), "%.*s/results/runs/t", PATH_MAX - 32,
		 f->root.dir);
	assert_int_equal(bci_config_new(bci_executor_keys, &f->ex.config), 0);
	assert_int_equal(bci_config_set(f->ex.config, "watchdog_timeout", "off", "test", err,
					sizeof(err)), 0);
	f->out = open_file(f, "results/runs/t/0/out.txt");
	f->err = open_file(f, "results/runs/t/0/err.txt");
	f->dmesg = open_file(f, "results/runs/t/0/dmesg.txt");

	memset(&fake, 0, sizeof(fake));
	fake.sleep = 5.0;
	fake.latency = 1.25;
	fake.boottime = 1000.0;
	fake.monotonic = 900.0;
	/* A minute before the new year: the alarm has to roll every field over. */
	fake.rtc_now = (struct rtc_time){ .tm_sec = 58, .tm_min = 59, .tm_hour = 23,
					  .tm_mday = 31, .tm_mon = 11, .tm_year = 124 };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->ex.watchdog_fd >= 0)
		close(f->ex.watchdog_fd);
	close(f->out);
	close(f->err);
	close(f->dmesg);
	bci_config_free(f->ex.config);
	fakeroot_remove(&f->root);
	free(f);
	return 0;
}

static void set(struct fixture *f, const char *key, const char *value)
{
	char err[256];

	if (bci_config_set(f->ex.config, key, value, "test", err, sizeof(err)) < 0)
		fail_msg("%s", err);
}

static const char *file(struct fixture *f, const char *name)
{
	char path[PATH_MAX];
	static char copy[16384];
	const char *text;

	snprintf(path, sizeof(path), "/results/runs/t/%s", name);
	text = fakeroot_read(&f->root, path);
	snprintf(copy, sizeof(copy), "%s", text ? text : "");
	return copy;
}

static int cycle(struct fixture *f, const char *name)
{
	const struct bci_sys *dry = f->ex.sys;
	int ret;

	f->ex.sys = &fake_sys;
	ret = bci_suspend_cycle(&f->ex, name, f->out, f->err, f->dmesg, &f->rec);
	f->ex.sys = dry;
	return ret;
}

/* A full partition during a cycle (issue 10 defect 3): the first failed write is kept for the job. */
static void a_failed_output_write_is_kept(void **state)
{
	struct fixture *f = *state;
	int full = open("/dev/full", O_WRONLY | O_CLOEXEC), saved = f->out;

	assert_true(full >= 0);
	f->out = full;
	fake.kmsg = "6,10,100000000,-;PM: suspend entry (deep)\n6,14,101100000,-;PM: suspend exit\n";
	cycle(f, "mem-0007");
	f->out = saved;
	close(full);
	assert_int_equal(f->rec.output_fd, full);
	assert_int_equal(f->rec.output_error, -ENOSPC);
}

/* ---- tests ---- */

static void mem_cycle_passes_and_measures(void **state)
{
	struct fixture *f = *state;
	const char *out, *line;

	fake.kmsg = "6,10,100000000,-;PM: suspend entry (deep)\n"
		    "6,11,100100000,-;Filesystems sync: 0.001 seconds\n"
		    "6,12,100400000,-;ACPI: PM: Low-level resume complete\n"
		    " SUBSYSTEM=acpi\n"
		    "6,13,100900000,-;Enabling non-boot CPUs ...\n"
		    "6,14,101100000,-;PM: suspend exit\n";
	assert_int_equal(cycle(f, "mem-0007"), 0);

	/* what the kernel saw when the state was written */
	assert_int_equal(fake.enters, 1);
	assert_string_equal(fake.state, "mem\n");
	assert_string_equal(fake.mem_sleep, "deep");
	/* already none: left alone */
	assert_string_equal(fake.pm_test, "[none] core processors platform devices freezer\n");
	assert_string_equal(fake.wakeup, "enabled");
	/* the alarm: 5 s after 2024-12-31 23:59:58 in the RTC's time, then disarmed */
	assert_int_equal(fake.alarm_sets, 2);
	assert_int_equal(fake.alarm.time.tm_year, 125);
	assert_int_equal(fake.alarm.time.tm_mon, 0);
	assert_int_equal(fake.alarm.time.tm_mday, 1);
	assert_int_equal(fake.alarm.time.tm_hour, 0);
	assert_int_equal(fake.alarm.time.tm_min, 0);
	assert_int_equal(fake.alarm.time.tm_sec, 3);
	assert_int_equal(fake.alarm.enabled, 0);

	/* the measurements */
	assert_string_equal(f->rec.result, "pass");
	assert_string_equal(f->rec.wake, "RTC_WKALM_SET");
	assert_true(f->rec.suspended > 4.999 && f->rec.suspended < 5.001);
	assert_true(f->rec.write > 6.249 && f->rec.write < 6.251);
	assert_true(f->rec.latency > 1.249 && f->rec.latency < 1.251);
	assert_true(f->rec.kernel_suspend > 0.399 && f->rec.kernel_suspend < 0.401);
	assert_true(f->rec.kernel_resume > 0.699 && f->rec.kernel_resume < 0.701);
	assert_int_equal(f->rec.before.success, 3);
	assert_int_equal(f->rec.after.success, 4);

	/* the IGT protocol, as a test binary prints it */
	out = file(f, "0/out.txt");
	assert_non_null(strstr(out, "IGT-Version: bootci-suspend ("));
	assert_non_null(strstr(out, "(Linux: 6.1.0-test "));
	assert_non_null(strstr(out, "\nStarting subtest: mem-0007\n"));
	assert_non_null(strstr(out, "bootci-suspend: mem (mem_sleep deep), wake: RTC_WKALM_SET after 5s\n"));
	assert_non_null(strstr(out, "bootci-suspend: write returned after 6.250s: suspended 5.000s, "
				    "suspend+resume 1.250s\n"));
	assert_non_null(strstr(out, "bootci-suspend: kernel log: suspend 0.400s, resume 0.700s\n"));
	assert_non_null(strstr(out, "bootci-suspend: suspend_stats success 3 -> 4, fail 0 -> 0\n"));
	line = strstr(out, "Subtest mem-0007: SUCCESS (6.250s)\n");
	assert_non_null(line);
	assert_int_equal(line[strlen("Subtest mem-0007: SUCCESS (6.250s)\n")], '\0');
	assert_string_equal(file(f, "0/err.txt"), "");
	/* the cycle's kernel log (not what came before it), as igt_runner stores it */
	assert_null(strstr(file(f, "0/dmesg.txt"), "before the cycle"));
	assert_non_null(strstr(file(f, "0/dmesg.txt"), "6,10,100000000,-;PM: suspend entry (deep)\n"));
	assert_non_null(strstr(file(f, "0/dmesg.txt"), " SUBSYSTEM=acpi\n"));
	/* the machine file of cycles */
	assert_string_equal(file(f, "suspend-cycles.txt"),
			    "mem-0007 pass 6.250 5.000 1.250 0.400 0.700 RTC_WKALM_SET\n");
	/* what was changed for the cycle is put back, the alarm cleared */
	assert_string_equal(fakeroot_read(&f->root, "/sys/power/mem_sleep"), "deep");
}

/* On a fake tree the real RTC ioctls fail: the sysfs wakealarm takes over. */
static void real_ops_fall_back_to_wakealarm(void **state)
{
	struct fixture *f = *state;

	set(f, "suspend_wake_after", "7");
	assert_int_equal(bci_suspend_cycle(&f->ex, "freeze-0001", f->out, f->err, f->dmesg,
					   &f->rec), 0);
	assert_string_equal(f->rec.wake, "wakealarm");
	assert_string_equal(fakeroot_read(&f->root, "/sys/power/state"), "freeze\n");
	/* cleared after the cycle */
	assert_string_equal(fakeroot_read(&f->root, "/sys/class/rtc/rtc0/wakealarm"), "0");
	assert_non_null(strstr(file(f, "0/out.txt"), "falling back to sysfs wakealarm"));
	assert_non_null(strstr(file(f, "0/out.txt"), "Subtest freeze-0001: SUCCESS ("));
	/* freeze does not touch mem_sleep */
	assert_string_equal(f->rec.mem_sleep, "");
	assert_string_equal(fakeroot_read(&f->root, "/sys/power/mem_sleep"), "s2idle [deep]\n");
}

static void fallback_with_fake_kernel(void **state)
{
	struct fixture *f = *state;

	fake.rtc_read_error = -ENOTTY;
	assert_int_equal(cycle(f, "mem-0001"), 0);
	assert_string_equal(fake.wakealarm, "+5");
	assert_int_equal(fake.alarm_sets, 0);
	assert_string_equal(fake.state, "mem\n");
}

static void no_way_to_wake_is_a_fail_without_sleeping(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX + 64];

	fake.rtc_read_error = -ENOTTY;
	snprintf(path, sizeof(path), "%s/sys/class/rtc/rtc0/wakealarm", f->root.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(cycle(f, "mem-0002"), 98);
	assert_int_equal(fake.enters, 0);
	assert_string_equal(fakeroot_read(&f->root, "/sys/power/state"), "freeze mem disk\n");
	assert_string_equal(f->rec.result, "fail");
	assert_non_null(strstr(file(f, "0/err.txt"), "cannot arm the wake alarm of rtc0"));
	assert_non_null(strstr(file(f, "0/out.txt"), "Subtest mem-0002: FAIL ("));
	/* nothing was changed for good: mem_sleep back as it was */
	assert_string_equal(fakeroot_read(&f->root, "/sys/power/mem_sleep"), "deep");
}

static void write_error_fails_with_stats(void **state)
{
	struct fixture *f = *state;
	const char *err;

	fake.enter_error = -EBUSY;
	fake.sleep = 0;
	fake.latency = 0.5;
	assert_int_equal(cycle(f, "mem-0003"), 98);
	assert_string_equal(f->rec.result, "fail");
	assert_int_equal(f->rec.error, -EBUSY);
	err = file(f, "0/err.txt");
	assert_non_null(strstr(err, "bootci-suspend: writing mem to /sys/power/state failed: "
				    "Device or resource busy\n"));
	assert_non_null(strstr(err, "suspend_stats fail 0 -> 1, last_failed_dev 0000:00:02.0, "
				    "last_failed_errno -16, last_failed_step suspend\n"));
	assert_non_null(strstr(file(f, "0/out.txt"), "Subtest mem-0003: FAIL (0.500s)\n"));
	assert_int_equal(f->rec.after.last_failed_errno, -16);
	assert_string_equal(f->rec.after.last_failed_step, "suspend");
	assert_string_equal(file(f, "suspend-cycles.txt"),
			    "mem-0003 fail 0.500 0.000 0.500 - - RTC_WKALM_SET\n");
}

/* The write returned 0 but the kernel counted a failure (a device aborted the sleep). */
static void fail_count_growing_fails(void **state)
{
	struct fixture *f = *state;

	fake.count_fail = true;
	assert_int_equal(cycle(f, "mem-0004"), 98);
	assert_string_equal(f->rec.why, "the kernel counted a failed suspend");
	assert_non_null(strstr(file(f, "0/err.txt"), "suspend_stats fail 0 -> 1"));
}

static void not_offered_is_a_skip(void **state)
{
	struct fixture *f = *state;

	fakeroot_write(&f->root, "/sys/power/state", "freeze mem\n");
	assert_int_equal(cycle(f, "disk-0001"), 77);
	assert_string_equal(f->rec.result, "skip");
	assert_non_null(strstr(file(f, "0/out.txt"), "Starting subtest: disk-0001\n"
							     "Test requirement not met: the kernel does not offer disk"));
	assert_non_null(strstr(file(f, "0/out.txt"), "Subtest disk-0001: SKIP (0.000s)\n"));

	set(f, "suspend_mem_sleep", "shallow");
	assert_int_equal(cycle(f, "mem-0001"), 77);
	assert_non_null(strstr(f->rec.why, "shallow in /sys/power/mem_sleep"));

	set(f, "suspend_mem_sleep", "deep");
	fakeroot_write(&f->root, "/sys/power/pm_test", "[none] core\n");
	assert_int_equal(cycle(f, "mem_devices-0001"), 77);
	assert_int_equal(fake.enters, 0);
}

static void pm_test_cycle(void **state)
{
	struct fixture *f = *state;

	fake.sleep = 0;
	fake.latency = 5.9;
	fake.kmsg = "6,10,100000000,-;PM: suspend entry (deep)\n"
		    "6,11,100300000,-;PM: suspend debug: Waiting for 5 second(s).\n"
		    "6,12,105800000,-;PM: suspend exit\n";
	assert_int_equal(cycle(f, "mem_devices-0002"), 0);
	assert_string_equal(fake.pm_test, "devices");
	assert_int_equal(fake.alarm_sets, 0);
	assert_string_equal(f->rec.wake, "pm_test");
	/* the level is not left behind for later sleeps */
	assert_string_equal(fakeroot_read(&f->root, "/sys/power/pm_test"), "none");
	assert_true(f->rec.kernel_suspend > 0.299 && f->rec.kernel_suspend < 0.301);
	assert_true(f->rec.kernel_resume > 0.499 && f->rec.kernel_resume < 0.501);
	assert_true(f->rec.latency > 0.899 && f->rec.latency < 0.901);
	assert_non_null(strstr(file(f, "0/out.txt"),
			       "bootci-suspend: mem (mem_sleep deep), pm_test devices: the kernel comes back by itself\n"));
	assert_non_null(strstr(file(f, "0/out.txt"), "Subtest mem_devices-0002: SUCCESS (5.900s)\n"));

	/* a wait that seems to outlast the whole resume: the split is unknown, not negative */
	fakeroot_write(&f->root, "/sys/power/pm_test",
		       "[none] core processors platform devices freezer\n");
	fake.kmsg = "6,20,200000000,-;PM: suspend entry (deep)\n"
		    "6,21,200300000,-;PM: suspend debug: Waiting for 5 second(s).\n"
		    "6,22,205290000,-;PM: suspend exit\n";
	assert_int_equal(cycle(f, "mem_devices-0003"), 0);
	assert_true(f->rec.kernel_suspend < 0 && f->rec.kernel_resume < 0);
}

/* A level an earlier sleep left behind is reset for a real one. */
static void stale_pm_test_is_reset(void **state)
{
	struct fixture *f = *state;

	fakeroot_write(&f->root, "/sys/power/pm_test", "none core processors platform [devices] freezer\n");
	assert_int_equal(cycle(f, "mem-0001"), 0);
	assert_string_equal(fake.pm_test, "none");
}

/* In s2idle the log's clock runs through the sleep: no split is better than a wrong one. */
static void s2idle_log_clock_gives_no_split(void **state)
{
	struct fixture *f = *state;

	fake.kmsg = "6,10,100000000,-;PM: suspend entry (s2idle)\n"
		    "6,11,106000000,-;PM: resume from suspend-to-idle\n"
		    "6,12,106200000,-;PM: suspend exit\n";
	assert_int_equal(cycle(f, "freeze-0002"), 0);
	assert_true(f->rec.kernel_suspend < 0);
	assert_true(f->rec.kernel_resume < 0);
	assert_non_null(strstr(file(f, "0/out.txt"), "kernel log: no suspend/resume split"));
}

static void open_watchdog(struct fixture *f)
{
	char path[PATH_MAX + 32];

	fakeroot_write(&f->root, "/dev/watchdog0", "");
	snprintf(path, sizeof(path), "%s/dev/watchdog0", f->root.dir);
	f->ex.watchdog_fd = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(f->ex.watchdog_fd >= 0);
	set(f, "watchdog_timeout", "30");
}

/* S3: the platform resets or powers down the watchdog: closed (magic 'V') and re-armed. */
static void watchdog_closed_for_s3(void **state)
{
	struct fixture *f = *state;

	open_watchdog(f);
	assert_int_equal(cycle(f, "mem-0001"), 0);
	assert_string_equal(fake.watchdog, "V");
	assert_true(f->rec.watchdog_closed);
	assert_true(f->ex.watchdog_fd >= 0);
}

/* s2idle stays in S0: the watchdog keeps counting and ends a sleep that never does. */
static void watchdog_kept_for_s2idle(void **state)
{
	struct fixture *f = *state;

	open_watchdog(f);
	assert_int_equal(cycle(f, "freeze-0001"), 0);
	assert_string_equal(fake.watchdog, "");
	assert_false(f->rec.watchdog_closed);

	/* mem with mem_sleep s2idle is s2idle too */
	set(f, "suspend_mem_sleep", "s2idle");
	assert_int_equal(cycle(f, "mem-0002"), 0);
	assert_string_equal(fake.mem_sleep, "s2idle");
	assert_false(f->rec.watchdog_closed);

	/* and the configuration decides when it says so */
	set(f, "suspend_watchdog", "close");
	assert_int_equal(cycle(f, "freeze-0003"), 0);
	assert_true(f->rec.watchdog_closed);
}

static void bad_name_writes_nothing(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(cycle(f, "mem-7"), -EINVAL);
	assert_string_equal(file(f, "0/out.txt"), "");
	assert_int_equal(fake.enters, 0);
}

static void summary(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(bci_suspend_summary_write(f->ex.run_dir), 0);
	assert_string_equal(file(f, "suspend-summary.txt"), "");
	fakeroot_write(&f->root, "/results/runs/t/suspend-cycles.txt",
		       "mem-0001 pass 6.100 5.000 1.100 0.400 0.700 RTC_WKALM_SET\n"
		       "mem-0002 pass 6.300 5.000 1.300 0.500 0.600 RTC_WKALM_SET\n"
		       "mem-0003 fail 0.500 0.000 0.500 - - RTC_WKALM_SET\n"
		       "mem-0004 pass 6.200 4.900 1.300 0.400 0.900 RTC_WKALM_SET\n"
		       "mem_devices-0001 pass 5.100 0.000 0.100 - - pm_test\n"
		       "mem-0005 pass 6.2"); /* cut by a crash */
	assert_int_equal(bci_suspend_summary_write(f->ex.run_dir), 0);
	assert_string_equal(file(f, "suspend-summary.txt"),
			    "cycles 5\npass 4\nfail 1\n"
			    "suspended_seconds 4.900/5.000/5.000\n"
			    "latency_seconds 0.100/1.200/1.300\n"
			    "kernel_resume_seconds 0.600/0.700/0.900\n");
}

/* The kernel log records a cycle is measured by; anything else changes nothing. */
static void kmsg_records(void **state)
{
	struct bci_suspend_landmarks lm = BCI_SUSPEND_LANDMARKS_INIT;

	(void)state;
	bci_suspend_kmsg_record(&lm, "6,9,99000000,-;ACPI: PM: Low-level resume complete");
	assert_true(lm.marker < 0); /* no entry yet: a marker means nothing */
	bci_suspend_kmsg_record(&lm, "6,10,100000000,-;PM: suspend entry (deep)");
	bci_suspend_kmsg_record(&lm, "no semicolon, no record");
	bci_suspend_kmsg_record(&lm, "6,x,1,-;PM: suspend exit");
	assert_true(lm.entry > 99.999 && lm.entry < 100.001);
	assert_true(lm.exit < 0);
	bci_suspend_kmsg_record(&lm, "6,11,100250000,-;ACPI: PM: Low-level resume complete");
	bci_suspend_kmsg_record(&lm, "6,12,100260000,-;Enabling non-boot CPUs ...");
	bci_suspend_kmsg_record(&lm, "6,13,100400000,c;PM: suspend exit");
	assert_true(lm.marker > 100.249 && lm.marker < 100.251); /* the first marker counts */
	assert_true(lm.exit > 100.399 && lm.exit < 100.401);
	assert_true(lm.pm_test_delay == 0);

	/* a new entry starts over; pm_test's wait is read from its message */
	bci_suspend_kmsg_record(&lm, "6,20,200000000,-;PM: suspend entry (deep)");
	assert_true(lm.marker < 0 && lm.exit < 0);
	bci_suspend_kmsg_record(&lm, "6,21,200300000,-;PM: suspend debug: Waiting for 5 second(s).");
	assert_true(lm.pm_test_delay > 4.999 && lm.pm_test_delay < 5.001);
	bci_suspend_kmsg_record(&lm, "6,30,300000000,-;PM: hibernation: hibernation entry");
	bci_suspend_kmsg_record(&lm, "6,31,300100000,-;PM: suspend debug: Waiting for -7 second(s).");
	assert_true(lm.pm_test_delay == 0); /* nonsense is not a wait */
	bci_suspend_kmsg_record(&lm, "6,32,300200000,-;PM: hibernation: hibernation exit");
	assert_true(lm.exit > 300.199 && lm.exit < 300.201);
}

/* The cycle's results entry from results.json generated over the fixture's run folder. */
static const char *generated_result(struct fixture *f, const char *name)
{
	static char result[64];
	char err[512], *json = NULL, key[160];
	size_t size = 0;
	FILE *out = open_memstream(&json, &size);
	const char *at;

	assert_non_null(out);
	fakeroot_write(&f->root, "/results/runs/t/metadata.txt", "name : t\ndmesg_warn_level : 4\n");
	fakeroot_write(&f->root, "/results/runs/t/joblist.txt", "bootci_suspend mem-0001\n");
	if (bci_resultgen_write(f->ex.run_dir, out, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	fclose(out);
	snprintf(key, sizeof(key), "\"%s\": {", name);
	at = strstr(json, key);
	at = at ? strstr(at, "\"result\": \"") : NULL;
	snprintf(result, sizeof(result), "%s", "(absent)");
	if (at)
		snprintf(result, sizeof(result), "%.*s", (int)strcspn(at + 11, "\""), at + 11);
	free(json);
	return result;
}

/*
 * A kernel warning while the machine suspends or resumes: the cycle announces
 * itself in the kernel log as an IGT subtest does, so the results generator
 * judges its log and the cycle is dmesg-warn, not pass.
 */
static void warning_in_the_cycle_is_dmesg_warn(void **state)
{
	struct fixture *f = *state;

	fake.kmsg = "6,10,100000000,-;PM: suspend entry (deep)\n"
		    "4,11,100200000,-;WARNING: CPU: 0 PID: 1 at drivers/gpu/drm/foo.c:12 foo_resume+0x1/0x2\n"
		    "6,12,100400000,-;ACPI: PM: Low-level resume complete\n"
		    "6,14,101100000,-;PM: suspend exit\n";
	assert_int_equal(cycle(f, "mem-0001"), 0);
	assert_string_equal(f->rec.result, "pass"); /* the cycle itself worked */
	/* the announcement comes first in the cycle's log */
	const char *dmesg = file(f, "0/dmesg.txt");
	const char *mark = strstr(dmesg, "[bootci] bootci_suspend: starting subtest mem-0001\n");
	assert_non_null(mark);
	assert_true(mark < strstr(dmesg, "PM: suspend entry"));
	fakeroot_write(&f->root, "/results/runs/t/0/journal.txt", "mem-0001\nexit:0 (6.250s)\n");
	assert_string_equal(generated_result(f, "bootci@suspend@mem@0001"), "dmesg-warn");

	/* the same cycle without the warning passes */
	fakeroot_write(&f->root, "/results/runs/t/0/dmesg.txt", "");
	assert_int_equal(ftruncate(f->dmesg, 0), 0);
	fake.kmsg = "6,20,200000000,-;PM: suspend entry (deep)\n"
		    "6,21,200400000,-;ACPI: PM: Low-level resume complete\n"
		    "6,22,201100000,-;PM: suspend exit\n";
	assert_int_equal(cycle(f, "mem-0001"), 0);
	assert_string_equal(generated_result(f, "bootci@suspend@mem@0001"), "pass");
}

/* Cycles run one after the other append to one record file, in order. */
static void cycles_accumulate(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(cycle(f, "mem-0001"), 0);
	assert_int_equal(cycle(f, "mem-0002"), 0);
	fake.enter_error = -EIO;
	assert_int_equal(cycle(f, "mem-0003"), 98);
	assert_int_equal(bci_suspend_summary_write(f->ex.run_dir), 0);
	assert_non_null(strstr(file(f, "suspend-summary.txt"), "cycles 3\npass 2\nfail 1\n"));
	assert_int_equal(f->rec.after.success, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kmsg_records),
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(mem_cycle_passes_and_measures),
		T(a_failed_output_write_is_kept),
		T(real_ops_fall_back_to_wakealarm),
		T(fallback_with_fake_kernel),
		T(no_way_to_wake_is_a_fail_without_sleeping),
		T(write_error_fails_with_stats),
		T(fail_count_growing_fails),
		T(not_offered_is_a_skip),
		T(pm_test_cycle),
		T(stale_pm_test_is_reset),
		T(s2idle_log_clock_gives_no_split),
		T(watchdog_closed_for_s3),
		T(watchdog_kept_for_s2idle),
		T(bad_name_writes_nothing),
		T(summary),
		T(warning_in_the_cycle_is_dmesg_warn),
		T(cycles_accumulate),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
