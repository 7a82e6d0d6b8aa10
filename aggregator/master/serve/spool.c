// SPDX-License-Identifier: MIT
/* serve's data folder (spool.h): incoming uploads, archives, run records. */
#include "spool.h"
#include "../names.h"
#include "fsutil.h"
#include "message.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_MAX 4096

static void incoming_path(const struct bci_spool *spool, const char *machine, const char *run_id,
			  const char *suffix, char *path)
{
	snprintf(path, PATH_MAX, "%s/incoming/%s/%s%s", spool->root, machine, run_id, suffix);
}

static void record_path(const struct bci_spool *spool, const char *machine, const char *run_id,
			char *path)
{
	snprintf(path, PATH_MAX, "%s/runs/%s/%s.json", spool->root, machine, run_id);
}

void bci_spool_part_path(const struct bci_spool *spool, const char *machine, const char *run_id,
			 char *path)
{
	incoming_path(spool, machine, run_id, ".part", path);
}

void bci_spool_archive_path(const struct bci_spool *spool, const char *sha256, char *path)
{
	snprintf(path, PATH_MAX, "%s/archives/%s.tar.zst", spool->root, sha256);
}

/* Whether @name ends with @suffix; its length without it in *@stem. */
static bool has_suffix(const char *name, const char *suffix, size_t *stem)
{
	size_t len = strlen(name), n = strlen(suffix);

	if (len <= n || strcmp(name + len - n, suffix))
		return false;
	*stem = len - n;
	return true;
}

/*
 * One file of incoming/<machine>/: whether it is a crash's leftover. An
 * upload is a .sha256 and its .part; anything else of it is left by a
 * process killed at the wrong moment: the digest of a run already recorded
 * (killed between the record and the digest's removal), a digest without
 * its .part or the reverse (killed between the two, at begin or at discard),
 * a temporary file of an atomic write. The .part of an upload in progress
 * is never one: a resume needs it.
 */
static bool incoming_leftover(const struct bci_spool *spool, const char *machine,
			      const char *name)
{
	const char *tmp = strstr(name, ".sha256.tmp."), *other;
	char run_id[BCI_MANIFEST_WORD_MAX + 1], path[PATH_MAX];
	size_t stem;

	/* bci_write_file_atomic()'s temporary name: the digest's, with six random characters. */
	if (tmp && strlen(tmp) == strlen(".sha256.tmp.") + 6)
		return true;
	if (has_suffix(name, ".sha256", &stem))
		other = ".part";
	else if (has_suffix(name, ".part", &stem))
		other = ".sha256";
	else
		return false;
	if (stem > BCI_MANIFEST_WORD_MAX)
		return false;
	memcpy(run_id, name, stem);
	run_id[stem] = '\0';
	if (!bci_name_run_id_ok(run_id))
		return false;
	record_path(spool, machine, run_id, path);
	if (access(path, F_OK) == 0)
		return true;
	incoming_path(spool, machine, run_id, other, path);
	return access(path, F_OK) < 0 && errno == ENOENT;
}

