// SPDX-License-Identifier: MIT
/*
 * A run's job logs in one file (cache.h): DATA/cache/<digest>.logs, written
 * by ingest as it streams the archive, so that a result page opens its
 * out/err/dmesg without unpacking the run's tens of thousands of files.
 *
 * The file: "BCILOGS1\n", then one zstd frame per log (so each is read on
 * its own), then the index, records of LOG_RECORD bytes sorted by job and
 * log (u32 job, u32 which, u64 offset, u64 compressed size, u64 size, all
 * little-endian), then the trailer (u64 index offset, u64 record count,
 * "BCILOGS1"). An empty log has no frame (compressed size 0, size 0). A file
 * that does not hold together is as good as absent: the caller unpacks the
 * archive instead.
 *
 * Written through one buffer of LOG_CHUNK bytes: a run's 30k logs are mostly
 * a few dozen bytes each, and a write per frame cost more than compressing.
 */
#include "cache.h"

#include "fsutil.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define LOG_MAGIC "BCILOGS1"
#define LOG_HEADER LOG_MAGIC "\n"
#define LOG_RECORD 32
#define LOG_TRAILER 24
#define LOG_LEVEL 1		/* fast: ingest writes every log of the run */
#define LOG_CHUNK (1 << 20)
/*
 * A log up to this size is stored in a frame of one raw block, written here:
 * zstd gains little or nothing on a few hundred bytes, and starting a
 * compressed frame for each of a run's many small logs weighs on ingest.
 * Any zstd reader decompresses it like any other frame.
 */
#define LOG_RAW_MAX 512
#define ZSTD_FRAME_MAGIC 0xFD2FB528u

static const char *const log_names[] = { "out", "err", "dmesg" };

struct log_record {
	uint32_t job, which;
	uint64_t offset, csize, size;
};

struct bci_cache_logs {
	char path[PATH_MAX], tmp[PATH_MAX + 16], dir[PATH_MAX];
	int fd;
	uint64_t offset;
	ZSTD_CCtx *cctx;
	unsigned char *out;		/* LOG_CHUNK of compressed bytes not yet written */
	size_t out_len;
	struct log_record *records;
	size_t count, cap;
	bool finished;			/* whole on disk, its writeback started */
};

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int which_index(const char *which)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(which, log_names[i]))
			return i;
	return -1;
}

void bci_cache_logs_abort(struct bci_cache_logs *w)
{
	if (!w)
		return;
	if (w->fd >= 0) {
		close(w->fd);
		unlink(w->tmp);
	}
	ZSTD_freeCCtx(w->cctx);
	free(w->out);
	free(w->records);
	free(w);
}

int bci_cache_logs_begin(const char *data_dir, const char *digest, struct bci_cache_logs **out,
			 char *err, size_t err_size)
{
	struct bci_cache_logs *w = calloc(1, sizeof(*w));
	int ret;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	if (!bci_sha256_hex_ok(digest)) {
		snprintf(err, err_size, "'%s' is not a sha256 digest", digest ? digest : "");
		ret = -EINVAL;
		goto fail;
	}
	if ((size_t)snprintf(w->dir, sizeof(w->dir), "%s/cache", data_dir) >= sizeof(w->dir) ||
	    (size_t)snprintf(w->path, sizeof(w->path), "%s/%s.logs", w->dir, digest) >= sizeof(w->path)) {
		ret = -ENAMETOOLONG;
		goto fail;
	}
	/* Unique per thread: serve's threads may ingest the same archive at once. */
	snprintf(w->tmp, sizeof(w->tmp), "%s/.%s.logs.XXXXXX", w->dir, digest);
	ret = bci_mkdir_p(w->dir, 0755);
	if (ret == 0) {
		w->fd = mkostemp(w->tmp, O_CLOEXEC);
		if (w->fd < 0)
			ret = -errno;
	}
	if (ret == 0 && fchmod(w->fd, 0644) < 0)
		ret = -errno;
	if (ret == 0)
		ret = bci_write_all(w->fd, LOG_HEADER, strlen(LOG_HEADER));
	if (ret < 0) {
		snprintf(err, err_size, "%s: %s", w->fd >= 0 ? w->tmp : w->dir, strerror(-ret));
		goto fail;
	}
	w->offset = strlen(LOG_HEADER);
	w->cctx = ZSTD_createCCtx();
	w->out = malloc(LOG_CHUNK);
	if (!w->cctx || !w->out) {
		ret = -ENOMEM;
		goto fail;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, LOG_LEVEL);
	*out = w;
	return 0;
fail:
	bci_cache_logs_abort(w);
	return ret;
}

