// SPDX-License-Identifier: MIT
/*
 * The run archive's rules (lib/run_archive.h), over the tar layer (read.c):
 * the manifest first, limits as the entries come, files only at safe paths,
 * each file the manifest lists once, with its size (checked at its header)
 * and its sha256 (checked as its last byte is handed out). Serve's check,
 * ingest's scan and the cache's unpacking all read through here.
 */
#include "run_archive.h"
#include "internal.h"

#include "manifest.h"
#include "message.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct bci_run_archive {
	struct bci_tar_reader *tar;
	int fd;				/* opened here (bci_run_archive_open()), or -1 */
	bool limited;			/* limits below, else only the format's */
	struct bci_run_archive_limits limits;
	uint64_t unpacked;		/* file bytes and header blocks so far */
	uint64_t entries;
	struct bci_manifest *manifest;
	bool *seen;			/* per manifest file */
	size_t next;			/* the manifest's file after the last one met */
	/* The current file, between next() and the end of its bytes: */
	const struct bci_manifest_file *file;
	size_t number;			/* its entry's */
	bool reading;
	struct bci_sha256 hash;
	bool done;
	int failed;			/* once refused or failed, every call says so again */
	char *err;
	size_t err_size;
};

void bci_run_archive_limits_default(struct bci_run_archive_limits *limits)
{
	limits->max_entries = BCI_RUN_ARCHIVE_DEFAULT_ENTRIES;
	limits->max_unpacked = BCI_RUN_ARCHIVE_DEFAULT_UNPACKED;
	limits->max_file = BCI_RUN_ARCHIVE_DEFAULT_FILE;
	limits->max_manifest = BCI_RUN_ARCHIVE_DEFAULT_MANIFEST;
	limits->max_path = BCI_MANIFEST_PATH_MAX;
}

/* "entry N 'path': " and @fmt into @err; the reader refused for good. */
static int __attribute__((format(printf, 4, 5))) refuse(struct bci_run_archive *r, size_t number,
							const char *path, const char *fmt, ...)
{
	char quoted[256], *at = r->err;
	size_t room = r->err_size;
	va_list ap;
	int n;

	if (r->err && r->err_size) {
		if (path)
			n = snprintf(at, room, "entry %zu '%s': ", number,
				     bci_quote(quoted, sizeof(quoted), path, strlen(path)));
		else
			n = snprintf(at, room, "entry %zu: ", number);
		if (n > 0 && (size_t)n < room) {
			at += n;
			room -= (size_t)n;
			va_start(ap, fmt);
			vsnprintf(at, room, fmt, ap);
			va_end(ap);
		}
	}
	r->failed = -EINVAL;
	return -EINVAL;
}

/* A local failure (memory): said, and kept. */
static int failure(struct bci_run_archive *r, int ret)
{
	bci_message(r->err, r->err_size, "%s", strerror(-ret));
	r->failed = ret;
	return ret;
}

/* Counts @n more unpacked bytes of entry @number; -EINVAL once a limit is crossed. */
static int count(struct bci_run_archive *r, uint64_t n, size_t number, const char *path)
{
	r->unpacked = n > UINT64_MAX - r->unpacked ? UINT64_MAX : r->unpacked + n;
	if (r->limited && r->unpacked > r->limits.max_unpacked)
		return refuse(r, number, path, "more than %llu bytes once unpacked (the limit)",
			      (unsigned long long)r->limits.max_unpacked);
	return 0;
}

/* Whether a symbolic link at @path pointing to @target resolves outside the run. */
static bool link_leaves(const char *path, const char *target)
{
	long depth = 0;

	if (target[0] == '/')
		return true;
	for (const char *p = path; *p; p++)
		if (*p == '/')
			depth++;
	for (const char *p = target; *p;) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);

		if (n == 2 && !memcmp(p, "..", 2)) {
			if (--depth < 0)
				return true;
		} else if (n > 0 && !(n == 1 && *p == '.')) {
			depth++;
		}
		p = *end ? end + 1 : end;
	}
	return false;
}

