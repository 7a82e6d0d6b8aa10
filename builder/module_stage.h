/* SPDX-License-Identifier: MIT */
/*
 * Stages the kernel modules an image needs: names (or aliases) are resolved
 * with libkmod against <moddir>/lib/modules/<kver>, closed over their
 * dependencies and soft dependencies (pre and post), and the .ko files are
 * copied with their relative paths into <staging>/lib/modules/<kver>/ together
 * with modules.order, modules.builtin and modules.builtin.modinfo; depmod then
 * gives the staged tree its own indexes. The tree is built in "<staging>.tmp"
 * and renamed into place, so <staging> is either the complete new tree or
 * what it was before.
 */
#ifndef BUILDER_MODULE_STAGE_H
#define BUILDER_MODULE_STAGE_H

#include <stddef.h>

#include "message.h"

struct builder_module {
	char *name;
	char *relative_path;	/* under lib/modules/<kver>/; NULL for a built-in module */
	char **firmware;	/* its modinfo firmware= names, as the kernel requests them */
	size_t firmware_count;
};

/* Sorted by name; owned by the list. */
struct builder_module_list {
	struct builder_module *modules;
	size_t count;
};

void builder_module_list_clear(struct builder_module_list *list);

struct builder_module_options {
	const char *moddir;	/* root holding lib/modules/<kver> */
	const char *kver;
	const char *staging;
	const char *depmod;	/* program to run; NULL: "depmod" from PATH, /usr/sbin, /sbin */
	/*
	 * Device modaliases (as in /sys/bus/.../modalias of the target): every
	 * module with an alias pattern matching one is added. A modalias no
	 * module matches is fine: not every device has a driver.
	 */
	const char *const *modaliases;
	size_t modalias_count;
};

/*
 * Resolves @names and their closure into @list (cleared first). An unknown
 * name is -ENOENT with "unknown module 'NAME'" in @err.
 */
int builder_modules_resolve(const struct builder_module_options *options,
			    const char *const *names, size_t count,
			    struct builder_module_list *list, char *err, size_t err_size);

/* builder_modules_resolve(), then the staging described above. */
int builder_modules_stage(const struct builder_module_options *options,
			  const char *const *names, size_t count,
			  struct builder_module_list *list, char *err, size_t err_size);

#endif
