// SPDX-License-Identifier: MIT
/*
 * What a build leaves in its output folder: the test image's boot.ipxe (and
 * UKI), the known-good image's disk image, UKI, layout and registration
 * script; and the manifest listing every file of the image with its origin.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cpio_spec.h"
#include "disk_image.h"
#include "fsutil.h"
#include "sha256.h"
#include "uki.h"

int image_path(struct image_build *b, char **out, const char *dir, const char *name)
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
		bci_message(b->err, b->err_size, "%s: %s", path, strerror(-ret));
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
	ret = builder_uki_make(&uki, out, b->err, b->err_size);
	free(osrel);
	return ret;
}

int image_outputs_test(struct image_build *b, const char *initrd)
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

int image_outputs_known_good(struct image_build *b, const char *initrd)
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
	ret = builder_disk_make(&d, disk, layout, b->err, b->err_size);
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
int image_manifest(struct image_build *b, char **text)
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
			ret = bci_sha256_file(path, hex, &size);
			if (!strcmp(outputs[i], "vmlinuz"))
				origin = b->kernel.origin;
			if (!ret)
				fprintf(f, "%s %llu %06o %s %s\n", hex, (unsigned long long)size,
					(unsigned int)st.st_mode, outputs[i], origin);
			else
				bci_message(b->err, b->err_size, "%s: %s", path, strerror(-ret));
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

			ret = bci_sha256_file(e->location, hex, &size);
			if (ret < 0) {
				bci_message(b->err, b->err_size, "%s: %s", e->location, strerror(-ret));
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
