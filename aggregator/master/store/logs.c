// SPDX-License-Identifier: MIT
/*
 * A test's out/err/dmesg from the master without unpacking the whole archive
 * each time: the store says which run, archive and job; the extract-once
 * cache (cache.c) holds the unpacked run. See bci_store_test_log_open().
 */
#include "store.h"

#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct log_target {
	char digest[80];
	char archive_path[PATH_MAX];
	char root[PATH_MAX];
	int job;
};

static int target_fill(const struct bci_store_run *run, const struct bci_store_result *result,
		       void *ctx)
{
	struct log_target *t = ctx;

	snprintf(t->digest, sizeof(t->digest), "%s", run->digest ? run->digest : "");
	snprintf(t->archive_path, sizeof(t->archive_path), "%s", run->archive_path ? run->archive_path : "");
	snprintf(t->root, sizeof(t->root), "%s", run->archive_root ? run->archive_root : "");
	t->job = result->job;
	return 0;
}

static int log_name_check(const char *which, char *err, size_t err_size)
{
	if (!which || (strcmp(which, "out") && strcmp(which, "err") && strcmp(which, "dmesg"))) {
		snprintf(err, err_size, "'%s' is not a test log (out, err or dmesg)", which ? which : "");
		return -EINVAL;
	}
	return 0;
}

/* Opens @which of job @job of @run (its archive through the cache); @test names it in messages. */
static int job_log_open(const char *data_dir, const char *machine, const char *run_id,
			const char *digest, const char *archive_path, const char *root, int job,
			const char *test, const char *which, char *err, size_t err_size)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	int fd, ret;

	if (job < 0) {
		snprintf(err, err_size, "machine %s, run '%s': test '%s' has no job folder", machine,
			 run_id, test);
		return -ENOENT;
	}
	/* The run's log file when ingest wrote one; else the unpacked archive. */
	fd = bci_cache_logs_open(data_dir, digest, (unsigned)job, which, err, err_size);
	if (fd >= 0)
		return fd;
	if (fd != -ENXIO) {
		char inner[512];

		snprintf(inner, sizeof(inner), "%s", err);
		snprintf(err, err_size, "machine %s, run '%s', test '%s': %s", machine, run_id, test,
			 fd == -ENOENT ? inner : strerror(-fd));
		return fd;
	}
	if (archive_path[0] == '/')
		snprintf(path, sizeof(path), "%s", archive_path);
	else if ((size_t)snprintf(path, sizeof(path), "%s/%s", data_dir, archive_path) >=
		 sizeof(path))
		return -ENAMETOOLONG;
	ret = bci_cache_get(data_dir, digest, path, dir, err, err_size);
	if (ret < 0)
		return ret;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s%s%d/%s.txt", dir, root, *root ? "/" : "",
			     job, which) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_size, "machine %s, run '%s', test '%s': %s: %s", machine, run_id,
			 test, path, strerror(errno));
		return ret;
	}
	return fd;
}

int bci_store_test_log_open(struct bci_store *store, const char *data_dir, const char *machine,
			    const char *run_id, const char *test, const char *which,
			    char *err, size_t err_size)
{
	struct log_target target = { .job = -1 };
	int ret;

	ret = log_name_check(which, err, err_size);
	if (ret < 0)
		return ret;
	ret = bci_store_result_get(store, machine, run_id, test, target_fill, &target, err, err_size);
	if (ret < 0)
		return ret;
	return job_log_open(data_dir, machine, run_id, target.digest, target.archive_path,
			    target.root, target.job, test, which, err, err_size);
}

int bci_store_job_log_open(const char *data_dir, const struct bci_store_run *run,
			   const struct bci_store_result *result, const char *which, char *err,
			   size_t err_size)
{
	int ret = log_name_check(which, err, err_size);

	if (ret < 0)
		return ret;
	if (!run->digest || !run->archive_path) {
		snprintf(err, err_size, "machine %s, run '%s': no archive in the store",
			 run->machine ? run->machine : "", run->run_id ? run->run_id : "");
		return -EINVAL;
	}
	return job_log_open(data_dir, run->machine ? run->machine : "",
			    run->run_id ? run->run_id : "", run->digest, run->archive_path,
			    run->archive_root ? run->archive_root : "", result->job,
			    result->name ? result->name : "", which, err, err_size);
}

struct run_target {
	char digest[80];
	char archive_path[PATH_MAX];
	char root[PATH_MAX];
};

static int run_target_fill(const struct bci_store_run *run, void *ctx)
{
	struct run_target *t = ctx;

	snprintf(t->digest, sizeof(t->digest), "%s", run->digest ? run->digest : "");
	snprintf(t->archive_path, sizeof(t->archive_path), "%s", run->archive_path ? run->archive_path : "");
	snprintf(t->root, sizeof(t->root), "%s", run->archive_root ? run->archive_root : "");
	return 0;
}

/* A path inside the run folder: relative, no empty, "." or ".." component. */
static int run_path_ok(const char *path)
{
	const char *p = path;

	if (!*p || *p == '/')
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (!n || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += n;
		if (*p)
			p++;
		if (!*p && p[-1] == '/')
			return 0;
	}
	return 1;
}

int bci_store_run_file_open(struct bci_store *store, const char *data_dir, const char *machine,
			    const char *run_id, const char *path, char *err, size_t err_size)
{
	struct run_target target = { 0 };
	char dir[PATH_MAX], full[2 * PATH_MAX + 2];
	int fd, ret;

	if (!path || !run_path_ok(path)) {
		snprintf(err, err_size, "machine %s, run '%s': '%s' is not a path inside the run",
			 machine, run_id, path ? path : "");
		return -EINVAL;
	}
	ret = bci_store_run_get(store, machine, run_id, run_target_fill, &target, err, err_size);
	if (ret < 0)
		return ret;
	if (target.archive_path[0] == '/')
		snprintf(full, sizeof(full), "%s", target.archive_path);
	else if ((size_t)snprintf(full, sizeof(full), "%s/%s", data_dir, target.archive_path) >=
		 sizeof(full))
		return -ENAMETOOLONG;
	ret = bci_cache_get(data_dir, target.digest, full, dir, err, err_size);
	if (ret < 0)
		return ret;
	if ((size_t)snprintf(full, sizeof(full), "%s/%s%s%s", dir, target.root,
			     *target.root ? "/" : "", path) >= sizeof(full))
		return -ENAMETOOLONG;
	/* The cache holds no links (cache.h), and the file itself is never followed. */
	fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_size, "machine %s, run '%s': %s: %s", machine, run_id, path,
			 strerror(errno));
		return ret;
	}
	return fd;
}
