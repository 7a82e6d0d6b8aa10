// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakesys.h"

#include "fsutil.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void fakesys_add_dmi(struct fakeroot *root, const char *name, const char *value)
{
	char path[256], text[1024];

	snprintf(path, sizeof(path), "/sys/class/dmi/id/%s", name);
	snprintf(text, sizeof(text), "%s\n", value);
	fakeroot_write(root, path, text);
}

static void write_id(struct fakeroot *root, const char *dir, const char *name, const char *fmt,
		     unsigned value)
{
	char path[PATH_MAX], text[32];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(text, sizeof(text), fmt, value);
	fakeroot_write(root, path, text);
}

static void make_link(struct fakeroot *root, const char *target, const char *path)
{
	char full[PATH_MAX + 256], *slash;

	snprintf(full, sizeof(full), "%s%s", root->dir, path);
	slash = strrchr(full, '/');
	*slash = '\0';
	assert_int_equal(bci_mkdir_p(full, 0755), 0);
	*slash = '/';
	assert_int_equal(symlink(target, full), 0);
}

void fakesys_add_pci(struct fakeroot *root, const struct fakesys_pci *f)
{
	char dir[256], path[512], alias[128], target[256];

	snprintf(dir, sizeof(dir), "/sys/devices/pci0000:00/%s", f->slot);
	write_id(root, dir, "vendor", "0x%04x\n", f->vendor);
	write_id(root, dir, "device", "0x%04x\n", f->device);
	write_id(root, dir, "subsystem_vendor", "0x%04x\n", f->subsystem_vendor);
	write_id(root, dir, "subsystem_device", "0x%04x\n", f->subsystem_device);
	write_id(root, dir, "class", "0x%06x\n", f->class_code);
	write_id(root, dir, "revision", "0x%02x\n", f->revision);
	/* The kernel's pci modalias: upper-case hex, class split in three. */
	snprintf(alias, sizeof(alias), "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X", f->vendor,
		 f->device, f->subsystem_vendor, f->subsystem_device, f->class_code >> 16,
		 (f->class_code >> 8) & 0xff, f->class_code & 0xff);
	fakesys_add_modalias(root, dir + strlen("/sys/devices/"), alias);
	if (f->driver) {
		snprintf(target, sizeof(target), "../../../bus/pci/drivers/%s", f->driver);
		snprintf(path, sizeof(path), "%s/driver", dir);
		make_link(root, target, path);
	}
	/* sysfs is full of links back up the tree: the walk must not follow them. */
	snprintf(path, sizeof(path), "%s/subsystem", dir);
	make_link(root, "../../../bus/pci", path);
	snprintf(target, sizeof(target), "../../../devices/pci0000:00/%s", f->slot);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", f->slot);
	make_link(root, target, path);
}

void fakesys_add_modalias(struct fakeroot *root, const char *device, const char *alias)
{
	char path[512], text[512];

	snprintf(path, sizeof(path), "/sys/devices/%s/modalias", device);
	snprintf(text, sizeof(text), "%s\n", alias);
	fakeroot_write(root, path, text);
}
