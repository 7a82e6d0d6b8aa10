// SPDX-License-Identifier: MIT
/*
 * The run archive's tar layer (internal.h): zstd decoded block by block
 * straight into one ring buffer, headers parsed where they lie in it, entries'
 * bytes handed out from it without a copy. What it reads is the format at the
 * top of lib/run_archive.h; check.c decides what the entries may be.
 *
 * zstd's streaming decoder (ZSTD_decompressStream) decodes into a window of
 * its own and copies every byte out again: the whole run once more for
 * ingest's scan, which reads every file. Its buffer-less functions (zstd.h's
 * static-linking section, the ones the streaming decoder is built on) decode
 * a block where they are told, as long as the last window's bytes stay where
 * they were: the ring holds the window, the largest block, and the largest
 * record read whole (a pax header), so that when the decoder goes back to its
 * start, what it and the reader still need is intact (ring_wrap()).
 *
 * A header's checksum is the unsigned (or, as old tars wrote it, signed) sum
 * of its 512 bytes with the checksum field read as spaces; a ustar path is
 * prefix "/" name (no '/' added when the prefix ends with one); the tar ends
 * at its first block of zeroes.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY	/* the buffer-less decoder */
#include <zstd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define BLOCK TAR_BLOCK
/* A plain tar from memory: bytes held at once; headers and pax records are read whole from it. */
#define PLAIN_BUF_SIZE ((size_t)256 << 10)
/* Compressed bytes read from a file at once: a whole block's, at least. */
#define IN_SIZE ((size_t)256 << 10)

struct bci_tar_reader {
	int fd;				/* -1: from memory */
	ZSTD_DCtx *z;			/* NULL: a plain tar */
	unsigned char *in_buf;		/* from a file: the compressed bytes read */
	const unsigned char *in;	/* in_buf, or the archive in memory; [in_pos, in_len) not decoded */
	size_t in_pos, in_len;
	bool in_eof;
	const unsigned char *mem;	/* a plain tar: what is not in the buffer yet */
	size_t mem_len;
	unsigned char *buf;		/* decoded: [pos, end) not consumed; the ring when zstd */
	size_t size;			/* of buf */
	size_t block_max;		/* the most bytes a block of the frame decodes to */
	size_t pos, end;
	uint64_t remaining;		/* of the current entry's bytes */
	uint64_t padding;		/* after them, to the next block */
	size_t entries;			/* headers handed out */
	bool done;			/* the end reached and checked */
	int failed;			/* once refused or failed, every call says so again */
	char *err;
	size_t err_size;
	char path[PATH_MAX];
	char link[PATH_MAX];
};

/* @err formatted, the reader failed for good: returns @ret. */
static int __attribute__((format(printf, 3, 4))) fail(struct bci_tar_reader *t, int ret,
						      const char *fmt, ...)
{
	va_list ap;

	if (t->err && t->err_size) {
		va_start(ap, fmt);
		vsnprintf(t->err, t->err_size, fmt, ap);
		va_end(ap);
	}
	t->failed = ret;
	return ret;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	uint64_t any = 0, w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		any |= w;
	}
	while (n--)
		any |= *p++;
	return any == 0;
}

/* ---- the input: a file or memory ---- */

