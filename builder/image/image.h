/* SPDX-License-Identifier: MIT */
/*
 * Builds one image from a recipe (recipe.h) and a kernel (kernel_input.h):
 *
 *   test image   OUT/vmlinuz, OUT/initrd.img, OUT/boot.ipxe, OUT/bootci.efi (UKI)
 *   known-good   OUT/disk.img (GPT: ESP with the UKI at \EFI\BOOT\BOOTX64.EFI and
 *                \EFI\bootci\known-good.efi, ext4 BOOTCI-RESULTS), OUT/layout,
 *                OUT/known-good.efi, OUT/register-boot-entry.sh (efibootmgr)
 *
 * The initramfs holds the recipe's specs, the module closure (libkmod) with
 * the firmware the modules name, the programs with their ELF closure, the
 * data files and, for a test image, IGT: test binaries in igt_tests_dest,
 * data in igt_data_dest, the testlist at testlist_dest. A test image given a
 * testlist runs it: testlist= (and test_dir=, with IGT) are appended to its
 * /etc/bootci/executor.conf, which is made if the specs have none.
 *
 * Everything is made in "OUT.tmp.XXXXXX" beside OUT and renamed into place at
 * the end: OUT is the complete new image or what it was before, never a mix.
 */
#ifndef BUILDER_IMAGE_H
#define BUILDER_IMAGE_H

#include <stdint.h>

#include "message.h"
#include "kernel_input.h"
#include "recipe.h"

struct builder_image_options {
	const struct builder_recipe *recipe;
	struct builder_kernel_source kernel;	/* .scratch is set by the builder */
	const char *igt;		/* IGT install prefix or build folder, or NULL */
	const char *testlist;		/* overrides the IGT's own test-list.txt */
	const char *sysroot;		/* where programs' libraries come from ("/") */
	const char *stub;		/* EFI stub; NULL: Debian's */
	const char *depmod;		/* NULL: depmod from PATH */
	const char *out;
	const char *manifest;		/* NULL: none */
	int64_t epoch;
	int warnings;			/* out: how many warnings were printed */
};

int builder_image_build(struct builder_image_options *options, char *err, size_t err_size);

#endif
