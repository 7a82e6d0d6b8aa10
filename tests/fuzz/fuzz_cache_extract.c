// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the store's archive unpacker (aggregator/master/store/cache.c),
 * which reads run archives from uploads and from disk: any input is
 * unpacked into a scratch folder (16 MiB at most); whatever it accepts must
 * hold only regular files and folders, all inside that folder, and a
 * refused input must leave nothing behind.
 */
#include "../../aggregator/master/store/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
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

/*
 * The listing says what the folder holds: each listed file is there with
 * the listed size and sha256 (the unpacker hashed it on the way); nothing
 * is listed after a failure.
 */
static void listed_check(const char *out, const struct bci_cache_files *files, int unpacked)
{
	if (!unpacked) {
		if (files->count)
			abort();
		return;
	}
	for (size_t i = 0; i < files->count; i++) {
		char path[PATH_MAX], hex[BCI_SHA256_HEX_LEN + 1];
		uint64_t file_size;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", out, files->files[i].path);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || bci_sha256_fd(fd, hex, &file_size) < 0)
			abort();
		close(fd);
		if (file_size != files->files[i].size || strcmp(hex, files->files[i].sha256))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char input[128], out[128], err[512];
	struct bci_cache_files files = { 0 };
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
	/* With the listing ingest uses (each file hashed as written): bci_cache_extract() and more. */
	ret = bci_cache_extract_listed(input, out, 16 << 20, &files, err, sizeof(err));
	listed_check(out, &files, ret == 0);
	bci_cache_files_free(&files);
	scratch_check(scratch, ret == 0);
	if (ret == 0) {
		if (nftw(out, only_files_and_dirs, 16, FTW_PHYS) != 0)
			abort();
		nftw(out, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	unlink(input);
	return 0;
}
