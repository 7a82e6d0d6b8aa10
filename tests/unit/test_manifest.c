// SPDX-License-Identifier: MIT
/* lib/manifest.c and manifest_read.c: the upload's manifest.json, written, read back and refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HASH_A "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
#define HASH_B "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d"
#define HASH_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static char *write_to_string(struct bci_manifest *m, char *err, size_t err_size, int *ret)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	*ret = bci_manifest_write(m, f, err, err_size);
	fclose(f);
	return text;
}

static struct bci_manifest *sample(void)
{
	struct bci_manifest *m = bci_manifest_new();
	struct bci_manifest_boot *boot;
	char err[256];

	assert_non_null(m);
	assert_int_equal(bci_manifest_set(&m->run_id, "igt1"), 0);
	assert_int_equal(bci_manifest_set(&m->machine, "m1"), 0);
	assert_int_equal(bci_manifest_set(&m->image_id, "test-6.1"), 0);
	assert_int_equal(bci_manifest_set(&m->kernel, "6.1.0-42-amd64"), 0);
	assert_int_equal(bci_manifest_set(&m->cmdline, "console=ttyS0 bootci.x=\"a b\""), 0);
	assert_int_equal(bci_manifest_set(&m->igt_version, "1.28"), 0);
	assert_int_equal(bci_manifest_set(&m->bootci_version, "0.1"), 0);
	assert_int_equal(bci_manifest_add_boot(m, "boot-001", &boot), 0);
	assert_int_equal(bci_manifest_boot_set(boot, "dmi.product", "Standard PC (Q35)"), 0);
	assert_int_equal(bci_manifest_boot_set(boot, "cpu.count", "2"), 0);
	assert_int_equal(bci_manifest_add_boot(m, "boot-002", NULL), 0);
	m->efi_boot_current = 3;
	assert_int_equal(bci_manifest_add_boot_order(m, 1), 0);
	assert_int_equal(bci_manifest_add_boot_order(m, 3), 0);
	assert_int_equal(bci_manifest_add_efi_entry(m, 1, "bootci known-good", true, "HD(1)/File(x)"), 0);
	assert_int_equal(bci_manifest_add_efi_entry(m, 3, "iPXE", false, ""), 0);
	/* Given out of order: the writer sorts. */
	assert_int_equal(bci_manifest_add_file(m, "b/out.txt", 1, HASH_B, err, sizeof(err)), 0);
	assert_int_equal(bci_manifest_add_file(m, "a.txt", 1, HASH_A, err, sizeof(err)), 0);
	return m;
}

static void test_round_trip(void **state)
{
	struct bci_manifest *m = sample(), *back;
	char err[256] = "", *text;
	int ret;

	(void)state;
	text = write_to_string(m, err, sizeof(err), &ret);
	assert_int_equal(ret, 0);
	ret = bci_manifest_parse(text, strlen(text), &back, err, sizeof(err));
	if (ret)
		fail_msg("%s", err);
	assert_string_equal(back->run_id, "igt1");
	assert_string_equal(back->machine, "m1");
	assert_string_equal(back->image_id, "test-6.1");
	assert_string_equal(back->cmdline, "console=ttyS0 bootci.x=\"a b\"");
	assert_string_equal(back->igt_version, "1.28");
	assert_string_equal(back->bootci_version, "0.1");
	assert_int_equal(back->boot_count, 2);
	assert_int_equal(back->boots[0].env_count + back->boots[1].env_count, 2);
	assert_int_equal(back->efi_boot_current, 3);
	assert_int_equal(back->efi_boot_order_count, 2);
	assert_int_equal(back->efi_boot_order[1], 3);
	assert_int_equal(back->efi_entry_count, 2);
	assert_string_equal(back->efi_entries[0].label, "bootci known-good");
	assert_true(back->efi_entries[0].active);
	assert_false(back->efi_entries[1].active);
	assert_int_equal(back->file_count, 2);
	assert_string_equal(back->files[0].path, "a.txt");
	assert_string_equal(back->files[1].sha256, HASH_B);
	assert_non_null(bci_manifest_find(back, "b/out.txt"));
	assert_null(bci_manifest_find(back, "b"));
	bci_manifest_free(back);
	free(text);
	bci_manifest_free(m);
}

