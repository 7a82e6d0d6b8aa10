// SPDX-License-Identifier: MIT
/*
 * EFI variables through efivarfs (see efi.h). Written from the kernel's
 * efivarfs documentation. A test tree's variables are regular files: what
 * differs (the immutable flag, one write(2) per variable, truncation and
 * durability) is decided here by the file system the variable is on, so the
 * same calls work on the machine and on a fake tree.
 */
#include "efi.h"

#include "bytes.h"
#include "fsutil.h"
#include "path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* ---- variables ---- */

static int variable_path(const char *root, const char *name, const char *guid,
			 char *path)
{
	/* A name with '/' would leave the folder; efivarfs would refuse it anyway. */
	if (!*name || strchr(name, '/') || strchr(guid, '/'))
		return -EINVAL;
	return bci_path(root, path, BCI_EFIVARS_DIR "/%s-%s", name, guid);
}

int bci_efivar_available(const char *root)
{
	char path[PATH_MAX];
	struct dirent *entry;
	struct stat st;
	int ret = -ENOMEDIUM;
	DIR *dir;

	if (bci_path(root, path, "/sys/firmware/efi") < 0 || stat(path, &st) < 0)
		return -ENODEV;
	if (bci_path(root, path, BCI_EFIVARS_DIR) < 0)
		return -ENAMETOOLONG;
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ENOMEDIUM : -errno;
	/* The folder exists whenever the kernel booted through EFI; only a mount fills it. */
	while ((entry = readdir(dir)))
		if (entry->d_name[0] != '.') {
			ret = 0;
			break;
		}
	closedir(dir);
	return ret;
}

int bci_efivar_get(const char *root, const char *name, const char *guid,
		   uint32_t *attributes, uint8_t **data, size_t *size)
{
	char path[PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = variable_path(root, name, guid, path);
	if (ret < 0)
		return ret;
	ret = bci_read_file(path, &text, &len, BCI_EFIVAR_MAX_SIZE);
	if (ret < 0)
		return ret;
	if (len < 4) {
		free(text);
		return -EINVAL;
	}
	if (attributes)
		*attributes = efi_get_le32((const uint8_t *)text);
	/* Data moves to the front; the buffer stays NUL-terminated and never empty. */
	memmove(text, text + 4, len - 4 + 1);
	*data = (uint8_t *)text;
	*size = len - 4;
	return 0;
}

/*
 * efivarfs marks its files immutable so that `rm -rf /sys` cannot brick a
 * machine; the flag must go before a write or an unlink. 1 when it was set
 * (and is now cleared), 0 when not, or -errno. A file system without flags
 * (a fake tree on tmpfs) has none to clear.
 */
static int unlock(int fd)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		return errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL ? 0 : -errno;
	if (!(flags & FS_IMMUTABLE_FL))
		return 0;
	flags &= ~FS_IMMUTABLE_FL;
	return ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0 ? -errno : 1;
}

static void relock(int fd)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
		flags |= FS_IMMUTABLE_FL;
		ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
}

/*
 * Stores @size bytes as the whole variable. efivarfs hands each write(2) to
 * SetVariable(): one call, or a torn variable; it has no fsync (the store
 * has it once SetVariable returned). A regular file must also lose an older,
 * longer content, and be made durable.
 */
static int write_variable(int fd, const void *body, size_t size)
{
	struct statfs fs;
	ssize_t written = write(fd, body, size);

	if (written < 0)
		return -errno;
	if ((size_t)written != size)
		return -EIO;
	if (fstatfs(fd, &fs) == 0 && fs.f_type == EFIVARFS_MAGIC)
		return 0;
	if (ftruncate(fd, (off_t)size) < 0 || fsync(fd) < 0)
		return -errno;
	return 0;
}

/* Opens an existing variable for writing: efivarfs's immutable flag goes first. */
static int open_existing(const char *path, int *was_immutable)
{
	/* The flag is cleared through a read-only fd: an immutable file refuses O_WRONLY. */
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	*was_immutable = unlock(fd);
	close(fd);
	if (*was_immutable < 0)
		return *was_immutable;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int bci_efivar_set(const char *root, const char *name, const char *guid,
		   uint32_t attributes, const void *data, size_t size)
{
	char path[PATH_MAX];
	uint8_t *body = NULL;
	bool created = false;
	int fd = -1, ret, was_immutable = 0;

	if (size > BCI_EFIVAR_MAX_SIZE)
		return -E2BIG;
	ret = variable_path(root, name, guid, path);
	if (ret < 0)
		return ret;
	body = malloc(4 + size);
	if (!body)
		return -ENOMEM;
	efi_put_le32(body, attributes);
	if (size)
		memcpy(body + 4, data, size);

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0)
		created = true;
	else if (errno == EEXIST)
		fd = open_existing(path, &was_immutable);
	else
		fd = -errno;
	if (fd < 0) {
		ret = fd;
		goto out_body;
	}
	ret = write_variable(fd, body, 4 + size);
	if (ret == 0 && was_immutable > 0)
		relock(fd);
	close(fd);
	/* A file we created and could not write would stay as an empty name in efivarfs. */
	if (ret < 0 && created)
		unlink(path);
out_body:
	free(body);
	return ret;
}

int bci_efivar_delete(const char *root, const char *name, const char *guid)
{
	char path[PATH_MAX];
	int fd, ret;

	ret = variable_path(root, name, guid, path);
	if (ret < 0)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = unlock(fd);
	close(fd);
	if (ret < 0)
		return ret;
	return unlink(path) < 0 ? -errno : 0;
}

