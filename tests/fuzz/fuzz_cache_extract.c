// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the store's archive unpacker (aggregator/store/cache.c),
 * which reads run archives from uploads and from disk: any input is
 * unpacked into a scratch folder (16 MiB at most); whatever it accepts must
 * hold only regular files and folders, all inside that folder, and a
 * refused input must leave nothing behind.
 */
#include "../../aggregator/store/cache.h"

#include <dirent.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int only_files_and_dirs(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (type == FTW_D || type == FTW_DP)
		return 0;
	if (type != FTW_F || !S_ISREG(st->st_mode))
		abort();
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* The scratch folder must hold the input file and, when accepted, the output folder: nothing else. */
static void scratch_check(const char *scratch, int accepted)
{
	struct dirent *d;
	DIR *dir = opendir(scratch);
	int entries = 0;

	if (!dir)
		abort();
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		entries++;
		if (strcmp(d->d_name, "input") && strcmp(d->d_name, "out"))
			abort();
	}
	closedir(dir);
	if (entries != 1 + accepted)
		abort();
}

static char scratch[64];

/* libFuzzer leaves through exit(): the scratch folder goes with it. */
static void scratch_remove(void)
{
	nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char input[128], out[128], err[512];
	FILE *f;
	int ret;

	if (!scratch[0]) {
		snprintf(scratch, sizeof(scratch), "/tmp/fuzz-cache-XXXXXX");
		if (!mkdtemp(scratch))
			abort();
		atexit(scratch_remove);
	}
	snprintf(input, sizeof(input), "%s/input", scratch);
	snprintf(out, sizeof(out), "%s/out", scratch);
	f = fopen(input, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	ret = bci_cache_extract(input, out, 16 << 20, err, sizeof(err));
	scratch_check(scratch, ret == 0);
	if (ret == 0) {
		if (nftw(out, only_files_and_dirs, 16, FTW_PHYS) != 0)
			abort();
		nftw(out, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	unlink(input);
	return 0;
}