/* Writes out what the buffer holds. */
static int out_flush(struct bci_cache_logs *w)
{
	int ret = bci_write_all(w->fd, w->out, w->out_len);

	w->out_len = 0;
	return ret;
}

/* Compresses @n bytes of @in (the last piece when @end) and appends what comes out. */
static int frame_feed(struct bci_cache_logs *w, const void *data, size_t n, int end)
{
	ZSTD_inBuffer in = { data, n, 0 };
	size_t left;

	do {
		ZSTD_outBuffer zout = { w->out + w->out_len, LOG_CHUNK - w->out_len, 0 };
		int ret;

		left = ZSTD_compressStream2(w->cctx, &zout, &in, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left))
			return -EIO;
		w->out_len += zout.pos;
		w->offset += zout.pos;
		/* Full, or a frame not finished for lack of room: make room. */
		if (w->out_len == LOG_CHUNK || (end ? left != 0 : in.pos < in.size)) {
			ret = out_flush(w);
			if (ret < 0)
				return ret;
		}
	} while (end ? left != 0 : in.pos < in.size);
	return 0;
}

/*
 * The frame of @len (1 to LOG_RAW_MAX) bytes of @data in one raw block (RFC
 * 8878): the magic, a header saying one segment of that many bytes (no
 * window descriptor, no checksum), the block header (last block, raw, its
 * size) and the bytes as they are.
 */
static int raw_frame(struct bci_cache_logs *w, const char *data, size_t len)
{
	unsigned char *p;
	size_t header;
	int ret;

	if (LOG_CHUNK - w->out_len < len + 16) {
		ret = out_flush(w);
		if (ret < 0)
			return ret;
	}
	p = w->out + w->out_len;
	put_le(p, ZSTD_FRAME_MAGIC, 4);
	if (len < 256) {
		p[4] = 0x20;		/* single segment, a 1-byte content size */
		p[5] = (unsigned char)len;
		header = 6;
	} else {
		p[4] = 0x60;		/* single segment, a 2-byte content size less 256 */
		put_le(p + 5, len - 256, 2);
		header = 7;
	}
	put_le(p + header, (uint64_t)len << 3 | 1, 3);	/* size, type raw (0), last block */
	memcpy(p + header + 3, data, len);
	w->out_len += header + 3 + len;
	w->offset += header + 3 + len;
	return 0;
}

int bci_cache_logs_add(struct bci_cache_logs *w, unsigned job, const char *which, const char *data,
		       size_t len, int fd, char *err, size_t err_size)
{
	struct log_record r = { .job = job, .offset = w->offset };
	int kind = which_index(which), ret = 0;

	if (kind < 0) {
		snprintf(err, err_size, "'%s' is not a test log (out, err or dmesg)", which);
		return -EINVAL;
	}
	r.which = (uint32_t)kind;
	if (w->count == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 1024;
		struct log_record *grown = realloc(w->records, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		w->records = grown;
		w->cap = cap;
	}
	if (fd < 0 && len == 0) {
		r.size = 0;
	} else if (fd < 0 && len <= LOG_RAW_MAX) {
		r.size = len;
		ret = raw_frame(w, data, len);
	} else if (fd < 0) {
		ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
		ZSTD_CCtx_setPledgedSrcSize(w->cctx, len);
		r.size = len;
		ret = frame_feed(w, data, len, 1);
	} else {
		/* A log spilled to a file: read it a chunk at a time. */
		char *chunk = malloc(LOG_CHUNK);
		ssize_t n;
		off_t at = 0;

		ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);

		if (!chunk)
			return -ENOMEM;
		while (ret == 0 && (n = pread(fd, chunk, LOG_CHUNK, at)) > 0) {
			ret = frame_feed(w, chunk, (size_t)n, 0);
			at += n;
		}
		if (ret == 0 && n < 0)
			ret = -errno;
		if (ret == 0)
			ret = frame_feed(w, "", 0, 1);
		r.size = (uint64_t)at;
		free(chunk);
	}
	if (ret < 0) {
		snprintf(err, err_size, "%s: job %u %s: %s", w->tmp, job, which, strerror(-ret));
		return ret;
	}
	r.csize = w->offset - r.offset;
	w->records[w->count++] = r;
	return 0;
}

static int record_compare(const void *a, const void *b)
{
	const struct log_record *x = a, *y = b;

	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return x->which < y->which ? -1 : x->which > y->which;
}

