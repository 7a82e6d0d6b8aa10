// SPDX-License-Identifier: MIT
/*
 * The firmware's boot configuration for the manifest, read through Debian's
 * libefivar/libefiboot: BootCurrent, BootOrder and every Boot#### entry
 * (description, active flag, device path as text). It says which entry
 * brought the machine back and what the boot order was when the run was
 * collected: part of reproducing a problem on the same hardware.
 */
#include "collect.h"

#include "manifest.h"

#include <efivar/efiboot.h>
#include <efivar/efivar.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOAD_OPTION_ACTIVE 0x00000001

/* A UINT16 variable (BootCurrent), or -1. */
static int read_u16(const char *name)
{
	uint8_t *data = NULL;
	size_t size = 0;
	uint32_t attributes = 0;
	int value = -1;

	if (efi_get_variable(EFI_GLOBAL_GUID, name, &data, &size, &attributes) == 0 && size == 2)
		value = data[0] | data[1] << 8;
	free(data);
	return value;
}

static int read_order(struct bci_manifest *m)
{
	uint8_t *data = NULL;
	size_t size = 0;
	uint32_t attributes = 0;
	int ret = 0;

	if (efi_get_variable(EFI_GLOBAL_GUID, "BootOrder", &data, &size, &attributes) < 0)
		return 0; /* no BootOrder: an empty list says so */
	for (size_t i = 0; ret == 0 && i + 1 < size; i += 2)
		ret = bci_manifest_add_boot_order(m, (unsigned)(data[i] | data[i + 1] << 8));
	free(data);
	return ret;
}

static int read_entry(struct bci_manifest *m, unsigned number)
{
	uint8_t *data = NULL;
	size_t size = 0;
	uint32_t attributes = 0;
	char name[16], path[4096] = "";
	int ret;

	snprintf(name, sizeof(name), "Boot%04X", number);
	if (efi_get_variable(EFI_GLOBAL_GUID, name, &data, &size, &attributes) < 0)
		return 0; /* gone between listing and reading: nothing to say */
	efi_load_option *option = (efi_load_option *)data;
	if (!efi_loadopt_is_valid(option, size)) {
		ret = bci_manifest_add_efi_entry(m, number, "(invalid load option)", false, "");
		free(data);
		return ret;
	}
	const unsigned char *desc = efi_loadopt_desc(option, (ssize_t)size);
	uint16_t path_len = efi_loadopt_pathlen(option, (ssize_t)size);
	efidp dp = efi_loadopt_path(option, (ssize_t)size);
	if (dp && path_len > 0 && efidp_format_device_path(path, sizeof(path), dp, path_len) < 0)
		path[0] = '\0';
	ret = bci_manifest_add_efi_entry(m, number, desc ? (const char *)desc : "",
					 efi_loadopt_attrs(option) & LOAD_OPTION_ACTIVE, path);
	free(data);
	return ret;
}

static int by_number(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

int bci_collect_efi_read(struct bci_manifest *m)
{
	unsigned numbers[1024];
	size_t count = 0;
	efi_guid_t *guid = NULL;
	char *name = NULL;
	int ret;

	if (!efi_variables_supported())
		return -ENODEV;
	/* efivarfs lists names in no promised order: sorted, the manifest is stable. */
	while ((ret = efi_get_next_variable_name(&guid, &name)) > 0) {
		if (memcmp(guid, &EFI_GLOBAL_GUID, sizeof(*guid)) != 0 || strlen(name) != 8 ||
		    strncmp(name, "Boot", 4) || strspn(name + 4, "0123456789ABCDEF") != 4)
			continue;
		if (count < sizeof(numbers) / sizeof(numbers[0]))
			numbers[count++] = (unsigned)strtoul(name + 4, NULL, 16);
	}
	if (ret < 0)
		return -EIO;
	qsort(numbers, count, sizeof(numbers[0]), by_number);
	m->efi_boot_current = read_u16("BootCurrent");
	ret = read_order(m);
	for (size_t i = 0; ret == 0 && i < count; i++)
		ret = read_entry(m, numbers[i]);
	return ret;
}
