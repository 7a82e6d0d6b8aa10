// SPDX-License-Identifier: MIT
/*
 * EFI's text (see efi.h): UTF-16LE strings (descriptions, file names) and
 * GUIDs in their text form.
 */
#include "efi.h"

#include "bytes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bci_efi_utf16_to_utf8(const uint8_t *utf16, size_t units, char **out)
{
	/* Each unit gives at most 3 bytes; a surrogate pair (2 units) gives 4. */
	char *text = malloc(units * 3 + 1), *p;

	if (!text)
		return -ENOMEM;
	p = text;
	for (size_t i = 0; i < units; i++) {
		uint32_t c = efi_get_le16(utf16 + 2 * i);

		if (c == 0)
			break;
		if (c >= 0xd800 && c <= 0xdbff && i + 1 < units) {
			uint32_t low = efi_get_le16(utf16 + 2 * (i + 1));
			if (low >= 0xdc00 && low <= 0xdfff) {
				c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
				i++;
			} else {
				c = 0xfffd;
			}
		} else if (c >= 0xd800 && c <= 0xdfff) {
			c = 0xfffd;
		}
		if (c < 0x80) {
			*p++ = (char)c;
		} else if (c < 0x800) {
			*p++ = (char)(0xc0 | c >> 6);
			*p++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*p++ = (char)(0xe0 | c >> 12);
			*p++ = (char)(0x80 | (c >> 6 & 0x3f));
			*p++ = (char)(0x80 | (c & 0x3f));
		} else {
			*p++ = (char)(0xf0 | c >> 18);
			*p++ = (char)(0x80 | (c >> 12 & 0x3f));
			*p++ = (char)(0x80 | (c >> 6 & 0x3f));
			*p++ = (char)(0x80 | (c & 0x3f));
		}
	}
	*p = '\0';
	*out = text;
	return 0;
}

/* Decodes one UTF-8 sequence at @s; its length, or -EILSEQ (overlong, surrogate, > U+10FFFF). */
static int utf8_decode(const unsigned char *s, uint32_t *c)
{
	int len;
	uint32_t min;

	if (s[0] < 0x80) {
		*c = s[0];
		return 1;
	} else if ((s[0] & 0xe0) == 0xc0) {
		len = 2, *c = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, *c = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, *c = s[0] & 0x07, min = 0x10000;
	} else {
		return -EILSEQ;
	}
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -EILSEQ;
		*c = *c << 6 | (s[i] & 0x3f);
	}
	if (*c < min || *c > 0x10ffff || (*c >= 0xd800 && *c <= 0xdfff))
		return -EILSEQ;
	return len;
}

int bci_efi_utf8_to_utf16(const char *utf8, uint8_t **out, size_t *size)
{
	const unsigned char *s = (const unsigned char *)utf8;
	/* At most one unit per byte, plus the NUL. */
	uint8_t *buf = malloc(2 * (strlen(utf8) + 1)), *p;

	if (!buf)
		return -ENOMEM;
	p = buf;
	while (*s) {
		uint32_t c;
		int len = utf8_decode(s, &c);

		if (len < 0) {
			free(buf);
			return len;
		}
		s += len;
		if (c >= 0x10000) {
			c -= 0x10000;
			efi_put_le16(p, (uint16_t)(0xd800 + (c >> 10)));
			efi_put_le16(p + 2, (uint16_t)(0xdc00 + (c & 0x3ff)));
			p += 4;
		} else {
			efi_put_le16(p, (uint16_t)c);
			p += 2;
		}
	}
	efi_put_le16(p, 0);
	p += 2;
	*out = buf;
	*size = (size_t)(p - buf);
	return 0;
}

/* The text form keeps the first three fields as numbers, hence the mixed byte order. */
void bci_efi_guid_format(const uint8_t guid[16], char text[37])
{
	snprintf(text, 37, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", efi_get_le32(guid),
		 efi_get_le16(guid + 4), efi_get_le16(guid + 6), guid[8], guid[9], guid[10], guid[11],
		 guid[12], guid[13], guid[14], guid[15]);
}

int bci_efi_guid_parse(const char *text, uint8_t guid[16])
{
	uint8_t bytes[16];
	size_t n = 0;

	if (strlen(text) != 36)
		return -EINVAL;
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (text[i] != '-')
				return -EINVAL;
			continue;
		}
		int high = efi_hex_value(text[i]), low = efi_hex_value(text[i + 1]);
		if (high < 0 || low < 0)
			return -EINVAL;
		bytes[n++] = (uint8_t)(high << 4 | low);
		i++;
	}
	/* bytes[] is the text order; the first three fields are stored little endian. */
	guid[0] = bytes[3], guid[1] = bytes[2], guid[2] = bytes[1], guid[3] = bytes[0];
	guid[4] = bytes[5], guid[5] = bytes[4];
	guid[6] = bytes[7], guid[7] = bytes[6];
	memcpy(guid + 8, bytes + 8, 8);
	return 0;
}