static void test_tree(void **state)
{
	char dir[] = "/tmp/test_manifest.XXXXXX", path[256], err[256] = "";
	struct bci_manifest *m = bci_manifest_new();
	const struct bci_manifest_file *f;
	int ret;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sub/a", dir);
	FILE *fa = fopen(path, "w");
	assert_non_null(fa);
	fputs("a", fa);
	fclose(fa);
	snprintf(path, sizeof(path), "%s/empty", dir);
	assert_int_equal(close(open(path, O_CREAT | O_WRONLY, 0644)), 0);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	assert_int_equal(close(open(path, O_CREAT | O_WRONLY, 0644)), 0);

	ret = bci_manifest_add_tree(m, dir, err, sizeof(err));
	if (ret)
		fail_msg("%s", err);
	assert_int_equal(m->file_count, 2);
	f = bci_manifest_find(m, "sub/a");
	assert_non_null(f);
	assert_int_equal(f->size, 1);
	assert_string_equal(f->sha256, HASH_A);
	f = bci_manifest_find(m, "empty");
	assert_non_null(f);
	assert_string_equal(f->sha256, HASH_EMPTY);
	assert_null(bci_manifest_find(m, "manifest.json"));
	bci_manifest_free(m);

	/* A symlink in a run folder is refused, named. */
	snprintf(path, sizeof(path), "%s/sub/link", dir);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	m = bci_manifest_new();
	assert_int_equal(bci_manifest_add_tree(m, dir, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "sub/link: not a regular file"));
	bci_manifest_free(m);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sub/a", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sub", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/empty", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	unlink(path);
	rmdir(dir);
}

static void test_paths(void **state)
{
	char err[256];

	(void)state;
	assert_true(bci_manifest_path_ok("a", err, sizeof(err)));
	assert_true(bci_manifest_path_ok("0/dmesg.txt", err, sizeof(err)));
	assert_true(bci_manifest_path_ok("..a/b..", err, sizeof(err)));
	assert_false(bci_manifest_path_ok("", err, sizeof(err)));
	assert_false(bci_manifest_path_ok("/etc/passwd", err, sizeof(err)));
	assert_non_null(strstr(err, "absolute"));
	assert_false(bci_manifest_path_ok("a/../../b", err, sizeof(err)));
	assert_non_null(strstr(err, "'..' component"));
	assert_false(bci_manifest_path_ok("..", err, sizeof(err)));
	assert_false(bci_manifest_path_ok("./a", err, sizeof(err)));
	assert_false(bci_manifest_path_ok("a//b", err, sizeof(err)));
	assert_false(bci_manifest_path_ok("a/", err, sizeof(err)));
	assert_false(bci_manifest_path_ok("a\nb", err, sizeof(err)));
	char longpath[BCI_MANIFEST_PATH_MAX + 2];
	/* Components of 200 bytes: the whole path's length is what is refused. */
	memset(longpath, 'x', sizeof(longpath) - 1);
	for (size_t i = 200; i < sizeof(longpath) - 1; i += 201)
		longpath[i] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	assert_false(bci_manifest_path_ok(longpath, err, sizeof(err)));
	assert_non_null(strstr(err, "a path of 1025 bytes (at most 1024)"));
	longpath[BCI_MANIFEST_PATH_MAX] = '\0';
	assert_true(bci_manifest_path_ok(longpath, err, sizeof(err)));
	/* One component longer than a file name may be (NAME_MAX). */
	memset(longpath, 'x', 256);
	longpath[256] = '\0';
	assert_false(bci_manifest_path_ok(longpath, err, sizeof(err)));
	assert_non_null(strstr(err, "a component of 256 bytes (at most 255)"));
	longpath[255] = '\0';
	assert_true(bci_manifest_path_ok(longpath, err, sizeof(err)));

	assert_true(bci_manifest_word_ok("igt1"));
	assert_true(bci_manifest_word_ok("run-2026.12.03_1"));
	assert_false(bci_manifest_word_ok(""));
	assert_false(bci_manifest_word_ok("."));
	assert_false(bci_manifest_word_ok(".."));
	assert_false(bci_manifest_word_ok("a/b"));
	assert_false(bci_manifest_word_ok("a b"));
}

