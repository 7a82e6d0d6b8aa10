// SPDX-License-Identifier: MIT
/*
 * Finds the results partition through libblkid. Disks are enumerated from
 * ROOT/sys/block (a partition is a subfolder with a `partition` file) and
 * probed through ROOT/dev/<name>, so a fake tree whose /dev entries are image
 * files works the same as a machine: no udev, no blkid cache.
 */
#include "executor.h"

#include "config.h"
#include "fsutil.h"

#include <blkid/blkid.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POLL_INTERVAL_NS (200 * 1000 * 1000L)

struct match {
	char device[PATH_MAX];
	unsigned count;
};

static void add_match(struct match *m, const char *device)
{
	if (m->count++ == 0)
		snprintf(m->device, sizeof(m->device), "%s", device);
}

/* Does the filesystem on @device carry @label? */
static bool has_label(const char *device, const char *label)
{
	blkid_probe probe = blkid_new_probe_from_filename(device);
	const char *value = NULL;
	bool found = false;

	if (!probe)
		return false;
	blkid_probe_enable_superblocks(probe, 1);
	blkid_probe_set_superblocks_flags(probe, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(probe, 0);
	if (blkid_do_safeprobe(probe) == 0 &&
	    blkid_probe_lookup_value(probe, "LABEL", &value, NULL) == 0)
		found = strcmp(value, label) == 0;
	blkid_free_probe(probe);
	return found;
}

/* The name of @disk's partition number @partno, from ROOT/sys/block/DISK/<part>/partition. */
static int partition_name(const struct bci_executor *ex, const char *disk, int partno, char *name,
			  size_t size)
{
	char dir[PATH_MAX];
	struct dirent *entry;
	DIR *d;
	int ret = -ENOENT;

	if (bci_path(ex->root, dir, "/sys/block/%s", disk) < 0 || !(d = opendir(dir)))
		return -ENOENT;
	while ((entry = readdir(d)) && ret < 0) {
		char path[PATH_MAX], *text = NULL;
		if (entry->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s/partition", dir, entry->d_name) >=
			    (int)sizeof(path))
			continue;
		if (bci_read_file(path, &text, NULL, 64) < 0)
			continue;
		if (atoi(text) == partno && strlen(entry->d_name) < size) {
			strcpy(name, entry->d_name);
			ret = 0;
		}
		free(text);
	}
	closedir(d);
	return ret;
}

static void find_partuuid_on_disk(const struct bci_executor *ex, const char *disk,
				  const char *partuuid, struct match *m)
{
	char device[PATH_MAX];
	blkid_probe probe;
	blkid_partlist parts;

	if (bci_path(ex->root, device, "/dev/%s", disk) < 0)
		return;
	probe = blkid_new_probe_from_filename(device);
	if (!probe)
		return;
	blkid_probe_enable_superblocks(probe, 0);
	blkid_probe_enable_partitions(probe, 1);
	parts = blkid_probe_get_partitions(probe);
	for (int i = 0; parts && i < blkid_partlist_numof_partitions(parts); i++) {
		blkid_partition part = blkid_partlist_get_partition(parts, i);
		const char *uuid = blkid_partition_get_uuid(part);
		char name[256];
		if (!uuid || strcasecmp(uuid, partuuid) != 0)
			continue;
		if (partition_name(ex, disk, blkid_partition_get_partno(part), name,
				   sizeof(name)) == 0 &&
		    bci_path(ex->root, device, "/dev/%s", name) == 0)
			add_match(m, device);
	}
	blkid_free_probe(probe);
}

static void find_label_on_disk(const struct bci_executor *ex, const char *disk, const char *label,
			       struct match *m)
{
	char dir[PATH_MAX], device[PATH_MAX];
	struct dirent *entry;
	DIR *d;

	if (bci_path(ex->root, device, "/dev/%s", disk) == 0 && has_label(device, label))
		add_match(m, device);
	if (bci_path(ex->root, dir, "/sys/block/%s", disk) < 0 || !(d = opendir(dir)))
		return;
	while ((entry = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;
		if (entry->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s/partition", dir, entry->d_name) >=
			    (int)sizeof(path) ||
		    stat(path, &st) < 0)
			continue;
		if (bci_path(ex->root, device, "/dev/%s", entry->d_name) == 0 &&
		    has_label(device, label))
			add_match(m, device);
	}
	closedir(d);
}

int bci_partition_find(const struct bci_executor *ex, const char *label, const char *partuuid,
		       char *device, size_t size)
{
	char dir[PATH_MAX];
	struct match m = { .count = 0 };
	struct dirent **disks;
	int n;

	if (bci_path(ex->root, dir, "/sys/block") < 0)
		return -ENAMETOOLONG;
	/* Sorted, so that messages and choices do not depend on readdir order. */
	n = scandir(dir, &disks, NULL, alphasort);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		const char *disk = disks[i]->d_name;
		if (disk[0] != '.') {
			if (partuuid && *partuuid)
				find_partuuid_on_disk(ex, disk, partuuid, &m);
			else
				find_label_on_disk(ex, disk, label, &m);
		}
		free(disks[i]);
	}
	free(disks);
	if (m.count == 0)
		return -ENOENT;
	if (m.count > 1)
		return -ENOTUNIQ;
	if (strlen(m.device) >= size)
		return -ENAMETOOLONG;
	strcpy(device, m.device);
	return 0;
}

int bci_partition_mount_results(struct bci_executor *ex)
{
	const char *label = bci_config_get(ex->config, "results_label");
	const char *partuuid = bci_config_get(ex->config, "results_partuuid");
	const char *fstype = bci_config_get(ex->config, "results_fstype");
	unsigned long wait_s = bci_config_get_seconds(ex->config, "results_wait");
	char what[160];
	long start;
	int ret;

	snprintf(what, sizeof(what), *partuuid ? "PARTUUID=%s" : "LABEL=%s",
		 *partuuid ? partuuid : label);
	start = bci_clock_ms(ex, CLOCK_BOOTTIME);
	/* Block devices appear asynchronously after their driver loads: poll to a deadline. */
	for (;;) {
		ret = bci_partition_find(ex, label, partuuid, ex->results_device,
					 sizeof(ex->results_device));
		if (ret != -ENOENT || bci_clock_ms(ex, CLOCK_BOOTTIME) - start >= (long)wait_s * 1000)
			break;
		nanosleep(&(struct timespec){ 0, POLL_INTERVAL_NS }, NULL);
	}
	if (ret == -ENOENT) {
		bci_error("results partition %s not found within %lu s", what, wait_s);
		return ret;
	}
	if (ret == -ENOTUNIQ) {
		bci_error("results partition %s is ambiguous: more than one device carries it",
			  what);
		return ret;
	}
	if (ret < 0) {
		bci_error("looking for results partition %s: %s", what, strerror(-ret));
		return ret;
	}
	ret = bci_path(ex->root, ex->results_mount, "/results");
	if (ret < 0)
		return ret;
	if (mkdir(ex->results_mount, 0755) < 0 && errno != EEXIST) {
		ret = -errno;
		bci_error("cannot create %s: %s", ex->results_mount, strerror(-ret));
		return ret;
	}
	ret = ex->sys->mount(ex->results_device, ex->results_mount, fstype, MS_NOATIME | MS_NODEV,
			     NULL);
	if (ret < 0) {
		bci_error("cannot mount results partition %s (%s) as %s: %s", what,
			  ex->results_device, fstype, strerror(-ret));
		return ret;
	}
	bci_say("results partition %s is %s, mounted on /results", what,
		ex->results_device + strlen(ex->root));
	return 0;
}
