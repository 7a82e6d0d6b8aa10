// SPDX-License-Identifier: MIT
/*
 * The piglit statuses a result can have and what every transition between
 * two of them means (report.h says the rules; the table below is them,
 * written out so that each of the 121 cells can be read and is tested); and
 * the name of each verdict a change gets, as the pages say it.
 */
#include "report.h"

#include <errno.h>
#include <string.h>

static const struct {
	const char *name, *label;
} statuses[BCI_STATUS_COUNT] = {
	[BCI_STATUS_PASS] = { "pass", "PASS" },
	[BCI_STATUS_DMESG_WARN] = { "dmesg-warn", "DMESG-WARN" },
	[BCI_STATUS_WARN] = { "warn", "WARN" },
	[BCI_STATUS_DMESG_FAIL] = { "dmesg-fail", "DMESG-FAIL" },
	[BCI_STATUS_FAIL] = { "fail", "FAIL" },
	[BCI_STATUS_CRASH] = { "crash", "CRASH" },
	[BCI_STATUS_TIMEOUT] = { "timeout", "TIMEOUT" },
	[BCI_STATUS_ABORT] = { "abort", "ABORT" },
	[BCI_STATUS_INCOMPLETE] = { "incomplete", "INCOMPLETE" },
	[BCI_STATUS_SKIP] = { "skip", "SKIP" },
	[BCI_STATUS_NOTRUN] = { "notrun", "NOTRUN" },
};

#define U BCI_CHANGE_UNCHANGED
#define R BCI_CHANGE_REGRESSION
#define F BCI_CHANGE_FIXED
#define W BCI_CHANGE_WARNING
#define N BCI_CHANGE_NEW_TEST
#define X BCI_CHANGE_NOT_RUN

/* transitions[from][to]; columns in enum order: pass dwarn warn dfail fail crash timeout abort incomplete skip notrun */
static const unsigned char transitions[BCI_STATUS_COUNT][BCI_STATUS_COUNT] = {
	/* pass       */ { U, R, R, R, R, R, R, R, R, R, X },
	/* dmesg-warn */ { F, U, W, W, W, W, W, W, W, W, X },
	/* warn       */ { F, W, U, W, W, W, W, W, W, W, X },
	/* dmesg-fail */ { F, W, W, U, W, W, W, W, W, W, X },
	/* fail       */ { F, W, W, W, U, W, W, W, W, W, X },
	/* crash      */ { F, W, W, W, W, U, W, W, W, W, X },
	/* timeout    */ { F, W, W, W, W, W, U, W, W, W, X },
	/* abort      */ { F, W, W, W, W, W, W, U, W, W, X },
	/* incomplete */ { F, W, W, W, W, W, W, W, U, W, X },
	/* skip       */ { F, R, R, R, R, R, R, R, R, U, X },
	/* notrun     */ { N, R, R, R, R, R, R, R, R, N, U },
};

#undef U
#undef R
#undef F
#undef W
#undef N
#undef X

static const char *const changes[BCI_CHANGE_COUNT] = {
	[BCI_CHANGE_UNCHANGED] = "unchanged",
	[BCI_CHANGE_REGRESSION] = "regression",
	[BCI_CHANGE_FIXED] = "fixed",
	[BCI_CHANGE_WARNING] = "warning",
	[BCI_CHANGE_NEW_TEST] = "new test",
	[BCI_CHANGE_NOT_RUN] = "not run",
};

int bci_status_parse(const char *name)
{
	for (int i = 0; name && i < BCI_STATUS_COUNT; i++)
		if (!strcmp(name, statuses[i].name))
			return i;
	return -EINVAL;
}

const char *bci_status_name(enum bci_status status)
{
	return (unsigned)status < BCI_STATUS_COUNT ? statuses[status].name : "?";
}

const char *bci_status_label(enum bci_status status)
{
	return (unsigned)status < BCI_STATUS_COUNT ? statuses[status].label : "?";
}

enum bci_change bci_status_change(enum bci_status from, enum bci_status to)
{
	if ((unsigned)from >= BCI_STATUS_COUNT || (unsigned)to >= BCI_STATUS_COUNT)
		return BCI_CHANGE_UNCHANGED;
	return (enum bci_change)transitions[from][to];
}

const char *bci_change_name(enum bci_change change)
{
	return (unsigned)change < BCI_CHANGE_COUNT ? changes[change] : "?";
}

const char *bci_verdict_name(enum bci_verdict verdict)
{
	static const char *const names[] = {
		[BCI_VERDICT_NEW] = "possible new issue", [BCI_VERDICT_KNOWN] = "known issue",
		[BCI_VERDICT_FLAKY] = "flaky", [BCI_VERDICT_FIXED] = "fixed",
		[BCI_VERDICT_WARNING] = "warning", [BCI_VERDICT_NEW_TEST] = "new test",
		[BCI_VERDICT_NOT_RUN] = "not run",
	};

	return (unsigned)verdict < sizeof(names) / sizeof(names[0]) ? names[verdict] : "?";
}
