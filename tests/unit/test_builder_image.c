// SPDX-License-Identifier: MIT
/*
 * The image builder's parsers and byte-level helpers: recipes (keys, lists,
 * relative paths, ${VAR}, every error with its line), the ELF64 reader on
 * hand-made files (DT_NEEDED, RPATH/RUNPATH, PT_INTERP, damaged headers),
 * SHA-256 against FIPS 180-4 vectors, the PE time stamp and checksum.
 */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "elf_deps.h"
#include "recipe.h"
#include "sha256.h"
#include "uki.h"

static const char *test_env(const char *name, void *data)
{
	(void)data;
	return !strcmp(name, "OUT") ? "/build/out" : NULL;
}

static int parse(struct builder_recipe **r, const char *text, char *err, size_t err_size)
{
	*r = builder_recipe_new();
	assert_non_null(*r);
	return builder_recipe_parse(*r, "r.conf", text, strlen(text), "/recipes", test_env, NULL, err, err_size);
}

static void test_recipe_full(void **state)
{
	char err[1024] = "";
	struct builder_recipe *r;
	(void)state;

	assert_int_equal(parse(&r,
			       "# comment\n\n"
			       "image = test\n"
			       "spec = base.spec /abs/other.spec\n"
			       "modules = a b\n"
			       "modules=c\n"
			       "modalias = pci:v1*\n"
			       "program = ${OUT}/bin/tool /usr/bin/tool\n"
			       "program = /usr/bin/ls\n"
			       "file = data /usr/share/data\n"
			       "cmdline =  console=ttyS0   panic=-1  \n"
			       "compress = xz\n"
			       "uki = no\n"
			       "testlist_dest = /etc/x\n", err, sizeof(err)), 0);
	assert_int_equal(r->kind, BUILDER_IMAGE_TEST);
	assert_int_equal(r->specs.count, 2);
	assert_string_equal(r->specs.items[0], "/recipes/base.spec");
	assert_string_equal(r->specs.items[1], "/abs/other.spec");
	assert_int_equal(r->modules.count, 3);
	assert_string_equal(r->modules.items[2], "c");
	assert_string_equal(r->modaliases.items[0], "pci:v1*");
	assert_int_equal(r->program_count, 2);
	assert_string_equal(r->programs[0].source, "/build/out/bin/tool");
	assert_string_equal(r->programs[0].image_path, "/usr/bin/tool");
	assert_string_equal(r->programs[1].image_path, "/usr/bin/ls");
	assert_string_equal(r->files[0].source, "/recipes/data");
	assert_string_equal(r->cmdline, "console=ttyS0   panic=-1");
	assert_int_equal(r->compression, BUILDER_COMPRESS_XZ);
	assert_false(r->uki);
	assert_string_equal(r->testlist_dest, "/etc/x");
	assert_string_equal(r->igt_tests_dest, "/usr/libexec/igt-gpu-tools");
	builder_recipe_free(r);
}

