/* SPDX-License-Identifier: MIT */
/*
 * bootci-executor: PID 1 of the test initramfs. The executor is a library of
 * modules driven by boot.c (one boot, bci_executor_boot()); main.c only parses
 * arguments and ends the boot. This header is the executor's, not one file's:
 * the context every module works in (struct bci_executor, the bci_sys seam)
 * and each module's entry points, under the name of its file. A folder of
 * modules (igt/) keeps its own shared header.
 *
 * Every path the executor touches goes through bci_path() (lib/path.h) and so
 * through one root prefix (`--root DIR`), and every system call without a path
 * goes through the bci_sys table, so the same code runs unprivileged against a
 * fake tree.
 */
#ifndef BCI_EXECUTOR_H
#define BCI_EXECUTOR_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/rtc.h>
#include <time.h>

#include "config.h"
#include "path.h"

struct bci_executor;
struct kmod_ctx;
struct kmod_module;

/*
 * The seam: every system call without a path, the clocks, and what a fake tree
 * cannot do the way the kernel does (the record format of /dev/kmsg, the RTC
 * ioctls, the write that sleeps). Production code has one path through this
 * table; `--root` runs use bci_sys_dry, and a test build copies a table and
 * replaces the entries it fakes. EFI variables are lib/efi's: it tells
 * efivarfs from a fake tree's regular files by their file system.
 */
struct bci_sys {
	const char *name;
	int (*mount)(const char *source, const char *target, const char *fstype,
		     unsigned long flags, const char *data);
	int (*umount)(const char *target);
	/* Loads @module (with @options, may be NULL) and its dependencies; 0 or -errno. */
	int (*probe_module)(struct kmod_module *module, const char *options);
	/* Ends the boot: RB_AUTOBOOT or RB_POWER_OFF. Returns only on failure. */
	int (*reboot)(int how);
	void (*sync)(void);
	/* A durability barrier: fdatasync of @fd, or with @whole_fs syncfs() of its file
	 * system (one cache flush for every file written on it). 0 or -errno. */
	int (*barrier)(int fd, bool whole_fs);
	/* CLOCK_BOOTTIME (timers, durations: it counts a suspend), CLOCK_MONOTONIC (it does
	 * not), CLOCK_REALTIME (dates in files). 0 or -errno. */
	int (*clock)(clockid_t clock, struct timespec *ts);
	/* One /dev/kmsg record ("<prio>,<seq>,<usec>,<flags>;text\n...") from @fd opened
	 * O_NONBLOCK: its length, 0 at the end, -EAGAIN when there is none yet, or -errno. */
	long (*kmsg_read)(int fd, char *record, size_t size);
	/* Adds one record at @level (0-7, facility user) to the log open on @fd; 0 or -errno. */
	int (*kmsg_write)(int fd, int level, const char *text, size_t len);
	/* ioctl RTC_RD_TIME / RTC_WKALM_RD / RTC_WKALM_SET on an open /dev/rtcN: 0 or -errno. */
	int (*rtc_read_time)(int fd, struct rtc_time *time);
	int (*rtc_read_alarm)(int fd, struct rtc_wkalrm *alarm);
	int (*rtc_set_alarm)(int fd, const struct rtc_wkalrm *alarm);
	/* Writes @state to the open /sys/power/state: returns after the resume. 0 or -errno. */
	int (*suspend_enter)(int fd, const char *state);
};

extern const struct bci_sys bci_sys_real;
/*
 * For `--root` runs on a fake tree as an ordinary user: mounts, module loads and
 * the reboot are printed, not made; /dev/kmsg is a regular file holding records
 * as the kernel shows them, one a line.
 */
extern const struct bci_sys bci_sys_dry;
/* The real barrier (fdatasync, or syncfs with @whole_fs), for tables built on the others. */
int bci_sys_barrier(int fd, bool whole_fs);
/* ex->sys's clock @clock in milliseconds (CLOCK_BOOTTIME unless said otherwise). */
long bci_clock_ms(const struct bci_executor *ex, clockid_t clock);

enum bci_ending {
	BCI_END_REBOOT,
	BCI_END_POWEROFF,
};

struct bci_executor {
	const char *root;           /* "" on the real machine */
	const struct bci_sys *sys;
	struct bci_config *config;
	struct kmod_ctx *kmod;
	int signal_fd;              /* signalfd for SIGCHLD and the ending signals */
	int watchdog_fd;            /* /dev/watchdogN while armed, else -1 */
	bool stop_requested;        /* SIGTERM/SIGINT/SIGPWR seen: finish, then end */
	char release[128];          /* kernel release of the running kernel */
	char results_device[PATH_MAX];
	char results_mount[PATH_MAX];
	char run_dir[PATH_MAX];     /* the run's folder on the results partition */
	char boot_dir[PATH_MAX];    /* run_dir/boot-NNNN: this boot's records */
	bool run_began;             /* this boot's record is written: its errors are the run's */
	unsigned boot_number;       /* NNNN */
	bool kernel_crashed;        /* the previous boot ended in a panic/oops (pstore says) */
	const char *end_reason;     /* why this boot ends, for boot-NNNN/end.txt */
	char crash_dump[PATH_MAX];  /* where its dump was saved, relative to run_dir */
	int reserve;                /* reserve.c: 1 held, 0 none, -1 released */
	char results_full[256];     /* why the results partition counts as full; "" while not */
};

