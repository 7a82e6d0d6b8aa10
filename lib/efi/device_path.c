// SPDX-License-Identifier: MIT
/*
 * Device paths (see efi.h): their binary nodes, checked, written as text and
 * built for a file on a GPT partition. Written from the UEFI specification
 * ("Device Path Protocol", device path to text conventions).
 */
#include "efi.h"

#include "bytes.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Device path node types and subtypes we name (UEFI spec, "Device Path Protocol"). */
enum {
	DP_HARDWARE = 0x01,
	DP_ACPI = 0x02,
	DP_MESSAGING = 0x03,
	DP_MEDIA = 0x04,
	DP_BBS = 0x05,
	DP_END = 0x7f,
};
#define DP_HW_PCI 0x01
#define DP_HW_VENDOR 0x04
#define DP_ACPI_ACPI 0x01
#define DP_MSG_SCSI 0x02
#define DP_MSG_USB 0x05
#define DP_MSG_VENDOR 0x0a
#define DP_MSG_MAC 0x0b
#define DP_MSG_IPV4 0x0c
#define DP_MSG_IPV6 0x0d
#define DP_MSG_SATA 0x12
#define DP_MSG_NVME 0x17
#define DP_MSG_URI 0x18
#define DP_MEDIA_HD 0x01
#define DP_MEDIA_VENDOR 0x03
#define DP_MEDIA_FILE 0x04
#define DP_MEDIA_FV_FILE 0x06
#define DP_MEDIA_FV 0x07
#define DP_END_INSTANCE 0x01
#define DP_END_ENTIRE 0xff

#define HD_NODE_SIZE 42
#define HD_FORMAT_MBR 0x01
#define HD_FORMAT_GPT 0x02
#define HD_SIGNATURE_MBR 0x01
#define HD_SIGNATURE_GUID 0x02

/* EISA PNP ids as ACPI HID values: PNP0A03 (PCI root), PNP0A08 (PCIe root). */
#define ACPI_HID_PCI_ROOT 0x0a0341d0u
#define ACPI_HID_PCIE_ROOT 0x0a0841d0u

int bci_efi_device_path_check(const uint8_t *path, size_t size)
{
	size_t offset = 0;
	int nodes = 0;

	while (offset + 4 <= size) {
		uint16_t length = efi_get_le16(path + offset + 2);

		if (length < 4 || length > size - offset)
			return -EINVAL;
		nodes++;
		offset += length;
		if (path[offset - length] == DP_END && path[offset - length + 1] == DP_END_ENTIRE)
			return offset == size ? nodes : -EINVAL;
	}
	return -EINVAL;
}

/* An appending snprintf: keeps counting past the end, like snprintf does. */
struct text_out {
	char *buf;
	size_t size;
	size_t len;
};

