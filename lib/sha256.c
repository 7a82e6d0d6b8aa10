// SPDX-License-Identifier: MIT
#include "sha256.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t sha256_ror(uint32_t x, unsigned int n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_compress(struct bci_sha256 *ctx, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = sha256_ror(w[i - 15], 7) ^ sha256_ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = sha256_ror(w[i - 2], 17) ^ sha256_ror(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = ctx->state[0]; b = ctx->state[1]; c = ctx->state[2]; d = ctx->state[3];
	e = ctx->state[4]; f = ctx->state[5]; g = ctx->state[6]; h = ctx->state[7];
	for (int i = 0; i < 64; i++) {
		uint32_t s1 = sha256_ror(e, 6) ^ sha256_ror(e, 11) ^ sha256_ror(e, 25);
		uint32_t ch = (e & f) ^ (~e & g);
		uint32_t t1 = h + s1 + ch + sha256_k[i] + w[i];
		uint32_t s0 = sha256_ror(a, 2) ^ sha256_ror(a, 13) ^ sha256_ror(a, 22);
		uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
		uint32_t t2 = s0 + maj;

		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	ctx->state[0] += a; ctx->state[1] += b; ctx->state[2] += c; ctx->state[3] += d;
	ctx->state[4] += e; ctx->state[5] += f; ctx->state[6] += g; ctx->state[7] += h;
}

void bci_sha256_init(struct bci_sha256 *ctx)
{
	static const uint32_t initial[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(ctx->state, initial, sizeof(initial));
	ctx->length = 0;
	ctx->used = 0;
}

void bci_sha256_update(struct bci_sha256 *ctx, const void *data, size_t len)
{
	const uint8_t *p = data;

	ctx->length += len;
	while (len) {
		size_t take = 64 - ctx->used;

		if (take > len)
			take = len;
		memcpy(ctx->block + ctx->used, p, take);
		ctx->used += take;
		p += take;
		len -= take;
		if (ctx->used == 64) {
			sha256_compress(ctx, ctx->block);
			ctx->used = 0;
		}
	}
}

void bci_sha256_final_hex(struct bci_sha256 *ctx, char hex[65])
{
	uint64_t bits = ctx->length * 8;
	uint8_t pad = 0x80, zero = 0, length[8];

	bci_sha256_update(ctx, &pad, 1);
	while (ctx->used != 56)
		bci_sha256_update(ctx, &zero, 1);
	for (int i = 0; i < 8; i++)
		length[i] = (uint8_t)(bits >> (56 - 8 * i));
	bci_sha256_update(ctx, length, 8);
	for (int i = 0; i < 8; i++)
		snprintf(hex + 8 * i, 9, "%08x", ctx->state[i]);
}

int bci_sha256_file(const char *path, char hex[65], uint64_t *size)
{
	struct bci_sha256 ctx;
	uint8_t buf[65536];
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	bci_sha256_init(&ctx);
	for (;;) {
		ssize_t n = bci_read_retry(fd, buf, sizeof(buf));

		if (n <= 0) {
			ret = (int)n;
			break;
		}
		bci_sha256_update(&ctx, buf, (size_t)n);
	}
	close(fd);
	if (ret == 0) {
		*size = ctx.length;
		bci_sha256_final_hex(&ctx, hex);
	}
	return ret;
}