/* The sample written out, with @from replaced by @to, must be refused with @expect in the message. */
static void refuse_edit(const char *from, const char *to, const char *expect)
{
	struct bci_manifest *m = sample(), *back = NULL;
	char err[256] = "", *text, *at, *edited;
	int ret;

	text = write_to_string(m, err, sizeof(err), &ret);
	assert_int_equal(ret, 0);
	at = strstr(text, from);
	if (!at)
		fail_msg("'%s' not in the sample:\n%s", from, text);
	assert_int_not_equal(asprintf(&edited, "%.*s%s%s", (int)(at - text), text, to,
				      at + strlen(from)), -1);
	ret = bci_manifest_parse(edited, strlen(edited), &back, err, sizeof(err));
	if (ret == 0)
		fail_msg("accepted: %s", edited);
	assert_int_equal(ret, -EINVAL);
	if (!strstr(err, expect))
		fail_msg("message '%s' does not say '%s'", err, expect);
	assert_null(back);
	free(edited);
	free(text);
	bci_manifest_free(m);
}

static void test_refused(void **state)
{
	(void)state;
	refuse_edit("\"format_version\": 1", "\"format_version\": 2", "format_version 2 is not supported");
	refuse_edit("\"format_version\": 1", "\"format_version\": \"1\"", "format_version: a string, expected an integer");
	refuse_edit("\"bootci-manifest\"", "\"other\"", "format: 'other'");
	refuse_edit("\"run_id\": \"igt1\"", "\"run_id\": \"../x\"", "run_id '../x' is not a word");
	refuse_edit("\"run_id\": \"igt1\",", "", "run_id: missing");
	refuse_edit("\"run_id\": \"igt1\"", "\"run_id\": \"igt1\", \"extra\": 1", "extra: unknown member");
	refuse_edit("\"machine\": \"m1\"", "\"machine\": 7", "machine: an integer, expected a string");
	refuse_edit("\"kernel\": \"6.1.0-42-amd64\"", "\"kernel\": \"a\\u0000b\"", "kernel: a NUL character");
	refuse_edit("\"path\": \"a.txt\"", "\"path\": \"../a.txt\"", "files[0].path: a '..' component");
	refuse_edit("\"path\": \"a.txt\"", "\"path\": \"/a.txt\"", "files[0].path: an absolute path");
	refuse_edit("\"path\": \"a.txt\"", "\"path\": \"b/out.txt\"", "'b/out.txt' listed twice");
	refuse_edit("\"path\": \"a.txt\"", "\"path\": \"manifest.json\"", "cannot list itself");
	refuse_edit("\"size\": 1", "\"size\": -1", "files[0].size: -1 out of range");
	refuse_edit("\"size\": 1", "\"size\": 1.5", "files[0].size: a fraction, expected an integer");
	refuse_edit("\"size\": 1", "\"size\": 99999999999999999999", "files[0].size");
	refuse_edit(HASH_A, "CA978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb", "files[0].sha256: not 64 lowercase hex");
	refuse_edit(HASH_A, "ca97", "files[0].sha256: not 64");
	refuse_edit("\"cpu.count\": \"2\"", "\"cpu.count\": 2", "boots.boot-001.cpu.count: not a string");
	refuse_edit("\"boot-002\": {}", "\"boot-002\": []", "boots.boot-002: not an object");
	refuse_edit("\"boot-002\": {}", "\"../x\": {}", "boots: '../x' is not a folder name");
	refuse_edit("\"boot_current\": 3", "\"boot_current\": 70000", "efi.boot_current: 70000 out of range");
	refuse_edit("\"active\": true", "\"active\": 1", "efi.entries[0].active: an integer, expected a boolean");
	refuse_edit("\"files\": [", "\"files\": {", "bad JSON");
}

