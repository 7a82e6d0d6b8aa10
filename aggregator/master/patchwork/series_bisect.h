/* SPDX-License-Identifier: MIT */
/*
 * Bisecting a series (patchwork.h, "bisect.c"; the driver and its plan are
 * ../bisect/bisect.h's): the part without a store, a network or a process.
 *
 *   series_mbox.c  a series' mbox (Patchwork's /series/ID/mbox/) split into
 *                  its patches, each with its subject, author and Message-ID:
 *                  a candidate is the mbox cut after its K-th patch; fuzzed
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

#endif
