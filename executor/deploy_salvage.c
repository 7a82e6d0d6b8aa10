// SPDX-License-Identifier: MIT
/*
 * The deploy's salvage (deploy.h): what the old results partition held, the
 * machine's identity and its run folders, kept in the salvage area at the end
 * of the disk (lib/salvage.h) while the image is written over the rest.
 *
 * A power cut may come at any moment of a deploy, and the master starts a
 * deploy that did not report back again, with the same deploy_id. So:
 *   - the area is written and synced, then read back, before the first byte
 *     of the image: from then on the old disk may be lost, its salvage is not;
 *   - an attempt that finds an area of its own deploy_id (a cut during the
 *     write or the read-back) takes it as is and salvages nothing from the
 *     half-written disk;
 *   - the area is cleared only once the salvage is back on the new results
 *     partition and synced; one of another deploy is left over from a deploy
 *     that finished (the master only gives a new deploy_id then), and is
 *     replaced.
 * The area lies past the image and past the old results partition while
 * that is read: the write never touches it, nor it the old files.
 */
#include "deploy_salvage.h"

#include "fsutil.h"
#include "message.h"

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
#include <unistd.h>

#define OLD_MOUNT "/run/bootci-old-results"
#define COPY_CHUNK (1024 * 1024)

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

/* ---- the old results partition ---- */

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

/* Where the partition @device (ROOT/dev/NAME) ends on its disk, in bytes; 0 when unknown. */
static unsigned long long partition_end(const struct bci_executor *ex, const char *device)
{
	const char *name = strrchr(device, '/');
	unsigned long long value[2] = { 0, 0 };
	static const char *const files[] = { "start", "size" };

	for (int i = 0; i < 2 && name; i++) {
		char path[PATH_MAX], *text = NULL;

		if (bci_path(ex->root, path, "/sys/class/block/%s/%s", name + 1, files[i]) < 0 ||
		    bci_read_file(path, &text, NULL, 64) < 0)
			return 0;
		value[i] = strtoull(text, NULL, 10);
		free(text);
	}
	return (value[0] + value[1]) * 512;
}

/* The old results partition of @disk, mounted on @mount_point; its end on the disk in *@end. */
struct old_results {
	char device[PATH_MAX], mount_point[PATH_MAX];
	int loop_fd;
	bool mounted;
	unsigned long long end;
};

/*
 * Mounts the old results partition: by its label, else (the partition table
 * gone) at the offset the image gives it, through a loop device. 0, or
 * -ENOENT when there is none to read (said): nothing to salvage.
 */
static int old_results_mount(struct bci_executor *ex, const char *disk, int image_fd,
			     struct old_results *old)
{
	const char *label = bci_config_get(ex->config, "results_label");
	const char *fstype = bci_config_get(ex->config, "results_fstype");
	unsigned long long offset = 0, length = 0;
	int disk_fd, ret;

	old->loop_fd = -1;
	if (bci_path(ex->root, old->mount_point, OLD_MOUNT) < 0)
		return -ENAMETOOLONG;
	if (bci_partition_find(ex, label, NULL, old->device, sizeof(old->device)) == 0 &&
	    !strncmp(old->device, disk, strlen(disk))) {
		old->end = partition_end(ex, old->device);
		bci_say("deploy: salvage: the old results partition is %s (LABEL=%s)",
			old->device + strlen(ex->root), label);
	} else {
		if (image_results_range(image_fd, label, &offset, &length) < 0) {
			bci_warn("deploy: salvage: the image has no partition labelled %s: nothing "
				 "salvaged", label);
			return -ENOENT;
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
			return -ENOENT;
		}
		bci_modules_load(ex, "loop");
		old->loop_fd = loop_attach(ex, disk, offset, length, old->device);
		if (old->loop_fd < 0) {
			bci_warn("deploy: salvage: the old results filesystem is at byte %llu of %s but "
				 "no loop device could show it (%s): nothing salvaged", offset,
				 disk + strlen(ex->root), strerror(-old->loop_fd));
			return -ENOENT;
		}
		old->end = offset + length;
		bci_say("deploy: salvage: the partition table is gone; the old results filesystem "
			"is at byte %llu of %s (%s)", offset, disk + strlen(ex->root),
			old->device + strlen(ex->root));
	}
	if (mkdir(old->mount_point, 0755) < 0 && errno != EEXIST) {
		bci_warn("deploy: salvage: cannot create %s: %s: nothing salvaged", old->mount_point,
			 strerror(errno));
		return -ENOENT;
	}
	ret = ex->sys->mount(old->device, old->mount_point, fstype, MS_NOATIME | MS_NODEV, NULL);
	if (ret < 0) {
		bci_warn("deploy: salvage: cannot mount %s as %s: %s: nothing salvaged",
			 old->device + strlen(ex->root), fstype, strerror(-ret));
		return -ENOENT;
	}
	old->mounted = true;
	return 0;
}

