// SPDX-License-Identifier: MIT
/*
 * One suspend/resume cycle, the way rtcwake and IGT's igt_system_suspend_
 * autoresume do it, but measured and recorded like a test: arm the RTC wake
 * alarm, make everything known so far durable, write the state, and when the
 * kernel comes back say how long it slept, how long suspending and resuming
 * took and whether the kernel counted a failure. The kernel under test may
 * never come back: then the journal line the engine wrote before the cycle
 * makes it "incomplete" at the next boot, and the watchdog (kept armed for
 * sleeps the platform does not end by itself) is what brings the machine back.
 */
#include "suspend.h"

#include "executor.h"
#include "fsutil.h"
#include "igt_output_strings.h"
#include "igt_protocol.h"
#include "kmsg_record.h"
#include "results_dir.h"
#include "testlist.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* What suspending plus resuming may take on top of the wake time before a kept watchdog fires. */
#define WATCHDOG_MARGIN_S 10

/* ---- sysfs ---- */

/* Reads ROOT/@rel (first line, without its newline) into @buf; 0 or -errno. */
static int sysfs_read(const struct bci_executor *ex, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	if (bci_path(ex->root, path, "%s", rel) < 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int sysfs_write(const struct bci_executor *ex, const char *rel, const char *text)
{
	char path[PATH_MAX];
	int fd, ret = 0;

	if (bci_path(ex->root, path, "%s", rel) < 0)
		return -ENAMETOOLONG;
	/* O_TRUNC as a shell's `echo >` does: sysfs ignores it, a fake tree needs it. */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (bci_write_all(fd, text, strlen(text)) < 0)
		ret = -errno;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	return ret;
}

/* Is @word one of the words of a sysfs choice list ("s2idle [deep]", "[none] core ...")? */
static bool sysfs_offers(const char *list, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = list; *p;) {
		p += strspn(p, " [");
		size_t n = strcspn(p, " ]");
		if (n == len && memcmp(p, word, len) == 0)
			return true;
		p += n;
		p += strspn(p, "]");
	}
	return false;
}

/* The selected word of a sysfs choice list (the one in brackets), cut to fit @size (> 0). */
static void sysfs_selected(const char *list, char *buf, size_t size)
{
	const char *open = strchr(list, '['), *close_ = open ? strchr(open, ']') : NULL;
	const char *word = list;
	size_t len = strlen(list);

	if (open && close_) {
		word = open + 1;
		len = (size_t)(close_ - word);
	}
	if (len >= size)
		len = size - 1;
	memcpy(buf, word, len);
	buf[len] = '\0';
}

void bci_suspend_stats_read(const struct bci_executor *ex, struct bci_suspend_stats *stats)
{
	static const struct {
		const char *name;
		size_t offset;
	} counters[] = {
#define COUNTER(f) { #f, offsetof(struct bci_suspend_stats, f) }
		COUNTER(success),	     COUNTER(fail),
		COUNTER(failed_freeze),	     COUNTER(failed_prepare),
		COUNTER(failed_suspend),     COUNTER(failed_suspend_late),
		COUNTER(failed_suspend_noirq), COUNTER(failed_resume),
		COUNTER(failed_resume_early), COUNTER(failed_resume_noirq),
#undef COUNTER
	};
	char rel[96], text[128];

	memset(stats, 0, sizeof(*stats));
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		snprintf(rel, sizeof(rel), "/sys/power/suspend_stats/%s", counters[i].name);
		if (sysfs_read(ex, rel, text, sizeof(text)) < 0)
			continue;
		*(unsigned long *)((char *)stats + counters[i].offset) = strtoul(text, NULL, 10);
		stats->valid = true;
	}
	if (sysfs_read(ex, "/sys/power/suspend_stats/last_failed_dev", text, sizeof(text)) == 0)
		snprintf(stats->last_failed_dev, sizeof(stats->last_failed_dev), "%.63s", text);
	if (sysfs_read(ex, "/sys/power/suspend_stats/last_failed_errno", text, sizeof(text)) == 0)
		stats->last_failed_errno = atoi(text);
	if (sysfs_read(ex, "/sys/power/suspend_stats/last_failed_step", text, sizeof(text)) == 0)
		snprintf(stats->last_failed_step, sizeof(stats->last_failed_step), "%.31s", text);
}

