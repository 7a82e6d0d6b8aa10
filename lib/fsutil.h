/* SPDX-License-Identifier: MIT */
/*
 * Durable file helpers: every file that bootci replaces is written to a
 * temporary name, fsynced, renamed, and its directory fsynced, so a crash
 * leaves either the old or the new content, never a torn one.
 *
 * All functions return 0 (or a count) on success and -errno on failure.
 */
#ifndef BCI_FSUTIL_H
#define BCI_FSUTIL_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* fsync() the directory holding @path (or @path itself when it is a directory). */
int bci_fsync_dir(const char *path);
int bci_fsync_parent(const char *path);

/* mkdir -p, fsyncing each parent whose entry list changed; @mode for new dirs. */
int bci_mkdir_p(const char *path, mode_t mode);

/*
 * One read() of at most @len bytes, retried while a signal interrupts it:
 * the count read (0 at end of file) or -errno. Every read loop uses it.
 */
ssize_t bci_read_retry(int fd, void *buf, size_t len);

/* Writes @len bytes completely, retrying on EINTR and short writes. */
int bci_write_all(int fd, const void *buf, size_t len);

/*
 * A line file that the machine died writing ends without its newline: cuts
 * that torn last line off @fd (open for writing; its offset is left alone)
 * by truncating the file just after its last newline (to 0 when it has
 * none), then fsyncs it, so that what is appended next starts a line of its
 * own. The number of bytes cut (0: the file was empty or ended in a newline),
 * or -errno.
 */
long long bci_cut_torn_line(int fd);

/* Replaces @path with @len bytes of @data: temp file, fsync, rename, fsync dir. */
int bci_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);

/*
 * Two-step form for writers that stream (libarchive, generators):
 * bci_atomic_open() creates "<path>.tmp.XXXXXX" beside @path and returns its fd,
 * storing the temporary name in @tmp (size PATH_MAX). bci_atomic_commit() fsyncs,
 * closes, renames over @path and fsyncs the directory; bci_atomic_abort() closes
 * and unlinks the temporary, so nothing half-written is left behind.
 */
int bci_atomic_open(const char *path, char *tmp, mode_t mode);
int bci_atomic_commit(int fd, const char *tmp, const char *path);
void bci_atomic_abort(int fd, const char *tmp);
/*
 * Replaces @path atomically with what @write puts on the stream it is given
 * (0 or -errno, its message in @err). On any failure the old @path stays, no
 * temporary is left, and @err names the file.
 */
typedef int (*bci_stream_writer)(FILE *out, const void *ctx, char *err, size_t err_size);
int bci_atomic_write_stream(const char *path, mode_t mode, bci_stream_writer write,
			    const void *ctx, char *err, size_t err_size);

/*
 * Copies the regular file @from to the new file @to (O_EXCL) with @mode, or
 * the source's permission bits when @mode is BCI_COPY_KEEP_MODE; fsyncs it
 * when @sync. On failure *@failed names the path the error is about.
 */
#define BCI_COPY_KEEP_MODE ((mode_t)-1)
int bci_copy_file(const char *from, const char *to, mode_t mode, int sync, const char **failed);

/* rm -rf @path without following symlinks; a missing @path is fine. */
int bci_remove_tree(const char *path);

/* Reads a whole (small) file into a NUL-terminated malloc'ed buffer owned by the caller. */
int bci_read_file(const char *path, char **out, size_t *len, size_t max);

#endif
