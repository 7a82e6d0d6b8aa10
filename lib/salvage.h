/* SPDX-License-Identifier: MIT */
/*
 * The salvage area: where a re-deploy keeps what it saved of a machine's old
 * results partition (the machine's identity, bootci-machine.conf, and its run
 * folders) while it overwrites the disk with the known-good image.
 * executor/deploy_salvage.c writes it and syncs it before the first byte of
 * the image is written, puts it on the new results partition once the image
 * is verified, and only then clears it; a deploy restarted after a power cut
 * finds it there and salvages nothing from the half-written disk. This module
 * is the format's only reader and writer.
 *
 * Where: at the end of the machine's disk, past the image, which never covers
 * it (a disk is bigger than the known-good image, whose backup GPT is the
 * image's own last MiB, not the disk's). The footer is the disk's last whole
 * BCI_SALVAGE_FOOTER_SIZE block (bci_salvage_footer_offset()); the payload
 * lies below it, where the footer says, above the bytes the deploy leaves
 * alone (the image, and the old results partition while it is read).
 *
 * The footer: "key value" lines in this order, then NUL bytes up to
 * BCI_SALVAGE_FOOTER_SIZE:
 *
 *   bootci-salvage 1                  the format and its version
 *   deploy_id deploy-20270115T083000Z-1a2b3c4d
 *                                     the deploy that wrote it (the plan's deploy_id)
 *   machine lab-1                     the plan's machine
 *   payload_offset 403701760          where the payload starts (bytes from the disk's start)
 *   payload_size 5230                 its length in bytes
 *   payload_sha256 <64 lowercase hex> its digest
 *   entries 6                         how many entries it holds
 *   lost 1 runs/big                   what the deploy could not salvage: a count,
 *                                     then the names (space-separated, at most
 *                                     BCI_SALVAGE_LOST_MAX bytes: the count is exact)
 *   footer_sha256 <64 lowercase hex>  the digest of the footer's bytes before this line
 *
 * A block that does not start with "bootci-salvage " is no footer: nothing was
 * saved there, or the area was cleared. One that does but breaks a rule (its
 * own digest, a key out of order, a bad number or name, a payload that does
 * not end at or below the footer) is a damaged one.
 *
 * The payload: entries back to back, each a header line, a file's followed
 * by its bytes:
 *
 *   dir MODE PATH\n
 *   file MODE SIZE PATH\n<SIZE bytes>
 *
 * MODE: permission bits in octal, at most 07777 (bootci-machine.conf is 0600
 * and stays so); SIZE: decimal; PATH: relative to the results partition's
 * root, components separated by one '/', none empty, "." or "..", no control
 * character, at most BCI_SALVAGE_PATH_MAX bytes. The payload holds exactly
 * `entries` entries and ends with the last one.
 *
 * Functions return 0 (or a count) or -errno, with a one-line message in @err
 * where they take one.
 */
#ifndef BCI_SALVAGE_H
#define BCI_SALVAGE_H

#include "sha256.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BCI_SALVAGE_FOOTER_SIZE 4096
#define BCI_SALVAGE_MAGIC "bootci-salvage 1"
#define BCI_SALVAGE_PATH_MAX 1024
/* A deploy id or a machine name: a name of bci_executor_name_check(). */
#define BCI_SALVAGE_WORD_MAX 128
/* The payload starts on a MiB boundary: the disk's own alignment, and room for the footer. */
#define BCI_SALVAGE_ALIGN (1024 * 1024)
#define BCI_SALVAGE_LOST_MAX 1024

/* ---- where ---- */

/* The footer's offset on a disk of @disk_size bytes; 0 when the disk is too small to hold one. */
uint64_t bci_salvage_footer_offset(uint64_t disk_size);

/*
 * The payload's room on a disk of @disk_size bytes whose first @used bytes
 * the area must not touch: [*@start, *@end), *@end being the footer's
 * offset. 0, or -ENOSPC when the disk has no room past @used (then *@start =
 * *@end).
 */
int bci_salvage_room(uint64_t disk_size, uint64_t used, uint64_t *start, uint64_t *end);

/* ---- the footer ---- */

struct bci_salvage_footer {
	char deploy_id[BCI_SALVAGE_WORD_MAX + 1];
	char machine[BCI_SALVAGE_WORD_MAX + 1];
	uint64_t payload_offset, payload_size, entries;
	char payload_sha256[BCI_SHA256_HEX_LEN + 1];
	uint64_t lost;
	char lost_names[BCI_SALVAGE_LOST_MAX + 1];	/* "" when none */
};

/* @f as a footer block in @block (NUL-padded). 0, or -EINVAL when a field would not read back (@err). */
int bci_salvage_footer_format(const struct bci_salvage_footer *f,
			      char block[BCI_SALVAGE_FOOTER_SIZE], char *err, size_t err_size);

