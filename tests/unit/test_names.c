// SPDX-License-Identifier: MIT
/* aggregator/master/names.c: each kind of name, taken and refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/names.h"
#include "manifest.h"

#include <string.h>

/* Every check that takes a word (names.h's table). */
static bool (*const word_kinds[])(const char *) = {
	bci_name_machine_ok, bci_name_run_id_ok, bci_name_published_build_ok,
	bci_name_build_file_ok, bci_name_known_good_ok, bci_name_tree_ok, bci_name_tag_ok,
};

static void test_words(void **state)
{
	static const char *const taken[] = { "lab-1", "A.b_c-9", "drm-tip-1-fast-1of2", "x", "..." };
	static const char *const refused[] = {
		"", ".", "..", "a b", "a/b", "a\tb", "a\nb", "caf\xc3\xa9", "a@b", "a:b", "a%2f", "-a$",
	};
	char longest[BCI_MANIFEST_WORD_MAX + 2];

	(void)state;
	memset(longest, 'w', BCI_MANIFEST_WORD_MAX);
	longest[BCI_MANIFEST_WORD_MAX] = '\0';
	for (size_t k = 0; k < sizeof(word_kinds) / sizeof(word_kinds[0]); k++) {
		for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
			if (!word_kinds[k](taken[i]))
				fail_msg("kind %zu refused '%s'", k, taken[i]);
		for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
			if (word_kinds[k](refused[i]))
				fail_msg("kind %zu took '%s'", k, refused[i]);
		/* 128 bytes are a word, 129 are not. */
		longest[BCI_MANIFEST_WORD_MAX] = '\0';
		assert_true(word_kinds[k](longest));
		longest[BCI_MANIFEST_WORD_MAX] = 'w';
		longest[BCI_MANIFEST_WORD_MAX + 1] = '\0';
		assert_false(word_kinds[k](longest));
	}
}

/* A stored build is free text but for what a URL path segment cannot hold. */
static void test_build(void **state)
{
	(void)state;
	assert_true(bci_name_build_ok("drm-tip 1"));
	assert_true(bci_name_build_ok("caf\xc3\xa9: the series"));
	assert_true(bci_name_build_ok("..."));
	assert_true(bci_name_build_ok("a@b%c"));
	assert_false(bci_name_build_ok(""));
	assert_false(bci_name_build_ok("."));
	assert_false(bci_name_build_ok(".."));
	assert_false(bci_name_build_ok("a/b"));
	assert_false(bci_name_build_ok("/"));
	assert_false(bci_name_build_ok("a\x01"));
	assert_false(bci_name_build_ok("line\nbreak"));
	assert_false(bci_name_build_ok("tab\there"));
	assert_false(bci_name_build_ok("del\x7f"));
	/* A published build is a word: what `build add` takes is not always one. */
	assert_false(bci_name_published_build_ok("drm-tip 1"));
}

static void test_test(void **state)
{
	(void)state;
	assert_true(bci_name_test_ok("igt@kms_flip@basic"));
	assert_true(bci_name_test_ok("igt@gem_exec@basic@rcs0"));
	assert_true(bci_name_test_ok("<script>&'\""));
	assert_true(bci_name_test_ok("..."));
	assert_false(bci_name_test_ok(""));
	assert_false(bci_name_test_ok("."));
	assert_false(bci_name_test_ok(".."));
	/* What the store holds: blanks, '/', UTF-8 and bytes that are not UTF-8. */
	assert_true(bci_name_test_ok("igt@a b"));
	assert_true(bci_name_test_ok("igt@a/b"));
	assert_true(bci_name_test_ok("igt@a/../b"));
	assert_true(bci_name_test_ok("igt@caf\xc3\xa9"));
	assert_true(bci_name_test_ok("igt@\xff"));
	assert_false(bci_name_test_ok("igt@\x01"));
	assert_false(bci_name_test_ok("igt@\x7f"));
	assert_false(bci_name_test_ok("igt@a\nb"));
}

static void test_kcidb_origin(void **state)
{
	(void)state;
	assert_true(bci_name_kcidb_origin_ok("bootci"));
	assert_true(bci_name_kcidb_origin_ok("my_ci_2"));
	assert_false(bci_name_kcidb_origin_ok(""));
	assert_false(bci_name_kcidb_origin_ok("BootCI"));
	assert_false(bci_name_kcidb_origin_ok("boot-ci"));
	assert_false(bci_name_kcidb_origin_ok("boot.ci"));
	assert_false(bci_name_kcidb_origin_ok("boot ci"));
}