static void test_recipe_errors(void **state)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ "image = test\nbogus = 1\n", "r.conf:2: unknown key 'bogus'" },
		{ "image = test\nno equals\n", "r.conf:2: expected 'key = value'" },
		{ "image = test\n = x\n", "r.conf:2: missing key before '='" },
		{ "image = prod\n", "r.conf:1: image: 'prod' is neither test nor known-good" },
		{ "image = test\nspec = ${NOPE}/x\n", "r.conf:2: variable 'NOPE' is not set" },
		/* The same ${VAR} rules as a spec's (lib/strv.c). */
		{ "image = test\nspec = ${OUT\n", "r.conf:2: unterminated '${' in '${OUT'" },
		{ "image = test\nspec = ${1X}\n", "r.conf:2: bad variable name in '${1X}'" },
		{ "image = test\nuki = maybe\n", "r.conf:2: uki: 'maybe' is neither yes nor no" },
		{ "image = known-good\nesp_size_mib = 0\n", "r.conf:2: esp_size_mib: '0' is not a size" },
		{ "image = known-good\ndisk_guid = 1234\n", "r.conf:2: disk_guid: '1234' is not a UUID" },
		{ "image = known-good\nesp_volume_id = xyz\n", "r.conf:2: esp_volume_id: 'xyz' is not 8 hex digits" },
		{ "image = test\nprogram = a b c\n", "r.conf:2: program: expected SOURCE [IMAGE_PATH], got 3 words" },
		{ "image = test\nfile = rel\n", "r.conf:2: file: a relative SOURCE 'rel' needs an IMAGE_PATH" },
		{ "image = test\nfile = /a rel\n", "r.conf:2: file: image path 'rel' is not absolute" },
		{ "image = test\ntestlist_dest = etc/x\n", "r.conf:2: testlist_dest: 'etc/x' is not an absolute" },
		{ "spec = x\n", "r.conf: no 'image = test|known-good' line" },
		/* register-boot-entry.sh puts the label between single quotes. */
		{ "image = known-good\nboot_entry = it's\n",
		  "r.conf:2: boot_entry: 'it's': only printable ASCII, no quote or backslash" },
		{ "image = known-good\nboot_entry = a\\b\n", "r.conf:2: boot_entry: 'a\\b': only printable" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char err[1024] = "";
		struct builder_recipe *r;

		assert_int_equal(parse(&r, cases[i].text, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
		builder_recipe_free(r);
	}
}

/* A minimal ELF64 x86-64 file: one PT_LOAD over the whole file, PT_INTERP, PT_DYNAMIC. */
struct fake_elf {
	uint8_t bytes[1024];
	size_t len;
};

static void fake_elf_make(struct fake_elf *f, const char *interp, const char *const *needed,
			  size_t needed_count, const char *runpath)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph[3] = { { 0 } };
	Elf64_Dyn dyn[16];
	size_t strtab_at = 512, str_len = 1, dyn_count = 0, dyn_at = 320;

	memset(f, 0, sizeof(*f));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 3;
	/* strings: "\0" then each name */
	for (size_t i = 0; i < needed_count; i++) {
		strcpy((char *)f->bytes + strtab_at + str_len, needed[i]);
		dyn[dyn_count++] = (Elf64_Dyn){ .d_tag = DT_NEEDED, .d_un.d_val = str_len };
		str_len += strlen(needed[i]) + 1;
	}
	if (runpath) {
		strcpy((char *)f->bytes + strtab_at + str_len, runpath);
		dyn[dyn_count++] = (Elf64_Dyn){ .d_tag = DT_RUNPATH, .d_un.d_val = str_len };
		str_len += strlen(runpath) + 1;
	}
	/* The string table's address is 0x400000 + offset: found through PT_LOAD. */
	dyn[dyn_count++] = (Elf64_Dyn){ .d_tag = DT_STRTAB, .d_un.d_ptr = 0x400000 + strtab_at };
	dyn[dyn_count++] = (Elf64_Dyn){ .d_tag = DT_STRSZ, .d_un.d_val = str_len };
	dyn[dyn_count++] = (Elf64_Dyn){ .d_tag = DT_NULL };
	memcpy(f->bytes + dyn_at, dyn, dyn_count * sizeof(*dyn));
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = 0, .p_vaddr = 0x400000,
			      .p_filesz = sizeof(f->bytes), .p_memsz = sizeof(f->bytes) };
	ph[1] = (Elf64_Phdr){ .p_type = PT_DYNAMIC, .p_offset = dyn_at,
			      .p_filesz = dyn_count * sizeof(*dyn) };
	strcpy((char *)f->bytes + 256, interp);
	ph[2] = (Elf64_Phdr){ .p_type = PT_INTERP, .p_offset = 256, .p_filesz = strlen(interp) + 1 };
	memcpy(f->bytes, &eh, sizeof(eh));
	memcpy(f->bytes + sizeof(eh), ph, sizeof(ph));
	f->len = sizeof(f->bytes);
}

static void test_elf_parse(void **state)
{
	static const char *const needed[] = { "libc.so.6", "libigt.so.0" };
	char err[1024] = "";
	struct builder_elf_info info;
	struct fake_elf f;
	(void)state;

	fake_elf_make(&f, "/lib64/ld-linux-x86-64.so.2", needed, 2, "$ORIGIN/../lib");
	assert_int_equal(builder_elf_parse(f.bytes, f.len, "f", &info, err, sizeof(err)), 0);
	assert_true(info.dynamic);
	assert_int_equal(info.machine, EM_X86_64);
	assert_string_equal(info.interp, "/lib64/ld-linux-x86-64.so.2");
	assert_int_equal(info.needed_count, 2);
	assert_string_equal(info.needed[0], "libc.so.6");
	assert_string_equal(info.needed[1], "libigt.so.0");
	assert_string_equal(info.runpath, "$ORIGIN/../lib");
	assert_null(info.rpath);
	builder_elf_info_clear(&info);
}

