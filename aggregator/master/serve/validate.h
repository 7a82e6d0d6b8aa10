/* SPDX-License-Identifier: MIT */
/*
 * What serve accepts as a run archive, checked before anything is kept:
 *
 * - a tar (pax, ustar or GNU), zstd-compressed or not;
 * - its first entry is manifest.json (lib/manifest.h), at most
 *   limits->max_manifest bytes, for the machine and run of the URL;
 * - every other entry is a regular file or a folder at a safe relative path
 *   (bci_manifest_path_ok, an optional leading "./" ignored) of at most
 *   limits->max_path bytes; no symlink, hardlink, device node, FIFO or socket
 *   (a link whose target leaves the run is named as such);
 * - every file is in the manifest with the same size and sha256, once, and
 *   every file of the manifest is in the archive;
 * - at most limits->max_entries entries and limits->max_unpacked bytes once
 *   unpacked, and no more than limits->max_ratio times the archive's own size
 *   once unpacked (past a floor of BCI_ARCHIVE_RATIO_FLOOR): a bomb is
 *   stopped as soon as it crosses a limit, never unpacked in full.
 *
 * Nothing is written anywhere: the archive is only read.
 */
#ifndef BCI_SERVE_VALIDATE_H
#define BCI_SERVE_VALIDATE_H

#include "manifest.h"

#include <stddef.h>
#include <stdint.h>

/* Unpacked bytes always allowed, whatever the ratio (tiny archives of text compress well). */
#define BCI_ARCHIVE_RATIO_FLOOR (64ULL << 20)
/* What one tar entry costs unpacked at least (its header block), for the size limits. */
#define BCI_ARCHIVE_ENTRY_COST 512

struct bci_archive_limits {
	uint64_t max_entries;
	uint64_t max_unpacked;
	uint64_t max_ratio;
	uint64_t max_manifest;
	size_t max_path;
};

/* The defaults that `serve` documents. */
void bci_archive_limits_default(struct bci_archive_limits *limits);

/*
 * Validates the archive in @fd (read from its current offset; @size bytes)
 * as the upload of @machine's run @run_id. Returns 0 and the archive's
 * manifest in *@manifest (the caller's), -EINVAL when the archive is refused
 * (@err says why, naming the entry), or another -errno on a local failure.
 */
int bci_archive_validate_fd(int fd, uint64_t size, const struct bci_archive_limits *limits,
			    const char *machine, const char *run_id, struct bci_manifest **manifest,
			    char *err, size_t err_size);
/* The same over @size bytes in memory (the fuzz target's way in). */
int bci_archive_validate_memory(const void *data, size_t size,
				const struct bci_archive_limits *limits, const char *machine,
				const char *run_id, struct bci_manifest **manifest, char *err,
				size_t err_size);

#endif
