// SPDX-License-Identifier: MIT
/*
 * The kernel's printk clock, as the console stamps its lines on it: the
 * offset from CLOCK_MONOTONIC that kmsg.c measures with every marker it
 * writes, and that console.c reads (and has measured again after a suspend).
 * A leaf both use, so that neither needs the other for it.
 */
#include "executor.h"

static const struct bci_sys *clock_sys = &bci_sys_real;
static struct {
	bool measured;
	long long offset_ns;		/* printk clock - CLOCK_MONOTONIC */
	long long asleep_ns;		/* CLOCK_BOOTTIME - CLOCK_MONOTONIC when measured */
} printk_clock;

void bci_printk_clock_attach(const struct bci_sys *sys)
{
	clock_sys = sys;
}

long long bci_printk_clock_read(clockid_t clock)
{
	struct timespec ts = { 0, 0 };

	clock_sys->clock(clock, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void bci_printk_clock_measured(long long kernel_ns, long long monotonic_ns)
{
	printk_clock.offset_ns = kernel_ns - monotonic_ns;
	printk_clock.asleep_ns = bci_printk_clock_read(CLOCK_BOOTTIME) -
				 bci_printk_clock_read(CLOCK_MONOTONIC);
	printk_clock.measured = true;
}

bool bci_printk_clock_offset(long long *offset_ns, long long *asleep_ns)
{
	*offset_ns = printk_clock.offset_ns;
	*asleep_ns = printk_clock.asleep_ns;
	return printk_clock.measured;
}

void bci_printk_clock_forget(void)
{
	printk_clock.measured = false;
}
