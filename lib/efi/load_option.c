// SPDX-License-Identifier: MIT
/*
 * EFI_LOAD_OPTION (UEFI 3.1.3 "Load Options"; see efi.h), the body of a
 * Boot#### variable: attributes, the length of the device path list, a
 * NUL-terminated UTF-16 description, the device path list, then optional
 * data up to the end.
 */
#include "efi.h"

#include "bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int bci_efi_load_option_parse(const uint8_t *data, size_t size,
			      struct bci_efi_load_option *option)
{
	size_t offset = 6, file_path_size;
	int ret;

	memset(option, 0, sizeof(*option));
	if (size < 6)
		return -EINVAL;
	option->attributes = efi_get_le32(data);
	file_path_size = efi_get_le16(data + 4);
	/* The description is NUL-terminated UTF-16 of any length: find its end. */
	while (offset + 2 <= size && efi_get_le16(data + offset) != 0)
		offset += 2;
	if (offset + 2 > size)
		return -EINVAL;
	if (file_path_size > size - (offset + 2))
		return -EINVAL;
	ret = bci_efi_utf16_to_utf8(data + 6, (offset - 6) / 2, &option->description);
	if (ret < 0)
		return ret;
	offset += 2;
	option->file_path = data + offset;
	option->file_path_size = file_path_size;
	offset += file_path_size;
	option->optional_data_size = size - offset;
	option->optional_data = option->optional_data_size ? data + offset : NULL;
	return 0;
}

void bci_efi_load_option_clear(struct bci_efi_load_option *option)
{
	free(option->description);
	memset(option, 0, sizeof(*option));
}

int bci_efi_load_option_build(const struct bci_efi_load_option *option, uint8_t **out,
			      size_t *size)
{
	uint8_t *description = NULL, *buf;
	size_t description_size = 0, total;
	int ret;

	if (option->file_path_size > UINT16_MAX)
		return -E2BIG;
	ret = bci_efi_utf8_to_utf16(option->description ? option->description : "", &description,
				    &description_size);
	if (ret < 0)
		return ret;
	total = 6 + description_size + option->file_path_size + option->optional_data_size;
	buf = malloc(total);
	if (!buf) {
		free(description);
		return -ENOMEM;
	}
	efi_put_le32(buf, option->attributes);
	efi_put_le16(buf + 4, (uint16_t)option->file_path_size);
	memcpy(buf + 6, description, description_size);
	if (option->file_path_size)
		memcpy(buf + 6 + description_size, option->file_path, option->file_path_size);
	if (option->optional_data_size)
		memcpy(buf + 6 + description_size + option->file_path_size, option->optional_data,
		       option->optional_data_size);
	free(description);
	*out = buf;
	*size = total;
	return 0;
}
