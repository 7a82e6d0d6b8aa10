/* SPDX-License-Identifier: MIT */
/*
 * /dev/kmsg records, as the kernel hands them out one per read() and as
 * igt_runner (and bootci's executor) store them in dmesg.txt:
 *
 *   PRIO,SEQ,USEC,FLAGS[,MORE...];TEXT\n
 *    KEY=VALUE\n                      (continuation lines, zero or more)
 *
 * PRIO is facility * 8 + level (level 0 emergency .. 7 debug); SEQ the
 * record's sequence number; USEC the monotonic time in microseconds; FLAGS
 * '-' or 'c' (a continuation fragment, never a warning of its own). The
 * kernel escapes unprintable bytes of TEXT as \xHH. Continuation lines start
 * with a space and are not records.
 *
 * The reader is lenient the way igt_runner's sscanf("%u,%llu,%llu,%c;") is
 * (leading white space and a sign before a number, the flag is whatever
 * character follows the third comma, TEXT follows the first ';'); it is the
 * only parser of these records in bootci. The writers give the record a
 * writer of /dev/kmsg's file stand-in must produce, and igt_runner's readable
 * form "<LEVEL> [SECONDS.MICROS] TEXT" that results.json carries.
 */
#ifndef BCI_KMSG_RECORD_H
#define BCI_KMSG_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

struct bci_kmsg_record {
	unsigned prio;			/* facility * 8 + level */
	unsigned long long seq, usec;
	char flags;			/* '-', 'c', ... */
	const char *text;		/* into the caller's line: after the ';' */
	size_t text_len;		/* to the end of the line (its newline kept) or a NUL */
};

/*
 * Parses the record at @line (@len bytes; a NUL ends it earlier). Returns
 * true with @rec filled, false for a continuation line or anything else.
 */
bool bci_kmsg_record_parse(const char *line, size_t len, struct bci_kmsg_record *rec);

static inline int bci_kmsg_record_level(const struct bci_kmsg_record *rec)
{
	return (int)(rec->prio & 7);
}

/*
 * Formats the record "PRIO,SEQ,USEC,FLAGS;TEXT" into @buf (@text as given,
 * its newline included if it has one). Returns snprintf's count.
 */
int bci_kmsg_record_format(char *buf, size_t size, unsigned prio, unsigned long long seq,
			   unsigned long long usec, char flags, const char *text);

/*
 * igt_runner's readable form of @rec into @out (emptied first):
 * "<LEVEL> [SECONDS.MICROS] TEXT", with the \xHH escapes of printable or
 * white-space characters decoded (sscanf "\\x%2x" leniency). 0 or -ENOMEM.
 */
int bci_kmsg_record_format_readable(struct bci_str *out, const struct bci_kmsg_record *rec);

#endif
