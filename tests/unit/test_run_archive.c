// SPDX-License-Identifier: MIT
/*
 * lib/run_archive: the writer and the reader side by side. What the writer
 * writes reads back file for file and byte for byte; the archives deployed
 * collects wrote with libarchive read too (a committed sample), and are the
 * same tar but for the pax header's own names; every refusal names its
 * entry and what is wrong, in the same words whether the tar comes
 * compressed or plain; the reader's ring survives windows much smaller than
 * the archive.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fsutil.h"
#include "manifest.h"
#include "run_archive.h"
#include "sha256.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define TAR_MAX ((size_t)16 << 20)

static const char *source_dir(void)
{
	const char *src = getenv("SRC");

	return src && *src ? src : ".";
}

/* ---- a tar built by hand: every field under the test's control ---- */

struct tar {
	unsigned char *data;
	size_t len;
};

static void tar_init(struct tar *t)
{
	t->data = calloc(1, TAR_MAX);
	assert_non_null(t->data);
	t->len = 0;
}

static void octal(unsigned char *field, size_t width, uint64_t value)
{
	snprintf((char *)field, width, "%0*llo", (int)width - 1, (unsigned long long)value);
}

/* One header block, its checksum computed unless @checksum says otherwise ("keep": as given). */
static unsigned char *tar_header(struct tar *t, const char *name, const char *prefix, char type,
				 uint64_t size, const char *link, const char *magic)
{
	unsigned char *h = t->data + t->len;
	unsigned sum = 0;

	assert_true(t->len + 512 <= TAR_MAX);
	memset(h, 0, 512);
	memcpy(h, name, strnlen(name, 100));
	octal(h + 100, 8, 0644);
	octal(h + 108, 8, 0);
	octal(h + 116, 8, 0);
	octal(h + 124, 12, size);
	octal(h + 136, 12, 1700000000);
	memset(h + 148, ' ', 8);
	h[156] = (unsigned char)type;
	if (link)
		memcpy(h + 157, link, strnlen(link, 100));
	memcpy(h + 257, magic ? magic : "ustar\0" "00", 8);
	if (prefix)
		memcpy(h + 345, prefix, strnlen(prefix, 155));
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	t->len += 512;
	return h;
}

static void tar_bytes(struct tar *t, const void *data, size_t len)
{
	assert_true(t->len + len + 512 <= TAR_MAX);
	memcpy(t->data + t->len, data, len);
	t->len += (len + 511) / 512 * 512;
}

/* A pax extended header of @records ("<len> key=value\n" each, already formed). */
static void tar_pax(struct tar *t, const char *records)
{
	tar_header(t, "PaxHeader/x", NULL, 'x', strlen(records), NULL, NULL);
	tar_bytes(t, records, strlen(records));
}

/* A pax record for @key=@value. */
static const char *pax_record(char *buf, const char *key, const char *value)
{
	size_t base = strlen(key) + strlen(value) + 3, len = base + 1;

	while ((size_t)snprintf(NULL, 0, "%zu", len) + base != len)
		len++;
	sprintf(buf, "%zu %s=%s\n", len, key, value);
	return buf;
}

/* A regular file; a path that does not fit ustar's name goes in a pax record. */
static void tar_file(struct tar *t, const char *path, const void *data, size_t len)
{
	if (strlen(path) > 100) {
		char *record = malloc(strlen(path) + 32);

		tar_pax(t, pax_record(record, "path", path));
		free(record);
	}
	tar_header(t, path, NULL, '0', len, NULL, NULL);
	tar_bytes(t, data, len);
}

/* The end: two blocks of zeroes (whatever a test cut off there before). */
static void tar_end(struct tar *t)
{
	memset(t->data + t->len, 0, 1024);
	t->len += 1024;
}

/* ---- manifests ---- */

struct listed {
	const char *path;
	const void *data;
	size_t len;
};

/* manifest.json for machine m1's run r1 listing @files. */
static char *manifest_text(const struct listed *files, size_t count)
{
	size_t cap = 4096, len;
	char *text;

	for (size_t i = 0; i < count; i++)
		cap += strlen(files[i].path) + 200;
	text = malloc(cap);

	assert_non_null(text);
	len = (size_t)snprintf(text, cap,
		"{\"format\": \"bootci-manifest\", \"format_version\": 1, \"run_id\": \"r1\", "
		"\"image_id\": \"\", \"machine\": \"m1\", \"kernel\": \"\", \"cmdline\": \"\", "
		"\"versions\": {\"igt\": \"\", \"bootci\": \"\"}, \"boots\": {}, "
		"\"efi\": {\"boot_current\": null, \"boot_order\": [], \"entries\": []}, \"files\": [");
	for (size_t i = 0; i < count; i++) {
		unsigned char digest[BCI_SHA256_SIZE];
		char hex[BCI_SHA256_HEX_LEN + 1];

		bci_sha256_bytes(files[i].data, files[i].len, digest);
		bci_sha256_hex(digest, hex);
		assert_true(len + strlen(files[i].path) + 200 < cap);
		len += (size_t)snprintf(text + len, cap - len,
					"%s{\"path\": \"%s\", \"size\": %zu, \"sha256\": \"%s\"}",
					i ? ", " : "", files[i].path, files[i].len, hex);
	}
	snprintf(text + len, cap - len, "]}");
	return text;
}