/* Removes what killed processes left in incoming/ (incoming_leftover()); says how many. */
static int incoming_sweep(const struct bci_spool *spool)
{
	char path[PATH_MAX];
	struct dirent *m, *f;
	DIR *incoming, *dir;
	int removed = 0, here;

	snprintf(path, sizeof(path), "%s/incoming", spool->root);
	incoming = opendir(path);
	if (!incoming)
		return 0;
	while ((m = readdir(incoming))) {
		if (!bci_name_machine_ok(m->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/incoming/%s", spool->root, m->d_name);
		dir = opendir(path);
		if (!dir)
			continue;
		here = 0;
		while ((f = readdir(dir)))
			if (f->d_name[0] != '.' && incoming_leftover(spool, m->d_name, f->d_name) &&
			    unlinkat(dirfd(dir), f->d_name, 0) == 0)
				here++;
		closedir(dir);
		if (here)
			bci_fsync_dir(path);
		removed += here;
	}
	closedir(incoming);
	return removed;
}

int bci_spool_open(struct bci_spool *spool, const char *root, char *err, size_t err_size)
{
	static const char *const dirs[] = { "incoming", "archives", "runs" };
	char path[PATH_MAX];
	int ret;

	if ((size_t)snprintf(spool->root, sizeof(spool->root), "%s", root) >= sizeof(spool->root)) {
		bci_message(err, err_size, "%s: path too long", root);
		return -ENAMETOOLONG;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		ret = bci_mkdir_p(path, 0750);
		if (ret < 0) {
			bci_message(err, err_size, "%s: %s", path, strerror(-ret));
			return ret;
		}
	}
	incoming_sweep(spool);
	return 0;
}

/* Reads a run record; -ENOENT when the run was never accepted. */
static int record_read(const char *path, struct bci_run_status *status, char *err, size_t err_size)
{
	struct json_object *root, *sha, *size, *ingested;
	size_t len;
	char *text;
	int ret;

	ret = bci_read_file(path, &text, &len, RECORD_MAX);
	if (ret < 0) {
		if (ret != -ENOENT)
			bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	root = json_tokener_parse(text);
	free(text);
	if (!json_object_object_get_ex(root, "sha256", &sha) ||
	    !json_object_object_get_ex(root, "size", &size) ||
	    !json_object_object_get_ex(root, "ingested", &ingested) ||
	    !json_object_is_type(sha, json_type_string) ||
	    !bci_sha256_hex_ok(json_object_get_string(sha)) ||
	    !json_object_is_type(size, json_type_int) || !json_object_is_type(ingested, json_type_boolean)) {
		bci_message(err, err_size, "%s: not a run record", path);
		json_object_put(root);
		return -EINVAL;
	}
	status->state = BCI_RUN_STORED;
	memcpy(status->sha256, json_object_get_string(sha), sizeof(status->sha256));
	status->received = (uint64_t)json_object_get_int64(size);
	status->ingested = json_object_get_boolean(ingested);
	json_object_put(root);
	return 0;
}

static int record_write(const struct bci_spool *spool, const char *machine, const char *run_id,
			const char *sha256, uint64_t size, bool ingested, char *err, size_t err_size)
{
	char path[PATH_MAX], text[512];
	int len, ret;

	snprintf(path, sizeof(path), "%s/runs/%s", spool->root, machine);
	ret = bci_mkdir_p(path, 0750);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	record_path(spool, machine, run_id, path);
	/* Every field is a word, hex or a number: nothing needs escaping. */
	len = snprintf(text, sizeof(text),
		       "{\"machine\": \"%s\", \"run_id\": \"%s\", \"sha256\": \"%s\", \"size\": %llu, "
		       "\"ingested\": %s}\n",
		       machine, run_id, sha256, (unsigned long long)size, ingested ? "true" : "false");
	ret = bci_write_file_atomic(path, text, len, 0640);
	if (ret < 0)
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
	return ret;
}

int bci_spool_status(const struct bci_spool *spool, const char *machine, const char *run_id,
		     struct bci_run_status *status, char *err, size_t err_size)
{
	char path[PATH_MAX], *digest;
	struct stat st;
	size_t len;
	int ret;

	memset(status, 0, sizeof(*status));
	record_path(spool, machine, run_id, path);
	ret = record_read(path, status, err, err_size);
	if (ret != -ENOENT)
		return ret;
	status->state = BCI_RUN_ABSENT;
	incoming_path(spool, machine, run_id, ".sha256", path);
	ret = bci_read_file(path, &digest, &len, 128);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	/* The digest and its newline, as bci_spool_begin() wrote them. */
	if (len == BCI_SHA256_HEX_LEN + 1 && digest[BCI_SHA256_HEX_LEN] == '\n') {
		digest[BCI_SHA256_HEX_LEN] = '\0';
		if (bci_sha256_hex_ok(digest))
			memcpy(status->sha256, digest, BCI_SHA256_HEX_LEN + 1);
	}
	free(digest);
	incoming_path(spool, machine, run_id, ".part", path);
	if (status->sha256[0] && stat(path, &st) == 0) {
		status->state = BCI_RUN_PARTIAL;
		status->received = (uint64_t)st.st_size;
	} else {
		status->sha256[0] = '\0';
	}
	return 0;
}

int bci_spool_begin(const struct bci_spool *spool, const char *machine, const char *run_id,
		    const char *sha256, uint64_t start, char *err, size_t err_size)
{
	char path[PATH_MAX], line[BCI_SHA256_HEX_LEN + 2];
	struct bci_run_status status;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/incoming/%s", spool->root, machine);
	ret = bci_mkdir_p(path, 0750);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (start > 0) {
		ret = bci_spool_status(spool, machine, run_id, &status, err, err_size);
		if (ret < 0)
			return ret;
		if (status.state != BCI_RUN_PARTIAL || strcmp(status.sha256, sha256) ||
		    status.received < start) {
			bci_message(err, err_size,
				    "cannot resume from byte %llu: %llu bytes held for this digest",
				    (unsigned long long)start,
				    status.state == BCI_RUN_PARTIAL && !strcmp(status.sha256, sha256) ?
				    (unsigned long long)status.received : 0ULL);
			return -ERANGE;
		}
		bci_spool_part_path(spool, machine, run_id, path);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || ftruncate(fd, (off_t)start) < 0 || lseek(fd, (off_t)start, SEEK_SET) < 0) {
			ret = -errno;
			bci_message(err, err_size, "%s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return ret;
		}
		return fd;
	}
	/* The digest first: a .part never exists without the digest it is meant to have. */
	bci_spool_discard(spool, machine, run_id);
	incoming_path(spool, machine, run_id, ".sha256", path);
	snprintf(line, sizeof(line), "%s\n", sha256);
	ret = bci_write_file_atomic(path, line, strlen(line), 0640);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	bci_spool_part_path(spool, machine, run_id, path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(errno));
		return ret;
	}
	return fd;
}

int bci_spool_accept(const struct bci_spool *spool, const char *machine, const char *run_id,
		     const char *sha256, uint64_t size, char *err, size_t err_size)
{
	char part[PATH_MAX], archive[PATH_MAX], dir[PATH_MAX];
	int fd, ret;

	bci_spool_part_path(spool, machine, run_id, part);
	fd = open(part, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", part, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	close(fd);
	snprintf(dir, sizeof(dir), "%s/archives", spool->root);
	bci_spool_archive_path(spool, sha256, archive);
	/* The same bytes already kept (another run, or an accept cut before its record): share them. */
	if (access(archive, F_OK) == 0) {
		unlink(part);
	} else if (rename(part, archive) < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s -> %s: %s", part, archive, strerror(errno));
		return ret;
	}
	ret = bci_fsync_dir(dir);
	if (ret == 0)
		ret = bci_fsync_parent(part);
	if (ret < 0) {
		bci_message(err, err_size, "%s: fsync: %s", dir, strerror(-ret));
		return ret;
	}
	ret = record_write(spool, machine, run_id, sha256, size, false, err, err_size);
	if (ret < 0)
		return ret;
	incoming_path(spool, machine, run_id, ".sha256", part);
	unlink(part);
	return 0;
}

int bci_spool_mark_ingested(const struct bci_spool *spool, const char *machine,
			    const char *run_id, char *err, size_t err_size)
{
	struct bci_run_status status;
	char path[PATH_MAX];
	int ret;

	record_path(spool, machine, run_id, path);
	ret = record_read(path, &status, err, err_size);
	if (ret == -ENOENT)
		bci_message(err, err_size, "%s: no such run record", path);
	if (ret < 0)
		return ret;
	return record_write(spool, machine, run_id, status.sha256, status.received, true, err,
			    err_size);
}

void bci_spool_discard(const struct bci_spool *spool, const char *machine, const char *run_id)
{
	char path[PATH_MAX];

	bci_spool_part_path(spool, machine, run_id, path);
	unlink(path);
	incoming_path(spool, machine, run_id, ".sha256", path);
	unlink(path);
}

int bci_spool_each_pending(const struct bci_spool *spool,
			   int (*fn)(void *ctx, const char *machine, const char *run_id,
				     const struct bci_run_status *status),
			   void *ctx, char *err, size_t err_size)
{
	char path[PATH_MAX];
	struct dirent *m;
	DIR *runs;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/runs", spool->root);
	runs = opendir(path);
	if (!runs) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(errno));
		return ret;
	}
	while (ret == 0 && (m = readdir(runs))) {
		struct dirent *r;
		DIR *machine;

		if (!bci_name_machine_ok(m->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/runs/%s", spool->root, m->d_name);
		machine = opendir(path);
		if (!machine)
			continue;
		while (ret == 0 && (r = readdir(machine))) {
			size_t len = strlen(r->d_name);
			struct bci_run_status status;
			char run_id[BCI_MANIFEST_WORD_MAX + 1];

			if (len <= 5 || len - 5 > BCI_MANIFEST_WORD_MAX || strcmp(r->d_name + len - 5, ".json"))
				continue;
			memcpy(run_id, r->d_name, len - 5);
			run_id[len - 5] = '\0';
			if (!bci_name_run_id_ok(run_id))
				continue;
			record_path(spool, m->d_name, run_id, path);
			if (record_read(path, &status, err, err_size) < 0 || status.ingested)
				continue;
			ret = fn(ctx, m->d_name, run_id, &status);
		}
		closedir(machine);
	}
	closedir(runs);
	return ret;
}

/* The run id of an upload's .part named @name, into @run_id; false for any other file. */
static bool part_run_id(const char *name, char *run_id)
{
	size_t stem;

	if (!has_suffix(name, ".part", &stem) || stem > BCI_MANIFEST_WORD_MAX)
		return false;
	memcpy(run_id, name, stem);
	run_id[stem] = '\0';
	return bci_name_run_id_ok(run_id);
}

/* Seconds since @st was last modified at @now (0 when in the future). */
static uint64_t age_of(const struct stat *st, time_t now)
{
	return st->st_mtime < now ? (uint64_t)(now - st->st_mtime) : 0;
}

int bci_spool_each_expired(const struct bci_spool *spool, time_t now, uint64_t max_age,
			   int (*fn)(void *ctx, const char *machine, const char *run_id,
				     uint64_t size, uint64_t age),
			   void *ctx)
{
	char path[PATH_MAX], run_id[BCI_MANIFEST_WORD_MAX + 1];
	struct dirent *m, *f;
	DIR *incoming, *dir;
	struct stat st;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/incoming", spool->root);
	incoming = opendir(path);
	if (!incoming)
		return 0;
	while (ret == 0 && (m = readdir(incoming))) {
		if (!bci_name_machine_ok(m->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/incoming/%s", spool->root, m->d_name);
		dir = opendir(path);
		if (!dir)
			continue;
		while (ret == 0 && (f = readdir(dir)))
			if (part_run_id(f->d_name, run_id) &&
			    fstatat(dirfd(dir), f->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode) && age_of(&st, now) > max_age)
				ret = fn(ctx, m->d_name, run_id, (uint64_t)st.st_size, age_of(&st, now));
		closedir(dir);
	}
	closedir(incoming);
	return ret;
}

int bci_spool_expire(const struct bci_spool *spool, const char *machine, const char *run_id,
		     time_t now, uint64_t max_age, uint64_t *size)
{
	char path[PATH_MAX];
	struct stat st;

	bci_spool_part_path(spool, machine, run_id, path);
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || age_of(&st, now) <= max_age)
		return 0;
	*size = (uint64_t)st.st_size;
	bci_spool_discard(spool, machine, run_id);
	bci_fsync_parent(path);
	return 1;
}

uint64_t bci_spool_incoming_bytes(const struct bci_spool *spool, const char *machine,
				  const char *except_run_id)
{
	char path[PATH_MAX], run_id[BCI_MANIFEST_WORD_MAX + 1];
	uint64_t total = 0;
	struct dirent *f;
	struct stat st;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/incoming/%s", spool->root, machine);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((f = readdir(dir)))
		if (part_run_id(f->d_name, run_id) &&
		    (!except_run_id || strcmp(run_id, except_run_id)) &&
		    fstatat(dirfd(dir), f->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	closedir(dir);
	return total;
}
