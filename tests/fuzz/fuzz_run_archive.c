// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the run archive's one reader and its rules
 * (lib/run_archive.h), which read every upload (serve), every kept archive
 * (ingest) and every unpacking (the store's cache).
 *
 * An input that starts as a zstd frame is read as an archive; any other is
 * taken as the tar inside one (a damaged or hostile upload can decode to
 * anything), read plain, then compressed into a frame with a 1 KiB window
 * (the reader's ring going back to its start every few KiB) and read again:
 * both readings must agree file for file, byte for byte, and word for word
 * when they refuse. Every file handed out has a safe path and exactly its
 * manifest's size; a refusal says why.
 *
 * The archive is then unpacked by the cache into a scratch folder: it must
 * accept exactly what the reader accepted (and refuse with the reader's
 * words), hold every listed file with its manifest's size and sha256 and
 * nothing else, and leave nothing behind when it refuses. serve's check,
 * with small limits, never accepts what the reader refuses.
 */
#include "../../aggregator/master/serve/validate.h"
#include "../../aggregator/master/store/cache.h"
#include "manifest.h"
#include "run_archive.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a reading said: a hash of every file's path and bytes, how many, how it ended. */
struct reading {
	uint64_t hash;
	size_t files;
	int ret;
	char err[512];
};

static void mix(struct reading *r, const void *bytes, size_t n)
{
	const uint8_t *b = bytes;

	for (size_t i = 0; i < n; i++)
		r->hash = (r->hash ^ b[i]) * 0x100000001b3ull;
}

static void read_all(struct reading *out, int opened, struct bci_run_archive *r)
{
	const struct bci_manifest_file *file;
	char why[256];
	int ret = opened;

	out->hash = 0xcbf29ce484222325ull;
	while (opened == 0 && (ret = bci_run_archive_next(r, &file)) == 1) {
		const void *block;
		uint64_t got = 0;
		size_t n;
		int rc;

		if (!bci_manifest_path_ok(file->path, why, sizeof(why)))
			abort();
		out->files++;
		mix(out, file->path, strlen(file->path) + 1);
		while ((rc = bci_run_archive_data(r, &block, &n)) == 1) {
			/* Every byte read: ASan sees a read outside the buffer. */
			if (n == 0)
				abort();
			mix(out, block, n);
			got += n;
		}
		if (rc < 0) {
			ret = rc;
			break;
		}
		if (got != file->size)
			abort();
	}
	if (opened == 0)
		bci_run_archive_close(r);
	/* Refused, never failed: the input cannot make memory or a read fail here. */
	if (ret != 0 && ret != -EINVAL)
		abort();
	if (ret == -EINVAL && !out->err[0])
		abort();
	out->ret = ret;
}

/* @data as one zstd frame (a 1 KiB window, a checksum, no content size). */
static uint8_t *zstd_frame(const uint8_t *data, size_t size, size_t *out_len)
{
	size_t cap = ZSTD_compressBound(size) + 1024, left;
	uint8_t *packed = malloc(cap);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_inBuffer in = { data, size, 0 };
	ZSTD_outBuffer out = { packed, cap, 0 };

	if (!packed || !c)
		abort();
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 10);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	while (in.pos < in.size)
		if (ZSTD_isError(ZSTD_compressStream2(c, &out, &in, ZSTD_e_continue)))
			abort();
	do {
		left = ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
		if (ZSTD_isError(left))
			abort();
	} while (left);
	ZSTD_freeCCtx(c);
	*out_len = out.pos;
	return packed;
}

static char scratch[64];

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* libFuzzer leaves through exit(): the scratch folder goes with it. */
static void scratch_remove(void)
{
	nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static size_t unpacked_files;

/* Only regular files in the unpacked folder. */
static int only_files(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (type == FTW_D || type == FTW_DP)
		return 0;
	if (type != FTW_F || !S_ISREG(st->st_mode))
		abort();
	unpacked_files++;
	return 0;
}

/* The cache's unpacking of @archive (its bytes at @path) against the reading @read said. */
static void cache_check(const uint8_t *archive, size_t len, const struct reading *read)
{
	char path[PATH_MAX], out[PATH_MAX], err[1024];
	struct bci_run_archive *r;
	struct dirent *d;
	FILE *f;
	DIR *dir;
	int ret, entries = 0;

	if (!scratch[0]) {
		snprintf(scratch, sizeof(scratch), "/tmp/fuzz-run-archive-XXXXXX");
		if (!mkdtemp(scratch))
			abort();
		atexit(scratch_remove);
	}
	snprintf(path, sizeof(path), "%s/input", scratch);
	snprintf(out, sizeof(out), "%s/out", scratch);
	f = fopen(path, "w");
	if (!f || fwrite(archive, 1, len, f) != len || fclose(f) != 0)
		abort();
	ret = bci_cache_extract(path, out, err, sizeof(err));
	/* The same verdict, in the same words (after the archive's name). */
	if ((ret == 0) != (read->ret == 0) || (ret < 0 && !strstr(err, read->err)))
		abort();
	dir = opendir(scratch);
	if (!dir)
		abort();
	while ((d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			entries++;
	closedir(dir);
	if (entries != 1 + (ret == 0))
		abort();
	if (ret == 0) {
		const struct bci_manifest *m;

		/* Every listed file there, with its size and sha256; nothing else. */
		if (bci_run_archive_open(path, NULL, &r, err, sizeof(err)) < 0)
			abort();
		m = bci_run_archive_manifest(r);
		for (size_t i = 0; i < m->file_count; i++) {
			char file[PATH_MAX * 2], hex[BCI_SHA256_HEX_LEN + 1];
			uint64_t size;

			snprintf(file, sizeof(file), "%s/%s", out, m->files[i].path);
			if (bci_sha256_file(file, hex, &size) < 0 || size != m->files[i].size ||
			    strcmp(hex, m->files[i].sha256))
				abort();
		}
		unpacked_files = 0;
		if (nftw(out, only_files, 16, FTW_PHYS) != 0 || unpacked_files != m->file_count)
			abort();
		bci_run_archive_close(r);
		nftw(out, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	struct bci_run_archive_limits limits;
	struct reading plain = { 0 }, packed_reading = { 0 };
	struct bci_run_archive *r;
	const uint8_t *archive = data;
	uint8_t *packed = NULL;
	size_t archive_len = size;
	char err[512];

	int ret;

	if (size >= sizeof(magic) && !memcmp(data, magic, sizeof(magic))) {
		ret = bci_run_archive_open_memory(data, size, NULL, &r, packed_reading.err,
						  sizeof(packed_reading.err));
		read_all(&packed_reading, ret, r);
	} else {
		ret = bci_run_archive_open_plain(data, size, NULL, &r, plain.err, sizeof(plain.err));
		read_all(&plain, ret, r);
		packed = zstd_frame(data, size, &archive_len);
		archive = packed;
		ret = bci_run_archive_open_memory(packed, archive_len, NULL, &r, packed_reading.err,
						  sizeof(packed_reading.err));
		read_all(&packed_reading, ret, r);
		/*
		 * The same verdict, files and bytes; the same words too, but where
		 * the end of the input is met (a plain tar cut short, or a frame
		 * ending inside the tar), which each reading says its own way.
		 */
		if (plain.ret != packed_reading.ret || plain.hash != packed_reading.hash ||
		    plain.files != packed_reading.files ||
		    (strcmp(plain.err, packed_reading.err) && !strstr(plain.err, "cut short")))
			abort();
	}
	cache_check(archive, archive_len, &packed_reading);
	/* serve's check, with small limits: never more than the reader accepts. */
	bci_run_archive_limits_default(&limits);
	limits.max_entries = 64;
	limits.max_unpacked = 1 << 20;
	limits.max_manifest = 64 << 10;
	if (bci_archive_validate_memory(archive, archive_len, &limits, "m1", "r1", err,
					sizeof(err)) == 0 && packed_reading.ret != 0)
		abort();
	free(packed);
	return 0;
}