static void expect_folder(const char *name, size_t size, const char *folder)
{
	char out[64];

	bci_name_folder(name, out, size);
	assert_string_equal(out, folder);
}

static void test_folder(void **state)
{
	static const char *const names[] = { "a b", "a-b", "a=20b", "a_b", "a.b", "a..b", "a--b",
					     "a=2E.b", ".a", "=2Ea", "a.", "a=2E", ".", "..", "...",
					     "_", "", "=", "caf\xc3\xa9", "caf--" };
	const size_t n = sizeof(names) / sizeof(names[0]);
	char out[8], folders[sizeof(names) / sizeof(names[0])][64];

	(void)state;
	expect_folder("drm-tip-1", 64, "drm-tip-1");
	expect_folder("a+b_c-d.e", 64, "a+b_c-d.e");
	expect_folder("drm tip/1", 64, "drm=20tip=2F1");
	expect_folder("a=b", 64, "a=3Db");
	expect_folder("caf\xc3\xa9", 64, "caf=C3=A9");
	expect_folder("", 64, "=");
	expect_folder(".", 64, "=2E");
	expect_folder("..", 64, "=2E=2E");
	expect_folder("...", 64, "=2E=2E=2E");
	expect_folder("a..b.c", 64, "a.=2Eb.c");
	/* No two names share a folder (nor, through it, a Message-ID). */
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(bci_name_folder(names[i], folders[i], sizeof(folders[i])), 0);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(folders[i], folders[j]);
		/* A mail dot-atom: no dot first, last or after another. */
		assert_true(folders[i][0] != '.' && !strstr(folders[i], ".."));
		assert_true(folders[i][strlen(folders[i]) - 1] != '.');
	}
	/* Cut to fit, never inside an escape, and said. */
	assert_int_equal(bci_name_folder("abcdefghijkl", out, sizeof(out)), -ENAMETOOLONG);
	assert_string_equal(out, "abcdefg");
	assert_int_equal(bci_name_folder("abcde f", out, sizeof(out)), -ENAMETOOLONG);
	assert_string_equal(out, "abcde");
	assert_int_equal(bci_name_folder("a\nb", out, sizeof(out)), 0);
	assert_string_equal(out, "a=0Ab");
	/* A mail atom's cleaning keeps the characters only. */
	bci_name_clean("..", out, sizeof(out));
	assert_string_equal(out, "..");
	bci_name_clean("a\nb", out, sizeof(out));
	assert_string_equal(out, "a-b");
	/* A build name is refused when its folder would not fit in a file name. */
	{
		char name[300];

		memset(name, 'x', 255);
		name[255] = '\0';
		assert_true(bci_name_build_ok(name));
		name[254] = ' ';
		assert_false(bci_name_build_ok(name));
	}
}

/* One Message-ID: what build add and publish refuse is what the reply could not carry. */
static void test_message_id(void **state)
{
	char id[BCI_NAME_MESSAGE_ID_MAX + 1];

	(void)state;
	assert_int_equal(bci_name_message_id(" <1.2@x.example> \t", id, sizeof(id)), 0);
	assert_string_equal(id, "1.2@x.example");
	assert_int_equal(bci_name_message_id("a@b", id, sizeof(id)), 0);
	assert_string_equal(id, "a@b");
	assert_true(bci_name_message_id_ok("<a@b>"));
	assert_false(bci_name_message_id_ok("<a@b>\nBcc: x@y"));
	assert_false(bci_name_message_id_ok("<a@b>\n"));
	assert_false(bci_name_message_id_ok("<a\r@b>"));
	assert_false(bci_name_message_id_ok("<a@\x01b>"));
	assert_false(bci_name_message_id_ok("<a b@c>"));
	assert_false(bci_name_message_id_ok("<ab>"));
	assert_false(bci_name_message_id_ok("<>"));
	assert_false(bci_name_message_id_ok(""));
	assert_false(bci_name_message_id_ok("<a@b> x"));
	assert_false(bci_name_message_id_ok("<a\"@b>"));
	assert_false(bci_name_message_id_ok("<a@\xc3\xa9>"));
	assert_int_equal(bci_name_message_id("<a@b>", id, 3), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_test),
		cmocka_unit_test(test_kcidb_origin),
		cmocka_unit_test(test_folder),
		cmocka_unit_test(test_message_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