/* Reads the file until t->in holds @n bytes or the file ends: 0, or -errno. */
static int input_read(struct bci_tar_reader *t, size_t n)
{
	while (t->in_len < n && !t->in_eof) {
		ssize_t got = read(t->fd, t->in_buf + t->in_len, IN_SIZE - t->in_len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return fail(t, -errno, "reading the archive: %s", strerror(errno));
		t->in_len += (size_t)got;
		t->in_eof = got == 0;
	}
	return 0;
}

/* At least @n compressed bytes at t->in + t->in_pos: 0, -EINVAL (the archive ends), -errno. */
static int input_ensure(struct bci_tar_reader *t, size_t n)
{
	int ret;

	if (t->in_len - t->in_pos >= n)
		return 0;
	if (t->fd >= 0 && n <= IN_SIZE) {
		memmove(t->in_buf, t->in_buf + t->in_pos, t->in_len - t->in_pos);
		t->in_len -= t->in_pos;
		t->in_pos = 0;
		ret = input_read(t, n);
		if (ret < 0)
			return ret;
		if (t->in_len >= n)
			return 0;
	}
	return fail(t, -EINVAL, "the archive is cut short (its zstd frame is incomplete)");
}

/* Why the bytes at the archive's start are not a zstd frame, in words. */
static const char *not_zstd(const unsigned char *p, size_t n)
{
	if (n == 0)
		return "an empty file (a run archive is a tar compressed with zstd)";
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return "gzip-compressed (a run archive is compressed with zstd)";
	if (n >= 6 && !memcmp(p, "\xfd" "7zXZ\0", 6))
		return "xz-compressed (a run archive is compressed with zstd)";
	if (n >= 3 && !memcmp(p, "BZh", 3))
		return "bzip2-compressed (a run archive is compressed with zstd)";
	if (n >= TAR_MAGIC + 5 && !memcmp(p + TAR_MAGIC, "ustar", 5))
		return "an uncompressed tar (a run archive is compressed with zstd)";
	return "not a zstd frame (a run archive is a tar compressed with zstd)";
}

/* The frame's header read, the decoder and the ring ready for it. */
static int frame_begin(struct bci_tar_reader *t)
{
	static const unsigned char magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	ZSTD_frameHeader frame;
	size_t ret;

	if (t->in_len < sizeof(magic) || memcmp(t->in, magic, sizeof(magic)))
		return fail(t, -EINVAL, "%s", not_zstd(t->in, t->in_len));
	ret = ZSTD_getFrameHeader(&frame, t->in, t->in_len);
	if (ZSTD_isError(ret))
		return fail(t, -EINVAL, "not a zstd frame (%s)", ZSTD_getErrorName(ret));
	if (ret > 0)
		return fail(t, -EINVAL, "the archive is cut short (in its zstd frame's header)");
	if (frame.windowSize > RUN_ARCHIVE_WINDOW_MAX)
		return fail(t, -EINVAL, "a zstd window of %llu bytes (at most %llu)",
			    (unsigned long long)frame.windowSize,
			    (unsigned long long)RUN_ARCHIVE_WINDOW_MAX);
	if (ZSTD_isError(ZSTD_decompressBegin(t->z)))
		return fail(t, -ENOMEM, "the zstd decoder: %s", strerror(ENOMEM));
	/*
	 * The ring (ring_wrap()): the window, a block being decoded past it, the
	 * largest record read whole (a pax header and its own header) carried
	 * to the start, and a block of slack.
	 */
	t->block_max = frame.blockSizeMax;
	t->size = (size_t)frame.windowSize + 2 * t->block_max + TAR_PAX_MAX + 4 * BLOCK;
	t->buf = malloc(t->size);
	if (!t->buf)
		return fail(t, -ENOMEM, "%s", strerror(ENOMEM));
	return 0;
}

static struct bci_tar_reader *reader_new(char *err, size_t err_size)
{
	struct bci_tar_reader *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->fd = -1;
	t->err = err;
	t->err_size = err_size;
	if (err && err_size)
		err[0] = '\0';
	return t;
}

int bci_tar_reader_open_fd(int fd, struct bci_tar_reader **out, char *err, size_t err_size)
{
	struct bci_tar_reader *t = reader_new(err, err_size);
	int ret;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->fd = fd;
	t->in_buf = malloc(IN_SIZE);
	t->in = t->in_buf;
	t->z = ZSTD_createDCtx();
	if (!t->in_buf || !t->z) {
		bci_tar_reader_close(t);
		return -ENOMEM;
	}
	/* A block's worth, at least: enough to say what the file is when it is not zstd. */
	ret = input_read(t, BLOCK);
	if (ret == 0)
		ret = frame_begin(t);
	if (ret < 0) {
		bci_tar_reader_close(t);
		return ret;
	}
	*out = t;
	return 0;
}

int bci_tar_reader_open_memory(const void *data, size_t len, bool plain, struct bci_tar_reader **out,
			       char *err, size_t err_size)
{
	struct bci_tar_reader *t = reader_new(err, err_size);
	int ret = 0;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	if (plain) {
		t->mem = data;
		t->mem_len = len;
		t->size = PLAIN_BUF_SIZE;
		t->buf = malloc(t->size);
		if (!t->buf)
			ret = -ENOMEM;
	} else {
		t->in = data;
		t->in_len = len;
		t->in_eof = true;
		t->z = ZSTD_createDCtx();
		ret = t->z ? frame_begin(t) : -ENOMEM;
	}
	if (ret < 0) {
		bci_tar_reader_close(t);
		return ret;
	}
	*out = t;
	return 0;
}

void bci_tar_reader_close(struct bci_tar_reader *t)
{
	if (!t)
		return;
	ZSTD_freeDCtx(t->z);
	free(t->in_buf);
	free(t->buf);
	free(t);
}

/* ---- decoded bytes: the ring ---- */

/* A plain tar: as much as fits, copied into the buffer; -EINVAL when it is all there already. */
static int fill_plain(struct bci_tar_reader *t)
{
	size_t n = t->size - t->end < t->mem_len ? t->size - t->end : t->mem_len;

	if (!n)
		return fail(t, -EINVAL, "the archive is cut short (after entry %zu)", t->entries);
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
static void ring_wrap(struct bci_tar_reader *t)
{
	size_t tail = t->end - t->pos;

	memmove(t->buf, t->buf + t->pos, tail);
	t->pos = 0;
	t->end = tail;
}

/* ring_wrap() when less than a block of room is left at the ring's end. */
static void ring_make_room(struct bci_tar_reader *t)
{
	if (t->size - t->end < t->block_max)
		ring_wrap(t);
}

/* Decodes the next block at the ring's end: 0 (some bytes), 1 (the frame is over), -EINVAL, -errno. */
static int fill_zstd(struct bci_tar_reader *t)
{
	for (;;) {
		size_t n = ZSTD_nextSrcSizeToDecompress(t->z), out;
		int ret;

		if (!n)
			return 1;
		ret = input_ensure(t, n);
		if (ret < 0)
			return ret;
		out = ZSTD_decompressContinue(t->z, t->buf + t->end, t->size - t->end, t->in + t->in_pos,
					      n);
		if (ZSTD_isError(out))
			return fail(t, -EINVAL, "the zstd frame is corrupt (%s)", ZSTD_getErrorName(out));
		t->in_pos += n;
		if (out) {
			t->end += out;
			return 0;
		}
	}
}

/* At least @want (at most a pax record and its header) decoded bytes at t->buf + t->pos. */
static int fill(struct bci_tar_reader *t, size_t want)
{
	while (t->end - t->pos < want) {
		int ret;

		if (!t->z) {
			/* The same move as the ring's: the record's start to the buffer's. */
			if (t->size - t->pos < want)
				ring_wrap(t);
			ret = fill_plain(t);
		} else {
			ring_make_room(t);
			ret = fill_zstd(t);
			if (ret == 1)
				ret = fail(t, -EINVAL, "the archive is cut short (its zstd frame ends"
					   " inside the tar, after entry %zu)", t->entries);
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Passes over @count bytes. */
static int skip(struct bci_tar_reader *t, uint64_t count)
{
	while (count) {
		size_t n;

		if (t->pos == t->end && fill(t, 1) < 0)
			return t->failed;
		n = t->end - t->pos < count ? t->end - t->pos : (size_t)count;
		t->pos += n;
		count -= n;
	}
	return 0;
}

int bci_tar_reader_data(struct bci_tar_reader *t, const void **data, size_t *len)
{
	size_t n;

	if (t->failed)
		return t->failed;
	if (!t->remaining)
		return 0;
	if (t->pos == t->end && fill(t, 1) < 0)
		return t->failed;
	n = t->end - t->pos < t->remaining ? t->end - t->pos : (size_t)t->remaining;
	*data = t->buf + t->pos;
	*len = n;
	t->pos += n;
	t->remaining -= n;
	return 1;
}

/*
 * After the tar's end: nothing but zeroes to the end of the frame (its
 * checksum checked by the decoder as it ends), and nothing after the frame.
 */
static int end_check(struct bci_tar_reader *t)
{
	int ret = 0;

	for (;;) {
		if (!all_zero(t->buf + t->pos, t->end - t->pos))
			return fail(t, -EINVAL, "bytes after the tar's end (entry %zu was the last)",
				    t->entries);
		if (!t->z) {
			if (!t->mem_len)
				break;
			t->pos = t->end = 0;
			fill_plain(t);
			continue;
		}
		/* Nothing to carry; the ring goes back to its start only as decoding needs it. */
		t->pos = t->end;
		ring_make_room(t);
		ret = fill_zstd(t);
		if (ret < 0)
			return ret;
		if (ret == 1)
			break;
	}
	if (t->z) {
		if (t->fd >= 0 && t->in_pos == t->in_len && !t->in_eof) {
			t->in_pos = t->in_len = 0;
			ret = input_read(t, 1);
			if (ret < 0)
				return ret;
		}
		if (t->in_pos < t->in_len)
			return fail(t, -EINVAL, "bytes after the zstd frame (a run archive is one frame)");
	}
	t->done = true;
	return 0;
}

/* ---- headers ---- */

/* An octal field: spaces, digits, then a NUL or a space (or its end). */
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

	if (!octal(h + TAR_CHECKSUM, 8, &want))
		return false;
	sum += block_sum(h);
	for (size_t i = TAR_CHECKSUM; i < TAR_CHECKSUM + 8; i++)
		sum -= h[i];
	if (want == sum)
		return true;
	/* Old tars summed signed bytes. */
	for (size_t i = 0; i < BLOCK; i++)
		ssum += (signed char)h[i];
	for (size_t i = TAR_CHECKSUM; i < TAR_CHECKSUM + 8; i++)
		ssum -= (signed char)h[i];
	return ssum >= 0 && want == (uint64_t)ssum;
}

/* A field of up to @len bytes, NUL-terminated or not, appended to @out (@at used of PATH_MAX). */
static void field_append(char *out, size_t *at, const unsigned char *field, size_t len)
{
	size_t n = strnlen((const char *)field, len);

	memcpy(out + *at, field, n);
	*at += n;
	out[*at] = '\0';
}

/* A pax record's value as a string into @out (PATH_MAX): not empty, no NUL. */
static bool pax_string(const char *value, size_t len, char *out)
{
	if (!len || len >= PATH_MAX || memchr(value, '\0', len))
		return false;
	memcpy(out, value, len);
	out[len] = '\0';
	return true;
}

/*
 * A pax extended header's records ("<length> <key>=<value>\n") for entry
 * @number: a path, a link's target or a size; times, owners and the
 * header's charset read and ignored; any other key refused.
 */
static int pax_read(struct bci_tar_reader *t, size_t number, const char *p, size_t len,
		    bool *has_path, bool *has_link, bool *has_size, uint64_t *size)
{
	static const char *const ignored[] = { "mtime", "atime", "ctime", "uid", "gid", "uname",
					       "gname", "hdrcharset" };

	while (len) {
		size_t rec = 0, i = 0, key_len, value_len;
		const char *key, *value, *eq;

		for (; i < len && p[i] >= '0' && p[i] <= '9'; i++) {
			if (rec > TAR_PAX_MAX)
				break;
			rec = rec * 10 + (size_t)(p[i] - '0');
		}
		if (!i || i >= len || p[i] != ' ' || rec <= i + 1 || rec > len || p[rec - 1] != '\n' ||
		    !(eq = memchr(p + i + 1, '=', rec - i - 2)))
			return fail(t, -EINVAL, "entry %zu: a malformed pax record", number);
		key = p + i + 1;
		key_len = (size_t)(eq - key);
		value = eq + 1;
		value_len = (size_t)(p + rec - 1 - value);
		if (key_len == 4 && !memcmp(key, "path", 4)) {
			if (!pax_string(value, value_len, t->path))
				return fail(t, -EINVAL, "entry %zu: a pax path that is empty, too long"
					    " or holds a NUL", number);
			*has_path = true;
		} else if (key_len == 8 && !memcmp(key, "linkpath", 8)) {
			if (!pax_string(value, value_len, t->link))
				return fail(t, -EINVAL, "entry %zu: a pax linkpath that is empty, too"
					    " long or holds a NUL", number);
			*has_link = true;
		} else if (key_len == 4 && !memcmp(key, "size", 4)) {
			*size = 0;
			if (!value_len || value_len > 15)
				return fail(t, -EINVAL, "entry %zu: a pax size that is not a number",
					    number);
			for (size_t k = 0; k < value_len; k++) {
				if (value[k] < '0' || value[k] > '9')
					return fail(t, -EINVAL, "entry %zu: a pax size that is not a"
						    " number", number);
				*size = *size * 10 + (uint64_t)(value[k] - '0');
			}
			*has_size = true;
		} else {
			bool known = false;
			char shown[64];

			for (size_t k = 0; k < sizeof(ignored) / sizeof(ignored[0]) && !known; k++)
				known = strlen(ignored[k]) == key_len && !memcmp(key, ignored[k], key_len);
			if (!known) {
				size_t n = key_len < sizeof(shown) - 1 ? key_len : sizeof(shown) - 1;

				for (size_t k = 0; k < n; k++)
					shown[k] = key[k] >= 0x20 && key[k] < 0x7f ? key[k] : '?';
				shown[n] = '\0';
				return fail(t, -EINVAL, "entry %zu: a pax record '%s' (a run archive's"
					    " give a path or a size)", number, shown);
			}
		}
		p += rec;
		len -= rec;
	}
	return 0;
}

int bci_tar_reader_next(struct bci_tar_reader *t, struct bci_tar_entry *e)
{
	bool has_path = false, has_link = false, has_size = false;
	uint64_t pax_size = 0;
	size_t number = t->entries + 1;

	if (t->failed)
		return t->failed;
	if (t->done)
		return 0;
	if (skip(t, t->remaining + t->padding) < 0)
		return t->failed;
	t->remaining = t->padding = 0;
	for (;;) {
		const unsigned char *h;
		uint64_t field_size;
		size_t at = 0;
		char type;

		if (fill(t, BLOCK) < 0)
			return t->failed;
		h = t->buf + t->pos;
		t->pos += BLOCK;
		/* The end: a block of zeroes. */
		if (all_zero(h, BLOCK)) {
			if (has_path || has_size || has_link)
				return fail(t, -EINVAL, "entry %zu: a pax header and no entry after it",
					    number);
			return end_check(t);
		}
		if (!checksum_ok(h))
			return fail(t, -EINVAL, "entry %zu: not a tar header (its checksum does not"
				    " match)", number);
		if (!memcmp(h + TAR_MAGIC, "ustar  \0", TAR_USTAR_LEN))
			return fail(t, -EINVAL, "entry %zu: a GNU tar header (a run archive is POSIX"
				    " ustar with pax records)", number);
		if (memcmp(h + TAR_MAGIC, TAR_USTAR, TAR_USTAR_LEN))
			return fail(t, -EINVAL, "entry %zu: not a POSIX ustar header", number);
		type = (char)h[TAR_TYPE];
		/* A pax size stands for the field (a writer may leave it zero, or base-256). */
		if (has_size && type != TAR_TYPE_PAX)
			field_size = pax_size;
		else if (h[TAR_SIZE] & 0x80)
			return fail(t, -EINVAL, "entry %zu: a size in base-256 (a run archive gives a"
				    " large size in a pax record)", number);
		else if (!octal(h + TAR_SIZE, 12, &field_size))
			return fail(t, -EINVAL, "entry %zu: a size field that is not octal", number);
		if (type == TAR_TYPE_PAX) {
			size_t padded = (size_t)((field_size + BLOCK - 1) / BLOCK * BLOCK);
			int ret;

			/* One extended header per entry. */
			if (has_path || has_size || has_link)
				return fail(t, -EINVAL, "entry %zu: two pax headers", number);
			if (field_size > TAR_PAX_MAX)
				return fail(t, -EINVAL, "entry %zu: a pax header of %llu bytes (at most"
					    " %zu)", number, (unsigned long long)field_size,
					    TAR_PAX_MAX);
			if (fill(t, padded) < 0)
				return t->failed;
			ret = pax_read(t, number, (const char *)t->buf + t->pos, (size_t)field_size,
				       &has_path, &has_link, &has_size, &pax_size);
			if (ret < 0)
				return ret;
			t->pos += padded;
			continue;
		}
		if (type == 'g')
			return fail(t, -EINVAL, "entry %zu: a pax global header (a run archive has"
				    " none)", number);
		if (!has_path) {
			/* ustar: prefix "/" name. */
			t->path[0] = '\0';
			if (h[TAR_PREFIX]) {
				field_append(t->path, &at, h + TAR_PREFIX, TAR_PREFIX_LEN);
				if (t->path[at - 1] != '/')
					field_append(t->path, &at, (const unsigned char *)"/", 1);
			}
			field_append(t->path, &at, h + TAR_NAME, TAR_NAME_LEN);
		}
		if (!has_link) {
			at = 0;
			t->link[0] = '\0';
			field_append(t->link, &at, h + TAR_LINK, 100);
		}
		t->entries = number;
		*e = (struct bci_tar_entry){
			.number = number, .path = t->path, .type = type, .link = t->link,
			.size = field_size,
		};
		t->remaining = e->size;
		t->padding = (BLOCK - e->size % BLOCK) % BLOCK;
		return 1;
	}
}
