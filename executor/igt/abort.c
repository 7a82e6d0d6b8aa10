// SPDX-License-Identifier: MIT
/*
 * When the run stops early, as igt_runner's abort_on says: a kernel tainted
 * by a warning, an oops or a machine check, lockdep switched off, or a stop
 * forced (a signal, the overall timeout, a test that asks for it or will not
 * die). igt_runner's aborted.txt says why and after which job.
 */
#include "igt.h"

#include "config.h"
#include "fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Kernel taint bits that make results untrustworthy: igt_runner's abort-on-taint
 * set (IGT's lib/igt_taints.c). Others (TAINT_TEST from KUnit tests, TAINT_USER,
 * TAINT_FIRMWARE_WORKAROUND that many machines set at boot, module taints) are not.
 */
unsigned long bci_igt_abort_bad_taints(struct bci_executor *ex, unsigned long *all)
{
	const unsigned long bad = (1UL << 4) |  /* TAINT_MACHINE_CHECK */
				  (1UL << 5) |  /* TAINT_BAD_PAGE */
				  (1UL << 7) |  /* TAINT_DIE */
				  (1UL << 9);   /* TAINT_WARN */
	char path[PATH_MAX], *text = NULL;
	unsigned long taints = 0;

	if (bci_path(ex->root, path, "/proc/sys/kernel/tainted") == 0 &&
	    bci_read_file(path, &text, NULL, 64) == 0) {
		taints = strtoul(text, NULL, 10);
		free(text);
	}
	*all = taints;
	return taints & bad;
}

/* Lockdep turns itself off after its first report: later locking bugs go unseen. */
static bool lockdep_off(struct bci_executor *ex)
{
	char path[PATH_MAX], *text = NULL, *p;
	bool off = false;

	if (bci_path(ex->root, path, "/proc/lockdep_stats") < 0 ||
	    bci_read_file(path, &text, NULL, 1 << 16) < 0)
		return false; /* no lockdep in this kernel */
	p = strstr(text, " debug_locks:");
	off = p && strtol(p + strlen(" debug_locks:"), NULL, 10) == 0;
	free(text);
	return off;
}

bool bci_igt_abort_reason(struct bci_executor *ex, const char *forced, char *reason, size_t size)
{
	const char *abort_on = bci_config_get(ex->config, "abort_on");
	unsigned long all, bad = bci_igt_abort_bad_taints(ex, &all);

	reason[0] = '\0';
	if (forced)
		snprintf(reason, size, "%s", forced);
	else if (strstr(abort_on, "taint") && bad)
		snprintf(reason, size, "Kernel badly tainted (%#lx, %#lx) (check dmesg for details)",
			 all, bad);
	else if (strstr(abort_on, "lockdep") && lockdep_off(ex))
		snprintf(reason, size, "Lockdep not active (/proc/lockdep_stats: debug_locks 0)");
	return reason[0] != '\0';
}

int bci_igt_abort(struct bci_executor *ex, struct bci_journal *journal,
		  const struct bci_joblist_entry *after, const char *reason, bool forced)
{
	char text[1024];
	int ret;

	if (after && after->count)
		snprintf(text, sizeof(text), "Aborted after: %s (%s)\n\n%s\n", after->binary,
			 after->subtests[0], reason);
	else if (after)
		snprintf(text, sizeof(text), "Aborted after: %s\n\n%s\n", after->binary, reason);
	else
		snprintf(text, sizeof(text), "Aborted at bootup\n\n%s\n", reason);
	bci_error("aborting the run: %s", reason);
	/* aborted.txt first: a journal that says abort has the reason beside it. */
	bci_igt_rundir_write(ex, BCI_RESULTS_ABORTED, text);
	ret = bci_journal_append(journal, BCI_RUN_JOURNAL_ABORT, 0, forced ? "forced" : "condition");
	return ret < 0 ? ret : 1;
}

int bci_igt_abort_check(struct bci_executor *ex, struct bci_journal *journal,
			const struct bci_joblist_entry *after, const char *forced)
{
	char reason[512];

	if (!bci_igt_abort_reason(ex, forced, reason, sizeof(reason)))
		return 0;
	return bci_igt_abort(ex, journal, after, reason, forced != NULL);
}