static void old_results_release(struct bci_executor *ex, struct old_results *old)
{
	int ret;

	if (old->mounted && (ret = ex->sys->umount(old->mount_point)) < 0)
		bci_warn("deploy: salvage: cannot unmount %s: %s", old->mount_point, strerror(-ret));
	old->mounted = false;
	if (old->loop_fd >= 0) {
		ioctl(old->loop_fd, LOOP_CLR_FD, 0);
		close(old->loop_fd);
		old->loop_fd = -1;
	}
}

/* ---- packing: the old partition into the area ---- */

/* What the entries of @path (and below) take in the payload, near enough to skip what cannot fit. */
static unsigned long long tree_bytes(const char *path, size_t rel_len)
{
	unsigned long long total = 64 + rel_len;
	struct dirent *entry;
	struct stat st;
	DIR *d;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return S_ISREG(st.st_mode) ? total + (unsigned long long)st.st_size : 0;
	if (!(d = opendir(path)))
		return total;
	while ((entry = readdir(d))) {
		char child[PATH_MAX];

		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		if (path_join(child, path, entry->d_name) == 0)
			total += tree_bytes(child, rel_len + 1 + strlen(entry->d_name));
	}
	closedir(d);
	return total;
}

/* @rel (relative to @root) and everything below it into @w; 0 or -errno (@err). */
static int pack_tree(struct bci_salvage_writer *w, const char *root, const char *rel, char *err,
		     size_t err_size)
{
	struct dirent **entries;
	char path[PATH_MAX];
	struct stat st;
	int n, fd, ret;

	if ((ret = path_join(path, root, rel)) < 0) {
		bci_message(err, err_size, "%s: path too long", rel);
		return ret;
	}
	if (lstat(path, &st) < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", rel, strerror(errno));
		return ret;
	}
	if (S_ISREG(st.st_mode)) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			ret = -errno;
			bci_message(err, err_size, "%s: %s", rel, strerror(errno));
			return ret;
		}
		ret = bci_salvage_write_file(w, rel, st.st_mode & 07777, fd, (uint64_t)st.st_size,
					     err, err_size);
		close(fd);
		return ret;
	}
	/* Links, devices, sockets: not results. */
	if (!S_ISDIR(st.st_mode))
		return 0;
	if ((ret = bci_salvage_write_dir(w, rel, st.st_mode & 07777, err, err_size)) < 0)
		return ret;
	n = scandir(path, &entries, NULL, alphasort);
	if (n < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", rel, strerror(errno));
		return ret;
	}
	for (int i = 0; i < n; i++) {
		char child[PATH_MAX];

		if (ret == 0 && strcmp(entries[i]->d_name, ".") && strcmp(entries[i]->d_name, "..")) {
			if (path_join(child, rel, entries[i]->d_name) < 0) {
				bci_message(err, err_size, "%s/%s: path too long", rel,
					    entries[i]->d_name);
				ret = -ENAMETOOLONG;
			} else {
				ret = pack_tree(w, root, child, err, err_size);
			}
		}
		free(entries[i]);
	}
	free(entries);
	return ret;
}

