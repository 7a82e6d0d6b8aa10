// SPDX-License-Identifier: MIT
/*
 * libarchive, loaded when first called (lazy.h): collect's packing, serve's
 * upload check, the cache's unpacking and ingest's reading of an archive not
 * in collect's form (collect's own form is read by tar_read.c).
 */
#include "lazy.h"

#include "dlopen_note.h"

#include <archive.h>
#include <archive_entry.h>

#define SONAME "libarchive.so.13"

static struct bci_lazy_lib lib = { .soname = SONAME, .package = "libarchive13" };
/* Images that carry the aggregator (the known-good image) carry libarchive for collect. */
BCI_DLOPEN_NOTE(dlopen_note, "[{\"soname\":[\"" SONAME "\"],\"feature\":\"archive\",\"description\":\"collect's packing of a run, serve's upload check, archives not in collect's form\",\"priority\":\"recommended\"}]");

#define ARCHIVE_FUNCTIONS(FN, VOID)                                                         \
	FN(struct archive *, archive_read_new, (void), ())                                  \
	FN(int, archive_read_support_filter_all, (struct archive *a), (a))                  \
	FN(int, archive_read_support_filter_zstd, (struct archive *a), (a))                 \
	FN(int, archive_read_support_format_tar, (struct archive *a), (a))                  \
	FN(int, archive_read_open_filename,                                                 \
	   (struct archive *a, const char *filename, size_t block_size), (a, filename, block_size)) \
	FN(int, archive_read_open_fd, (struct archive *a, int fd, size_t block_size),       \
	   (a, fd, block_size))                                                             \
	FN(int, archive_read_open_memory, (struct archive *a, const void *buff, size_t size), \
	   (a, buff, size))                                                                 \
	FN(int, archive_read_next_header, (struct archive *a, struct archive_entry **entry), \
	   (a, entry))                                                                      \
	FN(la_ssize_t, archive_read_data, (struct archive *a, void *buff, size_t size),     \
	   (a, buff, size))                                                                 \
	FN(int, archive_read_data_block,                                                    \
	   (struct archive *a, const void **buff, size_t *size, la_int64_t *offset),        \
	   (a, buff, size, offset))                                                         \
	FN(int, archive_read_free, (struct archive *a), (a))                                \
	FN(struct archive *, archive_write_new, (void), ())                                 \
	FN(int, archive_write_add_filter_zstd, (struct archive *a), (a))                    \
	FN(int, archive_write_set_format_pax_restricted, (struct archive *a), (a))          \
	FN(int, archive_write_open_fd, (struct archive *a, int fd), (a, fd))                \
	FN(int, archive_write_header, (struct archive *a, struct archive_entry *entry),     \
	   (a, entry))                                                                      \
	FN(la_ssize_t, archive_write_data, (struct archive *a, const void *buff, size_t size), \
	   (a, buff, size))                                                                 \
	FN(int, archive_write_close, (struct archive *a), (a))                              \
	FN(int, archive_write_free, (struct archive *a), (a))                               \
	FN(const char *, archive_error_string, (struct archive *a), (a))                    \
	FN(struct archive_entry *, archive_entry_new, (void), ())                           \
	FN(struct archive_entry *, archive_entry_clear, (struct archive_entry *entry), (entry)) \
	VOID(archive_entry_free, (struct archive_entry *entry), (entry))                    \
	FN(const char *, archive_entry_pathname, (struct archive_entry *entry), (entry))    \
	FN(const char *, archive_entry_hardlink, (struct archive_entry *entry), (entry))    \
	FN(const char *, archive_entry_symlink, (struct archive_entry *entry), (entry))     \
	FN(__LA_MODE_T, archive_entry_filetype, (struct archive_entry *entry), (entry))     \
	FN(la_int64_t, archive_entry_size, (struct archive_entry *entry), (entry))          \
	FN(int, archive_entry_size_is_set, (struct archive_entry *entry), (entry))          \
	VOID(archive_entry_set_pathname, (struct archive_entry *entry, const char *name),  \
	     (entry, name))                                                                 \
	VOID(archive_entry_set_filetype, (struct archive_entry *entry, unsigned int type), \
	     (entry, type))                                                                 \
	VOID(archive_entry_set_perm, (struct archive_entry *entry, __LA_MODE_T perm),      \
	     (entry, perm))                                                                 \
	VOID(archive_entry_set_size, (struct archive_entry *entry, la_int64_t size),       \
	     (entry, size))                                                                 \
	VOID(archive_entry_set_uid, (struct archive_entry *entry, la_int64_t uid), (entry, uid)) \
	VOID(archive_entry_set_gid, (struct archive_entry *entry, la_int64_t gid), (entry, gid)) \
	VOID(archive_entry_set_mtime, (struct archive_entry *entry, time_t sec, long nsec), \
	     (entry, sec, nsec))

BCI_LAZY_SHIMS(bci_lazy_archive, ARCHIVE_FUNCTIONS);
