/* SPDX-License-Identifier: MIT */
/*
 * The extract-once cache of run archives: DATA/cache/<sha256>/ holds the
 * unpacked archive whose digest is <sha256> (see bci_store_test_log_open()
 * in store.h for why). Ingest fills it, log fetches read it; any part of it
 * may be deleted and is unpacked again when next needed.
 */
#ifndef BCI_STORE_CACHE_H
#define BCI_STORE_CACHE_H

#include <stddef.h>

/* 1 when @digest is a sha256 in lower-case hex (64 characters): it becomes a file name. */
int bci_cache_digest_valid(const char *digest);

/*
 * Unpacks @archive_path (tar, optionally zstd/gzip/xz compressed) into the
 * new directory @dir: only regular files and directories, relative paths
 * without "..", no links, devices or FIFOs; anything else is refused with
 * the entry named. More than @max_bytes unpacked (0: no limit) is refused
 * (-EFBIG). @dir is created by the call and removed on failure.
 */
int bci_cache_extract(const char *archive_path, const char *dir, unsigned long long max_bytes,
		      char *err, size_t err_size);

/*
 * Puts the cache folder of the archive @archive_path, whose digest is
 * @digest, in @dir (size PATH_MAX), unpacking it first unless it is there.
 * The unpacking goes to a temporary folder renamed when complete, so a
 * concurrent or interrupted one is never seen half-done. Returns 1 when this
 * call unpacked it, 0 when it was there (or another unpacked it first).
 */
int bci_cache_get(const char *data_dir, const char *digest, const char *archive_path, char *dir,
		  char *err, size_t err_size);

#endif
