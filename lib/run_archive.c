// SPDX-License-Identifier: MIT
/*
 * One run folder as one archive: a pax tar compressed with zstd (libarchive),
 * manifest.json first, then every regular file of the folder at its path
 * relative to the folder, in the manifest's (sorted) order. Owners, modes and
 * the manifest's own time are normalised, so the same folder gives the same
 * bytes. The manifest (lib/manifest.h) says what the run was: ids, kernel,
 * command line, every boot's record, the EFI boot entries, and the size and
 * sha256 of every file, which the master checks the archive against.
 */
#include "run_archive.h"

#include "fsutil.h"
#include "message.h"
#include "manifest.h"
#include "results_dir.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void entry_set(struct archive_entry *entry, const char *path, int64_t size, time_t mtime)
{
	archive_entry_clear(entry);
	archive_entry_set_pathname(entry, path);
	archive_entry_set_filetype(entry, AE_IFREG);
	archive_entry_set_perm(entry, 0644);
	archive_entry_set_size(entry, size);
	archive_entry_set_mtime(entry, mtime, 0);
	archive_entry_set_uid(entry, 0);
	archive_entry_set_gid(entry, 0);
}

/* Copies @path's bytes into the archive; the file must still have the manifest's size. */
static int add_file(struct archive *a, struct archive_entry *entry, const char *run_dir,
		    const struct bci_manifest_file *file, char *err, size_t err_size)
{
	char path[PATH_MAX], buf[1 << 16];
	uint64_t copied = 0;
	struct stat st;
	ssize_t n;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", run_dir, file->path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(errno));
		goto out;
	}
	entry_set(entry, file->path, (int64_t)file->size, st.st_mtime);
	if (archive_write_header(a, entry) < ARCHIVE_OK) {
		bci_message(err, err_size, "%s: %s", path, archive_error_string(a));
		ret = -EIO;
		goto out;
	}
	while (copied < file->size && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			bci_message(err, err_size, "%s: %s", path, strerror(errno));
			goto out;
		}
		if ((uint64_t)n > file->size - copied)
			n = (ssize_t)(file->size - copied);
		if (archive_write_data(a, buf, (size_t)n) != n) {
			bci_message(err, err_size, "%s: %s", path, archive_error_string(a));
			ret = -EIO;
			goto out;
		}
		copied += (uint64_t)n;
	}
	if (copied != file->size || (uint64_t)st.st_size != file->size) {
		bci_message(err, err_size, "%s: changed while it was archived (%llu bytes, the manifest says %llu)",
			 path, (unsigned long long)st.st_size, (unsigned long long)file->size);
		ret = -EAGAIN;
	}
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

int bci_run_archive_write(const char *run_dir, const char *path,
			      const struct bci_run_archive_info *info, char *err,
			      size_t err_size)
{
	struct archive_entry *entry = NULL;
	struct bci_manifest *m = NULL;
	struct archive *a = NULL;
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
	a = archive_write_new();
	entry = archive_entry_new();
	if (!a || !entry) {
		ret = -ENOMEM;
		goto out_abort;
	}
	if (archive_write_add_filter_zstd(a) < ARCHIVE_OK ||
	    archive_write_set_format_pax_restricted(a) < ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) < ARCHIVE_OK) {
		bci_message(err, err_size, "%s: %s", path, archive_error_string(a));
		ret = -EIO;
		goto out_abort;
	}
	/* The manifest's time: the newest file's, so the archive depends on the folder only. */
	for (size_t i = 0; i < m->file_count; i++) {
		char file_path[PATH_MAX];
		struct stat st;

		snprintf(file_path, sizeof(file_path), "%s/%s", run_dir, m->files[i].path);
		if (stat(file_path, &st) == 0 && st.st_mtime > newest)
			newest = st.st_mtime;
	}
	entry_set(entry, BCI_MANIFEST_NAME, (int64_t)json_len, newest);
	if (archive_write_header(a, entry) < ARCHIVE_OK ||
	    archive_write_data(a, json, json_len) != (la_ssize_t)json_len) {
		bci_message(err, err_size, "%s: %s", path, archive_error_string(a));
		ret = -EIO;
		goto out_abort;
	}
	for (size_t i = 0; i < m->file_count; i++) {
		ret = add_file(a, entry, run_dir, &m->files[i], err, err_size);
		if (ret < 0)
			goto out_abort;
	}
	if (archive_write_close(a) < ARCHIVE_OK) {
		bci_message(err, err_size, "%s: %s", path, archive_error_string(a));
		ret = -EIO;
		goto out_abort;
	}
	ret = bci_atomic_commit(fd, tmp, path);
	fd = -1;
	if (ret < 0)
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
	goto out;
out_abort:
	/* The archive first: freeing it may still write to @fd. */
	if (a)
		archive_write_free(a);
	a = NULL;
	bci_atomic_abort(fd, tmp);
out:
	if (a)
		archive_write_free(a);
	archive_entry_free(entry);
	bci_manifest_free(m);
	free(json);
	return ret;
}
