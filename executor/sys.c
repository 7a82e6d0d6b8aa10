// SPDX-License-Identifier: MIT
/*
 * The system calls without a path: the real ones, and a dry table that says
 * what it would do, for `--root` runs on a fake tree as an ordinary user.
 */
#include "executor.h"

#include <errno.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <libkmod.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <unistd.h>

static int real_mount(const char *source, const char *target, const char *fstype,
		      unsigned long flags, const char *data)
{
	return mount(source, target, fstype, flags, data) < 0 ? -errno : 0;
}

static int real_umount(const char *target)
{
	if (umount2(target, 0) == 0)
		return 0;
	/* Something still holds it (a test's leftover process): detach, data is synced. */
	return umount2(target, MNT_DETACH) < 0 ? -errno : 0;
}

static int real_probe_module(struct kmod_module *module, const char *options)
{
	int ret = kmod_module_probe_insert_module(module, 0, options, NULL, NULL, NULL);

	/* > 0 means blacklisted or otherwise skipped by configuration: not an error. */
	return ret > 0 ? 0 : ret;
}

static int real_reboot(int how)
{
	return reboot(how) < 0 ? -errno : 0;
}

/*
 * efivarfs marks its files immutable so that `rm -rf /sys` cannot brick a
 * machine; the flag must go before a write or an unlink.
 */
static int real_efivar_unlock(int fd)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		return -errno;
	if (!(flags & FS_IMMUTABLE_FL))
		return 0;
	flags &= ~FS_IMMUTABLE_FL;
	return ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0 ? -errno : 1;
}

static void real_efivar_relock(int fd)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
		flags |= FS_IMMUTABLE_FL;
		ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
}

static int real_efivar_write(int fd, const void *body, size_t size)
{
	/* One call, or a torn variable; efivarfs has no fsync (SetVariable reached the store). */
	ssize_t written = write(fd, body, size);

	if (written < 0)
		return -errno;
	return (size_t)written == size ? 0 : -EIO;
}

const struct bci_sys bci_sys_real = {
	.name = "real",
	.mount = real_mount,
	.umount = real_umount,
	.probe_module = real_probe_module,
	.reboot = real_reboot,
	.sync = sync,
	.efivar_unlock = real_efivar_unlock,
	.efivar_relock = real_efivar_relock,
	.efivar_write = real_efivar_write,
};

static int dry_mount(const char *source, const char *target, const char *fstype,
		     unsigned long flags, const char *data)
{
	printf("dry-run: mount -t %s %s %s (flags %#lx%s%s)\n", fstype, source, target, flags,
	       data ? ", " : "", data ? data : "");
	return 0;
}

static int dry_umount(const char *target)
{
	printf("dry-run: umount %s\n", target);
	return 0;
}

static void dry_print_action(struct kmod_module *module, bool install, const char *options)
{
	(void)options;
	printf("dry-run: %s %s\n", install ? "install command for" : "insmod",
	       kmod_module_get_path(module) ? kmod_module_get_path(module)
					    : kmod_module_get_name(module));
}

static int dry_probe_module(struct kmod_module *module, const char *options)
{
	int ret = kmod_module_probe_insert_module(module, KMOD_PROBE_DRY_RUN, options, NULL, NULL,
						  dry_print_action);
	return ret > 0 ? 0 : ret;
}

static int dry_reboot(int how)
{
	printf("dry-run: %s\n", how == RB_POWER_OFF ? "power off" : "reboot");
	return 0;
}

static void dry_sync(void)
{
}

/* A fake tree's variables are regular files: no immutable flag. */
int bci_sys_tree_efivar_unlock(int fd)
{
	(void)fd;
	return 0;
}

void bci_sys_tree_efivar_relock(int fd)
{
	(void)fd;
}

/* A regular file must also lose an older, longer content, and be durable. */
int bci_sys_tree_efivar_write(int fd, const void *body, size_t size)
{
	ssize_t written = write(fd, body, size);

	if (written < 0)
		return -errno;
	if ((size_t)written != size)
		return -EIO;
	if (ftruncate(fd, (off_t)size) < 0 || fsync(fd) < 0)
		return -errno;
	return 0;
}

const struct bci_sys bci_sys_dry = {
	.name = "dry-run",
	.mount = dry_mount,
	.umount = dry_umount,
	.probe_module = dry_probe_module,
	.reboot = dry_reboot,
	.sync = dry_sync,
	BCI_SYS_TREE_EFIVARS,
};
