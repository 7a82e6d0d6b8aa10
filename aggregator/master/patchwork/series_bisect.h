/* SPDX-License-Identifier: MIT */
/*
 * Bisecting a series (patchwork.h, "bisect.c"): the parts without a store,
 * a network or a process, for the driver and its tests.
 *
 *   series_mbox.c  a series' mbox (Patchwork's /series/ID/mbox/) split into
 *                  its patches, each with its subject, author and Message-ID:
 *                  a candidate is the mbox cut after its K-th patch; fuzzed
 *   bisect_plan.c  the next patch count to try from the steps judged so far,
 *                  or the answer, as `git bisect` (with `skip`) would
 */
#ifndef BCI_PATCHWORK_SERIES_BISECT_H
#define BCI_PATCHWORK_SERIES_BISECT_H

#include <stddef.h>

/* ---- series_mbox.c ---- */

/* One message of a series' mbox: bytes [start, end) of it, and three of its headers. */
struct bci_series_patch {
	size_t start, end;
	char *subject;			/* unfolded, its RFC 2047 words decoded (lib/mail_header.h):
					   UTF-8 text; "" when none */
	char *author;			/* the From: header, likewise */
	char *message_id;		/* "<...>" unfolded but as written, or "" when none */
};

/*
 * Splits @len bytes of @text, an mbox (each message from a "From " line at
 * the start of the text or of a line to the next one; LF or CRLF lines),
 * into *@patches (malloc'ed, *@count of them). -EINVAL naming the message
 * for a NUL byte, a text that does not start with "From ", or a message
 * without a blank line after its headers; -ENOMEM.
 */
int bci_series_mbox_split(const char *text, size_t len, struct bci_series_patch **patches,
			  size_t *count, char *err, size_t err_size);
void bci_series_patches_free(struct bci_series_patch *patches, size_t count);

/* ---- bisect_plan.c ---- */

/* What a step found, as the store names it. */
enum bci_bisect_verdict {
	BCI_BISECT_GOOD,		/* the regression is not there */
	BCI_BISECT_BAD,			/* it is, every run */
	BCI_BISECT_SKIPPED,		/* the candidate did not build (git bisect skip) */
	BCI_BISECT_FLAKY,		/* it came and went between runs */
};

/* A step judged: the series applied up to @patches, and what it found. */
struct bci_bisect_known {
	int patches;
	enum bci_bisect_verdict verdict;
};

enum bci_bisect_next {
	BCI_BISECT_TRY,			/* build and run the series up to *@try */
	BCI_BISECT_FOUND,		/* the first bad patch is *@try */
	BCI_BISECT_NOT_REPRODUCED,	/* a step was flaky: no patch is named */
	BCI_BISECT_INCONCLUSIVE,	/* skipped candidates, or the step limit, hide it */
};

/*
 * The next step of a bisection of @patches patches (the base, 0 applied,
 * is good; the whole series, @patches applied, is bad: the tier found it),
 * from the @count steps judged so far, at most @max_steps steps in all:
 * the untried count nearest the middle of the last good and the first bad,
 * skipped counts left out. A flaky step ends it NOT_REPRODUCED; the first
 * bad next to the last good is FOUND; nothing left to try between them, or
 * @max_steps reached, INCONCLUSIVE. @why (may be NULL) says which, in words.
 */
enum bci_bisect_next bci_bisect_plan(int patches, const struct bci_bisect_known *steps,
				     size_t count, int max_steps, int *try, char *why,
				     size_t why_size);

#endif
