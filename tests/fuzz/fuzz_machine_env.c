// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the reader of a boot's environment.txt (lib/machine_env.c):
 * whatever it accepts, the writer formats, and the reader must accept that
 * again and format it to the same bytes (one contract, both sides). The
 * kernel log's firmware lines are read from the same input, line by line.
 */
#include "machine_env.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void firmware_lines(const char *text, size_t size)
{
	char name[256];
	int error;

	while (size > 0) {
		const char *newline = memchr(text, '\n', size);
		size_t len = newline ? (size_t)(newline - text) : size;

		if (bci_machine_env_firmware_line(text, len, name, sizeof(name), &error) == 1 &&
		    (!name[0] || strchr(name, ' ') || error > 0 || error < -4095))
			abort();
		text += len;
		size -= newline ? len + 1 : len;
		if (newline)
			text++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_machine_env *env, *again;
	char err[512], *text, *text2;
	size_t len, len2;

	firmware_lines((const char *)data, size);
	if (bci_machine_env_parse("fuzz", (const char *)data, size, &env, err, sizeof(err)) < 0)
		return 0;
	if (bci_machine_env_format(env, &text, &len) < 0)
		abort();
	if (bci_machine_env_parse("formatted", text, len, &again, err, sizeof(err)) < 0)
		abort();
	if (bci_machine_env_format(again, &text2, &len2) < 0 || len2 != len ||
	    memcmp(text, text2, len) != 0)
		abort();
	free(text2);
	free(text);
	bci_machine_env_free(again);
	bci_machine_env_free(env);
	return 0;
}
