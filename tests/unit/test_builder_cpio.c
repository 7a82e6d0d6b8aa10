// SPDX-License-Identifier: MIT
/*
 * The image writer (read back with libarchive's reader: names, order, inodes,
 * links, times, owners), its reproducibility and its atomic output; and
 * spec-from-dir on a small tree.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cpio_spec.h"
#include "cpio_writer.h"
#include "fsutil.h"
#include "spec_from_dir.h"

/* Short enough that every path built from it fits in PATH_MAX. */
struct test_dir {
	char path[256];
};

static void test_write(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(bci_write_file_atomic(path, text, strlen(text), 0644), 0);
}

static int test_setup(void **state)
{
	struct test_dir *d = malloc(sizeof(*d));

	assert_non_null(d);
	snprintf(d->path, sizeof(d->path), "/tmp/test_builder_cpio.XXXXXX");
	assert_non_null(mkdtemp(d->path));
	test_write(d->path, "hello", "hello\n");
	test_write(d->path, "busybox", "#!busybox\n");
	*state = d;
	return 0;
}

static int test_teardown(void **state)
{
	struct test_dir *d = *state;
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	assert_int_equal(system(cmd), 0);
	free(d);
	return 0;
}

static const char *test_env(const char *name, void *data)
{
	return !strcmp(name, "D") ? data : NULL;
}

static struct builder_spec *test_spec(const struct test_dir *d, const char *text)
{
	struct builder_spec *spec = builder_spec_new();
	char err[1024] = "";

	assert_non_null(spec);
	builder_spec_set_env_lookup(spec, test_env, (void *)d->path);
	if (builder_spec_parse(spec, "w.spec", text, strlen(text), err, sizeof(err)) ||
	    builder_spec_finalize(spec, err, sizeof(err)))
		fail_msg("spec: %s", err);
	return spec;
}

static const char test_spec_text[] =
	"file /bin/busybox ${D}/busybox 0755 0 0 /bin/sh /sbin/init\n"
	"file /etc/motd ${D}/hello 0640 1000 100\n"
	"nod /dev/console 0600 0 0 c 5 1\n"
	"slink /bin/ls busybox 0777 0 0\n"
	"pipe /run/fifo 0600 0 0\n"
	"dir /tmp 1777 0 0\n";

struct test_expect {
	const char *path;
	mode_t type;
	unsigned int perm;
	int64_t ino, nlink, size, uid;
};

static void test_read_back(const char *image, int64_t mtime)
{
	/* Bytewise path order; inodes counted in that order, links sharing the first one. */
	static const struct test_expect expected[] = {
		{ "bin", AE_IFDIR, 0755, 1, 2, 0, 0 },
		{ "bin/busybox", AE_IFREG, 0755, 2, 3, 0, 0 },
		{ "bin/ls", AE_IFLNK, 0777, 3, 1, 0, 0 },
		{ "bin/sh", AE_IFREG, 0755, 2, 3, 0, 0 },
		{ "dev", AE_IFDIR, 0755, 4, 2, 0, 0 },
		{ "dev/console", AE_IFCHR, 0600, 5, 1, 0, 0 },
		{ "etc", AE_IFDIR, 0755, 6, 2, 0, 0 },
		{ "etc/motd", AE_IFREG, 0640, 7, 1, 6, 1000 },
		{ "run", AE_IFDIR, 0755, 8, 2, 0, 0 },
		{ "run/fifo", AE_IFIFO, 0600, 9, 1, 0, 0 },
		{ "sbin", AE_IFDIR, 0755, 10, 2, 0, 0 },
		/* The data rides on the last name of the link group. */
		{ "sbin/init", AE_IFREG, 0755, 2, 3, 10, 0 },
		{ "tmp", AE_IFDIR, 01777, 11, 2, 0, 0 },
	};
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	size_t i = 0;
	char data[64];

	assert_non_null(a);
	archive_read_support_filter_all(a);
	archive_read_support_format_cpio(a);
	assert_int_equal(archive_read_open_filename(a, image, 4096), ARCHIVE_OK);
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		const struct test_expect *e = &expected[i];

		assert_true(i < sizeof(expected) / sizeof(expected[0]));
		assert_int_equal(archive_format(a), ARCHIVE_FORMAT_CPIO_SVR4_NOCRC);
		assert_string_equal(archive_entry_pathname(ae), e->path);
		assert_int_equal(archive_entry_filetype(ae), e->type);
		assert_int_equal(archive_entry_perm(ae), e->perm);
		assert_int_equal(archive_entry_ino64(ae), e->ino);
		assert_int_equal(archive_entry_nlink(ae), e->nlink);
		assert_int_equal(archive_entry_uid(ae), e->uid);
		assert_int_equal(archive_entry_mtime(ae), mtime);
		if (e->type == AE_IFREG)
			assert_int_equal(archive_entry_size(ae), e->size);
		if (e->type == AE_IFLNK)
			assert_string_equal(archive_entry_symlink(ae), "busybox");
		if (e->type == AE_IFCHR) {
			assert_int_equal(archive_entry_rdevmajor(ae), 5);
			assert_int_equal(archive_entry_rdevminor(ae), 1);
		}
		if (!strcmp(e->path, "etc/motd")) {
			assert_int_equal(archive_read_data(a, data, sizeof(data)), 6);
			assert_memory_equal(data, "hello\n", 6);
			assert_int_equal(archive_entry_gid(ae), 100);
		}
		i++;
	}
	assert_int_equal(i, sizeof(expected) / sizeof(expected[0]));
	archive_read_free(a);
}

