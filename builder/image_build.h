/* SPDX-License-Identifier: MIT */
/*
 * Inside builder_image_build() (image.h): the state of one build, shared by
 * its modules: image.c (the spec: modules, firmware, programs; then the
 * build's order and its commit), image_igt.c (IGT, the testlist and the
 * executor.conf that runs it, checked with the executor's own rules) and
 * image_outputs.c (initrd, UKI, disk image, manifest). Not for other callers.
 */
#ifndef BUILDER_IMAGE_BUILD_H
#define BUILDER_IMAGE_BUILD_H

#include <sys/types.h>

#include "elf_deps.h"
#include "image.h"
#include "kernel_input.h"
#include "module_stage.h"

/* The executor's configuration file (lib/executor_keys.h), as a spec path. */
#define EXECUTOR_CONF_PATH "etc/bootci/executor.conf"

struct image_build {
	struct builder_image_options *o;
	const struct builder_recipe *r;
	char *err;
	size_t err_size;
	char *tmp;			/* OUT.tmp.XXXXXX */
	char *work;			/* tmp/work: scratch */
	char *dir;			/* tmp/image: becomes OUT */
	struct builder_kernel kernel;
	struct builder_spec *spec;
	struct builder_module_list modules;
	struct builder_elf_closure closure;
	int closure_ready;
	char *executor_conf;		/* work/executor.conf when the builder completed it */
	char *executor_conf_origin;	/* the file it completed, NULL when it made it whole */
};

int image_add_file(struct image_build *b, const char *name, const char *source, const char *dest);
int image_add_dir(struct image_build *b, const char *name, const char *source, const char *dest);
int image_spec_safe(struct image_build *b, const char *what, const char *path);
int image_parse_text(struct image_build *b, const char *name, const char *text, size_t len);
int image_closure_add(struct image_build *b, const char *source, const char *dest);
int image_check_executor_files(struct image_build *b);
int image_add_igt(struct image_build *b);
int image_outputs_known_good(struct image_build *b, const char *initrd);
int image_manifest(struct image_build *b, char **text);
int image_outputs_test(struct image_build *b, const char *initrd);
int image_path(struct image_build *b, char **out, const char *dir, const char *name);

#endif
