/* SPDX-License-Identifier: MIT */
/*
 * Image recipes (images/test-image.conf, images/known-good.conf): one
 * `key = value` per line, '#' starts a comment line, blank lines ignored.
 * ${VAR} in a value is replaced from the environment (an unset variable is an
 * error); a relative path is relative to the recipe's own folder, so a recipe
 * means the same wherever the builder runs. List keys may repeat and append.
 *
 *   image = test | known-good           which output the recipe describes (required)
 *   spec = PATH                         gen_init_cpio spec with the image's base (list)
 *   modules = NAME...                   modules (names or aliases), with deps and softdeps (list)
 *   modalias = MODALIAS...              device modaliases: every module matching one goes in (list)
 *   firmware_dir = DIR                  where firmware=... files are looked for, in order (list;
 *                                       default /lib/firmware)
 *   program = SOURCE [IMAGE_PATH]       an executable and its ELF closure (list)
 *   file = SOURCE [IMAGE_PATH]          a data file or folder copied as it is (list)
 *   igt_tests_dest = PATH               where IGT test binaries land (/usr/libexec/igt-gpu-tools)
 *   igt_data_dest = PATH                where IGT data lands (/usr/share/igt-gpu-tools)
 *   testlist_dest = PATH                where the testlist lands (/etc/bootci/testlist);
 *                                       the image's executor.conf is set to run it
 *   cmdline = TEXT                      kernel command line (boot.ipxe, UKI)
 *   compress = zstd|xz|gzip|none        initramfs compression (zstd)
 *   uki = yes|no                        also make a UKI (yes)
 *   esp_size_mib, results_size_mib = N  known-good disk: partition sizes (64, 256)
 *   disk_guid, esp_partuuid, results_partuuid, results_fs_uuid = UUID
 *                                       fixed identities, so the disk image is reproducible
 *   esp_volume_id = 8 HEX DIGITS        FAT volume id
 *   boot_entry = LABEL                  EFI boot entry name (bootci-known-good)
 */
#ifndef BUILDER_RECIPE_H
#define BUILDER_RECIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "builder_error.h"
#include "cpio_spec.h"
#include "cpio_writer.h"
#include "strv.h"

enum builder_image_kind {
	BUILDER_IMAGE_UNSET,
	BUILDER_IMAGE_TEST,
	BUILDER_IMAGE_KNOWN_GOOD,
};

/* SOURCE [IMAGE_PATH]: image_path is SOURCE's own path when not given. */
struct builder_recipe_copy {
	char *source;
	char *image_path;
	unsigned int line;
};

struct builder_recipe {
	char *name;			/* recipe path, for messages */
	enum builder_image_kind kind;
	struct bci_strv specs, modules, modaliases, firmware_dirs;
	struct builder_recipe_copy *programs, *files;
	size_t program_count, file_count;
	char *igt_tests_dest, *igt_data_dest, *testlist_dest;
	char *cmdline;
	enum builder_compression compression;
	bool uki;
	uint64_t esp_size_mib, results_size_mib;
	char *disk_guid, *esp_partuuid, *results_partuuid, *results_fs_uuid;
	uint32_t esp_volume_id;
	char *boot_entry;
};

/* Defaults filled in; free with builder_recipe_free(). NULL on ENOMEM. */
struct builder_recipe *builder_recipe_new(void);
void builder_recipe_free(struct builder_recipe *recipe);

/*
 * Parses @len bytes of recipe text named @name; relative paths are joined to
 * @base_dir (NULL: left relative). @lookup answers ${VAR} (NULL: getenv).
 * Returns 0, -EINVAL with "NAME:LINE: what" in @err, or -ENOMEM.
 */
int builder_recipe_parse(struct builder_recipe *recipe, const char *name, const char *buf,
			 size_t len, const char *base_dir, bci_lookup_fn lookup,
			 void *lookup_data, struct builder_error *err);

/* Reads and parses the file at @path, relative paths joined to its folder. */
int builder_recipe_load(struct builder_recipe *recipe, const char *path, struct builder_error *err);

#endif
