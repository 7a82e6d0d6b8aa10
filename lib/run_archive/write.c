// SPDX-License-Identifier: MIT
/*
 * The run archive's writer (lib/run_archive.h has the format): the run
 * folder's manifest built (ids, kernel, command line, every boot's record,
 * the EFI boot entries, every file's size and sha256), then manifest.json
 * and every file in the manifest's order as ustar entries, streamed through
 * libzstd into a temporary file renamed when complete.
 *
 * Our own headers rather than libarchive's writer: the format is then one
 * module's, written and read by the same code (read.c takes exactly what
 * this writes), and collect needs libzstd only.
 */
#include "run_archive.h"
#include "internal.h"

#include "fsutil.h"
#include "message.h"
#include "manifest.h"
#include "results_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* The value of the first "@key value" entry of @text (results_dir.h), a copy, or NULL. */
static char *kv_value(const char *text, const char *wanted)
{
	char *copy = text ? strdup(text) : NULL, *cursor = copy, *key, *value, *found = NULL;

	while (cursor && bci_results_kv_next(&cursor, &key, &value))
		if (!strcmp(key, wanted)) {
			found = strdup(value);
			break;
		}
	free(copy);
	return found;
}

static int set_from(char **field, const char *text, const char *key)
{
	char *value = kv_value(text, key);
	int ret = value ? bci_manifest_set(field, value) : 0;

	free(value);
	return ret;
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Every boot-NNNN/boot.txt ("key value" lines, the executor's boot record) as
 * that boot's environment; the last boot's kernel and command line are the
 * run's.
 */
static int add_boots(struct bci_manifest *m, const char *run_dir, char *err, size_t err_size)
{
	char **names = NULL, **grown, *text = NULL, path[PATH_MAX];
	size_t count = 0;
	struct dirent *entry;
	DIR *dir;
	int ret = 0;

	dir = opendir(run_dir);
	if (!dir) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", run_dir, strerror(errno));
		return ret;
	}
	while ((entry = readdir(dir))) {
		unsigned number;

		if (bci_results_boot_dir_parse(entry->d_name, &number) != 1)
			continue;
		grown = realloc(names, (count + 1) * sizeof(*names));
		if (!grown || !(grown[count] = strdup(entry->d_name))) {
			names = grown ? grown : names;
			ret = -ENOMEM;
			break;
		}
		names = grown;
		count++;
	}
	closedir(dir);
	if (ret == 0 && count > 1)
		qsort(names, count, sizeof(*names), by_string);
	for (size_t i = 0; ret == 0 && i < count; i++) {
		struct bci_manifest_boot *boot;

		snprintf(path, sizeof(path), "%s/%s/" BCI_RESULTS_BOOT_RECORD, run_dir, names[i]);
		free(text);
		text = NULL;
		if (bci_read_file(path, &text, NULL, 1 << 20) < 0)
			continue; /* a boot that died before its record: its files still go */
		ret = set_from(&m->kernel, text, "kernel");
		if (ret == 0)
			ret = set_from(&m->cmdline, text, "cmdline");
		if (ret == 0)
			ret = bci_manifest_add_boot(m, names[i], &boot);
		char *cursor = text, *key, *value;
		while (ret == 0 && bci_results_kv_next(&cursor, &key, &value))
			ret = bci_manifest_boot_set(boot, key, value);
	}
	free(text);
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
	if (ret < 0 && !err[0])
		bci_message(err, err_size, "%s: boot records: %s", run_dir, strerror(-ret));
	return ret;
}

/* IGT's version as its first test printed it ("IGT-Version: 1.28-g..."), when there is one. */
static int add_igt_version(struct bci_manifest *m, const char *run_dir)
{
	char path[PATH_MAX], *text = NULL, *value;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/0/" BCI_RESULTS_JOB_OUT, run_dir);
	if (bci_read_file(path, &text, NULL, 64 << 20) < 0)
		return 0;
	value = kv_value(text, "IGT-Version:");
	if (value)
		ret = bci_manifest_set(&m->igt_version, value);
	free(value);
	free(text);
	return ret;
}

static int manifest_build(const char *run_dir, const struct bci_run_archive_info *info,
			  char **json, size_t *json_len, struct bci_manifest **out, char *err,
			  size_t err_size)
{
	struct bci_manifest *m = bci_manifest_new();
	char path[PATH_MAX], *identity = NULL;
	FILE *mem = NULL;
	int ret;

	if (!m)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/" BCI_RESULTS_IDENTITY, run_dir);
	if (bci_read_file(path, &identity, NULL, 1 << 16) < 0)
		identity = NULL;
	ret = bci_manifest_set(&m->run_id, info->run);
	if (ret == 0)
		ret = bci_manifest_set(&m->machine, info->machine);
	if (ret == 0)
		ret = bci_manifest_set(&m->bootci_version, info->bootci_version);
	if (ret == 0)
		ret = set_from(&m->image_id, identity, "image");
	if (ret == 0)
		ret = add_igt_version(m, run_dir);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", run_dir, strerror(-ret));
		goto out;
	}
	ret = add_boots(m, run_dir, err, err_size);
	if (ret < 0)
		goto out;
	/* No EFI (a BIOS machine, efivarfs not mounted): the manifest says so by its empty lists. */
	if (info->efi_read) {
		ret = info->efi_read(m);
		if (ret < 0 && ret != -ENODEV) {
			bci_message(err, err_size, "EFI boot entries: %s", strerror(-ret));
			goto out;
		}
	}
	ret = bci_manifest_add_tree(m, run_dir, err, err_size);
	if (ret < 0)
		goto out;
	mem = open_memstream(json, json_len);
	if (!mem) {
		ret = -errno;
		goto out;
	}
	ret = bci_manifest_write(m, mem, err, err_size);
	if (fclose(mem) != 0 && ret == 0)
		ret = -errno;
	if (ret < 0) {
		free(*json);
		*json = NULL;
	}
out:
	free(identity);
	if (ret < 0) {
		bci_manifest_free(m);
		m = NULL;
	}
	*out = m;
	return ret;
}

