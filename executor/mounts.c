// SPDX-License-Identifier: MIT
/* The API filesystems PID 1 must provide before anything else runs. */
#include "executor.h"

#include "fsutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

struct early_mount {
	const char *source, *target, *fstype;
	unsigned long flags;
	const char *data;
};

static const struct early_mount early_mounts[] = {
	{ "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL },
	{ "sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL },
	{ "devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755" },
	{ "tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777" },
	{ "tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755" },
};

/* Mounts one filesystem, creating its mount point; an already mounted target is fine. */
static int mount_one(struct bci_executor *ex, const struct early_mount *m)
{
	char target[PATH_MAX];
	int ret = bci_path(ex->root, target, "%s", m->target);

	if (ret < 0)
		return ret;
	if (mkdir(target, 0755) < 0 && errno != EEXIST)
		return -errno;
	ret = ex->sys->mount(m->source, target, m->fstype, m->flags, m->data);
	if (ret == -EBUSY)
		return 0;
	return ret;
}

int bci_mounts_early(struct bci_executor *ex)
{
	for (size_t i = 0; i < sizeof(early_mounts) / sizeof(early_mounts[0]); i++) {
		int ret = mount_one(ex, &early_mounts[i]);
		if (ret < 0) {
			bci_error("cannot mount %s on %s: %s", early_mounts[i].fstype,
				  early_mounts[i].target, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

bool bci_filesystem_known(const struct bci_executor *ex, const char *fstype)
{
	char path[PATH_MAX], *text = NULL;
	bool found = false;

	if (bci_path(ex->root, path, "/proc/filesystems") < 0 ||
	    bci_read_file(path, &text, NULL, 1 << 16) < 0)
		return false;
	/* Lines are "nodev\tNAME" or "\tNAME". */
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		char *name = strrchr(line, '\t');
		found = strcmp(name ? name + 1 : line, fstype) == 0;
	}
	free(text);
	return found;
}

/* Makes @fstype available (loading the module of that name when not built in) and mounts it. */
static int mount_firmware_fs(struct bci_executor *ex, const char *fstype, const char *target)
{
	struct early_mount m = { fstype, target, fstype, MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL };
	int ret;

	if (!bci_filesystem_known(ex, fstype)) {
		ret = bci_modules_load(ex, fstype);
		if (ret < 0)
			return ret;
	}
	return mount_one(ex, &m);
}

int bci_mounts_firmware(struct bci_executor *ex)
{
	char path[PATH_MAX];
	struct stat st;
	int ret;

	/* Neither is fatal: a BIOS machine has no EFI, a kernel may lack pstore. */
	if (bci_path(ex->root, path, "/sys/firmware/efi") == 0 && stat(path, &st) == 0) {
		ret = mount_firmware_fs(ex, "efivarfs", "/sys/firmware/efi/efivars");
		if (ret < 0)
			bci_warn("efivarfs not mounted: %s", strerror(-ret));
		else
			bci_say("efivarfs mounted on /sys/firmware/efi/efivars");
	} else {
		bci_say("no EFI firmware: efivarfs not mounted");
	}
	ret = mount_firmware_fs(ex, "pstore", "/sys/fs/pstore");
	if (ret < 0)
		bci_warn("pstore not mounted: %s", strerror(-ret));
	else
		bci_say("pstore mounted on /sys/fs/pstore");
	return 0;
}
