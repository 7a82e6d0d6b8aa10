// SPDX-License-Identifier: MIT
#include "image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpio_spec.h"
#include "cpio_writer.h"
#include "disk_image.h"
#include "elf_deps.h"
#include "executor_keys.h"
#include "fsutil.h"
#include "module_stage.h"
#include "sha256.h"
#include "spec_from_dir.h"
#include "testlist.h"
#include "uki.h"

#define DEFAULT_FIRMWARE_DIR "/lib/firmware"
/* The executor's configuration file (executor/settings.c), as a spec path. */
#define EXECUTOR_CONF_PATH "etc/bootci/executor.conf"

struct image_build {
	struct builder_image_options *o;
	const struct builder_recipe *r;
	struct builder_error *err;
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


static int image_copy_file(const char *from, const char *to, mode_t mode, struct builder_error *err)
{
	const char *failed;
	int ret = bci_copy_file(from, to, mode, 1, &failed);

	if (ret < 0)
		builder_error_set(err, "%s: %s", failed, strerror(-ret));
	return ret;
}

/* spec syntax separates fields by white space: a path holding some cannot be said. */
static int image_spec_safe(struct image_build *b, const char *what, const char *path)
{
	for (const char *p = path; *p; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			builder_error_set(b->err, "%s '%s': white space or control characters in the path",
					  what, path);
			return -EINVAL;
		}
	}
	if (strstr(path, "${")) {
		builder_error_set(b->err, "%s '%s': '${' in the path", what, path);
		return -EINVAL;
	}
	return 0;
}

static int image_parse_text(struct image_build *b, const char *name, const char *text, size_t len)
{
	return builder_spec_parse(b->spec, name, text, len, b->err);
}

/* Adds a whole host folder at @dest. */
static int image_add_dir(struct image_build *b, const char *name, const char *source, const char *dest)
{
	char *text;
	size_t len;
	int ret = builder_spec_from_dir(source, dest, &text, &len, b->err);

	if (ret < 0)
		return ret;
	ret = image_parse_text(b, name, text, len);
	free(text);
	return ret;
}

/* Adds one host file at @dest with its own permission bits. */
static int image_add_file(struct image_build *b, const char *name, const char *source, const char *dest)
{
	struct stat st;
	char *line;
	int ret;

	if (stat(source, &st) < 0) {
		ret = -errno;
		builder_error_set(b->err, "%s: %s: %s", name, source, strerror(-ret));
		return ret;
	}
	if ((ret = image_spec_safe(b, name, source)) < 0 || (ret = image_spec_safe(b, name, dest)) < 0)
		return ret;
	if (S_ISDIR(st.st_mode))
		return image_add_dir(b, name, source, dest);
	if (asprintf(&line, "file %s %s %04o 0 0\n", dest, source, (unsigned int)(st.st_mode & 07777)) < 0)
		return -ENOMEM;
	ret = image_parse_text(b, name, line, strlen(line));
	free(line);
	return ret;
}

static int image_add_symlink(struct image_build *b, const char *name, const char *path, const char *target)
{
	char *line;
	int ret;

	if ((ret = image_spec_safe(b, name, path)) < 0 || (ret = image_spec_safe(b, name, target)) < 0)
		return ret;
	if (asprintf(&line, "slink %s %s 0777 0 0\n", path, target) < 0)
		return -ENOMEM;
	ret = image_parse_text(b, name, line, strlen(line));
	free(line);
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
				    &b->modules, b->err);
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

static int image_closure_add(struct image_build *b, const char *source, const char *dest)
{
	if (!b->closure_ready) {
		int ret = builder_elf_closure_init(&b->closure, b->o->sysroot, b->err);

		if (ret < 0)
			return ret;
		b->closure_ready = 1;
	}
	return builder_elf_closure_add(&b->closure, source, dest, b->err);
}

