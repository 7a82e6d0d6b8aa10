// SPDX-License-Identifier: MIT
/*
 * The deploy mode (bootci.mode=deploy): the master found this machine's disk
 * damaged and netbooted it with a deploy initrd holding a plan
 * (lib/deploy_plan.h) and the known-good disk image. This boot
 *   1 makes the salvage durable (deploy_salvage.c): what the old results
 *     partition held, the machine's identity and its run folders, written
 *     to the salvage area at the end of the disk, past the image, synced
 *     and read back; or the salvage an earlier attempt of this deploy left
 *     there, when a power cut stopped it;
 *   2 writes the image to the whole disk, fsyncs it;
 *   3 reads it back past the page cache and compares its SHA-256 with the
 *     plan's: a disk that does not read back exactly is an error, and no boot
 *     entry points at it;
 *   4 has the kernel read the new partition table (BLKRRPART);
 *   5 registers the known-good EFI boot entry again;
 *   6 mounts the new results partition, puts the salvage back, then clears
 *     the area;
 *   7 records the deploy: deploy/<time>.txt, and the run runs/<deploy_id>/
 *     (this boot's record, test/out.txt the deploy's, test/result.txt done),
 *     which the known-good image's collect uploads with the restored identity:
 *     the master keeps the machine marked "deploying", and starts the deploy
 *     again at its next boot, until that run comes in.
 * Then the boot ends as any other: a hand-over to the known-good image.
 * A power cut anywhere before 7 is a deploy that did not finish: the next
 * attempt finds the salvage in the area (1), or, cut after 6, on the new
 * results partition, whose salvage it makes as of an old one.
 */
#include "executor.h"

#include "deploy_salvage.h"
#include "efi/efi.h"
#include "fsutil.h"
#include "results_dir.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (4UL << 20)
#define POLL_NS (200 * 1000 * 1000L)
/* The program name of the deploy's record: the master stores it as bootci@program@deploy. */
#define RECORD_COMMAND "deploy"

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

/* The deploy's record: the same text in deploy/<time>.txt and in its run's test/out.txt. */
static char *record_text(struct bci_executor *ex, const struct bci_deploy_plan *plan,
			 const char *disk, const struct bci_deploy_salvage *s, time_t now)
{
	char *text = NULL;

	if (asprintf(&text,
		     "machine=%s\nknown_good=%s\ndeploy_id=%s\nimage_sha256=%s\nimage_size=%llu\n"
		     "disk=%s\nrealtime=%lld\nsalvage=%s\nsalvaged=%u\nidentity=%s\nlost=%llu\n"
		     "lost_names=%s\n",
		     plan->machine, plan->known_good, plan->deploy_id, plan->image_sha256,
		     (unsigned long long)plan->image_size, disk + strlen(ex->root), (long long)now,
		     !s->held ? "none" : s->kept ? "kept from an earlier attempt" : "written",
		     s->restored, s->identity ? "yes" : "no", (unsigned long long)s->footer.lost,
		     s->footer.lost_names) < 0)
		return NULL;
	return text;
}

/* deploy/<time>.txt: the deploys this disk had, kept on it. */
static void record_write(struct bci_executor *ex, const char *text, time_t now)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct tm tm;
	int ret;

	gmtime_r(&now, &tm);
	(void)path_join(dir, ex->results_mount, "deploy");
	snprintf(path, sizeof(path), "%s/%04d%02d%02dT%02d%02d%02dZ.txt", dir, tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	if ((ret = bci_mkdir_p(dir, 0755)) < 0 ||
	    (ret = bci_write_file_atomic(path, text, strlen(text), 0644)) < 0)
		bci_error("deploy: cannot record the deploy in %s: %s", path, strerror(-ret));
	else
		bci_say("deploy: recorded in %s", path + strlen(ex->root));
}

/*
 * runs/<deploy_id>/: this boot's record (boot-NNNN/, as every boot has one;
 * an attempt cut after the salvage was back adds its boot to the folder it
 * left), test/out.txt the deploy's record, and test/result.txt last, done:
 * a finished test program's run, which collect uploads. Its arrival is what
 * tells the master the deploy is over. 0, or -errno after a bci_error().
 */
