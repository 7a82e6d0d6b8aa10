// SPDX-License-Identifier: MIT
/* The gen_init_cpio spec parser: every directive, every error with its line, ${VAR}, finalize. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpio_spec.h"

/* The environment the tests see: A=/srv/a, EMPTY="", nothing else. */
static const char *test_env(const char *name, void *data)
{
	(void)data;
	if (!strcmp(name, "A"))
		return "/srv/a";
	if (!strcmp(name, "EMPTY"))
		return "";
	return NULL;
}

static struct builder_spec *test_spec_new(void)
{
	struct builder_spec *spec = builder_spec_new();

	assert_non_null(spec);
	builder_spec_set_env_lookup(spec, test_env, NULL);
	return spec;
}

static int test_parse(struct builder_spec *spec, const char *text, char *err, size_t err_size)
{
	return builder_spec_parse(spec, "t.spec", text, strlen(text), err, err_size);
}

static const struct builder_entry *test_find(const struct builder_spec *spec, const char *path)
{
	for (size_t i = 0; i < spec->count; i++)
		if (!strcmp(spec->entries[i].path, path))
			return &spec->entries[i];
	fail_msg("no entry '%s'", path);
	return NULL;
}

static void test_each_directive(void **state)
{
	struct builder_spec *spec = test_spec_new();
	char err[1024] = "";
	const struct builder_entry *e;

	(void)state;
	assert_int_equal(test_parse(spec,
		"# a comment\n"
		"\n"
		"   \t\n"
		"dir /dev 0755 0 0\n"
		"file /init ${A}/init 0755 0 0\n"
		"nod /dev/console 0600 0 5 c 5 1\n"
		"nod /dev/sda 0660 0 6 b 8 0\n"
		"slink /bin/sh busybox 0777 0 0\n"
		"pipe /run/fifo 0620 12 34\n"
		"sock\t/run/sock  1777   4294967294 7\n"
		"dir /srv/ 02775 1000 1000", err, sizeof(err)), 0);
	assert_int_equal(spec->count, 8);

	e = test_find(spec, "dev");
	assert_int_equal(e->type, BUILDER_ENTRY_DIR);
	assert_int_equal(e->mode, 0755);
	assert_int_equal(e->line, 4);
	assert_string_equal(e->origin, "t.spec");

	e = test_find(spec, "init");
	assert_int_equal(e->type, BUILDER_ENTRY_FILE);
	assert_string_equal(e->location, "/srv/a/init");
	assert_int_equal(e->line, 5);
	assert_true(e->link_group != BUILDER_NO_LINK_GROUP);

	e = test_find(spec, "dev/console");
	assert_int_equal(e->type, BUILDER_ENTRY_NOD);
	assert_int_equal(e->dev_kind, 'c');
	assert_int_equal(e->dev_major, 5);
	assert_int_equal(e->dev_minor, 1);
	assert_int_equal(e->gid, 5);
	assert_int_equal(test_find(spec, "dev/sda")->dev_kind, 'b');

	e = test_find(spec, "bin/sh");
	assert_int_equal(e->type, BUILDER_ENTRY_SLINK);
	assert_string_equal(e->location, "busybox");
	assert_int_equal(e->mode, 0777);

	e = test_find(spec, "run/fifo");
	assert_int_equal(e->type, BUILDER_ENTRY_PIPE);
	assert_int_equal(e->mode, 0620);
	assert_int_equal(e->uid, 12);
	assert_int_equal(e->gid, 34);

	e = test_find(spec, "run/sock");
	assert_int_equal(e->type, BUILDER_ENTRY_SOCK);
	assert_int_equal(e->mode, 01777);
	assert_int_equal(e->uid, 4294967294u);

	/* The trailing slash and missing final newline are fine. */
	e = test_find(spec, "srv");
	assert_int_equal(e->mode, 02775);
	assert_int_equal(e->line, 11);
	builder_spec_free(spec);
}

static void test_hard_links(void **state)
{
	struct builder_spec *spec = test_spec_new();
	char err[1024] = "";
	const struct builder_entry *a, *b, *c, *other;

	(void)state;
	assert_int_equal(test_parse(spec,
		"file /bin/busybox /x/busybox 0755 0 0 /bin/sh //sbin//init\n"
		"file /other /x/other 0644 0 0\n", err, sizeof(err)), 0);
	assert_int_equal(spec->count, 4);
	a = test_find(spec, "bin/busybox");
	b = test_find(spec, "bin/sh");
	c = test_find(spec, "sbin/init");
	other = test_find(spec, "other");
	assert_int_equal(a->link_group, b->link_group);
	assert_int_equal(a->link_group, c->link_group);
	assert_int_not_equal(a->link_group, other->link_group);
	assert_string_equal(c->location, "/x/busybox");
	assert_int_equal(c->mode, 0755);
	builder_spec_free(spec);
}

struct test_bad_input {
	const char *text;
	unsigned int line;
	const char *what;	/* must appear in the message */
};

