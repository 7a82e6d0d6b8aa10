// SPDX-License-Identifier: MIT
/* The boot fault note (boot_fault.h): its text, in an EFI variable. */
#include "boot_fault.h"

#include "efi/efi.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past any cap a configuration takes: a count beyond it is a damaged note. */
#define BOOTS_MAX 100000u

/* The line at *@cursor (of @end) starting "@key ": its value, NUL-terminated in @out. */
static bool line_take(const char **cursor, const char *end, const char *key, char *out, size_t size)
{
	const char *line = *cursor, *newline;
	size_t key_len = strlen(key), len;

	newline = memchr(line, '\n', (size_t)(end - line));
	if (!newline || (size_t)(newline - line) < key_len + 1 || memcmp(line, key, key_len) ||
	    line[key_len] != ' ')
		return false;
	len = (size_t)(newline - line) - key_len - 1;
	if (len >= size)
		return false;
	memcpy(out, line + key_len + 1, len);
	out[len] = '\0';
	if (strlen(out) != len)
		return false;	/* a NUL inside */
	*cursor = newline + 1;
	return true;
}

static bool number_take(const char **cursor, const char *end, const char *key, unsigned *out)
{
	char text[16], *stop;
	unsigned long value;

	/* Written as the writer writes it: digits, no leading zero (a note reads back the same). */
	if (!line_take(cursor, end, key, text, sizeof(text)) || text[0] < '1' || text[0] > '9')
		return false;
	value = strtoul(text, &stop, 10);
	if (*stop || value < 1 || value > BOOTS_MAX)
		return false;
	*out = (unsigned)value;
	return true;
}

int bci_boot_fault_parse(const char *text, size_t len, struct bci_boot_fault *fault)
{
	const char *cursor = text, *end = text + len;

	memset(fault, 0, sizeof(*fault));
	if (!line_take(&cursor, end, "run", fault->run, sizeof(fault->run)) || !fault->run[0] ||
	    !number_take(&cursor, end, "boots", &fault->boots) ||
	    !number_take(&cursor, end, "cap", &fault->cap) ||
	    !line_take(&cursor, end, "reason", fault->reason, sizeof(fault->reason)) ||
	    cursor != end)
		return -EINVAL;
	return 0;
}

int bci_boot_fault_format(const struct bci_boot_fault *fault, char *buf, size_t size)
{
	char reason[BCI_BOOT_FAULT_REASON_MAX + 1];
	int n;

	snprintf(reason, sizeof(reason), "%s", fault->reason);
	for (char *c = reason; *c; c++)
		if (*c == '\n')
			*c = ' ';
	n = snprintf(buf, size, "run %s\nboots %u\ncap %u\nreason %s\n",
		     fault->run[0] ? fault->run : "-", fault->boots, fault->cap, reason);
	return n < 0 || (size_t)n >= size ? -ENOBUFS : n;
}

int bci_boot_fault_read(const char *root, struct bci_boot_fault *fault)
{
	uint8_t *data = NULL;
	size_t size = 0;
	int ret;

	ret = bci_efivar_get(root, BCI_BOOT_FAULT_NAME, BCI_BOOT_FAULT_GUID, NULL, &data, &size);
	if (ret < 0)
		return ret;
	ret = bci_boot_fault_parse((const char *)data, size, fault);
	free(data);
	return ret;
}

int bci_boot_fault_write(const char *root, const struct bci_boot_fault *fault)
{
	char text[512];
	int len = bci_boot_fault_format(fault, text, sizeof(text));

	if (len < 0)
		return len;
	return bci_efivar_set(root, BCI_BOOT_FAULT_NAME, BCI_BOOT_FAULT_GUID,
			      BCI_EFI_VARIABLE_BOOT_ATTRIBUTES, text, (size_t)len);
}

int bci_boot_fault_clear(const char *root)
{
	int ret = bci_efivar_delete(root, BCI_BOOT_FAULT_NAME, BCI_BOOT_FAULT_GUID);

	return ret == -ENOENT ? 0 : ret;
}

bool bci_boot_fault_due(const struct bci_boot_fault *fault)
{
	return fault->boots >= fault->cap;
}