/*
 * The records by job and log: counted into place when the jobs are about as
 * many as the records (a run's 10k jobs come in the archive's order, 0, 1,
 * 10, 100 ...), else sorted. Equal keys keep their order either way.
 */
static int records_order(struct bci_cache_logs *w)
{
	size_t keys = 0, *start;
	struct log_record *sorted;

	for (size_t i = 0; i < w->count; i++)
		if ((size_t)w->records[i].job * 3 + w->records[i].which + 1 > keys)
			keys = (size_t)w->records[i].job * 3 + w->records[i].which + 1;
	if (keys > 4 * w->count + 1024) {
		qsort(w->records, w->count, sizeof(*w->records), record_compare);
		return 0;
	}
	start = calloc(keys + 1, sizeof(*start));
	sorted = malloc(w->count * sizeof(*sorted));
	if (!start || !sorted) {
		free(start);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->count; i++)
		start[(size_t)w->records[i].job * 3 + w->records[i].which + 1]++;
	for (size_t k = 0; k < keys; k++)
		start[k + 1] += start[k];
	for (size_t i = 0; i < w->count; i++)
		sorted[start[(size_t)w->records[i].job * 3 + w->records[i].which]++] = w->records[i];
	free(start);
	free(w->records);
	w->records = sorted;
	w->cap = w->count;
	return 0;
}

int bci_cache_logs_finish(struct bci_cache_logs *w, char *err, size_t err_size)
{
	unsigned char *index, *p;
	size_t bytes = w->count * LOG_RECORD + LOG_TRAILER;
	int ret;

	if (w->finished)
		return 0;
	if (w->count && records_order(w) < 0) {
		snprintf(err, err_size, "%s: %s", w->tmp, strerror(ENOMEM));
		bci_cache_logs_abort(w);
		return -ENOMEM;
	}
	index = malloc(bytes);
	if (!index) {
		snprintf(err, err_size, "%s: %s", w->tmp, strerror(ENOMEM));
		bci_cache_logs_abort(w);
		return -ENOMEM;
	}
	p = index;
	for (size_t i = 0; i < w->count; i++, p += LOG_RECORD) {
		put_le(p, w->records[i].job, 4);
		put_le(p + 4, w->records[i].which, 4);
		put_le(p + 8, w->records[i].offset, 8);
		put_le(p + 16, w->records[i].csize, 8);
		put_le(p + 24, w->records[i].size, 8);
	}
	put_le(p, w->offset, 8);
	put_le(p + 8, w->count, 8);
	memcpy(p + 16, LOG_MAGIC, 8);
	ret = out_flush(w);
	if (ret == 0)
		ret = bci_write_all(w->fd, index, bytes);
	free(index);
	if (ret < 0) {
		snprintf(err, err_size, "%s: %s", w->tmp, strerror(-ret));
		bci_cache_logs_abort(w);
		return ret;
	}
	/* The disk starts on it now; commit's fsync waits for what is left. */
	sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	w->finished = true;
	return 0;
}

int bci_cache_logs_commit(struct bci_cache_logs *w, char *err, size_t err_size)
{
	int ret = bci_cache_logs_finish(w, err, err_size);

	if (ret < 0)
		return ret;
	/* Durable before it is named: a crash leaves the old name or none, never half a file. */
	if (fsync(w->fd) < 0)
		ret = -errno;
	if (ret == 0 && rename(w->tmp, w->path) < 0)
		ret = -errno;
	if (ret == 0)
		ret = bci_fsync_dir(w->dir);
	if (ret < 0)
		snprintf(err, err_size, "%s: %s", w->tmp, strerror(-ret));
	else
		w->tmp[0] = '\0';	/* renamed: nothing to unlink */
	if (w->fd >= 0 && ret == 0) {
		close(w->fd);
		w->fd = -1;
	}
	bci_cache_logs_abort(w);
	return ret;
}

/* ---- reading one log back ---- */