static void test_elf_damaged(void **state)
{
	char err[1024] = "";
	struct builder_elf_info info;
	struct fake_elf f;
	Elf64_Ehdr eh;
	(void)state;

	assert_int_equal(builder_elf_parse((const uint8_t *)"#!/bin/sh\n", 10, "s", &info, err, sizeof(err)), -ENOEXEC);
	fake_elf_make(&f, "/ld", NULL, 0, NULL);
	f.bytes[EI_CLASS] = ELFCLASS32;
	assert_int_equal(builder_elf_parse(f.bytes, f.len, "f", &info, err, sizeof(err)), -ENOTSUP);
	/* program headers beyond the end */
	fake_elf_make(&f, "/ld", NULL, 0, NULL);
	memcpy(&eh, f.bytes, sizeof(eh));
	eh.e_phoff = 1000;
	memcpy(f.bytes, &eh, sizeof(eh));
	assert_int_equal(builder_elf_parse(f.bytes, f.len, "f", &info, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "program headers outside the file"));
	/* a truncated file */
	fake_elf_make(&f, "/ld", NULL, 0, NULL);
	assert_int_equal(builder_elf_parse(f.bytes, 40, "f", &info, err, sizeof(err)), -EINVAL);
	/* an interpreter string without its NUL */
	fake_elf_make(&f, "/ld", NULL, 0, NULL);
	{
		Elf64_Phdr ph;

		memcpy(&ph, f.bytes + sizeof(eh) + 2 * sizeof(ph), sizeof(ph));
		ph.p_filesz = 3;
		memcpy(f.bytes + sizeof(eh) + 2 * sizeof(ph), &ph, sizeof(ph));
	}
	assert_int_equal(builder_elf_parse(f.bytes, f.len, "f", &info, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad PT_INTERP"));
}

static void test_sha256_vectors(void **state)
{
	static const struct { const char *in, *hex; } vectors[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	struct bci_sha256 ctx;
	char hex[65];
	(void)state;

	for (size_t i = 0; i < sizeof(vectors) / sizeof(*vectors); i++) {
		bci_sha256_init(&ctx);
		/* byte by byte: block boundaries crossed every possible way */
		for (const char *p = vectors[i].in; *p; p++)
			bci_sha256_update(&ctx, p, 1);
		bci_sha256_final_hex(&ctx, hex);
		assert_string_equal(hex, vectors[i].hex);
	}
	bci_sha256_init(&ctx);
	for (int i = 0; i < 1000; i++)
		bci_sha256_update(&ctx, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1000);
	bci_sha256_final_hex(&ctx, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_pe_timestamp(void **state)
{
	uint8_t pe[512] = { 'M', 'Z' };
	uint64_t end;
	(void)state;

	pe[0x3c] = 0x80;
	memcpy(pe + 0x80, "PE\0\0", 4);
	pe[0x80 + 24] = 0x0b;	/* PE32+ magic 0x20b */
	pe[0x80 + 25] = 0x02;
	pe[0x80 + 24 + 56 + 1] = 0x30;	/* SizeOfImage 0x3000 */
	assert_int_equal(builder_pe_set_timestamp(pe, sizeof(pe), 1700000000), 0);
	assert_int_equal(pe[0x88] | pe[0x89] << 8 | pe[0x8a] << 16 | (uint32_t)pe[0x8b] << 24, 1700000000u);
	/* the checksum field holds the sum computed with itself zeroed, plus the length */
	assert_int_not_equal(pe[0x80 + 24 + 64] | pe[0x80 + 24 + 65] << 8, 0);
	assert_int_equal(builder_pe_end_address(pe, sizeof(pe), &end), 0);
	assert_int_equal(end, 0x3000);
	pe[0] = 'X';
	assert_int_equal(builder_pe_set_timestamp(pe, sizeof(pe), 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recipe_full),
		cmocka_unit_test(test_recipe_errors),
		cmocka_unit_test(test_elf_parse),
		cmocka_unit_test(test_elf_damaged),
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_pe_timestamp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
