// SPDX-License-Identifier: MIT
/*
 * The extract-once cache (cache.h). Archives are read by the run archive's
 * reader (lib/run_archive.h), which checks every entry and every file's
 * bytes, and written by hand below a directory fd: every component is opened
 * with O_NOFOLLOW relative to its parent, so no file can land outside the
 * folder whatever its path says, and no process-wide chdir is needed (which
 * serve's threads could not share).
 */
#include "cache.h"

#include "fsutil.h"
#include "manifest.h"
#include "run_archive.h"
#include "sha256.h"

#include <errno.h>
#include <stdbool.h>
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
 * One unpacking: the folder the last file went to (the writer puts a
 * folder's files together, so most files reuse it instead of opening every
 * component of their path again).
 */
struct unpack {
	char parent[PATH_MAX];		/* the kept folder's path, "" for the root */
	int parent_fd;			/* -1 when none is kept */
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

/*
 * The reader's current file written to @name below @parent: 0; the reader's
 * refusal (-EINVAL: its message in its own buffer); or a local failure
 * (*@local set, @err says it, naming the file by @shown).
 */
static int file_write(struct bci_run_archive *r, int parent, const char *name, const char *shown,
		      bool *local, char *err, size_t err_size)
{
	const void *block;
	size_t size;
	int fd, ret;

	fd = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		*local = true;
		snprintf(err, err_size, "%s: %s", shown, strerror(errno));
		return ret;
	}
	while ((ret = bci_run_archive_data(r, &block, &size)) == 1) {
		ret = bci_write_all(fd, block, size);
		if (ret < 0) {
			*local = true;
			snprintf(err, err_size, "%s: %s", shown, strerror(-ret));
			break;
		}
	}
	close(fd);
	return ret;
}

static int cache_extract(const char *archive_path, const char *dir, char *err, size_t err_size)
{
	struct unpack u = { .parent_fd = -1 };
	const struct bci_manifest_file *file;
	struct bci_run_archive *r = NULL;
	char why[1024];
	bool local = false;
	int root_fd, ret;

	if (mkdir(dir, 0755) < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", dir, strerror(errno));
		return ret;
	}
	root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root_fd < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", dir, strerror(errno));
		bci_remove_tree(dir);
		return ret;
	}
	/* The archive was checked when it was kept: the format's rules only, no limits. */
	ret = bci_run_archive_open(archive_path, NULL, &r, why, sizeof(why));
	while (ret == 0 && (ret = bci_run_archive_next(r, &file)) == 1) {
		char path[PATH_MAX], shown[PATH_MAX * 2];
		const char *base = NULL;
		int parent;

		snprintf(shown, sizeof(shown), "%s: %s", archive_path, file->path);
		snprintf(path, sizeof(path), "%s", file->path);
		parent = unpack_parent(&u, root_fd, path, &base);
		if (parent < 0) {
			local = true;
			snprintf(err, err_size, "%s: %s", shown, strerror(-parent));
			ret = parent;
		} else {
			ret = file_write(r, parent, base, shown, &local, err, err_size);
		}
	}
	if (ret < 0 && !local)
		snprintf(err, err_size, "%s: %s", archive_path, why);
	/* One syncfs for every file unpacked: the folder is renamed into use only once durable. */
	if (ret == 0 && syncfs(root_fd) < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", dir, strerror(errno));
	}
	bci_run_archive_close(r);
	unpack_parent_drop(&u);
	close(root_fd);
	if (ret < 0)
		bci_remove_tree(dir);
	return ret;
}

int bci_cache_extract(const char *archive_path, const char *dir, char *err, size_t err_size)
{
	return cache_extract(archive_path, dir, err, err_size);
}

int bci_cache_get(const char *data_dir, const char *digest, const char *archive_path, char *dir,
		  char *err, size_t err_size)
{
	char cache[PATH_MAX], tmp[PATH_MAX];
	struct stat st;
	int ret;

	if (!digest || !bci_sha256_hex_ok(digest)) {
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
	/* mkdtemp only reserves the name: cache_extract() makes the folder itself. */
	if (!mkdtemp(tmp) || rmdir(tmp) < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s: %s", tmp, strerror(errno));
		return ret;
	}
	ret = cache_extract(archive_path, tmp, err, err_size);
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
