// SPDX-License-Identifier: MIT
/*
 * The results partition's reserve: BCI_RESERVE_BYTES allocated to one file
 * at its root, kept from boot to boot. When a result file cannot be written
 * (the partition filled during a job), the reserve is given back, so the
 * records that say so (the note in the job's output, the incomplete marker,
 * the journal lines, aborted.txt, endtime.txt, end.txt) still fit: "the disk
 * filled up" is itself recorded. The next boot that finds room makes the
 * reserve again; one that finds none says the partition is full before the
 * run starts, gives the reserve back for its records and runs nothing.
 */
#include "executor.h"

#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int reserve_path(const struct bci_executor *ex, char *buf)
{
	if (snprintf(buf, PATH_MAX, "%s/" BCI_RESERVE_FILE, ex->results_mount) >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

/* Blocks for @fd's first BCI_RESERVE_BYTES: fallocate, or zeros where it is not offered. */
static int reserve_allocate(int fd)
{
	static const char zeros[65536];
	off_t at = 0;

	if (fallocate(fd, 0, 0, BCI_RESERVE_BYTES) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	while (at < BCI_RESERVE_BYTES) {
		ssize_t n = pwrite(fd, zeros, sizeof(zeros), at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		at += n;
	}
	return 0;
}

/* 0 with the reserve's blocks allocated and durable, or -errno (-ENOSPC: no room for it). */
static int reserve_make(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600), ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;
	/* Allocated blocks, not a size: a sparse file would reserve nothing. */
	else if (st.st_blocks * 512 < BCI_RESERVE_BYTES)
		ret = reserve_allocate(fd);
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	if (ret == -ENOSPC || ret == -EDQUOT)
		/* Half a reserve is worth less than the room it takes from the records. */
		unlink(path);
	return ret;
}

void bci_reserve_hold(struct bci_executor *ex)
{
	char path[PATH_MAX];
	struct statvfs vfs;
	unsigned long long free_bytes;
	int ret = reserve_path(ex, path);

	ex->reserve = 0;
	ex->results_full[0] = '\0';
	if (ret == 0)
		ret = reserve_make(path);
	if (ret == 0) {
		ex->reserve = 1;
		if (statvfs(ex->results_mount, &vfs) < 0)
			return;
		free_bytes = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
		/* A run needs room of its own besides the reserve. */
		if (free_bytes >= BCI_RESERVE_BYTES)
			return;
		snprintf(ex->results_full, sizeof(ex->results_full),
			 "Results partition full before the run: %llu KiB free, under the %d KiB "
			 "a run needs", free_bytes / 1024, BCI_RESERVE_BYTES / 1024);
	} else if (ret == -ENOSPC || ret == -EDQUOT) {
		snprintf(ex->results_full, sizeof(ex->results_full),
			 "Results partition full before the run: no room for the %d KiB reserve",
			 BCI_RESERVE_BYTES / 1024);
	} else {
		bci_warn("cannot keep a reserve on the results partition (%s): %s; a full partition "
			 "may leave its records unwritten", path, strerror(-ret));
		return;
	}
	bci_error("%s: an IGT run records why and stops before its first job", ex->results_full);
	if (ex->reserve == 1)
		bci_reserve_release(ex, ex->results_full);
}

void bci_reserve_release(struct bci_executor *ex, const char *why)
{
	char path[PATH_MAX];

	if (!ex->results_full[0])
		snprintf(ex->results_full, sizeof(ex->results_full), "%s", why);
	if (ex->reserve != 1)
		return;
	ex->reserve = -1;
	if (reserve_path(ex, path) < 0 || unlink(path) < 0) {
		bci_error("cannot give back the reserve of the results partition: %s",
			  strerror(errno));
		return;
	}
	/* Freed for the records that follow, which need it now, not after a later sync. */
	bci_fsync_parent(path);
	bci_warn("results partition full: its %d KiB reserve is given back for the records",
		 BCI_RESERVE_BYTES / 1024);
}
