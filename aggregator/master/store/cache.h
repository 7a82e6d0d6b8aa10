/* SPDX-License-Identifier: MIT */
/*
 * The extract-once cache of run archives: DATA/cache/<sha256>/ holds the
 * unpacked archive whose digest is <sha256> (see bci_store_test_log_open()
 * in store.h for why). Ingest fills it, log fetches read it; any part of it
 * may be deleted and is unpacked again when next needed.
 */
#ifndef BCI_STORE_CACHE_H
#define BCI_STORE_CACHE_H

#include "arena.h"
#include "manifest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * The check every entry passes before it is unpacked (ingest's stream reader
 * applies it too): @path relative, without "..", "./" and repeated slashes
 * dropped, into @clean. -EINVAL when refused, -ENAMETOOLONG.
 */
int bci_cache_entry_clean(const char *path, char *clean, size_t size);

/* One regular file an unpacking wrote: its path in the archive ("./" dropped), size, sha256. */
struct bci_cache_file {
	char *path;
	uint64_t size;
	char sha256[BCI_SHA256_HEX_LEN + 1];
};

/* The files of one unpacking, in archive order; freed with bci_cache_files_free(). */
struct bci_cache_files {
	struct bci_cache_file *files;
	size_t count, cap;
	/* Set by the caller: the paths come from it, and go with it (freeing keeps it set). */
	struct bci_arena *arena;
	/* Set by the caller too: the paths given live in @arena already, kept as given. */
	bool arena_paths;
};

/* Appends @path, its @size and its sha256 @digest (hex in the list). 0 or -ENOMEM. */
int bci_cache_files_add(struct bci_cache_files *files, const char *path, uint64_t size,
			const unsigned char digest[32]);
void bci_cache_files_free(struct bci_cache_files *files);

/*
 * bci_cache_extract(), listing in *@files (zeroed by the caller, emptied on
 * failure) every file written with the size and sha256 of its bytes.
 */
int bci_cache_extract_listed(const char *archive_path, const char *dir,
			     unsigned long long max_bytes, struct bci_cache_files *files, char *err,
			     size_t err_size);

/*
 * bci_cache_get(), and when this call unpacks the archive (it returns 1),
 * *@files (zeroed by the caller) lists every file written with the size and
 * sha256 of the bytes written, hashed on the way: checking them against a
 * manifest needs no second read. When it returns 0, *@files stays empty.
 */
int bci_cache_get_listed(const char *data_dir, const char *digest, const char *archive_path,
			 char *dir, struct bci_cache_files *files, char *err, size_t err_size);

/*
 * A run's job logs in one file beside the cache folders, DATA/cache/<digest>.logs
 * (cache_logs.c): ingest writes it as it streams the archive (one zstd
 * frame per log, an index at the end), so that a log is opened without
 * unpacking the run. Disposable like the rest of the cache: without it,
 * logs come from the unpacked archive again.
 *
 * Writing: begin (a temporary file), add each job's "out", "err" and
 * "dmesg" (@data/@len, or the whole file @fd when @fd >= 0), then commit
 * (fsync, rename, fsync of the folder) or abort (removed). Both free @w.
 */
struct bci_cache_logs;
int bci_cache_logs_begin(const char *data_dir, const char *digest, struct bci_cache_logs **w,
			 char *err, size_t err_size);
int bci_cache_logs_add(struct bci_cache_logs *w, unsigned job, const char *which, const char *data,
		       size_t len, int fd, char *err, size_t err_size);
/*
 * The file made whole (its index written) and its writeback started, so that
 * commit's fsync finds little left; on failure @w is freed. Commit does it
 * when it was not done.
 */
int bci_cache_logs_finish(struct bci_cache_logs *w, char *err, size_t err_size);
int bci_cache_logs_commit(struct bci_cache_logs *w, char *err, size_t err_size);
void bci_cache_logs_abort(struct bci_cache_logs *w);

/*
 * Job @job's log @which ("out", "err", "dmesg") from the run's log file, as
 * a read-only fd of its own at offset 0 (a memfd holding it). -ENOENT: the
 * file says the job has no such log; -ENXIO: no log file for the run, or one
 * that does not hold together (the caller unpacks the archive instead).
 */
int bci_cache_logs_open(const char *data_dir, const char *digest, unsigned job, const char *which,
			char *err, size_t err_size);

#endif
