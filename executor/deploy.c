// SPDX-License-Identifier: MIT
/*
 * The deploy mode (bootci.mode=deploy): the master found this machine's disk
 * damaged and netbooted it with a deploy initrd holding a plan
 * (lib/deploy_plan.h) and the known-good disk image. This boot
 *   1 salvages what it can read of the old results partition (its run
 *     folders and the machine's identity) into RAM: found by its label, or,
 *     when the partition table is gone, at the offset the image gives it,
 *     through a loop device;
 *   2 writes the image to the whole disk, fsyncs it;
 *   3 reads it back past the page cache and compares its SHA-256 with the
 *     plan's: a disk that does not read back exactly is an error, and no boot
 *     entry points at it;
 *   4 has the kernel read the new partition table (BLKRRPART);
 *   5 registers the known-good EFI boot entry again;
 *   6 mounts the new results partition, puts the salvage back and records
 *     the deploy in deploy/<time>.txt; then the boot ends as any other: a
 *     hand-over to the known-good image, whose collect uploads the runs.
 * The salvage lives in RAM between 1 and 6: a power cut in between loses it,
 * but the old disk is being overwritten anyway and was damaged to begin with.
 */
#include "executor.h"

#include "deploy_plan.h"
#include "efi/efi.h"
#include "fsutil.h"
#include "sha256.h"

#include <blkid/blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (4UL << 20)
#define SALVAGE_DIR "/run/bootci-salvage"
#define OLD_MOUNT "/run/bootci-old-results"
#define IDENTITY_FILE "bootci-machine.conf"
#define POLL_NS (200 * 1000 * 1000L)

struct salvage {
	char dir[PATH_MAX];
	bool held;                /* dir holds what was read */
	unsigned saved, lost;     /* top-level entries (run folders, the identity) */
	bool identity;
	unsigned long long budget; /* bytes of RAM the salvage may still take */
	char lost_names[512];
};

/* @a/@b into @buf (PATH_MAX): 0, or -ENAMETOOLONG. */
static int path_join(char *buf, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la + 1 + lb >= PATH_MAX)
		return -ENAMETOOLONG;
	memmove(buf, a, la);
	buf[la] = '/';
	memcpy(buf + la + 1, b, lb + 1);
	return 0;
}

/* ---- the disk ---- */

static bool whole_disk_candidate(const char *name)
{
	static const char *const skip[] = { "loop", "ram", "zram", "sr", "dm-", "md", "fd" };

	for (size_t i = 0; i < sizeof(skip) / sizeof(*skip); i++)
		if (!strncmp(name, skip[i], strlen(skip[i])))
			return false;
	return name[0] != '.';
}

/* Size in bytes of ROOT/sys/block/@name, 0 when unknown. */
static unsigned long long disk_size(const struct bci_executor *ex, const char *name)
{
	char path[PATH_MAX], *text = NULL;
	unsigned long long sectors = 0;

	if (bci_path(ex->root, path, "/sys/block/%s/size", name) == 0 &&
	    bci_read_file(path, &text, NULL, 64) == 0) {
		sectors = strtoull(text, NULL, 10);
		free(text);
	}
	return sectors * 512;
}

static bool disk_removable(const struct bci_executor *ex, const char *name)
{
	char path[PATH_MAX], *text = NULL;
	bool removable = false;

	if (bci_path(ex->root, path, "/sys/block/%s/removable", name) == 0 &&
	    bci_read_file(path, &text, NULL, 64) == 0) {
		removable = text[0] == '1';
		free(text);
	}
	return removable;
}

/*
 * The disk to write: the plan's, else the one fixed disk big enough for the
 * image (waiting up to results_wait for its driver). Never a guess among
 * several: writing the wrong disk is worse than not deploying.
 */
