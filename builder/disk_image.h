/* SPDX-License-Identifier: MIT */
/*
 * The known-good disk image, made without mounting anything or using loop
 * devices: a GPT (sfdisk) with an ESP (mkfs.vfat on a file, filled with
 * mtools) and an ext4 results partition (mkfs.ext4 on a file), each placed
 * into the disk file at its partition's offset. Every identity and time is
 * fixed (GUIDs, FAT volume id, ext4 UUID and hash seed, SOURCE_DATE_EPOCH,
 * E2FSPROGS_FAKE_TIME), so the same inputs give the same bytes.
 */
#ifndef BUILDER_DISK_IMAGE_H
#define BUILDER_DISK_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "message.h"

#define BUILDER_RESULTS_LABEL "BOOTCI-RESULTS"

struct builder_esp_file {
	const char *source;
	const char *esp_path;	/* e.g. "EFI/BOOT/BOOTX64.EFI" */
};

struct builder_disk {
	uint64_t esp_mib, results_mib;
	const char *disk_guid, *esp_partuuid, *results_partuuid, *results_fs_uuid;
	uint32_t esp_volume_id;
	const struct builder_esp_file *esp_files;
	size_t esp_file_count;
	int64_t epoch;
	const char *work_dir;	/* scratch for the partition images */
};

/*
 * Writes the disk to @out (a new file) and, in @layout_out, one line per
 * partition "NAME START_BYTES SIZE_BYTES" (esp, results), the lab's format.
 */
int builder_disk_make(const struct builder_disk *disk, const char *out, const char *layout_out,
		      char *err, size_t err_size);

#endif