static int image_compare_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every executable regular file of @dir goes to @dest, with its ELF closure. */
static int image_add_igt_tests(struct image_build *b, const char *dir, const char *dest)
{
	DIR *d = opendir(dir);
	struct bci_strv names = { 0 };
	struct dirent *e;
	int ret = 0;

	if (!d) {
		ret = -errno;
		builder_error_set(b->err, "IGT tests folder %s: %s", dir, strerror(-ret));
		return ret;
	}
	while ((e = readdir(d)) && !ret) {
		char *path;
		struct stat st;

		if (e->d_name[0] == '.' || asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
			ret = bci_strv_add(&names, e->d_name);
		free(path);
	}
	closedir(d);
	/* readdir order depends on the file system: sort, so the closure is visited the same way. */
	if (names.count)
		qsort(names.items, names.count, sizeof(*names.items), image_compare_names);
	for (size_t i = 0; i < names.count && !ret; i++) {
		char *source, *image;

		if (asprintf(&source, "%s/%s", dir, names.items[i]) < 0)
			ret = -ENOMEM;
		else if (asprintf(&image, "%s/%s", dest, names.items[i]) < 0) {
			free(source);
			ret = -ENOMEM;
		} else {
			ret = image_spec_safe(b, "IGT test", source);
			if (!ret)
				ret = image_closure_add(b, source, image);
			free(source);
			free(image);
		}
	}
	if (!ret && !names.count)
		ret = -ENOENT;
	bci_strv_free(&names);
	if (ret == -ENOENT) {
		builder_error_set(b->err, "IGT tests folder %s: no test program in it", dir);
		ret = -ENOENT;
	}
	return ret;
}

static int image_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * An image given a testlist runs it: its executor.conf gets testlist= (and
 * test_dir= when IGT came with it) appended, so these win over what the spec's
 * file said before and that file stays the one place saying what the image
 * runs (bootci.<key>= on the command line still overrides it). An image
 * without one gets one holding just these keys.
 */
static int image_run_testlist(struct image_build *b)
{
	struct builder_entry *conf = NULL;
	char *old_text = NULL, *text = NULL, *line = NULL;
	size_t old_len = 0;
	int ret;

	for (size_t i = 0; i < b->spec->count; i++)
		if (!strcmp(b->spec->entries[i].path, EXECUTOR_CONF_PATH))
			conf = &b->spec->entries[i];
	if (conf && conf->type != BUILDER_ENTRY_FILE) {
		builder_error_set(b->err, "%s:%u: /" EXECUTOR_CONF_PATH " is not a file: the testlist "
				  "cannot be set in it", conf->origin, conf->line);
		return -EINVAL;
	}
	if (conf) {
		ret = bci_read_file(conf->location, &old_text, &old_len, 1 << 20);
		if (ret < 0) {
			builder_error_set(b->err, "%s: %s", conf->location, strerror(-ret));
			return ret;
		}
	}
	if (asprintf(&text, "%.*s%s# bootci-builder test-image: run the testlist it put in the image.\n"
		     "testlist = %s\n%s%s%s", (int)old_len, old_text ? old_text : "",
		     old_len && old_text[old_len - 1] != '\n' ? "\n" : "", b->r->testlist_dest,
		     b->o->igt ? "test_dir = " : "", b->o->igt ? b->r->igt_tests_dest : "",
		     b->o->igt ? "\n" : "") < 0) {
		text = NULL;
		ret = -ENOMEM;
		goto out;
	}
	if (asprintf(&b->executor_conf, "%s/executor.conf", b->work) < 0) {
		b->executor_conf = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = bci_write_file_atomic(b->executor_conf, text, strlen(text), 0644);
	if (ret < 0) {
		builder_error_set(b->err, "%s: %s", b->executor_conf, strerror(-ret));
		goto out;
	}
	if (!conf) {
		if (asprintf(&line, "file /" EXECUTOR_CONF_PATH " %s 0644 0 0\n", b->executor_conf) < 0) {
			line = NULL;
			ret = -ENOMEM;
		} else {
			ret = image_parse_text(b, "testlist", line, strlen(line));
		}
		goto out;
	}
	/* Hard links of the file (one `file` line) must keep the same data. */
	b->executor_conf_origin = conf->location;
	for (size_t i = 0; i < b->spec->count && !ret; i++) {
		struct builder_entry *e = &b->spec->entries[i];
		char *copy;

		if (e != conf && (conf->link_group == BUILDER_NO_LINK_GROUP || e->link_group != conf->link_group ||
				  e->type != BUILDER_ENTRY_FILE))
			continue;
		copy = strdup(b->executor_conf);
		if (!copy) {
			ret = -ENOMEM;
			break;
		}
		if (e->location != b->executor_conf_origin)
			free(e->location);
		e->location = copy;
	}
out:
	free(line);
	free(text);
	free(old_text);
	return ret;
}

static int image_add_igt(struct image_build *b)
{
	const char *igt = b->o->igt;
	char *tests = NULL, *data = NULL, *list = NULL;
	int ret = 0;

	if (igt) {
		/* An install prefix (meson install) or a build folder (its tests/ holds the binaries). */
		if (asprintf(&tests, "%s/libexec/igt-gpu-tools", igt) < 0)
			return -ENOMEM;
		if (image_is_dir(tests)) {
			if (asprintf(&data, "%s/share/igt-gpu-tools", igt) < 0 ||
			    asprintf(&list, "%s/test-list.txt", tests) < 0) {
				ret = -ENOMEM;
				goto out;
			}
		} else {
			free(tests);
			if (asprintf(&tests, "%s/tests", igt) < 0) {
				tests = NULL;
				ret = -ENOMEM;
				goto out;
			}
			if (asprintf(&list, "%s/test-list.txt", tests) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			if (!image_is_dir(tests)) {
				builder_error_set(b->err, "missing IGT prefix: %s has neither libexec/igt-gpu-tools/ "
						  "(install prefix) nor tests/ (build folder)", igt);
				ret = -ENOENT;
				goto out;
			}
			/* meson copies the data files (1080p-left.png, pass.png...) to data/ of the build. */
			if (asprintf(&data, "%s/data", igt) < 0) {
				data = NULL;
				ret = -ENOMEM;
				goto out;
			}
		}
		ret = image_add_igt_tests(b, tests, b->r->igt_tests_dest);
		if (!ret && data && image_is_dir(data))
			ret = image_add_dir(b, "IGT data", data, b->r->igt_data_dest);
		if (ret < 0)
			goto out;
	}
	if (b->o->testlist) {
		ret = image_add_file(b, "testlist", b->o->testlist, b->r->testlist_dest);
	} else if (list) {
		if (access(list, R_OK) < 0) {
			builder_error_set(b->err, "IGT %s has no test-list.txt (%s): give --testlist", igt, list);
			ret = -ENOENT;
		} else {
			ret = image_add_file(b, "testlist", list, b->r->testlist_dest);
		}
	}
	if (!ret && (b->o->testlist || list))
		ret = image_run_testlist(b);
out:
	free(tests);
	free(data);
	free(list);
	return ret;
}

static int image_spec_has(const struct image_build *b, const char *path)
{
	for (size_t i = 0; i < b->spec->count; i++)
		if (!strcmp(b->spec->entries[i].path, path + strspn(path, "/")))
			return 1;
	return 0;
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

	if (image_spec_has(b, interp))
		return 0;
	if (asprintf(&host, "%s%s", b->o->sysroot && strcmp(b->o->sysroot, "/") ? b->o->sysroot : "", interp) < 0)
		return -ENOMEM;
	if (access(host, X_OK) < 0) {
		ret = -errno;
		builder_error_set(b->err, "script %s: its interpreter %s is neither in the image nor in the "
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

static int image_path(struct image_build *b, char **out, const char *dir, const char *name)
{
	(void)b;
	return asprintf(out, "%s/%s", dir, name) < 0 ? -ENOMEM : 0;
}

static int image_write_text(struct image_build *b, const char *name, const char *text, mode_t mode)
{
	char *path;
	int ret = image_path(b, &path, b->dir, name);

	if (ret < 0)
		return ret;
	ret = bci_write_file_atomic(path, text, strlen(text), mode);
	if (ret < 0)
		builder_error_set(b->err, "%s: %s", path, strerror(-ret));
	free(path);
	return ret;
}

static int image_make_uki(struct image_build *b, const char *initrd, const char *out)
{
	char *osrel;
	struct builder_uki uki = {
		.stub = b->o->stub, .kernel = b->kernel.vmlinuz, .initrd = initrd,
		.cmdline = b->r->cmdline, .epoch = b->o->epoch, .work_dir = b->work,
	};
	int ret;

	if (asprintf(&osrel, "NAME=\"bootci\"\nID=bootci\nVERSION_ID=\"%s\"\n"
		     "PRETTY_NAME=\"bootci %s image (%s)\"\n", b->kernel.kver,
		     b->r->kind == BUILDER_IMAGE_TEST ? "test" : "known-good", b->kernel.kver) < 0)
		return -ENOMEM;
	uki.osrel = osrel;
	ret = builder_uki_make(&uki, out, b->err);
	free(osrel);
	return ret;
}

static int image_outputs_test(struct image_build *b, const char *initrd)
{
	char *text, *uki;
	int ret;

	/* initrd= on the command line: the EFI stub of a kernel loaded by iPXE finds the initrd by name. */
	if (asprintf(&text, "#!ipxe\nkernel vmlinuz initrd=initrd.img %s\ninitrd initrd.img\nboot\n",
		     b->r->cmdline) < 0)
		return -ENOMEM;
	ret = image_write_text(b, "boot.ipxe", text, 0644);
	free(text);
	if (ret < 0 || !b->r->uki)
		return ret;
	ret = image_path(b, &uki, b->dir, "bootci.efi");
	if (!ret) {
		ret = image_make_uki(b, initrd, uki);
		free(uki);
	}
	return ret;
}

static int image_outputs_known_good(struct image_build *b, const char *initrd)
{
	const struct builder_recipe *r = b->r;
	char *uki = NULL, *disk = NULL, *layout = NULL, *text = NULL;
	struct builder_esp_file files[2];
	struct builder_disk d = {
		.esp_mib = r->esp_size_mib, .results_mib = r->results_size_mib,
		.disk_guid = r->disk_guid, .esp_partuuid = r->esp_partuuid,
		.results_partuuid = r->results_partuuid, .results_fs_uuid = r->results_fs_uuid,
		.esp_volume_id = r->esp_volume_id, .esp_files = files, .esp_file_count = 2,
		.epoch = b->o->epoch, .work_dir = b->work,
	};
	int ret;

	if ((ret = image_path(b, &uki, b->dir, "known-good.efi")) < 0 ||
	    (ret = image_path(b, &disk, b->dir, "disk.img")) < 0 ||
	    (ret = image_path(b, &layout, b->dir, "layout")) < 0)
		goto out;
	ret = image_make_uki(b, initrd, uki);
	if (ret < 0)
		goto out;
	/* The fallback path boots with no entry at all; the named one is what BootNext points at. */
	files[0] = (struct builder_esp_file){ uki, "EFI/BOOT/BOOTX64.EFI" };
	files[1] = (struct builder_esp_file){ uki, "EFI/bootci/known-good.efi" };
	ret = builder_disk_make(&d, disk, layout, b->err);
	if (ret < 0)
		goto out;
	/*
	 * efibootmgr --create would put the entry first in BootOrder: the machine
	 * would stop netbooting its jobs. The entry is created alone, then appended.
	 */
	if (asprintf(&text,
		     "#!/bin/sh\n"
		     "# Registers the EFI boot entry '%s' of the known-good image on a test machine\n"
		     "# (as root, after disk.img was written to DISK):\n"
		     "#   register-boot-entry.sh /dev/DISK\n"
		     "# The entry goes at the end of BootOrder, so the machine still netboots first\n"
		     "# (the executor reaches it through BootNext). Run again, it reuses the entry\n"
		     "# with this label and leaves BootOrder alone if the entry is already in it.\n"
		     "set -eu\n"
		     "disk=${1:?usage: $0 /dev/DISK}\n"
		     "label='%s'\n"
		     "\n"
		     "# The number (####) of the first Boot#### entry with this label.\n"
		     "entry_number() {\n"
		     "\tefibootmgr | awk -v label=\"$label\" '\n"
		     "\t\t/^Boot[0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f]/ {\n"
		     "\t\t\tname = substr($0, 11) # after \"Boot####* \" (\" \" for an inactive one)\n"
		     "\t\t\tsub(/\\t.*/, \"\", name) # efibootmgr 18 prints the device path after a tab\n"
		     "\t\t\tif (name == label) { print substr($0, 5, 4); exit }\n"
		     "\t\t}'\n"
		     "}\n"
		     "\n"
		     "number=$(entry_number)\n"
		     "if [ -z \"$number\" ]; then\n"
		     "\tefibootmgr --create-only --disk \"$disk\" --part 1 --label \"$label\" \\\n"
		     "\t\t--loader '\\EFI\\bootci\\known-good.efi' >/dev/null\n"
		     "\tnumber=$(entry_number)\n"
		     "\tif [ -z \"$number\" ]; then\n"
		     "\t\techo \"$0: efibootmgr made no entry '$label'\" >&2\n"
		     "\t\texit 1\n"
		     "\tfi\n"
		     "fi\n"
		     "order=$(efibootmgr | sed -n 's/^BootOrder: *//p')\n"
		     "case \",$order,\" in\n"
		     "*\",$number,\"*) ;;\n"
		     "*) efibootmgr --bootorder \"${order:+$order,}$number\" >/dev/null ;;\n"
		     "esac\n"
		     "echo \"$label is Boot$number, BootOrder: $(efibootmgr | sed -n 's/^BootOrder: *//p')\"\n",
		     r->boot_entry, r->boot_entry) < 0) {
		text = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = image_write_text(b, "register-boot-entry.sh", text, 0755);
out:
	free(text);
	free(layout);
	free(disk);
	free(uki);
	return ret;
}

/* Is @path inside the scratch folder (made during this build, gone after it)? */
static int image_in_work(const struct image_build *b, const char *path)
{
	size_t len = strlen(b->work);

	return !strncmp(path, b->work, len) && path[len] == '/';
}

static const char *image_entry_type(enum builder_entry_type type, unsigned int *type_bits)
{
	switch (type) {
	case BUILDER_ENTRY_FILE: *type_bits = S_IFREG; return "file";
	case BUILDER_ENTRY_DIR: *type_bits = S_IFDIR; return "dir";
	case BUILDER_ENTRY_NOD: *type_bits = 0; return "nod";
	case BUILDER_ENTRY_SLINK: *type_bits = S_IFLNK; return "slink";
	case BUILDER_ENTRY_PIPE: *type_bits = S_IFIFO; return "pipe";
	case BUILDER_ENTRY_SOCK: *type_bits = S_IFSOCK; return "sock";
	}
	*type_bits = 0;
	return "?";
}

/*
 * The manifest: "SHA256 SIZE MODE PATH ORIGIN" per line, the outputs first
 * (PATH relative to OUT), then every initramfs entry as initrd.img:/PATH.
 * SHA256 is "-" for what has no data; MODE is octal with the file type bits.
 */
static int image_manifest(struct image_build *b, char **text)
{
	const char *outputs[] = { "boot.ipxe", "bootci.efi", "disk.img", "initrd.img",
				  "known-good.efi", "layout", "register-boot-entry.sh", "vmlinuz" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret = 0;

	if (!f)
		return -ENOMEM;
	fprintf(f, "# bootci-builder manifest: SHA256 SIZE MODE PATH ORIGIN\n");
	for (size_t i = 0; i < sizeof(outputs) / sizeof(*outputs) && !ret; i++) {
		char *path, hex[65];
		const char *origin = "bootci-builder";
		struct stat st;
		uint64_t size;

		if (image_path(b, &path, b->dir, outputs[i]) < 0) {
			ret = -ENOMEM;
			break;
		}
		if (stat(path, &st) == 0) {
			ret = builder_sha256_file(path, hex, &size);
			if (!strcmp(outputs[i], "vmlinuz"))
				origin = b->kernel.origin;
			if (!ret)
				fprintf(f, "%s %llu %06o %s %s\n", hex, (unsigned long long)size,
					(unsigned int)st.st_mode, outputs[i], origin);
			else
				builder_error_set(b->err, "%s: %s", path, strerror(-ret));
		}
		free(path);
	}
	for (size_t i = 0; i < b->spec->count && !ret; i++) {
		const struct builder_entry *e = &b->spec->entries[i];
		unsigned int type_bits;
		const char *type = image_entry_type(e->type, &type_bits);

		if (e->type == BUILDER_ENTRY_NOD)
			type_bits = e->dev_kind == 'b' ? S_IFBLK : S_IFCHR;
		if (e->type == BUILDER_ENTRY_FILE) {
			const char *origin = e->location;
			char *original = NULL, hex[65];
			uint64_t size;

			ret = builder_sha256_file(e->location, hex, &size);
			if (ret < 0) {
				builder_error_set(b->err, "%s: %s", e->location, strerror(-ret));
				break;
			}
			if (b->executor_conf && !strcmp(e->location, b->executor_conf)) {
				origin = "bootci-builder";
				if (b->executor_conf_origin) {
					if (asprintf(&original, "%s+bootci-builder", b->executor_conf_origin) < 0) {
						ret = -ENOMEM;
						break;
					}
					origin = original;
				}
			}
			/* Staged modules came from the kernel's tree; the indexes are depmod's. */
			if (image_in_work(b, e->location) && !strncmp(e->path, "lib/modules/", 12)) {
				if (asprintf(&original, "%s/%s", b->kernel.modules_origin, e->path) < 0) {
					ret = -ENOMEM;
					break;
				}
				origin = original;
				/* modules.order and modules.builtin* are copied; the other indexes are depmod's. */
				if (!strncmp(strrchr(e->path, '/') + 1, "modules.", 8) &&
				    strcmp(strrchr(e->path, '/') + 1, "modules.order") &&
				    strncmp(strrchr(e->path, '/') + 1, "modules.builtin", 15))
					origin = "depmod";
			}
			fprintf(f, "%s %llu %06o initrd.img:/%s %s\n", hex, (unsigned long long)size,
				type_bits | e->mode, e->path, origin);
			free(original);
		} else if (e->type == BUILDER_ENTRY_SLINK) {
			fprintf(f, "- 0 %06o initrd.img:/%s ->%s\n", type_bits | e->mode, e->path, e->location);
		} else if (e->line) {
			fprintf(f, "- 0 %06o initrd.img:/%s %s:%u\n", type_bits | e->mode, e->path,
				e->origin, e->line);
		} else {
			fprintf(f, "- 0 %06o initrd.img:/%s (%s parent)\n", type_bits | e->mode, e->path, type);
		}
	}
	if (fclose(f) != 0 && !ret)
		ret = -ENOMEM;
	if (ret < 0) {
		free(buf);
		return ret;
	}
	*text = buf;
	return 0;
}

/* Puts the finished image folder at OUT, replacing an older one whole. */
static int image_commit(struct image_build *b)
{
	struct stat st;

	int ret;

	if (lstat(b->o->out, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			builder_error_set(b->err, "%s: exists and is not a folder", b->o->out);
			return -EEXIST;
		}
		if (renameat2(AT_FDCWD, b->dir, AT_FDCWD, b->o->out, RENAME_EXCHANGE) < 0) {
			ret = -errno;
			builder_error_set(b->err, "%s: cannot replace: %s", b->o->out, strerror(-ret));
			return ret;
		}
	} else if (rename(b->dir, b->o->out) < 0) {
		ret = -errno;
		builder_error_set(b->err, "%s: %s", b->o->out, strerror(-ret));
		return ret;
	}
	/* The old image (if any) is now at b->dir and goes with the temporary folder. */
	ret = bci_fsync_parent(b->o->out);
	return ret;
}

static const struct builder_entry *image_spec_entry(const struct image_build *b, const char *path)
{
	path += strspn(path, "/");
	for (size_t i = 0; i < b->spec->count; i++)
		if (!strcmp(b->spec->entries[i].path, path))
			return &b->spec->entries[i];
	return NULL;
}

/*
 * The line that put @e in the image, for messages: a recipe `file =` line
 * naming it (or a folder above it), else its spec's line.
 */
static void image_entry_where(const struct image_build *b, const struct builder_entry *e,
			      char *where, size_t size)
{
	for (size_t i = 0; i < b->r->file_count; i++) {
		const char *dest = b->r->files[i].image_path + strspn(b->r->files[i].image_path, "/");
		size_t n = strlen(dest);

		if (!strncmp(e->path, dest, n) && (e->path[n] == '\0' || e->path[n] == '/')) {
			snprintf(where, size, "%s:%u", b->r->name, b->r->files[i].line);
			return;
		}
	}
	snprintf(where, size, "%s:%u", e->origin, e->line);
}

static int image_read_entry(struct image_build *b, const struct builder_entry *e, const char *what,
			    char **text, size_t *len)
{
	char where[PATH_MAX + 32];
	int ret;

	image_entry_where(b, e, where, sizeof(where));
	if (e->type != BUILDER_ENTRY_FILE) {
		builder_error_set(b->err, "%s: %s /%s is not a file", where, what, e->path);
		return -EINVAL;
	}
	ret = bci_read_file(e->location, text, len, 16 << 20);
	if (ret < 0)
		builder_error_set(b->err, "%s: %s /%s: %s: %s", where, what, e->path, e->location,
				  strerror(-ret));
	return ret;
}

static int image_count_test(const struct bci_test_name *name, void *data)
{
	(void)name;
	++*(size_t *)data;
	return 0;
}

/* The testlist the configuration names must be in the image and parse. */
static int image_check_testlist(struct image_build *b, const char *path)
{
	const struct builder_entry *e = image_spec_entry(b, path);
	char where[PATH_MAX + 32], msg[1024], *text = NULL;
	size_t len = 0, tests = 0;
	int ret;

	if (!e) {
		builder_error_set(b->err, "/" EXECUTOR_CONF_PATH ": testlist %s is not in the image", path);
		return -ENOENT;
	}
	ret = image_read_entry(b, e, "testlist", &text, &len);
	if (ret < 0)
		return ret;
	ret = bci_testlist_parse(e->location, text, len, image_count_test, &tests, msg, sizeof(msg));
	if (ret < 0) {
		image_entry_where(b, e, where, sizeof(where));
		builder_error_set(b->err, "%s: testlist %s: %s", where, path, msg);
	}
	free(text);
	return ret;
}

/*
 * The executor.conf and testlist an image carries are checked here through the
 * executor's own key table and testlist parser, so that a typo fails the build,
 * naming the line that put the file in the image, instead of the test
 * machine's boot. An image without executor.conf runs on the defaults.
 */
static int image_check_executor_files(struct image_build *b)
{
	const struct builder_entry *conf = image_spec_entry(b, EXECUTOR_CONF_PATH);
	char where[PATH_MAX + 32], msg[1024], *text = NULL;
	struct bci_config *config = NULL;
	const char *name;
	size_t len = 0;
	int ret;

	if (!conf)
		return 0;
	ret = image_read_entry(b, conf, "executor configuration", &text, &len);
	if (ret < 0)
		return ret;
	/* The file the builder completed keeps the lines of the one it came from. */
	name = b->executor_conf_origin ? b->executor_conf_origin : conf->location;
	ret = bci_executor_config_load(name, text, len, NULL, &config, msg, sizeof(msg));
	if (ret < 0) {
		image_entry_where(b, conf, where, sizeof(where));
		builder_error_set(b->err, "%s: /" EXECUTOR_CONF_PATH ": %s", where, msg);
	} else if (*bci_config_get(config, "testlist")) {
		ret = image_check_testlist(b, bci_config_get(config, "testlist"));
	}
	bci_config_free(config);
	free(text);
	return ret;
}

static int image_run(struct image_build *b)
{
	struct builder_cpio_options cpio = { .compression = b->r->compression, .mtime = b->o->epoch };
	char *initrd = NULL, *vmlinuz = NULL, *manifest = NULL, manifest_tmp[PATH_MAX];
	int manifest_fd = -1, ret;

	b->o->kernel.scratch = b->work;
	ret = builder_kernel_open(&b->o->kernel, &b->kernel, b->err);
	if (ret < 0)
		return ret;
	b->spec = builder_spec_new();
	if (!b->spec)
		return -ENOMEM;
	for (size_t i = 0; i < b->r->specs.count && !ret; i++)
		ret = builder_spec_parse_file(b->spec, b->r->specs.items[i], b->err);
	if (!ret)
		ret = image_stage_modules(b);
	if (!ret)
		ret = image_add_firmware(b);
	if (!ret)
		ret = image_add_closure_entries(b);
	if (!ret)
		ret = builder_spec_finalize(b->spec, b->err);
	if (!ret)
		ret = image_check_executor_files(b);
	if (ret < 0)
		return ret;

	if ((ret = image_path(b, &initrd, b->dir, "initrd.img")) < 0 ||
	    (ret = image_path(b, &vmlinuz, b->dir, "vmlinuz")) < 0)
		goto out;
	ret = builder_cpio_write_file(b->spec, initrd, &cpio, b->err);
	if (!ret)
		ret = image_copy_file(b->kernel.vmlinuz, vmlinuz, 0644, b->err);
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
			builder_error_set(b->err, "%s: %s", b->o->manifest, strerror(-ret));
			goto out;
		}
		ret = bci_write_all(manifest_fd, manifest, strlen(manifest));
		if (ret < 0) {
			builder_error_set(b->err, "%s: %s", b->o->manifest, strerror(-ret));
			goto out;
		}
	}
	ret = image_commit(b);
	if (!ret && manifest_fd >= 0) {
		ret = bci_atomic_commit(manifest_fd, manifest_tmp, b->o->manifest);
		manifest_fd = -1;
		if (ret < 0)
			builder_error_set(b->err, "%s: %s", b->o->manifest, strerror(-ret));
	}
out:
	if (manifest_fd >= 0)
		bci_atomic_abort(manifest_fd, manifest_tmp);
	free(manifest);
	free(vmlinuz);
	free(initrd);
	return ret;
}

int builder_image_build(struct builder_image_options *o, struct builder_error *err)
{
	struct image_build b = { .o = o, .r = o->recipe, .err = err };
	char *real;
	int ret;

	if (o->recipe->kind == BUILDER_IMAGE_KNOWN_GOOD && (o->igt || o->testlist)) {
		builder_error_set(err, "the known-good image runs no tests: --igt and --testlist are for test images");
		return -EINVAL;
	}
	if (asprintf(&b.tmp, "%s.tmp.XXXXXX", o->out) < 0)
		return -ENOMEM;
	if (!mkdtemp(b.tmp)) {
		ret = -errno;
		builder_error_set(err, "%s: %s", b.tmp, strerror(-ret));
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
		builder_error_set(err, "%s: %s", b.tmp, strerror(-ret));
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
		builder_error_set(err, "%s: %s", b.tmp, strerror(-ret));
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