static int disk_pick(struct bci_executor *ex, const struct bci_deploy_plan *plan, char *disk)
{
	unsigned long wait_s = bci_config_get_seconds(ex->config, "results_wait");
	long start = bci_clock_ms(ex, CLOCK_BOOTTIME);
	char dir[PATH_MAX], found[PATH_MAX], names[256];

	if (plan->disk[0])
		return bci_path(ex->root, disk, "%s", plan->disk) < 0 ? -ENAMETOOLONG : 0;
	if (bci_path(ex->root, dir, "/sys/block") < 0)
		return -ENAMETOOLONG;
	for (;;) {
		struct dirent **entries;
		unsigned count = 0;
		int n = scandir(dir, &entries, NULL, alphasort);

		names[0] = '\0';
		for (int i = 0; i < n; i++) {
			const char *name = entries[i]->d_name;

			if (whole_disk_candidate(name) && !disk_removable(ex, name) &&
			    disk_size(ex, name) >= plan->image_size) {
				if (count++ == 0)
					snprintf(found, sizeof(found), "%s", name);
				size_t used = strlen(names);
				if (snprintf(names + used, sizeof(names) - used, "%s%s",
					     used ? ", " : "", name) >= (int)(sizeof(names) - used))
					names[used] = '\0';
			}
			free(entries[i]);
		}
		free(n >= 0 ? entries : NULL);
		if (count == 1)
			return bci_path(ex->root, disk, "/dev/%s", found) < 0 ? -ENAMETOOLONG : 0;
		if (count > 1) {
			bci_error("deploy: several disks could take the image (%s): the plan must name "
				  "one (disk=)", names);
			return -ENOTUNIQ;
		}
		if (bci_clock_ms(ex, CLOCK_BOOTTIME) - start >= (long)wait_s * 1000)
			break;
		nanosleep(&(struct timespec){ 0, POLL_NS }, NULL);
	}
	bci_error("deploy: no fixed disk of at least %llu bytes appeared within %lu s",
		  (unsigned long long)plan->image_size, wait_s);
	return -ENOENT;
}

/* Does the filesystem at @offset (@length bytes) of @fd carry @label? */
static bool label_at(int fd, unsigned long long offset, unsigned long long length,
		     const char *label)
{
	blkid_probe probe = blkid_new_probe();
	const char *value = NULL;
	bool found = false;

	if (!probe)
		return false;
	if (blkid_probe_set_device(probe, fd, (blkid_loff_t)offset, (blkid_loff_t)length) == 0) {
		blkid_probe_enable_superblocks(probe, 1);
		blkid_probe_set_superblocks_flags(probe, BLKID_SUBLKS_LABEL);
		blkid_probe_enable_partitions(probe, 0);
		if (blkid_do_safeprobe(probe) == 0 &&
		    blkid_probe_lookup_value(probe, "LABEL", &value, NULL) == 0)
			found = strcmp(value, label) == 0;
	}
	blkid_free_probe(probe);
	return found;
}

/* Where the image puts its results partition (the one labelled @label): 0 or -ENOENT. */
static int image_results_range(int image_fd, const char *label, unsigned long long *offset,
			       unsigned long long *length)
{
	blkid_probe probe = blkid_new_probe();
	blkid_partlist parts;
	int ret = -ENOENT;

	if (!probe)
		return -ENOMEM;
	if (blkid_probe_set_device(probe, image_fd, 0, 0) < 0)
		goto out;
	blkid_probe_enable_superblocks(probe, 0);
	blkid_probe_enable_partitions(probe, 1);
	parts = blkid_probe_get_partitions(probe);
	for (int i = 0; parts && i < blkid_partlist_numof_partitions(parts) && ret < 0; i++) {
		blkid_partition part = blkid_partlist_get_partition(parts, i);
		unsigned long long start = (unsigned long long)blkid_partition_get_start(part) * 512;
		unsigned long long size = (unsigned long long)blkid_partition_get_size(part) * 512;

		if (label_at(image_fd, start, size, label)) {
			*offset = start;
			*length = size;
			ret = 0;
		}
	}
out:
	blkid_free_probe(probe);
	return ret;
}

/* A loop device over @length bytes at @offset of @disk; its path in @loop (PATH_MAX), its fd. */
static int loop_attach(const struct bci_executor *ex, const char *disk, unsigned long long offset,
		       unsigned long long length, char *loop)
{
	struct loop_config config = { .block_size = 0 };
	char control[PATH_MAX];
	int control_fd, backing_fd, loop_fd, number, ret;

	if (bci_path(ex->root, control, "/dev/loop-control") < 0)
		return -ENAMETOOLONG;
	control_fd = open(control, O_RDWR | O_CLOEXEC);
	if (control_fd < 0)
		return -errno;
	number = ioctl(control_fd, LOOP_CTL_GET_FREE);
	ret = number < 0 ? -errno : 0;
	close(control_fd);
	if (ret < 0)
		return ret;
	if (bci_path(ex->root, loop, "/dev/loop%d", number) < 0)
		return -ENAMETOOLONG;
	backing_fd = open(disk, O_RDWR | O_CLOEXEC);
	if (backing_fd < 0)
		return -errno;
	loop_fd = open(loop, O_RDWR | O_CLOEXEC);
	if (loop_fd < 0) {
		ret = -errno;
		close(backing_fd);
		return ret;
	}
	config.fd = (unsigned)backing_fd;
	config.info.lo_offset = offset;
	config.info.lo_sizelimit = length;
	ret = ioctl(loop_fd, LOOP_CONFIGURE, &config) < 0 ? -errno : 0;
	close(backing_fd);
	if (ret < 0) {
		close(loop_fd);
		return ret;
	}
	return loop_fd;
}