/* A tar of manifest.json listing @files, and nothing else yet. */
static void tar_manifest(struct tar *t, const struct listed *files, size_t count)
{
	char *m = manifest_text(files, count);

	tar_init(t);
	tar_file(t, "manifest.json", m, strlen(m));
	free(m);
}

/* A tar of manifest.json (listing @files) and @files, without its end. */
static void tar_run(struct tar *t, const struct listed *files, size_t count)
{
	tar_manifest(t, files, count);
	for (size_t i = 0; i < count; i++)
		tar_file(t, files[i].path, files[i].data, files[i].len);
}

/*
 * @data as one zstd frame (a checksum, a window of 2^@window_log bytes),
 * streamed: the size unknown to the compressor, the window stays as asked.
 */
static unsigned char *zstd_frame(const void *data, size_t len, int window_log, size_t *out_len)
{
	size_t cap = ZSTD_compressBound(len) + 1024, left;
	unsigned char *out = malloc(cap);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_inBuffer in = { data, len, 0 };
	ZSTD_outBuffer o;

	assert_non_null(out);
	assert_non_null(c);
	o = (ZSTD_outBuffer){ out, cap, 0 };
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3)));
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, window_log)));
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
	while (in.pos < in.size)
		assert_false(ZSTD_isError(ZSTD_compressStream2(c, &o, &in, ZSTD_e_continue)));
	do {
		left = ZSTD_compressStream2(c, &o, &in, ZSTD_e_end);
		assert_false(ZSTD_isError(left));
	} while (left);
	*out_len = o.pos;
	ZSTD_freeCCtx(c);
	return out;
}

/* ---- reading ---- */

/* Every file and byte: 0 or the first error; *@hash mixes paths and bytes, *@files counts. */
static int read_all(struct bci_run_archive *r, uint64_t *hash, size_t *files)
{
	const struct bci_manifest_file *file;
	int ret;

	*hash = 0xcbf29ce484222325ull;
	*files = 0;
	while ((ret = bci_run_archive_next(r, &file)) == 1) {
		const void *block;
		uint64_t got = 0;
		size_t n;

		for (const char *p = file->path; *p; p++)
			*hash = (*hash ^ (unsigned char)*p) * 0x100000001b3ull;
		while ((ret = bci_run_archive_data(r, &block, &n)) == 1) {
			for (size_t i = 0; i < n; i++)
				*hash = (*hash ^ ((const unsigned char *)block)[i]) * 0x100000001b3ull;
			got += n;
		}
		if (ret < 0)
			return ret;
		assert_int_equal(got, file->size);
		(*files)++;
	}
	return ret;
}

/* The verdict on @t, plain and compressed (the same, word for word): 0 or -EINVAL with *@err. */
static int verdict(const struct tar *t, const struct bci_run_archive_limits *limits, char *err,
		   size_t err_size)
{
	char plain_err[512] = "", zstd_err[512] = "";
	uint64_t plain_hash = 0, zstd_hash = 0;
	size_t plain_files = 0, zstd_files = 0, packed_len;
	unsigned char *packed = zstd_frame(t->data, t->len, 17, &packed_len);
	struct bci_run_archive *r;
	int plain, zstd;

	plain = bci_run_archive_open_plain(t->data, t->len, limits, &r, plain_err, sizeof(plain_err));
	if (plain == 0) {
		plain = read_all(r, &plain_hash, &plain_files);
		bci_run_archive_close(r);
	}
	zstd = bci_run_archive_open_memory(packed, packed_len, limits, &r, zstd_err, sizeof(zstd_err));
	if (zstd == 0) {
		zstd = read_all(r, &zstd_hash, &zstd_files);
		bci_run_archive_close(r);
	}
	free(packed);
	if (plain != zstd || strcmp(plain_err, zstd_err) || plain_hash != zstd_hash ||
	    plain_files != zstd_files)
		fail_msg("plain: %d '%s'; zstd: %d '%s'", plain, plain_err, zstd, zstd_err);
	snprintf(err, err_size, "%s", plain_err);
	return plain;
}

/* @t (ended here) refused with a message holding @message. */
static void refused(struct tar *t, const struct bci_run_archive_limits *limits, const char *message)
{
	char err[512];
	int ret;

	tar_end(t);
	ret = verdict(t, limits, err, sizeof(err));
	if (ret != -EINVAL)
		fail_msg("%d '%s', expected a refusal saying '%s'", ret, err, message);
	if (!strstr(err, message))
		fail_msg("'%s' does not say '%s'", err, message);
	free(t->data);
}

/* ---- the writer and the reader ---- */

struct folder {
	char root[64];
};