static void test_bad_json(void **state)
{
	static const char *const texts[] = {
		"", "{", "[]", "null", "{\"format\": \"bootci-manifest\"} x", "{'format': 1}",
		"{\"format\": \"bootci-manifest\", \"format_version\": 1,}",
		"\xff\xfe{}", "{\"format\": \"\xc3\x28\"}",
	};
	struct bci_manifest *m = NULL;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		err[0] = '\0';
		if (bci_manifest_parse(texts[i], strlen(texts[i]), &m, err, sizeof(err)) != -EINVAL)
			fail_msg("accepted: %s", texts[i]);
		assert_true(err[0] != '\0');
		assert_null(m);
	}
	assert_int_equal(bci_manifest_parse("{\0}", 3, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NUL byte"));
}

static void test_null_boot_current(void **state)
{
	struct bci_manifest *m = sample(), *back;
	char err[256], *text;
	int ret;

	(void)state;
	m->efi_boot_current = -1;
	text = write_to_string(m, err, sizeof(err), &ret);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(text, "\"boot_current\": null"));
	assert_int_equal(bci_manifest_parse(text, strlen(text), &back, err, sizeof(err)), 0);
	assert_int_equal(back->efi_boot_current, -1);
	bci_manifest_free(back);
	free(text);
	bci_manifest_free(m);
}

/* A run with no file at all (a boot that died before writing one) is a valid manifest. */
static void test_no_files(void **state)
{
	struct bci_manifest *m = bci_manifest_new(), *back;
	char err[256], *text;
	int ret;

	(void)state;
	assert_int_equal(bci_manifest_set(&m->run_id, "r"), 0);
	assert_int_equal(bci_manifest_set(&m->machine, "m"), 0);
	text = write_to_string(m, err, sizeof(err), &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(bci_manifest_parse(text, strlen(text), &back, err, sizeof(err)), 0);
	assert_int_equal(back->file_count, 0);
	assert_null(bci_manifest_find(back, "x"));
	bci_manifest_free(back);
	free(text);
	bci_manifest_free(m);
}

static void test_writer_refuses(void **state)
{
	struct bci_manifest *m = sample();
	char err[256], *text;
	int ret;

	(void)state;
	assert_int_equal(bci_manifest_add_file(m, "a.txt", 3, HASH_B, err, sizeof(err)), 0);
	text = write_to_string(m, err, sizeof(err), &ret);
	assert_int_equal(ret, -EINVAL);
	assert_non_null(strstr(err, "'a.txt' listed twice"));
	free(text);
	assert_int_equal(bci_manifest_add_file(m, "../x", 3, HASH_B, err, sizeof(err)), -EINVAL);
	assert_int_equal(bci_manifest_add_file(m, "x", 3, "zz", err, sizeof(err)), -EINVAL);
	bci_manifest_free(m);
}

/*
 * The files array is read entry by entry as the text is walked, yet errors
 * come in the order of the members' checks, not of the text: a bad entry
 * before a bad format_version is reported after it, a bad JSON byte after a
 * bad entry first; and a second "files" member replaces the first.
 */
static const char order_head[] =
	"{\"files\": [{\"path\": \"a\", \"size\": 1, \"sha256\": \"" HASH_A "\"}";
static const char order_tail[] =
	"], \"format\": \"bootci-manifest\", \"format_version\": %d, \"run_id\": \"r\", "
	"\"image_id\": \"\", \"machine\": \"m\", \"kernel\": \"\", \"cmdline\": \"\", "
	"\"versions\": {\"igt\": \"\", \"bootci\": \"\"}, \"boots\": {}, "
	"\"efi\": {\"boot_current\": null, \"boot_order\": [], \"entries\": []}%s}";

static int order_parse(const char *entry, int version, const char *more, char *err,
		       size_t err_size, struct bci_manifest **out)
{
	char *text, tail[1024];
	int ret;

	snprintf(tail, sizeof(tail), order_tail, version, more);
	assert_int_not_equal(asprintf(&text, "%s%s%s", order_head, entry, tail), -1);
	*out = NULL;
	ret = bci_manifest_parse(text, strlen(text), out, err, err_size);
	free(text);
	return ret;
}

/*
 * Files listed out of order are sorted on reading (collect writes them in
 * order, and the reader then skips the sort): each is found, and a path given
 * twice is refused wherever its second listing is.
 */
static void test_files_out_of_order(void **state)
{
	static const char *const paths[] = { "a", "aa/b", "b", "c", "d/e" };
	struct bci_manifest *m;
	char err[256];

	(void)state;
	assert_int_equal(order_parse(", {\"path\": \"d/e\", \"size\": 0, \"sha256\": \"" HASH_B "\"}"
				     ", {\"path\": \"b\", \"size\": 0, \"sha256\": \"" HASH_B "\"}"
				     ", {\"path\": \"c\", \"size\": 0, \"sha256\": \"" HASH_B "\"}"
				     ", {\"path\": \"aa/b\", \"size\": 0, \"sha256\": \"" HASH_B "\"}",
				     1, "", err, sizeof(err), &m), 0);
	assert_int_equal(m->file_count, 5);
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(m->files[i].path, paths[i]);
		assert_ptr_equal(bci_manifest_find(m, paths[i]), &m->files[i]);
	}
	assert_null(bci_manifest_find(m, "d"));
	bci_manifest_free(m);
	assert_int_equal(order_parse(", {\"path\": \"c\", \"size\": 0, \"sha256\": \"" HASH_B "\"}"
				     ", {\"path\": \"b\", \"size\": 0, \"sha256\": \"" HASH_B "\"}"
				     ", {\"path\": \"c\", \"size\": 0, \"sha256\": \"" HASH_B "\"}",
				     1, "", err, sizeof(err), &m), -EINVAL);
	assert_non_null(strstr(err, "'c' listed twice"));
	/* In order but twice (the sort skipped): still refused. */
	assert_int_equal(order_parse(", {\"path\": \"b\", \"size\": 0, \"sha256\": \"" HASH_B "\"}"
				     ", {\"path\": \"b\", \"size\": 0, \"sha256\": \"" HASH_B "\"}",
				     1, "", err, sizeof(err), &m), -EINVAL);
	assert_non_null(strstr(err, "'b' listed twice"));
	/* A path below a file: a file cannot be a folder too (however far apart they sort). */
	assert_int_equal(order_parse(", {\"path\": \"a-b\", \"size\": 0, \"sha256\": \"" HASH_B "\"}"
				     ", {\"path\": \"a/b/c\", \"size\": 0, \"sha256\": \"" HASH_B "\"}",
				     1, "", err, sizeof(err), &m), -EINVAL);
	assert_non_null(strstr(err, "files: 'a/b/c' is below the file 'a'"));
	assert_int_equal(order_parse(", {\"path\": \"d/e/f\", \"size\": 0, \"sha256\": \"" HASH_B "\"}"
				     ", {\"path\": \"d/e\", \"size\": 0, \"sha256\": \"" HASH_B "\"}",
				     1, "", err, sizeof(err), &m), -EINVAL);
	assert_non_null(strstr(err, "files: 'd/e/f' is below the file 'd/e'"));
}

