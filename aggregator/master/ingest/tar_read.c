// SPDX-License-Identifier: MIT
/*
 * The run archive read without libarchive (tar_read.h): zstd decoded block
 * by block straight into one ring buffer, headers parsed where they lie in
 * it, members' bytes handed out from it without a copy.
 *
 * zstd's streaming decoder (ZSTD_decompressStream) decodes into a window of
 * its own and copies every byte out again: 41 MB a run for 40k members of
 * a 10k-job run. Its buffer-less functions (zstd.h's static-linking section,
 * the ones the streaming decoder is built on) decode a block where they are
 * told, as long as the last window's bytes stay where they were: the ring
 * holds the window, the largest block, and the largest record the reader
 * must see whole (a pax header), so that when the decoder goes back to its
 * start, what it and the reader still need is intact (ring_wrap()).
 *
 * A header is accepted as libarchive's tar reader accepts it: the checksum
 * as the unsigned (or signed) sum of its 512 bytes with the checksum field
 * read as spaces; the path as prefix "/" name (no '/' added when the prefix
 * ends with one); the end at the first block of zeroes. Paths are ASCII
 * (others are libarchive's to convert).
 */
#include "tar_read.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY	/* the buffer-less decoder */
#include <zstd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define BLOCK 512
/* From memory: bytes held at once; headers and pax records are read whole from it. */
#define BUF_SIZE ((size_t)256 << 10)
/* A pax extended header larger than this is not collect's (a path and a size). */
#define PAX_MAX ((size_t)64 << 10)
/* Compressed bytes read at once: a whole block's, at least. */
#define IN_SIZE ((size_t)256 << 10)
/* A frame asking for a larger window is libarchive's (collect's level asks for 2 MiB). */
#define WINDOW_MAX ((size_t)64 << 20)

struct bci_tar_read {
	int fd;				/* -1: from memory */
	ZSTD_DCtx *z;
	unsigned char *in;		/* compressed bytes read, [in_pos, in_len) not decoded */
	size_t in_pos, in_len;
	bool in_eof;
	const unsigned char *mem;	/* from memory: the tar itself */
	size_t mem_len;
	unsigned char *buf;		/* decoded: [pos, end) not consumed; the ring from a file */
	size_t size;			/* of buf */
	size_t block_max;		/* the most bytes a block of the frame decodes to */
	size_t pos, end;
	uint64_t remaining;		/* of the current entry's bytes */
	uint64_t padding;		/* after them, to the next block */
	char path[PATH_MAX];
};

static struct bci_tar_read *reader_new(size_t size)
{
	struct bci_tar_read *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->fd = -1;
	t->size = size;
	t->buf = size ? malloc(size) : NULL;
	if (size && !t->buf) {
		free(t);
		return NULL;
	}
	return t;
}