static void put(const struct folder *f, const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX], *slash;
	struct timespec times[2] = { { 1700000000, 0 }, { 1700000000, 0 } };

	snprintf(path, sizeof(path), "%s/%s", f->root, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	assert_int_equal(bci_mkdir_p(path, 0755), 0);
	*slash = '/';
	assert_int_equal(bci_write_file_atomic(path, data, len, 0644), 0);
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

static void folder_make(struct folder *f)
{
	snprintf(f->root, sizeof(f->root), "/tmp/test_run_archive.XXXXXX");
	assert_non_null(mkdtemp(f->root));
}

/* Every file of the archive at @path against the folder's copy, byte for byte. */
static size_t matches_folder(const char *path, const struct folder *f)
{
	const struct bci_manifest_file *file;
	struct bci_run_archive *r;
	char err[512];
	size_t files = 0;
	int ret;

	ret = bci_run_archive_open(path, NULL, &r, err, sizeof(err));
	if (ret)
		fail_msg("%s: %s", path, err);
	while ((ret = bci_run_archive_next(r, &file)) == 1) {
		char disk[PATH_MAX], *bytes = NULL;
		size_t len = 0, got = 0, n;
		const void *block;

		snprintf(disk, sizeof(disk), "%s/%s", f->root, file->path);
		assert_int_equal(bci_read_file(disk, &bytes, &len, 64 << 20), 0);
		assert_int_equal(len, file->size);
		while ((ret = bci_run_archive_data(r, &block, &n)) == 1) {
			assert_true(got + n <= len);
			assert_memory_equal(block, bytes + got, n);
			got += n;
		}
		assert_int_equal(ret, 0);
		assert_int_equal(got, len);
		free(bytes);
		files++;
	}
	if (ret)
		fail_msg("%s: %s", path, err);
	bci_run_archive_close(r);
	return files;
}

static void folder_remove(struct folder *f)
{
	bci_remove_tree(f->root);
}

/* The sample's folder, as tests/unit/data/run-archive-libarchive.tar.zst was written from it. */
static void sample_folder(struct folder *f)
{
	static const struct { const char *path, *text; } files[] = {
		{ "bootci-identity.txt", "kernel 6.1.0-test #1 SMP\nimage test-6.1\n" },
		{ "metadata.txt", "abort_mask : 0\ndmesg_warn_level : 4\n" },
		{ "joblist.txt", "igt_a basic\nigt_b crash\n" },
		{ "uname.txt", "Linux lab 6.1.0-test #1 SMP x86_64 GNU/Linux\n" },
		{ "starttime.txt", "1700000000.000000\n" },
		{ "0/journal.txt", "basic\nexit:0 (1.500s)\n" },
		{ "0/out.txt", "IGT-Version: 1.28\nStarting subtest: basic\nSubtest basic: SUCCESS (1.500s)\n" },
		{ "0/err.txt", "a note on stderr\n" },
		{ "0/dmesg.txt", "" },
		{ "1/journal.txt", "crash\n" },
		{ "1/out.txt", "IGT-Version: 1.28\nStarting subtest: crash\n" },
		{ "1/err.txt", "" },
		{ "1/dmesg.txt", "" },
		{ "boot-0001/boot.txt", "boot 1\nboot_id x\ntime 1700000000\nkernel 6.1.0-test\n"
			"cmdline console=ttyS0 quiet\nprevious none (first boot of the run)\n"
			"pstore_records 0\nefi_dump_variables 0\n" },
		{ "boot-0002/boot.txt", "boot 2\nboot_id y\ntime 1700000100\nkernel 6.1.0-test\n"
			"cmdline console=ttyS0 quiet\nprevious kernel crash (pstore: dmesg-efi_pstore-1)\n"
			"pstore_records 1\n" },
		{ "boot-0002/pstore/dmesg-efi_pstore-1", "Kernel panic - not syncing\n" },
		{ "boot-0002/end.txt", "run finished\n" },
		{ "notes/empty.txt", "" },
		{ "notes/prefix-part-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"
		  "name-part-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.txt",
		  "split between prefix and name\n" },
	};
	char big[3000], longname[200];

	folder_make(f);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		put(f, files[i].path, files[i].text, strlen(files[i].text));
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = "abcdefghijklmnop\n"[(i * 7 + i / 13) % 17];
	put(f, "notes/blocks.txt", big, sizeof(big));
	memset(longname, 'c', 150);
	snprintf(longname + 150, sizeof(longname) - 150, ".txt");
	{
		char path[256];

		snprintf(path, sizeof(path), "notes/%s", longname);
		put(f, path, "a pax path\n", 11);
	}
}

static unsigned char *decompress(const char *path, size_t *len)
{
	char *packed = NULL;
	size_t packed_len = 0;
	unsigned char *out = malloc(TAR_MAX);

	assert_non_null(out);
	assert_int_equal(bci_read_file(path, &packed, &packed_len, TAR_MAX), 0);
	*len = ZSTD_decompress(out, TAR_MAX, packed, packed_len);
	assert_false(ZSTD_isError(*len));
	free(packed);
	return out;
}

/*
 * The sample from a deployed collect (libarchive's writer) reads; the writer
 * writes the same tar for the same folder but for the two header blocks of
 * the entry a pax record names (libarchive names its 'PaxHeader/' entry and
 * fills that entry's ustar fields in its own way: readers take the pax path).
 */
static void test_libarchive_sample(void **state)
{
	struct bci_run_archive_info info = { .machine = "lab-1", .run = "deployed-1",
					     .bootci_version = "0.1" };
	char sample[PATH_MAX], ours[PATH_MAX], err[512];
	unsigned char *theirs_tar, *ours_tar;
	size_t theirs_len, ours_len, differ = 0;
	struct bci_run_archive *r;
	struct folder f;

	(void)state;
	snprintf(sample, sizeof(sample), "%s/tests/unit/data/run-archive-libarchive.tar.zst",
		 source_dir());
	sample_folder(&f);
	assert_int_equal(matches_folder(sample, &f), 21);
	assert_int_equal(bci_run_archive_open(sample, NULL, &r, err, sizeof(err)), 0);
	assert_string_equal(bci_run_archive_manifest(r)->machine, "lab-1");
	assert_string_equal(bci_run_archive_manifest(r)->run_id, "deployed-1");
	bci_run_archive_close(r);

	snprintf(ours, sizeof(ours), "%s.tar.zst", f.root);
	assert_int_equal(bci_run_archive_write(f.root, ours, &info, err, sizeof(err)), 0);
	assert_int_equal(matches_folder(ours, &f), 21);
	theirs_tar = decompress(sample, &theirs_len);
	ours_tar = decompress(ours, &ours_len);
	assert_int_equal(ours_len, theirs_len);
	for (size_t at = 0; at < ours_len; at += 512)
		if (memcmp(ours_tar + at, theirs_tar + at, 512)) {
			/* The pax header, then its entry's ustar header. */
			assert_int_equal(ours_tar[at + 156], differ ? '0' : 'x');
			assert_int_equal(theirs_tar[at + 156], differ ? '0' : 'x');
			differ++;
		}
	assert_int_equal(differ, 2);
	free(theirs_tar);
	free(ours_tar);
	unlink(ours);
	folder_remove(&f);
}

/*
 * The writer's archive reads back file for file (paths in ustar's name, its
 * prefix, a pax record; not ASCII; empty; many blocks; larger than the
 * window); the same folder gives the same bytes; libarchive reads it too.
 */
static void test_round_trip(void **state)
{
	struct bci_run_archive_info info = { .machine = "m1", .run = "r1", .bootci_version = "0.1" };
	char path[PATH_MAX], again[PATH_MAX], err[512], long_path[400], *a = NULL, *b = NULL;
	size_t a_len = 0, b_len = 0, big_len = (size_t)5 << 20, entries = 0;
	unsigned char *big = malloc(big_len);
	struct archive_entry *e;
	struct archive *la;
	struct folder f;
	int ret;

	(void)state;
	assert_non_null(big);
	/* Text-like without a short period: zstd works, the ring wraps. */
	for (size_t i = 0, x = 12345; i < big_len; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		big[i] = (unsigned char)('a' + (x >> 60));
	}
	folder_make(&f);
	put(&f, "0/out.txt", "IGT-Version: 1.28\n", 18);
	put(&f, "0/dmesg.txt", "", 0);
	put(&f, "big.bin", big, big_len);
	put(&f, "caf\xc3\xa9/\xe2\x9c\x93.txt", "not ASCII\n", 10);
	snprintf(long_path, sizeof(long_path), "%0120d/%s", 7, "a-file-name-of-some-length.txt");
	put(&f, long_path, "prefix and name\n", 16);
	memset(long_path, 'v', 200);
	long_path[200] = '\0';
	put(&f, long_path, "pax\n", 4);
	snprintf(path, sizeof(path), "%s.tar.zst", f.root);
	snprintf(again, sizeof(again), "%s.again.tar.zst", f.root);
	assert_int_equal(bci_run_archive_write(f.root, path, &info, err, sizeof(err)), 0);
	assert_int_equal(matches_folder(path, &f), 6);
	assert_int_equal(bci_run_archive_write(f.root, again, &info, err, sizeof(err)), 0);
	assert_int_equal(bci_read_file(path, &a, &a_len, 64 << 20), 0);
	assert_int_equal(bci_read_file(again, &b, &b_len, 64 << 20), 0);
	assert_int_equal(a_len, b_len);
	assert_memory_equal(a, b, a_len);
	free(a);
	free(b);

	la = archive_read_new();
	archive_read_support_filter_zstd(la);
	archive_read_support_format_tar(la);
	assert_int_equal(archive_read_open_filename(la, path, 65536), ARCHIVE_OK);
	/* (A path not in the locale's characters is a warning.) */
	while ((ret = archive_read_next_header(la, &e)) == ARCHIVE_OK || ret == ARCHIVE_WARN) {
		assert_int_equal(archive_entry_filetype(e), AE_IFREG);
		entries++;
	}
	assert_int_equal(entries, 7);
	archive_read_free(la);

	/* A file that is not a file or a folder: named, nothing left. */
	snprintf(again, sizeof(again), "%s/0/link", f.root);
	assert_int_equal(symlink("/etc/passwd", again), 0);
	unlink(path);
	assert_true(bci_run_archive_write(f.root, path, &info, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "0/link"));
	assert_int_equal(access(path, F_OK), -1);
	snprintf(again, sizeof(again), "%s.again.tar.zst", f.root);
	unlink(again);
	free(big);
	folder_remove(&f);
}

/*
 * Megabytes of files through windows much smaller than the archive: the
 * ring goes back to its start many times, with headers, pax records and
 * files' bytes cut at its end, and reads as the plain tar does.
 */
static void test_ring_wraps(void **state)
{
	enum { COUNT = 2600 };
	static struct listed files[COUNT];
	static char paths[COUNT][700];
	static const int window_logs[] = { 10, 14, 17 };
	unsigned char *bytes = malloc(300000);
	struct tar t;
	char err[512];
	uint64_t plain_hash, hash;
	size_t plain_files, n;
	struct bci_run_archive *r;

	(void)state;
	assert_non_null(bytes);
	for (size_t i = 0, x = 99; i < 300000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		bytes[i] = (unsigned char)('a' + (x >> 60));
	}
	for (size_t i = 0; i < COUNT; i++) {
		/* Every third a pax path of two blocks, which the reader wants whole. */
		if (i % 3 == 1)
			snprintf(paths[i], sizeof(paths[i]), "%zu/%0250zu/%0250zu.txt", i % 50, i, i);
		else
			snprintf(paths[i], sizeof(paths[i]), "%zu/out-%zu.txt", i % 50, i);
		files[i] = (struct listed){ paths[i], bytes + i % 7, (i * 131) % 2900 };
	}
	files[COUNT / 2].len = 290000;
	tar_run(&t, files, COUNT);
	tar_end(&t);
	assert_int_equal(bci_run_archive_open_plain(t.data, t.len, NULL, &r, err, sizeof(err)), 0);
	assert_int_equal(read_all(r, &plain_hash, &plain_files), 0);
	assert_int_equal(plain_files, COUNT);
	bci_run_archive_close(r);
	for (size_t w = 0; w < sizeof(window_logs) / sizeof(window_logs[0]); w++) {
		unsigned char *packed = zstd_frame(t.data, t.len, window_logs[w], &n);

		assert_int_equal(bci_run_archive_open_memory(packed, n, NULL, &r, err, sizeof(err)), 0);
		assert_int_equal(read_all(r, &hash, &plain_files), 0);
		assert_int_equal(plain_files, COUNT);
		assert_true(hash == plain_hash);
		bci_run_archive_close(r);
		free(packed);
	}
	free(t.data);
	free(bytes);
}

/* ---- refusals: each names its entry and what is wrong ---- */

/* A header's size field in base-256 (its checksum made again). */
static void base256(unsigned char *h)
{
	unsigned sum = 0;

	memset(h + 124, 0, 12);
	h[124] = 0x80;
	h[135] = 1;
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static const struct listed one[] = { { "d/a", "a", 1 } };

static void test_refused_headers(void **state)
{
	struct tar t;
	char record[128];

	(void)state;
	/* The good one, for a start. */
	tar_run(&t, one, 1);
	tar_end(&t);
	{
		char err[512];

		assert_int_equal(verdict(&t, NULL, err, sizeof(err)), 0);
		free(t.data);
	}
	tar_run(&t, one, 1);
	tar_header(&t, "d/b", NULL, '0', 0, NULL, "ustar  \0");
	refused(&t, NULL, "entry 3: a GNU tar header");
	tar_run(&t, one, 1);
	tar_header(&t, "d/b", NULL, '0', 0, NULL, "\0\0\0\0\0\0\0\0");
	refused(&t, NULL, "entry 3: not a POSIX ustar header");
	tar_run(&t, one, 1);
	tar_header(&t, "d/b", NULL, '0', 0, NULL, NULL)[0] = 'e';
	refused(&t, NULL, "entry 3: not a tar header (its checksum does not match)");
	tar_run(&t, one, 1);
	base256(tar_header(&t, "d/b", NULL, '0', 0, NULL, NULL));
	refused(&t, NULL, "entry 3: a size in base-256");
	/* Unless a pax size stands for it (what a writer may do past 8 GiB). */
	tar_manifest(&t, one, 1);
	tar_pax(&t, pax_record(record, "size", "1"));
	base256(tar_header(&t, "d/a", NULL, '0', 0, NULL, NULL));
	tar_bytes(&t, "a", 1);
	tar_end(&t);
	{
		char err[512];

		if (verdict(&t, NULL, err, sizeof(err)))
			fail_msg("a pax size over a base-256 field: %s", err);
		free(t.data);
	}
	tar_run(&t, one, 1);
	tar_header(&t, "global", NULL, 'g', 0, NULL, NULL);
	refused(&t, NULL, "entry 3: a pax global header");
	tar_run(&t, one, 1);
	tar_pax(&t, pax_record(record, "SCHILY.xattr.user.x", "1"));
	tar_header(&t, "d/b", NULL, '0', 0, NULL, NULL);
	refused(&t, NULL, "entry 3: a pax record 'SCHILY.xattr.user.x'");
	tar_run(&t, one, 1);
	tar_pax(&t, "8 path=x\n");
	tar_header(&t, "d/b", NULL, '0', 0, NULL, NULL);
	refused(&t, NULL, "entry 3: a malformed pax record");
	tar_run(&t, one, 1);
	tar_pax(&t, pax_record(record, "path", "d/b"));
	tar_pax(&t, pax_record(record, "path", "d/c"));
	refused(&t, NULL, "entry 3: two pax headers");
	tar_run(&t, one, 1);
	tar_pax(&t, pax_record(record, "path", "d/b"));
	refused(&t, NULL, "entry 3: a pax header and no entry after it");
	/* Past the end: only zeroes. */
	tar_run(&t, one, 1);
	tar_end(&t);
	t.data[t.len + 100] = 'x';
	t.len += 512;
	refused(&t, NULL, "bytes after the tar's end (entry 2 was the last)");
	/* Cut in a file's bytes: the plain tar and the zstd frame each say so. */
	{
		static const char text[600];
		char err[512];
		unsigned char *packed;
		size_t n, files;
		struct bci_run_archive *r;
		uint64_t hash;

		tar_run(&t, (struct listed[]){ { "d/a", text, sizeof(text) } }, 1);
		t.len = t.len - 1024 + 300;
		assert_int_equal(bci_run_archive_open_plain(t.data, t.len, NULL, &r, err, sizeof(err)), 0);
		assert_int_equal(read_all(r, &hash, &files), -EINVAL);
		assert_non_null(strstr(err, "the archive is cut short (after entry 2)"));
		bci_run_archive_close(r);
		packed = zstd_frame(t.data, t.len, 17, &n);
		assert_int_equal(bci_run_archive_open_memory(packed, n, NULL, &r, err, sizeof(err)), 0);
		assert_int_equal(read_all(r, &hash, &files), -EINVAL);
		assert_non_null(strstr(err, "its zstd frame ends inside the tar, after entry 2"));
		bci_run_archive_close(r);
		free(packed);
		free(t.data);
	}
}

static void test_refused_entries(void **state)
{
	struct tar t;
	char record[1200], long_path[1100];

	(void)state;
	tar_run(&t, one, 1);
	tar_header(&t, "d/", NULL, '5', 0, NULL, NULL);
	refused(&t, NULL, "entry 3 'd/': a folder");
	tar_run(&t, one, 1);
	tar_header(&t, "d/l", NULL, '2', 0, "../../x", NULL);
	refused(&t, NULL, "entry 3 'd/l': a symlink to '../../x', outside the run");
	tar_run(&t, one, 1);
	tar_header(&t, "d/l", NULL, '2', 0, "/etc/passwd", NULL);
	refused(&t, NULL, "entry 3 'd/l': a symlink to '/etc/passwd', outside the run");
	tar_run(&t, one, 1);
	tar_header(&t, "d/l", NULL, '2', 0, "a", NULL);
	refused(&t, NULL, "entry 3 'd/l': a symlink to 'a' (links are not accepted)");
	tar_run(&t, one, 1);
	tar_pax(&t, pax_record(record, "linkpath", "../../../etc/shadow"));
	tar_header(&t, "d/l", NULL, '2', 0, "short", NULL);
	refused(&t, NULL, "entry 3 'd/l': a symlink to '../../../etc/shadow', outside the run");
	tar_run(&t, one, 1);
	tar_header(&t, "d/h", NULL, '1', 0, "../x", NULL);
	refused(&t, NULL, "entry 3 'd/h': a hardlink to '../x', outside the run");
	tar_run(&t, one, 1);
	tar_header(&t, "d/h", NULL, '1', 0, "d/a", NULL);
	refused(&t, NULL, "entry 3 'd/h': a hardlink to 'd/a' (links are not accepted)");
	tar_run(&t, one, 1);
	tar_header(&t, "d/c", NULL, '3', 0, NULL, NULL);
	refused(&t, NULL, "entry 3 'd/c': a character device");
	tar_run(&t, one, 1);
	tar_header(&t, "d/b", NULL, '4', 0, NULL, NULL);
	refused(&t, NULL, "entry 3 'd/b': a block device");
	tar_run(&t, one, 1);
	tar_header(&t, "d/f", NULL, '6', 0, NULL, NULL);
	refused(&t, NULL, "entry 3 'd/f': a FIFO");
	tar_run(&t, one, 1);
	tar_header(&t, "././@LongLink", NULL, 'L', 0, NULL, NULL);
	refused(&t, NULL, "entry 3 '././@LongLink': an entry of type 'L'");
	/* Paths: each the way it is unsafe; a control character shown escaped. */
	tar_run(&t, one, 1);
	tar_file(&t, "d/../../x", "", 0);
	refused(&t, NULL, "entry 3 'd/../../x': a '..' component");
	tar_run(&t, one, 1);
	tar_file(&t, "/etc/x", "", 0);
	refused(&t, NULL, "entry 3 '/etc/x': an absolute path");
	tar_run(&t, one, 1);
	tar_file(&t, "./d/a", "a", 1);
	refused(&t, NULL, "entry 3 './d/a': a '.' component");
	tar_run(&t, one, 1);
	tar_file(&t, "d//b", "", 0);
	refused(&t, NULL, "entry 3 'd//b': an empty component");
	tar_run(&t, one, 1);
	tar_file(&t, "d/\nb", "", 0);
	refused(&t, NULL, "entry 3 'd/\\x0ab': a control character");
	tar_run(&t, one, 1);
	memset(long_path, 'p', 1030);
	long_path[1030] = '\0';
	tar_file(&t, long_path, "", 0);
	refused(&t, NULL, "entry 3: a path of 1030 bytes (at most 1024)");
	/* The prefix field joined to the name. */
	tar_run(&t, one, 1);
	tar_header(&t, "b", "d/../..", '0', 0, NULL, NULL);
	refused(&t, NULL, "entry 3 'd/../../b': a '..' component");
}

static void test_refused_manifest(void **state)
{
	struct bci_run_archive_limits limits;
	struct tar t;

	(void)state;
	bci_run_archive_limits_default(&limits);
	tar_init(&t);
	refused(&t, NULL, "the archive is empty (its first entry must be manifest.json)");
	tar_init(&t);
	tar_file(&t, "d/a", "a", 1);
	refused(&t, NULL, "entry 1 'd/a': the first entry must be manifest.json");
	tar_init(&t);
	tar_file(&t, "manifest.json", "{\"format\": ", 11);
	refused(&t, NULL, "entry 1 'manifest.json': bad JSON");
	{
		char *m = manifest_text(one, 1), expect[128];

		snprintf(expect, sizeof(expect), "entry 1 'manifest.json': %zu bytes (at most 100)",
			 strlen(m));
		free(m);
		limits.max_manifest = 100;
		tar_run(&t, one, 1);
		refused(&t, &limits, expect);
	}
	/* Files against it. */
	tar_run(&t, one, 1);
	tar_file(&t, "d/b", "b", 1);
	refused(&t, NULL, "entry 3 'd/b': not in the manifest");
	tar_run(&t, one, 1);
	tar_file(&t, "manifest.json", "{}", 2);
	refused(&t, NULL, "entry 3 'manifest.json': not in the manifest");
	tar_run(&t, one, 1);
	tar_file(&t, "d/a", "a", 1);
	refused(&t, NULL, "entry 3 'd/a': in the archive twice");
	tar_run(&t, (struct listed[]){ { "d/a", "a", 1 }, { "d/b", "b", 1 } }, 2);
	t.len -= 1024;	/* d/b cut off: its header and block */
	refused(&t, NULL, "'d/b': in the manifest but not in the archive");
	tar_manifest(&t, one, 1);
	tar_file(&t, "d/a", "ab", 2);
	refused(&t, NULL, "entry 2 'd/a': 2 bytes, the manifest says 1");
	tar_run(&t, one, 1);
	t.len -= 512;
	t.data[t.len] = 'b';
	t.len += 512;
	refused(&t, NULL, "entry 2 'd/a': sha256 3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d,"
		" the manifest says ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb");
}

static void test_refused_limits(void **state)
{
	struct bci_run_archive_limits limits;
	struct listed many[12];
	char names[12][16];
	static unsigned char zeros[1 << 20];
	struct tar t;

	(void)state;
	for (int i = 0; i < 12; i++) {
		snprintf(names[i], sizeof(names[i]), "f%02d", i);
		many[i] = (struct listed){ names[i], "", 0 };
	}
	bci_run_archive_limits_default(&limits);
	limits.max_entries = 8;
	tar_run(&t, many, 12);
	refused(&t, &limits, "entry 9: more than 8 entries (the limit)");
	/* Without limits: none but the format's. */
	tar_run(&t, many, 12);
	tar_end(&t);
	{
		char err[512];

		assert_int_equal(verdict(&t, NULL, err, sizeof(err)), 0);
		free(t.data);
	}
	bci_run_archive_limits_default(&limits);
	limits.max_unpacked = 100000;
	tar_run(&t, (struct listed[]){ { "zeros", zeros, sizeof(zeros) } }, 1);
	refused(&t, &limits, "entry 2 'zeros': more than 100000 bytes once unpacked (the limit)");
	/* The same 1 MiB file past a per-file limit: refused at its header. */
	bci_run_archive_limits_default(&limits);
	limits.max_file = 1000;
	tar_run(&t, (struct listed[]){ { "zeros", zeros, sizeof(zeros) } }, 1);
	refused(&t, &limits, "entry 2 'zeros': 1048576 bytes, more than a file may hold (1000, the limit)");
	/*
	 * 100 MiB of zeroes in a few KiB: how well it compresses is no reason to
	 * refuse it (a job's output of one line repeated packs as well), so the
	 * default limits take it whole; past --max-unpacked it is refused at its
	 * header, before a byte of it is unpacked.
	 */
	{
		struct bci_run_archive *r;
		struct bci_sha256 hash;
		char listed_hash[BCI_SHA256_HEX_LEN + 1], *m, err[512];
		size_t bomb = (size_t)100 << 20, n, cap = (size_t)1 << 20, files;
		unsigned char *packed = malloc(cap);
		ZSTD_CCtx *c = ZSTD_createCCtx();
		ZSTD_outBuffer out = { packed, cap, 0 };
		struct tar head;
		uint64_t mixed;

		assert_non_null(packed);
		assert_non_null(c);
		bci_sha256_init(&hash);
		for (size_t at = 0; at < bomb; at += sizeof(zeros))
			bci_sha256_update(&hash, zeros, sizeof(zeros));
		bci_sha256_final_hex(&hash, listed_hash);
		m = manifest_text((struct listed[]){ { "zeros", "", 0 } }, 1);
		/* The manifest's entry for an empty file, made to say 100 MiB of zeroes. */
		{
			char *size = strstr(m, "\"size\": 0"), *sha = strstr(m, "\"sha256\": \"") + 11;
			char fixed[4096];

			assert_non_null(size);
			memcpy(sha, listed_hash, BCI_SHA256_HEX_LEN);
			snprintf(fixed, sizeof(fixed), "%.*s\"size\": %zu%s", (int)(size - m), m, bomb,
				 size + 9);
			free(m);
			m = strdup(fixed);
		}
		tar_init(&head);
		tar_file(&head, "manifest.json", m, strlen(m));
		tar_header(&head, "zeros", NULL, '0', bomb, NULL, NULL);
		free(m);
		{
			ZSTD_inBuffer in = { head.data, head.len, 0 };

			assert_false(ZSTD_isError(ZSTD_compressStream2(c, &out, &in, ZSTD_e_continue)));
		}
		for (size_t at = 0; at < bomb + 1024; at += sizeof(zeros)) {
			ZSTD_inBuffer in = { zeros, sizeof(zeros), 0 };

			while (in.pos < in.size)
				assert_false(ZSTD_isError(ZSTD_compressStream2(c, &out, &in,
									       ZSTD_e_continue)));
		}
		while ((n = ZSTD_compressStream2(c, &out, &(ZSTD_inBuffer){ NULL, 0, 0 }, ZSTD_e_end)))
			assert_false(ZSTD_isError(n));
		assert_true(out.pos < bomb / 1000);
		bci_run_archive_limits_default(&limits);
		assert_int_equal(bci_run_archive_open_memory(packed, out.pos, &limits, &r, err,
							     sizeof(err)), 0);
		if (read_all(r, &mixed, &files) != 0)
			fail_msg("refused within the default limits: %s", err);
		assert_int_equal(files, 1);
		bci_run_archive_close(r);
		limits.max_unpacked = 64ULL << 20;
		assert_int_equal(bci_run_archive_open_memory(packed, out.pos, &limits, &r, err,
							     sizeof(err)), 0);
		assert_int_equal(read_all(r, &mixed, &files), -EINVAL);
		assert_string_equal(err, "entry 2 'zeros': more than 67108864 bytes once unpacked (the limit)");
		assert_int_equal(files, 0);
		bci_run_archive_close(r);
		ZSTD_freeCCtx(c);
		free(head.data);
		free(packed);
	}
}

/* What is not a zstd frame, or not a whole one, says what it is. */
static void test_refused_compression(void **state)
{
	static const struct { const char *bytes; size_t len; const char *message; } starts[] = {
		{ "", 0, "an empty file" },
		{ "\x1f\x8b\x08\0\0\0\0\0", 8, "gzip-compressed" },
		{ "\xfd" "7zXZ\0\0\0", 8, "xz-compressed" },
		{ "BZh91AY&SY", 10, "bzip2-compressed" },
		{ "not a tar at all, not zstd either", 33, "not a zstd frame" },
	};
	struct bci_run_archive *r;
	char err[512];
	struct tar t;
	unsigned char *packed, *two;
	size_t n;
	uint64_t hash;
	size_t files;

	(void)state;
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		assert_int_equal(bci_run_archive_open_memory(starts[i].bytes, starts[i].len, NULL, &r,
							     err, sizeof(err)), -EINVAL);
		if (!strstr(err, starts[i].message))
			fail_msg("'%s' does not say '%s'", err, starts[i].message);
	}
	tar_run(&t, one, 1);
	tar_end(&t);
	assert_int_equal(bci_run_archive_open_memory(t.data, t.len, NULL, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "an uncompressed tar (a run archive is compressed with zstd)"));

	packed = zstd_frame(t.data, t.len, 17, &n);
	/* Two frames: the second is refused once the first is read. */
	two = malloc(2 * n);
	assert_non_null(two);
	memcpy(two, packed, n);
	memcpy(two + n, packed, n);
	assert_int_equal(bci_run_archive_open_memory(two, 2 * n, NULL, &r, err, sizeof(err)), 0);
	assert_int_equal(read_all(r, &hash, &files), -EINVAL);
	assert_non_null(strstr(err, "bytes after the zstd frame"));
	bci_run_archive_close(r);
	/* Cut short, and a byte flipped: the frame's checksum, or its blocks, say so. */
	for (int damage = 0; damage < 2; damage++) {
		int ret;

		memcpy(two, packed, n);
		if (damage)
			two[n - 5] ^= 1;
		ret = bci_run_archive_open_memory(two, damage ? n : n - 6, NULL, &r, err, sizeof(err));
		if (ret == 0) {
			ret = read_all(r, &hash, &files);
			bci_run_archive_close(r);
		}
		assert_int_equal(ret, -EINVAL);
		if (!strstr(err, damage ? "the zstd frame is corrupt" : "cut short"))
			fail_msg("damage %d: '%s'", damage, err);
	}
	free(two);
	free(packed);
	/* A window larger than the reader takes. */
	packed = zstd_frame(t.data, t.len, 27, &n);
	assert_int_equal(bci_run_archive_open_memory(packed, n, NULL, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a zstd window of 134217728 bytes (at most 67108864)"));
	free(packed);
	free(t.data);

	/* A file that is not there, from a path. */
	assert_int_equal(bci_run_archive_open("/nonexistent/archive.tar.zst", NULL, &r, err,
					      sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libarchive_sample),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_ring_wraps),
		cmocka_unit_test(test_refused_headers),
		cmocka_unit_test(test_refused_entries),
		cmocka_unit_test(test_refused_manifest),
		cmocka_unit_test(test_refused_limits),
		cmocka_unit_test(test_refused_compression),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
