// SPDX-License-Identifier: MIT
/*
 * aggregator/master/ingest/tar_read.c: collect's form of a run archive (pax tar, zstd) read
 * as libarchive reads it, entry for entry and byte for byte; everything else
 * (another compression, GNU headers, links, a bad checksum, a cut stream)
 * handed back as -EPROTO, never misread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/ingest/tar_read.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define ARCHIVE_MAX ((size_t)8 << 20)

struct member {
	const char *path;
	char type;		/* 'f' file, 'd' folder, 'l' symbolic link */
	size_t size;
};

/*
 * Deterministic bytes, different for each of 64 members in a row: no short
 * period (the 65th member repeats the first, a match a long way back).
 */
static void member_bytes(unsigned char *out, size_t size, size_t seed)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (seed % 64 + 1);

	for (size_t i = 0; i < size; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* Text-like: 16 letters, so zstd finds matches but no period. */
		out[i] = (unsigned char)('a' + (x >> 60));
	}
}

/* @members as a tar in the format @format (a libarchive archive_write_set_format_* function). */
static size_t write_tar(const struct member *members, size_t count, bool zstd,
			int (*format)(struct archive *), unsigned char *buf)
{
	struct archive *a = archive_write_new();
	size_t used = 0;

	assert_non_null(a);
	if (zstd)
		assert_int_equal(archive_write_add_filter_zstd(a), ARCHIVE_OK);
	assert_int_equal(format(a), ARCHIVE_OK);
	assert_int_equal(archive_write_open_memory(a, buf, ARCHIVE_MAX, &used), ARCHIVE_OK);
	for (size_t i = 0; i < count; i++) {
		struct archive_entry *e = archive_entry_new();
		unsigned char *bytes = malloc(members[i].size + 1);

		assert_non_null(bytes);
		member_bytes(bytes, members[i].size, i);
		archive_entry_set_pathname(e, members[i].path);
		archive_entry_set_mtime(e, 1700000000, 0);
		if (members[i].type == 'l') {
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_symlink(e, "target");
			archive_entry_set_perm(e, 0777);
		} else {
			archive_entry_set_filetype(e, members[i].type == 'd' ? AE_IFDIR : AE_IFREG);
			archive_entry_set_perm(e, members[i].type == 'd' ? 0755 : 0644);
			archive_entry_set_size(e, (la_int64_t)members[i].size);
		}
		assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
		if (members[i].type == 'f' && members[i].size)
			assert_int_equal(archive_write_data(a, bytes, members[i].size),
					 (la_ssize_t)members[i].size);
		archive_entry_free(e);
		free(bytes);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	return used;
}

/* @buf in a new file in /tmp, for the reader that opens a path. */
static void to_file(const unsigned char *buf, size_t len, char *path)
{
	int fd;

	strcpy(path, "/tmp/test_tar_read.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* Every entry, and every byte of each, as libarchive read them from the same file. */
static void reads_as_libarchive(const char *path, size_t expected_entries)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	struct bci_tar_read *t;
	size_t entries = 0;

	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	assert_int_equal(archive_read_open_filename(a, path, 65536), ARCHIVE_OK);
	assert_int_equal(bci_tar_read_open(path, &t), 0);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		const char *ours;
		bool dir;
		uint64_t size, got = 0;
		const void *block;
		size_t n;
		unsigned char *theirs = malloc((size_t)archive_entry_size(e) + 1);

		assert_non_null(theirs);
		assert_int_equal(archive_read_data(a, theirs, (size_t)archive_entry_size(e)),
				 archive_entry_size(e));
		assert_int_equal(bci_tar_read_next(t, &ours, &dir, &size), 1);
		assert_string_equal(ours, archive_entry_pathname(e));
		assert_int_equal(dir, archive_entry_filetype(e) == AE_IFDIR);
		assert_int_equal(size, (uint64_t)archive_entry_size(e));
		while (bci_tar_read_data(t, &block, &n) == 1) {
			assert_true(got + n <= size);
			assert_memory_equal(block, theirs + got, n);
			got += n;
		}
		assert_int_equal(got, size);
		free(theirs);
		entries++;
	}
	assert_int_equal(entries, expected_entries);
	assert_int_equal(bci_tar_read_next(t, &(const char *){ NULL }, &(bool){ false },
					   &(uint64_t){ 0 }), 0);
	bci_tar_read_close(t);
	archive_read_free(a);
}

/* Collect's form: folders, empty files, files across many blocks, long and very long paths. */
static void test_collect_form(void **state)
{
	char long_path[300], very_long[300], path[64];
	unsigned char *buf = malloc(ARCHIVE_MAX);
	struct member members[] = {
		{ "manifest.json", 'f', 700 },
		{ "0", 'd', 0 },
		{ "0/dmesg.txt", 'f', 0 },
		{ "0/out.txt", 'f', 512 },
		{ "0/err.txt", 'f', 513 },
		{ long_path, 'f', 3000 },
		{ very_long, 'f', 10 },
		{ "big.txt", 'f', 700000 },
		{ "after.txt", 'f', 1 },
	};
	size_t len;

	(void)state;
	assert_non_null(buf);
	/* 150 bytes: ustar's prefix and name; 250 in one component run: a pax path. */
	snprintf(long_path, sizeof(long_path), "%0120d/%s", 7, "a-file-name-of-some-length.txt");
	memset(very_long, 'v', 250);
	very_long[250] = '\0';
	len = write_tar(members, sizeof(members) / sizeof(members[0]), true,
			archive_write_set_format_pax_restricted, buf);
	to_file(buf, len, path);
	reads_as_libarchive(path, sizeof(members) / sizeof(members[0]));
	unlink(path);
	/* Full pax (extended headers for every entry: times, owners): read the same. */
	len = write_tar(members, sizeof(members) / sizeof(members[0]), true,
			archive_write_set_format_pax, buf);
	to_file(buf, len, path);
	reads_as_libarchive(path, sizeof(members) / sizeof(members[0]));
	unlink(path);
	free(buf);
}

/* @tar compressed as one zstd frame with a window of 2^@window_log bytes, into @out. */
static size_t zstd_with_window(const unsigned char *tar, size_t len, int window_log,
			       unsigned char *out, size_t cap)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t n;

	assert_non_null(c);
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3)));
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, window_log)));
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
	/* No content size in the header: the window is the one asked for, not the whole tar. */
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0)));
	n = ZSTD_compress2(c, out, cap, tar, len);
	assert_false(ZSTD_isError(n));
	ZSTD_freeCCtx(c);
	return n;
}

