/* SPDX-License-Identifier: MIT */
/*
 * Inside builder_image_build() (image.h): the state of one build, shared by
 * its modules. Not for other callers.
 *
 *   image.h    the folder's interface: builder_image_build()
 *   build.c    the build's order (kernel, specs, modules, firmware,
 *              programs, outputs) and its commit to OUT
 *   spec.c     spec lines for host files, folders, links, programs
 *   igt.c      IGT, the testlist and the executor.conf that runs it
 *   check.c    that executor.conf and testlist, checked with the
 *              executor's own rules
 *   outputs.c  initrd, UKI, disk image, manifest
 *
 * build.c calls the others; igt.c and check.c call only spec.c, which calls
 * none of them.
 */
#ifndef BUILDER_IMAGE_INTERNAL_H
#define BUILDER_IMAGE_INTERNAL_H

#include <sys/types.h>

#include "elf_deps.h"
#include "image/image.h"
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

/* ---- the spec (spec.c): a leaf the others call, calling none of them ---- */

/* -EINVAL (@b->err names @what) when @path cannot be said in a spec line. */
int image_spec_safe(struct image_build *b, const char *what, const char *path);
/* Spec lines @text (@len bytes) added; @name names them in messages. */
int image_parse_text(struct image_build *b, const char *name, const char *text, size_t len);
/* A host folder, whole, at @dest. */
int image_add_dir(struct image_build *b, const char *name, const char *source, const char *dest);
/* A host file at @dest with its own permission bits (a folder: image_add_dir()). */
int image_add_file(struct image_build *b, const char *name, const char *source, const char *dest);
int image_add_symlink(struct image_build *b, const char *name, const char *path, const char *target);
/* A program at @dest with its ELF closure (the closure is made at the first). */
int image_closure_add(struct image_build *b, const char *source, const char *dest);
/* The spec's entry at @path (leading '/' or not), or NULL. */
const struct builder_entry *image_spec_entry(const struct image_build *b, const char *path);

/* ---- IGT (igt.c): tests, data, testlist, the executor.conf running it ---- */
int image_add_igt(struct image_build *b);

/* ---- the check (check.c): executor.conf and testlist as the executor reads them ---- */
int image_check_executor_files(struct image_build *b);

/* ---- the outputs (outputs.c) ---- */
int image_outputs_test(struct image_build *b, const char *initrd);
int image_outputs_known_good(struct image_build *b, const char *initrd);
int image_manifest(struct image_build *b, char **text);
int image_path(struct image_build *b, char **out, const char *dir, const char *name);

#endif
