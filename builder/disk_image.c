// SPDX-License-Identifier: MIT
#include "disk_image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "tool.h"

#define MIB (1024ull * 1024ull)
#define SECTOR 512ull
#define GPT_ESP_TYPE "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
#define GPT_LINUX_TYPE "0FC63DAF-8483-4772-8E79-3D69D8477DE4"

/* Copies @image into @disk at @offset, leaving all-zero blocks as holes. */
static int disk_place(const char *image, int disk, uint64_t offset, char *err, size_t err_size)
{
	static const uint8_t zero[65536];
	uint8_t buf[65536];
	int fd = open(image, O_RDONLY | O_CLOEXEC), ret = 0;
	uint64_t at = 0;

	if (fd < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", image, strerror(-ret));
		return ret;
	}
	for (;;) {
		ssize_t n = bci_read_retry(fd, buf, sizeof(buf));

		if (n <= 0) {
			if (n < 0) {
				ret = (int)n;
				bci_message(err, err_size, "%s: %s", image, strerror(-ret));
			}
			break;
		}
		if (memcmp(buf, zero, (size_t)n)) {
			for (ssize_t done = 0; done < n;) {
				ssize_t w = pwrite(disk, buf + done, (size_t)(n - done), (off_t)(offset + at + (uint64_t)done));

				if (w < 0 && errno == EINTR)
					continue;
				if (w < 0) {
					ret = -errno;
					bci_message(err, err_size, "disk image: %s", strerror(-ret));
					goto out;
				}
				done += w;
			}
		}
		at += (uint64_t)n;
	}
out:
	close(fd);
	return ret;
}

static int disk_path(char **out, const char *dir, const char *name)
{
	return asprintf(out, "%s/%s", dir, name) < 0 ? -ENOMEM : 0;
}

