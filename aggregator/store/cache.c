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

int bci_cache_digest_valid(const char *digest)
{
	size_t i;

	if (!digest)
		return 0;
	for (i = 0; digest[i]; i++)
		if (!((digest[i] >= '0' && digest[i] <= '9') || (digest[i] >= 'a' && digest[i] <= 'f')))
			return 0;
	return i == 64;
}

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

/* The unpacked bytes so far and the limit, across the entries of one archive. */
struct budget {
	unsigned long long used, max;
};

static int entry_write(struct archive *a, int parent, const char *name, const char *shown,
		       struct budget *budget, char *err, size_t err_size)
{
	const void *block;
	size_t size;
	la_int64_t offset, written = 0;
	int fd, ret = 0, rc;

	fd = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s%s", shown, strerror(errno),
			 errno == EEXIST ? " (the archive holds it twice)" : "");
		return ret;
	}
	while ((rc = archive_read_data_block(a, &block, &size, &offset)) == ARCHIVE_OK) {
		budget->used += size;
		if (budget->max && budget->used > budget->max) {
			snprintf(err, err_size, "%s: the archive unpacks to more than %llu bytes", shown,
				 budget->max);
			close(fd);
			return -EFBIG;
		}
		/* A sparse entry skips ahead: the hole reads back as zeroes. */
		if (offset > written && lseek(fd, offset, SEEK_SET) < 0) {
			ret = -errno;
			break;
		}
		ret = bci_write_all(fd, block, size);
		if (ret < 0)
			break;
		written = offset + (la_int64_t)size;
	}
	if (ret < 0) {
		snprintf(err, err_size, "%s: %s", shown, strerror(-ret));
	} else if (rc != ARCHIVE_EOF) {
		snprintf(err, err_size, "%s: %s", shown, archive_error_string(a));
		ret = -EIO;
	} else if (ftruncate(fd, written > offset ? written : offset) < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", shown, strerror(errno));
	}
	close(fd);
	return ret;
}

/* Writes one entry below @root_fd after checking its type and path. */
static int entry_extract(struct archive *a, struct archive_entry *entry, int root_fd,
			 const char *archive_path, struct budget *budget, char *err, size_t err_size)
{
	const char *raw = archive_entry_pathname(entry), *base = NULL;
	mode_t type = archive_entry_filetype(entry);
	char path[PATH_MAX];
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
	parent = parents_open(root_fd, path, &base);
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
		ret = entry_write(a, parent, base, shown, budget, err, err_size);
	}
	close(parent);
	return ret;
}

int bci_cache_extract(const char *archive_path, const char *dir, unsigned long long max_bytes,
		      char *err, size_t err_size)
{
	struct budget budget = { 0, max_bytes };
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
		ret = entry_extract(a, entry, root_fd, archive_path, &budget, err, err_size);
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
	if (root_fd >= 0)
		close(root_fd);
	archive_read_free(a);
out_dir:
	if (ret < 0)
		bci_remove_tree(dir);
	return ret;
}

int bci_cache_get(const char *data_dir, const char *digest, const char *archive_path, char *dir,
		  char *err, size_t err_size)
{
	char cache[PATH_MAX], tmp[PATH_MAX];
	struct stat st;
	int ret;

	if (!bci_cache_digest_valid(digest)) {
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
	ret = bci_cache_extract(archive_path, tmp, 0, err, err_size);
	if (ret < 0)
		return ret;
	if (rename(tmp, dir) < 0) {
		ret = -errno;
		bci_remove_tree(tmp);
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
