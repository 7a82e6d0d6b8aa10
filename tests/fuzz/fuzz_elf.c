// SPDX-License-Identifier: MIT
/* The ELF64 reader of the builder's library closure on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "elf_deps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[1024];
	struct builder_elf_info info;

	if (builder_elf_parse(data, size, "fuzz", &info, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < info.needed_count; i++)
			if (!info.needed[i] || !info.needed[i][0])
				__builtin_trap();
		if (info.interp && info.interp[0] != '/')
			__builtin_trap();
		builder_elf_info_clear(&info);
	}
	return 0;
}
