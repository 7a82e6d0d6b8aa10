/* SPDX-License-Identifier: MIT */
/*
 * Suspend/resume cycles: one cycle is one job of the IGT engine whose
 * pseudo-binary is `bootci_suspend` and whose single subtest names the cycle.
 * The engine calls bci_suspend_cycle() instead of exec'ing a binary; the
 * cycle speaks the IGT protocol on the job's out.txt like any test, so the
 * journal, resume after a reset and the results generator need nothing new.
 *
 * A cycle's name (the subtest) is `<state>[_<pm_test>]-<NNNN>`, the grammar
 * of lib/testlist.h: the state is written to /sys/power/state (mem sleeps as
 * suspend_mem_sleep says: deep or s2idle); with a pm_test level
 * (/sys/power/pm_test) the kernel goes that far, waits and comes back by
 * itself, no RTC alarm armed. In results.json a cycle is
 * `bootci@suspend@<state>[_<pm_test>]@<NNNN>` (lib/igt_protocol.h).
 *
 * The record of every completed cycle is also appended (fdatasync'ed) to
 * `suspend-cycles.txt` in the run folder, and bci_suspend_summary_write()
 * turns that file into `suspend-summary.txt`: both formats are
 * lib/results_dir.h's.
 */
#ifndef BCI_SUSPEND_H
#define BCI_SUSPEND_H

#include <linux/rtc.h>
#include <stdbool.h>
#include <time.h>

#include "config.h"
#include "igt_protocol.h"
#include "testlist.h"

struct bci_executor;

#define BCI_SUSPEND_BINARY BCI_IGT_SUSPEND_BINARY


/* The PM landmarks of one cycle in the kernel log (seconds of the log's clock; -1 when not seen). */
struct bci_suspend_landmarks {
	double entry;         /* "PM: suspend entry" (or hibernation entry) */
	double marker;        /* the first resume marker after it (low-level resume, s2idle, CPUs up) */
	double exit;          /* "PM: suspend exit" (or hibernation exit) */
	double pm_test_delay; /* pm_test's announced wait ("PM: suspend debug: Waiting for N second(s)") */
};

/* Landmarks before any record: nothing seen. */
#define BCI_SUSPEND_LANDMARKS_INIT { -1, -1, -1, 0 }

/* Reads one /dev/kmsg record ("<prio>,<seq>,<usec>,<flags>;text") into the landmarks; other
 * records, and malformed ones, change nothing. */
void bci_suspend_kmsg_record(struct bci_suspend_landmarks *lm, const char *record);

/* /sys/power/suspend_stats at one moment. */
struct bci_suspend_stats {
	bool valid;              /* the folder was there */
	unsigned long success, fail;
	unsigned long failed_freeze, failed_prepare, failed_suspend, failed_suspend_late,
		failed_suspend_noirq, failed_resume, failed_resume_early, failed_resume_noirq;
	char last_failed_dev[64];
	int last_failed_errno;
	char last_failed_step[32];
};

/* What one cycle did, filled by bci_suspend_cycle(); -1 for a time not known. */
struct bci_suspend_record {
	char cycle[64];
	char result[16];          /* pass fail skip */
	int error;                /* -errno of writing the state, else 0 */
	char why[256];            /* for a fail or skip: the reason, for people */
	char mem_sleep[16];       /* what the cycle set, "" when untouched */
	char wake[32];            /* RTC_WKALM_SET, wakealarm, pm_test, none */
	double wall;              /* the whole cycle (CLOCK_BOOTTIME) */
	double write;             /* the write to /sys/power/state (CLOCK_BOOTTIME) */
	double suspended;         /* growth of CLOCK_BOOTTIME - CLOCK_MONOTONIC across it */
	double latency;           /* write - suspended (- pm_test's wait): suspending plus resuming */
	double kernel_suspend;    /* kernel log: "PM: suspend entry" to the resume marker */
	double kernel_resume;     /* kernel log: the resume marker to "PM: suspend exit" */
	bool watchdog_closed;     /* the watchdog was closed for the cycle and re-armed */
	struct bci_suspend_stats before, after;
	/* The first write to out, err or dmesg that failed (a full partition): its fd and -errno. */
	int output_fd, output_error;
};

/*
 * Runs cycle @cycle: IGT protocol lines to @out_fd, reasons for a failure to
 * @err_fd, and the kernel log of the cycle to @dmesg_fd (the job's dmesg.txt,
 * or -1), copied from a /dev/kmsg reader of its own so that everything the
 * kernel said before the suspend is on disk before it: the engine runs no
 * kmsg capture of its own for this job. Calls sync() before the state is
 * written; closes and re-arms the watchdog as suspend_watchdog says.
 * Returns the IGT exit status (0 pass, 77 skip, 98 fail) with @record
 * filled, or -EINVAL for a bad cycle name (nothing written).
 */
int bci_suspend_cycle(struct bci_executor *ex, const char *cycle, int out_fd, int err_fd,
		      int dmesg_fd, struct bci_suspend_record *record);

/* Reads ROOT/sys/power/suspend_stats; stats->valid false when it is not there. */
void bci_suspend_stats_read(const struct bci_executor *ex, struct bci_suspend_stats *stats);

/*
 * From @run_dir/suspend-cycles.txt, writes @run_dir/suspend-summary.txt
 * (atomically), in the format above. 0 (also when there were no cycles:
 * no file then), or -errno.
 */
int bci_suspend_summary_write(const char *run_dir);

#endif
