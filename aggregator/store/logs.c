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

int bci_store_test_log_open(struct bci_store *store, const char *data_dir, const char *machine,
			    const char *run_id, const char *test, const char *which,
			    char *err, size_t err_size)
{
	struct log_target target = { .job = -1 };
	char dir[PATH_MAX], path[PATH_MAX + 64];
	int fd, ret;

	if (!which || (strcmp(which, "out") && strcmp(which, "err") && strcmp(which, "dmesg"))) {
		snprintf(err, err_size, "'%s' is not a test log (out, err or dmesg)", which ? which : "");
		return -EINVAL;
	}
	ret = bci_store_result_get(store, machine, run_id, test, target_fill, &target, err, err_size);
	if (ret < 0)
		return ret;
	if (target.job < 0) {
		snprintf(err, err_size, "machine %s, run '%s': test '%s' has no job folder", machine,
			 run_id, test);
		return -ENOENT;
	}
	if (target.archive_path[0] == '/')
		snprintf(path, sizeof(path), "%s", target.archive_path);
	else if ((size_t)snprintf(path, sizeof(path), "%s/%s", data_dir, target.archive_path) >=
		 sizeof(path))
		return -ENAMETOOLONG;
	ret = bci_cache_get(data_dir, target.digest, path, dir, err, err_size);
	if (ret < 0)
		return ret;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s%s%d/%s.txt", dir, target.root,
			     *target.root ? "/" : "", target.job, which) >= sizeof(path))
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
