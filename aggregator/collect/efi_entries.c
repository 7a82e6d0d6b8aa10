// SPDX-License-Identifier: MIT
/*
 * The firmware's boot configuration for the manifest, read through lib/efi
 * (the executor's own EFI code): BootCurrent, BootOrder and every Boot####
 * entry (description, active flag, device path as text). It says which entry
 * brought the machine back and what the boot order was when the run was
 * collected: part of reproducing a problem on the same hardware.
 */
#include "collect.h"

#include "efi/efi.h"
#include "manifest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Room for any device path a load option's 16-bit length allows, as text. */
#define DEVICE_PATH_TEXT_MAX 4096

static int read_order(const char *root, struct bci_manifest *m)
{
	uint16_t *order = NULL;
	size_t count = 0;
	int ret;

	/* No BootOrder (or an unreadable one): an empty list says so. */
	if (bci_efi_boot_order_get(root, &order, &count) < 0)
		return 0;
	ret = 0;
	for (size_t i = 0; ret == 0 && i < count; i++)
		ret = bci_manifest_add_boot_order(m, order[i]);
	free(order);
	return ret;
}

static int read_entry(const char *root, struct bci_manifest *m, uint16_t number)
{
	struct bci_efi_load_option option;
	char path[DEVICE_PATH_TEXT_MAX] = "";
	uint8_t *raw = NULL;
	size_t raw_size = 0;
	int ret;

	ret = bci_efi_boot_entry_get(root, number, &option, &raw, &raw_size);
	if (ret == -ENOENT)
		return 0; /* gone between listing and reading: nothing to say */
	if (ret < 0)
		return bci_manifest_add_efi_entry(m, number, "(invalid load option)", false, "");
	/* A malformed device path is shown as none: the entry itself is still worth naming. */
	if (option.file_path_size &&
	    bci_efi_device_path_format(option.file_path, option.file_path_size, path,
				       sizeof(path)) < 0)
		path[0] = '\0';
	ret = bci_manifest_add_efi_entry(m, number, option.description,
					 option.attributes & BCI_EFI_LOAD_OPTION_ACTIVE, path);
	bci_efi_load_option_clear(&option);
	free(raw);
	return ret;
}

int bci_collect_efi_entries(const char *root, struct bci_manifest *m)
{
	uint16_t *numbers = NULL, current;
	size_t count = 0;
	int ret;

	if (bci_efivar_available(root) < 0)
		return -ENODEV;
	/* Sorted by number (efivarfs lists names in no promised order): the manifest is stable. */
	ret = bci_efi_boot_entries(root, &numbers, &count);
	if (ret < 0)
		return ret == -ENODEV ? ret : -EIO;
	m->efi_boot_current = bci_efi_boot_current_get(root, &current) == 0 ? current : -1;
	ret = read_order(root, m);
	for (size_t i = 0; ret == 0 && i < count; i++)
		ret = read_entry(root, m, numbers[i]);
	free(numbers);
	return ret;
}

/* The root the EFI variables are read under: "" on the machine (collect's root key). */
static const char *efi_root = "";

void bci_collect_efi_root_set(const char *root)
{
	efi_root = root;
}

int bci_collect_efi_read(struct bci_manifest *m)
{
	return bci_collect_efi_entries(efi_root, m);
}