static void lost_add(struct bci_salvage_footer *f, const char *name)
{
	size_t used = strlen(f->lost_names), len = strlen(name);

	f->lost++;
	if (used + 1 + len > BCI_SALVAGE_LOST_MAX)
		return;
	snprintf(f->lost_names + used, sizeof(f->lost_names) - used, "%s%s", used ? " " : "", name);
	/* Names go into one line of the footer: nothing that would break it. */
	for (char *p = f->lost_names + used; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

/* One entry of the old partition (@rel: the identity, or runs/<run>), whole or not at all. */
static bool pack_one(struct bci_salvage_writer *w, const char *root, const char *rel,
		     struct bci_salvage_footer *f)
{
	char path[PATH_MAX], err[512] = "";
	unsigned long long bytes;
	int ret;

	if (path_join(path, root, rel) < 0) {
		lost_add(f, rel);
		return false;
	}
	bytes = tree_bytes(path, strlen(rel));
	if (bytes > bci_salvage_writer_left(w)) {
		bci_warn("deploy: salvage: %s (%llu bytes) does not fit in the %llu bytes left of the"
			 " salvage area: not salvaged", rel, bytes,
			 (unsigned long long)bci_salvage_writer_left(w));
		lost_add(f, rel);
		return false;
	}
	bci_salvage_writer_mark(w);
	ret = pack_tree(w, root, rel, err, sizeof(err));
	if (ret < 0) {
		bci_salvage_writer_rewind(w);
		bci_warn("deploy: salvage: %s not salvaged: %s", rel, err);
		lost_add(f, rel);
		return false;
	}
	return true;
}

unsigned bci_deploy_salvage_pack(struct bci_salvage_writer *w, const char *old_root,
				 struct bci_salvage_footer *f, bool *identity)
{
	char path[PATH_MAX], err[512] = "";
	struct dirent **entries;
	unsigned saved = 0;
	struct stat st;
	int n;

	*identity = false;
	(void)path_join(path, old_root, BCI_DEPLOY_IDENTITY_FILE);
	if (lstat(path, &st) == 0) {
		*identity = pack_one(w, old_root, BCI_DEPLOY_IDENTITY_FILE, f);
		saved += *identity;
	}
	(void)path_join(path, old_root, "runs");
	n = scandir(path, &entries, NULL, alphasort);
	if (n < 0) {
		if (errno != ENOENT) {
			bci_warn("deploy: salvage: %s unreadable: %s", path, strerror(errno));
			lost_add(f, "runs");
		}
		return saved;
	}
	if (lstat(path, &st) < 0)
		snprintf(err, sizeof(err), "%s", strerror(errno));
	if (err[0] || bci_salvage_write_dir(w, "runs", st.st_mode & 07777, err, sizeof(err)) < 0) {
		bci_warn("deploy: salvage: runs: %s", err);
		for (int i = 0; i < n; i++)
			free(entries[i]);
		free(entries);
		lost_add(f, "runs");
		return saved;
	}
	for (int i = 0; i < n; i++) {
		char rel[PATH_MAX];

		if (entries[i]->d_name[0] != '.' &&
		    snprintf(rel, sizeof(rel), "runs/%s", entries[i]->d_name) < (int)sizeof(rel))
			saved += pack_one(w, old_root, rel, f);
		free(entries[i]);
	}
	free(entries);
	return saved;
}

/* ---- unpacking: the area onto the new partition ---- */

struct unpack {
	const char *root;
	unsigned restored;
	bool identity;
	char *buf;
	char *err;
	size_t err_size;
};

/* runs/<run>: a run folder itself, not something inside one. */
static bool run_folder(const char *path)
{
	return !strncmp(path, "runs/", 5) && !strchr(path + 5, '/');
}

static int copy_out(struct unpack *u, int fd, uint64_t offset, uint64_t size, int out,
		    const char *path)
{
	uint64_t done = 0;

	while (done < size) {
		size_t want = size - done < COPY_CHUNK ? (size_t)(size - done) : COPY_CHUNK;
		ssize_t n = pread(fd, u->buf, want, (off_t)(offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			bci_message(u->err, u->err_size, "%s: reading the salvage at byte %llu: %s",
				    path, (unsigned long long)(offset + done),
				    n < 0 ? strerror(errno) : "the disk ends early");
			return n < 0 ? -errno : -EIO;
		}
		if (bci_write_all(out, u->buf, (size_t)n) < 0) {
			bci_message(u->err, u->err_size, "%s: %s", path, strerror(errno));
			return -errno;
		}
		done += (uint64_t)n;
	}
	return 0;
}

static int unpack_entry(const struct bci_salvage_entry *e, int fd, uint64_t data_offset, void *ctx)
{
	struct unpack *u = ctx;
	char dest[PATH_MAX], parent[PATH_MAX];
	struct stat st;
	int out, ret;

	if (path_join(dest, u->root, e->path) < 0) {
		bci_message(u->err, u->err_size, "%s: path too long", e->path);
		return -ENAMETOOLONG;
	}
	if (e->dir) {
		if (mkdir(dest, e->mode) < 0 && (errno != EEXIST || lstat(dest, &st) < 0 ||
						 !S_ISDIR(st.st_mode))) {
			ret = -errno;
			bci_message(u->err, u->err_size, "%s: %s", dest, strerror(errno));
			return ret;
		}
		if (chmod(dest, e->mode) < 0) {
			ret = -errno;
			bci_message(u->err, u->err_size, "%s: %s", dest, strerror(errno));
			return ret;
		}
		u->restored += run_folder(e->path);
		return 0;
	}
	snprintf(parent, sizeof(parent), "%s", dest);
	*strrchr(parent, '/') = '\0';
	if ((ret = bci_mkdir_p(parent, 0755)) < 0) {
		bci_message(u->err, u->err_size, "%s: %s", parent, strerror(-ret));
		return ret;
	}
	out = open(dest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (out < 0) {
		ret = -errno;
		bci_message(u->err, u->err_size, "%s: %s", dest, strerror(errno));
		return ret;
	}
	ret = copy_out(u, fd, data_offset, e->size, out, dest);
	if (ret == 0 && fchmod(out, e->mode) < 0) {
		ret = -errno;
		bci_message(u->err, u->err_size, "%s: %s", dest, strerror(errno));
	}
	close(out);
	if (ret == 0 && !strcmp(e->path, BCI_DEPLOY_IDENTITY_FILE)) {
		u->identity = true;
		u->restored++;
	}
	return ret;
}

int bci_deploy_salvage_unpack(int fd, const struct bci_salvage_footer *f, const char *root,
			      unsigned *restored, bool *identity, char *err, size_t err_size)
{
	struct unpack u = { .root = root, .err = err, .err_size = err_size };
	int ret, root_fd;

	*restored = 0;
	*identity = false;
	if (!(u.buf = malloc(COPY_CHUNK)))
		return -ENOMEM;
	ret = bci_salvage_each(fd, f, unpack_entry, &u, err, err_size);
	free(u.buf);
	if (ret < 0)
		return ret;
	/* One flush of the file system for every file put back. */
	root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0 || syncfs(root_fd) < 0) {
		ret = -errno;
		bci_message(err, err_size, "syncing %s: %s", root, strerror(errno));
	}
	if (root_fd >= 0)
		close(root_fd);
	*restored = u.restored;
	*identity = u.identity;
	return ret;
}

/* ---- the deploy's steps ---- */

/* Reads from the disk, not from the page cache the area was written through. */
static void caches_drop(int fd)
{
	(void)ioctl(fd, BLKFLSBUF, 0);
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

static int disk_open(struct bci_executor *ex, const char *disk, int flags, uint64_t *size)
{
	int fd = open(disk, flags | O_CLOEXEC);
	off_t end;

	if (fd < 0) {
		fd = -errno;
		bci_error("deploy: salvage: cannot open %s: %s", disk + strlen(ex->root),
			  strerror(-fd));
		return fd;
	}
	end = lseek(fd, 0, SEEK_END);
	if (end < 0) {
		int ret = -errno;

		bci_error("deploy: salvage: the size of %s: %s", disk + strlen(ex->root),
			  strerror(-ret));
		close(fd);
		return ret;
	}
	*size = (uint64_t)end;
	return fd;
}

/*
 * The area as the disk holds it: 1 when it is this deploy's, whole (@s
 * filled); 0 when there is none of this deploy (said when there is another's
 * or a torn one); -EBADMSG after a bci_error() when it is this deploy's and
 * its payload does not read back.
 */
static int area_find(struct bci_executor *ex, const struct bci_deploy_plan *plan, int fd,
		     const char *disk, struct bci_deploy_salvage *s)
{
	struct bci_salvage_footer *f = &s->footer;
	char err[512] = "";
	int ret = bci_salvage_footer_read(fd, s->disk_size, f, err, sizeof(err));

	if (ret == -ENOENT)
		return 0;
	if (ret < 0) {
		/* Written before the image, so a torn footer means the image was not begun. */
		bci_warn("deploy: salvage: the salvage area of %s holds no usable footer (%s):"
			 " salvaged anew", disk + strlen(ex->root), err);
		return 0;
	}
	if (strcmp(f->deploy_id, plan->deploy_id) || strcmp(f->machine, plan->machine)) {
		/* The master gives a new deploy_id only once a deploy reported back. */
		bci_say("deploy: salvage: the salvage area holds %s's salvage of deploy %s, one that"
			" finished, not this one's: replaced", f->machine, f->deploy_id);
		return 0;
	}
	ret = bci_salvage_payload_check(fd, f, err, sizeof(err));
	if (ret < 0) {
		bci_error("deploy: salvage: the salvage of this deploy (%s) at byte %llu of %s does not"
			  " read back: %s; the disk is not written, the salvage stays for a person",
			  f->deploy_id, (unsigned long long)f->payload_offset,
			  disk + strlen(ex->root), err);
		return ret;
	}
	return 1;
}

int bci_deploy_salvage_save(struct bci_executor *ex, const struct bci_deploy_plan *plan,
			    const char *disk, int image_fd, struct bci_deploy_salvage *s)
{
	struct old_results old = { .loop_fd = -1 };
	struct bci_salvage_footer *f = &s->footer;
	struct bci_salvage_footer back;
	struct bci_salvage_writer w;
	uint64_t start, end, used = plan->image_size;
	unsigned saved = 0;
	char err[512] = "";
	bool identity = false;
	int fd, ret;

	*s = (struct bci_deploy_salvage){ .held = false };
	if ((fd = disk_open(ex, disk, O_RDWR, &s->disk_size)) < 0)
		return fd;
	ret = area_find(ex, plan, fd, disk, s);
	if (ret != 0) {
		close(fd);
		if (ret < 0)
			return ret;
		s->held = s->kept = true;
		bci_say("deploy: salvage: kept from an earlier attempt of this deploy (%s): %llu"
			" entries, %llu bytes at byte %llu of %s", f->deploy_id,
			(unsigned long long)f->entries, (unsigned long long)f->payload_size,
			(unsigned long long)f->payload_offset, disk + strlen(ex->root));
		return 0;
	}

	memset(f, 0, sizeof(*f));
	snprintf(f->deploy_id, sizeof(f->deploy_id), "%s", plan->deploy_id);
	snprintf(f->machine, sizeof(f->machine), "%s", plan->machine);
	ret = old_results_mount(ex, disk, image_fd, &old);
	if (old.end > used)
		used = old.end;
	if (bci_salvage_room(s->disk_size, used, &start, &end) < 0) {
		old_results_release(ex, &old);
		close(fd);
		if (ret < 0) {
			bci_warn("deploy: salvage: %s (%llu bytes) has no room past the image for a"
				 " salvage area, and there is nothing to salvage", disk + strlen(ex->root),
				 (unsigned long long)s->disk_size);
			return 0;
		}
		bci_error("deploy: salvage: %s (%llu bytes) has no room past the image and the old"
			  " results partition (%llu bytes) for the salvage area: the disk is not"
			  " written, its results stay", disk + strlen(ex->root),
			  (unsigned long long)s->disk_size, (unsigned long long)used);
		return -ENOSPC;
	}
	bci_salvage_writer_init(&w, fd, start, end);
	if (ret == 0)
		saved = bci_deploy_salvage_pack(&w, old.mount_point, f, &identity);
	old_results_release(ex, &old);
	ret = bci_salvage_writer_finish(&w, f, err, sizeof(err));
	if (ret == 0) {
		/* Durable is not enough: it must read back before the old disk goes. */
		caches_drop(fd);
		ret = bci_salvage_footer_read(fd, s->disk_size, &back, err, sizeof(err));
		if (ret == 0 && strcmp(back.payload_sha256, f->payload_sha256)) {
			snprintf(err, sizeof(err), "another footer reads back");
			ret = -EBADMSG;
		}
		if (ret == 0)
			ret = bci_salvage_payload_check(fd, &back, err, sizeof(err));
	}
	close(fd);
	if (ret < 0) {
		bci_error("deploy: salvage: the salvage area of %s: %s: the disk is not written",
			  disk + strlen(ex->root), err);
		return ret;
	}
	s->held = true;
	bci_say("deploy: salvage: %u kept (%s), %llu not salvaged%s%s; synced and read back at"
		" bytes %llu-%llu of %s", saved,
		identity ? "the machine's identity among them" : "no machine identity",
		(unsigned long long)f->lost, f->lost ? ": " : "", f->lost_names,
		(unsigned long long)start, (unsigned long long)(end + BCI_SALVAGE_FOOTER_SIZE),
		disk + strlen(ex->root));
	return 0;
}

int bci_deploy_salvage_restore(struct bci_executor *ex, const char *disk,
			       struct bci_deploy_salvage *s)
{
	char err[512] = "";
	uint64_t size = 0;
	int fd, ret;

	if (!s->held)
		return 0;
	if ((fd = disk_open(ex, disk, O_RDONLY, &size)) < 0)
		return fd;
	caches_drop(fd);
	ret = bci_salvage_payload_check(fd, &s->footer, err, sizeof(err));
	if (ret == 0)
		ret = bci_deploy_salvage_unpack(fd, &s->footer, ex->results_mount, &s->restored,
						&s->identity, err, sizeof(err));
	close(fd);
	if (ret < 0) {
		bci_error("deploy: salvage: cannot put it back: %s; it stays at byte %llu of %s",
			  err, (unsigned long long)s->footer.payload_offset, disk + strlen(ex->root));
		return ret;
	}
	bci_say("deploy: salvage: %u put back on the new results partition (%s)", s->restored,
		s->identity ? "the machine's identity among them" : "no machine identity");
	return 0;
}

void bci_deploy_salvage_clear(struct bci_executor *ex, const char *disk,
			      struct bci_deploy_salvage *s)
{
	uint64_t size = 0;
	int fd, ret;

	if (!s->held)
		return;
	if ((fd = disk_open(ex, disk, O_RDWR, &size)) < 0)
		return;
	ret = bci_salvage_clear(fd, size);
	close(fd);
	if (ret < 0)
		bci_warn("deploy: salvage: cannot clear the salvage area of %s: %s (the next deploy"
			 " replaces it)", disk + strlen(ex->root), strerror(-ret));
}