/*
 * A path with an escape or an odd byte past its first sixteen bytes (where
 * the fast path scans sixteen at a time): read as json-c decodes it, or
 * refused, never taken as its raw text.
 */
static void test_fast_strings(void **state)
{
	static const char *const odd[] = {
		"\\\\", "\\\"", "\\u00e9", "\\u0041", "\\/", "\\n", "\xc3\xa9", "\x7f", "\x1f", "\t",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		for (size_t lead = 14; lead <= 40; lead += 13) {
			struct bci_manifest *m = sample(), *back = NULL;
			char err[256] = "", *text, *at, *edited, *quoted;
			struct json_object *decoded;
			int ret;

			text = write_to_string(m, err, sizeof(err), &ret);
			assert_int_equal(ret, 0);
			at = strstr(text, "\"path\": \"a.txt\"");
			assert_non_null(at);
			/* "0/ppp...<odd>q.txt": the odd part at byte @lead of the string. */
			assert_int_not_equal(asprintf(&quoted, "\"0/%0*dq%sq.txt\"", (int)lead - 3, 0,
						      odd[i]), -1);
			assert_int_not_equal(asprintf(&edited, "%.*s\"path\": %s%s", (int)(at - text),
						      text, quoted, at + strlen("\"path\": \"a.txt\"")),
					     -1);
			decoded = json_tokener_parse(quoted);
			ret = bci_manifest_parse(edited, strlen(edited), &back, err, sizeof(err));
			if (ret == 0) {
				bool found = false;

				assert_non_null(decoded);
				for (size_t f = 0; f < back->file_count; f++)
					found |= !strcmp(back->files[f].path,
							 json_object_get_string(decoded));
				if (!found)
					fail_msg("%s: not read as json-c decodes it", quoted);
			}
			json_object_put(decoded);
			bci_manifest_free(back);
			free(quoted);
			free(edited);
			free(text);
			bci_manifest_free(m);
		}
	}
}

