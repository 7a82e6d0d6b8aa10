// SPDX-License-Identifier: MIT
/*
 * Fuzz target for ingest's plain reader of run archives (aggregator/master/ingest/tar_read.c):
 * the input is an uncompressed tar, as a damaged or hostile upload could
 * decode to. Every entry and every byte of it is read: the reader says 1, 0
 * or -EPROTO, gives paths that are NUL-terminated ASCII under PATH_MAX and
 * exactly as many bytes as each entry's size, and never reads outside the
 * input, hangs or crashes.
 *
 * The same input is then compressed into a zstd frame with a 1 KiB window
 * and read again from a file, as an upload is: the zstd reader (its ring,
 * going back to its start every few hundred KiB) must say exactly what the
 * reader from memory said, entry for entry and byte for byte.
 */
#include "../../aggregator/master/ingest/tar_read.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a reading said: a hash of every entry's path, kind, size and bytes, and how it ended. */
struct reading {
	uint64_t hash;
	size_t entries;
	int ret;
};

static void mix(struct reading *r, const void *bytes, size_t n)
{
	const uint8_t *b = bytes;

	for (size_t i = 0; i < n; i++)
		r->hash = (r->hash ^ b[i]) * 0x100000001b3ull;
}

static struct reading read_all(struct bci_tar_read *t)
{
	struct reading r = { .hash = 0xcbf29ce484222325ull };
	const char *path;
	bool dir;
	uint64_t entry_size;
	int ret;

	while ((ret = bci_tar_read_next(t, &path, &dir, &entry_size)) == 1) {
		uint64_t got = 0;
		const void *block;
		size_t n, len = strnlen(path, PATH_MAX);
		int rc;

		if (len == 0 || len == PATH_MAX || (dir && entry_size))
			abort();
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)path[i] >= 0x80)
				abort();
		r.entries++;
		mix(&r, path, len + 1);
		mix(&r, &dir, sizeof(dir));
		mix(&r, &entry_size, sizeof(entry_size));
		while ((rc = bci_tar_read_data(t, &block, &n)) == 1) {
			/* Every byte read: ASan sees a read outside the buffer. */
			if (n == 0)
				abort();
			mix(&r, block, n);
			got += n;
		}
		if (rc == 0 && got != entry_size)
			abort();
		if (rc < 0) {
			ret = rc;
			break;
		}
	}
	if (ret != 0 && ret != -EPROTO)
		abort();
	r.ret = ret;
	return r;
}

/* @data as one zstd frame (a 1 KiB window, a checksum) in an unnamed file: its /proc path. */
static bool zstd_file(const uint8_t *data, size_t size, char *path, size_t path_size, int *fd)
{
	size_t cap = ZSTD_compressBound(size), n;
	void *packed = malloc(cap);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	bool ok = false;

	*fd = -1;
	if (!packed || !c)
		abort();
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 10);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
	n = ZSTD_compress2(c, packed, cap, data, size);
	if (ZSTD_isError(n))
		abort();
	*fd = memfd_create("fuzz_tar_read", MFD_CLOEXEC);
	if (*fd >= 0 && write(*fd, packed, n) == (ssize_t)n) {
		snprintf(path, path_size, "/proc/self/fd/%d", *fd);
		ok = true;
	}
	ZSTD_freeCCtx(c);
	free(packed);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_tar_read *t;
	struct reading from_mem, from_zstd;
	char path[64];
	int fd;

	if (bci_tar_read_open_mem(data, size, &t) < 0)
		return 0;
	from_mem = read_all(t);
	bci_tar_read_close(t);
	if (!zstd_file(data, size, path, sizeof(path), &fd)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (bci_tar_read_open(path, &t) < 0)
		abort();
	from_zstd = read_all(t);
	bci_tar_read_close(t);
	close(fd);
	if (from_mem.hash != from_zstd.hash || from_mem.entries != from_zstd.entries ||
	    from_mem.ret != from_zstd.ret)
		abort();
	return 0;
}
