// SPDX-License-Identifier: MIT
/*
 * The boot manager's variables (see efi.h): Boot#### (each an
 * EFI_LOAD_OPTION, load_option.c), BootOrder, BootNext, BootCurrent, and
 * finding the entry a name means.
 */
#include "efi.h"

#include "bytes.h"
#include "path.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int bci_efi_boot_number_parse(const char *text, uint16_t *number)
{
	unsigned value = 0;

	if (strncasecmp(text, "Boot", 4) != 0 || strlen(text) != 8)
		return -EINVAL;
	for (int i = 4; i < 8; i++) {
		int digit = efi_hex_value(text[i]);
		if (digit < 0)
			return -EINVAL;
		value = value << 4 | (unsigned)digit;
	}
	*number = (uint16_t)value;
	return 0;
}

static void boot_name(uint16_t number, char name[9])
{
	snprintf(name, 9, "Boot%04X", number);
}

int bci_efi_boot_entry_get(const char *root, uint16_t number,
			   struct bci_efi_load_option *option, uint8_t **raw, size_t *raw_size)
{
	char name[9];
	int ret;

	boot_name(number, name);
	ret = bci_efivar_get(root, name, BCI_EFI_GLOBAL_GUID, NULL, raw, raw_size);
	if (ret < 0)
		return ret;
	ret = bci_efi_load_option_parse(*raw, *raw_size, option);
	if (ret < 0) {
		free(*raw);
		*raw = NULL;
	}
	return ret;
}

int bci_efi_boot_entry_set(const char *root, uint16_t number,
			   const struct bci_efi_load_option *option)
{
	uint8_t *body = NULL;
	size_t size = 0;
	char name[9];
	int ret;

	ret = bci_efi_load_option_build(option, &body, &size);
	if (ret < 0)
		return ret;
	boot_name(number, name);
	ret = bci_efivar_set(root, name, BCI_EFI_GLOBAL_GUID, BCI_EFI_VARIABLE_BOOT_ATTRIBUTES, body,
			     size);
	free(body);
	return ret;
}

static int compare_numbers(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

int bci_efi_boot_entries(const char *root, uint16_t **numbers, size_t *count)
{
	char path[PATH_MAX];
	uint16_t *list = NULL;
	size_t used = 0, allocated = 0;
	struct dirent *entry;
	DIR *dir;
	int ret;

	ret = bci_path(root, path, BCI_EFIVARS_DIR);
	if (ret < 0)
		return ret;
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ENODEV : -errno;
	while ((entry = readdir(dir))) {
		char name[9], canonical[9];
		uint16_t number;

		/* "Boot####-<guid>": 8 + 1 + 36 characters, and the global GUID. */
		if (strlen(entry->d_name) != 45 || entry->d_name[8] != '-' ||
		    strcasecmp(entry->d_name + 9, BCI_EFI_GLOBAL_GUID) != 0)
			continue;
		memcpy(name, entry->d_name, 8);
		name[8] = '\0';
		/*
		 * Variable names are case sensitive and the boot manager's are "Boot"
		 * and 4 upper-case hex digits: "boot0001" or "Boot000a" is some other
		 * variable, which bci_efi_boot_entry_get() would not find either.
		 */
		if (bci_efi_boot_number_parse(name, &number) < 0)
			continue;
		boot_name(number, canonical);
		if (strcmp(name, canonical) != 0)
			continue;
		if (used == allocated) {
			uint16_t *bigger;
			allocated = allocated ? 2 * allocated : 16;
			bigger = realloc(list, allocated * sizeof(*list));
			if (!bigger) {
				ret = -ENOMEM;
				goto out;
			}
			list = bigger;
		}
		list[used++] = number;
	}
	if (used)
		qsort(list, used, sizeof(*list), compare_numbers);
	*numbers = list;
	*count = used;
	list = NULL;
	ret = 0;
out:
	free(list);
	closedir(dir);
	return ret;
}

int bci_efi_boot_entry_free_number(const char *root, uint16_t *number)
{
	uint16_t *list = NULL;
	size_t count = 0;
	unsigned candidate = 0;
	int ret;

	ret = bci_efi_boot_entries(root, &list, &count);
	if (ret < 0)
		return ret;
	/* The list is sorted: the first gap is the lowest free number. */
	for (size_t i = 0; i < count && list[i] == candidate; i++)
		candidate++;
	free(list);
	if (candidate > UINT16_MAX)
		return -ENOSPC;
	*number = (uint16_t)candidate;
	return 0;
}

int bci_efi_boot_order_get(const char *root, uint16_t **order, size_t *count)
{
	uint8_t *data = NULL;
	uint16_t *list;
	size_t size = 0;
	int ret;

	ret = bci_efivar_get(root, "BootOrder", BCI_EFI_GLOBAL_GUID, NULL, &data, &size);
	if (ret < 0)
		return ret;
	if (size % 2) {
		free(data);
		return -EINVAL;
	}
	list = malloc(size ? size : 1);
	if (!list) {
		free(data);
		return -ENOMEM;
	}
	for (size_t i = 0; i < size / 2; i++)
		list[i] = efi_get_le16(data + 2 * i);
	free(data);
	*order = list;
	*count = size / 2;
	return 0;
}

int bci_efi_boot_order_set(const char *root, const uint16_t *order, size_t count)
{
	uint8_t *data = malloc(count ? 2 * count : 1);
	int ret;

	if (!data)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++)
		efi_put_le16(data + 2 * i, order[i]);
	ret = bci_efivar_set(root, "BootOrder", BCI_EFI_GLOBAL_GUID, BCI_EFI_VARIABLE_BOOT_ATTRIBUTES,
			     data, 2 * count);
	free(data);
	return ret;
}

