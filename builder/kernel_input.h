/* SPDX-License-Identifier: MIT */
/*
 * The kernel an image is built around, in the forms people have it:
 *   - a Debian linux-image .deb (unpacked with dpkg-deb, indexed with depmod),
 *   - a kernel build tree (arch/x86/boot/bzImage, include/config/kernel.release)
 *     plus the output of `make modules_install INSTALL_MOD_PATH=DIR`,
 *   - a vmlinuz plus a modules folder: an INSTALL_MOD_PATH-style root holding
 *     lib/modules/<kver>, or lib/modules/<kver> itself.
 */
#ifndef BUILDER_KERNEL_INPUT_H
#define BUILDER_KERNEL_INPUT_H

#include "message.h"

struct builder_kernel_source {
	const char *deb;
	const char *tree;
	const char *vmlinuz;
	const char *modules;
	const char *kver;	/* optional: which lib/modules/<kver> when there are several */
	const char *scratch;	/* a folder the .deb may be unpacked in */
};

struct builder_kernel {
	char *vmlinuz;		/* host path of the kernel image */
	char *moddir;		/* root holding lib/modules/<kver> (for libkmod) */
	char *kver;
	char *origin;		/* absolute path of what was given, for the manifest */
	char *modules_origin;	/* the manifest's name for moddir: itself, or "DEB:" for a .deb */
};

/*
 * Fills @kernel (owned by it) from @source. A missing kernel or modules
 * folder, or a modules folder without modules.dep, is -ENOENT naming it.
 */
int builder_kernel_open(const struct builder_kernel_source *source, struct builder_kernel *kernel,
			char *err, size_t err_size);
void builder_kernel_clear(struct builder_kernel *kernel);

#endif