/* ---- salvage ---- */

static unsigned long long tree_bytes(const char *path)
{
	struct stat st;
	unsigned long long total = 0;
	struct dirent *entry;
	DIR *d;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return S_ISREG(st.st_mode) ? (unsigned long long)st.st_size : 0;
	if (!(d = opendir(path)))
		return 0;
	while ((entry = readdir(d))) {
		char child[PATH_MAX];

		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", path, entry->d_name) < (int)sizeof(child))
			total += tree_bytes(child) + 4096;
	}
	closedir(d);
	return total;
}

/* Copies the tree @from to the new @to: folders and regular files (others are not results). */
static int tree_copy(const char *from, const char *to, const char **failed)
{
	struct dirent *entry;
	struct stat st;
	DIR *d;
	int ret = 0;

	*failed = from;
	if (lstat(from, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode))
		return bci_copy_file(from, to, BCI_COPY_KEEP_MODE, 1, failed);
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (mkdir(to, st.st_mode & 07777) < 0) {
		*failed = to;
		return -errno;
	}
	if (!(d = opendir(from)))
		return -errno;
	while (ret == 0 && (entry = readdir(d))) {
		char a[PATH_MAX], b[PATH_MAX];

		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		if (snprintf(a, sizeof(a), "%s/%s", from, entry->d_name) >= (int)sizeof(a) ||
		    snprintf(b, sizeof(b), "%s/%s", to, entry->d_name) >= (int)sizeof(b))
			ret = -ENAMETOOLONG;
		else
			ret = tree_copy(a, b, failed);
	}
	closedir(d);
	if (ret == 0 && bci_fsync_dir(to) < 0)
		*failed = to;
	return ret;
}

static void lost_add(struct salvage *s, const char *name)
{
	size_t used = strlen(s->lost_names);

	s->lost++;
	snprintf(s->lost_names + used, sizeof(s->lost_names) - used, "%s%s", used ? " " : "", name);
}

/* One entry of the old partition (@what: "runs/<id>" or the identity) into the salvage. */
static void salvage_entry(struct salvage *s, const char *old_root, const char *what)
{
	char from[PATH_MAX], to[PATH_MAX];
	unsigned long long bytes;
	const char *failed;
	int ret;

	if (path_join(from, old_root, what) < 0 || path_join(to, s->dir, what) < 0) {
		lost_add(s, what);
		return;
	}
	bytes = tree_bytes(from);
	if (bytes > s->budget) {
		bci_warn("deploy: salvage: %s (%llu bytes) does not fit in the %llu bytes of RAM left"
			 " for the salvage: not salvaged", what, bytes, s->budget);
		lost_add(s, what);
		return;
	}
	ret = tree_copy(from, to, &failed);
	if (ret < 0) {
		bci_warn("deploy: salvage: %s unreadable (%s: %s): not salvaged", what, failed,
			 strerror(-ret));
		bci_remove_tree(to);
		lost_add(s, what);
		return;
	}
	s->budget -= bytes;
	s->saved++;
}