/* ---- the cycle ---- */

struct cycle {
	struct bci_executor *ex;
	struct bci_suspend_record *rec;
	struct bci_testlist_cycle_name name;
	int out_fd, err_fd, dmesg_fd, kmsg_fd;
	const char *rtc;
	int rtc_fd;             /* /dev/rtcN while its alarm is armed through ioctls */
	bool alarm_sysfs;       /* the alarm was armed through sysfs wakealarm */
	char old_mem_sleep[16]; /* to put back after the cycle, "" when untouched */
	bool pm_test_set;
	struct bci_suspend_landmarks pm; /* the kernel log, parsed as it is copied */
	bool entered;           /* the state was written: the clocks below mean something */
	double boot0, mono0, boot1, mono1;
};

/* A write of the cycle's output: the first that fails is kept for the job (record->output_*). */
static void output(struct cycle *c, int fd, const char *text, size_t len)
{
	int ret;

	if (fd < 0 || c->rec->output_error)
		return;
	ret = bci_write_all(fd, text, len);
	if (ret < 0) {
		c->rec->output_fd = fd;
		c->rec->output_error = ret;
	}
}

static void say(struct cycle *c, int fd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(struct cycle *c, int fd, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	int n;

	if (fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(text))
		n = (int)sizeof(text) - 1;
	output(c, fd, text, (size_t)n);
}

static double now(const struct cycle *c, clockid_t clock)
{
	struct timespec ts = { 0, 0 };

	c->ex->sys->clock(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bci_suspend_kmsg_record(struct bci_suspend_landmarks *lm, const char *record)
{
	static const char *const resume_markers[] = {
		"ACPI: PM: Low-level resume complete", "PM: resume from suspend-to-idle",
		"Enabling non-boot CPUs", "PM: suspend debug: Waiting for",
	};
	struct bci_kmsg_record rec;
	const char *text;
	double ts;

	if (!bci_kmsg_record_parse(record, strlen(record), &rec))
		return;
	text = rec.text;
	ts = (double)rec.usec / 1e6;
	if (strncmp(text, "PM: suspend entry", 17) == 0 ||
	    strncmp(text, "PM: hibernation: hibernation entry", 34) == 0) {
		lm->entry = ts;
		lm->marker = lm->exit = -1;
		lm->pm_test_delay = 0;
		return;
	}
	if (lm->entry < 0)
		return;
	if (strncmp(text, "PM: suspend exit", 16) == 0 ||
	    strncmp(text, "PM: hibernation: hibernation exit", 33) == 0) {
		lm->exit = ts;
		return;
	}
	if (lm->marker >= 0)
		return;
	for (size_t i = 0; i < sizeof(resume_markers) / sizeof(resume_markers[0]); i++) {
		if (!strstr(text, resume_markers[i]))
			continue;
		lm->marker = ts;
		/* pm_test waits (mdelay) inside the kernel: that time is neither suspending nor resuming. */
		if (i == 3) {
			char *end;
			double delay = strtod(strstr(text, resume_markers[i]) + strlen(resume_markers[i]), &end);
			lm->pm_test_delay = delay >= 0 && delay < 3600 ? delay : 0;
		}
		return;
	}
}

/* Copies what the kernel logged since the last call into dmesg_fd, parsing it on the way. */
static void drain_kmsg(struct cycle *c)
{
	char record[8192];

	if (c->kmsg_fd < 0)
		return;
	for (;;) {
		long n = c->ex->sys->kmsg_read(c->kmsg_fd, record, sizeof(record) - 1);
		if (n <= 0)
			break;
		output(c, c->dmesg_fd, record, (size_t)n);
		/* The record's text, without the " KEY=value" lines that may follow it. */
		record[n] = '\0';
		record[strcspn(record, "\n")] = '\0';
		bci_suspend_kmsg_record(&c->pm, record);
	}
	if (c->dmesg_fd >= 0 && fdatasync(c->dmesg_fd) < 0 && !c->rec->output_error) {
		c->rec->output_fd = c->dmesg_fd;
		c->rec->output_error = -errno;
	}
}

/* rtcwake's way: wakeup enabled on the RTC device, alarm in the RTC's own time. */
static int arm_alarm(struct cycle *c, unsigned long seconds)
{
	char rel[PATH_MAX], text[32], path[PATH_MAX];
	struct rtc_wkalrm alarm = { 0 };
	struct rtc_time now_rtc;
	struct tm tm;
	time_t t;
	int ret;

	snprintf(rel, sizeof(rel), "/sys/class/rtc/%s/device/power/wakeup", c->rtc);
	if (sysfs_read(c->ex, rel, text, sizeof(text)) == 0 && strcmp(text, "enabled") != 0 &&
	    (ret = sysfs_write(c->ex, rel, "enabled")) < 0)
		say(c, c->out_fd, "bootci-suspend: cannot enable %s for wakeup: %s\n", c->rtc,
		    strerror(-ret));

	if (bci_path(c->ex->root, path, "/dev/%s", c->rtc) < 0)
		return -ENAMETOOLONG;
	c->rtc_fd = open(path, O_RDONLY | O_CLOEXEC);
	ret = c->rtc_fd < 0 ? -errno : c->ex->sys->rtc_read_time(c->rtc_fd, &now_rtc);
	if (ret == 0) {
		/* The RTC's broken-down time, whatever zone it keeps: timegm/gmtime only add seconds. */
		tm = (struct tm){ .tm_sec = now_rtc.tm_sec, .tm_min = now_rtc.tm_min,
				  .tm_hour = now_rtc.tm_hour, .tm_mday = now_rtc.tm_mday,
				  .tm_mon = now_rtc.tm_mon, .tm_year = now_rtc.tm_year };
		t = timegm(&tm) + (time_t)seconds;
		gmtime_r(&t, &tm);
		alarm.enabled = 1;
		alarm.time = (struct rtc_time){ .tm_sec = tm.tm_sec, .tm_min = tm.tm_min,
						.tm_hour = tm.tm_hour, .tm_mday = tm.tm_mday,
						.tm_mon = tm.tm_mon, .tm_year = tm.tm_year,
						.tm_wday = -1, .tm_yday = -1, .tm_isdst = -1 };
		ret = c->ex->sys->rtc_set_alarm(c->rtc_fd, &alarm);
	}
	if (ret == 0) {
		snprintf(c->rec->wake, sizeof(c->rec->wake), "RTC_WKALM_SET");
		return 0;
	}
	say(c, c->out_fd, "bootci-suspend: /dev/%s: %s; falling back to sysfs wakealarm\n", c->rtc,
	    strerror(-ret));
	if (c->rtc_fd >= 0)
		close(c->rtc_fd);
	c->rtc_fd = -1;

	/* The sysfs interface refuses a new alarm while one is set: clear it first. */
	snprintf(rel, sizeof(rel), "/sys/class/rtc/%s/wakealarm", c->rtc);
	snprintf(text, sizeof(text), "+%lu", seconds);
	ret = sysfs_write(c->ex, rel, "0");
	if (ret == 0)
		ret = sysfs_write(c->ex, rel, text);
	if (ret < 0)
		return ret;
	c->alarm_sysfs = true;
	snprintf(c->rec->wake, sizeof(c->rec->wake), "wakealarm");
	return 0;
}

/* An alarm left armed would wake a later sleep (an IGT suspend test's) at the wrong time. */
static void disarm_alarm(struct cycle *c)
{
	struct rtc_wkalrm alarm;
	char rel[PATH_MAX];

	if (c->rtc_fd >= 0) {
		if (c->ex->sys->rtc_read_alarm(c->rtc_fd, &alarm) == 0) {
			alarm.enabled = 0;
			c->ex->sys->rtc_set_alarm(c->rtc_fd, &alarm);
		}
		close(c->rtc_fd);
		c->rtc_fd = -1;
	}
	if (c->alarm_sysfs) {
		snprintf(rel, sizeof(rel), "/sys/class/rtc/%s/wakealarm", c->rtc);
		sysfs_write(c->ex, rel, "0");
		c->alarm_sysfs = false;
	}
}

/* Checks the kernel offers what the cycle needs; "" or why it cannot run (a skip). */
static void check_offered(struct cycle *c, const char *mem_sleep, char *why, size_t size)
{
	char text[256];

	why[0] = '\0';
	if (sysfs_read(c->ex, "/sys/power/state", text, sizeof(text)) < 0 ||
	    !sysfs_offers(text, c->name.state)) {
		snprintf(why, size, "the kernel does not offer %s in /sys/power/state (\"%.120s\")",
			 c->name.state, text);
		return;
	}
	if (strcmp(c->name.state, "mem") == 0 && strcmp(mem_sleep, "kernel") != 0 &&
	    (sysfs_read(c->ex, "/sys/power/mem_sleep", text, sizeof(text)) < 0 ||
	     !sysfs_offers(text, mem_sleep))) {
		snprintf(why, size, "the kernel does not offer %s in /sys/power/mem_sleep (\"%.120s\")",
			 mem_sleep, text);
		return;
	}
	if (c->name.pm_test[0] &&
	    (sysfs_read(c->ex, "/sys/power/pm_test", text, sizeof(text)) < 0 ||
	     !sysfs_offers(text, c->name.pm_test)))
		snprintf(why, size, "no pm_test level %s (CONFIG_PM_DEBUG) in /sys/power/pm_test",
			 c->name.pm_test);
}

/* Sets mem_sleep and pm_test for the cycle, remembering what to put back. */
static int configure(struct cycle *c, const char *mem_sleep)
{
	char text[256];
	int ret;

	if (strcmp(c->name.state, "mem") == 0) {
		if (sysfs_read(c->ex, "/sys/power/mem_sleep", text, sizeof(text)) == 0)
			sysfs_selected(text, c->old_mem_sleep, sizeof(c->old_mem_sleep));
		if (strcmp(mem_sleep, "kernel") != 0) {
			ret = sysfs_write(c->ex, "/sys/power/mem_sleep", mem_sleep);
			if (ret < 0)
				return ret;
			snprintf(c->rec->mem_sleep, sizeof(c->rec->mem_sleep), "%s", mem_sleep);
		} else {
			snprintf(c->rec->mem_sleep, sizeof(c->rec->mem_sleep), "%s",
				 c->old_mem_sleep);
			c->old_mem_sleep[0] = '\0';
		}
	}
	/* A level left by an earlier cycle (or test) would turn this sleep into a test run. */
	if (sysfs_read(c->ex, "/sys/power/pm_test", text, sizeof(text)) == 0) {
		char selected[32];
		sysfs_selected(text, selected, sizeof(selected));
		const char *want = c->name.pm_test[0] ? c->name.pm_test : "none";
		if (strcmp(selected, want) != 0) {
			ret = sysfs_write(c->ex, "/sys/power/pm_test", want);
			if (ret < 0)
				return ret;
		}
		c->pm_test_set = c->name.pm_test[0] != '\0';
	}
	return 0;
}

static void restore(struct cycle *c)
{
	if (c->old_mem_sleep[0] && strcmp(c->old_mem_sleep, c->rec->mem_sleep) != 0)
		sysfs_write(c->ex, "/sys/power/mem_sleep", c->old_mem_sleep);
	if (c->pm_test_set)
		sysfs_write(c->ex, "/sys/power/pm_test", "none");
}

/* Does the machine stay in S0 (so a hardware watchdog keeps counting)? */
static bool stays_in_s0(const struct cycle *c)
{
	return c->name.pm_test[0] || strcmp(c->name.state, "freeze") == 0 ||
	       (strcmp(c->name.state, "mem") == 0 && strcmp(c->rec->mem_sleep, "s2idle") == 0);
}

/*
 * The cycle's line in suspend-cycles.txt. A torn last line (the machine died
 * in an earlier append) is cut off first, so that this line does not join it
 * and stop being a line. A write that fails (a full partition) is cut back
 * too, said, and kept for the job (record->cycles_*), which marks the cycle's
 * output incomplete as for a failed write of out.txt: results.json then shows
 * the cycle incomplete, with the note, where the summary lacks it.
 */
static void append_cycle_line(struct cycle *c)
{
	struct bci_suspend_record *r = c->rec;
	struct bci_suspend_cycle_line entry = {
		.wall = r->wall, .suspended = r->suspended, .latency = r->latency,
		.kernel_suspend = r->kernel_suspend, .kernel_resume = r->kernel_resume,
	};
	char path[PATH_MAX + 32], line[512];
	long long cut = 0;
	struct stat st;
	off_t before = 0;
	int fd, n, ret = 0;

	if (!c->ex->run_dir[0])
		return;
	snprintf(entry.cycle, sizeof(entry.cycle), "%s", r->cycle);
	snprintf(entry.result, sizeof(entry.result), "%s", r->result);
	snprintf(entry.wake, sizeof(entry.wake), "%s", r->wake);
	n = bci_suspend_cycle_line_format(line, sizeof(line), &entry);
	snprintf(path, sizeof(path), "%s/%s", c->ex->run_dir, BCI_RESULTS_SUSPEND_CYCLES);
	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		ret = -errno;
	if (ret == 0 && (cut = bci_cut_torn_line(fd)) < 0)
		ret = (int)cut;
	if (ret == 0 && cut > 0)
		bci_warn("suspend: %s ended in a torn line (%lld bytes, a power cut in an earlier "
			 "cycle's record): cut off", path, cut);
	if (ret == 0 && fstat(fd, &st) == 0)
		before = st.st_size;
	if (ret == 0)
		ret = bci_write_all(fd, line, (size_t)n);
	if (ret == 0 && fdatasync(fd) < 0)
		ret = -errno;
	if (ret < 0) {
		bci_error("suspend %s: cannot record the cycle in %s: %s", r->cycle, path,
			  strerror(-ret));
		r->cycles_error = ret;
		r->cycles_size = (unsigned long long)before;
		/* No fragment left for the next cycle's line to join. */
		if (fd >= 0 && ftruncate(fd, before) == 0)
			fdatasync(fd);
	}
	if (fd >= 0)
		close(fd);
}

/* Fills the measurements from the clocks and the kernel log. */
static void measure(struct cycle *c, double boot0, double mono0, double boot1, double mono1)
{
	struct bci_suspend_record *r = c->rec;

	r->write = boot1 - boot0;
	r->suspended = (boot1 - mono1) - (boot0 - mono0);
	if (r->suspended < 0)
		r->suspended = 0;
	/* pm_test's wait is neither suspending nor resuming. */
	r->latency = r->write - r->suspended - c->pm.pm_test_delay;
	if (r->latency < 0)
		r->latency = 0;
	if (c->pm.entry < 0 || c->pm.exit < c->pm.entry)
		return;
	double kernel = c->pm.exit - c->pm.entry - c->pm.pm_test_delay;
	/*
	 * The log's clock stops during a platform sleep but runs through
	 * s2idle: a span longer than the whole write holds the sleep, and
	 * which side of the marker it fell on is unknown.
	 */
	if (kernel > r->write + 0.05 || (r->suspended > 0.5 && kernel > r->latency + 0.5))
		return;
	if (c->pm.marker >= c->pm.entry && c->pm.marker <= c->pm.exit) {
		r->kernel_suspend = c->pm.marker - c->pm.entry;
		r->kernel_resume = c->pm.exit - c->pm.marker - c->pm.pm_test_delay;
		/* pm_test's mdelay is not exact (under TCG least of all): then the split is unknown. */
		if (r->kernel_resume < 0)
			r->kernel_suspend = r->kernel_resume = -1;
	}
}

/* Decides the result from the write and suspend_stats; the reasons go to err. */
static void judge(struct cycle *c)
{
	struct bci_suspend_record *r = c->rec;
	const struct bci_suspend_stats *b = &r->before, *a = &r->after;

	snprintf(r->result, sizeof(r->result), "pass");
	if (r->error < 0) {
		snprintf(r->result, sizeof(r->result), "fail");
		if (!r->why[0])
			snprintf(r->why, sizeof(r->why), "writing %s to /sys/power/state failed: %s",
				 c->name.state, strerror(-r->error));
	} else if (b->valid && a->valid && a->fail > b->fail) {
		snprintf(r->result, sizeof(r->result), "fail");
		snprintf(r->why, sizeof(r->why), "the kernel counted a failed suspend");
	}
	if (strcmp(r->result, "fail") != 0)
		return;
	say(c, c->err_fd, "bootci-suspend: %s\n", r->why);
	if (b->valid && a->valid && a->fail > b->fail)
		say(c, c->err_fd,
		    "bootci-suspend: suspend_stats fail %lu -> %lu, last_failed_dev %s, "
		    "last_failed_errno %d, last_failed_step %s\n",
		    b->fail, a->fail, a->last_failed_dev[0] ? a->last_failed_dev : "-",
		    a->last_failed_errno, a->last_failed_step[0] ? a->last_failed_step : "-");
}

static void say_stats(struct cycle *c)
{
	const struct bci_suspend_stats *b = &c->rec->before, *a = &c->rec->after;

	if (!b->valid || !a->valid) {
		say(c, c->out_fd, "bootci-suspend: no /sys/power/suspend_stats\n");
		return;
	}
	say(c, c->out_fd, "bootci-suspend: suspend_stats success %lu -> %lu, fail %lu -> %lu\n",
	    b->success, a->success, b->fail, a->fail);
	if (a->fail == b->fail && a->success == b->success && c->rec->error == 0)
		say(c, c->out_fd, "bootci-suspend: note: the kernel counted neither a success nor a failure\n");
}

static void say_measurements(struct cycle *c)
{
	const struct bci_suspend_record *r = c->rec;

	say(c, c->out_fd,
	    "bootci-suspend: write returned after %.3fs: suspended %.3fs, suspend+resume %.3fs\n",
	    r->write, r->suspended, r->latency);
	if (r->kernel_suspend >= 0)
		say(c, c->out_fd, "bootci-suspend: kernel log: suspend %.3fs, resume %.3fs\n",
		    r->kernel_suspend, r->kernel_resume);
	else
		say(c, c->out_fd, "bootci-suspend: kernel log: no suspend/resume split\n");
}

static void say_version(struct cycle *c)
{
	struct utsname u;

	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	say(c, c->out_fd, BCI_IGT_VERSIONSTRING "bootci-suspend (%s) (Linux: %s %s)\n", u.machine,
	    c->ex->release[0] ? c->ex->release : u.release, u.machine);
}

/*
 * The set-up: checks the kernel offers the cycle, then mem_sleep, pm_test and
 * the wake alarm. Returns 0 when the cycle can sleep, 1 when it is already
 * judged (a skip: IGT_EXIT_SKIP said; a set-up failure: record->error set).
 */
static int cycle_prepare(struct cycle *c, const char *mem_sleep, unsigned long wake_after)
{
	struct bci_suspend_record *record = c->rec;
	char line[300];
	int ret;

	check_offered(c, mem_sleep, record->why, sizeof(record->why));
	if (record->why[0]) {
		/* IGT's own way of skipping inside a subtest: the reason, then the result. */
		bci_igt_line_format_start(line, sizeof(line), false, record->cycle);
		say(c, c->out_fd, "%s", line);
		say(c, c->out_fd, "Test requirement not met: %s\n", record->why);
		bci_igt_line_format_result(line, sizeof(line), false, record->cycle, BCI_IGT_WORD_SKIP, 0);
		say(c, c->out_fd, "%s", line);
		snprintf(record->result, sizeof(record->result), "skip");
		bci_say("suspend %s: skipped: %s", record->cycle, record->why);
		return 1;
	}
	bci_igt_line_format_start(line, sizeof(line), false, record->cycle);
	say(c, c->out_fd, "%s", line);
	/* Known before the sleep: if it never ends, the job's out.txt says what was tried. */
	fdatasync(c->out_fd);

	c->kmsg_fd = bci_kmsg_open(c->ex);
	/*
	 * The cycle announces itself in the kernel log as an IGT subtest does
	 * (`[IGT] bin: starting subtest X`): the results generator then judges
	 * the cycle's kernel log, so a warning during suspend or resume makes
	 * the cycle dmesg-warn, as it would an IGT subtest.
	 */
	bci_kmsg_mark(c->ex, 6, BCI_IGT_SUSPEND_BINARY BCI_IGT_STARTING_SUBTEST_DMESG "%s\n",
		      record->cycle);
	bci_suspend_stats_read(c->ex, &record->before);
	ret = configure(c, mem_sleep);
	if (ret < 0) {
		record->error = ret;
		snprintf(record->why, sizeof(record->why), "cannot set mem_sleep/pm_test: %s",
			 strerror(-ret));
		return 1;
	}
	if (c->name.pm_test[0]) {
		snprintf(record->wake, sizeof(record->wake), "pm_test");
		say(c, c->out_fd, "bootci-suspend: %s%s%s%s, pm_test %s: the kernel comes back by itself\n",
		    c->name.state, record->mem_sleep[0] ? " (mem_sleep " : "", record->mem_sleep,
		    record->mem_sleep[0] ? ")" : "", c->name.pm_test);
		return 0;
	}
	ret = arm_alarm(c, wake_after);
	if (ret < 0) {
		/* Never sleep without a way back. */
		record->error = ret;
		snprintf(record->why, sizeof(record->why), "cannot arm the wake alarm of %s: %s",
			 c->rtc, strerror(-ret));
		return 1;
	}
	say(c, c->out_fd, "bootci-suspend: %s%s%s%s, wake: %s after %lus\n", c->name.state,
	    record->mem_sleep[0] ? " (mem_sleep " : "", record->mem_sleep,
	    record->mem_sleep[0] ? ")" : "", record->wake, wake_after);
	return 0;
}

/*
 * A platform sleep powers the watchdog down or resets it (QEMU resets every
 * device on an S3 wake), and one on standby power would fire during a long
 * sleep: close it and re-arm it after. When the machine stays in S0 the
 * watchdog keeps counting and is the only way out of a sleep that never
 * ends: keep it.
 */
static void watchdog_before_sleep(struct cycle *c, unsigned long wake_after)
{
	const char *mode = bci_config_get(c->ex->config, "suspend_watchdog");
	unsigned long timeout = bci_config_get_seconds(c->ex->config, "watchdog_timeout");
	bool close_watchdog = strcmp(mode, "close") == 0 ||
			      (strcmp(mode, "auto") == 0 && !stays_in_s0(c));

	if (c->ex->watchdog_fd < 0)
		return;
	if (close_watchdog) {
		bci_watchdog_close(c->ex);
		c->rec->watchdog_closed = true;
		return;
	}
	if (timeout <= wake_after + WATCHDOG_MARGIN_S)
		bci_warn("suspend %s: the watchdog (%lu s) is kept armed through a %lu s sleep: "
			 "it may reset the machine", c->rec->cycle, timeout, wake_after);
	bci_watchdog_pet(c->ex);
}

/* The sleep: everything known made durable, the state written, the clocks read around it. */
static void cycle_sleep(struct cycle *c, unsigned long wake_after)
{
	struct bci_suspend_record *record = c->rec;
	struct bci_executor *ex = c->ex;
	double boot0, mono0, boot1, mono1;
	char path[PATH_MAX];
	int state_fd = -1;

	watchdog_before_sleep(c, wake_after);
	if (c->name.pm_test[0])
		bci_say("suspend %s: %s, pm_test %s", record->cycle, c->name.state, c->name.pm_test);
	else
		bci_say("suspend %s: %s for %lus", record->cycle, c->name.state, wake_after);
	bci_kmsg_mark(ex, 6, "suspend cycle %s: writing %s to /sys/power/state\n", record->cycle,
		      c->name.state);
	if (bci_path(ex->root, path, "/sys/power/state") < 0 ||
	    (state_fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0) {
		record->error = state_fd < 0 ? -errno : -ENAMETOOLONG;
		snprintf(record->why, sizeof(record->why), "cannot open /sys/power/state: %s",
			 strerror(-record->error));
	} else {
		/* Everything known so far reaches the disk before a sleep that may never end. */
		drain_kmsg(c);
		ex->sys->sync();
		boot0 = now(c, CLOCK_BOOTTIME);
		mono0 = now(c, CLOCK_MONOTONIC);
		record->error = ex->sys->suspend_enter(state_fd, c->name.state);
		boot1 = now(c, CLOCK_BOOTTIME);
		mono1 = now(c, CLOCK_MONOTONIC);
		close(state_fd);
		c->entered = true;
		c->boot0 = boot0, c->mono0 = mono0, c->boot1 = boot1, c->mono1 = mono1;
	}
	if (record->watchdog_closed)
		bci_watchdog_open(ex);
	else
		bci_watchdog_pet(ex);
}

/* The collection: the machine put back, the kernel log read, the cycle judged and recorded. */
static int cycle_collect(struct cycle *c, double start)
{
	struct bci_suspend_record *record = c->rec;
	char line[300];
	bool pass;

	disarm_alarm(c);
	restore(c);
	drain_kmsg(c);
	if (c->kmsg_fd >= 0)
		close(c->kmsg_fd);
	c->kmsg_fd = -1;
	if (c->entered)
		measure(c, c->boot0, c->mono0, c->boot1, c->mono1);
	bci_suspend_stats_read(c->ex, &record->after);
	judge(c);
	if (c->entered)
		say_measurements(c);
	say_stats(c);
	record->wall = now(c, CLOCK_BOOTTIME) - start;
	pass = strcmp(record->result, "pass") == 0;
	bci_igt_line_format_result(line, sizeof(line), false, record->cycle,
				   pass ? BCI_IGT_WORD_SUCCESS : BCI_IGT_WORD_FAIL, record->wall);
	say(c, c->out_fd, "%s", line);
	append_cycle_line(c);
	bci_say("suspend %s: %s, suspended %.3fs, suspend+resume %.3fs%s%s", record->cycle,
		record->result, record->suspended, record->latency, record->why[0] ? ": " : "",
		record->why);
	return pass ? BCI_IGT_EXIT_SUCCESS : BCI_IGT_EXIT_FAILURE;
}

int bci_suspend_cycle(struct bci_executor *ex, const char *cycle, int out_fd, int err_fd,
		      int dmesg_fd, struct bci_suspend_record *record)
{
	unsigned long wake_after = bci_config_get_seconds(ex->config, "suspend_wake_after");
	const char *mem_sleep = bci_config_get(ex->config, "suspend_mem_sleep");
	struct cycle c = { .ex = ex, .rec = record, .out_fd = out_fd, .err_fd = err_fd,
			   .dmesg_fd = dmesg_fd, .kmsg_fd = -1, .rtc_fd = -1,
			   .rtc = bci_config_get(ex->config, "suspend_rtc"),
			   .pm = BCI_SUSPEND_LANDMARKS_INIT };
	double start;
	int ret;

	memset(record, 0, sizeof(*record));
	record->kernel_suspend = record->kernel_resume = -1;
	if (bci_testlist_cycle_name_parse(cycle, &c.name) < 0)
		return -EINVAL;
	snprintf(record->cycle, sizeof(record->cycle), "%s", cycle);
	start = now(&c, CLOCK_BOOTTIME);
	say_version(&c);
	ret = cycle_prepare(&c, mem_sleep, wake_after);
	if (ret == 1 && strcmp(record->result, "skip") == 0)
		return BCI_IGT_EXIT_SKIP;
	if (ret == 0)
		cycle_sleep(&c, wake_after);
	return cycle_collect(&c, start);
}

/* ---- the summary ---- */

int bci_suspend_summary_write(const char *run_dir)
{
	char path[PATH_MAX + 32], *text = NULL, out[1024];
	struct bci_suspend_summary summary;
	size_t len = 0;
	int ret, n;

	snprintf(path, sizeof(path), "%s/%s", run_dir, BCI_RESULTS_SUSPEND_CYCLES);
	ret = bci_read_file(path, &text, &len, 16 << 20);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		bci_warn("cannot read %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = bci_suspend_summary_compute(text, len, &summary);
	free(text);
	if (ret < 0) {
		bci_warn("no memory for the suspend summary");
		return ret;
	}
	n = bci_suspend_summary_format(out, sizeof(out), &summary);
	snprintf(path, sizeof(path), "%s/%s", run_dir, BCI_RESULTS_SUSPEND_SUMMARY);
	ret = bci_write_file_atomic(path, out, (size_t)n, 0644);
	if (ret < 0)
		bci_warn("cannot write %s: %s", path, strerror(-ret));
	return ret;
}
