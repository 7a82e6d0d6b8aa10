// SPDX-License-Identifier: MIT
/* SHA-256 over nettle (sha256.h): the only file that includes it. */
#include "sha256.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

_Static_assert(sizeof(struct sha256_ctx) <= sizeof(struct bci_sha256),
	       "struct bci_sha256 must hold nettle's context");
_Static_assert(_Alignof(struct sha256_ctx) <= _Alignof(struct bci_sha256),
	       "struct bci_sha256 must be aligned as nettle's context");
_Static_assert(SHA256_DIGEST_SIZE == BCI_SHA256_SIZE, "a SHA-256 digest is 32 bytes");

static struct sha256_ctx *nettle_ctx(struct bci_sha256 *ctx)
{
	return (struct sha256_ctx *)ctx->opaque;
}

void bci_sha256_init(struct bci_sha256 *ctx)
{
	sha256_init(nettle_ctx(ctx));
}

void bci_sha256_update(struct bci_sha256 *ctx, const void *data, size_t len)
{
	sha256_update(nettle_ctx(ctx), len, data);
}

void bci_sha256_final(struct bci_sha256 *ctx, unsigned char digest[BCI_SHA256_SIZE])
{
	sha256_digest(nettle_ctx(ctx), BCI_SHA256_SIZE, digest);
}

void bci_sha256_final_hex(struct bci_sha256 *ctx, char hex[BCI_SHA256_HEX_LEN + 1])
{
	unsigned char digest[BCI_SHA256_SIZE];

	bci_sha256_final(ctx, digest);
	bci_sha256_hex(digest, hex);
}

void bci_sha256_bytes(const void *data, size_t len, unsigned char digest[BCI_SHA256_SIZE])
{
	struct bci_sha256 ctx;

	bci_sha256_init(&ctx);
	bci_sha256_update(&ctx, data, len);
	bci_sha256_final(&ctx, digest);
}

int bci_sha256_fd(int fd, char hex[BCI_SHA256_HEX_LEN + 1], uint64_t *size)
{
	unsigned char buf[65536];
	struct bci_sha256 ctx;
	uint64_t total = 0;

	bci_sha256_init(&ctx);
	for (;;) {
		ssize_t n = bci_read_retry(fd, buf, sizeof(buf));

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		bci_sha256_update(&ctx, buf, (size_t)n);
		total += (uint64_t)n;
	}
	bci_sha256_final_hex(&ctx, hex);
	if (size)
		*size = total;
	return 0;
}

int bci_sha256_file(const char *path, char hex[BCI_SHA256_HEX_LEN + 1], uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = bci_sha256_fd(fd, hex, size);
	close(fd);
	return ret;
}

#ifndef __SSE2__
/* Every byte's two hex digits (a digest for every file of a run). */
static const char hex_pairs[256][2] = {
#define P(x) { "0123456789abcdef"[(x) >> 4], "0123456789abcdef"[(x) & 15] }
#define P4(x) P(x), P((x) + 1), P((x) + 2), P((x) + 3)
#define P16(x) P4(x), P4((x) + 4), P4((x) + 8), P4((x) + 12)
#define P64(x) P16(x), P16((x) + 16), P16((x) + 32), P16((x) + 48)
	P64(0), P64(64), P64(128), P64(192)
#undef P64
#undef P16
#undef P4
#undef P
};
#endif

void bci_sha256_hex(const unsigned char digest[BCI_SHA256_SIZE], char hex[BCI_SHA256_HEX_LEN + 1])
{
#ifdef __SSE2__
	/* Sixteen bytes at a time: each nibble plus '0', plus 39 more past 9, high nibble first. */
	const __m128i low = _mm_set1_epi8(0x0f), nine = _mm_set1_epi8(9);
	const __m128i zero = _mm_set1_epi8('0'), gap = _mm_set1_epi8('a' - '0' - 10);

	for (int i = 0; i < BCI_SHA256_SIZE; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(digest + i));
		__m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), low), lo = _mm_and_si128(v, low);

		hi = _mm_add_epi8(_mm_add_epi8(hi, zero), _mm_and_si128(_mm_cmpgt_epi8(hi, nine), gap));
		lo = _mm_add_epi8(_mm_add_epi8(lo, zero), _mm_and_si128(_mm_cmpgt_epi8(lo, nine), gap));
		_mm_storeu_si128((__m128i *)(hex + 2 * i), _mm_unpacklo_epi8(hi, lo));
		_mm_storeu_si128((__m128i *)(hex + 2 * i + 16), _mm_unpackhi_epi8(hi, lo));
	}
#else
	for (int i = 0; i < BCI_SHA256_SIZE; i++)
		memcpy(hex + 2 * i, hex_pairs[digest[i]], 2);
#endif
	hex[BCI_SHA256_HEX_LEN] = '\0';
}

bool bci_sha256_hex_ok(const char *text)
{
	/* Its length first: the 64 bytes checked below are then known to be there. */
	if (strnlen(text, BCI_SHA256_HEX_LEN + 1) != BCI_SHA256_HEX_LEN)
		return false;
#ifdef __SSE2__
	{
		/* Sixteen at a time (a manifest holds one per file of the run). */
		const __m128i before_0 = _mm_set1_epi8('0' - 1), after_9 = _mm_set1_epi8('9' + 1);
		const __m128i before_a = _mm_set1_epi8('a' - 1), after_f = _mm_set1_epi8('f' + 1);
		int all = 0xffff;

		for (size_t i = 0; i < BCI_SHA256_HEX_LEN; i += 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(text + i));
			__m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, before_0),
						      _mm_cmplt_epi8(v, after_9));
			__m128i letter = _mm_and_si128(_mm_cmpgt_epi8(v, before_a),
						       _mm_cmplt_epi8(v, after_f));

			all &= _mm_movemask_epi8(_mm_or_si128(digit, letter));
		}
		return all == 0xffff;
	}
#else
	for (size_t i = 0; i < BCI_SHA256_HEX_LEN; i++)
		if (!((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f')))
			return false;
	return true;
#endif
}

int bci_sha256_hex_read(const char *text, size_t len, char hex[BCI_SHA256_HEX_LEN + 1])
{
	if (len != BCI_SHA256_HEX_LEN)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		hex[i] = text[i] >= 'A' && text[i] <= 'F' ? (char)(text[i] - 'A' + 'a') : text[i];
	hex[len] = '\0';
	return bci_sha256_hex_ok(hex) ? 0 : -EINVAL;
}

int bci_sha256_hex_decode(const char *hex, unsigned char digest[BCI_SHA256_SIZE])
{
	if (!bci_sha256_hex_ok(hex))
		return -EINVAL;
	for (int i = 0; i < BCI_SHA256_SIZE; i++) {
		int hi = hex[2 * i], lo = hex[2 * i + 1];

		hi = hi <= '9' ? hi - '0' : hi - 'a' + 10;
		lo = lo <= '9' ? lo - '0' : lo - 'a' + 10;
		digest[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}