/* ---- the tar, through zstd ---- */

/* Tar bytes gathered before they go to the compressor: files are read straight into it. */
#define STAGE_SIZE ((size_t)256 << 10)
/* Level 3 (zstd's default) in a 2 MiB window, whatever the folder's size: the same bytes always. */
#define ZSTD_LEVEL 3
#define ZSTD_WINDOW_LOG 21

struct writer {
	int fd;
	ZSTD_CCtx *z;
	unsigned char *stage;		/* [0, used) not compressed yet */
	size_t used;
	unsigned char *out;
	size_t out_size;
	const char *path;		/* the archive's, for messages */
	char *err;
	size_t err_size;
};

/* @len bytes through the compressor (@end: the frame's end, everything flushed). */
static int compress_out(struct writer *w, const void *data, size_t len, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { data, len, 0 };

	for (;;) {
		ZSTD_outBuffer out = { w->out, w->out_size, 0 };
		size_t left = ZSTD_compressStream2(w->z, &out, &in, mode);
		int ret;

		if (ZSTD_isError(left)) {
			bci_message(w->err, w->err_size, "%s: zstd: %s", w->path, ZSTD_getErrorName(left));
			return -EIO;
		}
		ret = bci_write_all(w->fd, w->out, out.pos);
		if (ret < 0) {
			bci_message(w->err, w->err_size, "%s: %s", w->path, strerror(-ret));
			return ret;
		}
		if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size)
			return 0;
	}
}

/* The stage compressed and emptied. */
static int stage_flush(struct writer *w)
{
	int ret = compress_out(w, w->stage, w->used, ZSTD_e_continue);

	w->used = 0;
	return ret;
}

/* @len bytes (NULL: zeroes) onto the stage. */
static int stage_put(struct writer *w, const void *data, size_t len)
{
	while (len) {
		size_t n = STAGE_SIZE - w->used < len ? STAGE_SIZE - w->used : len;
		int ret;

		if (data) {
			memcpy(w->stage + w->used, data, n);
			data = (const char *)data + n;
		} else {
			memset(w->stage + w->used, 0, n);
		}
		w->used += n;
		len -= n;
		if (w->used == STAGE_SIZE && (ret = stage_flush(w)) < 0)
			return ret;
	}
	return 0;
}

/*
 * @value in @digits octal digits, then the @end_len bytes of @end: numeric
 * fields laid out as libarchive's writer lays them out, so that the same
 * folder gives the same tar as the collects already deployed.
 */
static void octal_put(unsigned char *field, size_t digits, uint64_t value, const char *end,
		      size_t end_len)
{
	for (size_t i = digits; i-- > 0; value >>= 3)
		field[i] = (unsigned char)('0' + (value & 7));
	memcpy(field + digits, end, end_len);
}

/* Where @path splits into ustar's prefix and name (the '/' between), or -1: the rightmost that fits. */
static long ustar_split(const char *path, size_t len)
{
	for (size_t i = len < TAR_PREFIX_LEN + 1 ? len : TAR_PREFIX_LEN + 1; i-- > 0;)
		if (path[i] == '/')
			return i > 0 && len - i - 1 <= TAR_NAME_LEN && len - i - 1 > 0 ? (long)i : -1;
	return -1;
}

static bool ascii(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)p[i] >= 0x80)
			return false;
	return true;
}

