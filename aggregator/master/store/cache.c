// SPDX-License-Identifier: MIT
/*
 * The extract-once cache (cache.h). Archives are unpacked with libarchive's
 * reader, but written by hand below a directory fd: every component is
 * opened with O_NOFOLLOW relative to its parent, so no entry can land
 * outside the folder whatever its path says, and the folder's absolute
 * name never has to pass libarchive's no-absolute-path check (nor a
 * process-wide chdir, which serve's threads could not share).
 */
#include "cache.h"

#include "fsutil.h"
#include "manifest.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Opens (creating if @create) the directory @name below @parent without
 * following a symlink; returns its fd or -errno.
 */
static int dir_open_below(int parent, const char *name, int create)
{
	int fd;

	if (create && mkdirat(parent, name, 0755) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Checks @path (an archive entry's) and copies it without "./" prefixes
 * into @clean: relative, no "..", no empty name. Returns 0 or -EINVAL.
 */
static int entry_path_clean(const char *path, char *clean, size_t size)
{
	const char *p = path;
	size_t len = 0;

	if (!path || !*path || *path == '/')
		return -EINVAL;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && !strncmp(p, "..", 2))
			return -EINVAL;
		if (n && !(n == 1 && *p == '.')) {
			if (len + n + 2 > size)
				return -ENAMETOOLONG;
			if (len)
				clean[len++] = '/';
			memcpy(clean + len, p, n);
			len += n;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	clean[len] = '\0';
	return 0;
}

int bci_cache_entry_clean(const char *path, char *clean, size_t size)
{
	return entry_path_clean(path, clean, size);
}

/* Creates the parents of @path below @root_fd; returns the fd of the last one, or -errno. */
static int parents_open(int root_fd, char *path, const char **base)
{
	int fd = dup(root_fd);
	char *slash, *component = path;

	if (fd < 0)
		return -errno;
	while ((slash = strchr(component, '/'))) {
		int next;

		*slash = '\0';
		next = dir_open_below(fd, component, 1);
		*slash = '/';
		close(fd);
		if (next < 0)
			return next;
		fd = next;
		component = slash + 1;
	}
	*base = component;
	return fd;
}

/*
 * One unpacking: the bytes so far and the limit, the folder the last file
 * went to (an archive lists a folder's files together, so most entries
 * reuse it instead of opening every component of their path again), and
 * the list of files with their digests when the caller wants one.
 */
struct unpack {
	unsigned long long used, max;
	char parent[PATH_MAX];		/* the kept folder's path, "" for the root */
	int parent_fd;			/* -1 when none is kept */
	struct bci_cache_files *files;	/* NULL: not listed */
};

static void unpack_parent_drop(struct unpack *u)
{
	if (u->parent_fd >= 0)
		close(u->parent_fd);
	u->parent_fd = -1;
	u->parent[0] = '\0';
}

/*
 * The folder of @path's last component (created with its parents) as an fd
 * that the unpack keeps (the caller does not close it); *@base gets the
 * last component. @path is cut and restored on the way.
 */
static int unpack_parent(struct unpack *u, int root_fd, char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	int fd;

	if (u->parent_fd >= 0 && strlen(u->parent) == len && !strncmp(u->parent, path, len)) {
		*base = slash ? slash + 1 : path;
		return u->parent_fd;
	}
	unpack_parent_drop(u);
	fd = parents_open(root_fd, path, base);
	if (fd < 0)
		return fd;
	memcpy(u->parent, path, len);
	u->parent[len] = '\0';
	u->parent_fd = fd;
	return fd;
}

int bci_cache_files_add(struct bci_cache_files *files, const char *path, uint64_t size,
			const unsigned char digest[32])
{
	struct bci_cache_file *file;

	if (files->count == files->cap) {
		size_t cap = files->cap ? files->cap * 2 : 256;
		struct bci_cache_file *grown = realloc(files->files, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		files->files = grown;
		files->cap = cap;
	}
	file = &files->files[files->count];
	if (files->arena && files->arena_paths)
		file->path = (char *)path;
	else
		file->path = files->arena ? bci_arena_strdup(files->arena, path) : strdup(path);
	if (!file->path)
		return -ENOMEM;
	file->size = size;
	bci_sha256_hex(digest, file->sha256);
	files->count++;
	return 0;
}

void bci_cache_files_free(struct bci_cache_files *files)
{
	struct bci_arena *arena = files->arena;

	for (size_t i = 0; i < files->count && !arena; i++)
		free(files->files[i].path);
	free(files->files);
	*files = (struct bci_cache_files){ .arena = arena, .arena_paths = files->arena_paths };
}

/* Feeds @count zero bytes (a sparse entry's hole) to @hash. */
static void hash_zeros(struct bci_sha256 *hash, unsigned long long count)
{
	static const uint8_t zeros[4096];

	while (count) {
		size_t n = count < sizeof(zeros) ? (size_t)count : sizeof(zeros);

		bci_sha256_update(hash, zeros, n);
		count -= n;
	}
}

/*
 * Writes the entry's data to the new file @name in @parent; with a list,
 * hashes the bytes on the way (holes as the zeroes they read back as) and
 * lists the file as @path, so that nobody reads it again to check it.
 */
static int entry_write(struct archive *a, int parent, const char *name, const char *path,
		       const char *shown, struct unpack *u, char *err, size_t err_size)
{
	struct bci_sha256 sha256, *hash = u->files ? &sha256 : NULL;
	unsigned char digest[BCI_SHA256_SIZE];
	const void *block;
	size_t size;
	la_int64_t offset = 0, written = 0;
	int fd, ret = 0, rc;

	if (hash)
		bci_sha256_init(hash);
	fd = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s%s", shown, strerror(errno),
			 errno == EEXIST ? " (the archive holds it twice)" : "");
		return ret;
	}
	while ((rc = archive_read_data_block(a, &block, &size, &offset)) == ARCHIVE_OK) {
		u->used += size;
		if (u->max && u->used > u->max) {
			snprintf(err, err_size, "%s: the archive unpacks to more than %llu bytes", shown,
				 u->max);
			ret = -EFBIG;
			goto out_fd;
		}
		/* A sparse entry skips ahead: the hole reads back as zeroes. */
		if (offset > written && lseek(fd, offset, SEEK_SET) < 0) {
			ret = -errno;
			break;
		}
		if (hash && offset > written)
			hash_zeros(hash, (unsigned long long)(offset - written));
		ret = bci_write_all(fd, block, size);
		if (ret == 0 && hash)
			bci_sha256_update(hash, block, size);
		if (ret < 0)
			break;
		written = offset + (la_int64_t)size;
	}
	if (ret < 0) {
		snprintf(err, err_size, "%s: %s", shown, strerror(-ret));
	} else if (rc != ARCHIVE_EOF) {
		snprintf(err, err_size, "%s: %s", shown, archive_error_string(a));
		ret = -EIO;
	} else if (offset > written) {
		/* A hole at the end: the size is the last offset, past the data written. */
		if (ftruncate(fd, offset) < 0) {
			ret = -errno;
			snprintf(err, err_size, "%s: %s", shown, strerror(errno));
		} else if (hash) {
			hash_zeros(hash, (unsigned long long)(offset - written));
			written = offset;
		}
	}
	if (ret == 0 && hash) {
		bci_sha256_final(hash, digest);
		ret = bci_cache_files_add(u->files, path, (uint64_t)written, digest);
		if (ret < 0)
			snprintf(err, err_size, "%s: %s", shown, strerror(-ret));
	}
out_fd:
	close(fd);
	return ret;
}

/* Writes one entry below @root_fd after checking its type and path. */
static int entry_extract(struct archive *a, struct archive_entry *entry, int root_fd,
			 const char *archive_path, struct unpack *u, char *err, size_t err_size)
{
	const char *raw = archive_entry_pathname(entry), *base = NULL;
	mode_t type = archive_entry_filetype(entry);
	char path[PATH_MAX], listed[PATH_MAX];
	int parent, ret;

	if (entry_path_clean(raw, path, sizeof(path)) < 0) {
		snprintf(err, err_size, "%s: entry '%s': an absolute path or '..' is refused",
			 archive_path, raw ? raw : "");
		return -EINVAL;
	}
	if (archive_entry_hardlink(entry) || (type != AE_IFREG && type != AE_IFDIR)) {
		snprintf(err, err_size,
			 "%s: entry '%s': only regular files and folders are accepted (no links,"
			 " devices or FIFOs)", archive_path, raw);
		return -EINVAL;
	}
	if (!*path)
		return 0;	/* "./" itself */
	memcpy(listed, path, strlen(path) + 1);
	parent = unpack_parent(u, root_fd, path, &base);
	if (parent < 0) {
		snprintf(err, err_size, "%s: entry '%s': %s", archive_path, raw, strerror(-parent));
		return parent;
	}
	if (type == AE_IFDIR) {
		ret = dir_open_below(parent, base, 1);
		if (ret >= 0) {
			close(ret);
			ret = 0;
		} else {
			snprintf(err, err_size, "%s: entry '%s': %s", archive_path, raw, strerror(-ret));
		}
	} else {
		char shown[PATH_MAX + 64];

		snprintf(shown, sizeof(shown), "%s: entry '%s'", archive_path, raw);
		ret = entry_write(a, parent, base, listed, shown, u, err, err_size);
	}
	return ret;
}

static int cache_extract(const char *archive_path, const char *dir, unsigned long long max_bytes,
			 struct bci_cache_files *files, char *err, size_t err_size)
{
	struct unpack u = { .max = max_bytes, .parent_fd = -1, .files = files };
	struct archive_entry *entry;
	struct archive *a;
	int root_fd = -1, ret = 0, rc;

	if (mkdir(dir, 0755) < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", dir, strerror(errno));
		return ret;
	}
	a = archive_read_new();
	if (!a) {
		ret = -ENOMEM;
		goto out_dir;
	}
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, archive_path, 64 * 1024) != ARCHIVE_OK) {
		snprintf(err, err_size, "%s: %s", archive_path, archive_error_string(a));
		ret = -EIO;
		goto out_archive;
	}
	root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root_fd < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", dir, strerror(errno));
		goto out_archive;
	}
	while ((rc = archive_read_next_header(a, &entry)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
		ret = entry_extract(a, entry, root_fd, archive_path, &u, err, err_size);
		if (ret < 0)
			goto out_archive;
	}
	if (rc != ARCHIVE_EOF) {
		snprintf(err, err_size, "%s: %s", archive_path, archive_error_string(a));
		ret = -EBADMSG;
		goto out_archive;
	}
	/* One syncfs for every file unpacked: the folder is renamed into use only once durable. */
	if (syncfs(root_fd) < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", dir, strerror(errno));
	}
out_archive:
	unpack_parent_drop(&u);
	if (root_fd >= 0)
		close(root_fd);
	archive_read_free(a);
out_dir:
	if (ret < 0) {
		bci_remove_tree(dir);
		if (files)
			bci_cache_files_free(files);
	}
	return ret;
}