/*
 * Reads the footer block @block (@len bytes) found at @footer_offset into @f:
 * 0; -ENOENT when it is no footer; -EBADMSG when it is a damaged one (what
 * is wrong in @err).
 */
int bci_salvage_footer_parse(const char *block, size_t len, uint64_t footer_offset,
			     struct bci_salvage_footer *f, char *err, size_t err_size);

/* ---- the entries ---- */

struct bci_salvage_entry {
	bool dir;
	unsigned mode;
	uint64_t size;				/* a file's bytes; 0 for a folder */
	char path[BCI_SALVAGE_PATH_MAX + 1];
};

/* The longest header line, its newline included. */
#define BCI_SALVAGE_LINE_MAX (BCI_SALVAGE_PATH_MAX + 48)

/* Can @path be an entry's path? 0, or -EINVAL with why in @err. */
int bci_salvage_path_check(const char *path, char *err, size_t err_size);

/* @e's header line (with its newline) into @line: its length, or -EINVAL (@err). */
int bci_salvage_entry_format(const struct bci_salvage_entry *e, char *line, size_t size,
			     char *err, size_t err_size);

/* Parses the header line @line (@len bytes, without its newline) into @e. 0 or -EBADMSG (@err). */
int bci_salvage_entry_parse(const char *line, size_t len, struct bci_salvage_entry *e, char *err,
			    size_t err_size);

/* ---- writing the area on a disk ---- */

/*
 * The payload written at [start, end) of a disk open for writing on @fd,
 * entry by entry; bci_salvage_writer_finish() writes the footer. The bytes
 * past the mark are dropped by a rewind (a run folder that fails half-way
 * is saved whole or not at all).
 */
struct bci_salvage_writer {
	int fd;
	uint64_t start, end;
	uint64_t size, entries;
	struct bci_sha256 sha;
	uint64_t mark_size, mark_entries;
	struct bci_sha256 mark_sha;
};

void bci_salvage_writer_init(struct bci_salvage_writer *w, int fd, uint64_t start, uint64_t end);
/* The room left for more entries, in bytes. */
uint64_t bci_salvage_writer_left(const struct bci_salvage_writer *w);
/* A folder's entry. -ENOSPC when it does not fit, -EINVAL (a path that cannot be one), -errno. */
int bci_salvage_write_dir(struct bci_salvage_writer *w, const char *path, unsigned mode,
			  char *err, size_t err_size);
/*
 * A file's entry, its @size bytes read from @from_fd (from its start). -ENOSPC
 * when it does not fit, -EIO when the file is shorter, -EINVAL, -errno.
 */
int bci_salvage_write_file(struct bci_salvage_writer *w, const char *path, unsigned mode,
			   int from_fd, uint64_t size, char *err, size_t err_size);
void bci_salvage_writer_mark(struct bci_salvage_writer *w);
void bci_salvage_writer_rewind(struct bci_salvage_writer *w);
/*
 * The footer at the room's end: @f's deploy_id, machine, lost and lost_names
 * as the caller set them, the payload's fields filled here. The payload is
 * synced first, then the footer: once this returns 0 the area is durable.
 */
int bci_salvage_writer_finish(struct bci_salvage_writer *w, struct bci_salvage_footer *f,
			      char *err, size_t err_size);

/* Zeroes the footer of the disk of @disk_size bytes on @fd, then fdatasync. 0 or -errno. */
int bci_salvage_clear(int fd, uint64_t disk_size);

/* ---- reading the area from a disk ---- */

/*
 * The footer of the disk of @disk_size bytes on @fd into @f: 0; -ENOENT no
 * footer; -EBADMSG a damaged one (@err); -errno when the disk cannot be read.
 */
int bci_salvage_footer_read(int fd, uint64_t disk_size, struct bci_salvage_footer *f, char *err,
			    size_t err_size);

/* Reads the payload @f describes and checks its digest: 0, -EBADMSG when it differs (@err), -errno. */
int bci_salvage_payload_check(int fd, const struct bci_salvage_footer *f, char *err,
			      size_t err_size);

/*
 * Calls @fn with every entry of the payload @f describes, in order; a file's
 * bytes are @e->size bytes of @fd at @data_offset. Stops at @fn's first
 * non-zero return and returns it; -EBADMSG (@err) when the payload breaks a
 * rule (a bad header, an entry past its end, another count of entries).
 */
typedef int (*bci_salvage_entry_fn)(const struct bci_salvage_entry *e, int fd,
				    uint64_t data_offset, void *ctx);
int bci_salvage_each(int fd, const struct bci_salvage_footer *f, bci_salvage_entry_fn fn,
		     void *ctx, char *err, size_t err_size);

#endif