/* One header block: a regular file ('0') or a pax extended header ('x'). */
static void header_make(unsigned char h[TAR_BLOCK], const char *name, size_t name_len,
			const char *prefix, size_t prefix_len, char type, uint64_t size,
			uint64_t mtime)
{
	unsigned sum = 0;

	memset(h, 0, TAR_BLOCK);
	memcpy(h + TAR_NAME, name, name_len);
	octal_put(h + TAR_MODE, 6, 0644, " ", 2);
	octal_put(h + TAR_UID, 6, 0, " ", 2);
	octal_put(h + TAR_GID, 6, 0, " ", 2);
	octal_put(h + TAR_SIZE, 11, size <= TAR_SIZE_OCTAL_MAX ? size : 0, " ", 1);
	octal_put(h + TAR_MTIME, 11, mtime, " ", 1);
	memset(h + TAR_CHECKSUM, ' ', 8);
	h[TAR_TYPE] = (unsigned char)type;
	memcpy(h + TAR_MAGIC, TAR_USTAR, TAR_USTAR_LEN);
	octal_put(h + TAR_DEV_MAJOR, 6, 0, " ", 2);
	octal_put(h + TAR_DEV_MINOR, 6, 0, " ", 2);
	memcpy(h + TAR_PREFIX, prefix, prefix_len);
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	octal_put(h + TAR_CHECKSUM, 6, sum, "\0 ", 2);
}

/* One pax record, "<length> <key>=<value>\n" (the length counting itself), appended to @buf. */
static size_t pax_record(char *buf, const char *key, const char *value, size_t value_len)
{
	size_t base = 1 + strlen(key) + 1 + value_len + 1, len = base + 1;
	int digits;

	/* The length's own digits are part of it. */
	while ((size_t)snprintf(NULL, 0, "%zu", len) + base != len)
		len++;
	digits = snprintf(buf, 32, "%zu ", len);
	memcpy(buf + digits, key, strlen(key));
	buf[digits + strlen(key)] = '=';
	memcpy(buf + digits + strlen(key) + 1, value, value_len);
	buf[len - 1] = '\n';
	return len;
}

/*
 * The header of a file @path of @size bytes: ustar alone when its fields hold
 * the path and the size, else a pax extended header first with what they
 * cannot hold (the pax header named "PaxHeader/" and the file's name).
 */
static int entry_begin(struct writer *w, const char *path, uint64_t size, time_t mtime)
{
	unsigned char h[TAR_BLOCK];
	size_t len = strlen(path);
	uint64_t when = mtime < 0 ? 0 : (uint64_t)mtime > TAR_SIZE_OCTAL_MAX ? TAR_SIZE_OCTAL_MAX
									     : (uint64_t)mtime;
	long split = len <= TAR_NAME_LEN ? -1 : ustar_split(path, len);
	bool fits = ascii(path, len) && (len <= TAR_NAME_LEN || split >= 0);
	const char *base = strrchr(path, '/');
	int ret;

	base = base ? base + 1 : path;
	if (!fits || size > TAR_SIZE_OCTAL_MAX) {
		char *pax = malloc(len + 64), name[TAR_NAME_LEN + 1];
		size_t pax_len = 0;

		if (!pax)
			return -ENOMEM;
		if (!fits)
			pax_len += pax_record(pax + pax_len, "path", path, len);
		if (size > TAR_SIZE_OCTAL_MAX) {
			char number[32];

			pax_len += pax_record(pax + pax_len, "size", number,
					      (size_t)snprintf(number, sizeof(number), "%llu",
							       (unsigned long long)size));
		}
		snprintf(name, sizeof(name), "PaxHeader/%s", base);
		header_make(h, name, strlen(name), "", 0, TAR_TYPE_PAX, pax_len, when);
		ret = stage_put(w, h, TAR_BLOCK);
		if (ret == 0)
			ret = stage_put(w, pax, pax_len);
		if (ret == 0)
			ret = stage_put(w, NULL, (TAR_BLOCK - pax_len % TAR_BLOCK) % TAR_BLOCK);
		free(pax);
		if (ret < 0)
			return ret;
	}
	if (fits && split >= 0)
		header_make(h, path + split + 1, len - (size_t)split - 1, path, (size_t)split,
			    TAR_TYPE_FILE, size, when);
	else if (fits)
		header_make(h, path, len, "", 0, TAR_TYPE_FILE, size, when);
	else	/* the pax record has the path: ustar's fields get what fits of it */
		header_make(h, base, strnlen(base, TAR_NAME_LEN), "", 0, TAR_TYPE_FILE, size, when);
	return stage_put(w, h, TAR_BLOCK);
}