static int pread_all(int fd, void *buf, size_t len, uint64_t at)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(at + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* The record for (@job, @which): 1 found, 0 not there, -ENXIO when the file does not hold together. */
static int record_find(int fd, uint64_t index, uint64_t count, uint32_t job, uint32_t which,
		       struct log_record *r)
{
	uint64_t lo = 0, hi = count;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		unsigned char rec[LOG_RECORD];
		struct log_record key = { .job = job, .which = which };
		int cmp;

		if (pread_all(fd, rec, sizeof(rec), index + mid * LOG_RECORD) < 0)
			return -ENXIO;
		r->job = (uint32_t)get_le(rec, 4);
		r->which = (uint32_t)get_le(rec + 4, 4);
		r->offset = get_le(rec + 8, 8);
		r->csize = get_le(rec + 16, 8);
		r->size = get_le(rec + 24, 8);
		cmp = record_compare(&key, r);
		if (!cmp)
			return r->offset >= strlen(LOG_HEADER) && r->offset <= index &&
			       r->csize <= index - r->offset ? 1 : -ENXIO;
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

/* Decompresses the frame of @r into a new memfd: its fd, or -ENXIO when it does not decompress to its size. */
static int frame_open(int fd, const struct log_record *r)
{
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	char *in = malloc(LOG_CHUNK), *out = malloc(LOG_CHUNK);
	uint64_t at = r->offset, left = r->csize, made = 0;
	int mem = memfd_create("bci-log", MFD_CLOEXEC), ret = 0;
	/* An empty log has no frame to finish. */
	size_t hint = r->csize ? 1 : 0;

	if (!dctx || !in || !out || mem < 0)
		ret = mem < 0 ? -errno : -ENOMEM;
	while (ret == 0 && left) {
		size_t n = left < LOG_CHUNK ? (size_t)left : LOG_CHUNK;
		ZSTD_inBuffer zin = { in, n, 0 };

		ret = pread_all(fd, in, n, at) < 0 ? -ENXIO : 0;
		at += n;
		left -= n;
		while (ret == 0 && zin.pos < zin.size) {
			ZSTD_outBuffer zout = { out, LOG_CHUNK, 0 };

			hint = ZSTD_decompressStream(dctx, &zout, &zin);
			if (ZSTD_isError(hint) || made + zout.pos > r->size)
				ret = -ENXIO;
			else
				ret = bci_write_all(mem, out, zout.pos);
			made += zout.pos;
		}
	}
	/* Whatever output is still held inside the decoder. */
	while (ret == 0 && hint != 0) {
		ZSTD_inBuffer zin = { in, 0, 0 };
		ZSTD_outBuffer zout = { out, LOG_CHUNK, 0 };

		hint = ZSTD_decompressStream(dctx, &zout, &zin);
		if (ZSTD_isError(hint) || zout.pos == 0 || made + zout.pos > r->size)
			ret = -ENXIO;
		else
			ret = bci_write_all(mem, out, zout.pos);
		made += zout.pos;
	}
	if (ret == 0 && made != r->size)
		ret = -ENXIO;
	if (ret == 0 && lseek(mem, 0, SEEK_SET) < 0)
		ret = -errno;
	ZSTD_freeDCtx(dctx);
	free(in);
	free(out);
	if (ret < 0) {
		if (mem >= 0)
			close(mem);
		return ret;
	}
	return mem;
}

int bci_cache_logs_open(const char *data_dir, const char *digest, unsigned job, const char *which,
			char *err, size_t err_size)
{
	char path[PATH_MAX];
	unsigned char trailer[LOG_TRAILER];
	struct log_record r;
	struct stat st;
	uint64_t index, count;
	int kind = which_index(which), fd, ret;

	if (kind < 0 || !bci_sha256_hex_ok(digest))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/cache/%s.logs", data_dir, digest) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -ENXIO;
	ret = fstat(fd, &st) < 0 || (uint64_t)st.st_size < strlen(LOG_HEADER) + LOG_TRAILER ||
	      pread_all(fd, trailer, sizeof(trailer), (uint64_t)st.st_size - LOG_TRAILER) < 0 ||
	      memcmp(trailer + 16, LOG_MAGIC, 8) ? -ENXIO : 0;
	if (ret == 0) {
		index = get_le(trailer, 8);
		count = get_le(trailer + 8, 8);
		if (index < strlen(LOG_HEADER) || index > (uint64_t)st.st_size ||
		    count > ((uint64_t)st.st_size - index) / LOG_RECORD ||
		    index + count * LOG_RECORD + LOG_TRAILER != (uint64_t)st.st_size)
			ret = -ENXIO;
	}
	if (ret == 0)
		ret = record_find(fd, index, count, job, (uint32_t)kind, &r);
	if (ret == 0) {
		snprintf(err, err_size, "%s: job %u has no %s.txt", path, job, which);
		ret = -ENOENT;
	} else if (ret == 1) {
		ret = frame_open(fd, &r);
	}
	close(fd);
	return ret;
}