/* Console messages for people: "[   12.345678] bootci: ..." on stderr (the console under
 * PID 1), stamped on the kernel's printk clock (console.c says how) by @ex's clock table;
 * attaching opens /dev/console when fds 0-2 are closed. */
void bci_console_attach(const struct bci_executor *ex);
void bci_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bci_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bci_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What the last bci_error() said ("" before any), without its prefix. */
const char *bci_console_last_error(void);

/*
 * printk_clock.c: the kernel log's clock, which the console stamps its lines on, as
 * an offset from CLOCK_MONOTONIC: measured by kmsg.c's markers, read by console.c.
 * Its clocks are @sys's table once attached (the console's), bci_sys_real before.
 */
void bci_printk_clock_attach(const struct bci_sys *sys);
/* @clock now, in ns, by that table. */
long long bci_printk_clock_read(clockid_t clock);
/* The kernel stamped a record @kernel_ns while CLOCK_MONOTONIC read @monotonic_ns (read just
 * before: the console's stamps then never run behind the kernel's). */
void bci_printk_clock_measured(long long kernel_ns, long long monotonic_ns);
/* The offset last measured (0 before any) and CLOCK_BOOTTIME - CLOCK_MONOTONIC then, in
 * ns; whether a measure stands (none yet, or forgotten since). */
bool bci_printk_clock_offset(long long *offset_ns, long long *asleep_ns);
/* The next measure is wanted (after a suspend): the offset stays until it comes. */
void bci_printk_clock_forget(void);

/* settings.c: the configuration through lib/executor_keys.h's table. Loads /etc/bootci/executor.conf then the kernel command line. 0, or -errno after a bci_error(). */
int bci_settings_load(struct bci_executor *ex);
/* dmesg_warn_level resolved: the configured level, or for `auto` 4 (5 with piglit_style_dmesg). */
int bci_settings_dmesg_warn_level(const struct bci_config *config);

/* run_dir.c: claims ex->run_dir for this boot's image (kernel build, plan): a run folder another
 * image made is kept aside as <run_id>.superseded-N and a new one started. 0, or -errno. */
int bci_run_dir_claim(struct bci_executor *ex);

/* signals.c: blocks the signals and opens ex->signal_fd. */
int bci_signals_setup(struct bci_executor *ex);
/* Restores the default mask and dispositions: between fork and exec (async-signal-safe). */
void bci_signals_reset_child(void);
/*
 * Reads pending signals from ex->signal_fd and reaps every exited child;
 * when @pid exits, stores its wait status in @status and returns 1; else 0.
 */
int bci_signals_dispatch(struct bci_executor *ex, int pid, int *status);
/* Waits for @pid through the signalfd loop (a child that is quick, or killed); its wait status. */
int bci_signals_wait(struct bci_executor *ex, int pid);

/* mounts.c */
int bci_mounts_early(struct bci_executor *ex);       /* /proc /sys /dev /tmp /run */
int bci_mounts_firmware(struct bci_executor *ex);    /* efivarfs, pstore (after kmod) */
bool bci_filesystem_known(const struct bci_executor *ex, const char *fstype);

/* modules.c: libkmod against ROOT/lib/modules/<release>. */
int bci_modules_init(struct bci_executor *ex);
int bci_modules_load(struct bci_executor *ex, const char *name);
int bci_modules_load_with(struct bci_executor *ex, const char *name, const char *options);
int bci_modules_load_configured(struct bci_executor *ex);
void bci_modules_exit(struct bci_executor *ex);

/* partition.c: finds the results partition by LABEL or PARTUUID through libblkid. */
int bci_partition_find(const struct bci_executor *ex, const char *label, const char *partuuid,
		       char *device, size_t size);
/* Waits for it up to results_wait, then mounts it; fills results_device/results_mount. */
int bci_partition_mount_results(struct bci_executor *ex);

/*
 * test_program.c: without a testlist, runs the one configured test program (its output in
 * the run folder). 0 when it ran (or none is configured), BCI_TEST_PROGRAM_CAPPED_NOW when
 * it took the machine down boot_cap times and this boot ended its run instead (it does
 * not run), BCI_TEST_PROGRAM_POWEROFF when it ran and exited with test_poweroff_status
 * (the boot ends in a power-off). -errno when the run could not be recorded.
 */