/* Zeroes to the end of the entry's last block. */
static int entry_end(struct writer *w, uint64_t size)
{
	return stage_put(w, NULL, (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK);
}

/* Copies @path's bytes into the archive; the file must still have the manifest's size. */
static int add_file(struct writer *w, const char *run_dir, const struct bci_manifest_file *file)
{
	char path[PATH_MAX];
	uint64_t copied = 0;
	struct stat st;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", run_dir, file->path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		bci_message(w->err, w->err_size, "%s: %s", path, strerror(errno));
		goto out;
	}
	ret = entry_begin(w, file->path, file->size, st.st_mtime);
	while (ret == 0 && copied < file->size) {
		size_t want = STAGE_SIZE - w->used;
		ssize_t n;

		if (want > file->size - copied)
			want = (size_t)(file->size - copied);
		n = read(fd, w->stage + w->used, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			bci_message(w->err, w->err_size, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		w->used += (size_t)n;
		copied += (uint64_t)n;
		if (w->used == STAGE_SIZE)
			ret = stage_flush(w);
	}
	if (ret == 0 && (copied != file->size || (uint64_t)st.st_size != file->size)) {
		bci_message(w->err, w->err_size, "%s: changed while it was archived (%llu bytes, the"
			    " manifest says %llu)", path, (unsigned long long)st.st_size,
			    (unsigned long long)file->size);
		ret = -EAGAIN;
	}
	if (ret == 0)
		ret = entry_end(w, file->size);
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

static int writer_init(struct writer *w, int fd, const char *path, char *err, size_t err_size)
{
	*w = (struct writer){ .fd = fd, .path = path, .err = err, .err_size = err_size };
	w->z = ZSTD_createCCtx();
	w->stage = malloc(STAGE_SIZE);
	w->out_size = ZSTD_CStreamOutSize();
	w->out = malloc(w->out_size);
	if (!w->z || !w->stage || !w->out)
		return -ENOMEM;
	/* A checksum, so that the reader knows the frame decoded to what was compressed. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_windowLog, ZSTD_WINDOW_LOG)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_checksumFlag, 1))) {
		bci_message(err, err_size, "%s: zstd refuses its parameters", path);
		return -EINVAL;
	}
	return 0;
}

static void writer_free(struct writer *w)
{
	ZSTD_freeCCtx(w->z);
	free(w->stage);
	free(w->out);
}

int bci_run_archive_write(const char *run_dir, const char *path,
			  const struct bci_run_archive_info *info, char *err, size_t err_size)
{
	struct bci_manifest *m = NULL;
	struct writer w = { 0 };
	char tmp[PATH_MAX], *json = NULL;
	size_t json_len = 0;
	time_t newest = 0;
	int fd = -1, ret;

	err[0] = '\0';
	ret = manifest_build(run_dir, info, &json, &json_len, &m, err, err_size);
	if (ret < 0)
		return ret;
	fd = bci_atomic_open(path, tmp, 0600);
	if (fd < 0) {
		ret = fd;
		bci_message(err, err_size, "%s: cannot create: %s", path, strerror(-ret));
		goto out;
	}
	ret = writer_init(&w, fd, path, err, err_size);
	if (ret < 0)
		goto out_abort;
	/* The manifest's time: the newest file's, so the archive depends on the folder only. */
	for (size_t i = 0; i < m->file_count; i++) {
		char file_path[PATH_MAX];
		struct stat st;

		snprintf(file_path, sizeof(file_path), "%s/%s", run_dir, m->files[i].path);
		if (stat(file_path, &st) == 0 && st.st_mtime > newest)
			newest = st.st_mtime;
	}
	ret = entry_begin(&w, BCI_MANIFEST_NAME, json_len, newest);
	if (ret == 0)
		ret = stage_put(&w, json, json_len);
	if (ret == 0)
		ret = entry_end(&w, json_len);
	for (size_t i = 0; ret == 0 && i < m->file_count; i++)
		ret = add_file(&w, run_dir, &m->files[i]);
	/* The end: two blocks of zeroes, and the frame closed. */
	if (ret == 0)
		ret = stage_put(&w, NULL, 2 * TAR_BLOCK);
	if (ret == 0)
		ret = stage_flush(&w);
	if (ret == 0)
		ret = compress_out(&w, NULL, 0, ZSTD_e_end);
	if (ret < 0)
		goto out_abort;
	ret = bci_atomic_commit(fd, tmp, path);
	fd = -1;
	if (ret < 0)
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
	goto out;
out_abort:
	if (ret == -ENOMEM && !err[0])
		bci_message(err, err_size, "%s: %s", path, strerror(ENOMEM));
	bci_atomic_abort(fd, tmp);
out:
	writer_free(&w);
	bci_manifest_free(m);
	free(json);
	return ret;
}