/* Everything salvageable of the old results partition mounted on @old_root. */
static void salvage_tree(struct salvage *s, const char *old_root)
{
	char runs[PATH_MAX], path[PATH_MAX];
	struct dirent **entries;
	struct stat st;
	int n;

	(void)path_join(path, old_root, IDENTITY_FILE);
	if (lstat(path, &st) == 0) {
		unsigned lost = s->lost;

		salvage_entry(s, old_root, IDENTITY_FILE);
		s->identity = s->lost == lost;
	}
	(void)path_join(runs, old_root, "runs");
	(void)path_join(path, s->dir, "runs");
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return;
	n = scandir(runs, &entries, NULL, alphasort);
	if (n < 0) {
		if (errno != ENOENT)
			bci_warn("deploy: salvage: %s unreadable: %s", runs, strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++) {
		char what[PATH_MAX];

		if (entries[i]->d_name[0] != '.' &&
		    snprintf(what, sizeof(what), "runs/%s", entries[i]->d_name) < (int)sizeof(what))
			salvage_entry(s, old_root, what);
		free(entries[i]);
	}
	free(entries);
}

/*
 * Mounts the old results partition (by its label, else at the image's offset
 * through a loop device) and salvages it. Whatever fails is said and the
 * deploy goes on: the disk is damaged, that is why we are here.
 */
static void salvage_old(struct bci_executor *ex, const char *disk, int image_fd,
			struct salvage *s)
{
	const char *label = bci_config_get(ex->config, "results_label");
	const char *fstype = bci_config_get(ex->config, "results_fstype");
	char device[PATH_MAX], mount_point[PATH_MAX];
	unsigned long long offset = 0, length = 0;
	struct sysinfo info;
	int loop_fd = -1, disk_fd, ret;

	if (bci_path(ex->root, s->dir, SALVAGE_DIR) < 0 || bci_path(ex->root, mount_point, OLD_MOUNT) < 0)
		return;
	/* Half of the free RAM at most: the salvage must not starve the write. */
	s->budget = sysinfo(&info) == 0 ? (unsigned long long)info.freeram * info.mem_unit / 2 : 0;
	if (bci_partition_find(ex, label, NULL, device, sizeof(device)) == 0 &&
	    !strncmp(device, disk, strlen(disk))) {
		bci_say("deploy: salvage: the old results partition is %s (LABEL=%s)",
			device + strlen(ex->root), label);
	} else {
		if (image_results_range(image_fd, label, &offset, &length) < 0) {
			bci_warn("deploy: salvage: the image has no partition labelled %s: nothing "
				 "salvaged", label);
			return;
		}
		disk_fd = open(disk, O_RDONLY | O_CLOEXEC);
		ret = disk_fd < 0 ? -errno : 0;
		if (ret == 0 && !label_at(disk_fd, offset, length, label))
			ret = -ENOENT;
		if (disk_fd >= 0)
			close(disk_fd);
		if (ret < 0) {
			bci_warn("deploy: salvage: no filesystem labelled %s on %s, by its partition or "
				 "at byte %llu where the image puts it: nothing salvaged", label,
				 disk + strlen(ex->root), offset);
			return;
		}
		bci_modules_load(ex, "loop");
		loop_fd = loop_attach(ex, disk, offset, length, device);
		if (loop_fd < 0) {
			bci_warn("deploy: salvage: the old results filesystem is at byte %llu of %s but "
				 "no loop device could show it (%s): nothing salvaged", offset,
				 disk + strlen(ex->root), strerror(-loop_fd));
			return;
		}
		bci_say("deploy: salvage: the partition table is gone; the old results filesystem "
			"is at byte %llu of %s (%s)", offset, disk + strlen(ex->root),
			device + strlen(ex->root));
	}
	if ((mkdir(mount_point, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(s->dir, 0700) < 0 && errno != EEXIST)) {
		bci_warn("deploy: salvage: cannot create %s: %s: nothing salvaged", mount_point,
			 strerror(errno));
		goto out;
	}
	ret = ex->sys->mount(device, mount_point, fstype, MS_NOATIME | MS_NODEV, NULL);
	if (ret < 0) {
		bci_warn("deploy: salvage: cannot mount %s as %s: %s: nothing salvaged",
			 device + strlen(ex->root), fstype, strerror(-ret));
		goto out;
	}
	s->held = true;
	salvage_tree(s, mount_point);
	ret = ex->sys->umount(mount_point);
	if (ret < 0)
		bci_warn("deploy: salvage: cannot unmount %s: %s", mount_point, strerror(-ret));
out:
	if (loop_fd >= 0) {
		ioctl(loop_fd, LOOP_CLR_FD, 0);
		close(loop_fd);
	}
	bci_say("deploy: salvage: %u kept (%s), %u not salvaged%s%s", s->saved,
		s->identity ? "the machine's identity among them" : "no machine identity",
		s->lost, s->lost ? ": " : "", s->lost_names);
}

/* Puts the salvage back on the new results partition mounted on ex->results_mount. */
static void salvage_restore(struct bci_executor *ex, struct salvage *s)
{
	char runs_dir[PATH_MAX];
	struct dirent *entry;
	DIR *d;

	if (!s->held || !(d = opendir(s->dir)))
		return;
	while ((entry = readdir(d))) {
		char from[PATH_MAX], to[PATH_MAX];
		const char *failed;
		int ret;

		if (entry->d_name[0] == '.' || !strcmp(entry->d_name, "runs"))
			continue;
		if (path_join(from, s->dir, entry->d_name) < 0 ||
		    path_join(to, ex->results_mount, entry->d_name) < 0)
			continue;
		bci_remove_tree(to);
		if ((ret = tree_copy(from, to, &failed)) < 0)
			bci_error("deploy: cannot put %s back: %s: %s", entry->d_name, failed,
				  strerror(-ret));
	}
	closedir(d);
	(void)path_join(runs_dir, s->dir, "runs");
	if (!(d = opendir(runs_dir)))
		return;
	while ((entry = readdir(d))) {
		char from[PATH_MAX], to[PATH_MAX], runs[PATH_MAX];
		const char *failed;
		int ret;

		if (entry->d_name[0] == '.')
			continue;
		(void)path_join(runs, ex->results_mount, "runs");
		(void)bci_mkdir_p(runs, 0755);
		if (path_join(from, runs_dir, entry->d_name) < 0 ||
		    path_join(to, runs, entry->d_name) < 0)
			continue;
		if ((ret = tree_copy(from, to, &failed)) < 0)
			bci_error("deploy: cannot put run %s back: %s: %s", entry->d_name, failed,
				  strerror(-ret));
	}
	closedir(d);
	bci_fsync_dir(ex->results_mount);
}

/* ---- write, verify ---- */

int bci_deploy_write(int image_fd, int disk_fd, unsigned long long size, char *err,
		     size_t err_size)
{
	unsigned long long done = 0;
	char *buf = malloc(CHUNK);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	while (done < size) {
		size_t want = size - done < CHUNK ? (size_t)(size - done) : CHUNK;
		ssize_t n = pread(image_fd, buf, want, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			snprintf(err, err_size, "reading the image at byte %llu: %s", done,
				 n < 0 ? strerror(errno) : "it ends early");
			break;
		}
		for (size_t off = 0; off < (size_t)n;) {
			ssize_t w = pwrite(disk_fd, buf + off, (size_t)n - off, (off_t)(done + off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				ret = w < 0 ? -errno : -EIO;
				snprintf(err, err_size, "writing the disk at byte %llu: %s", done + off,
					 w < 0 ? strerror(errno) : "no progress");
				goto out;
			}
			off += (size_t)w;
		}
		done += (unsigned long long)n;
	}
	if (ret == 0 && fsync(disk_fd) < 0) {
		ret = -errno;
		snprintf(err, err_size, "fsync of the disk: %s", strerror(errno));
	}
out:
	free(buf);
	return ret;
}

int bci_deploy_digest(int fd, unsigned long long size, char hex[65], char *err, size_t err_size)
{
	struct bci_sha256 ctx;
	unsigned long long done = 0;
	char *buf = malloc(CHUNK);

	if (!buf)
		return -ENOMEM;
	bci_sha256_init(&ctx);
	while (done < size) {
		size_t want = size - done < CHUNK ? (size_t)(size - done) : CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int ret = n < 0 ? -errno : -EIO;

			snprintf(err, err_size, "reading at byte %llu: %s", done,
				 n < 0 ? strerror(errno) : "it ends early");
			free(buf);
			return ret;
		}
		bci_sha256_update(&ctx, buf, (size_t)n);
		done += (unsigned long long)n;
	}
	free(buf);
	bci_sha256_final_hex(&ctx, hex);
	return 0;
}

int bci_deploy_verify(int disk_fd, unsigned long long size, const char *sha256, char *err,
		      size_t err_size)
{
	char hex[65], why[256];
	int ret;

	/* What is read back must come from the disk, not from the page cache we wrote through. */
	(void)ioctl(disk_fd, BLKFLSBUF, 0);
	(void)posix_fadvise(disk_fd, 0, 0, POSIX_FADV_DONTNEED);
	ret = bci_deploy_digest(disk_fd, size, hex, why, sizeof(why));
	if (ret < 0) {
		snprintf(err, err_size, "reading the disk back: %s", why);
		return ret;
	}
	if (strcmp(hex, sha256)) {
		snprintf(err, err_size, "the disk reads back as sha256 %s, the plan's image is %s",
			 hex, sha256);
		return -EBADMSG;
	}
	return 0;
}

/* ---- the boot ---- */

static int plan_load(struct bci_executor *ex, struct bci_deploy_plan *plan)
{
	const char *name = bci_config_get(ex->config, "deploy");
	char path[PATH_MAX], err[512], *text = NULL;
	size_t len;
	int ret;

	if (bci_path(ex->root, path, "%s", name) < 0)
		return -ENAMETOOLONG;
	ret = bci_read_file(path, &text, &len, BCI_DEPLOY_PLAN_TEXT_MAX + 1);
	if (ret < 0) {
		bci_error("deploy: cannot read the plan %s: %s", name, strerror(-ret));
		return ret;
	}
	ret = bci_deploy_plan_parse(name, text, len, plan, err, sizeof(err));
	free(text);
	if (ret < 0)
		bci_error("deploy: bad plan: %s", err);
	return ret;
}

static int image_open(struct bci_executor *ex, const struct bci_deploy_plan *plan)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (bci_path(ex->root, path, "%s", plan->image) < 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		bci_error("deploy: the image %s is not in the initramfs: %s", plan->image,
			  strerror(-fd));
		return fd;
	}
	if (fstat(fd, &st) < 0 || (unsigned long long)st.st_size != plan->image_size) {
		bci_error("deploy: the image %s is %lld bytes, the plan says %llu (a truncated "
			  "initrd?)", plan->image, (long long)st.st_size,
			  (unsigned long long)plan->image_size);
		close(fd);
		return -EBADMSG;
	}
	return fd;
}

/* BLKRRPART: the kernel's view of the partitions follows the new table. */
static int partitions_reread(struct bci_executor *ex, int disk_fd, const char *disk)
{
	struct stat st;

	if (fstat(disk_fd, &st) == 0 && !S_ISBLK(st.st_mode)) {
		bci_say("deploy: %s is not a block device: no partition table to re-read",
			disk + strlen(ex->root));
		return 0;
	}
	for (int tries = 0; tries < 25; tries++) {
		if (ioctl(disk_fd, BLKRRPART) == 0) {
			bci_say("deploy: the kernel re-read %s's partition table",
				disk + strlen(ex->root));
			return 0;
		}
		if (errno != EBUSY)
			break;
		nanosleep(&(struct timespec){ 0, POLL_NS }, NULL);
	}
	bci_error("deploy: re-reading %s's partition table (BLKRRPART): %s",
		  disk + strlen(ex->root), strerror(errno));
	return -errno;
}

static int entry_register(struct bci_executor *ex, const struct bci_deploy_plan *plan,
			  const char *disk)
{
	const char *label = bci_config_get(ex->config, "known_good_entry");
	uint16_t number, existing;
	bool replaced = false;
	char err[512];
	int ret;

	if (!*label || bci_efi_boot_number_parse(label, &existing) == 0) {
		bci_warn("deploy: known_good_entry is '%s', not a description: no entry registered",
			 label);
		return 0;
	}
	ret = bci_efivar_available(ex->root);
	if (ret < 0) {
		bci_warn("deploy: no EFI variables (%s): the boot entry '%s' is not registered",
			 strerror(-ret), label);
		return 0;
	}
	ret = bci_efi_boot_entry_create(ex->root, label, disk + strlen(ex->root),
					plan->esp_partition, plan->loader, false, &number, &replaced,
					err, sizeof(err));
	if (ret < 0) {
		bci_error("deploy: cannot register the boot entry '%s': %s", label, err);
		return ret;
	}
	bci_say("deploy: boot entry '%s' is Boot%04X (%s), partition %u, %s", label, number,
		replaced ? "replaced" : "new", plan->esp_partition, plan->loader);
	return 0;
}

static void record_write(struct bci_executor *ex, const struct bci_deploy_plan *plan,
			 const char *disk, const struct salvage *s)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], *text = NULL;
	struct timespec now;
	struct tm tm;
	int ret;

	if (ex->sys->clock(CLOCK_REALTIME, &now) < 0)
		now = (struct timespec){ 0 };
	gmtime_r(&now.tv_sec, &tm);
	(void)path_join(dir, ex->results_mount, "deploy");
	snprintf(path, sizeof(path), "%s/%04d%02d%02dT%02d%02d%02dZ.txt", dir, tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	if (asprintf(&text,
		     "machine=%s\nknown_good=%s\nimage_sha256=%s\nimage_size=%llu\ndisk=%s\n"
		     "realtime=%lld\nsalvaged=%u\nidentity=%s\nlost=%u\nlost_names=%s\n",
		     plan->machine, plan->known_good, plan->image_sha256,
		     (unsigned long long)plan->image_size, disk + strlen(ex->root),
		     (long long)now.tv_sec, s->saved, s->identity ? "yes" : "no", s->lost,
		     s->lost_names) < 0)
		return;
	if ((ret = bci_mkdir_p(dir, 0755)) < 0 ||
	    (ret = bci_write_file_atomic(path, text, strlen(text), 0644)) < 0)
		bci_error("deploy: cannot record the deploy in %s: %s", path, strerror(-ret));
	else
		bci_say("deploy: recorded in %s", path + strlen(ex->root));
	free(text);
}