/* What every entry passes before its path is looked up: the limits, a path's length, its type. */
static int entry_check(struct bci_run_archive *r, const struct bci_tar_entry *e)
{
	char quoted[256], why[256];
	size_t len = strlen(e->path);
	const char *kind = NULL;
	int ret;

	if (r->limited && ++r->entries > r->limits.max_entries)
		return refuse(r, e->number, NULL, "more than %llu entries (the limit)",
			      (unsigned long long)r->limits.max_entries);
	if (len > r->limits.max_path)
		return refuse(r, e->number, NULL, "a path of %zu bytes (at most %zu)", len,
			      r->limits.max_path);
	if (r->limited && e->size > r->limits.max_file)
		return refuse(r, e->number, e->path, "%llu bytes, more than a file may hold (%llu,"
			      " the limit)", (unsigned long long)e->size,
			      (unsigned long long)r->limits.max_file);
	/*
	 * Its bytes counted at its header, which says how many follow (the tar
	 * layer holds the entry to them): an archive past the limit is refused
	 * before a byte of the file that crosses it is unpacked.
	 */
	ret = count(r, BCI_RUN_ARCHIVE_ENTRY_COST, e->number, NULL);
	if (ret == 0)
		ret = count(r, e->size, e->number, e->path);
	if (ret < 0)
		return ret;
	switch (e->type) {
	case TAR_TYPE_FILE:
	case '\0':
		return 0;
	case '1':
		bci_quote(quoted, sizeof(quoted), e->link, strlen(e->link));
		return refuse(r, e->number, e->path, "a hardlink to '%s'%s", quoted,
			      bci_manifest_path_ok(e->link, why, sizeof(why)) ?
			      " (links are not accepted)" : ", outside the run");
	case '2':
		bci_quote(quoted, sizeof(quoted), e->link, strlen(e->link));
		return refuse(r, e->number, e->path, "a symlink to '%s'%s", quoted,
			      link_leaves(e->path, e->link) ? ", outside the run"
							    : " (links are not accepted)");
	case '3':
		kind = "a character device";
		break;
	case '4':
		kind = "a block device";
		break;
	case '5':
		return refuse(r, e->number, e->path, "a folder (a run archive holds files only: its"
			      " folders are in their paths)");
	case '6':
		kind = "a FIFO";
		break;
	}
	if (kind)
		return refuse(r, e->number, e->path, "%s (only regular files are accepted)", kind);
	bci_quote(quoted, sizeof(quoted), &e->type, 1);
	return refuse(r, e->number, e->path, "an entry of type '%s' (only regular files are accepted)",
		      quoted);
}

/* The first entry: manifest.json, read whole and parsed. */
static int manifest_read(struct bci_run_archive *r)
{
	struct bci_tar_entry e;
	char *text = NULL, why[512];
	size_t len = 0;
	const void *block;
	size_t n;
	int ret;

	ret = bci_tar_reader_next(r->tar, &e);
	if (ret == 0) {
		bci_message(r->err, r->err_size, "the archive is empty (its first entry must be "
			    BCI_MANIFEST_NAME ")");
		return r->failed = -EINVAL;
	}
	if (ret < 0)
		return r->failed = ret;
	ret = entry_check(r, &e);
	if (ret < 0)
		return ret;
	if (strcmp(e.path, BCI_MANIFEST_NAME))
		return refuse(r, e.number, e.path, "the first entry must be " BCI_MANIFEST_NAME);
	if (e.size > r->limits.max_manifest)
		return refuse(r, e.number, e.path, "%llu bytes (at most %llu)",
			      (unsigned long long)e.size, (unsigned long long)r->limits.max_manifest);
	text = malloc((size_t)e.size + 1);
	if (!text)
		return failure(r, -ENOMEM);
	while ((ret = bci_tar_reader_data(r->tar, &block, &n)) == 1) {
		memcpy(text + len, block, n);
		len += n;
	}
	if (ret < 0) {
		/* The tar layer's message. */
		free(text);
		return r->failed = ret;
	}
	ret = bci_manifest_parse(text, len, &r->manifest, why, sizeof(why));
	free(text);
	if (ret == -EINVAL)
		return refuse(r, e.number, e.path, "%s", why);
	if (ret < 0)
		return failure(r, ret);
	r->seen = calloc(r->manifest->file_count + 1, sizeof(*r->seen));
	return r->seen ? 0 : failure(r, -ENOMEM);
}