/*
 * Megabytes of members through windows much smaller than the archive: the
 * reader's ring goes back to its start many times, with headers, pax records
 * and members' bytes cut at its end, and reads as libarchive does.
 */
static void test_ring_wraps(void **state)
{
	enum { COUNT = 2600 };
	static struct member members[COUNT];
	static char paths[COUNT][700];
	unsigned char *tar = malloc(ARCHIVE_MAX), *packed = malloc(ARCHIVE_MAX);
	static const int window_logs[] = { 10, 14, 17 };
	char path[64];
	size_t len;

	(void)state;
	assert_non_null(tar);
	assert_non_null(packed);
	for (size_t i = 0; i < COUNT; i++) {
		/*
		 * Every third a pax path (one long component) of two blocks, which
		 * the reader wants whole; sizes of every remainder of 512.
		 */
		if (i % 3 == 1)
			snprintf(paths[i], sizeof(paths[i]), "%zu/%0590zu.txt", i % 50, i);
		else
			snprintf(paths[i], sizeof(paths[i]), "%zu/out-%zu.txt", i % 50, i);
		members[i] = (struct member){ paths[i], 'f', (i * 131) % 2900 };
	}
	members[COUNT / 2].size = 300000;
	len = write_tar(members, COUNT, false, archive_write_set_format_pax_restricted, tar);
	assert_true(len > (size_t)4 << 20);
	for (size_t w = 0; w < sizeof(window_logs) / sizeof(window_logs[0]); w++) {
		size_t packed_len = zstd_with_window(tar, len, window_logs[w], packed, ARCHIVE_MAX);

		to_file(packed, packed_len, path);
		reads_as_libarchive(path, COUNT);
		unlink(path);
	}
	free(tar);
	free(packed);
}

/* The first bci_tar_read_next() result that is not 1, reading every entry's bytes. */
static int read_all(struct bci_tar_read *t, size_t *entries)
{
	const char *path;
	bool dir;
	uint64_t size;
	const void *block;
	size_t n;
	int ret, rc;

	*entries = 0;
	while ((ret = bci_tar_read_next(t, &path, &dir, &size)) == 1) {
		(*entries)++;
		while ((rc = bci_tar_read_data(t, &block, &n)) == 1)
			;
		if (rc < 0)
			return rc;
	}
	return ret;
}

static int read_mem(const unsigned char *buf, size_t len, size_t *entries)
{
	struct bci_tar_read *t;
	int ret;

	assert_int_equal(bci_tar_read_open_mem(buf, len, &t), 0);
	ret = read_all(t, entries);
	bci_tar_read_close(t);
	return ret;
}

