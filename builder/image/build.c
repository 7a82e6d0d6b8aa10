// SPDX-License-Identifier: MIT
/*
 * builder_image_build() (image.h): one build in its order. The kernel, the
 * recipe's specs, the modules with their firmware, the programs and files
 * with their ELF closures (spec.c says them as spec lines; IGT comes from
 * igt.c), the check of what the executor will read (check.c), the outputs
 * (outputs.c), then the commit to OUT.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpio_spec.h"
#include "cpio_writer.h"
#include "fsutil.h"

#define DEFAULT_FIRMWARE_DIR "/lib/firmware"

static int image_copy_file(const char *from, const char *to, mode_t mode, char *err, size_t err_size)
{
	const char *failed;
	int ret = bci_copy_file(from, to, mode, 1, &failed);

	if (ret < 0)
		bci_message(err, err_size, "%s: %s", failed, strerror(-ret));
	return ret;
}

static int image_stage_modules(struct image_build *b)
{
	struct builder_module_options mo = {
		.moddir = b->kernel.moddir, .kver = b->kernel.kver, .depmod = b->o->depmod,
		.modaliases = (const char *const *)b->r->modaliases.items,
		.modalias_count = b->r->modaliases.count,
	};
	char *staging, *tree;
	int ret;

	if (!b->r->modules.count && !b->r->modaliases.count)
		return 0;
	if (asprintf(&staging, "%s/modules", b->work) < 0)
		return -ENOMEM;
	mo.staging = staging;
	ret = builder_modules_stage(&mo, (const char *const *)b->r->modules.items, b->r->modules.count,
				    &b->modules, b->err, b->err_size);
	if (!ret) {
		if (asprintf(&tree, "%s/lib/modules", staging) < 0) {
			ret = -ENOMEM;
		} else {
			ret = image_add_dir(b, "modules", tree, "/lib/modules");
			free(tree);
		}
	}
	free(staging);
	return ret;
}

/* The kernel asks for NAME; Debian may ship it compressed. */
static int image_find_firmware(struct image_build *b, const char *name, char **found, char **dest)
{
	static const char *const suffixes[] = { "", ".zst", ".xz" };
	const struct bci_strv *dirs = &b->r->firmware_dirs;
	size_t dir_count = dirs->count ? dirs->count : 1;

	for (size_t i = 0; i < dir_count; i++) {
		const char *dir = dirs->count ? dirs->items[i] : DEFAULT_FIRMWARE_DIR;

		for (size_t s = 0; s < sizeof(suffixes) / sizeof(*suffixes); s++) {
			struct stat st;

			if (asprintf(found, "%s/%s%s", dir, name, suffixes[s]) < 0)
				return -ENOMEM;
			if (stat(*found, &st) == 0 && S_ISREG(st.st_mode)) {
				if (asprintf(dest, "/lib/firmware/%s%s", name, suffixes[s]) < 0) {
					free(*found);
					return -ENOMEM;
				}
				return 1;
			}
			free(*found);
		}
	}
	return 0;
}

static int image_add_firmware(struct image_build *b)
{
	struct bci_strv done = { 0 };
	int ret = 0;

	for (size_t i = 0; i < b->modules.count && !ret; i++) {
		const struct builder_module *m = &b->modules.modules[i];

		for (size_t j = 0; j < m->firmware_count && !ret; j++) {
			char *found, *dest;

			if (bci_strv_contains(&done, m->firmware[j]))
				continue;
			ret = bci_strv_add(&done, m->firmware[j]);
			if (ret < 0)
				break;
			ret = image_find_firmware(b, m->firmware[j], &found, &dest);
			if (ret == 0) {
				fprintf(stderr, "bootci-builder: warning: firmware '%s' of module '%s' not found\n",
					m->firmware[j], m->name);
				b->o->warnings++;
			} else if (ret > 0) {
				ret = image_add_file(b, "firmware", found, dest);
				free(found);
				free(dest);
			}
		}
	}
	bci_strv_free(&done);
	return ret;
}

/*
 * The interpreter of the script closure file @index: the image's own (a spec's
 * /bin/sh -> busybox, or a program already in), else the sysroot's with its
 * ELF closure; neither is an error naming it.
 */