static void test_errors_name_the_line(void **state)
{
	static const struct test_bad_input cases[] = {
		{ "dir /a 0755 0 0\nfrobnicate /x 0 0 0\n", 2, "unknown directive 'frobnicate'" },
		{ "\n\n\ndir /a 0755 0\n", 4, "expected 4 fields, got 3" },
		{ "dir /a 0755 0 0 0\n", 1, "expected 4 fields, got 5" },
		{ "file /a /src 0644 0\n", 1, "expected 5 fields, got 4" },
		{ "nod /a 0600 0 0 c 5\n", 1, "expected 7 fields" },
		{ "slink /a 0777 0 0\n", 1, "expected 5 fields" },
		{ "pipe /a 0600 0\n", 1, "expected 4 fields" },
		{ "sock /a 0600 0 0 x\n", 1, "expected 4 fields" },
		{ "# x\ndir /a 0758 0 0\n", 2, "bad mode '0758'" },
		{ "dir /a 17777 0 0\n", 1, "bad mode '17777'" },
		{ "dir /a rwx 0 0\n", 1, "bad mode 'rwx'" },
		{ "dir /a -755 0 0\n", 1, "bad mode '-755'" },
		{ "dir /a 0755 root 0\n", 1, "bad uid 'root'" },
		{ "dir /a 0755 0 4294967296\n", 1, "bad gid '4294967296'" },
		{ "nod /a 0600 0 0 x 1 1\n", 1, "bad device type 'x'" },
		{ "nod /a 0600 0 0 c 4096 1\n", 1, "bad major '4096'" },
		{ "nod /a 0600 0 0 b 1 1048576\n", 1, "bad minor '1048576'" },
		{ "file /a ${UNSET}/x 0644 0 0\n", 1, "variable 'UNSET' is not set" },
		{ "dir /ok 0755 0 0\nfile /a ${A 0644 0 0\n", 2, "unterminated '${'" },
		{ "file /a ${}/x 0644 0 0\n", 1, "bad variable name" },
		{ "file /a ${9X}/x 0644 0 0\n", 1, "bad variable name" },
		{ "file /a ${EMPTY} 0644 0 0\n", 1, "empty location" },
		{ "dir / 0755 0 0\n", 1, "bad path '/'" },
		{ "dir /a/../b 0755 0 0\n", 1, "bad path" },
		{ "dir /a/./b 0755 0 0\n", 1, "bad path" },
		{ "file /a /s 0644 0 0 /ok /../x\n", 1, "bad path '/../x'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct builder_spec *spec = test_spec_new();
		char err[1024] = "";
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "t.spec:%u: ", cases[i].line);
		if (test_parse(spec, cases[i].text, err, sizeof(err)) != -EINVAL)
			fail_msg("case %zu accepted: %s", i, cases[i].text);
		if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, cases[i].what))
			fail_msg("case %zu: message '%s', wanted '%s' ... '%s'", i, err, prefix,
				 cases[i].what);
		/* A spec that fails contributes nothing. */
		assert_int_equal(spec->count, 0);
		builder_spec_free(spec);
	}
}