static void err_clear(char *err, size_t err_size)
{
	if (err && err_size)
		err[0] = '\0';
}

/* The reader over @tar (taken; @ret: how opening it went), up to the manifest. */
static int open_with(struct bci_tar_reader *tar, int ret, int fd,
		     const struct bci_run_archive_limits *limits, struct bci_run_archive **out,
		     char *err, size_t err_size)
{
	struct bci_run_archive *r = NULL;

	*out = NULL;
	if (ret == 0 && !(r = calloc(1, sizeof(*r)))) {
		bci_tar_reader_close(tar);
		ret = -ENOMEM;
	}
	if (ret < 0) {
		if (fd >= 0)
			close(fd);
		/* Every failure says something (the tar layer's refusals have said it already). */
		if (err && err_size && !err[0])
			bci_message(err, err_size, "%s", strerror(-ret));
		return ret;
	}
	*r = (struct bci_run_archive){
		.tar = tar, .fd = fd, .limited = limits != NULL, .err = err, .err_size = err_size,
	};
	if (limits) {
		r->limits = *limits;
		if (r->limits.max_path > BCI_MANIFEST_PATH_MAX)
			r->limits.max_path = BCI_MANIFEST_PATH_MAX;
	} else {
		r->limits.max_manifest = BCI_RUN_ARCHIVE_MANIFEST_MAX;
		r->limits.max_path = BCI_MANIFEST_PATH_MAX;
	}
	ret = manifest_read(r);
	if (ret < 0) {
		bci_run_archive_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

int bci_run_archive_open_fd(int fd, const struct bci_run_archive_limits *limits,
			    struct bci_run_archive **out, char *err, size_t err_size)
{
	struct bci_tar_reader *tar = NULL;
	int ret;

	err_clear(err, err_size);
	ret = bci_tar_reader_open_fd(fd, &tar, err, err_size);
	return open_with(tar, ret, -1, limits, out, err, err_size);
}

int bci_run_archive_open(const char *path, const struct bci_run_archive_limits *limits,
			 struct bci_run_archive **out, char *err, size_t err_size)
{
	struct bci_tar_reader *tar = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	*out = NULL;
	err_clear(err, err_size);
	if (fd < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s", strerror(errno));
		return ret;
	}
	ret = bci_tar_reader_open_fd(fd, &tar, err, err_size);
	return open_with(tar, ret, fd, limits, out, err, err_size);
}

int bci_run_archive_open_memory(const void *data, size_t len,
				const struct bci_run_archive_limits *limits,
				struct bci_run_archive **out, char *err, size_t err_size)
{
	struct bci_tar_reader *tar = NULL;
	int ret;

	err_clear(err, err_size);
	ret = bci_tar_reader_open_memory(data, len, false, &tar, err, err_size);
	return open_with(tar, ret, -1, limits, out, err, err_size);
}

int bci_run_archive_open_plain(const void *data, size_t len,
			       const struct bci_run_archive_limits *limits,
			       struct bci_run_archive **out, char *err, size_t err_size)
{
	struct bci_tar_reader *tar = NULL;
	int ret;

	err_clear(err, err_size);
	ret = bci_tar_reader_open_memory(data, len, true, &tar, err, err_size);
	return open_with(tar, ret, -1, limits, out, err, err_size);
}

const struct bci_manifest *bci_run_archive_manifest(const struct bci_run_archive *r)
{
	return r->manifest;
}

int bci_run_archive_data(struct bci_run_archive *r, const void **data, size_t *len)
{
	char hex[BCI_SHA256_HEX_LEN + 1];
	int ret;

	if (r->failed)
		return r->failed;
	if (!r->reading)
		return 0;
	ret = bci_tar_reader_data(r->tar, data, len);
	if (ret == 1) {
		bci_sha256_update(&r->hash, *data, *len);
		return 1;
	}
	if (ret < 0)
		return r->failed = ret;
	r->reading = false;
	bci_sha256_final_hex(&r->hash, hex);
	if (memcmp(hex, r->file->sha256, BCI_SHA256_HEX_LEN))
		return refuse(r, r->number, r->file->path, "sha256 %s, the manifest says %s", hex,
			      r->file->sha256);
	return 0;
}

/* Every listed file was there: the first one that was not, named. */
static int missing_check(struct bci_run_archive *r)
{
	for (size_t i = 0; i < r->manifest->file_count; i++)
		if (!r->seen[i]) {
			char quoted[256];
			const char *path = r->manifest->files[i].path;

			bci_message(r->err, r->err_size, "'%s': in the manifest but not in the archive",
				    bci_quote(quoted, sizeof(quoted), path, strlen(path)));
			r->failed = -EINVAL;
			return -EINVAL;
		}
	return 0;
}

int bci_run_archive_next(struct bci_run_archive *r, const struct bci_manifest_file **file)
{
	const struct bci_manifest_file *found;
	struct bci_tar_entry e;
	char why[256];
	const void *block;
	size_t n;
	int ret;

	if (r->failed)
		return r->failed;
	if (r->done)
		return 0;
	/* The rest of the current file: read, so that it is checked. */
	while ((ret = bci_run_archive_data(r, &block, &n)) == 1)
		;
	if (ret < 0)
		return ret;
	ret = bci_tar_reader_next(r->tar, &e);
	if (ret < 0)
		return r->failed = ret;
	if (ret == 0) {
		ret = missing_check(r);
		r->done = ret == 0;
		return ret;
	}
	ret = entry_check(r, &e);
	if (ret < 0)
		return ret;
	/* Usually the manifest's next file (the writer's order); else looked up. */
	found = r->next < r->manifest->file_count && !strcmp(r->manifest->files[r->next].path, e.path) ?
		&r->manifest->files[r->next] : bci_manifest_find(r->manifest, e.path);
	if (!found) {
		/* Not listed: an unsafe path says so first (a listed path is a safe one). */
		if (!bci_manifest_path_ok(e.path, why, sizeof(why)))
			return refuse(r, e.number, e.path, "%s", why);
		return refuse(r, e.number, e.path, "not in the manifest");
	}
	r->next = (size_t)(found - r->manifest->files) + 1;
	if (r->seen[r->next - 1])
		return refuse(r, e.number, e.path, "in the archive twice");
	r->seen[r->next - 1] = true;
	if (e.size != found->size)
		return refuse(r, e.number, e.path, "%llu bytes, the manifest says %llu",
			      (unsigned long long)e.size, (unsigned long long)found->size);
	r->file = found;
	r->number = e.number;
	r->reading = true;
	bci_sha256_init(&r->hash);
	*file = found;
	return 1;
}

struct bci_manifest *bci_run_archive_manifest_take(struct bci_run_archive *r)
{
	struct bci_manifest *m = r->done ? r->manifest : NULL;

	if (m)
		r->manifest = NULL;
	return m;
}

void bci_run_archive_close(struct bci_run_archive *r)
{
	if (!r)
		return;
	bci_tar_reader_close(r->tar);
	if (r->fd >= 0)
		close(r->fd);
	bci_manifest_free(r->manifest);
	free(r->seen);
	free(r);
}