static int image_add_script_interpreter(struct image_build *b, size_t index)
{
	const char *interp = b->closure.files[index].script_interpreter;
	char *host;
	int ret;

	if (image_spec_entry(b, interp))
		return 0;
	if (asprintf(&host, "%s%s", b->o->sysroot && strcmp(b->o->sysroot, "/") ? b->o->sysroot : "", interp) < 0)
		return -ENOMEM;
	if (access(host, X_OK) < 0) {
		ret = -errno;
		bci_message(b->err, b->err_size, "script %s: its interpreter %s is neither in the image nor in the "
			    "sysroot (%s: %s)", b->closure.files[index].image_path, interp, host,
			    strerror(-ret));
		free(host);
		return ret;
	}
	/* May move the closure's files: @index is not used after this. */
	ret = image_closure_add(b, host, interp);
	free(host);
	return ret;
}

static int image_add_closure_entries(struct image_build *b)
{
	int ret = 0;

	for (size_t i = 0; i < b->r->program_count && !ret; i++) {
		ret = image_spec_safe(b, "program", b->r->programs[i].source);
		if (!ret)
			ret = image_closure_add(b, b->r->programs[i].source, b->r->programs[i].image_path);
	}
	if (!ret)
		ret = image_add_igt(b);
	for (size_t i = 0; i < b->r->file_count && !ret; i++)
		ret = image_add_file(b, "file", b->r->files[i].source, b->r->files[i].image_path);
	/* A script's interpreter may add to the closure: the count is read again each time. */
	for (size_t i = 0; b->closure_ready && i < b->closure.count && !ret; i++) {
		const struct builder_elf_file *f = &b->closure.files[i];

		if (f->link_target)
			ret = image_add_symlink(b, "interpreter", f->image_path, f->link_target);
		else
			ret = image_add_file(b, f->needed_by ? "library" : "program", f->source, f->image_path);
		if (!ret && f->script_interpreter)
			ret = image_add_script_interpreter(b, i);
	}
	return ret;
}

/* Puts the finished image folder at OUT, replacing an older one whole. */
static int image_commit(struct image_build *b)
{
	struct stat st;

	int ret;

	if (lstat(b->o->out, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			bci_message(b->err, b->err_size, "%s: exists and is not a folder", b->o->out);
			return -EEXIST;
		}
		if (renameat2(AT_FDCWD, b->dir, AT_FDCWD, b->o->out, RENAME_EXCHANGE) < 0) {
			ret = -errno;
			bci_message(b->err, b->err_size, "%s: cannot replace: %s", b->o->out, strerror(-ret));
			return ret;
		}
	} else if (rename(b->dir, b->o->out) < 0) {
		ret = -errno;
		bci_message(b->err, b->err_size, "%s: %s", b->o->out, strerror(-ret));
		return ret;
	}
	/* The old image (if any) is now at b->dir and goes with the temporary folder. */
	ret = bci_fsync_parent(b->o->out);
	return ret;
}

static int image_run(struct image_build *b)
{
	struct builder_cpio_options cpio = { .compression = b->r->compression, .mtime = b->o->epoch };
	char *initrd = NULL, *vmlinuz = NULL, *manifest = NULL, manifest_tmp[PATH_MAX];
	int manifest_fd = -1, ret;

	b->o->kernel.scratch = b->work;
	ret = builder_kernel_open(&b->o->kernel, &b->kernel, b->err, b->err_size);
	if (ret < 0)
		return ret;
	b->spec = builder_spec_new();
	if (!b->spec)
		return -ENOMEM;
	for (size_t i = 0; i < b->r->specs.count && !ret; i++)
		ret = builder_spec_parse_file(b->spec, b->r->specs.items[i], b->err, b->err_size);
	if (!ret)
		ret = image_stage_modules(b);
	if (!ret)
		ret = image_add_firmware(b);
	if (!ret)
		ret = image_add_closure_entries(b);
	if (!ret)
		ret = builder_spec_finalize(b->spec, b->err, b->err_size);
	if (!ret)
		ret = image_check_executor_files(b);
	if (ret < 0)
		return ret;

	if ((ret = image_path(b, &initrd, b->dir, "initrd.img")) < 0 ||
	    (ret = image_path(b, &vmlinuz, b->dir, "vmlinuz")) < 0)
		goto out;
	ret = builder_cpio_write_file(b->spec, initrd, &cpio, b->err, b->err_size);
	if (!ret)
		ret = image_copy_file(b->kernel.vmlinuz, vmlinuz, 0644, b->err, b->err_size);
	if (ret < 0)
		goto out;
	if (b->r->kind == BUILDER_IMAGE_TEST)
		ret = image_outputs_test(b, initrd);
	else
		ret = image_outputs_known_good(b, initrd);
	if (ret < 0)
		goto out;
	if (b->o->manifest) {
		ret = image_manifest(b, &manifest);
		if (ret < 0)
			goto out;
		manifest_fd = bci_atomic_open(b->o->manifest, manifest_tmp, 0644);
		if (manifest_fd < 0) {
			ret = manifest_fd;
			bci_message(b->err, b->err_size, "%s: %s", b->o->manifest, strerror(-ret));
			goto out;
		}
		ret = bci_write_all(manifest_fd, manifest, strlen(manifest));
		if (ret < 0) {
			bci_message(b->err, b->err_size, "%s: %s", b->o->manifest, strerror(-ret));
			goto out;
		}
	}
	ret = image_commit(b);
	if (!ret && manifest_fd >= 0) {
		ret = bci_atomic_commit(manifest_fd, manifest_tmp, b->o->manifest);
		manifest_fd = -1;
		if (ret < 0)
			bci_message(b->err, b->err_size, "%s: %s", b->o->manifest, strerror(-ret));
	}
out:
	if (manifest_fd >= 0)
		bci_atomic_abort(manifest_fd, manifest_tmp);
	free(manifest);
	free(vmlinuz);
	free(initrd);
	return ret;
}