enum { BCI_TEST_PROGRAM_CAPPED_NOW = 1, BCI_TEST_PROGRAM_POWEROFF = 2 };
int bci_test_program_run(struct bci_executor *ex);

/* kmsg.c: the kernel log. */
int bci_kmsg_open(const struct bci_executor *ex);          /* read fd at the end of the log */
/* A job's kernel log allowance: past @limit bytes, records less severe than @keep_level
 * (0-7) are counted in @dropped instead of copied. */
struct bci_kmsg_budget {
	unsigned long long limit, written, dropped;
	int keep_level;
};
/* Copies pending records (all of them when @budget is NULL); bytes copied, or -errno. */
long bci_kmsg_drain(const struct bci_executor *ex, int kmsg_fd, int out_fd,
		    struct bci_kmsg_budget *budget);
void bci_kmsg_mark(const struct bci_executor *ex, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));              /* "<level>[bootci] ..." */
void bci_sysrq(const struct bci_executor *ex, char command);

/* watchdog.c: the hardware watchdog (watchdog_timeout). */
int bci_watchdog_open(struct bci_executor *ex);
void bci_watchdog_pet(struct bci_executor *ex);
void bci_watchdog_close(struct bci_executor *ex);          /* magic close: orderly ends only */

/* pstore.c: crash records of the previous boot. */
int bci_pstore_load_backends(struct bci_executor *ex);
struct bci_pstore_saved {
	int pstore, efi;           /* records saved (and erased) */
	char crash_names[1024];    /* the records that show a dead kernel, space-separated */
};
/* Saves the pstore and EFI dump records into ex->boot_dir, fsynced, then erases them; sets
 * ex->kernel_crashed and ex->crash_dump. A record that cannot be saved is kept (said on the
 * console). 0 or -errno. */
int bci_pstore_collect(struct bci_executor *ex, struct bci_pstore_saved *saved);

/* boot_record.c: this boot's record in the run folder (boot-NNNN/boot.txt, end.txt). */
/* Creates boot_dir, saves and erases pstore and EFI dump records, writes boot.txt. */
int bci_boot_begin(struct bci_executor *ex);
/* boot_dir/end.txt: how this boot ends (a clean end the next boot can tell from a crash). */
void bci_boot_end(struct bci_executor *ex, const char *how);

/*
 * reserve.c: room kept on the results partition for the records that say what
 * happened when it fills up (a note, the journal lines, aborted.txt, endtime.txt,
 * end.txt). Holding it at the start of a boot also tells a partition already
 * full (ex->results_full set, the reserve given back: the run aborts before
 * its first job, and says why). Releasing it (once, on the first failed write
 * of a result file) sets ex->results_full to @why.
 */
#define BCI_RESERVE_FILE "bootci-reserve"
#define BCI_RESERVE_BYTES (1024 * 1024)
void bci_reserve_hold(struct bci_executor *ex);
void bci_reserve_release(struct bci_executor *ex, const char *why);

/* igt/run.c: the IGT engine: testlist -> igt_runner results directory, resumable. */
int bci_igt_run(struct bci_executor *ex);

/*
 * deploy.c: the deploy mode (mode=deploy): the plan at `deploy` says which
 * known-good disk image to write; salvage, write, verify, re-read the
 * partition table, register the known-good entry, put the salvage back on the
 * new results partition (mounted, as a run's) and record the deploy.
 * 0, or -errno after a bci_error() naming the problem.
 */
int bci_deploy_run(struct bci_executor *ex);
/* @size bytes of @image_fd to the start of @disk_fd, then fsync. 0 or -errno (@err). */
int bci_deploy_write(int image_fd, int disk_fd, unsigned long long size, char *err,
		     size_t err_size);
/* SHA-256 of the first @size bytes of @fd in @hex; -EIO when it is shorter. */
int bci_deploy_digest(int fd, unsigned long long size, char hex[65], char *err, size_t err_size);
/*
 * Reads @size bytes of @disk_fd back past the caches and compares their
 * SHA-256 with @sha256: 0, -EBADMSG when they differ (both digests in @err),
 * -errno when the disk cannot be read.
 */
int bci_deploy_verify(int disk_fd, unsigned long long size, const char *sha256, char *err,
		      size_t err_size);

/* boot.c: one boot of the test machine, from the mounts to the recorded results
 * (the IGT run or the single test); returns how the boot is to end. */
enum bci_ending bci_executor_boot(struct bci_executor *ex);
/* flush, sync, unmount the results, hand over, end the boot; returns only when not PID 1 or on failure. */
/* The hand-over (BootNext) may turn the ending into its fallback: returns the one taken. */
enum bci_ending bci_executor_end(struct bci_executor *ex, enum bci_ending ending);

#endif