/* What only libarchive reads is -EPROTO: not zstd, GNU headers, links. */
static void test_other_forms_handed_back(void **state)
{
	static const struct member two[] = { { "a.txt", 'f', 5 }, { "b.txt", 'f', 6 } };
	static const struct member link[] = { { "a.txt", 'f', 5 }, { "l", 'l', 0 } };
	unsigned char *buf = malloc(ARCHIVE_MAX);
	struct bci_tar_read *t = NULL;
	char path[64];
	size_t len, entries;

	(void)state;
	assert_non_null(buf);
	/* A file that is not zstd (a plain tar here; gzip, xz...) is not opened. */
	len = write_tar(two, 2, false, archive_write_set_format_pax_restricted, buf);
	to_file(buf, len, path);
	assert_int_equal(bci_tar_read_open(path, &t), -EPROTO);
	assert_null(t);
	unlink(path);
	/* Uncompressed, from memory: read. */
	assert_int_equal(read_mem(buf, len, &entries), 0);
	assert_int_equal(entries, 2);
	/* GNU tar's header ("ustar  "): handed back at the first entry. */
	len = write_tar(two, 2, false, archive_write_set_format_gnutar, buf);
	assert_int_equal(read_mem(buf, len, &entries), -EPROTO);
	assert_int_equal(entries, 0);
	/* A symbolic link: handed back there, the file before it read. */
	len = write_tar(link, 2, false, archive_write_set_format_pax_restricted, buf);
	assert_int_equal(read_mem(buf, len, &entries), -EPROTO);
	assert_int_equal(entries, 1);
	free(buf);
}

/* A flipped byte in a header, a cut tar, a cut zstd stream: -EPROTO, nothing misread. */
static void test_damage_handed_back(void **state)
{
	static const struct member three[] = {
		{ "a.txt", 'f', 5 }, { "b.txt", 'f', 2000 }, { "c.txt", 'f', 6 },
	};
	unsigned char *buf = malloc(ARCHIVE_MAX), *copy = malloc(ARCHIVE_MAX);
	struct bci_tar_read *t;
	char path[64];
	size_t len, entries;

	(void)state;
	assert_non_null(buf);
	assert_non_null(copy);
	len = write_tar(three, 3, false, archive_write_set_format_pax_restricted, buf);
	/* b.txt's header is the second block: its name's first byte changed, the checksum not. */
	memcpy(copy, buf, len);
	copy[1024] ^= 0x01;
	assert_int_equal(read_mem(copy, len, &entries), -EPROTO);
	assert_int_equal(entries, 1);
	/*
	 * A byte above 0x7f in a field the reader passes over (b.txt's owner
	 * name), the checksum made again as tar sums: unsigned bytes. Read
	 * whole (the signed sum, old tars', would differ).
	 */
	memcpy(copy, buf, len);
	copy[1024 + 265] = 0xe9;
	{
		unsigned sum = 0;

		memset(copy + 1024 + 148, ' ', 8);
		for (size_t i = 0; i < 512; i++)
			sum += copy[1024 + i];
		snprintf((char *)copy + 1024 + 148, 8, "%06o", sum);
		copy[1024 + 155] = ' ';
	}
	assert_int_equal(read_mem(copy, len, &entries), 0);
	assert_int_equal(entries, 3);
	/* Cut in b.txt's bytes, then in c.txt's header. */
	assert_int_equal(read_mem(buf, 1536 + 1000, &entries), -EPROTO);
	assert_int_equal(entries, 2);
	assert_int_equal(read_mem(buf, 1536 + 2048 + 100, &entries), -EPROTO);
	assert_int_equal(entries, 2);
	/* The end without its block of zeroes. */
	assert_int_equal(read_mem(buf, 1536 + 2048 + 1024, &entries), -EPROTO);
	assert_int_equal(entries, 3);
	/* A zstd stream cut halfway, and one with a corrupt byte. */
	len = write_tar(three, 3, true, archive_write_set_format_pax_restricted, buf);
	to_file(buf, len / 2, path);
	assert_int_equal(bci_tar_read_open(path, &t), 0);
	assert_int_equal(read_all(t, &entries), -EPROTO);
	bci_tar_read_close(t);
	unlink(path);
	memcpy(copy, buf, len);
	copy[len - 6] ^= 0xff;
	to_file(copy, len, path);
	assert_int_equal(bci_tar_read_open(path, &t), 0);
	assert_int_equal(read_all(t, &entries), -EPROTO);
	bci_tar_read_close(t);
	unlink(path);
	/* No file: its errno. */
	assert_int_equal(bci_tar_read_open("/nonexistent/archive.tar.zst", &t), -ENOENT);
	free(buf);
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collect_form),
		cmocka_unit_test(test_ring_wraps),
		cmocka_unit_test(test_other_forms_handed_back),
		cmocka_unit_test(test_damage_handed_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