static void test_nul_byte_rejected(void **state)
{
	static const char text[] = "dir /a 0755 0 0\ndir /b\0 0755 0 0\n";
	struct builder_spec *spec = test_spec_new();
	char err[1024] = "";

	(void)state;
	assert_int_equal(builder_spec_parse(spec, "n.spec", text, sizeof(text) - 1, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "n.spec:2: NUL byte in line");
	assert_int_equal(spec->count, 0);
	builder_spec_free(spec);
}

static void test_variable_expansion(void **state)
{
	struct builder_spec *spec = test_spec_new();
	char err[1024] = "";

	(void)state;
	assert_int_equal(test_parse(spec,
		"file /one ${A} 0644 0 0\n"
		"file /two ${A}/x/${A}.ko 0644 0 0\n"
		"file /three /lit/$A/$/{A} 0644 0 0\n"
		"file /four pre${EMPTY}post 0644 0 0\n"
		"slink /five ${A} 0777 0 0\n", err, sizeof(err)), 0);
	assert_string_equal(test_find(spec, "one")->location, "/srv/a");
	assert_string_equal(test_find(spec, "two")->location, "/srv/a/x//srv/a.ko");
	/* Only ${...} is expanded, as in gen_init_cpio. */
	assert_string_equal(test_find(spec, "three")->location, "/lit/$A/$/{A}");
	assert_string_equal(test_find(spec, "four")->location, "prepost");
	/* A symlink target is stored as written, never expanded. */
	assert_string_equal(test_find(spec, "five")->location, "${A}");
	builder_spec_free(spec);
}

static void test_process_environment_by_default(void **state)
{
	struct builder_spec *spec = builder_spec_new();
	char err[1024] = "";

	(void)state;
	assert_non_null(spec);
	setenv("BUILDER_TEST_DIR", "/from/env", 1);
	unsetenv("BUILDER_TEST_UNSET");
	assert_int_equal(test_parse(spec, "file /x ${BUILDER_TEST_DIR}/f 0644 0 0\n", err, sizeof(err)), 0);
	assert_string_equal(spec->entries[0].location, "/from/env/f");
	assert_int_equal(test_parse(spec, "file /y ${BUILDER_TEST_UNSET}/f 0644 0 0\n", err, sizeof(err)), -EINVAL);
	builder_spec_free(spec);
}

static void test_sorting_and_parents(void **state)
{
	static const char *const expected[] = {
		/* Bytewise: '-' sorts before '/', and a parent still precedes its children. */
		"bin", "bin/sh", "dev", "dev/console", "usr", "usr/lib", "usr/lib-extra",
		"usr/lib-extra/x", "usr/lib/modules", "usr/lib/modules/6.1",
		"usr/lib/modules/6.1/kernel", "usr/lib/modules/6.1/kernel/a.ko",
		"usr/lib/modules/6.1/modules.dep",
	};
	struct builder_spec *spec = test_spec_new();
	char err[1024] = "";
	const struct builder_entry *e;

	(void)state;
	assert_int_equal(test_parse(spec,
		"file /usr/lib/modules/6.1/modules.dep /s/dep 0644 0 0\n"
		"nod /dev/console 0600 0 0 c 5 1\n"
		"dir /usr 0700 1 2\n"
		"file /usr/lib/modules/6.1/kernel/a.ko /s/a 0644 0 0\n"
		"file /usr/lib-extra/x /s/x 0644 0 0\n"
		"slink /bin/sh busybox 0777 0 0\n", err, sizeof(err)), 0);
	assert_int_equal(builder_spec_finalize(spec, err, sizeof(err)), 0);
	assert_int_equal(spec->count, sizeof(expected) / sizeof(expected[0]));
	for (size_t i = 0; i < spec->count; i++)
		assert_string_equal(spec->entries[i].path, expected[i]);

	/* Declared directories keep their attributes... */
	e = test_find(spec, "usr");
	assert_int_equal(e->mode, 0700);
	assert_int_equal(e->uid, 1);
	assert_int_equal(e->line, 3);
	/* ...the added ones are 0755 root:root directories from no line. */
	e = test_find(spec, "usr/lib/modules/6.1/kernel");
	assert_int_equal(e->type, BUILDER_ENTRY_DIR);
	assert_int_equal(e->mode, 0755);
	assert_int_equal(e->uid, 0);
	assert_int_equal(e->gid, 0);
	assert_int_equal(e->line, 0);
	builder_spec_free(spec);
}

static void test_duplicate_across_specs(void **state)
{
	struct builder_spec *spec = test_spec_new();
	char err[1024] = "";

	(void)state;
	assert_int_equal(builder_spec_parse(spec, "one.spec", "dir /a 0755 0 0\ndir /b 0755 0 0\n",
					    32, err, sizeof(err)), 0);
	assert_int_equal(builder_spec_parse(spec, "two.spec", "\n\ndir //b/ 0700 0 0\n", 19, err, sizeof(err)), 0);
	assert_int_equal(builder_spec_finalize(spec, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "two.spec:3: duplicate path '/b' (first declared at one.spec:2)");
	builder_spec_free(spec);
}

static void test_duplicate_hard_link_name(void **state)
{
	struct builder_spec *spec = test_spec_new();
	char err[1024] = "";

	(void)state;
	assert_int_equal(test_parse(spec, "file /a /s 0644 0 0\nfile /b /s 0644 0 0 /a\n", err, sizeof(err)), 0);
	assert_int_equal(builder_spec_finalize(spec, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.spec:2: duplicate path '/a'"));
	builder_spec_free(spec);
}

static void test_parent_not_a_directory(void **state)
{
	struct builder_spec *spec = test_spec_new();
	char err[1024] = "";

	(void)state;
	assert_int_equal(test_parse(spec, "slink /lib usr/lib 0777 0 0\n"
					  "file /lib/x /s 0644 0 0\n", err, sizeof(err)), 0);
	assert_int_equal(builder_spec_finalize(spec, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
		"t.spec:2: '/lib/x' is inside '/lib', which t.spec:1 declares as a non-directory");
	builder_spec_free(spec);
}

static void test_parse_file_missing(void **state)
{
	struct builder_spec *spec = test_spec_new();
	char err[1024] = "";

	(void)state;
	assert_int_equal(builder_spec_parse_file(spec, "/nonexistent/x.spec", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/x.spec"));
	builder_spec_free(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_directive),
		cmocka_unit_test(test_hard_links),
		cmocka_unit_test(test_errors_name_the_line),
		cmocka_unit_test(test_nul_byte_rejected),
		cmocka_unit_test(test_variable_expansion),
		cmocka_unit_test(test_process_environment_by_default),
		cmocka_unit_test(test_sorting_and_parents),
		cmocka_unit_test(test_duplicate_across_specs),
		cmocka_unit_test(test_duplicate_hard_link_name),
		cmocka_unit_test(test_parent_not_a_directory),
		cmocka_unit_test(test_parse_file_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