static void test_write_and_read_back(void **state)
{
	struct test_dir *d = *state;
	struct builder_spec *spec = test_spec(d, test_spec_text);
	struct builder_cpio_options options = { .compression = BUILDER_COMPRESS_NONE, .mtime = 1700000000 };
	char err[1024] = "";
	char image[PATH_MAX];

	snprintf(image, sizeof(image), "%s/image.cpio", d->path);
	assert_int_equal(builder_cpio_write_file(spec, image, &options, err, sizeof(err)), 0);
	test_read_back(image, 1700000000);

	options.compression = BUILDER_COMPRESS_ZSTD;
	options.mtime = 0;
	assert_int_equal(builder_cpio_write_file(spec, image, &options, err, sizeof(err)), 0);
	test_read_back(image, 0);
	builder_spec_free(spec);
}

static char *test_slurp(const char *path, size_t *len)
{
	char *buf;

	assert_int_equal(bci_read_file(path, &buf, len, 64 << 20), 0);
	return buf;
}

static void test_same_inputs_same_bytes(void **state)
{
	static const enum builder_compression all[] = {
		BUILDER_COMPRESS_NONE, BUILDER_COMPRESS_GZIP, BUILDER_COMPRESS_ZSTD, BUILDER_COMPRESS_XZ,
	};
	struct test_dir *d = *state;
	char err[1024] = "";
	char one[PATH_MAX], two[PATH_MAX];

	snprintf(one, sizeof(one), "%s/one.img", d->path);
	snprintf(two, sizeof(two), "%s/two.img", d->path);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct builder_cpio_options options = { .compression = all[i], .mtime = 42 };
		struct builder_spec *spec = test_spec(d, test_spec_text);
		size_t len1, len2;
		char *b1, *b2;

		assert_int_equal(builder_cpio_write_file(spec, one, &options, err, sizeof(err)), 0);
		/* A new source mtime and a second spec object must change nothing. */
		assert_int_equal(utimensat(AT_FDCWD, d->path, NULL, 0), 0);
		test_write(d->path, "hello", "hello\n");
		builder_spec_free(spec);
		spec = test_spec(d, test_spec_text);
		assert_int_equal(builder_cpio_write_file(spec, two, &options, err, sizeof(err)), 0);
		b1 = test_slurp(one, &len1);
		b2 = test_slurp(two, &len2);
		assert_int_equal(len1, len2);
		assert_memory_equal(b1, b2, len1);
		free(b1);
		free(b2);
		builder_spec_free(spec);
	}
}

