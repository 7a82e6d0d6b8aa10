// SPDX-License-Identifier: MIT
/*
 * Fuzz target for ingest's plain reader of run archives (aggregator/tar_read.c):
 * the input is an uncompressed tar, as a damaged or hostile upload could
 * decode to. Every entry and every byte of it is read: the reader says 1, 0
 * or -EPROTO, gives paths that are NUL-terminated ASCII under PATH_MAX and
 * exactly as many bytes as each entry's size, and never reads outside the
 * input, hangs or crashes.
 */
#include "../../aggregator/tar_read.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned touched;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_tar_read *t;
	const char *path;
	bool dir;
	uint64_t entry_size;
	int ret;

	if (bci_tar_read_open_mem(data, size, &t) < 0)
		return 0;
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
		while ((rc = bci_tar_read_data(t, &block, &n)) == 1) {
			/* Touch the block's ends: ASan sees a read outside the buffer. */
			if (n == 0)
				abort();
			touched += ((const uint8_t *)block)[0] + ((const uint8_t *)block)[n - 1];
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
	bci_tar_read_close(t);
	return 0;
}