static void out_printf(struct text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(struct text_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->len < o->size ? o->buf + o->len : NULL,
		      o->len < o->size ? o->size - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static void out_hex(struct text_out *o, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out_printf(o, "%02x", p[i]);
}

static void out_guid(struct text_out *o, const uint8_t *p)
{
	char text[37];

	bci_efi_guid_format(p, text);
	out_printf(o, "%s", text);
}

/* A UTF-16 string of @bytes bytes (NUL-terminated or not) as UTF-8. */
static void out_utf16(struct text_out *o, const uint8_t *p, size_t bytes)
{
	char *text = NULL;

	if (bci_efi_utf16_to_utf8(p, bytes / 2, &text) == 0)
		out_printf(o, "%s", text);
	free(text);
}

static void format_hard_drive(struct text_out *o, const uint8_t *n)
{
	out_printf(o, "HD(%u,", efi_get_le32(n + 4));
	if (n[40] == HD_FORMAT_GPT && n[41] == HD_SIGNATURE_GUID) {
		out_printf(o, "GPT,");
		out_guid(o, n + 24);
	} else if (n[40] == HD_FORMAT_MBR && n[41] == HD_SIGNATURE_MBR) {
		out_printf(o, "MBR,0x%08x", efi_get_le32(n + 24));
	} else {
		out_printf(o, "%u,%u,", n[40], n[41]);
		out_hex(o, n + 24, 16);
	}
	out_printf(o, ",0x%llx,0x%llx)", (unsigned long long)efi_get_le64(n + 8),
		   (unsigned long long)efi_get_le64(n + 16));
}

/* Prints a node whose length was checked; returns false to fall back on Path(). */
static bool format_node(struct text_out *o, const uint8_t *n, uint16_t length)
{
	uint8_t type = n[0], subtype = n[1];

	switch (type << 8 | subtype) {
	case DP_HARDWARE << 8 | DP_HW_PCI:
		if (length < 6)
			return false;
		out_printf(o, "Pci(0x%x,0x%x)", n[5], n[4]);
		return true;
	case DP_HARDWARE << 8 | DP_HW_VENDOR:
	case DP_MESSAGING << 8 | DP_MSG_VENDOR:
	case DP_MEDIA << 8 | DP_MEDIA_VENDOR:
		if (length < 20)
			return false;
		out_printf(o, "%s(", type == DP_HARDWARE ? "VenHw" : type == DP_MEDIA ? "VenMedia" : "VenMsg");
		out_guid(o, n + 4);
		if (length > 20) {
			out_printf(o, ",");
			out_hex(o, n + 20, length - 20u);
		}
		out_printf(o, ")");
		return true;
	case DP_ACPI << 8 | DP_ACPI_ACPI:
		if (length < 12)
			return false;
		if (efi_get_le32(n + 4) == ACPI_HID_PCI_ROOT)
			out_printf(o, "PciRoot(0x%x)", efi_get_le32(n + 8));
		else if (efi_get_le32(n + 4) == ACPI_HID_PCIE_ROOT)
			out_printf(o, "PcieRoot(0x%x)", efi_get_le32(n + 8));
		else
			out_printf(o, "Acpi(0x%08x,0x%x)", efi_get_le32(n + 4), efi_get_le32(n + 8));
		return true;
	case DP_MESSAGING << 8 | DP_MSG_SCSI:
		if (length < 8)
			return false;
		out_printf(o, "Scsi(0x%x,0x%x)", efi_get_le16(n + 4), efi_get_le16(n + 6));
		return true;
	case DP_MESSAGING << 8 | DP_MSG_USB:
		if (length < 6)
			return false;
		out_printf(o, "USB(0x%x,0x%x)", n[4], n[5]);
		return true;
	case DP_MESSAGING << 8 | DP_MSG_MAC:
		if (length < 37)
			return false;
		out_printf(o, "MAC(");
		/* Ethernet (interface type 0 or 1) uses 6 of the 32 address bytes. */
		out_hex(o, n + 4, n[36] <= 1 ? 6 : 32);
		out_printf(o, ",0x%x)", n[36]);
		return true;
	case DP_MESSAGING << 8 | DP_MSG_IPV4:
		if (length < 19)
			return false;
		out_printf(o, "IPv4(%u.%u.%u.%u,%s,%s)", n[8], n[9], n[10], n[11],
			   efi_get_le16(n + 16) == 6 ? "TCP" : efi_get_le16(n + 16) == 17 ? "UDP" : "0",
			   n[18] ? "Static" : "DHCP");
		return true;
	case DP_MESSAGING << 8 | DP_MSG_IPV6:
		if (length < 36)
			return false;
		out_printf(o, "IPv6(");
		for (int i = 0; i < 16; i += 2)
			out_printf(o, "%s%x", i ? ":" : "", n[20 + i] << 8 | n[21 + i]);
		out_printf(o, ")");
		return true;
	case DP_MESSAGING << 8 | DP_MSG_SATA:
		if (length < 10)
			return false;
		out_printf(o, "Sata(0x%x,0x%x,0x%x)", efi_get_le16(n + 4), efi_get_le16(n + 6),
			   efi_get_le16(n + 8));
		return true;
	case DP_MESSAGING << 8 | DP_MSG_NVME:
		if (length < 16)
			return false;
		out_printf(o, "NVMe(0x%x,", efi_get_le32(n + 4));
		for (int i = 0; i < 8; i++)
			out_printf(o, "%s%02X", i ? "-" : "", n[8 + i]);
		out_printf(o, ")");
		return true;
	case DP_MESSAGING << 8 | DP_MSG_URI:
		out_printf(o, "Uri(");
		for (uint16_t i = 4; i < length; i++)
			out_printf(o, isprint(n[i]) ? "%c" : "%%%02X", n[i]);
		out_printf(o, ")");
		return true;
	case DP_MEDIA << 8 | DP_MEDIA_HD:
		if (length < HD_NODE_SIZE)
			return false;
		format_hard_drive(o, n);
		return true;
	case DP_MEDIA << 8 | DP_MEDIA_FILE:
		out_printf(o, "File(");
		out_utf16(o, n + 4, length - 4u);
		out_printf(o, ")");
		return true;
	case DP_MEDIA << 8 | DP_MEDIA_FV_FILE:
	case DP_MEDIA << 8 | DP_MEDIA_FV:
		if (length < 20)
			return false;
		out_printf(o, "%s(", subtype == DP_MEDIA_FV ? "Fv" : "FvFile");
		out_guid(o, n + 4);
		out_printf(o, ")");
		return true;
	}
	return false;
}

int bci_efi_device_path_format(const uint8_t *path, size_t size, char *buf, size_t bufsize)
{
	struct text_out o = { buf, bufsize, 0 };
	size_t offset = 0;
	bool separator = false;

	if (bci_efi_device_path_check(path, size) < 0) {
		if (bufsize)
			buf[0] = '\0';
		return -EINVAL;
	}
	while (offset < size) {
		const uint8_t *n = path + offset;
		uint16_t length = efi_get_le16(n + 2);

		offset += length;
		if (n[0] == DP_END) {
			/* Another instance follows (a multi-instance path): the spec writes ','. */
			if (n[1] == DP_END_INSTANCE)
				out_printf(&o, ",");
			separator = false;
			continue;
		}
		if (separator)
			out_printf(&o, "/");
		separator = true;
		if (!format_node(&o, n, length)) {
			out_printf(&o, "Path(%u,%u,", n[0], n[1]);
			out_hex(&o, n + 4, length - 4u);
			out_printf(&o, ")");
		}
	}
	if (bufsize)
		buf[o.len < bufsize ? o.len : bufsize - 1] = '\0';
	return o.len > (size_t)INT32_MAX ? -EOVERFLOW : (int)o.len;
}

int bci_efi_device_path_hd_file(const struct bci_efi_hard_drive *hd, const char *loader,
				uint8_t **out, size_t *size)
{
	uint8_t *name = NULL, *path, *p;
	size_t name_size = 0, total;
	char *backslashed;
	int ret;

	backslashed = strdup(loader);
	if (!backslashed)
		return -ENOMEM;
	/* EFI paths use '\'; '/' is easier to pass through shells, iPXE and command lines. */
	for (char *c = backslashed; *c; c++)
		if (*c == '/')
			*c = '\\';
	ret = bci_efi_utf8_to_utf16(backslashed, &name, &name_size);
	free(backslashed);
	if (ret < 0)
		return ret;
	if (name_size + 4 > UINT16_MAX) {
		free(name);
		return -ENAMETOOLONG;
	}
	total = HD_NODE_SIZE + 4 + name_size + 4;
	path = calloc(1, total);
	if (!path) {
		free(name);
		return -ENOMEM;
	}
	p = path;
	p[0] = DP_MEDIA, p[1] = DP_MEDIA_HD;
	efi_put_le16(p + 2, HD_NODE_SIZE);
	efi_put_le32(p + 4, hd->partition_number);
	efi_put_le64(p + 8, hd->start_lba);
	efi_put_le64(p + 16, hd->size_lba);
	memcpy(p + 24, hd->partition_guid, 16);
	p[40] = HD_FORMAT_GPT, p[41] = HD_SIGNATURE_GUID;
	p += HD_NODE_SIZE;
	p[0] = DP_MEDIA, p[1] = DP_MEDIA_FILE;
	efi_put_le16(p + 2, (uint16_t)(4 + name_size));
	memcpy(p + 4, name, name_size);
	p += 4 + name_size;
	p[0] = DP_END, p[1] = DP_END_ENTIRE;
	efi_put_le16(p + 2, 4);
	free(name);
	*out = path;
	*size = total;
	return 0;
}

