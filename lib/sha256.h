/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4) for the builder's manifest and the executor's deploy
 * check. Written here rather than linked from a crypto library so that neither
 * the builder nor the static executor needs one more library.
 */
#ifndef BCI_SHA256_H
#define BCI_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct bci_sha256 {
	uint32_t state[8];
	uint64_t length;	/* bytes hashed so far */
	uint8_t block[64];
	size_t used;		/* bytes waiting in block */
};

void bci_sha256_init(struct bci_sha256 *ctx);
void bci_sha256_update(struct bci_sha256 *ctx, const void *data, size_t len);
/* Writes 64 lowercase hex digits and a NUL into @hex. */
void bci_sha256_final_hex(struct bci_sha256 *ctx, char hex[65]);

/* Hashes the file at @path; its size goes to *@size. Returns 0 or -errno. */
int bci_sha256_file(const char *path, char hex[65], uint64_t *size);

#endif
