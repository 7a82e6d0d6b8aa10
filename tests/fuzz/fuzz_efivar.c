// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the EFI load option and device path parsers
 * (lib/efi): the input is a Boot#### variable's data as efivarfs
 * gives it after the 4 attribute bytes (the corpus holds OVMF's own entries).
 * A parsed option must build back to the same bytes when its description
 * was valid UTF-16, and its device path text must be bounded and
 * NUL-terminated whatever the buffer size.
 */
#include "efi/efi.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_path_text(const uint8_t *path, size_t size)
{
	char big[4096], small[16];
	int full = bci_efi_device_path_format(path, size, big, sizeof(big));
	int cut = bci_efi_device_path_format(path, size, small, sizeof(small));
	int nodes = bci_efi_device_path_check(path, size);

	if ((full < 0) != (nodes < 0) || full != cut)
		abort();
	if (full >= 0 && (size_t)full < sizeof(big) && strlen(big) != (size_t)full)
		abort();
	if (strlen(small) >= sizeof(small))
		abort();
	/* The formatter's truncated text is a prefix of the whole one. */
	if (full >= 0 && (size_t)full < sizeof(big) && strncmp(big, small, strlen(small)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_efi_load_option option;
	uint8_t *built = NULL, *utf16 = NULL;
	size_t built_size = 0, utf16_size = 0, description_end;

	/* The whole input as a device path list too: a parser must not need a load option around it. */
	check_path_text(data, size);
	if (bci_efi_load_option_parse(data, size, &option) < 0)
		return 0;
	if (option.file_path + option.file_path_size > data + size ||
	    option.optional_data_size != (size_t)(data + size - option.file_path - option.file_path_size))
		abort();
	check_path_text(option.file_path, option.file_path_size);

	/* Round trip: exact when the description re-encodes to the same UTF-16 units. */
	description_end = (size_t)(option.file_path - data);
	if (bci_efi_utf8_to_utf16(option.description, &utf16, &utf16_size) < 0)
		abort(); /* our own decoder's output is always valid UTF-8 */
	if (bci_efi_load_option_build(&option, &built, &built_size) < 0)
		abort();
	if (utf16_size == description_end - 6 && memcmp(utf16, data + 6, utf16_size) == 0 &&
	    (built_size != size || memcmp(built, data, size) != 0))
		abort();
	free(utf16);
	free(built);
	bci_efi_load_option_clear(&option);
	return 0;
}
