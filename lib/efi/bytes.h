/* SPDX-License-Identifier: MIT */
/*
 * Byte helpers shared by lib/efi's modules and nothing else: EFI's integers
 * are little endian whatever the host, and its hex digits come in either
 * case.
 */
#ifndef BCI_EFI_BYTES_H
#define BCI_EFI_BYTES_H

#include <ctype.h>
#include <stdint.h>

static inline uint16_t efi_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t efi_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t efi_get_le64(const uint8_t *p)
{
	return (uint64_t)efi_get_le32(p) | (uint64_t)efi_get_le32(p + 4) << 32;
}

static inline void efi_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void efi_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void efi_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline int efi_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

#endif
