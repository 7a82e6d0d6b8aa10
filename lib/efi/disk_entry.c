// SPDX-License-Identifier: MIT
/*
 * A Boot#### entry for a file on a partition of a GPT disk (see efi.h): the
 * partition's place and GUID read through libblkid's partition probing, the
 * entry written and put in BootOrder. Provisioning's part of lib/efi, alone
 * in its file: a program that only reads entries does not link libblkid.
 */
#include "efi.h"

#include "message.h"
#include "path.h"

#include <blkid/blkid.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bci_efi_hard_drive_probe(const char *disk_path, unsigned partition_number,
			     struct bci_efi_hard_drive *hd)
{
	blkid_probe probe = blkid_new_probe_from_filename(disk_path);
	blkid_partlist partitions;
	blkid_parttable table;
	blkid_partition partition;
	const char *type, *uuid;
	unsigned sector_size;
	int ret;

	if (!probe)
		return errno ? -errno : -ENOENT;
	blkid_probe_enable_superblocks(probe, 0);
	blkid_probe_enable_partitions(probe, 1);
	partitions = blkid_probe_get_partitions(probe);
	table = partitions ? blkid_partlist_get_table(partitions) : NULL;
	type = table ? blkid_parttable_get_type(table) : NULL;
	if (!type || strcmp(type, "gpt") != 0) {
		ret = -EMEDIUMTYPE;
		goto out;
	}
	partition = partition_number <= INT32_MAX
			    ? blkid_partlist_get_partition_by_partno(partitions, (int)partition_number)
			    : NULL;
	uuid = partition ? blkid_partition_get_uuid(partition) : NULL;
	if (!partition || !uuid) {
		ret = -ENOENT;
		goto out;
	}
	ret = bci_efi_guid_parse(uuid, hd->partition_guid);
	if (ret < 0)
		goto out;
	/* libblkid counts 512-byte sectors; HD() counts the disk's logical blocks. */
	sector_size = blkid_probe_get_sectorsize(probe);
	if (sector_size < 512 || sector_size % 512) {
		ret = -EINVAL;
		goto out;
	}
	hd->partition_number = partition_number;
	hd->start_lba = (uint64_t)blkid_partition_get_start(partition) * 512 / sector_size;
	hd->size_lba = (uint64_t)blkid_partition_get_size(partition) * 512 / sector_size;
	ret = 0;
out:
	blkid_free_probe(probe);
	return ret;
}

/* HD(partition of @disk)/File(@loader), malloc'ed in *@path. */
static int entry_device_path(const char *root, const char *disk, unsigned partition,
			     const char *loader, uint8_t **path, size_t *size, char *err,
			     size_t err_size)
{
	struct bci_efi_hard_drive hd;
	char disk_path[PATH_MAX];
	int ret;

	if (bci_path(root, disk_path, "%s", disk) < 0) {
		bci_message(err, err_size, "%s: %s", disk, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	ret = bci_efi_hard_drive_probe(disk_path, partition, &hd);
	if (ret == -EMEDIUMTYPE)
		bci_message(err, err_size, "%s: no GPT partition table", disk);
	else if (ret < 0)
		bci_message(err, err_size, "%s: partition %u: %s", disk, partition,
			    ret == -ENOENT ? "no such partition" : strerror(-ret));
	if (ret < 0)
		return ret;
	ret = bci_efi_device_path_hd_file(&hd, loader, path, size);
	if (ret < 0)
		bci_message(err, err_size, "--loader %s: %s", loader, strerror(-ret));
	return ret;
}

int bci_efi_boot_entry_create(const char *root, const char *label, const char *disk,
			      unsigned partition, const char *loader, bool first,
			      uint16_t *number, bool *replaced, char *err, size_t err_size)
{
	struct bci_efi_load_option option = { .attributes = BCI_EFI_LOAD_OPTION_ACTIVE };
	uint8_t *path = NULL;
	size_t path_size = 0;
	int ret;

	ret = entry_device_path(root, disk, partition, loader, &path, &path_size, err, err_size);
	if (ret < 0)
		return ret;
	*replaced = bci_efi_boot_find(root, label, number) == 0;
	if (!*replaced)
		ret = bci_efi_boot_entry_free_number(root, number);
	option.description = (char *)label;
	option.file_path = path;
	option.file_path_size = path_size;
	if (!ret)
		ret = bci_efi_boot_entry_set(root, *number, &option);
	if (!ret)
		ret = bci_efi_boot_order_add(root, *number, first);
	if (ret < 0)
		bci_message(err, err_size, "create-entry: %s", strerror(-ret));
	free(path);
	return ret;
}
