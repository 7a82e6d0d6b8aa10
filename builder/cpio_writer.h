/* SPDX-License-Identifier: MIT */
/*
 * Writes a finalized struct builder_spec as a newc cpio archive (the format
 * the kernel unpacks as initramfs), compressed, byte-for-byte reproducible:
 * entries in path order, inode numbers counted from 1 in that order, every
 * mtime the same caller-given value, no host uid/gid/dev/time leaking in.
 */
#ifndef BUILDER_CPIO_WRITER_H
#define BUILDER_CPIO_WRITER_H

#include <stdint.h>

#include "message.h"
#include "cpio_spec.h"

enum builder_compression {
	BUILDER_COMPRESS_ZSTD,
	BUILDER_COMPRESS_XZ,
	BUILDER_COMPRESS_GZIP,
	BUILDER_COMPRESS_NONE,
};

struct builder_cpio_options {
	enum builder_compression compression;
	int64_t mtime;		/* seconds since the epoch, >= 0 */
};

/* "zstd", "xz", "gzip", "none" -> 0, else -EINVAL. */
int builder_compression_parse(const char *name, enum builder_compression *out);

/*
 * SOURCE_DATE_EPOCH: NULL (unset) means 0; otherwise decimal seconds,
 * 0 <= value <= 0xffffffff (newc stores mtime in 32 bits). -EINVAL otherwise.
 */
int builder_epoch_parse(const char *text, int64_t *out);

/*
 * Writes the archive of @spec (finalized) to @fd, which stays open. Returns 0,
 * or -errno with a message in @err ("SPECFILE:LINE: ..." for a bad source file).
 */
int builder_cpio_write_fd(const struct builder_spec *spec, int fd,
			  const struct builder_cpio_options *options, char *err, size_t err_size);

/* The same into @path, atomically: on any error no file (and no temporary) is left. */
int builder_cpio_write_file(const struct builder_spec *spec, const char *path,
			    const struct builder_cpio_options *options, char *err, size_t err_size);

#endif
