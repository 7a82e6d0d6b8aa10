// SPDX-License-Identifier: MIT
/*
 * Ingest's manifest checks (ingest_internal.h): every file of the run is
 * listed in its manifest with the same size and sha256, and every listed file
 * is there; a lying archive is refused before any row is written.
 */
#include "ingest_internal.h"

#include "fsutil.h"
#include "message.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the manifest and what it promises ---- */

int bci_ingest_manifest_read(struct ingest *in)
{
	char path[PATH_MAX * 2 + 32], *text = NULL, message[512];
	size_t len = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/" BCI_MANIFEST_NAME, in->run_dir);
	ret = bci_read_file(path, &text, &len, SMALL_FILE_MAX);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		bci_message(in->err, in->err_size, "%s: manifest.json: %s", in->archive, strerror(-ret));
		return ret;
	}
	ret = bci_manifest_parse(text, len, &in->manifest, message, sizeof(message));
	free(text);
	if (ret < 0)
		bci_message(in->err, in->err_size, "%s: manifest.json: %s", in->archive, message);
	return ret;
}

/* One regular file of the run against its manifest entry: listed, same size, same sha256. */
static int file_check(struct ingest *in, int dir_fd, const char *name, const char *rel)
{
	const struct bci_manifest_file *file = bci_manifest_find(in->manifest, rel);
	char digest[BCI_SHA256_HEX_LEN + 1];
	uint64_t size;
	int fd, ret;

	if (!file) {
		bci_message(in->err, in->err_size, "%s: %s is not in the manifest", in->archive, rel);
		return -EBADMSG;
	}
	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		bci_message(in->err, in->err_size, "%s: %s: %s", in->archive, rel, strerror(errno));
		return ret;
	}
	ret = bci_sha256_fd(fd, digest, &size);
	close(fd);
	if (ret < 0) {
		bci_message(in->err, in->err_size, "%s: %s: %s", in->archive, rel, strerror(-ret));
		return ret;
	}
	if (size != file->size || strcmp(digest, file->sha256)) {
		bci_message(in->err, in->err_size,
			    "%s: %s does not match the manifest (%llu bytes, sha256 %s; the manifest"
			    " says %llu bytes, %s)", in->archive, rel, (unsigned long long)size,
			    digest, (unsigned long long)file->size, file->sha256);
		return -EBADMSG;
	}
	return 0;
}

/*
 * Checks every file below the folder @dir_fd (taken over: closed here),
 * whose path in the run is @rel ("" for the run folder), and counts them in
 * *@files. A recursive walk of our own rather than nftw(), which has no
 * context pointer: serve ingests from several threads.
 */
static int tree_check(struct ingest *in, int dir_fd, const char *rel, size_t *files)
{
	struct dirent *d;
	DIR *dir;
	int ret = 0;

	dir = fdopendir(dir_fd);
	if (!dir) {
		ret = -errno;
		close(dir_fd);
		return ret;
	}
	while (ret == 0 && (errno = 0, d = readdir(dir))) {
		char path[BCI_MANIFEST_PATH_MAX + 2];
		struct stat st;

		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", d->d_name) >=
		    sizeof(path)) {
			bci_message(in->err, in->err_size, "%s: %s...: path too long", in->archive, rel);
			ret = -ENAMETOOLONG;
		} else if (fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			ret = -errno;
			bci_message(in->err, in->err_size, "%s: %s: %s", in->archive, path, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(dir), d->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			ret = sub < 0 ? -errno : tree_check(in, sub, path, files);
		} else if (!S_ISREG(st.st_mode)) {
			bci_message(in->err, in->err_size, "%s: %s is not a regular file", in->archive, path);
			ret = -EBADMSG;
		} else if (strcmp(path, BCI_MANIFEST_NAME)) {
			(*files)++;
			ret = file_check(in, dirfd(dir), d->d_name, path);
		}
	}
	if (ret == 0 && errno)
		ret = -errno;
	closedir(dir);
	return ret;
}

/* Every file found is listed, so the difference is listed files that are missing: names one. */
static int manifest_missing(struct ingest *in)
{
	for (size_t i = 0; i < in->manifest->file_count; i++) {
		char path[PATH_MAX * 3];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", in->run_dir, in->manifest->files[i].path);
		if (lstat(path, &st) < 0) {
			bci_message(in->err, in->err_size,
				    "%s: %s is in the manifest but not in the archive", in->archive,
				    in->manifest->files[i].path);
			break;
		}
	}
	return -EBADMSG;
}

/* Every file the manifest lists is there with its size and sha256, and no other. */
int bci_ingest_manifest_verify(struct ingest *in)
{
	size_t files = 0;
	int fd, ret;

	fd = open(in->run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		bci_message(in->err, in->err_size, "%s: %s", in->run_dir, strerror(errno));
		return ret;
	}
	in->err[0] = '\0';
	ret = tree_check(in, fd, "", &files);
	if (ret < 0) {
		if (!in->err[0])
			bci_message(in->err, in->err_size, "%s: %s", in->run_dir, strerror(-ret));
		return ret;
	}
	if (files != in->manifest->file_count)
		return manifest_missing(in);
	return 0;
}

/*
 * The same promise as manifest_verify(), from the list of files this ingest
 * unpacked (hashed as they were written) instead of reading them again.
 * Only regular files were unpacked (anything else refused the archive), and
 * a second entry of the same path was refused too, so every listed file is
 * there once.
 */
int bci_ingest_manifest_verify_unpacked(struct ingest *in)
{
	size_t root_len = strlen(in->root), files = 0;

	for (size_t i = 0; i < in->unpacked.count; i++) {
		const struct bci_cache_file *got = &in->unpacked.files[i];
		const struct bci_manifest_file *file;
		const char *rel = got->path;

		/* run_root_find(): with a root folder, it is the archive's only top entry. */
		if (root_len) {
			if (strncmp(rel, in->root, root_len) || rel[root_len] != '/')
				continue;
			rel += root_len + 1;
		}
		if (!strcmp(rel, BCI_MANIFEST_NAME))
			continue;
		files++;
		file = bci_manifest_find(in->manifest, rel);
		if (!file) {
			bci_message(in->err, in->err_size, "%s: %s is not in the manifest", in->archive,
				    rel);
			return -EBADMSG;
		}
		if (got->size != file->size || strcmp(got->sha256, file->sha256)) {
			bci_message(in->err, in->err_size,
				    "%s: %s does not match the manifest (%llu bytes, sha256 %s; the"
				    " manifest says %llu bytes, %s)", in->archive, rel,
				    (unsigned long long)got->size, got->sha256,
				    (unsigned long long)file->size, file->sha256);
			return -EBADMSG;
		}
	}
	if (files != in->manifest->file_count)
		return manifest_missing(in);
	return 0;
}