/*
 * A digest's hex, every byte value (the writer's and ingest's), and a
 * listed sha256 with each byte value in it: taken only when it is a
 * lowercase hex digit.
 */
static void test_hex(void **state)
{
	unsigned char digest[32];
	char hex[BCI_SHA256_HEX_LEN + 1], expect[BCI_SHA256_HEX_LEN + 1], err[256];

	(void)state;
	for (int round = 0; round < 8; round++) {
		for (int i = 0; i < 32; i++) {
			digest[i] = (unsigned char)(round * 32 + i);
			snprintf(expect + 2 * i, 3, "%02x", digest[i]);
		}
		memset(hex, 'x', sizeof(hex));
		bci_sha256_hex(digest, hex);
		assert_string_equal(hex, expect);
	}
	for (int c = 1; c < 256; c++) {
		char entry[256];
		struct bci_manifest *m;
		bool digit = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
		int ret;

		if (c == '"' || c == '\\')
			continue;
		snprintf(entry, sizeof(entry), ", {\"path\": \"b\", \"size\": 0, \"sha256\": \"%.37s%c%s\"}",
			 HASH_B, c, HASH_B + 38);
		ret = order_parse(entry, 1, "", err, sizeof(err), &m);
		if (digit) {
			assert_int_equal(ret, 0);
			bci_manifest_free(m);
		} else if (ret == 0) {
			fail_msg("sha256 with byte 0x%02x taken", c);
		}
	}
}

static void test_error_order(void **state)
{
	struct bci_manifest *m;
	char err[256];

	(void)state;
	assert_int_equal(order_parse("", 1, "", err, sizeof(err), &m), 0);
	assert_int_equal(m->file_count, 1);
	assert_string_equal(m->files[0].path, "a");
	bci_manifest_free(m);
	assert_int_equal(order_parse(", {\"path\": 7}", 2, "", err, sizeof(err), &m), -EINVAL);
	assert_non_null(strstr(err, "format_version 2 is not supported"));
	assert_int_equal(order_parse(", {\"path\": 7}", 1, "", err, sizeof(err), &m), -EINVAL);
	assert_non_null(strstr(err, "files[1].size: missing"));
	assert_int_equal(order_parse(", {\"path\": 7}", 1, ", \"x\": tru", err, sizeof(err), &m),
			 -EINVAL);
	assert_non_null(strstr(err, "bad JSON"));
	assert_int_equal(order_parse(", {\"path\": 7}", 1, ", \"files\": []", err, sizeof(err), &m),
			 0);
	assert_int_equal(m->file_count, 0);
	bci_manifest_free(m);
	assert_int_equal(order_parse("", 1,
				     ", \"files\": [{\"path\": \"b\", \"size\": 2, \"sha256\": \""
				     HASH_B "\"}]", err, sizeof(err), &m), 0);
	assert_int_equal(m->file_count, 1);
	assert_string_equal(m->files[0].path, "b");
	bci_manifest_free(m);
	/* Entries not as the writer makes them are read by json-c, escapes and all. */
	assert_int_equal(order_parse(", {\"sha256\": \"" HASH_B "\", \"size\": 0, "
				     "\"path\": \"b\\u00e9\\/c\"}", 1, "", err, sizeof(err), &m), 0);
	assert_int_equal(m->file_count, 2);
	assert_string_equal(m->files[1].path, "b\xc3\xa9/c");
	bci_manifest_free(m);
	assert_int_equal(order_parse(", {\"path\": \"b\", \"size\": 1e0, \"sha256\": \"" HASH_B
				     "\"}", 1, "", err, sizeof(err), &m), -EINVAL);
	assert_non_null(strstr(err, "files[1].size: a fraction, expected an integer"));
	assert_int_equal(order_parse(", {\"path\": \"b\", \"size\": 01, \"sha256\": \"" HASH_B
				     "\"}", 1, "", err, sizeof(err), &m), -EINVAL);
	assert_non_null(strstr(err, "bad JSON"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bad_json),
		cmocka_unit_test(test_null_boot_current),
		cmocka_unit_test(test_no_files),
		cmocka_unit_test(test_writer_refuses),
		cmocka_unit_test(test_error_order),
		cmocka_unit_test(test_files_out_of_order),
		cmocka_unit_test(test_fast_strings),
		cmocka_unit_test(test_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
