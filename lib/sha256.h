/* SPDX-License-Identifier: MIT */
/*
 * SHA-256, bootci's only interface to it: the run archive's digests and its
 * manifest's, serve's tokens and uploads, the builder's image manifest, the
 * executor's deploy check. Implemented once, over nettle (lib/sha256.c is
 * the one file that includes it; the static executor links the musl
 * sysroot's libnettle.a), so every program hashes with the same code.
 *
 * A digest is shown as 64 lowercase hex digits. bci_sha256_hex_ok() is the
 * check every format that carries one applies (the manifest, the deploy
 * plan, serve's records, the build manifests); text that may come in either
 * case (an HTTP header, a tokens file) goes through bci_sha256_hex_read(),
 * which lowers it and applies the same check.
 *
 * Nothing here allocates: a context lives wherever the caller puts it.
 */
#ifndef BCI_SHA256_H
#define BCI_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BCI_SHA256_SIZE		32	/* bytes of a digest */
#define BCI_SHA256_HEX_LEN	64	/* its hex digits (a string needs one more byte) */

/* A hash in progress; its contents are nettle's (opaque here). */
struct bci_sha256 {
	uint64_t opaque[16];
};

void bci_sha256_init(struct bci_sha256 *ctx);
void bci_sha256_update(struct bci_sha256 *ctx, const void *data, size_t len);
/* The digest of everything given since init; @ctx is ready for a new hash after. */
void bci_sha256_final(struct bci_sha256 *ctx, unsigned char digest[BCI_SHA256_SIZE]);
/* The same as 64 lowercase hex digits and a NUL. */
void bci_sha256_final_hex(struct bci_sha256 *ctx, char hex[BCI_SHA256_HEX_LEN + 1]);

/* @len bytes at once, into @digest. */
void bci_sha256_bytes(const void *data, size_t len, unsigned char digest[BCI_SHA256_SIZE]);

/* Everything read from @fd (to its end), as hex; *@size (may be NULL) gets the byte count. 0 or -errno. */
int bci_sha256_fd(int fd, char hex[BCI_SHA256_HEX_LEN + 1], uint64_t *size);
/* The file at @path, the same way. */
int bci_sha256_file(const char *path, char hex[BCI_SHA256_HEX_LEN + 1], uint64_t *size);

/* Lowercase hex of a digest. */
void bci_sha256_hex(const unsigned char digest[BCI_SHA256_SIZE], char hex[BCI_SHA256_HEX_LEN + 1]);

/* Whether @text is a digest as bootci writes one: 64 lowercase hex digits, then its end (NUL). */
bool bci_sha256_hex_ok(const char *text);

/*
 * The first @len bytes of @text as a digest written in either case: exactly
 * 64 hex digits, lowered into @hex. 0, or -EINVAL (@hex then undefined).
 */
int bci_sha256_hex_read(const char *text, size_t len, char hex[BCI_SHA256_HEX_LEN + 1]);

/* A digest from its hex (one that passes bci_sha256_hex_ok()): 0 or -EINVAL. */
int bci_sha256_hex_decode(const char *hex, unsigned char digest[BCI_SHA256_SIZE]);

#endif