static int disk_make_esp(const struct builder_disk *d, const char *esp, char *err, size_t err_size)
{
	char volume_id[16], kib[32], epoch_env[64], made_dirs[16][512];
	size_t made_count = 0;
	const char *env[] = { epoch_env, "MTOOLSRC=/dev/null", "MTOOLS_SKIP_CHECK=1", NULL };
	int ret;

	snprintf(volume_id, sizeof(volume_id), "%08x", d->esp_volume_id);
	snprintf(kib, sizeof(kib), "%llu", (unsigned long long)(d->esp_mib * 1024));
	snprintf(epoch_env, sizeof(epoch_env), "SOURCE_DATE_EPOCH=%lld", (long long)d->epoch);
	{
		const char *argv[] = { "mkfs.vfat", "--invariant", "-i", volume_id, "-n", "ESP",
				       "-C", esp, kib, NULL };

		ret = builder_tool_run(argv, env, 1, NULL, err, err_size);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < d->esp_file_count; i++) {
		char target[512], dir[512], *slash;
		struct timespec times[2] = { { .tv_sec = d->epoch }, { .tv_sec = d->epoch } };

		snprintf(target, sizeof(target), "::/%s", d->esp_files[i].esp_path);
		/* Every folder on the way, each made once (mmd fails on an existing one). */
		snprintf(dir, sizeof(dir), "%s", target);
		for (char *p = dir + 3; (slash = strchr(p, '/')); p = slash + 1) {
			const char *argv[] = { "mmd", "-i", esp, dir, NULL };
			int made = 0;

			*slash = '\0';
			for (size_t k = 0; k < made_count; k++)
				made |= !strcmp(made_dirs[k], dir);
			if (!made) {
				if (made_count == sizeof(made_dirs) / sizeof(*made_dirs)) {
					bci_message(err, err_size, "ESP: too many folders");
					return -E2BIG;
				}
				snprintf(made_dirs[made_count++], sizeof(made_dirs[0]), "%s", dir);
				ret = builder_tool_run(argv, env, 1, NULL, err, err_size);
				if (ret < 0)
					return ret;
			}
			*slash = '/';
		}
		/* mcopy -m keeps the source's mtime: make it SOURCE_DATE_EPOCH. */
		if (utimensat(AT_FDCWD, d->esp_files[i].source, times, 0) < 0) {
			ret = -errno;
			bci_message(err, err_size, "%s: %s", d->esp_files[i].source, strerror(-ret));
			return ret;
		}
		{
			const char *argv[] = { "mcopy", "-m", "-i", esp, d->esp_files[i].source, target, NULL };

			ret = builder_tool_run(argv, env, 1, NULL, err, err_size);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int disk_make_results(const struct builder_disk *d, const char *image, char *err, size_t err_size)
{
	char fake_time[64], extended[128];
	const char *env[] = { fake_time, "MKE2FS_CONFIG=/etc/mke2fs.conf", NULL };
	const char *argv[] = { "mkfs.ext4", "-q", "-F", "-L", BUILDER_RESULTS_LABEL, "-U",
			       d->results_fs_uuid, "-E", extended, image, NULL };
	int fd, ret;

	snprintf(fake_time, sizeof(fake_time), "E2FSPROGS_FAKE_TIME=%lld", (long long)d->epoch);
	snprintf(extended, sizeof(extended), "root_owner=0:0,hash_seed=%s,lazy_itable_init=0",
		 d->results_fs_uuid);
	fd = open(image, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(d->results_mib * MIB)) < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", image, strerror(-ret));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	close(fd);
	return builder_tool_run(argv, env, 1, NULL, err, err_size);
}

int builder_disk_make(const struct builder_disk *d, const char *out, const char *layout_out,
		      char *err, size_t err_size)
{
	char *esp = NULL, *results = NULL, *script = NULL, *text = NULL, *layout = NULL;
	uint64_t esp_start = MIB, results_start = MIB + d->esp_mib * MIB;
	uint64_t total = results_start + d->results_mib * MIB + MIB;
	int fd = -1, ret;

	if (!d->disk_guid || !d->esp_partuuid || !d->results_partuuid || !d->results_fs_uuid) {
		bci_message(err, err_size, "the known-good recipe needs disk_guid, esp_partuuid, "
			    "results_partuuid and results_fs_uuid (fixed, for reproducible disks)");
		return -EINVAL;
	}
	if ((ret = disk_path(&esp, d->work_dir, "esp.img")) < 0 ||
	    (ret = disk_path(&results, d->work_dir, "results.img")) < 0 ||
	    (ret = disk_path(&script, d->work_dir, "disk.sfdisk")) < 0)
		goto out;
	if (asprintf(&text,
		     "label: gpt\n"
		     "label-id: %s\n"
		     "unit: sectors\n"
		     "first-lba: 2048\n"
		     "start=%llu, size=%llu, type=" GPT_ESP_TYPE ", uuid=%s, name=\"EFI System\"\n"
		     "start=%llu, size=%llu, type=" GPT_LINUX_TYPE ", uuid=%s, name=\"" BUILDER_RESULTS_LABEL "\"\n",
		     d->disk_guid,
		     (unsigned long long)(esp_start / SECTOR), (unsigned long long)(d->esp_mib * MIB / SECTOR),
		     d->esp_partuuid,
		     (unsigned long long)(results_start / SECTOR),
		     (unsigned long long)(d->results_mib * MIB / SECTOR), d->results_partuuid) < 0) {
		text = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = bci_write_file_atomic(script, text, strlen(text), 0644);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", script, strerror(-ret));
		goto out;
	}
	fd = open(out, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)total) < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", out, strerror(-ret));
		goto out;
	}
	{
		const char *argv[] = { "sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", out, NULL };

		ret = builder_tool_run(argv, NULL, 1, script, err, err_size);
		if (ret < 0)
			goto out;
	}
	ret = disk_make_esp(d, esp, err, err_size);
	if (!ret)
		ret = disk_make_results(d, results, err, err_size);
	if (!ret)
		ret = disk_place(esp, fd, esp_start, err, err_size);
	if (!ret)
		ret = disk_place(results, fd, results_start, err, err_size);
	if (!ret && fsync(fd) < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", out, strerror(-ret));
	}
	if (ret < 0)
		goto out;
	if (asprintf(&layout, "esp %llu %llu\nresults %llu %llu\n",
		     (unsigned long long)esp_start, (unsigned long long)(d->esp_mib * MIB),
		     (unsigned long long)results_start, (unsigned long long)(d->results_mib * MIB)) < 0) {
		layout = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = bci_write_file_atomic(layout_out, layout, strlen(layout), 0644);
	if (ret < 0)
		bci_message(err, err_size, "%s: %s", layout_out, strerror(-ret));
out:
	if (fd >= 0)
		close(fd);
	if (esp)
		unlink(esp);
	if (results)
		unlink(results);
	if (script)
		unlink(script);
	free(layout);
	free(text);
	free(script);
	free(results);
	free(esp);
	return ret;
}