/* Reads the file until t->in holds @n bytes or the file ends: 0, or -errno. */
static int input_read(struct bci_tar_read *t, size_t n)
{
	while (t->in_len < n && !t->in_eof) {
		ssize_t got = read(t->fd, t->in + t->in_len, IN_SIZE - t->in_len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		t->in_len += (size_t)got;
		t->in_eof = got == 0;
	}
	return 0;
}

/* At least @n compressed bytes at t->in + t->in_pos: 0, or -EPROTO (the file ends, cannot be read). */
static int input_ensure(struct bci_tar_read *t, size_t n)
{
	if (t->in_len - t->in_pos >= n)
		return 0;
	if (n > IN_SIZE)
		return -EPROTO;
	memmove(t->in, t->in + t->in_pos, t->in_len - t->in_pos);
	t->in_len -= t->in_pos;
	t->in_pos = 0;
	return input_read(t, n) == 0 && t->in_len >= n ? 0 : -EPROTO;
}

int bci_tar_read_open(const char *path, struct bci_tar_read **out)
{
	static const unsigned char magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	ZSTD_frameHeader frame;
	struct bci_tar_read *t;
	int ret;

	*out = NULL;
	t = reader_new(0);
	if (!t)
		return -ENOMEM;
	t->in = malloc(IN_SIZE);
	t->z = ZSTD_createDCtx();
	if (!t->in || !t->z) {
		bci_tar_read_close(t);
		return -ENOMEM;
	}
	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0) {
		ret = -errno;
		bci_tar_read_close(t);
		return ret;
	}
	/* The frame's header, whole, after zstd's magic (anything else: libarchive's). */
	ret = input_read(t, ZSTD_FRAMEHEADERSIZE_MAX);
	if (ret < 0) {
		bci_tar_read_close(t);
		return ret;
	}
	if (t->in_len < sizeof(magic) || memcmp(t->in, magic, sizeof(magic)) ||
	    ZSTD_getFrameHeader(&frame, t->in, t->in_len) != 0 || frame.frameType != ZSTD_frame ||
	    frame.windowSize > WINDOW_MAX || ZSTD_isError(ZSTD_decompressBegin(t->z))) {
		bci_tar_read_close(t);
		return -EPROTO;
	}
	/*
	 * The ring (ring_wrap()): the window, a block being decoded past it, the
	 * largest record read whole (a pax header and its own header) carried
	 * to the start, and a block of slack.
	 */
	t->block_max = frame.blockSizeMax;
	t->size = (size_t)frame.windowSize + 2 * t->block_max + PAX_MAX + 4 * BLOCK;
	t->buf = malloc(t->size);
	if (!t->buf) {
		bci_tar_read_close(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

int bci_tar_read_open_mem(const void *data, size_t len, struct bci_tar_read **out)
{
	struct bci_tar_read *t = reader_new(BUF_SIZE);

	*out = t;
	if (!t)
		return -ENOMEM;
	t->mem = data;
	t->mem_len = len;
	return 0;
}

void bci_tar_read_close(struct bci_tar_read *t)
{
	if (!t)
		return;
	if (t->fd >= 0)
		close(t->fd);
	ZSTD_freeDCtx(t->z);
	free(t->in);
	free(t->buf);
	free(t);
}

/* From memory: as much as fits, copied into the buffer. */
static int fill_mem(struct bci_tar_read *t)
{
	size_t n = t->size - t->end < t->mem_len ? t->size - t->end : t->mem_len;

	if (!n)
		return -EPROTO;
	memcpy(t->buf + t->end, t->mem, n);
	t->mem += n;
	t->mem_len -= n;
	t->end += n;
	return 0;
}

/*
 * The decoder back at the ring's start, the @tail bytes not consumed yet
 * (less than a record the reader wants whole) carried there. Safe: the ring
 * is full but for less than a block, so the bytes overwritten, at its start,
 * were decoded more than a window and a block ago, and the decoder never
 * reaches back further (zstd takes the bytes before its jump as the older
 * part of its window); it overwrites the ring's old bytes ahead of it only
 * as fast as they fall out of the window.
 */
static void ring_wrap(struct bci_tar_read *t)
{
	size_t tail = t->end - t->pos;

	memmove(t->buf, t->buf + t->pos, tail);
	t->pos = 0;
	t->end = tail;
}

/* ring_wrap() when less than a block of room is left at the ring's end. */
static void ring_make_room(struct bci_tar_read *t)
{
	if (t->size - t->end < t->block_max)
		ring_wrap(t);
}

/* Decodes the next block at the ring's end: 0 (some bytes), 1 (the frame is over), -EPROTO. */
static int fill_zstd(struct bci_tar_read *t)
{
	for (;;) {
		size_t n = ZSTD_nextSrcSizeToDecompress(t->z), out;

		if (!n)
			return 1;
		if (input_ensure(t, n) < 0)
			return -EPROTO;
		out = ZSTD_decompressContinue(t->z, t->buf + t->end, t->size - t->end, t->in + t->in_pos,
					      n);
		if (ZSTD_isError(out))
			return -EPROTO;
		t->in_pos += n;
		if (out) {
			t->end += out;
			return 0;
		}
	}
}

/* The rest of the frame decoded (the tar's padding), its checksum checked: 0 or -EPROTO. */
static int drain_zstd(struct bci_tar_read *t)
{
	int ret;

	do {
		t->pos = t->end; /* the padding is not read: nothing to carry */
		ring_make_room(t);
		ret = fill_zstd(t);
	} while (ret == 0);
	return ret < 0 ? ret : 0;
}

/* At least @want (at most a pax record and its header) decoded bytes at t->buf + t->pos, or -EPROTO. */
static int fill(struct bci_tar_read *t, size_t want)
{
	while (t->end - t->pos < want) {
		int ret;

		if (t->fd < 0) {
			/* The same move as the ring's: the record's start to the buffer's. */
			if (t->size - t->pos < want)
				ring_wrap(t);
			ret = fill_mem(t);
		} else {
			ring_make_room(t);
			/* The frame over before the tar: more frames are libarchive's. */
			ret = fill_zstd(t) ? -EPROTO : 0;
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Passes over @count bytes. */
static int skip(struct bci_tar_read *t, uint64_t count)
{
	while (count) {
		size_t n;

		if (t->pos == t->end && fill(t, 1) < 0)
			return -EPROTO;
		n = t->end - t->pos < count ? t->end - t->pos : (size_t)count;
		t->pos += n;
		count -= n;
	}
	return 0;
}

int bci_tar_read_data(struct bci_tar_read *t, const void **data, size_t *len)
{
	size_t n;

	if (!t->remaining)
		return 0;
	if (t->pos == t->end && fill(t, 1) < 0)
		return -EPROTO;
	n = t->end - t->pos < t->remaining ? t->end - t->pos : (size_t)t->remaining;
	*data = t->buf + t->pos;
	*len = n;
	t->pos += n;
	t->remaining -= n;
	return 1;
}

/* An octal field as libarchive reads it: spaces, digits, then a NUL or a space (or its end). */
static bool octal(const unsigned char *field, size_t len, uint64_t *value)
{
	size_t i = 0, digits = 0;

	*value = 0;
	while (i < len && field[i] == ' ')
		i++;
	for (; i < len && field[i] >= '0' && field[i] <= '7'; i++, digits++) {
		if (*value >> 60)
			return false;
		*value = *value << 3 | (uint64_t)(field[i] - '0');
	}
	return digits && (i == len || field[i] == '\0' || field[i] == ' ');
}

/* The unsigned sum of a header's 512 bytes. */
static unsigned block_sum(const unsigned char *h)
{
#ifdef __SSE2__
	/* psadbw: sixteen bytes summed into two 64-bit lanes a step. */
	__m128i total = _mm_setzero_si128();

	for (size_t i = 0; i < BLOCK; i += 16)
		total = _mm_add_epi64(total, _mm_sad_epu8(_mm_loadu_si128((const __m128i *)(h + i)),
							  _mm_setzero_si128()));
	return (unsigned)(_mm_cvtsi128_si64(total) +
			  _mm_cvtsi128_si64(_mm_unpackhi_epi64(total, total)));
#else
	/*
	 * Eight bytes at a time: each byte into a 16-bit lane (64 words of two
	 * bytes a lane: at most 32640).
	 */
	uint64_t lanes = 0;

	for (size_t i = 0; i < BLOCK; i += 8) {
		uint64_t w;

		memcpy(&w, h + i, sizeof(w));
		lanes += (w & 0x00ff00ff00ff00ffull) + ((w >> 8) & 0x00ff00ff00ff00ffull);
	}
	return (unsigned)((lanes & 0xffff) + ((lanes >> 16) & 0xffff) + ((lanes >> 32) & 0xffff) +
			  (lanes >> 48));
#endif
}

static bool checksum_ok(const unsigned char *h)
{
	uint64_t want;
	unsigned sum = 8 * ' ';
	int ssum = 8 * ' ';

	if (!octal(h + 148, 8, &want))
		return false;
	sum += block_sum(h);
	for (size_t i = 148; i < 156; i++)
		sum -= h[i];
	if (want == sum)
		return true;
	/* Old tars summed signed bytes. */
	for (size_t i = 0; i < BLOCK; i++)
		ssum += (signed char)h[i];
	for (size_t i = 148; i < 156; i++)
		ssum -= (signed char)h[i];
	return ssum >= 0 && want == (uint64_t)ssum;
}

/*
 * Bytes of a path libarchive would hand over unchanged: ASCII (it converts
 * others to the locale's characters, or warns).
 */
static bool ascii(const void *bytes, size_t len)
{
	const unsigned char *b = bytes;

	for (size_t i = 0; i < len; i++)
		if (b[i] >= 0x80)
			return false;
	return true;
}

/* A field of up to @len bytes, NUL-terminated or not, appended to @out (@at used of PATH_MAX). */
static bool field_append(char *out, size_t *at, const unsigned char *field, size_t len)
{
	size_t n = strnlen((const char *)field, len);

	if (*at + n >= PATH_MAX || !ascii(field, n))
		return false;
	memcpy(out + *at, field, n);
	*at += n;
	out[*at] = '\0';
	return true;
}

/*
 * A pax extended header's records ("<length> <key>=<value>\n"): a path or a
 * size for the next entry; times and owners ignored; anything else refused.
 */
static int pax_read(struct bci_tar_read *t, const char *p, size_t len, bool *has_path,
		    bool *has_size, uint64_t *size)
{
	static const char *const ignored[] = { "mtime", "atime", "ctime", "uid", "gid", "uname",
					       "gname" };

	while (len) {
		size_t rec = 0, i = 0, key_len;
		const char *key, *value, *eq;
		size_t value_len;

		for (; i < len && p[i] >= '0' && p[i] <= '9'; i++) {
			if (rec > PAX_MAX)
				return -EPROTO;
			rec = rec * 10 + (size_t)(p[i] - '0');
		}
		if (!i || i >= len || p[i] != ' ' || rec <= i + 1 || rec > len || p[rec - 1] != '\n')
			return -EPROTO;
		key = p + i + 1;
		eq = memchr(key, '=', rec - i - 2);
		if (!eq)
			return -EPROTO;
		key_len = (size_t)(eq - key);
		value = eq + 1;
		value_len = (size_t)(p + rec - 1 - value);
		if (key_len == 4 && !memcmp(key, "path", 4)) {
			if (!value_len || value_len >= PATH_MAX || memchr(value, '\0', value_len) ||
			    !ascii(value, value_len))
				return -EPROTO;
			memcpy(t->path, value, value_len);
			t->path[value_len] = '\0';
			*has_path = true;
		} else if (key_len == 4 && !memcmp(key, "size", 4)) {
			*size = 0;
			if (!value_len || value_len > 15)
				return -EPROTO;
			for (size_t k = 0; k < value_len; k++) {
				if (value[k] < '0' || value[k] > '9')
					return -EPROTO;
				*size = *size * 10 + (uint64_t)(value[k] - '0');
			}
			*has_size = true;
		} else {
			bool known = false;

			for (size_t k = 0; k < sizeof(ignored) / sizeof(ignored[0]) && !known; k++)
				known = strlen(ignored[k]) == key_len && !memcmp(key, ignored[k], key_len);
			if (!known)
				return -EPROTO;
		}
		p += rec;
		len -= rec;
	}
	return 0;
}

int bci_tar_read_next(struct bci_tar_read *t, const char **path, bool *dir, uint64_t *size)
{
	bool has_path = false, has_size = false;
	uint64_t pax_size = 0;

	if (skip(t, t->remaining + t->padding) < 0)
		return -EPROTO;
	t->remaining = t->padding = 0;
	for (;;) {
		const unsigned char *h;
		uint64_t field_size;
		size_t at = 0;
		char type;

		if (fill(t, BLOCK) < 0)
			return -EPROTO;
		h = t->buf + t->pos;
		t->pos += BLOCK;
		/* The end: a block of zeroes (libarchive reads no further either). */
		if (!h[0]) {
			for (size_t i = 0; i < BLOCK; i++)
				if (h[i])
					return -EPROTO;
			if (has_path || has_size || (t->fd >= 0 && drain_zstd(t) < 0))
				return -EPROTO;
			return 0;
		}
		if (!checksum_ok(h) || memcmp(h + 257, "ustar\0" "00", 8) ||
		    (h[124] & 0x80) || !octal(h + 124, 12, &field_size))
			return -EPROTO;
		type = (char)h[156];
		if (type == 'x') {
			size_t padded = (size_t)((field_size + BLOCK - 1) / BLOCK * BLOCK);
			int ret;

			/* One extended header per entry. */
			if (has_path || has_size || field_size > PAX_MAX || fill(t, padded) < 0)
				return -EPROTO;
			ret = pax_read(t, (const char *)t->buf + t->pos, (size_t)field_size, &has_path,
				       &has_size, &pax_size);
			if (ret < 0)
				return ret;
			t->pos += padded;
			continue;
		}
		if (type != '0' && type != '\0' && type != '5')
			return -EPROTO;
		if (!has_path) {
			/* ustar: prefix "/" name, as libarchive joins them. */
			t->path[0] = '\0';
			if (h[345]) {
				if (!field_append(t->path, &at, h + 345, 155))
					return -EPROTO;
				if (t->path[at - 1] != '/' && !field_append(t->path, &at,
									   (const unsigned char *)"/", 1))
					return -EPROTO;
			}
			if (!field_append(t->path, &at, h, 100))
				return -EPROTO;
		}
		*size = has_size ? pax_size : field_size;
		*dir = type == '5';
		/* A folder with bytes, or a file named as a folder: libarchive's to judge. */
		if (!t->path[0] || (*dir && *size) ||
		    (!*dir && t->path[strlen(t->path) - 1] == '/'))
			return -EPROTO;
		t->remaining = *size;
		t->padding = (BLOCK - *size % BLOCK) % BLOCK;
		*path = t->path;
		return 1;
	}
}
