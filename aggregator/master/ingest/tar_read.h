/* SPDX-License-Identifier: MIT */
/*
 * The run archive as collect writes it (a POSIX ustar/pax tar compressed with
 * zstd, collect/archive.c), read without libarchive: ingest's scan reads 40k
 * members per 10k-job run, and libarchive's work per header (its checksum,
 * the wide-character copy of every path, the entry object) was a sixth of
 * ingest's time.
 *
 * Only that form: regular files and folders, ustar headers, pax extended
 * headers giving a path or a size (and times, owners, which are ignored).
 * Anything else (another compression, a GNU or old tar header, a link, a
 * bad checksum, a truncated or corrupt stream, a pax key it does not know)
 * is -EPROTO, before or after some entries: the caller then reads the whole
 * archive again with libarchive, which reads every form and says what is
 * wrong with the words it always used.
 */
#ifndef BCI_AGGREGATOR_TAR_READ_H
#define BCI_AGGREGATOR_TAR_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bci_tar_read;

/*
 * Opens @path. 0 and *@out; -EPROTO when it is not zstd-compressed (for
 * libarchive); -errno when it cannot be opened or read.
 */
int bci_tar_read_open(const char *path, struct bci_tar_read **out);

/* An uncompressed tar in memory (@data must outlive the reader): the fuzz target's way in. */
int bci_tar_read_open_mem(const void *data, size_t len, struct bci_tar_read **out);

/*
 * The next entry (what is left of the current one is skipped): 1 with its
 * path (valid until the next call), whether it is a folder, and its size;
 * 0 at the end of the archive; -EPROTO (see above), -ENOMEM.
 */
int bci_tar_read_next(struct bci_tar_read *t, const char **path, bool *dir, uint64_t *size);

/* The current entry's bytes, a block at a time: 1 with @data and @len, 0 at its end, -EPROTO. */
int bci_tar_read_data(struct bci_tar_read *t, const void **data, size_t *len);

void bci_tar_read_close(struct bci_tar_read *t);

#endif
