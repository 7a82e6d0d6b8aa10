/* SPDX-License-Identifier: MIT */
/*
 * The extract-once cache of run archives: DATA/cache/<sha256>/ holds the
 * unpacked archive whose digest is <sha256> (see bci_store_test_log_open()
 * in store.h for why). Ingest fills it, log fetches read it; any part of it
 * may be deleted and is unpacked again when next needed.
 */
#ifndef BCI_STORE_CACHE_H
#define BCI_STORE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Unpacks the run archive @archive_path (lib/run_archive.h) into the new
 * directory @dir: the run's files (manifest.json is the reader's), each
 * checked by the archive's one reader and its rules as it is written
 * (a file not in the manifest, another size or sha256, a link, a device,
 * an unsafe path...: refused, the entry named). @dir is created by the call
 * and removed on failure.
 */
int bci_cache_extract(const char *archive_path, const char *dir, char *err, size_t err_size);

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