int bci_cache_extract(const char *archive_path, const char *dir, unsigned long long max_bytes,
		      char *err, size_t err_size)
{
	return cache_extract(archive_path, dir, max_bytes, NULL, err, err_size);
}

int bci_cache_extract_listed(const char *archive_path, const char *dir,
			     unsigned long long max_bytes, struct bci_cache_files *files, char *err,
			     size_t err_size)
{
	return cache_extract(archive_path, dir, max_bytes, files, err, err_size);
}

int bci_cache_get_listed(const char *data_dir, const char *digest, const char *archive_path,
			 char *dir, struct bci_cache_files *files, char *err, size_t err_size)
{
	char cache[PATH_MAX], tmp[PATH_MAX];
	struct stat st;
	int ret;

	if (!bci_sha256_hex_ok(digest)) {
		snprintf(err, err_size, "'%s' is not a sha256 digest", digest ? digest : "");
		return -EINVAL;
	}
	if ((size_t)snprintf(cache, sizeof(cache), "%s/cache", data_dir) >= sizeof(cache) ||
	    (size_t)snprintf(dir, PATH_MAX, "%s/%s", cache, digest) >= PATH_MAX ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", cache, digest) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	ret = bci_mkdir_p(cache, 0755);
	if (ret < 0) {
		snprintf(err, err_size, "%s: %s", cache, strerror(-ret));
		return ret;
	}
	/* mkdtemp only reserves the name: bci_cache_extract() makes the folder itself. */
	if (!mkdtemp(tmp) || rmdir(tmp) < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", tmp, strerror(errno));
		return ret;
	}
	ret = cache_extract(archive_path, tmp, 0, files, err, err_size);
	if (ret < 0)
		return ret;
	if (rename(tmp, dir) < 0) {
		ret = -errno;
		bci_remove_tree(tmp);
		if (files)
			bci_cache_files_free(files);	/* ours, not the copy kept */
		/* Another process unpacked the same archive first: its copy is as good. */
		if (ret == -ENOTEMPTY || ret == -EEXIST)
			return 0;
		snprintf(err, err_size, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	ret = bci_fsync_dir(cache);
	if (ret < 0) {
		snprintf(err, err_size, "%s: %s", cache, strerror(-ret));
		return ret;
	}
	return 1;
}

int bci_cache_get(const char *data_dir, const char *digest, const char *archive_path, char *dir,
		  char *err, size_t err_size)
{
	return bci_cache_get_listed(data_dir, digest, archive_path, dir, NULL, err, err_size);
}