/* Lists the directory's names, to prove nothing (not even a temporary) was left. */
static int test_count_entries(const char *dir)
{
	char cmd[PATH_MAX + 32];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void test_missing_source_leaves_nothing(void **state)
{
	struct test_dir *d = *state;
	struct builder_spec *spec = test_spec(d, "dir /a 0755 0 0\n\nfile /a/x ${D}/missing 0644 0 0\n");
	struct builder_cpio_options options = { .compression = BUILDER_COMPRESS_GZIP };
	char err[1024] = "";
	char image[PATH_MAX], expected[PATH_MAX + 64];
	int before = test_count_entries(d->path);

	snprintf(image, sizeof(image), "%s/image.img", d->path);
	assert_int_equal(builder_cpio_write_file(spec, image, &options, err, sizeof(err)), -ENOENT);
	snprintf(expected, sizeof(expected), "w.spec:3: cannot open '%s/missing': No such file or directory",
		 d->path);
	assert_string_equal(err, expected);
	assert_int_equal(test_count_entries(d->path), before);
	builder_spec_free(spec);

	/* A directory is not a file's source either. */
	spec = test_spec(d, "file /x ${D} 0644 0 0\n");
	assert_int_equal(builder_cpio_write_file(spec, image, &options, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "w.spec:1: "));
	assert_int_equal(test_count_entries(d->path), before);
	builder_spec_free(spec);
}

static void test_epoch_and_compression_names(void **state)
{
	enum builder_compression c;
	int64_t t = -1;

	(void)state;
	assert_int_equal(builder_epoch_parse(NULL, &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(builder_epoch_parse("1700000000", &t), 0);
	assert_int_equal(t, 1700000000);
	assert_int_equal(builder_epoch_parse("4294967295", &t), 0);
	assert_int_equal(builder_epoch_parse("4294967296", &t), -EINVAL);
	assert_int_equal(builder_epoch_parse("", &t), -EINVAL);
	assert_int_equal(builder_epoch_parse("-1", &t), -EINVAL);
	assert_int_equal(builder_epoch_parse("12abc", &t), -EINVAL);
	assert_int_equal(builder_epoch_parse(" 12", &t), -EINVAL);

	assert_int_equal(builder_compression_parse("zstd", &c), 0);
	assert_int_equal(c, BUILDER_COMPRESS_ZSTD);
	assert_int_equal(builder_compression_parse("xz", &c), 0);
	assert_int_equal(c, BUILDER_COMPRESS_XZ);
	assert_int_equal(builder_compression_parse("gzip", &c), 0);
	assert_int_equal(c, BUILDER_COMPRESS_GZIP);
	assert_int_equal(builder_compression_parse("none", &c), 0);
	assert_int_equal(c, BUILDER_COMPRESS_NONE);
	assert_int_equal(builder_compression_parse("lz4", &c), -EINVAL);
}

static void test_spec_from_dir(void **state)
{
	struct test_dir *d = *state;
	char err[1024] = "";
	char root[PATH_MAX + 8], path[PATH_MAX + 32], expected[4 * PATH_MAX];
	char *text;
	size_t len;

	snprintf(root, sizeof(root), "%s/tree", d->path);
	assert_int_equal(mkdir(root, 0750), 0);
	snprintf(path, sizeof(path), "%s/kernel", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/kernel/a.ko", root);
	assert_int_equal(bci_write_file_atomic(path, "x", 1, 0600), 0);
	snprintf(path, sizeof(path), "%s/kernel-b", root);
	assert_int_equal(bci_write_file_atomic(path, "x", 1, 0644), 0);
	assert_int_equal(chmod(path, 0644), 0);
	snprintf(path, sizeof(path), "%s/link", root);
	assert_int_equal(symlink("kernel/a.ko", path), 0);
	snprintf(path, sizeof(path), "%s/fifo", root);
	assert_int_equal(mkfifo(path, 0640), 0);
	assert_int_equal(chmod(path, 0640), 0);

	assert_int_equal(builder_spec_from_dir(root, "/lib/modules/", &text, &len, err, sizeof(err)), 0);
	snprintf(expected, sizeof(expected),
		 "pipe /lib/modules/fifo 0640 0 0\n"
		 "dir /lib/modules/kernel 0700 0 0\n"
		 "file /lib/modules/kernel-b %s/kernel-b 0644 0 0\n"
		 "file /lib/modules/kernel/a.ko %s/kernel/a.ko 0600 0 0\n"
		 "slink /lib/modules/link kernel/a.ko 0777 0 0\n", root, root);
	assert_string_equal(text, expected);
	assert_int_equal(len, strlen(expected));

	/* What it writes, the parser reads back. */
	struct builder_spec *spec = builder_spec_new();
	assert_non_null(spec);
	assert_int_equal(builder_spec_parse(spec, "dir.spec", text, len, err, sizeof(err)), 0);
	assert_int_equal(builder_spec_finalize(spec, err, sizeof(err)), 0);
	assert_string_equal(spec->entries[0].path, "lib");
	builder_spec_free(spec);
	free(text);

	/* DEST "/" puts the tree at the root. */
	assert_int_equal(builder_spec_from_dir(root, "/", &text, &len, err, sizeof(err)), 0);
	assert_int_equal(strncmp(text, "pipe /fifo 0640 0 0\n", 20), 0);
	free(text);

	/* A name the syntax cannot carry is refused, not mangled. */
	snprintf(path, sizeof(path), "%s/has space", root);
	assert_int_equal(bci_write_file_atomic(path, "x", 1, 0644), 0);
	assert_int_equal(builder_spec_from_dir(root, "/", &text, &len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "has space"));
	assert_int_equal(builder_spec_from_dir("/nonexistent/dir", "/", &text, &len, err, sizeof(err)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_and_read_back, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_same_inputs_same_bytes, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_missing_source_leaves_nothing, test_setup, test_teardown),
		cmocka_unit_test(test_epoch_and_compression_names),
		cmocka_unit_test_setup_teardown(test_spec_from_dir, test_setup, test_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