int bci_deploy_run(struct bci_executor *ex)
{
	struct bci_deploy_plan plan;
	struct salvage salvage = { .held = false };
	char disk[PATH_MAX], err[512], image_path[PATH_MAX], source[65];
	long start = bci_clock_ms(ex, CLOCK_BOOTTIME);
	int image_fd, disk_fd, ret;

	if ((ret = plan_load(ex, &plan)) < 0)
		return ret;
	bci_say("deploy: machine %s, known-good %s: %llu bytes, sha256 %s", plan.machine,
		plan.known_good, (unsigned long long)plan.image_size, plan.image_sha256);
	if ((image_fd = image_open(ex, &plan)) < 0)
		return image_fd;
	if ((ret = disk_pick(ex, &plan, disk)) < 0)
		goto out_image;
	bci_say("deploy: writing %s", disk + strlen(ex->root));
	salvage_old(ex, disk, image_fd, &salvage);

	/* O_EXCL: a block device some mount still holds is refused, never written under it. */
	disk_fd = open(disk, O_RDWR | O_CLOEXEC | O_EXCL);
	if (disk_fd < 0 && errno == EINVAL)
		disk_fd = open(disk, O_RDWR | O_CLOEXEC);
	if (disk_fd < 0) {
		ret = -errno;
		bci_error("deploy: cannot open %s for writing: %s", disk + strlen(ex->root),
			  strerror(-ret));
		goto out_image;
	}
	ret = bci_deploy_write(image_fd, disk_fd, plan.image_size, err, sizeof(err));
	if (ret < 0) {
		bci_error("deploy: %s: %s", disk + strlen(ex->root), err);
		goto out_disk;
	}
	bci_say("deploy: %llu bytes written and synced in %ld ms; reading them back",
		(unsigned long long)plan.image_size, bci_clock_ms(ex, CLOCK_BOOTTIME) - start);
	ret = bci_deploy_verify(disk_fd, plan.image_size, plan.image_sha256, err, sizeof(err));
	if (ret < 0) {
		/* Which side is wrong: the copy the master sent, or the disk. */
		char why[256];

		if (bci_deploy_digest(image_fd, plan.image_size, source, why, sizeof(why)) == 0 &&
		    strcmp(source, plan.image_sha256))
			bci_error("deploy: verify failed: the image in the initramfs is sha256 %s, "
				  "not the plan's %s: the deploy initrd is corrupt", source,
				  plan.image_sha256);
		else
			bci_error("deploy: verify failed on %s: %s; no boot entry registered",
				  disk + strlen(ex->root), err);
		goto out_disk;
	}
	bci_say("deploy: %s verified: sha256 %s", disk + strlen(ex->root), plan.image_sha256);
	if ((ret = partitions_reread(ex, disk_fd, disk)) < 0)
		goto out_disk;
	close(disk_fd);
	close(image_fd);
	/* The image's RAM is the salvage's and the results' now. */
	if (bci_path(ex->root, image_path, "%s", plan.image) == 0)
		unlink(image_path);
	if ((ret = entry_register(ex, &plan, disk)) < 0)
		return ret;
	if ((ret = bci_partition_mount_results(ex)) < 0)
		return ret;
	salvage_restore(ex, &salvage);
	record_write(ex, &plan, disk, &salvage);
	if (salvage.dir[0])
		bci_remove_tree(salvage.dir);
	bci_say("deploy: done in %ld ms", bci_clock_ms(ex, CLOCK_BOOTTIME) - start);
	return 0;

out_disk:
	close(disk_fd);
out_image:
	close(image_fd);
	return ret;
}
