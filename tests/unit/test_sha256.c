// SPDX-License-Identifier: MIT
/*
 * lib/sha256.c: FIPS 180-4's examples, whole and in pieces, files and fds;
 * the one hex check (and the reader of either case built on it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define ABC   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/* "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq" */
#define TWO_BLOCKS "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
/* A million 'a' */
#define MILLION "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

static void test_known_digests(void **state)
{
	char hex[BCI_SHA256_HEX_LEN + 1];
	unsigned char digest[BCI_SHA256_SIZE];
	struct bci_sha256 ctx;
	char *million = malloc(1000000);

	(void)state;
	bci_sha256_init(&ctx);
	bci_sha256_final_hex(&ctx, hex);
	assert_string_equal(hex, EMPTY);
	/* The context is ready again after final. */
	bci_sha256_update(&ctx, "abc", 3);
	bci_sha256_final_hex(&ctx, hex);
	assert_string_equal(hex, ABC);
	bci_sha256_bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, digest);
	bci_sha256_hex(digest, hex);
	assert_string_equal(hex, TWO_BLOCKS);
	/* In pieces of every size from 1 to 999: the same digest as at once. */
	assert_non_null(million);
	memset(million, 'a', 1000000);
	bci_sha256_init(&ctx);
	for (size_t at = 0, piece = 1; at < 1000000; at += piece, piece = piece % 999 + 1)
		bci_sha256_update(&ctx, million + at, 1000000 - at < piece ? 1000000 - at : piece);
	bci_sha256_final_hex(&ctx, hex);
	assert_string_equal(hex, MILLION);
	bci_sha256_bytes(million, 1000000, digest);
	bci_sha256_hex(digest, hex);
	assert_string_equal(hex, MILLION);
	free(million);
}

static void test_files(void **state)
{
	char path[] = "/tmp/test_sha256.XXXXXX", hex[BCI_SHA256_HEX_LEN + 1];
	uint64_t size = 0;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(bci_sha256_fd(fd, hex, &size), 0);
	assert_string_equal(hex, EMPTY);
	assert_int_equal(size, 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(bci_sha256_fd(fd, hex, NULL), 0);
	assert_string_equal(hex, ABC);
	assert_int_equal(bci_sha256_file(path, hex, &size), 0);
	assert_string_equal(hex, ABC);
	assert_int_equal(size, 3);
	close(fd);
	unlink(path);
	assert_int_equal(bci_sha256_file(path, hex, &size), -ENOENT);
}

/* Every byte value in every place: only 0-9 and a-f pass, and only 64 of them. */
static void test_hex_ok(void **state)
{
	char text[BCI_SHA256_HEX_LEN + 8], hex[BCI_SHA256_HEX_LEN + 1];
	unsigned char digest[BCI_SHA256_SIZE], back[BCI_SHA256_SIZE];

	(void)state;
	assert_true(bci_sha256_hex_ok(EMPTY));
	assert_false(bci_sha256_hex_ok(""));
	assert_false(bci_sha256_hex_ok(EMPTY "0"));
	for (int c = 1; c < 256; c++) {
		bool digit = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');

		for (int at = 0; at < BCI_SHA256_HEX_LEN; at += 9) {
			strcpy(text, ABC);
			text[at] = (char)c;
			if (bci_sha256_hex_ok(text) != digit)
				fail_msg("byte 0x%02x at %d: %s", c, at, digit ? "refused" : "accepted");
		}
	}
	/* Cut short: a NUL inside is an end, not a digit. */
	strcpy(text, ABC);
	text[63] = '\0';
	assert_false(bci_sha256_hex_ok(text));

	/* Either case read, lowered; anything else refused. */
	assert_int_equal(bci_sha256_hex_read("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD",
					     BCI_SHA256_HEX_LEN, hex), 0);
	assert_string_equal(hex, ABC);
	assert_int_equal(bci_sha256_hex_read(ABC "zz", BCI_SHA256_HEX_LEN, hex), 0);
	assert_string_equal(hex, ABC);
	assert_int_equal(bci_sha256_hex_read(ABC, 63, hex), -EINVAL);
	assert_int_equal(bci_sha256_hex_read(ABC "0", 65, hex), -EINVAL);
	strcpy(text, ABC);
	text[10] = 'G';
	assert_int_equal(bci_sha256_hex_read(text, BCI_SHA256_HEX_LEN, hex), -EINVAL);
	text[10] = '\0';
	assert_int_equal(bci_sha256_hex_read(text, BCI_SHA256_HEX_LEN, hex), -EINVAL);

	/* Decoded back into the digest it shows. */
	bci_sha256_bytes("abc", 3, digest);
	assert_int_equal(bci_sha256_hex_decode(ABC, back), 0);
	assert_memory_equal(back, digest, sizeof(digest));
	assert_int_equal(bci_sha256_hex_decode("BA7816BF", back), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_digests),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_hex_ok),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
