/* SPDX-License-Identifier: MIT */
/*
 * The run archive: one run folder as one file, what collect uploads and the
 * master keeps. A pax tar compressed with zstd, manifest.json first, then
 * every regular file of the folder under "<run>/" in the manifest's (sorted)
 * order; the manifest (manifest.h) gives the size and sha256 of each.
 */
#ifndef BCI_RUN_ARCHIVE_H
#define BCI_RUN_ARCHIVE_H

#include <stddef.h>

struct bci_manifest;

struct bci_run_archive_info {
	const char *machine;
	const char *run;
	const char *bootci_version;
	/*
	 * Adds the firmware's boot entries to the manifest (collect's, on the test
	 * machine), or NULL; -ENODEV from it (no EFI variables) is no error.
	 */
	int (*efi_read)(struct bci_manifest *m);
};

/*
 * Writes @run_dir's files (relative names under "<run>/") and manifest.json
 * as a tar (pax, zstd) at @path, atomically. The file list is sorted and the
 * metadata normalised, so the same folder gives the same archive.
 */
int bci_run_archive_write(const char *run_dir, const char *path,
			  const struct bci_run_archive_info *info, char *err, size_t err_size);

#endif
