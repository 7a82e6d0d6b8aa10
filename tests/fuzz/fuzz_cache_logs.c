// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the reader of a run's log file (store/cache.h,
 * bci_cache_logs_open): the input is DATA/cache/<digest>.logs as a disk
 * error or a hand could leave it. Any log of jobs 0 to 2 is asked for: the
 * answer is a readable fd, -ENOENT or -ENXIO (the caller then unpacks the
 * archive), never a crash, a hang or a read outside the file.
 */
#include "../../aggregator/master/store/cache.h"

#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define DIGEST "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char base[] = "/tmp/fuzz_cache_logs.XXXXXX";
static char *made;

static void remove_base(void)
{
	bci_remove_tree(made);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const which[] = { "out", "err", "dmesg" };
	char path[PATH_MAX], err[512], buf[4096];
	FILE *f;

	if (!made) {
		made = mkdtemp(base);
		if (!made)
			abort();
		snprintf(path, sizeof(path), "%s/cache", made);
		if (mkdir(path, 0755) < 0)
			abort();
		atexit(remove_base);
	}
	snprintf(path, sizeof(path), "%s/cache/" DIGEST ".logs", made);
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	for (unsigned job = 0; job < 3; job++)
		for (int w = 0; w < 3; w++) {
			int fd = bci_cache_logs_open(made, DIGEST, job, which[w], err, sizeof(err));
			ssize_t n;

			if (fd < 0) {
				if (fd != -ENOENT && fd != -ENXIO && fd != -ENOMEM && fd != -EMFILE)
					abort();
				continue;
			}
			while ((n = read(fd, buf, sizeof(buf))) > 0)
				;
			if (n < 0)
				abort();
			close(fd);
		}
	return 0;
}
