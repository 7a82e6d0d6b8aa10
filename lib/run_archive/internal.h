/* SPDX-License-Identifier: MIT */
/*
 * What the run archive's three files share (lib/run_archive.h is the
 * contract and the format); not for other modules.
 *
 *   read.c    the tar layer: zstd decoded into a ring, headers and pax
 *             records parsed where they lie, entries handed out as they are
 *             (any type: the rules decide), bytes without a copy
 *   check.c   the rules over it: manifest first, limits, safe paths, files
 *             only, each file once with its manifest's size and sha256
 *   write.c   the writer: the manifest, then ustar headers (a pax record
 *             where ustar cannot hold a path or size) and bytes, through
 *             libzstd's streaming compressor
 */
#ifndef BCI_RUN_ARCHIVE_INTERNAL_H
#define BCI_RUN_ARCHIVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the ustar header, as both sides lay it out ---- */

#define TAR_BLOCK		512
#define TAR_NAME		0	/* 100 bytes */
#define TAR_NAME_LEN		100
#define TAR_MODE		100	/* 8 */
#define TAR_UID			108	/* 8 */
#define TAR_GID			116	/* 8 */
#define TAR_SIZE		124	/* 12 */
#define TAR_MTIME		136	/* 12 */
#define TAR_CHECKSUM		148	/* 8 */
#define TAR_TYPE		156	/* 1 */
#define TAR_LINK		157	/* 100 */
#define TAR_MAGIC		257	/* 6, then the version, 2 */
#define TAR_DEV_MAJOR		329	/* 8 */
#define TAR_DEV_MINOR		337	/* 8 */
#define TAR_PREFIX		345	/* 155 */
#define TAR_PREFIX_LEN		155
#define TAR_USTAR		"ustar\0" "00"
#define TAR_USTAR_LEN		8
/* The largest size ustar's 11 octal digits hold; past it a pax "size" record. */
#define TAR_SIZE_OCTAL_MAX	077777777777ULL

#define TAR_TYPE_FILE		'0'
#define TAR_TYPE_PAX		'x'

/* The longest pax extended header read (a path and a size are well under it). */
#define TAR_PAX_MAX		((size_t)64 << 10)
/* The largest zstd window accepted (the writer's is 2 MiB). */
#define RUN_ARCHIVE_WINDOW_MAX	((uint64_t)64 << 20)

/* ---- read.c: the tar layer ---- */

struct bci_tar_reader;

/* One entry as its header (and pax record) says. */
struct bci_tar_entry {
	size_t number;		/* 1 for the first, pax headers not counted */
	const char *path;	/* valid until the next call */
	char type;		/* the typeflag: '0' (or '\0') a regular file, '5' a folder... */
	const char *link;	/* a link's target, "" otherwise; valid until the next call */
	uint64_t size;
};

/*
 * Opens a reader over a zstd-compressed tar in @fd (from its current
 * offset; not closed), in memory (@data outlives the reader), or an
 * uncompressed tar in memory (@plain). Messages go to @err (@err_size),
 * which must outlive the reader. 0; -EINVAL when it is not a zstd frame the
 * reader takes (said in @err); -ENOMEM; -errno reading @fd.
 */
int bci_tar_reader_open_fd(int fd, struct bci_tar_reader **out, char *err, size_t err_size);
int bci_tar_reader_open_memory(const void *data, size_t len, bool plain, struct bci_tar_reader **out,
			   char *err, size_t err_size);

/*
 * The next entry (what is left of the current one passed over: a caller
 * that checks bytes reads them all first). 1 and @e; 0 at the archive's
 * end, once what follows it was checked (zeroes to the end of the frame, its
 * checksum, nothing after it); -EINVAL with @err saying what is wrong
 * (naming the entry by number); -errno.
 */
int bci_tar_reader_next(struct bci_tar_reader *t, struct bci_tar_entry *e);

/*
 * The current entry's bytes, a stretch at a time from the ring (no copy):
 * 1 with @data and @len (at least one byte), 0 at its end, or -EINVAL /
 * -errno as above.
 */
int bci_tar_reader_data(struct bci_tar_reader *t, const void **data, size_t *len);

void bci_tar_reader_close(struct bci_tar_reader *t);

#endif