/*
 * Whether @manifest would be written inside @out (or a folder of it): the
 * build replaces that folder whole at its end, and a manifest staged there
 * would go with the old folder. Only paths that exist are compared.
 */
static bool manifest_inside_out(const char *manifest, const char *out)
{
	char *copy = strdup(manifest), *dir = NULL, *real_out = NULL;
	bool inside = false;
	size_t n;

	if (!copy)
		return false;
	dir = realpath(dirname(copy), NULL);
	real_out = realpath(out, NULL);
	if (dir && real_out) {
		n = strlen(real_out);
		inside = !strncmp(dir, real_out, n) && (dir[n] == '\0' || dir[n] == '/');
	}
	free(real_out);
	free(dir);
	free(copy);
	return inside;
}

int builder_image_build(struct builder_image_options *o, char *err, size_t err_size)
{
	struct image_build b = { .o = o, .r = o->recipe, .err = err, .err_size = err_size };
	char *real;
	int ret;

	if (o->recipe->kind == BUILDER_IMAGE_KNOWN_GOOD && (o->igt || o->testlist)) {
		bci_message(err, err_size, "the known-good image runs no tests: --igt and --testlist are for test images");
		return -EINVAL;
	}
	if (o->manifest && manifest_inside_out(o->manifest, o->out)) {
		bci_message(err, err_size, "--manifest %s is inside --out %s, which the build replaces"
			    " whole: write it beside the folder, then move it in", o->manifest, o->out);
		return -EINVAL;
	}
	if (asprintf(&b.tmp, "%s.tmp.XXXXXX", o->out) < 0)
		return -ENOMEM;
	if (!mkdtemp(b.tmp)) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", b.tmp, strerror(-ret));
		free(b.tmp);
		return ret;
	}
	/*
	 * Absolute, as the staged files' paths in the spec are (spec_from_dir
	 * resolves its folder): the manifest tells them apart by this prefix.
	 */
	real = realpath(b.tmp, NULL);
	if (!real) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", b.tmp, strerror(-ret));
		goto out;
	}
	free(b.tmp);
	b.tmp = real;
	if (asprintf(&b.work, "%s/work", b.tmp) < 0 || asprintf(&b.dir, "%s/image", b.tmp) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	if (mkdir(b.work, 0755) < 0 || mkdir(b.dir, 0755) < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", b.tmp, strerror(-ret));
		goto out;
	}
	ret = image_run(&b);
out:
	if (b.closure_ready)
		builder_elf_closure_free(&b.closure);
	builder_module_list_clear(&b.modules);
	builder_spec_free(b.spec);
	builder_kernel_clear(&b.kernel);
	bci_remove_tree(b.tmp);
	free(b.executor_conf_origin);
	free(b.executor_conf);
	free(b.dir);
	free(b.work);
	free(b.tmp);
	return ret;
}