static int get_u16_variable(const char *root, const char *name, uint16_t *number)
{
	uint8_t *data = NULL;
	size_t size = 0;
	int ret;

	ret = bci_efivar_get(root, name, BCI_EFI_GLOBAL_GUID, NULL, &data, &size);
	if (ret < 0)
		return ret;
	if (size == 2)
		*number = efi_get_le16(data);
	else
		ret = -EINVAL;
	free(data);
	return ret;
}

int bci_efi_boot_next_get(const char *root, uint16_t *number)
{
	return get_u16_variable(root, "BootNext", number);
}

int bci_efi_boot_current_get(const char *root, uint16_t *number)
{
	return get_u16_variable(root, "BootCurrent", number);
}

int bci_efi_boot_next_set(const char *root, uint16_t number)
{
	uint8_t data[2];

	efi_put_le16(data, number);
	return bci_efivar_set(root, "BootNext", BCI_EFI_GLOBAL_GUID, BCI_EFI_VARIABLE_BOOT_ATTRIBUTES,
			      data, sizeof(data));
}

/* Does Boot@number exist and carry @description? */
static bool entry_has_description(const char *root, uint16_t number,
				  const char *description)
{
	struct bci_efi_load_option option;
	uint8_t *raw = NULL;
	size_t raw_size = 0;
	bool match;

	if (bci_efi_boot_entry_get(root, number, &option, &raw, &raw_size) < 0)
		return false;
	match = strcmp(option.description, description) == 0;
	bci_efi_load_option_clear(&option);
	free(raw);
	return match;
}

int bci_efi_boot_find(const char *root, const char *what, uint16_t *number)
{
	uint16_t *order = NULL, *entries = NULL;
	size_t order_count = 0, entry_count = 0;
	uint16_t parsed;
	int ret;

	if (bci_efi_boot_number_parse(what, &parsed) == 0) {
		char name[9];
		uint8_t *data = NULL;
		size_t size;

		boot_name(parsed, name);
		ret = bci_efivar_get(root, name, BCI_EFI_GLOBAL_GUID, NULL, &data, &size);
		free(data);
		if (ret == 0)
			*number = parsed;
		return ret;
	}
	/* BootOrder first: what the firmware itself would try first wins a tie. */
	if (bci_efi_boot_order_get(root, &order, &order_count) < 0)
		order_count = 0;
	for (size_t i = 0; i < order_count; i++) {
		if (entry_has_description(root, order[i], what)) {
			*number = order[i];
			ret = 0;
			goto out;
		}
	}
	ret = bci_efi_boot_entries(root, &entries, &entry_count);
	if (ret < 0)
		goto out;
	ret = -ENOENT;
	for (size_t i = 0; i < entry_count; i++) {
		if (entry_has_description(root, entries[i], what)) {
			*number = entries[i];
			ret = 0;
			break;
		}
	}
out:
	free(order);
	free(entries);
	return ret;
}

int bci_efi_boot_resolve(const char *root, const char *what, uint16_t *number)
{
	size_t len = strlen(what);
	char name[16];

	if (len >= 1 && len <= 4 && strspn(what, "0123456789abcdefABCDEF") == len) {
		snprintf(name, sizeof(name), "Boot%04lX", strtoul(what, NULL, 16));
		return bci_efi_boot_find(root, name, number);
	}
	return bci_efi_boot_find(root, what, number);
}

int bci_efi_boot_order_add(const char *root, uint16_t number, bool first)
{
	uint16_t *order = NULL, *bigger;
	size_t count = 0;
	int ret;

	ret = bci_efi_boot_order_get(root, &order, &count);
	if (ret == -ENOENT)
		ret = 0, order = NULL, count = 0;
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < count; i++) {
		if (order[i] == number) {
			free(order);
			return 0;
		}
	}
	bigger = realloc(order, (count + 1) * sizeof(*order));
	if (!bigger) {
		free(order);
		return -ENOMEM;
	}
	order = bigger;
	if (first) {
		memmove(order + 1, order, count * sizeof(*order));
		order[0] = number;
	} else {
		order[count] = number;
	}
	ret = bci_efi_boot_order_set(root, order, count + 1);
	free(order);
	return ret;
}

void bci_efi_boot_entry_describe(const char *root, uint16_t number, char *buf,
				 size_t size)
{
	struct bci_efi_load_option option;
	uint8_t *raw = NULL;
	size_t raw_size = 0;
	char path[1024];
	int ret;

	ret = bci_efi_boot_entry_get(root, number, &option, &raw, &raw_size);
	if (ret < 0) {
		snprintf(buf, size, "Boot%04X  (unreadable: %s)", number, strerror(-ret));
		return;
	}
	if (bci_efi_device_path_format(option.file_path, option.file_path_size, path,
				       sizeof(path)) < 0)
		snprintf(path, sizeof(path), "(malformed device path)");
	snprintf(buf, size, "Boot%04X%c %s\t%s%s", number,
		 option.attributes & BCI_EFI_LOAD_OPTION_ACTIVE ? '*' : ' ', option.description,
		 path, option.optional_data_size ? " +data" : "");
	bci_efi_load_option_clear(&option);
	free(raw);
}