static int record_run(struct bci_executor *ex, const struct bci_deploy_plan *plan,
		      const char *text, long duration_ms)
{
	char test_dir[PATH_MAX], path[PATH_MAX + 16], command[BCI_DEPLOY_PLAN_WORD_MAX + 96];
	char result[1024];
	struct bci_test_program_result record = {
		.command = command, .state = BCI_TEST_PROGRAM_DONE, .has_exit = true,
		.duration = (double)duration_ms / 1000,
	};
	int ret;

	snprintf(command, sizeof(command), RECORD_COMMAND " %s sha256:%s", plan->known_good,
		 plan->image_sha256);
	if (snprintf(ex->run_dir, sizeof(ex->run_dir), "%s/runs/%s", ex->results_mount,
		     plan->deploy_id) >= (int)sizeof(ex->run_dir) ||
	    path_join(test_dir, ex->run_dir, BCI_RESULTS_TEST_DIR) < 0)
		return -ENAMETOOLONG;
	if ((ret = bci_mkdir_p(test_dir, 0755)) < 0) {
		bci_error("deploy: cannot create %s: %s", test_dir, strerror(-ret));
		return ret;
	}
	if ((ret = bci_boot_begin(ex)) < 0)
		return ret;
	snprintf(path, sizeof(path), "%s/out.txt", test_dir);
	if ((ret = bci_write_file_atomic(path, text, strlen(text), 0644)) == 0) {
		snprintf(path, sizeof(path), "%s/err.txt", test_dir);
		ret = bci_write_file_atomic(path, "", 0, 0644);
	}
	if (ret == 0) {
		snprintf(path, sizeof(path), "%s/" BCI_RESULTS_TEST_RESULT, test_dir);
		bci_test_program_result_format(result, sizeof(result), &record);
		ret = bci_write_file_atomic(path, result, strlen(result), 0644);
	}
	if (ret < 0) {
		bci_error("deploy: cannot write the deploy's record %s: %s", path, strerror(-ret));
		return ret;
	}
	bci_say("deploy: its record is the run %s, for the master", plan->deploy_id);
	return 0;
}

int bci_deploy_run(struct bci_executor *ex)
{
	struct bci_deploy_plan plan;
	struct bci_deploy_salvage salvage;
	char disk[PATH_MAX], err[512], image_path[PATH_MAX], source[65], *text;
	long start = bci_clock_ms(ex, CLOCK_BOOTTIME);
	struct timespec now;
	int image_fd, disk_fd, ret;

	if ((ret = plan_load(ex, &plan)) < 0)
		return ret;
	bci_say("deploy: machine %s, known-good %s: %llu bytes, sha256 %s (deploy %s)",
		plan.machine, plan.known_good, (unsigned long long)plan.image_size,
		plan.image_sha256, plan.deploy_id);
	if ((image_fd = image_open(ex, &plan)) < 0)
		return image_fd;
	if ((ret = disk_pick(ex, &plan, disk)) < 0)
		goto out_image;
	bci_say("deploy: the disk is %s", disk + strlen(ex->root));
	/* Nothing of the old disk is overwritten before its salvage is durable. */
	if ((ret = bci_deploy_salvage_save(ex, &plan, disk, image_fd, &salvage)) < 0)
		goto out_image;

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
	bci_say("deploy: writing the image to %s", disk + strlen(ex->root));
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
	/* The image's RAM is the results' now. */
	if (bci_path(ex->root, image_path, "%s", plan.image) == 0)
		unlink(image_path);
	if ((ret = entry_register(ex, &plan, disk)) < 0)
		return ret;
	if ((ret = bci_partition_mount_results(ex)) < 0)
		return ret;
	if ((ret = bci_deploy_salvage_restore(ex, disk, &salvage)) < 0)
		return ret;
	bci_deploy_salvage_clear(ex, disk, &salvage);
	if (ex->sys->clock(CLOCK_REALTIME, &now) < 0)
		now = (struct timespec){ 0 };
	text = record_text(ex, &plan, disk, &salvage, now.tv_sec);
	if (!text)
		return -ENOMEM;
	record_write(ex, text, now.tv_sec);
	ret = record_run(ex, &plan, text, bci_clock_ms(ex, CLOCK_BOOTTIME) - start);
	free(text);
	if (ret < 0)
		return ret;
	bci_say("deploy: done in %ld ms", bci_clock_ms(ex, CLOCK_BOOTTIME) - start);
	return 0;

out_disk:
	close(disk_fd);
out_image:
	close(image_fd);
	return ret;
}
